"""Replays, derived from the event log: ``(game, config, seed, events)`` re-run through the
rules gives every state of a match again (docs/architecture.md, "Replays, downloads and imports").

So that reading a long match costs the same wherever one looks, a finished
match also keeps :class:`~games.arena.models.Snapshot` rows, the rules state every
``ARENA["SNAPSHOT_EVERY"]`` steps, and ``Match.final_view``, the last state with every hand.
They are derived data: a replay page starts from the nearest snapshot before it and re-runs
only the steps after it; a match without them (killed server, older match) replays from its
first step as before, and its final view is computed once and stored.

Snapshots are pickles.  Only this server writes them (from its own runners and from logs it
parsed itself, never from uploaded bytes), so unpickling them is safe; one that no longer
loads (the rules' state type changed) is skipped.
"""
from __future__ import annotations

import logging
import pickle
from itertools import groupby
from typing import Collection

from games.arena import registry
from games.arena.models import Event, Match, Snapshot
from games.arena.play import tables

log = logging.getLogger("arena.replay")

#: Frames returned by one replay request at most.
MAX_FRAMES = 500


def pack_snapshot(state, seq: int) -> bytes:
    """A snapshot's bytes: the rules ``state`` and ``seq``, the sequence number of the last
    event applied to it (events after it are ``seq > seq``, found through the log's index)."""
    return pickle.dumps({"seq": seq, "state": state}, protocol=pickle.HIGHEST_PROTOCOL)


def snapshot_rows(match_id: int, snapshots) -> list[Snapshot]:
    """``Snapshot`` rows for ``[(step, seq, state or packed bytes), ...]``."""
    return [Snapshot(match_id=match_id, step=step,
                     state=blob if isinstance(blob, bytes) else pack_snapshot(blob, seq))
            for step, seq, blob in snapshots]


def store_end(match_id: int, snapshots, state, run: "tables.Run | None" = None) -> None:
    """Keep what a finished or aborted match needs to be read cheaply: its ``snapshots``
    (``[(step, seq, packed bytes), ...]``, as :class:`~games.arena.play.runner.MatchRunner` keeps
    them) and ``Match.final_view`` from its last ``state``.  With ``run`` (the runner's own
    match, before its end is recorded), nothing is kept unless the match still runs under
    that run (:func:`games.arena.play.tables.set_final_view`, written first)."""
    if not tables.set_final_view(match_id, state.full_observation(), run) and run is not None:
        return  # another arena aborted it: this run keeps nothing
    if snapshots:
        Snapshot.objects.bulk_create(snapshot_rows(match_id, snapshots), ignore_conflicts=True)


def _events(match_id: int, after_seq: int = 0):
    """Yield ``(step, [event, ...])`` in order from the event after ``after_seq``."""
    rows = (Event.objects.filter(match_id=match_id, seq__gt=after_seq).order_by("seq")
            .values_list("step", "seat", "action", "forced", "reason", "think_ms", "seq", "detail").iterator(chunk_size=2000))
    for step, group in groupby(rows, key=lambda r: r[0]):
        yield step, list(group)


def _answers(group, details_for: Collection[int]) -> list[dict]:
    # ``detail`` (a forced move's full explanation: the bot's own line, a bot service's error
    # text) stays its seat's owner's after the match too (queries.detail_seats); others get
    # the public ``reason`` only.
    return [{"seat": seat, "action": action, "forced": forced, "reason": reason, "think_ms": think,
             "detail": detail if seat in details_for else ""}
            for _, seat, action, forced, reason, think, _, detail in group]


def logged_steps(match_id: int, details_for: Collection[int] = ()):
    """Yield ``(step, answers)`` for a match's whole log in order, ``answers`` as in
    :func:`frames` (``seat``, ``action``, ``forced``, ``reason``, ``think_ms``, ``detail``,
    the last "" but at the seats in ``details_for``): for a game's export, which re-runs its
    rules from the first state itself."""
    for step, group in _events(match_id):
        yield step, _answers(group, details_for)


def _restore(match: Match, before_step: int | None):
    """``(state, steps applied, last seq)``: from the latest snapshot at or before
    ``before_step`` (the last one when None) that loads, else the match's first state."""
    rows = Snapshot.objects.filter(match_id=match.pk).order_by("-step").values_list("step", "state")
    if before_step is not None:
        rows = rows.filter(step__lte=before_step)
    for step, blob in rows[:3]:  # a damaged one is skipped; three tries are plenty
        try:
            packed = pickle.loads(bytes(blob))
            return packed["state"], step, packed["seq"]
        except Exception:  # noqa: BLE001  (any unpickling failure: replay from earlier)
            log.warning("match %s: snapshot at step %s does not load; skipped", match.pk, step)
    spec = registry.get(match.game)
    return spec.new_state(match.config, match.seed), 0, 0


def total_steps(match_id: int) -> int:
    """Steps in a match's log: the step of its last event (found through the log's index)."""
    return Event.objects.filter(match_id=match_id).order_by("-seq").values_list("step", flat=True).first() or 0


def frames(match: Match, start: int = 0, count: int = MAX_FRAMES, details_for: Collection[int] = ()) -> dict:
    """Frames ``start`` .. ``start + count - 1`` of a match's replay.

    Frame 0 is the first state; frame ``k`` is the state after step ``k``, with that step's
    answers and happenings.  Views are omniscient (every hand).  The state is restored from
    the nearest snapshot before ``start``, so a page costs at most ``SNAPSHOT_EVERY + count``
    steps wherever it is.  Answers carry their ``detail`` only at the seats in
    ``details_for`` (:func:`~games.arena.play.queries.detail_seats`), "" elsewhere.  Returns ``{"frames": [...], "total": int, "complete": bool}``:
    ``total`` frames in the whole replay (steps + 1).  A step whose answers do not fit the
    rules ends the replay (``complete`` False): that only happens with a damaged log.
    """
    state, index, seq = _restore(match, start - 1 if start > 0 else 0)
    out = []
    if start == 0:
        out.append({"step": 0, "answers": [], "happenings": [], "view": state.full_observation()})
    complete = True
    for step, group in _events(match.pk, seq):
        if len(out) >= count:
            break
        actions = {seat: action for _, seat, action, *_ in group}
        try:
            happenings = state.apply(actions)
        except (ValueError, KeyError, TypeError):
            complete = False
            break
        index += 1
        if index >= start:
            out.append({"step": step, "answers": _answers(group, details_for), "happenings": happenings,
                        "view": state.full_observation()})
    return {"frames": out, "total": total_steps(match.pk) + 1, "complete": complete}


def final_state(match: Match):
    """The rules state after the last logged step (from the last snapshot on)."""
    state, _, seq = _restore(match, None)
    for _, group in _events(match.pk, seq):
        try:
            state.apply({seat: action for _, seat, action, *_ in group})
        except (ValueError, KeyError, TypeError):
            break
    return state


def final_view(match_id: int) -> dict:
    """What a finished or aborted match shows live: its last state with every hand.

    Read from ``Match.final_view``; a match that has none (the server was killed, or it ended
    before views were stored) gets it computed from its log once, and stored."""
    match = Match.objects.get(pk=match_id)
    view = match.final_view
    if view is None:
        view = final_state(match).full_observation()
        Match.objects.filter(pk=match_id, final_view__isnull=True).update(final_view=view)
    return {"status": match.status, "result": match.result, "view": view}
