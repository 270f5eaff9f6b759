"""Seating: where a connected bot sits, until its table starts (the :class:`Seating` half of
:class:`~games.arena.play.arena.Arena`).

A bot that connects on a game's door is seated at the oldest open bot seat that fits, at a
table it names, on a seat reserved for it (an organiser's prepared table), or at a new
automatic table; the table it sits at is then this arena's (``Match.owner``, a lease) until
it starts or its bots leave.  Seatings run one at a time in a bounded queue.  Once every seat
of a table is taken, :meth:`~games.arena.play.running.Running.maybe_start` starts it.
"""
from __future__ import annotations

import asyncio
import logging
import uuid

from asgiref.sync import sync_to_async
from django.conf import settings

from games.arena import registry
from games.arena.bots import bot_keys
from games.arena.bots.names import claimed_bot_name
from games.arena.models import Match, Seat
from games.arena.play import tables
from games.arena.play.runner import table_group
from games.arena.play.seats import SeatEndpoint
from games.arena.tournaments import schedule

log = logging.getLogger("arena")

#: What a claim answers for a tournament's entrant whose next match is not made yet.
TOURNAMENT_WAIT = object()
#: Seconds between two looks for such an entrant's seat, unless this arena makes tournament
#: matches sooner (``Arena.tournament_tables``).
TOURNAMENT_LOOK_S = 0.5


class NameTaken(ValueError):
    """A bot asked to be seated under a name another player at that table already has
    (games whose protocol tells players apart by name, e.g. Hanabi's ``target_player``)."""


def auto_pace() -> float:
    """The pace of the tables the server makes for connecting bots (automatic tables, prepared
    rooms): ``ARENA_AUTO_TABLE_PACE`` seconds a move, held to 0 ..
    :data:`~games.arena.play.tables.MAX_PACE` (0, full speed, by default: bots written for the
    original servers expect their pace)."""
    return min(max(float(settings.ARENA["AUTO_TABLE_PACE"]), 0.0), tables.MAX_PACE)


class SeatingBusy(LookupError):
    """Too many connected bots are waiting to be seated at once (``ARENA_MAX_PENDING_SEATINGS``):
    this one is refused rather than queued behind them."""


