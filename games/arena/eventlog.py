"""The append-only event log writer.

Runners hand their answers to :meth:`EventWriter.append` without waiting; one writer task
per arena process drains them into the database in whatever batches have formed (one row at a
time when it is quiet, hundreds per transaction under load), on a thread of its own so that
database latency never stalls a runner.  A crash loses at most the answers still queued,
i.e. the step in flight.
"""
from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, transaction

log = logging.getLogger("arena.eventlog")

#: (match_id, seq, step, seat, action, forced, reason, think_ms)
EventRow = tuple


def write_rows(rows: list[EventRow]) -> None:
    """Insert ``rows`` in one transaction (synchronous; runs on the writer thread)."""
    from games.arena.models import Event

    close_old_connections()
    with transaction.atomic():
        Event.objects.bulk_create(
            [Event(match_id=m, seq=q, step=st, seat=s, action=a, forced=f, reason=r[:200], think_ms=t)
             for (m, q, st, s, a, f, r, t) in rows]
        )


class EventWriter:
    """Queue of event rows and the task that writes them.  Start with :meth:`start`."""

    def __init__(self):
        self._pending: list[EventRow] = []
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventlog")
        self._task: asyncio.Task | None = None
        self.written = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="event-writer")

    def append(self, rows: list[EventRow]) -> None:
        """Queue rows for writing; never blocks."""
        self._pending.extend(rows)
        self._idle.clear()
        self._wakeup.set()

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
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            rows, self._pending = self._pending, []
            if rows:
                for attempt in range(5):
                    try:
                        await loop.run_in_executor(self._executor, write_rows, rows)
                        self.written += len(rows)
                        break
                    except Exception:  # a locked SQLite file or a dropped connection: retry
                        log.exception("writing %d events failed (attempt %d)", len(rows), attempt + 1)
                        await asyncio.sleep(0.2 * (attempt + 1))
            if not self._pending:
                self._idle.set()

    async def close(self) -> None:
        """Flush, then stop the writer task."""
        await self.flush()
        if self._task:
            self._task.cancel()
            self._task = None
