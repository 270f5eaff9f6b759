"""Ratings per game with openskill's Plackett–Luce model (teams, more than two sides).

Who is rated: registered bots (a bot that presented its key, or a registered HTTP bot),
logged-in people and the built-in bots.  Guests and unverified bots have no identity, so a
match with any of them at the table, a match where one identity holds seats on two sides (copies
of a bot playing each other; one identity holding both seats of its own team is rated once,
as that team), an unrated tournament's match (``Match.rated``), an imported match and a cooperative game (Hanabi:
``GameSpec.rating_ranks`` says None; its leaderboard shows score statistics instead) is not
rated.

Scale: openskill's defaults (a newcomer is μ = 25, σ = 25/3, so its conservative estimate
μ − 3σ is 0).  Each game's anchor (``GameSpec.rating_anchor``, its random built-in bot) keeps
those values for ever: it plays at a fixed strength, so every other rating is measured
against it and does not drift as the population changes.  Everyone else starts at the
defaults too and moves with each rated match.

A match is rated when it finishes, in the transaction that stores its result
(:func:`rate_match`, called by :func:`games.arena.play.tables.finish`), in that order; the
ratings are a function of the finished matches in finishing order, so :func:`recompute`
(``manage.py recompute_ratings``) replays them and gives exactly the same numbers.  Several
arena processes may finish matches at once: a match locks its identities' ratings first
(creating a newcomer's with an upsert, so two first matches of one identity do not both
insert it) and only then takes its finish time, later than the last match of each of them
(:func:`rate_match` with ``stamp``).  Two matches that share an identity are therefore
rated, committed and stamped in one order, the order :func:`recompute` replays.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone as tz
from functools import lru_cache

from django.db import connection, transaction
from django.utils import timezone

from games.arena import registry

#: openskill's defaults, which are also the anchor's fixed values.
MU, SIGMA = 25.0, 25.0 / 3


def shown(value: float) -> str:
    """A rating figure (μ, σ, μ − 3σ) as every page shows it: two decimals, rounded once from
    the stored value (so the bot page and the leaderboard never differ in the last digit, as
    rounding an already rounded value could make them).  Pages use the ``|rating`` filter."""
    return f"{value:.2f}"


@lru_cache(maxsize=1)
def model():
    """The Plackett–Luce model with openskill's default parameters."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA)


def subject_of(seat) -> tuple[str, dict] | None:
    """``(key, fields)`` of the rated identity at ``seat`` (a :class:`Seat`), or None for a
    guest, an unverified bot or an empty seat.  ``key``: ``"bot:<id>"``, ``"user:<id>"`` or
    ``"builtin:<name>"``."""
    if seat.kind == "protocol" and seat.registered_bot_id is not None:
        return f"bot:{seat.registered_bot_id}", {"registered_bot_id": seat.registered_bot_id}
    if seat.kind == "human" and seat.user_id is not None:
        return f"user:{seat.user_id}", {"user_id": seat.user_id}
    if seat.kind == "builtin" and seat.builtin_bot:
        return f"builtin:{seat.builtin_bot}", {"builtin_bot": seat.builtin_bot}
    return None


