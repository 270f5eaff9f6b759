"""Tables in the database: creating them, taking and freeing seats, recording the end.

Synchronous database code shared by the web views (a person creates a table or joins a seat)
and the arena (a bot takes a seat, a match starts or ends): Django's ORM, except on the paths
every bot-vs-bot game takes (taking a bot seat, the table-full check, the start, the final
scores), which are plain SQL written once per database vendor (:class:`_SeatSql`).  Seats are
taken with a conditional UPDATE, so two claimants racing for one seat cannot both win,
whichever process they are in.
"""
from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from games.arena import registry
from games.arena.models import Analysis, ArenaProcess, Match, RegisteredBot, Seat
from games.arena.play import analyses
from games.arena.ratings import rating
from games.names import MAX_NAME, clean_name  # noqa: F401  (the arena's callers read them here)

#: Seat choices on the create-table form.
ME, OPEN_HUMAN, OPEN_BOT = "me", "open_human", "open_bot"
BUILTIN_PREFIX = "builtin:"
REGISTERED_PREFIX = "registered:"
#: ``"user:<id>"``: a person-seat held for that user (a tournament's person entrant): only
#: they take it (:func:`join_seat`), and it stays theirs if they leave before the start.
HELD_PREFIX = "user:"

#: The create-table form's paces: (seconds per move at least, label).  "Watchable" is the
#: form's choice unless the visitor picks another: bots answer in microseconds, and a match
#: nobody can follow is no show (a 30-game table of built-in bots was over in 3 s).
PACES = ((0.0, "Full speed (for testing)"), (0.5, "Watchable: 0.5 s a move"), (1.0, "Slow: 1 s a move"),
         (2.0, "Very slow: 2 s a move"))
WATCHABLE = 0.5
#: The most a table's pace may be, in seconds (the automatic tables' setting is held to it).
MAX_PACE = 10.0
#: A table's thinking time per move for its bots, in whole seconds: up to 10 minutes, enough
#: for a person on a bot protocol's client (HanabiFX); whole seconds, so that a server has at
#: most this many deadline lengths (each has one timer: seats.Deadlines).
MIN_THINK_S, MAX_THINK_S = 1, 600

log = logging.getLogger("arena.tables")

#: The abort reason of a running match whose arena's lease on it expired (:func:`abort_stale`).
STALE = "the arena running it stopped (its lease expired)"
#: Rows one claim or recovery statement takes at most (a dead arena's thousand matches are
#: taken in batches, each a short transaction).
BATCH = 200


@dataclass(frozen=True)
class Run:
    """One arena's run of a match: the arena's name (``Match.owner``) and the attempt it
    started the match under (``Match.attempt``, from :func:`try_start`).  What the run
    records (:func:`finish`, :func:`abort`, :func:`set_final_view`) is written only while the
    row still names both and the match is running: a run whose arena was judged dead (its
    lease expired, :func:`abort_stale`) records nothing."""

    owner: str
    attempt: int


def lease_end(lease_s: float, now: datetime | None = None) -> datetime:
    """Until when a lease taken now lasts: ``now`` (the present) plus ``lease_s`` seconds."""
    return (now or timezone.now()) + timedelta(seconds=lease_s)


def reservation_hash(code: str) -> str:
    """What ``Seat.reservation`` keeps of a reservation code: its SHA-256, hex (64
    characters); the code itself is never stored."""
    return hashlib.sha256(code.encode()).hexdigest()


@contextmanager
def claiming():
    """A transaction for a claim that reads rows (``SELECT ... FOR UPDATE SKIP LOCKED``),
    then writes them.  On SQLite, which has no row locks, it takes the database's write lock
    first (a write that matches no row): a transaction that read first and wrote second would
    fail at once ("database is locked") whenever another connection (the event writer) wrote
    in between, where one that writes first waits its turn."""
    with transaction.atomic():
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE {Match._meta.db_table} SET id = id WHERE 0")
        yield


def _connected_games() -> list[str]:
    """Games whose bots connect to an arena (their protocol seats are held by a connection)."""
    return [g.slug for g in registry.all_games() if g.listens]


class _AnyRow:
    """Whether a query of the sweep has any row (its usual answer is no), the SQL compiled
    once per database vendor, arena and variant: Django built and compiled the same query
    at every sweep, 0.7 to 3.6 ms of CPU each, most of what an idle arena spends (about
    4 ms a second), which a match played at a slow pace pays per move.

    ``build(owner, now, *variant)`` returns the queryset; ``now`` (a datetime) is the one
    value that changes from call to call: the query is compiled with a marker time in its
    place, and each call puts its own time in the parameters where the marker was.
    """

    _MARKER = datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=dt_timezone.utc)
    #: Compiled queries kept (an arena has one name; a test process may start many).
    MAX_KEPT = 64

    def __init__(self, build):
        self.build = build
        self._compiled: dict = {}

    def __call__(self, owner: str, now: datetime | None, *variant) -> bool:
        key = (connection.vendor, owner, variant)
        compiled = self._compiled.get(key)
        if compiled is None:
            if len(self._compiled) >= self.MAX_KEPT:
                self._compiled.clear()
            query = self.build(owner, self._MARKER, *variant).query.exists()
            sql, params = query.get_compiler(connection=connection).as_sql()
            marker = connection.ops.adapt_datetimefield_value(self._MARKER)
            compiled = self._compiled[key] = (sql, list(params), [i for i, p in enumerate(params) if p == marker])
        sql, params, slots = compiled
        if slots:
            params = list(params)
            for i in slots:
                params[i] = connection.ops.adapt_datetimefield_value(now)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone() is not None


@dataclass
class Sitter:
    """Who takes a seat from the web: a logged-in user or a guest session, and the shown name."""

    name: str
    user_id: int | None = None
    session_key: str = ""


def tell_apart(names: list[str], tags: list[str]) -> list[str]:
    """``names`` (one per seat) with every name that occurs more than once followed by its
    seat's tag: ``["Random bot", "Ann", "Random bot"]`` -> ``["Random bot (1)", "Ann",
    "Random bot (3)"]`` (Jass tags are N, E, S, W).  Empty names stay as they are."""
    seen = Counter(names)
    return [f"{name} ({tag})" if name and seen[name] > 1 else name for name, tag in zip(names, tags)]


def _tell_seats_apart(match: Match, seats: list[Seat]) -> None:
    """Give same-named seats of ``match`` distinct names (:func:`tell_apart`), in place and in
    the database, so that the table, its texts, results, replays and history tell them apart."""
    spec = registry.get(match.game)
    seats = sorted(seats, key=lambda s: s.index)
    names = tell_apart([s.display_name if s.occupied else "" for s in seats],
                       [spec.seat_tag(match.config, s.index) for s in seats])
    for seat, name in zip(seats, names):
        if seat.occupied and name != seat.display_name:
            seat.display_name = name
            if seat.pk is not None:
                Seat.objects.filter(pk=seat.pk).update(display_name=name)


def may_seat(bot: RegisteredBot, sitter: Sitter | None) -> bool:
    """Whether ``sitter`` may seat registered ``bot`` at a table they create: its owner always,
    anyone (a guest, the arena itself) only when the owner shares it."""
    return bot.shared or (sitter is not None and sitter.user_id is not None and sitter.user_id == bot.owner_id)


