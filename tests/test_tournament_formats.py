"""Tournament plans (games/arena/tournaments/formats.py): round robin, duplicate, Swiss rounds and
the bridge movements, checked for the properties an organiser counts on and against published
movement cards."""
from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.arena.tournaments.formats import (
    MAX_GAMES, Game, Table, duplicate, howell, mitchell, plan_sides, round_robin, swiss_round,
    swiss_rounds_needed,
)

fields = st.integers(1, 4).flatmap(
    lambda k: st.tuples(st.integers(max(k, 2) if k > 1 else 1, 9), st.just(k), st.integers(1, 4)))


def by_round(games):
    rounds = defaultdict(list)
    for game in games:
        rounds[game.round].append(game)
    return rounds


# --- round robin ---------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(fields)
def test_round_robin_every_group_meets_per_pairing_times(field):
    n, k, per = field
    games = round_robin(n, k, per)
    if k == 1:
        assert Counter(g.sides for g in games) == {(e,): per for e in range(n)}
        return
    meetings = Counter(frozenset(g.sides) for g in games)
    assert set(meetings) == {frozenset(c) for c in itertools.combinations(range(n), k)}
    assert set(meetings.values()) == {per}
    assert [g.deal for g in games] == list(range(len(games)))  # each game its own deal
    for rnd in by_round(games).values():
        playing = [e for g in rnd for e in g.sides]
        assert len(playing) == len(set(playing)), "an entrant plays twice in one round"


@settings(max_examples=60, deadline=None)
@given(fields)
def test_round_robin_sides_balance_over_a_full_rotation(field):
    n, k, _ = field
    counts = plan_sides(round_robin(n, k, k), n)  # per_pairing = k: every rotation once
    for entrant in range(n):
        assert len(set(counts[entrant])) == 1, (entrant, counts[entrant])


@pytest.mark.parametrize("n", range(2, 13))
def test_round_robin_of_pairs_uses_the_circle_method(n):
    games = round_robin(n, 2, 1)
    rounds = by_round(games)
    # n - 1 rounds (n when odd); each round everyone plays, or all but the one resting.
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    for rnd in rounds.values():
        assert len(rnd) == n // 2
    if n % 2:
        resting = Counter(e for rnd in rounds.values()
                          for e in set(range(n)) - {x for g in rnd for x in g.sides})
        assert resting == {e: 1 for e in range(n)}
    sides = plan_sides(games, n)
    assert all(abs(first - second) <= 1 for first, second in sides)


def test_round_robin_repeats_continue_the_rounds_with_the_sides_swapped():
    games = round_robin(4, 2, 2)
    first, second = games[:6], games[6:]
    assert [g.round for g in first] == [1, 1, 2, 2, 3, 3]
    assert [g.round for g in second] == [4, 4, 5, 5, 6, 6]
    assert [g.sides[::-1] for g in first] == [g.sides for g in second]


def test_cooperative_round_robin_shares_the_deals():
    games = round_robin(3, 1, 2)
    assert games == [Game(1, (0,), 0), Game(1, (1,), 0), Game(1, (2,), 0),
                     Game(2, (0,), 1), Game(2, (1,), 1), Game(2, (2,), 1)]


@pytest.mark.parametrize("n, k, per, message", [
    (1, 2, 1, "cannot fill"), (3, 4, 1, "cannot fill"), (4, 0, 1, "at least one side"),
    (4, 2, 0, "at least 1"), (60, 4, 1, "more than a tournament may plan"),
])
def test_impossible_plans_are_refused(n, k, per, message):
    with pytest.raises(ValueError, match=message):
        round_robin(n, k, per)
    with pytest.raises(ValueError, match=message):
        duplicate(n, k, per)


