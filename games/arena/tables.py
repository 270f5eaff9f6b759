"""Tables in the database: creating them, taking and freeing seats, recording the end.

Synchronous database code shared by the web views (a person creates a table or joins a seat)
and the arena (a bot takes a seat, a match starts or ends): Django's ORM, except on the paths
every bot-vs-bot game takes (taking a bot seat, the table-full check, the start, the final
scores), which are plain SQL written once per database vendor (:class:`_SeatSql`).  Seats are
taken with a conditional UPDATE, so two claimants racing for one seat cannot both win,
whichever process they are in.
"""
from __future__ import annotations

import json
import secrets
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from games.arena import analyses, ratings, registry
from games.arena.models import Analysis, Match, RegisteredBot, Seat
from games.names import MAX_NAME, clean_name  # noqa: F401  (the arena's callers read them here)

#: Seat choices on the create-table form.
ME, OPEN_HUMAN, OPEN_BOT = "me", "open_human", "open_bot"
BUILTIN_PREFIX = "builtin:"
REGISTERED_PREFIX = "registered:"

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
                 verified_only: bool = False, pace_s: float = 0.0, think_s: int | None = None) -> Match:
    """Create an open table.

    ``seat_choices[i]`` is ``"me"``, ``"open_human"``, ``"open_bot"``, ``"builtin:<name>"`` or
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
        elif choice == OPEN_BOT and spec.listens:
            seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL))
        elif choice.startswith(BUILTIN_PREFIX) and choice[len(BUILTIN_PREFIX):] in spec.builtin_bots:
            name = choice[len(BUILTIN_PREFIX):]
            seats.append(Seat(index=index, kind=Seat.Kind.BUILTIN, builtin_bot=name, occupied=True,
                              display_name=spec.builtin_bots[name][0]))
        elif choice.startswith(REGISTERED_PREFIX) and spec.doors:
            bot = RegisteredBot.objects.filter(game=game, pk=choice[len(REGISTERED_PREFIX):].strip() or 0).first()
            if bot is None:
                raise ValueError("That registered bot does not exist (any more).")
            if not may_seat(bot, sitter):
                raise ValueError(f"{bot.name} is not shared by its owner: only they may seat it.")
            if spec.calls_bots:  # the server calls it: seated at once
                seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL, registered_bot=bot, occupied=True,
                                  display_name=bot.name))
            else:  # held until the bot connects with its key
                seats.append(Seat(index=index, kind=Seat.Kind.PROTOCOL, registered_bot=bot, reserved=True,
                                  display_name=bot.name))
        else:
            raise ValueError(f"Unknown seat choice {choice!r}")
    if spec.unique_names and ME in seat_choices and any(
            s.display_name == sitter.name for s in seats if s.kind != Seat.Kind.HUMAN):
        raise ValueError(f"A player at this table is named {sitter.name} too, and {spec.title} tells its players "
                         "apart by name: choose another nickname.")
    match = Match(game=game, config=config, seed=secrets.randbits(62), auto=auto,
                  omniscient=omniscient and not auto, creator_key=creator_key[:64],
                  verified_only=verified_only, pace_s=pace_s, think_s=think_s,
                  created_by_id=sitter.user_id if sitter else None)
    sql = _SeatSql.get()
    with transaction.atomic():
        sql.insert([match])
        for seat in seats:
            seat.match = match
        _tell_seats_apart(match, seats)  # e.g. three "Random bot"s: (2), (3), (4)
        sql.insert(seats)
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


def join_seat(match_id: int, index: int, sitter: Sitter) -> str | None:
    """Take open person-seat ``index`` at an open table; returns an error text or None.  At
    a game whose players are told apart by name (``GameSpec.unique_names``) a name already
    at the table is refused, as its bots are."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None or match.status != Match.Status.OPEN:
        return "This table is no longer open."
    if seat_of(match_id, sitter) is not None:
        return "You already have a seat at this table."
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
                   bot_id: int | None = None, index: int | None = None) -> Seat | None:
    """Take a bot seat at an open table of ``game`` for a bot that connected under ``name``:
    for a verified bot (``bot_id``, a :class:`RegisteredBot` whose key it presented) first a
    seat its owner held for it, else the oldest open bot seat (automatic tables last), for an
    unverified one not at a table for verified bots only (copies of one bot may play each
    other, as registered HTTP bots always could); only at tables whose configuration has
    ``config``'s keys and values (e.g. a protocol's game variant) and, with ``match_id``, only
    at that table; with ``index``, only that seat of a table (a protocol whose bot asks for
    a position: bridge's North).

    Returns the seat taken (its ``pk``, ``index``, ``match_id`` and what was written; not
    re-read) or None.  In plain SQL (:class:`_SeatSql`): every bot that connects costs this
    call at least once, and Django's query building was most of it (about 1.3 ms of CPU a
    call against 0.1 ms; ``benchmarks/blokus_tcp_games.py --setup-only``)."""
    sql = _SeatSql.get()
    if bot_id is not None:
        seat = sql.claim(game, name, config, match_id, bot_id, held=True, index=index)
        if seat is not None:
            return seat
    return sql.claim(game, name, config, match_id, bot_id, held=False, index=index)


