"""Bots over WebSocket (docs/architecture.md, "Processes"): a Channels consumer as the transport.

Two halves that talk only through the channel layer, so that the consumer may run in a web
process and the match in the arena process (the scaled deployment), or both in one (the
default server), or, when both live in one process, directly (the same messages, handled in
the same order, without the layer's copy and the consumer's wake-up per frame: most of the
server's cost per Hanabi action once the frames are built, benchmarks/hanabi_ws_games.py):

- :class:`BotSocketConsumer` (web side) holds the socket: admission per address, bounds on
  each frame (size, rate), no ``Origin`` rule (bots send none, and this endpoint carries no
  session or cookie authority), and forwards frames to one arena (``bot_socket.open``,
  ``bot_socket.frame``, ``bot_socket.gone``): the one in this process, else one live arena
  chosen at connect (:func:`games.arena.play.control.gathering_channel`) for the socket's whole
  life, on that arena's own channel, so exactly one arena makes its handler and seats it.
- :class:`SocketConnection` (arena side) is the connection as a game's handler sees it, with
  the same surface as a TCP :class:`~games.arena.bots.transport.BotConnection` (``peer``,
  ``write``, ``close``, ``spoke``): frames go back in order (``bot.send``), through a bounded
  outbox; the first-message deadline closes a client that says nothing valid in time.
  When the consumer is in this process a frame goes straight to its socket instead
  (:meth:`BotSocketConsumer.write_now`, the server's ``send_text_now``, as spectators' views
  do), once nothing queued before it is still on its way.

A game offers its handler with :meth:`SocketGames.register` (``make_handler(connection)``,
the handler having ``on_frame(text)`` and ``on_close()``), from its "websocket" door's
``start`` (``GameSpec.doors``); its port is that door's (served by ``manage.py serve``, every
path) and, on the main port, ``/ws/bots/<game>/``.
"""
from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Callable

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import ChannelFull
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from games.arena.bots.limits import TokenBucket
from games.arena.bots.transport import Admission, admission_from_settings
from games.arena.play import control

log = logging.getLogger("arena.bot_sockets")

#: Largest frame a bot may send (bytes of text); Hanabi's largest request is under 200.
MAX_FRAME_BYTES = 16 * 1024
#: Frames waiting to go to one bot before it counts as not reading and is dropped.  A game
#: sends a bot one response per action, so a bot that reads never has more than a few.
MAX_OUTBOX = 256
#: Close codes.  A server may send only 1000 or 3000-4999 (autobahn, under Daphne, refuses
#: the rest), so "too big" is 4013, not RFC 6455's 1009.
CLOSE_NORMAL = 1000
CLOSE_SILENT = 4000
CLOSE_TOO_MANY_MESSAGES = 4008
CLOSE_TOO_BIG = 4013
#: Closed after the handshake for a refusal the bot can act on (too many wrong bot keys from
#: its address: games/arena/bots/bot_keys.py); a refusal before the handshake has no close code.
CLOSE_REFUSED = 4029
#: No arena takes this socket: none lives, none takes the game's bots, or the one it was
#: bound to stopped reading.
CLOSE_NO_ARENA = 4503

_admissions: dict[str, Admission] = {}
#: Game -> the :class:`SocketGames` of the arena in this process that takes its bots (the
#: default server runs web and arena in one process): its consumers hand it their messages.
_in_process: dict[str, "SocketGames"] = {}
#: Channel name -> the open :class:`BotSocketConsumer` of this process with that channel.
_consumers: dict[str, "BotSocketConsumer"] = {}


def admission_for(game: str) -> Admission:
    """The per-address :class:`Admission` of ``game``'s bot sockets in this process (the
    same settings as the TCP bot ports)."""
    if game not in _admissions:
        _admissions[game] = admission_from_settings(settings.ARENA)
    return _admissions[game]


