"""Tournaments in the browser: the list (``/tournaments/``), the new-tournament form
(``/tournaments/new/``), the live page (``/tournaments/<id>/``, kept current over
``/ws/tournaments/<id>/`` by :class:`~games.arena.web.consumers.TournamentConsumer`) and its
Cancel button; and what the JSON API shares with them (:func:`create`, :func:`snapshot`,
:func:`cancel`).  The scheduling itself is games/arena/tournaments/schedule.py
(docs/architecture.md, *Tournaments*).
"""
from __future__ import annotations

import datetime

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from games.arena import registry
from games.arena.bots import throttle
from games.arena.models import Match, RegisteredBot, Seat, Tournament, TournamentGame
from games.arena.play import tables
from games.arena.play.queries import page_number, FilterError
from games.arena.tournaments import schedule, standings
from games.arena.web.views import pace_and_think_time, read_config

#: Tournaments a page of the list shows.
LIST_PAGE = 50
#: The live page and the API list a tournament's newest matches up to this many (and count them all).
MATCHES_SHOWN = 200
#: How far ahead a tournament may be scheduled.
MAX_AHEAD = datetime.timedelta(days=30)


class TooMany(ValueError):
    """A creation refused by the per-minute limit (the API answers 429)."""


# --- creating ------------------------------------------------------------------------------------
def entrant_options(spec, user) -> tuple[list[tuple[str, str]], list[RegisteredBot]]:
    """What the form offers for ``spec``'s game: its built-in bots ``(name, label)`` and the
    registered bots ``user`` may enter (their own and those their owners share)."""
    builtins = [(name, label) for name, (label, _) in spec.builtin_bots.items()]
    mine = Q(owner_id=user.pk) if user.is_authenticated else Q(pk__in=[])
    bots = list(RegisteredBot.objects.filter(mine | Q(shared=True), game=spec.slug)
                .select_related("owner").order_by("name", "pk")[:schedule.MAX_ENTRANTS * 4])
    return builtins, bots


