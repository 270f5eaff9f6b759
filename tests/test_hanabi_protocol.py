"""Hanabi's wire views, built per recipient (games/hanabi/protocol.py), checked in-process
against the truth: every response a seat gets shows it the faces of the others' cards and
never its own, the card it draws included; played and discarded cards are public.  Random
games straight through the rules, no server, so that mutation testing reaches the codec."""
from __future__ import annotations

import json
import random

import pytest

from games.hanabi import protocol, rules


def faces(state: rules.HanabiState) -> dict[int, tuple[str, str]]:
    """Card id -> (color, wire number) of every card in a hand (the truth)."""
    return {c["id"]: (c["color"], protocol.NUMBERS[c["number"] - 1])
            for hand in state.full_observation()["hands"] for c in hand}


def check_game_state(game_state: dict, recipient: int, state: rules.HanabiState, truth: dict,
                     names: list[str]) -> None:
    """The recipient sees every other hand's faces as they are, and of its own only what it
    was told by hints (the rules' knowledge of each card), never more."""
    players = state.full_observation()["players"]
    known = {c["id"]: c["knowledge"] for c in state.observation(recipient)["hands"][recipient]}
    seats = protocol.wire_order(players)
    assert [p["name"] for p in game_state["players"]] == [names[s] for s in seats]
    for seat, player in zip(seats, game_state["players"]):
        for entry in player["cards"]:
            card, (color, number) = entry["card"], truth[entry["card"]["id"]]
            if seat == recipient:
                told = known[card["id"]]
                expected = (color if told["color"] is not None else None, number if told["number"] is not None else None)
                assert (card["color"], card["number"]) == expected, f"seat {recipient} sees its own card"
            else:
                assert (card["color"], card["number"]) == (color, number)
    assert all((c["color"], c["number"]) == (None, None) for c in game_state["deck"])


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_every_response_shows_a_seat_the_others_cards_and_never_its_own(players):
    names = [f"bot{i}" for i in range(players)]
    for seed in range(2):
        state, rng = rules.new_state({"players": players}, seed), random.Random(seed)
        for seat in range(players):
            start = json.loads(protocol.game_start_response(protocol.StateView(state), seat, names))
            check_game_state(start["game_state"], seat, state, faces(state), names)
        kinds = set()
        while not state.is_terminal():
            actor = state.to_act()[0]
            before = faces(state)
            happenings = state.apply({actor: rng.choice(state.legal_actions(actor))})
            after = faces(state)
            for happening in happenings:
                if happening["type"] not in ("play", "discard", "hint"):
                    continue
                kinds.add(happening["type"])
                for seat in range(players):
                    msg = json.loads(protocol.action_response(happening, protocol.StateView(state), seat, names))
                    check_game_state(msg["game_state"], seat, state, after, names)
                    if happening["type"] == "hint":
                        assert (msg["hinting_player"], msg["target_player"]) == \
                            (names[actor], names[happening["target"]])
                        continue
                    shown = msg["played_card" if happening["type"] == "play" else "discarded_card"]
                    assert (shown["color"], shown["number"]) == before[shown["id"]], "public once played"
                    drawn = msg["drawn_card"]
                    if drawn is not None:
                        expected = (None, None) if seat == actor else after[drawn["id"]]
                        assert (drawn["color"], drawn["number"]) == expected, (seat, actor)
        assert kinds == {"play", "discard", "hint"}


def request_frame(action: list, names: list[str]) -> str:
    """``action`` as a bot writes it from the seed: a request frame."""
    kind = action[0]
    if kind in ("play", "discard"):
        return json.dumps({"msg_type": f"{kind.upper()}_CARD_REQUEST", f"{kind}ed_card_id": action[1]})
    if kind == "color":
        return json.dumps({"msg_type": "HINT_COLOR_REQUEST", "target_player": names[action[1]], "color": action[2]})
    return json.dumps({"msg_type": "HINT_NUMBER_REQUEST", "target_player": names[action[1]],
                       "number": protocol.NUMBERS[action[2] - 1]})


@pytest.mark.parametrize("players", [2, 5])
def test_a_bots_requests_become_the_moves_it_meant(players):
    """Every legal move, written as the seed's request, is read back as that move."""
    names = [f"bot{i}" for i in range(players)]
    state, rng = rules.new_state({"players": players}, 7), random.Random(7)
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        for action in legal:
            read = protocol.request_to_action(protocol.parse_request(request_frame(action, names)), seat, names)
            assert read == list(action)
        state.apply({seat: rng.choice(legal)})
