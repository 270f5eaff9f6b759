"""Several arenas on one database, as arena processes see it (issue 26; docs/architecture.md,
*Several arenas*): two :class:`Arena` objects in one process stand for two processes (one
database, SQLite here; the database's side on PostgreSQL is in tests/test_ownership.py).
"Another arena judged this one dead" is written as that arena would: the lease expired,
then ``tables.abort_stale`` or ``tables.free_connected_bot_seats`` of another name, in one
database call (so this arena's own renewal cannot come in between)."""
from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.utils import timezone

from games.arena.models import ArenaProcess, Match, RatingChange, Seat, Snapshot
from games.arena.play import tables
from games.arena.play.arena import LEASE_LOST, Arena
from games.arena.play.runner import table_group
from tests.test_arena_control import FirstLegalBot, Watcher, settle

pytestmark = [pytest.mark.django_db(transaction=True)]

CONFIG = {"players": 2, "dice": 2, "games": 1}


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends = {}
    yield


async def row(match_id: int) -> Match:
    return await sync_to_async(Match.objects.get)(pk=match_id)


async def until_over(arena: Arena, match_id: int) -> None:
    for _ in range(1000):
        if match_id not in arena.tasks:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"match {match_id} still has a runner")


def judged_dead(match_ids: list[int], by: str = "another-arena") -> None:
    """What another arena does once these matches' lease expired (their arena stalled)."""
    Match.objects.filter(pk__in=match_ids).update(lease_until=timezone.now() - timedelta(seconds=1))
    tables.abort_stale(by)
    tables.free_connected_bot_seats(by)


async def paused_match(arena: Arena) -> tuple[int, list[FirstLegalBot], Watcher]:
    """A prepared Liar's Dice table of two connected bots, running at ``arena``, held before
    its first request."""
    match_id, codes = await arena.prepare("liars_dice", CONFIG, ["p1", "p2"], paused=True)
    bots = [FirstLegalBot("one"), FirstLegalBot("two")]
    watcher = Watcher()
    await arena.watch(match_id, watcher)
    for code, bot in zip(codes, bots):
        await arena.seat_reserved(code, bot)
    assert arena.is_running(match_id)
    return match_id, bots, watcher


async def test_a_run_that_lost_its_lease_is_cancelled_at_the_next_renewal_and_records_nothing():
    arena = Arena(listen=False)
    await arena.start()
    try:
        match_id, bots, watcher = await paused_match(arena)
        await arena.step(match_id)  # one step played, so there is something it could record
        await settle()
        match = await row(match_id)
        assert (match.owner, match.attempt, match.status) == (arena.name, 1, Match.Status.RUNNING)
        assert arena.playing == {match_id: 1}
        await sync_to_async(judged_dead)([match_id])
        await arena.renew()
        await until_over(arena, match_id)
        match = await row(match_id)
        assert match.status == Match.Status.ABORTED
        assert match.result == {"aborted": tables.STALE}, "the other arena's abort is not overwritten"
        assert match.final_view is None
        assert await sync_to_async(Snapshot.objects.filter(match_id=match_id).count)() == 0
        assert watcher.results == [None] and [b.closed_with for b in bots] == [None, None]
        assert arena.playing == {} and not arena.is_running(match_id)
        # Its own lease on itself is renewed all the same.
        assert await sync_to_async(ArenaProcess.objects.filter(name=arena.name).exists)()
    finally:
        await arena.stop()


async def test_a_run_whose_match_another_arena_aborted_records_no_result_and_no_rating():
    arena = Arena(listen=False)
    await arena.start()
    try:
        match_id, bots, watcher = await paused_match(arena)
        await sync_to_async(judged_dead)([match_id])
        await arena.pause(match_id, False)  # it plays on to the end, unaware
        await until_over(arena, match_id)
        match = await row(match_id)
        assert (match.status, match.result) == (Match.Status.ABORTED, {"aborted": tables.STALE})
        assert match.final_view is None
        assert await sync_to_async(RatingChange.objects.filter(match_id=match_id).count)() == 0
        scores = await sync_to_async(lambda: list(Seat.objects.filter(match_id=match_id)
                                                  .values_list("final_score", flat=True)))()
        assert scores == [None, None]
        assert watcher.results == [None], "its watchers are not told a result that was not kept"
    finally:
        await arena.stop()


