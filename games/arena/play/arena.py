"""The arena process: bot listeners, seating, match runners and the control channel.

In the default one-process server it shares Daphne's asyncio loop; scaled, it runs alone
(``manage.py serve --role arena``) and talks to the web processes and the other arenas only
through the channel layer (its own control channel, registered in its
:class:`~games.arena.models.ArenaProcess` row, and the presence group) and the database.
Several arena processes may share one database: each holds the matches it runs and the open
tables its connected bots sit at (``Match.owner``, a lease it renews), records only its own
runs' ends, and recovers only what a dead arena left (docs/architecture.md, *Several arenas*).

:class:`Arena` is built from two halves: :class:`~games.arena.play.seating.Seating` (where a
connected bot sits until its table starts) and :class:`~games.arena.play.running.Running` (a
full table's match from its start to its recorded end, and what organisers do to it).  Here
are the life cycle, the leases, the control channel and the sweep.  The names the games and
the web use are importable from here.
"""
from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
from collections import deque
from datetime import timedelta

from asgiref.sync import sync_to_async
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from games.arena import registry
from games.arena.bots import http_bots
from games.arena.bots.bot_sockets import SocketGames
from games.arena.models import ArenaProcess, Match
from games.arena.play import control, tables
from games.arena.play.analyses import Analyst
from games.arena.play.eventlog import EventWriter
from games.arena.play.presence import PRESENCE_GROUP, Watched
from games.arena.play.running import ABANDONED, LEASE_LOST, Running, end_notice, over_message
from games.arena.play.runner import MatchRunner
from games.arena.play.seating import NameTaken, Seating, SeatingBusy, auto_pace
from games.arena.play.seats import SeatEndpoint
from games.arena.tournaments import schedule

__all__ = ["ABANDONED", "ADMIN_REQUESTS", "FORWARD_WAIT_S", "LEASE_LOST", "NO_ARENA", "SWEEP_S", "Arena",
           "ListenerError", "NameTaken", "SeatingBusy", "auto_pace", "cannot_listen", "end_notice", "over_message"]

log = logging.getLogger("arena")

#: Seconds an arena waits for another to answer an organiser's request it sent on (pause,
#: step, cancel of a match that runs there) before it says that arena did not answer.
FORWARD_WAIT_S = 10.0
#: What a page is told when no live arena runs the match it plays or watches (the arena that
#: got its message, or its web process, looked in the database).
NO_ARENA = "No arena is running this match."
#: Organisers' requests one arena sends on to the arena that runs the match (:meth:`Arena.pause`,
#: :meth:`Arena.step`, :meth:`Arena.cancel`), answered with ``arena.answer``.
ADMIN_REQUESTS = ("arena.pause", "arena.step", "arena.cancel")
#: Seconds between two sweeps (:meth:`Arena.sweep`): a dead arena's matches are aborted at
#: most ``ARENA_LEASE`` plus this after its last renewal.
SWEEP_S = 2.0


class ListenerError(RuntimeError):
    """A bot listener could not start (its port is taken, its address is not this machine's);
    the message names the setting to change."""


#: Seconds :meth:`Arena.stop` waits for its cancelled tasks before it goes on without them.
STOP_WAIT_S = 30.0


