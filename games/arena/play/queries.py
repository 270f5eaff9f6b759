"""Match listings shared by the history page and the JSON API."""
from __future__ import annotations

import datetime

from django.db.models import Prefetch, QuerySet

from games.arena import registry
from games.arena.models import Match, Seat
from games.arena.play import details

PAGE_SIZE = 25
DONE = [Match.Status.FINISHED, Match.Status.ABORTED]
#: The highest page number a listing takes at all (past the last page is an error of its own).
MAX_PAGE = 10**9


class FilterError(ValueError):
    """A parameter of a match listing (the history page, ``/api/matches/``) that the listing
    cannot apply.  ``param`` names it; ``problem`` says what is wrong and reads after the
    parameter's name ("must be a date like 2026-01-31, got 'x'"); ``other`` is a second
    parameter the problem names as ``{other}`` (a From date after the To date)."""

    def __init__(self, param: str, problem: str, other: str | None = None):
        super().__init__(problem)
        self.param, self.problem, self.other = param, problem, other

    def text(self, names: dict[str, str] | None = None) -> str:
        """The whole message, each parameter called by ``names`` (e.g. the form's labels) or
        else by its own name: ``"date_from must be a date like 2026-01-31, got 'x'"``."""
        names = names or {}
        problem = self.problem.replace("{other}", names.get(self.other, self.other or ""))
        return f"{names.get(self.param, self.param)} {problem}"

    def __str__(self) -> str:
        return self.text()


def parse_date(text: str | None) -> datetime.date | None:
    """``YYYY-MM-DD`` or None; anything else is ignored rather than an error."""
    try:
        return datetime.date.fromisoformat(text) if text else None
    except ValueError:
        return None


def check_filters(params) -> tuple[dict[str, str], list[FilterError]]:
    """Split the filters in the query ``params`` into those a listing applies, ``{param:
    value}`` (for :func:`finished_matches`), and what is wrong with the others, one
    :class:`FilterError` each: a ``game`` or ``status`` that is not one, a ``date_from`` or
    ``date_to`` that is not ``YYYY-MM-DD``, and a ``date_from`` after ``date_to`` (both are
    kept: nothing matches them, and the visitor is told why).  Values are bounded (a player
    name to 64 characters, echoed values to 40)."""
    applied: dict[str, str] = {}
    problems: list[FilterError] = []
    slugs = [g.slug for g in registry.all_games()]
    for param, allowed in (("game", slugs), ("status", DONE)):
        value = params.get(param) or ""
        if value in allowed:
            applied[param] = value
        elif value:
            problems.append(FilterError(param, f"must be one of {', '.join(allowed)}, got {value[:40]!r}"))
    if params.get("player"):
        applied["player"] = params["player"][:64]
    for param in ("date_from", "date_to"):
        value = params.get(param) or ""
        if parse_date(value):
            applied[param] = value
        elif value:
            problems.append(FilterError(param, f"must be a date like 2026-01-31, got {value[:40]!r}"))
    start, end = parse_date(applied.get("date_from")), parse_date(applied.get("date_to"))
    if start and end and start > end:
        problems.append(FilterError("date_from", f"({start}) is after {{other}} ({end}): no match finished "
                                                 "between them", other="date_to"))
    return applied, problems


def page_number(value: str | None, pages: int) -> int:
    """The page ``value`` asks for (1 when absent or empty) of a listing of ``pages`` pages
    (0 for an empty listing, which still has its page 1).  Raises :class:`FilterError` for
    ``page`` when it is not a whole number from 1 to :data:`MAX_PAGE` or is past the last."""
    if value in (None, ""):
        return 1
    number = int(value) if value.isascii() and value.isdigit() and len(value) <= 10 else 0
    if not 1 <= number <= MAX_PAGE:
        raise FilterError("page", f"must be a whole number from 1 to {MAX_PAGE}, got {value[:40]!r}")
    last = max(1, pages)
    if number > last:
        raise FilterError("page", f"{number} does not exist: there {'is' if last == 1 else 'are'} {last} "
                                  f"page{'s' if last != 1 else ''}")
    return number


def finished_matches(params) -> QuerySet:
    """Finished (and aborted) matches, newest first, filtered by the query ``params``:
    ``game`` (slug), ``player`` (part of a seat's name, any case), ``date_from`` and
    ``date_to`` (``YYYY-MM-DD``, inclusive, on the finishing day, UTC), ``status``.  Values
    that are not one of these are ignored here: :func:`check_filters` says what is wrong."""
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
    """A seat as the API and the pages show it.  ``verified``: the name is an identity (a
    registered bot that presented its key or that the server calls, a logged-in person, a
    built-in bot), not only what a bot or a guest said; ``bot_id``: the registered bot."""
    return {"index": seat.index, "name": seat.display_name, "kind": seat.kind,
            "builtin_bot": seat.builtin_bot or None, "occupied": seat.occupied, "score": seat.final_score,
            "verified": seat.occupied and (seat.registered_bot_id is not None or seat.user_id is not None
                                           or seat.kind == Seat.Kind.BUILTIN),
            "bot_id": seat.registered_bot_id}


def detail_seats(match: Match, user) -> frozenset[int]:
    """The seats of ``match`` whose forced moves' full ``detail`` ``user`` (a user, anonymous
    or None) may read once it is over, as :func:`games.arena.play.details.may_see` decides for
    each seat's holder (every seat in a game without hidden information, and for staff; a
    person's own seats and their bots'; the seats of no identity)."""
    rows = Seat.objects.filter(match_id=match.pk).values_list("index", "user_id", "registered_bot__owner_id")
    return frozenset(index for index, user_id, owner_id in rows
                     if details.may_see(match.game, user, holder=details.Holder(user_id, owner_id)))


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
    "names": [str], "score", "won"}``; per team for games with teams (``spec.teams(config)``
    not None: both partners are winners), None for other games (their seats are listed one
    by one)."""
    teams = spec.teams(match.config)
    if teams is None or match.status != Match.Status.FINISHED:
        return None
    seats = {s.index: s for s in match.seats.all()}
    won = winners(match.result)
    sides = []
    for label, members in teams:
        present = [seats[i] for i in members if i in seats]
        score = next((s.final_score for s in present if s.final_score is not None), None)
        sides.append({"label": label, "names": [s.display_name for s in present], "score": score,
                      "won": bool(won) and set(members) <= won})
    return sides
