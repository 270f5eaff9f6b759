"""A game with several bot doors (``GameSpec.doors``): the lobby, the create-table form and an
open table's page show every door with its port and protocol page; the arena starts every
door's listener, and a port one of them cannot listen on stops it naming that door's setting.

Contract bridge with two TCP doors, as issue 24 gives it (its text protocol on BRIDGE_PORT, the
Blue Chip table manager on BRIDGE_TABLE_MANAGER_PORT); the listeners here only greet with the
door's name, so the test is of the core, not of bridge's transports.
"""
from __future__ import annotations

import asyncio
import re
import socket

import pytest
from channels.layers import channel_layers
from django.conf import settings

from games.arena import registry
from games.arena.play import tables
from games.arena.play.arena import Arena, ListenerError
from games.arena.registry import Door, GameSpec
from tests.serverproc import free_port


def greeter(port_setting: str):
    """A door's ``start``: listens on ``BRIDGE_HOST`` and the door's port and writes the
    name of the setting to whoever connects, then hangs up."""
    async def start(arena):
        async def greet(reader, writer):
            writer.write(f"{port_setting}\n".encode())
            await writer.drain()
            writer.close()

        return await asyncio.start_server(greet, settings.ARENA["BRIDGE_HOST"], settings.ARENA[port_setting])
    return start


TEXT = Door("text protocol", "tcp", "BRIDGE_HOST", "BRIDGE_PORT", "/protocols/bridge/",
            "Bots: connect over TCP to {host}:{port}, one message per line.", greeter("BRIDGE_PORT"))
TABLE_MANAGER = Door("Blue Chip table manager", "tcp", "BRIDGE_HOST", "BRIDGE_TABLE_MANAGER_PORT",
                     "/protocols/bridge/#table-manager", "Robots: connect as to a Blue Chip table manager, port {port}.",
                     greeter("BRIDGE_TABLE_MANAGER_PORT"))


@pytest.fixture
def bridge(monkeypatch):
    """Contract bridge with its two doors, registered for this test only."""
    monkeypatch.setitem(registry.GAMES, "bridge", registry.GAMES["bridge"])  # put back afterwards

    class TwoDoorBridge(type(registry.get("bridge"))):
        doors = (TEXT, TABLE_MANAGER)

    return registry.register(TwoDoorBridge())


