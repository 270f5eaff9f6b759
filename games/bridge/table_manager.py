"""The Blue Chip Bridge table manager: bridge's second bot door (issue 24, "The Blue Chip table
manager"; ../shared/specs/bridge-text.notes.md, "The protocol real bridge robots speak").

Robots that speak the table-manager protocol version 18 or 19 (WBridge5, Jack, GIB, Bridge
Baron, BEN) connect to ``BRIDGE_HOST:BRIDGE_TABLE_MANAGER_PORT`` unchanged and sit at the same
tables as the text protocol's bots, built-in bots and people.  The wire codec and each robot's
conversation are pure (games/bridge/bluechip.py, :class:`~games.bridge.bluechip.Connection`);
the seat's requests, deadlines and forced actions are shared with the other door
(games/bridge/bot_seat.py).  What lives here is the I/O between them:

- **Seating.**  ``Connecting "TEAM" as North using protocol version 18`` takes the oldest open
  bot seat at North (else an automatic table: :meth:`BridgeSpec.auto_config`, instant replay);
  ``as ANYPL`` any open bot seat, answered with the seat given.  The robot's team name is its
  display name, unless it is a registered bot's name (a robot presents no key).
- **Teams.**  When the match starts, ``Teams : N/S : "A" E/W : "B"``: each side's name is the
  team of its first Blue Chip robot, else the display name of its first seat; `` Playing IMP``
  at an instant-replay table.
- **Lines out.**  After every step each robot's :class:`Connection` gets the seat's observation
  and the step's happenings and answers what its robot asked.  To a version-18 robot each line
  goes out ``BRIDGE_TABLE_MANAGER_PAUSE`` seconds after the one before (older robots lose lines
  that come too fast); the lines wait in a queue of at most :data:`MAX_QUEUED_LINES` per
  connection (a robot that asks for more without reading is dropped), never in the match.
- **Calls and cards** go to :meth:`BridgeBotSeat.offer`; one that comes before the runner asks
  (a fast robot) waits for the request.  Blue Chip has no error line: a refused (illegal) one
  is logged and the request stays open until its deadline, then the forced action is taken.
  A robot whose view then differs from the table's (``Connection.out_of_step``: a forced
  action, a refused call) is disconnected, as table managers do, so that it reconnects and
  replays the board as the table has it.
- **Reconnecting.**  One connection per seat.  A robot that drops is replaced by the forced
  action at each deadline; a new ``Connecting`` with the same team name for the seat whose
  robot is gone (or ``ANYPL``) is put back in it: it gets the board as far as played and
  continues.
- **The end.**  ``End of session`` once the robot has read the last board (or at once when the
  match is aborted), then the connection is closed.

Bounds (docs/architecture.md, "Bounds and admission"): the core's admission per address,
:data:`~games.bridge.bluechip.MAX_LINE` characters a line, ``ARENA_LINES_PER_S``, the
first-message and message deadlines, ``ARENA_MAX_BAD_LINES`` lines that are no protocol line
(logged, at most :data:`MAX_LOGGED_BAD_LINES` each), then the connection is closed.
"""
from __future__ import annotations

import asyncio
import logging
from collections import deque

from django.conf import settings

from games.arena.bots.transport import Deadlines, LineConnection, admission_from_settings, start_line_server
from games.arena.play.arena import SeatingBusy
from games.base import ProtocolError
from games.bridge import bluechip
from games.bridge.bot_seat import BridgeBotSeat
from games.bridge.rules import BridgeState

log = logging.getLogger("arena.bridge.table_manager")

GAME = "bridge"
#: Lines waiting for one robot at most (a board is about 120 lines, and a robot gets each line
#: it asks for): past it the robot asks without reading, and is disconnected.
MAX_QUEUED_LINES = 400
#: Bad lines logged per connection before the log goes quiet for it.
MAX_LOGGED_BAD_LINES = 20
#: The display name of a robot whose team name is a registered bot's (it presented no key).
UNVERIFIED_NAME = "Blue Chip robot"


class Table:
    """What the Blue Chip robots of one match share: the call explanations (an alert reaches
    the bidder's opponents through it) and the robots by seat index."""

    def __init__(self, match_id: int):
        self.match_id = match_id
        self.explanations: dict = {}
        self.robots: dict[int, RobotSeat] = {}


