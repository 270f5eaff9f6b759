"""The JSON API: ``/api/matches/`` (filters as the history page), ``/api/matches/<id>/``
(seats, result, events a page at a time), ``/api/matches/<id>/replay/`` (replay frames),
``/api/leaderboard/<game>/``, a registered bot's ``/api/bots/<id>/``, its ``matches/`` and
its ``forced/`` moves, ``/api/me/``, and tournaments (``/api/tournaments/``: list and create,
``<id>`` standings, ``<id>/standings.csv``, ``<id>/cancel``, ``<id>/entrants`` to sign up or
enter a bot, ``<id>/entrants/me`` to withdraw; games/arena/web/tournaments.py); described by
an OpenAPI 3 document at ``/api/openapi.json`` and a docs page at ``/api/docs``.  Creating,
cancelling, entering and withdrawing are the only writes, and take a personal API token (a
session cookie is not enough: the API has no CSRF check, so another site could send it).

Who asks: anyone, or a person through their personal API token (``Authorization: Bearer
<token>``, games/arena/bots/api_tokens.py) or their logged-in session.  It changes one thing: a
forced move's full ``detail`` (events, replay answers, forced moves) is given only at the
seats the asker sat in or their bots sat in (:func:`~games.arena.play.queries.detail_seats`;
in a game without hidden information, Blokus, details are everyone's),
"" elsewhere, as the pages do.  A token that identifies nobody is a 401.

Errors are JSON too, ``{"error": "<what is wrong>"}``: 404 for a match that does not exist,
400 for a parameter that is not what the API takes (a page past the last, a date that is not
``YYYY-MM-DD``, a number that is not one or out of range) instead of silently ignoring it,
409 for the replay of a match that is not over.
Seeds are strings: they are 62-bit numbers, beyond what JavaScript's numbers hold exactly.

Built with django-ninja (rather than Django REST framework with drf-spectacular): the API is
three read-only GET endpoints over data we already shape as dicts, and ninja gives what they
lacked (routing by method, response schemas, an OpenAPI document generated from them and a
docs page) from plain typed functions and Pydantic models, with one dependency tree
(pydantic) instead of DRF's serializers, viewsets, settings and a second package for the
schema; it also ships Swagger UI's files, so the interactive page is served from our own
``/static/`` (``ninja`` in ``INSTALLED_APPS``), never from a CDN.

What stays ours, word for word as before the move (``tests/test_api_compat.py`` replays the
old answers): the filters are checked by :func:`~games.arena.play.queries.check_filters` and
:func:`~games.arena.play.queries.page_number`, the history page's own checks, and numbers by
:func:`_int`; so query parameters reach the functions as strings (the OpenAPI document still
says which are whole numbers and their bounds) and a bad one gets our ``{"error": ...}``
with 400, never the library's 422.  The listing keeps its ``count``/``page``/``pages``/
``results`` pages (Django's ``Paginator``) rather than ninja's pagination, whose body
differs.

Answers go through the response schemas (validated, then dumped): that adds about half to the
largest pages (measured through Django's test client: 5,000 events 31 -> 46 ms, 500 replay
frames of six players 35 -> 54 ms, the default 1,000 events 8 -> 12 ms, a listing 1.4 ->
1.5 ms), the price of answers that cannot drift from their documentation.

The docs page (``/api/docs``) is rendered on the server from the same OpenAPI document, in
the site's layout (``templates/arena/api_docs.html``): endpoints, parameters, response
fields, without JavaScript; Swagger UI, to try requests, is at ``/api/docs/swagger``.
"""
from __future__ import annotations

import datetime
import re
from typing import Annotated, Any

from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from ninja import NinjaAPI, Path, Query, Status
from ninja.errors import HttpError, ValidationError
from ninja.openapi.docs import DocsBase, Swagger
from ninja.security import HttpBearer
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from games.arena import registry
from games.arena.bots import api_tokens
from games.arena.models import Event as EventRow
from games.arena.models import Match, Rating, RegisteredBot, Seat as SeatRow, Tournament
from games.arena.play import analyses, details, replay
from games.arena.ratings import leaderboard
from games.arena.tournaments import schedule, standings
from games.arena.web import tournaments
from games.arena.play.queries import (DONE, MAX_PAGE, PAGE_SIZE, FilterError, check_filters, finished_matches,
                                      page_number, detail_seats, seat_summary)


class BadRequest(ValueError):
    """A request the API answers with ``status`` and ``{"error": message}``."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _int(value: str | None, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name``'s ``value`` as a whole number from ``low`` to ``high``
    (``default`` when absent or empty).  Raises :class:`BadRequest` naming the parameter
    otherwise."""
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


def _page(queryset, page: str | None, size: int):
    """``(Paginator page, page count, item count)`` of ``queryset``; raises :class:`BadRequest`
    for a page that is not a whole number or is past the last."""
    paginator = Paginator(queryset, size)
    try:
        number = page_number(page, paginator.num_pages)
    except FilterError as exc:
        raise BadRequest(str(exc)) from None
    return paginator.page(number), paginator.num_pages, paginator.count


#: Events per page of ``/api/matches/<id>/``: by default, and at most (``?limit=``).
EVENTS_PAGE = 1000
MAX_EVENTS_PAGE = 5000
#: The highest ``?after=`` (a sequence number) and ``?start=`` (a frame) taken.
MAX_AFTER = 2**63
MAX_START = 10**9


# --- parameters: strings for our own checks, documented as what they must be --------------------
def WholeNumber(low: int, high: int, default: int | None = None):  # noqa: N802 (a type)
    """A query parameter that must be a whole number from ``low`` to ``high``: received as the
    string it is (checked by :func:`_int` or :func:`page_number`), documented as an integer."""
    schema: dict[str, Any] = {"type": "integer", "minimum": low, "maximum": high}
    if default is not None:
        schema["default"] = default
    return Annotated[str | None, WithJsonSchema(schema)]


Text = Annotated[str | None, WithJsonSchema({"type": "string"})]
Date = Annotated[str | None, WithJsonSchema({"type": "string", "format": "date"})]


# --- response schemas ------------------------------------------------------------------------------
class Out(BaseModel):
    """A response schema: the answers' contract.  A key the code puts in an answer that the
    schema does not declare is an error (a 500, loud in every API test), not silently dropped:
    a field added to, say, :func:`~games.arena.play.queries.seat_summary` must be declared (and so
    documented) here too.

    Plain Pydantic models rather than ``ninja.Schema``: that one wraps every object it reads
    in a Python-level getter (for Django model instances), which made a page of 5,000 events
    six times as slow; the answers here are dicts already."""
    model_config = ConfigDict(extra="forbid")


