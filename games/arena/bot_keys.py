"""Bot keys: how a connecting bot proves it is a registered bot (its owner's identity).

A key is ``arena-key-`` followed by 32 random URL-safe characters (192 bits), shown to the
owner once when made or replaced; only its SHA-256 is stored (``RegisteredBot.key_hash``).
A plain hash suffices: the key is random, not a password a person chose, so there is no
dictionary to try; what limits guessing is :data:`KEY_FAILURES_BY_ADDRESS`, counted in the
same cache as login attempts.

Each protocol carries the key in a place bots written for the original servers never use
(README, *Bot identities*): Liar's Dice a ``"key"`` in the name message, Hanabi a ``"key"``
in ``CONNECTION_REQUEST``, Blokus a ``key`` attribute of ``<join>``.  A bot that presents none
plays as before, unverified.
"""
from __future__ import annotations

import hashlib
import secrets

from games.arena.throttle import Throttle

KEY_PREFIX = "arena-key-"
#: Longest key text looked at (a real one is 42 characters).
MAX_KEY = 100
#: Wrong keys per address a minute (``ARENA_BOT_KEY_FAILURES_PER_MINUTE``).
KEY_FAILURES_BY_ADDRESS = Throttle("bot-key-ip", "BOT_KEY_FAILURES_PER_MINUTE", 60)


class KeyRefused(Exception):
    """A key that does not identify a bot of this game; ``str()`` is the message for the bot
    (it names no other bot and no owner)."""


def new_key() -> tuple[str, str]:
    """A fresh key and its hash: ``(key, key_hash)``."""
    key = KEY_PREFIX + secrets.token_urlsafe(24)
    return key, hash_key(key)


def hash_key(key: str) -> str:
    """The stored form of ``key``: hex SHA-256 of its UTF-8."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def identify(game: str, key, host: str):
    """The :class:`~games.arena.models.RegisteredBot` of ``game`` whose key is ``key``,
    presented from address ``host``.  Synchronous (a database query): call it from a thread.

    Raises :class:`KeyRefused` for a key that is not a string, too long, unknown, or a bot of
    another game, and without looking when ``host`` sent too many wrong keys this minute.  A
    right key costs nothing of the address's budget."""
    from games.arena.models import RegisteredBot

    wait = KEY_FAILURES_BY_ADDRESS.attempt(host)
    if wait:
        raise KeyRefused(f"too many wrong bot keys from your address: try again in {wait} s")
    if not isinstance(key, str) or not key or len(key) > MAX_KEY:
        raise KeyRefused(f"a bot key is a string of at most {MAX_KEY} characters")
    bot = RegisteredBot.objects.filter(key_hash=hash_key(key)).only("pk", "name", "game").first()
    if bot is None:
        raise KeyRefused("unknown bot key: make one on the Bots page, or connect without a key to play unverified")
    if bot.game != game:
        raise KeyRefused("this bot key belongs to a bot of another game")
    KEY_FAILURES_BY_ADDRESS.refund(host)
    return bot