def create_table(game: str, config: dict, seat_choices: list[str], sitter: Sitter | None,
                 *, auto: bool = False, omniscient: bool = False, creator_key: str = "",
                 verified_only: bool = False, pace_s: float = 0.0, think_s: int | None = None,
                 owner: str = "", lease_s: float = 0.0, connected: tuple[int, str, int | None] | None = None,
                 seed: int | None = None, tournament_game_id: int | None = None, rated: bool = True,
                 known_bots: dict[int, RegisteredBot] | None = None) -> Match:
    """Create an open table.

    ``seat_choices[i]`` is ``"me"``, ``"open_human"``, ``"user:<id>"`` (a seat held for that
    person, :data:`HELD_PREFIX`), ``"open_bot"``, ``"builtin:<name>"`` or
    ``"registered:<id>"`` (a registered bot that :func:`may_seat` allows ``sitter`` to seat:
    one the server calls over HTTP is seated at once, one that connects gets a seat held
    until it connects with its key); their number must match the game's seat count for
    ``config``.  Raises ``ValueError`` with
    a message for the form on a bad configuration (outside the form's bounds, see
    :meth:`GameSpec.table_config`) or seat list.  ``creator_key`` (``"ip:<address>"``) and
    ``sitter``'s user are kept for the per-minute creation limit (:func:`creation_refused`).
    ``omniscient``: the creator asks that spectators of a bots-only table see hands that are no
    longer current (``State.revealed_observation``); never an automatic table.
    ``verified_only``: its open bot seats take only bots that presented their key.
    ``pace_s``: the least seconds per move (0 to :data:`MAX_PACE`; 0: full speed);
    ``think_s``: the bots' thinking time per move in whole seconds (:data:`MIN_THINK_S` to
    :data:`MAX_THINK_S`), instead of the game's default deadline (None), for a game whose bots
    have one (``GameSpec.bot_deadline_setting``).
    ``owner``: the arena that holds the new table from its first moment, for ``lease_s``
    seconds (an automatic table it makes for a bot that connected to it: no other arena's bot
    may take a seat there before that bot does); empty: no arena holds it.
    ``connected``: ``(seat index, name, registered bot id or None)`` of the connected bot the
    table is made for, seated at once at that open bot seat as :func:`claim_bot_seat` would
    seat it (in the same statements: a claim after the creation was a query and a
    transaction more per table).  The seats written are in ``match.created_seats``.
    ``seed``: the match's seed (a tournament's deal), else a random one;
    ``tournament_game_id``: the tournament game it plays (games/arena/tournaments/schedule.py);
    ``rated``: whether its result feeds the ratings; ``known_bots``: registered bots by id
    already read and admitted (a tournament's entrants, checked when they entered: the owner,
    or anyone when shared, entered them, and a pair that joined with JOIN-T names bots of two
    owners), not read nor checked with :func:`may_seat` again (the table is the tournament's,
    whoever organised it).
    """
    spec = registry.get(game)
    config = spec.table_config(config)
    if not 0.0 <= pace_s <= MAX_PACE:
        raise ValueError(f"The pace must be from 0 to {MAX_PACE:g} s a move.")
    if think_s is not None:
        if not spec.bot_deadline_setting:
            raise ValueError(f"{spec.title} bots have no thinking time to set.")
        if isinstance(think_s, bool) or not isinstance(think_s, int) or not MIN_THINK_S <= think_s <= MAX_THINK_S:
            raise ValueError(f"The bots' thinking time must be a whole number of seconds from {MIN_THINK_S} "
                             f"to {MAX_THINK_S} ({MAX_THINK_S // 60} minutes).")
    if len(seat_choices) != spec.num_seats(config):
        raise ValueError(f"{spec.title} with this configuration has {spec.num_seats(config)} seats")
    if seat_choices.count(ME) > 1:
        raise ValueError("You can take only one seat.")
    if ME in seat_choices and sitter is None:
        raise ValueError("Choose a nickname to take a seat.")
    seats = []
    for index, choice in enumerate(seat_choices):
        if choice == ME:
            seats.append(Seat(index=index, kind=Seat.Kind.HUMAN, occupied=True, display_name=sitter.name,
                              user_id=sitter.user_id, session_key=sitter.session_key))
        elif choice == OPEN_HUMAN:
            seats.append(Seat(index=index, kind=Seat.Kind.HUMAN))
        elif choice.startswith(HELD_PREFIX):
            key = choice[len(HELD_PREFIX):]
            user = get_user_model().objects.filter(pk=int(key)).first() if key.isascii() and key.isdigit() else None
            if user is None:
                raise ValueError("That person has no account (any more).")
            seats.append(Seat(index=index, kind=Seat.Kind.HUMAN, reserved=True, user=user,
                              display_name=user.get_username()[:MAX_NAME]))
        elif choice == OPEN_BOT and spec.listens:
            seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL))
        elif choice.startswith(BUILTIN_PREFIX) and choice[len(BUILTIN_PREFIX):] in spec.builtin_bots:
            name = choice[len(BUILTIN_PREFIX):]
            seats.append(Seat(index=index, kind=Seat.Kind.BUILTIN, builtin_bot=name, occupied=True,
                              display_name=spec.builtin_bots[name][0]))
        elif choice.startswith(REGISTERED_PREFIX) and spec.doors:
            key = choice[len(REGISTERED_PREFIX):].strip()
            bot = (known_bots or {}).get(int(key)) if key.isdigit() else None
            admitted = bot is not None and bot.game == game
            if not admitted:
                bot = RegisteredBot.objects.filter(game=game, pk=key or 0).first()
            if bot is None:
                raise ValueError("That registered bot does not exist (any more).")
            if not admitted and not may_seat(bot, sitter):
                raise ValueError(f"{bot.name} is not shared by its owner: only they may seat it.")
            if spec.calls_bots:  # the server calls it: seated at once
                seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL, registered_bot=bot, occupied=True,
                                  display_name=bot.name))
            else:  # held until the bot connects with its key
                seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL, registered_bot=bot, reserved=True,
                                  display_name=bot.name))
        else:
            raise ValueError(f"Unknown seat choice {choice!r}")
    if connected is not None:
        index, name, bot_id = connected
        seat = seats[index] if 0 <= index < len(seats) else None
        if seat is None or seat.kind != Seat.Kind.PROTOCOL or seat.occupied or seat.reserved:
            raise ValueError(f"seat {index} is not an open bot seat")
        seat.occupied, seat.display_name, seat.registered_bot_id = True, name, bot_id
    if spec.unique_names and ME in seat_choices and any(
            s.display_name == sitter.name for s in seats if s.kind != Seat.Kind.HUMAN):
        raise ValueError(f"A player at this table is named {sitter.name} too, and {spec.title} tells its players "
                         "apart by name: choose another nickname.")
    match = Match(game=game, config=config, seed=secrets.randbits(62) if seed is None else seed, auto=auto,
                  tournament_game_id=tournament_game_id, rated=rated,
                  omniscient=omniscient and not auto, creator_key=creator_key[:64],
                  verified_only=verified_only, pace_s=pace_s, think_s=think_s,
                  created_by_id=sitter.user_id if sitter else None,
                  owner=owner, lease_until=lease_end(lease_s) if owner else None)
    sql = _SeatSql.get()
    with transaction.atomic():
        sql.insert([match])
        for seat in seats:
            seat.match = match
        _tell_seats_apart(match, seats)  # e.g. three "Random bot"s: (2), (3), (4)
        sql.insert(seats)
    match.created_seats = seats
    return match