class Error(Out):
    """What every refused request gets, with its status code."""
    error: str = Field(description="What is wrong, in words: for a 400 the parameter and its value (the first "
                                   "40 characters), for a 401 the API token, for a 404 the match or bot, for a 409 "
                                   "why it cannot be read yet.")


class Seat(Out):
    """A seat of a match (0-based index, as everywhere in the API)."""
    index: int = Field(description="0-based seat number.")
    name: str = Field(description="Display name (empty for an open seat).")
    kind: str = Field(description="human, protocol (a bot over the game's protocol) or builtin.")
    builtin_bot: str | None = Field(description="Which built-in bot (builtin seats), else null.")
    occupied: bool
    score: float | None = Field(description="Final score once the match is over, else null.")
    verified: bool = Field(description="The name is an identity: a registered bot that presented its key (or that "
                                       "the server calls), a logged-in person or a built-in bot. False for a bot "
                                       "that connected without a key (shown \"unverified\"), a guest, an open seat.")
    bot_id: int | None = Field(description="The registered bot at this seat (see /api/bots/<id>/), else null.")


class MatchSummary(Out):
    """A match as the listing and the detail show it."""
    id: int
    game: str = Field(description="The game's slug (as in /rules/<game>/).")
    status: str = Field(description="open, running, finished or aborted.")
    config: dict[str, Any] = Field(description="The table's configuration, as the game takes it.")
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    result: dict[str, Any] | None = Field(description='{"scores": [per seat], "winner": seat or null, ...} '
                                                      'once finished; {"aborted": reason} when aborted.')
    seats: list[Seat]
    url: str = Field(description="The match's page on this site.")
    api: str = Field(description="Its /api/matches/<id>/ address.")


class MatchList(Out):
    """One page of finished and aborted matches, newest first."""
    count: int = Field(description="Matches in the whole listing.")
    page: int
    pages: int = Field(description=f"Pages of {PAGE_SIZE} (1 for an empty listing).")
    results: list[MatchSummary]


class Event(Out):
    """One seat's answer at one step of the event log."""
    seq: int = Field(description="Sequence number in the match's log, from 1.")
    step: int = Field(description="The step it answered (a step may ask several seats).")
    seat: int
    action: Any = Field(description="The action as the game's rules take it (null: no answer).")
    forced: bool = Field(description="True when the server chose it (no valid answer in time).")
    reason: str = Field(description="Why it was forced (public words).")
    think_ms: float | None = Field(description="Milliseconds the seat took.")
    detail: str = Field(description="A forced move's full explanation, or a bot's own remark: only at the seats "
                                     "you or your bots sat in (with your API token or session), else \"\".")


def _no_default(schema: dict) -> None:
    """A field absent from some answers: it has no default to show (``None`` only marks it
    unset, and unset fields are left out of the body)."""
    schema.pop("default", None)


def Absent(kind: type):  # noqa: N802 (a type)
    """A field left out of the body where it does not apply: documented as ``kind``, not null."""
    return Annotated[kind | None, WithJsonSchema({str: {"type": "string"}, int: {"type": "integer"}}[kind])]


class AnalysisPart(Out):
    """One part of a finished match's analysis (games/arena/play/analyses.py)."""
    part: int = Field(description="Its place in the match, from 0 (bridge: the board's place in result.boards).")
    subject: Any = Field(description="What is analysed (bridge: the board as played: board, room, dealer, "
                                     "vulnerability, hands N E S W, contract, declarer, result, score).")
    result: dict[str, Any] | None = Field(description="The analysis, null while pending or once failed (bridge: "
                                                      "tricks[declarer N E S W][strain C D H S NT], par "
                                                      "{score (North-South's), contracts}, solver).")
    failed: bool = Field(description="True when the analysis was given up.")


class MatchDetail(MatchSummary):
    """A match with, once it is over, its seed and a page of its event log.  While it runs,
    seed, steps, replay and events_next are absent and events is null (they would give away
    hidden information)."""
    seed: Absent(str) = Field(None, description="The rules' seed (a 62-bit number, as a string).",
                              json_schema_extra=_no_default)
    steps: Absent(int) = Field(None, description="Steps in the whole log (the replay has steps + 1 frames).",
                               json_schema_extra=_no_default)
    replay: Absent(str) = Field(None, description="The replay's API address.", json_schema_extra=_no_default)
    events: list[Event] | None = Field(description="Events with seq > after, at most limit of them; "
                                                   "null while the match runs.")
    events_next: str | None = Field(None, description="Absolute URL of the next page of events, null on the last; "
                                                      "absent while the match runs.", json_schema_extra=_no_default)
    analysis: list[AnalysisPart] | None = Field(None, description="A finished match's analysis, one part each "
                                                                  "(bridge: each board's double-dummy table and par); "
                                                                  "absent for games without one.",
                                                 json_schema_extra=_no_default)


class Answer(Out):
    """One seat's answer in a replay frame (as an event, without seq and step)."""
    seat: int
    action: Any
    forced: bool
    reason: str
    think_ms: float | None
    detail: str


class Frame(Out):
    """Frame 0 is the first state; frame k the state after step k."""
    step: int
    answers: list[Answer]
    happenings: list[dict[str, Any]] = Field(description="The step's public happenings (a round's outcome...).")
    view: dict[str, Any] = Field(description="The whole state, every hand shown (the game's own shape).")


class ReplayPage(Out):
    """Frames start .. start + count - 1 of a finished or aborted match's replay."""
    frames: list[Frame]
    total: int = Field(description="Frames in the whole replay (steps + 1).")
    complete: bool = Field(description="False when a damaged log ended the replay early.")


