"""Log files out and in, for games that have a log format (Jass): downloads of a finished
match, and uploads that become matches with the same replay page as those played here."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from games.arena import registry, replay
from games.arena.models import Event, Match, Seat, Snapshot
from games.arena.queries import DONE

#: Largest log file accepted (bytes).
MAX_UPLOAD = 5 * 1024 * 1024


def export(request, match_id: int, fmt: str):
    """Download a finished match (or with ``?deal=N`` one of its games) as ``fmt``."""
    match = Match.objects.prefetch_related("seats").filter(pk=match_id).first()
    if match is None or match.status not in DONE:
        raise Http404("only finished matches can be exported")
    spec = registry.get(match.game)
    if fmt not in spec.exports:
        raise Http404("no such format for this game")
    state = replay.final_state(match)
    names = [s.display_name for s in match.seats.all()]
    try:
        filename, content_type, text = spec.exports[fmt][1](match, state, names, request.GET)
    except ValueError as exc:
        raise Http404(str(exc))
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def import_log(request, game: str):
    """Upload a log file; it becomes a finished match with a replay."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game")
    if spec.import_match is None:
        raise Http404("this game has no log format")
    if request.method == "POST":
        upload = request.FILES.get("log")
        if upload is None:
            messages.error(request, "Choose a file.")
        elif upload.size > MAX_UPLOAD:
            messages.error(request, f"The file is larger than {MAX_UPLOAD // (1024 * 1024)} MiB.")
        else:
            try:
                text = upload.read().decode("utf-8")
                parsed = spec.import_match(text)
            except UnicodeDecodeError:
                messages.error(request, "The file is not UTF-8 text.")
            except ValueError as exc:
                messages.error(request, f"Could not read the log: {exc}")
            else:
                match = store_imported(game, parsed)
                return redirect("match", match.pk)
    return render(request, "arena/import.html", {"spec": spec})


def store_imported(game: str, parsed: dict) -> Match:
    """Store an imported log as a finished match: seats named from the log, one event per
    step, the result from replaying it (so it is exactly what a played match would show), and
    like a played match its snapshots and final view (so reading it stays cheap)."""
    spec = registry.get(game)
    state = spec.new_state(parsed["config"], 0)
    every = settings.ARENA["SNAPSHOT_EVERY"]
    snapshots = []
    for n, (seat, action) in enumerate(parsed["steps"], 1):
        state.apply({seat: action})
        if every and n % every == 0:
            snapshots.append((n, n, replay.pack_snapshot(state, n)))
    names = parsed.get("names") or [spec.seat_label(parsed["config"], i) for i in range(state.num_seats)]
    when = timezone.make_aware(parsed["date"], timezone.get_current_timezone()) if parsed.get("date") else timezone.now()
    result = state.result() if state.is_terminal() else {**state.result(), "incomplete": True}
    with transaction.atomic():
        # seed 0: an imported match's deals come from its configuration, not from the seed
        match = Match.objects.create(game=game, config=parsed["config"], seed=0, status=Match.Status.FINISHED,
                                     imported=True, started_at=when, finished_at=when, result=result,
                                     final_view=state.full_observation())
        Seat.objects.bulk_create([
            Seat(match=match, index=i, kind=Seat.Kind.PROTOCOL, occupied=True, display_name=str(name)[:40],
                 final_score=result["scores"][i])
            for i, name in enumerate(names)])
        Event.objects.bulk_create([
            Event(match=match, seq=n, step=n, seat=seat, action=action, reason="imported")
            for n, (seat, action) in enumerate(parsed["steps"], 1)])
        Snapshot.objects.bulk_create(replay.snapshot_rows(match.pk, snapshots))
    return match
