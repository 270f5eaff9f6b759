"""The JSON API: ``/api/matches/`` (filters as the history page), ``/api/matches/<id>/``
(seats, result, events a page at a time) and ``/api/matches/<id>/replay/`` (replay frames)."""
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


#: Events per page of ``/api/matches/<id>/``: by default, and at most (``?limit=``).
EVENTS_PAGE = 1000
MAX_EVENTS_PAGE = 5000


def match_detail(request, match_id: int):
    """One match with its seats and result; its seed and events once it is over (while it
    runs they would give away hidden information).

    Events come a page at a time (issue 6, item 8): ``?after=<seq>&limit=<n>`` gives the
    events with ``seq > after``, ``EVENTS_PAGE`` by default and ``MAX_EVENTS_PAGE`` at most;
    ``events_next`` is the URL of the next page (None on the last), ``steps`` the steps in
    the whole log (the replay has ``steps + 1`` frames)."""
    match = Match.objects.prefetch_related("seats").filter(pk=match_id).first()
    if match is None:
        raise Http404("no such match")
    data = match_summary(match)
    if match.status in DONE:
        after = _int(request.GET.get("after"), 0, 0, 2**31)
        limit = _int(request.GET.get("limit"), EVENTS_PAGE, 1, MAX_EVENTS_PAGE)
        data["seed"] = match.seed
        data["steps"] = replay.total_steps(match.pk)
        data["replay"] = reverse("api_replay", args=[match.pk])
        # One more than asked says whether there is a next page without counting the log.
        events = list(match.events.filter(seq__gt=after).order_by("seq")[:limit + 1].values(
            "seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail"))
        more = len(events) > limit
        data["events"] = events[:limit]
        data["events_next"] = (request.build_absolute_uri(
            f"{reverse('api_match', args=[match.pk])}?after={events[limit - 1]['seq']}&limit={limit}")
            if more else None)
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
