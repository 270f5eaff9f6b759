"""Finished matches made through the ORM for tests of what is computed from them (ratings, a
bot's page): the seats, optional events, and the result stored by :func:`tables.finish`,
which rates the match as a real one is rated."""
from __future__ import annotations

from games.arena.models import Event, Match, RegisteredBot, Seat
from games.arena.play import tables


def played(game: str, config: dict, seats: list, result: dict, events: list = (), imported: bool = False) -> Match:
    """A match of ``game`` with ``seats`` (each a RegisteredBot, ``("builtin", name)``,
    ``("user", user)``, ``"guest"`` or ``"unverified"``, a bot without its key), its
    ``events`` (``(seat, forced, reason, detail, think_ms)``), finished with ``result``."""
    match = running(game, config, seats, events, imported)
    tables.finish(match.pk, result)
    return match


def running(game: str, config: dict, seats: list, events: list = (), imported: bool = False) -> Match:
    """The match :func:`played` makes, left running (not finished)."""
    match = Match.objects.create(game=game, config=config, seed=1, status=Match.Status.RUNNING, imported=imported)
    rows = []
    for index, who in enumerate(seats):
        if isinstance(who, RegisteredBot):
            rows.append(Seat(match=match, index=index, kind="protocol", registered_bot=who, occupied=True,
                             display_name=who.name))
        elif who == "guest":
            rows.append(Seat(match=match, index=index, kind="human", occupied=True, display_name="Guest Gina",
                             session_key=f"s{index}"))
        elif who == "unverified":
            rows.append(Seat(match=match, index=index, kind="protocol", occupied=True, display_name="anon"))
        elif who[0] == "builtin":
            rows.append(Seat(match=match, index=index, kind="builtin", builtin_bot=who[1], occupied=True,
                             display_name=who[1]))
        else:
            rows.append(Seat(match=match, index=index, kind="human", user=who[1], occupied=True,
                             display_name=who[1].username))
    Seat.objects.bulk_create(rows)
    for seq, (seat, forced, reason, detail, think_ms) in enumerate(events):
        Event.objects.create(match=match, seq=seq, step=seq, seat=seat, action={"x": seq}, forced=forced,
                             reason=reason, detail=detail, think_ms=think_ms)
    return match
