"""Liar's Dice wire codec: one JSON object per ``\\n``-terminated line (specs/liars-dice-tcp.*).

Player ids on the wire are 1-based match seats, with the recipient's own id replaced by 0
(``Yourself``).  Kept quirk: ``round_over.game_winner`` is always the absolute id, never 0.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from games.base import Action, ProtocolError
from games.liars_dice.rules import BID, CHALLENGE, MAX_COUNT, PASS

#: For quoting a bot's bad move in the reply's detail: any integer, however long (orjson
#: refuses those past 64 bits).
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _line(msg: dict) -> bytes:
    """``msg`` as one line: compact JSON in UTF-8 and ``\\n``.  orjson: the server writes a few
    of these per move, and it takes a tenth of the standard library's time for them."""
    return orjson.dumps(msg, option=orjson.OPT_APPEND_NEWLINE)


def _no_constant(name: str):
    # Python's json reads NaN and Infinity, which are not JSON (RFC 8259) and which the event
    # log's JSON column refuses: a bot could otherwise get a whole batch of events dropped.
    raise ProtocolError(f"not JSON: {name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as inf
        raise ProtocolError(f"not JSON: number {text[:30]} is out of range")
    return value


_loads = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float).decode


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
    return _line(msg)


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
    return _line(msg)


def error(message: str) -> bytes:
    """An ``error`` line, sent just before the server hangs up on a bot (not in the seed: a
    bot that ignores unknown subjects loses nothing by it)."""
    return _line({"subject": "error", "message": message})


#: Digits enough for an integer past 64 bits (19 and more).
_LONG_NUMBER = re.compile(rb"\d{19}")


def parse_line(line: bytes) -> dict:
    """Decode one line from a bot into a JSON object.

    Raises :class:`ProtocolError` for bytes that are not UTF-8 JSON (``NaN``, ``Infinity`` and
    numbers beyond a double's range are not JSON) or not an object.

    The standard library's reading is the rule.  orjson reads a line in a fifth of its time
    and to the same result, except that it refuses lone surrogates in strings and reads
    integers past 64 bits as floats: a line it refuses, or with 19 digits in a row, is read by
    the standard library.
    """
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _parse_slowly(line)
    if type(msg) is not dict or _LONG_NUMBER.search(line):
        return _parse_slowly(line)
    return msg


def _parse_slowly(line: bytes) -> dict:
    """:func:`parse_line` with the standard library."""
    try:
        msg = _loads(line.decode("utf-8"))
    except ProtocolError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: [[[[...
        preview = line[:60].decode("utf-8", "replace")
        raise ProtocolError(f"not JSON ({exc.__class__.__name__}): {preview!r}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"expected a JSON object, got {type(msg).__name__}")
    return msg


def _bid_number(x: Any) -> int | None:
    """``x`` as a bid's number: an integer (an integral float counts, as it does for the
    reference, whose numbers are JavaScript's) of at most ``MAX_COUNT`` either way; else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, float):
        if not (math.isfinite(x) and x.is_integer()):
            return None
        x = int(x)
    if isinstance(x, int) and -MAX_COUNT <= x <= MAX_COUNT:
        return x
    return None


def move_to_action(move: Any) -> Action:
    """Turn a ``move_response.move`` into a rules action (notes, "One move").

    ``"challenge"`` challenges; any other string is ``"pass"`` (no action when not on turn, a
    lost round on turn); an array of exactly two whole numbers within +-``MAX_COUNT``
    (2**31 - 1) is a bid, which the rules then judge (face 1-6, a count from 1 that raises).
    Raises :class:`ProtocolError` for anything else, a huge count, a fraction or a boolean
    included: a malformed reply, which loses the round.
    """
    if isinstance(move, str):
        return CHALLENGE if move == CHALLENGE else PASS
    if isinstance(move, list) and len(move) == 2:
        face, count = _bid_number(move[0]), _bid_number(move[1])
        if face is not None and count is not None:
            return [BID, face, count]
        raise ProtocolError(f"a bid is [face, count], two whole numbers up to {MAX_COUNT}; got "
                            + _dumps(move)[:60])
    raise ProtocolError('"move" must be "challenge", "pass" or [face, count]; got ' + _dumps(move)[:60])


def action_to_move(action: Action) -> Any:
    """The wire ``move`` for a rules action (``[BID, face, count]`` -> ``[face, count]``;
    challenge and pass as they are), as the match logs write answers."""
    if isinstance(action, list) and action and action[0] == BID:
        return [action[1], action[2]]
    return action