async def test_a_reservation_is_taken_at_any_arena_but_one_table_never_holds_bots_of_two():
    first, second = Arena(listen=False), Arena(listen=False)
    await first.start()
    await second.start()
    try:
        match_id, codes = await first.prepare("liars_dice", CONFIG, ["p1", "p2"])
        seats = await sync_to_async(lambda: list(Seat.objects.filter(match_id=match_id).order_by("index")))()
        assert [s.reservation for s in seats] == [tables.reservation_hash(c) for c in codes]
        assert not hasattr(first, "reservations")
        assert await first.reserved_open_tables([match_id]) == {match_id}
        # The second arena seats a bot by the code the first one made: the table is its now.
        early = FirstLegalBot("early")
        seat_id, index = await second.seat_reserved(codes[0], early)
        assert (seat_id, index) == (seats[0].pk, 0)
        assert (await row(match_id)).owner == second.name
        with pytest.raises(LookupError, match="already in use"):
            await second.seat_reserved(codes[0], FirstLegalBot("again"))
        with pytest.raises(LookupError, match="another arena process"):
            await first.seat_reserved(codes[1], FirstLegalBot("late"))
        # Its bot leaves: the seat stays reserved, and no arena holds the table any more.
        await second.bot_left(seat_id)
        match = await row(match_id)
        assert match.owner == "" and match.status == Match.Status.OPEN
        assert await sync_to_async(lambda: Seat.objects.get(pk=seat_id).occupied)()
        one, two = FirstLegalBot("one"), FirstLegalBot("two")
        await first.seat_reserved(codes[0], one)
        await first.seat_reserved(codes[1], two)
        assert first.is_running(match_id) and not second.is_running(match_id)
        assert first.player_names(match_id) == ["one", "two"] and second.player_names(match_id) is None
        assert first.match_played_by(one) == match_id
        await until_over(first, match_id)
        match = await row(match_id)
        assert (match.status, match.owner, match.attempt) == (Match.Status.FINISHED, first.name, 1)
        with pytest.raises(LookupError, match="unknown reservation code"):
            await second.seat_reserved(codes[0], FirstLegalBot("after"))
        assert await first.reserved_open_tables([match_id]) == set()
    finally:
        await second.stop()
        await first.stop()


async def test_a_connected_bot_joins_only_a_table_no_other_arena_holds():
    first, second = Arena(listen=False), Arena(listen=False)
    await first.start()
    await second.start()
    try:
        table = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["open_bot", "open_bot"], None)
        mine = FirstLegalBot("mine")
        seat_id = await first.seat_bot_in("liars_dice", table.pk, mine)
        assert first.waiting_bot(seat_id) is mine and (await row(table.pk)).owner == first.name
        with pytest.raises(LookupError, match="another arena process"):
            await second.seat_bot_in("liars_dice", table.pk, FirstLegalBot("theirs"))
        # Seated elsewhere instead: an automatic table of the second arena's.
        theirs = FirstLegalBot("theirs")
        other_seat = await second.seat_bot("liars_dice", theirs, {"players": 2})
        other = await sync_to_async(tables.match_of_seat)(other_seat)
        assert other != table.pk and (await row(other)).owner == second.name
        # The first arena's bot leaves: the table is nobody's, and the second arena's bot may sit.
        await first.bot_left(seat_id)
        assert (await row(table.pk)).owner == ""
        await second.seat_bot_in("liars_dice", table.pk, FirstLegalBot("now"))
        assert (await row(table.pk)).owner == second.name
    finally:
        await second.stop()
        await first.stop()


async def test_a_waiting_bot_whose_table_another_arena_freed_is_let_go_at_the_next_renewal():
    arena = Arena(listen=False)
    await arena.start()
    try:
        table = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["open_bot", "open_bot"], None)
        bot = FirstLegalBot("stalled")
        seat_id = await arena.seat_bot_in("liars_dice", table.pk, bot)
        await sync_to_async(judged_dead)([table.pk])
        match = await row(table.pk)
        assert match.owner == "" and not await sync_to_async(lambda: Seat.objects.get(pk=seat_id).occupied)()
        await arena.renew()
        assert arena.waiting == {} and bot.closed_with is None
    finally:
        await arena.stop()


async def test_an_arena_starting_aborts_only_matches_whose_lease_expired_and_its_sweep_claims_lost_starts():
    live = Arena(listen=False)
    await live.start()
    newcomer = Arena(listen=False)
    try:
        match_id, _, _ = await paused_match(live)
        dead = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["builtin:random", "builtin:random"], None)
        await sync_to_async(tables.try_start)(dead.pk, "dead-arena", 15)
        await sync_to_async(lambda: Match.objects.filter(pk=dead.pk).update(
            lease_until=timezone.now() - timedelta(seconds=1)))()
        await sync_to_async(ArenaProcess.objects.create)(name="dead-arena", channel="x",
                                                         alive_until=timezone.now() - timedelta(seconds=1))
        await newcomer.start()
        assert (await row(dead.pk)).result == {"aborted": tables.STALE}
        assert not await sync_to_async(ArenaProcess.objects.filter(name="dead-arena").exists)()
        live_match = await row(match_id)
        assert live_match.status == Match.Status.RUNNING and live_match.owner == live.name
        assert live.is_running(match_id)
        # A table whose start message was lost: the newcomer's sweep claims and starts it.
        lost = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["builtin:random", "builtin:random"],
                                                        None)
        await newcomer.sweep()
        started = await row(lost.pk)
        assert started.status != Match.Status.OPEN and (started.owner, started.attempt) == (newcomer.name, 1)
        assert (await row(match_id)).status == Match.Status.RUNNING
    finally:
        await newcomer.stop()
        await live.stop()


async def test_the_pages_of_a_run_that_lost_its_lease_are_told_why():
    arena = Arena(listen=False)
    await arena.start()
    try:
        match_id, _, _ = await paused_match(arena)
        told = []
        channel = await arena.layer.new_channel()
        await arena.layer.group_add(table_group(match_id), channel)
        await sync_to_async(judged_dead)([match_id])
        await arena.renew()
        await until_over(arena, match_id)
        while True:
            message = await asyncio.wait_for(arena.layer.receive(channel), 5)
            told.append(message)
            if message["type"] == "match.over":
                break
        assert told[-1]["reason"] == LEASE_LOST
    finally:
        await arena.stop()
