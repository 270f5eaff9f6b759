"""Bridge pair events (docs/architecture.md, *Tournaments*; docs/bridge-protocol.md, JOIN-T):
Mitchell and Howell movements of pairs, run to the end by an in-process arena; equal boards on
equal board sets; matchpoints (Law 78A) and cross-IMPs (Law 78B) across the field, checked by
hand; the refusals of create; and a whole Howell in which two pairs of bots written from the
protocol page join with JOIN-T over real sockets."""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from games.arena import registry
from games.arena.models import Match, Tournament, TournamentGame
from games.arena.tournaments import formats, schedule, standings
from tests.test_tournaments import fresh_layer, played, run_to_end, started_arena  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]

BRIDGE = {"scoring": "duplicate", "replay": 0}


def pairs_of(n: int) -> list[str]:
    names = ["random", "rules"]
    return [f"builtin:{names[i % 2]}" for i in range(n)]


async def run_event(fmt: str, pairs: int, scoring: str, per_round: int = 1) -> Tournament:
    t = await sync_to_async(schedule.create)(game="bridge", config=BRIDGE, format=fmt, entrants=pairs_of(pairs),
                                             per_pairing=per_round, scoring=scoring, at_once=6)
    arena = await started_arena()
    try:
        return await run_to_end(arena, t.pk)
    finally:
        await arena.stop()


@pytest.mark.parametrize("fmt,pairs,scoring", [("howell", 4, "matchpoints"), ("mitchell", 6, "cross_imps")])
async def test_a_movement_of_built_in_pairs_runs_to_the_end_each_table_once_equal_boards_on_equal_sets(
        fmt, pairs, scoring):
    t = await run_event(fmt, pairs, scoring, per_round=2)
    assert t.status == Tournament.Status.FINISHED and t.note == ""

    def read():
        games = list(TournamentGame.objects.filter(tournament=t).order_by("number"))
        matches = played(t)
        return games, {g.pk: matches[g.pk] for g in games}

    games, matches = await sync_to_async(read)()
    plan = schedule.movement_plan(fmt, pairs)
    assert [(g.round, tuple(g.sides), g.deal) for g in games] == [(p.round, p.sides, p.deal) for p in plan]
    by_set = defaultdict(list)
    for g in games:
        assert [m.status for m in matches[g.pk]] == [Match.Status.FINISHED], g  # each table played once
        match = matches[g.pk][0]
        assert match.seed == schedule.deal_seed(t.seed, g.deal)
        boards = [b["board"] for b in match.result["boards"]]
        assert boards == [2 * (g.deal - 1) + 1, 2 * (g.deal - 1) + 2]  # numbered on across the sets
        by_set[g.deal].append(match)
    for deal, same in by_set.items():
        assert len(same) >= 2
        # The hands of every board as dealt, from each finished match's stored last view.
        hands = [m.final_view["board_hands"] for m in same]
        assert len(hands[0]) == 2 and all(h == hands[0] for h in hands), f"set {deal}: the tables got different cards"
    table = await sync_to_async(standings.compute)(t)
    assert table.done == table.planned == len(plan)
    assert table.statistic == ("mean percentage per board" if scoring == "matchpoints" else "mean cross-IMPs per board")
    rows = {r.entrant: r for r in table.rows}
    rounds = len({g.round for g in games})
    assert all(r.games == rounds and r.boards == 2 * rounds for r in table.rows)
    assert all(r.low <= r.stat <= r.high for r in table.rows)
    if scoring == "matchpoints":  # every board's matchpoints are the top's, shared by N-S and E-W
        assert sum(r.points for r in table.rows) == pytest.approx(sum(
            2 * (len(by_set[g.deal]) - 1) * 2 for g in games))
    else:  # cross-IMPs: what N-S gains E-W loses, and the comparisons cancel over the field
        assert sum(r.points for r in table.rows) == pytest.approx(0.0)
    if fmt == "mitchell":
        assert [r.field for r in table.rows] == ["N-S"] * 3 + ["E-W"] * 3
        assert {rows[e].field for e in range(3)} == {"N-S"}
        data = standings.as_json(table)
        assert [s["rank"] for s in data["standings"]] == [1, 2, 3, 1, 2, 3]