# --- the API ---------------------------------------------------------------------------------------
class ServerDocs(DocsBase):
    """The docs page: the OpenAPI document rendered on the server in the site's layout
    (``templates/arena/api_docs.html``): no script, nothing from another host."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        schema = api.plain_schema(path_params=kwargs)
        return render(request, "arena/api_docs.html", {
            "info": schema["info"], "endpoints": describe(schema),
            "openapi_url": self.get_openapi_url(api, kwargs), "swagger_url": reverse("api_swagger")})


#: Characters CommonMark reads as markup, escaped with a backslash in the document's texts.
MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>#|])")


def as_commonmark(node):
    """``node`` (the OpenAPI document or a part of it) with every ``description`` escaped as
    CommonMark literal text.  OpenAPI reads descriptions as CommonMark (a ``summary`` is plain
    text), and Swagger UI renders them so: a bare ``<token>`` or ``<id>`` is an HTML tag there
    and vanishes ("Bearer , answers")."""
    if isinstance(node, dict):
        return {k: (MARKDOWN_SPECIALS.sub(r"\\\1", v) if k == "description" and isinstance(v, str)
                    else as_commonmark(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [as_commonmark(v) for v in node]
    return node


class ArenaAPI(NinjaAPI):
    """The arena's :class:`NinjaAPI`: its OpenAPI document also lists the values of the
    listing's ``game`` and ``status`` filters, and its texts are CommonMark."""

    def plain_schema(self, **kwargs):
        """The generated document, with the values ``game`` and ``status`` take (known once
        the games are registered, so filled in here rather than at import); texts as written
        (the server's docs page shows them as plain text)."""
        schema = super().get_openapi_schema(**kwargs)
        values = {"game": [g.slug for g in registry.all_games()], "status": [str(s) for s in DONE]}
        for operation in schema["paths"].get(reverse("api:matches"), {}).values():
            for param in operation.get("parameters", []):
                if param["name"] in values:
                    param["schema"]["enum"] = values[param["name"]]
        return schema

    def get_openapi_schema(self, **kwargs):
        """The document served at ``/api/openapi.json`` (and read by Swagger UI): texts
        escaped as CommonMark (:func:`as_commonmark`)."""
        return as_commonmark(self.plain_schema(**kwargs))


class Asker(HttpBearer):
    """Who asks (``request.auth``): the person whose personal API token the ``Authorization:
    Bearer`` header carries; without the header, the session's user (logged in or anonymous).
    The header is optional, so every request gets through this; a token that identifies
    nobody (or too many wrong ones from the address) is a 401 with ``{"error": ...}``."""

    def __call__(self, request: HttpRequest):
        header = request.headers.get("Authorization")
        if not header:
            return request.user  # AnonymousUser when nobody is logged in (truthy: let through)
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            raise BadRequest("Authorization must be 'Bearer <your API token>'", status=401)
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str):
        try:
            return api_tokens.token_user(token, request.META.get("REMOTE_ADDR", ""))
        except api_tokens.TokenRefused as exc:
            raise BadRequest(str(exc), status=401) from None


api = ArenaAPI(
    title="Arena API", version="1", urls_namespace="api", docs=ServerDocs(), docs_url="/docs", auth=Asker(),
    description="Finished matches, their event logs and their replays, leaderboards, registered bots and "
                "tournaments, as JSON. Anyone may read it; with your personal API token (made on the Bots page) as "
                "Authorization: Bearer <token>, answers also carry the full details of the forced moves at the seats "
                "you or your bots sat in, and you may create and cancel tournaments. Every refused request gets "
                "{\"error\": \"...\"} with 400, 401, 403, 404, 409 or 429.",
)


def _error(request, message: str, status: int) -> HttpResponse:
    return api.create_response(request, {"error": message}, status=status)


@api.exception_handler(BadRequest)
def _bad_request(request, exc: BadRequest):
    return _error(request, str(exc), exc.status)


@api.exception_handler(ValidationError)
def _invalid(request, exc: ValidationError):
    """Parameters reach the functions as strings, so this is only a safety net: still our
    error body, not the library's."""
    first = exc.errors[0] if exc.errors else {}
    where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
    return _error(request, f"{where}: {first.get('msg', 'is not valid')}", 400)


@api.exception_handler(Http404)
def _not_found(request, exc: Http404):
    return _error(request, str(exc) or "not found", 404)


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    return _error(request, str(exc), exc.status_code)


def get(path: str, *, url_name: str, **kwargs):
    """``@api.get`` that answers ``HEAD`` too (as Django's plain views did), without listing
    a second operation in the OpenAPI document."""
    kwargs["response"] = {**kwargs["response"], 401: Error}  # a refused API token, on every endpoint

    def decorator(view):
        api.api_operation(["HEAD"], path, url_name=url_name, include_in_schema=False,
                          response=kwargs["response"], exclude_unset=kwargs.get("exclude_unset", False))(view)
        return api.get(path, url_name=url_name, **kwargs)(view)
    return decorator


def match_summary(match: Match) -> dict:
    return {
        "id": match.pk, "game": match.game, "status": match.status, "config": match.config,
        "created_at": match.created_at, "started_at": match.started_at, "finished_at": match.finished_at,
        "result": match.result, "seats": [seat_summary(s) for s in match.seats.all()],
        "url": reverse("match", args=[match.pk]), "api": reverse("api:match", args=[match.pk]),
    }


@get("/matches/", url_name="matches", response={200: MatchList, 400: Error}, operation_id="list_matches",
     summary="Finished matches",
     description=f"Finished and aborted matches, newest first (then the higher id first), {PAGE_SIZE} a page. "
                 "The filters are the history page's: an unknown game or status, a date that is not YYYY-MM-DD, "
                 "a date_from after date_to or a page past the last is a 400 naming the first problem; "
                 "other parameters are ignored.")
def match_list(request, game: Text = Query(None, description="Only this game (its slug)."),
               player: Text = Query(None, description="Only matches with a seat whose name contains this, any case "
                                                      "(the first 64 characters count)."),
               date_from: Date = Query(None, description="Finished on or after this day (YYYY-MM-DD, UTC)."),
               date_to: Date = Query(None, description="Finished on or before this day (YYYY-MM-DD, UTC)."),
               status: Text = Query(None, description="Only finished or only aborted matches."),
               page: WholeNumber(1, MAX_PAGE, 1) = Query(None, description="Page number; past the last is a 400.")):
    """Finished (and aborted) matches, newest first, ``PAGE_SIZE`` a page.  Raises (as a 400)
    for an unknown game or status, a bad date, a ``date_from`` after ``date_to`` or a page
    that does not exist (:func:`~games.arena.play.queries.check_filters`): the first problem is
    said."""
    filters, problems = check_filters({"game": game, "player": player, "date_from": date_from, "date_to": date_to,
                                       "status": status})  # the history page's checks, word for word
    if problems:
        raise BadRequest(str(problems[0]))
    current, pages, count = _page(finished_matches(filters), page, PAGE_SIZE)
    return {"count": count, "page": current.number, "pages": pages,
            "results": [match_summary(m) for m in current.object_list]}


@get("/matches/{int:match_id}/", url_name="match", response={200: MatchDetail, 400: Error, 404: Error},
     exclude_unset=True, operation_id="get_match", summary="A match and a page of its events",
     description="Seats, configuration and result of any match. Once it is over (finished or aborted), also its "
                 "seed and its event log a page at a time: events with seq > after, limit of them "
                 f"({EVENTS_PAGE} by default, {MAX_EVENTS_PAGE} at most); events_next is the next page's URL "
                 "(null on the last). While it runs, events is null and after and limit are not read.")
