"""Crashes and restarts against a real server.

- kill -9 under a big table loses only what the event log's bounded queue held (the last few
  milliseconds of steps at full speed): what the bots were told (a ``move_request`` for step
  k+1 goes out only after step k was handed to the event log) is compared with what the
  database holds after the kill;
- a bot waiting at a table when the server stops (kill -9 or Ctrl-C) leaves no ghost seat:
  after a restart the next bots are seated and play;
- one guest joining a table twice at the same moment gets one seat (PostgreSQL, threads).
"""
from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid

import psycopg
import pytest

from tests.ld_bot import LDBot
from tests.serverproc import ROOT, cpu_seconds, start_arena, wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored

#: The event log's queue bound for the kill test (``ARENA_EVENTLOG_MAX_QUEUED``, rows), small
#: so that its bound on what a crash loses is a sharp one.
KILL_TEST_QUEUE = 32
#: Rows one step appends at most in that test (a six-player Liar's Dice table: every seat answers).
KILL_TEST_ROWS_PER_STEP = 6
#: What the kill may lose, seen from a bot: steps acknowledged (the next request arrived) at
#: most this much of the server's CPU time before the kill.  The server's bound is its queue,
#: about 2 ms of its work; the rest is the measurement's slack (the bot reads its messages
#: late when the machine is busy, and the server's clock runs on meanwhile).  Counted in the
#: server's CPU time, not wall time, because a busy machine stretches the same work over
#: more wall time; an unbounded queue lost steps acknowledged ~500 ms (wall) before the kill.
LOSS_WINDOW_CPU_S = 0.05


def shell(arena, code: str) -> str:
    """Run ``code`` in ``manage.py shell`` against ``arena``'s database; returns its output."""
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", code], cwd=ROOT,
                          env=arena.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def restart(arena):
    """A new server on ``arena``'s data directory (new ports)."""
    env = {k: v for k, v in arena.env.items() if not k.endswith("_PORT")}
    with sigint_not_ignored():
        return start_arena(env=env, data_dir=arena.data_dir)


def fast(bot_move=None):
    """An LD bot that opens with [3, 1] and challenges the next bid: short rounds, no thinking."""
    def move(msg):
        if msg["other_hands"][0][0] != 0:
            return "pass"
        return [3, 1] if msg["last_bid"] == [0, 0] else "challenge"
    return move


def test_kill_9_under_a_big_table_loses_only_the_last_milliseconds(arena_factory):
    """What a kill -9 loses is bounded by the event log's queue: a crash loses the batch
    being written and the rows queued behind it, each under the queue bound (the writer
    takes the queue when it is full, and a runner waits for room).  At full speed that is
    the last ~2 ms of steps; a busy machine stretches the same work over more wall time, so
    the bound is asserted in steps and in the server's CPU time."""
    with sigint_not_ignored():
        arena = arena_factory(env={"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6",
                                   "LIARS_DICE_AUTO_GAMES": "1000",
                                   "ARENA_EVENTLOG_MAX_QUEUED": str(KILL_TEST_QUEUE)})
    # The big table: built-in bots playing at full speed, started by the arena's sweep.
    shell(arena, "from games.arena.play import tables\n"
                 "for _ in range(12):\n"
                 "    tables.create_table('liars_dice', {'players': 6, 'dice': 6, 'games': 100},"
                 " ['builtin:random'] * 6, None)\n")
    db = sqlite3.connect(arena.data_dir / "arena.sqlite3", timeout=10)
    try:
        # Waits count the server's CPU time: how fast it gets there depends on the machine.
        wait_until(lambda: db.execute("SELECT count(*) FROM arena_match WHERE status = 'running'").fetchone()[0] >= 12,
                   15, "the built-in matches running", clock=arena.clock())
        clock = arena.clock()
        a = LDBot(arena.liars_dice_port, "crash-a", fast(), clock=server_cpu(arena.proc.pid))
        b = LDBot(arena.liars_dice_port, "crash-b", fast())
        started = clock()
        wait_until(lambda: len(a.requests()) > 500, 120, "the bots' match under way", clock=clock)
        cpu_to_500 = clock() - started
        time.sleep(0.5)  # kill in mid-stream, not at the moment the count was seen
        killed = clock()
        arena.proc.send_signal(signal.SIGKILL)
        arena.proc.wait()
        assert a.closed.wait(60), "the bot reads what the server sent before it died, then the end"
        stamps = [t for t, m in zip(a.stamps, a.received) if m.get("subject") == "move_request"]
        (match_id,) = db.execute("SELECT match_id FROM arena_seat WHERE display_name = 'crash-a'").fetchone()
        steps = db.execute("SELECT step, count(*) FROM arena_event WHERE match_id = ? GROUP BY step ORDER BY step",
                           (match_id,)).fetchall()
        builtin_rows = db.execute("SELECT count(*) FROM arena_event WHERE match_id != ?", (match_id,)).fetchone()[0]
    finally:
        db.close()
        a.close()
        b.close()
    stored = len(steps)
    assert [s for s, _ in steps] == list(range(1, stored + 1)) and all(n == 2 for _, n in steps), \
        "the stored steps are complete and without gaps"
    # Request k + 1 (stamps[k]) reached the bot after step k had been handed to the log.
    acknowledged = len(stamps) - 1
    lost = acknowledged - stored
    oldest_lost_age = max(0.0, killed - stamps[stored]) if lost > 0 else 0.0
    print(f"\nkill -9: bot match {acknowledged} steps acknowledged, {stored} stored, {lost} lost; "
          f"oldest lost step acknowledged {oldest_lost_age * 1000:.1f} ms of server CPU before the kill; "
          f"built-in matches' rows stored: {builtin_rows}; server CPU to 500 requests {cpu_to_500:.1f} s")
    assert builtin_rows > 10_000, "the kill came under load"
    # Queued and in hand, each at most the bound less one row plus one step's rows; the bot
    # match's steps (2 rows each) can be at most all of them.
    max_lost_rows = 2 * (KILL_TEST_QUEUE - 1 + KILL_TEST_ROWS_PER_STEP)
    assert lost * 2 <= max_lost_rows, \
        f"{lost} acknowledged steps lost: more than the event log's queue bound holds ({max_lost_rows} rows)"
    assert oldest_lost_age <= LOSS_WINDOW_CPU_S, \
        f"a step acknowledged {oldest_lost_age * 1000:.0f} ms of the server's CPU time before the kill was lost"


