"""Hanabi wire codec: WebSocket text frames of one JSON object (specs/hanabi-ws.*).

Requests come from bots; every response is built per recipient from what that seat may see
(:class:`StateView`: parts shared by every seat, and the recipient's own hand as its owner
sees it), so a message carries only faces its recipient may see: its own cards with
``color``/``number`` null unless it knows them (the notes' rule, not the original's, which
broadcast every hand and the deck), and the deck as ids alone.  Field names, nulls (never
omitted), enum spellings and the error explanations are the original server's
(Alexander-Miller/hanabi-server, ``src/responses.rs``).

Seats and names.  Seat 0 moves first.  The original lists ``players`` in join order and lets
the last to join move first; so that bots find the turn order where they expect it, the wire
lists the seats as ``1, 2, ..., n-1, 0`` (the player who moved first last), which for an
automatic table is exactly the join order (the arena seats the last to join at seat 0).
"""
from __future__ import annotations

import json
import math
from typing import Any

import orjson

from games.base import Action, ProtocolError
from games.hanabi.rules import DECK

#: Compact JSON in UTF-8, as the original writes it (orjson: a few times faster than the
#: standard library's; the same text for the strings, whole numbers and nulls we send).
_dumps = orjson.dumps

NUMBERS = ("ONE", "TWO", "THREE", "FOUR", "FIVE")
COLORS = ("RED", "YELLOW", "GREEN", "BLUE", "WHITE")

# The original's explanations (``responses::error_messages``), word for word.
UNABLE_TO_GET_MSG_TYPE = "The type of the message could not be read."
UNABLE_TO_DESERIALIZE_PAYLOAD = "The payload of the received message could not be deserialized."
PLAYER_ALREADY_EXISTS = "A Player with the chosen name already exists."
ALREADY_CONNECTED = "The Player is already connected."
CONN_GAME_ALREADY_STARTED = "Connection refused because the game has already started."
GAME_ALREADY_STARTED = "The game cannot be started because it's started already."
NOT_YET_CONNECTED = "The Player is not yet connected."
NO_HINT_TOKENS = "Hint token count is zero, a hint cannot be played."
CARD_NOT_FOUND = "The given Card cannot be found on the Player's hand."
PLAYER_NOT_FOUND = "The given Player could not be found."
NOT_YOUR_TURN = "Tried to send a request when it was someone else's turn."
#: Ours (the original has no bot keys): a ``CONNECTION_REQUEST`` whose ``key`` is refused.
KEY_REFUSED = "The bot key was refused."

#: Request types and the fields each must carry (name -> JSON type check).
REQUESTS = {
    "CONNECTION_REQUEST": {"name": str},
    "GAME_START_REQUEST": {},
    "HINT_COLOR_REQUEST": {"target_player": str, "color": str},
    "HINT_NUMBER_REQUEST": {"target_player": str, "number": str},
    "DISCARD_CARD_REQUEST": {"discarded_card_id": int},
    "PLAY_CARD_REQUEST": {"played_card_id": int},
}
#: Card ids fit the original's ``usize``; larger numbers are not a card of any game.
MAX_CARD_ID = 2**63 - 1


class HanabiError(ProtocolError):
    """A request the server answers with ``ERROR_RESPONSE``: ``explanation`` is one of the
    original's sentences above, ``details`` what exactly was wrong (or None)."""

    def __init__(self, explanation: str, details: str | None = None):
        super().__init__(explanation if details is None else f"{explanation} ({details})")
        self.explanation = explanation
        self.details = details


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:30]} is out of range")
    return value


_loads = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float).decode


def parse_request(text: str) -> dict:
    """A request frame as a dict with its ``msg_type`` and the fields it needs (unknown fields
    are ignored, as the original does).

    Raises :class:`HanabiError`: ``UNABLE_TO_GET_MSG_TYPE`` when the frame is not a JSON
    object with a known string ``msg_type``; ``UNABLE_TO_DESERIALIZE_PAYLOAD`` (with the field
    at fault) when a field is missing or of the wrong type.  The caller bounds the frame's
    size and nesting before calling."""
    try:
        msg = _loads(text)
    except ValueError:
        raise HanabiError(UNABLE_TO_GET_MSG_TYPE, "not JSON") from None
    if not isinstance(msg, dict) or not isinstance(msg.get("msg_type"), str) or msg["msg_type"] not in REQUESTS:
        raise HanabiError(UNABLE_TO_GET_MSG_TYPE)
    for field, kind in REQUESTS[msg["msg_type"]].items():
        value = msg.get(field)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise HanabiError(UNABLE_TO_DESERIALIZE_PAYLOAD, f"{field} must be a {_KIND_NAMES[kind]}")
    if "color" in REQUESTS[msg["msg_type"]] and msg["color"] not in COLORS:
        raise HanabiError(UNABLE_TO_DESERIALIZE_PAYLOAD, f"color must be one of {', '.join(COLORS)}")
    if "number" in REQUESTS[msg["msg_type"]] and msg["number"] not in NUMBERS:
        raise HanabiError(UNABLE_TO_DESERIALIZE_PAYLOAD, f"number must be one of {', '.join(NUMBERS)}")
    for field in ("discarded_card_id", "played_card_id"):
        if field in msg and not 0 <= msg[field] <= MAX_CARD_ID:
            raise HanabiError(UNABLE_TO_DESERIALIZE_PAYLOAD, f"{field} must be a card id")
    return msg


