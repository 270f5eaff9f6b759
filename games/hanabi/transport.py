"""Hanabi bots over WebSocket (specs/hanabi-ws.*): the lobby and the seat endpoint.

The socket itself is :mod:`games.arena.bot_sockets` (a Channels consumer on ``HANABI_PORT``,
4444 by default, every path; and ``/ws/bots/hanabi/`` on the main port); this module is the
arena's side of each connection.

Lobby (our rules where the original, one game per process, has none):

- ``CONNECTION_REQUEST`` takes the oldest open bot seat of a Hanabi table made on the web, or
  else joins the automatic table that is gathering.  With a ``key`` (ours: a registered bot's
  key, games/arena/bot_keys.py) the bot plays under its registered name, on the wire too (a
  client takes its name from its first ``CONNECTION_RESPONSE``), a seat its owner held for it
  first; a refused key gets ``ERROR_RESPONSE`` "The bot key was refused." with the reason,
  and the connection may send another ``CONNECTION_REQUEST`` (past the address's limit of
  wrong keys it is closed, 4029).  A bot without a key that asks for a registered bot's name
  (or a look-alike) gets the original's ``PLAYER_ALREADY_EXISTS`` (games/arena/names.py);
  one that took a name before it was registered gets it too, and is disconnected, when the
  registered bot comes to the automatic table while it waits there.
  Every player joined there gets a ``CONNECTION_RESPONSE`` listing the names in join order,
  the joiner last; a connection gets none before its own (a client takes its name from the
  first one it receives).
- ``GAME_START_REQUEST`` from any player of the gathering table starts it once it has two
  players or more (the original lets only the last to join start); at five it starts by
  itself.  The last to join sits at seat 0 and moves first, as with the original; the others
  follow in join order (the wire's ``players`` list is then exactly the join order).
- A web table starts once every seat is taken; its bots' ``GAME_START_REQUEST`` gets
  ``NOT_YOUR_TURN`` (what the original tells every player but the last to join).

In a game a request from a player not on turn gets ``NOT_YOUR_TURN`` (checked first, as the
original does); a refused action (``CARD_NOT_FOUND``, ``NO_HINT_TOKENS``,
``PLAYER_NOT_FOUND``) leaves the turn open until the deadline.  Deadline (ours; the original
has none): ``HANABI_BOT_DEADLINE`` seconds (10) for the player on turn; then, or at once when
it disconnects, a card is discarded for it (:func:`forced_discard`), recorded as forced with
the reason, and the game goes on.  The last action's response is replaced by
``GAME_OVER_RESPONSE``, then every socket is closed with 1000.
"""
from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from games.arena.bot_keys import KeyRefused
from games.arena.bot_sockets import CLOSE_REFUSED, CLOSE_TOO_MANY_MESSAGES, SocketConnection
from games.arena.http_bots import json_too_deep
from games.arena.seats import Answer, SeatEndpoint, TimedRequest, resolved
from games.arena.service import SeatingBusy
from games.names import clean_name
from games.hanabi import protocol
from games.hanabi.protocol import HanabiError

log = logging.getLogger("arena.hanabi")

GAME = "hanabi"
MAX_PLAYERS = 5
#: Nesting a request may have: every request is one flat object.
MAX_DEPTH = 4
#: Refused requests before a bot is disconnected (each one costs an error frame).
MAX_ERRORS = 200


def forced_discard(state, seat: int) -> list:
    """The card discarded for a seat that did not act in time: its oldest card that no hint
    has touched (the smallest id: ids grow with the draw), else its oldest card.  Discarding
    is always legal (the notes), also with every hint token in the box."""
    hand = state.hands[seat]
    untouched = [cid for cid in hand
                 if (k := state.knowledge(cid))["color"] is None and k["number"] is None]
    return ["discard", min(untouched or hand)]