def server_cpu(pid: int):
    """A clock of the server's CPU time that a bot's reading thread may call after the kill:
    a message read then gets the time of death (``inf``, counted as the kill itself)."""
    def clock() -> float:
        try:
            return cpu_seconds(pid)
        except OSError:
            return float("inf")
    return clock


@pytest.mark.parametrize("how", ["kill -9", "Ctrl-C"])
def test_a_bot_waiting_when_the_server_stops_leaves_no_ghost_seat(arena_factory, how):
    with sigint_not_ignored():
        arena = arena_factory(env={"LIARS_DICE_BOT_DEADLINE": "1", "ARENA_LEASE": "1"})
    shell(arena, "from games.arena.play import tables\n"
                 "tables.create_table('liars_dice', {'players': 2, 'dice': 2, 'games': 1},"
                 " ['open_bot', 'open_bot'], None)\n")
    ghost = LDBot(arena.liars_dice_port, "ghost", fast())
    seated = wait_until(lambda: re.search(r"ghost took seat 0 of match (\d+)", arena.log()), 10,
                        "a bot waiting at the table")
    match_id = int(seated.group(1))
    if how == "kill -9":
        arena.proc.kill()
        arena.proc.wait()
    else:
        assert arena.stop() == 0, arena.log()[-2000:]
    ghost.close()
    again = restart(arena)
    try:
        # Killed, its arena freed nothing: the next arena frees the seat once its lease on the
        # table (ARENA_LEASE, 1 s here) ran out; stopped, it freed the seat itself.
        wait_until(lambda: ghost_seat_free(again, match_id), 20, "the ghost's seat freed")
        first, second = LDBot(again.liars_dice_port, "next-1", fast()), LDBot(again.liars_dice_port, "next-2", fast())
        for bot in (first, second):
            assert bot.closed.wait(20), "the next bots were seated together and played their match"
        assert first.requests() and second.requests()
        db = sqlite3.connect(again.data_dir / "arena.sqlite3")
        try:
            status, names = db.execute("SELECT m.status, group_concat(s.display_name) FROM arena_match m "
                                       "JOIN arena_seat s ON s.match_id = m.id WHERE m.id = ?", (match_id,)).fetchone()
            open_auto = db.execute("SELECT count(*) FROM arena_match WHERE auto AND status = 'open'").fetchone()[0]
        finally:
            db.close()
        assert status == "finished" and sorted(names.split(",")) == ["next-1", "next-2"]
        assert open_auto == 0, "no automatic table left waiting for a ghost"
    finally:
        again.stop()


def ghost_seat_free(arena, match_id: int) -> bool:
    db = sqlite3.connect(arena.data_dir / "arena.sqlite3")
    try:
        return not db.execute("SELECT count(*) FROM arena_seat WHERE match_id = ? AND occupied",
                              (match_id,)).fetchone()[0]
    finally:
        db.close()


PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"

_JOIN_RACE = """
import json, threading
from django.db import connection
from games.arena.models import Seat
from games.arena.play import tables
results = []
for attempt in range(20):
    match = tables.create_table('liars_dice', {'players': 6, 'dice': 1, 'games': 1}, ['open_human'] * 6, None)
    barrier = threading.Barrier(6)
    answers = [None] * 6
    def join(i, match_id=match.pk):
        barrier.wait()
        try:
            answers[i] = tables.join_seat(match_id, i, tables.Sitter('twice', session_key='one-session'))
        except Exception as exc:
            answers[i] = 'raised ' + exc.__class__.__name__
        finally:
            connection.close()
    threads = [threading.Thread(target=join, args=(i,)) for i in range(6)]
    for t in threads: t.start()
    for t in threads: t.join()
    seats = Seat.objects.filter(match=match, session_key='one-session').count()
    results.append({'answers': answers, 'seats': seats})
print(json.dumps(results))
"""


@pytest.mark.services
def test_one_guest_joining_twice_at_once_gets_one_seat():
    """Six threads join six seats of one table as the same guest at the same moment, 20 times,
    on PostgreSQL (which, unlike SQLite, lets the writes race)."""
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        import os
        env = dict(os.environ, DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{name}")
        env.pop("DJANGO_SETTINGS_MODULE", None)
        migrate = subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=120)
        assert migrate.returncode == 0, migrate.stderr
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", _JOIN_RACE], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    for result in results:
        assert result["seats"] == 1, result
        assert result["answers"].count(None) == 1, result
        assert all(a in (None, "You already have a seat at this table.") for a in result["answers"]), result
