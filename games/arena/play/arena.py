"""The arena process: bot listeners, seating, match runners and the control channel.

In the default one-process server it shares Daphne's asyncio loop; scaled, it runs alone
(``manage.py serve --role arena``) and talks to the web processes and the other arenas only
through the channel layer (its own control channel, registered in its
:class:`~games.arena.models.ArenaProcess` row, and the presence group) and the database.
Several arena processes may share one database: each holds the matches it runs and the open
tables its connected bots sit at (``Match.owner``, a lease it renews), records only its own
runs' ends, and recovers only what a dead arena left (docs/architecture.md, *Several arenas*).
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections import deque
from datetime import timedelta

from asgiref.sync import sync_to_async
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from games.arena import registry
from games.arena.bots import bot_keys, http_bots
from games.arena.bots.bot_sockets import SocketGames
from games.arena.bots.names import claimed_bot_name
from games.arena.models import ArenaProcess, Match, Seat
from games.arena.play import control, replay, tables
from games.arena.play.analyses import Analyst
from games.arena.play.eventlog import EventWriter
from games.arena.play.presence import PRESENCE_GROUP, Watched
from games.arena.play.runner import MatchRunner, table_group
from games.arena.play.seats import BuiltinSeat, HumanSeat, SeatEndpoint

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
#: The result of a match that every seat but the built-in bots left: it ends rather than
#: having bots play on for nobody.
ABANDONED = "abandoned: every player left"
#: What the pages of a match this arena ran are told when it lost its lease on the match
#: (another arena judged it dead after a stall, and aborted the match): nothing of the run
#: is recorded.
LEASE_LOST = "its arena stalled and lost the match to another (nothing of this run was kept)"
#: Seconds between two sweeps (:meth:`Arena.sweep`): a dead arena's matches are aborted at
#: most ``ARENA_LEASE`` plus this after its last renewal.
SWEEP_S = 2.0


def end_notice(status: str, reason: str | None) -> str:
    """What every open page of a match says once it ended: ``status`` is ``"finished"`` or
    ``"aborted"``, ``reason`` the abort reason stored in the result (e.g. :data:`ABANDONED`)."""
    if status == Match.Status.FINISHED:
        return "The match is over."
    why = (reason or "").removeprefix("abandoned: ")
    return f"The match was aborted: {why}." if why else "The match was aborted."


def over_message(status: str, reason: str | None) -> dict:
    """The channel-layer message (and browser message) ``match.over``: how a match ended, to
    every page on it (group :func:`table_group`), however it ended."""
    return {"type": "match.over", "status": str(status), "reason": reason, "notice": end_notice(status, reason)}


class NameTaken(ValueError):
    """A bot asked to be seated under a name another player at that table already has
    (games whose protocol tells players apart by name, e.g. Hanabi's ``target_player``)."""


def auto_pace() -> float:
    """The pace of the tables the server makes for connecting bots (automatic tables, prepared
    rooms): ``ARENA_AUTO_TABLE_PACE`` seconds a move, held to 0 ..
    :data:`~games.arena.play.tables.MAX_PACE` (0, full speed, by default: bots written for the
    original servers expect their pace)."""
    return min(max(float(settings.ARENA["AUTO_TABLE_PACE"]), 0.0), tables.MAX_PACE)


class ListenerError(RuntimeError):
    """A bot listener could not start (its port is taken, its address is not this machine's);
    the message names the setting to change."""


def cannot_listen(what: str, host: str, port: int, reason: str, setting: str) -> str:
    """The message for a port the server could not listen on, naming the ``setting`` to
    change: the same words for every listener."""
    return f"{what}: cannot listen on {host}:{port} ({reason}); set {setting} to a free port"


class SeatingBusy(LookupError):
    """Too many connected bots are waiting to be seated at once (``ARENA_MAX_PENDING_SEATINGS``):
    this one is refused rather than queued behind them."""


class Arena:
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
        self._sweep_now = asyncio.Event()
        self.layer = get_channel_layer()
        self.writer = EventWriter()
        self.runners: dict[int, MatchRunner] = {}
        self.tasks: dict[int, asyncio.Task] = {}
        #: Protocol bots seated at tables that have not started: seat id -> endpoint.
        self.waiting: dict[int, SeatEndpoint] = {}
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
        """What dead arenas left (their lease expired; never a live arena's), at start and
        at every sweep: their running matches aborted (tables.abort_stale; their pages told),
        their open tables freed for any arena (tables.free_connected_bot_seats), their
        :class:`ArenaProcess` rows removed.  ``starting``: also what a previous process of
        this arena's name left (``ARENA_NAME`` set), whatever its lease."""
        if starting:
            await sync_to_async(tables.free_own_bot_seats)(self.name)
        stale = await sync_to_async(tables.abort_stale)(self.name, starting)
        if stale:
            log.warning("marked %d match(es) of stopped arenas as aborted (their lease expired)", len(stale))
        for match_id in stale:
            await self._tell_ended(match_id, over_message(Match.Status.ABORTED, tables.STALE))
        ghosts = await sync_to_async(tables.free_connected_bot_seats)(self.name)
        if ghosts:
            log.warning("freed %d bot seat(s) held by connections of stopped arenas", ghosts)
        await sync_to_async(lambda: ArenaProcess.objects.filter(alive_until__lt=timezone.now())
                            .exclude(name=self.name).delete())()

    async def _tell_ended(self, match_id: int, ending: dict) -> None:
        """Every page on ``match_id`` shows how it ended (``ending``, :func:`over_message`)
        and reloads the table; a failure is logged."""
        try:
            await self.layer.group_send(table_group(match_id), ending)
            await self.layer.group_send(table_group(match_id), {"type": "table.update"})
        except Exception:
            log.exception("match %d: could not tell its pages how it ended", match_id)

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
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        # The waiting bots' connections are closed, but their disconnects would be handled
        # after the loop is gone: free their seats now, so no table waits on a bot that is gone.
        self.waiting.clear()
        try:
            await sync_to_async(tables.free_own_bot_seats)(self.name)
        except Exception:  # its lease on the tables runs out instead: another arena frees them
            log.exception("could not free the waiting bots' seats")
        for task in self._background:
            task.cancel()
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

    # --- seating ----------------------------------------------------------------------------
    # Connected bots are seated one at a time (each seating is a few database steps that must
    # not interleave: two bots could claim the same seat) by one worker that takes them from
    # a bounded queue.  A bot that hung up while it waited is dropped from the queue without
    # a database step; the worker skips any number of those in one go, where waiters on a
    # lock would each have needed a turn of the loop (a reconnect flood then outran them).

    async def _queued(self, endpoint: SeatEndpoint, work):
        """Run ``await work()`` in the seating worker once ``endpoint``'s turn comes; its
        result, or None if the endpoint is gone by then (nothing done).  Raises
        :class:`SeatingBusy` when ``ARENA_MAX_PENDING_SEATINGS`` wait already."""
        if endpoint.gone:
            return None
        if len(self._seat_queue) >= self.max_pending_seatings:
            raise SeatingBusy(f"{len(self._seat_queue)} bots are waiting to be seated")
        done = asyncio.get_running_loop().create_future()
        self._seat_queue.append((endpoint, work, done))
        if self._seat_worker is None or self._seat_worker.done():
            self._seat_worker = asyncio.get_running_loop().create_task(self._seat_loop(), name="arena-seating")
        return await done

    async def _seat_loop(self) -> None:
        queue = self._seat_queue
        while queue:
            endpoint, work, done = queue.popleft()
            if done.done():  # its caller gave up
                continue
            if endpoint.gone:  # hung up while it waited: no database work for it
                done.set_result(None)
                continue
            try:
                result = await work()
            except Exception as exc:  # the caller's to handle (e.g. no open seat: LookupError)
                if not done.done():
                    done.set_exception(exc)
            else:
                if not done.done():
                    done.set_result(result)

    @property
    def seatings_pending(self) -> int:
        """Bots waiting to be seated (tests, benchmarks)."""
        return len(self._seat_queue)

    async def seat_bot(self, game: str, endpoint: SeatEndpoint, config: dict | None = None,
                       auto: bool = True, start: bool = True, unique_name: bool = False,
                       index: int | None = None, new_table: bool = False) -> int | None:
        """Seat a bot that connected on ``game``'s port: the oldest open bot seat at a table
        whose configuration has ``config``'s values (e.g. ``{"variant": "2027"}``), else (with
        ``auto``) an automatic table with the server's default configuration updated with
        ``config``.  Returns the seat id, or None when the bot hung up before its turn came
        (then nothing was written).  Raises :class:`SeatingBusy` when too many wait already,
        ``LookupError`` without ``auto`` when no table has an open bot seat (a game that
        gathers its automatic tables itself, as Hanabi does).  With ``unique_name``, raises
        :class:`NameTaken` (the seat given back) when another player at the table the bot
        would join has its name.  Without ``start`` the table is not started here even if
        this seat filled it: the caller greets its bot first, then calls
        :meth:`table_changed`.  With ``index``, only that seat of a table (bridge's "as
        North"); with ``new_table``, at a new table of bot seats made for it (not automatic:
        it stays in the lobby when the bot leaves, as one made on the form), whatever seats
        are open elsewhere (bridge's ``JOIN-M NEW``)."""
        spec = registry.get(game)
        seat = await self._queued(endpoint, lambda: self._claim(game, spec, endpoint, config, auto, unique_name,
                                                                index, new_table))
        if seat is None:
            return None
        if seat.pk in self.waiting:
            log.info("%s bot %s took seat %d of match %d", game, endpoint.display_name, seat.index, seat.match_id)
            if start:
                await self._table_changed(seat.match_id)
        return seat.pk

    async def table_changed(self, match_id: int) -> None:
        """A table's seats changed: its pages reload it, and it starts if every seat is taken."""
        await self._table_changed(match_id)

    async def _claim(self, game: str, spec, endpoint: SeatEndpoint, config: dict | None, auto: bool = True,
                     unique_name: bool = False, index: int | None = None, new_table: bool = False):
        """Claim the seat (see :meth:`seat_bot`) at a table no other arena holds, which this
        one then holds (tables.claim_bot_seat); the seat, in :attr:`waiting` unless the bot
        hung up meanwhile (then freed again).  In the seating worker, so two bots of one name
        cannot both pass the ``unique_name`` test."""
        async with self._holding:
            seat = None
            if not new_table:
                seat = await sync_to_async(tables.claim_bot_seat)(
                    game, endpoint.display_name, config, bot_id=endpoint.bot_id, index=index, owner=self.name,
                    lease_s=self.lease_s)
            if seat is None and not auto:
                raise LookupError(f"no {spec.title} table has an open bot seat")
            if seat is not None and unique_name and await sync_to_async(tables.name_taken)(
                    seat.match_id, endpoint.display_name, but=seat.pk):
                await self._give_back(seat)
                raise NameTaken(f"a player named {endpoint.display_name!r} is already at table {seat.match_id}")
            if seat is None:
                auto = {**spec.auto_config(), **(config or {})}
                choices = [tables.OPEN_BOT] * spec.num_seats(spec.normalize_config(auto))
                # Never the "every hand" view: nobody asked for it, and the bots seated here
                # could watch their own match.
                # Held by this arena from the first moment: another arena's bot could take
                # its seat before ours, and then ours could not sit at it.
                match = await sync_to_async(tables.create_table)(game, auto, choices, None, auto=not new_table,
                                                                 pace_s=auto_pace(), owner=self.name,
                                                                 lease_s=self.lease_s)
                seat = await sync_to_async(tables.claim_bot_seat)(
                    game, endpoint.display_name, config, match.pk, bot_id=endpoint.bot_id, index=index,
                    owner=self.name, lease_s=self.lease_s)
            if endpoint.gone:  # hung up while we looked for a seat
                await self._give_back(seat)
            else:
                self.waiting[seat.pk] = endpoint
            return seat

    async def _give_back(self, seat: Seat) -> None:
        """Free ``seat``, just claimed for a bot that will not sit there after all, and the
        table too if no other bot of this arena's sits there.  With :attr:`_holding` held."""
        await sync_to_async(tables.free_bot_seat)(seat.pk, self.name)
        await self._release_if_unheld(seat.match_id)

    async def _release_if_unheld(self, match_id: int) -> None:
        """Give open table ``match_id`` back (no arena holds it: tables.release_table) if
        none of this arena's waiting bots sits there.  With :attr:`_holding` held."""
        seats = await sync_to_async(tables.seat_ids)(match_id)
        if not any(seat_id in self.waiting for seat_id in seats):
            await sync_to_async(tables.release_table)(match_id, self.name)

    async def seat_bot_in(self, game: str, match_id: int, endpoint: SeatEndpoint,
                          index: int | None = None) -> int | None:
        """Seat a bot at an open bot seat of table ``match_id`` (a protocol's "join this
        room"), with ``index`` only at that seat.  Returns the seat id (None if the bot hung
        up before its turn came); raises ``LookupError`` with a message if there is none,
        :class:`SeatingBusy` when too many bots wait to be seated."""
        async def claim():
            async with self._holding:
                seat = await sync_to_async(tables.claim_bot_seat)(
                    game, endpoint.display_name, None, match_id, bot_id=endpoint.bot_id, index=index,
                    owner=self.name, lease_s=self.lease_s)
                if seat is None:
                    raise LookupError(f"room {match_id} has no open seat for a bot"
                                      + ("" if index is None else " at that position")
                                      + await self._held_elsewhere(match_id))
                if endpoint.gone:
                    await self._give_back(seat)
                else:
                    self.waiting[seat.pk] = endpoint
                return seat

        seat = await self._queued(endpoint, claim)
        if seat is None:
            return None
        if seat.pk in self.waiting:
            await self._table_changed(match_id)
        return seat.pk

    # --- prepared tables (an organiser's reservations), watching, pause, step, cancel ---------
    async def prepare(self, game: str, config: dict, names: list[str], paused: bool = False,
                      creator_key: str = "") -> tuple[int, list[str]]:
        """Create a table whose seats are reserved: one code per seat (``names[i]`` is the
        name seat ``i`` plays under), which a bot presents to :meth:`seat_reserved` of any
        arena on the database (each seat keeps its code's SHA-256, ``Seat.reservation``;
        the code is never stored).  With ``paused`` the match starts paused (:meth:`pause`)
        if this arena starts it.  Returns ``(match id, codes)``; raises ``ValueError`` for a
        bad configuration or a wrong number of names."""
        spec = registry.get(game)
        if len(names) != spec.num_seats(spec.normalize_config(config)):
            raise ValueError(f"{spec.title} needs {spec.num_seats(spec.normalize_config(config))} slots")
        codes = [str(uuid.uuid4()) for _ in names]
        match = await sync_to_async(tables.create_prepared_table)(game, config, names, codes,
                                                                  creator_key=creator_key, pace_s=auto_pace())
        if paused:
            self.start_paused.add(match.pk)
        await self.layer.group_send(table_group(match.pk), {"type": "table.update"})
        return match.pk, codes

    async def seat_reserved(self, code: str, endpoint: SeatEndpoint) -> tuple[int, int]:
        """Seat a bot on the seat reserved under ``code`` (found in the database by the
        code's hash: whichever arena prepared it); this arena then holds the table.  Returns
        ``(seat id, seat index)``.  Raises ``LookupError`` for an unknown code (or one whose
        table started or ended), a seat already taken by a connection, or a table whose
        other players are connected to another arena process."""
        async with self._holding:
            found = await sync_to_async(tables.find_reservation)(tables.reservation_hash(str(code)))
            if found is None:
                raise LookupError("unknown reservation code")
            match_id, seat_id, index = found
            if seat_id in self.waiting:
                raise LookupError("this reservation is already in use")
            if not await sync_to_async(tables.hold_table)(match_id, self.name, self.lease_s):
                raise LookupError("this reservation is already in use" + await self._held_elsewhere(match_id))
            self.waiting[seat_id] = endpoint
        if endpoint.bot_id is not None:  # a registered bot (Hanabi's automatic table): verified
            await sync_to_async(tables.seat_registered_bot)(seat_id, endpoint.bot_id)
        await self._table_changed(match_id)
        return seat_id, index

    async def _held_elsewhere(self, match_id: int) -> str:
        """", its other players are connected to another arena process" when another arena
        holds open table ``match_id`` (a bot must join where they are), else ""."""
        owner = await sync_to_async(
            lambda: Match.objects.filter(pk=match_id, status=Match.Status.OPEN).values_list("owner", flat=True).first())()
        return ", its other players are connected to another arena process" if owner and owner != self.name else ""

    async def watch(self, match_id: int, watcher) -> None:
        """Pass every state of match ``match_id`` to ``watcher`` (see :class:`MatchRunner`),
        from its start if it has not started; ``watcher.end(result or None)`` when it ends.
        Raises ``LookupError`` for a match that does not exist, is over, or runs at another
        arena (its states are there)."""
        if await self._known(match_id) is not None:
            raise LookupError(f"room {match_id} runs at another arena process: observe it there")
        runner = self.runners.get(match_id)
        if runner is not None:
            runner.add_watcher(watcher)
        else:
            self.pending_watchers.setdefault(match_id, []).append(watcher)

    def interrupt(self, match_id: int, seat: int, answer) -> None:
        """End the step in hand of a running match with ``answer`` from ``seat``, asked or not
        (:meth:`MatchRunner.interrupt`); nothing if the match is not running here."""
        runner = self.runners.get(match_id)
        if runner is not None:
            runner.interrupt(seat, answer)

    def unwatch(self, match_id: int, watcher) -> None:
        """Stop passing states to ``watcher`` (it disconnected)."""
        if match_id in self.runners:
            self.runners[match_id].remove_watcher(watcher)
        pending = self.pending_watchers.get(match_id, [])
        if watcher in pending:
            pending.remove(watcher)

    async def _known(self, match_id: int, here_only: bool = False) -> str | None:
        """Returns None once ``match_id`` is running here or an open table, not in the middle
        of starting (its runner is then either registered or not yet begun, until the
        caller's next ``await``); or the channel of the live arena that runs it, when another
        does.  Raises ``LookupError`` for a match that does not exist or is over, that the
        database says runs but no live arena has, or (``here_only``: a request another arena
        sent on, never sent on again) that runs elsewhere."""
        while True:
            while match_id in self.starting:  # a moment: the start's one database call
                await asyncio.sleep(0.005)
            if match_id in self.runners:
                return None
            status, channel = await sync_to_async(self._whereabouts)(match_id)
            if match_id in self.starting or match_id in self.runners:
                continue  # it began to start while we looked
            if status == Match.Status.OPEN:
                return None
            if status != Match.Status.RUNNING:
                raise LookupError(f"room {match_id} is {'over' if status else 'unknown'}")
            if channel is None:
                raise LookupError(f"room {match_id} is not running at any live arena")
            if here_only:
                raise LookupError(f"room {match_id} is not running here")
            return channel

    async def pause(self, match_id: int, paused: bool, *, forwarded: bool = False) -> None:
        """Hold a match before its next request, or let it go on; a table that has not started
        will start held.  A match another arena runs is paused there (:meth:`_ask`).  Raises
        ``LookupError`` for an unknown or finished match (see :meth:`_known`; ``forwarded``:
        the request came from another arena)."""
        elsewhere = await self._known(match_id, here_only=forwarded)
        if elsewhere is not None:
            await self._ask(elsewhere, match_id, {"type": "arena.pause", "paused": paused})
            return
        runner = self.runners.get(match_id)
        if runner is not None:
            runner.pause(paused)
        elif paused:
            self.start_paused.add(match_id)
        else:
            self.start_paused.discard(match_id)

    async def step(self, match_id: int, *, forwarded: bool = False) -> None:
        """Let one step of a paused match through, at the arena that runs it.  Raises
        ``LookupError`` if it is not running (see :meth:`pause` for ``forwarded``)."""
        elsewhere = await self._known(match_id, here_only=forwarded)
        if elsewhere is not None:
            await self._ask(elsewhere, match_id, {"type": "arena.step"})
            return
        runner = self.runners.get(match_id)
        if runner is None:
            raise LookupError(f"room {match_id} has not started")
        runner.step_once()

    async def cancel(self, match_id: int, reason: str = "cancelled by an organiser", *,
                     forwarded: bool = False) -> None:
        """End a match now (recorded as aborted with ``reason``, its events kept), at the arena
        that runs it, or remove an open table's bots and close it.  Raises ``LookupError`` for
        an unknown or finished match (see :meth:`pause` for ``forwarded``)."""
        elsewhere = await self._known(match_id, here_only=forwarded)
        if elsewhere is not None:
            await self._ask(elsewhere, match_id, {"type": "arena.cancel", "reason": reason})
            return
        task = self.tasks.get(match_id)
        if task is not None:
            self.runners[match_id].stop_reason = reason
            await asyncio.sleep(0)  # let it begin first: see stop()
            task.cancel()
            return
        await sync_to_async(tables.abort)(match_id, reason)
        seat_ids = await sync_to_async(lambda: list(Seat.objects.filter(match_id=match_id).values_list("pk", flat=True)))()
        for seat_id in seat_ids:
            endpoint = self.waiting.pop(seat_id, None)
            if endpoint is not None:
                endpoint.close(None)
        self._forget(match_id)
        for watcher in self.pending_watchers.pop(match_id, []):
            watcher.end(None)
        await self.layer.group_send(table_group(match_id), {"type": "table.update"})

    def _forget(self, match_id: int) -> None:
        """Drop what this process kept for a table that started or is over: its paused flag."""
        self.start_paused.discard(match_id)

    async def bot_left(self, seat_id: int) -> None:
        """A waiting bot disconnected before its table started: open its seat again (a
        reserved seat stays reserved: its code may be presented again); the table is no
        arena's any more if no other bot of this arena's sits there."""
        if self.waiting.pop(seat_id, None) is None:
            return
        async with self._holding:
            match_id = await sync_to_async(tables.free_bot_seat)(seat_id, self.name)
            if match_id:
                await self._release_if_unheld(match_id)
        if match_id:
            await self.layer.group_send(table_group(match_id), {"type": "table.update"})

    # --- what the bot transports ask about this arena's own bots and matches --------------------
    def is_running(self, match_id: int) -> bool:
        """Whether match ``match_id`` runs in this arena (its runner is here)."""
        return match_id in self.runners

    def player_names(self, match_id: int) -> list[str] | None:
        """The players' names in seat order as match ``match_id``, running here, shows
        them; None if it does not run here."""
        runner = self.runners.get(match_id)
        return None if runner is None else [ep.display_name for ep in runner.endpoints]

    def match_played_by(self, endpoint: SeatEndpoint) -> int | None:
        """The match running here in which ``endpoint`` (a connected bot) plays, if any (its
        runner knows before the seat's join is answered when the match starts at once)."""
        for match_id, runner in self.runners.items():
            if endpoint in runner.endpoints:
                return match_id
        return None

    def waiting_bot(self, seat_id: int) -> SeatEndpoint | None:
        """The connected bot of this arena waiting at seat ``seat_id`` of a table that has
        not started, if any."""
        return self.waiting.get(seat_id)

    async def reserved_open_tables(self, match_ids) -> set[int]:
        """Those of ``match_ids`` that are open tables with seats held for reservations
        (prepared games that have not started), whichever arena prepared them."""
        ids = list(match_ids)
        return await sync_to_async(tables.reserved_open_tables)(ids) if ids else set()

    async def identify_bot(self, game: str, key, host: str, endpoint: SeatEndpoint) -> None:
        """A connecting bot of ``game`` presented ``key`` from address ``host``: on success the
        ``endpoint`` plays as that registered bot (``bot_id``, its name).  Raises
        :class:`~games.arena.bots.bot_keys.KeyRefused` (the message for the bot); a wrong key counts
        as a guess of ``host`` (:data:`~games.arena.bots.bot_keys.KEY_FAILURES_BY_ADDRESS`)."""
        bot = await sync_to_async(bot_keys.identify)(game, key, host)
        endpoint.bot_id = bot.pk
        endpoint.display_name = bot.name

    async def claims_bot_name(self, game: str, name: str) -> bool:
        """Whether a bot of ``game`` that presented no key claims a registered bot's name, or a
        look-alike, with ``name`` (:func:`games.arena.bots.names.claimed_bot_name`): each door then
        answers as its protocol allows, never seating it under that name."""
        return await sync_to_async(claimed_bot_name)(game, name)

    async def match_of_seat(self, seat_id: int) -> int | None:
        """The match id of seat ``seat_id`` (None if there is no such seat)."""
        return await sync_to_async(tables.match_of_seat)(seat_id)

    async def seated_names(self, match_id: int) -> list[tuple[int, str | None]]:
        """``(seat id, name)`` of each seat of ``match_id`` in seat order, None for a seat
        not taken (:func:`games.arena.play.tables.seated_names`)."""
        return await sync_to_async(tables.seated_names)(match_id)

    async def bot_named(self, seat_id: int, name: str) -> None:
        """A bot sent its name: show it at the table."""
        await sync_to_async(tables.rename_seat)(seat_id, name)

    async def _table_changed(self, match_id: int) -> None:
        await self.layer.group_send(table_group(match_id), {"type": "table.update"})
        for hook in list(self.table_hooks):
            try:
                await hook(match_id)
            except Exception:  # a greeting lost must not keep the table from starting
                log.exception("match %d: a seat-change hook failed", match_id)
        await self.maybe_start(match_id)

    async def maybe_start(self, match_id: int) -> None:
        """Start the match at ``match_id`` if every seat is taken and its bots are here.  A
        failure once it was marked running ends it as aborted (:meth:`_start_failed`)."""
        if match_id in self.tasks:
            return
        table = await sync_to_async(tables.full_table)(match_id)  # asked after every seat taken
        if table is None:
            return
        game, seats = table
        spec = registry.get(game)
        # Seats of bots that connected (a game whose bots the server calls has none).
        bot_seats = [pk for pk, kind in seats if kind == Seat.Kind.PROTOCOL and spec.listens]
        if any(pk not in self.waiting for pk in bot_seats):
            return  # a bot seat taken through another arena process; not ours to start
        gone = [pk for pk in bot_seats if self.waiting[pk].gone]
        if gone:  # their disconnects are still on the way: free the seats, start later
            for pk in gone:
                await self.bot_left(pk)
            return
        # Between the database saying "running" and the runner being registered, organisers'
        # requests (watch, pause, step, cancel) wait (see _known).
        if match_id in self.starting or match_id in self.tasks:
            return  # another call is starting it
        # The bots as they are now: one that hangs up while the start is in hand (its
        # bot_left may take it out of `waiting` meanwhile) plays as a seat that left.
        bots = {pk: self.waiting[pk] for pk in bot_seats}
        self.starting.add(match_id)
        run = None
        try:
            match = await sync_to_async(tables.try_start)(match_id, self.name, self.lease_s)
            if match is not None:
                run = tables.Run(self.name, match.attempt)
                for pk in bot_seats:
                    self.waiting.pop(pk, None)
                self._start_runner(match, match.started_seats, bots)
        except Exception as exc:
            log.exception("match %d could not start", match_id)
            for pk in bot_seats:
                self.waiting.pop(pk, None)
            await self._start_failed(match_id, exc, list(bots.values()), run)
        finally:
            self.starting.discard(match_id)

    async def start_gathered(self, game: str, config: dict, bots: list[SeatEndpoint]) -> int:
        """Create a table of ``game`` with ``config`` whose seats are the connected ``bots``
        (in seat order, each under its ``display_name``, a verified one as its registered
        bot) and start its match at once: a game whose automatic table gathers its players
        itself (Hanabi's lobby).  A bot that hung up meanwhile plays as a seat that left.
        Returns the match id.  Raises ``ValueError`` for a bad configuration or seat count
        (nothing created); any failure after the table was created ends it as aborted with
        the reason, closes the bots (``close(None)``) and is raised again."""
        spec = registry.get(game)
        if len(bots) != spec.num_seats(spec.normalize_config(config)):
            raise ValueError(f"{spec.title} with {config} has {spec.num_seats(spec.normalize_config(config))} seats")
        match_id = run = None
        try:
            match = await sync_to_async(tables.create_seated_table)(
                game, config, [(b.display_name, b.bot_id) for b in bots], pace_s=auto_pace(), owner=self.name,
                lease_s=self.lease_s)
            match_id = match.pk
            self.starting.add(match_id)
            started = await sync_to_async(tables.try_start)(match_id, self.name, self.lease_s)
            if started is None:
                raise RuntimeError(f"match {match_id} was not open with every seat taken")
            run = tables.Run(self.name, started.attempt)
            by_seat = {s.pk: bot for s, bot in zip(started.started_seats, bots)}
            self._start_runner(started, started.started_seats, by_seat)
        except Exception as exc:
            log.exception("a %s table of %d bots could not start", game, len(bots))
            if match_id is None:  # nothing was written: only the bots to let go
                for bot in bots:
                    bot.close(None)
            else:
                await self._start_failed(match_id, exc, bots, run)
            raise
        finally:
            self.starting.discard(match_id)
        return match_id

    async def _start_failed(self, match_id: int, exc: Exception, bots: list[SeatEndpoint],
                            run: tables.Run | None = None) -> None:
        """A start failed with ``exc``: the match ends as aborted with the reason (only for
        ``run`` once this arena started it), nothing of it is kept here, its bots are closed
        (their seats held nothing any more) and its pages are told."""
        reason = f"internal error while starting: {exc.__class__.__name__}"
        self._forget(match_id)
        self.playing.pop(match_id, None)
        for watcher in self.pending_watchers.pop(match_id, []):
            try:
                watcher.end(None)
            except Exception:
                log.exception("ending a watcher of match %d", match_id)
        for bot in bots:
            try:
                bot.close(None)
            except Exception:
                log.exception("closing a bot of match %d", match_id)
        await self._record_abort(match_id, reason, run)
        await self._tell_ended(match_id, over_message(Match.Status.ABORTED, reason))

    async def _record_abort(self, match_id: int, reason: str, run: tables.Run | None = None) -> bool:
        """Mark ``match_id`` aborted with ``reason`` (with ``run``, only while it runs under
        that run: tables.abort); if the database fails now, the sweep tries again
        (:attr:`unrecorded_aborts`).  Whether it was recorded."""
        try:
            recorded = await sync_to_async(tables.abort)(match_id, reason, run)
        except Exception:
            log.exception("match %d: could not record its abort; the sweep tries again", match_id)
            self.unrecorded_aborts[match_id] = reason
            if run is not None:
                self._unrecorded_runs[match_id] = run
            return False
        self.unrecorded_aborts.pop(match_id, None)
        self._unrecorded_runs.pop(match_id, None)
        return recorded

    def _start_runner(self, match: Match, seats: list, bots: dict[int, SeatEndpoint]) -> None:
        """Build the seat endpoints and the runner of ``match`` (just marked running; ``bots``:
        seat id -> the connected bot of each such seat) and start its task.  No ``await`` in
        here: it happens at once for everyone watching."""
        names = [s.display_name for s in match.started_seats]  # told apart where seats share one
        spec = registry.get(match.game)
        humans_present = any(s.kind == Seat.Kind.HUMAN for s in seats)
        delay = settings.ARENA["BUILTIN_DELAY"] if humans_present else 0.0
        endpoints: list[SeatEndpoint] = []
        for s in sorted(seats, key=lambda s: s.index):
            if s.kind == Seat.Kind.PROTOCOL and spec.calls_bots:
                endpoints.append(spec.http_bot_endpoint(s.registered_bot))
                endpoints[-1].display_name = names[s.index]
            elif s.kind == Seat.Kind.PROTOCOL:  # a connected bot: its own name (it may send one yet)
                endpoints.append(bots[s.pk])
            elif s.kind == Seat.Kind.HUMAN:
                endpoints.append(HumanSeat(names[s.index], spec))
            else:
                _, policy = spec.builtin_bots[s.builtin_bot]
                endpoints.append(BuiltinSeat(names[s.index], policy, seed=match.seed + s.index, delay_s=delay))
        for ep in endpoints:
            ep.table_names = names
            if match.think_s is not None and ep.kind == "protocol":
                ep.use_think_time(match.think_s)
        runner = MatchRunner(match.pk, spec, match.config, match.seed, endpoints, self.writer,
                             self.layer.group_send, omniscient=match.omniscient,
                             round_pause_s=settings.ARENA["ROUND_PAUSE"], server_times=self.server_times,
                             snapshot_every=settings.ARENA["SNAPSHOT_EVERY"],
                             away_grace_s=settings.ARENA["AWAY_GRACE"] * 60,
                             max_steps=settings.ARENA["MAX_STEPS"],
                             # The in-memory layer knows its groups; Redis's would cost a round trip.
                             listening=self.watched.listening, pace_s=match.pace_s)
        runner.paused = match.pk in self.start_paused
        runner.watchers = self.pending_watchers.pop(match.pk, [])
        self._forget(match.pk)
        self.runners[match.pk] = runner
        self.playing[match.pk] = match.attempt
        run = tables.Run(self.name, match.attempt)
        self.tasks[match.pk] = asyncio.get_running_loop().create_task(self._run(runner, run), name=f"match-{match.pk}")
        log.info("match %d (%s) started: %s", match.pk, match.game, ", ".join(e.display_name for e in endpoints))

    async def _run(self, runner: MatchRunner, run: tables.Run) -> None:
        """Play ``runner``'s match, this arena's ``run`` of it, and record how it ended (only
        while the match still runs under ``run``: tables.finish, tables.abort); whatever
        happens, its seats and watchers are closed and its pages told."""
        mid = runner.match_id
        result = None
        # How it ended, for every open page; a failure before the end is known says so.
        ending = over_message(Match.Status.ABORTED, "internal error")
        try:
            await self.layer.group_send(table_group(mid), {"type": "table.update"})
            try:
                result = await runner.run()
            finally:  # from here on the lease loop leaves it alone: its end is in hand
                self.playing.pop(mid, None)
            await self.writer.flush()
            await self._store_end(runner, run)
            if runner.abandoned:
                result = None
                ending = over_message(Match.Status.ABORTED, ABANDONED)
                if await sync_to_async(tables.abort)(mid, ABANDONED, run):
                    log.info("match %d abandoned at step %d: every player left", mid, runner.step)
                else:
                    ending = over_message(Match.Status.ABORTED, LEASE_LOST)
            elif runner.cut_short:
                result = None
                ending = over_message(Match.Status.ABORTED, runner.cut_short)
                if await sync_to_async(tables.abort)(mid, runner.cut_short, run):
                    log.info("match %d %s", mid, runner.cut_short)
                else:
                    ending = over_message(Match.Status.ABORTED, LEASE_LOST)
            else:
                spec = runner.spec
                subjects = spec.analysis_subjects(runner.state) if spec.analysis_label else []
                if await sync_to_async(tables.finish)(mid, result, subjects, run):
                    ending = over_message(Match.Status.FINISHED, None)
                    if subjects:
                        self.analyst.wake()
                    log.info("match %d finished: %s", mid, result)
                else:  # another arena aborted it meanwhile: not this run's to record
                    result = None
                    ending = over_message(Match.Status.ABORTED, LEASE_LOST)
        except asyncio.CancelledError:
            reason = runner.stop_reason or "the server stopped during the match"
            ending = over_message(Match.Status.ABORTED, reason)
            await self._flush_quietly(mid)
            await self._store_end(runner, run)
            await self._record_abort(mid, reason, run)
            if runner.stop_reason is None:
                raise  # the server is stopping; a cancelled match alone ends here
        except Exception as exc:
            log.exception("match %d failed", mid)
            reason = f"internal error: {exc.__class__.__name__}"
            ending = over_message(Match.Status.ABORTED, reason)
            # Whatever fails on the way, the match ends as aborted (else it stayed 'running'
            # with no runner: a ghost).
            await self._flush_quietly(mid)
            await self._record_abort(mid, reason, run)
        finally:
            self.playing.pop(mid, None)
            runner.close()
            for ep in runner.endpoints:
                try:
                    ep.close(result)
                except Exception:
                    log.exception("closing a seat of match %d", mid)
            for watcher in runner.watchers:
                try:
                    watcher.end(result)
                except Exception:
                    log.exception("ending a watcher of match %d", mid)
            self.runners.pop(mid, None)
            self.tasks.pop(mid, None)
            if self._more_work:  # room for a table the last claim left waiting
                self._sweep_now.set()
            try:  # every page on the match (each seat's, the spectators') shows how it ended
                await asyncio.shield(self.layer.group_send(table_group(mid), ending))
                await asyncio.shield(self.layer.group_send(table_group(mid), {"type": "table.update"}))
            except Exception:
                log.exception("match %d: could not tell its pages how it ended", mid)

    async def _flush_quietly(self, match_id: int) -> None:
        """Flush the event log on a match's way out; a failure is logged (the events in hand
        may be lost), never raised: the match's end must still be recorded."""
        try:
            await self.writer.flush()
        except Exception:
            log.exception("match %d: could not flush its events", match_id)

    async def _store_end(self, runner: MatchRunner, run: tables.Run) -> None:
        """Store the runner's snapshots and final view (cheap reads of long matches), only
        while the match runs under ``run``; a failure only costs later readers a replay from
        the first step, so it is logged, not raised."""
        try:
            await sync_to_async(replay.store_end)(runner.match_id, runner.snapshots, runner.state, run)
        except Exception:
            log.exception("match %d: could not store its snapshots", runner.match_id)

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
        await self._recover()
        # At most ARENA_CLAIM_RUNNING matches at once from claims: the rest stays in the
        # database for an arena with room (another, or this one when a match ends).
        room = self.claim_running - len(self.tasks)
        if room <= 0:
            self._more_work = True
            return
        claimed = await sync_to_async(tables.claim_tables_to_start)(self.name, self.lease_s, limit=room)
        self._more_work = len(claimed) == room
        for match_id in claimed:
            await self.maybe_start(match_id)
            if match_id not in self.tasks:
                async with self._holding:
                    await self._release_if_unheld(match_id)
