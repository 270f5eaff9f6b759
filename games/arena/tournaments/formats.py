"""The plans of a tournament's formats: which entrants meet, on which sides, in which round and
on which deal.

Vocabulary: an *entrant* is an index ``0..n-1``.  A match has ``k`` *sides* (``k = 2`` for
Liar's Dice between two bots, Jass teams, two-sided Blokus, bridge pairs; ``k = 1`` for
cooperative Hanabi, where one entrant's bot fills every seat).  A *deal* is an integer: games
with the same deal number are played on the same seed (duplicate).

- :func:`round_robin`: every group of ``k`` entrants meets a set number of times, sides rotated
  between the repeats.
- :func:`duplicate`: the same, but every deal is replayed with the sides rotated through every
  rotation, so the luck of the deal cancels.
- :func:`swiss_round`: one Swiss round, paired by a maximum-weight matching (networkx).
- :func:`mitchell` and :func:`howell`: bridge movements of pairs over board sets.

Everything here is pure and deterministic: the same arguments give the same plan.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import NamedTuple

#: The most games one plan may hold: a round robin of every 4 of 60 entrants would be 487,635
#: games, far past anything an arena runs in a day; refuse it with a clear message instead.
MAX_GAMES = 200_000

#: The most entrants one Swiss round pairs (the matching's time grows with the cube of it).
MAX_SWISS = 256


@dataclass(frozen=True)
class Game:
    """One planned match."""

    round: int  #: 1-based; within a round an entrant plays at most once where the format allows
    sides: tuple[int, ...]  #: entrant index per side, in the game's side order (side 0 first)
    deal: int  #: games sharing a deal share the seed


def _check(n: int, k: int, repeats: int, what: str, games_per_repeat: int = 1) -> None:
    """Raise ValueError unless ``n`` entrants can meet in groups of ``k``, ``repeats`` times each
    (``what`` names that count in the message), within :data:`MAX_GAMES` games when each group
    plays ``games_per_repeat`` games per repeat."""
    if k < 1:
        raise ValueError(f"a match needs at least one side, not {k}")
    if n < k:
        raise ValueError(f"{n} entrants cannot fill matches of {k} sides")
    if repeats < 1:
        raise ValueError(f"{what} must be at least 1, not {repeats}")
    games = (n if k == 1 else math.comb(n, k)) * repeats * games_per_repeat
    if games > MAX_GAMES:
        raise ValueError(f"{games} games is more than a tournament may plan ({MAX_GAMES})")


def _rounds_of_pairings(n: int, k: int) -> list[list[tuple[int, ...]]]:
    """Every group of ``k`` of the ``n`` entrants once, arranged in rounds where no entrant plays
    twice; each group in its base side order.

    ``k = 2``: the circle (Berger) method: entrant ``n-1`` (or, for odd ``n``, a rest) stays put
    while the others turn one place a round; ``n - 1`` rounds (``n`` for odd ``n``, one entrant
    resting each round), each entrant's side 0 count within one of its side 1 count.
    ``k > 2``: the groups in lexicographic order, each put in the first round where none of its
    entrants plays yet.
    """
    if k == 2:
        m = n + n % 2  # an odd field gets a rest: whoever meets it sits out
        turning = m - 1
        rounds = []
        for r in range(turning):
            games = [(r, m - 1) if r % 2 == 0 else (m - 1, r)]
            for i in range(1, m // 2):
                a, b = (r + i) % turning, (r - i) % turning
                games.append((a, b) if i % 2 else (b, a))
            rounds.append([g for g in games if max(g) < n])
        return rounds
    rounds, busy = [], []
    for group in itertools.combinations(range(n), k):
        for games, playing in zip(rounds, busy):
            if playing.isdisjoint(group):
                games.append(group)
                playing.update(group)
                break
        else:
            rounds.append([group])
            busy.append(set(group))
    return rounds


def _rotated(sides: tuple[int, ...], by: int) -> tuple[int, ...]:
    """``sides`` with every entrant moved ``by`` sides towards side 0 (k = 2: swapped when odd)."""
    by %= len(sides)
    return sides[by:] + sides[:by]


def _alone(n: int, deals: int) -> list[Game]:
    """Cooperative play: each entrant plays deals ``0..deals-1`` alone, round = deal + 1, so all
    entrants are compared on the same seeds."""
    return [Game(deal + 1, (e,), deal) for deal in range(deals) for e in range(n)]


def round_robin(n: int, k: int, per_pairing: int) -> list[Game]:
    """A round robin: every group of ``k`` of the ``n`` entrants (k = 2: every pair) meets
    ``per_pairing`` times.

    The rounds of one cycle come from :func:`_rounds_of_pairings` (k = 2: the circle method, each
    round every entrant plays at most once, one rests per round when ``n`` is odd); repeat ``j``
    continues the rounds with every game's sides rotated ``j`` places (k = 2: swapped), so with
    ``per_pairing`` a multiple of ``k`` every entrant holds every side equally often.  Each game
    has its own deal, 0, 1, 2, ... in plan order.  ``k = 1`` (cooperative): each entrant plays
    ``per_pairing`` games alone on deals ``0..per_pairing-1``, shared by all entrants.

    Raises ValueError when ``n < k``, ``k < 1``, ``per_pairing < 1`` or the plan would exceed
    :data:`MAX_GAMES`.
    """
    _check(n, k, per_pairing, "matches per pairing")
    if k == 1:
        return _alone(n, per_pairing)
    cycle = _rounds_of_pairings(n, k)
    games = []
    for repeat in range(per_pairing):
        for r, groups in enumerate(cycle, start=1):
            for group in groups:
                games.append(Game(repeat * len(cycle) + r, _rotated(group, repeat), len(games)))
    return games


def duplicate(n: int, k: int, deals_per_pairing: int) -> list[Game]:
    """Duplicate: every group of ``k`` entrants plays ``deals_per_pairing`` deals, each deal ``k``
    times with the sides rotated through every rotation (k = 2: A-B then B-A on the same deal),
    so that the luck of the deal cancels.

    Rounds as in :func:`round_robin`; all rotations of a deal are in the same round (so an
    entrant plays ``k`` games a round).  Deal numbers are unique per pairing and deal
    (0, 1, 2, ... in plan order), never shared across pairings; ``k = 1``: every entrant plays
    the same deals ``0..deals_per_pairing-1`` alone (as :func:`round_robin`).

    Raises ValueError as :func:`round_robin` does.
    """
    _check(n, k, deals_per_pairing, "deals per pairing", games_per_repeat=k)
    if k == 1:
        return _alone(n, deals_per_pairing)
    cycle = _rounds_of_pairings(n, k)
    games, deal = [], 0
    for repeat in range(deals_per_pairing):
        for r, groups in enumerate(cycle, start=1):
            for group in groups:
                for by in range(k):
                    games.append(Game(repeat * len(cycle) + r, _rotated(group, by), deal))
                deal += 1
    return games


def plan_sides(games: Iterable[Game], n: int) -> list[list[int]]:
    """How often each entrant holds each side in ``games``: ``counts[entrant][side]`` for entrants
    ``0..n-1`` (as many sides as the widest game).  Feeds :func:`swiss_round`'s
    ``side0_counts`` (``{e: counts[e][0]}``) and the balance shown on a tournament's page."""
    games = list(games)
    k = max((len(g.sides) for g in games), default=0)
    counts = [[0] * k for _ in range(n)]
    for game in games:
        for side, entrant in enumerate(game.sides):
            counts[entrant][side] += 1
    return counts


