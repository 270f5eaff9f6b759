"""Hanabi as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

import json

from django.conf import settings

from games.arena.play import replay
from games.arena.play.seats import Answer
from games.arena.registry import ConfigField, Door, GameSpec, register
from games.hanabi import hanablive, rules
from games.hanabi.bots import BUILTIN_BOTS
from games.hanabi.transport import forced_discard, start_sockets


async def take_sockets(arena):
    """The WebSocket door's start (awaited, as every door's): :func:`start_sockets`."""
    return start_sockets(arena)


class HanabiSpec(GameSpec):
    """Hanabi: 2 to 5 players, bots over WebSocket on a port of its own (JSON as the original
    server)."""

    # ---- Rules and configuration
    slug = "hanabi"
    title = "Hanabi"
    config_fields = (ConfigField("players", "Players", rules.MIN_PLAYERS, rules.MAX_PLAYERS, 3),)
    builtin_bots = BUILTIN_BOTS
    cooperative = True  # the players score together: no rating, score statistics instead
    unique_names = True  # the wire names players (hints' target_player): one name, one player

    new_state = staticmethod(rules.new_state)
    normalize_config = staticmethod(rules.normalize_config)

    def num_seats(self, config) -> int:
        return config["players"]

    def auto_config(self) -> dict:
        return {"players": 2}

    # ---- People
    standin = "convention"
    strongest_bot = "convention"

    def human_prompt(self, state: rules.HanabiState, seat: int) -> tuple[str, float]:
        """Only the player on turn is asked: a hint, a play or a discard."""
        return "turn", settings.ARENA["HUMAN_DEADLINE"]

    def human_timeout_answer(self, state: rules.HanabiState, seat: int, seconds: float) -> Answer:
        """Silence on turn discards a card for the player, as for a bot (transport.py)."""
        return Answer(forced_discard(state, seat), True, f"no move within {seconds:g} s")

    def human_action_ok(self, state: rules.HanabiState, seat: int, action) -> bool:
        return state.is_legal(seat, action)

    # ---- Bot access
    doors = (Door("WebSocket JSON", "websocket", "HANABI_HOST", "HANABI_PORT",
                  note="Bots: connect a WebSocket to port {port} (any path), JSON as the original Hanabi server. "
                       "A bot takes the oldest open bot seat, or joins the automatic table; any player there "
                       "starts it with GAME_START_REQUEST, and the last to join moves first.",
                  start=take_sockets),)
    bot_deadline_setting = "HANABI_BOT_DEADLINE"
    key_note = 'Add it to your CONNECTION_REQUEST: {"msg_type": "CONNECTION_REQUEST", "name": "my-bot", "key": "arena-key-…"}.'

    # ---- Files
    exports = {"hanablive": "hanab.live game (JSON)"}
    import_formats = ("hanab.live game JSON (its /export/<id> output), No Variant, 2 to 5 players",)
    import_accept = ".json,application/json"
    external_replay_label = "Open in hanab.live"

    def export(self, fmt, match, state, names, params, details_for=()) -> tuple[str, str, str]:
        """The game as hanab.live's JSON (its replay viewer and its ``/replay-json/`` loader)."""
        game = hanablive.export_game(names, state.faces, state.history, seed=str(match.seed))
        return f"hanabi-match{match.pk}.json", "application/json", json.dumps(game, indent=1)

    import_match = staticmethod(hanablive.import_game)

    def external_replay_url(self, match, state, names, params) -> str:
        """hanab.live's replay viewer on this game (the compact form of its export)."""
        return hanablive.replay_url(hanablive.export_game(names, state.faces, state.history))

    # ---- Presentation
    seats_note = ('"Open" seats wait for a person who opens the table\'s page, or for the next bot '
                  "that connects to the Hanabi port.")

    def seat_label(self, config, index: int) -> str:
        return f"Player {index + 1}"

    def describe_config(self, config) -> list[str]:
        return [f"{config['players']} players", "third misplay ends the game"]

    def moves_so_far(self, match) -> list[dict]:
        """Every move made so far, in play order: ``{"n": move number from 1, "happening":
        the rules' happening (a play or discard shows the card that left the hand, a hint the
        cards it touched), "forced": [public reasons]}``, re-run from the event log.  Public
        facts only: what every player saw happen."""
        state = rules.new_state(match.config, match.seed)
        moves = []
        for _, answers in replay.logged_steps(match.pk):
            try:
                happenings = state.apply({a["seat"]: a["action"] for a in answers})
            except (ValueError, KeyError, TypeError):
                break  # a damaged log: the moves up to it
            forced = [a["reason"] for a in answers if a["forced"]]
            moves += [{"n": len(state.history), "happening": h, "forced": forced}
                      for h in happenings if h["type"] != "game_over"]
        return moves

    def pause_after(self, happenings) -> bool:
        """Never: there are no rounds, every turn is shown as it happens."""
        return False


SPEC = register(HanabiSpec())
