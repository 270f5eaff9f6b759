"""Blokus bots and contest admins over the XML stream (specs/blokus-xml.*): listener, lobby, seats.

One TCP port (``BLOKUS_PORT``, 13050 as the official server) serves both contest years
(``swc_2021_blokus``; ``swc_2027_blokus``, also for a bare ``<join/>`` as ``socha`` 5.x sends it)
and the admin commands of the contest's tools.  From the bottom up:

- :class:`XmlStream` parses one connection's inbound stream incrementally (lxml's
  ``XMLPullParser``: entities, DTDs and network off) and hands out each complete child of the
  ``<protocol>`` root as one message, detached from the tree so it can be freed.  It refuses a
  DOCTYPE (so entity declarations, billion laughs and external entities never reach the
  parser), references to undeclared entities, elements nested deeper than ``max_depth``,
  messages of more than ``max_elements`` elements or ``max_message_bytes`` bytes (an endless
  element, 10 MB of nesting): memory per connection stays bounded.
- :class:`XmlConnection` (asyncio) feeds it whatever TCP delivers (no newline framing), at most
  as many messages a second as the connection's share allows (a :class:`TokenBucket`; without a
  token it stops reading, as :class:`~games.arena.bots.transport.LineConnection` does), one request
  at a time (reading pauses while a lobby or admin request waits for the arena), and drops a
  peer that does not read what it is sent.
- :class:`BlokusClient` handles one connection: lobby (``join``, ``joinPrepared``,
  ``joinRoom``), admin (``authenticate``, ``prepare``, ``observe``, ``pause``, ``step``,
  ``cancel``) and, once seated, the :class:`SeatEndpoint` the match runner asks for moves.
  Timing and bad moves as the notes' section Time says: a move after the soft limit loses
  (SOFT_TIMEOUT), none by the hard limit loses (HARD_TIMEOUT), an invalid move loses
  (RULE_VIOLATION; the error message goes to the offender and the observers), a malformed or
  unexpected request gets an ``errorpacket`` and a disconnect, and a disconnect loses (LEFT).
  The endpoint answers the runner with the rules' ``["forfeit", cause, reason]`` action.
- :class:`Observer` is what an admin's ``observe`` registers with the arena: every memento,
  the error message of an invalid move, ``paused``, the result and ``left``.

Whatever a client sends, nothing escapes into the loop: handler errors are logged (a bounded
number of lines per connection) and close that connection only.
"""
from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from lxml import etree

from games.arena.bots.bot_keys import KeyRefused
from games.arena.bots.limits import TokenBucket
from games.arena.play.seats import Answer, SeatEndpoint, TimedRequest, resolved
from games.names import clean_name
from games.arena.bots.transport import BotConnection, Deadlines, admission_from_settings, start_bot_listener
from games.base import ProtocolError
from games.blokus import protocol
from games.blokus.rules import COLORS

log = logging.getLogger("arena.blokus")

GAME = "blokus"
#: What a bare ``<join/>`` (``socha`` 5.x) plays: the current contest year.
DEFAULT_GAME_TYPE = "swc_2027_blokus"
#: Log lines per connection before the log goes quiet for it.
MAX_LOGGED = 20
#: Bytes handed to the parser at once: the granularity of the message-size bound and of how
#: many messages one read can produce before the rate share is consulted again.
SLICE = 2048
#: Bytes a client may send before its ``<protocol>`` opening (an XML declaration, blanks).
MAX_HEAD = 512
#: Characters of an entity or character reference (``&#x10FFFF;`` is the longest we accept).
MAX_REFERENCE = 12

#: Result reasons as the official server words them (plugin2021 ``Game.getScoreFor``; the
#: timeout texts name the limits this server is configured with).
LEFT_REASON = protocol.OFFICIAL_REASONS["LEFT"]
TIMEOUT_REASON = "Der Spieler hat innerhalb von {seconds:g} Sekunden nach Aufforderung keinen Zug gesendet"
ILLEGAL_REASON = "not a legal move"

_HEAD = re.compile(rb"\s*(?:<\?xml[^<>]*\?>\s*)?<protocol(?:\s[^<>]*)?>")
# ``&`` must start one of XML's five predefined entities or a character reference: anything
# else would name an entity from a DTD, which we never load (lxml then stalls silently).
_FIRST_TAG = re.compile(rb"<(?!\?)")  # the first markup that is not the XML declaration
_BAD_REFERENCE = re.compile(rb"&(?!(?:lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)")


class StreamRefused(Exception):
    """The inbound stream broke a bound or is not acceptable XML; the message says which
    (it goes to the client in an ``errorpacket``)."""


#: Marks the client's ``</protocol>`` among the messages :meth:`XmlStream.feed` returns.
STREAM_END = object()


