"""What ratings cost: the rating update per finished match, and the leaderboard at scale.

1. **Rating updates per finished match** (target: under 1 ms a match, "invisible next to the
   match").  On SQLite (the default server's database: a temporary file, WAL, migrations
   applied) and on PostgreSQL (a fresh database), with a pool of registered bots per game so
   that, after a warm-up in which every bot plays once, every Rating row exists (steady
   state): Liar's Dice matches of 2-4 seats (``--ld-matches``, 2,000) and Jass matches (4
   seats, 2 teams; ``--jass-matches``, 500), each of three kinds, interleaved:

   - ``rate_match``: :func:`games.arena.ratings.rating.rate_match` alone, inside the transaction
     that stored the result (as :func:`games.arena.play.tables.finish` calls it; the commit is
     not in this figure);
   - ``finish``: the whole :func:`games.arena.play.tables.finish` (status, result, final scores,
     rating, commit);
   - ``finish, no rating``: the same with ``rate_match`` replaced by a no-op;

   p50 / p99 / mean in ms per match, and rating's share of ``finish`` (with minus without).
   A breakdown follows (200 more matches): ``rate_match``'s queries and the time spent
   waiting for them (timed at the driver), openskill's ``rate()`` alone, and the rest (the
   ORM's own work).

2. **The leaderboard with ``--bots`` (10,000) rated bots and ``--matches`` (1,000,000)
   matches in PostgreSQL** (target: under 100 ms a request).  This script is the command that
   makes the data: a fresh database ``arena_bench_<random>`` on the server (127.0.0.1:5432,
   user postgres, trust), migrations applied, then one owner with ``--bots`` RegisteredBots
   (Liar's Dice, with keys), a Rating each (varied μ; σ shrinking with its matches), and
   ``--matches`` finished two-seat matches between them (some bots play far more than others)
   with a Seat and a RatingChange per seat, streamed with PostgreSQL's ``COPY`` (psycopg 3,
   rows generated chunk by chunk, a commit every chunk, foreign keys checked as usual); the
   ratings' match, win and last-seen counts are then computed from the RatingChange rows, and
   the tables VACUUM ANALYZEd (as autovacuum would have done).  Then, through Django's test
   ``Client`` against that database: ``/leaderboard/liars_dice/``,
   ``/leaderboard/liars_dice/?who=bots&page=50``, ``/api/leaderboard/liars_dice/`` and
   ``/api/leaderboard/liars_dice/?page=100``, 3 warm-ups then 20 timed requests each, p50 and
   p99.  The test client keeps its database connection between requests, whereas the server
   (``CONN_MAX_AGE`` 0) opens one per request: that cost is printed beside.  A figure over its
   target gets the ``EXPLAIN (ANALYZE, BUFFERS)`` of its request's queries (``--explain``:
   always).  The database is dropped at the end, also on failure or interruption.

Each part runs in a child process of its own (Django reads ``DATABASE_URL`` once, at setup),
with a time limit; each prints the load average.

Run: ``.venv/bin/python benchmarks/ratings.py`` (the full sizes; the data take a few minutes
on 2 cores), or quickly ``.venv/bin/python benchmarks/ratings.py --matches 10000``;
``--skip-postgres`` measures the rating updates on SQLite only.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone as dt_timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402

RATE_TARGET_MS = 1.0
PAGE_TARGET_MS = 100.0
PAGE_URLS = ("/leaderboard/liars_dice/", "/leaderboard/liars_dice/?who=bots&page=50",
             "/api/leaderboard/liars_dice/", "/api/leaderboard/liars_dice/?page=100")
WARMUPS, REQUESTS = 3, 20
#: Time limits of the child processes (seconds).
RATE_LIMIT_S, LEADERBOARD_LIMIT_S = 1200, 3600


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min), {os.cpu_count()} cpus"


def pct(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def summary(ms: list[float]) -> tuple[float, float, float]:
    """(p50, p99, mean) of ``ms``."""
    s = sorted(ms)
    return pct(s, 0.5), pct(s, 0.99), statistics.fmean(s)


def verdict(values: dict[str, float], target: float) -> str:
    over = [name for name, v in values.items() if v >= target]
    return f"target < {target:g} ms: " + ("met" if not over else "MISSED by " + ", ".join(over))


def peak_rss() -> str:
    return f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"


class QueryClock:
    """A database execute wrapper (``with connection.execute_wrapper(clock):``) that keeps
    each query's SQL, parameters and driver time (the round trip to the database, without the
    ORM's own work before and after)."""

    def __init__(self):
        self.queries: list[tuple[str, object, float]] = []

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.queries.append((sql, params, 1000 * (time.perf_counter() - started)))

    @property
    def ms(self) -> float:
        return sum(ms for _, _, ms in self.queries)


