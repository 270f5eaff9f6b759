"""HTML pages: lobby, create table, table (waiting room, live table, finished match and its
replay), history, nickname and accounts."""
from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.db.models import Prefetch, Q
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from games.arena import registry, tables
from games.arena.models import Match, RegisteredBot, Seat
from games.arena.queries import PAGE_SIZE, finished_matches
from games.arena.runner import table_group
from games.arena.service import CONTROL_GROUP

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
    """Who creates a table, for the per-minute limit (issue 6, item 8): ``"user:<id>"`` for a
    logged-in user, else ``"ip:<address>"`` (guests can get a new session at will, not a new
    address; behind a proxy, Daphne's ``--proxy-headers`` makes this the client's address)."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"ip:{request.META.get('REMOTE_ADDR', '')}"


def _take_nickname(request) -> None:
    """A guest may give a nickname with any form that seats them."""
    if not request.user.is_authenticated and request.POST.get("nickname"):
        name = tables.clean_name(request.POST["nickname"])
        if name:
            request.session[NICKNAME_KEY] = name


def _announce(match_id: int) -> None:
    """Tell the arena (start it if full) and the table's pages (reload) that seats changed."""
    layer = get_channel_layer()
    async_to_sync(layer.group_send)(CONTROL_GROUP, {"type": "table.changed", "match": match_id})
    async_to_sync(layer.group_send)(table_group(match_id), {"type": "table.update"})


def _with_seats(qs):
    return qs.prefetch_related(Prefetch("seats", queryset=Seat.objects.order_by("index")))


def lobby(request):
    """Open tables, live matches and recent results, per game."""
    sections = []
    for spec in registry.all_games():
        base = Match.objects.filter(game=spec.slug)
        sections.append({
            "spec": spec,
            "open": _with_seats(base.filter(status=Match.Status.OPEN).order_by("auto", "-created_at"))[:20],
            "live": _with_seats(base.filter(status=Match.Status.RUNNING).order_by("-started_at"))[:20],
            "recent": _with_seats(base.filter(status=Match.Status.FINISHED).order_by("-finished_at"))[:10],
            "port": settings.ARENA.get(f"{spec.slug.upper()}_PORT"),
            "protocol_note": spec.protocol_note.format(port=settings.ARENA.get(f"{spec.slug.upper()}_PORT")),
            "http_bots": spec.http_bot_endpoint is not None,
            "importable": spec.import_match is not None,
        })
    return render(request, "arena/lobby.html", {"sections": sections, "sitter": sitter_for(request)})