def time_terms(match: Match) -> list[str]:
    """The table's own pace and thinking time as short phrases for the lobby and the table
    page, e.g. ``["paced: 0.5 s a move", "bots have 300 s to move"]``; nothing for full speed and the
    game's default deadline."""
    terms = []
    if match.pace_s:
        terms.append(f"paced: {match.pace_s:g} s a move")
    if match.think_s is not None:
        terms.append(f"bots have {match.think_s:g} s to move")
    return terms


def create_bot_table(game: str, sitter: Sitter, *, creator_key: str = "") -> Match:
    """"Play a bot now": an open table of ``game``'s default configuration (each form field's
    default) with ``sitter`` at the game's person seat (``GameSpec.person_seat``) and the game's strongest built-in bot
    (``GameSpec.strongest_bot``) at every other.  Every seat is taken, so the arena starts it
    as soon as it hears of the table.  Raises ``ValueError`` for a game without such a bot."""
    spec = registry.get(game)
    if spec.strongest_bot not in spec.builtin_bots:
        raise ValueError(f"{spec.title} has no built-in bot to play against.")
    config = spec.table_config({f.key: f.default for f in spec.config_fields})
    choices = [BUILTIN_PREFIX + spec.strongest_bot] * spec.num_seats(config)
    choices[spec.person_seat] = ME
    return create_table(game, config, choices, sitter, creator_key=creator_key)


def tables_created_lately(creator_key: str, user_id: int | None = None, seconds: float = 60.0) -> int:
    """Tables and matches (imports too) created in the last ``seconds`` from ``creator_key``
    (``"ip:<address>"``) or by user ``user_id``: the per-minute limit counts an address and
    a user, so fresh accounts from one address share its budget, and a user's budget
    follows them from address to address."""
    since = timezone.now() - timedelta(seconds=seconds)
    made_by = Q(creator_key=creator_key)
    if user_id is not None:
        made_by |= Q(created_by_id=user_id)
    return Match.objects.filter(made_by, created_at__gte=since).count()


def creation_refused(creator_key: str, user_id: int | None = None) -> str | None:
    """Why ``creator_key`` (``"ip:<address>"``) or user ``user_id`` may not create a table or
    a match now, or None: at most ``ARENA_TABLES_PER_MINUTE`` a minute between them
    (:func:`tables_created_lately`), through whichever door (the create-table form, "Play a
    bot now", a log import)."""
    limit = settings.ARENA["TABLES_PER_MINUTE"]
    if tables_created_lately(creator_key, user_id) < limit:
        return None
    return (f"You have created {limit} table{'s' if limit != 1 else ''} in the last minute: "
            "wait a moment before creating another.")


def name_taken(match_id: int, name: str, but: int | None = None) -> bool:
    """Whether a seat of ``match_id`` other than seat id ``but`` is taken under ``name``."""
    return Seat.objects.filter(match_id=match_id, occupied=True, display_name=name).exclude(pk=but).exists()


def number_copy(seat: Seat) -> str:
    """Give ``seat`` (taken by a registered bot at a table where the same bot already sits
    under its name) the bot's name with the first free number, ``"name (2)"``, ``"name
    (3)"``, ...; returns it.  One entrant fills every seat of a cooperative tournament's table
    (Hanabi), and its protocol tells players apart by name (``target_player``): the copies
    need names of their own, which each learns as a bot of the original learns its name (the
    last of its first ``CONNECTION_RESPONSE``)."""
    taken = set(Seat.objects.filter(match_id=seat.match_id).exclude(pk=seat.pk).values_list("display_name", flat=True))
    number = 2
    while f"{seat.display_name} ({number})" in taken:
        number += 1
    seat.display_name = f"{seat.display_name} ({number})"
    Seat.objects.filter(pk=seat.pk).update(display_name=seat.display_name)
    return seat.display_name


def join_seat(match_id: int, index: int, sitter: Sitter) -> str | None:
    """Take open person-seat ``index`` at an open table; returns an error text or None.  At
    a game whose players are told apart by name (``GameSpec.unique_names``) a name already
    at the table is refused, as its bots are.  A seat held for a person (:data:`HELD_PREFIX`)
    takes only them."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None or match.status != Match.Status.OPEN:
        return "This table is no longer open."
    if seat_of(match_id, sitter) is not None:
        return "You already have a seat at this table."
    held = Seat.objects.filter(match_id=match_id, index=index, reserved=True, kind=Seat.Kind.HUMAN).first()
    if held is not None and (sitter.user_id is None or held.user_id != sitter.user_id):
        return f"That seat is held for {held.display_name}: only they may take it."
    if registry.get(match.game).unique_names and name_taken(match_id, sitter.name):
        return (f"A player named {sitter.name} already sits at this table, and {registry.get(match.game).title} "
                "tells its players apart by name: choose another nickname.")
    try:
        # The check above can race with the same person joining in another request; the
        # database's one_seat_per_user / one_seat_per_guest_session constraints decide
        # (one seat per person).  A savepoint, so the caller's transaction stays usable.
        with transaction.atomic():
            taken = Seat.objects.filter(match_id=match_id, index=index, kind=Seat.Kind.HUMAN, occupied=False).update(
                occupied=True, display_name=sitter.name, user_id=sitter.user_id, session_key=sitter.session_key)
    except IntegrityError:
        return "You already have a seat at this table."
    return None if taken else "That seat is taken."


def leave_seat(match_id: int, sitter: Sitter) -> bool:
    """Give up one's seat at a table that has not started; returns whether a seat was freed."""
    seat = seat_of(match_id, sitter)
    if seat is None:
        return False
    if seat.reserved:  # held for them: it stays theirs
        return bool(Seat.objects.filter(pk=seat.pk, match__status=Match.Status.OPEN).update(occupied=False))
    return bool(Seat.objects.filter(pk=seat.pk, match__status=Match.Status.OPEN).update(
        occupied=False, display_name="", user_id=None, session_key=""))


def seat_of(match_id: int, sitter: Sitter | None) -> Seat | None:
    """The person-seat ``sitter`` holds at a table, if any."""
    if sitter is None:
        return None
    seats = Seat.objects.filter(match_id=match_id, kind=Seat.Kind.HUMAN, occupied=True)
    if sitter.user_id:
        return seats.filter(user_id=sitter.user_id).first()
    if sitter.session_key:
        return seats.filter(session_key=sitter.session_key, user__isnull=True).first()
    return None


