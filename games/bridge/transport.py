"""Contract bridge bots over TCP in the seed's text protocol (docs/bridge-protocol.md, our syntax
for specs/bridge-text.seed.md): the listener, the lobby (HELLO, GAMES, TOURNAMENTS, JOIN-M,
JOIN-T, reconnecting) and the seat endpoint.

Three pieces:

- :class:`BridgeClient`: one connection's line handler.  HELLO first; then the lists, a join,
  and the seat's calls and cards.  Every refused or malformed line gets a ``NAK`` that says
  what to fix; :data:`MAX_REFUSALS` of them and the connection is closed.
- :class:`BridgeTextSeat`: a :class:`~games.bridge.bot_seat.BridgeBotSeat` (requests,
  deadlines, forced pass or lowest card, a seat that outlives its connection) that writes
  the protocol's lines (``protocol.board_start``, ``step_messages``, ``resync``,
  ``forced_notice``) to whichever connection is attached to it.  Each seat gets only its own
  ``HAND``; everything else it is sent is public.
- :class:`BridgeDoor`: what the listener keeps in the arena process: the seats held by name
  (a client that says HELLO again with the same name, and key, is put back in its seat:
  ``JOINED`` lines and the resync), the ``JOINED`` announcements through the arena's table
  hooks, and the team-match pairing (:class:`TeamPairing`, bounded in count and time).
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from dataclasses import dataclass
from types import SimpleNamespace

from asgiref.sync import sync_to_async
from django.conf import settings

from games.arena.bots.bot_keys import KeyRefused
from games.arena.bots.transport import Deadlines, LineConnection, admission_from_settings, start_line_server
from games.arena.models import Match, Seat, Tournament
from games.arena.play.arena import SeatingBusy
from games.arena.tournaments import schedule
from games.base import ProtocolError
from games.bridge import protocol
from games.bridge.bot_seat import BridgeBotSeat
from games.bridge.rules import CALL_INDEX, SEAT_NAMES, BridgeState

log = logging.getLogger("arena.bridge")

GAME = "bridge"
#: Refused or malformed lines one connection may send; at this many it is told and closed.
MAX_REFUSALS = 100
#: Team-match requests (``JOIN-T``) and waiting pairs kept at once; past it a new one is refused.
MAX_TEAM_REQUESTS = 200
#: Seconds a ``JOIN-T`` (an unanswered request, or a pair waiting for opponents) is kept.
TEAM_WAIT_S = 600.0
#: Game ids a GAMES list names at most (the oldest open tables).
MAX_GAMES_LISTED = 100
#: Lines a client may send while its HELLO or JOIN is being answered; they wait their turn.
MAX_HELD_LINES = 16
#: The largest tournament id (a 64-bit database key): ``E`` and more is no event.
MAX_EVENT_ID = 2**63 - 1
#: Seconds between two looks at a pair event that has not started, for a pair waiting in it
#: (once it runs, the arena's seating wakes the pair when its table is made).
EVENT_LOOK_S = 1.0


def _tell(link, lines: list[str]) -> None:
    if link is not None and lines:
        link.send(lines)


class BridgeTextSeat(BridgeBotSeat):
    """A seat taken over the text protocol: the protocol's lines on the runner's hooks.

    ``link`` is the :class:`BridgeClient` attached now (None while disconnected);
    ``announced`` maps each seat index to the name its ``JOINED`` line gave, so each player is
    announced once to each seat (its own last to a joiner)."""

    def __init__(self, door: "BridgeDoor", name: str, bot_id: int | None, host: str, deadline_s: float):
        super().__init__(deadline_s, name)
        self.door = door
        self.bot_id = bot_id
        #: The address a keyless player joined from: only a connection from there takes the
        #: seat back (a registered bot proves itself with its key instead).
        self.host = host
        self.seat_id: int | None = None
        self.match_id: int | None = None
        self.index: int | None = None
        self.announced: dict[int, str] = {}
        self.table: BridgeState | None = None  # the match's state, once it started
        self._before: dict | None = None
        self.over = False
        #: The arena pair event (tournament id) this seat's player plays in (JOIN-T E<n>), else None.
        self.event: int | None = None

    def send(self, lines: list[str]) -> None:
        _tell(self.link, lines)

    # --- JOINED --------------------------------------------------------------------------------
    def announce(self, match_id: int, index: int, names: list[str | None], again: bool = False) -> None:
        """Send ``JOINED`` for each player at table ``match_id`` (``names`` in seat order, None
        for a seat not taken) not yet announced to this seat, its own last (``again``: every
        one, after a reconnect)."""
        self.match_id, self.index = match_id, index
        if again:
            self.announced = {}
        new = [(i, n) for i, n in enumerate(names) if n is not None and self.announced.get(i) != n]
        new.sort(key=lambda item: item[0] == index)
        for i, n in new:
            self.announced[i] = n
        self.send([protocol.joined(str(match_id), i, n) for i, n in new])

    # --- the runner's side ---------------------------------------------------------------------
    def start(self, state, seat: int) -> None:
        self.table, self.index = state, seat
        self._before = state.public_observation()
        if self.match_id is not None:
            self.announce(self.match_id, seat, list(self.table_names))
        self.send(protocol.board_start(state.observation(seat)))

    def forced(self, action: str, why: str) -> None:
        self.send([protocol.forced_notice(action, why)])

    def notify(self, state, seat: int, happenings: list[dict]) -> None:
        before, self._before = self._before, state.public_observation()
        if self.link is None:
            return
        obs = state.observation(seat)
        card = next((h for h in happenings if h["type"] == "card"), None)
        if card is not None:
            action = card["card"]
        else:  # a call makes no happening: it is the auction's last
            over = next((h for h in happenings if h["type"] == "board_over"), None)
            action = (over["calls"] if over else obs["calls"])[-1]
        self.send(protocol.step_messages(before, action, happenings, obs))

    def close(self, result: dict | None) -> None:
        """The match is over (its last ``SCORE-M`` went out) or aborted (a ``NAK`` says so):
        the server closes the connection; the seat is forgotten.  In a pair event the
        connection stays and is seated at its next table (:meth:`BridgeDoor.play_event`)."""
        self.over = True
        self.door.forget(self)
        link, self.link = self.link, None
        if link is not None and self.event is not None:
            if result is None:  # the arena makes the table again, on the same boards
                link.send([protocol.nak("the match was aborted; it is played again: wait for your table")])
            link.seat = None
            self.door.start_event(link, self.event)
            return
        if link is not None:
            if result is None:
                link.send([protocol.nak("the match was aborted; connect again to play another")])
            link.seat = None
            link.conn.close()

    # --- what the client asks for ----------------------------------------------------------------
    def offer_action(self, action: str) -> str | None:
        """A call or card from the connection: None if it was taken, else the NAK's text."""
        state = self.table
        if state is None:
            return "the game has not started: wait for your HAND"
        if self.waiting_for:
            auction = state.phase == 0
            if auction and action not in CALL_INDEX:
                return "the auction is open: send BID <bid>, e.g. BID 1NT, BID PASS"
            if not auction and action in CALL_INDEX:
                return "the auction is over: send PLAY <card>, e.g. PLAY 10H"
            return self.offer(action)
        return state.why_illegal(self.index, action) or "it is not your turn"

    def resync_lines(self) -> list[str]:
        """``JOINED`` for everyone at the table, its own last, then ``protocol.resync`` of its
        own view (docs: Reconnecting); before the start, the ``JOINED`` lines only."""
        if self.table is None:
            return []
        self.announce(self.match_id, self.index, list(self.table_names), again=True)
        return protocol.resync(self.table.observation(self.index))