_KIND_NAMES = {str: "string", int: "whole number"}


def request_to_action(msg: dict, seat: int, names: list[str]) -> Action:
    """The rules' action for a play, discard or hint request from ``seat`` (``names`` by seat).

    Raises :class:`HanabiError` ``PLAYER_NOT_FOUND`` for a hint to a name not at the table,
    or to the hinter (our rule: the original lets a player hint themselves, which tells them
    about their own hand for one token; here a hint goes to another player)."""
    kind = msg["msg_type"]
    if kind == "PLAY_CARD_REQUEST":
        return ["play", msg["played_card_id"]]
    if kind == "DISCARD_CARD_REQUEST":
        return ["discard", msg["discarded_card_id"]]
    target = msg["target_player"]
    if target not in names:
        raise HanabiError(PLAYER_NOT_FOUND, f"no player named {target[:40]!r}")
    index = names.index(target)
    if index == seat:
        raise HanabiError(PLAYER_NOT_FOUND, "a hint must go to another player")
    if kind == "HINT_COLOR_REQUEST":
        return ["color", index, msg["color"]]
    return ["number", index, NUMBERS.index(msg["number"]) + 1]


def wire_order(players: int) -> list[int]:
    """Seats in the order the wire lists them: ``1 .. n-1`` then ``0`` (module docstring)."""
    return list(range(1, players)) + [0]


def _card(card: dict) -> dict:
    return _face(card.get("color"), card.get("number"), card["id"])


def _face(color: str | None, number: int | None, card_id: int) -> dict:
    """A wire ``Card``: its id and what of its face is shown (None: hidden)."""
    return {"id": card_id, "color": color, "number": NUMBERS[number - 1] if number else None}


def _knowledge(k: dict) -> dict:
    """A wire ``CardKnowledge`` from :meth:`games.hanabi.rules.HanabiState.knowledge`."""
    return {"knows_color": k["color"] is not None, "knows_number": k["number"] is not None,
            "knows_color_not": k["not_colors"], "knows_number_not": [NUMBERS[n - 1] for n in k["not_numbers"]]}


#: A deck card on the wire (face hidden), by id.
_HIDDEN = {i: _dumps(_face(None, None, i)) for i in range(1, len(DECK) + 1)}


class StateView:
    """One state's wire ``GameState`` for each seat, built from parts encoded once and shared
    by every recipient: the counters, fireworks, deck and discards (the same for all), and
    each player's entry twice, as its owner sees it (faces only where hints told it: the
    card's :meth:`~games.hanabi.rules.HanabiState.knowledge`) and as the others do (faces
    shown).  A seat's state is the shared parts with its own entry as its owner sees it, so
    it carries no face its recipient may not see (as
    :meth:`games.hanabi.rules.HanabiState.observation`).  Each card's two encodings are kept
    for the game, keyed by what its holder knows of it, so a step encodes only the cards a
    hint or a draw changed.

    Build it with :meth:`of`, which keeps the last one built: every seat is told of a step
    before the state changes again, so the seats of one step share one view."""

    _last: "StateView | None" = None

    def __init__(self, state, cards: dict | None = None):
        self.state, self.moves = state, len(state.history)
        self.players = state.num_seats
        self.on_turn = None if state.is_terminal() else state.on_turn
        #: (card id, knowledge key) -> (as its holder sees it, as the others do), encoded.
        self._cards: dict[tuple, tuple[bytes, bytes]] = {} if cards is None else cards
        played = {color: NUMBERS[n - 1] for color, n in zip(COLORS, state.fireworks_list) if n}
        self.head = b'{"hint_tokens":%d,"hint_tokens_max":%d,"err_tokens":%d,"played_cards":%s,"players":[' % (
            state.hint_tokens, state.HINT_TOKENS_MAX, state.err_tokens, _dumps(played))  # the object left open
        self.deck_and_discards = b'],"deck":[' + b",".join(_HIDDEN[i] for i in reversed(state.deck)) + \
            b'],"discarded_cards":' + _dumps([_face(*state.faces[i - 1], i) for i in state.discards]) + \
            b',"next_player":'
        self.end = b',"turns_left":' + _dumps(state.turns_left) + b"}"
        self._entries: dict[tuple[int, str, bool], bytes] = {}

    @classmethod
    def of(cls, state) -> "StateView":
        """The view of ``state`` as it is now (the last one built, if it still is; its cards'
        encodings carried over when it is the same game)."""
        last = cls._last
        if last is None or last.state is not state or last.moves != len(state.history):
            last = cls._last = cls(state, last._cards if last is not None and last.state is state else None)
        return last

    def card(self, card_id: int, holder: int, viewer: int) -> dict:
        """Card ``card_id`` of ``holder``'s hand as ``viewer`` sees it (a wire ``Card``)."""
        if holder == viewer:
            known = self.state.knowledge(card_id)
            return _face(known["color"], known["number"], card_id)
        return _face(*self.state.faces[card_id - 1], card_id)

    def _encoded(self, card_id: int) -> tuple[bytes, bytes]:
        state = self.state
        key = (card_id, state.knowledge_key(card_id))
        pair = self._cards.get(key)
        if pair is None:
            known = state.knowledge(card_id)
            knowledge = _knowledge(known)
            pair = self._cards[key] = tuple(
                _dumps({"card": card, "knowledge": knowledge})
                for card in (_face(known["color"], known["number"], card_id),
                             _face(*state.faces[card_id - 1], card_id)))
        return pair

    def _entry(self, seat: int, name: str, own: bool) -> bytes:
        key = (seat, name, own)
        entry = self._entries.get(key)
        if entry is None:
            side = 0 if own else 1
            entry = self._entries[key] = b'{"name":' + _dumps(name) + b',"cards":[' + b",".join(
                self._encoded(cid)[side] for cid in self.state.hands[seat]) + b"]}"
        return entry

    def game_state(self, viewer: int, names: list[str]) -> bytes:
        """The wire ``GameState`` (JSON) as ``viewer`` sees it, ``names`` by seat; the deck's
        next card is its last element, as the original draws from the end."""
        players = b",".join(self._entry(s, names[s], s == viewer) for s in wire_order(self.players))
        next_player = names[self.on_turn] if self.on_turn is not None else None
        return self.head + players + self.deck_and_discards + _dumps(next_player) + self.end