def claim_bot_seat(game: str, name: str, config: dict | None = None, match_id: int | None = None,
                   bot_id: int | None = None, index: int | None = None, owner: str | None = None,
                   lease_s: float = 0.0, held_only: bool = False) -> Seat | None:
    """Take a bot seat at an open table of ``game`` for a bot that connected under ``name``:
    for a verified bot (``bot_id``, a :class:`RegisteredBot` whose key it presented) first a
    seat its owner held for it, else the oldest open bot seat (automatic tables last), for an
    unverified one not at a table for verified bots only (copies of one bot may play each
    other, as registered HTTP bots always could); only at tables whose configuration has
    ``config``'s keys and values (e.g. a protocol's game variant) and, with ``match_id``, only
    at that table; with ``index``, only that seat of a table (a protocol whose bot asks for
    a position: bridge's North); with ``held_only``, only a seat held for ``bot_id``.

    ``owner``: the arena (its name) whose connection the bot is.  Only a table no arena holds
    or ``owner`` holds is a candidate, and the table becomes ``owner``'s (``Match.owner``, a
    lease of ``lease_s`` seconds) in the same transaction that takes the seat, the table's
    row written first: under PostgreSQL's READ COMMITTED a second arena claiming a seat of
    the same table at the same moment waits for that row, then finds it another's and moves
    on, so bots of two arenas never sit at one open table (docs/architecture.md, *Several
    arenas*).  None: no owner is written (tests of the seating order).

    Returns the seat taken (its ``pk``, ``index``, ``match_id`` and what was written; not
    re-read) or None.  In plain SQL (:class:`_SeatSql`): every bot that connects costs this
    call at least once, and Django's query building was most of it (about 1.3 ms of CPU a
    call against 0.1 ms; ``benchmarks/blokus_tcp_games.py --setup-only``)."""
    sql = _SeatSql.get()
    until = lease_end(lease_s) if owner is not None else None
    if bot_id is not None:
        seat = sql.claim(game, name, config, match_id, bot_id, held=True, index=index, owner=owner, until=until)
        if seat is not None or held_only:
            return seat
    return sql.claim(game, name, config, match_id, bot_id, held=False, index=index, owner=owner, until=until)


class VendorSql:
    """Plain statements written once per database vendor (SQLite, PostgreSQL) from the models'
    table and column names, for hot paths where the ORM built the same query at every call.
    A subclass writes them in ``__init__``; ``get()`` gives its instance for the current
    connection's vendor."""

    _instance: "VendorSql | None" = None

    @classmethod
    def get(cls):
        if cls._instance is None or cls._instance.vendor != connection.vendor:
            cls._instance = cls()
        return cls._instance

    def __init__(self):
        self.vendor = connection.vendor
        self._readers: dict = {}

    def rows(self, statement: str, params: list) -> list[tuple]:
        """The rows of one statement."""
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchall()

    def read(self, model, where: str, params: list) -> list:
        """Instances of ``model`` (every concrete field loaded, as the ORM would load them)
        of the rows of its table that match ``where`` (SQL after WHERE, column names quoted;
        ``ORDER BY``, ``LIMIT``, ``FOR UPDATE`` may follow);
        the columns and each field's converters (JSON, datetimes, ...) are worked out once,
        where a raw queryset works them out again at every call (most of its cost)."""
        reader = self._readers.get(model)
        if reader is None:
            fields = model._meta.concrete_fields
            table = connection.ops.quote_name(model._meta.db_table)
            columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
            converters = []
            for i, f in enumerate(fields):
                col = f.get_col(model._meta.db_table)
                found = connection.ops.get_db_converters(col) + f.get_db_converters(connection)
                if found:
                    converters.append((i, col, found))
            reader = self._readers[model] = (f"SELECT {columns} FROM {table} WHERE ", [f.attname for f in fields],
                                             converters)
        select, names, converters = reader
        out = []
        for row in self.rows(select + where, params):
            if converters:
                row = list(row)
                for i, col, found in converters:
                    value = row[i]
                    for convert in found:
                        value = convert(value, col, connection)
                    row[i] = value
            out.append(model.from_db(connection.alias, names, row))
        return out

    @staticmethod
    def names(model) -> tuple[str, dict[str, str]]:
        """``(quoted table name, {field name: quoted column name})`` of ``model``."""
        q = connection.ops.quote_name
        return q(model._meta.db_table), {f.name: q(f.column) for f in model._meta.concrete_fields}


