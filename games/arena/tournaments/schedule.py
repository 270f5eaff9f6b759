"""Tournaments in the database: creating one, its plan of games, and the matches the arenas
make of that plan (docs/architecture.md, *Tournaments*).

Synchronous database code, called from an arena's sweep (:func:`step`) and from the web, the
API and ``manage.py tournament``.  The arenas need nothing else to agree on: every arena's
sweep calls :func:`step`, which takes each running tournament's row with ``SELECT ... FOR
UPDATE`` (one arena at a time per tournament, the other waiting its turn; SQLite's single
writer gives the same), counts its live matches, and makes as many more as its ``at_once`` allows, oldest
planned game first.  A match of built-in bots and bots the server calls is made owned by
the arena that made it, which starts it at once; a match with a seat for a bot that connects
is made owned by no arena, and the arena its bot reaches takes it (the core's seating).

Exactly once: at most one match per planned game is not aborted (the constraint
``one_live_match_per_tournament_game``); a planned game is done when a match of it finished
or it was forfeited.  A match aborted because its arena died is a planned game without a live
match again, and is made anew from the same seed: the standings come out as if nothing
happened (the matches' own chance is their seed's).
"""
from __future__ import annotations

import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from games.arena import registry
from games.arena.models import ArenaProcess, Entrant, Match, RegisteredBot, Seat, Tournament, TournamentGame
from games.arena.play import tables
from games.arena.tournaments import formats, standings

log = logging.getLogger("arena.tournaments")

#: Bounds on what one tournament may ask (each planned game is a row and a match).
MAX_ENTRANTS = 64
MAX_GAMES = 20_000
MAX_AT_ONCE = 200
MAX_ROUNDS = 50
MAX_PER_PAIRING = 2_000
MAX_WAIT_S = 3_600.0

LIVE = (Match.Status.OPEN, Match.Status.RUNNING)
#: The entrant choice of a person entering themselves (the web's "Sign up to play", the API).
ME = "me"
#: Bridge pair events: pairs move between tables by a movement (formats.mitchell, formats.howell).
MOVEMENTS = (Tournament.Format.MITCHELL, Tournament.Format.HOWELL)
#: The pair counts a complete Howell takes (formats.howell's published cards).
HOWELL_PAIRS = (4, 6, 8)
#: The fewest pairs of a Mitchell: 3 tables (with fewer, every E-W pair would meet the same
#: N-S pairs again and again; a Howell suits them).
MITCHELL_MIN_PAIRS = 6
#: Why a running match of a tournament that stopped early, or was cancelled, ends.
STOPPED_EARLY = "the tournament stopped early: its result is decided"
CANCELLED = "the tournament was cancelled"


def sides_of(spec, config: dict) -> list[tuple[int, ...]]:
    """The seats of each side of a match of ``spec`` with ``config``: one side of every seat
    in a cooperative game (Hanabi: one entrant's bots play together), the partnerships
    (``GameSpec.teams``: Jass, bridge), else one seat per side."""
    seats = spec.num_seats(config)
    if spec.cooperative:
        return [tuple(range(seats))]
    teams = spec.teams(config)
    if teams:
        return [members for _, members in teams]
    return [(i,) for i in range(seats)]


