"""Jass (Schieber) as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

import random

from django.conf import settings

from games.arena.play.seats import Answer
from games.arena.registry import ConfigField, Door, GameSpec, register
from games.jass import logs, rules, transport
from games.jass.bots import BUILTIN_BOTS


class JassSpec(GameSpec):
    """Jass (Schieber): four seats in two teams, bots as HTTP services the server calls."""

    # ---- Rules and configuration
    slug = "jass"
    title = "Jass (Schieber)"
    config_fields = (
        ConfigField("points_to_win", "Points to win", 100, 5000, 1000),
        ConfigField("match_bonus", "Match bonus: 257 points for taking all nine tricks", 0, 1, 1, kind="bool"),
        ConfigField("max_deals", "Stop after this many games (0: no limit)", 0, 100, 0),
        ConfigField("hslu_undertrump", "Under-trumping as the HSLU server allows it (for kit bots): a trump "
                    "under the best one in the trick is allowed if it beats the trump there with the lowest "
                    "plain rank (A K Q J 10 9 8 7 6)", 0, 1, 0, kind="bool"),
    )
    builtin_bots = BUILTIN_BOTS

    new_state = staticmethod(rules.new_state)
    normalize_config = staticmethod(rules.normalize_config)

    def num_seats(self, config) -> int:
        return 4

    # ---- People
    standin = "rules"
    strongest_bot = "rules"
    person_seat = 2  # South: the table draws its own player at the bottom

    def human_prompt(self, state: rules.JassState, seat: int) -> tuple[str, float]:
        """A person declares trump (or pushes) or plays a card within the human deadline."""
        return ("trump" if state.trump < 0 else "card"), settings.ARENA["HUMAN_DEADLINE"]

    def human_timeout_answer(self, state: rules.JassState, seat: int, seconds: float) -> Answer:
        """Silence gets what a silent bot gets: a random valid move, recorded as forced."""
        return Answer(random.choice(state.legal_actions(seat)), True,
                      f"no move within {seconds:g} s: random valid move")

    def human_action_ok(self, state: rules.JassState, seat: int, action) -> bool:
        return state.is_legal(seat, action)

    # ---- Bot access
    doors = (Door("JSON V0.2 over HTTP", "http"),)
    bot_deadline_setting = "JASS_BOT_DEADLINE"

    http_bot_endpoint = staticmethod(transport.endpoint_for)
    http_bot_probe = staticmethod(transport.probe)

    # ---- Files
    exports = {"log": "seed log format (JSON, all four hands)", "jsonl": "kit JSON lines"}
    import_formats = ("the jass server's log format: one game as JSON with all four hands, or a JSON array of games;",
                      'the jass-kit\'s JSON lines: one {"game": …, "date": …, "player_ids": …} per line.')
    import_accept = ".json,.jsonl,.txt,application/json"

    def export(self, fmt, match, state, names, params, details_for=()) -> tuple[str, str, str]:
        """"log": the seed log format, the whole match or with ``?deal=N`` its N-th game;
        "jsonl": the kit's JSON lines (logs.py)."""
        if fmt == "log":
            deal = params.get("deal")
            deal = int(deal) if deal and deal.isdigit() else None
            suffix = f"-game{deal}" if deal else ""
            return f"jass-match{match.pk}{suffix}.json", "application/json", logs.export_log(state, deal)
        when = match.finished_at or match.created_at
        return f"jass-match{match.pk}.jsonl", "application/x-ndjson", logs.export_jsonl(state, when, names)

    import_match = staticmethod(logs.import_match)

    # ---- Presentation
    seats_note = ("North and South play together against East and West. Bots are HTTP services the "
                  "server calls: register yours on the Bots page to seat it here.")

    def seat_label(self, config, index: int) -> str:
        return f"{rules.SEAT_NAMES[index]} · team {'N–S' if index % 2 == 0 else 'E–W'}"

    def seat_tag(self, config, index: int) -> str:
        return "NESW"[index]

    def teams(self, config) -> list[tuple[str, tuple[int, ...]]]:
        return [("N–S", (0, 2)), ("E–W", (1, 3))]

    def describe_config(self, config) -> list[str]:
        """The match header's phrases: the target (none for an imported log, which counts to no
        target), the Match bonus, a game limit and the HSLU under-trumping rule when on."""
        out = []
        if config.get("points_to_win", 0) < rules.MAX_POINTS_TO_WIN:
            out.append(f"{config['points_to_win']} points to win")
        out.append("Match bonus 257" if config.get("match_bonus") else "no Match bonus")
        if config.get("max_deals"):
            n = config["max_deals"]
            out.append(f"at most {n} game{'s' if n != 1 else ''}")
        if config.get("hslu_undertrump"):
            out.append("under-trumping as the HSLU server")
        return out


SPEC = register(JassSpec())