class TableManager:
    """The listener's state: the tables with Blue Chip robots, and the settings in force."""

    def __init__(self, arena, cfg: dict):
        self.arena = arena
        self.deadline_s = cfg["BRIDGE_BOT_DEADLINE"]
        self.pause_s = cfg["BRIDGE_TABLE_MANAGER_PAUSE"]
        self.max_bad_lines = cfg["MAX_BAD_LINES"]
        self.tables: dict[int, Table] = {}

    def table(self, match_id: int) -> Table:
        table = self.tables.get(match_id)
        if table is None:
            table = self.tables[match_id] = Table(match_id)
        return table

    def leave(self, robot: "RobotSeat") -> None:
        """``robot`` left its table before the match started: forget it there, and the table
        once no robot is left (a robot that connects and leaves again and again must not
        grow :attr:`tables`)."""
        table = robot.table
        if table is not None and table.robots.get(robot.index) is robot:
            del table.robots[robot.index]
            if not table.robots:
                self.tables.pop(table.match_id, None)

    def gone_robot(self, index: int | None, team: str) -> "RobotSeat | None":
        """The seat of a running match whose robot of team ``team`` dropped, at seat ``index``
        (None: any seat, for ``ANYPL``); the oldest table first."""
        for table in self.tables.values():
            for robot in table.robots.values():
                if (robot.gone and robot.started and not robot.closed and robot.team == team
                        and index in (None, robot.index)):
                    return robot
        return None


class RobotSeat(BridgeBotSeat):
    """A Blue Chip robot's seat: outlives its connection (``link``, a :class:`RobotLink`)."""

    def __init__(self, manager: TableManager, team: str):
        super().__init__(manager.deadline_s, team)
        self.manager = manager
        self.team = team
        self.seat_id: int | None = None
        self.index: int | None = None
        self.table: Table | None = None
        self.started = False
        self.closed = False
        self.state: BridgeState | None = None  # the match's state, once it started
        self.teams: tuple[str, str, str | None] | None = None
        #: A call or card sent before the runner asked for it, with the table's progress it
        #: was sent at (:func:`progress`).
        self.early: tuple[str, tuple] | None = None
        self._start_waiting = False  # the match started before the seat was registered

    # --- the runner's side ------------------------------------------------------------------
    def start(self, state: BridgeState, seat: int) -> None:
        self.state, self.started = state, True
        if self.table is None:  # still being registered (see RobotLink._seat)
            self._start_waiting = True
            return
        self.begin()

    def begin(self) -> None:
        """The match has started and the seat is registered: work out the team names, and send
        the robot what it is waiting for."""
        self._start_waiting = False
        names = self.table_names or [""] * 4

        def side(first: int, fallback: str) -> str:
            for i in (first, first + 2):
                robot = self.table.robots.get(i)
                if robot is not None:
                    return robot.team
            return bluechip.clean_team(names[first], bluechip.clean_team(names[first + 2], fallback))

        self.teams = (side(0, "N/S"), side(1, "E/W"), "IMP" if self.state.replay else None)
        if self.link is not None:
            self.link.join_match(self)

    def asked(self, state: BridgeState, seat: int) -> None:
        self.state = state
        early, self.early = self.early, None
        if early is not None:
            self.take(*early)

    def forced(self, action: str, why: str) -> None:
        self.early = None
        log.info("bridge table manager: %s (%s): %s, %s played for it", self.team,
                 bluechip.SEAT_NAMES[self._seat], why, action)

    def notify(self, state: BridgeState, seat: int, happenings: list[dict]) -> None:
        self.state = state
        if self.link is not None:
            self.link.observe(state.observation(seat), happenings)

    def close(self, result: dict | None) -> None:
        """The match ended (the robot reads to its last board, then ``End of session``) or
        was aborted (``End of session`` now)."""
        self.closed = True
        if self.table is not None:
            self.manager.tables.pop(self.table.match_id, None)
        if self.link is not None:
            self.link.finish(at_once=result is None)

    # --- the connection's side --------------------------------------------------------------
    def take(self, action: str, at: tuple) -> None:
        """The robot's call or card (not one the table has already), sent when the table's
        progress was ``at`` (:func:`progress`)."""
        if not self.waiting_for:
            self.early = (action, at)  # the runner asks in a moment
            return
        if at != progress(self.state):  # sent for a step the table has taken without it
            log.info("bridge table manager: %s (%s): %s comes too late; ignored", self.team,
                     bluechip.SEAT_NAMES[self._seat], action)
            return
        why = self.offer(action)
        if why is not None:
            log.warning("bridge table manager: %s (%s): %s refused: %s; the forced action comes at the deadline",
                        self.team, bluechip.SEAT_NAMES[self._seat], action, why)

    def detach(self, link) -> None:
        if self.link is link:
            self.early = None
        super().detach(link)


