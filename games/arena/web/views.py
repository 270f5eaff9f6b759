"""HTML pages: lobby, create table, table (waiting room, live table, finished match and its
replay), history, nickname and accounts."""
from __future__ import annotations

import functools
import logging
import re
from pathlib import Path

from asgiref.sync import async_to_sync
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Prefetch, Q
from django.http import Http404, HttpResponseNotAllowed
from django.http.request import split_domain_port
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from games.arena import registry
from games.arena.bots import names, throttle
from games.arena.models import Match, RegisteredBot, Seat
from games.arena.play import analyses, control, tables
from games.arena.play.queries import PAGE_SIZE, FilterError, check_filters, finished_matches, page_number
from games.arena.play.runner import table_group
from games.arena.registry import Door

log = logging.getLogger("arena.web")

NICKNAME_KEY = "nickname"


def sitter_for(request) -> tables.Sitter | None:
    """The person behind a request: a logged-in user, or a guest with a nickname."""
    if request.user.is_authenticated:
        return tables.Sitter(name=request.user.get_username(), user_id=request.user.pk)
    nickname = request.session.get(NICKNAME_KEY)
    if not nickname:
        return None
    if not request.session.session_key:
        request.session.save()
    return tables.Sitter(name=nickname, session_key=request.session.session_key)


def creator_key(request) -> str:
    """Where a table comes from, for the per-minute limit: ``"ip:<address>"``, for guests and
    users alike (a guest can get a new session at will and anyone a new account, not a new
    address; behind a proxy, Daphne's ``--proxy-headers`` makes this the client's address).
    A user's tables are counted by the user too (``Match.created_by``)."""
    return f"ip:{request.META.get('REMOTE_ADDR', '')}"


def _nickname_refused(name: str) -> str | None:
    """Why a guest may not take ``name`` as a nickname, or None: it is, or looks like, a
    username or a registered bot's name (games/arena/bots/names.py), which only its owner plays
    under."""
    if names.claimed_name(name):
        return (f"“{name}” is a registered name (or looks like one): log in to play under it, "
                "or choose another nickname.")
    return None


def _take_nickname(request) -> bool:
    """A guest may give a nickname with any form that seats them.  Returns True when it was
    refused as a registered name (the message is posted)."""
    if not request.user.is_authenticated and request.POST.get("nickname"):
        name = tables.clean_name(request.POST["nickname"])
        refused = name and _nickname_refused(name)
        if refused:
            messages.error(request, refused)
            return True
        if name:
            request.session[NICKNAME_KEY] = name
    return False


def creation_refused(request) -> str | None:
    """Why this visitor may not create a table now, or None: at most
    ``ARENA_TABLES_PER_MINUTE`` a minute per address and per user, whether from the form,
    "Play a bot now" or an import (:func:`games.arena.play.tables.creation_refused`).

    The database's count and the row created after it are two steps, which parallel requests
    could all pass at once; the cache's atomic counters (:data:`throttle.TABLES_BY_ADDRESS`,
    ``TABLES_BY_USER``) hold such a burst to the limit too.  A creation that then fails gives
    its count back (:func:`creation_failed`)."""
    key = creator_key(request)
    user = request.user.pk if request.user.is_authenticated else None
    refused = tables.creation_refused(key, user)
    if refused:
        return refused
    wait = throttle.TABLES_BY_ADDRESS.attempt(key)
    if not wait and user is not None:
        wait = throttle.TABLES_BY_USER.attempt(str(user))
        if wait:
            throttle.TABLES_BY_USER.refund(str(user))
    if wait:  # a refused request creates nothing: it does not count
        throttle.TABLES_BY_ADDRESS.refund(key)
        return f"Too many tables created at once: wait {wait} s before creating another."
    return None


def creation_failed(request) -> None:
    """A creation :func:`creation_refused` let through made nothing: give its count back."""
    throttle.TABLES_BY_ADDRESS.refund(creator_key(request))
    if request.user.is_authenticated:
        throttle.TABLES_BY_USER.refund(str(request.user.pk))


