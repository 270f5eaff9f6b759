"""A tournament's standings, cross-table, progress and history, from its finished matches and
forfeits (docs/architecture.md, *Tournaments*).

What a match gives each side: 1 point for every other side it beat, a half for every tie,
divided by the other sides' number (two sides: win 1, draw ½, loss 0), by the game's own
ranks (``GameSpec.rating_ranks``; a cooperative game's score instead).  A forfeit gives the
entrants present a win over the absent; a Swiss bye a point; a late entrant's missed Swiss
rounds half a point each.

The statistic and its 95% interval, per format (stats.py):
- round robin and Swiss: the score rate (points per game) with a Wilson interval;
- duplicate: the mean paired difference per deal (the entrant's score minus its
  opponent's, summed over the deal's rotations, so the luck of the deal cancels) with a
  Student-t interval; a cooperative game's duplicate: the mean score on the shared deals;
- a bridge pair event (Mitchell, Howell): each board is scored across the field
  (:func:`score_boards`: matchpoints or cross-IMPs), the statistic is the mean percentage (or
  cross-IMPs) per board with a Student-t interval over the pair's boards, and a Mitchell ranks
  its N-S and E-W fields apart.
"""
from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from django.db.models import Count
from django.utils import timezone

from games.arena import registry
from games.arena.models import Event, Match, Tournament
from games.arena.tournaments import stats

#: The most points a standings chart keeps (the history is thinned evenly beyond it).
HISTORY_POINTS = 120


@dataclass
class Row:
    """One entrant's line of the standings."""

    entrant: int
    name: str
    games: int = 0
    points: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0
    forced: int = 0
    stat: float | None = None
    low: float | None = None
    high: float | None = None
    bot_url: str = ""
    #: A bridge movement: boards scored, and a Mitchell's field ("N-S" or "E-W"; else "").
    boards: int = 0
    field: str = ""


@dataclass
class Table:
    """What :func:`compute` gives: rows best first, the cross-table, progress and history."""

    tournament: Tournament
    statistic: str
    rows: list[Row]
    points: dict[int, float]
    byes: list[int]
    side0: dict[int, int]
    #: cross[a][b]: (a's points against b, games) over their matches.
    cross: dict[int, dict[int, tuple[float, int]]]
    done: int
    running: int
    planned: int
    eta_s: float | None
    #: [(games done, {entrant: points})], thinned to :data:`HISTORY_POINTS`.
    history: list[tuple[int, dict[int, float]]]
    #: duplicate: per entrant, its paired difference per completed deal.
    diffs: dict[int, list[float]] = field(default_factory=dict)
    wins_by: dict[int, int] = field(default_factory=dict)


def _side_points(ranks: list[int]) -> list[float]:
    """Points per side from the sides' ranks (1 best): beaten sides 1, tied ½, over k-1."""
    k = len(ranks)
    if k == 1:
        return [0.0]
    return [sum(1.0 if r < other else 0.5 if r == other else 0.0
                for j, other in enumerate(ranks) if j != i) / (k - 1) for i, r in enumerate(ranks)]


def statistic_name(tournament: Tournament, cooperative: bool) -> str:
    if tournament.format in MOVEMENTS:
        return ("mean percentage per board" if tournament.scoring == Tournament.Scoring.MATCHPOINTS
                else "mean cross-IMPs per board")
    if cooperative:
        return "mean score"
    if tournament.format == Tournament.Format.DUPLICATE:
        return "mean paired difference per deal"
    return "score rate"