def query_kind(sql: str) -> str:
    words = sql.split(None, 1)[0].upper()
    return words + " ... FOR UPDATE" if words == "SELECT" and "FOR UPDATE" in sql.upper() else words


def setup_django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- part 1: rating updates per finished match --------------------------------------------------

def child_rate(args) -> None:
    setup_django()
    from unittest import mock

    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from games.arena import registry
    from games.arena.models import Match, Rating, RatingChange, RegisteredBot, Seat
    from games.arena.play import tables
    from games.arena.ratings import rating

    rng = random.Random(args.seed)
    vendor = connection.vendor
    where = (f"SQLite file {connection.settings_dict['NAME']}" if vendor == "sqlite"
             else f"PostgreSQL database {connection.settings_dict['NAME']}")
    print(f"--- rating updates on {where}; {load()}", flush=True)
    owner = get_user_model().objects.create_user("bench-owner")
    jass_config = registry.get("jass").table_config({})

    def make_pool(game: str) -> list[RegisteredBot]:
        bots = [RegisteredBot(owner=owner, game=game, name=f"{game[:4]}-bot-{i:04d}", shared=True,
                              base_url="http://127.0.0.1:9/" if game == "jass" else "",
                              key_hash="" if game == "jass" else hashlib.sha256(f"{game}{i}".encode()).hexdigest())
                for i in range(args.pool)]
        RegisteredBot.objects.bulk_create(bots)
        return list(RegisteredBot.objects.filter(game=game).order_by("pk"))

    def ld_result(players: int) -> dict:
        wins = [0] * players
        for _ in range(3):  # three games a match
            wins[rng.randrange(players)] += 1
        best = max(wins)
        leaders = [s for s, w in enumerate(wins) if w == best]
        return {"scores": wins, "winner": leaders[0] if len(leaders) == 1 else None}

    def jass_result() -> dict:
        a, b = rng.randrange(1000, 1400), rng.randrange(300, 1000)
        if rng.random() < 0.5:
            a, b = b, a
        team = 0 if a > b else 1
        return {"scores": [a, b, a, b], "winner": team, "winner_team": team, "winners": [team, team + 2],
                "team_points": [a, b], "deals": rng.randrange(6, 14)}

    def make_matches(game: str, pool: list, seat_lists: list[list[int]]) -> list[tuple[int, dict]]:
        """Running matches of ``game``, one per list of pool indexes; ``(id, result)`` each."""
        now = timezone.now()
        made = []
        for start in range(0, len(seat_lists), 500):
            chunk = seat_lists[start:start + 500]
            configs = [jass_config if game == "jass" else {"players": len(s), "dice": 6, "games": 3} for s in chunk]
            matches = Match.objects.bulk_create([Match(game=game, config=c, seed=rng.getrandbits(62),
                                                       status=Match.Status.RUNNING, started_at=now) for c in configs])
            Seat.objects.bulk_create([Seat(match=m, index=i, kind=Seat.Kind.PROTOCOL, registered_bot=pool[b],
                                           occupied=True, display_name=pool[b].name)
                                      for m, s in zip(matches, chunk) for i, b in enumerate(s)])
            made += [(m.pk, jass_result() if game == "jass" else ld_result(len(s))) for m, s in zip(matches, chunk)]
        return made

    def draw(game: str) -> list[int]:
        return rng.sample(range(args.pool), 4 if game == "jass" else rng.randint(2, 4))

    def run_rate(match_id: int, result: dict) -> float:
        with transaction.atomic():
            Match.objects.filter(pk=match_id).update(status=Match.Status.FINISHED, result=result,
                                                     finished_at=timezone.now())
            match = Match.objects.get(pk=match_id)
            seats = list(match.seats.all())
            started = time.perf_counter()
            rated = rating.rate_match(match, seats, stamp=True)  # as tables.finish calls it
            elapsed = time.perf_counter() - started
        assert rated, f"match {match_id} was not rated"
        return elapsed

    def run_finish(match_id: int, result: dict) -> float:
        started = time.perf_counter()
        tables.finish(match_id, result)
        return time.perf_counter() - started

    original = rating.rate_match

    def run_finish_unrated(match_id: int, result: dict) -> float:
        rating.rate_match = lambda match, seats, stamp=False: False
        try:
            return run_finish(match_id, result)
        finally:
            rating.rate_match = original

    kinds = {"rate_match": run_rate, "finish": run_finish, "finish, no rating": run_finish_unrated}
    plan = (("liars_dice", "Liar's Dice", args.ld_matches, "2-4 seats"), ("jass", "Jass", args.jass_matches,
                                                                         "4 seats in 2 teams"))
    for game, title, n, shape in plan:
        if n <= 0:
            continue
        pool = make_pool(game)
        # Warm-up (not timed): every bot of the pool plays once, so each has its Rating row,
        # and the code paths, openskill's model and the database's caches are warm.
        per = 4 if game == "jass" else 3
        cover = [list(range(i, min(i + per, args.pool))) for i in range(0, args.pool, per)]
        cover = [c if len(c) == per else c + rng.sample([b for b in range(args.pool) if b not in c], per - len(c))
                 for c in cover]
        for match_id, result in make_matches(game, pool, cover + [draw(game) for _ in range(50)]):
            tables.finish(match_id, result)
        rated_before = Rating.objects.filter(game=game).count()
        jobs = {kind: make_matches(game, pool, [draw(game) for _ in range(n)]) for kind in kinds}
        changes_before = RatingChange.objects.count()
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        started = time.perf_counter()
        for i in range(n):  # interleaved, so that drift (table growth, load) affects each alike
            for kind, run in kinds.items():
                times[kind].append(1000 * run(*jobs[kind][i]))
        wall = time.perf_counter() - started
        seats_rated = sum(len(r["scores"]) for kind in ("rate_match", "finish") for _, r in jobs[kind])
        made = RatingChange.objects.count() - changes_before
        assert made == seats_rated, f"{made} RatingChange rows, expected {seats_rated}"
        print(f"{title}: {n} matches of each kind, {shape}, from a pool of {args.pool} registered bots "
              f"({rated_before} Rating rows before timing, {Rating.objects.filter(game=game).count()} after); "
              f"{wall:.1f} s", flush=True)
        figures = {}
        for kind, values in times.items():
            p50, p99, mean = summary(values)
            figures[kind] = (p50, p99, mean)
            print(f"  {kind:<20} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   mean {mean:7.3f} ms")
        (wp50, wp99, wmean), (np50, np99, nmean) = figures["finish"], figures["finish, no rating"]
        print(f"  {'rating in finish':<20} p50 {wp50 - np50:7.3f} ms   p99 {wp99 - np99:7.3f} ms   "
              f"mean {wmean - nmean:7.3f} ms   (finish minus finish without rating)")
        rp50, rp99, rmean = figures["rate_match"]
        figure(f"rating update p50 ({connection.vendor}, {title})", round(rp50, 3), "ms", RATE_TARGET_MS)
        print(f"  rate_match: {verdict({'p50': rp50, 'mean': rmean, 'p99': rp99}, RATE_TARGET_MS)}; "
              f"rating's share of finish: {verdict({'mean': wmean - nmean}, RATE_TARGET_MS)}")
        # Breakdown: where rate_match's time goes (its queries timed at the driver).
        sample = make_matches(game, pool, [draw(game) for _ in range(200)])
        total_ms, db_ms, by_kind = 0.0, 0.0, {}
        for match_id, result in sample:
            with transaction.atomic():
                Match.objects.filter(pk=match_id).update(status=Match.Status.FINISHED, result=result,
                                                         finished_at=timezone.now())
                match = Match.objects.get(pk=match_id)
                seats = list(match.seats.all())
                clock = QueryClock()
                with connection.execute_wrapper(clock):
                    started = time.perf_counter()
                    rating.rate_match(match, seats, stamp=True)
                    total_ms += 1000 * (time.perf_counter() - started)
            db_ms += clock.ms
            for sql, _, ms in clock.queries:
                count, spent = by_kind.get(query_kind(sql), (0, 0.0))
                by_kind[query_kind(sql)] = (count + 1, spent + ms)
        model = rating.model()
        skill = []
        for _ in range(n):
            seats = 4 if game == "jass" else rng.randint(2, 4)
            shape_teams = [[0, 2], [1, 3]] if game == "jass" else [[i] for i in range(seats)]
            teams = [[model.rating(mu=rng.gauss(25, 3), sigma=rng.uniform(1, 8.3)) for _ in t] for t in shape_teams]
            ranks = [rng.randint(1, len(teams)) for _ in teams]
            started = time.perf_counter()
            model.rate(teams, ranks=ranks)
            skill.append(1000 * (time.perf_counter() - started))
        s50, s99, smean = summary(skill)
        k = len(sample)
        queries = sum(count for count, _ in by_kind.values())
        print(f"  where rate_match's time goes ({k} more matches, mean {total_ms / k:.3f} ms): {queries / k:.1f} queries "
              f"a match, {db_ms / k:.3f} ms waiting for the database ("
              + ", ".join(f"{count / k:.1f} {kind} {spent / count:.3f} ms each" for kind, (count, spent) in by_kind.items())
              + f"); openskill's rate() alone p50 {s50:.3f} ms; the rest, {(total_ms - db_ms) / k - smean:.3f} ms, "
              f"is the ORM's own work (building queries and rows)", flush=True)
    print(f"  {load()}; {peak_rss()}", flush=True)


