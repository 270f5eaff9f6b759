"""No ghost matches (issue 23): whatever fails while a table starts or while its runner ends,
no match stays ``running`` without a runner or ``open`` with seats nobody will play.  The
arena core in process, Liar's Dice standing in for any game; Hanabi's own lobby is checked
in tests/test_hanabi_lobby.py."""
from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers

from games.arena.models import Match
from games.arena.play import running, tables
from games.arena.play.arena import Arena
from games.arena.play.seats import Answer, SeatEndpoint, resolved

pytestmark = [pytest.mark.django_db(transaction=True)]

CONFIG = {"players": 2, "dice": 2, "games": 1}


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends = {}
    yield


class Bot(SeatEndpoint):
    """A connected bot that plays its first legal action, or is told it was let go."""

    kind = "protocol"

    def __init__(self, name):
        self.display_name = name
        self.closed_with = "not closed"

    def ask(self, state, seat, version):
        return resolved(Answer(state.legal_actions(seat)[0]))

    def close(self, result):
        self.closed_with = result


async def status_of(match_id: int) -> tuple[str, dict | None]:
    match = await sync_to_async(Match.objects.get)(pk=match_id)
    return match.status, match.result


async def until_over(arena: Arena, match_id: int) -> None:
    for _ in range(500):
        if match_id not in arena.tasks:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"match {match_id} still has a runner")


async def seated_table(arena: Arena, bots: list[Bot]) -> int:
    match = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["open_bot", "open_bot"], None)
    for bot in bots:
        await arena.seat_bot("liars_dice", bot, {"players": 2})
    return match.pk


async def test_a_bot_whose_seat_is_freed_while_its_table_starts_plays_as_a_seat_that_left(monkeypatch):
    """The KeyError of issue 23: the bot's disconnect took it out of the arena's waiting bots
    while the table's start was in the database; the match runs (nobody's runner is lost)."""
    arena = Arena(listen=False)
    await arena.start()
    loop = asyncio.get_running_loop()
    leaver, stayer = Bot("leaver"), Bot("stayer")
    try_start = tables.try_start

    def hang_up_meanwhile(match_id, *run):
        done = threading.Event()

        def leave():  # what a disconnect does first (Arena.bot_left), on the loop
            leaver.gone = True
            for seat_id, bot in list(arena.waiting.items()):
                if bot is leaver:
                    arena.waiting.pop(seat_id)
            done.set()

        loop.call_soon_threadsafe(leave)
        assert done.wait(10)
        return try_start(match_id, *run)

    monkeypatch.setattr(tables, "try_start", hang_up_meanwhile)
    try:
        match_id = await seated_table(arena, [leaver, stayer])
        assert match_id in arena.tasks, "the match started with its runner"
        await until_over(arena, match_id)
        assert (await status_of(match_id))[0] in (Match.Status.FINISHED, Match.Status.ABORTED)
        assert arena.waiting == {}
    finally:
        await arena.stop()


async def test_a_failure_while_starting_aborts_the_match_with_its_reason_and_lets_its_bots_go(monkeypatch):
    arena = Arena(listen=False)
    await arena.start()

    def broken_runner(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(running, "MatchRunner", broken_runner)
    try:
        one, two = Bot("one"), Bot("two")
        match_id = await seated_table(arena, [one, two])
        status, result = await status_of(match_id)
        assert status == Match.Status.ABORTED
        assert result == {"aborted": "internal error while starting: RuntimeError"}
        assert one.closed_with is None and two.closed_with is None, "both bots were let go"
        assert arena.waiting == {} and match_id not in arena.tasks and not arena.starting
    finally:
        await arena.stop()


async def test_a_runner_that_fails_at_its_end_leaves_the_match_aborted_even_if_the_database_refuses_once(
        monkeypatch):
    """The runner's crash path: recording the result fails, and so does the first attempt to
    record the abort; the sweep records it, so the match is not left 'running'."""
    arena = Arena(listen=False)
    await arena.start()
    refusals = []
    abort = tables.abort

    def finish_fails(match_id, result, analysis_subjects=(), run=None):
        raise RuntimeError("database gone")

    def abort_fails_once(match_id, reason, run=None):
        if not refusals:
            refusals.append(match_id)
            raise RuntimeError("database gone")
        return abort(match_id, reason, run)

    monkeypatch.setattr(tables, "finish", finish_fails)
    monkeypatch.setattr(tables, "abort", abort_fails_once)
    try:
        match_id = await seated_table(arena, [Bot("one"), Bot("two")])
        await until_over(arena, match_id)
        assert refusals == [match_id]
        assert (await status_of(match_id))[0] == Match.Status.RUNNING, "the database refused the abort"
        assert arena.unrecorded_aborts == {match_id: "internal error: RuntimeError"}
        await arena.sweep()
        assert await status_of(match_id) == (Match.Status.ABORTED, {"aborted": "internal error: RuntimeError"})
        assert arena.unrecorded_aborts == {}
    finally:
        await arena.stop()


async def test_a_match_left_running_by_a_previous_server_is_aborted_when_the_arena_starts():
    match = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["builtin:random", "builtin:random"], None)
    assert await sync_to_async(tables.try_start)(match.pk) is not None  # running, and no runner anywhere
    arena = Arena(listen=False)
    await arena.start()
    try:
        assert await status_of(match.pk) == (Match.Status.ABORTED, {"aborted": tables.STALE})
    finally:
        await arena.stop()