def _whole(post, key: str, label: str, low: int, high: int, default: int) -> int:
    """Form field ``key`` as a whole number from ``low`` to ``high`` (``default`` if empty);
    ``ValueError`` naming ``label`` otherwise."""
    raw = (post.get(key) or "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw[:9]) <= high:
        raise ValueError(f"{label}: a whole number from {low} to {high}.")
    return int(raw)


def starts_at(text: str | None) -> datetime.datetime | None:
    """A start time as typed in the form (``YYYY-MM-DDTHH:MM``, UTC) or sent to the API (ISO
    8601, UTC unless it says its offset): None for empty or the past (start now); raises
    ``ValueError`` for anything else or more than :data:`MAX_AHEAD` ahead."""
    if not text or not text.strip():
        return None
    try:
        when = datetime.datetime.fromisoformat(text.strip()[:40])
    except ValueError:
        raise ValueError("Start time: a date and time such as 2030-01-31T18:00 (UTC), or empty for now.") from None
    return check_start(when)


def check_start(when: datetime.datetime | None) -> datetime.datetime | None:
    """``when`` made UTC-aware if naive; None if it is past; ``ValueError`` beyond :data:`MAX_AHEAD`."""
    if when is None:
        return None
    if timezone.is_naive(when):
        when = when.replace(tzinfo=datetime.timezone.utc)
    now = timezone.now()
    if when > now + MAX_AHEAD:
        raise ValueError(f"Start time: at most {MAX_AHEAD.days} days ahead.")
    return when if when > now else None


def read_form(post, spec) -> dict:
    """The new-tournament form's fields as :func:`schedule.create`'s keyword arguments
    (``game`` included); ``ValueError`` with a message for a field it cannot read.  Entrants:
    ``count_<bot>`` copies of each built-in bot, then each registered bot ticked (``bot``),
    then the organiser themselves (``me``)."""
    entrants = []
    for name, (label, _) in spec.builtin_bots.items():
        entrants += [tables.BUILTIN_PREFIX + name] * _whole(post, f"count_{name}", label, 0, schedule.MAX_ENTRANTS, 0)
    ticked = [pk for pk in post.getlist("bot")[:schedule.MAX_ENTRANTS + 1] if pk.isascii() and pk.isdigit()]
    # Bridge pairs: a ticked bot may name a partner (``partner_<id>``, North or East first),
    # which then plays beside it rather than as a pair of its own.
    partners = {pk: (post.get(f"partner_{pk}") or "").strip()[:12] for pk in ticked}
    partners = {pk: other for pk, other in partners.items() if other.isascii() and other.isdigit() and other != pk}
    entrants += [f"{tables.REGISTERED_PREFIX}{pk}" + (f"+{partners[pk]}" if pk in partners else "")
                 for pk in ticked if pk in partners or pk not in partners.values()]
    if post.get("me") == "on":
        entrants.append(schedule.ME)
    values: dict = {}
    error = read_config(post, spec, values)
    if error:
        raise ValueError(error)
    pace, think, error = pace_and_think_time(post, spec)
    if error:
        raise ValueError(error)
    try:
        wait_s = float((post.get("wait_s") or "60").strip()[:12])
    except ValueError:
        raise ValueError("Wait for entrants that connect: a number of seconds.") from None
    return {
        "game": spec.slug, "config": values, "format": post.get("format", "")[:20], "entrants": entrants,
        "scoring": post.get("pair_scoring", "")[:12],  # not "scoring": bridge's own setting has that name
        "name": post.get("name", "")[:100],
        "per_pairing": _whole(post, "per_pairing", "Matches per pairing", 1, schedule.MAX_PER_PAIRING, 1),
        "rounds": _whole(post, "rounds", "Swiss rounds", 0, schedule.MAX_ROUNDS, 0),
        "at_once": _whole(post, "at_once", "Matches at once", 1, schedule.MAX_AT_ONCE, 4),
        "think_s": think, "pace_s": pace, "rated": post.get("rated") == "on",
        "late_join": post.get("late_join") == "on", "wait_s": wait_s, "early_stop": post.get("early_stop") == "on",
        "starts_at": starts_at(post.get("starts_at")),
    }


def creation_refused(user) -> str | None:
    """Why ``user`` may not create a tournament now, or None: at most
    ``ARENA_TOURNAMENTS_PER_MINUTE`` a minute, counted in the database and, against a burst
    of parallel requests, in the cache's atomic counter (as tables are:
    :func:`games.arena.web.views.creation_refused`).  Counts this attempt when it may go
    ahead; :func:`create` gives it back when nothing is made."""
    limit = settings.ARENA["TOURNAMENTS_PER_MINUTE"]
    recent = Tournament.objects.filter(created_by_id=user.pk,
                                       created_at__gte=timezone.now() - datetime.timedelta(minutes=1)).count()
    wait = 60 if recent >= limit else throttle.TOURNAMENTS_BY_USER.attempt(str(user.pk))
    if not wait:
        return None
    if recent < limit:
        throttle.TOURNAMENTS_BY_USER.refund(str(user.pk))  # a refused request does not count
    return f"You may create {limit} tournament{'s' if limit != 1 else ''} a minute: wait {wait} s."


def create(user, fields: dict) -> Tournament:
    """Create a tournament for ``user`` (logged in) from :func:`schedule.create`'s keyword
    arguments ``fields``; raises :class:`TooMany` past the per-minute limit, ``ValueError``
    with :func:`schedule.create`'s message for anything it refuses."""
    refused = creation_refused(user)
    if refused:
        raise TooMany(refused)
    try:
        return schedule.create(**fields, created_by_id=user.pk)
    except ValueError:
        throttle.TOURNAMENTS_BY_USER.refund(str(user.pk))
        raise


# --- watching ------------------------------------------------------------------------------------
def _board_text(board: dict) -> str:
    """One board of a bridge table's result (rules.BridgeState.result's ``boards``), as the
    travelling score slip reads: "board 5: 4SN= N–S +420", "board 6: passed out"."""
    if board.get("result") in (None, "Pass"):
        return f"board {board.get('board')}: passed out"
    return f"board {board.get('board')}: {board.get('result')} N–S {board.get('score', 0):+d}"


def _result_text(spec, config: dict, sides: list, names: dict[int, str], match: Match,
                 replayed: bool = False, by_board: bool = False) -> str:
    """A finished match's result in words: "Probability bot won (1–0)", "draw (2–2)", a
    cooperative game's "score 21", with ``by_board`` (a bridge pair event's table) each
    board's result (:func:`_board_text`); an aborted one's reason (and, with ``replayed``,
    that its planned game was played again from its seed); else its status."""
    result = match.result if isinstance(match.result, dict) else {}
    if match.status == Match.Status.ABORTED:
        reason = result.get("aborted") or "no result"
        # schedule.py: a planned game without a live match is made again, on its seed
        return f"aborted: {reason}" + ("; played again from the same seed" if replayed else "")
    if match.status != Match.Status.FINISHED:
        return str(Match.Status(match.status).label)
    if by_board:  # a pair event scores each board across the field: the table's raw totals say little
        return "; ".join(_board_text(b) for b in result.get("boards") or []) or "no board played"
    seats = schedule.sides_of(spec, config)
    scores = result.get("scores") or []
    side_scores = [scores[s[0]] if len(scores) > s[0] else None for s in seats]
    shown = "–".join("?" if s is None else f"{s:g}" if isinstance(s, (int, float)) else str(s) for s in side_scores)
    if spec.cooperative:
        return f"score {shown}"
    ranks = spec.rating_ranks(config, result)
    if not ranks:
        return shown
    side_ranks = [ranks[s[0]] for s in seats]
    best = [names.get(e, "?") for e, r in zip(sides, side_ranks) if r == min(side_ranks)]
    if len(best) == len(sides):
        return f"draw ({shown})"
    return f"{' and '.join(best)} won ({shown})"


def match_rows(tournament: Tournament, limit: int = MATCHES_SHOWN) -> tuple[int, list[dict]]:
    """``(count, rows)``: how many matches ``tournament`` made (replays of one planned game
    included), and the newest ``limit`` as ``{"id", "status", "round", "entrants": [names by
    side], "result": words, "url"}``."""
    spec = registry.get(tournament.game)
    names = dict(tournament.entrants.values_list("index", "display_name"))
    matches = Match.objects.filter(tournament_game__tournament=tournament)
    shown = list(matches.select_related("tournament_game").order_by("-pk")[:limit])
    again = set(matches.filter(tournament_game__in=[m.tournament_game_id for m in shown
                                                    if m.status == Match.Status.ABORTED])
                .exclude(status=Match.Status.ABORTED).values_list("tournament_game_id", flat=True))
    rows = [{"id": m.pk, "status": m.status, "round": m.tournament_game.round,
             "entrants": [names.get(e, "?") for e in m.tournament_game.sides],
             "result": _result_text(spec, tournament.config, m.tournament_game.sides, names, m,
                                    replayed=m.tournament_game_id in again,
                                    by_board=tournament.format in schedule.MOVEMENTS),
             "url": reverse("match", args=[m.pk])}
            for m in shown]
    return matches.count(), rows


def snapshot(tournament_id: int) -> dict | None:
    """What the live page and ``GET /api/tournaments/<id>`` show: :func:`standings.as_json`
    with ``matches_count``, the newest ``matches`` (:func:`match_rows`) and ``entry_open``
    (:func:`schedule.entry_open`); None if there is no such tournament.  One computation of
    the standings (a few queries)."""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None:
        return None
    data = standings.as_json(standings.compute(tournament))
    data["matches_count"], data["matches"] = match_rows(tournament)
    data["entry_open"] = schedule.entry_open(tournament)
    return data


def your_tables(tournament_id: int, user_id: int | None) -> list[dict]:
    """Person ``user_id``'s tables of the tournament that are not over, oldest first: ``{"id",
    "url", "round", "waiting": their seat still waits for them, "running", "forfeit_at": ISO
    time their seat is forfeited if they have not come (the tournament's ``wait_s`` after the
    table was made; a table made while they play another waits longer, schedule._overdue)}``.
    What the live page's "Your match is ready" shows (one query); empty for anyone else."""
    if user_id is None:
        return []
    seats = (Seat.objects.filter(user_id=user_id, kind=Seat.Kind.HUMAN, reserved=True,
                                 match__tournament_game__tournament_id=tournament_id, match__status__in=schedule.LIVE)
             .select_related("match__tournament_game__tournament").order_by("match_id")[:MATCHES_SHOWN])
    out = []
    for seat in seats:
        match = seat.match
        wait = datetime.timedelta(seconds=match.tournament_game.tournament.wait_s)
        out.append({"id": match.pk, "url": reverse("match", args=[match.pk]), "round": match.tournament_game.round,
                    "waiting": not seat.occupied and match.status == Match.Status.OPEN,
                    "running": match.status == Match.Status.RUNNING,
                    "forfeit_at": (match.created_at + wait).isoformat()})
    return out


def tell_pages(tournament_id: int) -> None:
    """Tell the tournament's live pages to read it again (after a change made here)."""
    async_to_sync(get_channel_layer().group_send)(schedule.group(tournament_id), {"type": "tournament.changed"})


def may_cancel(user, tournament: Tournament) -> bool:
    """Its creator and staff may cancel a tournament that is scheduled or running."""
    return (user.is_authenticated and (user.is_staff or user.pk == tournament.created_by_id)
            and tournament.status in (Tournament.Status.SCHEDULED, Tournament.Status.RUNNING))


def cancel(user, tournament: Tournament) -> list[int]:
    """Cancel ``tournament`` for ``user`` (:func:`may_cancel` checked by the caller): its
    live matches end at the arenas' next sweep; its pages are told.  Returns those matches."""
    live = schedule.cancel(tournament.pk, f"{schedule.CANCELLED} by {user.get_username()}")
    tell_pages(tournament.pk)
    return live


def progress_of(tournaments: list[Tournament]) -> dict[int, tuple[int, int]]:
    """``{id: (done, planned)}`` for a page of the list, in two queries: games done (a
    finished match or a forfeit) of the games planned so far (a Swiss tournament's later
    rounds counted as :func:`standings.planned_games` does)."""
    ids = [t.pk for t in tournaments]
    counts = {row["tournament"]: row for row in TournamentGame.objects.filter(tournament__in=ids)
              .values("tournament").annotate(
                  rows=Count("id", distinct=True),
                  done=Count("id", distinct=True, filter=Q(forfeit__isnull=False) |
                             Q(matches__status=Match.Status.FINISHED)))}
    entrants = dict(Tournament.objects.filter(pk__in=ids).annotate(n=Count("entrants")).values_list("pk", "n"))
    out = {}
    for t in tournaments:
        row = counts.get(t.pk, {"rows": 0, "done": 0})
        out[t.pk] = (row["done"], standings.planned_games(t, row["rows"], entrants.get(t.pk, 0)))
    return out


def tournament_list(request):
    """Every tournament, newest first, :data:`LIST_PAGE` a page: name, game, format, status,
    progress, created; "your match is ready" by those where a seat waits for the visitor."""
    paginator = Paginator(Tournament.objects.select_related("created_by").order_by("-created_at", "-pk"), LIST_PAGE)
    try:
        number = page_number(request.GET.get("page"), paginator.num_pages)
    except FilterError:
        number = 1
    page = paginator.page(number)
    progress = progress_of(list(page.object_list))
    titles = {g.slug: g.title for g in registry.all_games()}
    ready = set()  # where a seat waits for the visitor ("your match is ready")
    if request.user.is_authenticated:
        ready = set(Seat.objects.filter(
            user_id=request.user.pk, kind=Seat.Kind.HUMAN, reserved=True, occupied=False, match__status=Match.Status.OPEN,
            match__tournament_game__tournament__in=[t.pk for t in page.object_list]).values_list(
                "match__tournament_game__tournament_id", flat=True))
    rows = [{"t": t, "title": titles.get(t.game, t.game), "done": progress[t.pk][0], "planned": progress[t.pk][1],
             "ready": t.pk in ready}
            for t in page.object_list]
    return render(request, "arena/tournaments.html", {"page": page, "rows": rows})


@login_required
def tournament_new(request):
    """The new-tournament form (logged-in users): ``?game=<slug>`` picks the game whose bots,
    configuration and time fields it shows; a POST creates the tournament and opens its page,
    or shows the form again with the error (:func:`schedule.create`'s message)."""
    games = registry.all_games()
    slug = request.POST.get("game") or request.GET.get("game") or games[0].slug
    try:
        spec = registry.get(slug)
    except KeyError:
        raise Http404("no such game") from None
    values = {f.key: f.default for f in spec.config_fields}
    error, form = None, request.POST if request.method == "POST" else None
    if form is not None:
        try:
            fields = read_form(form, spec)
            values = fields["config"]
            tournament = create(request.user, fields)
        except ValueError as exc:
            error = str(exc)
            read_config(form, spec, values)  # the form keeps what was typed
        else:
            return redirect("tournament", tournament.pk)
    builtins, bots = entrant_options(spec, request.user)
    counts = {name: (form.get(f"count_{name}", "") if form is not None else ("1" if i < 2 else ""))
              for i, (name, _) in enumerate(builtins)}
    ticked = set(form.getlist("bot")) if form is not None else set()
    return render(request, "arena/tournament_new.html", {
        "games": games, "spec": spec, "error": error, "form": form or {}, "fields": spec.config_fields,
        "values": values, "formats": formats_for(spec),
        "scorings": Tournament.Scoring.choices if pairs_game(spec) else [],
        "builtins": [(name, label, counts[name]) for name, label in builtins],
        "bots": [(bot, str(bot.pk) in ticked, form.get(f"partner_{bot.pk}", "") if form is not None else "")
                 for bot in bots],
        "paces": tables.PACES, "pace": _float(form.get("pace")) if form is not None else tables.WATCHABLE,
        "default_think": spec.bot_deadline(), "min_think": tables.MIN_THINK_S, "max_think": tables.MAX_THINK_S,
        "max_entrants": schedule.MAX_ENTRANTS, "max_rounds": schedule.MAX_ROUNDS,
        "max_per_pairing": schedule.MAX_PER_PAIRING, "max_at_once": schedule.MAX_AT_ONCE,
        "max_wait": schedule.MAX_WAIT_S, "max_days": MAX_AHEAD.days,
    })


def pairs_game(spec) -> bool:
    """Whether ``spec``'s game has pair events (Mitchell, Howell): contract bridge."""
    return spec.slug == "bridge"


def formats_for(spec) -> list[tuple[str, str]]:
    """The formats the form offers for ``spec``'s game: the movements only for bridge."""
    return [(value, label) for value, label in Tournament.Format.choices
            if pairs_game(spec) or value not in schedule.MOVEMENTS]


def _float(text) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def tournament_page(request, tournament_id: int, error: str = "", status: int = 200):
    """A tournament's live page: the standings and the rest of :func:`snapshot` as JSON in the
    page, drawn and then kept current by ``static/arena/tournament.js`` over the WebSocket;
    while entry is open, "Sign up to play" (or "Withdraw") and "Enter a bot" for a logged-in
    user, with ``error`` (a refused entry) shown by them."""
    data = snapshot(tournament_id)
    if data is None:
        raise Http404("no such tournament")
    tournament = Tournament.objects.select_related("created_by").get(pk=tournament_id)
    spec = registry.get(tournament.game)
    user = request.user
    me = tournament.entrants.filter(user_id=user.pk).first() if user.is_authenticated else None
    data["you"] = your_tables(tournament.pk, user.pk if me else None)
    return render(request, "arena/tournament.html", {
        "t": tournament, "spec": spec, "data": data, "may_cancel": may_cancel(request.user, tournament),
        # A pair event's boards are its boards per round, which the heading says already.
        "config_summary": [] if tournament.format in schedule.MOVEMENTS else spec.config_summary(tournament.config),
        "entrants": tournament.entrants.select_related("registered_bot").order_by("index"),
        "entry_open": data["entry_open"], "me": me, "error": error, "partner": _partner_note(spec, tournament.config),
        "bot_choices": bots_to_enter(spec, user, tournament) if data["entry_open"] else [],
    }, status=status)


def _partner_note(spec, config: dict) -> str:
    """Who plays the other seats of a person's side (schedule._person_seats), in words."""
    bot = spec.builtin_bots.get(spec.standin or spec.strongest_bot or "", ("a bot",))[0]
    if spec.cooperative:
        return f"with the {bot} in the other seats"
    if spec.teams(config):
        return f"the {bot} partnering you"
    return ""


def bots_to_enter(spec, user, tournament: Tournament) -> list[tuple[str, str]]:
    """``(choice, label)`` of the bots ``user`` may enter into ``tournament`` from its page
    (:func:`schedule.join` decides): their registered bots of its game and those shared
    with them (:func:`tables.may_seat`), not yet entered; the built-in bots if they organise it."""
    if not user.is_authenticated:
        return []
    builtins, bots = entrant_options(spec, user)
    entered = set(tournament.entrants.filter(registered_bot__isnull=False).values_list("registered_bot_id", flat=True))
    out = [(f"{tables.REGISTERED_PREFIX}{bot.pk}",
            bot.name if bot.owner_id == user.pk else f"{bot.name} (shared by {bot.owner.get_username()})")
           for bot in bots if bot.pk not in entered and tables.may_seat(bot, tables.Sitter(name="", user_id=user.pk))]
    if user.pk == tournament.created_by_id:
        out += [(tables.BUILTIN_PREFIX + name, f"{label} (built-in)") for name, label in builtins]
    return out


def _entry(request, tournament_id: int, act):
    """Do ``act()`` (a :mod:`schedule` call raising ``ValueError``) for a form of the
    page; the page again with the reason (400), else back to it, its live pages told."""
    if not Tournament.objects.filter(pk=tournament_id).exists():
        raise Http404("no such tournament")
    try:
        act()
    except ValueError as exc:
        return tournament_page(request, tournament_id, error=str(exc), status=400)
    tell_pages(tournament_id)
    return redirect("tournament", tournament_id)


@require_POST
@login_required
def tournament_signup(request, tournament_id: int):
    """"Sign up to play": the logged-in user enters themselves (:data:`schedule.ME`)."""
    return _entry(request, tournament_id, lambda: schedule.join(tournament_id, schedule.ME, request.user.pk))


@require_POST
@login_required
def tournament_withdraw(request, tournament_id: int):
    """"Withdraw": the user's own entry out, before the start (:func:`schedule.withdraw`)."""
    return _entry(request, tournament_id, lambda: schedule.withdraw(tournament_id, request.user.pk))


@require_POST
@login_required
def tournament_enter_bot(request, tournament_id: int):
    """"Enter a bot": one of :func:`bots_to_enter` (``entrant``), through :func:`schedule.join`,
    which checks it again (the owner's sharing, the organiser's built-in bots)."""
    choice = request.POST.get("entrant", "")[:60]

    def enter():
        if not choice.startswith((tables.REGISTERED_PREFIX, tables.BUILTIN_PREFIX)):
            raise ValueError("Choose a bot to enter.")
        return schedule.join(tournament_id, choice, request.user.pk)
    return _entry(request, tournament_id, enter)


@require_POST
def tournament_cancel(request, tournament_id: int):
    """The Cancel button: its creator or staff cancel a scheduled or running tournament."""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None:
        raise Http404("no such tournament")
    if not may_cancel(request.user, tournament):
        return HttpResponseForbidden("Only its creator (or staff) may cancel a tournament that is not over.")
    cancel(request.user, tournament)
    return redirect("tournament", tournament.pk)
