"""Browser WebSockets for playing and watching (docs/architecture.md, "The runner" and "Who
may see what").

``/ws/matches/<id>/``: a person seated at the match gets that seat's views (their own hidden
information, their open request) and may send moves; everyone else gets the public views.
Every view carries a version and is the whole table, so a client that skips versions misses
nothing it needs; a new connection gets the newest view at once, ``{"type": "resync"}`` asks
for it again.

Client -> server: ``{"type": "act", "version": n, "action": ...}``, ``{"type": "resync"}``,
``{"type": "leave"}`` / ``{"type": "back"}`` (a seated person leaves the match, or takes the
seat back: :meth:`games.arena.play.runner.MatchRunner.human_leave`),
``{"type": "ack", "version": n}`` (every message up to view ``n`` is rendered).
Server -> client: ``match.view`` (see :mod:`games.arena.play.runner`), ``match.error``,
``table.update`` (seats or status changed: reload the table), ``match.final`` (the finished
match's last view, every hand shown), ``match.over`` (``{"status", "reason", "notice"}``: the
match just ended, however it ended: finished, abandoned, cancelled, the server stopping or
failing; see :func:`games.arena.play.arena.over_message`).

Bounds on what one connection may cost (settings ``ARENA["WS_*"]``):

- **rate**: a token bucket of ``WS_BURST`` messages refilled at ``WS_MESSAGES_PER_S``; a
  client over it is closed with 4008.  An ack that acknowledges something is free (acks are
  bounded by what the server sent), any other message takes a token.
- **size and depth**: a message over :data:`MAX_MESSAGE_BYTES`, not text, nested deeper than
  :data:`~games.arena.bots.http_bots.MAX_JSON_DEPTH` or not JSON gets a ``match.error``.
- **resync**: at most one outstanding; another one before a view has come (or
  :data:`RESYNC_WAIT_S` passed) is dropped.
- **what is outstanding** (flow control): at most ``WS_UNACKED_VIEWS`` views sent and not yet
  acknowledged; beyond that only the newest view is held (it replaces older held ones: each
  view is the whole table, so skipping is safe) and sent when an ack frees the window.  Errors
  and final views are bounded the same way (at most ``WS_UNACKED_VIEWS`` since the last ack;
  more are dropped).  A client whose window stays full for ``WS_ACK_TIMEOUT`` seconds is
  closed with 4009.  Daphne writes whatever it is given into Twisted's unbounded send buffer
  whether the client reads or not, so this window is what bounds a non-reading client's
  memory: nothing more is sent to it.

**Spectators** are many per match (``benchmarks/spectator_fanout.py`` has 500), so a match's
public views reach them through one :class:`Audience` per process instead of one channel-layer
membership each: the channel layer carries each view once to the process, and the audience
hands it to the spectators' consumers a batch at a time, the newest view winning over one not
yet handed out, its frame written straight to each one's socket
(:meth:`MatchConsumer.hand_view`).  A seated person's own views (which carry their requests)
keep the per-connection path, never skipped; so does everything else (table updates, errors, resync
answers).  Each spectator keeps its own window and the rules above.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import Awaitable

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.exceptions import ChannelFull
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from games.arena.bots.http_bots import json_too_deep
from games.arena.bots.limits import TokenBucket
from games.arena.models import Match, Tournament
from games.arena.play import control, replay, tables
from games.arena.play.arena import NO_ARENA, over_message
from games.arena.play.presence import Watching
from games.arena.play.runner import public_group, seat_group, table_group
from games.arena.tournaments import schedule

log = logging.getLogger("arena.web")

#: Largest message a browser sends (bytes): a move is a few dozen.
MAX_MESSAGE_BYTES = 16 * 1024
#: Seconds a resync counts as outstanding when no view answers it (the runner may have none).
RESYNC_WAIT_S = 2.0
#: Close codes (4000-4999 are the application's).
CLOSE_TOO_MANY_MESSAGES = 4008
CLOSE_NO_ACK = 4009
#: What a page is told when the arena its move or resync went to reads nothing (see also
#: :data:`games.arena.play.arena.NO_ARENA`).
ARENA_BUSY = "The arena running this match is not answering; try again."
#: The scope's ``extensions`` key under which the server (``manage.py serve``) gives a
#: WebSocket's consumer ``{"send": send_text_now}``: ``send_text_now(text) -> bool`` writes
#: ``text`` to that client's socket at once, without Channels' and Daphne's coroutines, or
#: returns False when it cannot (then the text takes the usual ``send``).  Absent elsewhere
#: (tests' communicators, other ASGI servers).
SEND_TEXT_NOW = "arena.send_text_now"


def sitter_from_scope(scope) -> tables.Sitter | None:
    """The logged-in user or the guest session of a WebSocket (or HTTP) scope."""
    user = scope.get("user")
    session = scope.get("session")
    if user is not None and user.is_authenticated:
        return tables.Sitter(name=user.get_username(), user_id=user.pk)
    key = session.session_key if session is not None else None
    return tables.Sitter(name="", session_key=key) if key else None


def _is_ack(text: str | None) -> bool:
    """Whether a browser message looks like ``{"type": "ack", ...}`` (a cheap test: it is
    parsed and checked as any other message; this only spares it the database hop)."""
    return text is not None and len(text) < 80 and '"ack"' in text


class Audience:
    """The consumers of this process that watch one channel-layer group (a match's public
    views), subscribed to the group once, with a channel of its own.

    **Delivery.**  Each message the group gets is received once and given to each member's
    ``hand_view`` (a ``match.view``: the window's check and the frame written to the socket,
    nothing awaited when the server can write it at once) or ``dispatch`` (anything else), in
    the order they joined, :attr:`BATCH` members per turn of the loop.  Per spectator and view
    that is a window check and a socket write; with a channel-layer membership each, it was also a put on the layer, a
    wake-up of the consumer's task and Channels' dispatch machinery: about 40% of the server's
    CPU per view with 500 spectators (``benchmarks/spectator_fanout.py``).  With Redis, a view
    crosses Redis once per web process instead of once per spectator.

    **Latest wins.**  Between two batches the loop serves everything else (the match's next
    request, bots' answers, acks), so a fan-out holds the match up for a batch at most.  A
    ``match.view`` that comes while an older one is still being handed out replaces it: the
    members not yet reached get only the newer one, then everyone gets it (each view is the
    whole table, and a member never gets an older view after a newer one).  Any other message
    is handed to everyone, in order.

    Created with its first member, it unsubscribes and ends when its last member leaves.  A
    member whose handler raises is logged and closed (1011); the others still get the view.
    """

    #: Members served per turn of the loop: each is a socket write, about 25 us, so a batch
    #: holds the loop for about 6 ms.  (64 a turn, the tail of 500 spectators waited behind
    #: the acks of the first ones and was skipped more often; all 500 at once, every few
    #: steps the match's next request waited behind the fan-out.)
    BATCH = 256

    #: layer -> group -> the audience of this process.
    _all: "weakref.WeakKeyDictionary[object, dict[str, Audience]]" = weakref.WeakKeyDictionary()

    def __init__(self, layer, group: str):
        self.layer, self.group = layer, group
        self.members: dict[MatchConsumer, None] = {}  # a dict: ordered, O(1) removal
        self.pending: list[dict] = []  # received, not yet handed out (at most one match.view)
        self.channel: str | None = None
        self.receiver: asyncio.Task | None = None
        self.delivery: asyncio.Task | None = None
        self.subscribed = asyncio.ensure_future(self._subscribe())

    @classmethod
    def of(cls, layer, group: str) -> "Audience | None":
        """The audience of ``group`` in this process, if any consumer watches it."""
        return cls._all.get(layer, {}).get(group)

    @classmethod
    async def join(cls, layer, group: str, consumer: "MatchConsumer") -> "Audience":
        """Add ``consumer`` to the audience of ``group`` (made and subscribed if it is the
        first); it gets every message the group gets from when this returns."""
        audiences = cls._all.setdefault(layer, {})
        audience = audiences.get(group)
        if audience is None:
            audience = audiences[group] = cls(layer, group)
        audience.members[consumer] = None
        try:
            # Shielded: a consumer cancelled while it joins must not cancel the subscription
            # the other members wait for.
            await asyncio.shield(audience.subscribed)
        except BaseException:
            await audience.leave(consumer)
            raise
        return audience

    async def leave(self, consumer: "MatchConsumer") -> None:
        """Remove ``consumer``; the last one out unsubscribes (a later join subscribes anew)."""
        self.members.pop(consumer, None)
        if self.members:
            return
        audiences = self._all.get(self.layer, {})
        if audiences.get(self.group) is self:
            del audiences[self.group]
        try:
            await self.subscribed
        except Exception:
            return  # never subscribed
        for task in (self.receiver, self.delivery):
            if task is not None:
                task.cancel()
        await self.layer.group_discard(self.group, self.channel)
        await Watching.of(self.layer).leave(self.group)

    async def _subscribe(self) -> None:
        try:
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
            # The runner publishes to the group from now on (before the members' resyncs).
            await Watching.of(self.layer).join(self.group)
        except BaseException:
            audiences = self._all.get(self.layer, {})
            if audiences.get(self.group) is self:
                del audiences[self.group]
            raise
        self.receiver = asyncio.ensure_future(self._receive())

    async def _receive(self) -> None:
        while True:
            message = await self.layer.receive(self.channel)
            if message.get("type") == "match.view":  # latest wins
                self.pending = [m for m in self.pending if m.get("type") != "match.view"]
            self.pending.append(message)
            if self.delivery is None or self.delivery.done():
                self.delivery = asyncio.ensure_future(self._deliver())

    def _superseded(self, message: dict) -> bool:
        return message.get("type") == "match.view" and any(m.get("type") == "match.view" for m in self.pending)

    async def _deliver(self) -> None:
        while self.pending:
            message = self.pending.pop(0)
            members = list(self.members)
            # A view's frame is the same for all: written straight to each member's socket
            # after its window's check, no coroutine between (MatchConsumer.hand_view).
            text = message.get("text") if message.get("type") == "match.view" else None
            for start in range(0, len(members), self.BATCH):
                if start:
                    await asyncio.sleep(0)  # everything else the loop has to do first
                    if self._superseded(message):
                        break  # the newer view goes to everyone, these members skip this one
                for consumer in members[start:start + self.BATCH]:
                    if consumer not in self.members:
                        continue  # left meanwhile
                    try:
                        if text is None:
                            await consumer.dispatch(message)
                        elif (rest := consumer.hand_view(message)) is not None:
                            await rest
                    except Exception:
                        log.exception("match %s: a spectator's consumer failed on %s",
                                      getattr(consumer, "match_id", "?"), message.get("type"))
                        self.members.pop(consumer, None)
                        await consumer._close(1011, "server error")


class MatchConsumer(AsyncJsonWebsocketConsumer):
    """One browser tab on one match page, within the bounds of the module docstring."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        bounds = settings.ARENA
        self.bucket = TokenBucket(bounds["WS_MESSAGES_PER_S"], bounds["WS_BURST"])
        self.window = bounds["WS_UNACKED_VIEWS"]
        self.unacked: list[int] = []   # versions of the views sent and not yet acknowledged
        self.held: dict | None = None  # the newest view not sent because the window is full
        self.sent_version = 0          # the newest version sent
        self.others_unacked = 0        # errors and final views sent since the last ack
        self.ack_watch: asyncio.Task | None = None  # closes the client when the window stays full
        self.resync_asked: float | None = None
        self.final: dict | None = None
        self.closing = False
        self.audience: Audience | None = None  # spectators: who hands them the public views
        self.watching: str | None = None  # a seated person's own group, told to the arena
        #: The channel of the arena that runs this match (:meth:`_to_arena`), found at each
        #: resync and kept for the moves in between.
        self.arena_channel: str | None = None
        self.send_text_now = None  # the server's, if it offers one (SEND_TEXT_NOW)

    async def connect(self):
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        self.send_text_now = (self.scope.get("extensions") or {}).get(SEND_TEXT_NOW, {}).get("send")
        info = await sync_to_async(self._load)()
        if info is None:
            await self.close(code=4404)
            return
        self.status, self.seat = info
        self.groups_joined = [table_group(self.match_id)]
        if self.status == Match.Status.RUNNING and self.seat is not None:
            self.groups_joined.append(seat_group(self.match_id, self.seat))
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        if len(self.groups_joined) > 1:  # the runner builds this seat's views while the page is open
            self.watching = self.groups_joined[1]
            await Watching.of(self.channel_layer).join(self.watching)
        await self.accept()
        if self.status == Match.Status.RUNNING and self.seat is None:
            # After accept: the audience may hand it a view at any moment from now on.  A view
            # published before is the resync's answer.
            self.audience = await Audience.join(self.channel_layer, public_group(self.match_id), self)
        await self._resync()

    def _load(self):
        match = Match.objects.filter(pk=self.match_id).first()
        if match is None:
            return None
        seat = tables.seat_of(self.match_id, sitter_from_scope(self.scope))
        return match.status, (seat.index if seat else None)

    async def disconnect(self, code):
        self.closing = True  # nothing more goes out (the audience may still hand it a view)
        if getattr(self, "ack_watch", None) is not None:
            self.ack_watch.cancel()
        if getattr(self, "audience", None) is not None:
            await self.audience.leave(self)
        if getattr(self, "watching", None) is not None:
            await Watching.of(self.channel_layer).leave(self.watching)
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """Send, unless this socket is closing.  Once we closed it, or the browser began its
        closing handshake (Daphne raises autobahn's ``Disconnected`` then, before our
        ``disconnect`` runs), a view or table update for it is dropped, not a traceback in the
        server log."""
        if self.closing:
            return
        try:
            await super().send(text_data, bytes_data, close)
        except Disconnected:
            self.closing = True

    def _send_now(self, text: str) -> bool:
        """Write ``text`` to the socket at once if the server offers it (:data:`SEND_TEXT_NOW`)
        and can; False: nothing done, send it with :meth:`send`."""
        if self.closing:
            return True  # dropped, as send() would
        return self.send_text_now is not None and self.send_text_now(text)

    async def send_json(self, content, close=False):
        await self.send(text_data=await self.encode_json(content), close=close)

    async def _close(self, code: int, reason: str) -> None:
        """Close the connection once (frames already on their way are then ignored)."""
        if not self.closing:
            self.closing = True
            await self.close(code=code, reason=reason)

    async def _resync(self):
        now = time.monotonic()
        if self.resync_asked is not None and now - self.resync_asked < RESYNC_WAIT_S:
            return  # one is outstanding: its answer will be the newest view anyway
        self.resync_asked = now
        if self.status == Match.Status.RUNNING:
            # Looked up again: a resync is how a page recovers, e.g. after its arena died.
            self.arena_channel = None
            await self._to_arena({"type": "resync", "match": self.match_id, "reply": self.channel_name,
                                  "audience": self.seat if self.seat is not None else "public"})
        elif self.status in (Match.Status.FINISHED, Match.Status.ABORTED):
            if self.final is None:
                self.final = {"type": "match.final", **await sync_to_async(replay.final_view)(self.match_id)}
            self.resync_asked = None  # answered right here
            await self._send_other(self.final)

    async def receive(self, text_data=None, bytes_data=None):
        if self.closing:
            return
        content = None
        if text_data is None or len(text_data) > MAX_MESSAGE_BYTES:
            error = "Message too large or not text."
        elif json_too_deep(text_data.encode()):
            error = "Message nested too deep."
        else:
            content = await self.decode_json(text_data)
            error = None if content is not None else "Message is not JSON."
        if isinstance(content, dict) and content.get("type") == "ack" and await self._ack(content.get("version")):
            return  # acknowledged something: bounded by what was sent, so it costs no token
        if not self.bucket.take():
            await self._close(CLOSE_TOO_MANY_MESSAGES, "too many messages: at most "
                              f"{settings.ARENA['WS_MESSAGES_PER_S']:g} a second")
            return
        if error:
            await self._send_other({"type": "match.error", "message": error})
        else:
            await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "resync":
            await self._resync()
        elif kind == "ack":
            pass  # acknowledged nothing new (a repeat): it took a token, nothing else to do
        elif kind in ("leave", "back"):
            if self.seat is None or self.status != Match.Status.RUNNING:
                await self._send_other({"type": "match.error", "message": "You are watching, not playing."})
                return
            await self._to_arena({"type": "human.leave", "match": self.match_id, "seat": self.seat,
                                  "back": kind == "back", "reply": self.channel_name})
        elif kind == "act":
            if self.seat is None or self.status != Match.Status.RUNNING:
                await self._send_other({"type": "match.error", "message": "You are watching, not playing."})
                return
            version = content.get("version")
            if not isinstance(version, int):
                await self._send_other({"type": "match.error", "message": "A move needs the version it answers."})
                return
            await self._to_arena({"type": "human.action", "match": self.match_id, "seat": self.seat,
                                  "version": version, "action": content.get("action"), "reply": self.channel_name})
        else:
            await self._send_other({"type": "match.error", "message": "Unknown message type."})

    async def _to_arena(self, message: dict) -> None:
        """Send ``message`` (a move, a leave, a resync of this running match) to the arena that
        runs the match (docs/architecture.md, *Control routing*): its owner's channel, else
        any live arena's, which sends it on or answers from the database
        (:func:`games.arena.play.control.channel_for`).  The channel is looked up once (a read in a
        worker thread) and kept: a match's owner changes only when it starts, before this
        page saw it running, or when its arena died, after which the match is aborted.  No
        live arena: the page gets :data:`NO_ARENA` as a ``match.error``; an arena whose
        channel is full (it reads nothing), :data:`ARENA_BUSY`."""
        if self.arena_channel is None:
            self.arena_channel = await sync_to_async(control.channel_for)(self.match_id)
        if self.arena_channel is None:
            self.resync_asked = None  # nothing is on its way
            await self._send_other({"type": "match.error", "message": NO_ARENA})
            return
        try:
            await self.channel_layer.send(self.arena_channel, message)
        except ChannelFull:  # that arena reads nothing (stuck or gone): look again next time
            self.arena_channel = self.resync_asked = None
            await self._send_other({"type": "match.error", "message": ARENA_BUSY})

    @classmethod
    async def decode_json(cls, text_data):
        """The message as JSON, or ``None`` if it is not JSON (callers bound size and depth)."""
        try:
            return json.loads(text_data)
        except ValueError:
            return None

    # --- flow control -----------------------------------------------------------------------
    async def _ack(self, version) -> bool:
        """Apply ``{"type": "ack", "version": version}``: every view up to ``version`` and every
        other message sent so far is rendered.  Returns whether it acknowledged anything."""
        if not isinstance(version, int) or isinstance(version, bool):
            return False
        before = len(self.unacked)
        self.unacked = [v for v in self.unacked if v > version]
        useful = len(self.unacked) < before or self.others_unacked > 0
        self.others_unacked = 0
        if len(self.unacked) < self.window:
            if self.ack_watch is not None:
                self.ack_watch.cancel()
                self.ack_watch = None
            if self.held is not None:
                held, self.held = self.held, None
                await self._send_view(held)
        return useful

    async def _send_view(self, event: dict) -> None:
        """Send a ``match.view`` now if the window has room, else hold it (newest wins)."""
        if not self._admit_view(event):
            return
        # The runner encodes each view once for all who watch it (runner.view_message).
        text = event.get("text")
        if text is None:
            await self.send_json(event)
        elif not self._send_now(text):
            await self.send(text_data=text)

    def hand_view(self, event: dict) -> Awaitable[None] | None:
        """What :meth:`match_view` does with a view carrying its ``"text"``, without a
        coroutine when it can (for :class:`Audience`: 500 spectators' coroutines and the
        wrappers of Channels and Daphne were about a third of the fan-out's time): the
        window's check, then the frame written to the socket at once.  Returns None when done
        (sent, held or dropped), else the send through Channels, to be awaited."""
        if not self._admit_view(event):
            return None
        text = event["text"]
        return None if self._send_now(text) else self.send(text_data=text)

    def _admit_view(self, event: dict) -> bool:
        """The window's part of :meth:`_send_view`: whether ``event`` is to be sent now (it
        is then counted as sent); if not, it is held (the window is full) or dropped (older
        than one sent, or the socket is closing)."""
        self.resync_asked = None
        if self.closing:
            return False
        if len(self.unacked) >= self.window:
            if self.held is None or event["version"] >= self.held["version"]:
                self.held = event
            return False
        if event["version"] < self.sent_version:
            return False  # older than one sent (the same one again is a resync's answer)
        self.sent_version = event["version"]
        self.unacked.append(event["version"])
        if len(self.unacked) >= self.window and self.ack_watch is None:
            self.ack_watch = asyncio.ensure_future(self._close_without_ack())
        return True

    async def _send_other(self, message: dict) -> None:
        """Send an unversioned message (error, final view) unless ``WS_UNACKED_VIEWS`` of them
        are already unacknowledged (a client that does not read gets no more)."""
        if self.closing or self.others_unacked >= self.window:
            return
        self.others_unacked += 1
        await self.send_json(message)

    async def _close_without_ack(self) -> None:
        await asyncio.sleep(settings.ARENA["WS_ACK_TIMEOUT"])
        self.ack_watch = None
        await self._close(CLOSE_NO_ACK, f"no ack for {settings.ARENA['WS_ACK_TIMEOUT']:g} s")

    # --- from the channel layer -------------------------------------------------------------
    #: Channel-layer messages whose handlers never touch the database.  Channels' dispatch
    #: first hops to a worker thread to close stale database connections, for every message;
    #: for a view sent to 500 spectators that was 500 thread round trips (and most of the
    #: server's time: benchmarks/spectator_fanout.py), so these skip it.
    #: The same holds for a browser's acks (every few views from every spectator), which
    #: are answered from memory.
    NO_DATABASE = frozenset({"match.view", "match.error", "table.update", "match.over"})

    async def dispatch(self, message):
        kind = message.get("type")
        if kind in self.NO_DATABASE or (kind == "websocket.receive" and _is_ack(message.get("text"))):
            await getattr(self, get_handler_name(message))(message)
        else:
            await super().dispatch(message)

    async def match_view(self, event):
        await self._send_view(event)

    async def match_error(self, event):
        await self._send_other(event)

    async def table_update(self, event):
        await self.send_json({"type": "table.update"})

    async def match_over(self, event):
        """The match ended: the page says so at once; moves and resyncs are answered from the
        database from now on."""
        self.status, self.final = event["status"], None
        await self._send_other({key: event[key] for key in ("type", "status", "reason", "notice")})

    async def match_gone(self, event):
        """The arena has no runner for a match this page saw running: if it ended before the
        page joined the table's group (so its ``match.over`` never came), say so now."""
        self.resync_asked = None
        match = await sync_to_async(lambda: Match.objects.filter(pk=self.match_id).values("status", "result").first())()
        if match is None or match["status"] not in (Match.Status.FINISHED, Match.Status.ABORTED):
            return  # still starting, or running: its views will come
        result = match["result"] if isinstance(match["result"], dict) else {}
        await self.match_over(over_message(match["status"], result.get("aborted")))


# --- a tournament's live page ----------------------------------------------------------------------
#: The least seconds between two standings a tournament page gets (and between two
#: computations of a tournament's standings in this process).
STANDINGS_EVERY_S = 1.0
#: The longest message a tournament page sends: ``{"type": "ack"}``.
MAX_ACK_BYTES = 64
CLOSE_NOT_ACK = 4003


class _Standings:
    """The standings of the tournaments watched in this process, computed at most once per
    :data:`STANDINGS_EVERY_S` per tournament however many pages watch it: ``{tournament id:
    (when started, the computation)}``."""

    latest: dict[int, tuple[float, asyncio.Future]] = {}

    @classmethod
    async def of(cls, tournament_id: int, not_before: float) -> dict | None:
        """The tournament's :func:`~games.arena.web.tournaments.snapshot`, from a computation
        started at ``not_before`` (loop time) or later: a change told at ``not_before`` is in it."""
        from games.arena.web.tournaments import snapshot

        loop = asyncio.get_running_loop()
        entry = cls.latest.get(tournament_id)
        if entry is None or entry[0] < not_before or (entry[1].done() and entry[1].exception() is not None):
            if len(cls.latest) > 100:  # forget tournaments nobody asked about lately
                cls.latest = {k: v for k, v in cls.latest.items() if v[0] > loop.time() - 60}
            entry = cls.latest[tournament_id] = (loop.time(), asyncio.ensure_future(
                database_sync_to_async(snapshot)(tournament_id)))
        return await asyncio.shield(entry[1])


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """``/ws/tournaments/<id>/``: a tournament's live page.  Sends ``{"type":
    "tournament.standings", "tournament": snapshot, "you": the user's own tables}``
    (games/arena/web/tournaments.py: ``snapshot``, ``your_tables``) at
    connect and after each ``tournament.changed`` its group (:func:`schedule.group`) is told,
    at most once per :data:`STANDINGS_EVERY_S`, the standings computed in a worker thread.

    Flow control: the next standings go out only once the page acknowledged the last with
    ``{"type": "ack"}`` (changes meanwhile are gathered into one), so a page that does not
    read costs one message, not an ever-growing send buffer.  The page sends nothing else:
    anything but an ack of standings it was sent closes the socket (4003)."""

    async def connect(self):
        self.tournament_id = int(self.scope["url_route"]["kwargs"]["tournament_id"])
        self.group = schedule.group(self.tournament_id)
        self.outstanding = False     # standings sent, not yet acknowledged
        self.changed_at: float | None = None  # loop time of the oldest change not yet sent
        self.last_sent = float("-inf")
        self.timer: asyncio.Task | None = None
        exists = await database_sync_to_async(Tournament.objects.filter(pk=self.tournament_id).exists)()
        if not exists:
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.changed_at = asyncio.get_running_loop().time()
        await self._send_standings()

    async def disconnect(self, code):
        if getattr(self, "timer", None) is not None:
            self.timer.cancel()
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        if not (self.outstanding and _is_ack_only(text_data)):
            await self.close(code=CLOSE_NOT_ACK, reason="this socket takes only an ack of the standings it sent")
            return
        self.outstanding = False
        self._plan()

    async def tournament_changed(self, event):
        if self.changed_at is None:
            self.changed_at = asyncio.get_running_loop().time()
        self._plan()

    def _plan(self) -> None:
        """Send the standings when a change waits, the page has acknowledged the last ones and
        :data:`STANDINGS_EVERY_S` has passed since."""
        if self.changed_at is None or self.outstanding or self.timer is not None:
            return
        wait = self.last_sent + STANDINGS_EVERY_S - asyncio.get_running_loop().time()
        self.timer = asyncio.ensure_future(self._send_after(max(wait, 0.0)))

    async def _send_after(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self.timer = None
        await self._send_standings()

    async def _send_standings(self) -> None:
        changed_at, self.changed_at = self.changed_at, None
        self.last_sent = asyncio.get_running_loop().time()
        data = await _Standings.of(self.tournament_id, changed_at)
        if data is None:  # deleted meanwhile
            await self.close(code=4404)
            return
        self.outstanding = True
        await self.send_json({"type": "tournament.standings", "tournament": data, "you": await self._yours()})

    async def _yours(self) -> list[dict]:
        """The person's own tables of the tournament ("Your match is ready"), read per page:
        the standings are shared by every page, these are not."""
        from games.arena.web.tournaments import your_tables

        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return []
        return await database_sync_to_async(your_tables)(self.tournament_id, user.pk)


def _is_ack_only(text: str | None) -> bool:
    """Whether a tournament page's message is ``{"type": "ack"}`` (at most :data:`MAX_ACK_BYTES`)."""
    if text is None or len(text) > MAX_ACK_BYTES:
        return False
    try:
        return json.loads(text) == {"type": "ack"}
    except ValueError:
        return False
