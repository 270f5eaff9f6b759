"""Jass log files in and out: the seed's log format (every hand filled) and the kit's JSON
lines (``{"game": ..., "date": "dd.mm.yy HH:MM:SS", "player_ids": [...]}``).

Export works from a replayed match state (its deal records); import turns a file into what
the arena needs to store a match that replays like one played here: a configuration whose
preset ``deals`` give the logged hands, and the steps as ``(seat, action)`` pairs.
"""
from __future__ import annotations

import json
from datetime import datetime

from games.base import ProtocolError
from games.jass import protocol, rules

#: Games (deals) one imported file may hold.
MAX_IMPORTED_DEALS = rules.MAX_DEALS


def export_log(state: rules.JassState, deal: int | None = None) -> str:
    """One deal (``deal``, 1-based) as a seed-format JSON object, or every deal as a JSON
    array of them.  Raises ``ValueError`` for a deal that was not played."""
    records = state.deal_records()
    if deal is not None:
        if not 1 <= deal <= len(records):
            raise ValueError(f"this match has games 1 to {len(records)}")
        return json.dumps(protocol.game_log(records[deal - 1]), indent=1)
    return json.dumps([protocol.game_log(r) for r in records], indent=1)


def export_jsonl(state: rules.JassState, date: datetime, player_ids: list) -> str:
    """Every deal as one kit JSON line."""
    return "".join(protocol.log_line(r, date, player_ids) + "\n" for r in state.deal_records())


def read_file(text: str) -> tuple[list[dict], list | None, datetime | None]:
    """Read a log file in any of the accepted shapes: kit JSON lines, one seed-format game,
    or a JSON array of them.  Returns (deal records, player ids or None, date or None).
    Raises :class:`ProtocolError` naming the line or game that is wrong."""
    stripped = text.strip()
    if not stripped:
        raise ProtocolError("the file is empty")
    records, player_ids, date = [], None, None
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        games = whole
    elif isinstance(whole, dict) and "game" not in whole:
        games = [whole]
    else:
        games = None
    if games is not None:
        for i, game in enumerate(games, 1):
            try:
                records.append(protocol.read_game_log(game))
            except ProtocolError as exc:
                raise ProtocolError(f"game {i}: {exc}") from None
    else:
        for number, line in enumerate(stripped.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = protocol.read_log_line(line)
            except ProtocolError as exc:
                raise ProtocolError(f"line {number}: {exc}") from None
            records.append(entry["game"])
            player_ids = player_ids or entry["player_ids"]
            date = date or entry["date"]
    if len(records) > MAX_IMPORTED_DEALS:
        raise ProtocolError(f"at most {MAX_IMPORTED_DEALS} games in one file")
    return records, player_ids, date


def import_match(text: str) -> dict:
    """A log file as a match to store: ``{"config", "steps": [(seat, action)], "names":
    [4 str] | None, "date": datetime | None}``.  The configuration replays exactly these
    deals (``deals``), counts to no target and stops after the last one, with the Match bonus
    off (logs from the kit are scored without it) and the HSLU server's under-trumping rule
    (kit agents play by it, so a kit file holds such plays).  Raises :class:`ProtocolError`."""
    records, player_ids, date = read_file(text)
    config = rules.normalize_config({
        "points_to_win": rules.MAX_POINTS_TO_WIN, "match_bonus": False, "max_deals": len(records),
        "hslu_undertrump": True,
        "deals": [{"dealer": r["dealer"], "hands": r["hands"]} for r in records],
    })
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
    names = [str(p)[:40] for p in player_ids] if player_ids else None
    return {"config": config, "steps": steps, "names": names, "date": date}
