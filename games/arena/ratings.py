"""Ratings per game with openskill's Plackett–Luce model (teams, more than two sides).

Who is rated: registered bots (a bot that presented its key, or a registered HTTP bot),
logged-in people and the built-in bots.  Guests and unverified bots have no identity, so a
match with any of them at the table, a match where one identity holds two seats (copies of a
bot playing each other), an imported match and a cooperative game (Hanabi:
``GameSpec.rating_ranks`` says None; its leaderboard shows score statistics instead) is not
rated.

Scale: openskill's defaults (a newcomer is μ = 25, σ = 25/3, so its conservative estimate
μ − 3σ is 0).  Each game's anchor (``GameSpec.rating_anchor``, its random built-in bot) keeps
those values for ever: it plays at a fixed strength, so every other rating is measured
against it and does not drift as the population changes.  Everyone else starts at the
defaults too and moves with each rated match.

A match is rated when it finishes, in the transaction that stores its result
(:func:`rate_match`, called by :func:`games.arena.tables.finish`), in that order; the
ratings are a function of the finished matches in finishing order, so :func:`recompute`
(``manage.py recompute_ratings``) replays them and gives exactly the same numbers.
"""
from __future__ import annotations

from functools import lru_cache

from django.db import connection, transaction

from games.arena import registry

#: openskill's defaults, which are also the anchor's fixed values.
MU, SIGMA = 25.0, 25.0 / 3


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


def rate_match(match, seats: list) -> bool:
    """Update the ratings of ``match`` (finished, ``match.result`` set) with ``seats`` (its
    :class:`Seat` rows); returns whether it was rated (module docstring says when it is not).
    Call inside the transaction that stores the result.  Each seat's
    :class:`~games.arena.models.RatingChange` keeps its rating before and after."""
    from games.arena.models import Rating, RatingChange

    spec = registry.get(match.game)
    if match.imported:
        return False
    ranks = spec.rating_ranks(match.config, match.result or {})
    if ranks is None:
        return False
    seats = sorted(seats, key=lambda s: s.index)
    subjects = [subject_of(s) for s in seats]
    if None in subjects or len({key for key, _ in subjects}) != len(subjects):
        return False
    anchor = spec.rating_anchor
    keys = [key for key, _ in subjects]
    # A fixed number of statements whatever the seats: one read (locked), one insert of the
    # newcomers, one batch of updates, one insert of the changes (the ORM row by row cost
    # several milliseconds a match, benchmarks/ratings.py).
    known = {r.subject: r for r in Rating.objects.select_for_update().filter(game=match.game, subject__in=keys)}
    newcomers = [Rating(game=match.game, subject=key, mu=MU, sigma=SIGMA, name=seat.display_name, **fields)
                 for (key, fields), seat in zip(subjects, seats) if key not in known]
    if newcomers:
        Rating.objects.bulk_create(newcomers)  # sets their ids (PostgreSQL, SQLite >= 3.35)
        known.update((r.subject, r) for r in newcomers)
    ratings = [known[key] for key in keys]
    teams = spec.teams(match.config) or [(None, (seat.index,)) for seat in seats]
    m = model()
    team_ratings = [[m.rating(mu=ratings[i].mu, sigma=ratings[i].sigma) for i in members] for _, members in teams]
    team_ranks = [ranks[members[0]] for _, members in teams]
    new = m.rate(team_ratings, ranks=team_ranks)
    after = {}
    for (_, members), team in zip(teams, new):
        for i, r in zip(members, team):
            after[i] = (r.mu, r.sigma)
    best = min(ranks)
    outright = ranks.count(best) < len(ranks)  # someone won (not everyone tied)
    seen = connection.ops.adapt_datetimefield_value(match.finished_at)
    changes, updates = [], []
    for i, rating in enumerate(ratings):
        fixed = anchor is not None and rating.subject == f"builtin:{anchor}"
        mu, sigma = (MU, SIGMA) if fixed else after[i]
        changes.append(RatingChange(match_id=match.pk, rating_id=rating.pk, seat=i, rank=ranks[i],
                                    mu_before=rating.mu, sigma_before=rating.sigma, mu_after=mu, sigma_after=sigma))
        updates.append((mu, sigma, rating.matches + 1, rating.wins + (outright and ranks[i] == best),
                        rating.draws + (not outright), match.pk, seen, rating.pk))
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE {Rating._meta.db_table} SET mu = %s, sigma = %s, matches = %s, wins = %s, "
                           "draws = %s, last_match_id = %s, last_seen = %s WHERE id = %s", updates)
    RatingChange.objects.bulk_create(changes)
    return True


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
