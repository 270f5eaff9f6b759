"""A person leaves a running match, or is away, and comes back (issue 7): their seat is played
for them (Jass: by the rule-based bot, so the partner does not suffer; Liar's Dice: as a
silent bot, as the reference treats a bot that went away), everyone sees it, and the person
can take the seat back."""
from __future__ import annotations

import asyncio
import json

import pytest

from games.arena import registry
from games.arena.runner import MatchRunner
from games.arena.seats import HumanSeat

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
    from games.arena.seats import BuiltinSeat

    label, policy = spec.builtin_bots[name]
    return BuiltinSeat(label, policy, seed=seed)