class XmlStream:
    """The incremental parse of one connection's inbound XML stream (no I/O).

    :meth:`feed` takes bytes as they arrive and returns, in order, what they completed: each
    message as a detached lxml element (a complete child of ``<protocol>``),
    :data:`STREAM_END` for the client's ``</protocol>``, and last, if the stream broke a rule, a
    :class:`StreamRefused` (nothing is parsed after it).  Rules: before ``<protocol>`` only
    blanks and an XML declaration (:data:`MAX_HEAD` bytes; no DOCTYPE); no references to
    entities a DTD would declare; ``max_message_bytes`` between two messages (granularity
    :data:`SLICE`); ``max_depth`` counting ``<protocol>`` as 1; ``max_elements`` per message;
    well-formed XML.
    """

    def __init__(self, max_message_bytes: int, max_depth: int, max_elements: int):
        self.max_message_bytes = max_message_bytes
        self.max_depth = max_depth
        self.max_elements = max_elements
        self._head: bytearray | None = bytearray()  # bytes before the root, until it is seen
        self._parser: etree.XMLPullParser | None = None
        self._root = None
        self._carry = b""  # an entity reference cut by a read, held back until it is complete
        self._depth = 0
        self._elements = 0  # elements of the message being read
        self._pending = 0  # bytes fed since the last complete message
        self._begun = False  # markup or text since the last complete message (not blanks)
        self.ended = False  # </protocol> seen or the stream refused: nothing more is parsed

    def feed(self, data: bytes) -> list:
        """Parse ``data``; returns what it completed (see the class docstring)."""
        out: list = []
        if self.ended or not data:
            return out
        try:
            if self._parser is None:
                data = self._open(data)
                if self._parser is None:
                    return out
            if self._carry or b"&" in data:  # (a move has no reference: nothing to check)
                data = self._carry + data
                self._carry = b""
                amp = data.rfind(b"&")
                if amp >= 0 and data.find(b";", amp) < 0 and len(data) - amp < MAX_REFERENCE:
                    data, self._carry = data[:amp], data[amp:]
                if _BAD_REFERENCE.search(data):
                    raise StreamRefused("entity references other than &lt; &gt; &amp; &quot; &apos; and "
                                        "character references are not accepted")
            for start in range(0, len(data), SLICE):
                piece = data[start:start + SLICE]
                before = len(out)
                self._feed_slice(piece, out)
                if self.ended:
                    break
                if len(out) > before:  # what follows the last message's end
                    self._begun = bool(piece[piece.rfind(b">") + 1:].strip())
                elif piece.strip():
                    self._begun = True
        except StreamRefused as exc:
            self.ended = True
            out.append(exc)
        return out

    @property
    def message_begun(self) -> bool:
        """Part of a message (or of the ``<protocol>`` opening) has arrived, not the rest:
        whatever comes after the last complete message is more than blanks, or an element
        is open."""
        if self.ended:
            return False
        if self._parser is None:
            return bool(self._head and bytes(self._head).strip())
        return self._begun or self._depth > 1 or bool(self._carry)

    def _open(self, data: bytes) -> bytes:
        """Wait for ``<protocol>`` (refusing a DOCTYPE or any other markup first); returns the
        bytes after it, or ``b""`` while it has not arrived."""
        head = self._head
        head += data
        first = _FIRST_TAG.search(head)
        if first is not None:
            seen = bytes(head[first.start():first.start() + len(b"<protocol")])
            if seen.startswith(b"<!"):
                raise StreamRefused("DOCTYPE, entity declarations and other <!...> markup are not accepted")
            if not b"<protocol".startswith(seen):
                raise StreamRefused("the stream must begin with <protocol>")
        root_at = head.find(b"<protocol")
        if root_at < 0 or head.find(b">", root_at) < 0:
            if len(head) > MAX_HEAD:
                raise StreamRefused("the stream must begin with <protocol>")
            return b""
        match = _HEAD.match(head)
        if match is None:
            raise StreamRefused("the stream must begin with <protocol>")
        self._parser = etree.XMLPullParser(
            events=("start", "end"), resolve_entities=False, no_network=True, load_dtd=False,
            huge_tree=False, remove_comments=True, remove_pis=True)
        rest = bytes(head[match.end():])
        self._head = None
        self._feed_slice(b"<protocol>", [])
        return rest

    def _feed_slice(self, piece: bytes, out: list) -> None:
        self._pending += len(piece)
        broken = None
        try:
            self._parser.feed(piece)
        except etree.XMLSyntaxError as exc:
            broken = exc  # what was complete before the fault still counts
        for event, elem in self._parser.read_events():
            if event == "start":
                self._depth += 1
                if self._depth == 1:
                    self._root = elem
                    continue
                self._elements = 1 if self._depth == 2 else self._elements + 1
                if self._depth > self.max_depth:
                    raise StreamRefused(f"elements nested deeper than {self.max_depth} levels")
                if self._elements > self.max_elements:
                    raise StreamRefused(f"a message of more than {self.max_elements} elements")
                continue
            self._depth -= 1
            if self._depth == 1:  # a message is complete: detach it (its tail goes with it)
                self._root.remove(elem)
                self._root.text = None
                out.append(elem)
                self._pending = 0
            elif self._depth == 0:
                self.ended = True
                out.append(STREAM_END)
                return
        if broken is not None:
            raise StreamRefused(f"not well-formed XML: {broken}")
        if self._pending > self.max_message_bytes:
            raise StreamRefused(f"a message of more than {self.max_message_bytes} bytes")


@dataclass(frozen=True)
class StreamLimits:
    """A connection's bounds (settings ``BLOKUS_*``): see :class:`XmlStream`; ``messages_per_s``
    / ``burst`` are its share (None: unbounded)."""

    max_message_bytes: int
    max_depth: int
    max_elements: int
    messages_per_s: float | None = None
    burst: int = 1


