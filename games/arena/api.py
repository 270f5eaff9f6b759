"""The JSON API: ``/api/matches/`` (filters as the history page), ``/api/matches/<id>/``
(seats, result, events a page at a time) and ``/api/matches/<id>/replay/`` (replay frames).

Errors are JSON too, ``{"error": "<what is wrong>"}``: 404 for a match that does not exist,
400 for a parameter that is not what the API takes (a page past the last, a date that is not
``YYYY-MM-DD``, a number that is not one or out of range) instead of silently ignoring it.
Seeds are strings: they are 62-bit numbers, beyond what JavaScript's numbers hold exactly.
"""
from __future__ import annotations

from functools import wraps

from django.core.paginator import Paginator
from django.http import JsonResponse
from django.urls import reverse

from games.arena import replay
from games.arena.models import Match
from games.arena.queries import DONE, PAGE_SIZE, FilterError, check_filters, finished_matches, page_number, seat_summary


class BadRequest(ValueError):
    """A request the API answers with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def json_errors(view):
    """Answer :class:`BadRequest` raised by ``view`` as a JSON error."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadRequest as exc:
            return JsonResponse({"error": str(exc)}, status=exc.status)
    return wrapper


def _int(params, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as a whole number from ``low`` to ``high`` (``default`` when
    absent).  Raises :class:`BadRequest` naming the parameter otherwise."""
    value = params.get(name)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, got {value[:40]!r}")
    return number


def _match(match_id: int, queryset=None) -> Match:
    match = (queryset if queryset is not None else Match.objects).filter(pk=match_id).first()
    if match is None:
        raise BadRequest(f"there is no match {match_id}", status=404)
    return match


def match_summary(match: Match) -> dict:
    return {
        "id": match.pk, "game": match.game, "status": match.status, "config": match.config,
        "created_at": match.created_at, "started_at": match.started_at, "finished_at": match.finished_at,
        "result": match.result, "seats": [seat_summary(s) for s in match.seats.all()],
        "url": reverse("match", args=[match.pk]), "api": reverse("api_match", args=[match.pk]),
    }


@json_errors
def match_list(request):
    """Finished matches, newest first, ``PAGE_SIZE`` a page: ``?game=&player=&date_from=&date_to=&page=``.
    Raises (as a 400) for an unknown game, a bad date, a ``date_from`` after ``date_to`` or a
    page that does not exist (:func:`~games.arena.queries.check_filters`)."""
    filters, problems = check_filters(request.GET)  # the history page's checks, word for word
    if problems:
        raise BadRequest(str(problems[0]))
    paginator = Paginator(finished_matches(filters), PAGE_SIZE)
    try:
        page = paginator.page(page_number(request.GET.get("page"), paginator.num_pages))
    except FilterError as exc:
        raise BadRequest(str(exc)) from None
    return JsonResponse({"count": paginator.count, "page": page.number, "pages": paginator.num_pages,
                         "results": [match_summary(m) for m in page.object_list]})


#: Events per page of ``/api/matches/<id>/``: by default, and at most (``?limit=``).
EVENTS_PAGE = 1000
MAX_EVENTS_PAGE = 5000


@json_errors
def match_detail(request, match_id: int):
    """One match with its seats and result; its seed and events once it is over (while it
    runs they would give away hidden information).

    Events come a page at a time, so a long match is never read whole:
    ``?after=<seq>&limit=<n>`` gives the events with ``seq > after``, ``EVENTS_PAGE`` by
    default and ``MAX_EVENTS_PAGE`` at most;
    ``events_next`` is the URL of the next page (None on the last), ``steps`` the steps in
    the whole log (the replay has ``steps + 1`` frames)."""
    match = _match(match_id, Match.objects.prefetch_related("seats"))
    data = match_summary(match)
    if match.status in DONE:
        after = _int(request.GET, "after", 0, 0, 2**63)
        limit = _int(request.GET, "limit", EVENTS_PAGE, 1, MAX_EVENTS_PAGE)
        data["seed"] = str(match.seed)
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


@json_errors
def match_replay(request, match_id: int):
    """Replay frames ``?start=0&count=500`` of a finished or aborted match (``total``: frames
    in the whole replay)."""
    match = _match(match_id)
    if match.status not in DONE:
        raise BadRequest("The replay opens when the match is over.", status=409)
    start = _int(request.GET, "start", 0, 0, 10**9)
    count = _int(request.GET, "count", replay.MAX_FRAMES, 1, replay.MAX_FRAMES)
    return JsonResponse(replay.frames(match, start, count))