def progress(state: BridgeState) -> tuple[int, int, int]:
    """How far the table is: (boards finished, calls of the board, cards of the board)."""
    return state.played, len(state.calls), 4 * len(state.tricks) + len(state.trick)


class RobotLink:
    """One robot connection: the handler of its lines (:class:`LineConnection`), its
    :class:`~games.bridge.bluechip.Connection`, and its queue of lines to write."""

    def __init__(self, conn: LineConnection, manager: TableManager):
        self.conn = conn
        self.manager = manager
        self.proto = bluechip.Connection()
        self.robot: RobotSeat | None = None
        self.queue: deque[str] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self.closing = False  # close once the queue is written
        self.finishing = False  # the match is over: close once the robot has read it all
        self.bad_lines = 0

    @property
    def name(self) -> str:
        return f"{self.conn.peer} ({self.proto.team or '?'})"

    # --- lines in ---------------------------------------------------------------------------
    def on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            step = self.proto.feed(line)
        except ProtocolError as exc:
            self.on_bad_line(str(exc))
            return
        self.send(step.lines)
        if step.connect is not None:
            self.conn.spoke()
            asyncio.get_running_loop().create_task(self._seat(step.connect))
        elif step.action and not step.replayed and self.robot is not None:
            self.conn.asked_for()  # an answer: it does not count against the line rate
            board = self.proto.boards[0]  # the robot's board, its action counted
            at = (board.serial, len(self.proto.calls) - bool(step.call), len(self.proto.cards) - bool(step.card))
            self.robot.take(step.action, at)
        self._after_step()

    def on_bad_line(self, reason: str) -> None:
        """A line that is no protocol line, or not one expected now: logged (Blue Chip has no
        error line); at ``ARENA_MAX_BAD_LINES`` the connection is closed."""
        self.bad_lines += 1
        if self.bad_lines <= MAX_LOGGED_BAD_LINES:
            log.warning("bridge table manager %s: %s", self.name, reason)
        if self.bad_lines == self.manager.max_bad_lines:
            log.warning("bridge table manager %s: %d bad lines; disconnected", self.name, self.bad_lines)
            self.conn.close()

    def on_close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        robot = self.robot
        if robot is None:
            return
        robot.detach(self)
        if robot.closed:
            return
        if robot.started:
            log.info("bridge table manager %s disconnected: forced actions at its deadlines until it reconnects",
                     self.name)
        elif robot.seat_id is not None:  # waiting at a table: the seat is free again
            self.manager.leave(robot)
            asyncio.get_running_loop().create_task(self.manager.arena.bot_left(robot.seat_id))

    # --- seating ----------------------------------------------------------------------------
    async def _seat(self, msg: bluechip.ClientLine) -> None:
        """Put the robot in its seat of a running match if it is coming back, else at a table
        (``as North``: that position; ``ANYPL``: any)."""
        manager, arena = self.manager, self.manager.arena
        robot = manager.gone_robot(msg.seat, msg.team)
        if robot is not None:  # no await before attach: nobody else can take it meanwhile
            self._reattach(robot)
            return
        robot = self.robot = RobotSeat(manager, msg.team)
        robot.attach(self)
        try:
            if await arena.claims_bot_name(GAME, msg.team):
                robot.display_name = UNVERIFIED_NAME
            seat_id = await arena.seat_bot(GAME, robot, index=msg.seat, start=False)
            if seat_id is None:  # hung up while it waited
                return
            robot.seat_id = seat_id
            match_id = await arena.match_of_seat(seat_id)
            index = msg.seat
            if index is None:
                index = [sid for sid, _ in await arena.seated_names(match_id)].index(seat_id)
        except SeatingBusy as exc:
            log.warning("bridge table manager %s: not seated: %s", self.name, exc)
            self.conn.close()
            return
        except Exception:
            log.exception("bridge table manager %s: could not seat this robot", self.name)
            self.conn.close()
            return
        if robot.gone:  # hung up while it was seated
            await arena.bot_left(seat_id)
            return
        robot.index = index
        robot.table = manager.table(match_id)
        robot.table.robots[index] = robot
        self.proto.explanations = robot.table.explanations
        self.send(self.proto.take_seat(index))
        log.info("bridge table manager %s seated at %s of match %d", self.name, bluechip.SEAT_NAMES[index], match_id)
        if robot._start_waiting:
            robot.begin()
        await arena.table_changed(match_id)

    def _reattach(self, robot: RobotSeat) -> None:
        """A robot back in its seat: the handshake, then the board as far as played."""
        self.robot = robot
        robot.attach(self)
        self.proto.explanations = robot.table.explanations
        self.send(self.proto.take_seat(robot.index))
        log.info("bridge table manager %s reconnected to %s of match %d", self.name,
                 bluechip.SEAT_NAMES[robot.index], robot.table.match_id)
        self.join_match(robot)

    def join_match(self, robot: RobotSeat) -> None:
        """The match runs (or ran): the teams line and the seat's view of the table."""
        self.send(self.proto.set_teams(*robot.teams))
        self.observe(robot.state.observation(robot.index), ())

    # --- lines out --------------------------------------------------------------------------
    def observe(self, obs: dict, happenings) -> None:
        """A step of the match: what the robot asked for and can now have."""
        self.send(self.proto.observe(obs, happenings))
        self._after_step()

    def _after_step(self) -> None:
        if self.proto.out_of_step and not self.conn.is_closing():
            # Its own view no longer matches the table: it must start the board again.
            log.warning("bridge table manager %s out of step (%s): disconnected, to reconnect and replay the board",
                        self.name, self.proto.out_of_step)
            self.queue.clear()
            self.conn.close()
        elif self.finishing and self.proto.phase == bluechip.OVER:
            self._close_when_written()

    def finish(self, at_once: bool) -> None:
        """The match is over: ``End of session`` now (``at_once``, an aborted match), else once
        the robot has read its last board; a robot that has not within its deadline gets it
        then."""
        if at_once:
            self.send(self.proto.end_session())
            self._close_when_written()
            return
        self.finishing = True
        self._after_step()
        if not self.closing:
            asyncio.get_running_loop().call_later(self.manager.deadline_s, self.finish, True)

    def send(self, lines: list[str]) -> None:
        """Write ``lines``: at once to a version-19 robot (or with no pause set), else queued,
        each after the pause."""
        if not lines or self.conn.is_closing():
            return
        pause = self.manager.pause_s if self.proto.pauses else 0.0
        if pause <= 0 and not self.queue:
            for line in lines:
                self.conn.write(bluechip.encode(line))
            return
        if len(self.queue) + len(lines) > MAX_QUEUED_LINES:
            log.warning("bridge table manager %s: %d lines wait for it unread; disconnected", self.name,
                        len(self.queue))
            self.queue.clear()
            self.conn.close()
            return
        self.queue.extend(lines)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(pause, self._write_next)

    def _write_next(self) -> None:
        self._timer = None
        if self.conn.is_closing() or not self.queue:
            return
        self.conn.write(bluechip.encode(self.queue.popleft()))
        if self.queue:
            self._timer = asyncio.get_running_loop().call_later(self.manager.pause_s, self._write_next)
        elif self.closing:
            self.conn.close()

    def _close_when_written(self) -> None:
        self.closing = True
        if not self.queue:
            self.conn.close()


async def start_listener(arena):
    """Listen for Blue Chip robots on ``BRIDGE_HOST:BRIDGE_TABLE_MANAGER_PORT`` (default 2000)
    with the core's bounds (module docstring).  Raises ``OSError`` when it cannot listen
    there (the arena names the door's port setting)."""
    cfg = settings.ARENA
    manager = TableManager(arena, cfg)
    host, port = cfg["BRIDGE_HOST"], cfg["BRIDGE_TABLE_MANAGER_PORT"]
    return await start_line_server(
        lambda conn: RobotLink(conn, manager),
        host, port, bluechip.MAX_LINE + 1,  # + the CR of a CRLF
        cfg["MAX_CONNECTIONS"], "bridge table manager", lines_per_s=cfg["LINES_PER_S"],
        burst=cfg["LINES_BURST"], admission=admission_from_settings(cfg),
        deadlines=Deadlines(cfg["FIRST_MESSAGE_TIMEOUT"], cfg["MESSAGE_TIMEOUT"]))