def compute(tournament: Tournament) -> Table:
    """The standings of ``tournament`` now (one read of its planned games and finished
    matches, one of its forced moves)."""
    from games.arena.tournaments.schedule import sides_of

    spec = registry.get(tournament.game)
    sides = sides_of(spec, tournament.config)
    entrants = list(tournament.entrants.order_by("index"))
    rows = {e.index: Row(e.index, e.display_name,
                         bot_url=f"/bots/{e.registered_bot_id}/" if e.registered_bot_id else "") for e in entrants}
    games = list(tournament.games.order_by("number"))
    finished = {m.tournament_game_id: m for m in Match.objects.filter(
        tournament_game__tournament=tournament, status=Match.Status.FINISHED).only(
        "id", "tournament_game_id", "result", "finished_at")}
    running = Match.objects.filter(tournament_game__tournament=tournament,
                                   status__in=[Match.Status.OPEN, Match.Status.RUNNING]).count()
    if tournament.format in MOVEMENTS:
        return _movement_standings(tournament, sides, rows, games, finished, running)
    cross: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    byes, side0 = [], defaultdict(int)
    scores_by_deal: dict[int, dict[int, float]] = defaultdict(dict)  # duplicate: deal -> entrant -> score sum
    opponents_of_deal: dict[int, tuple[int, ...]] = {}
    rotations: dict[int, int] = defaultdict(int)
    timeline = []
    for g in games:
        match = finished.get(g.pk)
        if g.forfeit is None and match is None:
            continue
        if g.forfeit is not None and g.forfeit.get("bye"):
            byes.append(g.sides[0])
            rows[g.sides[0]].points += 1.0
            timeline.append((None, {g.sides[0]: 1.0}))
            continue
        side0[g.sides[0]] += 1
        if g.forfeit is not None:
            absent = set(g.forfeit.get("absent", []))
            ranks = [2 if e in absent else 1 for e in g.sides]
            side_scores = None
            for e in absent:
                rows[e].forfeits += 1
            when = None
        else:
            result = match.result or {}
            seat_scores = result.get("scores") or []
            side_scores = [float(seat_scores[seats[0]]) if len(seat_scores) > seats[0] else 0.0 for seats in sides]
            ranks = spec.rating_ranks(tournament.config, result) if not spec.cooperative else None
            ranks = [ranks[seats[0]] for seats in sides] if ranks else [1] * len(sides)
            when = match.finished_at
        pts = _side_points(ranks)
        best = min(ranks)
        for i, e in enumerate(g.sides):
            row = rows[e]
            row.games += 1
            row.points += pts[i]
            if len(g.sides) > 1:
                if ranks.count(best) == len(ranks):
                    row.draws += 1
                elif ranks[i] == best:
                    row.wins += 1
                else:
                    row.losses += 1
        for (i, a), (j, b) in combinations(enumerate(g.sides), 2):
            won = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
            cross[a][b][0] += won
            cross[a][b][1] += 1
            cross[b][a][0] += 1.0 - won
            cross[b][a][1] += 1
        if side_scores is not None:
            for i, e in enumerate(g.sides):
                scores_by_deal[g.deal][e] = scores_by_deal[g.deal].get(e, 0.0) + side_scores[i]
            opponents_of_deal[g.deal] = tuple(sorted(g.sides))
            rotations[g.deal] += 1
        timeline.append((when, dict(zip(g.sides, pts))))
    # Late entrants' missed Swiss rounds: half a point each.
    for e in entrants:
        if e.joined_round > 1:
            rows[e.index].points += 0.5 * (e.joined_round - 1)
    statistic = statistic_name(tournament, spec.cooperative)
    diffs: dict[int, list[float]] = defaultdict(list)
    k = len(sides)
    duplicate = tournament.format == Tournament.Format.DUPLICATE
    if spec.cooperative:
        for deal, by in scores_by_deal.items():
            for e, score in by.items():
                diffs[e].append(score)
    elif duplicate:
        for deal, by in scores_by_deal.items():
            if rotations[deal] < k:
                continue  # a deal counts once every rotation of it is played
            for e in opponents_of_deal[deal]:
                others = [by[o] for o in opponents_of_deal[deal] if o != e]
                diffs[e].append(by[e] - sum(others) / len(others))
    for row in rows.values():
        if spec.cooperative or duplicate:
            values = diffs.get(row.entrant, [])
            interval = stats.mean_interval(values)
            if interval is not None:
                row.stat, row.low, row.high = interval
            elif values:  # one value: its mean, no interval
                row.stat = values[0]
        elif row.games:
            row.stat = _rate(row)
            row.low, row.high = stats.wilson(_played_points(row), row.games)
    _count_forced(tournament, sides, games, finished, rows)
    ordered = sorted(rows.values(), key=lambda r: (-(r.points if not (spec.cooperative or duplicate) else
                                                    (r.stat if r.stat is not None else float("-inf"))),
                                                   -(r.stat or 0.0), r.entrant))
    return _table(tournament, statistic, ordered, rows, games, finished, running, len(entrants), byes, side0,
                  cross, timeline, diffs)


def _table(tournament, statistic, ordered, rows, games, finished, running, entrants, byes, side0, cross, timeline,
           diffs) -> Table:
    """The :class:`Table` of rows ``ordered`` best first: progress and its estimated finish."""
    done = sum(1 for g in games if g.forfeit is not None or g.pk in finished)
    planned = planned_games(tournament, len(games), entrants)
    eta = None
    if tournament.started_at and done and planned > done and tournament.status == Tournament.Status.RUNNING:
        elapsed = (timezone.now() - tournament.started_at).total_seconds()
        eta = elapsed / done * (planned - done)
    return Table(tournament, statistic, ordered, {e: r.points for e, r in rows.items()}, byes, dict(side0),
                 {a: {b: (v[0], v[1]) for b, v in row.items()} for a, row in cross.items()},
                 done, running, planned, eta, _history(timeline, rows), dict(diffs),
                 {e: r.wins for e, r in rows.items()})


