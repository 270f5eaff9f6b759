"""Ratings with several processes finishing matches at once on PostgreSQL (issue 26): two first
matches of one identity both finish (its rating is made once, by an upsert, and counts both),
a match that stored its result first but waited for its ratings' lock is stamped after the
match that overtook it, and after many concurrent finishes ``manage.py recompute_ratings``
gives exactly the stored numbers.

Each finish runs in a process of its own (``manage.py shell``) on a fresh database.  Where
the order matters the test makes it: a trigger makes one match's finish wait, at a chosen
statement, for an advisory lock the test holds, and the test lets it go once the other
process is where the race needs it (seen in ``pg_locks``), so nothing depends on timing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import psycopg
import pytest

from tests.serverproc import ROOT, wait_until

pytestmark = pytest.mark.services

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
#: The advisory lock a paused finish waits for (the test holds it).
PAUSE = 262626
#: A process's start (Django's setup) on a busy machine: seconds at most.
START_S = 120


@pytest.fixture
def pg(tmp_path):
    """``(environment, psycopg URL)`` of a fresh, migrated PostgreSQL database; dropped afterwards."""
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update({"DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}", "ARENA_DATA_DIR": str(tmp_path)})
    try:
        subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], cwd=ROOT, env=env,
                       check=True, timeout=300)
        yield env, f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def django(env: dict, script: str, wait: bool = True):
    """Run ``script`` in ``manage.py shell`` (a process of its own); waits and returns what it
    printed, parsed as JSON (None for nothing), or with ``wait=False`` the running process."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "shell", "-v", "0", "-c", script], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return done(proc) if wait else proc


def done(proc: subprocess.Popen):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    lines = out.strip().splitlines()  # the last line (the shell may say what it imported first)
    return json.loads(lines[-1]) if lines else None


SETUP = """
import json
from django.contrib.auth.models import User
from games.arena.models import RegisteredBot
owner = User.objects.create_user("owner", password="pw-owner-1")
print(json.dumps([RegisteredBot.objects.create(owner=owner, game="liars_dice", name=f"b{{i}}", key_hash=f"h{{i}}").pk
                  for i in range({n})]))
"""

TABLES = """
import json
from games.arena.models import RegisteredBot
from tests.finished_matches import running
bots = {{b.pk: b for b in RegisteredBot.objects.all()}}
print(json.dumps([running("liars_dice", {{"players": len(seats)}}, [bots[b] for b in seats]).pk for seats in {tables}]))
"""

FINISH = """
from django.db import connection
from games.arena.play import tables
{barrier}
for match_id, scores in {finishes}:
    tables.finish(match_id, {{"scores": scores, "winner": None}})
"""

#: A finish that first waits for the test's go (the advisory lock, shared).
BARRIER = f"connection.cursor().execute('SELECT pg_advisory_lock_shared({PAUSE})')"


def finishing(env: dict, finishes: list, barrier: bool = False) -> subprocess.Popen:
    """A process finishing ``finishes`` (``[(match id, scores)]``) in order."""
    return django(env, FINISH.format(finishes=finishes, barrier=BARRIER if barrier else ""), wait=False)