def swiss_rounds_needed(n: int) -> int:
    """The default number of Swiss rounds for ``n`` entrants: ``ceil(log2(n))``, enough for one
    entrant to be the only one to win every round (0 for a single entrant).  Raises ValueError
    for ``n < 1``."""
    if n < 1:
        raise ValueError(f"a Swiss tournament needs entrants, not {n}")
    return math.ceil(math.log2(n))


def _half_points(score: float) -> int:
    """A score in whole half points (a draw is half a point): the matching's weights are
    integers, which networkx's matching computes with exactly."""
    return round(2 * score)


def swiss_round(scores: dict[int, float], played: Collection[frozenset[int]],
                byes: Collection[int], round: int, first_deal: int,
                side0_counts: dict[int, int] | None = None) -> tuple[list[Game], int | None]:
    """Pair one Swiss round of two-sided matches.

    ``scores``: each active entrant's score so far (its keys are the entrants to pair);
    ``played``: the pairings already played, as ``frozenset({a, b})``; ``byes``: entrants that
    had a bye; ``round``: this round's number; ``first_deal``: the deal of its first game;
    ``side0_counts``: how often each entrant held side 0 (missing: 0).

    The rules, in order of precedence, are a maximum-weight matching of a graph of the entrants
    (networkx's ``max_weight_matching`` with ``maxcardinality=True``; we only build the graph):

    1. everyone plays, except one bye when the count is odd;
    2. no pairing is repeated; when no such pairing exists (a small field late in the event) the
       round has the fewest repeats possible instead;
    3. the bye goes to the lowest-scored entrant who has not had one (among equals, the highest
       index); when all have had one, to the lowest-scored of all;
    4. entrants meet others of equal or closest score (score groups): the sum of the squared
       score differences (in half points) of the round's pairings is the least possible;
    5. among equally close pairings, neighbours in the standings meet (as in the Monrad system):
       the sum of the squared differences of standings places is the least possible.

    Each pairing's side 0 goes to the entrant who held side 0 less often, then to the higher
    score, then to the lower index.  Returns the round's games, best scores first, with deals
    ``first_deal, first_deal + 1, ...``, and the entrant with the bye (None when the count is
    even).  Raises ValueError for fewer than two or more than :data:`MAX_SWISS` entrants.

    The matching takes time cubic in the entrants (about 0.3 s for 100 on one core, 1.7 s for
    200): call it off the event loop.
    """
    import networkx as nx

    entrants = sorted(scores, key=lambda e: (-scores[e], e))  # the standings: best first
    n = len(entrants)
    if not 2 <= n <= MAX_SWISS:
        raise ValueError(f"a Swiss round pairs 2 to {MAX_SWISS} entrants, not {n}")
    place = {e: i for i, e in enumerate(entrants)}
    half = {e: _half_points(scores[e]) for e in entrants}
    spread = max(half.values()) - min(half.values())
    # Weights of the rules, each worth more than all the lower ones can add up to in a round.
    neighbours = n * n + 1  # rule 5, per pairing: neighbours - (place difference)^2 > 0
    closeness = neighbours * (n + 1)  # rule 4: one unit of squared score difference
    near = spread * spread + 1
    bye_rank = closeness * near * (n + 1)  # rule 3: one step down the standings for the bye
    fresh = bye_rank * (n + 1)  # rule 2: one pairing that is not a repeat

    graph = nx.Graph()
    played = {frozenset(p) for p in played}
    for a, b in itertools.combinations(entrants, 2):
        weight = (closeness * (near - (half[a] - half[b]) ** 2)
                  + neighbours - (place[a] - place[b]) ** 2)
        if frozenset((a, b)) not in played:
            weight += fresh
        graph.add_edge(a, b, weight=weight)
    bye = object()  # the bye, as a partner no entrant can be
    if n % 2:
        had = set(byes)
        candidates = [e for e in entrants if e not in had] or entrants
        for e in candidates:  # scored as the closest pairing, so only rule 3 tells byes apart
            weight = fresh + bye_rank * place[e] + closeness * near + neighbours
            graph.add_edge(e, bye, weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)

    side0 = side0_counts or {}
    pairs, bye_to = [], None
    for a, b in matching:
        if a is bye:
            a, b = b, a
        if b is bye:
            bye_to = a
            continue
        first, second = sorted((a, b), key=lambda e: (side0.get(e, 0), place[e]))
        pairs.append((first, second))
    pairs.sort(key=lambda pair: min(place[pair[0]], place[pair[1]]))
    games = [Game(round, pair, first_deal + i) for i, pair in enumerate(pairs)]
    return games, bye_to