def encode(msg: dict) -> str:
    """One frame's text."""
    return _dumps(msg).decode()


def _with_state(msg: dict, game_state: bytes) -> str:
    """``msg`` with ``game_state`` (encoded) as its last field, as one frame's text."""
    return (_dumps(msg)[:-1] + b',"game_state":' + game_state + b"}").decode()


def error_response(explanation: str, details: str | None = None) -> str:
    """``ERROR_RESPONSE`` (notes: to the offending client only)."""
    return encode({"msg_type": "ERROR_RESPONSE", "explanation": explanation, "err_details": details})


def connection_response(names: list[str]) -> str:
    """``CONNECTION_RESPONSE``: the players connected so far, in join order, the joiner last."""
    return encode({"msg_type": "CONNECTION_RESPONSE", "names": list(names)})


def game_start_response(view: StateView, seat: int, names: list[str]) -> str:
    """``GAME_START_RESPONSE`` with ``seat``'s initial state."""
    return _with_state({"msg_type": "GAME_START_RESPONSE"}, view.game_state(seat, names))


def game_over_response(score: int) -> str:
    """``GAME_OVER_RESPONSE``: sent instead of the final action's response."""
    return encode({"msg_type": "GAME_OVER_RESPONSE", "score": score})


def action_response(happening: dict, view: StateView, seat: int, names: list[str]) -> str:
    """The response to one play, discard or hint (a happening of
    :meth:`games.hanabi.rules.HanabiState.apply`) as ``seat`` sees it in ``view`` (the
    state after it).  A drawn card is shown as it appears to ``seat`` (its face hidden from
    the drawer, who cannot see their own cards).  Raises ``ValueError`` for another
    happening."""
    kind = happening["type"]
    actor = names[happening["seat"]]
    if kind == "hint":
        target = names[happening["target"]]
        if "color" in happening:
            msg = {"msg_type": "HINT_COLOR_RESPONSE", "hinting_player": actor, "target_player": target,
                   "hinted_color": happening["color"]}
        else:
            msg = {"msg_type": "HINT_NUMBER_RESPONSE", "hinting_player": actor, "target_player": target,
                   "hinted_number": NUMBERS[happening["number"] - 1]}
        return _with_state(msg, view.game_state(seat, names))
    drawn = None
    if happening.get("drawn") is not None:
        drawn = view.card(happening["drawn"], happening["seat"], seat)
    if kind == "play":
        msg = {"msg_type": "PLAY_CARD_RESPONSE", "playing_player": actor, "played_card": _card(happening["card"]),
               "drawn_card": drawn, "success": bool(happening["success"])}
    elif kind == "discard":
        msg = {"msg_type": "DISCARD_CARD_RESPONSE", "discarding_player": actor,
               "discarded_card": _card(happening["card"]), "drawn_card": drawn}
    else:
        raise ValueError(f"no response for a {kind!r} happening")
    return _with_state(msg, view.game_state(seat, names))


def refusal(state: Any, seat: int, action: Action) -> HanabiError | None:
    """Why the rules refuse ``action`` from ``seat`` (on turn) in ``state``, as the original
    words it, or None when it is legal: a card not in the hand is ``CARD_NOT_FOUND``, a hint
    without a token ``NO_HINT_TOKENS``."""
    if state.is_legal(seat, action):
        return None
    if action[0] in ("play", "discard"):
        return HanabiError(CARD_NOT_FOUND, f"card {action[1]} is not in your hand")
    if state.hint_tokens <= 0:
        return HanabiError(NO_HINT_TOKENS)
    return HanabiError(PLAYER_NOT_FOUND, "that hint is not allowed")