def match_detail(request, match_id: int = Path(..., description="The match's id."),
                 after: WholeNumber(0, MAX_AFTER, 0) = Query(None, description="Events with seq greater than this."),
                 limit: WholeNumber(1, MAX_EVENTS_PAGE, EVENTS_PAGE) = Query(None, description="Events at most.")):
    """One match with its seats and result; its seed and events once it is over (while it
    runs they would give away hidden information, and ``after``/``limit`` are not read).

    Events come a page at a time, so a long match is never read whole:
    ``?after=<seq>&limit=<n>`` gives the events with ``seq > after``, ``EVENTS_PAGE`` by
    default and ``MAX_EVENTS_PAGE`` at most;
    ``events_next`` is the URL of the next page (None on the last), ``steps`` the steps in
    the whole log (the replay has ``steps + 1`` frames)."""
    match = _match(match_id, Match.objects.prefetch_related("seats"))
    data = match_summary(match)
    if match.status in DONE:
        after = _int(after, "after", 0, 0, MAX_AFTER)
        limit = _int(limit, "limit", EVENTS_PAGE, 1, MAX_EVENTS_PAGE)
        data["seed"] = str(match.seed)
        data["steps"] = replay.total_steps(match.pk)
        data["replay"] = reverse("api:replay", args=[match.pk])
        # One more than asked says whether there is a next page without counting the log.
        events = list(match.events.filter(seq__gt=after).order_by("seq")[:limit + 1].values(
            "seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail"))
        mine = detail_seats(match, request.auth)
        for event in events:
            if event["seat"] not in mine:
                event["detail"] = ""
        more = len(events) > limit
        data["events"] = events[:limit]
        data["events_next"] = (request.build_absolute_uri(
            f"{reverse('api:match', args=[match.pk])}?after={events[limit - 1]['seq']}&limit={limit}")
            if more else None)
        if registry.get(match.game).analysis_label and match.status == Match.Status.FINISHED:
            data["analysis"] = analyses.of_match(match.pk)
    else:
        data["events"] = None
    return data


@get("/matches/{int:match_id}/replay/", url_name="replay",
     response={200: ReplayPage, 400: Error, 404: Error, 409: Error}, operation_id="get_replay",
     summary="Replay frames of a match that is over",
     description="Frames start .. start + count - 1 of the replay, every hand shown: frame 0 is the first state, "
                 f"frame k the state after step k; total is the number of frames. At most {replay.MAX_FRAMES} "
                 "a request; a start past the end gives no frames. 409 while the match is not over.")
def match_replay(request, match_id: int = Path(..., description="The match's id."),
                 start: WholeNumber(0, MAX_START, 0) = Query(None, description="First frame (0: the first state)."),
                 count: WholeNumber(1, replay.MAX_FRAMES, replay.MAX_FRAMES) = Query(None, description="Frames at most.")):
    """Replay frames ``?start=0&count=500`` of a finished or aborted match (``total``: frames
    in the whole replay); every hand is shown.  409 while the match is not over."""
    match = _match(match_id)
    if match.status not in DONE:
        raise BadRequest("The replay opens when the match is over.", status=409)
    start = _int(start, "start", 0, 0, MAX_START)
    count = _int(count, "count", replay.MAX_FRAMES, 1, replay.MAX_FRAMES)
    return replay.frames(match, start, count, details_for=detail_seats(match, request.auth))


class RatingRow(Out):
    """One rated identity of a game (games/arena/ratings/rating.py)."""
    name: str
    kind: str = Field(description="bot (a registered bot), person (a logged-in user) or built-in bot.")
    mu: float = Field(description="openskill's estimated strength (a newcomer: 25).")
    sigma: float = Field(description="How unsure μ is (a newcomer: 8.333).")
    ordinal: float = Field(description="The conservative estimate μ − 3σ the leaderboard sorts by.")
    matches: int = Field(description="Rated matches played.")
    win_rate: float | None = Field(description="Share of those it won outright (0..1).")
    last_seen: str | None = Field(description="When its last rated match finished (ISO 8601).")
    bot_id: int | None = Field(description="The registered bot's id, for bots; else null.")


class Leaderboard(Out):
    """One page of a game's leaderboard, best conservative estimate first."""
    game: str
    count: int
    page: int
    pages: int
    results: list[RatingRow]


@get("/leaderboard/{slug:game}/", url_name="leaderboard", response={200: Leaderboard, 400: Error, 404: Error},
     operation_id="get_leaderboard", summary="A game's leaderboard",
     description="Rated identities of the game (registered bots that presented their key, logged-in people, "
                 f"built-in bots), by μ − 3σ, best first, {leaderboard.PAGE_SIZE} a page; who=bots or who=people "
                 "keeps one kind. A cooperative game (Hanabi) has no ratings: its list is empty.")
def get_leaderboard(request, game: str = Path(..., description="The game's slug."),
                    who: Text = Query(None, description="bots or people (default: everyone)."),
                    page: WholeNumber(1, MAX_PAGE, 1) = Query(None, description="Page number; past the last is a 400.")):
    """A game's ratings, paged; 404 for an unknown game, 400 for a bad ``who`` or page."""
    try:
        registry.get(game)
    except KeyError:
        raise Http404(f"no game {game[:40]!r}") from None
    try:
        rows = leaderboard.ratings_of(game, who or "")
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    current, pages, count = _page(rows, page, leaderboard.PAGE_SIZE)
    return {"game": game, "count": count, "page": current.number, "pages": pages,
            "results": [leaderboard.rating_row(r) for r in current.object_list]}


def _bot(bot_id: int) -> RegisteredBot:
    bot = RegisteredBot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None:
        raise BadRequest(f"there is no registered bot {bot_id}", status=404)
    return bot


#: Forced moves per page of ``/api/bots/<id>/forced/``.
FORCED_PAGE = 100


class Opponent(Out):
    """The bot's results against one opponent (as on its page)."""
    name: str
    kind: str = Field(description="bot, person, built-in bot, unverified (a bot without its key) or guest.")
    bot_id: int | None
    matches: int
    wins: int
    draws: int
    losses: int
    mean_score_difference: float | None = Field(description="Mean of its final score minus the opponent's.")
    ci95: float | None = Field(description="Half-width of that mean's 95% interval (1.96·sd/√n; null below 2).")