class _SeatSql(VendorSql):
    """The hot statements of seating and starting."""

    def __init__(self):
        super().__init__()
        self.seat, self.col = self.names(Seat)
        self.match, self.mcol = self.names(Match)
        self._claims: dict = {}
        self._updates: dict = {}

    def _config_test(self) -> str:
        """One key of a table's configuration equal to a value (params: key, value)."""
        if self.vendor == "postgresql":
            return f"(m.{self.mcol['config']} -> %s) = %s::jsonb"
        return f"json_extract(m.{self.mcol['config']}, %s) = %s"

    def _config_params(self, key: str, value) -> list:
        if self.vendor == "postgresql":
            return [key, json.dumps(value)]
        return ['$."' + key.replace('"', '') + '"', value]

    def claim(self, game: str, name: str, config: dict | None, match_id: int | None, bot_id: int | None,
              held: bool, index: int | None = None, owner: str | None = None, until=None) -> Seat | None:
        """Candidates (at most 20, oldest first), then a conditional UPDATE of each until one
        is taken (a racing claimant's seat is skipped); with ``owner``, first the table's
        (:meth:`hold`), in one transaction with the seat's."""
        c, m = self.col, self.mcol
        keys = tuple(config or ())
        shape = (keys, match_id is not None, held, bot_id is None, index is not None, owner is not None)
        select = self._claims.get(shape)
        if select is None:
            where = [f"m.{m['game']} = %s", f"m.{m['status']} = %s", f"s.{c['kind']} = %s", f"s.{c['occupied']} = %s"]
            where += [self._config_test()] * len(keys)
            if match_id is not None:
                where.append(f"s.{c['match']} = %s")
            if index is not None:
                where.append(f"s.{c['index']} = %s")
            if held:
                where += [f"s.{c['registered_bot']} = %s", f"s.{c['reserved']} = %s"]
            else:
                where.append(f"s.{c['registered_bot']} IS NULL")
                if bot_id is None:
                    where.append(f"m.{m['verified_only']} = %s")
            if owner is not None:
                where.append(f"m.{m['owner']} IN (%s, %s)")
            select = self._claims[shape] = (
                f"SELECT s.{c['id']}, s.{c['index']}, s.{c['match']}, s.{c['reserved']} "
                f"FROM {self.seat} s JOIN {self.match} m ON m.{m['id']} = s.{c['match']} "
                f"WHERE {' AND '.join(where)} "
                f"ORDER BY m.{m['auto']}, m.{m['created_at']}, s.{c['match']}, s.{c['index']} LIMIT 20")
        params: list = [game, Match.Status.OPEN, Seat.Kind.PROTOCOL, False]
        for key in keys:
            params += self._config_params(key, config[key])
        if match_id is not None:
            params.append(match_id)
        if index is not None:
            params.append(index)
        if held:
            params += [bot_id, True]
        elif bot_id is None:
            params.append(False)
        if owner is not None:
            params += ["", owner]
        # The candidates are read outside the transaction: on SQLite a transaction that read
        # first and writes second fails at once ("database is locked") when another
        # connection wrote in between, where one that writes first waits its turn.
        with connection.cursor() as cursor:
            cursor.execute(select, params)
            candidates = cursor.fetchall()
        for pk, index, mid, reserved in candidates:
            if self._take(pk, mid, name, bot_id, held, owner, until):
                return Seat(id=pk, index=index, match_id=mid, kind=Seat.Kind.PROTOCOL, occupied=True,
                            display_name=name, registered_bot_id=bot_id, reserved=bool(reserved))
        return None

    def _take(self, seat_id: int, match_id: int, name: str, bot_id: int | None, held: bool, owner: str | None,
              until) -> bool:
        """Take one candidate seat: with ``owner``, the table's row first (:meth:`hold`), then
        the seat, in one transaction (a seat another claimant took gives the table back as it
        was); whether it was taken."""
        c = self.col
        with transaction.atomic():
            if owner is not None and not self.hold(match_id, owner, until):
                return False
            with connection.cursor() as cursor:
                if held:
                    cursor.execute(f"UPDATE {self.seat} SET {c['occupied']} = %s, {c['display_name']} = %s "
                                   f"WHERE {c['id']} = %s AND {c['occupied']} = %s", [True, name, seat_id, False])
                else:
                    cursor.execute(f"UPDATE {self.seat} SET {c['occupied']} = %s, {c['display_name']} = %s, "
                                   f"{c['registered_bot']} = %s WHERE {c['id']} = %s AND {c['occupied']} = %s "
                                   f"AND {c['registered_bot']} IS NULL", [True, name, bot_id, seat_id, False])
                if cursor.rowcount == 1:
                    return True
            transaction.set_rollback(True)  # the table's owner as it was
            return False

    def hold(self, match_id: int, owner: str, until) -> bool:
        """Make open table ``match_id`` ``owner``'s until ``until`` if no arena or ``owner``
        holds it (one conditional UPDATE: it waits for, then sees, a racing arena's
        committed claim); whether it is ``owner``'s now."""
        m = self.mcol
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {self.match} SET {m['owner']} = %s, {m['lease_until']} = %s WHERE {m['id']} = %s "
                           f"AND {m['status']} = %s AND {m['owner']} IN (%s, %s)",
                           [owner, self._time(until), match_id, Match.Status.OPEN, "", owner])
            return cursor.rowcount == 1

    @staticmethod
    def _time(value):
        """A datetime (or None) as the database takes it in a plain statement."""
        return Match._meta.get_field("lease_until").get_db_prep_save(value, connection)

    def full_table(self, match_id: int) -> tuple[str, list[tuple[int, str]]] | None:
        """``(game, [(seat id, kind)])`` of ``match_id`` if it is an open table with every
        seat taken, else None (one query)."""
        c, m = self.col, self.mcol
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT m.{m['game']}, m.{m['status']}, s.{c['id']}, s.{c['kind']}, s.{c['occupied']} "
                           f"FROM {self.seat} s JOIN {self.match} m ON m.{m['id']} = s.{c['match']} "
                           f"WHERE s.{c['match']} = %s", [match_id])
            rows = cursor.fetchall()
        if not rows or rows[0][1] != Match.Status.OPEN or not all(occupied for *_, occupied in rows):
            return None
        return rows[0][0], [(pk, kind) for _, _, pk, kind, _ in rows]

    def final_scores(self, match_id: int, scores: list) -> None:
        """Each seat's final score, ``scores[index]``, in one statement."""
        if not scores:
            return
        c = self.col
        with connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {self.seat} SET {c['final_score']} = %s WHERE {c['match']} = %s "
                               f"AND {c['index']} = %s", [(score, match_id, i) for i, score in enumerate(scores)])

    def insert(self, objs: list) -> None:
        """Insert the unsaved instances ``objs`` (one model, at least one) in one statement and
        set their primary keys, each field's value prepared as ``save`` prepares it
        (``pre_save``, e.g. ``auto_now_add``, then ``get_db_prep_save``); where the ORM's
        ``create`` and ``bulk_create`` built their queries at every table (0.46 ms a table)."""
        meta = objs[0]._meta
        fields = [f for f in meta.concrete_fields if not f.primary_key]
        q = connection.ops.quote_name
        row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        params = [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in objs for f in fields]
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {q(meta.db_table)} ({', '.join(q(f.column) for f in fields)}) VALUES "
                           f"{', '.join([row] * len(objs))} RETURNING {q(meta.pk.column)}", params)
            ids = [pk for (pk,) in cursor.fetchall()]
        for obj, pk in zip(objs, ids):  # RETURNING gives the rows in the order of VALUES
            obj.pk = pk
            obj._state.adding, obj._state.db = False, connection.alias

    def update_match(self, match_id: int, values: dict, run: Run | None = None) -> bool:
        """Set the fields ``values`` (field name -> value) of one table's row in one UPDATE,
        each value prepared as its model field prepares it (``get_db_prep_save``: JSON
        encoded, datetimes adapted for the vendor); with ``run``, only while the row is
        running under that run (:class:`Run`).  Whether a row was written.  Raises
        ``FieldDoesNotExist`` for a name that is not a field of :class:`Match`."""
        fields = [Match._meta.get_field(name) for name in values]
        key = (tuple(values), run is not None)
        statement = self._updates.get(key)
        if statement is None:
            m = self.mcol
            statement = self._updates[key] = (
                f"UPDATE {self.match} SET {', '.join(f'{m[name]} = %s' for name in values)} WHERE {m['id']} = %s"
                + (f" AND {m['owner']} = %s AND {m['attempt']} = %s AND {m['status']} = %s" if run else ""))
        params = [f.get_db_prep_save(v, connection) for f, v in zip(fields, values.values())]
        params.append(match_id)
        if run is not None:
            params += [run.owner, run.attempt, Match.Status.RUNNING]
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.rowcount == 1

    def start(self, match_id: int, now, owner: str, until) -> int | None:
        """Mark ``match_id`` running, ``owner``'s until ``until`` under its next attempt
        number, if it is open with every seat taken and no arena or ``owner`` holds it; that
        attempt number if this call started it, else None."""
        c, m = self.col, self.mcol
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {self.match} SET {m['status']} = %s, {m['started_at']} = %s, {m['owner']} = %s, "
                           f"{m['lease_until']} = %s, {m['attempt']} = {m['attempt']} + 1 "
                           f"WHERE {m['id']} = %s AND {m['status']} = %s AND {m['owner']} IN (%s, %s) "
                           f"AND NOT EXISTS (SELECT 1 FROM {self.seat} s "
                           f"WHERE s.{c['match']} = %s AND s.{c['occupied']} = %s) RETURNING {m['attempt']}",
                           [Match.Status.RUNNING, self._time(now), owner, self._time(until), match_id,
                            Match.Status.OPEN, "", owner, match_id, False])
            row = cursor.fetchone()
        return None if row is None else row[0]


