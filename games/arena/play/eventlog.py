"""The append-only event log writer.

Runners hand their answers to :meth:`EventWriter.append`; one writer thread per arena process
drains them into the database in batches, so that database latency never stalls the loop.  A
batch starts :data:`MIN_BATCH_INTERVAL` seconds after its first row was appended (at once when
someone waits for it), so every row waits at most that long before its transaction starts,
and the steps that come close together (bots answering at once, or the bids of one round)
share one transaction.

The queue is bounded (``ARENA["EVENTLOG_MAX_QUEUED"]`` rows): when it is
full, ``append`` waits until the writer has taken the queue, so runners play no faster than
the database stores their steps.  A crash therefore loses at most the batch being written and
the rows queued behind it (together at most about twice the bound: the last ~2 ms of steps at
full speed; each row at most :data:`MIN_BATCH_INTERVAL` before its batch starts).  A finished
match is flushed before it is marked finished.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any, NamedTuple

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

log = logging.getLogger("arena.eventlog")

class EventRow(NamedTuple):
    """One seat's answer at one step as the log stores it (one ``Event`` row): a tuple, so
    that writing a batch costs no more than it did with bare tuples.  ``forced``/``reason``/
    ``detail`` as in :class:`games.arena.play.seats.Answer`; ``think_ms`` in milliseconds."""

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

#: A batch starts this long (seconds) after its first row was appended.  Each batch costs a
#: transaction, a wake-up of the writer thread and its share of the GIL: about 0.2 ms of CPU
#: while a match runs (three times what the same INSERT costs in a loop, the caches being
#: cold).  One batch per step cost a bot-vs-bot match about a third of its speed; writing
#: the first step after a quiet spell at once (as this did before) made nearly every Liar's
#: Dice step its own batch at the reference's pace (the bids of a round come within a few ms,
#: then the round's end waits 40 ms): 0.6 batches a move there, 0.36 with this window.
MIN_BATCH_INTERVAL = 0.002


_COLUMNS = ("match_id", "seq", "step", "seat", "action", "forced", "reason", "think_ms", "detail")
#: Rows per INSERT statement: nine values each, within the oldest SQLite's bound of 999.
ROWS_PER_STATEMENT = 100


def write_rows(rows: list[EventRow]) -> None:
    """Insert ``rows`` in one transaction (synchronous; runs on the writer thread): a single
    INSERT when they fit in one (autocommit: Django's ``atomic`` around it, a BEGIN, a COMMIT
    and its own bookkeeping, was half the thread's work per batch in Blokus games), else the
    INSERTs in ``transaction.atomic``.

    Cheap on purpose, because this thread competes for the GIL with the runners:

    - the writer thread keeps its database connection open between batches (opening one per
      batch, which ``close_old_connections`` does with ``CONN_MAX_AGE = 0``, cost about 1 ms
      of CPU per batch on SQLite); after a failure the connection is closed, so the retry
      starts on a fresh one;
    - on PostgreSQL one ``COPY ... FROM STDIN`` of all the rows (one statement, a transaction
      of its own in autocommit, as the single INSERT is);
    - elsewhere plain INSERTs of up to :data:`ROWS_PER_STATEMENT` rows each, on the database driver's
      own cursor, instead of ``bulk_create`` (which builds a model instance per row and
      compiles the query each time: about 3x the CPU).  A statement per row (``executemany``)
      cost SQLite half as much again, and the thread took the GIL back after every row;
      Django's cursor rewrites the placeholders of a statement every time it runs it;
    - values go through the fields' own ``get_db_prep_save``, so what is stored is what
      ``bulk_create`` stores, on SQLite and PostgreSQL alike; an action's is made once per
      distinct action (:class:`_EventInsert`), on the thread's own connection object
      (``django.db.connection`` is a proxy that finds it through asgiref's thread-local on
      every attribute): that was most of the Python work per row.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    try:
        insert = _EventInsert.of(conn)
        values = [v for (m, q, st, s, a, f, r, t, d) in rows
                  for v in (m, q, st, s, insert.action(a, conn), f, r[:200], t, d[:300])]
        width = len(_COLUMNS)
        if insert.copy is not None:  # PostgreSQL: any number of rows, one statement
            conn.ensure_connection()
            with conn.connection.cursor() as cursor, cursor.copy(insert.copy) as copy:
                for start in range(0, len(values), width):
                    copy.write_row(values[start:start + width])
            return
        if len(rows) <= ROWS_PER_STATEMENT:  # one statement is a transaction of its own
            conn.ensure_connection()
            cursor = conn.connection.cursor()
            try:
                cursor.execute(insert.statement(len(rows)), values)
            finally:
                cursor.close()
            return
        with transaction.atomic(using=DEFAULT_DB_ALIAS):
            cursor = conn.connection.cursor()
            try:
                for start in range(0, len(values), ROWS_PER_STATEMENT * width):
                    chunk = values[start:start + ROWS_PER_STATEMENT * width]
                    cursor.execute(insert.statement(len(chunk) // width), chunk)
            finally:
                cursor.close()
    except Exception:
        conn.close()
        raise


class _EventInsert:
    """What :func:`write_rows` needs per kind of database (``conn.vendor``): the INSERT of n
    rows (:meth:`statement`, with the driver's own placeholders), and the ``action`` column's
    values as ``Event.action``'s own ``get_db_prep_save`` makes them (:meth:`action`).  Those
    are kept per action, by its ``repr`` (which tells apart what JSON does: ``3`` and ``3.0``,
    ``1`` and ``True``), when the value is plain text (SQLite's JSON column; PostgreSQL's is
    an adapter object, made afresh every time); at most :data:`MAX` (Liar's Dice counts go
    up to 2**31 - 1)."""

    MAX = 4096
    _by_vendor: dict[str, "_EventInsert"] = {}

    def __init__(self, conn):
        from games.arena.models import Event

        meta = Event._meta
        qn = conn.ops.quote_name
        self.head = "INSERT INTO %s (%s) VALUES " % (qn(meta.db_table), ", ".join(qn(c) for c in _COLUMNS))
        mark = "?" if conn.Database.paramstyle == "qmark" else "%s"
        self.row = "(%s)" % ", ".join([mark] * len(_COLUMNS))
        self.statements: dict[int, str] = {}
        #: PostgreSQL's COPY of the rows (else None): one statement however many rows, its
        #: values written by psycopg's C dumpers.  The INSERT made psycopg bind the values on
        #: the client, parsing and quoting a statement of up to 900 placeholders anew for
        #: every batch, and the server parse and plan it anew: with COPY, scaled bot matches
        #: cost the arena process about a fifth less CPU per move (benchmarks/scaled_moves.py).
        self.copy = ("COPY %s (%s) FROM STDIN" % (qn(meta.db_table), ", ".join(qn(c) for c in _COLUMNS))
                     if conn.vendor == "postgresql" else None)
        self.prep = meta.get_field("action").get_db_prep_save
        self.texts: dict[str, str] = {}

    @classmethod
    def of(cls, conn) -> "_EventInsert":
        insert = cls._by_vendor.get(conn.vendor)
        if insert is None:
            insert = cls._by_vendor[conn.vendor] = cls(conn)
        return insert

    def statement(self, rows: int) -> str:
        """The INSERT of ``rows`` rows."""
        sql = self.statements.get(rows)
        if sql is None:
            sql = self.statements[rows] = self.head + ", ".join([self.row] * rows)
        return sql

    def action(self, action: Any, conn) -> Any:
        """``action`` as the column stores it."""
        key = repr(action)
        value = self.texts.get(key)
        if value is None:
            value = self.prep(action, conn)
            if type(value) is str:
                if len(self.texts) >= self.MAX:
                    self.texts.clear()
                self.texts[key] = value
        return value


def _settle_all(futures: list[asyncio.Future]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)


def _close_connection() -> None:
    """Close the calling thread's database connection (``connection`` is per thread)."""
    connection.close()


class EventWriter:
    """Bounded queue of event rows and the thread that writes them.  Start with :meth:`start`
    (on the loop whose runners append), end with :meth:`close`.

    ``max_queued``: rows queued before :meth:`append` waits (default
    ``ARENA["EVENTLOG_MAX_QUEUED"]``).

    The loop does little per batch: the first row of a batch sets one timer, which at the end
    of :data:`MIN_BATCH_INTERVAL` wakes the thread (:meth:`_hand_off`); the thread takes the
    queue itself (a lock around the list), and tells the loop only when someone waits (a
    runner for room, :meth:`flush` for the end).  Waking a writer task, timing its nap and
    handing each batch to a thread and back had cost the loop about 30 us a batch (a batch
    holds 2 to 10 Liar's Dice moves at full speed).  The thread wakes once a batch: when it
    timed the window itself, it woke at the first row only to sleep out the window, a second
    wake-up (and GIL hand-off) per batch, nearly one per round at the reference's pace.
    """

    def __init__(self, max_queued: int | None = None):
        self.max_queued = max(1, max_queued or settings.ARENA["EVENTLOG_MAX_QUEUED"])
        self._pending: list[EventRow] = []
        self._lock = threading.Lock()
        #: The thread waits here for a batch whose window is over (:meth:`_hand_off`), a full
        #: queue, someone waiting for the batch, or the end.
        self._changed = threading.Condition(self._lock)
        #: The queued rows' window is over (or the queue is full): the thread may take them.
        self._ripe = False
        self._timer: asyncio.TimerHandle | None = None  # rings at the end of the window (_hand_off)
        self._in_hand = 0  # rows the thread took and has not finished writing
        self._room_waiters: list[asyncio.Future] = []  # runners waiting while the queue is full
        self._flush_waiters: list[asyncio.Future] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.written = 0

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._work, name="eventlog", daemon=True)
        self._thread.start()

    async def append(self, rows: list[EventRow]) -> None:
        """Queue one step's rows for writing.  Returns at once while the queue holds fewer
        than ``max_queued`` rows; otherwise waits until the writer has taken the queue
        (back-pressure, so the log never falls far behind the matches)."""
        while len(self._pending) >= self.max_queued:
            room = asyncio.get_running_loop().create_future()
            with self._lock:
                if len(self._pending) < self.max_queued:  # the thread took the queue meanwhile
                    break
                self._room_waiters.append(room)
                self._changed.notify()  # the thread writes now rather than after its interval
            await room
        with self._lock:
            self._pending.extend(rows)
            if len(self._pending) >= self.max_queued:
                self._ripe = True
                self._changed.notify()  # (without a system call when the thread is not waiting)
            elif len(self._pending) == len(rows) and self._timer is None and self._loop is not None:
                # The first of a batch: its window starts now, and the loop rings at its end.
                self._timer = self._loop.call_later(MIN_BATCH_INTERVAL, self._hand_off)

    def _hand_off(self) -> None:
        """The batch's window is over: the thread may take it (on the loop, by the timer
        :meth:`append` set)."""
        self._timer = None
        with self._lock:
            self._ripe = True
            self._changed.notify()

    async def flush(self) -> None:
        """Wait until every row appended so far is in the database."""
        if self._thread is None:  # not started: write inline
            rows, self._pending = self._pending, []
            if rows:
                await asyncio.to_thread(write_rows, rows)
            return
        done = asyncio.get_running_loop().create_future()
        with self._lock:
            if not self._pending and not self._in_hand:
                return
            self._flush_waiters.append(done)
            self._changed.notify()  # no need to let the batch collect any longer
        await done

    async def close(self) -> None:
        """Flush, then stop the writer thread (it closes its database connection)."""
        await self.flush()
        thread, self._thread = self._thread, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if thread is not None:
            with self._lock:
                self._stopping = True
                self._changed.notify()
            await asyncio.to_thread(thread.join)

    # --- the writer thread ------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            with self._lock:
                # Wait for a batch whose window is over (the loop says so: _hand_off), unless
                # the queue is full or someone waits for it.
                while not (self._pending and (self._ripe or self._room_waiters or self._flush_waiters)
                           or self._stopping):
                    self._changed.wait()
                if self._stopping and not self._pending:
                    break
                rows, self._pending = self._pending, []
                self._ripe = False
                self._in_hand = len(rows)
                room, self._room_waiters = self._room_waiters, []
            self._tell(room)
            self._write(rows)
            with self._lock:
                self._in_hand = 0
                flushed = []
                if not self._pending:
                    flushed, self._flush_waiters = self._flush_waiters, []
            self._tell(flushed)
        _close_connection()

    def _tell(self, waiters: list[asyncio.Future]) -> None:
        """Wake ``waiters`` (futures of the loop)."""
        if waiters:
            try:
                self._loop.call_soon_threadsafe(_settle_all, waiters)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

    def _write(self, rows: list[EventRow]) -> None:
        for attempt in range(3):
            try:
                write_rows(rows)
                self.written += len(rows)
                return
            except Exception:  # a locked SQLite file or a dropped connection: retry
                log.exception("writing %d events failed (attempt %d)", len(rows), attempt + 1)
                time.sleep(0.2 * (attempt + 1))
        # A row the database refuses must not take the rest of the batch (other matches'
        # rows too) with it: write them one at a time and drop only what still fails.
        for row in rows:
            try:
                write_rows([row])
                self.written += 1
            except Exception as exc:
                log.error("event dropped: match %s seq %s seat %s: %s", row.match_id, row.seq, row.seat, exc)
