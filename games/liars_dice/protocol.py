"""Liar's Dice wire codec: one JSON object per ``\\n``-terminated line (specs/liars-dice-tcp.*).

Player ids on the wire are 1-based match seats, with the recipient's own id replaced by 0
(``Yourself``).  Kept quirk: ``round_over.game_winner`` is always the absolute id, never 0.
"""
from __future__ import annotations

import json
from typing import Any

from games.base import Action, ProtocolError
from games.liars_dice.rules import BID, CHALLENGE, PASS

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def wire_id(seat: int | None, recipient: int) -> int:
    """A seat as ``recipient`` sees it: 0 for itself, -1 for none, else seat + 1."""
    if seat is None:
        return -1
    return 0 if seat == recipient else seat + 1


def move_request(obs: dict, message_id: str) -> bytes:
    """Encode the ``move_request`` for the seat whose observation ``obs`` is (seed, move_request).

    ``other_hands`` lists the players still in the game in turn order, the player on turn first.
    """
    me = obs["your_seat"]
    counts = obs["dice_counts"]
    last_bid = obs["last_bid"] or [0, 0]
    msg = {
        "subject": "move_request",
        "message_id": message_id,
        "game_number": obs["game_number"],
        "round_number": obs["round_number"],
        "move_number": obs["move_number"],
        "your_hand": obs["your_hand"],
        "other_hands": [[wire_id(s, me), counts[s]] for s in obs["to_act"]],
        "last_bid": last_bid,
    }
    return (_dumps(msg) + "\n").encode()


def round_over(happening: dict, recipient: int) -> bytes:
    """Encode a ``round_over`` happening for ``recipient`` (seed, round_over; notes, quirk)."""
    winner = happening["game_winner"]
    msg = {
        "subject": "round_over",
        "game_number": happening["game_number"],
        "round_number": happening["round_number"],
        "state": [[wire_id(s, recipient), n] for s, n in happening["state"]],
        "round_loser": wire_id(happening["round_loser"], recipient),
        "round_challenger": wire_id(happening["round_challenger"], recipient),
        "game_winner": -1 if winner is None else winner + 1,
    }
    return (_dumps(msg) + "\n").encode()


def parse_line(line: bytes) -> dict:
    """Decode one line from a bot into a JSON object.

    Raises :class:`ProtocolError` for bytes that are not UTF-8 JSON or not an object.
    """
    try:
        msg = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        preview = line[:60].decode("utf-8", "replace")
        raise ProtocolError(f"not JSON ({exc.__class__.__name__}): {preview!r}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"expected a JSON object, got {type(msg).__name__}")
    return msg


def move_to_action(move: Any) -> Action:
    """Turn a ``move_response.move`` into a rules action (notes, "One move").

    ``"challenge"`` challenges; any other string is ``"pass"`` (no action when not on turn, a
    lost round on turn); an array of exactly two numbers is a bid (integral floats count as
    integers, as they do for the reference).  Raises :class:`ProtocolError` for anything else.
    """
    if isinstance(move, str):
        return CHALLENGE if move == CHALLENGE else PASS
    if isinstance(move, list) and len(move) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in move
    ):
        face, count = (int(x) if float(x).is_integer() else x for x in move)
        return [BID, face, count]
    raise ProtocolError('"move" must be "challenge", "pass" or [face, count]; got ' + _dumps(move)[:60])


def action_to_move(action: Action) -> Any:
    """The wire ``move`` for a rules action (built-in bots and the tests speak through this)."""
    if isinstance(action, list) and action and action[0] == BID:
        return [action[1], action[2]]
    return action