class BotSocketConsumer(AsyncWebsocketConsumer):
    """One bot's WebSocket, for the game ``scope["bot_game"]`` (set by the router) or the
    ``game`` of the URL.  On the web port's route the game's per-address caps apply here and
    a refused bot gets HTTP ``403`` at the handshake (a consumer that closes before accepting
    is refused so by Daphne, as the ASGI spec has it); on the game's own port they applied at
    ``accept()`` already (``scope["admitted"]``, games/arena/bots/daphne_admission.py).  Closes:
    4013 a frame over :data:`MAX_FRAME_BYTES` or not text, 4008 over
    ``ARENA_WS_MESSAGES_PER_S`` (burst ``ARENA_WS_BURST``), 4503 when no arena takes it
    (:data:`CLOSE_NO_ARENA`)."""

    async def dispatch(self, message):
        """Channels' dispatch without its hop to a worker thread to close stale database
        connections before every message (as ``MatchConsumer`` skips it for views): nothing
        here touches the database but the choice of an arena at connect, which closes them
        itself (``database_sync_to_async``), and that hop was a fifth of the server's CPU per
        Hanabi action (benchmarks/hanabi_ws_games.py).  Raises ``ValueError`` for a message type
        without a handler, as Channels does."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self):
        from games.arena.web.consumers import SEND_TEXT_NOW

        self.game = self.scope.get("bot_game") or self.scope["url_route"]["kwargs"]["game"]
        client = self.scope.get("client") or ("?", 0)
        self.host, self.peer = str(client[0]), f"{client[0]}:{client[1]}"
        self.admitted = False
        self.admission = None if self.scope.get("admitted") else admission_for(self.game)
        if self.admission is not None:
            refused = self.admission.admit(self.host)
            if refused is not None:
                self.admission.refused_one(self.peer, refused)
                await self.close()  # before accept: Daphne answers the handshake with 403
                return
        self.admitted = True
        self.gone_reported = False
        cfg = settings.ARENA
        self.bucket = TokenBucket(cfg["WS_MESSAGES_PER_S"], cfg["WS_BURST"])
        self.closing = False
        #: The server's synchronous write of a text frame, if it offers one (manage.py serve).
        self.send_text_now = (self.scope.get("extensions") or {}).get(SEND_TEXT_NOW, {}).get("send")
        # Chosen once, so that all of this socket's messages take one path, in order, to one
        # arena: the one in this process, else the channel of one live arena.
        self.arena = _in_process.get(self.game)
        self.control = None if self.arena is not None else await self._pick_arena(self.game)
        _consumers[self.channel_name] = self
        await self.accept()
        if self.arena is None and self.control is None:
            self.gone_reported = True  # no arena heard of it: none to tell
            await self._close(CLOSE_NO_ARENA, "no arena is running; try again later")
            return
        await self._to_arena({"type": "bot_socket.open", "game": self.game, "channel": self.channel_name,
                              "peer": self.peer, "host": self.host})

    @staticmethod
    async def _pick_arena(game: str) -> str | None:
        """The channel of the live arena this socket is bound to (the one that takes ``game``'s
        bots from the web: :func:`~games.arena.play.control.gathering_channel`, so that bots which
        gather meet at one arena), or None when none lives or the database cannot say."""
        try:
            return await database_sync_to_async(control.gathering_channel)(game)
        except Exception:
            log.exception("could not look up a live arena")
            return None

    async def _to_arena(self, message: dict) -> None:
        """``message`` for this socket's arena: to its :class:`SocketGames` when it is in this
        process, else on the arena's channel.  An arena whose channel is full reads nothing
        (stuck, or it died): the socket is closed with :data:`CLOSE_NO_ARENA`."""
        if self.arena is None:
            if self.control is None:
                return
            try:
                await self.channel_layer.send(self.control, message)
            except ChannelFull:
                log.warning("%s: the arena's channel is full; socket closed", self.peer)
                self.control = None  # nothing more goes there, its end included
                await self._close(CLOSE_NO_ARENA, "the arena is not answering; try again later")
            return
        try:
            self.arena.handle(message)
        except Exception:  # as the arena's control loop: logged, the socket goes on
            log.exception("%s: handling %s failed", self.peer, message["type"])

    async def receive(self, text_data=None, bytes_data=None):
        if self.closing:
            return
        if text_data is None or len(text_data) > MAX_FRAME_BYTES:
            await self._close(CLOSE_TOO_BIG, f"frames are JSON text of at most {MAX_FRAME_BYTES} bytes")
            return
        if not self.bucket.take():
            await self._close(CLOSE_TOO_MANY_MESSAGES, "too many messages")
            return
        await self._to_arena({"type": "bot_socket.frame", "channel": self.channel_name, "text": text_data})

    async def _close(self, code: int, reason: str) -> None:
        self.closing = True
        await self.close(code=code, reason=reason)

    async def disconnect(self, code):
        if not getattr(self, "admitted", False):
            return
        self.admitted = False
        _consumers.pop(self.channel_name, None)
        if self.admission is not None:
            self.admission.release(self.host)
        await self._report_gone()

    async def _report_gone(self) -> None:
        """Tell the arena, once, that this bot has left (``bot_socket.gone``)."""
        if not self.gone_reported:
            self.gone_reported = True
            await self._to_arena({"type": "bot_socket.gone", "channel": self.channel_name})

    # --- from the arena -----------------------------------------------------------------------
    async def bot_send(self, event):
        """One frame for the bot.  Once its socket is closing (the bot began the closing
        handshake, or Daphne cut it off for flooding) Daphne refuses to send ("Attempt to send
        on a closed protocol") until the disconnect reaches us; that error would end this
        consumer, whose disconnect then never reached the arena, so the bot's seat waited out
        every deadline.  A bot that can no longer be sent to has left: the arena hears it now."""
        if self.closing:
            return
        try:
            await self.send(text_data=event["text"])
        except Disconnected:
            self.closing = True
            await self._report_gone()

    def write_now(self, text: str) -> bool:
        """Write one frame for the bot to its socket at once, synchronously (the server's
        ``send_text_now``, manage.py serve), and return True (also for a frame dropped
        because the socket is closing, as :meth:`bot_send` drops it); or return False,
        having done nothing, when it must go the way of :meth:`bot_send`."""
        if self.closing:
            return True
        return self.send_text_now is not None and self.send_text_now(text)

    async def bot_close(self, event):
        if not self.closing:
            await self._close(event.get("code") or CLOSE_NORMAL, event.get("reason") or "")


class SocketConnection:
    """The arena's side of one bot socket (module docstring).  ``send`` is the channel
    layer's ``send``; ``first_message_s`` (None: none) is the deadline for the handler's
    :meth:`spoke`."""

    def __init__(self, game: str, channel: str, peer: str, send: Callable, first_message_s: float | None,
                 host: str = "?"):
        self.game = game
        self.channel = channel
        self.peer = peer
        #: The peer's address alone (what key guesses are counted under).
        self.host = host
        self._send = send
        self._outbox: deque = deque()
        self._sender: asyncio.Task | None = None
        #: The consumer's :meth:`BotSocketConsumer.write_now` when it is in this process.
        self.write_now: Callable[[str], bool] | None = None
        self.closed = False
        self.has_spoken = False
        self.handler = None
        self._silent_timer = (asyncio.get_running_loop().call_later(first_message_s, self._silent)
                              if first_message_s is not None else None)

    def spoke(self) -> None:
        """The handler had a valid first message: the first-message deadline is over."""
        self.has_spoken = True
        if self._silent_timer is not None:
            self._silent_timer.cancel()
            self._silent_timer = None

    def _silent(self) -> None:
        self._silent_timer = None
        log.info("%s: nothing valid within %g s of connecting; closed", self.peer,
                 settings.ARENA["FIRST_MESSAGE_TIMEOUT"])
        self.close(CLOSE_SILENT, "no valid message in time")

    def is_closing(self) -> bool:
        return self.closed

    def write(self, text: str) -> bool:
        """Queue one frame; returns False (and drops the bot) when :data:`MAX_OUTBOX` frames
        already wait for it, or when it is gone."""
        if self.closed:
            return False
        if len(self._outbox) >= MAX_OUTBOX:
            log.warning("%s: not reading what we send; connection dropped", self.peer)
            self._outbox.clear()
            self.close(CLOSE_TOO_MANY_MESSAGES, "not reading")
            return False
        # Straight to the socket when nothing before it is still on its way (in order).
        if (self.write_now is not None and not self._outbox and (self._sender is None or self._sender.done())
                and self.write_now(text)):
            return True
        self._queue({"type": "bot.send", "text": text})
        return True

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Close after what was written has gone (``code`` 1000 by default); the handler hears
        of it through ``on_close`` once the consumer reports the socket gone."""
        if self.closed:
            return
        self._queue({"type": "bot.close", "code": code, "reason": reason})
        self.closed = True

    def _queue(self, message: dict) -> None:
        # One sender per connection keeps the frames in order over a channel layer whose
        # send awaits the network (Redis).
        self._outbox.append(message)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._outbox:
            message = self._outbox.popleft()
            try:
                await self._send(self.channel, message)
            except Exception as exc:  # ChannelFull or the layer is down: the bot is lost
                log.warning("%s: could not send (%s); dropped", self.peer, exc)
                self._outbox.clear()
                self.closed = True
                return

    def lost(self) -> None:
        """The consumer reported the socket gone."""
        self.closed = True
        self._outbox.clear()
        if self._silent_timer is not None:
            self._silent_timer.cancel()
            self._silent_timer = None
        if self.handler is not None:
            try:
                self.handler.on_close()
            except Exception:
                log.exception("%s: handling the disconnect failed", self.peer)


class SocketGames:
    """The arena's registry of bot-socket games and their open connections (by the
    consumer's channel name)."""

    def __init__(self, send: Callable):
        self._send = send
        self.handlers: dict[str, Callable] = {}
        self.connections: dict[str, SocketConnection] = {}

    def register(self, game: str, make_handler: Callable[[SocketConnection], object]) -> None:
        """``make_handler(connection)`` builds the handler of each new socket of ``game``; the
        consumers of this process hand this registry their messages from now on."""
        self.handlers[game] = make_handler
        _in_process[game] = self

    def unregister(self, game: str) -> None:
        """Stop taking ``game``'s sockets and close those open."""
        self.handlers.pop(game, None)
        if _in_process.get(game) is self:
            del _in_process[game]
        for conn in list(self.connections.values()):
            if conn.game == game:
                conn.close(CLOSE_NORMAL, "server stopping")

    async def _deliver(self, channel: str, message: dict) -> None:
        """``message`` (``bot.send``, ``bot.close``) for the consumer of ``channel``: to it
        directly when it is open in this process, else through the channel layer."""
        consumer = _consumers.get(channel)
        if consumer is None:
            await self._send(channel, message)
        else:
            await consumer.dispatch(message)

    def handle(self, msg: dict) -> bool:
        """Handle a ``bot_socket.*`` control message; False if ``msg`` is not one."""
        kind = msg.get("type")
        if kind == "bot_socket.frame":
            conn = self.connections.get(msg.get("channel"))
            if conn is not None and not conn.closed and conn.handler is not None:
                conn.handler.on_frame(msg.get("text") or "")
        elif kind == "bot_socket.open":
            make_handler = self.handlers.get(msg.get("game"))
            channel = str(msg.get("channel"))
            if make_handler is None:  # no arena takes this game's bots (yet)
                asyncio.get_running_loop().create_task(self._send(channel, {
                    "type": "bot.close", "code": CLOSE_NO_ARENA, "reason": "no arena is taking bots for this game"}))
                return True
            conn = SocketConnection(msg["game"], channel, str(msg.get("peer")), self._deliver,
                                    settings.ARENA["FIRST_MESSAGE_TIMEOUT"], str(msg.get("host", "?")))
            self.connections[channel] = conn
            consumer = _consumers.get(channel)
            if consumer is not None:
                conn.write_now = consumer.write_now
            conn.handler = make_handler(conn)
        elif kind == "bot_socket.gone":
            conn = self.connections.pop(msg.get("channel"), None)
            if conn is not None:
                conn.lost()
        else:
            return False
        return True


def bot_socket_doors() -> dict[tuple[str, int], tuple]:
    """(host, port) -> ``(spec, door)`` of every "websocket" door of every game
    (``GameSpec.doors``): the ports ``manage.py serve`` serves for bots."""
    from games.arena import registry

    return {door.address(): (spec, door) for spec in registry.all_games()
            for door in spec.doors if door.access == "websocket"}


def bot_socket_addresses() -> dict[tuple[str, int], str]:
    """(host, port) -> game slug, from :func:`bot_socket_doors`."""
    return {address: spec.slug for address, (spec, _) in bot_socket_doors().items()}


def bot_socket_ports() -> dict[int, str]:
    """Port -> game slug, from :func:`bot_socket_addresses`."""
    return {port: game for (_, port), game in bot_socket_addresses().items()}


class BotPortRouter:
    """ASGI: a connection to a game's bot port (:func:`bot_socket_ports`, matched on the port
    the server accepted it on) is that game's bot socket whatever its path, as the original
    Hanabi server takes any path; HTTP there gets a ``404`` saying what the port is for.
    Everything else goes to ``application``; on the main port ``/ws/bots/<game>/`` is the
    same consumer (for a deployment behind one proxy)."""

    def __init__(self, application, ports: dict[int, str]):
        self.application = application
        self.ports = ports
        self.bots = BotSocketConsumer.as_asgi()

    async def __call__(self, scope, receive, send):
        server = scope.get("server") or (None, None)
        game = self.ports.get(server[1])
        if game is None:
            if scope["type"] == "websocket" and scope.get("path", "").startswith("/ws/bots/"):
                parts = scope["path"].strip("/").split("/")
                if len(parts) == 3 and parts[2] in self.ports.values():
                    return await self.bots(dict(scope, bot_game=parts[2]), receive, send)
            return await self.application(scope, receive, send)
        if scope["type"] == "websocket":  # admitted at accept() (games/arena/bots/daphne_admission.py)
            return await self.bots(dict(scope, bot_game=game, admitted=True), receive, send)
        if scope["type"] == "http":
            body = f"This port takes {game} bots over WebSocket (ws://host:{server[1]}/, any path).\n".encode()
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