def _announce(match_id: int) -> None:
    """Tell the arena (start it if full) and the table's pages (reload) that seats changed.
    The arena is the table's owner (the one whose connected bots sit at it), else any live
    one (:func:`games.arena.play.control.channel_for`); with none alive, or a message lost (its
    channel full), the arenas' sweep finds the full table (``tables_waiting_to_start``)."""
    layer = get_channel_layer()
    channel = control.channel_for(match_id)
    if channel is not None:
        try:
            async_to_sync(layer.send)(channel, {"type": "table.changed", "match": match_id})
        except ChannelFull:
            log.warning("match %d: the arena's channel is full; its sweep will start the table", match_id)
    async_to_sync(layer.group_send)(table_group(match_id), {"type": "table.update"})


def _with_seats(qs):
    return qs.prefetch_related(Prefetch("seats", queryset=Seat.objects.order_by("index")))


#: Addresses a listener binds to that mean "every interface": bots then reach it by whatever
#: name reaches this machine, so the lobby names the host the visitor reached the site by.
ANY_ADDRESS = {"", "0.0.0.0", "::", "[::]", "*"}

_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def door_address(request, door: Door) -> tuple[str, int]:
    """``(host, port)`` a bot author connects to at a listening ``door``, from the settings in
    force (:meth:`Door.address`).  The host is the listener's own address when it is bound to
    one, else the name this request reached the site by, without its port (IPv6 in
    brackets)."""
    bound, port = door.address()
    bound = bound.strip()
    host = bound if bound not in ANY_ADDRESS else split_domain_port(request.get_host())[0]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return host, port


def lobby_doors(request, spec) -> list[dict]:
    """Each of ``spec``'s doors as the lobby shows it: ``door``, ``label``
    (:meth:`GameSpec.door_label`), ``note`` (the door's; a listening door's with its host and
    port filled in), and for a listening door ``kind`` ("TCP", "WebSocket") and ``address``
    (as a bot author types it)."""
    shown = []
    for door in spec.doors:
        row = {"door": door, "label": spec.door_label(door), "note": door.note}
        if door.listens:
            host, port = door_address(request, door)
            websocket = door.access == "websocket"
            row.update({"kind": "WebSocket" if websocket else "TCP",
                        "address": f"{'ws://' if websocket else ''}{host}:{port}",
                        "note": door.note.format(host=host, port=port)})
        shown.append(row)
    return shown


def play_bot_line(spec) -> str:
    """Who sits at a "Play a bot now" table of ``spec`` besides the visitor, e.g. "you against
    the Probability bot", "you and a Rule-based bot against two Rule-based bots", in a
    cooperative game "you and two Convention bots, as one team"."""
    config = spec.normalize_config({f.key: f.default for f in spec.config_fields})
    others = spec.num_seats(config) - 1
    label = spec.builtin_bots[spec.strongest_bot][0]
    if spec.cooperative:  # nobody plays against anybody: the table scores together
        mates = f"the {label}" if others == 1 else f"{_COUNTS.get(others, others)} {label}s"
        return f"you and {mates}, as one team"
    if others == 1:
        return f"you against the {label}"
    teams = spec.teams(config)
    if teams is not None:  # the person's partners are bots too
        partners = len(next(seats for _, seats in teams if spec.person_seat in seats)) - 1
        rivals = others - partners
        partner_text = f"a {label}" if partners == 1 else f"{_COUNTS.get(partners, partners)} {label}s"
        return f"you and {partner_text} against {_COUNTS.get(rivals, rivals)} {label}s"
    return f"you against {_COUNTS.get(others, others)} {label}s"


def lobby(request):
    """Open tables, live matches and recent results, per game; the site in one line with the
    address each game's bots connect to; "Play a bot now" per game.  ``?play=<game>``: a
    visitor without a nickname pressed "Play a bot now", and the nickname form continues to
    that game's table."""
    sections = []
    for spec in registry.all_games():
        base = Match.objects.filter(game=spec.slug)
        sections.append({
            "spec": spec,
            "open": _with_seats(base.filter(status=Match.Status.OPEN).order_by("auto", "-created_at"))[:20],
            "live": _with_seats(base.filter(status=Match.Status.RUNNING).order_by("-started_at"))[:20],
            "recent": _with_seats(base.filter(status=Match.Status.FINISHED).order_by("-finished_at"))[:10],
            "doors": lobby_doors(request, spec),
            "http_bots": spec.calls_bots,
            "importable": bool(spec.import_formats),
            "play_bot": play_bot_line(spec) if spec.strongest_bot else "",
        })
    sitter = sitter_for(request)
    play = next((s for s in sections if s["spec"].slug == request.GET.get("play") and s["play_bot"]), None)
    return render(request, "arena/lobby.html", {
        "sections": sections, "doors": [door for s in sections for door in s["doors"]], "sitter": sitter,
        "games_named": _and([s["spec"].title for s in sections]),
        "play": play if sitter is None else None,
    })


