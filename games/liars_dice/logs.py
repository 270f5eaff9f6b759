"""Liar's Dice match logs: a finished match as JSON lines, one line per move (README, "Liar's
Dice logs").

A move is what the protocol calls one ``move_request`` to every player still in the game; its
line carries every player's answer (in turn order, the player on turn first, as the answers are
settled), whether the server supplied it (``forced``) because the player said nothing in time
(``late``), sent a malformed reply or had left, the dice of every hand, and the round's outcome
when the move ended it.  Seats are 0-based match seats, as in the JSON API; moves are written
as on the wire (``[face, count]``, ``"challenge"``, ``"pass"``; ``null`` for no valid answer).
"""
from __future__ import annotations

import json
from typing import Callable, Iterable, Mapping

from games.liars_dice import protocol, rules

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def export_lines(config: Mapping, seed: int, steps: Iterable[tuple[int, list[dict]]], names: list[str],
                 late: Callable[[str], bool], match_id: int | None = None) -> Iterable[str]:
    """Yield one JSON line (``\\n``-terminated) per logged move of a match.

    ``steps``: ``(step, answers)`` in order, each answer a dict with ``seat``, ``action`` (a
    rules action), ``forced``, ``reason``, ``think_ms`` and ``detail`` (as the event log keeps
    them); ``names``: display names by seat; ``late(reason)``: whether a recorded reason means
    the seat said nothing before its deadline.  A line::

        {"match": 7, "step": 3, "game_number": 1, "round_number": 1, "move_number": 3,
         "on_turn": 1, "last_bid": [4, 2], "last_bidder": 0, "dice_on_table": 4,
         "hands": [[2, 4], [1, 6]],
         "answers": [{"seat": 1, "name": "Cal", "move": [4, 3], "forced": false, "late": false,
                      "reason": "", "think_ms": 0.4}, ...],
         "round_over": null}

    ``last_bid`` is ``[0, 0]`` before the round's first bid (as in ``move_request``);
    ``round_over``, when the move ended the round: ``round_loser``, ``round_challenger``
    (null: lost by an invalid or missing answer), ``reason`` (``challenge``, ``invalid_move``,
    ``no_answer``), the judged ``bid`` and its ``bidder``, ``shown`` (dice showing the bid's
    face), ``game_winner`` and ``dice_left`` per seat.  An answer may add ``detail`` (what
    exactly was wrong with it).  Stops at a step that does not fit the rules (a damaged log).
    """
    state = rules.new_state(config, seed)
    for step, answers in steps:
        if state.is_terminal():
            return
        order = {seat: i for i, seat in enumerate(state.to_act())}
        by_seat = {a["seat"]: a for a in answers}
        if set(by_seat) != set(order):
            return
        line = {
            "match": match_id, "step": step, "game_number": state.game_number,
            "round_number": state.round_number, "move_number": state.move_number,
            "on_turn": state.on_turn, "last_bid": list(state.last_bid), "last_bidder": state.last_bidder,
            "dice_on_table": sum(state.counts), "hands": [list(h) for h in state.hands],
            "answers": [_answer(by_seat[seat], names, late) for seat in sorted(by_seat, key=order.get)],
        }
        happenings = state.apply({seat: a["action"] for seat, a in by_seat.items()})
        line["round_over"] = _round_over(happenings[0]) if happenings else None
        yield _dumps(line) + "\n"


def _answer(answer: dict, names: list[str], late: Callable[[str], bool]) -> dict:
    seat = answer["seat"]
    out = {
        "seat": seat, "name": names[seat] if seat < len(names) else "",
        "move": protocol.action_to_move(answer["action"]),
        "forced": bool(answer["forced"]), "late": late(answer["reason"] or ""),
        "reason": answer["reason"] or "",
        "think_ms": None if answer["think_ms"] is None else round(answer["think_ms"], 1),
    }
    if answer.get("detail"):
        out["detail"] = answer["detail"]
    return out


def _round_over(happening: dict) -> dict:
    return {
        "round_loser": happening["round_loser"], "round_challenger": happening["round_challenger"],
        "reason": happening["reason"], "bid": happening["bid"], "bidder": happening["bidder"],
        "shown": happening["shown"], "game_winner": happening["game_winner"],
        "dice_left": [n for _, n in happening["state"]],
    }
