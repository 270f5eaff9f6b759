"""Bridge scoring: worked examples from the Laws (games/bridge/scoring.py).

Every figure here is written out from the Laws' tables (Law 77 duplicate and rubber scoring,
Law 78A matchpoints, Law 78B IMPs), not computed from the code under test.
"""
from __future__ import annotations

import pytest

from games.bridge import scoring
from games.bridge.scoring import (
    CLUBS, DIAMONDS, DOUBLED, HEARTS, NOTRUMP, REDOUBLED, SPADES, UNDOUBLED, Rubber,
    duplicate_score, imps, matchpoints,
)

STRAIN = {"C": CLUBS, "D": DIAMONDS, "H": HEARTS, "S": SPADES, "NT": NOTRUMP}


# --- trick points (Law 77) ------------------------------------------------------------------
@pytest.mark.parametrize("level, strain, undoubled, doubled, redoubled", [
    (1, "C", 20, 40, 80), (1, "D", 20, 40, 80), (1, "H", 30, 60, 120), (1, "S", 30, 60, 120),
    (1, "NT", 40, 80, 160),
    (2, "C", 40, 80, 160), (2, "NT", 70, 140, 280), (3, "NT", 100, 200, 400), (4, "H", 120, 240, 480),
    (4, "S", 120, 240, 480), (5, "C", 100, 200, 400), (5, "D", 100, 200, 400), (7, "C", 140, 280, 560),
    (7, "S", 210, 420, 840), (7, "NT", 220, 440, 880),
])
def test_trick_points_per_strain(level, strain, undoubled, doubled, redoubled):
    s = STRAIN[strain]
    assert scoring.trick_points(level, s, UNDOUBLED) == undoubled
    assert scoring.trick_points(level, s, DOUBLED) == doubled
    assert scoring.trick_points(level, s, REDOUBLED) == redoubled


@pytest.mark.parametrize("strain, doubled, vulnerable, each", [
    ("C", UNDOUBLED, False, 20), ("D", UNDOUBLED, True, 20), ("H", UNDOUBLED, False, 30),
    ("S", UNDOUBLED, True, 30), ("NT", UNDOUBLED, False, 30), ("NT", UNDOUBLED, True, 30),
    ("C", DOUBLED, False, 100), ("NT", DOUBLED, False, 100), ("C", DOUBLED, True, 200), ("S", DOUBLED, True, 200),
    ("D", REDOUBLED, False, 200), ("H", REDOUBLED, False, 200), ("D", REDOUBLED, True, 400),
    ("NT", REDOUBLED, True, 400),
])
def test_overtricks(strain, doubled, vulnerable, each):
    for n in (1, 2, 3):
        assert scoring.overtrick_points(STRAIN[strain], doubled, vulnerable, n) == each * n


# Law 77's undertrick schedules, 1 to 13 down, written out.
UNDERTRICKS = {
    (UNDOUBLED, False): [50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 650],
    (UNDOUBLED, True): [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300],
    (DOUBLED, False): [100, 300, 500, 800, 1100, 1400, 1700, 2000, 2300, 2600, 2900, 3200, 3500],
    (DOUBLED, True): [200, 500, 800, 1100, 1400, 1700, 2000, 2300, 2600, 2900, 3200, 3500, 3800],
    (REDOUBLED, False): [200, 600, 1000, 1600, 2200, 2800, 3400, 4000, 4600, 5200, 5800, 6400, 7000],
    (REDOUBLED, True): [400, 1000, 1600, 2200, 2800, 3400, 4000, 4600, 5200, 5800, 6400, 7000, 7600],
}


@pytest.mark.parametrize("doubled, vulnerable", list(UNDERTRICKS))
def test_undertrick_schedules_1_to_13_down(doubled, vulnerable):
    got = [scoring.undertrick_points(doubled, vulnerable, n) for n in range(1, 14)]
    assert got == UNDERTRICKS[doubled, vulnerable]
    # and as whole contracts: 7NT with 13 - n tricks gives the defenders the same
    assert [-duplicate_score(7, NOTRUMP, doubled, vulnerable, 13 - n) for n in range(1, 14)] == got


def test_slam_and_insult_bonuses():
    assert [scoring.slam_bonus(level, False) for level in (5, 6, 7)] == [0, 500, 1000]
    assert [scoring.slam_bonus(level, True) for level in (5, 6, 7)] == [0, 750, 1500]
    assert [scoring.insult_bonus(d) for d in (UNDOUBLED, DOUBLED, REDOUBLED)] == [0, 50, 100]