class XmlConnection(BotConnection):
    """One TCP connection speaking the XML stream; ``make_handler(connection)`` builds its
    handler, which gets ``on_message(element, received_at)`` (may return a coroutine: no
    further message is handed on until it is done), ``on_stream_end()``, ``on_refused(reason)``
    and ``on_close()``.

    ``received_at`` is when the message's last bytes were read from the socket
    (``time.perf_counter()`` seconds, stamped in :meth:`data_received` before any parsing):
    a move is judged by when it arrived, not by when a busy or starved process got round to
    parsing it, nor by how long it waited behind a request in hand or for a token.

    Sends :data:`protocol.PROTOCOL_OPEN` at once (the official server opens its stream when a
    client connects).  Without a token of its share, or while a request is in hand, reading
    pauses (``transport.pause_reading``): what was read waits, the kernel's buffers fill and the
    client waits, not the loop.  :meth:`asked_for` gives an answer's token back.

    ``deadlines`` as for :class:`~games.arena.bots.transport.BotConnection`: the
    handler calls :meth:`spoke` for a valid first request, and a message begun
    (:attr:`XmlStream.message_begun`) must end within ``deadlines.message`` seconds.
    """

    coalesce_writes = True  # a memento and the MoveRequest after it: one send

    def __init__(self, make_handler: Callable[["XmlConnection"], Any], limits: StreamLimits,
                 registry: set | None = None, deadlines: Deadlines = Deadlines()):
        super().__init__(make_handler, registry, deadlines)
        self.stream = XmlStream(limits.max_message_bytes, limits.max_depth, limits.max_elements)
        self.limits = limits
        self._bucket = TokenBucket(limits.messages_per_s, limits.burst) if limits.messages_per_s else None
        self._ready: deque = deque()  # (message, received_at) parsed, not yet handed on
        self._held = b""  # read but not yet parsed (paused)
        self._held_at = 0.0  # when the held bytes were read
        self._busy: asyncio.Task | None = None
        self.paused = 0  # times this connection ran out of its share (tests, logs)

    def opened(self) -> None:
        self.write(protocol.PROTOCOL_OPEN)

    def data_received(self, data: bytes) -> None:
        received_at = time.perf_counter()  # first thing: parsing may wait for the CPU
        if self._held:  # (reading is paused while bytes are held: this is rare)
            self._process(self._held + data, received_at)
        else:
            self._process(data, received_at)

    def _process(self, data: bytes, received_at: float) -> None:
        """Hand on ready messages while the share allows, parsing ``data`` (read at
        ``received_at``) slice by slice."""
        self._held = b""
        pos = 0
        while not self.is_closing():
            if self._busy is not None:
                return self._hold(data[pos:], received_at)
            if self._ready:
                if self._bucket is not None and not self._bucket.take():
                    self.paused += 1
                    if self.paused == 1:
                        log.warning("blokus %s: over %g messages/s; reading paused", self.peer,
                                    self.limits.messages_per_s)
                    self._resume = asyncio.get_running_loop().call_later(self._bucket.seconds_to_next(), self._go_on)
                    return self._hold(data[pos:], received_at)
                self._deliver(*self._ready.popleft())
                continue
            if pos >= len(data):
                self.message_begun(self.stream.message_begun)
                return
            piece = data[pos:pos + SLICE]
            pos += SLICE
            self._ready.extend((message, received_at) for message in self.stream.feed(piece))

    def _hold(self, rest: bytes, received_at: float) -> None:
        self._held = rest
        self._held_at = received_at
        self.message_begun(False)  # not read meanwhile: the wait is ours, not the client's
        if self.transport is not None:
            self.transport.pause_reading()

    def _go_on(self) -> None:
        """A token is due or a request is done: go on with what was held, then read again."""
        self._resume = None
        if self.is_closing():
            return
        self._process(self._held, self._held_at)
        if self._resume is None and self._busy is None and not self.is_closing():
            self.transport.resume_reading()

    def _deliver(self, message, received_at: float) -> None:
        if message is STREAM_END:
            self._call(self.handler.on_stream_end)
            return
        if isinstance(message, StreamRefused):
            self._call(self.handler.on_refused, str(message))
            return
        pending = self._call(self.handler.on_message, message, received_at)
        if pending is not None and asyncio.iscoroutine(pending):  # None for a move: no ABC check
            self._busy = asyncio.get_running_loop().create_task(pending)
            self._busy.add_done_callback(lambda task: self._request_done(task, message))
        else:
            message.clear()  # handled: free its subtree now

    def _request_done(self, task: asyncio.Task, message) -> None:
        message.clear()  # kept until here: a refusal echoes the request
        self._busy = None
        if not task.cancelled() and task.exception() is not None:
            log.error("blokus %s: a request failed", self.peer, exc_info=task.exception())
            self.close()
            return
        if self._resume is None:
            self._go_on()

    def _call(self, method, *args):
        """Call into the handler; an error there closes this connection, never the loop."""
        try:
            return method(*args)
        except Exception:
            log.exception("blokus %s: handler failed; connection closed", self.peer)
            self.close()
            return None

    def asked_for(self) -> None:
        """The message being handled answers a request of ours: give its token back."""
        if self._bucket is not None:
            self._bucket.give_back()

    def lost(self) -> None:
        # A request in hand (a join waiting for its seat) runs to its end: it must see that
        # the client is gone and give the seat back, not stop half-way.
        self._ready.clear()
        self._held = b""


# --- rooms, reservations, observers ------------------------------------------------------------

@dataclass
class Reservation:
    """A prepared slot: its room, the name its player plays under, whether it can time out."""

    match_id: int
    name: str
    can_timeout: bool


@dataclass
class Room:
    """What this listener keeps about a match its clients play or watch."""

    match_id: int
    observers: set = field(default_factory=set)
    #: The error message of the invalid move that ended the match (observers get it too).
    violation: bytes | None = None
    _memento_key: tuple | None = field(default=None, init=False)
    _memento: bytes = field(default=b"", init=False)
    _move_request: bytes = field(default=b"", init=False)

    @property
    def room_id(self) -> str:
        return str(self.match_id)

    def memento(self, state, names: list[str]) -> bytes:
        """The memento of ``state``, encoded once per turn for every player and observer."""
        key = (state.turn, state.is_terminal(), tuple(names))
        if key != self._memento_key:
            self._memento = protocol.memento(self.room_id, state.memento_observation(), names)
            self._memento_key = key
        return self._memento

    def move_request(self, variant: str) -> bytes:
        """The room's MoveRequest (the same bytes every time), encoded once."""
        if not self._move_request:
            self._move_request = protocol.move_request(self.room_id, variant)
        return self._move_request


def _forfeit(cause: str, reason: str, detail: str = "") -> Answer:
    """The answer that ends the match against the asked seat (the contract's forfeit action)."""
    return Answer(["forfeit", cause, reason[:200]], forced=True, reason=reason[:200], detail=detail[:300])


