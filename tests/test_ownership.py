"""Several arenas on one database (issue 26; docs/architecture.md, *Several arenas*): who holds
a table or a match (``Match.owner``, its lease, the run's attempt), in the database's own
terms, on SQLite and on PostgreSQL alike.  Two arenas ("A", "B", ...) race for the seats of
one table and for tables to start; an expired lease is recovered, a live one untouched; a
run that lost its lease records nothing; a reservation is found by its code's hash.

On PostgreSQL the races are real: two connections, and the second arena's statement is
seen waiting for the first's row lock (``pg_stat_activity``) before the first commits, so
READ COMMITTED's re-check is what decides.  SQLite has one writer at a time: the same steps
run one after the other there, and ``SKIP LOCKED`` is dropped by Django (no error).  The
arena processes' side (renewal, cancelled runs, seating through the Arena) is in
tests/test_ownership_arena.py."""
from __future__ import annotations

import re
import signal
import threading

import psycopg
import pytest

from tests.ld_bot import LDBot
from tests.serverproc import wait_until
from tests.test_scaled import scaled_env  # noqa: F401  (the fixture: PostgreSQL and Redis)
from tests.test_seating_sql import database_env, run_script  # noqa: F401  (the fixture, both vendors)

SCRIPT = r'''
import hashlib
import json
import threading
import time
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from games.arena.models import Match, RatingChange, Seat, Snapshot
from games.arena.play import replay, tables
from games.arena.play.tables import Run

OPEN = [tables.OPEN_BOT, tables.OPEN_BOT]
BLOKUS = {"variant": "2021"}
LD = {"players": 2, "dice": 2, "games": 1}
BUILTIN = ["builtin:random", "builtin:probability"]  # two subjects: the match is rated
PG = connection.vendor == "postgresql"
out = {"vendor": connection.vendor}


def in_thread(work):
    """Run ``work()`` on its own thread (its own database connection); (thread, box)."""
    box = {}

    def run():
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = repr(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, box


def until(test, what):
    deadline = time.monotonic() + 60
    while not test():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def lock_waiters():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


def row(pk):
    m = Match.objects.get(pk=pk)
    return {"status": m.status, "owner": m.owner, "attempt": m.attempt, "result": m.result,
            "leased": m.lease_until is not None and m.lease_until > timezone.now()}


def seats(pk):
    return [[s.occupied, s.display_name] for s in Seat.objects.filter(match_id=pk).order_by("index")]


def expire(*pks):
    Match.objects.filter(pk__in=pks).update(lease_until=timezone.now() - timedelta(seconds=1))


# --- 1. two arenas take two seats of one open table at the same moment ----------------------
table = tables.create_table("blokus", BLOKUS, OPEN, None)
a_claimed, a_commit = threading.Event(), threading.Event()


def arena_a():
    with transaction.atomic():  # A's claim is in, not committed yet
        seat = tables.claim_bot_seat("blokus", "a-bot", None, table.pk, index=0, owner="A", lease_s=15)
        a_claimed.set()
        assert a_commit.wait(60)
    return seat.index


def arena_b():
    seat = tables.claim_bot_seat("blokus", "b-bot", None, table.pk, index=1, owner="B", lease_s=15)
    return None if seat is None else seat.index


thread_a, box_a = in_thread(arena_a)
assert a_claimed.wait(60)
thread_b, box_b = in_thread(arena_b)
if PG:  # B's claim waits for A's row, then sees it A's
    until(lambda: lock_waiters() >= 1, "arena B waits for arena A's table row")
else:  # one writer at a time: B goes after A, whenever it gets there
    a_commit.set()
a_commit.set()
thread_a.join(60)
thread_b.join(60)
out["race for seats"] = [box_a, box_b, row(table.pk)["owner"], seats(table.pk)]
out["B again"] = tables.claim_bot_seat("blokus", "b-bot", None, table.pk, owner="B", lease_s=15) is None
# A's bot leaves: its seat is open again, and A gives the table back; now B's bot may sit.
a_seat = Seat.objects.get(match_id=table.pk, index=0).pk
out["A frees"] = [tables.free_bot_seat(a_seat, "A") == table.pk, tables.release_table(table.pk, "A"),
                  row(table.pk)["owner"]]
b_seat = tables.claim_bot_seat("blokus", "b-bot", None, table.pk, owner="B", lease_s=15)
out["B after A left"] = [b_seat.index, row(table.pk)["owner"], row(table.pk)["leased"]]
# A's stale leave (its table is B's now) frees nothing of B's.
out["A's late leave"] = [tables.free_bot_seat(b_seat.pk, "A"), seats(table.pk)]

# --- 2. tables to start are claimed with SKIP LOCKED -----------------------------------------
startable = [tables.create_table("liars_dice", LD, BUILTIN, None).pk for _ in range(3)]
prepared = tables.create_prepared_table("blokus", BLOKUS, ["p1", "p2"], ["code-1", "code-2"]).pk
others = tables.create_table("liars_dice", LD, BUILTIN, None).pk
Match.objects.filter(pk=others).update(owner="E", lease_until=timezone.now() + timedelta(seconds=15))
b_claim = {}
if PG:  # A holds its claim's row lock while B claims: B skips that row, and does not wait
    a_claimed.clear()
    a_commit.clear()

    def claim_a():
        with transaction.atomic():
            ids = tables.claim_tables_to_start("A", 15, limit=1)
            a_claimed.set()
            assert a_commit.wait(60)
        return ids

    thread_a, box_a = in_thread(claim_a)
    assert a_claimed.wait(60)
    thread_b, b_claim = in_thread(lambda: tables.claim_tables_to_start("B", 15))
    thread_b.join(60)
    out["B did not wait"] = not thread_b.is_alive()
    a_commit.set()
    thread_a.join(60)
    a_ids = box_a.get("value")
    b_claim = b_claim.get("value", b_claim)
else:
    a_ids = tables.claim_tables_to_start("A", 15, limit=1)  # SKIP LOCKED dropped, no error
    b_claim = tables.claim_tables_to_start("B", 15)
    out["B did not wait"] = True
out["claims"] = [a_ids == startable[:1], b_claim == startable[1:],
                 [row(pk)["owner"] for pk in startable], row(prepared)["owner"], row(others)["owner"]]
# A claimed it: B cannot start it; A can, under attempt 1.
out["B starts A's"] = tables.try_start(startable[0], "B", 15)
started = tables.try_start(startable[0], "A", 15)
out["A starts its own"] = [started.attempt, row(startable[0])]
out["B starts its own"] = [tables.try_start(pk, "B", 15).attempt for pk in startable[1:]]

# --- 3. recovery: only what dead arenas left -------------------------------------------------
dead_run, live_run = startable[1], startable[2]  # B died; C runs live_run
Match.objects.filter(pk=live_run).update(owner="C", lease_until=timezone.now() + timedelta(seconds=15))
legacy = tables.create_table("liars_dice", LD, BUILTIN, None).pk
tables.try_start(legacy)  # no arena: no lease, as rows from before leases
own = tables.create_table("liars_dice", LD, BUILTIN, None).pk
tables.try_start(own, "D", 15)
expire(dead_run, own)
out["lost runs"] = [tables.lost_runs("B", {dead_run: 1}), tables.lost_runs("C", {live_run: 1}),
                    tables.lost_runs("C", {live_run: 2})]
out["aborted"] = sorted(tables.abort_stale("D")) == sorted([dead_run, legacy])
out["after abort_stale"] = {name: row(pk) for name, pk in
                            [("dead", dead_run), ("legacy", legacy), ("live", live_run), ("own", own)]}
out["lost runs after"] = tables.lost_runs("B", {dead_run: 1})
out["again"] = tables.abort_stale("D")
# D restarts under the same name (ARENA_NAME): its previous process's run goes, lease or not.
tables.renew_leases("D", 15)
out["own at start"] = [tables.abort_stale("D", starting=True) == [own], row(own)["status"]]
# Open tables: A's (its bot's seat, and a prepared table whose reservation its bot took) with
# A dead; E's full table alive; B's table of part 1 alive.
a_table = tables.create_table("blokus", BLOKUS, OPEN, None).pk
a_bot = tables.claim_bot_seat("blokus", "a-bot", None, a_table, owner="A", lease_s=15)
out["A holds the prepared table"] = tables.hold_table(prepared, "A", 15)
out["B cannot"] = tables.hold_table(prepared, "B", 15)
out["A's seat lost?"] = tables.lost_seats("A", [a_bot.pk])
expire(a_table, prepared)
out["freed"] = tables.free_connected_bot_seats("D")
out["after free"] = {name: [row(pk)["owner"], seats(pk)] for name, pk in
                     [("A's table", a_table), ("prepared", prepared), ("B's table", table.pk), ("E's", others)]}
out["A's seat lost"] = tables.lost_seats("A", [a_bot.pk]) == [(a_bot.pk, a_table)]
out["A renews nothing"] = tables.renew_leases("A", 15)  # its freed tables no more

# --- 4. a stale run records nothing ----------------------------------------------------------
stale = Run("B", 1)
match = Match.objects.get(pk=dead_run)
state = __import__("games.arena.registry", fromlist=["get"]).get("liars_dice").new_state(match.config, match.seed)
out["stale records"] = [tables.finish(dead_run, {"scores": [1, 0], "winner": 0}, run=stale),
                        tables.abort(dead_run, "the server stopped during the match", stale),
                        tables.set_final_view(dead_run, {"x": 1}, stale)]
replay.store_end(dead_run, [(1, 1, b"snapshot")], state, stale)
out["stale row"] = [row(dead_run), Match.objects.get(pk=dead_run).final_view,
                    [s.final_score for s in Seat.objects.filter(match_id=dead_run)],
                    RatingChange.objects.filter(match_id=dead_run).count(),
                    Snapshot.objects.filter(match_id=dead_run).count()]
# The live run: a wrong attempt is refused, its own recorded and rated.
out["wrong attempt"] = [tables.finish(live_run, {"scores": [1, 0], "winner": 0}, run=Run("C", 2)),
                        row(live_run)["status"]]
out["right attempt"] = [tables.finish(live_run, {"scores": [1, 0], "winner": 0}, run=Run("C", 1)),
                        row(live_run)["status"], RatingChange.objects.filter(match_id=live_run).count()]

# --- 5. reservations are kept hashed, found by any arena -------------------------------------
digest = hashlib.sha256(b"code-1").hexdigest()
seat0 = Seat.objects.get(match_id=prepared, index=0)
out["reservation"] = [seat0.reservation == digest == tables.reservation_hash("code-1"),
                      Seat.objects.filter(reservation__in=["code-1", "code-2"]).exists(),
                      tables.find_reservation(digest) == (prepared, seat0.pk, 0),
                      tables.find_reservation(tables.reservation_hash("code-3")),
                      tables.reserved_open_tables([prepared, table.pk, dead_run]) == {prepared}]
Match.objects.filter(pk=prepared).update(status=Match.Status.RUNNING)
out["reservation of a started table"] = [tables.find_reservation(digest), list(tables.reserved_open_tables([prepared]))]
out["ids"] = {"dead": dead_run, "live": live_run}
print("RESULT " + json.dumps(out, default=str))
'''