# --- duplicate scores of whole contracts ---------------------------------------------------
@pytest.mark.parametrize("text, vulnerable, tricks, score", [
    ("4S", False, 10, 420),
    ("3NT", True, 10, 630),
    ("7NTXX", True, 13, 2980),
    ("1NT", False, 6, -50),
    ("4HX", True, 7, -800),
    ("1NT", False, 7, 90),        # part-score: 40 + 50
    ("2C", True, 8, 90),          # part-score bonus is 50 vulnerable too
    ("3NT", False, 9, 400),
    ("4H", True, 10, 620),
    ("5D", False, 12, 420),       # 100 + 20 overtrick + 300
    ("3C", False, 11, 150),       # 60 + 40 overtricks + 50: overtricks never make a game
    ("6S", True, 12, 1430),       # 180 + 500 + 750
    ("6NT", False, 12, 990),      # 190 + 300 + 500
    ("7NT", False, 13, 1520),     # 220 + 300 + 1000
    ("7C", True, 13, 2140),       # 140 + 500 + 1500
    ("1CX", False, 7, 140),       # 40 + 50 insult + 50 part-score
    ("1CXX", False, 7, 230),      # 80 + 100 + 50
    ("2SX", False, 8, 470),       # 120 doubled into game: + 50 + 300
    ("2HX", True, 9, 870),        # 120 + 200 overtrick + 50 + 500
    ("1NTXX", False, 8, 760),     # 160 + 200 + 100 + 300
    ("1NTXX", True, 8, 1160),     # 160 + 400 + 100 + 500
    ("7CX", False, 13, 1630),     # 280 + 50 + 300 + 1000
    ("3NTX", False, 8, -100),
    ("6SXX", True, 9, -1600),
])
def test_duplicate_scores(text, vulnerable, tricks, score):
    level = int(text[0])
    doubled = text.count("X")
    strain = STRAIN[text[1:len(text) - doubled]]
    assert duplicate_score(level, strain, doubled, vulnerable, tricks) == score


@pytest.mark.parametrize("args", [(0, CLUBS, 0, False, 7), (8, CLUBS, 0, False, 7), (1, 5, 0, False, 7),
                                  (1, CLUBS, 3, False, 7), (1, CLUBS, 0, False, 14), (1, CLUBS, 0, False, -1)])
def test_impossible_contracts_are_refused(args):
    with pytest.raises(ValueError):
        duplicate_score(*args)


# --- IMPs (Law 78B) -------------------------------------------------------------------------
# The table of Law 78B, band by band: (lowest difference, highest difference, IMPs).
IMP_TABLE = [
    (0, 10, 0), (20, 40, 1), (50, 80, 2), (90, 120, 3), (130, 160, 4), (170, 210, 5), (220, 260, 6),
    (270, 310, 7), (320, 360, 8), (370, 420, 9), (430, 490, 10), (500, 590, 11), (600, 740, 12),
    (750, 890, 13), (900, 1090, 14), (1100, 1290, 15), (1300, 1490, 16), (1500, 1740, 17),
    (1750, 1990, 18), (2000, 2240, 19), (2250, 2490, 20), (2500, 2990, 21), (3000, 3490, 22),
    (3500, 3990, 23),
]


@pytest.mark.parametrize("low, high, n", IMP_TABLE)
def test_imp_table_boundaries(low, high, n):
    assert imps(low) == imps(high) == n
    assert imps(-low) == imps(-high) == -n
    # the next band starts right after, in steps of 10 points
    assert imps(high + 10) == n + 1


def test_imps_at_the_top_and_in_practice():
    assert imps(4000) == imps(7600) == imps(20000) == 24
    assert imps(-4000) == -24
    assert imps(420 - 170) == 6  # 4S= at one table, a part-score of 170 at the other
    assert imps(620 - (-100)) == 12  # vulnerable game made at one table, one down at the other
    assert imps(-50 - 110) == -4
    assert imps(15) == 0 and imps(45) == 1  # between bands: the lower one


# --- matchpoints (Law 78A) ------------------------------------------------------------------
def test_matchpoints_with_ties():
    scores = [420, 420, 450, -50, 170]
    assert matchpoints(scores) == [5, 5, 8, 0, 2]
    assert max(matchpoints(scores)) == 2 * (len(scores) - 1)  # a top


def test_matchpoints_all_equal_and_alone():
    assert matchpoints([100, 100, 100]) == [2, 2, 2]
    assert matchpoints([-200]) == [0]
    assert matchpoints([0, -100]) == [2, 0]
    # the matchpoints of a board always add up to N(N-1)
    field = [620, 620, 170, 650, -100, 620, 200]
    assert sum(matchpoints(field)) == len(field) * (len(field) - 1)


# --- honours --------------------------------------------------------------------------------
def test_honours():
    assert scoring.honours_bonus("SA SK SQ SJ S2 H3".split(), SPADES) == 100
    assert scoring.honours_bonus("SA SK SQ SJ ST".split(), SPADES) == 150
    assert scoring.honours_bonus("SA SK SQ S9".split(), SPADES) == 0
    assert scoring.honours_bonus("HK HQ HJ HT".split(), HEARTS) == 100
    assert scoring.honours_bonus("SA HA DA CA".split(), NOTRUMP) == 150
    assert scoring.honours_bonus("SA HA DA SK SQ SJ ST".split(), NOTRUMP) == 0


