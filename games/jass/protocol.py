"""Jass wire codec: the HSLU jass server's HTTP JSON format V0.2 (specs/jass-http.*).

The server POSTs one JSON body per request to the bot; the same body serves ``select_trump``
(current kit: ``action_trump``), ``play_card`` (``action_play_card``) and ``game_info``
(:data:`PATHS`).  Bots answer ``{"trump": 0-5 | 10}`` and ``{"card": "C8"}``.

Body (seed, "Message Format"; notes, "Message body")::

    {"version": "V0.2", "dealer": 0-3, "currentPlayer": 0-3 | -1, "playerView": 0-3,
     "trump": -1 | 0-5, "forehand": -1 | 1 | 0, "tricks": [trick, ...],
     "jassTyp": "SCHIEBER_1000" | "SCHIEBER", "player": [{"hand": [card, ...]} x 4]}
    trick = {"cards": [card, ...], "points": int, "win": 0-3, "first": 0-3}
            (``points``/``win`` only on finished tricks; the current trick may be
             ``{"cards": [], "first": p}``)

Only the recipient's hand is filled.  Seats are the protocol's player numbers (0 North,
1 East, 2 South, 3 West); the rules use the same numbers, so nothing is translated.

Log files are the same format with every hand filled (seed, "player"); the kit writes one
entry per line as ``{"game": <game>, "date": "dd.mm.yy HH:MM:SS", "player_ids": [...]}``.
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Mapping

from games.base import Action, ProtocolError
from games.jass.rules import (
    CARD_INDEX, CARD_NAMES, NEXT, PARTNER, PUSH, TRICKS_PER_DEAL, names_to_mask, trick_points,
    trick_winner,
)

VERSION = "V0.2"
PUSH_CODE = 10
DATE_FORMAT = "%d.%m.%y %H:%M:%S"
JASS_SCHIEBER = "SCHIEBER"
JASS_SCHIEBER_1000 = "SCHIEBER_1000"

#: Request paths appended to a bot's base URL, per path style (notes, "Paths").
PATHS = {
    "seed": {"trump": "/select_trump", "card": "/play_card", "info": "/game_info"},
    "kit": {"trump": "/action_trump", "card": "/action_play_card", "info": "/game_info"},
}

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def jass_type(obs: Mapping) -> str:
    """``"SCHIEBER_1000"`` for a match to 1000 with no deal limit (every trump counts the
    same, as ours do), else ``"SCHIEBER"`` ("unspecified counting")."""
    if obs.get("points_to_win") == 1000 and not obs.get("max_deals"):
        return JASS_SCHIEBER_1000
    return JASS_SCHIEBER


def _players(seat: int, hand: list[str]) -> list[dict]:
    players = [{"hand": []} for _ in range(4)]
    players[seat] = {"hand": list(hand)}
    return players


def request_body(obs: Mapping) -> dict:
    """The V0.2 body for the seat whose observation ``obs`` is
    (:meth:`games.jass.rules.JassState.observation`): ``playerView`` is that seat and only its
    hand is filled.  The same body is sent to ``select_trump`` and ``play_card``; see
    :func:`request_kind` for which."""
    seat = obs["seat"]
    return {
        "version": VERSION,
        "dealer": obs["dealer"],
        "currentPlayer": obs["current_player"],
        "playerView": seat,
        "trump": obs["trump"],
        "forehand": obs["forehand"],
        "tricks": [dict(t, cards=list(t["cards"])) for t in obs["tricks"]],
        "jassTyp": jass_type(obs),
        "player": _players(seat, obs["hand"]),
    }


def request_kind(obs: Mapping) -> str:
    """``"trump"`` or ``"card"``: what the player on turn is asked (index into :data:`PATHS`)."""
    if obs["phase"] == "trump":
        return "trump"
    if obs["phase"] == "play":
        return "card"
    raise ValueError("nothing is asked once the match is over")


def game_info_body(deal_over: Mapping, seat: int, config: Mapping | None = None) -> dict:
    """The ``game_info`` body for ``seat`` after a deal, from the rules' ``deal_over``
    happening: every trick, no current player (-1), every hand empty (all cards are played;
    a deal cut short by the end of the match still shows no hand).  ``config`` (the match's
    normalized configuration) sets ``jassTyp``."""
    return {
        "version": VERSION,
        "dealer": deal_over["dealer"],
        "currentPlayer": -1,
        "playerView": seat,
        "trump": deal_over["trump"],
        "forehand": deal_over["forehand"],
        "tricks": [dict(t, cards=list(t["cards"])) for t in deal_over["tricks"]],
        "jassTyp": jass_type(config or {}),
        "player": [{"hand": []} for _ in range(4)],
    }


# --- answers --------------------------------------------------------------------------------
def parse_body(body: bytes | str) -> dict:
    """Decode a bot's HTTP answer body into a JSON object.

    Raises :class:`ProtocolError` for an empty body, bytes that are not UTF-8 JSON, or JSON
    that is not an object.
    """
    if isinstance(body, (bytes, bytearray)):
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("the answer body is not UTF-8 text") from None
    else:
        text = body
    if not text.strip():
        raise ProtocolError('empty answer body: reply with a JSON object such as {"card": "C8"}')
    try:
        msg = json.loads(text)
    except ValueError as exc:
        raise ProtocolError(f"the answer body is not JSON ({exc.msg} at char {exc.pos}): {text[:60]!r}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"expected a JSON object such as {{\"card\": \"C8\"}}, got {type(msg).__name__}")
    return msg


def decode_trump(body: bytes | str) -> Action:
    """The rules action of a ``select_trump`` answer ``{"trump": t}``: ``t`` 0-5 as is, 10
    as ``"push"`` (seed, "Select trump").  Other keys are ignored.

    Raises :class:`ProtocolError` unless ``trump`` is a JSON integer 0-5 or 10.  Whether a
    push is allowed (not after the partner pushed) is the rules' business.
    """
    msg = parse_body(body)
    if "trump" not in msg:
        raise ProtocolError('the answer has no "trump" key: reply {"trump": 0-5} or {"trump": 10} '
                            f"to push; got {_preview(msg)}")
    t = msg["trump"]
    if type(t) is not int or not (0 <= t <= 5 or t == PUSH_CODE):
        raise ProtocolError(
            f'"trump" must be an integer: 0 Diamonds, 1 Hearts, 2 Spades, 3 Clubs, 4 Obe-Abe, '
            f'5 Une-Ufe or 10 push; got {_preview(t)}')
    return PUSH if t == PUSH_CODE else t


def decode_card(body: bytes | str) -> Action:
    """The rules action of a ``play_card`` answer ``{"card": "C8"}``: the card name.  Other
    keys are ignored.  Raises :class:`ProtocolError` unless ``card`` is one of the 36 names
    exactly (upper case, ``10`` not ``T``).  Whether it is held and legal is the rules'
    business (:meth:`games.jass.rules.JassState.why_illegal`)."""
    msg = parse_body(body)
    if "card" not in msg:
        raise ProtocolError(f'the answer has no "card" key: reply {{"card": "C8"}}; got {_preview(msg)}')
    card = msg["card"]
    if not isinstance(card, str) or card not in CARD_INDEX:
        raise ProtocolError(
            f'"card" must be a card name: suit D/H/S/C then A, K, Q, J, 10, 9, 8, 7 or 6 '
            f'(e.g. "DA", "H10", "C6"); got {_preview(card)}')
    return card


def _preview(value: Any) -> str:
    try:
        text = _dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- log files ------------------------------------------------------------------------------
def game_log(record: Mapping) -> dict:
    """One deal in the seed's log format, every hand filled with the hand as dealt.

    ``record`` is a deal record (:meth:`games.jass.rules.JassState.deal_records`):
    ``dealer, forehand, trump, tricks, hands, complete``.  There is no ``playerView``, and
    ``jassTyp`` is ``"SCHIEBER"`` (the seed: "used in log files").  A complete deal has
    ``currentPlayer`` -1 (nobody is to act).  A deal cut short (the match ended at the
    target) is written as the kit writes a game in progress (``GameState.to_json``, which
    the kit's server stores for every game of a match): ``currentPlayer`` is the next trick's
    leader, who is also the ``first`` of a last, empty trick (no ``cards``), so no tool takes
    it for a finished game.  Both downloads (this and :func:`kit_game`) write it so.
    """
    tricks = [{"cards": list(t["cards"]), "points": t["points"], "win": t["win"], "first": t["first"]}
              for t in record["tricks"]]
    current = -1
    if not record["complete"] and tricks:
        current = tricks[-1]["win"]
        tricks.append({"first": current})
    return {
        "version": VERSION,
        "trump": record["trump"],
        "dealer": record["dealer"],
        "currentPlayer": current,
        "forehand": record["forehand"],
        "tricks": tricks,
        "player": [{"hand": list(h)} for h in record["hands"]],
        "jassTyp": JASS_SCHIEBER,
    }


def _int_field(data: Mapping, key: str, allowed: range | tuple, where: str = "") -> int:
    value = data.get(key)
    if type(value) is not int or value not in allowed:
        raise ProtocolError(f"{where}{key!r} must be one of {list(allowed)}, got {_preview(value)}")
    return value


def read_game_log(data: Mapping) -> dict:
    """Check and read one logged deal (seed format) into a deal record.

    Accepts every hand as dealt (our logs, the seed), the cards still held (the kit: empty
    hands for a finished deal), or no hands with all nine tricks; ``version`` "V0.2" or
    absent; ``forehand`` or the obsolete ``tss``.  Checks that each trick follows the
    previous one's winner, that every card is played once by the seat holding it, and that
    any ``win``/``points`` given are right.  It does not check that the plays were legal
    (the kit allows some under-trumps); replay the record with
    :func:`games.jass.rules.deal_actions` for that.

    Returns ``{"dealer", "forehand" (1/0), "declarer", "trump", "tricks" (with win/points),
    "hands" (as dealt), "points" [N-S, E-W] (trick points, no Match bonus), "match" (team or
    None), "complete"}``.  Raises :class:`ProtocolError` saying what is wrong.
    """
    if not isinstance(data, Mapping):
        raise ProtocolError(f"a logged game must be a JSON object, got {type(data).__name__}")
    if data.get("version", VERSION) != VERSION:
        raise ProtocolError(f'"version" must be "{VERSION}", got {_preview(data.get("version"))}')
    dealer = _int_field(data, "dealer", range(4))
    trump = _int_field(data, "trump", range(6))
    if "forehand" in data:
        forehand = _int_field(data, "forehand", (0, 1))
    else:
        forehand = 0 if data.get("tss") == 1 else 1
    forehand_player = NEXT[dealer]
    declarer = forehand_player if forehand == 1 else PARTNER[forehand_player]

    raw_tricks = data.get("tricks")
    if isinstance(raw_tricks, list) and raw_tricks and isinstance(raw_tricks[-1], Mapping) \
            and not raw_tricks[-1].get("cards"):
        raw_tricks = raw_tricks[:-1]  # the kit writes the next trick's leader as an empty trick
    if not isinstance(raw_tricks, list) or len(raw_tricks) > TRICKS_PER_DEAL:
        raise ProtocolError(f'"tricks" must be a list of at most 9 tricks, got {_preview(raw_tricks)}')
    tricks = []
    played = [0, 0, 0, 0]
    seen = 0
    points = [0, 0]
    tricks_won = [0, 0]
    leader = forehand_player
    for i, raw in enumerate(raw_tricks):
        where = f"trick {i + 1}: "
        if not isinstance(raw, Mapping):
            raise ProtocolError(f"{where}must be an object, got {_preview(raw)}")
        names = raw.get("cards")
        if not isinstance(names, list) or len(names) != 4:
            raise ProtocolError(f"{where}a logged game holds complete tricks of 4 cards, got {_preview(names)}")
        first = _int_field(raw, "first", range(4), where)
        if first != leader:
            raise ProtocolError(f"{where}'first' is {first} but {leader} must lead it")
        cards = []
        seat = first
        for name in names:
            c = CARD_INDEX.get(name) if isinstance(name, str) else None
            if c is None:
                raise ProtocolError(f"{where}{_preview(name)} is not a card name")
            if seen >> c & 1:
                raise ProtocolError(f"{where}{name} was already played")
            seen |= 1 << c
            played[seat] |= 1 << c
            cards.append(c)
            seat = NEXT[seat]
        last = i == TRICKS_PER_DEAL - 1
        win = trick_winner(cards, first, trump)
        pts = trick_points(cards, trump, last)
        if "win" in raw and raw["win"] != win:
            raise ProtocolError(f"{where}'win' is {_preview(raw['win'])} but the cards make {win} the winner")
        if "points" in raw and raw["points"] != pts:
            raise ProtocolError(f"{where}'points' is {_preview(raw['points'])} but the cards are worth {pts}")
        tricks.append({"cards": list(names), "points": pts, "win": win, "first": first})
        points[win & 1] += pts
        tricks_won[win & 1] += 1
        leader = win

    hands = _dealt_hands(data.get("player"), played, len(tricks))
    complete = len(tricks) == TRICKS_PER_DEAL
    match = next((team for team in (0, 1) if tricks_won[team] == TRICKS_PER_DEAL), None)
    return {"dealer": dealer, "forehand": forehand, "declarer": declarer, "trump": trump,
            "tricks": tricks, "hands": hands, "points": points, "match": match, "complete": complete}


def _dealt_hands(players: Any, played: list[int], n_tricks: int) -> list[list[str]]:
    """The hands as dealt from the log's ``player`` entries and the cards each seat played."""
    if not isinstance(players, list) or len(players) != 4:
        raise ProtocolError(f'"player" must be a list of four {{"hand": [...]}} entries, got {_preview(players)}')
    given = []
    for seat, entry in enumerate(players):
        hand = entry.get("hand") if isinstance(entry, Mapping) else None
        if not isinstance(hand, list):
            raise ProtocolError(f'player {seat}: needs a "hand" list, got {_preview(entry)}')
        try:
            given.append(names_to_mask(hand))
        except ValueError as exc:
            raise ProtocolError(f"player {seat}: {exc}") from None
    if all(g & p == p and bin(g).count("1") == 9 for g, p in zip(given, played)):
        dealt = given  # hands as dealt
    elif all(not g & p for g, p in zip(given, played)):
        dealt = [g | p for g, p in zip(given, played)]  # cards still held
    else:
        raise ProtocolError("the hands are neither the hands as dealt nor the cards still held")
    for seat, hand in enumerate(dealt):
        if bin(hand).count("1") != 9:
            missing = "" if n_tricks == TRICKS_PER_DEAL else " (a deal cut short needs its hands)"
            raise ProtocolError(f"player {seat}: the deal gives {bin(hand).count('1')} cards, not 9{missing}")
    if dealt[0] | dealt[1] | dealt[2] | dealt[3] != (1 << 36) - 1:
        raise ProtocolError("the hands do not hold each of the 36 cards once")
    return [[CARD_NAMES[c] for c in range(36) if h >> c & 1] for h in dealt]


def kit_game(record: Mapping) -> dict:
    """One deal as the kit's ``GameState.to_json`` writes it: :func:`game_log` (a deal cut
    short included) with the cards still held in the hands (empty for a complete deal)."""
    game = game_log(record)
    played = {card for trick in record["tricks"] for card in trick["cards"]}
    game["player"] = [{"hand": [card for card in hand if card not in played]} for hand in record["hands"]]
    return game


def log_line(record: Mapping, date: datetime, player_ids: list[int], extra: Mapping | None = None) -> str:
    """The kit's JSON-lines entry for one deal (no trailing newline):
    ``{"game": <kit_game(record)>, "date": "dd.mm.yy HH:MM:SS", "player_ids": [4 ints], **extra}``.
    The kit reads only the first three keys; ``extra`` carries what it has no place for."""
    entry = {"game": kit_game(record), "date": date.strftime(DATE_FORMAT), "player_ids": list(player_ids),
             **(extra or {})}
    return _dumps(entry)


def read_log_line(line: bytes | str) -> dict:
    """Read one JSON-lines entry: ``{"game": <deal record>, "date": datetime, "player_ids":
    list, "player_names": [4 str] | None, "arena": dict | None}`` (see :func:`read_game_log`;
    the last two are written by our export only).  Raises :class:`ProtocolError`."""
    entry = parse_body(line)
    for key in ("game", "date", "player_ids"):
        if key not in entry:
            raise ProtocolError(f'a log line needs "game", "date" and "player_ids"; "{key}" is missing')
    try:
        date = datetime.strptime(entry["date"], DATE_FORMAT)
    except (TypeError, ValueError):
        raise ProtocolError(f'"date" must look like "31.12.22 23:59:59", got {_preview(entry["date"])}') from None
    if not isinstance(entry["player_ids"], list) or len(entry["player_ids"]) != 4:
        raise ProtocolError(f'"player_ids" must be a list of four ids, got {_preview(entry["player_ids"])}')
    names = entry.get("player_names")
    if names is not None and (not isinstance(names, list) or len(names) != 4
                              or not all(isinstance(n, str) for n in names)):
        raise ProtocolError(f'"player_names" must be a list of four names, got {_preview(names)}')
    arena = entry.get("arena")
    if arena is not None and not isinstance(arena, Mapping):
        raise ProtocolError(f'"arena" must be an object, got {_preview(arena)}')
    return {"game": read_game_log(entry["game"]), "date": date, "player_ids": list(entry["player_ids"]),
            "player_names": names, "arena": dict(arena) if arena else None}