class _SeatSql:
    """The hot statements of seating and starting, written once per database vendor (SQLite,
    PostgreSQL) from the models' table and column names."""

    _instance: "_SeatSql | None" = None

    @classmethod
    def get(cls) -> "_SeatSql":
        if cls._instance is None or cls._instance.vendor != connection.vendor:
            cls._instance = cls()
        return cls._instance

    def __init__(self):
        self.vendor = connection.vendor
        q = connection.ops.quote_name
        self.seat, self.match = q(Seat._meta.db_table), q(Match._meta.db_table)
        self.col = {f.name: q(f.column) for f in [*Seat._meta.concrete_fields]}
        self.mcol = {f.name: q(f.column) for f in [*Match._meta.concrete_fields]}
        self._claims: dict = {}
        self._updates: dict = {}
        self._readers: dict = {}

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
              held: bool, index: int | None = None) -> Seat | None:
        """Candidates (at most 20, oldest first), then a conditional UPDATE of each until one
        is taken (a racing claimant's seat is skipped)."""
        c, m = self.col, self.mcol
        keys = tuple(config or ())
        shape = (keys, match_id is not None, held, bot_id is None, index is not None)
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
        with connection.cursor() as cursor:
            cursor.execute(select, params)
            candidates = cursor.fetchall()
            for pk, index, mid, reserved in candidates:
                if held:
                    cursor.execute(f"UPDATE {self.seat} SET {c['occupied']} = %s, {c['display_name']} = %s "
                                   f"WHERE {c['id']} = %s AND {c['occupied']} = %s", [True, name, pk, False])
                else:
                    cursor.execute(f"UPDATE {self.seat} SET {c['occupied']} = %s, {c['display_name']} = %s, "
                                   f"{c['registered_bot']} = %s WHERE {c['id']} = %s AND {c['occupied']} = %s "
                                   f"AND {c['registered_bot']} IS NULL", [True, name, bot_id, pk, False])
                if cursor.rowcount == 1:
                    return Seat(id=pk, index=index, match_id=mid, kind=Seat.Kind.PROTOCOL, occupied=True,
                                display_name=name, registered_bot_id=bot_id, reserved=bool(reserved))
        return None

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

    def read(self, model, where: str, params: list) -> list:
        """Instances of ``model`` (every concrete field loaded, as the ORM would load them)
        of the rows of its table that match ``where`` (SQL after WHERE, column names quoted);
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
        with connection.cursor() as cursor:
            cursor.execute(select + where, params)
            rows = cursor.fetchall()
        out = []
        for row in rows:
            if converters:
                row = list(row)
                for i, col, found in converters:
                    value = row[i]
                    for convert in found:
                        value = convert(value, col, connection)
                    row[i] = value
            out.append(model.from_db(connection.alias, names, row))
        return out

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

    def update_match(self, match_id: int, values: dict) -> None:
        """Set the fields ``values`` (field name -> value) of one table's row in one UPDATE,
        each value prepared as its model field prepares it (``get_db_prep_save``: JSON
        encoded, datetimes adapted for the vendor).  Raises ``FieldDoesNotExist`` for a name
        that is not a field of :class:`Match`."""
        fields = [Match._meta.get_field(name) for name in values]
        key = tuple(values)
        statement = self._updates.get(key)
        if statement is None:
            statement = self._updates[key] = (
                f"UPDATE {self.match} SET {', '.join(f'{self.mcol[name]} = %s' for name in values)} "
                f"WHERE {self.mcol['id']} = %s")
        params = [f.get_db_prep_save(v, connection) for f, v in zip(fields, values.values())]
        with connection.cursor() as cursor:
            cursor.execute(statement, [*params, match_id])

    def start(self, match_id: int, now) -> bool:
        """Mark ``match_id`` running if it is open with every seat taken; whether this call did."""
        c, m = self.col, self.mcol
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {self.match} SET {m['status']} = %s, {m['started_at']} = %s "
                           f"WHERE {m['id']} = %s AND {m['status']} = %s AND NOT EXISTS (SELECT 1 FROM {self.seat} s "
                           f"WHERE s.{c['match']} = %s AND s.{c['occupied']} = %s)",
                           [Match.Status.RUNNING, now, match_id, Match.Status.OPEN, match_id, False])
            return cursor.rowcount == 1


def reserve_seats(match_id: int, names: list[str]) -> list[int]:
    """Hold every bot seat of a new table for a reservation (an organiser's prepared game):
    each seat is taken, under ``names[index]``, so no other bot claims it; the arena keeps
    which reservation code fills which seat.  Returns the seat ids in seat order."""
    seats = list(Seat.objects.filter(match_id=match_id).order_by("index"))
    for seat, name in zip(seats, names):
        Seat.objects.filter(pk=seat.pk).update(occupied=True, display_name=clean_name(name) or f"Player {seat.index + 1}")
    return [seat.pk for seat in seats]


def create_seated_table(game: str, config: dict, bots: list[tuple[str, int | None]],
                        pace_s: float = 0.0) -> Match:
    """An automatic table of ``game`` whose every seat is taken by a connected bot:
    ``bots[index]`` is ``(name, registered bot id or None)``, at ``pace_s`` (as
    :func:`create_table`).  For a game whose automatic table gathers its players itself
    (Hanabi's lobby) and starts it at once
    (:meth:`games.arena.service.Arena.start_gathered`).  Raises ``ValueError`` as
    :func:`create_table`."""
    with transaction.atomic():
        match = create_table(game, config, [OPEN_BOT] * len(bots), None, auto=True, pace_s=pace_s)
        seats = list(Seat.objects.filter(match=match).order_by("index"))
        for seat, (name, bot_id) in zip(seats, bots):
            seat.occupied, seat.display_name, seat.registered_bot_id = True, clean_name(name) or name, bot_id
        Seat.objects.bulk_update(seats, ["occupied", "display_name", "registered_bot"])
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


def free_bot_seat(seat_id: int) -> None:
    """A bot left before its table started: the seat is open again.  An automatic table left
    with nobody at it is removed (a port scan or a bot that hung up leaves nothing behind)."""
    open_seat = Seat.objects.filter(pk=seat_id, match__status=Match.Status.OPEN)
    open_seat.filter(reserved=True).update(occupied=False)  # still held for its bot
    open_seat.filter(reserved=False).update(occupied=False, display_name="", registered_bot=None)
    Match.objects.filter(seats__pk=seat_id, auto=True, status=Match.Status.OPEN).exclude(
        seats__occupied=True).delete()


def free_connected_bot_seats() -> int:
    """At arena start and stop: seats of bots that connected (games whose bots connect; a
    seat held for a registered bot stays held for it) at tables that have not started belong to connections of a process that is
    gone or going, so nobody will ever play them; open them again and delete automatic
    tables left with nobody at them.  Returns how many seats were freed.

    Safe only with one arena process per database (see the README), which owns every such
    connection."""
    with transaction.atomic():
        connected = Seat.objects.filter(match__status=Match.Status.OPEN, kind=Seat.Kind.PROTOCOL, occupied=True,
                                        match__game__in=[g.slug for g in registry.all_games() if g.listens])
        freed = connected.filter(reserved=True).update(occupied=False)
        freed += connected.filter(reserved=False).update(occupied=False, display_name="", registered_bot=None)
        Match.objects.filter(auto=True, status=Match.Status.OPEN).exclude(seats__occupied=True).delete()
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


def try_start(match_id: int) -> Match | None:
    """Mark a full open table as running (one conditional UPDATE, so only one caller wins);
    returns it if this call started it, its seats (with their registered bots) in
    ``started_seats`` in seat order, with the names as the table shows them."""
    if not _SeatSql.get().start(match_id, timezone.now()):
        return None
    match, seats = _table(match_id, with_bots=True)  # (it exists: this call started it)
    _tell_seats_apart(match, seats)
    match.started_seats = seats  # with the names as the table shows them
    return match


def _table(match_id: int, with_bots: bool = False) -> tuple[Match | None, list[Seat]]:
    """A table (None if there is none) and its seats in seat order (each seat's ``match`` is that table; with
    ``with_bots``, its ``registered_bot`` too), in two or three plain queries: at every start
    and finish, ``select_related`` cost 0.7 ms of CPU against 0.2 (Django's query building), and
    raw querysets 0.18 ms against 0.075 read with :meth:`_SeatSql.read`."""
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


def finish(match_id: int, result: dict, analysis_subjects: list = ()) -> None:
    """Record a finished match: status, result, each seat's final score and, in the same
    transaction, its ratings (:func:`games.arena.ratings.rate_match`) and a pending analysis
    row per subject (``GameSpec.analysis_subjects``; games/arena/analyses.py)."""
    sql = _SeatSql.get()
    with transaction.atomic():
        # plain statements: the ORM's query building was a tenth of a game's fixed cost
        sql.update_match(match_id, {"status": Match.Status.FINISHED, "result": result, "finished_at": timezone.now()})
        sql.final_scores(match_id, result.get("scores", []))
        if analysis_subjects:
            Analysis.objects.bulk_create(analyses.pending_rows(match_id, list(analysis_subjects)))
        match, seats = _table(match_id)
        if match is not None:  # a rated match's finished_at is set again there, under its ratings' lock
            ratings.rate_match(match, seats, stamp=True)


def set_final_view(match_id: int, view: dict) -> None:
    """Store ``Match.final_view`` (the last state with every hand) of ``match_id``, in one
    plain UPDATE (:func:`games.arena.replay.store_end` at every match's end)."""
    _SeatSql.get().update_match(match_id, {"final_view": view})


def abort(match_id: int, reason: str) -> None:
    """Mark an unfinished match aborted; its events stay."""
    Match.objects.filter(pk=match_id, status__in=[Match.Status.RUNNING, Match.Status.OPEN]).update(
        status=Match.Status.ABORTED, result={"aborted": reason}, finished_at=timezone.now())


def abort_stale() -> int:
    """At arena start: matches left running by a previous process can't resume; abort them."""
    ids = list(Match.objects.filter(status=Match.Status.RUNNING).values_list("pk", flat=True))
    for pk in ids:
        abort(pk, "the server stopped during the match")
    return len(ids)


def tables_waiting_to_start() -> list[int]:
    """Open tables whose seats are all taken (the arena's periodic sweep starts them)."""
    return list(Match.objects.filter(status=Match.Status.OPEN).exclude(seats__occupied=False)
                .values_list("pk", flat=True))


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