def test_the_plan_bound_counts_every_rotation_of_a_duplicate():
    pairs = 2 * 3  # 4 entrants
    duplicate(4, 2, MAX_GAMES // (2 * pairs))
    with pytest.raises(ValueError, match="more than"):
        duplicate(4, 2, MAX_GAMES // (2 * pairs) + 1)


# --- duplicate -----------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(fields)
def test_duplicate_plays_each_deal_in_every_rotation_in_one_round(field):
    n, k, deals = field
    games = duplicate(n, k, deals)
    if k == 1:
        assert {g.deal for g in games} == set(range(deals))
        for deal in range(deals):
            assert sorted(g.sides for g in games if g.deal == deal) == [(e,) for e in range(n)]
        return
    per_deal = defaultdict(list)
    for game in games:
        per_deal[game.deal].append(game)
    for deal, played in per_deal.items():
        group = played[0].sides
        rotations = {group[i:] + group[:i] for i in range(k)}
        assert {g.sides for g in played} == rotations and len(played) == k, deal
        assert len({g.round for g in played}) == 1, "a deal's rotations span rounds"
    per_group = defaultdict(set)
    for deal, played in per_deal.items():
        per_group[frozenset(played[0].sides)].add(deal)
    assert all(len(d) == deals for d in per_group.values())
    assert len(per_group) * deals == len(per_deal)  # no deal shared across pairings
    for rnd in by_round(games).values():
        groups = {frozenset(g.sides) for g in rnd}
        playing = [e for group in groups for e in group]
        assert len(playing) == len(set(playing)), "an entrant in two match-ups in one round"
    assert all(len(set(c)) == 1 for c in plan_sides(games, n))


def test_duplicate_of_three_pairs_by_hand():
    assert duplicate(3, 2, 1) == [
        Game(1, (1, 2), 0), Game(1, (2, 1), 0),
        Game(2, (2, 0), 1), Game(2, (0, 2), 1),
        Game(3, (0, 1), 2), Game(3, (1, 0), 2),
    ]


# --- Swiss ---------------------------------------------------------------------------------

def pairs_of(games):
    return [g.sides for g in games]


def test_swiss_round_two_of_six_by_hand():
    # After round 1 (0 beat 3, 1 beat 4, 2 beat 5) the score groups {0, 1, 2} and {3, 4, 5} are
    # odd, so one entrant floats: 2, the last of the top group, meets 3, the first of the
    # bottom one (2-5 was played).  0-1 and 4-5 stay within their groups.
    scores = {0: 1, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0}
    played = {frozenset(p) for p in [(0, 3), (1, 4), (2, 5)]}
    games, bye = swiss_round(scores, played, set(), 2, 10)
    assert bye is None
    assert games == [Game(2, (0, 1), 10), Game(2, (2, 3), 11), Game(2, (4, 5), 12)]
    # Round 1 gave side 0 to 0, 1 and 2: now 3 takes side 0 against 2.
    games, _ = swiss_round(scores, played, set(), 2, 10, side0_counts={0: 1, 1: 1, 2: 1})
    assert pairs_of(games) == [(0, 1), (3, 2), (4, 5)]


def test_swiss_bye_by_hand():
    # Five entrants after round 1: 0 beat 4, 1 beat 3, 2 had the bye (a point).  The bye goes to
    # the lowest score without one: 3 and 4 have none, and between equals the higher index, 4.
    # 1-3 would be a repeat, so 0-1 and 2-3 (not 0-3 and 1-2: neighbours in the standings).
    scores = {0: 1, 1: 1, 2: 1, 3: 0, 4: 0}
    played = {frozenset(p) for p in [(0, 4), (1, 3)]}
    games, bye = swiss_round(scores, played, {2}, 2, 0)
    assert bye == 4
    assert pairs_of(games) == [(0, 1), (2, 3)]


def test_swiss_takes_the_only_pairing_without_repeats_whatever_the_scores():
    scores = {0: 2, 1: 1, 2: 1, 3: 0}
    played = {frozenset(p) for p in [(0, 1), (2, 3), (0, 2), (1, 3)]}
    games, _ = swiss_round(scores, played, set(), 3, 0)
    assert pairs_of(games) == [(0, 3), (1, 2)]


def test_swiss_repeats_as_few_as_possible_when_it_must():
    # Four entrants after three rounds have met everyone: the fourth round repeats pairings,
    # and still pairs by score.
    scores = {0: 3, 1: 2, 2: 1, 3: 0}
    played = {frozenset(p) for p in itertools.combinations(range(4), 2)}
    games, bye = swiss_round(scores, played, set(), 4, 0)
    assert bye is None and pairs_of(games) == [(0, 1), (2, 3)]
    # With one pairing left unplayed, only its complement repeats.
    games, _ = swiss_round(scores, played - {frozenset((0, 2))}, set(), 4, 0)
    assert pairs_of(games) == [(0, 2), (1, 3)]


def test_swiss_bye_when_everyone_had_one_goes_to_the_lowest_score():
    games, bye = swiss_round({0: 2, 1: 1, 2: 0}, set(), {0, 1, 2}, 4, 0)
    assert bye == 2 and pairs_of(games) == [(0, 1)]


def test_swiss_refuses_too_few_or_too_many_entrants():
    with pytest.raises(ValueError, match="pairs 2 to 256 entrants, not 1"):
        swiss_round({0: 1.0}, set(), set(), 1, 0)
    with pytest.raises(ValueError, match="not 257"):
        swiss_round({e: 0.0 for e in range(257)}, set(), set(), 1, 0)


def test_swiss_rounds_needed():
    assert [swiss_rounds_needed(n) for n in (1, 2, 3, 4, 5, 8, 9, 64, 65)] == [
        0, 1, 2, 2, 3, 3, 4, 6, 7]
    with pytest.raises(ValueError):
        swiss_rounds_needed(0)


def perfect_matchings(people):
    """Every way to pair ``people`` (an even number), as lists of pairs."""
    if not people:
        yield []
        return
    first, rest = people[0], people[1:]
    for i, partner in enumerate(rest):
        for more in perfect_matchings(rest[:i] + rest[i + 1:]):
            yield [(first, partner)] + more


def best_key(scores, played, byes):
    """The rules of swiss_round's docstring by brute force: the least (repeats, bye's place
    from the bottom, squared score differences, squared place differences) of all pairings."""
    standings = sorted(scores, key=lambda e: (-scores[e], e))
    place = {e: i for i, e in enumerate(standings)}
    eligible = [e for e in standings if e not in byes] or standings
    keys = []
    for bye in (eligible if len(standings) % 2 else [None]):
        for matching in perfect_matchings([e for e in standings if e != bye]):
            keys.append(key_of(matching, bye, scores, played, place))
    return min(keys)


def key_of(matching, bye, scores, played, place):
    return (sum(frozenset(p) in played for p in matching),
            0 if bye is None else len(place) - place[bye],
            sum((2 * scores[a] - 2 * scores[b]) ** 2 for a, b in matching),
            sum((place[a] - place[b]) ** 2 for a, b in matching))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.randoms(use_true_random=False))
def test_swiss_tournaments_follow_the_rules_every_round(n, rng: random.Random):
    """Whole Swiss tournaments with random results (wins, losses and draws): every round is the
    best pairing the rules allow (checked by trying every pairing), never repeats a pairing
    while the rounds are at most ceil(log2 n), gives no entrant two byes, and seats each game's
    side 0 on the entrant who held it less often."""
    scores = {e: 0.0 for e in range(n)}
    played, byes, side0 = set(), [], Counter()
    deal = 0
    for rnd in range(1, swiss_rounds_needed(n) + 1):
        games, bye = swiss_round(scores, played, byes, rnd, deal, side0_counts=dict(side0))
        standings = sorted(scores, key=lambda e: (-scores[e], e))
        place = {e: i for i, e in enumerate(standings)}
        matching = [g.sides for g in games]
        assert key_of(matching, bye, scores, played, place) == best_key(scores, played, set(byes))
        assert not any(frozenset(p) in played for p in matching), "a repeat pairing"
        seated = [e for p in matching for e in p] + ([bye] if bye is not None else [])
        assert sorted(seated) == list(range(n))
        assert (bye is None) == (n % 2 == 0)
        assert [g.deal for g in games] == list(range(deal, deal + len(games)))
        for first, second in matching:
            assert side0[first] <= side0[second]
        if bye is not None:
            assert bye not in byes
            byes.append(bye)
            scores[bye] += 1
        for first, second in matching:
            played.add(frozenset((first, second)))
            side0[first] += 1
            result = rng.choice((1.0, 0.5, 0.0))
            scores[first] += result
            scores[second] += 1 - result
        deal += len(games)


# --- bridge movements ----------------------------------------------------------------------

def check_movement(movement, pairs, *, shared_boards=False):
    """What makes a movement playable: every pair at one table a round, no pair plays a board set
    twice, and in a round each set is at one table (or, for a movement that shares boards, the
    same set at every table)."""
    met = Counter()
    sets_played = defaultdict(list)
    for rnd in movement:
        seated = [p for t in rnd for p in (t.ns, t.ew)]
        assert sorted(seated) == list(range(1, pairs + 1))
        sets = [t.board_set for t in rnd]
        if shared_boards:
            assert len(set(sets)) == 1
        else:
            assert len(set(sets)) == len(sets), "two tables play one set in a round"
        for t in rnd:
            met[frozenset((t.ns, t.ew))] += 1
            sets_played[t.ns].append(t.board_set)
            sets_played[t.ew].append(t.board_set)
    for pair, sets in sets_played.items():
        assert len(sets) == len(set(sets)), f"pair {pair} plays a set twice"
    return met


@pytest.mark.parametrize("pairs", [4, 6, 8])
def test_howell_every_pair_meets_every_other_once(pairs):
    movement = howell(pairs)
    assert len(movement) == pairs - 1
    met = check_movement(movement, pairs, shared_boards=pairs < 8)
    assert set(met) == {frozenset(p) for p in itertools.combinations(range(1, pairs + 1), 2)}
    assert set(met.values()) == {1}
    for pair in range(1, pairs + 1):  # every set, once each
        assert sorted(t.board_set for rnd in movement for t in rnd if pair in (t.ns, t.ew)) == \
            list(range(1, pairs))


@pytest.mark.parametrize("pairs", [4, 6, 8])
def test_howell_follows_howells_rule(pairs):
    """The highest pair stays NS at its table and meets the others in order (pair 1 first);
    every other pair moves to the place the pair numbered one below it had (pair 1 to the
    place of pair ``pairs - 1``), as bridgecentral.com states the Howell's rule."""
    movement = howell(pairs)
    moving = pairs - 1
    for before, after in zip(movement, movement[1:]):
        place = {p: (t.table, side) for t in before for side, p in (("ns", t.ns), ("ew", t.ew))}
        for t in after:
            for side, p in (("ns", t.ns), ("ew", t.ew)):
                if p != pairs:
                    assert (t.table, side) == place[(p - 2) % moving + 1], (p, after)
    stationary = [t for rnd in movement for t in rnd if t.ns == pairs]
    assert len({t.table for t in stationary}) == 1
    assert [t.ew for t in stationary] == list(range(1, pairs))


def test_howell_for_eight_pairs_matches_the_published_card():
    """The whole card of pjms.nl's "original Howell" for 8 pairs in 7 rounds (BALANS,
    8p8rHowell.html, "Compare this to the original Howell"), one row a round, tables 1 to 4 as
    "NS-EW set", board sets A-G as 1-7."""
    card = """
        3-6 A  7-2 C  5-4 D  8-1 E
        4-7 B  1-3 D  6-5 E  8-2 F
        5-1 C  2-4 E  7-6 F  8-3 G
        6-2 D  3-5 F  1-7 G  8-4 A
        7-3 E  4-6 G  2-1 A  8-5 B
        1-4 F  5-7 A  3-2 B  8-6 C
        2-5 G  6-1 B  4-3 C  8-7 D
    """
    rows = [line.split() for line in card.strip().splitlines()]
    published = [[Table(t + 1, int(pairs.split("-")[0]), int(pairs.split("-")[1]), "ABCDEFG".index(board) + 1)
                  for t, (pairs, board) in enumerate(zip(row[::2], row[1::2]))] for row in rows]
    assert howell(8) == published


def test_howell_for_four_pairs_matches_the_acbl_standard():
    """The ACBL's standard 2-table Howell (bridgescoreplus.com, recommended movements): pair 4
    stationary NS at table 1; round 1 pair 3 NS and pair 2 EW at table 2; both tables share the
    boards of each round."""
    movement = howell(4)
    assert all(rnd[0].table == 1 and rnd[0].ns == 4 for rnd in movement)
    assert (movement[0][1].ns, movement[0][1].ew) == (3, 2)
    assert all(rnd[0].board_set == rnd[1].board_set for rnd in movement)


def test_howell_refuses_other_sizes():
    with pytest.raises(ValueError, match="4, 6 or 8 pairs"):
        howell(10)


@pytest.mark.parametrize("tables", [3, 5, 7, 9, 13])
def test_mitchell_odd_every_ew_pair_meets_every_ns_pair(tables):
    movement = mitchell(tables)
    assert len(movement) == tables
    met = check_movement(movement, 2 * tables)
    ns, ew = range(1, tables + 1), range(tables + 1, 2 * tables + 1)
    assert set(met) == {frozenset(p) for p in itertools.product(ns, ew)}
    assert all(t.ns == t.table for rnd in movement for t in rnd)  # NS pairs stay


def test_mitchell_seven_tables_matches_the_published_rule():
    """A 7-table Mitchell as the movement is published (e.g. "Mitchell Movements", tbb director
    notes: NS pairs stay, EW pairs move up one table, boards move down one table): table 1
    meets EW 1, 7, 6, 5, 4, 3, 2 on sets 1-7; round 3 has EW 6 with set 3 at table 1, EW 2
    with set 6 at table 4 and EW 5 with set 2 at table 7 (EW pair e is pair 7 + e here)."""
    movement = mitchell(7)
    table1 = [rnd[0] for rnd in movement]
    assert [t.ew - 7 for t in table1] == [1, 7, 6, 5, 4, 3, 2]
    assert [t.board_set for t in table1] == [1, 2, 3, 4, 5, 6, 7]
    third = movement[2]
    assert (third[0].ew - 7, third[0].board_set) == (6, 3)
    assert (third[3].ew - 7, third[3].board_set) == (2, 6)
    assert (third[6].ew - 7, third[6].board_set) == (5, 2)


@pytest.mark.parametrize("tables", [4, 6, 8, 10, 12, 14])
def test_skip_mitchell_even(tables):
    """The published skip: "with 6 tables EW pairs skip one table at the start of round 4, with
    8 tables at the start of round 5 ... at the last round (round 6 for 6 tables, round 8 for
    8 tables) the EW pairs arrive back at the table they started from" (tbb director notes);
    "if there are 12 tables, the team at table 12 goes to table 2 (skipping table 1); and the
    team at table 11 goes to table 1" (beginnerbridge.com)."""
    movement = mitchell(tables)
    assert len(movement) == tables - 1  # no revenge round by default
    met = check_movement(movement, 2 * tables)
    assert set(met.values()) == {1}
    half = tables // 2
    table_of = [{t.ew: t.table for t in rnd} for rnd in mitchell(tables, rounds=tables)]
    for ew in range(tables + 1, 2 * tables + 1):
        steps = [(b[ew] - a[ew]) % tables for a, b in zip(table_of, table_of[1:])]
        assert steps == [1] * (half - 1) + [2] + [1] * (tables - half - 1), ew
        assert table_of[-1][ew] == table_of[0][ew]  # the revenge round
    if tables == 12:
        moved = {table_of[half - 1][ew]: table_of[half][ew] for ew in table_of[0]}
        assert moved[12] == 2 and moved[11] == 1


def test_mitchell_refuses_impossible_sizes():
    with pytest.raises(ValueError, match="at least 3 tables"):
        mitchell(2)
    with pytest.raises(ValueError, match="1 to 5 rounds"):
        mitchell(5, rounds=6)


def test_tables_read_as_the_cards_do():
    assert mitchell(3)[1][0] == Table(table=1, ns=1, ew=6, board_set=2)
