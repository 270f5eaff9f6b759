"""Line-framed TCP for bots (DESIGN.md, layer 3): bounded reads, bounded writes, no rules.

:class:`LineConnection` splits the byte stream on ``\\n`` whatever the TCP reads look like
(split or merged messages), refuses lines over the bound without buffering them, and hands
complete lines to a handler.  :func:`start_line_server` runs the listener.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Callable, Protocol

log = logging.getLogger("arena.transport")

#: A bot that does not read what we send is dropped once this much is waiting for it.
MAX_WRITE_BUFFER = 1 << 20


class LineHandler(Protocol):
    """What a connection calls back into (one handler per connection)."""

    def on_line(self, line: bytes) -> None: ...
    def on_bad_line(self, reason: str) -> None: ...
    def on_close(self) -> None: ...


class LineConnection(asyncio.Protocol):
    """One TCP connection speaking newline-terminated messages.

    ``make_handler(connection)`` builds the handler when the connection is made.  A line
    longer than ``max_line`` bytes is reported once through ``on_bad_line`` and skipped up to
    its newline.
    """

    def __init__(self, make_handler: Callable[["LineConnection"], LineHandler], max_line: int,
                 registry: set | None = None):
        self._make_handler = make_handler
        self.max_line = max_line
        self._buffer = bytearray()
        self._skipping = False
        self._registry = registry
        self.transport: asyncio.Transport | None = None
        self.handler: LineHandler | None = None
        self.peer = "?"
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        if self._registry is not None:
            self._registry.add(self)
        self.handler = self._make_handler(self)

    def data_received(self, data: bytes) -> None:
        buf = self._buffer
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
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
            if self.closed:
                return
            start = end + 1
        if start < len(data) and not self._skipping:
            buf += data[start:]
            if len(buf) > self.max_line:
                buf.clear()
                self._skipping = True
                self.handler.on_bad_line(f"line longer than {self.max_line} bytes; skipped to its end")

    def _deliver(self, line: bytes) -> None:
        if len(line) > self.max_line:
            self.handler.on_bad_line(f"line longer than {self.max_line} bytes; skipped")
        else:
            self.handler.on_line(line)

    def write(self, data: bytes) -> bool:
        """Send bytes; returns False (and drops the connection) if the peer stopped reading."""
        if self.closed or self.transport is None:
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
        if self._registry is not None:
            self._registry.discard(self)
        if self.handler is not None:
            self.handler.on_close()


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
                            max_line: int, max_connections: int, name: str) -> LineServer:
    """Listen on ``host:port``; each accepted connection gets a :class:`LineConnection`.

    Past ``max_connections`` open connections, new ones are closed at once with a log line.
    """
    connections: set[LineConnection] = set()

    def factory() -> asyncio.Protocol:
        if len(connections) >= max_connections:
            log.warning("%s: %d connections open; refusing another", name, len(connections))
            return _Refuse()
        return LineConnection(make_handler, max_line, connections)

    server = await asyncio.get_running_loop().create_server(factory, host, port, reuse_address=True, backlog=1024)
    log.info("%s: listening for bots on %s:%d", name, host, server.sockets[0].getsockname()[1])
    return LineServer(server, connections)


class _Refuse(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()
