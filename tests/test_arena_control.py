"""The arena's organiser controls, for every game (Blokus needs them for the Software-Challenge
admin protocol): tables with reserved seats, watchers that get every state, pause and step,
cancel, and bots seated only at tables of their variant.  Liar's Dice with built-in and
scripted bots stands in for any game here."""
from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from games.arena import registry
from games.arena.models import Match, Seat
from games.arena.play.arena import Arena
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import Answer, BuiltinSeat, SeatEndpoint, resolved

CONFIG = {"players": 2, "dice": 2, "games": 1}


class Log:
    """The runner's event writer and publisher, in memory."""

    def __init__(self):
        self.rows, self.groups = [], []

    async def append(self, rows):
        self.rows += rows

    async def publish(self, group, message):
        self.groups.append(group)


class Watcher:
    def __init__(self):
        self.turns, self.ended, self.results = [], 0, []

    def watch(self, state, happenings, answers):
        self.turns.append((len(answers) if answers else 0, state.is_terminal()))

    def end(self, result):
        self.ended += 1
        self.results.append(result)


class FirstLegalBot(SeatEndpoint):
    """A connected bot that answers every request with its first legal action."""

    kind = "protocol"

    def __init__(self, name):
        self.display_name = name
        self.asked = 0
        self.closed_with = "not closed"

    def ask(self, state, seat, version):
        self.asked += 1
        return resolved(Answer(state.legal_actions(seat)[0]))

    def close(self, result):
        self.closed_with = result


async def settle(rounds=20):
    for _ in range(rounds):
        await asyncio.sleep(0)


def bots_runner(log, paused=True):
    spec = registry.get("liars_dice")
    policy = spec.builtin_bots["random"][1]
    seats = [BuiltinSeat("A", policy, 1), BuiltinSeat("B", policy, 2)]
    runner = MatchRunner(1, spec, CONFIG, 11, seats, log, log.publish)
    runner.paused = paused
    return runner


@pytest.mark.django_db
async def test_a_paused_match_sends_no_request_until_stepped_then_one_step_at_a_time():
    log = Log()
    runner = bots_runner(log)
    watcher = Watcher()
    runner.add_watcher(watcher)
    task = asyncio.create_task(runner.run())
    await settle()
    assert runner.step == 0 and log.rows == []  # held before the first request
    assert watcher.turns == [(0, False)]  # the first state, at the start
    assert log.groups, "the state it waits in is published"
    runner.step_once()
    await settle()
    assert runner.step == 1
    runner.step_once()
    runner.step_once()
    await settle()
    assert runner.step == 3
    assert [n for n, _ in watcher.turns[1:]] == [2, 2, 2]  # every step, with its answers
    runner.pause(False)
    await asyncio.wait_for(task, 10)
    assert runner.state.is_terminal()
    assert watcher.turns[-1][1] is True
    assert len(watcher.turns) == 1 + runner.step


@pytest.mark.django_db
async def test_a_watcher_that_raises_is_dropped_and_the_match_goes_on():
    log = Log()
    runner = bots_runner(log, paused=False)

    class Broken(Watcher):
        def watch(self, state, happenings, answers):
            if answers:
                raise RuntimeError("observer bug")

    runner.add_watcher(Broken())
    await asyncio.wait_for(runner.run(), 10)
    assert runner.state.is_terminal() and runner.watchers == []


@pytest.mark.django_db(transaction=True)
async def test_a_prepared_table_fills_only_by_its_codes_starts_paused_and_can_be_cancelled():
    arena = Arena(listen=False)
    await arena.start()
    try:
        match_id, codes = await arena.prepare("liars_dice", CONFIG, ["p1", "p2"], paused=True)
        assert len(set(codes)) == 2
        seats = await sync_to_async(lambda: list(Seat.objects.filter(match_id=match_id).order_by("index")))()
        assert [s.display_name for s in seats] == ["p1", "p2"] and all(s.occupied for s in seats)
        # A bot that joins without a code does not take a reserved seat.
        stranger = FirstLegalBot("stranger")
        stranger_seat = await arena.seat_bot("liars_dice", stranger)
        assert await sync_to_async(lambda: Seat.objects.get(pk=stranger_seat).match_id)() != match_id
        watcher = Watcher()
        await arena.watch(match_id, watcher)
        with pytest.raises(LookupError):
            await arena.seat_reserved("not-a-code", FirstLegalBot("x"))
        one, two = FirstLegalBot("one"), FirstLegalBot("two")
        assert (await arena.seat_reserved(codes[0], one))[1] == 0
        with pytest.raises(LookupError):
            await arena.seat_reserved(codes[0], FirstLegalBot("again"))
        await arena.seat_reserved(codes[1], two)
        assert match_id in arena.runners
        await settle()
        runner = arena.runners[match_id]
        assert runner.paused and runner.step == 0 and one.asked + two.asked == 0
        assert watcher.turns == [(0, False)]
        await arena.step(match_id)
        await settle()
        assert runner.step == 1 and one.asked + two.asked == 2
        await arena.cancel(match_id)
        await asyncio.sleep(0.1)
        match = await sync_to_async(Match.objects.get)(pk=match_id)
        assert match.status == Match.Status.ABORTED
        assert match.result == {"aborted": "cancelled by an organiser"}
        assert await sync_to_async(match.events.count)() == 2  # the step played is kept
        assert watcher.ended == 1 and watcher.results == [None]
        assert one.closed_with is None and two.closed_with is None
        with pytest.raises(LookupError):
            await arena.pause(match_id, False)
    finally:
        await arena.stop()