async def _ended(tasks: list[asyncio.Task], what: str) -> None:
    """Wait for cancelled ``tasks`` to end, at most :data:`STOP_WAIT_S`: a task that does not
    (it swallowed its cancellation, or waits on something that never comes) is logged with
    its stack rather than holding the stop for ever (its match's lease runs out instead)."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=STOP_WAIT_S)
    for task in pending:
        frames = io.StringIO()
        task.print_stack(file=frames)
        log.error("stopping: a %s (%s) did not end %g s after it was cancelled; going on without it:\n%s",
                  what, task.get_name(), STOP_WAIT_S, frames.getvalue())


def cannot_listen(what: str, host: str, port: int, reason: str, setting: str) -> str:
    """The message for a port the server could not listen on, naming the ``setting`` to
    change: the same words for every listener."""
    return f"{what}: cannot listen on {host}:{port} ({reason}); set {setting} to a free port"


class Arena(Seating, Running):
    """Owns every running match of this process.  ``start()`` then, at shutdown, ``stop()``."""

    def __init__(self, listen: bool = True):
        self.listen = listen
        #: This arena's name (``ArenaProcess.name``, ``Match.owner``), new at every start.
        self.name = control.new_arena_name()
        self.lease_s: float = settings.ARENA["LEASE"]
        #: Claims take tables while fewer than this many matches run here (ARENA_CLAIM_RUNNING).
        self.claim_running: int = settings.ARENA["CLAIM_RUNNING"]
        #: The last claim was full or had no room: claim again as soon as a match ends.
        self._more_work = False
        #: Some tournament runs (schedule.step said so): each match's end sweeps again at once.
        self._tournaments = False
        self._recovered_at = float("-inf")  # loop time of the sweep's last recovery
        #: Set (and replaced) whenever this arena made tournament matches: the entrants waiting
        #: for their next match's seat (seating.TOURNAMENT_WAIT) look again at once.
        self.tournament_tables = asyncio.Event()
        self._told_tournament: dict[int, float] = {}  # tournament id -> when its pages were last told
        self._tell_later: set[int] = set()  # tournaments whose pages are told when their second is over
        self._sweep_now = asyncio.Event()
        self.layer = get_channel_layer()
        self.writer = EventWriter()
        self.runners: dict[int, MatchRunner] = {}
        self.tasks: dict[int, asyncio.Task] = {}
        #: Protocol bots seated at tables that have not started: seat id -> endpoint.
        self.waiting: dict[int, SeatEndpoint] = {}
        #: Bots seated whose seat change the hooks have not told yet: seat id -> match id.  A
        #: table does not start while one is left (a start by another seat's change would
        #: leave that bot ungreeted: bridge's JOINED), its own change starts it.
        self._greeting: dict[int, int] = {}
        self.listeners: list = []
        #: Bots waiting to be seated: (endpoint, work, future), taken by one worker task; past
        #: the bound new ones are refused, so a burst of connections cannot queue without end.
        self._seat_queue: deque = deque()
        self._seat_worker: asyncio.Task | None = None
        self.max_pending_seatings: int = settings.ARENA["MAX_PENDING_SEATINGS"]
        self._background: list[asyncio.Task] = []
        self.server_times: list[float] | None = None  # benchmarks switch this on
        self.started = asyncio.Event()
        #: Runs this arena plays (their runner is in its match): match id -> the attempt
        #: number it started under (tables.Run); the lease loop checks they are still its.
        self.playing: dict[int, int] = {}
        #: Taken while a table is made this arena's for its bots or given back (a claim's
        #: database work and its entry in ``waiting``, or a release), so a bot leaving never
        #: gives away a table another of this arena's bots is being seated at.
        self._holding = asyncio.Lock()
        #: Watchers of tables that have not started yet, and tables to start paused.
        self.pending_watchers: dict[int, list] = {}
        self.start_paused: set[int] = set()
        #: Tables whose start is in hand (marked running, runner not yet registered).
        self.starting: set[int] = set()
        #: Bots over WebSocket: the games that take them here and their open sockets.
        self.sockets = SocketGames(self.layer.send)
        #: Matches that ended here (aborted) whose end the database has not taken yet (it
        #: failed at that moment): match id -> abort reason; the sweep tries again, so no
        #: match stays 'running' without a runner while this process lives.
        self.unrecorded_aborts: dict[int, str] = {}
        #: The run of each of those, when one was started (the retry records only for it).
        self._unrecorded_runs: dict[int, tables.Run] = {}
        #: ``await hook(match_id)`` for each, when a table's seats changed and before it may
        #: start: a transport that tells its bots who joined (Hanabi's CONNECTION_RESPONSE)
        #: hears of people who took a seat through the web.
        self.table_hooks: list = []
        #: Which view groups the web processes watch (the runners publish only to those).
        self.watched = Watched()
        #: Analyses of finished matches (games/arena/play/analyses.py), one part at a time.
        self.analyst = Analyst()

    # --- life cycle -------------------------------------------------------------------------
    async def start(self) -> None:
        """Recover what dead arenas left (:meth:`_recover`: only matches whose lease
        expired), start the writer, the control loop, the lease loop, the periodic sweep and
        (if ``listen``) every listening door of every game (``GameSpec.doors``).  Raises
        :class:`ListenerError` naming the door's port setting when one cannot start (e.g. its
        port is taken)."""
        await self._recover(starting=True)
        self.writer.start()
        http_bots.client()  # build it now (its TLS context takes ~30 ms), not on a bot's first move
        loop = asyncio.get_running_loop()
        # The default prefix, as every consumer's: channels-redis reads all of a process's
        # channels through one reader that serves only the prefix it was started for, so a
        # channel of another prefix here would starve while a consumer of this process (a
        # bot socket, a page) waits on its own.
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(PRESENCE_GROUP, self.channel)  # the one broadcast it hears
        await sync_to_async(self._register)()
        self._background.append(loop.create_task(self._lease_loop(), name="arena-lease"))
        self._background.append(loop.create_task(self._control_loop(), name="arena-control"))
        self._background.append(loop.create_task(self._sweep_loop(), name="arena-sweep"))
        self.analyst.start()  # parts a previous process left pending first
        if self.listen:
            for spec in registry.all_games():
                for door in spec.doors:
                    if door.listens:
                        try:
                            self.listeners.append(await door.start(self))
                        except OSError as exc:
                            raise ListenerError(cannot_listen(f"{spec.door_label(door)} bot listener", *door.address(),
                                                              exc.strerror or str(exc), door.port_setting)) from None
        self.started.set()

    def _register(self) -> None:
        """Write this arena's :class:`ArenaProcess` row: its name, channel and first lease."""
        ArenaProcess.objects.update_or_create(name=self.name, defaults={
            "channel": self.channel, "host": socket.gethostname(), "pid": os.getpid(),
            "alive_until": timezone.now() + timedelta(seconds=self.lease_s)})

    def _renew(self, playing: dict[int, int], seats: list[int]) -> tuple[list[int], list[tuple[int, int]]]:
        """Renew this arena's lease on itself and on every match it holds (one UPDATE each;
        its row again if another arena removed it as dead after a stall), then find what it
        lost meanwhile: ``(runs, seats)``, the matches of ``playing`` (match id -> attempt)
        no longer running under this arena's run, and ``(seat id, match id)`` of the
        ``seats`` of its waiting bots at tables no longer its (tables.lost_runs,
        tables.lost_seats)."""
        if not ArenaProcess.objects.filter(name=self.name).update(alive_until=tables.lease_end(self.lease_s)):
            self._register()
        tables.renew_leases(self.name, self.lease_s)
        return tables.lost_runs(self.name, playing), tables.lost_seats(self.name, seats)

    async def _lease_loop(self) -> None:
        """Every third of ``ARENA_LEASE``, :meth:`_renew`, then let go of what this arena
        lost (:meth:`_let_go`); a failure is logged and retried at the next turn (two missed
        turns still leave a third of the lease)."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await self.renew()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not renew the arena's lease")

    async def renew(self) -> None:
        """One turn of the lease loop: renew every lease this arena holds; a run it lost
        (another arena aborted the match after this one stalled past its lease) is cancelled,
        its pages told :data:`LEASE_LOST` and nothing of it recorded; a waiting bot whose
        table it lost (freed by another arena, or cancelled) is let go (closed, no result)."""
        playing, waiting = dict(self.playing), dict(self.waiting)
        runs, seats = await sync_to_async(self._renew)(playing, list(waiting))
        for match_id in runs:
            task = self.tasks.get(match_id)
            if task is None or self.playing.get(match_id) != playing[match_id]:
                continue  # it ended meanwhile (its end recorded or refused on its own)
            log.warning("match %d: this arena lost its lease on it; its run is cancelled", match_id)
            self.runners[match_id].stop_reason = LEASE_LOST
            task.cancel()
        for seat_id, match_id in seats:
            if match_id in self.starting or match_id in self.tasks or self.waiting.get(seat_id) is not waiting[seat_id]:
                continue
            log.warning("match %d: this arena no longer holds the table; its bot at seat %d is let go",
                        match_id, seat_id)
            self.waiting.pop(seat_id).close(None)

    async def _recover(self, starting: bool = False) -> None:
        """What dead arenas left (their lease expired; never a live arena's), at start:
        :meth:`_recover_now` in one trip to the database thread, then their pages told
        (:meth:`_recovered`).  ``starting``: also what a previous process of this arena's
        name left (``ARENA_NAME`` set), whatever its lease."""
        await self._recovered(*await sync_to_async(self._recover_now)(starting))

    def _recover_now(self, starting: bool = False) -> tuple[list[int], int]:
        """The database half of :meth:`_recover` and of every sweep (synchronous): dead
        arenas' running matches aborted (tables.abort_stale), their open tables freed for
        any arena (tables.free_connected_bot_seats), their :class:`ArenaProcess` rows
        removed (tables.remove_dead_arenas).  ``(the matches aborted, the seats freed)``."""
        if starting:
            tables.free_own_bot_seats(self.name)
        stale = tables.abort_stale(self.name, starting)
        ghosts = tables.free_connected_bot_seats(self.name)
        tables.remove_dead_arenas(self.name)
        return stale, ghosts

    async def _recovered(self, stale: list[int], ghosts: int) -> None:
        """Log what :meth:`_recover_now` did and tell the pages of the ``stale`` matches
        it aborted how they ended."""
        if stale:
            log.warning("marked %d match(es) of stopped arenas as aborted (their lease expired)", len(stale))
        for match_id in stale:
            await self._tell_ended(match_id, over_message(Match.Status.ABORTED, tables.STALE))
        if ghosts:
            log.warning("freed %d bot seat(s) held by connections of stopped arenas", ghosts)

    async def stop(self) -> None:
        """Stop listening, abort running matches (their events are kept), flush the log."""
        for listener in self.listeners:
            listener.close()
        tasks = list(self.tasks.values())
        # A task cancelled before its first step runs none of its code: a match started a
        # moment ago would stay 'running' and its pages untold.  One turn of the loop lets
        # every task begin (they are scheduled in order), so each ends through _run.
        await asyncio.sleep(0)
        for task in tasks:
            task.cancel()
        for task in self._background:
            task.cancel()
        await _ended(tasks, "match runner")
        await _ended(self._background, "background task")
        # A sweep in progress may have started a match (a claimed table, a tournament's) after
        # the runners were counted: those end the same way.
        late = [task for task in self.tasks.values() if task not in tasks]
        if late:
            await asyncio.sleep(0)
            for task in late:
                task.cancel()
            await _ended(late, "match runner")
            tasks += late
        # The waiting bots' connections are closed, but their disconnects would be handled
        # after the loop is gone: free their seats now, so no table waits on a bot that is gone.
        self.waiting.clear()
        try:
            await sync_to_async(tables.free_own_bot_seats)(self.name)
        except Exception:  # its lease on the tables runs out instead: another arena frees them
            log.exception("could not free the waiting bots' seats")
        try:  # else Redis would keep the channel in the group, filled for nobody, for a day
            await self.layer.group_discard(PRESENCE_GROUP, self.channel)
        except Exception:
            log.exception("could not leave the presence group")
        await self.analyst.stop()
        await self.writer.close()
        try:
            await sync_to_async(lambda: ArenaProcess.objects.filter(name=self.name).delete())()
        except Exception:  # its lease runs out instead
            log.exception("could not remove the arena's row")
        await http_bots.close_client()
        log.info("arena stopped; %d running match(es) marked aborted", len(tasks))

    # --- control channel --------------------------------------------------------------------
    # Each arena reads its own channel (``self.channel``, in its ArenaProcess row), which web
    # processes and other arenas send to, and which is also its membership of the presence
    # group.  A message about a match that does not run here (the sender's knowledge of the
    # owner was stale, or it had none) is sent on once to the arena the database names, or
    # answered from the database (docs/architecture.md, *Control routing*).

    async def _control_loop(self) -> None:
        """Handle this arena's control channel's messages one at a time, in order; a failure
        is logged and the next message handled."""
        while True:
            try:
                msg = await self.layer.receive(self.channel)
                await self._handle_control(msg)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("control message failed")
                await asyncio.sleep(0.05)

    async def _handle_control(self, msg: dict) -> None:
        """One control message: ``bot_socket.*`` (a bot socket bound to this arena),
        ``presence``, ``table.changed``, ``human.action``, ``human.leave``, ``resync`` and the
        organisers' :data:`ADMIN_REQUESTS` (from another arena).  ``reply`` names the channel
        an answer or error goes to; ``forwarded`` marks a message another arena sent on, which
        is never sent on again."""
        if self.sockets.handle(msg):  # a bot socket's frame, opening or end
            return
        if self.watched.handle(msg):  # a web process watches a view group, or stopped
            return
        kind = msg.get("type")
        if kind == "table.changed":
            await self._table_changed(int(msg["match"]))
        elif kind in ("human.action", "human.leave"):
            match_id = int(msg["match"])
            runner = self.runners.get(match_id)
            if runner is None:
                error = None if await self._send_on(match_id, msg) else "This match is not running."
            elif kind == "human.action":
                error = await runner.human_action(int(msg["seat"]), int(msg["version"]), msg.get("action"))
            else:
                error = await runner.human_leave(int(msg["seat"]), back=bool(msg.get("back")))
            if error and msg.get("reply"):
                await self.layer.send(msg["reply"], {"type": "match.error", "message": error})
        elif kind == "resync":
            match_id = int(msg["match"])
            runner = self.runners.get(match_id)
            latest = runner.latest_for(msg["audience"]) if runner else None
            if latest and msg.get("reply"):
                await self.layer.send(msg["reply"], latest)
            elif runner is None and match_id not in self.starting and msg.get("reply"):
                await self._resync_elsewhere(match_id, msg)
        elif kind in ADMIN_REQUESTS:
            await self._admin_request(msg)

    def _whereabouts(self, match_id: int) -> tuple[str | None, str | None]:
        """``(status, channel)`` of match ``match_id`` from the database: its status (None: no
        such match) and, when it runs at another live arena, that arena's channel (else None).
        Synchronous: two indexed reads."""
        row = Match.objects.filter(pk=match_id).values_list("status", "owner").first()
        if row is None:
            return None, None
        status, owner = row
        elsewhere = status == Match.Status.RUNNING and owner and owner != self.name
        return status, (control.arena_channel(owner) if elsewhere else None)

    async def _send_on(self, match_id: int, msg: dict) -> bool:
        """Send ``msg`` (about match ``match_id``, which does not run here) on to the arena
        that runs it, its ``reply`` kept; False, nothing sent, when none does or ``msg`` was
        sent on once already."""
        if msg.get("forwarded"):
            return False
        _, channel = await sync_to_async(self._whereabouts)(match_id)
        if channel is None:
            return False
        await self.layer.send(channel, {**msg, "forwarded": True})
        return True

    async def _resync_elsewhere(self, match_id: int, msg: dict) -> None:
        """A page's resync for a match not running here: sent on to the arena that runs it;
        else ``match.gone`` when it is over (perhaps just before the page joined its groups
        and missed ``match.over``: the page's consumer looks at the database again), or
        :data:`NO_ARENA` when the database says it runs but no live arena has it."""
        status, channel = await sync_to_async(self._whereabouts)(match_id)
        if channel is not None and not msg.get("forwarded"):
            await self.layer.send(channel, {**msg, "forwarded": True})
            return
        if status == Match.Status.RUNNING:
            await self.layer.send(msg["reply"], {"type": "match.error", "message": NO_ARENA})
        elif status != Match.Status.OPEN:  # over, or no such match
            await self.layer.send(msg["reply"], {"type": "match.gone"})

    async def _admin_request(self, msg: dict) -> None:
        """An organiser's request another arena sent on (``arena.pause`` with ``paused``,
        ``arena.step``, ``arena.cancel`` with ``reason``): done here as :meth:`pause`,
        :meth:`step`, :meth:`cancel` do it, never sent on again; ``arena.answer`` with
        ``error`` (None, or the ``LookupError``'s message) goes to ``reply``."""
        error = None
        try:
            match_id = int(msg["match"])
            kind = msg["type"]
            if kind == "arena.pause":
                await self.pause(match_id, bool(msg.get("paused")), forwarded=True)
            elif kind == "arena.step":
                await self.step(match_id, forwarded=True)
            else:
                await self.cancel(match_id, str(msg.get("reason") or "cancelled by an organiser"), forwarded=True)
        except LookupError as exc:
            error = str(exc)
        if msg.get("reply"):
            await self.layer.send(msg["reply"], {"type": "arena.answer", "error": error})

    async def _ask(self, channel: str, match_id: int, msg: dict) -> None:
        """Send organiser's request ``msg`` about match ``match_id`` to the arena at ``channel``
        (which runs it) and wait for its ``arena.answer``.  Raises ``LookupError`` with that
        arena's error, or when it does not answer within :data:`FORWARD_WAIT_S` seconds (or
        its channel is full: it reads nothing)."""
        reply = await self.layer.new_channel()
        try:
            await self.layer.send(channel, {**msg, "match": match_id, "reply": reply, "forwarded": True})
            answer = await asyncio.wait_for(self.layer.receive(reply), FORWARD_WAIT_S)
        except (asyncio.TimeoutError, ChannelFull):
            raise LookupError(f"the arena running room {match_id} did not answer") from None
        if answer.get("error"):
            raise LookupError(answer["error"])

    async def _sweep_loop(self) -> None:
        """Every :data:`SWEEP_S` seconds, :meth:`sweep`; sooner when a match ended while
        claimable work was left waiting (:attr:`_more_work`), so that an arena with room takes
        the next tables at once rather than a sweep later."""
        while True:
            try:
                await asyncio.wait_for(self._sweep_now.wait(), SWEEP_S)
            except asyncio.TimeoutError:
                pass
            self._sweep_now.clear()
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("sweep failed")

    async def sweep(self) -> None:
        """Record the aborts the database refused before (:attr:`unrecorded_aborts`), recover
        what dead arenas left (:meth:`_recover`), then claim and start full tables whose
        start message was lost (e.g. a web process wrote the last seat while no arena
        lived; tables.claim_tables_to_start), giving back those that do not start."""
        for match_id, reason in list(self.unrecorded_aborts.items()):
            await self._record_abort(match_id, reason, self._unrecorded_runs.get(match_id))
        # Recovery at most every SWEEP_S (a full sweep): the sweeps a match's end brings on (a
        # table waiting, a tournament's next match) would otherwise pay for it each time.
        now = asyncio.get_running_loop().time()
        full = now - self._recovered_at >= SWEEP_S
        if full:
            self._recovered_at = now
        # At most ARENA_CLAIM_RUNNING matches at once from claims: the rest stays in the
        # database for an arena with room (another, or this one when a match ends).
        room = self.claim_running - len(self.tasks)

        def recover_claim_schedule():
            # One trip to the database thread a sweep, where there were four: an idle arena's
            # sweeps are charged to the moves of a match played at a slow pace.
            recovered = self._recover_now() if full else None
            claimed = tables.claim_tables_to_start(self.name, self.lease_s, limit=room) if room > 0 else []
            work = schedule.step(self.name, self.lease_s, max(room - len(claimed), 0), full=full)
            return recovered, claimed, work

        recovered, claimed, work = await sync_to_async(recover_claim_schedule)()
        if recovered is not None:
            await self._recovered(*recovered)
        self._more_work = room <= 0 or len(claimed) == room
        # The seat-change hooks first, as when a seat is taken: a table of this arena's bots may
        # have filled a moment ago, its last bot not yet greeted (bridge's JOINED) when the
        # sweep starts it.  The claimed tables start side by side: one after another, each
        # start's database round trips kept the arena to about a hundred starts a second.
        await asyncio.gather(*(self._start_claimed(match_id) for match_id in claimed))
        await self._tournament_turn(work)

    async def _tournament_turn(self, work: schedule.Work) -> None:
        """What this arena's turn at the tournaments (``work``: schedule.step, in the sweep's
        trip to the database) left to do: start the matches it made, cancel overdue
        entrants' tables and record their forfeits, end the live matches of a tournament that
        stopped early or was cancelled, tell their pages."""
        self._tournaments = work.running
        if work.made:
            made, self.tournament_tables = self.tournament_tables, asyncio.Event()
            made.set()
        for match_id, reason, absent in work.forfeits:
            try:
                await self.cancel(match_id, reason)
            except LookupError:
                pass  # it started, or another arena cancelled it meanwhile
            await sync_to_async(schedule.record_forfeit)(match_id, absent, reason)
        for match_id, reason in work.stop:
            try:
                await self.cancel(match_id, reason)
            except LookupError:
                pass
        await asyncio.gather(*(self._start_claimed(match_id) for match_id in work.start))
        for pk in work.touched:
            await self._tell_tournament(pk)

    async def _tell_tournament(self, pk: int) -> None:
        """Tell tournament ``pk``'s live pages to read its standings again: at most once a
        second, and a change within a second of the last tell is told when that second is
        over (the last change of a tournament, its end, is never left untold)."""
        loop = asyncio.get_running_loop()
        wait = self._told_tournament.get(pk, float("-inf")) + 1.0 - loop.time()
        if wait > 0:
            if pk not in self._tell_later:
                self._tell_later.add(pk)
                loop.call_later(wait, lambda: asyncio.ensure_future(self._tell_tournament_now(pk)))
            return
        await self._tell_tournament_now(pk)

    async def _tell_tournament_now(self, pk: int) -> None:
        self._tell_later.discard(pk)
        if len(self._told_tournament) > 1000:
            self._told_tournament.clear()
        self._told_tournament[pk] = asyncio.get_running_loop().time()
        await self.layer.group_send(schedule.group(pk), {"type": "tournament.changed"})

    async def _start_claimed(self, match_id: int) -> None:
        """Start a table this arena's sweep claimed, or give it back if it does not start."""
        await self._table_changed(match_id)
        if match_id not in self.tasks:
            async with self._holding:
                await self._release_if_unheld(match_id)
