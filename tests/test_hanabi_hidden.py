"""Hanabi hidden information: over random matches of 2 to 5 seats with people (playing
random legal moves from their views, sometimes silent) and built-in bots, no view the runner
publishes, to a seat or to spectators, shows a face of a card to anyone its holder does not
know it of, nor a card of the deck, while the game runs."""
from __future__ import annotations

import asyncio
import json
import random

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings

from games.arena import registry
from games.arena.bots import bot_sockets
from games.arena.play import tables
from games.arena.play.arena import Arena
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat, HumanSeat
from games.hanabi.transport import start_sockets
from tests.hanabi_client import HanabiClient
from tests.page_recorder import BEFORE, OVER, SPECTATOR, Recorder, guest_session, person_or_spectator
from tests.test_hidden_information import Capture, NullWriter, fast_people  # noqa: F401  (fixture)
from webapp.asgi import application

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


# --- every message each recipient gets, at the moment it is sent ------------------------------
#
# A whole game at a web table: two people in the browser (one reloads mid-game), two bots on
# the Hanabi WebSocket protocol (sending some refused requests), a built-in bot, and two
# spectators (one asks, as a hostile page might, for seat 0's view in its resyncs).  Every
# frame each of them gets (bots' wire frames of every msg_type, people's and spectators'
# views, errors, resync answers, table updates, the end) is recorded by the consumer that
# sends it, with the game's state at that moment, and checked against what that recipient
# may know then: its own cards' faces only as far as hints told it (a spectator: no hand's
# faces beyond what its holder knows), no face of the deck, and nothing before the deal.

def card_leaks(message, hidden: dict | None) -> list[str]:
    """Where ``message`` (any JSON value) shows a face in ``hidden`` (card id -> (colour
    hidden, number hidden)); ``hidden`` None: before the deal, when no card may appear."""
    found = []

    def walk(obj, path):
        if isinstance(obj, dict):
            if "deck_faces" in obj:
                found.append(f"{path}.deck_faces")
            if "id" in obj and ("color" in obj or "number" in obj):
                if hidden is None:
                    found.append(f"{path}: a card before the deal")
                elif obj["id"] in hidden:
                    color_hidden, number_hidden = hidden[obj["id"]]
                    if color_hidden and obj.get("color") is not None:
                        found.append(f"{path}: colour of card {obj['id']}")
                    if number_hidden and obj.get("number") is not None:
                        found.append(f"{path}: number of card {obj['id']}")
            elif "color" in obj and "number" in obj and "not_colors" not in obj and (
                    obj["color"] is not None or obj["number"] is not None):
                found.append(f"{path}: a face without its card id")
            for key, value in obj.items():
                walk(value, f"{path}.{key}")
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                walk(value, f"{path}[{i}]")

    walk(message, "")
    return found


def hidden_from(state, seat: int | None) -> dict:
    """Card id -> (colour hidden, number hidden) for what ``seat`` (None: a spectator) may not
    see in ``state``: the deck, its own cards (every hand's, for a spectator) beyond what
    their holder knows."""
    hidden = {cid: (True, True) for cid in state.deck}
    for holder, hand in enumerate(state.hands):
        if seat is None or holder == seat:
            for cid in hand:
                k = state.knowledge(cid)
                hidden[cid] = (k["color"] is None, k["number"] is None)
    return hidden


def cautious(state, seat: int, rng: random.Random):
    """A person's move: mostly hints and discards (a long game), a play now and then."""
    legal = state.legal_actions(seat)
    safe = [a for a in legal if a[0] != "play"]
    return rng.choice(safe if safe and rng.random() < 0.9 else legal)


async def drive_bot(comm, name: str, rng: random.Random) -> None:
    """A bot written from the seed (tests/hanabi_client.py's moves) that sends a refused
    request before its move on its first turn and now and then later (a card not in its
    hand, a hint to nobody, a start request), and sometimes a move when not on turn."""
    me = HanabiClient.__new__(HanabiClient)
    me.my_name = name
    await comm.send_to(text_data=json.dumps({"msg_type": "CONNECTION_REQUEST", "name": name}))
    refused_yet = False
    while True:
        msg = json.loads(await comm.receive_from(30))
        if msg["msg_type"] == "GAME_OVER_RESPONSE":
            return
        state = msg.get("game_state")
        if state is None:
            continue
        if state["next_player"] != name:
            if rng.random() < 0.05:
                await comm.send_to(text_data=json.dumps({"msg_type": "DISCARD_CARD_REQUEST", "discarded_card_id": 1}))
            continue
        if refused_yet is False or rng.random() < 0.2:  # always on its first turn
            refused_yet = True
            await comm.send_to(text_data=json.dumps(rng.choice([
                {"msg_type": "PLAY_CARD_REQUEST", "played_card_id": rng.randint(1, 50)},
                {"msg_type": "HINT_COLOR_REQUEST", "target_player": "nobody", "color": "RED"},
                {"msg_type": "GAME_START_REQUEST"}])))
        await comm.send_to(text_data=json.dumps(me.choose(state)))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", [1, 2])
