"""Line-framed TCP for bots: bounded reads, bounded writes, no rules (docs/architecture.md,
"Layers" and "Bounds and admission").

:class:`LineConnection` splits the byte stream on ``\\n`` whatever the TCP reads look like
(split or merged messages), refuses lines over the bound without buffering them, and hands
complete lines to a handler, at most as fast as the connection's share allows (so a flooding
bot cannot starve the other matches): a token bucket of lines per second; a connection past
it is not read from until it has a token again, so the kernel's buffers fill up and the
client waits, not the loop.
:func:`start_line_server` runs the listener.

Admission, for every bot port (:class:`Admission`, :class:`Deadlines`): connections held and
opened per second per address, a deadline for a connection's first valid message and one for
each message once it has begun, so that neither a reconnecting nor an idle client can keep
honest bots out.  Nothing costly (a database step, a seat) is done for a connection before
its handler says it has spoken (:meth:`BotConnection.spoke`).
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from games.arena.bots.limits import TokenBucket

log = logging.getLogger("arena.transport")

#: A bot that does not read what we send is dropped once this much is waiting for it.
MAX_WRITE_BUFFER = 1 << 20
#: Addresses whose connection counts are kept at once; beyond it those with no connection
#: open are forgotten (their rate starts afresh), so many addresses cannot grow the table.
MAX_TRACKED_ADDRESSES = 10_000


def parse_exempt(text: str) -> list:
    """``ARENA_ADMISSION_EXEMPT`` as networks: comma-separated addresses or networks
    (``10.0.0.0/8``), and ``loopback`` for ``127.0.0.0/8`` and ``::1``; blank items ignored.
    Raises ``ValueError`` naming an item that is neither."""
    networks = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item == "loopback":
            networks += [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"ARENA_ADMISSION_EXEMPT: {item!r} is neither an address nor a network") from None
    return networks


class Admission:
    """Who may open a connection to one listener: per address at most ``max_per_address``
    open at once and ``per_s`` new ones a second (a token bucket holding ``2 * per_s``: a
    few bots started together, or reconnecting after their match, are not refused), unless
    the address is in one of the ``exempt`` networks (local tournaments run many bots from one
    machine).  The listener's cap on all connections together stays (and bounds the open
    counts kept here); the per-address cap keeps one address from filling it.

    IPv6 addresses count per /64 (one subscriber's prefix: an attacker has billions of
    addresses in it); IPv4-mapped IPv6 addresses count as the IPv4 address.  ``clock`` is in
    seconds (a parameter so tests control it)."""

    def __init__(self, max_per_address: int, per_s: float, exempt: list, clock=time.monotonic):
        self.max_per_address = max_per_address
        self.per_s = per_s
        self.exempt = exempt
        self.clock = clock
        self._open: dict[str, int] = {}
        self._rates: dict[str, TokenBucket] = {}
        self._keys: dict[str, tuple[str, bool]] = {}
        self.refused = 0  # connections refused (tests, benchmarks)
        self._unlogged = 0  # refusals since the last log line
        self._logged_at = float("-inf")

    def key(self, host: str) -> tuple[str, bool]:
        """(the address ``host`` is counted under, whether it is exempt); remembered for the
        next connection from ``host`` (parsing it costs more than the rest of a refusal)."""
        known = self._keys.get(host)
        if known is None:
            if len(self._keys) >= MAX_TRACKED_ADDRESSES:
                self._keys.clear()
            known = self._keys[host] = self._parse_key(host)
        return known

    def _parse_key(self, host: str) -> tuple[str, bool]:
        try:
            ip = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:  # not an IP (a Unix socket, "?"): one shared key, never exempt
            return host, False
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        exempt = any(ip in net for net in self.exempt if net.version == ip.version)
        if ip.version == 6:
            return str(ipaddress.ip_network(f"{ip}/64", strict=False)), exempt
        return str(ip), exempt

    def admit(self, host: str) -> str | None:
        """Count a new connection from ``host``; returns why it is refused (nothing counted)
        or None (then :meth:`release` must follow when it closes)."""
        key, exempt = self.key(host)
        if not exempt:
            held = self._open.get(key, 0)
            if held >= self.max_per_address:
                return f"{held} connections open from {key} (at most {self.max_per_address})"
            bucket = self._rates.get(key)
            if bucket is None:
                if len(self._rates) >= MAX_TRACKED_ADDRESSES:
                    self._forget_idle()
                bucket = self._rates[key] = TokenBucket(self.per_s, max(1, round(2 * self.per_s)), self.clock)
            if not bucket.take():
                return f"more than {self.per_s:g} new connections a second from {key}"
            self._open[key] = held + 1
        return None

    def refused_one(self, peer: str, reason: str) -> None:
        """Log a refusal, at most one line a second (a flood must not flood the log too)."""
        self.refused += 1
        self._unlogged += 1
        now = self.clock()
        if now - self._logged_at >= 1.0:
            log.warning("%s: connection refused: %s (%d refused since the last such line)", peer, reason,
                        self._unlogged)
            self._logged_at, self._unlogged = now, 0

    def release(self, host: str) -> None:
        """A connection :meth:`admit` counted has closed."""
        key, exempt = self.key(host)
        if not exempt:
            held = self._open.pop(key, 1) - 1
            if held > 0:
                self._open[key] = held

    def _forget_idle(self) -> None:
        for key in [k for k in self._rates if k not in self._open]:
            del self._rates[key]
        if len(self._rates) >= MAX_TRACKED_ADDRESSES:  # every one holds a connection: drop the oldest
            del self._rates[next(iter(self._rates))]


def admission_from_settings(cfg: dict) -> "Admission":
    """The :class:`Admission` of one listener from the ``ARENA`` settings."""
    return Admission(cfg["MAX_CONNECTIONS_PER_ADDRESS"], cfg["CONNECTIONS_PER_S_PER_ADDRESS"],
                     parse_exempt(cfg["ADMISSION_EXEMPT"]))


@dataclass(frozen=True)
class Deadlines:
    """Seconds a connection has to send its first valid message (``first_message``; None:
    no deadline, for a protocol whose bots may rightly stay silent) and to finish a message
    it has begun (``message``: a client sending a byte now and then cannot hold a connection
    for ever).  Past either the connection is closed."""

    first_message: float | None = None
    message: float | None = None


class LineHandler(Protocol):
    """What a connection calls back into (one handler per connection)."""

    def on_line(self, line: bytes) -> None: ...
    def on_bad_line(self, reason: str) -> None: ...
    def on_close(self) -> None: ...


#: Bytes read from a bot's socket at most at once.
READ_BYTES = 1 << 16
_buffers = threading.local()


def _read_buffer() -> memoryview:
    """This thread's buffer for socket reads (a loop runs in one thread, and each read is
    copied out of the buffer before the loop does anything else)."""
    view = getattr(_buffers, "view", None)
    if view is None:
        view = _buffers.view = memoryview(bytearray(READ_BYTES))
    return view


class BotConnection(asyncio.BufferedProtocol):
    """What every bot connection shares, whatever its framing: the peer's name, membership in
    its listener's ``registry`` of open connections, reads, bounded writes (a peer that stops
    reading is dropped once :data:`MAX_WRITE_BUFFER` bytes wait for it), closing, and at the
    end a pending resume timer cancelled and the handler's ``on_close``.
    ``make_handler(connection)`` builds the handler when the connection is made; subclasses
    frame the bytes of each read (``data_received(data)``, as an ``asyncio.Protocol`` gets
    them) and may greet the peer in :meth:`opened`.

    Reads go into one buffer per thread (``asyncio.BufferedProtocol``) and only the bytes read
    are copied out.  asyncio's own reads allocate 256 KiB each and shrink it; depending on
    where that lands in glibc's heap, each read then also costs a trim and a regrowth of the
    heap (in one server run of about a dozen here: four page faults and 40 us more system time
    per Liar's Dice move).

    Admission happened before the connection was made (:func:`start_bot_listener`: a refused
    peer never gets one).  ``deadlines`` (:class:`Deadlines`)
    close a peer that says nothing valid in time (until the handler calls :meth:`spoke`) or
    that leaves a message half-sent (subclasses report with :meth:`message_begun`)."""

    def __init__(self, make_handler: Callable, registry: set | None = None, deadlines: Deadlines = Deadlines()):
        self._make_handler = make_handler
        self._registry = registry
        #: Called once when the connection closes: the listener's admission forgets it.
        self.on_released: Callable[[], None] | None = None
        self.deadlines = deadlines
        self._resume: asyncio.TimerHandle | None = None  # a paused connection's wake-up
        self._first_timer: asyncio.TimerHandle | None = None
        self._message_timer: asyncio.TimerHandle | None = None
        self.transport: asyncio.Transport | None = None
        self.handler = None
        self.peer = "?"
        self.host = "?"
        self.closed = False
        self.has_spoken = False
        self.in_message = False  # part of a message has arrived, not yet the rest
        self._out: list[bytes] = []  # written this turn, not yet sent (coalesce_writes)
        self._out_bytes = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        #: The peer's address alone (what admission and key guesses are counted under).
        self.host = str(peer[0]) if peer else "?"
        if self._registry is not None:
            self._registry.add(self)
        if self.deadlines.first_message is not None:
            self._first_timer = asyncio.get_running_loop().call_later(self.deadlines.first_message, self._silent)
        self.opened()
        self.handler = self._make_handler(self)

    def spoke(self) -> None:
        """The handler has had a valid first message: the first-message deadline is over (a
        seated bot may then wait as long as its table takes to fill)."""
        self.has_spoken = True
        if self._first_timer is not None:
            self._first_timer.cancel()
            self._first_timer = None

    def _silent(self) -> None:
        self._first_timer = None
        if not self.is_closing():
            log.info("%s: nothing valid within %g s of connecting; closed", self.peer, self.deadlines.first_message)
            self.transport.abort()

    def message_begun(self, begun: bool) -> None:
        """After a read: whether part of a message is waiting for the rest.  A message begun
        gets :attr:`Deadlines.message` seconds to end (counted from its first bytes)."""
        self.in_message = begun
        if not begun or self.deadlines.message is None:
            if self._message_timer is not None:
                self._message_timer.cancel()
                self._message_timer = None
        elif self._message_timer is None:
            self._message_timer = asyncio.get_running_loop().call_later(self.deadlines.message, self._too_slow)

    def _too_slow(self) -> None:
        self._message_timer = None
        if not self.is_closing():
            log.info("%s: a message begun %g s ago has not ended; closed", self.peer, self.deadlines.message)
            self.transport.abort()

    def opened(self) -> None:
        """The connection is up, its handler not yet made (e.g. the server's greeting)."""

    def get_buffer(self, sizehint: int) -> memoryview:
        return _read_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(_read_buffer()[:nbytes]))

    def data_received(self, data: bytes) -> None:
        """The bytes of one read (subclasses frame them)."""
        raise NotImplementedError

    def is_closing(self) -> bool:
        return self.closed or self.transport is None or self.transport.is_closing()

    #: Whether what is written in one turn of the loop leaves in one send (a subclass opts
    #: in): Blokus's memento and the MoveRequest written right after it to the player on turn
    #: then cost one system call, not two (a send was about a sixth of the server's CPU per
    #: move).  A line protocol whose bots read one message per read keeps a send per write.
    coalesce_writes = False

    def write(self, data: bytes) -> bool:
        """Send bytes (with :attr:`coalesce_writes`, at the end of this turn of the loop, with
        whatever else is written to this connection meanwhile); returns False (and drops the
        connection) if the peer stopped reading: more than :data:`MAX_WRITE_BUFFER` bytes
        wait for it."""
        if self.is_closing():
            return False
        if not self.coalesce_writes:
            self.transport.write(data)
        elif self._out:
            self._out.append(data)
            self._out_bytes += len(data)
        else:
            self._out = [data]
            self._out_bytes = len(data)
            asyncio.get_running_loop().call_soon(self._flush)
        if self.transport.get_write_buffer_size() + self._out_bytes > MAX_WRITE_BUFFER:
            log.warning("%s: not reading what we send; connection dropped", self.peer)
            self._out, self._out_bytes = [], 0
            self.transport.abort()
            return False
        return True

    def _flush(self) -> None:
        """Hand what this turn wrote to the transport, in one piece."""
        out, self._out, self._out_bytes = self._out, [], 0
        if out and not self.is_closing():
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))

    def close(self) -> None:
        """Close after what was written has been sent."""
        if self.transport is not None and not self.closed:
            self._flush()
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        for timer in (self._resume, self._first_timer, self._message_timer):
            if timer is not None:
                timer.cancel()
        self._resume = self._first_timer = self._message_timer = None
        if self.on_released is not None:
            self.on_released()
            self.on_released = None
        if self._registry is not None:
            self._registry.discard(self)
        self.lost()
        if self.handler is not None:
            try:
                self.handler.on_close()
            except Exception:  # never into the loop
                log.exception("%s: handling the disconnect failed", self.peer)

    def lost(self) -> None:
        """The connection is gone, the handler not yet told: drop what was read."""