def text_of(response) -> str:
    """The page's text, tags removed and spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", "", response.content.decode()).split())


@pytest.mark.django_db
def test_the_lobby_shows_both_doors_with_their_ports_and_protocol_pages(client, settings, bridge):
    settings.ALLOWED_HOSTS = ["arena.example.org"]
    settings.ARENA = {**settings.ARENA, "BRIDGE_HOST": "0.0.0.0", "BRIDGE_PORT": 7101, "BRIDGE_TABLE_MANAGER_PORT": 7102}
    response = client.get("/", HTTP_HOST="arena.example.org")
    page, html = text_of(response), response.content.decode()
    assert "Contract bridge (text protocol): TCP arena.example.org:7101" in page
    assert "Contract bridge (Blue Chip table manager): TCP arena.example.org:7102" in page
    assert "Liar&#x27;s Dice: TCP arena.example.org:5533" not in page  # its own host setting: 127.0.0.1
    assert "Bots: connect over TCP to arena.example.org:7101, one message per line. Protocol: text protocol." in page
    assert "Robots: connect as to a Blue Chip table manager, port 7102. Protocol: Blue Chip table manager." in page
    assert '<a href="/protocols/bridge/">text protocol</a>' in html
    assert '<a href="/protocols/bridge/#table-manager">Blue Chip table manager</a>' in html
    # A game of one door is named by its title alone, its door's note as before.
    assert "Liar&#x27;s Dice: TCP 127.0.0.1:5533" in page
    assert "Bots: connect over TCP to port 5533, one JSON object per line." in page


@pytest.mark.django_db
def test_an_open_bridge_table_offers_bot_seats_and_names_both_ports(client, settings, bridge):
    settings.ARENA = {**settings.ARENA, "BRIDGE_PORT": 7101, "BRIDGE_TABLE_MANAGER_PORT": 7102}
    assert "Open for any bot" in client.get("/tables/new/bridge/").content.decode()
    match = tables.create_table("bridge", {}, [tables.OPEN_BOT] * 4, None)
    page = text_of(client.get(f"/matches/{match.pk}/"))
    assert ("connect to this server's Contract bridge ports 7101 (text protocol) or 7102 (Blue Chip table manager) "
            "(oldest open table first)") in page
    # A game of one door: its port alone.
    match = tables.create_table("liars_dice", {"players": 2}, [tables.OPEN_BOT] * 2, None)
    page = text_of(client.get(f"/matches/{match.pk}/"))
    assert "connect to this server's Liar&#x27;s Dice port 5533 (oldest open table first)" in page


@pytest.fixture
def only_bridge(monkeypatch, bridge, settings):
    """The arena knows bridge alone (no other game's listener takes a port), both doors on
    free ports; a fresh in-memory channel layer (its queues belong to one loop)."""
    monkeypatch.setattr(registry, "GAMES", {"bridge": bridge})
    settings.ARENA = {**settings.ARENA, "BRIDGE_HOST": "127.0.0.1", "BRIDGE_PORT": free_port(),
                      "BRIDGE_TABLE_MANAGER_PORT": free_port()}
    channel_layers.backends = {}


async def greeting(port: int) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        return (await asyncio.wait_for(reader.readline(), 5)).decode().strip()
    finally:
        writer.close()


@pytest.mark.django_db(transaction=True)
async def test_the_arena_starts_a_listener_at_each_door_and_closes_both(only_bridge):
    ports = settings.ARENA["BRIDGE_PORT"], settings.ARENA["BRIDGE_TABLE_MANAGER_PORT"]
    arena = Arena(listen=True)
    await arena.start()
    try:
        assert [await greeting(port) for port in ports] == ["BRIDGE_PORT", "BRIDGE_TABLE_MANAGER_PORT"]
    finally:
        await arena.stop()
    for port in ports:
        with pytest.raises(OSError):
            await greeting(port)


@pytest.mark.django_db(transaction=True)
async def test_a_taken_port_stops_the_arena_naming_that_doors_setting(only_bridge):
    port = settings.ARENA["BRIDGE_TABLE_MANAGER_PORT"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        arena = Arena(listen=True)
        with pytest.raises(ListenerError) as refused:
            await arena.start()
        await arena.stop()
    message = str(refused.value)
    assert message.startswith(f"Contract bridge (Blue Chip table manager) bot listener: cannot listen on 127.0.0.1:{port} (")
    assert "address already in use" in message.lower()
    assert message.endswith("); set BRIDGE_TABLE_MANAGER_PORT to a free port")
    with pytest.raises(OSError):  # the door that had started was closed with the arena
        await greeting(settings.ARENA["BRIDGE_PORT"])


@pytest.mark.parametrize("doors, problem", [
    ((Door("pigeons", "carrier"),), "access must be one of"),
    ((Door("no port", "tcp", start=greeter("BRIDGE_PORT")),), "needs a port_setting and a start"),
    ((Door("no start", "websocket", "BRIDGE_HOST", "BRIDGE_PORT"),), "needs a port_setting and a start"),
    ((Door("called", "http", port_setting="BRIDGE_PORT"),), "no port_setting, no start"),
    ((Door("one", "http"), Door("two", "http")), "one http door at most"),
])
def test_register_refuses_a_door_that_cannot_work(doors, problem):
    class Broken(GameSpec):
        slug, title = "broken", "Broken"

    Broken.doors = doors
    with pytest.raises(TypeError, match=problem):
        registry.register(Broken())
    assert "broken" not in registry.GAMES
