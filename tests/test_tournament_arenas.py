"""One tournament, two arena processes on PostgreSQL and Redis (issue 27): every planned game
is played exactly once, by one arena or the other; kill -9 of one arena mid-tournament and the
other finishes it, the dead arena's running matches played again from their seeds, and every
result equal to a run of that match's seed in this process (so the standings are those of a
run without the kill)."""
from __future__ import annotations

import asyncio
import json

import pytest

from games.arena import registry
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat
from games.arena.tournaments.schedule import deal_seed
from tests.serverproc import wait_until
from tests.test_arenas import KeptWriter, shared_env, sql, start_arena  # noqa: F401 (a fixture)
from tests.test_scaled import scaled_env  # noqa: F401 (a fixture)

pytestmark = pytest.mark.services

CONFIG = {"players": 2, "dice": 3, "games": 2}

CREATE = """
import json
from games.arena.tournaments import schedule
t = schedule.create(game="liars_dice", config=CONFIG, format="round_robin",
                    entrants=["builtin:random", "builtin:probability", "builtin:random", "builtin:probability"],
                    per_pairing=3, at_once=4, pace_s=0.01)
print(json.dumps({"id": t.pk, "seed": t.seed}))
"""


def clean_result(config: dict, seed: int, bots: list[str]) -> dict:
    """The result of a match of built-in ``bots`` on ``seed`` run in this process."""
    spec = registry.get("liars_dice")

    async def publish(group, message):
        pass

    endpoints = [BuiltinSeat(spec.builtin_bots[bot][0], spec.builtin_bots[bot][1], seed + index)
                 for index, bot in enumerate(bots)]
    return asyncio.run(MatchRunner(0, spec, config, seed, endpoints, KeptWriter(), publish).run())


def test_two_arenas_share_a_tournament_and_one_finishes_it_after_the_other_is_killed(arena_factory, shared_env):
    a1 = start_arena(arena_factory, shared_env, "a1")
    a2 = start_arena(arena_factory, shared_env, "a2")
    made = json.loads(a1.shell(CREATE.replace("CONFIG", repr(CONFIG))).strip().splitlines()[-1])
    tid = made["id"]

    def count(status: str, owner: str | None = None) -> int:
        query = ("SELECT count(*) FROM arena_match m JOIN arena_tournamentgame g ON g.id = m.tournament_game_id "
                 "WHERE g.tournament_id = %s AND m.status = %s")
        params = [tid, status]
        if owner is not None:
            query += " AND m.owner = %s"
            params.append(owner)
        return sql(shared_env, query, params)[0][0]

    # Both arenas take its matches; kill -9 the first while it runs some and has finished some.
    wait_until(lambda: count("finished", "a1") >= 2 and count("running", "a1") >= 1 and count("finished", "a2") >= 1,
               60, "both arenas playing the tournament", interval=0.05)
    running_at_a1 = [pk for (pk,) in sql(shared_env, "SELECT m.id FROM arena_match m JOIN arena_tournamentgame g "
                                                     "ON g.id = m.tournament_game_id WHERE g.tournament_id = %s "
                                                     "AND m.status = 'running' AND m.owner = 'a1'", [tid])]
    a1.proc.kill()
    a1.proc.wait()
    assert running_at_a1
    wait_until(lambda: sql(shared_env, "SELECT status FROM arena_tournament WHERE id = %s", [tid])[0][0] == "finished",
               120, "the tournament's end at the other arena", interval=0.2)

    # The killed arena's running matches: aborted when their lease expired, played again.
    for pk in running_at_a1:
        status, result = sql(shared_env, "SELECT status, result FROM arena_match WHERE id = %s", [pk])[0]
        assert status == "aborted" and "lease expired" in result["aborted"], (pk, status, result)
    games = sql(shared_env, "SELECT id, deal, sides FROM arena_tournamentgame WHERE tournament_id = %s ORDER BY number",
                [tid])
    entrants = dict(sql(shared_env, "SELECT index, builtin_bot FROM arena_entrant WHERE tournament_id = %s", [tid]))
    owners = set()
    for game_id, deal, sides in games:
        played = sql(shared_env, "SELECT status, seed, result, owner FROM arena_match WHERE tournament_game_id = %s "
                                 "AND status <> 'aborted'", [game_id])
        assert [row[0] for row in played] == ["finished"], (game_id, played)  # exactly once
        _, seed, result, owner = played[0]
        owners.add(owner)
        assert seed == deal_seed(made["seed"], deal)
        assert result == json.loads(json.dumps(clean_result(CONFIG, seed, [entrants[e] for e in sides])))
    assert owners == {"a1", "a2"}
    replayed = sql(shared_env, "SELECT count(*) FROM arena_match m JOIN arena_tournamentgame g "
                               "ON g.id = m.tournament_game_id WHERE g.tournament_id = %s AND m.status = 'aborted'",
                   [tid])[0][0]
    assert replayed == len(running_at_a1)