def create_prepared_table(game: str, config: dict, names: list[str], codes: list[str], *, creator_key: str = "",
                          pace_s: float = 0.0) -> Match:
    """An organiser's prepared game: a table of ``game`` whose every seat is held for a
    reservation, seat ``i`` under ``names[i]`` for the bot that presents ``codes[i]``; each
    seat is taken, so no other bot claims it, and keeps the code's
    :func:`reservation_hash` (``Seat.reservation``), so any arena finds it
    (:func:`find_reservation`).  One transaction.  Raises ``ValueError`` as
    :func:`create_table`."""
    with transaction.atomic():
        match = create_table(game, config, [OPEN_BOT] * len(names), None, creator_key=creator_key, pace_s=pace_s)
        seats = list(Seat.objects.filter(match_id=match.pk).order_by("index"))
        for seat, name, code in zip(seats, names, codes):
            seat.occupied, seat.reservation = True, reservation_hash(code)
            seat.display_name = clean_name(name) or f"Player {seat.index + 1}"
        Seat.objects.bulk_update(seats, ["occupied", "display_name", "reservation"])
    return match


def find_reservation(code_hash: str) -> tuple[int, int, int] | None:
    """``(match id, seat id, seat index)`` of the seat of an open table held for the
    reservation whose :func:`reservation_hash` is ``code_hash``; None if there is none (an
    unknown code, or its table started or ended)."""
    return (Seat.objects.filter(reservation=code_hash, match__status=Match.Status.OPEN)
            .values_list("match_id", "pk", "index").first())


def hold_table(match_id: int, owner: str, lease_s: float) -> bool:
    """Make open table ``match_id`` arena ``owner``'s for ``lease_s`` seconds unless another
    arena holds it (a bot of ``owner``'s takes a seat there without a claim: a reservation);
    whether it is ``owner``'s now."""
    return _SeatSql.get().hold(match_id, owner, lease_end(lease_s))


def release_table(match_id: int, owner: str) -> bool:
    """Arena ``owner``'s last connected bot left open table ``match_id``: no arena holds it
    any more (any arena may seat bots there, or start it).  Whether it was ``owner``'s."""
    return bool(Match.objects.filter(pk=match_id, owner=owner, status=Match.Status.OPEN).update(
        owner="", lease_until=None))


def seat_ids(match_id: int) -> list[int]:
    """The seat ids of table ``match_id``."""
    return list(Seat.objects.filter(match_id=match_id).values_list("pk", flat=True))


def reserved_open_tables(match_ids) -> set[int]:
    """Those of ``match_ids`` that are open tables with a seat held for a reservation
    (prepared games whose match has not started)."""
    return set(Match.objects.filter(pk__in=list(match_ids), status=Match.Status.OPEN)
               .filter(Exists(Seat.objects.filter(match=OuterRef("pk")).exclude(reservation="")))
               .values_list("pk", flat=True))


def create_seated_table(game: str, config: dict, bots: list[tuple[str, int | None]],
                        pace_s: float = 0.0, owner: str = "", lease_s: float = 0.0) -> Match:
    """An automatic table of ``game`` whose every seat is taken by a connected bot:
    ``bots[index]`` is ``(name, registered bot id or None)``, at ``pace_s`` (as
    :func:`create_table`), held by arena ``owner`` (whose connections the bots are) for
    ``lease_s`` seconds.  For a game whose automatic table gathers its players itself
    (Hanabi's lobby) and starts it at once
    (:meth:`games.arena.play.arena.Arena.start_gathered`).  Raises ``ValueError`` as
    :func:`create_table`."""
    with transaction.atomic():
        match = create_table(game, config, [OPEN_BOT] * len(bots), None, auto=True, pace_s=pace_s)
        seats = list(Seat.objects.filter(match=match).order_by("index"))
        for seat, (name, bot_id) in zip(seats, bots):
            seat.occupied, seat.display_name, seat.registered_bot_id = True, clean_name(name) or name, bot_id
        Seat.objects.bulk_update(seats, ["occupied", "display_name", "registered_bot"])
        if owner:  # never a moment without: another arena would free its seats (free_connected_bot_seats)
            hold_table(match.pk, owner, lease_s)
    return match


def seated_names(match_id: int) -> list[tuple[int, str | None]]:
    """``(seat id, display name)`` of every seat of ``match_id`` in seat order, the name None
    for a seat not taken yet (a seat held for a registered bot is not taken)."""
    return [(pk, name if occupied else None) for pk, name, occupied in
            Seat.objects.filter(match_id=match_id).order_by("index").values_list("pk", "display_name", "occupied")]


def seat_registered_bot(seat_id: int, bot_id: int) -> None:
    """A reserved seat was taken by registered bot ``bot_id`` (it presented its key): the seat
    names it, so the table, the API and the ratings show an identity, not an unverified bot."""
    Seat.objects.filter(pk=seat_id).update(registered_bot_id=bot_id)


def _open_bot_seats(seats) -> int:
    """Open the connected-bot seats ``seats`` (a queryset) again: a seat held for a
    registered bot stays held for it, one held for a reservation stays taken (its code may
    be presented again); how many were opened."""
    seats = seats.filter(reservation="")
    freed = seats.filter(reserved=True).update(occupied=False)
    return freed + seats.filter(reserved=False).update(occupied=False, display_name="", registered_bot=None)


def free_bot_seat(seat_id: int, owner: str | None = None) -> int | None:
    """A bot left before its table started: the seat is open again (a seat held for a
    registered bot or a reservation stays held, :func:`_open_bot_seats`).  An automatic table
    left with nobody at it is removed (a port scan or a bot that hung up leaves nothing
    behind).  With ``owner`` (the arena whose connection the bot was), only while that arena
    holds the table: one that lost it (judged dead) frees nothing another arena seated since.
    Returns the table's id if the seat's table is open (and ``owner``'s), else None."""
    tables_ = Match.objects.filter(seats__pk=seat_id, status=Match.Status.OPEN)
    if owner is not None:
        tables_ = tables_.filter(owner=owner)
    match_id = tables_.values_list("pk", flat=True).first()
    if match_id is None:
        return None
    _open_bot_seats(Seat.objects.filter(pk=seat_id, match_id=match_id, occupied=True))
    Match.objects.filter(pk=match_id, auto=True, status=Match.Status.OPEN).exclude(seats__occupied=True).delete()
    return match_id


def free_connected_bot_seats(owner: str) -> int:
    """Open tables no live arena holds any more: those whose owner's lease expired (an
    arena that stopped, or stalled past its lease), and those of no owner with a connected
    bot's seat taken (left so by a server before owners existed).  Their connected bots'
    seats are opened again (:func:`_open_bot_seats`), no arena holds them
    (``owner`` ''), so any arena may seat bots or start them, and automatic tables left with
    nobody at them are deleted.  Tables of the live arena ``owner`` (the caller) are never
    touched.  Rows are taken with ``SELECT ... FOR UPDATE SKIP LOCKED`` in batches of
    :data:`BATCH`, each its own transaction (a row another arena frees meanwhile is skipped).
    Returns how many seats were opened."""
    now = timezone.now()
    if not _ANY_GHOST_TABLE(owner, now):  # the sweep's usual answer, without taking a lock
        return 0
    return _free_tables(_ghost_tables(owner, now))


