"""The channel layer of the one-process server: Channels' in-memory layer, at O(1) a message.

Channels' ``InMemoryChannelLayer`` sweeps *every* channel queue and *every* group membership
for expired entries on each ``receive`` and each ``group_send``, and ``group_send`` starts one
task per member.  With N spectators on a match, one published view then costs O(N^2): at 500
spectators the sweeps alone took more CPU than the server had, and views reached the last
spectator seconds late (``benchmarks/spectator_fanout.py``).

:class:`LocalChannelLayer` keeps its semantics (per-channel capacity and ``ChannelFull``,
each receiver gets its own deep copy, a message unread for ``expiry`` seconds is dropped and
its channel leaves its groups, group memberships end after ``group_expiry``) and changes only
the cost: the sweep runs at most once every :attr:`LocalChannelLayer.SWEEP_INTERVAL` seconds
(so expiry is up to that much later), ``group_send`` puts the message on each member's queue
directly, and a channel's queue is kept between two receives instead of being rebuilt for
every message.
"""
from __future__ import annotations

import asyncio
import time
from copy import deepcopy

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer


#: Immutable value types: ``deepcopy`` returns them as they are.
_ATOMIC = frozenset({str, int, float, bool, type(None), bytes})


class LocalChannelLayer(InMemoryChannelLayer):
    """Drop-in for ``channels.layers.InMemoryChannelLayer`` (same ``CONFIG`` keys)."""

    #: Seconds between two sweeps for expired messages and group memberships.
    SWEEP_INTERVAL = 1.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_sweep = 0.0

    def _sweep(self) -> None:
        now = time.time()
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_INTERVAL
            self._clean_expired()
            # Queues left empty with nobody waiting on them (see receive).
            for channel, queue in list(self.channels.items()):
                if queue.empty() and not queue._getters:
                    del self.channels[channel]

    def _queue(self, channel: str) -> asyncio.Queue:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    def _put(self, channel: str, message: dict, copy=deepcopy) -> None:
        try:
            self._queue(channel).put_nowait((time.time() + self.expiry, copy(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def send(self, channel, message):
        """Put ``message`` (deep-copied) on ``channel``; raises ``ChannelFull`` at capacity."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        self._put(channel, message)

    async def receive(self, channel):
        """The next message on ``channel`` (waits for one)."""
        self.require_valid_channel_name(channel)
        self._sweep()
        queue = self._queue(channel)
        try:
            _, message = await queue.get()
        except BaseException:
            if queue.empty() and self.channels.get(channel) is queue:
                del self.channels[channel]
            raise
        # The queue stays for the receiver's next call (a consumer receives again at once);
        # the sweep drops it if it stays empty and unwatched.
        return message

    async def group_send(self, group, message):
        """Send to every member of ``group``; members whose queue is full miss the message."""
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._sweep()
        # A flat message of strings and numbers (e.g. runner.view_message) deep-copies to a
        # plain copy of the dict: the same result, without deepcopy's cost per member.
        copy = dict.copy if all(type(v) in _ATOMIC for v in message.values()) else deepcopy
        for channel in list(self.groups.get(group, ())):
            try:
                self._put(channel, message, copy)
            except ChannelFull:
                pass