def _hints_text(hints: list[str]) -> str:
    """A move's debug hints for the event log's ``detail`` (at most 300 characters):
    ``hints: "first" "second"`` (JSON strings), or "" without hints."""
    return ("hints: " + " ".join(json.dumps(h, ensure_ascii=False) for h in hints))[:300] if hints else ""


def _describe(action, hints: list[str]) -> str:
    """A refused move and its debug hints as one line for the event log's ``detail``."""
    return " ".join(filter(None, (json.dumps(action, separators=(",", ":")), _hints_text(hints))))[:300]


class Observer:
    """An admin connection watching one room (``arena.watch``): every memento, the error
    message of an invalid move, the result and ``left`` (official ``GameRoom``: observers get
    what players get, plus ``paused``).  Nothing is sent before ``observed``."""

    def __init__(self, client: "BlokusClient", room: Room):
        self.client = client
        self.room = room
        self.held: list[bytes] | None = []  # until <observed> went out
        self.variant: str | None = None

    def send(self, data: bytes) -> None:
        if self.held is not None:
            self.held.append(data)
        else:
            self.client.conn.write(data)

    def release(self) -> None:
        """``observed`` went out: send what waited."""
        held, self.held = self.held or [], None
        for data in held:
            self.client.conn.write(data)

    def watch(self, state, happenings: list[dict], answers: list | None) -> None:
        """Called at the start, when added, and after every step (see ``MatchRunner``)."""
        self.variant = state.variant
        if answers is None or any(h.get("type") == "move" for h in happenings):
            self.send(self.room.memento(state, self.client.listener.names(self.room.match_id)))
        for answer in answers or ():
            action = answer.get("action")
            if (isinstance(action, list) and action[:2] == ["forfeit", "RULE_VIOLATION"]
                    and self.room.violation is not None):
                self.send(self.room.violation)

    def end(self, result: dict | None) -> None:
        """The match is over (``result``) or was cancelled (None): result, then ``left``, in
        one write (as for the players)."""
        end = b""
        if result is not None and "scores" in result:
            end = protocol.result(self.room.room_id, result, self.client.listener.names(self.room.match_id),
                                  self.variant or "2021")
        self.send(end + protocol.left(self.room.room_id))
        self.room.observers.discard(self)
        self.client.observing.pop(self.room.match_id, None)
        self.client.listener.rooms.pop(self.room.match_id, None)


# --- admin passwords -----------------------------------------------------------------------------

#: The official server's example password (its ``server.properties``), our default: fine on
#: loopback, where only this machine's users reach the port, never elsewhere.
EXAMPLE_PASSWORD = "examplepassword"
#: Longest wait a failing address is given (seconds), however many times it failed.
MAX_BACKOFF_S = 900.0
#: Addresses whose failures are remembered at once (the oldest is forgotten beyond it).
MAX_TRACKED_ADDRESSES = 10_000


def admin_password_problem(host: str, password: str) -> str | None:
    """Why the Blokus listener must not start with admin ``password`` on ``host``, or None.

    The example password is public (the official server's documentation prints it), so it
    only guards a listener bound to loopback (``127.0.0.0/8``, ``::1``, ``localhost``);
    on any other address, a wildcard (``0.0.0.0``, ``::``, empty) or a host name, anyone
    who reaches the port could prepare, pause and cancel games.  An empty password switches
    the admin commands off and is always fine."""
    if password != EXAMPLE_PASSWORD:
        return None
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name, or "" (every interface)
        loopback = False
    if loopback:
        return None
    where = repr(host) if host else "every interface"
    return (f"BLOKUS_ADMIN_PASSWORD is the official example password ({EXAMPLE_PASSWORD!r}) and the Blokus "
            f"listener is bound to {where}, not loopback: set BLOKUS_ADMIN_PASSWORD to your own password, "
            "or to an empty value to switch the admin commands off")


class GuessBackoff:
    """Per address, a growing wait after wrong admin passwords, so that guessing by
    reconnecting gets a handful of tries a minute instead of hundreds a second.

    An address may fail ``free`` times; each failure from then on makes it wait ``base``
    seconds, doubled with every further failure (at most :data:`MAX_BACKOFF_S`).  While it
    waits, every ``authenticate`` from it is refused without looking at the password, so
    the answer says nothing about whether the guess was right.  A success, or
    :data:`MAX_BACKOFF_S` without a failure, forgets the address.  ``now`` is
    ``time.monotonic()`` seconds (a parameter, so tests control the clock)."""

    def __init__(self, free: int, base: float):
        self.free = free
        self.base = base
        self.failures: dict[str, tuple[int, float, float]] = {}  # address -> (count, last, until)

    def wait(self, address: str, now: float) -> float:
        """Seconds ``address`` must still wait before its next try (0: it may try now)."""
        entry = self.failures.get(address)
        if entry is None:
            return 0.0
        count, last, until = entry
        if now - max(last, until) > MAX_BACKOFF_S:
            del self.failures[address]
            return 0.0
        return max(0.0, until - now)

    def failed(self, address: str, now: float) -> None:
        """A wrong password from ``address``."""
        count = self.failures.pop(address, (0, now, now))[0] + 1
        until = now
        if count >= self.free:
            until = now + min(MAX_BACKOFF_S, self.base * 2 ** (count - self.free))
        self.failures[address] = (count, now, until)  # re-inserted: the newest is last
        if len(self.failures) > MAX_TRACKED_ADDRESSES:
            del self.failures[next(iter(self.failures))]

    def succeeded(self, address: str) -> None:
        self.failures.pop(address, None)


# --- one connection ------------------------------------------------------------------------------

ADMIN_REQUESTS = ("prepare", "observe", "pause", "step", "cancel")
LOBBY_REQUESTS = ("join", "joinPrepared", "joinRoom")


