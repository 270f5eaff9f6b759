"""hanab.live game files: export a finished game as the JSON its replay viewer loads, import
the JSON its ``/export/<id>`` gives (notes, "Export").

The format, as hanab.live documents and reads it::

    {"players": [names], "deck": [{"suitIndex": 0-4, "rank": 1-5}] * 50 (deal order),
     "actions": [{"type": 0 play | 1 discard | 2 colour clue | 3 rank clue | 4 game over,
                  "target": card order (play, discard) or player index (clues),
                  "value": colour index, rank, or 0}],
     "options": {"variant": "No Variant", "emptyClues": true}}

Suits in hanab.live's order Red, Yellow, Green, Blue, Purple: our WHITE is Purple (index 4).
A card's ``order`` is its place in the deck, which is our id - 1 (ids are given in deal
order, seat 0's whole hand first, as hanab.live deals).  Clues that touch no card are legal
here, hence ``emptyClues``.  The game ends by itself there as here (third strike, all 25
played, the final round), so no "game over" action is written.

Differences a reader of the exported file should know: a discard with all eight clue tokens
in the box is legal here (and on the original server); hanab.live's own games never have one.
hanab.live scores a strike-out as 0; our score keeps what was played.
"""
from __future__ import annotations

import json

from games.arena.bots.json_limits import json_size_problem
from games.names import clean_name
from games.hanabi import rules

VARIANT = "No Variant"
PLAY, DISCARD, COLOR_CLUE, RANK_CLUE, GAME_OVER = 0, 1, 2, 3, 4
#: Actions a game can have: at most 50 plays and discards and a clue per token ever gained
#: (8, one per discard, one per 5 played); the bound refuses absurd files before replaying.
MAX_ACTIONS = 200
#: Nesting of a game file: an object of lists of objects.
MAX_DEPTH = 4
#: JSON values a game file may hold: a five-player game with every card noted has about
#: 1,300 (50 cards, 200 actions, 250 notes); parsed, each costs up to about 150 bytes.
MAX_VALUES = 5_000


