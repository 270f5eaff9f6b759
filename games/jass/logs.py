"""Jass log files in and out: the seed's log format (every hand filled) and the kit's JSON
lines (``{"game": ..., "date": "dd.mm.yy HH:MM:SS", "player_ids": [...]}``).

Export works from a replayed match state (its deal records); import turns a file into what
the arena needs to store a match that replays like one played here: a configuration whose
preset ``deals`` give the logged hands, and the steps as ``(seat, action)`` pairs.
"""
from __future__ import annotations

import json
from datetime import datetime

from games.arena.bots.json_limits import json_size_problem
from games.base import ProtocolError
from games.jass import protocol, rules

#: Games (deals) one imported file may hold.
MAX_IMPORTED_DEALS = rules.MAX_DEALS
#: JSON arrays and objects one imported file may hold: a game's log has about 33 (hands,
#: tricks, cards), so a file of MAX_IMPORTED_DEALS games about 33,000.  Counted before any
#: parsing as the brackets that open them (those inside strings too, so never fewer): parsed,
#: 5 MB of ``[],`` would be 1.7 million lists, about 100 MB.
MAX_CONTAINERS = 100_000
#: JSON values (numbers, strings, arrays, objects) one imported file may hold: a game's log
#: has about 134, so a file of MAX_IMPORTED_DEALS games about 134,000.  Counted before parsing
#: (:func:`~games.arena.bots.json_limits.json_size_problem`), as are lines: 5 MB of ``1,`` would be
#: 2.5 million numbers.
MAX_VALUES = 300_000
#: Nesting of a log: an array of games, each an object of lists of objects of lists (5).
MAX_DEPTH = 8


def export_log(state: rules.JassState, deal: int | None = None) -> str:
    """One deal (``deal``, 1-based) as a seed-format JSON object, or every deal as a JSON
    array of them.  Raises ``ValueError`` for a deal that was not played."""
    records = state.deal_records()
    if deal is not None:
        if not 1 <= deal <= len(records):
            raise ValueError(f"this match has games 1 to {len(records)}")
        return json.dumps(protocol.game_log(records[deal - 1]), indent=1)
    return json.dumps([protocol.game_log(r) for r in records], indent=1)


#: Match settings an exported JSON-lines file carries (key "arena"), so that importing it
#: scores the games as they were scored here.  The kit has no place for them.
CARRIED_SETTINGS = ("points_to_win", "match_bonus", "hslu_undertrump")


def export_jsonl(state: rules.JassState, date: datetime, names: list[str]) -> str:
    """Every deal as one kit JSON line (:func:`games.jass.protocol.log_line`).

    ``player_ids`` are the seat numbers 0-3 (the kit writes integers; names have no place
    there), the seats' names go in ``player_names`` and the match's scoring settings in
    ``arena``; the kit's reader ignores both."""
    extra = {"player_names": list(names), "arena": {key: getattr(state, key) for key in CARRIED_SETTINGS}}
    return "".join(protocol.log_line(r, date, [0, 1, 2, 3], extra) + "\n" for r in state.deal_records())


