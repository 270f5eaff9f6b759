"""Liar's Dice bots that read one message per read (common in courses: ``data = recv()``, then
``json.loads`` of its first line) get every message on a table without people: the runner
publishes the views between a ``round_over`` and the next ``move_request``
(``MatchRunner.run``), so the two are written apart.

Deterministic, whatever the machine's load: the server and the bots share one event loop, and
the channel layer takes a moment per message as Redis's does (it yields to the loop), so a
bot whose socket has data reads it before the runner goes on.  Written back to back, the two
messages always land in one read.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from channels.layers import channel_layers
from django.conf import settings

from games.arena import registry
from games.arena.play.arena import Arena

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def listeners_on_free_ports():
    """A new in-memory channel layer (its queues belong to one loop) and free ports."""
    channel_layers.backends = {}
    old = dict(settings.ARENA)
    settings.ARENA.update({"LIARS_DICE_HOST": "127.0.0.1", "LIARS_DICE_PORT": 0, "BLOKUS_HOST": "127.0.0.1",
                           "BLOKUS_PORT": 0, "LIARS_DICE_AUTO_PLAYERS": 2, "LIARS_DICE_AUTO_DICE": 2,
                           "LIARS_DICE_AUTO_GAMES": 3})
    yield
    settings.ARENA.clear()
    settings.ARENA.update(old)


class NaiveBot:
    """Reads up to 64 KiB at a time and parses only the first line of each read, as naive
    bots do; answers every ``move_request`` it parsed (bid 1x1 to open, else challenge)."""

    def __init__(self):
        self.subjects: list[str] = []  # of the messages it parsed
        self.merged = 0                # reads that held more than one message (the rest lost)

    async def play(self, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b'{"name": "naive"}\n')
        while data := await reader.read(65536):
            lines = [line for line in data.split(b"\n") if line]
            self.merged += len(lines) > 1
            msg = json.loads(lines[0])
            self.subjects.append(msg["subject"])
            if msg["subject"] == "move_request":
                on_turn = msg["other_hands"][0][0] == 0
                move = ([1, 1] if msg["last_bid"] == [0, 0] else "challenge") if on_turn else "pass"
                writer.write(json.dumps({"message_id": msg["message_id"], "move": move}).encode() + b"\n")
        writer.close()


async def test_a_bot_that_parses_one_message_per_read_gets_each_round_over_and_move_request():
    arena = Arena(listen=True)
    send = arena.layer.group_send

    async def group_send_that_takes_a_moment(group, message):
        await send(group, message)
        for _ in range(3):  # a network round trip's worth of loop turns
            await asyncio.sleep(0)

    arena.layer.group_send = group_send_that_takes_a_moment
    await arena.start()
    try:
        listening = [spec.slug for spec in registry.all_games() if spec.listens]
        port = arena.listeners[listening.index("liars_dice")].port
        bots = [NaiveBot(), NaiveBot()]
        await asyncio.wait_for(asyncio.gather(*(bot.play(port) for bot in bots)), 30)
    finally:
        await arena.stop()
    for bot in bots:
        assert bot.merged == 0, "a round_over and the next move_request came in one read"
        rounds = bot.subjects.count("round_over")
        assert rounds >= 6, "three games of two players with two dice each"
        # After every round but the match's last, the next round's first request came alone.
        after = [b for a, b in zip(bot.subjects, bot.subjects[1:]) if a == "round_over"]
        assert after == ["move_request"] * (rounds - 1) or after == ["move_request"] * rounds
