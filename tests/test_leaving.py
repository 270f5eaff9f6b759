"""A person leaves a running match, or is away, and comes back: their seat is played
for them (Jass: by the rule-based bot, so the partner does not suffer; Liar's Dice: as a
silent bot, as the reference treats a bot that went away), everyone sees it, and the person
can take the seat back.  Nobody left to play for: leaving on purpose ends the match at once;
being away ends it only after the away grace, unless someone takes their seat back."""
from __future__ import annotations

import asyncio
import json

import pytest

from games.arena import registry
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import Answer, HumanSeat, SeatEndpoint

pytestmark = pytest.mark.django_db


class Log:
    """The runner's event writer and publisher, in memory."""

    def __init__(self):
        self.rows, self.messages = [], []

    async def append(self, rows):
        self.rows += rows

    async def publish(self, group, message):
        self.messages.append(json.loads(message["text"]))


async def play_until(runner, seats, until, leave_at=None, timeout=20.0):
    """Answer every open request of ``seats`` with the first legal action until ``until()``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not until():
        assert loop.time() < deadline, "the match did not get there"
        for seat in seats:
            ep = runner.endpoints[seat]
            request = ep.open_request
            if request:
                action = runner.state.legal_actions(seat)[0]
                assert await runner.human_action(seat, request["version"], action) is None
        await asyncio.sleep(0)


async def test_a_jass_player_who_leaves_is_played_by_the_rule_based_bot_and_can_come_back(settings):
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 30.0}
    spec = registry.get("jass")
    log = Log()
    people = [HumanSeat("Ann", spec), HumanSeat("Bob", spec)]
    endpoints = [people[0], spec_builtin(spec, "random", 1), people[1], spec_builtin(spec, "random", 3)]
    runner = MatchRunner(1, spec, {"max_deals": 1}, 5, endpoints, log, log.publish)
    task = asyncio.create_task(runner.run())
    try:
        await play_until(runner, [0, 2], lambda: len(log.rows) >= 8)
        assert await runner.human_leave(0) is None
        assert log.messages[-1]["away"] == [0], "everyone sees that Ann's seat is played for her"
        left_at = len(log.rows)
        await play_until(runner, [2], lambda: sum(1 for r in log.rows[left_at:] if r[3] == 0) >= 3)
        ann = [r for r in log.rows[left_at:] if r[3] == 0]
        assert all(r[5] and r[6] == "left the match: played by Rule-based bot" for r in ann)
        assert await runner.human_leave(0, back=True) is None
        back_at = len(log.rows)
        await play_until(runner, [0, 2], lambda: task.done() or any(r[3] == 0 for r in log.rows[back_at:]))
        assert all(not r[5] for r in log.rows[back_at:] if r[3] == 0), "Ann plays again herself"
        assert log.messages[-1]["away"] == []
        await play_until(runner, [0, 2], task.done)
        assert runner.state.is_terminal() and not runner.abandoned
    finally:
        task.cancel()


async def test_a_liars_dice_player_away_loses_rounds_at_once_and_everyone_gone_ends_the_match(settings):
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 30.0, "HUMAN_CHALLENGE_WINDOW": 30.0}
    spec = registry.get("liars_dice")
    log = Log()
    endpoints = [HumanSeat("Ann", spec), HumanSeat("Bob", spec)]
    runner = MatchRunner(2, spec, {"players": 2, "dice": 3, "games": 3}, 7, endpoints, log, log.publish)
    task = asyncio.create_task(runner.run())
    try:
        await play_until(runner, [0, 1], lambda: len(log.rows) >= 4)
        await runner.human_leave(0)
        left_at = len(log.rows)
        await play_until(runner, [1], lambda: any(r[3] == 0 and r[5] for r in log.rows[left_at:]))
        assert [r[6] for r in log.rows[left_at:] if r[3] == 0 and r[5]][0] == "left the match"
        await runner.human_leave(1)  # now nobody is left to play for
        await asyncio.wait_for(task, 5)
        assert runner.abandoned
    finally:
        task.cancel()


def spec_builtin(spec, name, seed):
    from games.arena.play.seats import BuiltinSeat

    label, policy = spec.builtin_bots[name]
    return BuiltinSeat(label, policy, seed=seed)


class HeldBot(SeatEndpoint):
    """A built-in bot whose answers the test releases (:meth:`answer_all`), so the match
    cannot run ahead of the test."""

    kind = "builtin"

    def __init__(self, name: str):
        self.display_name = name
        self.open: list = []  # (future, legal actions)

    def ask(self, state, seat, version):
        future = asyncio.get_running_loop().create_future()
        self.open.append((future, state.legal_actions(seat)))
        return future

    def answer_all(self) -> None:
        for future, legal in self.open:
            if not future.done():
                future.set_result(Answer(legal[0]))
        self.open = []


async def drive(runner, bots, until, timeout=10.0):
    """Release the held bots' answers until ``until()``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not until():
        assert loop.time() < deadline, "the match did not get there"
        for bot in bots:
            bot.answer_all()
        await asyncio.sleep(0.001)


