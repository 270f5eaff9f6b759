"""Contract bridge as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

from datetime import datetime

from django.conf import settings

from games.arena.play.seats import Answer
from games.arena.registry import AnalysisBusy, ConfigField, Door, GameSpec, register
from games.bridge import analysis, files, protocol, rules, table_manager, transport
from games.bridge.bots import BUILTIN_BOTS

#: Most boards a table made on the form plays (a team match plays each twice).
MAX_TABLE_BOARDS = 32


class BridgeSpec(GameSpec):
    """Contract bridge: four seats in two partnerships (North-South, East-West), duplicate
    boards (optionally a team match at one table: instant replay, IMPs) or a rubber."""

    # ---- Rules and configuration
    slug = "bridge"
    title = "Contract bridge"
    config_fields = (
        ConfigField("scoring", "Scoring", 0, 0, "duplicate", kind="choice",
                    choices=(("duplicate", "Duplicate: each board scored alone"),
                             ("rubber", "Rubber bridge: above and below the line"))),
        ConfigField("boards", "Boards (a rubber ends sooner when a side wins two games)", 1, MAX_TABLE_BOARDS, 4),
        ConfigField("replay", "Team match: each board played twice, the hands turned one seat, "
                    "scored in IMPs (duplicate only)", 0, 1, 0, kind="bool"),
    )
    builtin_bots = BUILTIN_BOTS
    rating_anchor = "random"

    new_state = staticmethod(rules.new_state)
    normalize_config = staticmethod(rules.normalize_config)

    def num_seats(self, config) -> int:
        return 4

    def auto_config(self) -> dict:
        """``BRIDGE_AUTO_BOARDS`` duplicate boards, each played twice with ``BRIDGE_AUTO_REPLAY``
        (the instant replay robots play at one table, BEN's board N "Open" then "Closed")."""
        cfg = settings.ARENA
        return {"scoring": "duplicate", "boards": cfg["BRIDGE_AUTO_BOARDS"], "replay": cfg["BRIDGE_AUTO_REPLAY"]}

    # ---- People
    standin = "rules"
    strongest_bot = "rules"
    person_seat = 2  # South: the table draws its own player at the bottom

    def human_prompt(self, state: rules.BridgeState, seat: int) -> tuple[str, float]:
        """A call in the auction, else a card: from the person's own hand, or from dummy's
        when the person is declarer and dummy's hand is to play (``state.player``)."""
        kind = "call" if state.phase == 0 else ("dummy_card" if state.player != seat else "card")
        return kind, settings.ARENA["HUMAN_DEADLINE"]

    def human_timeout_answer(self, state: rules.BridgeState, seat: int, seconds: float) -> Answer:
        """Silence gets what a silent bot gets (docs/bridge-protocol.md, deadlines): a pass,
        or the lowest legal card, recorded as forced."""
        action = protocol.forced_action(state.legal_actions(seat))
        return Answer(action, True, f"no move within {seconds:g} s: "
                      + ("pass" if action == "P" else "lowest legal card"))

    def human_action_ok(self, state: rules.BridgeState, seat: int, action) -> bool:
        return isinstance(action, str) and state.is_legal(seat, action)

    # ---- Bot access
    doors = (
        Door("text protocol", "tcp", "BRIDGE_HOST", "BRIDGE_PORT", "/protocols/bridge/",
             note="Bots: connect over TCP to port {port} and speak the text protocol (one message per line, "
                  "HELLO first, then JOIN-M or JOIN-T).",
             start=transport.start_listener),
        Door("Blue Chip table manager", "tcp", "BRIDGE_HOST", "BRIDGE_TABLE_MANAGER_PORT",
             note="Robots that speak the Blue Chip Bridge table manager protocol (version 18 or 19: "
                  "WBridge5, Jack, GIB, Bridge Baron, BEN) connect to port {port} unchanged, one "
                  "connection per seat.",
             start=table_manager.start_listener),
    )
    bot_deadline_setting = "BRIDGE_BOT_DEADLINE"
    key_note = 'Quote your name and add the key to HELLO: HELLO "my-bot" arena-key-….'

    # ---- Files
    exports = {"pbn": "PBN (Portable Bridge Notation)", "lin": "LIN (Bridge Base Online)"}
    import_formats = (
        "PBN (Portable Bridge Notation): one game per board with its Deal tag, Auction and Play sections;",
        "LIN (Bridge Base Online): a handviewer board or a file of boards (md|, mb|, pc|).",
        "Every board must be played to its last card (or passed out): the replay has no claims.",
    )
    import_encodings = ("utf-8", files.PBN_ENCODING)  # PBN's standard set is ISO 8859-1
    import_accept = ".pbn,.lin,.txt,text/plain"
    #: One board per link: BBO's handviewer shows one deal, and a whole match's LIN (about
    #: 600 characters a board) would make addresses too long to pass; the match page's header
    #: opens the first board and its analysis links every board (``?board=N``).
    external_replay_label = "Open in BBO's handviewer"
    analysis_label = "Double-dummy analysis"
    analysis_template = "analysis/bridge.html"

    def export(self, fmt, match, state, names, params, details_for=()) -> tuple[str, str, str]:
        """Every finished board (of an aborted match, those finished before it stopped) as PBN
        or LIN (games/bridge/files.py).  Neither format carries forced moves' details, so
        ``details_for`` has nothing to choose.  Raises ``ValueError`` when no board finished."""
        records = state.board_records()
        if not records:
            raise ValueError("no board was finished")
        if fmt == "pbn":
            day = (match.finished_at or match.created_at).date()
            text = files.export_pbn(records, names, event=f"{self.title} #{match.pk}", site="the arena", day=day)
            # the response encodes the text in the charset named (export_pbn keeps to it)
            return f"bridge-match{match.pk}.pbn", f"text/plain; charset={files.PBN_ENCODING}", text
        return f"bridge-match{match.pk}.lin", "text/plain; charset=utf-8", files.export_lin(records, names)

    def import_match(self, text: str) -> dict:
        """A PBN or LIN file's boards as a duplicate match (:func:`files.match_import`); seats
        the file leaves unnamed are named by their place; a PBN Date (``YYYY.MM.DD``) dates it."""
        boards = files.read_boards(text)
        parsed = files.match_import(boards)
        parsed["names"] = [name or rules.SEAT_NAMES[i] for i, name in enumerate(parsed["names"])]
        try:
            parsed["date"] = datetime.strptime(boards[0]["date"], "%Y.%m.%d")
        except ValueError:
            pass
        return parsed

    def external_replay_url(self, match, state, names, params) -> str:
        """BBO's handviewer on one finished board: ``?board=N``, its place in the match from 1
        (default the first).  Raises ``ValueError`` for a board the match does not have."""
        records = state.board_records()
        place = params.get("board", "1")
        if not (place.isascii() and place.isdigit() and 1 <= int(place[:6]) <= len(records)):
            raise ValueError(f"this match has boards 1 to {len(records)}")
        return files.handviewer_url(records[int(place) - 1], names)

    def analysis_subjects(self, state: rules.BridgeState) -> list[dict]:
        """Each finished board as played: ``board``, ``room`` (a team match's) or None,
        ``dealer``, ``vulnerability``, ``hands`` (what DDS reads) and ``heading``, the line
        the match page shows above its table."""
        subjects = []
        for record in state.board_records():
            played = "passed out" if record["result"] == "Pass" else f"{record['result']}, N–S {record['score']:+d}"
            room = record.get("room")
            heading = (f"Board {record['board']}{f' ({room} room)' if room else ''} · dealer "
                       f"{rules.SEAT_NAMES[record['dealer']]} · vulnerable: {record['vulnerability']} · "
                       f"played: {played}")
            subjects.append({"board": record["board"], "room": room, "dealer": record["dealer"],
                             "vulnerability": record["vulnerability"], "hands": record["hands"],
                             "heading": heading})
        return subjects

    async def analyse(self, subject: dict) -> dict:
        """The board's double-dummy table and par (games/bridge/analysis.py), in its worker
        processes; never endplay in this one."""
        try:
            return await analysis.analyse_record(subject)
        except analysis.AnalysisBusy as exc:
            raise AnalysisBusy(str(exc)) from None

    # ---- Presentation
    seats_note = ("North and South play together against East and West. \"Open\" seats wait for a person who "
                  "opens the table's page, or for the next bot that connects.")

    def seat_label(self, config, index: int) -> str:
        return f"{rules.SEAT_NAMES[index]} · {'N–S' if index % 2 == 0 else 'E–W'}"

    def seat_tag(self, config, index: int) -> str:
        return rules.SEAT_LETTERS[index]

    def teams(self, config) -> list[tuple[str, tuple[int, ...]]]:
        return [("N–S", (0, 2)), ("E–W", (1, 3))]

    def pause_after(self, happenings: list[dict]) -> bool:
        """People at the table get a moment to read a board's result, not each trick (the
        page keeps the last trick on show)."""
        return any(h.get("type") == "board_over" for h in happenings)

    def describe_config(self, config) -> list[str]:
        """E.g. ``["4 boards", "duplicate", "team match: each board twice, IMPs"]``."""
        n = config.get("boards", 1)
        if config.get("scoring") == "rubber":
            return ["rubber bridge", f"at most {n} deal{'s' if n != 1 else ''}"]
        out = [f"{n} board{'s' if n != 1 else ''}", "duplicate"]
        if config.get("replay"):
            out.append("team match: each board twice, IMPs")
        return out


SPEC = register(BridgeSpec())