def create_table(request, game: str):
    """The create-table form: configuration, then one choice per seat."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game")
    max_config = {f.key: f.widest for f in spec.config_fields}
    max_seats = spec.num_seats(spec.normalize_config(max_config))
    seat_options = [(tables.ME, "Me"), (tables.OPEN_HUMAN, "Open for a person")]
    if spec.start_listener is not None:  # bots that connect to us; HTTP bots are registered instead
        seat_options.append((tables.OPEN_BOT, "Open for any bot"))
    seat_options += [(tables.BUILTIN_PREFIX + name, f"Built-in: {label}") for name, (label, _) in spec.builtin_bots.items()]
    if spec.http_bot_endpoint is not None:  # the user's own bots and those their owners share
        seatable = Q(shared=True) | Q(owner_id=request.user.pk) if request.user.is_authenticated else Q(shared=True)
        seat_options += [(f"{tables.REGISTERED_PREFIX}{bot.pk}", f"Registered bot: {bot.name} ({bot.owner.get_username()})")
                         for bot in RegisteredBot.objects.filter(seatable, game=game).select_related("owner")]
    values = {f.key: f.default for f in spec.config_fields}
    default_other = tables.OPEN_BOT if spec.start_listener else tables.BUILTIN_PREFIX + next(iter(spec.builtin_bots))
    choices = [tables.ME] + [default_other] * (max_seats - 1)
    previous = Match.objects.filter(pk=request.GET.get("again", "") if request.GET.get("again", "").isdigit() else 0,
                                    game=game).first()
    if previous is not None:  # "Play again": this match's settings and seats, for the form to confirm
        values.update({k: v for k, v in previous.config.items() if k in values})
        again = tables.seat_choices_of(previous, sitter_for(request), default_other)
        choices[:len(again)] = again
    error = None
    if request.method == "POST":
        _take_nickname(request)
        for f in spec.config_fields:
            if f.kind == "bool":
                values[f.key] = request.POST.get(f.key) == "on"
                continue
            if f.kind == "choice":  # table_config refuses a value that is not a choice
                values[f.key] = request.POST.get(f.key, f.default)
                continue
            try:
                values[f.key] = int(request.POST.get(f.key, f.default))
            except ValueError:
                error = f"{f.label} must be a whole number."
        choices = [request.POST.get(f"seat{i}", default_other) for i in range(max_seats)]
        creator = creator_key(request)
        limit = settings.ARENA["TABLES_PER_MINUTE"]
        if error is None and tables.tables_created_lately(creator) >= limit:
            error = (f"You have created {limit} table{'s' if limit != 1 else ''} in the last minute: "
                     "wait a moment before creating another.")
        if error is None:
            try:
                config = spec.table_config(values)
                match = tables.create_table(game, config, choices[:spec.num_seats(config)], sitter_for(request),
                                            omniscient=request.POST.get("omniscient") == "on",
                                            creator_key=creator)
            except ValueError as exc:
                error = str(exc)
            else:
                _announce(match.pk)
                return redirect("match", match.pk)
    return render(request, "arena/create_table.html", {
        "spec": spec, "values": values, "fields": spec.config_fields, "error": error, "sitter": sitter_for(request),
        "seats": [(i, spec.seat_label(values, i), choices[i]) for i in range(max_seats)],
        "seat_options": seat_options,
    })


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
    exports = [(fmt, label) for fmt, (label, _) in spec.exports.items()] if done else []
    deals = match.result.get("deals") if isinstance(match.result, dict) else None
    return render(request, "arena/match.html", {
        "match": match, "spec": spec, "seats": seats, "sitter": sitter, "my_seat": my_seat,
        "seat_labels": labels, "seat_rows": list(zip(seats, labels)),
        "config_summary": spec.config_summary(match.config),
        "standin_label": spec.builtin_bots[spec.standin][0] if spec.standin else "",
        "bot_port": settings.ARENA.get(f"{spec.slug.upper()}_PORT") if any(
            s.kind == Seat.Kind.PROTOCOL and not s.occupied for s in seats) else None,
        "spectators_see_all": match.omniscient and not any(s.kind == Seat.Kind.HUMAN for s in seats),
        "hidden_information": spec.hidden_information,
        "exports": exports,
        # A match of several deals (Jass) also exports one deal at a time (first format, ?deal=N).
        "export_games": list(range(1, deals + 1)) if exports and isinstance(deals, int) and deals > 1 else [],
        "client": {"match": match.pk, "game": match.game, "status": match.status,
                   "my_seat": my_seat.index if my_seat else None,
                   "seats": [{"index": s.index, "name": s.display_name, "kind": s.kind,
                              "label": spec.seat_label(match.config, s.index), "score": s.final_score}
                             for s in seats],
                   "config": match.config, "result": match.result},
    })


@require_POST
def join(request, match_id: int, index: int):
    """Take an open person-seat (guests give a nickname on the same form)."""
    _take_nickname(request)
    sitter = sitter_for(request)
    if sitter is None:
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


def history(request):
    """Finished matches with filters (game, player, dates) and pagination."""
    paginator = Paginator(finished_matches(request.GET), PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "arena/history.html", {
        "page": page, "games": registry.all_games(), "filters": request.GET, "query": query.urlencode(),
        "titles": {g.slug: g.title for g in registry.all_games()},
    })


def nickname(request):
    """Set the guest nickname kept in the session."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    name = tables.clean_name(request.POST.get("nickname", ""))
    if name:
        request.session[NICKNAME_KEY] = name
    else:
        messages.error(request, "A nickname needs at least one visible character.")
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("lobby")
    return redirect(target)


def signup(request):
    """Create an account and log in."""
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("lobby")
    return render(request, "registration/signup.html", {"form": form})


def rules_page(request, game: str):
    """A game's short rules page (``templates/rules/<slug>.html``), linked from its tables."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game") from None
    return render(request, f"rules/{spec.slug}.html", {"spec": spec})