# --- bridge pair events: Mitchell and Howell, scored across the field ------------------------------
MOVEMENTS = (Tournament.Format.MITCHELL, Tournament.Format.HOWELL)
#: A forfeit's artificial adjusted scores (Law 12C2, as the ACBL awards them): the pair that
#: came, through no fault of its own, gets average-plus, 60% of a board's matchpoints or
#: +3 IMPs; the absent pair, at fault, average-minus, 40% or -3 IMPs.  Not the 50% of a board
#: nobody played: being there is worth more than not coming, and neither luck of a deal
#: nobody saw counts.
AVERAGE_PLUS, AVERAGE_MINUS = 60.0, 40.0
AVERAGE_PLUS_IMPS = 3.0


@dataclass(frozen=True)
class BoardResult:
    """One pair's result on one board of a movement.  ``value``: matchpoints, the percentage of
    the board's top (0-100); cross-IMPs, the IMPs per comparison; None when nobody else
    played the board (nothing to compare).  ``points``: the matchpoints scored (2 a score
    beaten, 1 an equal one), or the same IMPs per comparison (0 when nothing to compare)."""

    game: int  #: the planned game it was played or forfeited in
    entrant: int
    opponent: int
    board: int
    value: float | None
    points: float


def score_boards(played, forfeited, scoring: str) -> list[BoardResult]:
    """Every pair's result on every board, scored across the field.

    ``played``: ``(game, board, ns, ew, ns_score)`` for each board each table played (the
    score from North-South's side, as ``rules.result()["boards"]`` gives it); ``forfeited``:
    ``(game, board, ns, ew, absent)`` for each board of a forfeited table (``absent``: the
    entrants that did not come).  ``scoring``: :class:`Tournament.Scoring`.

    Matchpoints (Law 78A, games/bridge/scoring.py ``matchpoints``): each N-S score against the
    other N-S scores of the board, 2 a score beaten, 1 an equal one; the top is ``2 (n - 1)``
    for ``n`` scores and E-W gets the complement.  Cross-IMPs (Law 78B): each N-S score minus
    each other table's N-S score, turned into IMPs (``scoring.imps``), averaged over the
    comparisons; E-W gets the negation.  A forfeit: :data:`AVERAGE_PLUS` / :data:`AVERAGE_MINUS`
    of the board's top (or +-:data:`AVERAGE_PLUS_IMPS`), the top being that of the tables
    that played it."""
    from games.bridge import scoring as bridge_scoring

    by_board = defaultdict(list)
    for row in played:
        by_board[row[1]].append(row)
    out = []
    matchpoints = scoring == Tournament.Scoring.MATCHPOINTS
    for board, rows in sorted(by_board.items()):
        scores = [row[4] for row in rows]
        others = len(scores) - 1
        if matchpoints:
            top = 2 * others
            for (game, _, ns, ew, _), mp in zip(rows, bridge_scoring.matchpoints(scores)):
                percent = 100.0 * mp / top if top else None
                out.append(BoardResult(game, ns, ew, board, percent, float(mp)))
                out.append(BoardResult(game, ew, ns, board, None if percent is None else 100.0 - percent,
                                       float(top - mp)))
            continue
        for i, (game, _, ns, ew, score) in enumerate(rows):
            imps = (sum(bridge_scoring.imps(score - other) for j, other in enumerate(scores) if j != i) / others
                    if others else None)
            out.append(BoardResult(game, ns, ew, board, imps, imps or 0.0))
            out.append(BoardResult(game, ew, ns, board, None if imps is None else -imps, -(imps or 0.0)))
    for game, board, ns, ew, absent in forfeited:
        top = 2 * max(len(by_board.get(board, ())) - 1, 0)
        for me, other in ((ns, ew), (ew, ns)):
            if matchpoints:
                percent = AVERAGE_MINUS if me in absent else AVERAGE_PLUS
                out.append(BoardResult(game, me, other, board, percent, percent / 100.0 * top))
            else:
                imps = -AVERAGE_PLUS_IMPS if me in absent else AVERAGE_PLUS_IMPS
                out.append(BoardResult(game, me, other, board, imps, imps))
    return out