def read_file(text: str) -> tuple[list[dict], list | None, datetime | None, dict]:
    """Read a log file in any of the accepted shapes: kit JSON lines, one seed-format game,
    or a JSON array of them.  Returns (deal records, player names or ids or None, date or
    None, the settings of :data:`CARRIED_SETTINGS` the file carries).  Raises
    :class:`ProtocolError` naming the line or game that is wrong, or for a file past
    :data:`MAX_CONTAINERS` arrays and objects, :data:`MAX_VALUES` values, :data:`MAX_DEPTH`
    levels or :data:`MAX_IMPORTED_DEALS` games (all but the last checked before parsing)."""
    if not text or text.isspace():
        raise ProtocolError("the file is empty")
    if text.count("[") + text.count("{") > MAX_CONTAINERS:
        raise ProtocolError(f"the file has more than {MAX_CONTAINERS} JSON arrays and objects "
                            f"(a log of {MAX_IMPORTED_DEALS} games has about 33,000)")
    problem = json_size_problem(text, MAX_DEPTH, MAX_VALUES)
    if problem:
        raise ProtocolError(f"the file has {problem} (a log of {MAX_IMPORTED_DEALS} games has about 134,000 "
                            f"values, nested 5 levels deep)")
    records, player_ids, date, settings = [], None, None, {}
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        games = whole
    elif isinstance(whole, dict) and "game" not in whole:
        games = [whole]
    else:
        games = None
    del whole
    if games is not None:
        if len(games) > MAX_IMPORTED_DEALS:
            raise ProtocolError(f"at most {MAX_IMPORTED_DEALS} games in one file")
        for i, game in enumerate(games, 1):
            try:
                records.append(protocol.read_game_log(game))
            except ProtocolError as exc:
                raise ProtocolError(f"game {i}: {exc}") from None
    else:
        for number, line in _lines(text):
            if not line or line.isspace():
                continue
            if len(records) == MAX_IMPORTED_DEALS:
                raise ProtocolError(f"at most {MAX_IMPORTED_DEALS} games in one file")
            try:
                entry = protocol.read_log_line(line)
            except ProtocolError as exc:
                raise ProtocolError(f"line {number}: {exc}") from None
            if not records and entry["arena"]:  # the first game's line carries the match's settings
                settings = {k: entry["arena"][k] for k in CARRIED_SETTINGS if k in entry["arena"]}
            records.append(entry["game"])
            player_ids = player_ids or entry["player_names"] or entry["player_ids"]
            date = date or entry["date"]
    return records, player_ids, date, settings


def _lines(text: str):
    """``(number from 1, line)`` for each line of ``text``, one at a time (``splitlines``
    would hold them all at once: millions of empty lines are a list of millions)."""
    start, number = 0, 1
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield number, text[start:end]
        start, number = end + 1, number + 1



def import_match(text: str) -> dict:
    """A log file as a match to store: ``{"config", "steps": [(seat, action)], "names":
    [4 str] | None, "date": datetime | None}``.  The configuration replays exactly these
    deals (``deals``) and stops after the last one.  A file we exported carries its match's
    target, Match bonus and under-trumping rule (``arena``), so the import scores and ends
    exactly as the match did; any other file counts to no target, with the Match bonus off
    (the kit scores without it) and the HSLU server's under-trumping rule (kit agents play by
    it, so a kit file holds such plays).  Raises :class:`ProtocolError`, also for settings
    out of range."""
    records, player_ids, date, carried = read_file(text)
    try:
        config = rules.normalize_config({
            "points_to_win": rules.MAX_POINTS_TO_WIN, "match_bonus": False, "hslu_undertrump": True,
            **carried, "max_deals": len(records),
            "deals": [{"dealer": r["dealer"], "hands": r["hands"]} for r in records],
        })
    except ValueError as exc:
        raise ProtocolError(f'"arena": {exc}') from None
    state = rules.new_state(config, 0)
    steps = []
    for number, record in enumerate(records, 1):
        for seat, action in rules.deal_actions(record):
            problem = state.why_illegal(seat, action)
            if problem:
                raise ProtocolError(f"game {number}: {rules.SEAT_NAMES[seat]} cannot play {action!r}: {problem}")
            state.apply({seat: action})
            steps.append((seat, action))
        if not record["complete"]:
            break  # a game cut short ends the log
    return {"config": config, "steps": steps, "names": seat_names(player_ids), "date": date}


def seat_names(player_ids: list | None) -> list[str]:
    """Names for an imported match's seats: the names our export wrote, else each seat's
    name with the kit's player id ("North (player 7)": the kit's own arena writes 0 for all
    four), else the seat names."""
    if not player_ids:
        return list(rules.SEAT_NAMES)
    if all(isinstance(p, str) for p in player_ids):
        return [p[:40] for p in player_ids]
    return [f"{seat} (player {str(p)[:20]})" for seat, p in zip(rules.SEAT_NAMES, player_ids)]
