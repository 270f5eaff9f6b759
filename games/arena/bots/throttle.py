"""Attempts per address or per name in a clock window, counted in Django's cache.

Login and signup count here (:mod:`games.arena.web.views`), before the costly or lasting part
happens (a password hash; a new account), so that a refused attempt costs a couple of cache
operations.  The cache is Django's: local memory by default, which is per process (fine for
the one-process server), and Redis when ``REDIS_URL`` is set (``webapp/settings.py``), so
that every web process of the scaled deployment counts the same attempts.
"""
from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache

#: The clock the windows follow (seconds since the epoch); tests replace it.
clock = time.time


class Throttle:
    """At most ``settings.ARENA[setting]`` attempts per subject in each clock window of
    ``window_s`` seconds (``"login-ip"``, 60: a minute).

    :meth:`attempt` counts one before the work and says whether it may go ahead;
    :meth:`refund` gives it back when the attempt turned out to be one that should not
    count (a successful login, a signup that created no account).  Counting first, with
    the cache's atomic ``incr``, holds parallel attempts to the limit too.  A subject is
    any string (an address, a username); only a hash of it is a cache key."""

    def __init__(self, name: str, setting: str, window_s: int):
        self.name = name
        self.setting = setting
        self.window_s = window_s

    def _key(self, subject: str, now: float) -> tuple[str, float]:
        """(cache key of ``subject``'s current window, when that window ends)."""
        start = int(now // self.window_s) * self.window_s
        digest = hashlib.sha256(subject.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"throttle:{self.name}:{digest}:{start}", start + self.window_s

    def attempt(self, subject: str) -> int:
        """Count an attempt by ``subject``; returns 0 when it may go ahead, else the whole
        seconds (at least 1) until its window ends and it may try again."""
        now = clock()
        key, end = self._key(subject, now)
        cache.add(key, 0, timeout=self.window_s + 5)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=self.window_s + 5)
            count = 1
        if count <= settings.ARENA[self.setting]:
            return 0
        return max(1, math.ceil(end - now))

    def refund(self, subject: str) -> None:
        """Take back one attempt of ``subject`` in the current window."""
        key, _ = self._key(subject, clock())
        try:
            if cache.decr(key) < 0:
                cache.set(key, 0, timeout=self.window_s + 5)
        except ValueError:  # the window has ended meanwhile: nothing to give back
            pass


#: Failed logins per address and per username a minute (``ARENA_LOGIN_FAILURES_PER_MINUTE``).
LOGIN_BY_ADDRESS = Throttle("login-ip", "LOGIN_FAILURES_PER_MINUTE", 60)
LOGIN_BY_USERNAME = Throttle("login-user", "LOGIN_FAILURES_PER_MINUTE", 60)
#: Accounts created per address an hour (``ARENA_SIGNUPS_PER_HOUR``).
SIGNUP_BY_ADDRESS = Throttle("signup-ip", "SIGNUPS_PER_HOUR", 3600)
#: Tables and matches created per address and per user a minute (``ARENA_TABLES_PER_MINUTE``),
#: counted atomically beside the database's count (:func:`games.arena.web.views.creation_refused`).
TABLES_BY_ADDRESS = Throttle("tables-ip", "TABLES_PER_MINUTE", 60)
TABLES_BY_USER = Throttle("tables-user", "TABLES_PER_MINUTE", 60)
#: Tournaments created per user a minute (``ARENA_TOURNAMENTS_PER_MINUTE``), beside the
#: database's count (:func:`games.arena.web.tournaments.creation_refused`).
TOURNAMENTS_BY_USER = Throttle("tournaments-user", "TOURNAMENTS_PER_MINUTE", 60)
#: Password reset requests per address and per email address typed an hour
#: (``ARENA_PASSWORD_RESETS_PER_HOUR``; games/arena/web/accounts.py): each may send a mail.
RESETS_BY_ADDRESS = Throttle("reset-ip", "PASSWORD_RESETS_PER_HOUR", 3600)
RESETS_BY_EMAIL = Throttle("reset-email", "PASSWORD_RESETS_PER_HOUR", 3600)
