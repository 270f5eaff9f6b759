"""The statistics of tournament standings (games/arena/tournaments/stats.py), on numbers worked
out by hand."""
from __future__ import annotations

import math

import pytest

from games.arena.tournaments.stats import better_than, mean_interval, paired_better, wilson


def test_wilson_by_hand():
    # 8 of 10 at 95%: z = 1.96, centre (0.8 + 0.192) / 1.384 = 0.717, half-width
    # 1.96 / 1.384 * sqrt(0.016 + 0.0096) = 0.227.
    low, high = wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    # 10 of 10: the interval reaches 1 but not down to 0.8.
    low, high = wilson(10, 10)
    assert round(low, 3) == 0.722 and high == pytest.approx(1.0)


def test_wilson_counts_a_draw_as_half_a_point():
    # 5 wins and 1 draw in 10 games: p = 0.55, centre 0.536, half-width 0.262.
    low, high = wilson(5.5, 10)
    assert (round(low, 3), round(high, 3)) == (0.274, 0.799)


def test_wilson_narrows_with_games_and_widens_with_confidence():
    assert wilson(0, 0) == (0.0, 1.0)
    few, many = wilson(5, 10), wilson(500, 1000)
    assert few[0] < many[0] < 0.5 < many[1] < few[1]
    at95, at99 = wilson(8, 10), wilson(8, 10, confidence=0.99)
    assert at99[0] < at95[0] and at95[1] < at99[1]


@pytest.mark.parametrize("points, games, confidence", [
    (11, 10, 0.95), (-1, 10, 0.95), (0, -1, 0.95), (5, 10, 1.0), (5, 10, 0.0)])
def test_wilson_refuses_impossible_results(points, games, confidence):
    with pytest.raises(ValueError):
        wilson(points, games, confidence)


def test_mean_interval_by_hand():
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2 df) = 4.303, half-width 4.303 / sqrt(3) = 2.484.
    mean, low, high = mean_interval([1, 2, 3])
    assert mean == 2.0
    assert (round(low, 3), round(high, 3)) == (-0.484, 4.484)
    # 90%: t(0.95, 2 df) = 2.920, half-width 1.686.
    _, low, high = mean_interval([1, 2, 3], confidence=0.9)
    assert (round(low, 3), round(high, 3)) == (0.314, 3.686)


def test_mean_interval_needs_two_values():
    assert mean_interval([]) is None
    assert mean_interval([4.0]) is None
    assert mean_interval([2.0, 2.0]) == (2.0, 2.0, 2.0)


def test_better_than_by_hand():
    # 10 wins to 0: p = 0.5**10 = 0.00098.
    assert better_than(10, 0) == "a"
    assert better_than(0, 10) == "b"
    # 8 to 2: p = (45 + 10 + 1) / 1024 = 0.0547, not enough at 5%; 9 to 1: p = 11/1024 = 0.0107.
    assert better_than(8, 2) is None
    assert better_than(9, 1) == "a"
    assert better_than(9, 1, alpha=0.01) is None
    assert better_than(0, 0) is None


def test_better_than_with_looks_tests_each_at_a_share_of_alpha():
    # 9 to 1 (p = 0.0107) passes 5% once, but not 5% shared by five looks (1% each).
    assert better_than(9, 1, looks=1) == "a"
    assert better_than(9, 1, looks=5) is None
    with pytest.raises(ValueError):
        better_than(1, 1, looks=0)
    with pytest.raises(ValueError):
        better_than(-1, 1)


def chance_of_a_false_better(games: int, looks_every_game: bool) -> float:
    """The exact chance that two equally strong entrants (every game a fair coin, no draws) get
    called different at some point in ``games`` games when ``better_than`` is asked after every
    game: with the plain 5% test, or with 5% shared by the ``games`` looks."""
    looks = games if looks_every_game else 1
    alive = {0: 1.0}  # wins of A -> chance of being there with no verdict yet
    called = 0.0
    for played in range(1, games + 1):
        nxt = {}
        for wins, chance in alive.items():
            for w in (wins, wins + 1):
                nxt[w] = nxt.get(w, 0.0) + chance / 2
        alive = {}
        for wins, chance in nxt.items():
            if better_than(wins, played - wins, looks=looks) is None:
                alive[wins] = chance
            else:
                called += chance
    return called


def test_testing_after_every_game_inflates_the_error_and_looks_bound_it():
    """The module's warning, computed exactly over 40 games: the plain test after every game
    calls equal entrants different far more often than 5%; sharing alpha over the looks keeps
    it under 5%."""
    assert chance_of_a_false_better(40, looks_every_game=False) > 0.10
    assert chance_of_a_false_better(40, looks_every_game=True) <= 0.05


def test_paired_better_by_hand():
    # 1, 2, 3: t = 2 / (1 / sqrt 3) = 3.46 with 2 df, one-sided p = 0.037.
    assert paired_better([1, 2, 3]) == "a"
    assert paired_better([-1, -2, -3]) == "b"
    assert paired_better([1, 2, 3], alpha=0.01) is None
    assert paired_better([1, 2, 3], looks=2) is None  # 0.037 > 0.025
    # 1, -1, 2: mean 0.667, s = 1.528, t = 0.756, p = 0.26.
    assert paired_better([1, -1, 2]) is None


def test_paired_better_edges():
    assert paired_better([]) is None and paired_better([5.0]) is None
    assert paired_better([0.0, 0.0, 0.0]) is None
    assert paired_better([3.0, 3.0]) == "a" and paired_better([-1.0, -1.0]) == "b"
    with pytest.raises(ValueError):
        paired_better([1, 2], alpha=1.5)


def test_results_are_plain_floats_for_json():
    assert all(type(x) is float for x in wilson(3, 4))
    assert all(type(x) is float for x in mean_interval([1.0, 2.5, 4.0]))
    assert not any(math.isnan(x) for x in mean_interval([1.0, 2.5]))