def rate_match(match, seats: list, stamp: bool = False) -> bool:
    """Update the ratings of ``match`` (finished, ``match.result`` set) with ``seats`` (its
    :class:`Seat` rows); returns whether it was rated (module docstring says when it is not).
    Call inside the transaction that stores the result.  Each seat's
    :class:`~games.arena.models.RatingChange` keeps its rating before and after.

    With ``stamp`` (a match finishing now, :func:`games.arena.play.tables.finish`), a rated
    match's ``finished_at`` is set here, once its ratings are locked: the time now, but at
    least a microsecond after the last rated match of each of its identities (``last_seen``:
    another host's clock may be behind), so that :func:`recompute`'s order (``finished_at``,
    then id) is the order the ratings were updated in.  Without it (:func:`recompute`) the
    stored time is kept.  An unrated match keeps the time its caller stored."""

    spec = registry.get(match.game)
    if match.imported or not match.rated:
        return False
    ranks = spec.rating_ranks(match.config, match.result or {})
    if ranks is None:
        return False
    seats = sorted(seats, key=lambda s: s.index)
    subjects = [subject_of(s) for s in seats]
    if None in subjects:
        return False
    teams = spec.teams(match.config) or [(None, (seat.index,)) for seat in seats]
    # One identity may hold every seat of its own team (a tournament's entrant plays both
    # partners): it is rated once, as that team, by its first seat.  One identity on two
    # teams (copies of a bot playing each other) is not rated.
    team_of = {i: t for t, (_, members) in enumerate(teams) for i in members}
    first: dict[str, int] = {}
    for i, (key, _) in enumerate(subjects):
        if team_of[first.setdefault(key, i)] != team_of[i]:
            return False
    rated = sorted(first.values())
    anchor = spec.rating_anchor
    keys = [key for key, _ in subjects]
    # Three statements on PostgreSQL (the locking upsert; the read; one data-modifying CTE
    # that updates the ratings, inserts the changes and stamps the match) and four on SQLite,
    # in raw SQL: the ORM's own work (querysets, model rows) was most of a millisecond a
    # match, and each statement is a round trip to the server (benchmarks/ratings.py).
    known = _locked_ratings(match.game, [(*subjects[i], seats[i].display_name) for i in rated])
    ratings = {i: known[keys[i]][:6] for i in rated}  # (id, mu, sigma, matches, wins, draws)
    if stamp:
        match.finished_at = _finish_time(known[keys[i]][6] for i in rated)
    m = model()
    members_rated = [[i for i in members if i in ratings] for _, members in teams]
    team_ratings = [[m.rating(mu=ratings[i][1], sigma=ratings[i][2]) for i in members] for members in members_rated]
    team_ranks = [ranks[members[0]] for _, members in teams]
    new = m.rate(team_ratings, ranks=team_ranks)
    after = {}
    for members, team in zip(members_rated, new):
        for i, r in zip(members, team):
            after[i] = (r.mu, r.sigma)
    best = min(ranks)
    outright = ranks.count(best) < len(ranks)  # someone won (not everyone tied)
    rows = []  # per seat: (rating id, mu, sigma, matches, wins, draws, seat, rank, mu before, sigma before)
    for i in rated:
        pk, mu_before, sigma_before, matches, wins, draws = ratings[i]
        fixed = anchor is not None and keys[i] == f"builtin:{anchor}"
        mu, sigma = (MU, SIGMA) if fixed else after[i]
        rows.append((pk, mu, sigma, matches + 1, wins + (outright and ranks[i] == best), draws + (not outright),
                     i, ranks[i], mu_before, sigma_before))
    _store(match, rows, stamp)
    return True


def _locked_ratings(game: str, subjects: list[tuple[str, dict, str]]) -> dict[str, tuple]:
    """``{subject: (id, mu, sigma, matches, wins, draws, last_seen)}`` of ``game``'s ratings
    of ``subjects`` (``(key, fields, name)`` as :func:`subject_of` gives them, with the
    seat's name), a newcomer's made at openskill's defaults; locked until the transaction
    ends (PostgreSQL; SQLite's writer holds the whole database already), so two matches
    finishing at once rate one after the other.

    One upsert makes the missing rows and locks the others (PostgreSQL: ``ON CONFLICT DO
    UPDATE ... WHERE false`` locks a row it finds and changes nothing); rows are taken in
    the order of their keys, so two transactions never wait for each other in a circle.  A
    row that another transaction is inserting is waited for, then locked: two first matches
    of one identity do not both insert it (the unique constraint ``one_rating_per_game``).
    The read that follows is a statement of its own, which sees the latest committed values
    of the rows now locked."""
    from games.arena.models import Rating

    table = Rating._meta.db_table
    subjects = sorted(subjects, key=lambda subject: subject[0])
    rows, params = [], []
    for key, fields, name in subjects:
        rows.append("(%s, %s, %s, %s, %s, %s, %s, %s, 0, 0, 0)")
        params += [game, key, name[:64], fields.get("registered_bot_id"), fields.get("user_id"),
                   fields.get("builtin_bot", ""), MU, SIGMA]
    take = ("DO UPDATE SET game = EXCLUDED.game WHERE false" if connection.vendor == "postgresql"
            else "DO NOTHING")
    marks = ", ".join(["%s"] * len(subjects))
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} (game, subject, name, registered_bot_id, user_id, builtin_bot, mu, "
                       f"sigma, matches, wins, draws) VALUES {', '.join(rows)} ON CONFLICT (game, subject) {take}",
                       params)
        cursor.execute(f"SELECT subject, id, mu, sigma, matches, wins, draws, last_seen FROM {table} "
                       f"WHERE game = %s AND subject IN ({marks})", [game, *(key for key, _, _ in subjects)])
        return {subject: tuple(rest) for subject, *rest in cursor.fetchall()}