def test_arenas_hold_tables_and_runs_and_recover_only_the_dead(database_env):
    out = run_script(database_env, SCRIPT)
    stale_reason = "the arena running it stopped (its lease expired)"
    # 1. A's bot sits at seat 0; B's racing claim of seat 1 of the same table found it A's.
    assert out["race for seats"][:3] == [{"value": 0}, {"value": None}, "A"]
    assert out["race for seats"][3] == [[True, "a-bot"], [False, ""]]
    assert out["B again"] is True
    assert out["A frees"] == [True, True, ""]
    assert out["B after A left"] == [0, "B", True]
    assert out["A's late leave"] == [None, [[True, "b-bot"], [False, ""]]]
    # 2. A claimed one table; B the others, without waiting for A's lock; never the prepared
    # table whose reserved seats no bot took, never E's.
    assert out["B did not wait"] is True
    assert out["claims"] == [True, True, ["A", "B", "B"], "", "E"]
    assert out["B starts A's"] is None
    assert out["A starts its own"][0] == 1
    assert out["A starts its own"][1] | {"result": None} == {"status": "running", "owner": "A", "attempt": 1,
                                                              "result": None, "leased": True}
    assert out["B starts its own"] == [1, 1]
    # 3. Only the expired (and lease-less) runs are aborted, never a live one nor the caller's own.
    ids = out["ids"]
    # Still running under the run: not lost (even with its lease expired, until aborted).
    assert out["lost runs"] == [[], [], [ids["live"]]]
    assert out["aborted"] is True
    after = out["after abort_stale"]
    assert after["dead"]["status"] == "aborted" and after["dead"]["result"] == {"aborted": stale_reason}
    assert after["legacy"]["status"] == "aborted" and after["legacy"]["result"] == {"aborted": stale_reason}
    assert after["live"]["status"] == "running" and after["live"]["owner"] == "C"
    assert after["own"]["status"] == "running"
    assert out["lost runs after"] == [ids["dead"]]
    assert out["again"] == []
    assert out["own at start"] == [True, "aborted"]
    assert out["A holds the prepared table"] is True and out["B cannot"] is False
    assert out["A's seat lost?"] == []
    freed = out["after free"]
    assert out["freed"] == 1
    assert freed["A's table"] == ["", [[False, ""], [False, ""]]]
    assert freed["prepared"] == ["", [[True, "p1"], [True, "p2"]]], "reserved seats stay reserved"
    assert freed["B's table"][0] == "B" and freed["E's"][0] == "E", "live arenas' tables untouched"
    assert out["A's seat lost"] is True
    assert out["A renews nothing"] == 1, "only the match A still runs"
    # 4. Nothing of the stale run is recorded: no result, scores, ratings, view or snapshots.
    assert out["stale records"] == [False, False, False]
    status, view, scores, rated, snapshots = out["stale row"]
    assert status["status"] == "aborted" and status["result"] == {"aborted": stale_reason}
    assert view is None and scores == [None, None] and rated == 0 and snapshots == 0
    assert out["wrong attempt"] == [False, "running"]
    assert out["right attempt"][:2] == [True, "finished"] and out["right attempt"][2] == 2
    # 5. Only the code's hash is kept, and any arena finds the seat by it while the table is open.
    assert out["reservation"] == [True, False, True, None, True]
    assert out["reservation of a started table"] == [None, []]