class LineConnection(BotConnection):
    """One TCP connection speaking newline-terminated messages.

    ``make_handler(connection)`` builds the handler when the connection is made.  A line
    longer than ``max_line`` bytes is reported once through ``on_bad_line`` and skipped up to
    its newline.

    ``lines_per_s`` / ``burst`` (None: no bound) are the connection's share: each line handed
    to the handler takes a token, ``burst`` at most, refilled at ``lines_per_s``.  Without a
    token, reading pauses (``transport.pause_reading``) until one is due; what was already
    read waits.  A line the handler marks with :meth:`asked_for` (an answer to a request of
    ours) gives its token back, so a bot is never slowed for answering as fast as it is asked.

    A line begun (bytes after the last newline, or an overlong line being skipped) must end
    within ``deadlines.message`` seconds.
    """

    def __init__(self, make_handler: Callable[["LineConnection"], LineHandler], max_line: int,
                 registry: set | None = None, lines_per_s: float | None = None, burst: int | None = None,
                 deadlines: Deadlines = Deadlines()):
        super().__init__(make_handler, registry, deadlines)
        self.max_line = max_line
        self._buffer = bytearray()
        self._skipping = False
        self.lines_per_s = lines_per_s
        self._bucket = TokenBucket(lines_per_s, burst or 1) if lines_per_s is not None else None
        self._held = b""  # read but not yet handed on (the connection ran out of tokens)
        self.paused = 0  # how many times this connection was paused (tests, logs)

    def data_received(self, data: bytes) -> None:
        buf = self._buffer
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._bucket is not None and not self._skipping and not self._bucket.take():
                self._hold(data[start:])
                return
            if self._skipping:
                self._skipping = False
                buf.clear()
            elif buf:
                buf += data[start:end]
                line = bytes(buf)
                buf.clear()
                self._deliver(line)
            else:
                self._deliver(data[start:end])
            if self.closed or self.transport.is_closing():  # the handler hung up
                return
            start = end + 1
        if start < len(data) and not self._skipping:
            buf += data[start:]
            if len(buf) > self.max_line:
                buf.clear()
                self._skipping = True
                self.handler.on_bad_line(f"line longer than {self.max_line} bytes; skipped to its end")
        if not self.is_closing():
            self.message_begun(bool(buf) or self._skipping)

    def _hold(self, rest: bytes) -> None:
        """Out of tokens: keep ``rest`` and stop reading until the next token is due."""
        self._held = rest
        self.message_begun(False)  # not read meanwhile: the wait is ours, not the peer's
        self.paused += 1
        if self.paused == 1:
            log.warning("%s: over %g lines/s; reading paused", self.peer, self.lines_per_s)
        self.transport.pause_reading()
        self._resume = asyncio.get_running_loop().call_later(self._bucket.seconds_to_next(), self._go_on)

    def _go_on(self) -> None:
        self._resume = None
        if self.closed:
            return
        rest, self._held = self._held, b""
        self.data_received(rest)
        if self._resume is None and not self.closed:  # not paused again
            self.transport.resume_reading()

    def asked_for(self) -> None:
        """The line being handled answers a request of ours: give its token back."""
        if self._bucket is not None:
            self._bucket.give_back()

    def _deliver(self, line: bytes) -> None:
        if len(line) > self.max_line:
            self.handler.on_bad_line(f"line longer than {self.max_line} bytes; skipped")
        else:
            self.handler.on_line(line)