def deal_seed(tournament_seed: int, deal: int) -> int:
    """The seed of deal ``deal`` of a tournament seeded ``tournament_seed``: 62 bits of
    BLAKE2b of both, so equal deals get equal seeds and nobody can steer one."""
    digest = hashlib.blake2b(f"{tournament_seed}:{deal}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


def _entrant(spec, choice: str, creator_id: int | None, index: int) -> Entrant:
    """An unsaved :class:`Entrant` for ``choice``; ``ValueError`` with a message if it is not
    one (an unknown bot, a registered bot its owner does not share with ``creator_id``).
    :data:`ME` enters the person ``creator_id`` themselves (they play their own matches)."""
    if choice == ME:
        return _person(spec, creator_id, index)
    if choice.startswith(tables.BUILTIN_PREFIX):
        name = choice[len(tables.BUILTIN_PREFIX):]
        if name not in spec.builtin_bots:
            raise ValueError(f"{spec.title} has no built-in bot {name!r}.")
        return Entrant(index=index, builtin_bot=name, display_name=spec.builtin_bots[name][0])
    if choice.startswith(tables.REGISTERED_PREFIX):
        bots = []
        # "registered:<id>+<id>": a bridge pair of two registered bots (the first North or East).
        for key in choice[len(tables.REGISTERED_PREFIX):].split("+", 1):
            key = key.strip()
            bot = RegisteredBot.objects.filter(game=spec.slug, pk=int(key) if key.isdigit() else 0).first()
            if bot is None:
                raise ValueError(f"No registered {spec.title} bot {key!r}.")
            if not tables.may_seat(bot, tables.Sitter(name="", user_id=creator_id)):
                raise ValueError(f"{bot.name} is not shared by its owner: only they may enter it.")
            bots.append(bot)
        if len(bots) == 1:
            return Entrant(index=index, registered_bot=bots[0], display_name=bots[0].name)
        return _pair_entrant(spec, index, *bots)
    raise ValueError(f"Unknown entrant {choice!r}: use builtin:<name>, registered:<id>"
                     f"{', registered:<id>+<id> (a pair)' if spec.teams({}) else ''} or me.")


def _pair_entrant(spec, index: int, first: RegisteredBot, second: RegisteredBot) -> Entrant:
    """An unsaved :class:`Entrant` of two registered bots playing one side of a partnership
    game (``first`` in the side's first seat: bridge's North or East); ``ValueError`` if
    they are one bot or the game has no partnerships."""
    if not spec.teams({}):
        raise ValueError(f"{spec.title} has no partnerships: a pair of bots cannot be one entrant.")
    if first.pk == second.pk:
        raise ValueError(f"A pair is two bots: {first.name} cannot partner itself.")
    return Entrant(index=index, registered_bot=first, partner_bot=second,
                   display_name=f"{first.name} & {second.name}"[:64])


def _entrant_bots(choice: str) -> list[str]:
    """The registered bots an entrant choice names (one, or two for a pair)."""
    if not choice.startswith(tables.REGISTERED_PREFIX):
        return []
    return [key.strip() for key in choice[len(tables.REGISTERED_PREFIX):].split("+", 1)]


def movement_refusal(format: str, pairs: int) -> str | None:
    """Why a Mitchell or Howell (``format``) cannot be played by ``pairs`` pairs, else None.
    Howell: 4, 6 or 8 pairs (formats.howell's complete cards); Mitchell: an even number, at
    least :data:`MITCHELL_MIN_PAIRS` (3 tables), at most :data:`MAX_ENTRANTS`.  There are no
    sit-outs: an odd count needs a pair more or fewer."""
    if format == Tournament.Format.HOWELL:
        if pairs not in HOWELL_PAIRS:
            return f"A Howell takes 4, 6 or 8 pairs (2, 3 or 4 tables), not {pairs}."
    elif pairs < MITCHELL_MIN_PAIRS or pairs % 2 or pairs > MAX_ENTRANTS:
        return (f"A Mitchell takes an even number of pairs from {MITCHELL_MIN_PAIRS} to {MAX_ENTRANTS} "
                f"(3 to {MAX_ENTRANTS // 2} tables), not {pairs}; 4 pairs play a Howell.")
    return None


def movement_capacity(format: str) -> int:
    """The most pairs a Mitchell or Howell takes: an event that many pairs entered is full."""
    return HOWELL_PAIRS[-1] if format == Tournament.Format.HOWELL else MAX_ENTRANTS


def movement_plan(format: str, pairs: int) -> list[formats.Game]:
    """The planned games of a Mitchell or Howell of ``pairs`` pairs: one per table per round,
    ``sides = (N-S entrant, E-W entrant)``, ``deal`` the board set.  Mitchell: entrants
    ``0..T-1`` are the N-S pairs 1..T, ``T..2T-1`` the E-W pairs T+1..2T (formats.mitchell's
    numbers, an even T with the skip and without the revenge round); Howell: entrant ``i`` is
    pair ``i + 1``.  Raises ``ValueError`` with :func:`movement_refusal`'s message."""
    why = movement_refusal(format, pairs)
    if why:
        raise ValueError(why)
    rounds = formats.mitchell(pairs // 2) if format == Tournament.Format.MITCHELL else formats.howell(pairs)
    return [formats.Game(r, (t.ns - 1, t.ew - 1), t.board_set)
            for r, tables_ in enumerate(rounds, 1) for t in tables_]


def movement_config(config: dict, boards_per_round: int, board_set: int) -> dict:
    """The match configuration of a table playing ``board_set`` of a movement: the event's
    bridge ``config`` with ``boards_per_round`` boards numbered on from set to set (set ``s``
    starts at board ``(s - 1) * boards_per_round + 1``; the board number fixes dealer and
    vulnerability by Law 2), so every table on one set plays the same boards."""
    return {**config, "boards": boards_per_round, "board": (board_set - 1) * boards_per_round + 1}


def _check_movement(spec, config: dict, format: str, scoring: str, per_pairing: int, pairs: int,
                    now: bool) -> None:
    """``ValueError`` unless a Mitchell or Howell (``format``) can be made of this: bridge,
    duplicate scoring without the team match's replay, a scoring across the field, boards per
    round within the table form's bounds, and ``pairs`` the movement takes (``now``: it
    starts at once), or at most its capacity (pairs may join until a later start)."""
    if spec.slug != "bridge":
        raise ValueError("Mitchell and Howell movements are for contract bridge pairs.")
    if config.get("scoring") != "duplicate" or config.get("replay"):
        raise ValueError("A Mitchell or Howell plays each board once at each table and compares the tables: "
                         "choose duplicate scoring, without the team match's replay.")
    if scoring not in Tournament.Scoring.values:
        raise ValueError("Scoring across the field: choose matchpoints (Law 78A) or cross-IMPs (Law 78B); in the "
                         f"API and the command line {' or '.join(Tournament.Scoring.values)}.")
    try:
        spec.table_config({**config, "boards": per_pairing})
    except ValueError as exc:
        raise ValueError(f"Boards per round: {exc}") from None
    why = movement_refusal(format, pairs)
    if why and (now or pairs > movement_capacity(format)):
        raise ValueError(why + ("" if now else " (With a later start, pairs may join until then.)"))


def _person(spec, user_id: int | None, index: int) -> Entrant:
    """An unsaved person :class:`Entrant` for user ``user_id``; ``ValueError`` for nobody (a
    guest, the command line) or a partnership game without a bot to partner them."""
    user = get_user_model().objects.filter(pk=user_id).first() if user_id is not None else None
    if user is None:
        raise ValueError("Only a logged-in person may enter themselves.")
    if spec.teams({f.key: f.default for f in spec.config_fields}) or spec.cooperative:
        if (spec.standin or spec.strongest_bot) not in spec.builtin_bots:
            raise ValueError(f"{spec.title} has no built-in bot to partner a person.")
    return Entrant(index=index, user=user, display_name=user.get_username()[:64])


def create(*, game: str, config: dict, format: str, entrants: list[str], name: str = "",
           per_pairing: int = 1, rounds: int = 0, at_once: int = 4, think_s: int | None = None,
           pace_s: float = 0.0, rated: bool = True, late_join: bool = False, wait_s: float = 60.0,
           early_stop: bool = False, starts_at: datetime | None = None, scoring: str = "",
           created_by_id: int | None = None) -> Tournament:
    """Create a tournament of ``game`` (``config`` as the create-table form takes it) in
    ``format`` (:class:`Tournament.Format`) between ``entrants`` (``"builtin:<name>"``,
    ``"registered:<id>"``), starting at ``starts_at`` (None: now; the arenas start it at
    their next sweep).  ``per_pairing``: round robin's matches per pairing, duplicate's deals
    per pairing, a bridge movement's (Mitchell, Howell) boards per round; ``rounds``: Swiss
    rounds (0: ceil(log2(entrants)) at the start); ``scoring``: a movement's
    :class:`Tournament.Scoring` (empty for the other formats); a movement's entrants are pairs
    (a built-in bot or a registered bot in both seats of its side, or
    ``"registered:<id>+<id>"``, two registered bots) and their number one the movement takes
    (:func:`movement_refusal`).  Scheduled ahead (``starts_at`` in the future) it may have
    fewer entrants than a match (or the movement) needs, even none, for people and pairs to
    sign up (:func:`join`), up to a movement's capacity.  Raises ``ValueError``
    with a message for anything out of bounds or impossible (the module's ``MAX_*``)."""
    spec = registry.get(game)
    config = spec.table_config(config)
    if format not in Tournament.Format.values:
        raise ValueError(f"Unknown format {format!r}: one of {', '.join(Tournament.Format.values)}.")
    k = len(sides_of(spec, config))
    movement = format in MOVEMENTS
    # Scheduled ahead, it may wait for people (or pairs) to sign up (join): too few at its
    # start, it is cancelled then (too_few).
    ahead = starts_at is not None and starts_at > timezone.now()
    if movement:
        _check_movement(spec, config, format, scoring, per_pairing, len(entrants), now=not ahead)
        if early_stop:
            raise ValueError("The early stop is for a match-up of two entrants, not a pair event.")
    elif scoring:
        raise ValueError("Scoring across the field (matchpoints, cross-IMPs) is for Mitchell and Howell movements.")
    elif not (0 if ahead else 1) <= len(entrants) <= MAX_ENTRANTS:
        raise ValueError(f"A tournament has 1 to {MAX_ENTRANTS} entrants.")
    elif len(entrants) < max(k, 2 if k == 1 and format == Tournament.Format.SWISS else k) and not ahead:
        raise ValueError(f"{spec.title} with this configuration needs at least {k} entrants a match "
                         "(or a start time ahead, for people to sign up).")
    registered = [bot for e in entrants for bot in _entrant_bots(e)]
    if len(set(registered)) != len(registered):
        raise ValueError("A registered bot is entered twice.")
    if format == Tournament.Format.SWISS and k != 2:
        raise ValueError("Swiss pairs two sides a match: choose a configuration with two sides (players or teams).")
    if not 1 <= per_pairing <= MAX_PER_PAIRING:
        raise ValueError(f"Matches (or deals) per pairing: 1 to {MAX_PER_PAIRING}.")
    if not 0 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"Rounds: 0 (automatic) to {MAX_ROUNDS}.")
    if not 1 <= at_once <= MAX_AT_ONCE:
        raise ValueError(f"Matches at once: 1 to {MAX_AT_ONCE}.")
    if not 0 <= wait_s <= MAX_WAIT_S:
        raise ValueError(f"The wait for an entrant that connects: 0 to {MAX_WAIT_S:g} s.")
    if not 0.0 <= pace_s <= tables.MAX_PACE:
        raise ValueError(f"The pace must be from 0 to {tables.MAX_PACE:g} s a move.")
    if think_s is not None and not tables.MIN_THINK_S <= think_s <= tables.MAX_THINK_S:
        raise ValueError(f"The thinking time: {tables.MIN_THINK_S} to {tables.MAX_THINK_S} s.")
    if early_stop and len(entrants) != 2:
        raise ValueError("The early stop is for a match-up of two entrants.")
    if late_join and format != Tournament.Format.SWISS:
        raise ValueError("Late entry is for Swiss tournaments (a round robin's plan is fixed at the start).")
    rows = [_entrant(spec, choice, created_by_id, i) for i, choice in enumerate(entrants)]
    # A built-in bot may be entered more than once (a bot author's yardstick against itself):
    # its copies are told apart by number.
    shown = tables.tell_apart([r.display_name for r in rows], [str(i + 1) for i in range(len(rows))])
    for row, display_name in zip(rows, shown):
        row.display_name = display_name
    if format == Tournament.Format.SWISS:
        # 0 (automatic) stays 0 until the start, which counts the entrants then (_start).
        planned = (rounds or formats.swiss_rounds_needed(max(len(entrants), 1))) * (len(entrants) // 2)
    elif movement:
        planned, rounds = 0, 0  # planned at the start, for the pairs entered by then
    else:
        planned = len(_plan(format, len(entrants), k, per_pairing)) if len(entrants) >= k else 0
        rounds = 0
    if planned > MAX_GAMES:
        raise ValueError(f"That plan has {planned} matches; a tournament has at most {MAX_GAMES}.")
    title = name.strip()[:100] or f"{spec.title} {Tournament.Format(format).label}"
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=title, game=game, config=config, format=format, per_pairing=per_pairing, rounds=rounds,
            at_once=at_once, think_s=think_s, pace_s=pace_s, rated=rated, late_join=late_join, wait_s=wait_s,
            early_stop=early_stop, seed=secrets.randbits(62), starts_at=starts_at or timezone.now(),
            scoring=scoring if movement else "", created_by_id=created_by_id)
        for row in rows:
            row.tournament = tournament
        Entrant.objects.bulk_create(rows)
    return tournament


def join(tournament_id: int, choice: str, user_id: int | None) -> Entrant:
    """Enter ``choice`` (as :func:`create` takes entrants) into a tournament: any tournament
    before it starts; a Swiss with ``late_join`` until half its rounds are played (lichess's
    rule), the late entrant's missed rounds counting half a point each (standings.py).  A
    registered bot may be entered by its owner, or by anyone when its owner shares it; a
    built-in bot by the organiser (or ``user_id`` None: the command line); :data:`ME` enters
    the person ``user_id``, once.  Raises ``ValueError`` with the reason."""
    with tables.claiming():
        tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
        if tournament is None:
            raise ValueError(f"There is no tournament {tournament_id}.")
        if tournament.status == Tournament.Status.SCHEDULED:
            first_round = 1
        elif entry_open(tournament):
            first_round = tournament.round + 1
        else:
            raise ValueError("Entrants may join before the start, or a running Swiss tournament that allows late "
                             "entry until half its rounds are played.")
        spec = registry.get(tournament.game)
        count = tournament.entrants.count()
        if count >= MAX_ENTRANTS:
            raise ValueError(f"A tournament has at most {MAX_ENTRANTS} entrants.")
        if tournament.early_stop and count >= 2:
            raise ValueError("The early stop is for a match-up of two entrants, and this one has its two.")
        entrant = _entrant(spec, choice, user_id, count)
        if entrant.registered_bot_id and tournament.entrants.filter(registered_bot_id=entrant.registered_bot_id).exists():
            raise ValueError(f"{entrant.display_name} has entered already.")
        if entrant.user_id and tournament.entrants.filter(user_id=entrant.user_id).exists():
            raise ValueError("You have signed up already: a person is one entrant of a tournament.")
        if entrant.builtin_bot and user_id is not None and user_id != tournament.created_by_id:
            raise ValueError("Only the tournament's organiser enters built-in bots.")
        if entrant.builtin_bot and tournament.entrants.filter(builtin_bot=entrant.builtin_bot).exists():
            entrant.display_name = f"{entrant.display_name} ({count + 1})"
        if tournament.format == Tournament.Format.SWISS:
            planned = (tournament.rounds or formats.swiss_rounds_needed(count + 1)) * ((count + 2) // 2)
        elif tournament.format in MOVEMENTS:
            planned = _movement_room(tournament, count)
        else:
            k = len(sides_of(spec, tournament.config))
            planned = len(_plan(tournament.format, count + 1, k, tournament.per_pairing)) if count + 1 >= k else 0
        if planned > MAX_GAMES:
            raise ValueError(f"With one more entrant the plan has {planned} matches; at most {MAX_GAMES}.")
        entrant.tournament = tournament
        entrant.joined_round = first_round
        entrant.save()
        return entrant


def entry_open(tournament: Tournament) -> bool:
    """Whether entrants may join ``tournament`` now (:func:`join`): before its start, or a
    running Swiss with ``late_join`` until half its rounds are played (lichess's rule); never
    a match-up with the early stop that has its two entrants."""
    if tournament.early_stop and tournament.entrants.count() >= 2:
        return False
    return tournament.status == Tournament.Status.SCHEDULED or (
        tournament.status == Tournament.Status.RUNNING and tournament.late_join
        and tournament.format == Tournament.Format.SWISS and tournament.round < tournament.rounds / 2)


def withdraw(tournament_id: int, user_id: int) -> Entrant:
    """Take person ``user_id``'s entry out of a tournament that has not started; the later
    entrants move up one index (the plan, written at the start, names entrants by index).
    Returns the entry removed; ``ValueError`` with the reason (started, not signed up)."""
    with tables.claiming():
        tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
        if tournament is None:
            raise ValueError(f"There is no tournament {tournament_id}.")
        if tournament.status != Tournament.Status.SCHEDULED:
            raise ValueError("You may withdraw only before the tournament starts.")
        entrant = tournament.entrants.filter(user_id=user_id).first()
        if entrant is None:
            raise ValueError("You have not signed up to this tournament.")
        entrant.delete()
        # One row at a time, lowest first: each moves into the index the last one freed
        # (one UPDATE of them all could meet unique_entrant_index half-way).
        later = tournament.entrants.filter(index__gt=entrant.index).order_by("index")
        for pk, index in later.values_list("pk", "index"):
            Entrant.objects.filter(pk=pk).update(index=index - 1)
        return entrant


def too_few(tournament: Tournament) -> str:
    """Why ``tournament`` cannot start with the entrants it has (people withdrew after it
    was created with enough), else ``""``."""
    k = len(sides_of(registry.get(tournament.game), tournament.config))
    need = 2 if k == 1 and tournament.format == Tournament.Format.SWISS else k
    n = tournament.entrants.count()
    return f"too few entrants at the start: {n}, a match needs {need}" if n < need else ""


def _movement_room(tournament: Tournament, count: int) -> int:
    """0 if a pair event of ``count`` pairs has room for one more, else ``ValueError``
    saying it is full (its plan is made at the start, for the pairs entered by then)."""
    most = movement_capacity(tournament.format)
    if count >= most:
        raise ValueError(f"The event is full: a {Tournament.Format(tournament.format).label} "
                         f"takes at most {most} pairs.")
    return 0


def _check_event_open(tournament: Tournament | None, tournament_id: int) -> None:
    """``ValueError`` unless ``tournament`` (id ``tournament_id``) is a scheduled bridge pair
    event with room for a pair."""
    if tournament is None or tournament.format not in MOVEMENTS:
        raise ValueError(f"there is no bridge pair event {tournament_id} (TOURNAMENTS lists the open ones)")
    if tournament.status != Tournament.Status.SCHEDULED:
        raise ValueError(f"event {tournament_id} is {tournament.status}: pairs join before its start")
    _movement_room(tournament, tournament.entrants.count())


def event_refusal(tournament_id: int) -> str | None:
    """Why a pair cannot join bridge pair event ``tournament_id`` now, else None."""
    try:
        _check_event_open(Tournament.objects.filter(pk=tournament_id).first(), tournament_id)
    except ValueError as exc:
        return str(exc)
    return None


def entered(tournament_id: int, bot_id: int) -> bool:
    """Whether registered bot ``bot_id`` plays in tournament ``tournament_id`` (alone or in a pair)."""
    return Entrant.objects.filter(Q(registered_bot_id=bot_id) | Q(partner_bot_id=bot_id),
                                  tournament_id=tournament_id).exists()


def join_pair(tournament_id: int, first_bot_id: int, second_bot_id: int) -> Entrant:
    """Enter two registered bots as one pair into a scheduled bridge Mitchell or Howell (what
    JOIN-T with an event id does: both bots proved themselves with their keys and named each
    other, so no owner's permission is asked).  ``first_bot_id`` sits North or East.  Raises
    ``ValueError`` with the reason: no such event, not a pair event, started, full, a bot
    entered already."""
    with tables.claiming():
        tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
        _check_event_open(tournament, tournament_id)
        ids = [first_bot_id, second_bot_id]
        already = tournament.entrants.filter(Q(registered_bot_id__in=ids) | Q(partner_bot_id__in=ids)).first()
        if already is not None:
            raise ValueError(f"{already.display_name} entered event {tournament_id} already")
        bots = {b.pk: b for b in RegisteredBot.objects.filter(pk__in=ids, game=tournament.game)}
        if len(bots) != 2:
            raise ValueError("a pair is two registered bridge bots")
        entrant = _pair_entrant(registry.get(tournament.game), tournament.entrants.count(), bots[first_bot_id],
                                bots[second_bot_id])
        entrant.tournament = tournament
        entrant.save()
        return entrant


def open_events(game: str, limit: int = 100) -> list[int]:
    """Ids of the scheduled pair events (Mitchell, Howell) of ``game`` that pairs may still
    join, oldest first, at most ``limit``."""
    rows = Tournament.objects.filter(game=game, status=Tournament.Status.SCHEDULED, format__in=MOVEMENTS)
    counts = rows.annotate(n=Count("entrants")).order_by("pk").values_list("pk", "format", "n")[:limit]
    return [pk for pk, format, n in counts if n < movement_capacity(format)]


def _plan(format: str, n: int, k: int, per_pairing: int) -> list[formats.Game]:
    if format in MOVEMENTS:
        return movement_plan(format, n)
    if format == Tournament.Format.ROUND_ROBIN:
        return formats.round_robin(n, k, per_pairing)
    return formats.duplicate(n, k, per_pairing)


def _start(tournament: Tournament) -> None:
    """Write the plan of a due tournament (its row locked by the caller) and mark it running:
    every game of a round robin or duplicate or movement, the first round of a Swiss.  A pair
    event whose pairs by now are a number its movement does not take is cancelled instead,
    with the reason in its note."""
    if tournament.format == Tournament.Format.SWISS:
        tournament.rounds = tournament.rounds or formats.swiss_rounds_needed(tournament.entrants.count())
        _pair_swiss_round(tournament)
    else:
        spec = registry.get(tournament.game)
        k = len(sides_of(spec, tournament.config))
        n = tournament.entrants.count()
        why = movement_refusal(tournament.format, n) if tournament.format in MOVEMENTS else None
        if why:
            _end(tournament, Tournament.Status.CANCELLED, f"not started: {why}")
            return
        plan = _plan(tournament.format, n, k, tournament.per_pairing)
        TournamentGame.objects.bulk_create(
            [TournamentGame(tournament=tournament, number=i, round=g.round, sides=list(g.sides), deal=g.deal)
             for i, g in enumerate(plan)], batch_size=500)
        tournament.rounds = max((g.round for g in plan), default=0)
        tournament.round = 1
    tournament.status = Tournament.Status.RUNNING
    tournament.started_at = timezone.now()
    tournament.save(update_fields=["status", "started_at", "rounds", "round"])


def _pair_swiss_round(tournament: Tournament) -> None:
    """Plan the next Swiss round from the standings so far (formats.swiss_round: score groups,
    no repeat, the bye to the lowest without one); a late entrant's missed rounds count as
    half-point byes (standings.points)."""
    table = standings.compute(tournament)
    next_round = tournament.round + 1
    active = {e.index: table.points[e.index] for e in tournament.entrants.all() if e.joined_round <= next_round}
    played = {frozenset(g.sides) for g in tournament.games.all()}
    byes = set(table.byes)
    side0 = {i: table.side0.get(i, 0) for i in active}
    first_deal = tournament.games.count()
    games, bye = formats.swiss_round(active, played, byes, next_round, first_deal, side0_counts=side0)
    TournamentGame.objects.bulk_create(
        [TournamentGame(tournament=tournament, number=first_deal + i, round=g.round, sides=list(g.sides), deal=g.deal)
         for i, g in enumerate(games)])
    if bye is not None:
        # A bye is a planned game of one entrant that nobody plays: a point (standings.py).
        TournamentGame.objects.create(tournament=tournament, number=first_deal + len(games), round=next_round,
                                      sides=[bye], deal=first_deal + len(games),
                                      forfeit={"absent": [], "reason": "bye", "bye": True})
    tournament.round = next_round


#: Tournament id -> the lowest planned game number that may still be undone, in this
#: process: the search for the next games starts there rather than at the first of a plan of
#: thousands (a full turn starts again from 0: a match aborted by a dead arena is undone again).
_first_undone: dict[int, int] = {}


class _StepSql(tables.VendorSql):
    """The statements of a turn at a running tournament (:func:`step`, after each match's end:
    many a second), in plain SQL (tables.VendorSql): built again by the ORM at each turn they
    cost about 3.3 ms of its 4.8, where a Liar's Dice match between two TCP bots takes 17
    (benchmarks/tournament_throughput.py)."""

    def __init__(self):
        super().__init__()
        names = self.names
        tt, t = names(Tournament)
        gt, g = names(TournamentGame)
        mt, m = names(Match)
        _, e = names(Entrant)
        _, b = names(RegisteredBot)
        self.due = (f"SELECT {t['id']} FROM {tt} WHERE {t['status']} = %s OR ({t['status']} = %s AND "
                    f"{t['starts_at']} <= %s) ORDER BY {t['id']}")
        # SQLite has no row locks: its single writer (tables.claiming) does their work.
        self.lock = f"{t['id']} = %s AND {t['status']} IN (%s, %s)" + (
            " FOR UPDATE" if self.vendor == "postgresql" else "")
        self.entrants_where = f"{e['tournament']} = %s ORDER BY {e['index']}"
        self.bots_where = b["id"] + " IN ({})"
        live = (f"FROM {mt} m JOIN {gt} g ON g.{g['id']} = m.{m['tournament_game']} "
                f"WHERE g.{g['tournament']} = %s AND m.{m['status']} IN (%s, %s)")
        self.counts = (f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN m.{m['status']} = %s THEN 1 ELSE 0 END), 0), "
                       f"COALESCE(SUM(CASE WHEN m.{m['owner']} = %s THEN 1 ELSE 0 END), 0) {live}")
        self.live = f"SELECT m.{m['id']} {live}"
        # Neither done (a finished match, a forfeit) nor being played (an open or running match).
        self.undone = (f"{g['tournament']} = %s AND {g['forfeit']} IS NULL AND {g['number']} >= %s AND NOT EXISTS "
                       f"(SELECT 1 FROM {mt} m WHERE m.{m['tournament_game']} = {gt}.{g['id']} "
                       f"AND m.{m['status']} IN (%s, %s, %s))")
        self.any_undone = f"SELECT 1 FROM {gt} WHERE {self.undone} LIMIT 1"
        self.undone += f" ORDER BY {g['number']} LIMIT %s"
        self.starts_at = Tournament._meta.get_field("starts_at")

    def due_ids(self, now: datetime) -> list[int]:
        """Ids of the running tournaments and the scheduled ones due by ``now``, in id order."""
        return [pk for (pk,) in self.rows(self.due, [Tournament.Status.RUNNING, Tournament.Status.SCHEDULED,
                                                     self.starts_at.get_db_prep_value(now, connection)])]

    def locked(self, pk: int) -> Tournament | None:
        """Tournament ``pk`` if it is scheduled or running, its row locked until the
        transaction's end."""
        found = self.read(Tournament, self.lock, [pk, Tournament.Status.RUNNING, Tournament.Status.SCHEDULED])
        return found[0] if found else None

    def entrants(self, pk: int) -> dict[int, Entrant]:
        """Tournament ``pk``'s entrants by index."""
        return {e.index: e for e in self.read(Entrant, self.entrants_where, [pk])}

    def bots(self, ids: set[int]) -> dict[int, RegisteredBot]:
        """The registered bots of ``ids`` by id."""
        if not ids:
            return {}
        where = self.bots_where.format(", ".join(["%s"] * len(ids)))
        return {bot.pk: bot for bot in self.read(RegisteredBot, where, list(ids))}

    def live_counts(self, pk: int, owner: str) -> tuple[int, int, int]:
        """``(live, open, owner's)``: tournament ``pk``'s open and running matches, the open
        ones among them, and those ``owner`` holds."""
        (live, open_, mine), = self.rows(self.counts, [Match.Status.OPEN, owner, pk, *LIVE])
        return live, open_, mine

    def live_ids(self, pk: int) -> list[int]:
        """Ids of tournament ``pk``'s open and running matches."""
        return [mid for (mid,) in self.rows(self.live, [pk, *LIVE])]

    def undone_games(self, pk: int, first: int, limit: int) -> list[TournamentGame]:
        """Up to ``limit`` of tournament ``pk``'s planned games from number ``first`` on that
        are neither done nor being played, in number order."""
        return self.read(TournamentGame, self.undone, [pk, first, *LIVE, Match.Status.FINISHED, limit])

    def has_undone(self, pk: int, first: int) -> bool:
        """Whether tournament ``pk`` has such a game from number ``first`` on."""
        return bool(self.rows(self.any_undone, [pk, first, *LIVE, Match.Status.FINISHED]))