class BlokusClient(SeatEndpoint):
    """The handler of one connection and, once it joined a room, its seat's endpoint.

    Lobby and admin requests are answered as the official server's ``Lobby`` does; what it
    answers with a ``RescuableClientException`` (a bad request, an unknown room or code, a
    wrong password, an admin command before ``authenticate``) gets an ``errorpacket`` and a
    disconnect here.  One seat per connection; an admin connection may observe many rooms.
    """

    kind = "protocol"

    def __init__(self, conn: XmlConnection, listener: "BlokusListener"):
        self.conn = conn
        self.listener = listener
        self.arena = listener.arena
        self.display_name = f"bot {conn.peer}"
        self.admin = False
        self.joining = False
        self.seat_id: int | None = None
        self.seat: int | None = None
        self.match_id: int | None = None
        self.joined_sent = False
        self.can_timeout = False
        self.think_s: float | None = None  # the table's thinking time (use_think_time)
        self.variant = "2021"
        self.request: TimedRequest | None = None
        self.asked_state = None
        self.left_detail = ""  # why the connection ended (a refused request), for the event log
        self.message = None  # the request being handled (an errorpacket echoes it)
        self.observing: dict[int, Observer] = {}
        self.logged = 0
        self.disconnected = False
        self.started = False  # the match began (start() was called)

    @property
    def gone(self) -> bool:
        """For the arena: a client that hung up before its match began frees its seat.  Once
        the match runs, a client that leaves ends it at once with a LEFT forfeit (a result, as
        the contest's rules say), rather than the match being abandoned as a bots-only table
        is when its connected bots all leave."""
        return self.disconnected and not self.started

    # --- logging ----------------------------------------------------------------------------
    def _log(self, level: int, text: str, *args) -> None:
        """At most :data:`MAX_LOGGED` lines per connection."""
        self.logged += 1
        if self.logged <= MAX_LOGGED:
            log.log(level, "blokus %s (%s): " + text, self.conn.peer, self.display_name, *args)
            if self.logged == MAX_LOGGED:
                log.warning("blokus %s: further lines about this connection are not logged", self.conn.peer)

    def refuse(self, reason: str) -> None:
        """An ``errorpacket`` saying ``reason`` (echoing the request being handled, if any),
        the end of the stream, and a disconnect (a seated player thereby leaves: LEFT)."""
        if self.conn.is_closing():
            return
        self._log(logging.WARNING, "refused: %s", reason)
        self.left_detail = reason
        self.conn.write(protocol.errorpacket(reason, self.message) + protocol.PROTOCOL_CLOSE)  # one write, as the end
        self.conn.close()

    # --- the connection's callbacks ---------------------------------------------------------
    def on_refused(self, reason: str) -> None:
        self.message = None  # the stream itself is at fault, not a request
        self.refuse(reason)

    def on_stream_end(self) -> None:
        self._client_closed("</protocol>")

    def on_message(self, element, received_at: float):
        """One message, whose bytes were read at ``received_at`` (``time.perf_counter()``
        seconds); returns a coroutine for requests that wait for the arena."""
        self.message = element
        try:
            msg = protocol.parse_message(element)
        except ProtocolError as exc:
            self.refuse(str(exc))
            return None
        kind = msg["type"]
        if kind in LOBBY_REQUESTS or kind == "authenticate":
            # A valid first request: no first-message deadline any more (a joined bot may
            # wait long for its opponent; an admin may watch for hours).
            self.conn.spoke()
        if kind == "move":
            self._move(msg, received_at)
        elif kind == "close":
            self._client_closed(element.tag)
        elif kind == "authenticate":
            self._authenticate(msg["password"])
        elif kind in ADMIN_REQUESTS:
            if not self.admin:
                self.refuse(f"<{kind}> needs an authenticated administrator (send <authenticate> first)")
                return None
            return self._admin(msg)
        elif kind in LOBBY_REQUESTS:
            if self.joining or self.seat_id is not None:
                self.refuse("this connection has joined a room already (one room per connection)")
                return None
            self.joining = True
            return self._join(msg)
        else:  # the codec knows more than we serve
            self.refuse(f"<{element.tag}> is not a request this server handles")
        return None

    def on_close(self) -> None:
        self.disconnected = True
        left = _forfeit("LEFT", LEFT_REASON, self.left_detail or "disconnected")
        self._fail_request(left)
        if self.started and self.seat is not None:
            # The official server ends the game at once, also when the other team is to move.
            self.arena.interrupt(self.match_id, self.seat, left)
        if self.seat_id is not None:
            # If its table has not started, the seat is open again (a reserved one stays
            # reserved).
            asyncio.get_running_loop().create_task(self.arena.bot_left(self.seat_id))
        for match_id, observer in list(self.observing.items()):
            self.arena.unwatch(match_id, observer)
            observer.room.observers.discard(observer)
            self.listener.drop_room(match_id)
        self.observing.clear()
        self.listener.admins.discard(self)
        self._log(logging.INFO, "disconnected")

    def _client_closed(self, form: str) -> None:
        """The client ends the stream (``<close/>``, a CloseConnection or ``</protocol>``)."""
        self._log(logging.INFO, "closed the connection (%s)", form)
        self.left_detail = f"closed the connection ({form})"
        self.conn.write(protocol.PROTOCOL_CLOSE)
        self.conn.close()

    # --- lobby ------------------------------------------------------------------------------
    async def _join(self, msg: dict) -> None:
        """``join`` (a bot seat of a table with that game type's rules, else an automatic
        table; admins hear of it), ``joinPrepared`` (the reserved seat, with its name and
        whether it can time out) or ``joinRoom`` (an open bot seat of that table); then
        ``<joined roomId>``.  An unknown code or room: errorpacket and disconnect.  A ``key``
        attribute on ``join`` or ``joinRoom`` seats a registered bot under its registered name
        (a seat its owner held for it first); a refused key: errorpacket and disconnect."""
        kind = msg["type"]
        if msg.get("key") is not None:
            try:
                await self.arena.identify_bot(GAME, msg["key"], self.conn.host, self)
            except KeyRefused as exc:
                self.joining = False
                self.refuse(f"bot key refused: {exc}")
                return
        try:
            if kind == "join":  # the codec refuses an unknown gameType
                variant = protocol.GAME_TYPES[msg.get("game_type") or DEFAULT_GAME_TYPE]
                seat_id = await self.arena.seat_bot(GAME, self, {"variant": variant})
                if seat_id is None:  # hung up before its turn came: nothing was written
                    return
                # The room: the runner's if the match began with this join, else the table
                # the arena seated us at; the database only counts the players for admins.
                match_id, players = self.match_id or self.listener.match_of(self), None
                if self.listener.admins:
                    match_id, players = await sync_to_async(_room_of_seat)(seat_id)
                elif match_id is None:
                    match_id = await self.arena.match_of_seat(seat_id)
            elif kind == "joinPrepared":
                reservation = self.listener.reservations.get(msg["code"])
                if reservation is None:
                    self.refuse(f"unknown reservation code {msg['code'][:60]!r}")
                    return
                # Before the arena has it: the match may start inside seat_reserved.
                self.display_name = reservation.name
                self.can_timeout = reservation.can_timeout
                seat_id, _ = await self.arena.seat_reserved(msg["code"], self)
                match_id, players = reservation.match_id, None
            else:
                match_id = _parse_room_id(msg["room_id"])
                if match_id is None:
                    self.refuse(f"unknown room {msg['room_id'][:60]!r}")
                    return
                seat_id = await self.arena.seat_bot_in(GAME, match_id, self)
                if seat_id is None:
                    return
                players = None
        except LookupError as exc:
            self.refuse(str(exc))
            return
        finally:
            self.joining = False
        self.seat_id = seat_id
        if self.disconnected:  # hung up while the arena seated us: its on_close saw no seat yet
            await self.arena.bot_left(seat_id)
            return
        if self.match_id is None:
            self.match_id = match_id
        self._log(logging.INFO, "joined room %s", self.match_id)
        self._send_joined()
        if players is not None:
            self.listener.tell_admins(protocol.joined_game_room(str(match_id), players))

    def _send_joined(self) -> None:
        """``<joined roomId>`` once, before anything else of the room (the match may have
        started, and asked for its welcome, before the join request had its answer)."""
        if self.match_id is None:
            self.match_id = self.listener.match_of(self)
        if not self.joined_sent and self.match_id is not None:
            self.joined_sent = True
            self.conn.write(protocol.joined(str(self.match_id)))

    # --- admin ------------------------------------------------------------------------------
    def _authenticate(self, password: str) -> None:
        """No reply on success; a wrong password gets the errorpacket and a disconnect.  The
        comparison takes the same time however much of the password is right.  An address
        that failed too often (:class:`GuessBackoff`) is refused, the password unread,
        until its wait is over."""
        address, now = self.conn.peer.rsplit(":", 1)[0], time.monotonic()
        backoff = self.listener.guesses
        wait = backoff.wait(address, now)
        if wait > 0:
            self.refuse(f"authentication refused: too many failed attempts from {address}; "
                        f"try again in {max(1, round(wait))} s")
            return
        expected = self.listener.password
        if expected and hmac.compare_digest(password.encode(), expected.encode()):
            if not self.admin:
                self._log(logging.INFO, "authenticated as administrator")
            backoff.succeeded(address)
            self.admin = True
            self.listener.admins.add(self)
        else:
            backoff.failed(address, now)
            self.refuse("authentication failed")

    async def _admin(self, msg: dict) -> None:
        """``prepare``, ``observe``, ``pause`` (the room's observers get ``paused``),
        ``step``, ``cancel``; an unknown or finished room: errorpacket and disconnect."""
        kind = msg["type"]
        if kind == "prepare":
            await self._prepare(msg)
            return
        match_id = _parse_room_id(msg["room_id"])
        if match_id is None:
            self.refuse(f"unknown room {msg['room_id'][:60]!r}")
            return
        try:
            if kind == "observe":
                await self._observe(match_id)
            elif kind == "pause":
                await self.arena.pause(match_id, msg["pause"])
                room = self.listener.rooms.get(match_id)
                for observer in list(room.observers if room else ()):
                    observer.send(protocol.paused(room.room_id, msg["pause"]))
            elif kind == "step":
                await self.arena.step(match_id)
            elif kind == "cancel":
                await self.arena.cancel(match_id)
                self.listener.forget_reservations(match_id)
        except LookupError as exc:
            self.refuse(str(exc))

    async def _prepare(self, msg: dict) -> None:
        """A table whose two seats are reserved: one code per slot (every slot gets one, a
        ``reserved="false"`` slot too: our seats are all for bots that present a code).  A
        ``displayName`` that is a registered bot's name, or a look-alike, is dropped: the slot
        plays as ``Player N`` (its client presents a code, not the bot's key)."""
        variant = protocol.GAME_TYPES[msg["game_type"]]  # the codec refuses an unknown one
        waiting = await self.listener.prepared_waiting()
        if waiting >= self.listener.max_prepared:
            self.refuse(f"{waiting} prepared rooms are waiting for their players (BLOKUS_MAX_PREPARED): "
                        "let them play or cancel some before preparing more")
            return
        slots = msg["slots"]
        names = []
        for i, slot in enumerate(slots):
            name = clean_name(slot.get("name") or "")
            if name and await self.arena.claims_bot_name(GAME, name):
                # A slot is taken with its code, never a key, so no registered bot's name (nor a
                # look-alike, games/arena/bots/names.py): it plays as a slot without a name does.
                # Clients learn their colour from the welcome message, never from a name.
                self._log(logging.INFO, "slot %d: %r is a registered bot's name; it plays as %r", i + 1, name,
                          f"Player {i + 1}")
                name = ""
            names.append(name or f"Player {i + 1}")
        try:
            match_id, codes = await self.arena.prepare(GAME, {"variant": variant}, names, paused=msg["pause"],
                                                       creator_key=f"ip:{self.conn.peer.rsplit(':', 1)[0]}")
        except ValueError as exc:
            self.refuse(str(exc))
            return
        for code, slot, name in zip(codes, slots, names):
            self.listener.reservations[code] = Reservation(match_id, name, slot.get("can_timeout", True))
        self._log(logging.INFO, "prepared room %s (%s, paused %s)", match_id, msg["game_type"], msg["pause"])
        self.conn.write(protocol.prepared(str(match_id), codes))

    async def _observe(self, match_id: int) -> None:
        if match_id in self.observing:
            self.conn.write(protocol.observed(str(match_id)))
            return
        room = self.listener.room(match_id)
        observer = Observer(self, room)
        try:
            await self.arena.watch(match_id, observer)
        except LookupError:
            self.listener.drop_room(match_id)
            raise
        room.observers.add(observer)
        self.observing[match_id] = observer
        self.conn.write(protocol.observed(str(match_id)))
        observer.release()

    # --- moves ------------------------------------------------------------------------------
    def _fail_request(self, answer: Answer) -> None:
        req = self.request
        if req is not None and req.pending:
            req.resolve(answer.action, answer.forced, answer.reason, answer.detail)

    def _move(self, msg: dict, received_at: float) -> None:
        """A SetMove or SkipMove for the open MoveRequest (notes, section Time and Message
        details): late -> SOFT_TIMEOUT, invalid -> RULE_VIOLATION (the error message to the
        offender and the observers), out of turn or for another room -> errorpacket.

        Late means read from the socket (``received_at``) more than the soft limit after the
        MoveRequest was sent: the time the move then waited for this process (parsing, a
        starved CPU) is the server's, not the client's."""
        req, state = self.request, self.asked_state
        if self.match_id is None or msg["room_id"] != str(self.match_id):
            self.refuse(f"a move for room {msg['room_id'][:60]!r}, but this connection plays in "
                        f"{'no room' if self.match_id is None else f'room {self.match_id}'}")
            return
        if req is None or not req.pending or state is None:
            self.refuse("a move, but no move was requested (it is not your turn)")
            return
        if msg["variant"] != state.variant:
            self.refuse(f"a move of {protocol.GAME_TYPE_OF[msg['variant']]}, but this room plays "
                        f"{protocol.GAME_TYPE_OF[state.variant]}")
            return
        self.conn.asked_for()
        action, hints = list(msg["action"]), list(msg.get("hints") or [])
        if action[0] == "skip" and action[1] is None:  # SkipMove without <color>: the colour to move
            action[1] = COLORS[state.current_color]
        soft = self.listener.soft_timeout
        if self.can_timeout and received_at - req.started > soft:
            self._log(logging.INFO, "move after the soft limit of %g s", soft)
            self._fail_request(_forfeit("SOFT_TIMEOUT", TIMEOUT_REASON.format(seconds=soft), _describe(action, hints)))
            return
        try:
            legal = state.is_legal(self.seat, action)
        except (ValueError, TypeError, KeyError, IndexError):
            legal = False
        if not legal:
            mistake = _mistake(state, action)
            room = self.listener.room(self.match_id)
            error = protocol.error(room.room_id, f"Ungueltiger Zug von '{self.display_name}'.\n{mistake}",
                                   action, state.variant, hints)
            room.violation = error
            self.conn.write(error)
            self._log(logging.INFO, "invalid move %s: %s", _describe(action, []), mistake)
            self._fail_request(_forfeit("RULE_VIOLATION", mistake, _describe(action, hints)))
            return
        req.resolve(action, detail=_hints_text(hints))

    # --- the runner's side ------------------------------------------------------------------
    def start(self, state, seat: int) -> None:
        """The match starts: ``joined`` (if not out yet), the welcome and the first memento."""
        self.seat = seat
        self.variant = state.variant
        self.started = True
        self._send_joined()
        if self.disconnected or self.match_id is None:
            return
        room = self.listener.room(self.match_id)
        self.conn.write(protocol.welcome(room.room_id, seat))
        self.conn.write(room.memento(state, self.listener.names(self.match_id)))

    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time is this seat's hard limit per move (instead of
        ``BLOKUS_NO_TIMEOUT_HARD``, or ``BLOKUS_HARD_TIMEOUT`` for a prepared slot that can
        time out, whose soft limit stays the contest's)."""
        self.think_s = seconds

    def ask(self, state, seat: int, version: int) -> "asyncio.Future[Answer]":
        self.seat = seat
        if self.disconnected:
            return resolved(_forfeit("LEFT", LEFT_REASON, self.left_detail or "disconnected"))
        self.asked_state = state
        limit = self.listener.hard_timeout if self.can_timeout else self.listener.no_timeout_hard
        if self.think_s is not None:
            limit = self.think_s
        self.request = TimedRequest(limit, lambda: self._timed_out(limit))
        if not self.conn.write(self.listener.room(self.match_id).move_request(state.variant)):
            self._fail_request(_forfeit("LEFT", LEFT_REASON, "not reading what the server sends"))
        return self.request.future

    def _timed_out(self, limit: float) -> Answer:
        self._log(logging.INFO, "no move within %g s", limit)
        return _forfeit("HARD_TIMEOUT", TIMEOUT_REASON.format(seconds=limit))

    def notify(self, state, seat: int, happenings: list[dict]) -> None:
        """After every step with a move: the memento (to both players, then the observers)."""
        if self.disconnected or self.match_id is None:
            return
        if any(h.get("type") == "move" for h in happenings):
            room = self.listener.room(self.match_id)
            self.conn.write(room.memento(state, self.listener.names(self.match_id)))

    def close(self, result: dict | None) -> None:
        """The match is over: the result (if it has one), ``left``, ``</protocol>``, close.

        The three go out in one write: a client that hangs up as soon as it has read the
        result (many do) would otherwise make the rest fail on a reset connection."""
        if self.match_id is not None and not self.conn.is_closing():
            room_id = str(self.match_id)
            end = b""
            if result is not None and "scores" in result:
                end = protocol.result(room_id, result, self.listener.names(self.match_id), self.variant)
            self.conn.write(end + protocol.left(room_id) + protocol.PROTOCOL_CLOSE)
        self.conn.close()
        if self.match_id is not None:  # the observers (told after us) keep their own reference
            self.listener.rooms.pop(self.match_id, None)
            self.listener.forget_reservations(self.match_id)