class BotOut(Out):
    """A registered bot: who owns it, its rating, its results (over its last matches, as its page)."""
    id: int
    name: str
    game: str
    owner: str = Field(description="Its owner's username.")
    created_at: datetime.datetime
    connects: bool = Field(description="True: it connects to the game's port with its key; false: the server calls it.")
    rating: RatingRow | None = Field(description="Its rating in its game; null before its first rated match.")
    think_ms: float | None = Field(description="Mean milliseconds of its answers that were not forced.")
    forced_moves: int = Field(description="Its forced moves (no answer in time, an answer refused, disconnected).")
    timeouts: int = Field(description="Those that were for saying nothing before the deadline.")
    head_to_head: list[Opponent]
    page: str = Field(description="Its page on this site.")
    matches_url: str = Field(description="Its matches: /api/bots/<id>/matches/.")
    forced_url: str = Field(description="Its forced moves: /api/bots/<id>/forced/.")


class ForcedMove(Out):
    """One forced move at a seat of the bot, newest first."""
    match: int
    seq: int
    step: int
    seat: int
    reason: str = Field(description="The public reason (what every spectator saw).")
    detail: str = Field(description="The full explanation (the bot's own line, an error text): for the bot's owner "
                                    "(their API token or session), else \"\".")


class ForcedPage(Out):
    """One page of a bot's forced moves."""
    bot: int
    detail_shown: bool = Field(description="Whether this answer carries the details (you own the bot).")
    count: int
    page: int
    pages: int
    results: list[ForcedMove]


class MyBot(Out):
    id: int
    name: str
    game: str
    api: str = Field(description="Its /api/bots/<id>/ address.")


class Me(Out):
    """Who the API token (or session) identifies."""
    username: str
    bots: list[MyBot]


@get("/bots/{int:bot_id}/", url_name="bot", response={200: BotOut, 400: Error, 404: Error}, operation_id="get_bot",
     summary="A registered bot", description="Its owner, rating, think time, forced moves and timeouts, and its results "
     "against each opponent, over its last matches (as its page on this site).")
def get_bot(request, bot_id: int = Path(..., description="The registered bot's id.")):
    """One registered bot's facts (404 for an unknown id); its forced moves' details are
    not here but at ``/api/bots/<id>/forced/``."""
    from games.arena.ratings.bot_pages import bot_summary

    bot = _bot(bot_id)
    summary = bot_summary(bot, show_detail=False)
    rating = Rating.objects.filter(game=bot.game, subject=f"bot:{bot.pk}").first()
    try:
        connects = not registry.get(bot.game).calls_bots
    except KeyError:
        connects = bool(bot.key_hash)
    return {
        "id": bot.pk, "name": bot.name, "game": bot.game, "owner": bot.owner.get_username(),
        "created_at": bot.created_at, "connects": connects,
        "rating": leaderboard.rating_row(rating) if rating else None,
        "think_ms": summary["think_ms"], "forced_moves": summary["forced_total"], "timeouts": summary["timeouts"],
        "head_to_head": [{"name": h.name, "kind": h.kind, "bot_id": h.bot_id, "matches": h.matches, "wins": h.wins,
                          "draws": h.draws, "losses": h.losses, "mean_score_difference": h.mean_difference,
                          "ci95": h.ci95} for h in summary["head_to_head"]],
        "page": reverse("bot_page", args=[bot.pk]), "matches_url": reverse("api:bot_matches", args=[bot.pk]),
        "forced_url": reverse("api:bot_forced", args=[bot.pk]),
    }


@get("/bots/{int:bot_id}/matches/", url_name="bot_matches", response={200: MatchList, 400: Error, 404: Error},
     operation_id="list_bot_matches", summary="A registered bot's matches",
     description=f"The finished and aborted matches it sat in, newest first, {PAGE_SIZE} a page (as /api/matches/).")
def bot_matches(request, bot_id: int = Path(..., description="The registered bot's id."),
                page: WholeNumber(1, MAX_PAGE, 1) = Query(None, description="Page number; past the last is a 400.")):
    """The bot's finished and aborted matches, newest first (404 for an unknown bot)."""
    bot = _bot(bot_id)
    matches = finished_matches({}).filter(seats__registered_bot_id=bot.pk).distinct()
    current, pages, count = _page(matches, page, PAGE_SIZE)
    return {"count": count, "page": current.number, "pages": pages,
            "results": [match_summary(m) for m in current.object_list]}


@get("/bots/{int:bot_id}/forced/", url_name="bot_forced", response={200: ForcedPage, 400: Error, 404: Error},
     operation_id="list_bot_forced", summary="A registered bot's forced moves",
     description=f"The moves the server made for it, newest first, {FORCED_PAGE} a page, with the public reason; "
                 "its owner (API token or session) also gets each one's full detail.")
def bot_forced(request, bot_id: int = Path(..., description="The registered bot's id."),
               page: WholeNumber(1, MAX_PAGE, 1) = Query(None, description="Page number; past the last is a 400.")):
    """The bot's forced moves in matches that are over (a running match's would tell its
    opponents what it was told), details for its owner only."""
    bot = _bot(bot_id)
    shown = details.may_see(bot.game, request.auth, holder=details.Holder(bot_owner_id=bot.owner_id))
    its_seat = Exists(SeatRow.objects.filter(match_id=OuterRef("match_id"), index=OuterRef("seat"),
                                          registered_bot_id=bot.pk))
    rows = (EventRow.objects.filter(forced=True, match__status__in=DONE).filter(its_seat)
            .order_by("-match_id", "-seq").values("match_id", "seq", "step", "seat", "reason", "detail"))
    current, pages, count = _page(rows, page, FORCED_PAGE)
    return {"bot": bot.pk, "detail_shown": shown, "count": count, "page": current.number, "pages": pages,
            "results": [{"match": r["match_id"], "seq": r["seq"], "step": r["step"], "seat": r["seat"],
                         "reason": r["reason"], "detail": r["detail"] if shown else ""} for r in current.object_list]}


@get("/me/", url_name="me", response={200: Me}, operation_id="get_me", summary="Who you are",
     description="The person your API token (or session) identifies, and their registered bots; 401 for anyone else.")
def me(request):
    """The asker and their bots; 401 without a token or a login."""
    user = request.auth
    if not user.is_authenticated:
        raise BadRequest("who you are needs your API token (Authorization: Bearer <token>) or a login", status=401)
    bots = RegisteredBot.objects.filter(owner=user).order_by("game", "name")
    return {"username": user.get_username(),
            "bots": [{"id": b.pk, "name": b.name, "game": b.game, "api": reverse("api:bot", args=[b.pk])} for b in bots]}