def _and(words: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    return " and ".join([", ".join(words[:-1]), words[-1]]) if len(words) > 1 else "".join(words)


@require_POST
def play_bot(request, game: str):
    """"Play a bot now" (the lobby's button per game): a table of the game's default
    configuration with the visitor at the first seat and the game's strongest built-in bot
    (``GameSpec.strongest_bot``) at every other, started at once; redirects to its page.

    A POST (CSRF-checked), counted against ``ARENA_TABLES_PER_MINUTE`` like the create-table
    form.  A visitor without a nickname (no guest name, not logged in) goes to the lobby's
    nickname form, which posts the name back here and continues.  404 for an unknown game or
    one without a built-in bot to play."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game") from None
    if spec.strongest_bot is None:
        raise Http404("no built-in bot to play")
    refused = _take_nickname(request)
    sitter = sitter_for(request)
    if sitter is None:
        if "nickname" in request.POST and not refused:
            messages.error(request, "A nickname needs at least one visible character.")
        return redirect(f"{reverse('lobby')}?play={spec.slug}#nickname")
    creator = creator_key(request)
    refused = creation_refused(request)
    if refused:
        messages.error(request, refused)
        return redirect(f"{reverse('lobby')}#game-{spec.slug}")
    try:
        match = tables.create_bot_table(spec.slug, sitter, creator_key=creator)
    except ValueError as exc:  # e.g. a nickname that is the bot's name, where names must differ
        messages.error(request, str(exc))
        return redirect(f"{reverse('lobby')}#game-{spec.slug}")
    _announce(match.pk)
    return redirect("match", match.pk)


def create_table(request, game: str):
    """The create-table form: configuration, then one choice per seat."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game")
    max_config = {f.key: f.widest for f in spec.config_fields}
    max_seats = spec.num_seats(spec.normalize_config(max_config))
    seat_options = [(tables.ME, "Me"), (tables.OPEN_HUMAN, "Open for a person")]
    if spec.listens:  # bots that connect to us; HTTP bots are registered instead
        seat_options.append((tables.OPEN_BOT, "Open for any bot"))
    seat_options += [(tables.BUILTIN_PREFIX + name, f"Built-in: {label}") for name, (label, _) in spec.builtin_bots.items()]
    if spec.doors:  # the user's own bots and those their owners share
        seatable = Q(shared=True) | Q(owner_id=request.user.pk) if request.user.is_authenticated else Q(shared=True)
        seat_options += [(f"{tables.REGISTERED_PREFIX}{bot.pk}", f"Registered bot: {bot.name} ({bot.owner.get_username()})")
                         for bot in RegisteredBot.objects.filter(seatable, game=game).select_related("owner")]
    values = {f.key: f.default for f in spec.config_fields}
    pace, think = tables.WATCHABLE, None
    shown_think = None
    default_other = tables.OPEN_BOT if spec.listens else tables.BUILTIN_PREFIX + next(iter(spec.builtin_bots))
    choices = [default_other] * max_seats
    choices[spec.person_seat] = tables.ME
    previous = Match.objects.filter(pk=request.GET.get("again", "") if request.GET.get("again", "").isdigit() else 0,
                                    game=game).first()
    if previous is not None:  # "Play again": this match's settings and seats, for the form to confirm
        values.update({k: v for k, v in previous.config.items() if k in values})
        again = tables.seat_choices_of(previous, sitter_for(request), default_other)
        choices[:len(again)] = again
        pace, think = previous.pace_s, None if previous.think_s is None else int(previous.think_s)
        shown_think = think
    error = None
    if request.method == "POST":
        _take_nickname(request)
        error = read_config(request.POST, spec, values)
        choices = [request.POST.get(f"seat{i}", default_other) for i in range(max_seats)]
        pace, think, problem = pace_and_think_time(request.POST, spec)
        error = error or problem
        shown_think = think if think is not None else request.POST.get("think_s", "")[:12]  # as typed, if refused
        creator = creator_key(request)
        if error is None:
            error = creation_refused(request)
        if error is None:
            try:
                config = spec.table_config(values)
                match = tables.create_table(game, config, choices[:spec.num_seats(config)], sitter_for(request),
                                            omniscient=request.POST.get("omniscient") == "on",
                                            creator_key=creator,
                                            verified_only=spec.listens and request.POST.get("verified_only") == "on",
                                            pace_s=pace, think_s=think)
            except ValueError as exc:
                error = str(exc)
                creation_failed(request)
            else:
                _announce(match.pk)
                return redirect("match", match.pk)
    return render(request, "arena/create_table.html", {
        "spec": spec, "values": values, "fields": spec.config_fields, "error": error, "sitter": sitter_for(request),
        "seats": [(i, spec.seat_label(values, i), choices[i]) for i in range(max_seats)],
        "seat_options": seat_options,
        "paces": tables.PACES, "pace": pace, "think": shown_think, "default_think": spec.bot_deadline(),
        "min_think": tables.MIN_THINK_S, "max_think": tables.MAX_THINK_S,
    })


