"""Hanabi as the arena sees it: the :class:`GameSpec` that plugs it in."""
from __future__ import annotations

import json

from django.conf import settings

from games.arena.registry import ConfigField, GameSpec, register
from games.arena.seats import Answer
from games.hanabi import hanablive, rules
from games.hanabi.bots import BUILTIN_BOTS
from games.hanabi.transport import forced_discard


def human_prompt(state: rules.HanabiState, seat: int) -> tuple[str, float]:
    """Only the player on turn is asked: a hint, a play or a discard."""
    return "turn", settings.ARENA["HUMAN_DEADLINE"]


def human_timeout_answer(state: rules.HanabiState, seat: int, seconds: float) -> Answer:
    """Silence on turn discards a card for the player, as for a bot (transport.py)."""
    return Answer(forced_discard(state, seat), True, f"no move within {seconds:g} s")


def _export_hanablive(match, state, names, params) -> tuple[str, str, str]:
    """The game as hanab.live's JSON (its replay viewer and its ``/replay-json/`` loader)."""
    game = hanablive.export_game(names, state.faces, state.history, seed=str(match.seed))
    return f"hanabi-match{match.pk}.json", "application/json", json.dumps(game, indent=1)


def _hanablive_url(match, state, names) -> str:
    """hanab.live's replay viewer on this game (the compact form of its export)."""
    return hanablive.replay_url(hanablive.export_game(names, state.faces, state.history))


async def _start_sockets(arena):
    from games.hanabi.transport import start_sockets

    return start_sockets(arena)


SPEC = register(GameSpec(
    slug="hanabi",
    title="Hanabi",
    new_state=rules.new_state,
    normalize_config=rules.normalize_config,
    num_seats=lambda config: config["players"],
    describe_config=lambda c: [f"{c['players']} players", "third misplay ends the game"],
    config_fields=(ConfigField("players", "Players", rules.MIN_PLAYERS, rules.MAX_PLAYERS, 3),),
    builtin_bots=BUILTIN_BOTS,
    human_auto_answer=lambda state, seat: None,
    human_prompt=human_prompt,
    human_timeout_answer=human_timeout_answer,
    human_action_ok=lambda state, seat, action: state.is_legal(seat, action),
    auto_config=lambda: {"players": 2},
    exports={"hanablive": ("hanab.live game (JSON)", _export_hanablive)},
    import_match=hanablive.import_game,
    external_replay=("Open in hanab.live", _hanablive_url),
    import_formats=("hanab.live game JSON (its /export/<id> output), No Variant, 2 to 5 players",),
    import_accept=".json,application/json",
    start_listener=_start_sockets,
    bot_socket_address=lambda: (settings.ARENA["HANABI_HOST"], settings.ARENA["HANABI_PORT"]),
    protocol_note="Bots: connect a WebSocket to port {port} (any path), JSON as the original Hanabi server. "
                  "A bot takes the oldest open bot seat, or joins the automatic table; any player there "
                  "starts it with GAME_START_REQUEST, and the last to join moves first.",
    seats_note='"Open" seats wait for a person who opens the table\'s page, or for the next bot '
               "that connects to the Hanabi port.",
    seat_label=lambda config, index: f"Player {index + 1}",
    standin="convention",
    strongest_bot="convention",
    pause_after=lambda happenings: False,  # no rounds: every turn is shown as it happens
))
