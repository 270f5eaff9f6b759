"""Bot keys: how a connecting bot proves it is a registered bot (its owner's identity).

A key is ``arena-key-`` followed by 32 random URL-safe characters (192 bits), shown to the
owner once when made or replaced; only its SHA-256 is stored (``RegisteredBot.key_hash``).
A plain hash suffices: the key is random, not a password a person chose, so there is no
dictionary to try.

**A right key always passes**, also from an address past its limit of wrong ones.  Guessing
192 random bits is hopeless at any rate a server allows (at a million guesses a second, half the
keyspace takes about 10^44 years), so a limit on wrong keys protects no key; refusing the right
key there only let one guesser behind a shared address (a NAT, a campus) lock out every bot
behind it for the rest of the minute.  What the limit bounds is the cost of wrong keys:
:data:`KEY_FAILURES_BY_ADDRESS` counts them per address (in the same cache as login attempts);
past it every door closes the connection after a wrong key (Liar's Dice and Blokus always do;
Hanabi, which lets a socket try again, does then too), so each further guess costs the guesser
a new connection, which admission caps per address and second
(``ARENA_CONNECTIONS_PER_S_PER_ADDRESS``), and costs the server one SHA-256 and one lookup in
the unique index of key hashes.

Each protocol carries the key in a place bots written for the original servers never use
(README, *Bot identities*): Liar's Dice a ``"key"`` in the name message, Hanabi a ``"key"``
in ``CONNECTION_REQUEST``, Blokus a ``key`` attribute of ``<join>``.  A bot that presents none
plays as before, unverified.
"""
from __future__ import annotations

import hashlib
import secrets

from games.arena.bots.throttle import Throttle

KEY_PREFIX = "arena-key-"
#: Longest key text looked at (a real one is 42 characters).
MAX_KEY = 100
#: Wrong keys per address a minute (``ARENA_BOT_KEY_FAILURES_PER_MINUTE``).
KEY_FAILURES_BY_ADDRESS = Throttle("bot-key-ip", "BOT_KEY_FAILURES_PER_MINUTE", 60)


class KeyRefused(Exception):
    """A key that does not identify a bot of this game; ``str()`` is the message for the bot
    (it names no other bot and no owner).  ``too_many``: its address is past
    ``ARENA_BOT_KEY_FAILURES_PER_MINUTE`` wrong keys this minute, and the door closes the
    connection (module docstring)."""

    def __init__(self, message: str, too_many: bool = False):
        super().__init__(message)
        self.too_many = too_many


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

    A right key passes whatever wrong keys came from ``host`` before (module docstring) and
    costs nothing of its budget.  Raises :class:`KeyRefused` for a key that is not a string,
    too long, unknown, or a bot of another game; each counts as a wrong key of ``host``, and
    past the limit the refusal says so and has ``too_many`` set."""
    from games.arena.models import RegisteredBot

    bot = None
    if isinstance(key, str) and key and len(key) <= MAX_KEY:
        bot = RegisteredBot.objects.filter(key_hash=hash_key(key)).only("pk", "name", "game").first()
        if bot is not None and bot.game == game:
            return bot
    wait = KEY_FAILURES_BY_ADDRESS.attempt(host)
    if not isinstance(key, str) or not key or len(key) > MAX_KEY:
        why = f"a bot key is a string of at most {MAX_KEY} characters"
    elif bot is None:
        why = "unknown bot key: make one on the Bots page, or connect without a key to play unverified"
    else:
        why = "this bot key belongs to a bot of another game"
    if wait:
        raise KeyRefused(f"{why}; too many wrong bot keys from your address: for the next {wait} s each wrong "
                         "key closes the connection", too_many=True)
    raise KeyRefused(why)
