"""The event writer keeps every row the database accepts, even when one row is refused."""
import math

import pytest

from games.arena.models import Event
from games.arena.play import tables
from games.arena.play.eventlog import EventRow, EventWriter

pytestmark = pytest.mark.django_db(transaction=True)


async def test_one_refused_row_does_not_take_the_batch_with_it():
    from asgiref.sync import sync_to_async

    match = await sync_to_async(tables.create_table)("liars_dice", {}, ["open_bot", "open_bot"], None)
    writer = EventWriter()
    writer.start()
    rows = [EventRow(match.pk, 1, 1, 0, ["bid", 3, 1], False, "", 1.0, ""),
            EventRow(match.pk, 2, 1, 1, ["bid", math.nan, 1], False, "", 1.0, ""),  # SQLite's JSON check refuses NaN
            EventRow(match.pk, 3, 2, 0, "challenge", False, "", 1.0, "")]
    await writer.append(rows)
    await writer.close()
    stored = await sync_to_async(lambda: list(Event.objects.filter(match=match).values_list("seq", flat=True)))()
    assert sorted(stored) == [1, 3]


async def test_a_full_queue_makes_runners_wait_until_the_writer_takes_it(monkeypatch):
    """The queue is bounded; ``append`` waits while it is full, so what a
    crash can lose (the batch being written plus the queue) stays bounded at any load."""
    import asyncio
    import threading

    from asgiref.sync import sync_to_async

    from games.arena.play import eventlog

    match = await sync_to_async(tables.create_table)("liars_dice", {}, ["open_bot", "open_bot"], None)
    disk_free = threading.Event()  # the database is slow until the test says otherwise
    real_write = eventlog.write_rows

    def slow_write(rows):
        disk_free.wait(10)
        real_write(rows)

    monkeypatch.setattr(eventlog, "write_rows", slow_write)
    writer = EventWriter(max_queued=10)
    writer.start()
    seq = 0

    def step():  # one Liar's Dice step of two answers
        nonlocal seq
        seq += 2
        return [EventRow(match.pk, seq - 1, seq // 2, 0, "pass", False, "", 1.0, ""),
                EventRow(match.pk, seq, seq // 2, 1, "pass", False, "", 1.0, "")]

    await writer.append(step())
    await asyncio.sleep(0.05)  # the writer took that step and is stuck writing it
    for _ in range(5):  # fills the queue to its bound
        await writer.append(step())
    blocked = asyncio.ensure_future(writer.append(step()))
    await asyncio.sleep(0.05)
    assert not blocked.done(), "a runner waits while the queue is full"
    assert len(writer._pending) == 10
    disk_free.set()
    await asyncio.wait_for(blocked, 5)
    await writer.close()
    stored = await sync_to_async(lambda: Event.objects.filter(match=match).count())()
    assert stored == seq == 14


@pytest.mark.services
def test_postgresql_stores_a_batch_as_bulk_create_does(tmp_path):
    """On PostgreSQL a batch is one COPY (games/arena/play/eventlog.py): what it stores, row for
    row, is what ``bulk_create`` stores from the same values: JSON actions of every kind and
    none, texts cut to their columns, more rows than one INSERT takes."""
    import os
    import subprocess
    import sys
    import uuid
    from pathlib import Path

    import psycopg

    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{name}", ARENA_DATA_DIR=str(tmp_path))
    env.pop("DJANGO_SETTINGS_MODULE", None)
    script = """
from games.arena.models import Event
from games.arena.play import tables
from games.arena.play.eventlog import EventRow, write_rows
actions = [None, "challenge", ["bid", 3, 2], 3, 3.0, True, {"a": [1, "é"]}, "x" * 50, 2**31 - 1]
ours, theirs = (tables.create_table("liars_dice", {}, ["open_bot", "open_bot"], None) for _ in range(2))
rows = [EventRow(ours.pk, k + 1, k // 2 + 1, k % 2, actions[k % len(actions)], k % 3 == 0, "r" * 250,
                 k / 7, "d\\t\\n" * 120) for k in range(150)]
write_rows(rows)
Event.objects.bulk_create(Event(match_id=theirs.pk, seq=r.seq, step=r.step, seat=r.seat, action=r.action,
                                forced=r.forced, reason=r.reason[:200], think_ms=r.think_ms, detail=r.detail[:300])
                          for r in rows)
fields = ("seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail")
got = [list(Event.objects.filter(match=m).order_by("seq").values_list(*fields)) for m in (ours, theirs)]
assert len(got[0]) == 150 and got[0] == got[1], (got[0][:3], got[1][:3])
print("same")
"""
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        manage = [sys.executable, str(root / "manage.py")]
        subprocess.run([*manage, "migrate", "-v", "0"], cwd=root, env=env, check=True, timeout=120)
        out = subprocess.run([*manage, "shell", "-c", script], cwd=root, env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.stdout.strip().endswith("same"), out.stderr
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
