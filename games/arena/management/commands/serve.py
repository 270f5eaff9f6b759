"""``manage.py serve``: the whole arena in one process, or one of its roles.

- ``--role all`` (default): Daphne (HTTP + WebSockets) and the arena (bot listeners, match
  runners) on one asyncio loop.
- ``--role web``: Daphne only; needs ``REDIS_URL`` so it can reach an arena process.
- ``--role arena``: bot listeners and runners only.

Migrations are applied first unless ``--no-migrate``.

Daphne is started with the arena's bounds on what a client may send, so one client cannot
exhaust the server's memory:

- **request bodies** (:class:`BoundedRequest`): Daphne, through Twisted, receives a whole body
  before it starts the application, then queues all of it for Django at once; Twisted
  also parses form bodies for itself (a full copy in memory, which Daphne never uses).  A
  100 MB upload cost 206 MB before Django's own limit was even asked.  Here a body whose
  ``Content-Length`` is over ``ARENA_MAX_REQUEST_BYTES`` gets ``413`` as soon as its headers
  are in, and a chunked body gets it as soon as its count passes the bound; either way the
  rest is read and thrown away (so the client can read the answer) for at most
  :data:`REFUSED_LINGER_S` seconds, then the connection is closed.
- **WebSocket frames** (:class:`BoundedWebSocketProtocol`): Daphne queues every frame for the
  consumer in an unbounded queue; when a consumer is :data:`MAX_QUEUED_FRAMES` frames behind,
  the client is closed (4008, "too many messages").  After the application has asked to
  close, further frames are dropped instead of queued, and the close reason the application
  gives is sent (Daphne sends only the code).  A client closed for too many messages (4008)
  is not read from any more (a flooder that never reads the close frame would otherwise cost
  the loop a frame parse per message until the close handshake times out: one such client
  cut a healthy match to a tenth of its pace) and its connection is dropped
  :data:`FLOODER_LINGER_S` seconds later.  Frames are at most
  :data:`MAX_WEBSOCKET_MESSAGE_BYTES` (larger ones close the connection, 1009).

Sending a text message is made cheap for the case of one text going to many sockets (a view
to 500 spectators, ``benchmarks/spectator_fanout.py``): the WebSocket frame of the last text
sent is kept and reused for the next socket that sends the same text (autobahn's
``prepareMessage``, framed once instead of once per socket), and the frame is written to the
socket at once when nothing waits in Twisted's buffer before it (:func:`write_now`; Twisted's
own ``write`` buffers it and registers the socket with the loop for writing, which took an
``epoll_ctl`` before and after the ``send`` and a callback of the loop per message).  The
protocol's ``send_text_now`` does that synchronously and is given to each WebSocket's
application in its scope (:data:`games.arena.web.consumers.SEND_TEXT_NOW`), so a spectator's view
is written without Channels' and Daphne's send coroutines in between.
"""
from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import gc
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

log = logging.getLogger("arena")

#: Frames a WebSocket consumer may be behind before its client is closed.  The consumer's own
#: rate bound (games/arena/web/consumers.py) rejects a flood at a few operations per frame, so
#: this is reached only when the loop itself is starved.
MAX_QUEUED_FRAMES = 64
#: Largest WebSocket message accepted (bytes); the consumer refuses more than 16 KiB anyway.
MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024
#: Seconds a refused request's connection keeps reading (and discarding) its body, so that
#: the client is still reading when the 413 arrives instead of getting a reset.
REFUSED_LINGER_S = 2.0
#: Seconds a WebSocket closed for flooding stays open (unread) so the close frame can go out.
FLOODER_LINGER_S = 1.0


@functools.cache
def _tcp_server_class() -> type:
    """Twisted's class of an accepted TCP connection (imported on first use, with Daphne)."""
    from twisted.internet import tcp

    return tcp.Server


@functools.cache
def _admitted_class() -> type:
    """The wrapper of an admitted connection (games/arena/bots/daphne_admission.py)."""
    from games.arena.bots.daphne_admission import AdmittedConnection

    return AdmittedConnection


