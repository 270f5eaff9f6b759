"""Rate bounds shared by the arena's endpoints, so one flooding client cannot starve the others."""
from __future__ import annotations

import time


class TokenBucket:
    """At most ``burst`` tokens, refilled at ``rate`` a second (``clock`` in seconds).

    :meth:`take` spends one when there is one; :meth:`give_back` returns one (for work that
    turned out to be asked for); :meth:`seconds_to_next` says when the next one is due.
    Used per browser WebSocket (messages) and per bot TCP connection (lines)."""

    __slots__ = ("rate", "burst", "clock", "tokens", "stamp")

    def __init__(self, rate: float, burst: float, clock=time.monotonic):
        self.rate, self.burst, self.clock = rate, float(max(1, burst)), clock
        self.tokens, self.stamp = self.burst, clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> bool:
        """Spend a token; False (and nothing spent) when there is none."""
        if self.tokens < 1.0:
            self._refill()
            if self.tokens < 1.0:
                return False
        self.tokens -= 1.0
        return True

    def give_back(self) -> None:
        """Return one token (never above ``burst``)."""
        self.tokens = min(self.burst, self.tokens + 1.0)

    def seconds_to_next(self) -> float:
        """Seconds until a token is due (0 when one is there)."""
        self._refill()
        return max(0.0, (1.0 - self.tokens) / self.rate)