@pytest.mark.services
def test_two_arena_processes_share_a_database_and_one_aborts_only_the_matches_of_the_one_that_died(
        arena_factory, scaled_env):
    """Two ``--role arena`` processes on one PostgreSQL database (5 s leases): the second
    starting leaves the first's running match alone; the first killed, the second aborts that
    match once the lease ran out, while its own match plays to its end."""
    env = {**scaled_env, "ARENA_LEASE": "5", "LIARS_DICE_BOT_DEADLINE": "120"}
    first = arena_factory(role="arena", env=env)
    held = threading.Event()  # the first arena's bots wait for it: their match stays running

    def waiting(msg):
        held.wait(120)
        return None

    stuck = [LDBot(first.liars_dice_port, f"stuck-{i}", waiting) for i in range(2)]
    started = wait_until(lambda: re.search(r"match (\d+) \(liars_dice\) started", first.log()), 20,
                         "the first arena's match running")
    stuck_match = int(started.group(1))
    second = arena_factory(role="arena", env=env)  # its start recovered what was dead: nothing
    url = scaled_env["DATABASE_URL"].replace("postgres://", "postgresql://")

    def row(match_id):
        with psycopg.connect(url) as conn:
            return conn.execute("SELECT status, owner, attempt, result FROM arena_match WHERE id = %s",
                                [match_id]).fetchone()

    def arenas():
        with psycopg.connect(url) as conn:
            return sorted(name for (name,) in conn.execute("SELECT name FROM arena_arenaprocess"))

    status, owner, attempt, _ = row(stuck_match)
    assert (status, attempt) == ("running", 1) and owner and owner in arenas() and len(arenas()) == 2
    try:
        players = [LDBot(second.liars_dice_port, f"live-{i}") for i in range(2)]
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait()
        wait_until(lambda: row(stuck_match)[0] == "aborted", 30, "the dead arena's match aborted")
        assert row(stuck_match)[3] == {"aborted": "the arena running it stopped (its lease expired)"}
        for bot in players:
            assert bot.closed.wait(60), "the live arena's match played to its end"
        live = int(re.search(r"match (\d+) \(liars_dice\) started", second.log()).group(1))
        status, owner, attempt, _ = row(live)
        assert status == "finished" and attempt == 1 and owner != row(stuck_match)[1]
        wait_until(lambda: arenas() == [owner], 30, "the dead arena's row removed")
    finally:
        held.set()
        for bot in stuck:
            bot.close()