@pytest.mark.django_db(transaction=True)
async def test_a_cancel_that_comes_while_a_finished_match_is_being_recorded_is_refused():
    """A tournament that stops early cancels its live matches; one whose play is over and whose
    end is being written is left to finish: it stays finished, and its pages are told so."""
    arena = Arena(listen=False)
    await arena.start()
    try:
        match_id, codes = await arena.prepare("liars_dice", CONFIG, ["p1", "p2"], paused=True)
        watcher = Watcher()
        await arena.watch(match_id, watcher)
        reached, release = asyncio.Event(), asyncio.Event()
        store = arena._store_end_and

        async def held_store(*args):
            reached.set()
            await release.wait()
            return await store(*args)

        arena._store_end_and = held_store  # the end's write waits for the test
        await arena.seat_reserved(codes[0], FirstLegalBot("one"))
        await arena.seat_reserved(codes[1], FirstLegalBot("two"))
        await arena.pause(match_id, False)
        await asyncio.wait_for(reached.wait(), 30)
        with pytest.raises(LookupError, match="is over"):
            await arena.cancel(match_id, "the tournament stopped early")
        task = arena.tasks[match_id]
        release.set()
        await asyncio.wait_for(task, 30)
        match = await sync_to_async(Match.objects.get)(pk=match_id)
        assert match.status == Match.Status.FINISHED and "aborted" not in match.result
        assert watcher.results == [match.result]
    finally:
        await arena.stop()


@pytest.mark.django_db(transaction=True)
async def test_bots_are_seated_only_at_tables_of_the_configuration_they_ask_for():
    arena = Arena(listen=False)
    await arena.start()
    try:
        a = await arena.seat_bot("liars_dice", FirstLegalBot("a"), {"dice": 3})
        b = await arena.seat_bot("liars_dice", FirstLegalBot("b"), {"dice": 4})
        c = await arena.seat_bot("liars_dice", FirstLegalBot("c"), {"dice": 3})
        match_of = await sync_to_async(lambda: {pk: Seat.objects.select_related("match").get(pk=pk).match
                                                for pk in (a, b, c)})()
        assert match_of[a].pk == match_of[c].pk != match_of[b].pk
        assert match_of[a].config["dice"] == 3 and match_of[b].config["dice"] == 4
        # joining a named room: the open seat there, or a clear refusal
        d = await arena.seat_bot_in("liars_dice", match_of[b].pk, FirstLegalBot("d"))
        assert await sync_to_async(lambda: Seat.objects.get(pk=d).match_id)() == match_of[b].pk
        with pytest.raises(LookupError):
            await arena.seat_bot_in("liars_dice", match_of[b].pk, FirstLegalBot("e"))
    finally:
        await arena.stop()


class Silent(SeatEndpoint):
    """A seat that is asked and never answers (a person thinking)."""

    kind = "human"

    def ask(self, state, seat, version):
        self.future = asyncio.get_running_loop().create_future()
        return self.future


@pytest.mark.django_db
async def test_an_interruption_ends_the_step_in_hand_for_a_seat_that_was_not_asked():
    """A Blokus player who leaves while the other team thinks loses at once (LEFT)."""
    log = Log()
    spec = registry.get("blokus")
    thinker = Silent()
    runner = MatchRunner(3, spec, {"variant": "2021"}, 5, [thinker, FirstLegalBot("leaver")], log, log.publish)
    task = asyncio.create_task(runner.run())
    await settle()
    assert runner.state.to_act() == (0,) and not thinker.future.done()
    runner.interrupt(1, Answer(["forfeit", "LEFT", "left"], True, "left"))
    result = await asyncio.wait_for(task, 5)
    assert result["causes"] == ["REGULAR", "LEFT"] and result["winner"] == 0
    assert [(row[3], row[4][:2]) for row in log.rows] == [(1, ["forfeit", "LEFT"])]
    assert thinker.future.done()  # the open request was dropped, a late answer goes nowhere
    runner.interrupt(0, Answer(["forfeit", "LEFT", "late"], True, "left"))  # over: ignored
