"""Hanabi's lobby in process (bot sockets through channels' WebsocketCommunicator): bots that
hang up while their automatic table starts leave no ghost match, a start that fails lets its
bots go, and a person cannot take a seat under a name already at a Hanabi table."""
from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator

from games.arena.bots import bot_sockets
from games.arena.models import Match
from games.arena.play import tables
from games.arena.play.arena import Arena
from games.hanabi.transport import start_sockets
from webapp.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends = {}
    bot_sockets._admissions.clear()
    yield
    bot_sockets._admissions.clear()


async def hanabi_arena() -> Arena:
    """An arena that takes Hanabi bot sockets and opens no port."""
    arena = Arena(listen=False)
    await arena.start()
    start_sockets(arena)
    return arena


async def joined_bots(names: list[str]) -> list[WebsocketCommunicator]:
    """Bots that connected in this order (each from its own address) and heard their own
    CONNECTION_RESPONSE."""
    bots = []
    for i, name in enumerate(names):
        comm = WebsocketCommunicator(application, "/ws/bots/hanabi/")
        comm.scope["client"] = (f"192.0.2.{i + 1}", 40000)
        assert (await comm.connect())[0]
        await comm.send_to(text_data=json.dumps({"msg_type": "CONNECTION_REQUEST", "name": name}))
        reply = json.loads(await comm.receive_from(10))
        assert reply == {"msg_type": "CONNECTION_RESPONSE", "names": names[:i + 1]}
        bots.append(comm)
    return bots


async def hanabi_matches() -> list[tuple[str, dict | None]]:
    return await sync_to_async(lambda: list(Match.objects.filter(game="hanabi").values_list("status", "result")))()


async def until(predicate, what: str):
    for _ in range(1000):
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {what}")


async def test_five_bots_that_hang_up_as_their_table_starts_leave_no_ghost_match():
    """Issue 23: the fifth bot asks to start and all five hang up at once (3 of 3 runs left a
    match 'running' or 'open' with five occupied seats for ever)."""
    arena = await hanabi_arena()
    try:
        bots = await joined_bots([f"ghost-{i}" for i in range(5)])
        await bots[-1].send_to(text_data=json.dumps({"msg_type": "GAME_START_REQUEST"}))
        for comm in bots:
            await comm.disconnect()

        async def settled():
            matches = await hanabi_matches()
            return matches and not arena.tasks and all(s not in (Match.Status.RUNNING, Match.Status.OPEN)
                                                       for s, _ in matches)

        await until(settled, "end of the match")
        assert await hanabi_matches() == [(Match.Status.ABORTED, {"aborted": "abandoned: every player left"})]
        assert arena.waiting == {} and not arena.starting
    finally:
        await arena.stop()


async def test_a_start_that_fails_lets_the_bots_go_and_leaves_nothing_open(monkeypatch):
    arena = await hanabi_arena()

    def database_fails(*args, **kwargs):
        raise RuntimeError("database gone")

    monkeypatch.setattr(tables, "try_start", database_fails)
    try:
        bots = await joined_bots(["one", "two"])
        await bots[-1].send_to(text_data=json.dumps({"msg_type": "GAME_START_REQUEST"}))
        for comm in bots:
            while (out := await comm.receive_output(10))["type"] == "websocket.send":
                pass  # the CONNECTION_RESPONSE of the bot that joined after it
            assert out["type"] == "websocket.close", out
        assert await hanabi_matches() == [(Match.Status.ABORTED,
                                           {"aborted": "internal error while starting: RuntimeError"})]
        assert arena.waiting == {} and not arena.starting and not arena.tasks
    finally:
        await arena.stop()


async def test_a_person_cannot_sit_at_a_hanabi_table_under_a_name_already_there():
    """Hanabi tells its players apart by name (every door refuses a second one); other
    games tell same names apart by seat, as before."""
    sitter = tables.Sitter(name="ann", session_key="a" * 32)
    other = tables.Sitter(name="ann", session_key="b" * 32)
    match = await sync_to_async(tables.create_table)("hanabi", {"players": 2}, ["me", "open_human"], sitter)
    error = await sync_to_async(tables.join_seat)(match.pk, 1, other)
    assert error == ("A player named ann already sits at this table, and Hanabi tells its players apart by "
                     "name: choose another nickname.")
    assert await sync_to_async(tables.join_seat)(match.pk, 1, tables.Sitter(name="bea", session_key="b" * 32)) is None
    with pytest.raises(ValueError, match="named Convention bot too"):
        await sync_to_async(tables.create_table)("hanabi", {"players": 2}, ["me", "builtin:convention"],
                                                 tables.Sitter(name="Convention bot", session_key="c" * 32))
    ld = await sync_to_async(tables.create_table)("liars_dice", {"players": 2, "dice": 2, "games": 1},
                                                  ["me", "open_human"], sitter)
    assert await sync_to_async(tables.join_seat)(ld.pk, 1, other) is None