def pause_when(url: str, table: str, event: str, condition: str) -> None:
    """Make a statement's rows (``event`` on ``table`` where ``condition``, in the trigger's
    NEW) wait for the test's advisory lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE OR REPLACE FUNCTION test_pause() RETURNS trigger AS $$ BEGIN "
                     f"PERFORM pg_advisory_xact_lock_shared({PAUSE}); RETURN NEW; END $$ LANGUAGE plpgsql")
        conn.execute(f"CREATE TRIGGER test_pause BEFORE {event} ON {table} FOR EACH ROW WHEN ({condition}) "
                     f"EXECUTE FUNCTION test_pause()")


def waiting(conn) -> int:
    """Locks someone waits for in this database (the server may have others)."""
    return conn.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                        "WHERE NOT l.granted AND a.datname = current_database()").fetchone()[0]


def stored(url: str) -> tuple[list, list]:
    """The ratings (by subject) and the rating changes (by match and seat), as compared."""
    with psycopg.connect(url) as conn:
        ratings = conn.execute("SELECT subject, mu, sigma, matches, wins, draws, last_match_id, last_seen "
                               "FROM arena_rating ORDER BY subject").fetchall()
        changes = conn.execute("SELECT match_id, seat, rank, mu_before, sigma_before, mu_after, sigma_after "
                               "FROM arena_ratingchange ORDER BY match_id, seat").fetchall()
    return ratings, changes


def recomputed_equals_stored(env: dict, url: str) -> None:
    before = stored(url)
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "recompute_ratings"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    assert stored(url) == before, "recompute_ratings gives exactly the stored numbers"


def test_two_first_matches_of_one_bot_finishing_at_once_both_count(pg):
    env, url = pg
    newcomer, p, q = django(env, SETUP.format(n=3))
    first, second = django(env, TABLES.format(tables=[[newcomer, p], [newcomer, q]]))
    # The first finish waits once it has made the newcomer's rating (not committed) and goes
    # on to write the rating changes; the second then finishes and needs that rating too.
    pause_when(url, "arena_ratingchange", "INSERT", f"NEW.match_id = {first}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"SELECT pg_advisory_lock({PAUSE})")
        a = finishing(env, [(first, [2, 0])])
        wait_until(lambda: waiting(conn) == 1, START_S, "the first finish to wait at its rating changes")
        b = finishing(env, [(second, [2, 0])])
        wait_until(lambda: waiting(conn) == 2, START_S, "the second finish to wait for the first's rating row")
        conn.execute(f"SELECT pg_advisory_unlock({PAUSE})")
    done(a), done(b)
    ratings, changes = stored(url)
    by_subject = {r[0]: r for r in ratings}
    assert by_subject[f"bot:{newcomer}"][3:5] == (2, 2), "one rating, both matches counted and won"
    assert [c[:2] for c in changes] == [(first, 0), (first, 1), (second, 0), (second, 1)]
    recomputed_equals_stored(env, url)


def test_a_match_overtaken_before_its_ratings_lock_is_stamped_after_the_match_that_overtook_it(pg):
    env, url = pg
    x, s, y = django(env, SETUP.format(n=3))
    warm_up = django(env, TABLES.format(tables=[[x, y], [s, y]]))
    done(finishing(env, [(warm_up[0], [2, 0]), (warm_up[1], [0, 2])]))  # every rating exists
    first, second = django(env, TABLES.format(tables=[[x, s], [s, y]]))
    # The first finish waits right after storing its result, before any rating is locked;
    # the second, which shares bot s with it, finishes meanwhile.
    pause_when(url, "arena_match", "UPDATE", f"NEW.id = {first} AND OLD.status <> NEW.status")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"SELECT pg_advisory_lock({PAUSE})")
        a = finishing(env, [(first, [2, 0])])
        wait_until(lambda: waiting(conn) == 1, START_S, "the first finish to wait")
        done(finishing(env, [(second, [2, 0])]))
        conn.execute(f"SELECT pg_advisory_unlock({PAUSE})")
    done(a)
    with psycopg.connect(url) as conn:
        rated_after = conn.execute("SELECT rating.subject FROM arena_ratingchange change JOIN arena_rating rating "
                                   "ON rating.id = change.rating_id WHERE change.match_id = %s", [first]).fetchall()
        stamps = dict(conn.execute("SELECT id, finished_at FROM arena_match WHERE id IN (%s, %s)",
                                   [first, second]).fetchall())
    assert len(rated_after) == 2
    assert stamps[first] > stamps[second], "finished in the order rated"
    recomputed_equals_stored(env, url)


def test_two_processes_finishing_many_matches_at_once_rate_as_recompute_does(pg):
    import random

    env, url = pg
    bots = django(env, SETUP.format(n=8))
    rng = random.Random(26)
    # Both processes' matches draw on the same eight bots, none rated yet: first matches race too.
    tables = [rng.sample(bots, rng.randint(2, 4)) for _ in range(60)]
    ids = django(env, TABLES.format(tables=tables))
    finishes = [(match_id, [rng.randint(0, 3) for _ in seats]) for match_id, seats in zip(ids, tables)]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"SELECT pg_advisory_lock({PAUSE})")  # both start together
        procs = [finishing(env, finishes[k::2], barrier=True) for k in range(2)]
        wait_until(lambda: waiting(conn) == 2, START_S, "both processes at the start")
        conn.execute(f"SELECT pg_advisory_unlock({PAUSE})")
    for proc in procs:
        done(proc)
    ratings, changes = stored(url)
    assert sum(r[3] for r in ratings) == sum(len(seats) for seats in tables) == len(changes)
    recomputed_equals_stored(env, url)