# --- part 2: the leaderboard with many bots and matches -----------------------------------------

def copy_text(cursor, sql: str, lines, batch: int = 5000) -> int:
    """Stream ``lines`` (COPY text format, each ending in a newline) into ``COPY ... FROM STDIN``."""
    count = 0
    with cursor.copy(sql) as copy:
        buffer = []
        for line in lines:
            buffer.append(line)
            if len(buffer) >= batch:
                copy.write("".join(buffer))
                count += len(buffer)
                buffer.clear()
        if buffer:
            copy.write("".join(buffer))
            count += len(buffer)
    return count


def make_leaderboard_data(pg_url: str, owner_id: int, bots: int, matches: int, seed: int) -> dict:
    """Fill the migrated database at ``pg_url``; returns the phases' durations (seconds)."""
    import psycopg

    rng = random.Random(seed)
    times = {}
    started = time.perf_counter()
    utc = dt_timezone.utc
    now = datetime.now(utc).replace(microsecond=0)
    spacing = 30  # seconds between match creations: 1,000,000 matches span about a year
    first = now - timedelta(seconds=spacing * matches + 3600)

    def stamp(dt: datetime) -> str:
        return dt.isoformat(sep=" ")

    names = [f"ld-bot-{i:05d}" for i in range(1, bots + 1)]
    mus = [rng.gauss(25.0, 4.0) for _ in range(bots)]
    with psycopg.connect(pg_url) as conn:
        with conn.cursor() as cur:
            created = stamp(first - timedelta(days=30))
            copy_text(cur, "COPY arena_registeredbot (id, game, name, base_url, path_style, created_at, owner_id, "
                           "shared, key_hash) FROM STDIN",
                      (f"{i}\tliars_dice\t{names[i - 1]}\t\tkit\t{created}\t{owner_id}\t"
                       f"{'t' if i % 3 == 0 else 'f'}\t{hashlib.sha256(f'bench-key-{i}'.encode()).hexdigest()}\n"
                       for i in range(1, bots + 1)))
            copy_text(cur, "COPY arena_rating (id, game, subject, name, builtin_bot, mu, sigma, matches, wins, draws, "
                           "last_match_id, last_seen, registered_bot_id, user_id) FROM STDIN",
                      (f"{i}\tliars_dice\tbot:{i}\t{names[i - 1]}\t\t{mus[i - 1]:.6f}\t{25 / 3:.6f}\t0\t0\t0\t\\N\t\\N\t"
                       f"{i}\t\\N\n" for i in range(1, bots + 1)))
        conn.commit()
        times["bots and ratings"] = time.perf_counter() - started
        config = '{"dice": 6, "games": 1, "players": 2}'
        results = ('{"scores": [1, 0], "winner": 0}', '{"scores": [0, 1], "winner": 1}')
        chunk = 50_000
        started = time.perf_counter()
        for low in range(1, matches + 1, chunk):
            high = min(matches, low + chunk - 1)
            plan = []  # (match id, bot a, bot b, winner seat, mu/sigma noise) for this chunk only
            for m in range(low, high + 1):
                # Skewed: low-numbered bots play far more often than high-numbered ones.
                a = 1 + int(bots * rng.random() ** 1.6)
                b = 1 + int(bots * rng.random() ** 1.6)
                while b == a:
                    b = 1 + int(bots * rng.random())
                p_a = 1 / (1 + math.exp((mus[b - 1] - mus[a - 1]) / 4))
                plan.append((m, a, b, 0 if rng.random() < p_a else 1))

            def match_lines():
                for m, a, b, winner in plan:
                    created = first + timedelta(seconds=spacing * m)
                    began = created + timedelta(seconds=2)
                    ended = began + timedelta(seconds=5 + m % 40)
                    yield (f"{m}\tliars_dice\t{config}\t{m * 2654435761 % (1 << 62)}\tfinished\tt\tf\t{stamp(created)}\t"
                           f"{stamp(began)}\t{stamp(ended)}\t{results[winner]}\t\\N\tf\t\t\\N\tf\n")

            def seat_lines():
                for m, a, b, winner in plan:
                    for index, bot in enumerate((a, b)):
                        yield (f"{2 * m - 1 + index}\t{index}\tprotocol\t\tt\t{names[bot - 1]}\t\t"
                               f"{1 if index == winner else 0}\t{m}\t\\N\t{bot}\tf\n")

            def change_lines():
                for m, a, b, winner in plan:
                    for index, bot in enumerate((a, b)):
                        mu = mus[bot - 1] + rng.gauss(0, 0.5)
                        sigma = rng.uniform(0.8, 3.0)
                        step = 0.3 if index == winner else -0.3
                        yield (f"{2 * m - 1 + index}\t{index}\t{1 if index == winner else 2}\t{mu:.6f}\t{sigma:.6f}\t"
                               f"{mu + step:.6f}\t{sigma * 0.99:.6f}\t{m}\t{bot}\n")

            with conn.cursor() as cur:
                copy_text(cur, "COPY arena_match (id, game, config, seed, status, auto, omniscient, created_at, "
                               "started_at, finished_at, result, created_by_id, imported, creator_key, final_view, "
                               "verified_only) FROM STDIN", match_lines())
                copy_text(cur, "COPY arena_seat (id, index, kind, builtin_bot, occupied, display_name, session_key, "
                               "final_score, match_id, user_id, registered_bot_id, reserved) FROM STDIN", seat_lines())
                copy_text(cur, "COPY arena_ratingchange (id, seat, rank, mu_before, sigma_before, mu_after, "
                               "sigma_after, match_id, rating_id) FROM STDIN", change_lines())
            conn.commit()
            print(f"    {high:>9} matches copied ({time.perf_counter() - started:6.1f} s)", flush=True)
        times["matches, seats, rating changes (COPY)"] = time.perf_counter() - started
        started = time.perf_counter()
        with conn.cursor() as cur:
            # The ratings as those matches left them: counts, wins, the last match; σ shrinks
            # with the matches played (a newcomer: 25/3).
            cur.execute("""
                UPDATE arena_rating r
                   SET matches = s.n, wins = s.w, last_match_id = s.last,
                       sigma = greatest(0.6, (25.0 / 3) / sqrt(1 + s.n / 4.0)) * (0.9 + 0.2 * random())
                  FROM (SELECT rating_id, count(*) AS n, count(*) FILTER (WHERE rank = 1) AS w,
                               max(match_id) AS last
                          FROM arena_ratingchange GROUP BY rating_id) s
                 WHERE r.id = s.rating_id""")
            cur.execute("UPDATE arena_rating r SET last_seen = m.finished_at FROM arena_match m "
                        "WHERE m.id = r.last_match_id")
            for table in ("arena_registeredbot", "arena_rating", "arena_match", "arena_seat", "arena_ratingchange"):
                cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        conn.commit()
        times["rating counts from the changes"] = time.perf_counter() - started
    started = time.perf_counter()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) arena_registeredbot, arena_rating, arena_match, arena_seat, arena_ratingchange")
    times["VACUUM ANALYZE"] = time.perf_counter() - started
    return times