def _movement_standings(tournament, sides, rows: dict[int, Row], games, finished, running) -> Table:
    """The standings of a Mitchell or Howell (:func:`score_boards` over the finished tables and
    the forfeited ones): per pair its matchpoints (or IMPs), its mean percentage (or cross-IMPs)
    per board with a Student-t interval over its boards; a Mitchell's pairs ranked in their
    field (N-S, E-W), a Howell's in one.  The cross-table: each pair's mean against each
    opponent and their boards."""
    per_round = tournament.per_pairing
    played, forfeited = [], []
    for g in games:
        ns, ew = g.sides
        match = finished.get(g.pk)
        if match is not None:
            played += [(g.pk, b["board"], ns, ew, b["score"]) for b in (match.result or {}).get("boards", [])]
        elif g.forfeit is not None:
            absent = set(g.forfeit.get("absent", []))
            first = (g.deal - 1) * per_round + 1
            forfeited += [(g.pk, board, ns, ew, absent) for board in range(first, first + per_round)]
            for e in absent:
                rows[e].forfeits += 1
    results = score_boards(played, forfeited, tournament.scoring)
    values: dict[int, list[float]] = defaultdict(list)
    cross: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    gained: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))  # game -> entrant -> points
    rounds: dict[int, set] = defaultdict(set)
    for r in results:
        row = rows[r.entrant]
        row.points += r.points
        row.boards += 1
        rounds[r.entrant].add(r.game)
        gained[r.game][r.entrant] += r.points
        if r.value is not None:
            values[r.entrant].append(r.value)
            cross[r.entrant][r.opponent][0] += r.value
            cross[r.entrant][r.opponent][1] += 1
    mitchell = tournament.format == Tournament.Format.MITCHELL
    tables = len(rows) // 2
    for row in rows.values():
        row.games = len(rounds[row.entrant])
        row.field = ("N-S" if row.entrant < tables else "E-W") if mitchell else ""
        interval = stats.mean_interval(values[row.entrant])
        if interval is not None:
            row.stat, row.low, row.high = interval
            if tournament.scoring == Tournament.Scoring.MATCHPOINTS:  # a percentage: the t interval held to 0-100
                row.low, row.high = max(row.low, 0.0), min(row.high, 100.0)
        elif values[row.entrant]:
            row.stat = values[row.entrant][0]
    _count_forced(tournament, sides, games, finished, rows)
    ordered = sorted(rows.values(), key=lambda r: (r.field == "E-W", -(r.stat if r.stat is not None else float("-inf")),
                                                   -r.points, r.entrant))
    # The cross-table's cells: the mean against that opponent, over their boards.
    means = {a: {b: [total / n, n] for b, (total, n) in row.items()} for a, row in cross.items()}
    by_game = {g.pk: g for g in games}
    timeline = [(finished[pk].finished_at if pk in finished else None, dict(points))
                for pk, points in sorted(gained.items(), key=lambda item: by_game[item[0]].number)]
    return _table(tournament, statistic_name(tournament, False), ordered, rows, games, finished, running,
                  len(rows), [], {}, means, timeline, values)


def _played_points(row: Row) -> float:
    """Points won in games played (byes and missed rounds left out)."""
    return row.wins + 0.5 * row.draws


def _rate(row: Row) -> float:
    return _played_points(row) / row.games if row.games else 0.0


