"""Running: a full table's match from its start to its recorded end (the :class:`Running`
half of :class:`~games.arena.play.arena.Arena`).

A table whose seats are all taken is marked running under this arena's run (tables.try_start),
its seats become endpoints and its :class:`~games.arena.play.runner.MatchRunner` a task; the
end is recorded only while the match still runs under that run (tables.finish,
tables.abort), and every page on it is told how it ended (:func:`over_message`).  Organisers
watch, pause, step and cancel a match here, or at the arena that runs it.
"""
from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction

from games.arena import registry
from games.arena.models import Match, Seat
from games.arena.play import replay, tables
from games.arena.play.runner import MatchRunner, table_group
from games.arena.play.seating import auto_pace
from games.arena.play.seats import BuiltinSeat, HumanSeat, SeatEndpoint

log = logging.getLogger("arena")

#: The result of a match that every seat but the built-in bots left: it ends rather than
#: having bots play on for nobody.
ABANDONED = "abandoned: every player left"
#: What the pages of a match this arena ran are told when it lost its lease on the match
#: (another arena judged it dead after a stall, and aborted the match): nothing of the run
#: is recorded.
LEASE_LOST = "its arena stalled and lost the match to another (nothing of this run was kept)"


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


class Running:
    """The running half of :class:`~games.arena.play.arena.Arena` (a mixin: the arena's
    ``__init__`` makes the state both halves share).  It keeps :attr:`runners` and
    :attr:`tasks` (match id -> the runner, its task), :attr:`playing` (match id -> the
    attempt it runs under), the tables being started and the watchers and paused flags of
    tables that have not started; it takes the bots of a full table from the seating half's
    :attr:`waiting`, and asks the arena where a match runs elsewhere (``_whereabouts``,
    ``_ask``)."""

    # --- starting a full table ------------------------------------------------------------
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
        if any(pk in self._greeting for pk in bot_seats):
            # A bot took its seat while this start was on its way and has not been greeted
            # (its JOINED): its own seat change starts the table, after the hooks.
            return
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

    # --- a match's run and how it ended ---------------------------------------------------
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
            # The snapshots and the end in one trip to the database thread (each trip costs
            # both threads a hand-off).
            if runner.abandoned:
                result = None
                ending = over_message(Match.Status.ABORTED, ABANDONED)
                if await self._store_end_and(runner, run, tables.abort, mid, ABANDONED, run):
                    log.info("match %d abandoned at step %d: every player left", mid, runner.step)
                else:
                    ending = over_message(Match.Status.ABORTED, LEASE_LOST)
            elif runner.cut_short:
                result = None
                ending = over_message(Match.Status.ABORTED, runner.cut_short)
                if await self._store_end_and(runner, run, tables.abort, mid, runner.cut_short, run):
                    log.info("match %d %s", mid, runner.cut_short)
                else:
                    ending = over_message(Match.Status.ABORTED, LEASE_LOST)
            else:
                spec = runner.spec
                subjects = spec.analysis_subjects(runner.state) if spec.analysis_label else []
                if await self._store_end_and(runner, run, tables.finish, mid, result, subjects, run):
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
            if self._more_work or self._tournaments:  # room for a table waiting, a tournament's next match
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
        await sync_to_async(self._store_end_now)(runner, run)

    @staticmethod
    def _store_end_now(runner: MatchRunner, run: tables.Run) -> None:
        """:meth:`_store_end`'s work, on the database thread (in a savepoint: a failure must
        not spoil :meth:`_store_end_and`'s transaction)."""
        try:
            with transaction.atomic():
                replay.store_end(runner.match_id, runner.snapshots, runner.state, run)
        except Exception:
            log.exception("match %d: could not store its snapshots", runner.match_id)

    async def _store_end_and(self, runner: MatchRunner, run: tables.Run, record, *args) -> bool:
        """:meth:`_store_end`, then ``record(*args)`` (tables.finish or tables.abort: how the
        match ended), in one trip to the database thread and one transaction (one commit:
        on PostgreSQL each is a wait for the disk, and the database thread was the arena's
        busiest); what ``record`` returns (whether the end was recorded).  A failure of
        ``record`` is raised, and nothing of the end is kept."""
        def both() -> bool:
            with transaction.atomic():
                self._store_end_now(runner, run)
                return record(*args)
        return await sync_to_async(both)()

    async def _tell_ended(self, match_id: int, ending: dict) -> None:
        """Every page on ``match_id`` shows how it ended (``ending``, :func:`over_message`)
        and reloads the table; a failure is logged."""
        try:
            await self.layer.group_send(table_group(match_id), ending)
            await self.layer.group_send(table_group(match_id), {"type": "table.update"})
        except Exception:
            log.exception("match %d: could not tell its pages how it ended", match_id)

    # --- watching, pause, step, cancel ----------------------------------------------------
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
        an unknown or finished match, or one whose play is over here and its end being
        recorded (see :meth:`pause` for ``forwarded``)."""
        elsewhere = await self._known(match_id, here_only=forwarded)
        if elsewhere is not None:
            await self._ask(elsewhere, match_id, {"type": "arena.cancel", "reason": reason})
            return
        task = self.tasks.get(match_id)
        if task is not None and match_id not in self.playing:
            # Its runner is done and its end in hand (_run): cancelled now, a match recorded
            # as finished would be told to its pages as aborted, and its abort refused.
            raise LookupError(f"match {match_id} is over")
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

    # --- what the bot transports ask about this arena's matches ---------------------------
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