def child_leaderboard(args) -> None:
    print(f"--- leaderboard: {args.bots} rated bots, {args.matches} matches in PostgreSQL; {load()}", flush=True)
    started = time.perf_counter()
    setup_django()
    migrated = time.perf_counter() - started
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    owner = get_user_model().objects.create_user("bench-owner")
    pg_url = os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)
    made = time.perf_counter()
    phases = make_leaderboard_data(pg_url, owner.pk, args.bots, args.matches, args.seed)
    made = time.perf_counter() - made
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        size = cursor.fetchone()[0]
        cursor.execute("SELECT (SELECT count(*) FROM arena_rating), (SELECT count(*) FROM arena_match), "
                       "(SELECT count(*) FROM arena_seat), (SELECT count(*) FROM arena_ratingchange), "
                       "(SELECT min(matches) FROM arena_rating), (SELECT max(matches) FROM arena_rating), "
                       "(SELECT min(sigma) FROM arena_rating), (SELECT max(sigma) FROM arena_rating)")
        ratings_n, matches_n, seats_n, changes_n, least, most, sigma_lo, sigma_hi = cursor.fetchone()
    print(f"  data made in {made:.1f} s (" + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())
          + f"), after migrations ({migrated:.1f} s); database {size}", flush=True)
    print(f"  {ratings_n} ratings (matches per bot {least}..{most}, σ {sigma_lo:.2f}..{sigma_hi:.2f}), "
          f"{matches_n} matches, {seats_n} seats, {changes_n} rating changes", flush=True)

    client = Client(HTTP_HOST="127.0.0.1")
    pages = max(1, math.ceil(ratings_n / 50))
    missed = []
    for url in PAGE_URLS:
        if "page=" in url:  # a small --bots has fewer pages: ask for its last one instead
            base, number = url.rsplit("page=", 1)
            url = f"{base}page={min(int(number), pages)}"
        for _ in range(WARMUPS):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
        ms = []
        for _ in range(REQUESTS):
            began = time.perf_counter()
            response = client.get(url)
            ms.append(1000 * (time.perf_counter() - began))
            assert response.status_code == 200, (url, response.status_code)
        clock = QueryClock()
        with connection.execute_wrapper(clock):
            began = time.perf_counter()
            response = client.get(url)
            once = 1000 * (time.perf_counter() - began)
        if url.startswith("/api/"):
            body = response.json()
            assert body["count"] == ratings_n and len(body["results"]) == 50, body.get("count")
        p50, p99, _ = summary(ms)
        print(f"  GET {url:<44} p50 {p50:6.1f} ms   p99 {p99:6.1f} ms   {verdict({'p50': p50, 'p99': p99}, PAGE_TARGET_MS)}"
              f"\n      one more: {once:.1f} ms, {len(clock.queries)} queries waiting {clock.ms:.1f} ms for the database ("
              + ", ".join(f"{ms:.1f}" for _, _, ms in clock.queries) + " ms)", flush=True)
        figure(f"leaderboard p99 {url}", round(p99, 1), "ms", PAGE_TARGET_MS)
        if p99 >= PAGE_TARGET_MS or args.explain:
            missed.append((url, clock.queries))
    opened = []
    for _ in range(REQUESTS):
        connection.close()
        began = time.perf_counter()
        connection.ensure_connection()
        opened.append(1000 * (time.perf_counter() - began))
    o50, o99, _ = summary(opened)
    print(f"  opening a database connection (the server does once a request, CONN_MAX_AGE 0): p50 {o50:.1f} ms, "
          f"p99 {o99:.1f} ms", flush=True)
    for url, queries in missed:
        print(f"  EXPLAIN (ANALYZE, BUFFERS) of the queries of GET {url}:")
        for sql, params, ms in queries:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            with connection.cursor() as cursor:
                print(f"    -- {ms:.1f} ms: {cursor.mogrify(sql, params) if hasattr(cursor, 'mogrify') else sql}")
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                for (line,) in cursor.fetchall():
                    print(f"       {line}")
    print(f"  {load()}; {peak_rss()}", flush=True)