def _ghost_tables(owner: str, now: datetime):
    """Open tables no live arena holds (:func:`free_connected_bot_seats`), as ``owner`` sees
    them at ``now``."""
    expired = ~Q(owner="") & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))
    connected = Seat.objects.filter(match=OuterRef("pk"), kind=Seat.Kind.PROTOCOL, occupied=True, reservation="")
    unowned_with_bots = Q(owner="", game__in=_connected_games()) & Exists(connected)
    return Match.objects.filter(status=Match.Status.OPEN).exclude(owner=owner).filter(expired | unowned_with_bots)


_ANY_GHOST_TABLE = _AnyRow(_ghost_tables)


def free_own_bot_seats(owner: str) -> int:
    """At arena ``owner``'s stop: its connected bots' connections are closing, so the seats
    they took at open tables are opened again and no arena holds those tables (as
    :func:`free_connected_bot_seats` for a dead arena).  Returns how many seats were opened."""
    return _free_tables(Match.objects.filter(status=Match.Status.OPEN, owner=owner))


def _free_tables(tables_) -> int:
    freed = 0
    if not tables_.exists():  # nothing to free (the usual answer), without taking a lock
        return freed
    while True:
        with claiming():
            ids = list(tables_.select_for_update(skip_locked=True).order_by("pk").values_list("pk", flat=True)[:BATCH])
            if not ids:
                break
            Match.objects.filter(pk__in=ids).update(owner="", lease_until=None)
            freed += _open_bot_seats(Seat.objects.filter(match_id__in=ids, kind=Seat.Kind.PROTOCOL, occupied=True,
                                                         match__game__in=_connected_games()))
            Match.objects.filter(pk__in=ids, auto=True).exclude(seats__occupied=True).delete()
        if len(ids) < BATCH:
            break
    return freed


def rename_seat(seat_id: int, name: str) -> None:
    """Record a bot's self-chosen name (the first one it sends), told apart from the other
    seats' names (:func:`tell_apart`) once the match runs."""
    Seat.objects.filter(pk=seat_id).update(display_name=name)
    match = Match.objects.filter(seats__pk=seat_id).exclude(status=Match.Status.OPEN).first()
    if match is not None:
        _tell_seats_apart(match, list(match.seats.all()))


def full_table(match_id: int) -> tuple[str, list[tuple[int, str]]] | None:
    """``(game, [(seat id, kind)])`` of ``match_id`` if it is an open table whose seats are
    all taken, else None: the arena asks after every seat taken, so this is one plain query."""
    return _SeatSql.get().full_table(match_id)


def match_of_seat(seat_id: int) -> int | None:
    """The match id of seat ``seat_id`` (None if there is no such seat), in one plain query:
    a bot's transport asks it once a seat is taken, to name its room."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT match_id FROM {Seat._meta.db_table} WHERE id = %s", [seat_id])
        row = cursor.fetchone()
    return None if row is None else row[0]


def try_start(match_id: int, owner: str = "", lease_s: float = 0.0) -> Match | None:
    """Mark a full open table as running, arena ``owner``'s for ``lease_s`` seconds under its
    next attempt number (``Match.attempt``), if no other arena holds it (one conditional
    UPDATE, so only one caller wins, whichever process it is in); returns it if this call
    started it, its ``attempt`` the run's (:class:`Run`), its seats (with their registered
    bots) in ``started_seats`` in seat order, with the names as the table shows them.
    Without ``owner`` (tests) nobody holds the run: no lease, as a dead arena's."""
    now = timezone.now()
    attempt = _SeatSql.get().start(match_id, now, owner, lease_end(lease_s, now) if owner else None)
    if attempt is None:
        return None
    match, seats = _table(match_id, with_bots=True)  # (it exists: this call started it)
    _tell_seats_apart(match, seats)
    match.started_seats = seats  # with the names as the table shows them
    return match


def _table(match_id: int, with_bots: bool = False) -> tuple[Match | None, list[Seat]]:
    """A table (None if there is none) and its seats in seat order (each seat's ``match`` is that table; with
    ``with_bots``, its ``registered_bot`` too), in two or three plain queries: at every start
    and finish, ``select_related`` cost 0.7 ms of CPU against 0.2 (Django's query building), and
    raw querysets 0.18 ms against 0.075 read with :meth:`VendorSql.read`."""
    sql = _SeatSql.get()
    match = next(iter(sql.read(Match, f"{sql.mcol['id']} = %s", [match_id])), None)
    if match is None:
        return None, []
    seats = sql.read(Seat, f"{sql.col['match']} = %s ORDER BY {sql.col['index']}", [match_id])
    bot_ids = [s.registered_bot_id for s in seats if s.registered_bot_id is not None]
    bots = {b.pk: b for b in RegisteredBot.objects.filter(pk__in=bot_ids)} if with_bots and bot_ids else {}
    for seat in seats:
        seat.match = match
        if with_bots and seat.registered_bot_id is not None:
            seat.registered_bot = bots.get(seat.registered_bot_id)
    return match, seats


def _lost(match_id: int, run: Run, what: str) -> bool:
    log.warning("match %d: arena %s lost its lease on it (attempt %d): its %s is not recorded",
                match_id, run.owner, run.attempt, what)
    return False


def finish(match_id: int, result: dict, analysis_subjects: list = (), run: Run | None = None) -> bool:
    """Record a finished match: status, result, each seat's final score and, in the same
    transaction, its ratings (:func:`games.arena.ratings.rating.rate_match`) and a pending analysis
    row per subject (``GameSpec.analysis_subjects``; games/arena/play/analyses.py).  With
    ``run``, only while the row is running under that run: a run that lost its lease
    (another arena aborted the match) records nothing, rates nothing, and is logged.
    Whether it was recorded."""
    sql = _SeatSql.get()
    with transaction.atomic():
        # plain statements: the ORM's query building was a tenth of a game's fixed cost
        if not sql.update_match(match_id, {"status": Match.Status.FINISHED, "result": result,
                                           "finished_at": timezone.now()}, run):
            return _lost(match_id, run, "result") if run is not None else False
        sql.final_scores(match_id, result.get("scores", []))
        if analysis_subjects:
            Analysis.objects.bulk_create(analyses.pending_rows(match_id, list(analysis_subjects)))
        match, seats = _table(match_id)
        if match is not None:  # a rated match's finished_at is set again there, under its ratings' lock
            rating.rate_match(match, seats, stamp=True)
    return True


def set_final_view(match_id: int, view: dict, run: Run | None = None) -> bool:
    """Store ``Match.final_view`` (the last state with every hand) of ``match_id``, in one
    plain UPDATE (:func:`games.arena.play.replay.store_end` at every match's end); with ``run``,
    only while the match is running under that run (as :func:`finish`).  Whether it was."""
    if _SeatSql.get().update_match(match_id, {"final_view": view}, run):
        return True
    return _lost(match_id, run, "final view") if run is not None else False


def abort(match_id: int, reason: str, run: Run | None = None) -> bool:
    """Mark an unfinished match aborted; its events stay.  With ``run`` (a runner ending its
    own match), only while the match is running under that run (as :func:`finish`): an
    abort another arena recorded first is never overwritten.  Whether it was recorded."""
    rows = Match.objects.filter(pk=match_id)
    if run is None:
        rows = rows.filter(status__in=[Match.Status.RUNNING, Match.Status.OPEN])
    else:
        rows = rows.filter(status=Match.Status.RUNNING, owner=run.owner, attempt=run.attempt)
    if rows.update(status=Match.Status.ABORTED, result={"aborted": reason}, finished_at=timezone.now()):
        return True
    return _lost(match_id, run, "abort") if run is not None else False