@dataclass
class _Request:
    """One ``JOIN-T``: who asked, naming which partner, for which team match (None: any)."""
    client: "BridgeClient"
    partner: str
    tournament: str | None
    at: float


@dataclass
class _Waiting:
    """A pair waiting for opponents under tournament id ``tid``."""
    tid: str
    pair: tuple["BridgeClient", "BridgeClient"]
    at: float


class TeamPairing:
    """The team matches of today (docs/bridge-protocol.md, "What JOIN-T does today"): a pair is
    formed when two players have named each other with ``JOIN-T``; two pairs make a match.

    Pure bookkeeping (no I/O): :meth:`ask` returns what to do.  Bounded: at most
    ``max_entries`` requests and waiting pairs together, each kept ``wait_s`` seconds of
    ``clock`` (:meth:`expired` gives those past it).  Tournament ids are ``T`` and a number."""

    def __init__(self, max_entries: int = MAX_TEAM_REQUESTS, wait_s: float = TEAM_WAIT_S, clock=time.monotonic):
        self.max_entries, self.wait_s, self.clock = max_entries, wait_s, clock
        self.requests: dict[str, _Request] = {}  # by the asker's name
        self.waiting: dict[str, _Waiting] = {}  # by tournament id, oldest first
        self._ids = itertools.count(1)

    def ask(self, client, name: str, partner: str, tid: str | None):
        """``name`` (on ``client``) asks to partner ``partner``, in team match ``tid`` or any.

        Returns ``("wait", None)`` (no pair yet, or a pair now waiting for opponents: its id
        is listed), ``("start", (first_pair, second_pair))`` (the match: the first pair North-South),
        ``("event", (tid, pair))`` (a pair formed for the arena's pair event ``tid``, ``E`` and
        its number: the first to ask first) or ``("refuse", why)``.  A player's new request
        replaces its old one."""
        if partner == name:
            return "refuse", "your partner must be another player"
        if tid is not None and not tid.startswith("E") and tid not in self.waiting:
            return "refuse", f"no team match {tid} is waiting for a pair (TOURNAMENTS lists them)"
        self.drop(client)
        other = self.requests.get(partner)
        if other is None or other.partner != name:
            if len(self.requests) + len(self.waiting) >= self.max_entries:
                return "refuse", "too many team-match requests are waiting; try again later"
            self.requests[name] = _Request(client, partner, tid, self.clock())
            return "wait", None
        if other.tournament and tid and other.tournament != tid:
            return "refuse", f"your partner asked for team match {other.tournament}, you for {tid}"
        del self.requests[partner]
        pair = (other.client, client)
        tid = tid or other.tournament
        if tid and tid.startswith("E"):
            return "event", (tid, pair)
        match = self.waiting.pop(tid, None) if tid else self._oldest()
        if match is None:
            tid = f"T{next(self._ids)}"
            self.waiting[tid] = _Waiting(tid, pair, self.clock())
            return "wait", None
        return "start", (match.pair, pair)

    def _oldest(self) -> _Waiting | None:
        if not self.waiting:
            return None
        return self.waiting.pop(next(iter(self.waiting)))

    def drop(self, client) -> "BridgeClient | None":
        """Forget ``client``'s request or waiting pair; returns the partner left alone by a
        pair that was waiting (to be told), else None."""
        for name, req in list(self.requests.items()):
            if req.client is client:
                del self.requests[name]
        for tid, w in list(self.waiting.items()):
            if client in w.pair:
                del self.waiting[tid]
                return w.pair[0] if w.pair[1] is client else w.pair[1]
        return None

    def expired(self) -> list:
        """Drop the requests and pairs older than ``wait_s``; returns their clients."""
        limit = self.clock() - self.wait_s
        out = []
        for name, req in list(self.requests.items()):
            if req.at < limit:
                del self.requests[name]
                out.append(req.client)
        for tid, w in list(self.waiting.items()):
            if w.at < limit:
                del self.waiting[tid]
                out += list(w.pair)
        return out

    def ids(self) -> list[str]:
        """The team matches waiting for a second pair."""
        return list(self.waiting)


