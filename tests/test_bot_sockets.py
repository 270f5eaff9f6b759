"""The bot WebSocket consumer in process (channels' WebsocketCommunicator) against a running
arena: no Origin needed on the bot route, per-address admission, frame bounds, and a Hanabi
game between two bot sockets to its end."""
from __future__ import annotations

import asyncio
import json

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings

from games.arena import registry
from games.arena.bots import bot_sockets
from games.arena.play.arena import Arena
from tests.serverproc import free_port
from webapp.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fresh_layer():
    """A new in-memory channel layer (its queues belong to one event loop) and admission."""
    channel_layers.backends = {}
    bot_sockets._admissions.clear()
    old = dict(settings.ARENA)
    # Every door on a free port: two of these tests may run at once in two workers.
    settings.ARENA.update({door.port_setting: free_port() for spec in registry.all_games()
                           for door in spec.doors if door.listens})
    yield
    settings.ARENA.clear()
    settings.ARENA.update(old)
    bot_sockets._admissions.clear()


def bot(client: str = "192.0.2.1") -> WebsocketCommunicator:
    """A bot's socket on the main port's bot route: no Origin, no cookie."""
    comm = WebsocketCommunicator(application, "/ws/bots/hanabi/")
    comm.scope["client"] = (client, 40000)
    return comm


async def send(comm, msg) -> None:
    await comm.send_to(text_data=json.dumps(msg))


async def until(comm, kind: str, timeout: float = 5.0) -> dict:
    while True:
        msg = json.loads(await comm.receive_from(timeout))
        if msg["msg_type"] == kind:
            return msg


async def test_two_bot_sockets_play_a_whole_game_and_are_closed_with_1000():
    arena = Arena()
    await arena.start()
    try:
        a, b = bot(), bot("192.0.2.2")
        assert (await a.connect())[0] and (await b.connect())[0]
        await send(a, {"msg_type": "CONNECTION_REQUEST", "name": "a"})
        assert await until(a, "CONNECTION_RESPONSE") == {"msg_type": "CONNECTION_RESPONSE", "names": ["a"]}
        await send(b, {"msg_type": "CONNECTION_REQUEST", "name": "b"})
        assert (await until(b, "CONNECTION_RESPONSE"))["names"] == ["a", "b"]
        await send(a, {"msg_type": "GAME_START_REQUEST"})
        states = {"a": (await until(a, "GAME_START_RESPONSE"))["game_state"],
                  "b": (await until(b, "GAME_START_RESPONSE"))["game_state"]}
        score = None
        while score is None:  # whoever is on turn discards their first card (always legal)
            name = states["a"]["next_player"]
            comm = a if name == "a" else b
            me = next(p for p in states[name]["players"] if p["name"] == name)
            await send(comm, {"msg_type": "DISCARD_CARD_REQUEST", "discarded_card_id": me["cards"][0]["card"]["id"]})
            for who, c in (("a", a), ("b", b)):
                msg = json.loads(await c.receive_from(5))
                if msg["msg_type"] == "GAME_OVER_RESPONSE":
                    score = msg["score"]
                else:
                    assert msg["msg_type"] == "DISCARD_CARD_RESPONSE"
                    states[who] = msg["game_state"]
        assert score == 0, "nothing was played"
        for c in (a, b):
            out = await c.receive_output(5)
            assert out["type"] == "websocket.close" and out.get("code") == 1000
    finally:
        await arena.stop()


async def test_admission_and_frame_bounds_on_the_bot_route():
    settings.ARENA.update({"MAX_CONNECTIONS_PER_ADDRESS": 1, "ADMISSION_EXEMPT": "", "WS_BURST": 5,
                           "WS_MESSAGES_PER_S": 1.0})
    arena = Arena()
    await arena.start()
    try:
        first = bot()
        assert (await first.connect())[0]
        second = bot()
        connected, code = await second.connect()
        assert not connected, "one address holds at most its share (refused at the handshake: Daphne's 403)"
        await first.send_to(text_data="x" * (bot_sockets.MAX_FRAME_BYTES + 1))
        out = await first.receive_output(5)
        assert out["type"] == "websocket.close" and out["code"] == 4013
        await first.disconnect()
        third = bot()
        assert (await third.connect())[0], "the closed connection's place is free again"
        for _ in range(5):
            await third.send_to(text_data="{}")
        errors = [json.loads(await third.receive_from(5)) for _ in range(5)]
        assert {e["explanation"] for e in errors} == {"The type of the message could not be read."}
        await third.send_to(text_data="{}")
        out = await third.receive_output(5)
        assert out["type"] == "websocket.close" and out["code"] == 4008
    finally:
        await arena.stop()


async def test_a_socket_that_says_nothing_valid_is_closed_after_the_first_message_deadline():
    settings.ARENA.update({"FIRST_MESSAGE_TIMEOUT": 0.3})
    arena = Arena()
    await arena.start()
    try:
        comm = bot()
        assert (await comm.connect())[0]
        await comm.send_to(text_data='{"msg_type": "GAME_START_REQUEST"}')
        assert json.loads(await comm.receive_from(5))["explanation"] == "The Player is not yet connected."
        out = await comm.receive_output(5)
        assert out["type"] == "websocket.close" and out["code"] == 4000
    finally:
        await arena.stop()
        await asyncio.sleep(0)
