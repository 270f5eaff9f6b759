"""Line-framed TCP for bots (DESIGN.md, layer 3): bounded reads, bounded writes, no rules.

:class:`LineConnection` splits the byte stream on ``\\n`` whatever the TCP reads look like
(split or merged messages), refuses lines over the bound without buffering them, and hands
complete lines to a handler, at most as fast as the connection's share allows (so a flooding
bot cannot starve the other matches): a token bucket of lines per second; a connection past
it is not read from until it has a token again, so the kernel's buffers fill up and the
client waits, not the loop.
:func:`start_line_server` runs the listener.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Callable, Protocol

from games.arena.limits import TokenBucket

log = logging.getLogger("arena.transport")

#: A bot that does not read what we send is dropped once this much is waiting for it.
MAX_WRITE_BUFFER = 1 << 20


class LineHandler(Protocol):
    """What a connection calls back into (one handler per connection)."""

    def on_line(self, line: bytes) -> None: ...
    def on_bad_line(self, reason: str) -> None: ...
    def on_close(self) -> None: ...


class BotConnection(asyncio.Protocol):
    """What every bot connection shares, whatever its framing: the peer's name, membership in
    its listener's ``registry`` of open connections, bounded writes (a peer that stops reading
    is dropped once :data:`MAX_WRITE_BUFFER` bytes wait for it), closing, and at the end a
    pending resume timer cancelled and the handler's ``on_close``.  ``make_handler(connection)``
    builds the handler when the connection is made; subclasses read and frame the bytes, and
    may greet the peer in :meth:`opened`."""

    def __init__(self, make_handler: Callable, registry: set | None = None):
        self._make_handler = make_handler
        self._registry = registry
        self._resume: asyncio.TimerHandle | None = None  # a paused connection's wake-up
        self.transport: asyncio.Transport | None = None
        self.handler = None
        self.peer = "?"
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        if self._registry is not None:
            self._registry.add(self)
        self.opened()
        self.handler = self._make_handler(self)

    def opened(self) -> None:
        """The connection is up, its handler not yet made (e.g. the server's greeting)."""

    def is_closing(self) -> bool:
        return self.closed or self.transport is None or self.transport.is_closing()

    def write(self, data: bytes) -> bool:
        """Send bytes; returns False (and drops the connection) if the peer stopped reading."""
        if self.is_closing():
            return False
        self.transport.write(data)
        if self.transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
            log.warning("%s: not reading what we send; connection dropped", self.peer)
            self.transport.abort()
            return False
        return True

    def close(self) -> None:
        """Close after what was written has been sent."""
        if self.transport is not None and not self.closed:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
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
    """

    def __init__(self, make_handler: Callable[["LineConnection"], LineHandler], max_line: int,
                 registry: set | None = None, lines_per_s: float | None = None, burst: int | None = None):
        super().__init__(make_handler, registry)
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

    def _hold(self, rest: bytes) -> None:
        """Out of tokens: keep ``rest`` and stop reading until the next token is due."""
        self._held = rest
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


class LineServer:
    """A running listener: ``close()`` stops accepting and drops every connection."""

    def __init__(self, server: asyncio.AbstractServer, connections: set):
        self.server = server
        self.connections = connections

    @property
    def port(self) -> int:
        return self.server.sockets[0].getsockname()[1]

    def close(self) -> None:
        self.server.close()
        for conn in list(self.connections):
            conn.close()


async def start_line_server(make_handler: Callable[[LineConnection], LineHandler], host: str, port: int,
                            max_line: int, max_connections: int, name: str,
                            lines_per_s: float | None = None, burst: int | None = None) -> LineServer:
    """Listen on ``host:port``; each accepted connection gets a :class:`LineConnection`
    with the share ``lines_per_s`` / ``burst`` (None: unbounded).

    Past ``max_connections`` open connections, new ones are closed at once with a log line.
    """
    connections: set[LineConnection] = set()

    def factory() -> asyncio.Protocol:
        if len(connections) >= max_connections:
            log.warning("%s: %d connections open; refusing another", name, len(connections))
            return _Refuse()
        return LineConnection(make_handler, max_line, connections, lines_per_s, burst)

    server = await asyncio.get_running_loop().create_server(factory, host, port, reuse_address=True, backlog=1024)
    log.info("%s: listening for bots on %s:%d", name, host, server.sockets[0].getsockname()[1])
    return LineServer(server, connections)


class _Refuse(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()