def swagger_page(request):
    """Swagger UI for the OpenAPI document, from the files django-ninja ships (``ninja`` in
    ``INSTALLED_APPS``: ``/static/ninja/...``), without the online validator's badge."""
    return Swagger(settings={"validatorUrl": None}).render_page(request, api)


# --- the docs page's reading of the OpenAPI document ----------------------------------------------
def _resolve(schema: dict, components: dict) -> tuple[str | None, dict]:
    """``(component name or None, schema)`` with a ``$ref`` followed."""
    ref = schema.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        return name, components.get(name, {})
    return None, schema


def type_text(schema: dict, components: dict) -> str:
    """A JSON schema in a few words: ``"integer, 1 to 5000 (default 1000)"``,
    ``"list of Seat"``, ``"string (date-time) or null"``, ``"any JSON"``."""
    name, schema = _resolve(schema, components)
    if name:
        return name
    if "anyOf" in schema:
        return " or ".join(type_text(s, components) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind is None:
        return "any JSON"
    if kind == "array":
        return f"list of {type_text(schema.get('items', {}), components)}"
    text = "object" if kind == "object" else kind
    if schema.get("format"):
        text += f" ({schema['format']})"
    if "enum" in schema:
        text += ": " + ", ".join(str(v) for v in schema["enum"])
    if "minimum" in schema and "maximum" in schema:
        text += f", {schema['minimum']} to {schema['maximum']}"
    if "default" in schema:
        text += f" (default {schema['default']})"
    return text


def _fields(schema: dict, components: dict, prefix: str = "", seen: tuple = ()) -> list[dict]:
    """The fields of an object schema, nested objects and lists of objects flattened as
    ``seats[].name``: ``[{"name", "type", "description", "required"}]``."""
    name, schema = _resolve(schema, components)
    if name in seen:
        return []
    seen = (*seen, name) if name else seen
    rows = []
    required = set(schema.get("required", []))
    for field, sub in schema.get("properties", {}).items():
        rows.append({"name": prefix + field, "type": type_text(sub, components), "required": field in required,
                     "description": sub.get("description", "")})
        for option in sub.get("anyOf", [sub]):
            if option.get("type") == "array":
                rows += _fields(option.get("items", {}), components, f"{prefix}{field}[].", seen)
            elif "$ref" in option:
                rows += _fields(option, components, f"{prefix}{field}.", seen)
    return rows


def describe(schema: dict) -> list[dict]:
    """The endpoints of an OpenAPI document as the docs page lists them: method, path,
    summary, description, parameters and responses (status, description, fields)."""
    components = schema.get("components", {}).get("schemas", {})
    endpoints = []
    for path, operations in schema.get("paths", {}).items():
        for method, op in operations.items():
            params = [{"name": p["name"], "in": p["in"], "required": p.get("required", False),
                       "type": type_text(p.get("schema", {}), components), "description": p.get("description", "")}
                      for p in op.get("parameters", [])]
            responses = []
            for status, response in op.get("responses", {}).items():
                body = response.get("content", {}).get("application/json", {}).get("schema", {})
                responses.append({"status": status, "description": response.get("description", ""),
                                  "type": type_text(body, components) if body else "",
                                  "fields": _fields(body, components)})
            endpoints.append({"method": method.upper(), "path": path, "summary": op.get("summary", ""),
                              "description": op.get("description", ""), "operation_id": op.get("operationId", ""),
                              "parameters": params, "responses": responses})
    return endpoints


# --- tournaments -----------------------------------------------------------------------------------
class TournamentSummary(Out):
    """A tournament as the list shows it."""
    id: int
    name: str
    game: str = Field(description="The game's slug.")
    format: str = Field(description="round_robin, duplicate, swiss, or for bridge pairs mitchell or howell.")
    status: str = Field(description="scheduled, running, finished or cancelled.")
    note: str = Field(description="Why it ended as it did (an early stop's finding, a cancellation), else \"\".")
    rated: bool = Field(description="Whether its matches feed the ratings.")
    created_by: str | None = Field(description="Its creator's username (null once the account is gone).")
    created_at: datetime.datetime
    starts_at: datetime.datetime
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    done: int = Field(description="Games done (a finished match or a forfeit).")
    planned: int = Field(description="Games planned in all (0 before a round robin, duplicate or bridge "
                                       "movement starts).")
    url: str = Field(description="Its live page on this site.")
    api: str = Field(description="Its /api/tournaments/<id> address (standings, cross-table, matches).")


class TournamentList(Out):
    """One page of tournaments, newest first."""
    count: int
    page: int
    pages: int
    results: list[TournamentSummary]


class Progress(Out):
    done: int = Field(description="Games done (a finished match or a forfeit).")
    running: int = Field(description="Matches open or running now.")
    left: int = Field(description="Games neither done nor running.")
    planned: int = Field(description="Games in all (Swiss: every round's, byes included).")
    eta_s: float | None = Field(description="Seconds until the estimated finish at the pace so far (null when "
                                            "nothing is done yet or it is over).")


class StandingRow(Out):
    """One entrant's line, best first."""
    rank: int = Field(description="From 1; a Mitchell ranks each field (N-S, E-W) apart.")
    entrant: int = Field(description="The entrant's index (0-based, in the order of entry).")
    name: str
    games: int = Field(description="Matches played or forfeited (a pair event: its rounds).")
    points: float = Field(description="1 a win, ½ a draw, over the other sides' number; a bye 1, a forfeit 0. A "
                                      "bridge pair event: its matchpoints (Law 78A) or IMPs (cross-IMPs) in all.")
    wins: int
    draws: int
    losses: int
    forfeits: int = Field(description="Games it forfeited (not connected in time).")
    forced: int = Field(description="Moves the server made for it (no valid answer in time).")
    stat: float | None = Field(description="The statistic (see statistic) over its games, null before any.")
    low: float | None = Field(description="The statistic's 95% interval, lower end.")
    high: float | None = Field(description="The statistic's 95% interval, upper end.")
    bot_url: str = Field(description="A registered bot's page on this site, else \"\".")
    boards: int = Field(description="A bridge pair event: the boards scored (forfeited ones included); else 0.")
    field: str = Field(description="A Mitchell: the pair's field, \"N-S\" or \"E-W\" (each has its winner; rank "
                                   "counts within it); else \"\".")


class CrossCell(Out):
    points: float = Field(description="The row's entrant's points against the column's; a bridge pair event: its "
                                      "mean percentage (or cross-IMPs) per board against the column's pair.")
    games: int = Field(description="Their games; a bridge pair event: their boards.")


class CrossRow(Out):
    """One row of the cross-table."""
    entrant: int
    name: str
    against: dict[str, CrossCell] = Field(description="By the opponent's entrant index (as a string).")


class HistoryPoint(Out):
    """Every entrant's points after this many games done (thinned evenly to at most 120 points)."""
    done: int
    points: dict[str, float] = Field(description="By entrant index (as a string).")


class TournamentMatch(Out):
    """One match a tournament made, newest first."""
    id: int
    status: str = Field(description="open, running, finished or aborted (an aborted match's game is replayed "
                                     "from the same seed, or was forfeited).")
    round: int
    entrants: list[str] = Field(description="The entrants' names, side by side (side 0 first).")
    result: str = Field(description="The result in words, e.g. \"Probability bot won (1–0)\".")
    url: str


class TournamentDetail(Out):
    """A tournament's progress, standings, cross-table, history and matches (as its live page)."""
    id: int
    name: str
    game: str
    format: str
    status: str
    note: str
    rated: bool
    round: int = Field(description="The round being played (Swiss), else the last.")
    rounds: int
    scoring: str = Field(description="A bridge pair event's scoring across the field: matchpoints (Law 78A) or "
                                     "cross_imps (Law 78B); else \"\".")
    boards_per_round: int | None = Field(description="A bridge pair event: boards per round; else null.")
    progress: Progress
    statistic: str = Field(description="What stat measures: \"score rate\" (Wilson interval) for round robin and "
                                       "Swiss, \"mean paired difference per deal\" (Student-t interval) for "
                                       "duplicate, \"mean score\" for a cooperative game; a bridge pair event: "
                                       "\"mean percentage per board\" (matchpoints) or \"mean cross-IMPs per "
                                       "board\", Student-t interval over its boards; a forfeited board gives 60% "
                                       "(+3 IMPs) to the pair that came, 40% (-3) to the absent one.")
    standings: list[StandingRow]
    cross: list[CrossRow]
    history: list[HistoryPoint]
    matches_count: int = Field(description="Matches it made (replays of a game included).")
    matches: list[TournamentMatch] = Field(description="The newest 200 of them.")
    entry_open: bool = Field(description="Whether entrants may join now (POST .../entrants): before the start, or "
                                         "a late-entry Swiss until half its rounds are played; never a match-up "
                                         "with the early stop that has its two entrants.")


class TournamentIn(BaseModel):
    """A new tournament (the same fields as the form at /tournaments/new/)."""
    model_config = ConfigDict(extra="forbid")
    game: str = Field(max_length=32, description="The game's slug.")
    format: str = Field(max_length=20, description="round_robin, duplicate, swiss, or for bridge pairs mitchell "
                                                   "(an even number of pairs, at least 6) or howell (4, 6 or 8 "
                                                   "pairs).")
    entrants: list[Annotated[str, Field(max_length=80)]] = Field(
        max_length=64, description="builtin:<name> (a built-in bot, as often as wanted), registered:<id> (a "
                                   "registered bot you own or its owner shares) or me (you play your own "
                                   "matches; at most once); a bridge pair: a bot in both seats of its side, "
                                   "or registered:<id>+<id>, two registered bots (the first North or East).")
    config: dict[str, Any] = Field(default_factory=dict, description="The game's configuration fields, as on the "
                                                                     "create-table form (e.g. {\"players\": 2}).")
    name: str = Field("", max_length=100)
    per_pairing: int = Field(1, description="Round robin: matches per pairing; duplicate: deals per pairing; "
                                            "mitchell and howell: boards per round.")
    scoring: str = Field("", max_length=12, description="mitchell and howell: matchpoints or cross_imps (empty for "
                                                        "the other formats).")
    rounds: int = Field(0, description="Swiss rounds (0: enough for the field).")
    at_once: int = Field(4, description="Matches running at once at most.")
    think_s: int | None = Field(None, description="Bots' seconds per move (null: the game's default).")
    pace_s: float = Field(0.0, description="Least seconds per move, so that people can watch (0: full speed).")
    rated: bool = True
    late_join: bool = Field(False, description="Swiss: entrants may join until half the rounds are played.")
    wait_s: float = Field(60.0, description="Seconds a match waits for an entrant that connects before it forfeits.")
    early_stop: bool = Field(False, description="Two entrants: stop once one is better with 95% confidence.")
    starts_at: datetime.datetime | None = Field(None, description="When it starts (UTC unless an offset is "
                                                                  "given; null or past: now).")


class Cancelled(Out):
    id: int
    status: str
    live_matches: int = Field(description="Matches that were running: they end at the arenas' next sweep.")


def _tournament(tournament_id: int) -> Tournament:
    tournament = Tournament.objects.select_related("created_by").filter(pk=tournament_id).first()
    if tournament is None:
        raise BadRequest(f"there is no tournament {tournament_id}", status=404)
    return tournament


def _token_user(request):
    """The person whose API token the request carries; a 401 without one (a session's cookie
    is not enough to change anything: another site could make a browser send it)."""
    if not request.headers.get("Authorization") or not request.auth.is_authenticated:
        raise BadRequest("this needs your API token (Authorization: Bearer <token>; make one on the Bots page)",
                         status=401)
    return request.auth


def tournament_summary(tournament, done: int, planned: int) -> dict:
    return {"id": tournament.pk, "name": tournament.name, "game": tournament.game, "format": tournament.format,
            "status": tournament.status, "note": tournament.note, "rated": tournament.rated,
            "created_by": tournament.created_by.get_username() if tournament.created_by else None,
            "created_at": tournament.created_at, "starts_at": tournament.starts_at,
            "started_at": tournament.started_at, "finished_at": tournament.finished_at,
            "done": done, "planned": planned, "url": reverse("tournament", args=[tournament.pk]),
            "api": reverse("api:tournament", args=[tournament.pk])}


@get("/tournaments/", url_name="tournaments", response={200: TournamentList, 400: Error},
     operation_id="list_tournaments", summary="Tournaments",
     description="Every tournament, newest first, 50 a page, with its progress.")
def tournament_list(request, page: WholeNumber(1, MAX_PAGE, 1) = Query(None, description="Page number; past the "
                                                                                          "last is a 400.")):
    """The tournaments, newest first, a page at a time."""
    rows = Tournament.objects.select_related("created_by").order_by("-created_at", "-pk")
    current, pages, count = _page(rows, page, tournaments.LIST_PAGE)
    progress = tournaments.progress_of(list(current.object_list))
    return {"count": count, "page": current.number, "pages": pages,
            "results": [tournament_summary(t, *progress[t.pk]) for t in current.object_list]}


@api.post("/tournaments/", url_name="tournament_create",
          response={201: TournamentSummary, 400: Error, 401: Error, 429: Error},
          operation_id="create_tournament", summary="Create a tournament",
          description="With your API token. The arenas start it at starts_at and run its matches by themselves. "
                      "400 with the reason for anything out of bounds (entrants, a configuration, a plan too big), "
                      "429 past the tournaments a user may create a minute.")
def tournament_create(request, body: TournamentIn):
    """Create a tournament as the form does (games/arena/web/tournaments.py: :func:`create`)."""
    user = _token_user(request)
    try:
        spec = registry.get(body.game)
    except KeyError:
        raise BadRequest(f"there is no game {body.game[:40]!r}") from None
    fields = {f.key for f in spec.config_fields}
    unknown = sorted(set(body.config) - fields)
    if unknown:
        raise BadRequest(f"config: unknown setting {unknown[0][:40]!r}; the settings are {', '.join(sorted(fields))}")
    values = body.model_dump()
    try:
        values["starts_at"] = tournaments.check_start(body.starts_at)
        tournament = tournaments.create(user, values)
    except tournaments.TooMany as exc:
        raise BadRequest(str(exc), status=429) from None
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    return Status(201, tournament_summary(tournament, 0, 0))


@get("/tournaments/{int:tournament_id}", url_name="tournament", response={200: TournamentDetail, 404: Error},
     operation_id="get_tournament", summary="A tournament's standings",
     description="Progress, standings with the statistic and its 95% interval, the cross-table, the points over "
                 "games done, and its newest matches: what its live page shows.")
def tournament_detail(request, tournament_id: int = Path(..., description="The tournament's id.")):
    """A tournament's standings now (:func:`games.arena.web.tournaments.snapshot`)."""
    data = tournaments.snapshot(tournament_id)
    if data is None:
        raise BadRequest(f"there is no tournament {tournament_id}", status=404)
    return data


@get("/tournaments/{int:tournament_id}/standings.csv", url_name="tournament_csv", response={404: Error},
     operation_id="get_tournament_csv", summary="A tournament's standings as CSV",
     description="One line per entrant, best first: rank, entrant, games, points, wins, draws, losses, forfeits, "
                 "forced moves, the statistic and its 95% interval.",
     openapi_extra={"responses": {"200": {"description": "The standings (text/csv).",
                                          "content": {"text/csv": {"schema": {"type": "string"}}}}}})
def tournament_csv(request, tournament_id: int = Path(..., description="The tournament's id.")):
    """The standings as CSV (:func:`standings.as_csv`)."""
    tournament = _tournament(tournament_id)
    response = HttpResponse(standings.as_csv(standings.compute(tournament)), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="tournament-{tournament.pk}.csv"'
    return response


class JoinIn(BaseModel):
    """An entrant to add to a tournament."""
    model_config = ConfigDict(extra="forbid")
    entrant: str = Field(..., max_length=60, description='"me" (you sign up: you play your own matches at '
                                                          'the table the tournament\'s page links to; once per '
                                                          'tournament), "registered:<id>" (yours, or shared by '
                                                          'its owner) or "builtin:<name>" (its organiser only).')


class Joined(Out):
    """The entrant added."""
    tournament: int = Field(..., description="The tournament's id.")
    entrant: int = Field(..., description="The new entrant's index.")
    name: str = Field(..., description="Its name in the standings.")
    first_round: int = Field(..., description="The first round it plays (a late Swiss entrant's missed rounds "
                                              "count half a point each).")


@api.post("/tournaments/{int:tournament_id}/entrants", url_name="tournament_join",
          response={201: Joined, 400: Error, 401: Error, 404: Error},
          operation_id="join_tournament", summary="Sign up to a tournament, or enter a bot",
          description="With your API token: any tournament before it starts (anyone logged in may sign up "
                      "unless it is full), or a running Swiss tournament that allows late entry until half its "
                      "rounds are played. 400 with the reason otherwise.")
def tournament_join(request, body: JoinIn, tournament_id: int = Path(..., description="The tournament's id.")):
    """Add an entrant (games/arena/tournaments/schedule.py: :func:`join`)."""
    user = _token_user(request)
    _tournament(tournament_id)
    try:
        entrant = schedule.join(tournament_id, body.entrant, user.pk)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    tournaments.tell_pages(tournament_id)
    return Status(201, {"tournament": tournament_id, "entrant": entrant.index, "name": entrant.display_name,
                        "first_round": entrant.joined_round})


class Withdrawn(Out):
    """The entry taken out."""
    tournament: int = Field(..., description="The tournament's id.")
    name: str = Field(..., description="The name it had in the standings.")


@api.delete("/tournaments/{int:tournament_id}/entrants/me", url_name="tournament_withdraw",
            response={200: Withdrawn, 400: Error, 401: Error, 404: Error},
            operation_id="withdraw_from_tournament", summary="Withdraw from a tournament",
            description="With your API token: takes your own entry (signed up as \"me\") out before the start; the "
                        "later entrants move up one index. 400 once it started or when you are not signed up.")
def tournament_withdraw(request, tournament_id: int = Path(..., description="The tournament's id.")):
    """Withdraw the caller (games/arena/tournaments/schedule.py: :func:`withdraw`)."""
    user = _token_user(request)
    _tournament(tournament_id)
    try:
        entrant = schedule.withdraw(tournament_id, user.pk)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    tournaments.tell_pages(tournament_id)
    return {"tournament": tournament_id, "name": entrant.display_name}


@api.post("/tournaments/{int:tournament_id}/cancel", url_name="tournament_cancel",
          response={200: Cancelled, 401: Error, 403: Error, 404: Error, 409: Error},
          operation_id="cancel_tournament", summary="Cancel a tournament",
          description="With its creator's API token (or a staff member's). Its finished matches stay; nothing more "
                      "is played. 409 once it is over.")
def tournament_cancel(request, tournament_id: int = Path(..., description="The tournament's id.")):
    """Cancel a scheduled or running tournament (creator or staff)."""
    user = _token_user(request)
    tournament = _tournament(tournament_id)
    if not (user.is_staff or user.pk == tournament.created_by_id):
        raise BadRequest("only its creator (or staff) may cancel a tournament", status=403)
    if tournament.status not in (Tournament.Status.SCHEDULED, Tournament.Status.RUNNING):
        raise BadRequest(f"the tournament is {tournament.status} already", status=409)
    live = tournaments.cancel(user, tournament)
    return {"id": tournament.pk, "status": Tournament.Status.CANCELLED, "live_matches": len(live)}
