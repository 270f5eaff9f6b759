"""Hanabi bots over WebSocket (specs/hanabi-ws.*): the lobby and the seat endpoint.

The socket itself is :mod:`games.arena.bots.bot_sockets` (a Channels consumer on ``HANABI_PORT``,
4444 by default, every path; and ``/ws/bots/hanabi/`` on the main port); this module is the
arena's side of each connection.

Lobby (our rules where the original, one game per process, has none):

- ``CONNECTION_REQUEST`` takes the oldest open bot seat of a Hanabi table made on the web, or
  else joins the oldest automatic table that is gathering and not full (five players).
  With a ``key`` (ours: a registered bot's key, games/arena/bots/bot_keys.py) the bot plays under
  its registered name, on the wire too, a seat its owner held for it first; a refused key
  gets ``ERROR_RESPONSE`` "The bot key was refused." with the reason, and the connection may
  send another ``CONNECTION_REQUEST`` (past the address's limit of wrong keys it is closed,
  4029).  A name another player at that table has (a bot, a person, a built-in bot) gets
  ``PLAYER_ALREADY_EXISTS``, as the original answers it.  So does a bot without a key that
  asks for a registered bot's name or a look-alike (games/arena/bots/names.py); one that took a
  name before it was registered gets it too, and is disconnected, when the registered bot
  comes to the automatic table where it waits.
- Every bot joined at the table gets a ``CONNECTION_RESPONSE`` listing the players joined
  (at an automatic table in join order; at a web table the seats taken, in seat order),
  the joiner last; a connection gets none before its own (a client takes its own name from
  the first one it receives), and the bot that takes a web table's last seat gets it
  before the ``GAME_START_RESPONSE``.  A person who takes a web table's seat through the
  browser is announced so too (:meth:`HanabiLobby.table_changed`, the arena's seat-change
  hook), as the original announces every join to everyone connected.
- ``GAME_START_REQUEST`` from any player of a gathering table starts it once it has two
  players or more (the original lets only the last to join start, the player then on
  turn).  A full table (five) still waits for a start request, which the original's clients
  send; after ``HANABI_FULL_TABLE_WAIT`` seconds (60) without one it starts by itself.  The
  last to join sits at seat 0 and moves first, as with the original; the others follow in
  join order (the wire's ``players`` list is then exactly the join order).
- A web table starts once every seat is taken; a bot's ``GAME_START_REQUEST`` there gets
  ``NOT_YOUR_TURN`` while seats are open (what the original tells every player but the last
  to join).
- A ``GAME_START_REQUEST`` while its game's start is in hand is answered by the
  ``GAME_START_RESPONSE`` that comes (as the request that starts the game is); once that
  response was sent, by the original's ``GAME_ALREADY_STARTED``, whoever is on turn.  One
  sent before the bot's ``CONNECTION_RESPONSE`` is handled once it has its place.

In a game a request from a player not on turn gets ``NOT_YOUR_TURN`` (checked first, as the
original does); a refused action (``CARD_NOT_FOUND``, ``NO_HINT_TOKENS``,
``PLAYER_NOT_FOUND``) leaves the turn open until the deadline.  Deadline (ours; the original
has none): ``HANABI_BOT_DEADLINE`` seconds (10) for the player on turn; then, or at once when
it has left (its socket is gone: games/arena/bots/bot_sockets.py reports that once, also when a
frame for it was refused by a socket that was closing), a card is discarded for it
(:func:`forced_discard`), recorded as forced with the reason "disconnected", and the game
goes on; the original keeps a player who left in the game and waits for it for ever.  When
every player but the built-in bots has left, the runner ends the match as abandoned, as for
every game.  The last action's response is replaced by ``GAME_OVER_RESPONSE``, then every
socket is closed with 1000.
"""
from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from games.arena.bots.bot_keys import KeyRefused
from games.arena.bots.bot_sockets import CLOSE_REFUSED, CLOSE_TOO_MANY_MESSAGES, SocketConnection
from games.arena.bots.http_bots import json_too_deep
from games.arena.play.arena import NameTaken, SeatingBusy
from games.arena.play.seats import Answer, SeatEndpoint, TimedRequest, resolved
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


