"""Match listings shared by the history page and the JSON API."""
from __future__ import annotations

import datetime

from django.db.models import Prefetch, QuerySet

from games.arena.models import Match, Seat

PAGE_SIZE = 25
DONE = [Match.Status.FINISHED, Match.Status.ABORTED]


def parse_date(text: str | None) -> datetime.date | None:
    """``YYYY-MM-DD`` or None; anything else is ignored rather than an error."""
    try:
        return datetime.date.fromisoformat(text) if text else None
    except ValueError:
        return None


def finished_matches(params) -> QuerySet:
    """Finished (and aborted) matches, newest first, filtered by the query ``params``:
    ``game`` (slug), ``player`` (part of a seat's name, any case), ``date_from`` and
    ``date_to`` (``YYYY-MM-DD``, inclusive, on the finishing day, UTC), ``status``."""
    qs = Match.objects.filter(status__in=DONE)
    if params.get("game"):
        qs = qs.filter(game=params["game"])
    if params.get("status") in DONE:
        qs = qs.filter(status=params["status"])
    if params.get("player"):
        qs = qs.filter(seats__display_name__icontains=params["player"][:64]).distinct()
    start, end = parse_date(params.get("date_from")), parse_date(params.get("date_to"))
    if start:
        qs = qs.filter(finished_at__date__gte=start)
    if end:
        qs = qs.filter(finished_at__date__lte=end)
    return qs.order_by("-finished_at", "-pk").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.order_by("index")))


def seat_summary(seat: Seat) -> dict:
    """A seat as the API and the pages show it."""
    return {"index": seat.index, "name": seat.display_name, "kind": seat.kind,
            "builtin_bot": seat.builtin_bot or None, "occupied": seat.occupied, "score": seat.final_score}


def winners(result: dict | None) -> set[int]:
    """The seats that won a finished match's ``result``: its ``winners`` list (partnership
    games name every partner) or else its single ``winner``; empty for a draw or no result."""
    if not isinstance(result, dict):
        return set()
    if isinstance(result.get("winners"), list):
        return {s for s in result["winners"] if isinstance(s, int)}
    return {result["winner"]} if isinstance(result.get("winner"), int) else set()


def result_sides(match: Match, spec) -> list[dict] | None:
    """A finished match's result as the pages show it, one entry per side: ``{"label",
    "names": [str], "score", "won"}``; per team for games with ``spec.teams`` (so both
    partners are winners), None for other games (their seats are listed one by one)."""
    if spec.teams is None or match.status != Match.Status.FINISHED:
        return None
    seats = {s.index: s for s in match.seats.all()}
    won = winners(match.result)
    sides = []
    for label, members in spec.teams(match.config):
        present = [seats[i] for i in members if i in seats]
        score = next((s.final_score for s in present if s.final_score is not None), None)
        sides.append({"label": label, "names": [s.display_name for s in present], "score": score,
                      "won": bool(won) and set(members) <= won})
    return sides