class BridgeDoor:
    """The text protocol's door in one arena: seats by name for reconnecting, the ``JOINED``
    hook, the team-match pairing.  ``close()`` stops the listener."""

    def __init__(self, arena, deadline_s: float):
        self.arena = arena
        self.deadline_s = deadline_s
        #: Players seated through this door (a waiting or running table) by name: one seat per
        #: name; bounded by the seats of this arena's tables.
        self.seats: dict[str, BridgeTextSeat] = {}
        #: Connections that said HELLO, by name (bounded by the listener's connections).
        self.clients: dict[str, BridgeClient] = {}
        self.pairing = TeamPairing()
        self.listener = None
        self._sweeper: asyncio.TimerHandle | None = None
        arena.table_hooks.append(self.table_changed)

    def close(self) -> None:
        if self.table_changed in self.arena.table_hooks:
            self.arena.table_hooks.remove(self.table_changed)
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.listener is not None:
            self.listener.close()

    def forget(self, seat: BridgeTextSeat) -> None:
        if self.seats.get(seat.display_name) is seat:
            del self.seats[seat.display_name]

    async def table_changed(self, match_id: int) -> None:
        """A table's seats changed (a bot or a person took one): ``JOINED`` to every player of
        this door waiting there (the arena's :attr:`~games.arena.play.arena.Arena.table_hooks`)."""
        if not any(s.table is None for s in self.seats.values()):
            return  # nobody of ours waits for a table: no database look-up for others' tables
        seated = await self.arena.seated_names(match_id)
        names = [name for _, name in seated]
        for index, (seat_id, _) in enumerate(seated):
            endpoint = self.arena.waiting_bot(seat_id)
            if isinstance(endpoint, BridgeTextSeat) and endpoint.door is self:
                endpoint.seat_id = seat_id
                endpoint.announce(match_id, index, names)

    async def open_game_ids(self) -> list[str]:
        """Ids of the open bridge tables with a seat any bot may take (``GAMES``), oldest
        first, at most :data:`MAX_GAMES_LISTED`."""
        def ids():
            rows = Match.objects.filter(game=GAME, status=Match.Status.OPEN, verified_only=False,
                                        seats__kind=Seat.Kind.PROTOCOL, seats__occupied=False,
                                        seats__reserved=False, seats__registered_bot=None)
            return [str(pk) for pk in rows.order_by("pk").values_list("pk", flat=True).distinct()[:MAX_GAMES_LISTED]]
        return await sync_to_async(ids)()

    # --- team matches ----------------------------------------------------------------------------
    def _sweep(self) -> None:
        """Every so often: JOIN-T requests past :data:`TEAM_WAIT_S` are dropped and told."""
        self._sweeper = None
        for client in self.pairing.expired():
            client.refuse(f"no team match was formed within {TEAM_WAIT_S:g} s; send JOIN-T again")
        if self.pairing.requests or self.pairing.waiting:
            self._sweeper = asyncio.get_running_loop().call_later(TEAM_WAIT_S / 10, self._sweep)

    def join_team(self, client: "BridgeClient", partner: str, tid: str | None) -> None:
        seat = self.seats.get(partner)
        if seat is not None and seat.link is not None:
            client.refuse(f"{partner} is seated at game {seat.match_id}")
            return
        what, detail = self.pairing.ask(client, client.name, partner, tid)
        if what == "refuse":
            client.refuse(detail)
        elif what == "start":
            asyncio.get_running_loop().create_task(self._start_team_match(*detail))
        elif what == "event":
            asyncio.get_running_loop().create_task(self._enter_event(*detail))
        if self._sweeper is None and (self.pairing.requests or self.pairing.waiting):
            self._sweeper = asyncio.get_running_loop().call_later(TEAM_WAIT_S / 10, self._sweep)

    async def _start_team_match(self, first: tuple, second: tuple) -> None:
        """The first pair North-South, the second East-West, at a table made for them (its
        seats held for them, so no other bot takes one), instant replay scored in IMPs."""
        clients = [first[0], second[0], first[1], second[1]]  # N E S W
        if any(c.gone for c in clients):
            for c in clients:
                if not c.gone:
                    c.refuse("a player of the team match left before it began; send JOIN-T again")
            return
        config = {"scoring": "duplicate", "boards": settings.ARENA["BRIDGE_AUTO_BOARDS"], "replay": True}
        _, codes = await self.arena.prepare(GAME, config, [c.name for c in clients])
        for client, code in zip(clients, codes):
            seat = client.new_seat()
            await self.arena.seat_reserved(code, seat)


    # --- the arena's pair events (JOIN-T E<n>) ---------------------------------------------------
    async def _enter_event(self, tid: str, pair: tuple) -> None:
        """Two registered bots named each other for event ``tid``: entered as one pair (the
        first to ask North or East: schedule.join_pair), then each waits for its tables."""
        if any(c.gone for c in pair):
            for c in pair:
                if not c.gone:
                    c.refuse(f"your partner left before {tid} took you; send JOIN-T again")
            return
        try:
            await sync_to_async(schedule.join_pair)(int(tid[1:]), pair[0].bot_id, pair[1].bot_id)
        except ValueError as exc:
            for c in pair:
                c.refuse(f"cannot join {tid}: {exc}")
            return
        log.info("bridge: %s and %s entered event %s", pair[0].name, pair[1].name, tid)
        for c in pair:
            self.start_event(c, int(tid[1:]))

    def start_event(self, client: "BridgeClient", event: int) -> None:
        """Seat ``client`` at its next table of pair event ``event``, in the background."""
        if not client.gone:
            asyncio.get_running_loop().create_task(self.play_event(client, event))

    async def play_event(self, client: "BridgeClient", event: int) -> None:
        """``client``'s next table of pair event ``event``: a seat the tournament's match holds
        for its bot, taken through the arena's seating as ``JOIN-M ANY`` takes one (waiting,
        connected, while the event has tables to make for it; ``JOINED`` when seated).  Before
        the event starts it looks again every :data:`EVENT_LOOK_S`.  With no table left: the
        connection is closed, as after a match (``NAK`` first if the event was cancelled)."""
        while not client.gone:
            seat = client.new_seat()
            seat.event = event
            try:
                seat_id = await self.arena.seat_bot(GAME, seat, held_only=True)
            except SeatingBusy:
                client._unseat(seat)
                await asyncio.sleep(EVENT_LOOK_S)
                continue
            except LookupError:
                seat_id = None
            if seat_id is not None:
                seat.seat_id = seat_id
                return
            client._unseat(seat)
            if client.gone:
                return
            status, note = await sync_to_async(
                lambda: Tournament.objects.filter(pk=event).values_list("status", "note").first() or ("", ""))()
            if status == Tournament.Status.SCHEDULED:
                await asyncio.sleep(EVENT_LOOK_S)
                continue
            if status == Tournament.Status.CANCELLED:
                client.send([protocol.nak(f"event E{event} was cancelled: {note}")])
            log.info("bridge %s: no table left in event E%d (%s)", client.name, event, status)
            client.conn.close()
            return


