"""The event writer keeps every row the database accepts, even when one row is refused."""
import math

import pytest

from games.arena import tables
from games.arena.eventlog import EventRow, EventWriter
from games.arena.models import Event

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

    from games.arena import eventlog

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
