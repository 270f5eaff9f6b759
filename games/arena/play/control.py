"""Which arena process a control message goes to (docs/architecture.md, *Several arenas*).

Every arena process has a name and a channel-layer channel of its own, kept in its
:class:`~games.arena.models.ArenaProcess` row while it lives.  A match's owner
(``Match.owner``) is the arena that runs it, or, while the table is open, the arena whose
connected bots sit at it.  A web process sends a person's moves, resyncs and admin commands
to the owner's channel; work no arena owns yet (a table that may start) goes to one live
arena, and every arena's sweep claims what a lost message left (``SKIP LOCKED``).

These functions run in a web or arena process, synchronously (wrap them in
``sync_to_async``); each is one or two indexed reads.
"""
from __future__ import annotations

import os
import random
import secrets
import socket
import zlib

from django.conf import settings
from django.utils import timezone

from games.arena.models import ArenaProcess, Match


def new_arena_name() -> str:
    """This process's arena name: ``ARENA_NAME`` if set, else ``<host>-<pid>-<4 hex>`` (new at
    every start, so a restarted arena never takes a dead one's leases for its own).  At most
    64 characters (``ArenaProcess.name``)."""
    name = settings.ARENA["NAME"] or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
    return name[:64]


def live_arenas() -> list[tuple[str, str]]:
    """``(name, channel)`` of every arena whose lease on itself has not expired, by name."""
    return list(ArenaProcess.objects.filter(alive_until__gte=timezone.now()).order_by("name")
                .values_list("name", "channel"))


def arena_channel(name: str) -> str | None:
    """The channel of the live arena called ``name``; None if there is none (it died, or
    ``name`` is empty)."""
    if not name:
        return None
    return (ArenaProcess.objects.filter(name=name, alive_until__gte=timezone.now())
            .values_list("channel", flat=True).first())


def owner_channel(match_id: int) -> str | None:
    """The channel of the arena that owns match ``match_id`` (runs it, or holds its table's
    connected bots); None when no live arena does."""
    owner = Match.objects.filter(pk=match_id).values_list("owner", flat=True).first()
    return arena_channel(owner or "")


def any_arena_channel() -> str | None:
    """The channel of one live arena, picked at random (work any arena may take: a table
    that may start, a bot socket opened on a web process); None when no arena lives."""
    arenas = live_arenas()
    return random.choice(arenas)[1] if arenas else None


def gathering_channel(game: str) -> str | None:
    """The channel of the live arena that takes ``game``'s bots arriving through a web
    process (``/ws/bots/<game>/``): the same arena for every such socket while the live arenas
    stay the same (a stable hash of the game's slug over them, by name), so bots that gather
    before they play (Hanabi's lobby: the last to join starts the game) meet at one arena
    rather than waiting at two.  None when no arena lives."""
    arenas = live_arenas()
    return arenas[zlib.crc32(game.encode()) % len(arenas)][1] if arenas else None


def channel_for(match_id: int) -> str | None:
    """Where a message about match ``match_id`` goes: its owner's channel, else any live
    arena's (an unowned table); None when no arena lives."""
    return owner_channel(match_id) or any_arena_channel()
