"""Contract bridge as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

from django.conf import settings

from games.arena.registry import ConfigField, GameSpec, register
from games.arena.seats import Answer
from games.bridge import protocol, rules
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
    bot_access = "tcp"
    bot_deadline_setting = "BRIDGE_BOT_DEADLINE"

    async def start_listener(self, arena):
        """The Blue Chip table manager on ``BRIDGE_TABLE_MANAGER_PORT``
        (games/bridge/table_manager.py)."""
        from games.bridge.table_manager import start_listener

        return await start_listener(arena)

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