def read_config(post, spec, values: dict) -> str | None:
    """Read ``spec``'s configuration fields from a form's ``post`` into ``values`` (a box
    ticked: True; a choice as sent, which ``GameSpec.table_config`` checks; a number as an
    int); returns the error for a number that is not a whole number, else None.  The
    create-table and new-tournament forms share it (``templates/arena/_config_fields.html``)."""
    error = None
    for f in spec.config_fields:
        if f.kind == "bool":
            values[f.key] = post.get(f.key) == "on"
        elif f.kind == "choice":
            values[f.key] = post.get(f.key, f.default)
        else:
            try:
                values[f.key] = int(post.get(f.key, f.default))
            except ValueError:
                error = f"{f.label} must be a whole number."
    return error


def pace_and_think_time(post, spec) -> tuple[float, int | None, str | None]:
    """The create-table form's ``pace`` (one of :data:`tables.PACES`' seconds; a request
    without it, as scripts written before the field send, plays at full speed as tables
    did then) and ``think_s`` (whole seconds from :data:`tables.MIN_THINK_S` to
    :data:`tables.MAX_THINK_S`; blank: the game's default): ``(pace, think, error or None)``."""
    pace, think, error = 0.0, None, None
    raw = post.get("pace", "").strip()
    if raw:
        try:
            pace = float(raw)
        except ValueError:
            pace = -1.0
        if pace not in dict(tables.PACES):
            pace, error = tables.WATCHABLE, f"Pace: choose one of {', '.join(label for _, label in tables.PACES)}."
    raw = post.get("think_s", "").strip()
    if raw and spec.bot_deadline_setting:
        if raw.isascii() and raw.isdigit() and tables.MIN_THINK_S <= int(raw[:6]) <= tables.MAX_THINK_S:
            think = int(raw)
        else:
            error = error or (f"Bots' thinking time: a whole number of seconds from {tables.MIN_THINK_S} to "
                              f"{tables.MAX_THINK_S}, or empty for the game's {spec.bot_deadline():g} s.")
    return pace, think, error