def _finish_time(last_seen) -> datetime:
    """Now, or a microsecond after the latest of ``last_seen`` (the locked ratings' last
    rated matches' finish times; None, or SQLite's text, for a newcomer) if that is not
    earlier: finish times strictly increase along every identity's matches."""
    now = timezone.now()
    for seen in last_seen:
        if isinstance(seen, str):  # SQLite's raw cursor
            seen = datetime.fromisoformat(seen)
        if seen is not None:
            seen = seen if seen.tzinfo is not None else seen.replace(tzinfo=tz.utc)
            now = max(now, seen + timedelta(microseconds=1))
    return now


def _store(match, rows: list[tuple], stamp: bool = False) -> None:
    """Write each rating's new values and a :class:`RatingChange` per seat (``rows`` as
    :func:`rate_match` builds them) and, with ``stamp``, ``match.finished_at``: one
    statement on PostgreSQL, two or three on SQLite."""
    from games.arena.models import Match, Rating, RatingChange

    rating_table, change_table = Rating._meta.db_table, RatingChange._meta.db_table
    match_table = Match._meta.db_table
    seen = connection.ops.adapt_datetimefield_value(match.finished_at)
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(rows))
    params = [value for row in rows for value in row]
    set_new = ("mu = new.mu, sigma = new.sigma, matches = new.matches, wins = new.wins, draws = new.draws, "
               "last_match_id = %s, last_seen = %s")
    insert = (f"INSERT INTO {change_table} (match_id, rating_id, seat, rank, mu_before, sigma_before, mu_after, "
              "sigma_after) SELECT %s, id, seat, rank, mu_before, sigma_before, mu, sigma FROM new")
    columns = "id, mu, sigma, matches, wins, draws, seat, rank, mu_before, sigma_before"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The first VALUES row names the types (parameters arrive untyped).
            typed = ("(%s::bigint, %s::float8, %s::float8, %s::int, %s::int, %s::int, %s::int, %s::int, "
                     "%s::float8, %s::float8)")
            values = ", ".join([typed] + ["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * (len(rows) - 1))
            # (A data-modifying CTE runs whether or not the query reads it.)
            stamped = f"stamped AS (UPDATE {match_table} SET finished_at = %s WHERE id = %s), " if stamp else ""
            cursor.execute(f"WITH new ({columns}) AS (VALUES {values}), {stamped}"
                           f"updated AS (UPDATE {rating_table} AS r SET {set_new} FROM new WHERE r.id = new.id) "
                           f"{insert}", [*params, *([seen, match.pk] if stamp else []), match.pk, seen, match.pk])
        else:  # SQLite (>= 3.33 for UPDATE ... FROM): the same in two statements, and the stamp
            new = f"WITH new ({columns}) AS (VALUES {values}) "
            cursor.execute(f"{new}UPDATE {rating_table} SET {set_new} FROM new WHERE {rating_table}.id = new.id",
                           [*params, match.pk, seen])
            cursor.execute(f"{new}{insert}", [*params, match.pk])
            if stamp:
                cursor.execute(f"UPDATE {match_table} SET finished_at = %s WHERE id = %s", [seen, match.pk])


def recompute(game: str | None = None) -> int:
    """Forget the ratings of ``game`` (None: every game) and rate its finished matches again
    in the order they finished; returns how many were rated.  Gives exactly the numbers the
    matches gave as they finished (the same order, the same model)."""
    from games.arena.models import Match, Rating

    matches = Match.objects.filter(status=Match.Status.FINISHED).order_by("finished_at", "pk")
    if game is not None:
        matches = matches.filter(game=game)
    rated = 0
    with transaction.atomic():
        stale = Rating.objects.all() if game is None else Rating.objects.filter(game=game)
        stale.delete()  # their RatingChange rows go with them
        for match in matches.prefetch_related("seats").iterator(chunk_size=500):
            rated += rate_match(match, list(match.seats.all()))
    return rated