class Seating:
    """The seating half of :class:`~games.arena.play.arena.Arena` (a mixin: the arena's
    ``__init__`` makes the state both halves share).  It keeps :attr:`waiting` (seat id ->
    the connected bot waiting there) and the seating queue, holds tables under
    ``_holding``, and asks the running half to start a table whose seats changed
    (``maybe_start``)."""

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
                       index: int | None = None, new_table: bool = False, held_only: bool = False) -> int | None:
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
        are open elsewhere (bridge's ``JOIN-M NEW``).  With ``held_only`` (a registered bot in a
        tournament's pair event, bridge's ``JOIN-T E<n>``), only a seat held for it, waiting
        while its tournaments have tables to make for it (as any entrant waits), never at
        another table: ``LookupError`` when none is left to wait for."""
        spec = registry.get(game)
        while True:
            made = self.tournament_tables  # taken first: a match made while it claims wakes it
            seat = await self._queued(endpoint, lambda: self._claim(game, spec, endpoint, config, auto,
                                                                    unique_name, index, new_table, held_only))
            if seat is not TOURNAMENT_WAIT:
                break
            # A tournament's entrant whose next match is not made yet (its tournament's
            # at_once, its Swiss round): it waits here, connected, instead of playing at an
            # automatic table, and looks again after each sweep.
            self._sweep_now.set()
            try:
                await asyncio.wait_for(made.wait(), TOURNAMENT_LOOK_S)
            except asyncio.TimeoutError:
                pass  # another arena may have made it
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

    async def _table_changed(self, match_id: int) -> None:
        """Tell the table's pages and the seat-change hooks (bridge's ``JOINED``, Hanabi's
        CONNECTION_RESPONSE), then start it if it is full.  Every bot seated there so far is
        greeted by these hooks: none is left in :attr:`_greeting`."""
        for pk in [pk for pk, m in self._greeting.items() if m == match_id]:
            del self._greeting[pk]
        await self.layer.group_send(table_group(match_id), {"type": "table.update"})
        for hook in list(self.table_hooks):
            try:
                await hook(match_id)
            except Exception:  # a greeting lost must not keep the table from starting
                log.exception("match %d: a seat-change hook failed", match_id)
        await self.maybe_start(match_id)

    async def _claim(self, game: str, spec, endpoint: SeatEndpoint, config: dict | None, auto: bool = True,
                     unique_name: bool = False, index: int | None = None, new_table: bool = False,
                     held_only: bool = False):
        """Claim the seat (see :meth:`seat_bot`) at a table no other arena holds, which this
        one then holds (tables.claim_bot_seat); the seat, in :attr:`waiting` unless the bot
        hung up meanwhile (then freed again).  In the seating worker, so two bots of one name
        cannot both pass the ``unique_name`` test."""
        async with self._holding:
            seat, made = await sync_to_async(self._claim_or_make)(game, spec, endpoint, config, auto, index, new_table,
                                                                  unique_name, held_only)
            if seat is TOURNAMENT_WAIT:
                return seat
            if seat is None:
                raise LookupError(f"no {spec.title} table has a seat held for it, nor will" if held_only
                                  else f"no {spec.title} table has an open bot seat")
            if not made and unique_name and await sync_to_async(tables.name_taken)(
                    seat.match_id, seat.display_name, but=seat.pk):
                await self._give_back(seat)
                raise NameTaken(f"a player named {endpoint.display_name!r} is already at table {seat.match_id}")
            endpoint.display_name = seat.display_name  # with a copy's number (_claim_or_make)
            if endpoint.gone:  # hung up while we looked for a seat
                await self._give_back(seat)
            else:
                self._wait_at(seat.pk, seat.match_id, endpoint)
            return seat

    def _claim_or_make(self, game: str, spec, endpoint: SeatEndpoint, config: dict | None, auto: bool,
                       index: int | None, new_table: bool, unique_name: bool = False,
                       held_only: bool = False) -> tuple[Seat | None, bool]:
        """The database half of :meth:`_claim`, in one trip to the database thread (each trip
        costs both threads a hand-off: about a tenth of a Blokus game's setup): an open bot
        seat, else (with ``auto``) one at a new automatic table made for it.  ``(seat or None,
        whether its table was made here)``; ``(TOURNAMENT_WAIT, False)`` for a tournament's
        entrant whose next match is not made yet (schedule.entrant_waits).  Synchronous."""
        seat = None
        if not new_table:
            seat = tables.claim_bot_seat(game, endpoint.display_name, config, bot_id=endpoint.bot_id, index=index,
                                         owner=self.name, lease_s=self.lease_s, held_only=held_only)
            if (unique_name and seat is not None and seat.reserved and seat.registered_bot_id is not None
                    and tables.name_taken(seat.match_id, seat.display_name, but=seat.pk)):
                # A seat held for this very bot beside another of its copies (one entrant fills
                # a cooperative tournament's table): a number tells them apart, in this trip to
                # the database thread, so no reader of the table (this arena holds it) sees
                # two of one name.
                tables.number_copy(seat)
        if held_only and seat is None:  # a pair event's entrant: its next table, or nothing
            return (TOURNAMENT_WAIT if schedule.entrant_waits(game, endpoint.bot_id) else None), False
        if seat is not None:
            return seat, False
        if endpoint.bot_id is not None and not new_table and index is None and schedule.entrant_waits(
                game, endpoint.bot_id):
            # A tournament's entrant: its next match's seat, not an automatic table (nor, in a
            # game that gathers its own, as Hanabi does without ``auto``, a gathering one).
            return TOURNAMENT_WAIT, False
        if not auto:
            return None, False
        auto_config = {**spec.auto_config(), **(config or {})}
        choices = [tables.OPEN_BOT] * spec.num_seats(spec.normalize_config(auto_config))
        index = index or 0
        if not 0 <= index < len(choices):
            return None, False
        # Never the "every hand" view: nobody asked for it, and the bots seated here could
        # watch their own match.  Held by this arena from the first moment, the bot seated
        # in the same statements: another arena's bot could take its seat before ours.
        match = tables.create_table(game, auto_config, choices, None, auto=not new_table, pace_s=auto_pace(),
                                    owner=self.name, lease_s=self.lease_s,
                                    connected=(index, endpoint.display_name, endpoint.bot_id))
        return match.created_seats[index], True

    def _wait_at(self, seat_id: int, match_id: int, endpoint: SeatEndpoint) -> None:
        """``endpoint`` took seat ``seat_id`` of table ``match_id``: it waits there for the
        start, not yet greeted (:meth:`_table_changed` greets it)."""
        self.waiting[seat_id] = endpoint
        self._greeting[seat_id] = match_id
        endpoint.seated_at = match_id

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
                    self._wait_at(seat.pk, seat.match_id, endpoint)
                return seat

        seat = await self._queued(endpoint, claim)
        if seat is None:
            return None
        if seat.pk in self.waiting:
            await self._table_changed(match_id)
        return seat.pk

    # --- prepared tables (an organiser's reservations) -----------------------------------
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
            self._wait_at(seat_id, match_id, endpoint)
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

    # --- a waiting bot leaves -------------------------------------------------------------
    async def bot_left(self, seat_id: int) -> None:
        """A waiting bot disconnected before its table started: open its seat again (a
        reserved seat stays reserved: its code may be presented again); the table is no
        arena's any more if no other bot of this arena's sits there."""
        self._greeting.pop(seat_id, None)
        if self.waiting.pop(seat_id, None) is None:
            return
        async with self._holding:
            match_id = await sync_to_async(tables.free_bot_seat)(seat_id, self.name)
            if match_id:
                await self._release_if_unheld(match_id)
        if match_id:
            await self.layer.group_send(table_group(match_id), {"type": "table.update"})

    # --- what the bot transports ask about this arena's own bots ---------------------------
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
        """The match id of seat ``seat_id`` (None if there is no such seat): known without
        the database while a bot of this arena waits there."""
        endpoint = self.waiting.get(seat_id)
        if endpoint is not None and endpoint.seated_at is not None:
            return endpoint.seated_at
        return await sync_to_async(tables.match_of_seat)(seat_id)

    async def seated_names(self, match_id: int) -> list[tuple[int, str | None]]:
        """``(seat id, name)`` of each seat of ``match_id`` in seat order, None for a seat
        not taken (:func:`games.arena.play.tables.seated_names`)."""
        return await sync_to_async(tables.seated_names)(match_id)

    async def bot_named(self, seat_id: int, name: str) -> None:
        """A bot sent its name: show it at the table."""
        await sync_to_async(tables.rename_seat)(seat_id, name)
