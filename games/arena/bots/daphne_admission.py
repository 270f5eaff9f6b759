"""Admission at the ports Daphne serves (the web port, each game's bot WebSocket port such as
Hanabi's), before any request is read: the bot TCP ports' rules (games/arena/bots/transport.py)
for HTTP and WebSocket clients.

- **At accept()**: each listening port gets its own :class:`AdmittingFactory` (Twisted's
  ``WrappingFactory``), whose ``buildProtocol`` returns None for a peer the per-address
  :class:`~games.arena.bots.transport.Admission` refuses, or when the port holds
  ``ARENA_MAX_CONNECTIONS`` already; Twisted's port then closes the socket it has just
  accepted, and nothing is made for it: no transport, no HTTP channel, no request, no
  WebSocket handshake, no consumer.  A refused client sees its connection closed before any
  answer (no HTTP status, no close code).
- **A deadline for the request line and headers** (``ARENA_REQUEST_HEADERS_TIMEOUT``), from
  the accept, or on a kept-alive connection from the end of the previous response: a client
  that sends its upgrade request a byte every few seconds, or holds a connection idle, is
  closed when it runs out.  Twisted's own timeout starts again with every byte, so it
  never ran out for such a client.  Once the headers are in, the request's own bounds take
  over (Daphne's WebSocket handshake timeout, ``ARENA_MAX_REQUEST_BYTES``).

Each admitted connection is a :class:`AdmittedConnection` (Twisted's ``ProtocolWrapper``)
around Daphne's HTTP protocol; it stays when Daphne upgrades the connection to a WebSocket
(Daphne hands the wrapper the WebSocket protocol, as it does for TLS), so the count is
released when the connection closes, whatever it became.

Importing this module installs no reactor (``twisted.protocols.policies`` does not import
one); the reactor is imported when a deadline is first set.
"""
from __future__ import annotations

import logging
import time

from twisted.protocols.policies import ProtocolWrapper, WrappingFactory

from games.arena.bots.transport import Admission

log = logging.getLogger("arena.transport")
#: Connections a port accepts per wake-up of the loop at most (as the TCP bot ports,
#: games/arena/bots/transport.py): a flood of connections takes turns with the matches.
ACCEPTS_PER_WAKE = 16


class AdmittedConnection(ProtocolWrapper):
    """One admitted connection (module docstring): the wrapper between Twisted's transport
    and Daphne's protocol, with the headers' deadline.  ``host`` is the peer's address (what
    the admission counted)."""

    host = "?"
    _deadline = None  # the pending IDelayedCall, while a request's headers are awaited

    def makeConnection(self, transport):
        self._http = self.wrappedProtocol  # Daphne's HTTP protocol, until an upgrade replaces it
        super().makeConnection(transport)
        self.await_request()

    def await_request(self) -> None:
        """Start the deadline for the next request's line and headers (at the accept, and
        when a kept-alive connection's response is done).  Not on an upgraded connection."""
        if self._deadline is None and self.wrappedProtocol is self._http:  # None once lost
            from twisted.internet import reactor

            self._deadline = reactor.callLater(self.factory.headers_timeout, self._too_slow)

    def headers_in(self) -> None:
        """The request line and headers are in: the deadline is met."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        self.factory.timed_out += 1
        log.info("%s: %s: no complete request line and headers within %g s; closed", self.factory.name,
                 self.host, self.factory.headers_timeout)
        self.transport.abortConnection()

    def connectionLost(self, reason):
        self.headers_in()
        super().connectionLost(reason)  # the factory's unregisterProtocol releases the count


class AdmittingFactory(WrappingFactory):
    """Twisted's wrapping factory for one listening port: ``wrapped`` (Daphne's HTTP factory)
    builds the protocol of each connection ``admission`` admits, at most ``max_connections``
    open at once; each has ``headers_timeout`` seconds for its request line and headers.
    ``name`` goes into log lines.  Counts for tests and logs: ``refused``, ``timed_out``."""

    protocol = AdmittedConnection

    def __init__(self, wrapped, admission: Admission, max_connections: int, headers_timeout: float, name: str):
        super().__init__(wrapped)
        self.admission = admission
        self.max_connections = max_connections
        self.headers_timeout = headers_timeout
        self.name = name
        self.refused = 0
        self.timed_out = 0
        self._full_logged_at = float("-inf")

    def buildProtocol(self, addr):
        host = str(getattr(addr, "host", "?"))
        if len(self.protocols) >= self.max_connections:
            self.refused += 1
            now = time.monotonic()
            if now - self._full_logged_at >= 1.0:
                log.warning("%s: %d connections open; refusing more", self.name, len(self.protocols))
                self._full_logged_at = now
            return None
        refused = self.admission.admit(host)
        if refused is not None:
            self.refused += 1
            self.admission.refused_one(f"{host}:{getattr(addr, 'port', 0)}", refused)
            return None
        try:
            wrapper = super().buildProtocol(addr)
        except BaseException:
            self.admission.release(host)
            raise
        wrapper.host = host
        return wrapper

    def unregisterProtocol(self, p):
        super().unregisterProtocol(p)
        self.admission.release(p.host)


class _BoundedAccepts:
    """A Twisted ``tcp.Port`` that accepts at most :data:`ACCEPTS_PER_WAKE` connections per
    wake-up.  Twisted's own port adds 20 to its number each time it used them all, without
    end, so under a reconnect flood one wake-up accepted (and refused) thousands while the
    matches waited."""

    @property
    def numberAccepts(self) -> int:
        return self.__dict__.get("_accepts", ACCEPTS_PER_WAKE)

    @numberAccepts.setter
    def numberAccepts(self, value: int) -> None:
        self.__dict__["_accepts"] = min(value, ACCEPTS_PER_WAKE)


def install(port, admission: Admission, max_connections: int, headers_timeout: float, name: str) -> AdmittingFactory:
    """Have the listening Twisted ``port`` (a ``tcp.Port`` that Daphne's endpoint has just
    started) accept through an :class:`AdmittingFactory` around the factory it listens with,
    at most :data:`ACCEPTS_PER_WAKE` at a time, and return that factory.  The port reads its
    ``factory`` at every accept; the wrapped factory was already started by it (and is stopped
    through the wrapper when the port closes)."""
    factory = AdmittingFactory(port.factory, admission, max_connections, headers_timeout, name)
    port.factory = factory
    port.__class__ = type(f"Bounded{type(port).__name__}", (_BoundedAccepts, type(port)), {})
    return factory
