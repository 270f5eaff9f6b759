"""Password guessing on the web: failed logins are held to ``ARENA_LOGIN_FAILURES_PER_MINUTE``
(5) a minute per address and per username, accounts to ``ARENA_SIGNUPS_PER_HOUR`` (10) an hour
per address; a refused attempt is answered 429 with when to try again, and costs no password
hash.  The clock is the throttle's own (patched), so nothing here waits."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import hashers
from django.core.cache import cache

from games.arena.bots import throttle

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-42"


class Clock:
    """The throttle's clock, moved by hand (seconds since the epoch)."""

    def __init__(self):
        self.now = 1_800_000_000.0  # the start of a minute and of an hour

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    cache.clear()
    tick = Clock()
    monkeypatch.setattr(throttle, "clock", tick)
    yield tick
    cache.clear()


@pytest.fixture
def hashes(monkeypatch):
    """How many password hashes the server computed (checking a password, or the dummy hash
    Django computes for an unknown username so that it takes as long)."""
    counted = {"n": 0}
    original = hashers.pbkdf2

    def counting(*args, **kwargs):
        counted["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(hashers, "pbkdf2", counting)
    return counted


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password=PASSWORD)


def log_in(client, username, password, address="203.0.113.5"):
    response = client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)
    if response.status_code == 302:
        client.logout()
    return response


def wait_of(response, what="Too many attempts") -> str:
    """When the refusal says to try again ("40 s", "50 min")."""
    text = response.content.decode()
    found = re.search(what + r"; try again in (\d+ (?:s|min))\.", text)
    assert found, text
    return found.group(1)


def test_five_wrong_passwords_a_minute_then_429_without_a_hash_even_for_the_right_one(client, clock, alice, hashes):
    for _ in range(5):
        assert log_in(client, "alice", "guess").status_code == 200  # the form again, with its error
    assert hashes["n"] == 5
    clock.now += 20
    refused = log_in(client, "alice", PASSWORD)
    assert refused.status_code == 429 and wait_of(refused) == "40 s"
    assert hashes["n"] == 5, "a refused attempt costs no hash"
    assert 'value="alice"' in refused.content.decode(), "the form keeps the username"
    clock.now += 40  # the next minute
    assert log_in(client, "alice", PASSWORD).status_code == 302


def test_the_address_is_held_whatever_username_it_tries(client, clock, alice, hashes):
    for k in range(5):
        assert log_in(client, f"user{k}", "guess").status_code == 200
    assert log_in(client, "user5", "guess").status_code == 429
    assert log_in(client, "alice", PASSWORD).status_code == 429, "from the same address"
    assert log_in(client, "alice", PASSWORD, address="198.51.100.7").status_code == 302, "another address"
    assert hashes["n"] == 6


def test_the_username_is_held_whatever_address_guesses_it(client, clock, alice, hashes):
    for k in range(5):
        assert log_in(client, "alice", "guess", address=f"10.0.0.{k}").status_code == 200
    assert log_in(client, "Alice", "guess", address="10.0.0.99").status_code == 429, "case does not matter"
    assert log_in(client, "bob", "guess", address="10.0.0.99").status_code == 200, "another username"
    assert hashes["n"] == 6


def test_successful_logins_do_not_count(client, clock, alice):
    for _ in range(12):
        assert log_in(client, "alice", PASSWORD).status_code == 302
    for _ in range(5):
        assert log_in(client, "alice", "guess").status_code == 200
    assert log_in(client, "alice", "guess").status_code == 429


def test_a_guesser_gets_a_handful_of_hashes_a_minute(client, clock, alice, hashes):
    """One address guessing every second for four minutes, each time a new username."""
    per_minute = []
    for minute in range(4):
        before = hashes["n"]
        for second in range(60):
            log_in(client, f"victim{minute}-{second}", "guess")
            clock.now += 1
        per_minute.append(hashes["n"] - before)
    assert per_minute == [5] * 4


def test_signups_per_address_an_hour_and_a_clear_429_past_them(client, clock, django_user_model, settings):
    assert settings.ARENA["SIGNUPS_PER_HOUR"] == 10

    def sign_up(name, confirm=PASSWORD, address="203.0.113.8"):
        response = client.post("/accounts/signup/", {"username": name, "password1": PASSWORD, "password2": confirm},
                               REMOTE_ADDR=address)
        client.logout()
        return response

    assert sign_up("typo", confirm="other-horse-42").status_code == 200, "a form with a mistake does not count"
    for k in range(10):
        assert sign_up(f"player{k}").status_code == 302
    clock.now += 600
    refused = sign_up("player10")
    assert refused.status_code == 429
    assert wait_of(refused, "Too many accounts were created from your address") == "50 min"
    assert not django_user_model.objects.filter(username="player10").exists()
    assert sign_up("neighbour", address="198.51.100.9").status_code == 302, "another address"
    clock.now += 3000  # the next hour
    assert sign_up("player10").status_code == 302
    assert django_user_model.objects.filter(username__startswith="player").count() == 11


def test_the_refusal_is_readable_on_the_login_page(client, clock):
    for _ in range(5):
        log_in(client, "carol", "guess")
    page = log_in(client, "carol", "guess").content.decode()
    assert '<p class="error" role="alert">Too many attempts; try again in 60 s.</p>' in page
    assert 'name="password"' in page, "the form is still there for later"
