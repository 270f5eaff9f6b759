"""Replays, derived from the event log only: ``(game, config, seed, events)`` re-run through
the rules gives every state of a match again (DESIGN.md, "Data")."""
from __future__ import annotations

from itertools import groupby

from games.arena import registry
from games.arena.models import Event, Match

#: Frames returned by one replay request at most.
MAX_FRAMES = 500


def _steps(match_id: int):
    """Yield ``(step, [event, ...])`` in order, straight from the database."""
    rows = (Event.objects.filter(match_id=match_id).order_by("seq")
            .values_list("step", "seat", "action", "forced", "reason", "think_ms").iterator(chunk_size=2000))
    for step, group in groupby(rows, key=lambda r: r[0]):
        yield step, list(group)


def _answers(group) -> list[dict]:
    return [{"seat": seat, "action": action, "forced": forced, "reason": reason, "think_ms": think}
            for _, seat, action, forced, reason, think in group]


def frames(match: Match, start: int = 0, count: int = MAX_FRAMES) -> dict:
    """Frames ``start`` .. ``start + count - 1`` of a match's replay.

    Frame 0 is the first state; frame ``k`` is the state after step ``k``, with that step's
    answers and happenings.  Views are omniscient (every hand).  Returns
    ``{"frames": [...], "total": int | None, "complete": bool}`` where ``total`` is known once
    the log was read to its end.  A step whose answers do not fit the rules ends the replay
    (``complete`` False): that only happens with a damaged log.
    """
    spec = registry.get(match.game)
    state = spec.new_state(match.config, match.seed)
    out = []
    if start == 0:
        out.append({"step": 0, "answers": [], "happenings": [], "view": state.full_observation()})
    index = 0
    complete = True
    for step, group in _steps(match.pk):
        actions = {seat: action for _, seat, action, *_ in group}
        try:
            happenings = state.apply(actions)
        except (ValueError, KeyError, TypeError):
            complete = False
            break
        index += 1
        if index >= start:
            if len(out) >= count:
                return {"frames": out, "total": None, "complete": True}
            out.append({"step": step, "answers": _answers(group), "happenings": happenings,
                        "view": state.full_observation()})
    return {"frames": out, "total": index + 1, "complete": complete}


def final_state(match: Match):
    """The rules state after the last logged step."""
    spec = registry.get(match.game)
    state = spec.new_state(match.config, match.seed)
    for _, group in _steps(match.pk):
        try:
            state.apply({seat: action for _, seat, action, *_ in group})
        except (ValueError, KeyError, TypeError):
            break
    return state


def final_view(match_id: int) -> dict:
    """What a finished or aborted match shows live: its last state with every hand."""
    match = Match.objects.get(pk=match_id)
    state = final_state(match)
    return {"status": match.status, "result": match.result, "view": state.full_observation()}