def write_now(transport, data: bytes) -> None:
    """``transport.write(data)``, but written to the socket right away when nothing is waiting
    in the transport's buffer (as asyncio's transports do): Twisted's ``write`` always buffers,
    registers the socket for writing (an ``epoll_ctl``), sends in a callback of a later turn of
    the loop and unregisters it (another ``epoll_ctl``).  What the socket does not take at
    once goes to ``transport.write``, so the order is kept and a client that does not read
    is buffered exactly as before.  Only for a plain TCP connection of Twisted's (any other
    transport, e.g. TLS, gets ``transport.write``); a connection the kernel reports broken is
    left to ``transport.write``, whose own send finds the error and closes it as usual."""
    if type(transport) is _admitted_class():  # the admission wrapper: write to its socket
        transport = transport.transport
    if (type(transport) is _tcp_server_class() and not transport.TLS and transport.connected
            and not transport.disconnecting and not transport._writeDisconnected
            and not transport._tempDataBuffer and transport.offset == len(transport.dataBuffer)):
        sent = transport.writeSomeData(data)
        if isinstance(sent, int):  # else the connection is lost: Twisted's write will see it
            if sent >= len(data):
                return
            data = data[sent:]
    transport.write(data)


class FrameCache:
    """The WebSocket frame of the last text sent, for the next socket that sends the same
    text (one view to every spectator).  One entry per process: views go out one after the
    other, each to all its sockets in turn (games/arena/web/consumers.py)."""

    text: str | None = None
    frame: bytes = b""
    size = 0  # bytes of the payload (the UTF-8 text)

    @classmethod
    def frame_of(cls, factory, text: str) -> tuple[bytes, int]:
        """The single unmasked frame carrying ``text`` (RFC 6455 section 5.2) and the size
        of its payload in bytes."""
        if text is not cls.text and text != cls.text:
            payload = text.encode("utf8")
            cls.frame = factory.prepareMessage(payload, doNotCompress=True).payloadHybi
            cls.text, cls.size = text, len(payload)
        return cls.frame, cls.size