def renew_leases(owner: str, lease_s: float) -> int:
    """Arena ``owner`` lives: every match it holds (running, or an open table of its
    connected bots) is its for ``lease_s`` seconds more, in one UPDATE.  Returns how many."""
    return Match.objects.filter(owner=owner, status__in=[Match.Status.OPEN, Match.Status.RUNNING]).update(
        lease_until=lease_end(lease_s))


def lost_runs(owner: str, attempts: dict[int, int]) -> list[int]:
    """Of the matches arena ``owner`` is playing (``attempts``: match id -> the attempt its
    run started under), those no longer running under that run: another arena judged
    ``owner`` dead (its lease expired) and aborted them, or they were deleted."""
    ids = list(attempts)
    held = set()
    for at in range(0, len(ids), 500):
        held.update(Match.objects.filter(pk__in=ids[at:at + 500], owner=owner, status=Match.Status.RUNNING)
                    .values_list("pk", "attempt"))
    return [pk for pk, attempt in attempts.items() if (pk, attempt) not in held]


def lost_seats(owner: str, seat_ids_: list[int]) -> list[tuple[int, int]]:
    """Of the seats arena ``owner``'s connected bots took (``seat_ids_``), ``(seat id, match
    id)`` of those at a table that is no longer an open table of ``owner``'s: another arena
    freed it (``owner``'s lease on it expired), or it was cancelled.  A seat whose table
    started is not among them, nor one that no longer exists."""
    lost = []
    for at in range(0, len(seat_ids_), 500):
        rows = (Seat.objects.filter(pk__in=seat_ids_[at:at + 500])
                .exclude(match__status=Match.Status.OPEN, match__owner=owner)
                .exclude(match__status=Match.Status.RUNNING).values_list("pk", "match_id"))
        lost += list(rows)
    return lost


def abort_stale(owner: str, starting: bool = False) -> list[int]:
    """Running matches whose arena's lease on them expired (a ``NULL`` lease counts as
    expired: rows from before leases, or from :func:`try_start` without an arena) can never
    resume: abort them, with the reason :data:`STALE`.  The live arena ``owner`` (the
    caller) never aborts its own, but ``starting`` it runs none yet: those of its name are
    a previous process's (``ARENA_NAME`` set, the same after a restart), aborted whatever
    their lease.  Taken with ``SELECT ... FOR UPDATE SKIP LOCKED`` in batches of
    :data:`BATCH`, each its own transaction: two arenas noticing at once split the work.
    Returns the ids aborted."""
    now = timezone.now()
    aborted = []
    if not _ANY_STALE_RUN(owner, now, starting):  # the sweep's usual answer, without taking a lock
        return aborted
    stale = _stale_runs(owner, now, starting)
    while True:
        with claiming():
            ids = list(stale.select_for_update(skip_locked=True).order_by("pk").values_list("pk", flat=True)[:BATCH])
            Match.objects.filter(pk__in=ids).update(status=Match.Status.ABORTED, result={"aborted": STALE},
                                                    finished_at=now)
        aborted += ids
        if len(ids) < BATCH:
            return aborted


def _stale_runs(owner: str, now: datetime, starting: bool):
    """Running matches whose arena's lease expired (:func:`abort_stale`), as ``owner`` sees
    them at ``now``."""
    expired = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    return Match.objects.filter(status=Match.Status.RUNNING).filter(
        (expired & ~Q(owner=owner)) | Q(owner=owner) if starting else expired & ~Q(owner=owner))


_ANY_STALE_RUN = _AnyRow(_stale_runs)


def remove_dead_arenas(owner: str) -> None:
    """Remove the :class:`ArenaProcess` rows of arenas other than ``owner`` whose lease ran
    out (at every sweep; usually none, found without building the query)."""
    now = timezone.now()
    if _ANY_DEAD_ARENA(owner, now):
        _dead_arenas(owner, now).delete()


def _dead_arenas(owner: str, now: datetime):
    return ArenaProcess.objects.filter(alive_until__lt=now).exclude(name=owner)


_ANY_DEAD_ARENA = _AnyRow(_dead_arenas)


def claim_tables_to_start(owner: str, lease_s: float, limit: int = 50) -> list[int]:
    """Open tables whose seats are all taken and that arena ``owner`` may start: its own
    (its connected bots sit there), and those no arena holds whose seats no connected bot
    needs to take (built-in bots, bots the server calls, people; a prepared table whose
    reserved seats no bot has taken waits for them).  At most ``limit``, taken with
    ``SELECT ... FOR UPDATE SKIP LOCKED`` (SQLite, a single writer, has no row locks:
    Django drops the clause there) and made ``owner``'s for ``lease_s`` seconds in the same
    transaction, so two arenas' sweeps never take one table.  Returns their ids; the caller
    starts them (:func:`try_start`) and gives back those it did not
    (:func:`release_table`)."""
    if not _ANY_STARTABLE(owner, None):  # the sweep's usual answer, without taking a lock
        return []
    with claiming():
        startable = _startable(owner).select_for_update(skip_locked=True).order_by("pk")
        ids = list(startable.values_list("pk", flat=True)[:limit])
        Match.objects.filter(pk__in=ids, owner="").update(owner=owner, lease_until=lease_end(lease_s))
    return ids


def _startable(owner: str, now: datetime | None = None):
    """Full open tables arena ``owner`` may start (:func:`claim_tables_to_start`; ``now``
    unused: no lease is read)."""
    connected = Q(game__in=_connected_games()) & Exists(Seat.objects.filter(match=OuterRef("pk"),
                                                                          kind=Seat.Kind.PROTOCOL))
    full = ~Exists(Seat.objects.filter(match=OuterRef("pk"), occupied=False))
    return Match.objects.filter(status=Match.Status.OPEN).filter(full).filter(
        Q(owner=owner) | (Q(owner="") & ~connected))


_ANY_STARTABLE = _AnyRow(_startable)


def seat_choices_of(match: Match, sitter: Sitter | None, open_bot: str) -> list[str]:
    """The create-table seat choices that set up ``match``'s table again ("play again"): the
    same built-in and registered bots, ``sitter``'s own seat as "me", other people's seats
    open for a person, and connecting bots' seats as ``open_bot`` (the game's usual choice for
    a bot seat)."""
    mine = seat_of(match.pk, sitter) if sitter is not None else None
    choices = []
    for seat in match.seats.order_by("index"):
        if seat.kind == Seat.Kind.HUMAN:
            choices.append(ME if mine is not None and mine.index == seat.index else OPEN_HUMAN)
        elif seat.kind == Seat.Kind.BUILTIN:
            choices.append(BUILTIN_PREFIX + seat.builtin_bot)
        elif seat.registered_bot_id is not None:
            choices.append(f"{REGISTERED_PREFIX}{seat.registered_bot_id}")
        else:
            choices.append(open_bot)
    return choices
