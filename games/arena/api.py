"""The JSON API: ``/api/matches/`` (filters as the history page), ``/api/matches/<id>/``
(seats, result, events) and ``/api/matches/<id>/replay/`` (replay frames)."""
from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.urls import reverse

from games.arena import replay
from games.arena.models import Match
from games.arena.queries import DONE, PAGE_SIZE, finished_matches, seat_summary


def _int(value, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(value)))
    except (TypeError, ValueError):
        return default


def match_summary(match: Match) -> dict:
    return {
        "id": match.pk, "game": match.game, "status": match.status, "config": match.config,
        "created_at": match.created_at, "started_at": match.started_at, "finished_at": match.finished_at,
        "result": match.result, "seats": [seat_summary(s) for s in match.seats.all()],
        "url": reverse("match", args=[match.pk]), "api": reverse("api_match", args=[match.pk]),
    }


def match_list(request):
    """Finished matches, newest first, ``PAGE_SIZE`` a page: ``?game=&player=&date_from=&date_to=&page=``."""
    paginator = Paginator(finished_matches(request.GET), PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    return JsonResponse({"count": paginator.count, "page": page.number, "pages": paginator.num_pages,
                         "results": [match_summary(m) for m in page.object_list]})


def match_detail(request, match_id: int):
    """One match with its seats and result; its seed and events once it is over (while it
    runs they would give away hidden information)."""
    match = Match.objects.prefetch_related("seats").filter(pk=match_id).first()
    if match is None:
        raise Http404("no such match")
    data = match_summary(match)
    if match.status in DONE:
        data["seed"] = match.seed
        data["events"] = list(match.events.order_by("seq").values(
            "seq", "step", "seat", "action", "forced", "reason", "think_ms"))
    else:
        data["events"] = None
    return JsonResponse(data)


def match_replay(request, match_id: int):
    """Replay frames ``?start=0&count=500`` of a finished or aborted match."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise Http404("no such match")
    if match.status not in DONE:
        return JsonResponse({"error": "The replay opens when the match is over."}, status=409)
    start = _int(request.GET.get("start"), 0, 0, 10**9)
    count = _int(request.GET.get("count"), replay.MAX_FRAMES, 1, replay.MAX_FRAMES)
    return JsonResponse(replay.frames(match, start, count))