def bounded_daphne_classes():
    """The request and WebSocket protocol classes with the arena's bounds (module docstring).

    Built on first use: importing Daphne installs Twisted's asyncio reactor, which must not
    happen when this module is merely imported (``manage.py help``)."""
    from daphne.http_protocol import WebRequest
    from daphne.ws_protocol import WebSocketProtocol
    from twisted.internet import reactor

    from games.arena.bots.daphne_admission import AdmittedConnection
    from games.arena.web.consumers import CLOSE_TOO_MANY_MESSAGES

    class BoundedRequest(WebRequest):
        """Daphne's HTTP request with a bound on the body (``ARENA_MAX_REQUEST_BYTES``):
        ``413`` at once, never buffered.  Twisted's own parsing of form bodies is off
        (Daphne hands Django the raw body; the parse was a full copy of it in memory)."""

        refused = False

        def __init__(self, *args, **kwargs):
            kwargs["parsePOSTFormSubmission"] = False
            super().__init__(*args, **kwargs)
            self.body_bytes = 0

        def gotLength(self, length):
            # The request line and headers are in (Twisted calls this right after them).
            door = self.channel.transport
            if type(door) is AdmittedConnection:
                door.headers_in()
            if length is not None and length > settings.ARENA["MAX_REQUEST_BYTES"]:
                # Twisted would answer "Expect: 100-continue" after this; the 413 is the answer.
                self.requestHeaders.removeHeader(b"Expect")
                self._refuse()
                length = 0
            super().gotLength(length)

        def handleContentChunk(self, data):
            if self.refused:
                return
            self.body_bytes += len(data)
            if self.body_bytes > settings.ARENA["MAX_REQUEST_BYTES"]:  # chunked: counted as it comes
                self._refuse()
                self.content.close()
                return
            super().handleContentChunk(data)

        def requestReceived(self, command, path, version):
            if self.refused:  # the whole (discarded) body is in: nothing more to wait for
                self.channel.transport.loseConnection()
                return
            super().requestReceived(command, path, version)

        def finish(self):
            door = self.channel.transport if self.channel is not None else None
            if type(door) is AdmittedConnection and self.channel.persistent:
                # The connection waits for its next request from here; a request already
                # buffered is read within super().finish() and meets the deadline at once.
                door.await_request()
            super().finish()

        def _refuse(self):
            self.refused = True
            limit = settings.ARENA["MAX_REQUEST_BYTES"]
            body = f"Request body too large: at most {limit} bytes.\n".encode()
            self.channel.persistent = False
            self.channel.transport.write(
                b"HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            transport = self.channel.transport
            reactor.callLater(REFUSED_LINGER_S, transport.loseConnection)

    class BoundedWebSocketProtocol(WebSocketProtocol):
        """Daphne's WebSocket protocol with a bound on the frames queued for the consumer,
        frames dropped once the application closes, and the close reason passed on."""

        app_closed = False

        def onMessage(self, payload, isBinary):
            if self.app_closed:
                return
            if self.application_queue.qsize() >= MAX_QUEUED_FRAMES:
                self._close_by_server(CLOSE_TOO_MANY_MESSAGES, "too many messages")
                return
            super().onMessage(payload, isBinary)

        def handle_reply(self, message):
            kind = message.get("type")
            if kind == "websocket.send":
                text = message.get("text")
                if text and message.get("bytes") is None and self.send_text_now(text):
                    return
            elif kind == "websocket.close" and self.state == self.STATE_OPEN:
                self._close_by_server(message.get("code") or 1000, message.get("reason") or None)
                return
            super().handle_reply(message)

        def send_text_now(self, text: str) -> bool:
            """Write ``text`` to the client as a prepared frame (module docstring), now, and
            return True; or return False, having done nothing, when it must take Daphne's
            path and its checks: a socket not open, compression negotiated (we never accept
            it), a message over autobahn's outgoing bound (it raises), frames queued before.
            What the consumers call through the scope (:data:`~games.arena.web.consumers.
            SEND_TEXT_NOW`), and what Daphne's path for a text comes to."""
            if self.state != self.STATE_OPEN or self._perMessageCompress is not None or self.send_queue:
                return False
            frame, size = FrameCache.frame_of(self.factory, text)
            if 0 < self.maxMessagePayloadSize < size:
                return False
            write_now(self.transport, frame)
            return True

        def _close_by_server(self, code: int, reason: str | None) -> None:
            self.app_closed = True
            # A close frame's reason is at most 123 bytes.
            self.sendClose(code=code, reason=reason.encode()[:123].decode(errors="ignore") if reason else None)
            if code == CLOSE_TOO_MANY_MESSAGES:
                self.transport.pauseProducing()  # stop reading its frames
                reactor.callLater(FLOODER_LINGER_S, self.transport.abortConnection)

    return BoundedRequest, BoundedWebSocketProtocol


def install_bounds(server) -> None:
    """Make a ``daphne.server.Server`` whose ``run()`` has built its factories (it does so
    just before calling its ``ready_callable``) use :func:`bounded_daphne_classes`, and give
    each WebSocket's application its protocol's ``send_text_now`` in the scope's
    ``extensions`` (:data:`games.arena.web.consumers.SEND_TEXT_NOW`)."""
    from daphne.http_protocol import HTTPFactory

    from games.arena.web.consumers import SEND_TEXT_NOW

    request_class, ws_class = bounded_daphne_classes()
    server.ws_factory.protocol = ws_class
    http_factory = server.http_factory

    def build_protocol(addr):
        protocol = HTTPFactory.buildProtocol(http_factory, addr)
        protocol.requestFactory = request_class
        return protocol

    http_factory.buildProtocol = build_protocol
    create_application = server.create_application

    def create_with_send_now(protocol, scope):
        if isinstance(protocol, ws_class):  # the consumer may write its texts straight to it
            scope["extensions"] = {**scope.get("extensions", {}), SEND_TEXT_NOW: {"send": protocol.send_text_now}}
        return create_application(protocol, scope)

    server.create_application = create_with_send_now


def install_admission(listening) -> None:
    """Per-address admission and the headers' deadline (games/arena/bots/daphne_admission.py) at
    one of Daphne's listening ports: a game's bot WebSocket port takes the bot ports' caps
    (``ARENA_MAX_CONNECTIONS_PER_ADDRESS``, ``ARENA_CONNECTIONS_PER_S_PER_ADDRESS``), the
    web port its own (``ARENA_WEB_…``); both ``ARENA_MAX_CONNECTIONS`` in all."""
    from games.arena.bots import daphne_admission
    from games.arena.bots.bot_sockets import bot_socket_ports
    from games.arena.bots.transport import Admission, admission_from_settings, parse_exempt

    cfg = settings.ARENA
    number = listening.getHost().port
    game = bot_socket_ports().get(number)
    if game is not None:
        admission, name = admission_from_settings(cfg), f"{game} bot port"
    else:
        admission = Admission(cfg["WEB_MAX_CONNECTIONS_PER_ADDRESS"], cfg["WEB_CONNECTIONS_PER_S_PER_ADDRESS"],
                              parse_exempt(cfg["ADMISSION_EXEMPT"]))
        name = "web port"
    daphne_admission.install(listening, admission, cfg["MAX_CONNECTIONS"], cfg["REQUEST_HEADERS_TIMEOUT"], name)


def freeze_startup_heap() -> None:
    """Exempt what start-up loaded (Django, the apps, the libraries: most of the heap) from
    the garbage collector's full collections, which otherwise walk all of it every second or
    so under load and stall the loop: about 60 ms each with 500 spectators on a match, the
    whole tail of the views' delivery time (benchmarks/spectator_fanout.py).  Objects made
    later are collected as before; the frozen ones are freed by reference counting as usual,
    only cycles among them stay (start-up objects live for the whole process anyway)."""
    gc.collect()
    gc.freeze()


#: glibc's mallopt parameter for the size from which a block is mapped by itself, and the
#: size used here (glibc's own starting value).
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024


def return_large_blocks() -> None:
    """Have glibc give every block of 128 KiB or more (an upload's text, a request's buffers)
    back to the system as soon as it is freed.  By default glibc raises that threshold to
    the largest block freed so far (up to 32 MiB); after that such blocks come from the
    threads' heaps and stay with the process: twelve 4 MB uploads at once left the server
    50 to 80 MB larger for good (benchmarks/import_memory.py).  Setting the threshold also
    turns the raising off.  Does nothing where the C library is not glibc."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):
        pass


def refuse_unsafe_listeners() -> None:
    """Raise ``CommandError`` (every game's reason, each naming its setting) when a bot
    listener would start with settings that are unsafe where it listens (e.g. Blokus's public
    example admin password on an address other than loopback): better not to start than to
    serve a port anyone may administer."""
    from games.arena import registry

    problems = [problem for spec in registry.all_games()
                if (problem := spec.listener_settings_problem())]
    if problems:
        raise CommandError("refusing to start: " + "; ".join(problems))


def bot_socket_listeners() -> list:
    """Listening sockets, bound with ``SO_REUSEPORT`` (``ARENA_REUSE_PORT``), of every game's
    bot WebSocket port (Hanabi's), for Daphne to adopt: several arenas on one host then share
    them as they share the TCP bot ports (games/arena/bots/transport.py ``listening_sockets``).
    Raises :class:`~games.arena.play.arena.ListenerError` naming the port's setting when one
    cannot be bound."""
    from games.arena.bots.bot_sockets import bot_socket_doors
    from games.arena.bots.transport import listening_sockets
    from games.arena.play.arena import ListenerError, cannot_listen

    sockets: list = []
    try:
        for (host, port), (spec, door) in bot_socket_doors().items():
            try:
                sockets += listening_sockets(host, port, reuse_port=True)
            except OSError as exc:
                raise ListenerError(cannot_listen(f"{spec.door_label(door)} bot listener", host, port,
                                                  exc.strerror or str(exc), door.port_setting)) from None
    except ListenerError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Command(BaseCommand):
    help = "Run the arena: web server, bot listeners and match runners."

    def add_arguments(self, parser):
        parser.add_argument("--role", choices=["all", "web", "arena"], default="all")
        parser.add_argument("--host", default=settings.ARENA["HOST"])
        parser.add_argument("--port", type=int, default=settings.ARENA["HTTP_PORT"])
        parser.add_argument("--no-migrate", action="store_true")

    def handle(self, *args, role, host, port, no_migrate, **options):
        if role == "web" and not settings.REDIS_URL:
            raise CommandError("--role web needs REDIS_URL: the in-memory channel layer cannot reach another process")
        # A server started from a shell without job control inherits SIGINT as ignored, and
        # then neither Twisted nor asyncio would stop cleanly on Ctrl-C (or a test's SIGINT).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return_large_blocks()
        if role != "web":
            refuse_unsafe_listeners()
        if not no_migrate:
            call_command("migrate", interactive=False, verbosity=0)
        from games.arena.bots.bot_sockets import bot_socket_addresses

        from games.arena.play.arena import ListenerError

        try:
            if role == "arena" and not bot_socket_addresses():
                asyncio.run(self._arena_only())
            elif role == "arena":  # Daphne serves the bots' WebSocket ports only
                self._daphne(host, None, with_arena=True)
            else:
                self._daphne(host, port, with_arena=role == "all")
        except ListenerError as exc:  # exit status 1, the message on stderr
            raise CommandError(str(exc)) from None

    def _daphne(self, host: str, port: int | None, with_arena: bool,
                then: Callable[[Any], Awaitable[None]] | None = None) -> None:
        """Daphne on ``host:port`` (None: no web port) and, with the arena, every game's bot
        WebSocket port (Hanabi's 4444), all on one loop with the arena.  ``then``: a
        coroutine function given the started arena; when it returns the server stops, as on
        Ctrl-C (``manage.py tournament run`` watches its tournament so).  Raises
        :class:`~games.arena.play.arena.ListenerError` when a port cannot be listened on or
        the arena cannot start."""
        from daphne.server import Server  # installs the asyncio reactor; import before twisted
        from twisted.internet import defer, reactor

        from games.arena.bots.bot_sockets import bot_socket_addresses, bot_socket_doors

        from webapp.asgi import application

        from games.arena.play.arena import Arena, ListenerError, cannot_listen

        arena = Arena() if with_arena else None
        failures: list[str] = []  # why a port could not be listened on, each naming its setting

        def listen_error(failure):
            """Daphne's own logs CRITICAL and stops, and the process then exits with 0."""
            error = failure.value
            where = getattr(error, "port", None)
            if where == port:
                what, setting = "web server", "ARENA_HTTP_PORT (or --port)"
            else:  # a game's bot WebSocket port: its door names the setting
                spec, door = next((found for (_, p), found in bot_socket_doors().items() if p == where), (None, None))
                what = f"{spec.door_label(door)} bot listener" if spec else "a bot listener"
                setting = door.port_setting if door else "its port setting"
            reason = getattr(error, "socketError", None) or error
            failures.append(cannot_listen(what, getattr(error, "interface", host), where or 0,
                                          getattr(reason, "strerror", None) or str(reason), setting))
            log.critical(failures[-1])
            server.stop()

        def arena_started(task: asyncio.Future) -> None:
            """An arena that could not start stops the server (it would serve pages but
            run no match); its reason becomes the exit message."""
            error = None if task.cancelled() else task.exception()
            if error is None:
                if then is not None:
                    asyncio.ensure_future(then(arena)).add_done_callback(then_done)
                return
            if isinstance(error, ListenerError):
                failures.append(str(error))
                log.critical(failures[-1])
            else:
                failures.append(f"the arena could not start: {error}")
                log.critical(failures[-1], exc_info=error)
            reactor.stop()

        def then_done(task: asyncio.Future) -> None:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                failures.append(f"stopped: {error}")
                log.critical(failures[-1], exc_info=error)
            if reactor.running:
                reactor.stop()

        def ready():
            for sock in shared:  # Twisted listens on a copy of each
                listen_success(reactor.adoptStreamPort(sock.fileno(), sock.family, server.http_factory))
                sock.close()
            install_bounds(server)
            if port is not None:
                log.info("web server on http://%s:%d/", host, port)
            for (bot_host, bot_port), game in bot_socket_addresses().items() if with_arena else ():
                log.info("%s: listening for bots on %s:%d (WebSocket, any path%s)", game, bot_host, bot_port,
                         "; shared: SO_REUSEPORT" if shared else "")
            freeze_startup_heap()
            if arena is not None:
                asyncio.ensure_future(arena.start()).add_done_callback(arena_started)

        if arena is not None:
            reactor.addSystemEventTrigger(
                "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(arena.stop())))
        endpoints = [f"tcp:port={port}:interface={host}"] if port is not None else []
        # Bound here with SO_REUSEPORT, which Twisted's tcp: endpoint cannot set; adopted in ready().
        shared = bot_socket_listeners() if with_arena and settings.ARENA["REUSE_PORT"] else []
        if with_arena and not shared:
            endpoints += [f"tcp:port={bot_port}:interface={bot_host}" for bot_host, bot_port in bot_socket_addresses()]
        # (Daphne exits when given no endpoint, as an arena whose only ports are adopted is.)
        server = Server(application=application, endpoints=endpoints or ["adopted"],
                        ready_callable=ready, verbosity=0, websocket_max_message_size=MAX_WEBSOCKET_MESSAGE_BYTES,
                        websocket_max_frame_size=MAX_WEBSOCKET_MESSAGE_BYTES)
        server.endpoints = endpoints

        def listen_success(listening):
            """Daphne's own (it notes the address), then admission at this port's accept."""
            Server.listen_success(server, listening)
            install_admission(listening)

        server.listen_error = listen_error
        server.listen_success = listen_success
        try:
            server.run()
        finally:
            for sock in shared:  # not adopted (the server stopped before it was ready)
                sock.close()
        if failures:
            raise ListenerError("; ".join(failures))

    async def _arena_only(self) -> None:
        from games.arena.play.arena import Arena

        arena = Arena()
        await arena.start()
        freeze_startup_heap()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info("arena running (no web server); Ctrl-C stops it")
        await stop.wait()
        await arena.stop()