class BridgeClient:
    """One connection's lines (a :class:`~games.arena.bots.transport.LineHandler`)."""

    def __init__(self, conn: LineConnection, door: BridgeDoor):
        self.conn = conn
        self.door = door
        self.name: str | None = None
        self.bot_id: int | None = None
        self.seat: BridgeTextSeat | None = None
        self.gone = False
        self.busy = False  # a HELLO or JOIN in hand (database work): later lines wait for it
        self.held: deque[bytes] = deque()
        self.refusals = 0

    @property
    def host(self) -> str:
        return self.conn.host

    # --- writing -----------------------------------------------------------------------------
    def send(self, lines: list[str]) -> None:
        self.conn.write(protocol.encode(lines))

    def refuse(self, why: str) -> None:
        """A ``NAK``; past :data:`MAX_REFUSALS` the connection is closed."""
        self.refusals += 1
        self.send([protocol.nak(why)])
        if self.refusals >= MAX_REFUSALS:
            log.info("bridge %s (%s): %d refused lines; closed", self.conn.peer, self.name, self.refusals)
            self.send([protocol.nak(f"{self.refusals} refused lines: disconnected")])
            self.conn.close()

    def close(self) -> None:
        """The seat's connection is replaced or dropped by the seat (BridgeBotSeat's link)."""
        self.conn.close()

    # --- reading -----------------------------------------------------------------------------
    def on_bad_line(self, reason: str) -> None:
        """A line over the bound (the connection skipped it without reading it all)."""
        self.refuse(f"line too long: more than {protocol.MAX_LINE} bytes, at most {protocol.MAX_LINE}; skipped")

    def on_line(self, line: bytes) -> None:
        if self.busy:  # answered in order, once the HELLO or JOIN in hand is
            if len(self.held) >= MAX_HELD_LINES:
                self.refuse(f"more than {MAX_HELD_LINES} lines sent before the answer to your HELLO or JOIN")
            else:
                self.held.append(line)
            return
        try:
            msg = protocol.parse_line(line)
        except ProtocolError as exc:
            self.refuse(str(exc))
            return
        if isinstance(msg, protocol.Hello):
            self._run(self._hello(msg))
        elif self.name is None:
            self.refuse("send HELLO <your name> first")
        elif isinstance(msg, protocol.GamesRequest):
            self._run(self._games())
        elif isinstance(msg, protocol.TournamentsRequest):
            self._run(self._tournaments())
        elif isinstance(msg, (protocol.JoinM, protocol.JoinT)) and self.seat is not None:
            self.refuse(f"you play in event E{self.seat.event}: wait for your table" if self.seat.event
                        and self.seat.match_id is None else f"you are seated at game {self.seat.match_id} already")
        elif isinstance(msg, protocol.JoinT) and msg.tournament and msg.tournament.startswith("E"):
            self._run(self._join_event(msg.partner, msg.tournament))
        elif isinstance(msg, protocol.JoinM):
            self.door.pairing.drop(self)  # a JOIN-M replaces a JOIN-T not yet met
            self._run(self._join_m(msg))
        elif isinstance(msg, protocol.JoinT):
            self.door.join_team(self, msg.partner, msg.tournament)
        elif self.seat is None:
            self.refuse("you have no seat: JOIN-M or JOIN-T first")
        else:
            why = self.seat.offer_action(msg.call if isinstance(msg, protocol.Bid) else msg.card)
            if why is not None:
                self.refuse(why)
            else:
                self.conn.asked_for()

    def _run(self, work) -> None:
        """Do ``work`` (a coroutine: database steps) while the client's next lines wait."""
        self.busy = True

        async def run():
            try:
                await work
            except Exception:
                log.exception("bridge %s: request failed", self.conn.peer)
                self.refuse("the server could not do that now; try again")
            finally:
                self.busy = False
            while self.held and not self.busy and not self.gone:
                self.on_line(self.held.popleft())
        asyncio.get_running_loop().create_task(run())

    async def _hello(self, msg: protocol.Hello) -> None:
        """Who the client is (a registered bot's key checked), then its seat back if it holds
        one (``JOINED`` lines and the resync), else the ``GAMES`` list.  A name held by
        another player is refused; held by the same player (the same key, or no key from the
        same address), the newer connection wins and the older one is told and closed."""
        if self.name is not None:
            self.refuse(f"you said HELLO already, as {self.name}")
            return
        door, name, bot_id = self.door, msg.name, None
        if msg.key is not None:
            bot = SimpleNamespace(bot_id=None, display_name=name)
            try:
                await door.arena.identify_bot(GAME, msg.key, self.host, bot)
            except KeyRefused as exc:
                self.refuse(f"bot key refused: {exc}")
                return
            name, bot_id = bot.display_name, bot.bot_id
        elif await door.arena.claims_bot_name(GAME, name):
            self.refuse(f"{name!r} is a registered bot's name (or looks like one): send its key, or choose another")
            return
        if self.gone:
            return
        seat, other = door.seats.get(name), door.clients.get(name)
        for holder in (seat, other):
            if holder is not None and not (holder.bot_id == bot_id if bot_id is not None
                                           else holder.bot_id is None and holder.host == self.host):
                self.refuse(f"the name {name!r} is taken: choose another")
                return
        self.name, self.bot_id = name, bot_id
        self.conn.spoke()
        door.clients[name] = self
        if other is not None:  # the newer connection wins
            other.seat = None
            other.send([protocol.nak("another connection said HELLO with your name: this one is closed")])
            other.conn.close()
        if seat is None:
            await self._games()
            return
        self.seat = seat
        seat.attach(self)
        if seat.table is not None:
            self.send(seat.resync_lines())
        elif seat.match_id is not None:  # still waiting for players
            names = [n for _, n in await door.arena.seated_names(seat.match_id)]
            seat.announce(seat.match_id, seat.index, names, again=True)

    async def _games(self) -> None:
        self.send([protocol.games(await self.door.open_game_ids())])

    async def _tournaments(self) -> None:
        """``TOURNAMENTS``: the team matches waiting for a pair, then the arena's pair events
        that pairs may join (``E`` and the tournament's number)."""
        events = await sync_to_async(schedule.open_events)(GAME)
        self.send([protocol.tournaments(self.door.pairing.ids() + [f"E{pk}" for pk in events])])

    async def _join_event(self, partner: str, tid: str) -> None:
        """``JOIN-T E<n> <partner>``: a registered bot (its key given with HELLO) asks to enter
        pair event ``n`` with ``partner``; once both named each other they are entered
        (:meth:`BridgeDoor._enter_event`).  A bot of a pair that entered already (a new
        connection) is taken back at once, whatever partner it names."""
        if self.bot_id is None:
            self.refuse(f"event {tid} is for registered bots: say HELLO with your bot's name and key, "
                        'e.g. HELLO "my-bot" arena-key-...')
            return
        event = int(tid[1:])
        if event > MAX_EVENT_ID:  # 31 digits may come: past a database id, no event has it
            self.refuse(f"cannot join {tid}: there is no bridge pair event {event}")
            return
        if await sync_to_async(schedule.entered)(event, self.bot_id):
            self.door.pairing.drop(self)
            self.door.start_event(self, event)
            return
        why = await sync_to_async(schedule.event_refusal)(event)
        if why:
            self.refuse(f"cannot join {tid}: {why}")
            return
        if not self.gone:
            self.door.join_team(self, partner, tid)

    def new_seat(self) -> BridgeTextSeat:
        """The seat endpoint this client joins with, attached to it and known by its name."""
        seat = BridgeTextSeat(self.door, self.name, self.bot_id, self.host, self.door.deadline_s)
        seat.attach(self)
        self.seat = seat
        self.door.seats[self.name] = seat
        return seat

    async def _join_m(self, msg: protocol.JoinM) -> None:
        arena, seat = self.door.arena, self.new_seat()
        where = "" if msg.seat is None else f" as {SEAT_NAMES[msg.seat]}"
        try:
            if msg.game == "NEW":
                seat_id = await arena.seat_bot(GAME, seat, new_table=True, index=msg.seat)
            elif msg.game == "ANY":
                seat_id = await arena.seat_bot(GAME, seat, index=msg.seat)
            elif not msg.game.isdigit():
                raise LookupError(f"no game {msg.game}: game ids are numbers (GAMES lists the open ones)")
            else:
                seat_id = await arena.seat_bot_in(GAME, int(msg.game), seat, index=msg.seat)
        except (LookupError, SeatingBusy) as exc:
            self._unseat(seat)
            why = str(exc).replace("room", "game")
            if msg.game.isdigit() and not isinstance(exc, SeatingBusy):
                why = await self._why_not(int(msg.game), msg.seat)
            self.refuse(f"cannot join{where}: {why}")
            return
        if seat_id is None:  # hung up meanwhile
            self._unseat(seat)
            return
        seat.seat_id = seat_id

    async def _why_not(self, match_id: int, index: int | None) -> str:
        names = [n for _, n in await self.door.arena.seated_names(match_id)]
        if not names or match_id not in await self.door.open_game_ids():
            return f"no game {match_id} is open to join (GAMES lists them)"
        if index is not None and names[index] is not None:
            return f"{SEAT_NAMES[index]}'s seat of game {match_id} is taken"
        return f"game {match_id} has no free seat for a bot"

    def _unseat(self, seat: BridgeTextSeat) -> None:
        self.door.forget(seat)
        if self.seat is seat:
            self.seat = None

    def on_close(self) -> None:
        self.gone = True
        door = self.door
        if self.name is not None and door.clients.get(self.name) is self:
            del door.clients[self.name]
        alone = door.pairing.drop(self)
        if alone is not None:
            alone.refuse("your partner left; send JOIN-T again")
        seat = self.seat
        if seat is None or seat.link is not self:
            return
        seat.detach(self)
        if seat.table is None and not seat.over:  # not started: the seat is freed, as every door's
            door.forget(seat)
            if seat.seat_id is not None:
                asyncio.get_running_loop().create_task(door.arena.bot_left(seat.seat_id))
        log.info("bridge %s (%s) disconnected", self.conn.peer, self.name)


async def start_listener(arena):
    """Listen for bridge bots in the text protocol on ``BRIDGE_HOST:BRIDGE_PORT`` (default
    5534); returns the door (``close()`` stops it)."""
    cfg = settings.ARENA
    door = BridgeDoor(arena, cfg["BRIDGE_BOT_DEADLINE"])
    try:
        door.listener = await start_line_server(
            # One byte more than the protocol's bound for a "\r" before the "\n"; the codec
            # itself refuses a longer line with its length.
            lambda conn: BridgeClient(conn, door), cfg["BRIDGE_HOST"], cfg["BRIDGE_PORT"], protocol.MAX_LINE + 1,
            cfg["MAX_CONNECTIONS"], "bridge", lines_per_s=cfg["LINES_PER_S"], burst=cfg["LINES_BURST"],
            admission=admission_from_settings(cfg),
            deadlines=Deadlines(cfg["FIRST_MESSAGE_TIMEOUT"], cfg["MESSAGE_TIMEOUT"]))
    except OSError:
        door.close()
        raise
    return door