# --- rubber bridge --------------------------------------------------------------------------
NS, EW = 0, 1


def test_rubber_won_two_games_to_none():
    rubber = Rubber()
    out = rubber.record(NS, 4, SPADES, UNDOUBLED, 10)
    assert out == {"above": [0, 0], "below": [120, 0], "game": NS, "rubber": None}
    assert rubber.vulnerable(NS) and not rubber.vulnerable(EW)
    out = rubber.record(NS, 3, NOTRUMP, UNDOUBLED, 10)  # 100 below, 30 above, 700 for the rubber
    assert out == {"above": [730, 0], "below": [100, 0], "game": NS, "rubber": NS}
    assert rubber.finished and rubber.winner == NS
    assert rubber.above == [730, 0] and rubber.below == [220, 0]
    assert rubber.totals() == [950, 0]
    with pytest.raises(ValueError):
        rubber.record(EW, 1, CLUBS, UNDOUBLED, 7)


def test_rubber_two_games_to_one_with_part_scores_carried():
    rubber = Rubber()
    rubber.record(NS, 2, HEARTS, UNDOUBLED, 8)       # NS 60 below: a part-score
    rubber.record(EW, 1, NOTRUMP, UNDOUBLED, 8)      # EW 40 below, 30 above
    assert rubber.part == [60, 40] and rubber.games == [0, 0]
    out = rubber.record(NS, 2, SPADES, UNDOUBLED, 8)  # 60 + 60: NS's game, both part-scores end
    assert out["game"] == NS and rubber.part == [0, 0] and rubber.games == [1, 0]
    out = rubber.record(EW, 4, HEARTS, UNDOUBLED, 10)  # EW's game
    assert out["game"] == EW and rubber.games == [1, 1]
    out = rubber.record(EW, 3, NOTRUMP, UNDOUBLED, 7)  # two down vulnerable: 200 to NS
    assert out == {"above": [200, 0], "below": [0, 0], "game": None, "rubber": None}
    out = rubber.record(NS, 5, DIAMONDS, DOUBLED, 11)  # 200 below, 50 insult, rubber 500
    assert out == {"above": [550, 0], "below": [200, 0], "game": NS, "rubber": NS}
    assert rubber.below == [60 + 60 + 200, 40 + 120]
    assert rubber.above == [200 + 50 + 500, 30]
    assert rubber.totals() == [1070, 190]


def test_rubber_vulnerability_sets_bonuses_and_penalties():
    rubber = Rubber()
    rubber.record(NS, 3, NOTRUMP, UNDOUBLED, 9)       # NS game: vulnerable now
    out = rubber.record(NS, 4, HEARTS, DOUBLED, 8)    # two down doubled vulnerable: 500
    assert out["above"] == [0, 500]
    out = rubber.record(EW, 4, SPADES, DOUBLED, 8)    # two down doubled not vulnerable: 300
    assert out["above"] == [300, 0]
    out = rubber.record(NS, 6, SPADES, UNDOUBLED, 13)  # 180 below; 30 + 750 slam + 700 rubber
    assert out == {"above": [1480, 0], "below": [180, 0], "game": NS, "rubber": NS}


def test_rubber_honours_go_to_the_holder_whatever_the_result():
    rubber = Rubber()
    out = rubber.record(NS, 4, SPADES, UNDOUBLED, 10, honours=(NS, 100))
    assert out["above"] == [100, 0]
    out = rubber.record(EW, 2, HEARTS, UNDOUBLED, 7, honours=(NS, 150))  # a defender's honours
    assert out["above"] == [50 + 150, 0]
    out = rubber.record(EW, 3, NOTRUMP, UNDOUBLED, 9, honours=(EW, 150))
    assert out["above"] == [0, 150] and out["below"] == [0, 100]
    with pytest.raises(ValueError):
        rubber.record(EW, 1, CLUBS, UNDOUBLED, 7, honours=(EW, 120))


def test_unfinished_rubber():
    rubber = Rubber()
    rubber.record(NS, 4, HEARTS, UNDOUBLED, 10)  # NS game
    rubber.record(EW, 2, CLUBS, UNDOUBLED, 8)    # EW part-score 40
    rubber.record_pass_out()
    assert rubber.finish() == [300, 50]
    assert rubber.totals() == [120 + 300, 40 + 50]
    assert rubber.finish() == [0, 0]  # once only
    other = Rubber(part_score_bonus=100)
    other.record(NS, 1, NOTRUMP, UNDOUBLED, 7)
    assert other.finish() == [100, 0]
    assert Rubber().finish() == [0, 0]