def match_page(request, match_id: int):
    """One table: the waiting room while open, then the live table, then result and replay."""
    match = _with_seats(Match.objects.filter(pk=match_id)).first()
    if match is None:
        raise Http404("no such match")
    spec = registry.get(match.game)
    sitter = sitter_for(request)
    my_seat = tables.seat_of(match.pk, sitter)
    seats = list(match.seats.all())
    labels = [spec.seat_label(match.config, s.index) for s in seats]
    done = match.status in (Match.Status.FINISHED, Match.Status.ABORTED)
    exports = list(spec.exports.items()) if done else []
    deals = match.result.get("deals") if isinstance(match.result, dict) else None
    analysis = analyses.of_match(match.pk) if spec.analysis_label and match.status == Match.Status.FINISHED else []
    return render(request, "arena/match.html", {
        "match": match, "spec": spec, "seats": seats, "sitter": sitter, "my_seat": my_seat,
        "tournament": match.tournament_game.tournament if match.tournament_game_id else None,
        "seat_labels": labels, "seat_rows": list(zip(seats, labels)),
        # Said once, in the page's head, rather than after the name in every sentence.
        "unverified": [s for s in seats if s.unverified] if match.status != Match.Status.OPEN else [],
        "config_summary": spec.config_summary(match.config) + tables.time_terms(match),
        "standin_label": spec.builtin_bots[spec.standin][0] if spec.standin else "",
        # Where the bots that take the open bot seats connect: each listening door's port.
        "bot_doors": [(door, door.address()[1]) for door in spec.doors if door.listens] if any(
            s.kind == Seat.Kind.PROTOCOL and not s.occupied for s in seats) else [],
        "spectators_see_all": match.omniscient and not any(s.kind == Seat.Kind.HUMAN for s in seats),
        "hidden_information": spec.hidden_information,
        "exports": exports,
        "external_replay": spec.external_replay_label if done else "",
        # Each part's analysis, pending ones included (games/arena/play/analyses.py).
        "analysis": analysis,
        "analysis_pending": sum(part["result"] is None and not part["failed"] for part in analysis),
        # A match of several deals (Jass) also exports one deal at a time (first format, ?deal=N).
        "export_games": list(range(1, deals + 1)) if exports and isinstance(deals, int) and deals > 1 else [],
        "client": {"match": match.pk, "game": match.game, "status": match.status,
                   "my_seat": my_seat.index if my_seat else None,
                   "seats": [{"index": s.index, "name": s.display_name, "kind": s.kind, "unverified": s.unverified,
                              "label": spec.seat_label(match.config, s.index), "score": s.final_score}
                             for s in seats],
                   "config": match.config, "result": match.result,
                   # The moves so far (public facts), for a game whose page lists them.
                   "moves": spec.moves_so_far(match) if match.status == Match.Status.RUNNING else None},
    })


@require_POST
def join(request, match_id: int, index: int):
    """Take an open person-seat (guests give a nickname on the same form)."""
    refused = _take_nickname(request)
    sitter = sitter_for(request)
    if sitter is None:
        if not refused:
            messages.error(request, "Choose a nickname first.")
        return redirect("match", match_id)
    error = tables.join_seat(match_id, index, sitter)
    if error:
        messages.error(request, error)
    else:
        _announce(match_id)
    return redirect("match", match_id)


@require_POST
def leave(request, match_id: int):
    """Give up one's seat before the table starts."""
    if tables.leave_seat(match_id, sitter_for(request)):
        _announce(match_id)
    return redirect("match", match_id)


#: The history form's names for the listing's parameters, in its messages.
FILTER_LABELS = {"game": "Game", "player": "Player", "date_from": "From", "date_to": "To",
                 "page": "Page", "status": "Status"}


#: The history form's status choices: what the listing holds (matches that are over).
HISTORY_STATUSES = [(Match.Status.FINISHED.value, "Finished"), (Match.Status.ABORTED.value, "Aborted")]


def history(request):
    """Finished matches with filters (game, player, dates, status) and pagination.

    Checked as ``/api/matches/`` checks them (:func:`~games.arena.play.queries.check_filters`),
    but a page is not an error reply: each problem is shown above the list, a filter that
    cannot apply is left out (an unknown game lists every game, and the menu says "All"), a
    page past the last shows the last, and the form keeps what was typed."""
    filters, problems = check_filters(request.GET)
    # A From after the To is applied (nothing matches it); any other problem leaves its filter out.
    notes = [p.text(FILTER_LABELS) + ("." if p.other else "; this filter is left out.") for p in problems]
    paginator = Paginator(finished_matches(filters), PAGE_SIZE)
    asked = request.GET.get("page", "")
    try:
        number = page_number(asked, paginator.num_pages)
    except FilterError as exc:
        past_last = asked.isascii() and asked.isdigit() and int(asked[:11]) > 1
        number = max(1, paginator.num_pages) if past_last else 1
        notes.append(f"{exc.text(FILTER_LABELS)}; showing page {number}.")
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "arena/history.html", {
        "page": paginator.page(number), "games": registry.all_games(), "filters": request.GET,
        "game": filters.get("game", ""), "query": query.urlencode(), "problems": notes,
        "status": filters.get("status", ""), "statuses": HISTORY_STATUSES,
        "titles": {g.slug: g.title for g in registry.all_games()},
    })