class Gathering:
    """An automatic table that is gathering: its players in join order (at most
    :data:`MAX_PLAYERS`), whether its start is in hand, and the timer that starts it by
    itself once it is full (``HANABI_FULL_TABLE_WAIT``)."""

    def __init__(self):
        self.bots: list["HanabiBot"] = []
        self.starting = False
        self.timer: asyncio.TimerHandle | None = None

    @property
    def full(self) -> bool:
        return len(self.bots) >= MAX_PLAYERS


class HanabiLobby:
    """The automatic tables that are gathering (in this arena process) and the web tables'
    joined bots, for the ``CONNECTION_RESPONSE`` lists."""

    def __init__(self, arena, full_table_wait_s: float = 60.0):
        self.arena = arena
        self.full_table_wait_s = full_table_wait_s
        self.tables: list[Gathering] = []  # oldest first; none starting
        self.at_table: dict[int, list["HanabiBot"]] = {}  # web table id -> bots joined, in order
        self.announced: dict[int, set[str]] = {}  # web table id -> players its bots were told of

    def join(self, bot: "HanabiBot", key=None) -> None:
        """Seat ``bot`` (module docstring); with ``key``, first as the registered bot it names."""
        asyncio.get_running_loop().create_task(self._join(bot, key))

    async def _join(self, bot: "HanabiBot", key=None) -> None:
        try:
            await self._seat(bot, key)
        except Exception:
            log.exception("hanabi %s (%s): joining failed", bot.conn.peer, bot.display_name)
            bot.refuse_and_close("the server could not seat you")

    async def _seat(self, bot: "HanabiBot", key=None) -> None:
        if key is not None:
            try:
                await self.arena.identify_bot(GAME, key, bot.conn.host, bot)
            except KeyRefused as exc:  # it may connect again, with another key or none
                bot.refused(protocol.KEY_REFUSED, str(exc))
                if exc.too_many:  # past the address's wrong keys: a guess costs a connection
                    bot.conn.close(CLOSE_REFUSED, "too many wrong bot keys")
                return
            bot.name = bot.display_name  # the registered name, on the wire too
        elif await self.arena.claims_bot_name(GAME, bot.name):
            # A keyless bot under a registered bot's name (or a look-alike): the original's own
            # answer to a taken name, which its bots handle (games/arena/bots/names.py).
            bot.refused(protocol.PLAYER_ALREADY_EXISTS,
                        "this name belongs to a registered bot: present its key, or choose another name")
            return
        try:
            # Not started from here: the bot that fills a web table hears its own
            # CONNECTION_RESPONSE before the GAME_START_RESPONSE (table_changed below).
            seat_id = await self.arena.seat_bot(GAME, bot, auto=False, start=False, unique_name=True)
        except LookupError:  # no web table waits for a bot: the automatic table
            seat_id = None
        except NameTaken:
            bot.refused(protocol.PLAYER_ALREADY_EXISTS)
            return
        except SeatingBusy as exc:
            bot.refuse_and_close(str(exc))
            return
        if bot.gone:
            if seat_id is not None:
                await self.arena.bot_left(seat_id)
            return
        if key is not None:  # a copy of a registered bot beside another gets a number (seating)
            bot.name = bot.display_name
        if seat_id is not None:
            await self._at_web_table(bot, seat_id)
        else:
            await self._gather(bot)

    async def _at_web_table(self, bot: "HanabiBot", seat_id: int) -> None:
        """``bot`` took seat ``seat_id`` of a table made on the web: every bot joined there
        hears the players seated so far (seat order), the joiner last; then the table starts
        if this seat was its last open one."""
        bot.seat_id = seat_id
        match_id = await self.arena.match_of_seat(seat_id)
        bot.match_id = match_id
        seats = await self.arena.seated_names(match_id)
        names = [name for sid, name in seats if sid != seat_id and name is not None] + [bot.name]
        full = all(name is not None for _, name in seats)
        joined = self.at_table.setdefault(match_id, [])
        joined.append(bot)
        self.announced[match_id] = set(names)
        for other in joined:
            other.table_full = full
            other.conn.write(protocol.connection_response(names))
        bot.placed_at_table()
        await self.arena.table_changed(match_id)

    async def table_changed(self, match_id: int) -> None:
        """The arena's hook on a table's seats changing (before the table may start): the bots
        joined at a web table hear of each player who took a seat there through the web, a
        ``CONNECTION_RESPONSE`` listing the players seated (seat order) with that one last,
        as the original announces every join to everyone connected.  A seat given up is
        announced to nobody (the original has no message for it)."""
        joined = self.at_table.get(match_id)
        if not joined:
            return
        seats = await self.arena.seated_names(match_id)
        joined = self.at_table.get(match_id)
        if not joined:  # its bots left or its game started meanwhile
            return
        seated = [name for _, name in seats if name is not None]
        told = {name for name in self.announced.get(match_id, ()) if name in seated}
        for name in seated:
            if name not in told:
                names = [n for n in seated if n in told] + [name]
                told.add(name)
                for bot in joined:
                    bot.conn.write(protocol.connection_response(names))
        self.announced[match_id] = told
        full = len(seated) == len(seats)
        for bot in joined:
            bot.table_full = full

    async def _gather(self, bot: "HanabiBot") -> None:
        """``bot`` joins the oldest automatic table that is not full (a new one if none);
        a name already there is refused with ``PLAYER_ALREADY_EXISTS``, as the original does."""
        if bot.bot_id is not None:
            self._evict_squatters(bot.name)
        table = next((t for t in self.tables if not t.full), None)
        if table is None:
            table = Gathering()
            self.tables.append(table)
        if any(b.name == bot.name for b in table.bots):
            bot.refused(protocol.PLAYER_ALREADY_EXISTS)
            return
        table.bots.append(bot)
        bot.gathering = table
        names = [b.name for b in table.bots]
        for other in table.bots:
            other.conn.write(protocol.connection_response(names))
        bot.placed_at_table()
        if table.full and table.timer is None and self.full_table_wait_s > 0:
            table.timer = asyncio.get_running_loop().call_later(
                self.full_table_wait_s, lambda: asyncio.ensure_future(self._start_full(table)))

    def _evict_squatters(self, name: str) -> None:
        """A keyed bot never gives way to a keyless one: a bot without a key that took ``name``
        at a gathering table before the name was registered is refused and disconnected
        (games/arena/bots/names.py); a table already starting is left as it is."""
        for table in self.tables:
            if table.starting:
                continue
            for squatter in [b for b in table.bots if b.name == name and b.bot_id is None]:
                squatter.refused(protocol.PLAYER_ALREADY_EXISTS,
                                 "this name has been registered: its bot, with its key, takes it")
                self.left(squatter)
                squatter.conn.close()

    async def _start_full(self, table: Gathering) -> None:
        table.timer = None
        if table.full and table in self.tables:
            log.info("hanabi: a full automatic table waited %g s for a GAME_START_REQUEST; starting it",
                     self.full_table_wait_s)
            await self.start(table)

    def left(self, bot: "HanabiBot") -> None:
        table = bot.gathering
        if table is not None and bot in table.bots and not table.starting:
            table.bots.remove(bot)
            if not table.bots:
                self._drop(table)
        if bot.match_id in self.at_table and bot in self.at_table[bot.match_id]:
            self.at_table[bot.match_id].remove(bot)
            if not self.at_table[bot.match_id]:
                del self.at_table[bot.match_id]
                self.announced.pop(bot.match_id, None)

    def _drop(self, table: Gathering) -> None:
        if table in self.tables:
            self.tables.remove(table)
        if table.timer is not None:
            table.timer.cancel()
            table.timer = None

    def started(self, match_id: int | None) -> None:
        """A web table's match started: its join list is no longer needed."""
        self.at_table.pop(match_id, None)
        self.announced.pop(match_id, None)

    async def start(self, table: Gathering) -> str | None:
        """Start the gathering ``table``; returns why not (fewer than two players) or None.
        Its players that are still connected take the seats (the last to join first, then
        join order); one that hangs up while the start is in hand plays as a seat that
        left.  A failure to start ends the match as aborted and closes them (the arena's
        :meth:`~games.arena.play.arena.Arena.start_gathered`)."""
        if table.starting:
            return None
        players = [b for b in table.bots if not b.gone]
        if len(players) < 2:
            return "at least two players must be connected to start"
        table.starting = True
        self._drop(table)  # new joiners gather at another table
        seated = [players[-1]] + players[:-1]  # the last to join moves first
        try:
            await self.arena.start_gathered(GAME, {"players": len(seated)}, seated)
        except Exception:  # logged, recorded and the bots closed by the arena
            pass
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
        self.placed = False  # it has its place: a gathering table or a web table's seat
        self.gathering: Gathering | None = None  # the automatic table it joined
        self.table_full = False  # its web table has every seat taken: the start is in hand
        self.start_asked = False  # GAME_START_REQUEST before it had its place

    # --- frames from the bot --------------------------------------------------------------------
    def on_frame(self, text: str) -> None:
        if self.over:
            return
        try:
            if json_too_deep(text.encode(), MAX_DEPTH):
                raise HanabiError(protocol.UNABLE_TO_GET_MSG_TYPE, f"nested deeper than {MAX_DEPTH}")
            try:
                msg, unreadable = protocol.parse_request(text), None
            except HanabiError as exc:
                msg, unreadable = None, exc
            # The turn first, as the original checks it, but a start request for a game
            # under way gets the original's own "already started" from anyone.
            starting = msg is not None and msg["msg_type"] == "GAME_START_REQUEST"
            if not starting and self.seat is not None and self.state is not None and self.state.on_turn != self.seat:
                raise HanabiError(protocol.NOT_YOUR_TURN)
            if unreadable is not None:
                raise unreadable
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
            if not self.placed:  # sent right after its CONNECTION_REQUEST: answered in order
                self.start_asked = True
                return
            self.ask_start()
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

    def placed_at_table(self) -> None:
        """The lobby gave it its place; a start request it sent before is handled now."""
        self.placed = True
        if self.start_asked:
            self.start_asked = False
            self.ask_start()

    def refused(self, explanation: str, details: str | None = None) -> None:
        """Its ``CONNECTION_REQUEST`` was refused (it may send another)."""
        self.joined = False
        self.conn.write(protocol.error_response(explanation, details))
        if self.start_asked:
            self.start_asked = False
            self._error(HanabiError(protocol.NOT_YET_CONNECTED))

    def ask_start(self) -> None:
        """A ``GAME_START_REQUEST`` of a player that has its place, before its game started:
        at the gathering table it starts the game, unless the start is in hand already (then
        the coming ``GAME_START_RESPONSE`` answers it, as the original answers the request
        that starts the game); at a web table that has every seat taken, the same; at one
        with open seats, ``NOT_YOUR_TURN`` (it starts by itself once every seat is taken)."""
        if self.gathering is not None:
            if not self.gathering.starting:
                asyncio.get_running_loop().create_task(self._start(self.gathering))
        elif not self.table_full:
            self._error(HanabiError(protocol.NOT_YOUR_TURN, "this table starts by itself once every seat is taken"))

    async def _start(self, table) -> None:
        why = await self.lobby.start(table)
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
            self.conn.write(protocol.game_start_response(protocol.StateView.of(state), seat, self.names))

    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time replaces ``HANABI_BOT_DEADLINE`` for this seat."""
        self.deadline_s = seconds

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
        view = protocol.StateView.of(state)  # shared with the other seats of this step
        for happening in happenings:
            if happening["type"] in ("play", "discard", "hint"):
                self.conn.write(protocol.action_response(happening, view, seat, self.names))

    def close(self, result: dict | None) -> None:
        self.over = True
        if self.request is not None and self.request.pending:
            self.request.resolve(None, forced=True, reason="match over")
        self.conn.close(1000, "" if result is not None else "match aborted")


def start_sockets(arena):
    """Take Hanabi bot sockets in this arena (the GameSpec's listener); returns an object whose
    ``close()`` stops taking them and closes those open."""
    lobby = HanabiLobby(arena, settings.ARENA["HANABI_FULL_TABLE_WAIT"])
    deadline = settings.ARENA["HANABI_BOT_DEADLINE"]
    arena.sockets.register(GAME, lambda conn: HanabiBot(conn, lobby, deadline))
    arena.table_hooks.append(lobby.table_changed)

    class Closer:
        def close(self) -> None:
            arena.sockets.unregister(GAME)
            if lobby.table_changed in arena.table_hooks:
                arena.table_hooks.remove(lobby.table_changed)
            for table in list(lobby.tables):  # no full table starts while the arena stops
                lobby._drop(table)

    return Closer()
