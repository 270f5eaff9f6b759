"""Who watches which view group, told by the web processes to the arenas (docs/architecture.md,
"The runner"): the runner builds and publishes a view only for a group someone is in.

A channel layer cannot say whether a group has members (channels-redis keeps them in Redis,
one query away; Channels' in-memory layer only in its own process), and with Redis every
view built and sent for nobody cost about 15% of a bot match's server CPU.  So each web
process counts its own watchers per group (:class:`Watching`: a spectator audience or a
seated person's page) and tells the arenas (group :data:`PRESENCE_GROUP`) when a group gains
its first or loses its last one, and again every :data:`REFRESH_S` seconds for every group
it still watches.  The arena (:class:`Watched`) keeps, per group, which processes watch it and until
when (:data:`TTL_S`): a web process that dies stops refreshing and its groups fall silent at
most :data:`TTL_S` later; an arena that restarts learns them all again within
:data:`REFRESH_S`.  The runner's question (:meth:`Watched.listening`) is a dict lookup.

Presence is the one thing web processes broadcast to the arenas (every other control message
goes to one arena's own channel, docs/architecture.md *Control routing*): a web process does
not know, and need not look up, which arena runs the match behind a group, and every arena
must know whether its runners' groups are watched; it carries no move, so an arena that is
not concerned only stores a few dictionary entries.

A consumer joins its group and tells the arenas before it asks for a resync: the arena's
membership of :data:`PRESENCE_GROUP` is its own control channel, so the running arena hears
the watcher first, and every version after the resync's answer is published to it.
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref

log = logging.getLogger("arena.presence")

#: Seconds between two refreshes of a web process's groups.
REFRESH_S = 3.0
#: Seconds a group counts as watched by a process after its last word: ten refreshes, so that
#: a process whose loop is held up for a while on a busy machine (its refresh late) does not
#: lose its pages' views; a dead one costs views built for nobody this long.
TTL_S = 30.0
#: Groups one refresh may name (a message from a web process is trusted, but bounded).
MAX_GROUPS = 100_000
MESSAGE = "presence"
#: The channel-layer group every arena's control channel is in: presence only.
PRESENCE_GROUP = "arena.presence"


class Watching:
    """The groups this process's consumers watch, and how many watch each; one per channel
    layer (:meth:`of`).  ``join``/``leave`` are awaited by the consumer (join before its
    resync, see the module docstring)."""

    _all: "weakref.WeakKeyDictionary[object, Watching]" = weakref.WeakKeyDictionary()

    def __init__(self, layer):
        self.layer = layer
        self.watcher = uuid.uuid4().hex  # this process (and layer), as the arena knows it
        self.counts: dict[str, int] = {}
        self.refresher: asyncio.Task | None = None

    @classmethod
    def of(cls, layer) -> "Watching":
        watching = cls._all.get(layer)
        if watching is None:
            watching = cls._all[layer] = cls(layer)
        return watching

    async def join(self, group: str) -> None:
        """One more watcher of ``group`` here; the first one is told to the arenas at once."""
        self.counts[group] = self.counts.get(group, 0) + 1
        if self.counts[group] == 1:
            await self._tell([group], TTL_S)
        if self.refresher is None or self.refresher.done():
            self.refresher = asyncio.ensure_future(self._refresh())

    async def leave(self, group: str) -> None:
        """One watcher of ``group`` fewer here; the last one out tells the arenas."""
        left = self.counts.get(group, 0) - 1
        if left > 0:
            self.counts[group] = left
            return
        self.counts.pop(group, None)
        await self._tell([group], 0)

    async def _tell(self, groups: list[str], ttl: float) -> None:
        try:
            await self.layer.group_send(PRESENCE_GROUP, {"type": MESSAGE, "watcher": self.watcher,
                                                         "groups": groups, "ttl": ttl})
        except Exception:  # the layer is down: the next refresh tells it again
            log.exception("could not tell the arenas who watches %d group(s)", len(groups))

    async def _refresh(self) -> None:
        while self.counts:
            await asyncio.sleep(REFRESH_S)
            if self.counts:
                await self._tell(list(self.counts), TTL_S)


class Watched:
    """The arena's side: per group, the web processes that watch it and until when (time is
    ``time.monotonic``).  Fed by :meth:`handle` with the messages of :data:`PRESENCE_GROUP`."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.until: dict[str, dict[str, float]] = {}

    def handle(self, msg: dict) -> bool:
        """Take a presence message (returns True), or return False for any other."""
        if msg.get("type") != MESSAGE:
            return False
        watcher, groups, ttl = msg.get("watcher"), msg.get("groups"), msg.get("ttl")
        if not isinstance(watcher, str) or not isinstance(groups, list) or not isinstance(ttl, (int, float)):
            log.warning("malformed presence message ignored")
            return True
        now = self.clock()
        for group in groups[:MAX_GROUPS]:
            if not isinstance(group, str):
                continue
            if ttl > 0:
                self.until.setdefault(group, {})[watcher] = now + min(float(ttl), TTL_S)
            else:
                watchers = self.until.get(group)
                if watchers is not None:
                    watchers.pop(watcher, None)
                    if not watchers:
                        del self.until[group]
        return True

    def listening(self, group: str) -> bool:
        """Whether a web process watches ``group`` (told within :data:`TTL_S` seconds)."""
        watchers = self.until.get(group)
        if not watchers:
            return False
        now = self.clock()
        for watcher, until in list(watchers.items()):
            if until > now:
                return True
            del watchers[watcher]  # that process stopped refreshing: gone
        del self.until[group]
        return False