def _seat_choices(spec, config: dict, sides: list[int], entrants: dict[int, Entrant]) -> list[str]:
    choices = [""] * spec.num_seats(config)
    for side, seats in zip(sides, sides_of(spec, config)):
        e = entrants[side]
        if e.user_id is not None:
            _person_seats(spec, seats, e.user_id, choices)
            continue
        for n, seat in enumerate(seats):
            bot_id = e.partner_bot_id if n and e.partner_bot_id else e.registered_bot_id  # a pair: its second seat
            choices[seat] = (tables.BUILTIN_PREFIX + e.builtin_bot if e.builtin_bot
                             else f"{tables.REGISTERED_PREFIX}{bot_id}")
    return choices


def _person_seats(spec, seats: tuple[int, ...], user_id: int, choices: list[str]) -> None:
    """A person entrant's side ``seats`` in ``choices``: one seat held for them (the game's
    ``person_seat`` if it is of the side, else the side's first: bridge's South, else East),
    the game's stand-in bot (``GameSpec.standin``, else its strongest) in the others (a
    partner, Hanabi's other players)."""
    mine = spec.person_seat if spec.person_seat in seats else seats[0]
    for seat in seats:
        choices[seat] = (f"{tables.HELD_PREFIX}{user_id}" if seat == mine
                         else tables.BUILTIN_PREFIX + (spec.standin or spec.strongest_bot))