class HanabiLobby:
    """The automatic table that is gathering (in this arena process) and the web tables'
    joined bots, for the ``CONNECTION_RESPONSE`` lists."""

    def __init__(self, arena):
        self.arena = arena
        self.gathering: list["HanabiBot"] = []
        self.at_table: dict[int, list["HanabiBot"]] = {}  # web table id -> bots joined, in order
        self.starting = False

    def join(self, bot: "HanabiBot", key=None) -> None:
        """Seat ``bot`` (module docstring); with ``key``, first as the registered bot it names."""
        asyncio.get_running_loop().create_task(self._join(bot, key))

    async def _join(self, bot: "HanabiBot", key=None) -> None:
        if key is not None:
            try:
                await self.arena.identify_bot(GAME, key, bot.conn.host, bot)
            except KeyRefused as exc:
                bot.joined = False  # it may connect again, with another key or none
                bot.conn.write(protocol.error_response(protocol.KEY_REFUSED, str(exc)))
                if exc.too_many:  # past the address's wrong keys: a guess costs a connection
                    bot.conn.close(CLOSE_REFUSED, "too many wrong bot keys")
                return
            bot.name = bot.display_name  # the registered name, on the wire too
        elif await self.arena.claims_bot_name(GAME, bot.name):
            # A keyless bot under a registered bot's name (or a look-alike): the original's own
            # answer to a taken name, which its bots handle (games/arena/names.py).
            bot.joined = False
            bot._error(HanabiError(protocol.PLAYER_ALREADY_EXISTS,
                                   "this name belongs to a registered bot: present its key, or choose another name"))
            return
        try:
            seat_id = await self.arena.seat_bot(GAME, bot, auto=False)
        except LookupError:  # no web table waits for a bot: the automatic table
            seat_id = None
        except SeatingBusy as exc:
            bot.refuse_and_close(str(exc))
            return
        if bot.gone:
            if seat_id is not None:
                await self.arena.bot_left(seat_id)
            return
        if seat_id is not None:
            bot.seat_id = seat_id
            match_id = await self.arena.match_of_seat(seat_id)
            bot.match_id = match_id
            joined = self.at_table.setdefault(match_id, [])
            joined.append(bot)
            names = [b.name for b in joined]
            for other in joined:
                other.conn.write(protocol.connection_response(names))
            return
        if bot.bot_id is not None:
            # A keyed bot never gives way to a keyless one: a bot without a key that took this
            # name before it was registered leaves the gathering table (games/arena/names.py).
            for squatter in [b for b in self.gathering if b.name == bot.name and b.bot_id is None]:
                self.gathering.remove(squatter)
                squatter.conn.write(protocol.error_response(
                    protocol.PLAYER_ALREADY_EXISTS, "this name has been registered: its bot, with its key, takes it"))
                squatter.conn.close()
        if any(b.name == bot.name for b in self.gathering):
            bot.joined = False
            bot.conn.write(protocol.error_response(protocol.PLAYER_ALREADY_EXISTS))
            return
        self.gathering.append(bot)
        names = [b.name for b in self.gathering]
        for other in self.gathering:
            other.conn.write(protocol.connection_response(names))
        if len(self.gathering) >= MAX_PLAYERS:
            await self.start()

    def left(self, bot: "HanabiBot") -> None:
        if bot in self.gathering:
            self.gathering.remove(bot)
        if bot.match_id in self.at_table and bot in self.at_table[bot.match_id]:
            self.at_table[bot.match_id].remove(bot)
            if not self.at_table[bot.match_id]:
                del self.at_table[bot.match_id]

    def started(self, match_id: int | None) -> None:
        """A web table's match started: its join list is no longer needed."""
        self.at_table.pop(match_id, None)

    async def start(self) -> str | None:
        """Start the gathering table; returns why not (fewer than two players) or None."""
        players = [b for b in self.gathering if not b.gone]
        if len(players) < 2:
            return "at least two players must be connected to start"
        if self.starting:
            return None
        self.starting = True
        self.gathering = [b for b in self.gathering if b not in players]
        try:
            seated = [players[-1]] + players[:-1]  # the last to join moves first
            match_id, codes = await self.arena.prepare(GAME, {"players": len(seated)}, [b.name for b in seated])
            for bot, code in zip(seated, codes):
                bot.match_id = match_id
                bot.seat_id, _ = await self.arena.seat_reserved(code, bot)
        finally:
            self.starting = False
        return None