def nickname(request):
    """Set the guest nickname kept in the session."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    name = tables.clean_name(request.POST.get("nickname", ""))
    refused = name and _nickname_refused(name)
    if refused:
        messages.error(request, refused)
    elif name:
        request.session[NICKNAME_KEY] = name
    else:
        messages.error(request, "A nickname needs at least one visible character.")
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("lobby")
    return redirect(target)


def _address(request) -> str:
    """The client's address (behind a proxy, Daphne's ``--proxy-headers`` makes it so)."""
    return request.META.get("REMOTE_ADDR", "")


class LoginView(auth_views.LoginView):
    """Django's login page, with at most ``ARENA_LOGIN_FAILURES_PER_MINUTE`` failed logins a
    minute per address and per username (:mod:`games.arena.bots.throttle`).  The attempt is
    counted before the password is checked, so a refused guess costs no password hash; it
    is answered ``429`` with "Too many attempts; try again in N s"."""

    def post(self, request, *args, **kwargs):
        address, username = _address(request), request.POST.get("username", "")[:150].casefold()
        wait = throttle.LOGIN_BY_ADDRESS.attempt(address)
        if not wait:
            wait = throttle.LOGIN_BY_USERNAME.attempt(username)
            if wait:
                throttle.LOGIN_BY_ADDRESS.refund(address)  # refused before any work
        if wait:
            form = self.form_class(request, initial={"username": request.POST.get("username", "")[:150]})
            return self.render_to_response(self.get_context_data(form=form, throttled=_try_later(wait)),
                                           status=429)
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:  # only failures count
            throttle.LOGIN_BY_ADDRESS.refund(address)
            throttle.LOGIN_BY_USERNAME.refund(username)
        return response


def _try_later(seconds: int, what: str = "Too many attempts") -> str:
    """``what`` and when to try again: seconds, or whole minutes from two minutes on."""
    return f"{what}; try again in {seconds} s." if seconds < 120 else f"{what}; try again in {-(-seconds // 60)} min."


class SignupForm(UserCreationForm):
    """Django's signup form, with usernames unique up to look-alikes (games/arena/bots/names.py):
    ``alice``, ``ALICE``, ``aIice``, ``alice.`` and Cyrillic ``аlice`` are one name."""

    def clean_username(self):
        # Ours first: one message for every look-alike (Django's own check covers case only).
        try:
            names.check_free(self.cleaned_data.get("username", ""), names.USER_SCOPE)
        except names.NameTaken as exc:
            raise forms.ValidationError(str(exc)) from None
        return super().clean_username()


def signup(request):
    """Create an account and log in: at most ``ARENA_SIGNUPS_PER_HOUR`` accounts an hour per
    address (counted before the form is checked; past it ``429``, "Too many accounts were
    created from your address; try again in N min")."""
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        wait = throttle.SIGNUP_BY_ADDRESS.attempt(_address(request))
        if wait:
            return render(request, "registration/signup.html",
                          {"form": SignupForm(),
                           "throttled": _try_later(wait, "Too many accounts were created from your address")},
                          status=429)
        if form.is_valid():
            try:
                with transaction.atomic():  # the username's look-alike keys are written with it
                    user = form.save()
            except names.NameTaken as exc:  # taken a moment ago by another request
                form.add_error("username", str(exc))
            else:
                login(request, user)
                return redirect("lobby")
        throttle.SIGNUP_BY_ADDRESS.refund(_address(request))  # no account made
    return render(request, "registration/signup.html", {"form": form})


@functools.lru_cache(maxsize=8)
def _protocol_html(path: str, mtime_ns: int) -> str:
    """A protocol's markdown file as HTML (CommonMark and tables; raw HTML in the file is
    escaped, never passed through, but its comments, markers for the tests, are left out);
    cached until the file changes."""
    from markdown_it import MarkdownIt
    text = re.sub(r"<!--.*?-->\n?", "", Path(path).read_text(encoding="utf-8"), flags=re.S)
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def protocol_page(request, game: str):
    """A game's bot protocol as published in the repository (``docs/<slug>-protocol.md``),
    in the site's layout; 404 for a game without one."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game") from None
    path = Path(settings.BASE_DIR) / "docs" / f"{spec.slug}-protocol.md"
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise Http404("this game has no protocol page") from None
    return render(request, "protocol.html", {"spec": spec, "html": _protocol_html(str(path), mtime)})


def rules_page(request, game: str):
    """A game's short rules page (``templates/rules/<slug>.html``), linked from its tables."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game") from None
    return render(request, f"rules/{spec.slug}.html", {"spec": spec})
