"""Leaderboards per game: ratings sorted by their conservative estimate (openskill's ordinal,
μ − 3σ), people and bots filterable; for a cooperative game (Hanabi) score statistics per
player count instead (games/arena/ratings/rating.py says who is rated)."""
from __future__ import annotations

import math
import statistics

from django.core.paginator import Paginator
from django.db.models import F
from django.http import Http404
from django.shortcuts import render

from games.arena import registry
from games.arena.models import Match, Rating

PAGE_SIZE = 50
#: ``?who=`` filter -> the subjects it keeps.
WHO = {"": None, "bots": ("bot:", "builtin:"), "people": ("user:",)}


def ratings_of(game: str, who: str = ""):
    """The rated subjects of ``game``, best conservative estimate first; ``who`` is "",
    "bots" or "people" (raises ``ValueError`` for anything else)."""
    if who not in WHO:
        raise ValueError("who must be bots or people")
    rows = Rating.objects.filter(game=game).annotate(ordinal=F("mu") - 3 * F("sigma"))
    if WHO[who]:
        prefixes = WHO[who]
        from django.db.models import Q

        condition = Q()
        for prefix in prefixes:
            condition |= Q(subject__startswith=prefix)
        rows = rows.filter(condition)
    return rows.order_by("-ordinal", "subject")


def rating_row(rating) -> dict:
    """A leaderboard row as the page and the API show it."""
    kind = rating.subject.split(":", 1)[0]
    return {"name": rating.name, "kind": {"bot": "bot", "user": "person", "builtin": "built-in bot"}[kind],
            "mu": round(rating.mu, 3), "sigma": round(rating.sigma, 3),
            "ordinal": round(rating.mu - 3 * rating.sigma, 3), "matches": rating.matches,
            "win_rate": round(rating.wins / rating.matches, 3) if rating.matches else None,
            "last_seen": rating.last_seen.isoformat() if rating.last_seen else None,
            "bot_id": rating.registered_bot_id}


def score_statistics(game: str) -> list[dict]:
    """For a cooperative game: per player count, the finished matches' ``result["score"]``:
    count, mean, its 95% confidence interval (normal approximation) and the distribution."""
    by_players: dict[int, list[float]] = {}
    for config, result in Match.objects.filter(game=game, status=Match.Status.FINISHED, imported=False) \
            .values_list("config", "result"):
        if isinstance(result, dict) and isinstance(result.get("score"), (int, float)):
            by_players.setdefault(int(config.get("players", 0)), []).append(float(result["score"]))
    rows = []
    for players, scores in sorted(by_players.items()):
        mean = statistics.fmean(scores)
        half = 1.96 * statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 else None
        counts = {}
        for s in scores:
            counts[int(s)] = counts.get(int(s), 0) + 1
        rows.append({"players": players, "games": len(scores), "mean": round(mean, 2),
                     "ci95": round(half, 2) if half is not None else None,
                     "distribution": sorted(counts.items())})
    return rows


def leaderboard(request, game: str):
    """``/leaderboard/<game>/?who=bots|people&page=N``: the page; a row is :func:`rating_row`'s
    plus ``username`` (a person's, for the link to their page; else None) and ``seen`` (its
    ``last_seen`` as a datetime, for the page's date format)."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game")
    who = request.GET.get("who", "")
    if who not in WHO:
        who = ""
    context = {"spec": spec, "games": registry.all_games(), "who": who}
    if spec.cooperative:
        context["statistics"] = score_statistics(game)
    else:
        page = Paginator(ratings_of(game, who).select_related("user"), PAGE_SIZE).get_page(request.GET.get("page"))
        context["page"] = page
        # The page links a person's name to their page; the API's row (RatingRow) stays as it is.
        # Rating figures from the stored values (the API's row rounds them to 3 decimals; rounding
        # that again would differ from the other pages): rating.shown, through |rating.
        context["rows"] = [{**rating_row(r), "username": r.user.get_username() if r.user is not None else None,
                            "seen": r.last_seen, "stored": {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma}}
                           for r in page.object_list]
        context["anchor"] = spec.builtin_bots[spec.rating_anchor][0] if spec.rating_anchor else None
    return render(request, "arena/leaderboard.html", context)