class Table(NamedTuple):
    """One table of one round of a bridge movement.  Tables, pairs and board sets are numbered
    from 1, as on the movement cards."""

    table: int
    ns: int  #: the pair sitting North-South
    ew: int  #: the pair sitting East-West
    board_set: int


Round = list[Table]


def mitchell(tables: int, rounds: int | None = None) -> list[Round]:
    """A Mitchell movement for ``tables`` tables of two pairs each.

    NS pair ``t`` stays at table ``t``; EW pair ``e`` (numbered ``tables + e`` here, so that the
    ``2 * tables`` pairs have distinct numbers) starts at table ``e`` and moves up one table each
    round (from the last table to table 1); board set ``s`` starts at table ``s`` and moves down
    one table each round.  With an odd number of tables every EW pair meets every NS pair and
    plays every set once in ``tables`` rounds.  With an even number this would bring the EW pairs
    back to sets they played after half the rounds, so this is the *skip* Mitchell: at the start
    of round ``tables / 2 + 1`` the EW pairs move up two tables instead of one; the boards move
    as usual.  EW pair ``e`` then never meets NS pair ``e + tables / 2``, and a last round
    ``tables`` would be the "revenge" round against its first opponents.

    ``rounds``: how many to play, 1 to ``tables``; by default ``tables`` when odd and
    ``tables - 1`` when even (no revenge round).  Returns one list of tables per round.
    Raises ValueError for fewer than 3 tables or ``rounds`` out of range.
    """
    if tables < 3:
        raise ValueError(f"a Mitchell needs at least 3 tables, not {tables} (use a Howell)")
    if rounds is None:
        rounds = tables if tables % 2 else tables - 1
    if not 1 <= rounds <= tables:
        raise ValueError(f"a {tables}-table Mitchell has 1 to {tables} rounds, not {rounds}")
    movement = []
    for r in range(1, rounds + 1):
        moved = r - 1 + (tables % 2 == 0 and r > tables // 2)  # tables EW moved up so far
        movement.append([
            Table(t, t, tables + (t - 1 - moved) % tables + 1, (t - 1 + r - 1) % tables + 1)
            for t in range(1, tables + 1)
        ])
    return movement


# Complete Howell movements: each row is one round, one (ns, ew, board_set) per table from
# table 1.  The highest pair sits NS at one table throughout; every other pair moves, after each
# round, to the place of the pair numbered one below it (pair 1 to the place of the highest
# moving pair), the rule of the Howell movement as bridgecentral.com states it ("Reduced
# Howell": "each pair (except the highest numbered pair) moves to the spot vacated by the pair
# with the number immediately below their own").
_HOWELL_CARDS: dict[int, tuple[tuple[tuple[int, int, int], ...], ...]] = {
    # 2 tables, 3 rounds.  The ACBL's standard 2-table Howell (bridgescoreplus.com, "Recommended
    # movements", 2 tables): pair 4 stationary NS at table 1; round 1 pair 3 NS and pair 2 EW at
    # table 2; both tables share the round's boards.
    4: (
        ((4, 1, 1), (3, 2, 1)),
        ((4, 2, 2), (1, 3, 2)),
        ((4, 3, 3), (2, 1, 3)),
    ),
    # 3 tables, 5 rounds.  No published card with all its rows was found; the pairs follow the
    # rule above from the plain starting skeleton 6-1, 5-2, 4-3 (bridgecentral.com, "Deriving
    # Howell movements"), and the boards are played as scjc-bridge.fr ("Le mouvement Howell",
    # Howell 6 paires) describes for three tables: all three tables play the same set in a round.
    6: (
        ((6, 1, 1), (5, 2, 1), (4, 3, 1)),
        ((6, 2, 2), (1, 3, 2), (5, 4, 2)),
        ((6, 3, 3), (2, 4, 3), (1, 5, 3)),
        ((6, 4, 4), (3, 5, 4), (2, 1, 4)),
        ((6, 5, 5), (4, 1, 5), (3, 2, 5)),
    ),
    # 4 tables, 7 rounds, board sets A-G as 1-7.  The standard Howell for 8 pairs as published
    # by pjms.nl ("BALANS", 8p8rHowell.html: "the original Howell" for 8 pairs and 7 rounds
    # that John Probst's 8-round movement extends; every row checked against it in
    # tests/test_tournament_formats.py): pair 8 stationary NS at table 4; no two tables share
    # a set in any round.
    8: (
        ((3, 6, 1), (7, 2, 3), (5, 4, 4), (8, 1, 5)),
        ((4, 7, 2), (1, 3, 4), (6, 5, 5), (8, 2, 6)),
        ((5, 1, 3), (2, 4, 5), (7, 6, 6), (8, 3, 7)),
        ((6, 2, 4), (3, 5, 6), (1, 7, 7), (8, 4, 1)),
        ((7, 3, 5), (4, 6, 7), (2, 1, 1), (8, 5, 2)),
        ((1, 4, 6), (5, 7, 1), (3, 2, 2), (8, 6, 3)),
        ((2, 5, 7), (6, 1, 2), (4, 3, 3), (8, 7, 4)),
    ),
}


def howell(pairs: int) -> list[Round]:
    """A complete Howell movement for 4, 6 or 8 pairs (2, 3 or 4 tables, ``pairs - 1`` rounds):
    every pair meets every other pair exactly once and plays every board set once.

    The movements are data from published cards (see ``_HOWELL_CARDS`` for the sources).  With 2
    and 3 tables all tables play the same board set in a round (shared, as those cards do); with
    4 tables every table has its own set.  Returns one list of tables per round.  Raises
    ValueError for any other number of pairs.
    """
    card = _HOWELL_CARDS.get(pairs)
    if card is None:
        raise ValueError(f"a complete Howell is available for 4, 6 or 8 pairs, not {pairs}")
    return [[Table(t, *row) for t, row in enumerate(rnd, start=1)] for rnd in card]