class HanabiBot(SeatEndpoint):
    """One bot socket: the handler of its frames and, once seated, its seat endpoint."""

    kind = "protocol"

    def __init__(self, conn: SocketConnection, lobby: HanabiLobby, deadline_s: float):
        self.conn = conn
        self.lobby = lobby
        self.deadline_s = deadline_s
        self.display_name = f"bot {conn.peer}"
        self.name = ""
        self.joined = False
        self.seat_id: int | None = None
        self.match_id: int | None = None
        self.seat: int | None = None
        self.state = None  # the running game's state (the runner's: read only)
        self.names: list[str] = []  # wire names by seat
        self.request: TimedRequest | None = None
        self.early_action: list | None = None  # an action that came before the runner asked
        self.errors = 0
        self.over = False

    # --- frames from the bot --------------------------------------------------------------------
    def on_frame(self, text: str) -> None:
        if self.over:
            return
        try:
            if json_too_deep(text.encode(), MAX_DEPTH):
                raise HanabiError(protocol.UNABLE_TO_GET_MSG_TYPE, f"nested deeper than {MAX_DEPTH}")
            if self.seat is not None and self.state is not None and self.state.on_turn != self.seat:
                raise HanabiError(protocol.NOT_YOUR_TURN)
            msg = protocol.parse_request(text)
            self._handle(msg)
        except HanabiError as exc:
            self._error(exc)

    def _handle(self, msg: dict) -> None:
        kind = msg["msg_type"]
        if kind == "CONNECTION_REQUEST":
            if self.joined:
                raise HanabiError(protocol.ALREADY_CONNECTED)
            name = msg["name"]
            if not name or clean_name(name) != name:
                raise HanabiError(protocol.UNABLE_TO_DESERIALIZE_PAYLOAD,
                                  "name must be 1 to 40 printable characters without spaces at either end")
            self.joined = True
            self.name = self.display_name = name
            self.conn.spoke()
            self.lobby.join(self, msg.get("key"))
            return
        if not self.joined:
            raise HanabiError(protocol.NOT_YET_CONNECTED)
        if kind == "GAME_START_REQUEST":
            if self.state is not None:
                raise HanabiError(protocol.GAME_ALREADY_STARTED)
            if self.match_id is not None:
                raise HanabiError(protocol.NOT_YOUR_TURN, "this table starts by itself once every seat is taken")
            asyncio.get_running_loop().create_task(self._start())
            return
        if self.state is None:
            raise HanabiError(protocol.NOT_YOUR_TURN, "the game has not started")
        action = protocol.request_to_action(msg, self.seat, self.names)
        refusal = protocol.refusal(self.state, self.seat, action)
        if refusal is not None:
            raise refusal
        if self.request is not None and self.request.pending:
            self.request.resolve(action)
        else:  # on turn, but the runner has not asked yet (it was publishing the last step)
            self.early_action = action

    async def _start(self) -> None:
        why = await self.lobby.start()
        if why is not None:
            self._error(HanabiError(protocol.NOT_YOUR_TURN, why))

    def _error(self, exc: HanabiError) -> None:
        self.errors += 1
        self.conn.write(protocol.error_response(exc.explanation, exc.details))
        if self.errors >= MAX_ERRORS:
            log.warning("hanabi %s (%s): %d refused requests; disconnected", self.conn.peer, self.display_name,
                        self.errors)
            self.conn.close(CLOSE_TOO_MANY_MESSAGES, f"{self.errors} refused requests")

    def refuse_and_close(self, why: str) -> None:
        self.conn.write(protocol.error_response(protocol.CONN_GAME_ALREADY_STARTED, f"{why}; connect again later"))
        self.conn.close()

    def on_close(self) -> None:
        self.gone = True
        self.lobby.left(self)
        if self.request is not None and self.request.pending:
            self.request.resolve(forced_discard(self.state, self.seat), forced=True, reason="disconnected")
        if self.seat_id is not None and self.state is None:
            asyncio.get_running_loop().create_task(self.lobby.arena.bot_left(self.seat_id))

    # --- the runner's side ------------------------------------------------------------------------
    def start(self, state, seat: int) -> None:
        self.state, self.seat = state, seat
        self.lobby.started(self.match_id)
        self.names = list(self.table_names) or [f"Player {i + 1}" for i in range(state.num_seats)]
        self.names[seat] = self.name  # the name it joined with, whatever the table shows
        if not self.gone:
            self.conn.write(protocol.game_start_response(state.observation(seat), self.names))

    def ask(self, state, seat: int, version: int) -> "asyncio.Future[Answer]":
        if self.gone:
            return resolved(Answer(forced_discard(state, seat), True, "disconnected"))
        early, self.early_action = self.early_action, None
        if early is not None and state.is_legal(seat, early):
            return resolved(Answer(early))
        deadline = self.deadline_s
        self.request = TimedRequest(
            deadline, lambda: Answer(forced_discard(state, seat), True, f"no action within {deadline:g} s"))
        return self.request.future

    def notify(self, state, seat: int, happenings: list[dict]) -> None:
        if self.gone or self.over:
            return
        if state.is_terminal():
            self.over = True
            self.conn.write(protocol.game_over_response(state.score()))
            self.conn.close(1000)
            return
        obs = state.observation(seat)
        for happening in happenings:
            if happening["type"] in ("play", "discard", "hint"):
                self.conn.write(protocol.action_response(happening, obs, self.names))

    def close(self, result: dict | None) -> None:
        self.over = True
        if self.request is not None and self.request.pending:
            self.request.resolve(None, forced=True, reason="match over")
        self.conn.close(1000, "" if result is not None else "match aborted")


def start_sockets(arena):
    """Take Hanabi bot sockets in this arena (the GameSpec's listener); returns an object whose
    ``close()`` stops taking them and closes those open."""
    lobby = HanabiLobby(arena)
    deadline = settings.ARENA["HANABI_BOT_DEADLINE"]
    arena.sockets.register(GAME, lambda conn: HanabiBot(conn, lobby, deadline))

    class Closer:
        def close(self) -> None:
            arena.sockets.unregister(GAME)

    return Closer()