#: Connections accepted per wake-up of a listener: a flood of connections takes turns with
#: the matches on the loop instead of holding it until the backlog is empty.
ACCEPTS_PER_WAKE = 16
#: Seconds a listener stops accepting after the process ran out of file descriptors.
ACCEPT_RETRY_S = 1.0


class BotListener:
    """A running bot listener (one or more listening sockets, one per address ``host``
    resolves to): ``port``, the open ``connections``, and ``close()``, which stops accepting
    and drops every connection.

    It accepts connections itself instead of through ``loop.create_server``, so that a peer
    the :class:`Admission` refuses, or one past ``max_connections`` open in all, is closed
    straight after ``accept()``: no transport, no protocol, no task is made for it.  Under a
    reconnect flood that is most of the listener's work (asyncio's own accept makes a task and
    a transport for every connection before any code of ours can look at the address).
    """

    def __init__(self, sockets: list, make_connection: Callable[[], BotConnection], connections: set,
                 max_connections: int, admission: Admission | None, name: str):
        self.sockets = sockets
        self.connections = connections
        self._make_connection = make_connection
        self._max_connections = max_connections
        self._admission = admission
        self._name = name
        self._loop = asyncio.get_running_loop()
        self.open = 0  # accepted and not yet closed (the cap counts these, made or not)
        self._full_logged_at = float("-inf")
        self._closed = False
        for sock in sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    @property
    def port(self) -> int:
        return self.sockets[0].getsockname()[1]

    def _accept(self, sock) -> None:
        for _ in range(ACCEPTS_PER_WAKE):
            try:
                # The file descriptor alone: a refused peer costs no socket object.  (``_accept``
                # is what ``socket.accept`` calls, on CPython's socket type since 3.3.)
                fd, addr = sock._accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors or buffers: wait, as asyncio does
                log.warning("%s: accept failed (%s); not accepting for %g s", self._name, exc, ACCEPT_RETRY_S)
                self._loop.remove_reader(sock.fileno())
                self._loop.call_later(ACCEPT_RETRY_S, self._resume, sock)
                return
            host = addr[0] if isinstance(addr, tuple) else "?"
            if self.open >= self._max_connections:
                os.close(fd)
                now = time.monotonic()
                if now - self._full_logged_at >= 1.0:
                    log.warning("%s: %d connections open; refusing more", self._name, self.open)
                    self._full_logged_at = now
                continue
            if self._admission is not None:
                refused = self._admission.admit(host)
                if refused is not None:
                    os.close(fd)
                    self._admission.refused_one(f"{host}:{addr[1]}", refused)
                    continue
            self.open += 1
            connection = self._make_connection()
            connection.on_released = lambda host=host: self._released(host)
            conn = socket.socket(sock.family, sock.type, sock.proto, fileno=fd)
            conn.setblocking(False)
            self._loop.create_task(self._hand_over(conn, connection))

    async def _hand_over(self, conn, connection: BotConnection) -> None:
        try:
            await self._loop.connect_accepted_socket(lambda: connection, conn)
        except Exception as exc:  # the peer left before the transport was made
            log.info("%s: connection lost while being set up: %s", self._name, exc)
            conn.close()
            if connection.on_released is not None:
                connection.on_released()
                connection.on_released = None

    def _released(self, host: str) -> None:
        self.open -= 1
        if self._admission is not None:
            self._admission.release(host)

    def _resume(self, sock) -> None:
        if not self._closed:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    def close(self) -> None:
        self._closed = True
        for sock in self.sockets:
            self._loop.remove_reader(sock.fileno())
            sock.close()
        for conn in list(self.connections):
            conn.close()


