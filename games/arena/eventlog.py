"""The append-only event log writer.

Runners hand their answers to :meth:`EventWriter.append`; one writer task per arena process
drains them into the database in whatever batches have formed, on a thread of its own so that
database latency never stalls the loop.  When it is quiet (people, bots that think) every
step is written as soon as it is appended, one transaction each; under load (bots answering
at once) a batch starts at most every :data:`MIN_BATCH_INTERVAL` seconds, so rows collect
into one transaction instead of costing one thread hand-off each.

The queue is bounded (``ARENA["EVENTLOG_MAX_QUEUED"]`` rows): when it is
full, ``append`` waits until the writer has taken the queue, so runners play no faster than
the database stores their steps.  A crash therefore loses at most the batch being written and
the rows queued behind it (together at most about twice the bound: the last ~2 ms of steps at
full speed).  A finished match is flushed before it is marked finished.
"""
from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, transaction

log = logging.getLogger("arena.eventlog")

class EventRow(NamedTuple):
    """One seat's answer at one step as the log stores it (one ``Event`` row): a tuple, so
    that writing a batch costs no more than it did with bare tuples.  ``forced``/``reason``/
    ``detail`` as in :class:`games.arena.seats.Answer`; ``think_ms`` in milliseconds."""

    match_id: int
    seq: int
    step: int
    seat: int
    action: Any
    forced: bool
    reason: str
    think_ms: float
    detail: str

    def told(self, with_detail: bool) -> dict:
        """The answer as views and watchers carry it; ``detail`` (which may name the seat's
        own hidden information) only ``with_detail``."""
        told = {"seat": self.seat, "action": self.action, "forced": self.forced, "reason": self.reason}
        if with_detail:
            told["detail"] = self.detail
        return told

#: Under load, batches start at least this far apart (seconds).  Each batch costs a hand-off
#: to the writer thread and back (self-pipe wake-up of the loop) plus the thread's share of
#: the GIL; one batch per step cost a bot-vs-bot match about a third of its speed.
MIN_BATCH_INTERVAL = 0.002


_COLUMNS = ("match_id", "seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail")


def write_rows(rows: list[EventRow]) -> None:
    """Insert ``rows`` in one transaction (synchronous; runs on the writer thread).

    Cheap on purpose, because this thread competes for the GIL with the runners:

    - the writer thread keeps its database connection open between batches (opening one per
      batch, which ``close_old_connections`` does with ``CONN_MAX_AGE = 0``, cost about 1 ms
      of CPU per batch on SQLite); after a failure the connection is closed, so the retry
      starts on a fresh one;
    - one ``executemany`` of a plain INSERT instead of ``bulk_create`` (which builds a model
      instance per row and compiles the query each time: about 3x the CPU).  Values go through
      the fields' own ``get_db_prep_save``, so what is stored is what ``bulk_create`` stores,
      on SQLite and PostgreSQL alike.
    """
    from games.arena.models import Event

    try:
        meta = Event._meta
        qn = connection.ops.quote_name
        sql = "INSERT INTO %s (%s) VALUES (%s)" % (
            qn(meta.db_table), ", ".join(qn(c) for c in _COLUMNS), ", ".join(["%s"] * len(_COLUMNS)))
        prep_action = meta.get_field("action").get_db_prep_save
        params = [(m, q, st, s, prep_action(a, connection), f, r[:200], t, d[:300])
                  for (m, q, st, s, a, f, r, t, d) in rows]
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.executemany(sql, params)
    except Exception:
        connection.close()
        raise


def _close_connection() -> None:
    """Close the calling thread's database connection (``connection`` is per thread)."""
    connection.close()


class EventWriter:
    """Bounded queue of event rows and the task that writes them.  Start with :meth:`start`.

    ``max_queued``: rows queued before :meth:`append` waits (default
    ``ARENA["EVENTLOG_MAX_QUEUED"]``).
    """

    def __init__(self, max_queued: int | None = None):
        self.max_queued = max(1, max_queued or settings.ARENA["EVENTLOG_MAX_QUEUED"])
        self._pending: list[EventRow] = []
        self._room = asyncio.Event()  # set whenever the queue is below max_queued
        self._room.set()
        self._full = asyncio.Event()  # set when the queue reached max_queued: write at once
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventlog")
        self._task: asyncio.Task | None = None
        self.written = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="event-writer")

    async def append(self, rows: list[EventRow]) -> None:
        """Queue one step's rows for writing.  Returns at once while the queue holds fewer
        than ``max_queued`` rows; otherwise waits until the writer has taken the queue
        (back-pressure, so the log never falls far behind the matches)."""
        while len(self._pending) >= self.max_queued:
            self._room.clear()
            self._full.set()
            await self._room.wait()
        self._pending.extend(rows)
        self._idle.clear()
        self._wakeup.set()
        if len(self._pending) >= self.max_queued:
            self._full.set()

    async def flush(self) -> None:
        """Wait until every row appended so far is in the database."""
        if self._task is None:  # not started: write inline
            rows, self._pending = self._pending, []
            if rows:
                await asyncio.get_running_loop().run_in_executor(self._executor, write_rows, rows)
            return
        await self._idle.wait()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last_batch = float("-inf")
        while True:
            await self._wakeup.wait()
            wait = last_batch + MIN_BATCH_INTERVAL - loop.time()
            if wait > 0 and not self._full.is_set():  # busy: let this batch collect a little longer
                try:
                    await asyncio.wait_for(self._full.wait(), wait)
                except asyncio.TimeoutError:
                    pass
            last_batch = loop.time()
            self._wakeup.clear()
            self._full.clear()
            rows, self._pending = self._pending, []
            self._room.set()
            if rows:
                await self._write(loop, rows)
            if not self._pending:
                self._idle.set()

    async def _write(self, loop, rows: list[EventRow]) -> None:
        for attempt in range(3):
            try:
                await loop.run_in_executor(self._executor, write_rows, rows)
                self.written += len(rows)
                return
            except Exception:  # a locked SQLite file or a dropped connection: retry
                log.exception("writing %d events failed (attempt %d)", len(rows), attempt + 1)
                await asyncio.sleep(0.2 * (attempt + 1))
        # A row the database refuses must not take the rest of the batch (other matches'
        # rows too) with it: write them one at a time and drop only what still fails.
        for row in rows:
            try:
                await loop.run_in_executor(self._executor, write_rows, [row])
                self.written += 1
            except Exception as exc:
                log.error("event dropped: match %s seq %s seat %s: %s", row.match_id, row.seq, row.seat, exc)

    async def close(self) -> None:
        """Flush, then stop the writer task and close its database connection."""
        await self.flush()
        if self._task:
            self._task.cancel()
            self._task = None
        await asyncio.get_running_loop().run_in_executor(self._executor, _close_connection)
