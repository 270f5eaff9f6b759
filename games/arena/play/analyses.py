"""Analyses of finished matches, computed by the arena after the match and kept with it (a
bridge board's double-dummy table and par: issue 24).

A game that analyses (``GameSpec.analysis_label``) says what to analyse in a finished match,
one subject per part (``GameSpec.analysis_subjects``, bridge: per board), and how
(``GameSpec.analyse``, awaited on the event loop; the game runs the work elsewhere, bridge in
a pool of worker processes).  The core owns the rest:

- **The queue is the database.**  When a match is stored as finished (``tables.finish``, in
  the same transaction; an import in ``exchange.store_imported``) each part gets an
  :class:`~games.arena.models.Analysis` row with its subject and no result.  Nothing waits in
  memory, so a restart or a crash loses no work: the next arena process takes the pending
  rows, oldest first.  A match finished in a web process (an import) is seen within
  :data:`POLL_S`.
- **One worker per arena process** (:class:`Analyst`, a task of ``Arena``): one part in hand
  at a time, so the game's own pool never holds more than one of ours (bridge's bound,
  ``analysis.MAX_QUEUED``, is for other callers too).  When the game says it is busy
  (:class:`~games.arena.registry.AnalysisBusy`), the worker waits :data:`BUSY_WAIT_S` and asks
  again, the try not counted; any other failure counts a try and after :data:`MAX_TRIES` the
  part is given up (the page says so).  The backlog grows only as fast as matches finish and
  imports are admitted (``ARENA_IMPORTS_PER_MINUTE``); a bridge board costs about 0.4 s of a
  worker's CPU.
- **The event loop** only reads and writes rows (through Django's sync-to-async threads) and
  awaits the game: tests/test_bridge_exchange.py measures its longest stall.

The match page shows each part's result, "pending" or "failed" (``views.match_page``,
``GameSpec.analysis_template``).
"""
from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.db.models import F

from games.arena import registry
from games.arena.models import Analysis

log = logging.getLogger("arena.analyses")

#: Failed tries of one part before it is given up.
MAX_TRIES = 3
#: Pending parts read from the database at once.
BATCH = 16
#: Seconds between looks for pending parts when there are none (a web process's import is
#: seen this late at most; a match finished here wakes the worker at once).
POLL_S = 5.0
#: Seconds the worker waits when the game is busy before asking again.
BUSY_WAIT_S = 1.0


def pending_rows(match_id: int, subjects: list) -> list[Analysis]:
    """The unsaved rows of a finished match's parts, one per subject (for ``bulk_create`` in
    the transaction that stores the match's end)."""
    return [Analysis(match_id=match_id, part=i, subject=subject) for i, subject in enumerate(subjects)]


def pending(limit: int = BATCH) -> list[tuple[int, str, object]]:
    """``(row id, game, subject)`` of up to ``limit`` parts to analyse, oldest first."""
    rows = (Analysis.objects.filter(result__isnull=True, tries__lt=MAX_TRIES).order_by("id")
            .values_list("id", "match__game", "subject")[:limit])
    return list(rows)


def store(row_id: int, result: dict) -> None:
    """Keep a part's result."""
    Analysis.objects.filter(pk=row_id).update(result=result, error="")


def failed(row_id: int, error: str, give_up: bool = False) -> None:
    """Count a failed try (all of them when ``give_up``) with its cause."""
    tries = MAX_TRIES if give_up else F("tries") + 1
    Analysis.objects.filter(pk=row_id).update(tries=tries, error=error[:200])


def of_match(match_id: int) -> list[dict]:
    """A match's parts for its page: ``{"part", "subject", "result", "failed"}`` in part
    order; ``result`` None while pending or once given up (``failed`` True)."""
    return [{"part": part, "subject": subject, "result": result, "failed": result is None and tries >= MAX_TRIES}
            for part, subject, result, tries in Analysis.objects.filter(match_id=match_id).order_by("part")
            .values_list("part", "subject", "result", "tries")]


class Analyst:
    """The arena process's analysis worker (module docstring): :meth:`start` it on the
    running loop, :meth:`wake` it when a match finished, :meth:`stop` it at shutdown."""

    def __init__(self):
        self._wake = asyncio.Event()
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._loop(), name="arena-analyses")

    def wake(self) -> None:
        """Look for pending parts now (a match just finished)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the worker; a part in hand stays pending for the next process."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            try:
                rows = await sync_to_async(pending)()
                for row in rows:
                    if not await self.analyse(*row):
                        await asyncio.sleep(BUSY_WAIT_S)
                        break
            except asyncio.CancelledError:
                raise
            except Exception:  # the database, most likely: look again later
                log.exception("analyses: could not read or store parts")
                rows = []
            if not rows:
                try:
                    await asyncio.wait_for(self._wake.wait(), POLL_S)
                except asyncio.TimeoutError:
                    pass

    async def analyse(self, row_id: int, game: str, subject) -> bool:
        """Analyse one part and keep its result or its failure; False when the game was busy
        (the part stays pending, no try counted)."""
        spec = registry.GAMES.get(game)
        if spec is None or not spec.analysis_label:
            await sync_to_async(failed)(row_id, f"{game} has no analysis", give_up=True)
            return True
        try:
            result = await spec.analyse(subject)
        except registry.AnalysisBusy:
            return False
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("analysis %d (%s) failed: %r", row_id, game, exc)
            await sync_to_async(failed)(row_id, f"{exc.__class__.__name__}: {exc}")
            return True
        await sync_to_async(store)(row_id, result)
        return True
