"""Who watches which view group (games/arena/play/presence.py): the web processes' counts reach
every arena through the presence group, and a process that stops refreshing is forgotten."""
from __future__ import annotations

import asyncio

from games.arena.play import presence
from games.arena.play.layers import LocalChannelLayer
from games.arena.play.presence import PRESENCE_GROUP, Watched, Watching
from games.arena.play.runner import public_group
from games.arena.web.consumers import Audience


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


async def arena_hears(layer: LocalChannelLayer, watched: Watched) -> list[dict]:
    """The arena's control channel: every message waiting on it, handed to ``watched``."""
    got = []
    for channel in list(layer.groups.get(PRESENCE_GROUP, ())):
        queue = layer._queue(channel)
        while not queue.empty():
            msg = await layer.receive(channel)
            assert watched.handle(msg)
            got.append(msg)
    return got


class Spectator:
    async def dispatch(self, message):
        pass


def test_the_first_watcher_and_the_last_are_told_and_the_group_is_listened_to_in_between():
    async def main():
        layer = LocalChannelLayer()
        await layer.group_add(PRESENCE_GROUP, await layer.new_channel())
        watched = Watched(Clock())
        group = public_group(9)
        assert not watched.listening(group)
        a, b = Spectator(), Spectator()
        audience = await Audience.join(layer, group, a)
        await Audience.join(layer, group, b)
        told = await arena_hears(layer, watched)
        assert len(told) == 1, "one word per process and group, not per spectator"
        assert watched.listening(group)
        await audience.leave(a)
        assert await arena_hears(layer, watched) == [] and watched.listening(group)
        await audience.leave(b)
        await arena_hears(layer, watched)
        assert not watched.listening(group)
        Watching.of(layer).refresher.cancel()

    asyncio.run(main())


def test_a_process_that_stops_refreshing_is_forgotten_after_the_ttl_and_another_keeps_the_group():
    clock = Clock()
    watched = Watched(clock)
    group = "m3.seat1"
    watched.handle({"type": "presence", "watcher": "web-a", "groups": [group], "ttl": presence.TTL_S})
    clock.now += presence.TTL_S - 1
    watched.handle({"type": "presence", "watcher": "web-b", "groups": [group], "ttl": presence.TTL_S})
    clock.now += 2  # web-a is silent past its TTL; web-b is not
    assert watched.listening(group)
    assert list(watched.until[group]) == ["web-b"]
    clock.now += presence.TTL_S
    assert not watched.listening(group)
    assert group not in watched.until


def test_other_and_malformed_messages():
    watched = Watched(Clock())
    assert not watched.handle({"type": "human.action"})
    assert watched.handle({"type": "presence", "watcher": 3, "groups": "m1.public", "ttl": 10})
    # A TTL past the bound is cut to it: a process cannot hold a group for ever.
    watched.handle({"type": "presence", "watcher": "w", "groups": ["m1.public", 7], "ttl": 1e9})
    assert watched.until == {"m1.public": {"w": 100.0 + presence.TTL_S}}


def test_refreshes_repeat_every_group_still_watched(monkeypatch):
    monkeypatch.setattr(presence, "REFRESH_S", 0.01)

    async def main():
        layer = LocalChannelLayer()
        await layer.group_add(PRESENCE_GROUP, await layer.new_channel())
        watched = Watched(Clock())
        watching = Watching.of(layer)
        await watching.join("m1.public")
        await watching.join("m2.seat0")
        await watching.leave("m1.public")
        await arena_hears(layer, watched)
        watched.until.clear()  # the arena restarted
        await asyncio.sleep(0.05)
        told = await arena_hears(layer, watched)
        assert told and told[-1]["groups"] == ["m2.seat0"]
        assert watched.listening("m2.seat0") and not watched.listening("m1.public")
        await watching.leave("m2.seat0")
        await asyncio.sleep(0.03)
        assert watching.refresher.done(), "nothing watched: no refresh"

    asyncio.run(main())


def test_every_arena_hears_who_watches():
    """Each arena runs some of the matches and must know which of their groups are watched:
    a word goes to every arena's channel in the presence group."""
    async def main():
        layer = LocalChannelLayer()
        arenas = [await layer.new_channel() for _ in range(2)]
        for channel in arenas:
            await layer.group_add(PRESENCE_GROUP, channel)
        watching = Watching.of(layer)
        await watching.join("m4.seat0")
        for channel in arenas:
            watched = Watched(Clock())
            assert watched.handle(await layer.receive(channel))
            assert watched.listening("m4.seat0")
        watching.refresher.cancel()

    asyncio.run(main())
