"""Log files out and in, for games that have a log format (Jass, Blokus): downloads of a finished
match, and uploads that become matches with the same replay page as those played here."""
from __future__ import annotations

import threading

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from games.arena import registry
from games.arena.bots.throttle import Throttle
from games.arena.models import Analysis, Event, Match, Seat, Snapshot
from games.arena.play import analyses, replay
from games.arena.play.queries import DONE, detail_seats
from games.arena.web import views

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
        filename, content_type, text = spec.export(fmt, match, state, names, request.GET,
                                                   details_for=detail_seats(match, request.user))
    except ValueError as exc:
        raise Http404(str(exc))
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def external_replay(request, match_id: int):
    """Redirect to the finished match's replay on another site (``GameSpec.external_replay_url``,
    e.g. hanab.live; a part of it with the game's query parameters, bridge's ``?board=N``),
    built from the event log when asked for, not with every page view."""
    match = Match.objects.prefetch_related("seats").filter(pk=match_id).first()
    if match is None or match.status not in DONE:
        raise Http404("only finished matches can be opened elsewhere")
    spec = registry.get(match.game)
    if not spec.external_replay_label:
        raise Http404("this game is not replayed on another site")
    state = replay.final_state(match)
    try:
        url = spec.external_replay_url(match, state, [s.display_name for s in match.seats.all()], request.GET)
    except ValueError as exc:
        raise Http404(str(exc))
    return redirect(url)


class InFlight:
    """At most ``settings.ARENA[setting]`` holders at once in this process; :meth:`enter`
    waits up to ``settings.ARENA[wait_setting]`` seconds for a place.  The limit is read at
    each call, so a changed setting applies at once."""

    def __init__(self, setting: str, wait_setting: str):
        self.setting, self.wait_setting = setting, wait_setting
        self.holders = 0
        self._changed = threading.Condition()

    def enter(self) -> bool:
        """Take a place; False when none came free in time (nothing taken)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.holders < settings.ARENA[self.setting],
                                          timeout=settings.ARENA[self.wait_setting]):
                return False
            self.holders += 1
            return True

    def leave(self) -> None:
        """Give a place back."""
        with self._changed:
            self.holders -= 1
            self._changed.notify()


#: Imports tried a minute per address and per user (``ARENA_IMPORTS_PER_MINUTE``), counted
#: before the file is read: reading a file that is then refused is the cost.
IMPORTS_BY_ADDRESS = Throttle("import-ip", "IMPORTS_PER_MINUTE", 60)
IMPORTS_BY_USER = Throttle("import-user", "IMPORTS_PER_MINUTE", 60)
#: Imports being read at once in this process (``ARENA_IMPORTS_IN_FLIGHT``): each holds its
#: file and what is parsed of it, so parallel uploads cannot add up.
READING = InFlight("IMPORTS_IN_FLIGHT", "IMPORT_WAIT")


def import_log(request, game: str):
    """Upload a log file; it becomes a finished match with a replay (:func:`admit_and_import`)."""
    try:
        spec = registry.get(game)
    except KeyError:
        raise Http404("no such game")
    if not spec.import_formats:
        raise Http404("this game has no log format")
    status = 200
    if request.method == "POST":
        status, match = admit_and_import(request, spec)
        if match is not None:
            return redirect("match", match.pk)
    return render(request, "arena/import.html", {"spec": spec}, status=status)


def admit_and_import(request, spec) -> tuple[int, Match | None]:
    """The POSTed file (``log``) as a stored match: ``(200, match)``, or ``(status, None)``
    with the reason in a message.

    Admission, before the file is read, for guests and users alike (an account is no
    cheaper to make than an import is to read): the per-minute table limit shared with the
    other doors (:func:`~games.arena.web.views.creation_refused`, ``429``), at most
    ``ARENA_IMPORTS_PER_MINUTE`` attempts a minute per address and per user (``429``, "Too
    many imports; try again in N s"), and at most ``ARENA_IMPORTS_IN_FLIGHT`` files read at
    once (``503`` after waiting ``ARENA_IMPORT_WAIT`` s).  A file that cannot be read gets
    its reason (``200``) and creates no row."""
    upload = request.FILES.get("log")
    if upload is None:
        messages.error(request, "Choose a file.")
        return 200, None
    if upload.size > MAX_UPLOAD:
        messages.error(request, f"The file is larger than {MAX_UPLOAD // (1024 * 1024)} MiB.")
        return 200, None
    refused = views.creation_refused(request)
    if refused:
        messages.error(request, refused)
        return 429, None
    address, user = views.creator_key(request), str(request.user.pk) if request.user.is_authenticated else None
    wait = IMPORTS_BY_ADDRESS.attempt(address)
    if not wait and user is not None:
        wait = IMPORTS_BY_USER.attempt(user)
        if wait:
            IMPORTS_BY_ADDRESS.refund(address)  # refused before any work
    if wait:
        views.creation_failed(request)
        messages.error(request, f"Too many imports; try again in {wait} s.")
        return 429, None
    if not READING.enter():
        IMPORTS_BY_ADDRESS.refund(address)  # nothing was read
        if user is not None:
            IMPORTS_BY_USER.refund(user)
        views.creation_failed(request)
        messages.error(request, "The server is busy reading other files: try again in a moment.")
        return 503, None
    try:
        text = decoded(upload.read(), spec.import_encodings)
        if text is None:
            views.creation_failed(request)
            messages.error(request, f"The file is not {' or '.join(e.upper() for e in spec.import_encodings)} text.")
            return 200, None
        try:
            parsed = spec.import_match(text)
        except ValueError as exc:
            views.creation_failed(request)
            messages.error(request, f"Could not read the log: {exc}")
            return 200, None
        return 200, store_imported(spec.slug, parsed, creator_key=address,
                                   user_id=request.user.pk if user is not None else None)
    finally:
        READING.leave()


def decoded(data: bytes, encodings) -> str | None:
    """``data`` as text in the first of ``encodings`` that decodes it (a UTF-8 byte-order
    mark dropped), or None."""
    for encoding in encodings:
        try:
            return data.decode("utf-8-sig" if encoding == "utf-8" else encoding)
        except UnicodeDecodeError:
            continue
    return None


def store_imported(game: str, parsed: dict, *, creator_key: str = "", user_id: int | None = None) -> Match:
    """Store an imported log as a finished match: seats named from the log, one event per
    step, the result from replaying it (so it is exactly what a played match would show), and
    like a played match its snapshots and final view (so reading it stays cheap).
    ``creator_key`` (``"ip:<address>"``) and ``user_id`` count it against the per-minute
    table limit (:func:`~games.arena.play.tables.creation_refused`)."""
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
                                     creator_key=creator_key[:64], created_by_id=user_id,
                                     final_view=state.full_observation())
        Seat.objects.bulk_create([
            Seat(match=match, index=i, kind=Seat.Kind.PROTOCOL, occupied=True, display_name=str(name)[:40],
                 final_score=result["scores"][i])
            for i, name in enumerate(names)])
        Event.objects.bulk_create([
            Event(match=match, seq=n, step=n, seat=seat, action=action, reason="imported")
            for n, (seat, action) in enumerate(parsed["steps"], 1)])
        Snapshot.objects.bulk_create(replay.snapshot_rows(match.pk, snapshots))
        if spec.analysis_label and state.is_terminal():  # the arena analyses it (analyses.py)
            Analysis.objects.bulk_create(analyses.pending_rows(match.pk, spec.analysis_subjects(state)))
    return match