def _connects(spec, entrant: Entrant) -> bool:
    """Whether ``entrant``'s seat waits for it to come, a person or a bot that connects,
    rather than being played or called by the arena."""
    return entrant.user_id is not None or (entrant.registered_bot_id is not None and not spec.calls_bots)


def _make_matches(tournament: Tournament, owner: str, lease_s: float, room: int, arenas: int,
                  work: "Work") -> int:
    """Up to ``room`` matches for ``tournament``'s next planned games (its row locked), and
    no more than ``owner``'s share of its ``at_once`` among ``arenas`` live arenas; those made
    ``owner``'s to start now go to ``work.start``, and ``work.made`` counts them all.
    Returns how many were made."""
    spec = registry.get(tournament.game)
    sql = _StepSql.get()
    entrants = sql.entrants(tournament.pk)
    connecting = any(_connects(spec, e) for e in entrants.values())
    live, open_, mine = sql.live_counts(tournament.pk, owner)
    # Each of the live arenas takes its share of the tournament's matches at once, so that
    # the first to look does not take every slot while the others idle.
    share = -(-tournament.at_once // max(arenas, 1))
    free = min(tournament.at_once - live, share - mine, room)
    if connecting:
        # Tables for entrants that connect are made ahead, at_once of them besides those
        # running: a bot that connects again after its match finds its next seat at once
        # (how many run at once is then also bounded by its connections).
        free = min(tournament.at_once - open_, room)
    if free <= 0:
        return 0
    first = _first_undone.get(tournament.pk, 0)
    games = sql.undone_games(tournament.pk, first, free)
    if not games and first:
        # A game below the hint may be undone again (its match aborted: a dead arena's, one
        # cancelled), which a quick turn must not leave to the next full one.
        games = sql.undone_games(tournament.pk, 0, free)
    if not games:
        return 0
    if len(_first_undone) > 1000:
        _first_undone.clear()
    _first_undone[tournament.pk] = games[-1].number + 1
    bots = sql.bots({bot for e in entrants.values() for bot in (e.registered_bot_id, e.partner_bot_id) if bot})
    sitter = tables.Sitter(name="", user_id=tournament.created_by_id)
    think = None if tournament.think_s is None else int(tournament.think_s)
    for g in games:
        waits = any(_connects(spec, entrants[i]) for i in g.sides)
        config = (movement_config(tournament.config, tournament.per_pairing, g.deal)
                  if tournament.format in MOVEMENTS else tournament.config)
        match = tables.create_table(
            tournament.game, config, _seat_choices(spec, config, g.sides, entrants), sitter,
            pace_s=tournament.pace_s, think_s=think, seed=deal_seed(tournament.seed, g.deal),
            tournament_game_id=g.pk, rated=tournament.rated, known_bots=bots,
            owner="" if waits else owner, lease_s=lease_s)
        if not waits:
            work.start.append(match.pk)
    work.made += len(games)
    return len(games)


#: Tournament id -> when this process last looked for its overdue entrants.
_overdue_looked: dict[int, datetime] = {}
#: Seconds between two such looks (the forfeit comes at most this late).
OVERDUE_LOOK_S = 1.0


def _may_be_overdue(tournament: Tournament, now: datetime) -> bool:
    """Whether to look for ``tournament``'s overdue entrants now: only if it has an entrant
    that comes (a person, a bot that connects: built-in bots and bots the server calls are
    never late), at most every
    :data:`OVERDUE_LOOK_S` in this process."""
    last = _overdue_looked.get(tournament.pk)
    if last is not None and (now - last).total_seconds() < OVERDUE_LOOK_S:
        return False
    if len(_overdue_looked) > 1000:
        _overdue_looked.clear()
    _overdue_looked[tournament.pk] = now
    waits = Q(user__isnull=False)
    if not registry.get(tournament.game).calls_bots:
        waits |= Q(registered_bot__isnull=False)
    return tournament.entrants.filter(waits).exists()


def _overdue(tournament: Tournament, now: datetime) -> list[tuple[int, str, list[int]]]:
    """Open matches of ``tournament`` older than its ``wait_s`` whose seats are not all
    taken: ``(match id, reason, absent entrant indices)``.  An entrant playing another of its
    matches, or whose last one ended within the wait, is not absent (its table was made
    ahead, :func:`_make_matches`)."""
    spec = registry.get(tournament.game)
    sides = sides_of(spec, tournament.config)
    entrants = {e.index: e for e in tournament.entrants.all()}
    out = []
    since = now - timedelta(seconds=tournament.wait_s)
    mine = Match.objects.filter(tournament_game__tournament=tournament)
    late = mine.filter(status=Match.Status.OPEN, created_at__lt=since)
    busy = None  # entrants playing, or done playing within the wait: a table made ahead waits for them
    for match in late.select_related("tournament_game").prefetch_related("seats"):
        empty = {s.index for s in match.seats.all() if not s.occupied}
        absent = [entrant for entrant, seats in zip(match.tournament_game.sides, sides) if empty & set(seats)]
        if absent and busy is None:
            recent = mine.filter(Q(status=Match.Status.RUNNING) | Q(status=Match.Status.FINISHED,
                                                                     finished_at__gte=since))
            busy = {e for g in recent.values_list("tournament_game__sides", flat=True) for e in g}
        absent = [entrant for entrant in absent if entrant not in busy]
        if absent:
            who = " and ".join(entrants[i].display_name for i in absent)
            came = "come to the table" if all(entrants[i].user_id is not None for i in absent) else "connect"
            out.append((match.pk, f"{who} did not {came} within {tournament.wait_s:g} s: forfeit", absent))
    return out


def entrant_waits(game: str, bot_id: int) -> bool:
    """Whether registered bot ``bot_id``, connected to play ``game``, is an entrant of a
    running (or due) tournament with games still to make (planned and not made, or a Swiss
    round still to pair), or has a seat held at an open table: it then waits for a seat
    (the arena's seating) rather than playing at an automatic table."""
    # A seat held for it at an open table (made after its claim looked): it claims again.
    if Seat.objects.filter(registered_bot_id=bot_id, reserved=True, occupied=False, match__game=game,
                           match__status=Match.Status.OPEN).exists():
        return True
    due = Q(tournament__status=Tournament.Status.RUNNING) | Q(tournament__status=Tournament.Status.SCHEDULED,
                                                             tournament__starts_at__lte=timezone.now())
    entries = Entrant.objects.filter(due, Q(registered_bot_id=bot_id) | Q(partner_bot_id=bot_id),
                                     tournament__game=game).select_related("tournament")
    for entry in entries:
        t = entry.tournament
        if t.status == Tournament.Status.SCHEDULED:
            return True
        if t.format == Tournament.Format.SWISS and t.round < t.rounds:
            return True
        # Any game still to make: it waits for the tournament (one EXISTS, where reading the
        # sides of thousands of planned games at every connect cost more than a match).
        if _any_undone(t.pk):
            return True
    return False


def record_forfeit(match_id: int, absent: list[int], reason: str) -> bool:
    """Mark the planned game of ``match_id`` forfeited by the entrants ``absent`` (indices),
    if that match was aborted before it started (the caller cancelled it); whether it was."""
    match = Match.objects.filter(pk=match_id, status=Match.Status.ABORTED, started_at__isnull=True,
                                 tournament_game__isnull=False).first()
    if match is None:
        return False
    return bool(TournamentGame.objects.filter(pk=match.tournament_game_id, forfeit__isnull=True).update(
        forfeit={"absent": absent, "reason": reason}))


@dataclass
class Work:
    """What one :func:`step` leaves the arena to do."""

    start: list[int]                          # matches made this arena's: start them
    forfeits: list[tuple[int, str, list[int]]]  # open matches to cancel, then record_forfeit
    stop: list[tuple[int, str]]               # live matches of a tournament that ended: cancel them
    running: bool                             # some tournament still runs (sweep again when a match ends)
    touched: list[int] = field(default_factory=list)  # tournaments this turn looked at (their pages refresh)
    made: int = 0                             # matches made, this arena's or for connecting entrants


#: The live arenas a full step counted (a quick one uses the last count).
_arenas_seen = 1


def step(owner: str, lease_s: float, room: int, now: datetime | None = None, full: bool = True) -> Work:
    """One arena's turn at every tournament: start those due, make matches for running ones
    (at most ``room`` in all), find overdue entrants, pair the next Swiss round, finish those
    whose plan is played, stop a decided match-up early.  Each tournament under its own row
    lock, in its own transaction (one after another, in id order: two arenas never wait for
    each other in a circle).  Not ``full`` (the turn a match's end brings
    on, many a second): without the look for live matches of ended tournaments, the count of
    live arenas, the overdue entrants and the early stop's test, which the periodic full turns
    do."""
    global _arenas_seen
    now = now or timezone.now()
    work = Work([], [], [], False)
    if full:
        # Live matches of a tournament that ended (cancelled, or stopped early by another arena).
        ended = Match.objects.filter(status__in=LIVE, tournament_game__tournament__status__in=[
            Tournament.Status.FINISHED, Tournament.Status.CANCELLED])
        work.stop += [(pk, note or CANCELLED)
                      for pk, note in ended.values_list("pk", "tournament_game__tournament__note")]
    sql = _StepSql.get()
    ids = sql.due_ids(now)
    if full and ids:
        _arenas_seen = ArenaProcess.objects.filter(alive_until__gt=now).count()
    arenas = _arenas_seen
    for pk in ids:
        work.running = True
        with tables.claiming():
            # Waits for another arena's turn at it (a few statements): skipping it instead left
            # an arena whose match had just ended without its next one until a later sweep.
            tournament = sql.locked(pk)
            if tournament is None:
                continue
            work.touched.append(pk)
            if full:
                _first_undone.pop(pk, None)
            if tournament.status == Tournament.Status.SCHEDULED:
                short = too_few(tournament)
                if short:
                    _end(tournament, Tournament.Status.CANCELLED, short)
                    continue
                _start(tournament)
                if tournament.status != Tournament.Status.RUNNING:
                    continue
            if full and _may_be_overdue(tournament, now):
                work.forfeits += _overdue(tournament, now)
            decided = _decided(tournament) if full or _early_look_due(tournament) else ""
            if decided:
                _end(tournament, Tournament.Status.FINISHED, decided)
                work.stop += [(m, STOPPED_EARLY) for m in _live(tournament)]
                continue
            made = _make_matches(tournament, owner, lease_s, room - len(work.start), arenas, work)
            if made or _live(tournament) or _any_undone(pk):
                continue
            if tournament.format == Tournament.Format.SWISS and tournament.round < tournament.rounds:
                _pair_swiss_round(tournament)
                tournament.save(update_fields=["round"])
                _make_matches(tournament, owner, lease_s, room - len(work.start), arenas, work)
            else:
                _end(tournament, Tournament.Status.FINISHED, "")
    return work


def _any_undone(pk: int) -> bool:
    """Whether tournament ``pk`` has a planned game neither done nor being played: looked for
    from the hint (:data:`_first_undone`: few rows), then, if none is there, from the first
    game, since a game below the hint may be undone again (its match aborted: a dead arena's,
    one cancelled) and another process's hint knows nothing of it."""
    sql, first = _StepSql.get(), _first_undone.get(pk, 0)
    return sql.has_undone(pk, first) or (first > 0 and sql.has_undone(pk, 0))


def _live(tournament: Tournament) -> list[int]:
    return _StepSql.get().live_ids(tournament.pk)


#: Tournament id -> (time.monotonic() of this process's last look at its early stop, seconds
#: that look took).
_early_looked: dict[int, tuple[float, float]] = {}
#: The least seconds between two looks at an early stop in the quick turns (after each match's
#: end): fast matches would otherwise play on for a full turn's SWEEP_S (hundreds of them)
#: after the finding.
EARLY_LOOK_S = 0.25
#: A look (the standings' read: 12 ms at 300 games, growing with them) waits at least this
#: many times its own last cost, so that it takes at most a tenth of the database thread.
EARLY_LOOK_COST = 10.0


def _early_look_due(tournament: Tournament) -> bool:
    """Whether a quick turn looks at ``tournament``'s early stop now (:data:`EARLY_LOOK_S`,
    :data:`EARLY_LOOK_COST`); a full turn always does."""
    if not tournament.early_stop:
        return False
    last = _early_looked.get(tournament.pk)
    return last is None or time.monotonic() - last[0] >= max(EARLY_LOOK_S, EARLY_LOOK_COST * last[1])


def _decided(tournament: Tournament) -> str:
    """With the early stop (two entrants): the finding once one entrant is better with 95%
    confidence (standings.early_finding), else ``""``."""
    if not tournament.early_stop:
        return ""
    began = time.monotonic()
    finding = standings.early_finding(standings.compute(tournament))
    if len(_early_looked) > 1000:
        _early_looked.clear()
    # A tournament's first look here may pay for the statistics' imports (scipy: half a
    # second), which says nothing of the next look's cost.
    cost = time.monotonic() - began if tournament.pk in _early_looked else 0.0
    _early_looked[tournament.pk] = (began, cost)
    return finding


def _end(tournament: Tournament, status: str, note: str) -> None:
    tournament.status = status
    tournament.note = note[:300]
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "note", "finished_at"])


def group(tournament_id: int) -> str:
    """The channel-layer group of a tournament's live pages: told ``{"type":
    "tournament.changed"}`` when its matches may have moved on."""
    return f"tournament.{tournament_id}"


def cancel(tournament_id: int, reason: str = CANCELLED) -> list[int]:
    """Cancel a scheduled or running tournament: nothing more is made; returns its live
    matches, for the caller to cancel (an arena's ``cancel``).  Finished matches stay."""
    with tables.claiming():
        tournament = Tournament.objects.select_for_update().filter(
            pk=tournament_id, status__in=[Tournament.Status.SCHEDULED, Tournament.Status.RUNNING]).first()
        if tournament is None:
            return []
        _end(tournament, Tournament.Status.CANCELLED, reason)
        return _live(tournament)
