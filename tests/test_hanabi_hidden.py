"""Hanabi hidden information: over random matches of 2 to 5 seats with people (playing
random legal moves from their views, sometimes silent) and built-in bots, no view the runner
publishes, to a seat or to spectators, shows a face of a card to anyone its holder does not
know it of, nor a card of the deck, while the game runs."""
from __future__ import annotations

import asyncio
import random

import pytest

from games.arena import registry
from games.arena.runner import MatchRunner
from games.arena.seats import BuiltinSeat, HumanSeat
from tests.test_hidden_information import Capture, NullWriter, fast_people  # noqa: F401  (fixture)

MATCHES = 8


def hidden_faces(state) -> dict:
    """Card id -> face for every card whose holder does not know its face, and the deck."""
    if state.is_terminal():
        return {}
    secret = {cid: state.faces[cid - 1] for cid in state.deck}
    for hand in state.hands:
        for cid in hand:
            k = state.knowledge(cid)
            if k["color"] is None or k["number"] is None:
                secret[cid] = state.faces[cid - 1]
    return secret


def leaks(body: dict, secrets: dict) -> list[str]:
    """Where ``body`` shows a face that is still hidden (its holder's knowledge aside)."""
    if not secrets:
        return []
    view, audience, found = body["view"], body["audience"], []
    if "deck_faces" in view:
        found.append("deck faces")
    for seat, hand in enumerate(view["hands"]):
        for card in hand:
            k = card["knowledge"]
            if (audience == seat or not isinstance(audience, int)) and \
                    (card["color"], card["number"]) != (k["color"], k["number"]):
                found.append(f"seat {seat} card {card['id']} shown to {audience}")
    last = view.get("last") or {}
    drawn = last.get("drawn")
    if drawn is not None and isinstance(drawn, dict):
        found.append("a drawn card's face")
    for answer in body.get("answers") or []:
        if isinstance(answer["action"], list) and answer["action"][0] in ("play", "discard") and len(answer["action"]) != 2:
            found.append("an answer carrying more than the card id")
    return found


async def hanabi_match(seed: int) -> Capture:
    rng = random.Random(seed)
    spec = registry.get("hanabi")
    players = rng.randint(2, 5)
    capture = Capture(rng, hidden_faces)
    endpoints = []
    for seat in range(players):
        if seat == 0 or rng.random() < 0.3:
            endpoints.append(HumanSeat(f"person {seat}", spec))
        else:
            name = rng.choice(["random", "convention"])
            endpoints.append(BuiltinSeat(name, spec.builtin_bots[name][1], seed + seat))
    runner = MatchRunner(1, spec, {"players": players}, seed, endpoints, NullWriter(), capture.publish)
    capture.runner = runner
    await asyncio.wait_for(runner.run(), 120)
    return capture


@pytest.mark.parametrize("seed", range(MATCHES))
async def test_hanabi_no_view_shows_a_face_its_holder_does_not_know(seed):
    capture = await hanabi_match(seed)
    assert capture.sent and capture.runner.state.is_terminal()
    audiences = {body["audience"] for _, body, _ in capture.sent}
    assert "public" in audiences and 0 in audiences
    for group, body, secrets in capture.sent:
        assert not leaks(body, secrets), (group, leaks(body, secrets))
