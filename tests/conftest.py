"""Shared fixtures: a real server process (as the README starts it) and scripted bots."""
from __future__ import annotations

import pytest

from tests.serverproc import start_arena


@pytest.fixture(autouse=True)
def _fresh_local_cache():
    """Each test starts with an empty local-memory cache, where the throttles count (logins,
    signups, imports from the test client's one address): counts do not carry from one test
    to the next.  A shared cache (Redis) is left alone."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()
    yield


@pytest.fixture
def arena_factory():
    """``arena_factory(env={...}, role="all")`` starts servers; all are stopped afterwards."""
    started = []

    def make(**kwargs):
        arena = start_arena(**kwargs)
        started.append(arena)
        return arena

    yield make
    for arena in started:
        arena.stop()


@pytest.fixture
def arena(arena_factory):
    """One running server with short deadlines for people (tests should not wait a minute)."""
    return arena_factory(env={"ARENA_HUMAN_DEADLINE": "20", "ARENA_HUMAN_CHALLENGE_WINDOW": "3",
                              "ARENA_ROUND_PAUSE": "0.2", "ARENA_BUILTIN_DELAY": "0.05"})
