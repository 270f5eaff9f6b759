"""Personal API tokens: a person's own scripts read the JSON API as that person.

A token is ``arena-token-`` followed by 32 random URL-safe characters (192 bits), made on the
Bots page and shown once; only its SHA-256 is kept (:class:`~games.arena.models.ApiToken`,
one per user).  A request presents it as ``Authorization: Bearer <token>``; it then sees what
the pages show that person when logged in: the full ``detail`` of forced moves at the seats
they sat in or their bots sat in (``/api/bots/<id>/forced/``, a match's events and replay).
Without a token the API answers as to anyone.  As with bot keys, a plain hash suffices (the
token is random, nothing to try from a dictionary); guessing is limited per address by
:data:`TOKEN_FAILURES_BY_ADDRESS`.
"""
from __future__ import annotations

import datetime
import secrets

from django.utils import timezone

from games.arena.bots.bot_keys import hash_key
from games.arena.bots.throttle import Throttle

TOKEN_PREFIX = "arena-token-"
#: Longest token text looked at (a real one is 44 characters).
MAX_TOKEN = 100
#: Wrong tokens per address a minute (``ARENA_API_TOKEN_FAILURES_PER_MINUTE``).
TOKEN_FAILURES_BY_ADDRESS = Throttle("api-token-ip", "API_TOKEN_FAILURES_PER_MINUTE", 60)
#: ``last_used_at`` is written at most this often per token.
USE_RESOLUTION = datetime.timedelta(minutes=1)


class TokenRefused(Exception):
    """A token that identifies nobody; ``str()`` is the message for the caller."""


def make_token(user) -> str:
    """Give ``user`` a new token (replacing any they had) and return it: the only time the
    token itself exists on the server."""
    from games.arena.models import ApiToken

    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    ApiToken.objects.update_or_create(user=user, defaults={"token_hash": hash_key(token), "last_used_at": None})
    return token


def revoke_token(user) -> bool:
    """Delete ``user``'s token; whether there was one."""
    from games.arena.models import ApiToken

    return ApiToken.objects.filter(user=user).delete()[0] > 0


def token_user(token: str, host: str):
    """The active user whose token is ``token``, presented from address ``host``.

    Raises :class:`TokenRefused` for a token that is too long, unknown or whose user is
    inactive, and without looking when ``host`` sent too many wrong tokens this minute.  A
    right token costs nothing of the address's budget."""
    from games.arena.models import ApiToken

    wait = TOKEN_FAILURES_BY_ADDRESS.attempt(host)
    if wait:
        raise TokenRefused(f"too many wrong API tokens from your address: try again in {wait} s")
    if not token or len(token) > MAX_TOKEN:
        raise TokenRefused("the API token was refused")
    row = ApiToken.objects.select_related("user").filter(token_hash=hash_key(token)).first()
    if row is None or not row.user.is_active:
        raise TokenRefused("the API token was refused: make a new one on the Bots page")
    TOKEN_FAILURES_BY_ADDRESS.refund(host)
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at >= USE_RESOLUTION:
        type(row).objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user
