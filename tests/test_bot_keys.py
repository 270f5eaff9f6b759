"""The key check itself (games/arena/bots/bot_keys.py), on a clock the test holds: a right key
passes after any number of wrong ones from its address (a guesser behind the same NAT
cannot lock a bot out); wrong keys past the limit are refused with ``too_many`` set, which
makes every door close the connection; the count is per address and per clock minute."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from games.arena.bots import bot_keys, throttle
from games.arena.bots.bot_keys import KeyRefused, identify
from games.arena.models import RegisteredBot

LIMIT = 5  # ARENA_BOT_KEY_FAILURES_PER_MINUTE's default


@pytest.fixture
def now(monkeypatch):
    clock = {"t": 1_800_000_000.0}  # the start of a clock minute
    monkeypatch.setattr(throttle, "clock", lambda: clock["t"])
    return clock


@pytest.fixture
def key(db):
    owner = get_user_model().objects.create_user("owner", password="correct horse battery")
    key, key_hash = bot_keys.new_key()
    RegisteredBot.objects.create(owner=owner, game="liars_dice", name="Behind NAT", key_hash=key_hash)
    return key


def _wrong(host: str) -> KeyRefused:
    with pytest.raises(KeyRefused) as refused:
        identify("liars_dice", bot_keys.new_key()[0], host)
    return refused.value


def test_the_right_key_passes_after_more_wrong_keys_than_the_limit_from_its_address(now, key):
    refusals = [_wrong("203.0.113.7") for _ in range(LIMIT + 3)]
    assert [r.too_many for r in refusals] == [False] * LIMIT + [True] * 3
    assert str(refusals[-1]).startswith("unknown bot key")
    assert "too many wrong bot keys from your address: for the next 60 s" in str(refusals[-1])
    assert identify("liars_dice", key, "203.0.113.7").name == "Behind NAT"
    # A key of another game is not right here, and counts as wrong.
    with pytest.raises(KeyRefused, match="another game") as other:
        identify("hanabi", key, "203.0.113.7")
    assert other.value.too_many


def test_wrong_keys_count_per_address_and_per_minute(now, key):
    for _ in range(LIMIT + 1):
        _wrong("203.0.113.7")
    assert not _wrong("198.51.100.1").too_many, "another address has its own count"
    now["t"] += 45
    assert _wrong("203.0.113.7").too_many
    assert "for the next 15 s" in str(_wrong("203.0.113.7"))
    now["t"] += 15  # the next minute
    assert not _wrong("203.0.113.7").too_many
    assert identify("liars_dice", key, "203.0.113.7").name == "Behind NAT"