def planned_games(tournament: Tournament, planned_rows: int, entrants: int) -> int:
    """The games ``tournament`` will play in all: its ``planned_rows`` so far, or for Swiss
    every round's games (byes included) when more than planned yet."""
    if tournament.format == Tournament.Format.SWISS:
        return max(planned_rows, tournament.rounds * ((entrants + 1) // 2))
    return planned_rows


def _history(timeline, rows: dict[int, Row]) -> list[tuple[int, dict[int, float]]]:
    """Cumulative points after each done game (``timeline``: ``(finished_at or None,
    {entrant: points})``; forfeits and byes, which have no time, first), in finishing order,
    thinned to :data:`HISTORY_POINTS`."""
    ordered = sorted(enumerate(timeline), key=lambda item: (item[1][0] is not None, item[1][0] or 0, item[0]))
    points = {e: 0.0 for e in rows}
    history = []
    for n, (_, (_, gained)) in enumerate(ordered, 1):
        for e, p in gained.items():
            points[e] += p
        history.append((n, dict(points)))
    if len(history) > HISTORY_POINTS:
        step = len(history) / HISTORY_POINTS
        history = [history[int(i * step)] for i in range(HISTORY_POINTS - 1)] + [history[-1]]
    return history


def _count_forced(tournament, sides, games, finished, rows: dict[int, Row]) -> None:
    """Each entrant's forced moves (a deadline missed, an illegal answer) over its matches."""
    seat_entrant = {}
    by_game = {g.pk: g for g in games}
    for game_id, match in finished.items():
        g = by_game[game_id]
        for e, seats in zip(g.sides, sides):
            for seat in seats:
                seat_entrant[(match.pk, seat)] = e
    if not seat_entrant:
        return
    counts = (Event.objects.filter(match__tournament_game__tournament=tournament, forced=True,
                                   match__status=Match.Status.FINISHED)
              .values("match_id", "seat").annotate(n=Count("id")))
    for c in counts:
        e = seat_entrant.get((c["match_id"], c["seat"]))
        if e is not None:
            rows[e].forced += c["n"]


def early_finding(table: Table) -> str:
    """For a match-up of two entrants: "A is better with 95% confidence after N games" once
    the test of its format says so (stats.better_than on decisive games; duplicate:
    stats.paired_better on the paired differences), else ``""``."""
    if len(table.rows) != 2:
        return ""
    a, b = sorted(table.rows, key=lambda r: r.entrant)
    if table.tournament.format == Tournament.Format.DUPLICATE:
        side = stats.paired_better(table.diffs.get(a.entrant, []), looks=max(table.planned // 2, 1))
    else:
        side = stats.better_than(a.wins, b.wins, looks=max(table.planned, 1))
    if side is None:
        return ""
    better = a if side == "a" else b
    return f"{better.name} is better with 95% confidence after {a.games} games"


def ranks(table: Table) -> list[int]:
    """Each row's rank, from 1: in its field for a Mitchell (N-S and E-W each have a winner)."""
    out, last, n = [], None, 0
    for r in table.rows:
        n = 1 if r.field != last else n + 1
        last = r.field
        out.append(n)
    return out


def as_json(table: Table) -> dict:
    """The standings as the API and the live page send them."""
    t = table.tournament
    names = {r.entrant: r.name for r in table.rows}
    return {
        "id": t.pk, "name": t.name, "game": t.game, "format": t.format, "status": t.status, "note": t.note,
        "rated": t.rated, "round": t.round, "rounds": t.rounds, "scoring": t.scoring,
        "boards_per_round": t.per_pairing if t.format in MOVEMENTS else None,
        "progress": {"done": table.done, "running": table.running,
                     "left": max(table.planned - table.done - table.running, 0), "planned": table.planned,
                     "eta_s": None if table.eta_s is None else round(table.eta_s, 1)},
        "statistic": table.statistic,
        "standings": [{"rank": n, "entrant": r.entrant, "name": r.name, "games": r.games, "points": r.points,
                       "wins": r.wins, "draws": r.draws, "losses": r.losses, "forfeits": r.forfeits,
                       "forced": r.forced, "stat": r.stat, "low": r.low, "high": r.high, "bot_url": r.bot_url,
                       "boards": r.boards, "field": r.field}
                      for n, r in zip(ranks(table), table.rows)],
        "cross": [{"entrant": a, "name": names[a], "against": {str(b): {"points": p, "games": n}
                                                                 for b, (p, n) in row.items()}}
                  for a, row in sorted(table.cross.items())],
        "history": [{"done": n, "points": {str(e): p for e, p in points.items()}} for n, points in table.history],
    }


def as_csv(table: Table) -> str:
    """The standings as CSV: one line per entrant, best first."""
    out = io.StringIO()
    writer = csv.writer(out)
    t = table.tournament
    if t.format in MOVEMENTS:
        # A pair event: its field, rounds and boards, matchpoints (or IMPs), no wins and losses.
        writer.writerow(["rank", "field", "pair", "rounds", "boards",
                         "matchpoints" if t.scoring == Tournament.Scoring.MATCHPOINTS else "IMPs", "forfeits",
                         "forced", table.statistic, "low 95%", "high 95%"])
        for n, r in zip(ranks(table), table.rows):
            writer.writerow([n, r.field, r.name, r.games, r.boards, f"{r.points:g}", r.forfeits, r.forced,
                             *("" if v is None else f"{v:.4f}" for v in (r.stat, r.low, r.high))])
        return out.getvalue()
    writer.writerow(["rank", "entrant", "games", "points", "wins", "draws", "losses", "forfeits", "forced",
                     table.statistic, "low 95%", "high 95%"])
    for n, r in enumerate(table.rows, 1):
        writer.writerow([n, r.name, r.games, f"{r.points:g}", r.wins, r.draws, r.losses, r.forfeits, r.forced,
                         "" if r.stat is None else f"{r.stat:.4f}", "" if r.low is None else f"{r.low:.4f}",
                         "" if r.high is None else f"{r.high:.4f}"])
    return out.getvalue()