def _mistake(state, action) -> str:
    """Why ``action`` is refused (the rules' MoveMistake-like text)."""
    try:
        return state.placement_mistake(action) or ILLEGAL_REASON
    except Exception:  # a move the rules cannot even read is still just refused
        return ILLEGAL_REASON


def _parse_room_id(text: str) -> int | None:
    """Room ids are match ids as decimal strings."""
    text = text.strip()
    if not text.isdigit() or len(text) > 18:
        return None
    return int(text)


def _room_of_seat(seat_id: int) -> tuple[int | None, int]:
    """(match id, occupied seats) of the table a seat belongs to (what admins are told)."""
    from games.arena.models import Seat
    from games.arena.play import tables

    match_id = tables.match_of_seat(seat_id)
    players = Seat.objects.filter(match_id=match_id, occupied=True).count()
    return match_id, players


# --- the listener --------------------------------------------------------------------------------

class BlokusListener:
    """The port's shared state: connections, authenticated admins, rooms, reservations."""

    def __init__(self, arena):
        cfg = settings.ARENA
        self.arena = arena
        self.password: str = cfg["BLOKUS_ADMIN_PASSWORD"]
        self.guesses = GuessBackoff(cfg["BLOKUS_ADMIN_FREE_FAILURES"], cfg["BLOKUS_ADMIN_BACKOFF"])
        self.max_prepared: int = cfg["BLOKUS_MAX_PREPARED"]
        self.soft_timeout: float = cfg["BLOKUS_SOFT_TIMEOUT"]
        self.hard_timeout: float = cfg["BLOKUS_HARD_TIMEOUT"]
        self.no_timeout_hard: float = cfg["BLOKUS_NO_TIMEOUT_HARD"]
        self.limits = StreamLimits(cfg["BLOKUS_MAX_MESSAGE_BYTES"], cfg["BLOKUS_MAX_DEPTH"], cfg["BLOKUS_MAX_ELEMENTS"],
                                   cfg["BLOKUS_MESSAGES_PER_S"] or None, cfg["BLOKUS_MESSAGES_BURST"])
        self.admins: set[BlokusClient] = set()
        self.rooms: dict[int, Room] = {}
        self.reservations: dict[str, Reservation] = {}
        self.connections: set[XmlConnection] = set()

    def room(self, match_id: int) -> Room:
        room = self.rooms.get(match_id)
        if room is None:
            room = self.rooms[match_id] = Room(match_id)
        return room

    def drop_room(self, match_id: int) -> None:
        """Forget a room nobody watches that is not running (a room that ends is forgotten by
        its players' and observers' ``close``/``end``)."""
        room = self.rooms.get(match_id)
        if room is not None and not room.observers and not self.arena.is_running(match_id):
            del self.rooms[match_id]

    async def prepared_waiting(self) -> int:
        """Prepared rooms of this port whose match has not started (each holds a table and
        its reserved seats until its players come or an admin cancels it), as the database
        says: a room that started or ended, here or at another arena, no longer counts."""
        asked = {r.match_id for r in self.reservations.values()}
        waiting = await self.arena.reserved_open_tables(asked)
        # The codes of rooms that started or ended are of no use any more (the arena refuses
        # them): forget them, wherever the room ended.
        for code in [c for c, r in self.reservations.items() if r.match_id in asked - waiting]:
            del self.reservations[code]
        return len(waiting)

    def forget_reservations(self, match_id: int) -> None:
        for code in [c for c, r in self.reservations.items() if r.match_id == match_id]:
            del self.reservations[code]

    def names(self, match_id: int) -> list[str]:
        """The display names of seat 0 and 1 (the memento's ``first``/``second``, the result's
        winners) as the running match has them."""
        return self.arena.player_names(match_id) or ["", ""]

    def match_of(self, endpoint: BlokusClient) -> int | None:
        """The running match ``endpoint`` sits in (the runner knows before the join request
        has its answer when the match starts at once)."""
        return self.arena.match_played_by(endpoint)

    def tell_admins(self, data: bytes) -> None:
        for admin in list(self.admins):
            admin.conn.write(data)


async def start_listener(arena):
    """Listen for Blokus clients on ``BLOKUS_HOST:BLOKUS_PORT`` (default 13050); returns an
    object whose ``close()`` stops listening and drops every connection."""
    cfg = settings.ARENA
    listener = BlokusListener(arena)
    max_connections = cfg["MAX_CONNECTIONS"]
    admission = admission_from_settings(cfg)
    deadlines = Deadlines(cfg["FIRST_MESSAGE_TIMEOUT"], cfg["MESSAGE_TIMEOUT"])
    return await start_bot_listener(
        lambda: XmlConnection(lambda conn: BlokusClient(conn, listener), listener.limits, listener.connections,
                              deadlines),
        cfg["BLOKUS_HOST"], cfg["BLOKUS_PORT"], max_connections, "blokus", listener.connections, admission)