async def test_every_message_to_every_recipient_shows_only_what_it_may_know_then(seed, monkeypatch):
    channel_layers.backends = {}
    bot_sockets._admissions.clear()
    monkeypatch.setitem(settings.ARENA, "HUMAN_DEADLINE", 1.0)
    monkeypatch.setitem(settings.ARENA, "BUILTIN_DELAY", 0.0)
    monkeypatch.setitem(settings.ARENA, "HANABI_BOT_DEADLINE", 5.0)

    ann, bea = await sync_to_async(guest_session)("ann"), await sync_to_async(guest_session)("bea")
    arena = Arena(listen=False)
    await arena.start()
    start_sockets(arena)
    recorder = Recorder(arena, lambda state: state.clone())
    recorder.install(monkeypatch, {ann: 0, bea: 3})
    comms = []
    try:
        match = await sync_to_async(tables.create_table)(
            "hanabi", {"players": 5}, ["me", "open_bot", "builtin:convention", "open_human", "open_bot"],
            tables.Sitter(name="ann", session_key=ann))
        recorder.match_id = match.pk
        assert await sync_to_async(tables.join_seat)(match.pk, 3, tables.Sitter(name="bea", session_key=bea)) is None
        bots = []
        for i, name in enumerate(["wire-1", "wire-2"]):
            comm = WebsocketCommunicator(application, "/ws/bots/hanabi/")
            comm.scope["client"] = (f"192.0.2.{i + 1}", 40000)
            assert (await comm.connect())[0]
            comms.append(comm)
            bots.append(asyncio.ensure_future(drive_bot(comm, name, random.Random(seed * 10 + i))))
        while recorder.runner is None:
            recorder.moment()
            await asyncio.sleep(0.01)
        runner_of = lambda: recorder.runner  # noqa: E731
        await asyncio.wait_for(asyncio.gather(
            *bots,
            person_or_spectator(match.pk, ann, 0, seed, runner_of, cautious, comms, reload_after=5),
            person_or_spectator(match.pk, bea, 3, seed + 10, runner_of, cautious, comms),
            person_or_spectator(match.pk, None, None, seed + 20, runner_of, cautious, comms),
            person_or_spectator(match.pk, None, None, seed + 30, runner_of, cautious, comms, hostile=True)), 180)
    finally:
        for comm in comms:
            try:
                await comm.disconnect()
            except BaseException:  # closed by the server at the end already
                pass
        await arena.stop()
        bot_sockets._admissions.clear()

    runner = recorder.runner
    assert runner.state.is_terminal()
    seat_of_bot = {"192.0.2.1": 1, "192.0.2.2": 4}  # the oldest open bot seat first
    assert [runner.endpoints[s].display_name for s in (1, 4)] == ["wire-1", "wire-2"]
    for who, message, moment in recorder.frames:
        if moment == OVER or (moment != BEFORE and moment.is_terminal()):
            continue  # a finished game shows everything
        seat = seat_of_bot[who[1]] if who[0] == "bot" else (who[1] if who[0] == "seat" else None)
        hidden = None if moment == BEFORE else hidden_from(moment, seat)
        assert not card_leaks(message, hidden), (who, message.get("msg_type") or message.get("type"),
                                                card_leaks(message, hidden))
        if who[0] == SPECTATOR and message.get("type") == "match.view":
            assert message["audience"] == "public" and "request" not in message
    kinds = recorder.kinds()
    assert kinds["bot"] >= {"CONNECTION_RESPONSE", "GAME_START_RESPONSE", "HINT_COLOR_RESPONSE", "HINT_NUMBER_RESPONSE",
                            "DISCARD_CARD_RESPONSE", "PLAY_CARD_RESPONSE", "GAME_OVER_RESPONSE", "ERROR_RESPONSE"}, kinds
    assert kinds["seat"] >= {"match.view", "match.error", "match.over", "match.final"}, kinds
    assert kinds[SPECTATOR] >= {"match.view", "match.error", "match.over", "match.final"}, kinds