# --- the parent: databases and child processes --------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=10_000, help="rated bots on the leaderboard (10,000)")
    parser.add_argument("--matches", type=int, default=1_000_000, help="matches in the leaderboard's database")
    parser.add_argument("--skip-postgres", action="store_true", help="rating updates on SQLite only")
    parser.add_argument("--ld-matches", type=int, default=2000, help="Liar's Dice matches per kind (part 1)")
    parser.add_argument("--jass-matches", type=int, default=500, help="Jass matches per kind (part 1)")
    parser.add_argument("--pool", type=int, default=100, help="registered bots per game (part 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE every leaderboard request's queries")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432",
                        help="the PostgreSQL server (trust authentication)")
    parser.add_argument("--child", choices=("rate", "leaderboard"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "rate":
        return child_rate(args)
    if args.child == "leaderboard":
        return child_leaderboard(args)
    if args.bots < 2 or args.pool < 4:
        parser.error("--bots must be at least 2 and --pool at least 4")

    # SIGTERM (a time limit, a CI runner) ends this process through its finally clauses.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    print(f"python {sys.version.split()[0]}; {load()}", flush=True)
    passed = [a for a in sys.argv[1:]]
    child: list[subprocess.Popen] = []
    databases: list[str] = []

    def run_child(kind: str, env: dict, limit: float) -> None:
        env = {**os.environ, **env}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        process = subprocess.Popen([sys.executable, __file__, "--child", kind, *passed], env=env, cwd=ROOT)
        child.append(process)
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise SystemExit(f"the {kind} part took more than {limit:.0f} s: stopped")
        if code:
            raise SystemExit(f"the {kind} part failed (exit status {code})")

    def new_database() -> str:
        import psycopg

        name = f"arena_bench_{secrets.token_hex(5)}"
        with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        databases.append(name)
        return f"{args.pg.replace('postgresql://', 'postgres://', 1)}/{name}"

    data_dir = tempfile.mkdtemp(prefix="arena-bench-ratings-")
    started = time.perf_counter()
    try:
        environment = {"ARENA_DATA_DIR": data_dir, "DATABASE_URL": ""}
        run_child("rate", environment, RATE_LIMIT_S)
        if not args.skip_postgres:
            run_child("rate", {**environment, "DATABASE_URL": new_database()}, RATE_LIMIT_S)
            run_child("leaderboard", {**environment, "DATABASE_URL": new_database()}, LEADERBOARD_LIMIT_S)
    finally:
        for process in child:
            if process.poll() is None:
                process.kill()
                process.wait()
        if databases:
            import psycopg

            with psycopg.connect(f"{args.pg}/postgres", autocommit=True) as conn:
                for name in databases:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            print(f"dropped {', '.join(databases)}", flush=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"total {time.perf_counter() - started:.0f} s; {load()}", flush=True)


if __name__ == "__main__":
    main()