def export_game(names: list[str], faces: list, history: list, *, seed: str | None = None) -> dict:
    """The game as hanab.live JSON.  ``names`` by seat (seat 0 moved first and was dealt
    first), ``faces`` the deal (``HanabiState.faces``), ``history`` the rules' actions in
    order.  Duplicate names get " (2)" and so on: hanab.live tells players apart by name."""
    players, seen = [], {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        players.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    actions = []
    for action in history:
        kind = action[0]
        if kind in ("play", "discard"):
            actions.append({"type": PLAY if kind == "play" else DISCARD, "target": action[1] - 1, "value": 0})
        elif kind == "color":
            actions.append({"type": COLOR_CLUE, "target": action[1], "value": rules.COLOR_INDEX[action[2]]})
        else:
            actions.append({"type": RANK_CLUE, "target": action[1], "value": action[2]})
    game = {"players": players,
            "deck": [{"suitIndex": rules.COLOR_INDEX[color], "rank": number} for color, number in faces],
            "actions": actions, "options": {"variant": VARIANT, "emptyClues": True}}
    if seed is not None:
        game["seed"] = seed
    return game


def import_game(text: str) -> dict:
    """A hanab.live game file as ``{"config": {"players", "deck"}, "steps": [(seat, action)],
    "names", "date": None}``, every action replayed through our rules.  Raises ``ValueError``
    saying what our rules cannot take: another variant, 6 players, a starting player other
    than the first, a deck that is not the 50 cards, an unknown or illegal action, a game
    ended early by a "game over" action, or a file nested deeper or holding more values than a
    game needs (:data:`MAX_DEPTH`, :data:`MAX_VALUES`, checked before parsing)."""
    problem = json_size_problem(text, MAX_DEPTH, MAX_VALUES)
    if problem:
        raise ValueError(f"not a hanab.live game: {problem}")
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("not a hanab.live game: the file is not a JSON object")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise ValueError("options must be an object")
    variant = options.get("variant", VARIANT)
    if variant != VARIANT:
        raise ValueError(f"only {VARIANT!r} games can be played here, not {str(variant)[:40]!r}")
    if options.get("startingPlayer", 0) not in (0, None):
        raise ValueError("only games where the first player starts can be imported")
    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ValueError("players must be a list of names")
    if not rules.MIN_PLAYERS <= len(players) <= rules.MAX_PLAYERS:
        raise ValueError(f"Hanabi here has {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS} players, this game "
                         f"{len(players)}")
    deck = data.get("deck")
    if not isinstance(deck, list) or len(deck) != len(rules.DECK):
        raise ValueError(f"deck must list {len(rules.DECK)} cards")
    faces = []
    for card in deck:
        suit, rank = (card.get("suitIndex"), card.get("rank")) if isinstance(card, dict) else (None, None)
        if type(suit) is not int or not 0 <= suit < len(rules.COLORS) or type(rank) is not int or not 1 <= rank <= 5:
            raise ValueError(f"deck: {str(card)[:60]} is not a card of {VARIANT}")
        faces.append([rules.COLORS[suit], rank])
    config = rules.normalize_config({"players": len(players), "deck": faces})
    actions = data.get("actions")
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise ValueError(f"actions must be a list of at most {MAX_ACTIONS}")
    state = rules.new_state(config, 0)
    steps = []
    for number, entry in enumerate(actions, 1):
        if state.is_terminal():
            raise ValueError(f"action {number}: the game is already over")
        action = _our_action(entry, number)
        if action is None:  # "game over": a game ended before its end (a timeout, a vote)
            raise ValueError(f"action {number}: the game was ended early there, which our rules cannot replay")
        seat = state.on_turn
        if not state.is_legal(seat, action):
            raise ValueError(f"action {number} ({_describe(entry)}) is not legal here")
        state.apply({seat: action})
        steps.append((seat, action))
    if not state.is_terminal():
        raise ValueError("the game does not reach its end")
    names = [clean_name(p) or f"Player {i + 1}" for i, p in enumerate(players)]
    return {"config": config, "steps": steps, "names": names, "date": None}


def _our_action(entry, number: int) -> list | None:
    if not isinstance(entry, dict):
        raise ValueError(f"action {number} is not an object")
    kind, target, value = entry.get("type"), entry.get("target"), entry.get("value", 0)
    if type(kind) is not int or type(target) is not int or type(value) is not int:
        raise ValueError(f"action {number}: type, target and value must be whole numbers")
    if kind == PLAY or kind == DISCARD:
        return ["play" if kind == PLAY else "discard", target + 1]
    if kind == COLOR_CLUE:
        if not 0 <= value < len(rules.COLORS):
            raise ValueError(f"action {number}: no colour {value}")
        return ["color", target, rules.COLORS[value]]
    if kind == RANK_CLUE:
        return ["number", target, value]
    if kind == GAME_OVER:
        return None
    raise ValueError(f"action {number}: unknown type {kind}")


def _describe(entry: dict) -> str:
    return f"type {entry.get('type')}, target {entry.get('target')}, value {entry.get('value', 0)}"


#: hanab.live's 62 digits for its compact game strings.
BASE62 = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: hanab.live's variant id of "No Variant".
NO_VARIANT_ID = 0


def compact(game: dict) -> str:
    """``game`` (as :func:`export_game` makes it) in the compact form hanab.live's lobby reads
    at ``/replay-json/<string>`` (learnt from its client's ``hypoCompress.ts``; this encoder is
    our own): the number of players; the lowest and highest rank, then one digit per card
    (``suit * ranks + rank - lowest``); a comma; the lowest and highest action type, then two
    digits per action (``(value + 1) * types + type - lowest`` and the target); a comma; the
    variant's id; a hyphen after every 20 characters (so that the link wraps).  Player names
    are not in it: hanab.live shows Alice, Bob and so on."""
    ranks = [card["rank"] for card in game["deck"]]
    low, high = min(ranks), max(ranks)
    out = f"{len(game['players'])}{low}{high}" + "".join(
        BASE62[card["suitIndex"] * (high - low + 1) + card["rank"] - low] for card in game["deck"]) + ","
    actions = game["actions"]
    if actions:
        first, last = min(a["type"] for a in actions), max(a["type"] for a in actions)
        span = last - first + 1
        out += f"{first}{last}" + "".join(
            BASE62[(a.get("value", 0) + 1) * span + a["type"] - first] + BASE62[a["target"]] for a in actions)
    else:
        out += "00"
    out += f",{NO_VARIANT_ID}"
    return "-".join(out[i:i + 20] for i in range(0, len(out), 20))


def replay_url(game: dict, base: str = "https://hanab.live") -> str:
    """The address that opens ``game`` in hanab.live's replay viewer."""
    return f"{base}/replay-json/{compact(game)}"