def listening_sockets(host: str, port: int, backlog: int = 1024, reuse_port: bool = False) -> list:
    """Bound, listening, non-blocking sockets for every address ``host`` resolves to (as
    ``loop.create_server`` binds them; ``""`` is every address).  With ``reuse_port``
    (``ARENA_REUSE_PORT``), each is bound with ``SO_REUSEPORT``: several arena processes on
    one host, all binding so, then listen on the same port, and the kernel gives each new
    connection to one of them (Linux: spread by a hash of the peer's address and port).
    Raises ``OSError`` (e.g. the port is taken, by a listener without ``SO_REUSEPORT`` too,
    or the system has no ``SO_REUSEPORT``)."""
    if reuse_port and not hasattr(socket, "SO_REUSEPORT"):
        raise OSError("SO_REUSEPORT is not available on this system; unset ARENA_REUSE_PORT")
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:  # one socket per family, as create_server does
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            if port == 0 and len(sockets) == 1:  # every address on the port the first one got
                port = sock.getsockname()[1]
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def start_bot_listener(make_connection: Callable[[], BotConnection], host: str, port: int,
                             max_connections: int, name: str, connections: set,
                             admission: Admission | None = None, reuse_port: bool | None = None) -> BotListener:
    """Listen on ``host:port`` for one game's bots; ``make_connection()`` builds the protocol
    (a :class:`BotConnection` registering itself in ``connections``) of each admitted peer.

    Past ``max_connections`` open connections, or when ``admission`` refuses the address, a new
    connection is closed at once (one log line a second at most).  ``reuse_port``: bind with
    ``SO_REUSEPORT`` (:func:`listening_sockets`; None: as ``ARENA_REUSE_PORT`` says, for
    every game's bot port).  Raises ``OSError`` when the address cannot be bound."""
    if reuse_port is None:
        from django.conf import settings

        reuse_port = settings.ARENA.get("REUSE_PORT", False)
    sockets = listening_sockets(host, port, reuse_port=reuse_port)
    listener = BotListener(sockets, make_connection, connections, max_connections, admission, name)
    log.info("%s: listening for bots on %s:%d%s", name, host, listener.port,
             " (shared: SO_REUSEPORT)" if reuse_port else "")
    return listener


async def start_line_server(make_handler: Callable[[LineConnection], LineHandler], host: str, port: int,
                            max_line: int, max_connections: int, name: str,
                            lines_per_s: float | None = None, burst: int | None = None,
                            admission: Admission | None = None, deadlines: Deadlines = Deadlines()) -> BotListener:
    """:func:`start_bot_listener` for line-framed bots: each admitted connection gets a
    :class:`LineConnection` with the share ``lines_per_s`` / ``burst`` (None: unbounded) and
    the ``deadlines``."""
    connections: set[LineConnection] = set()
    return await start_bot_listener(
        lambda: LineConnection(make_handler, max_line, connections, lines_per_s, burst, deadlines),
        host, port, max_connections, name, connections, admission)