def jass_with_ann(grace_s: float):
    """A Jass table: Ann (a person who is away after one request runs out) and three held bots."""
    spec = registry.get("jass")
    log = Log()
    ann = HumanSeat("Ann", spec)
    ann.absent_after = 1
    bots = [HeldBot(f"bot{i}") for i in range(3)]
    runner = MatchRunner(3, spec, {"max_deals": 2}, 11, [ann, *bots], log, log.publish, away_grace_s=grace_s)
    return runner, ann, bots, log


async def test_the_only_player_who_leaves_ends_the_match_at_once(settings):
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 30.0}
    runner, ann, bots, log = jass_with_ann(grace_s=600)
    task = asyncio.create_task(runner.run())
    try:
        await drive(runner, bots, lambda: ann.open_request is not None)
        assert log.messages[-1]["present"] == [0], "Ann's page knows she is the only player"
        rows_before = len(log.rows)
        assert await runner.human_leave(0) is None
        await asyncio.wait_for(task, 5)  # nobody answered for the bots: it ended by itself
        assert runner.abandoned and not runner.state.is_terminal()
        assert len(log.rows) == rows_before, "not one move more: no stand-in, no bot"
    finally:
        task.cancel()


async def test_everyone_away_ends_the_match_only_after_the_grace_and_coming_back_keeps_it(settings):
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 0.01}  # Ann's first request runs out
    runner, ann, bots, log = jass_with_ann(grace_s=600)
    task = asyncio.create_task(runner.run())
    try:
        await drive(runner, bots, lambda: runner.away_timer is not None)  # away: the grace runs
        assert ann.gone and not ann.left
        # The stand-in plays for her meanwhile and the match goes on, step after step.
        away_at = len(log.rows)
        await drive(runner, bots, lambda: sum(1 for r in log.rows[away_at:] if r[3] == 0) >= 3)
        assert all(r[5] and r[6] == "away: played by Rule-based bot" for r in log.rows[away_at:] if r[3] == 0)
        assert not runner.abandoned and not task.done()
        assert log.messages[-1]["away"] == [0] and log.messages[-1]["present"] == []
        assert log.messages[-1]["abandon_at"] > log.messages[-1]["ts"] + 500, "her page can say when it ends"
        assert await runner.human_leave(0, back=True) is None  # in time: the countdown stops
        assert runner.away_timer is None and log.messages[-1]["abandon_at"] is None
        assert log.messages[-1]["present"] == [0]
        assert not runner.abandoned and not task.done()
    finally:
        task.cancel()


async def test_everyone_away_past_the_grace_abandons_the_match_in_the_middle_of_a_step(settings):
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 0.01}
    runner, ann, bots, log = jass_with_ann(grace_s=0.05)
    task = asyncio.create_task(runner.run())
    try:
        await drive(runner, bots, lambda: ann.gone)
        # The bots' requests stay open now: the grace ends the match while it waits for them.
        await asyncio.wait_for(task, 5)
        assert runner.abandoned and not runner.state.is_terminal()
        assert runner.away_timer is None
    finally:
        task.cancel()


async def test_leaving_while_another_person_still_plays_hands_the_seat_over(settings):
    """Bob is still there, so Ann's leaving does not end anything, and her page says so:
    the view names Bob as still playing; once Bob is away too, nobody is."""
    settings.ARENA = {**settings.ARENA, "HUMAN_DEADLINE": 30.0}
    spec = registry.get("liars_dice")
    log = Log()
    ann, bob = HumanSeat("Ann", spec), HumanSeat("Bob", spec)
    runner = MatchRunner(4, spec, {"players": 2, "dice": 3, "games": 3}, 7, [ann, bob], log, log.publish,
                         away_grace_s=600)
    task = asyncio.create_task(runner.run())
    try:
        await play_until(runner, [0, 1], lambda: len(log.rows) >= 2)
        assert log.messages[-1]["present"] == [0, 1]
        assert await runner.human_leave(0) is None
        assert log.messages[-1]["present"] == [1] and not runner.abandoned
        assert await runner.human_leave(0, back=True) is None
        assert log.messages[-1]["present"] == [0, 1]
    finally:
        task.cancel()
