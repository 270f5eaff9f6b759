"""What reading the biggest allowed match costs.

Builds the longest Liar's Dice match a new table may have (6 probability bots, 20 dice each,
as many games as ``games/liars_dice/game.py``'s ``MATCH_BUDGET`` allows) with the real
:class:`MatchRunner`, stores it as the arena does (events, snapshots every
``ARENA_SNAPSHOT_EVERY`` steps, final view) in a fresh SQLite file, then times through Django's
test client: the first ``/api/matches/<id>/`` page, replay pages (500 frames) at the start,
middle and end, and the final view; and, for comparison, the end page and final state with
the snapshots removed (a replay from the first step, as before).

Run: ``.venv/bin/python benchmarks/big_match_reads.py`` (``--games N`` to override).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(label, fn):
    started = time.perf_counter()
    value = fn()
    print(f"  {label:<44} {1000 * (time.perf_counter() - started):9.1f} ms")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=None)
    args = parser.parse_args()
    os.environ["ARENA_DATA_DIR"] = tempfile.mkdtemp(prefix="arena-bench-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from games.arena import registry
    from games.arena.models import Match, Snapshot
    from games.arena.play import replay, tables
    from games.arena.play.eventlog import write_rows
    from games.arena.play.runner import MatchRunner
    from games.arena.play.seats import BuiltinSeat
    from games.liars_dice.bots import probability_bot
    from games.liars_dice.game import MATCH_BUDGET

    call_command("migrate", verbosity=0)
    games = args.games or MATCH_BUDGET // (6 * 20) ** 2
    config = {"players": 6, "dice": 20, "games": games}
    match = tables.create_table("liars_dice", config, ["builtin:probability"] * 6, None)
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)

    class Collect:
        rows: list = []

        async def append(self, events):
            self.rows.extend(events)

    async def publish(group, message):
        pass

    writer = Collect()
    runner = MatchRunner(match.pk, registry.get("liars_dice"), config, match.seed,
                         [BuiltinSeat("p", probability_bot, seed=i) for i in range(6)], writer, publish,
                         snapshot_every=settings.ARENA["SNAPSHOT_EVERY"])
    started = time.perf_counter()
    asyncio.run(runner.run())
    played = time.perf_counter() - started
    for i in range(0, len(writer.rows), 20000):
        write_rows(writer.rows[i:i + 20000])
    replay.store_end(match.pk, runner.snapshots, runner.state)
    tables.finish(match.pk, runner.state.result())
    steps = replay.total_steps(match.pk)
    size = sum(len(s) for _, _, s in runner.snapshots)
    print(f"match: {config}, {len(writer.rows)} events, {steps} steps, played in {played:.1f} s; "
          f"{len(runner.snapshots)} snapshots every {settings.ARENA['SNAPSHOT_EVERY']} steps, {size / 1024:.0f} KiB")
    client = Client(HTTP_HOST="127.0.0.1")
    url = f"/api/matches/{match.pk}/"
    print("with snapshots and the stored final view:")
    timed("/api/matches/<id>/ (first page, 1000 events)", lambda: client.get(url).json())
    timed("/api/matches/<id>/?limit=5000 (last page)", lambda: client.get(url, {"after": len(writer.rows) - 5000,
                                                                                "limit": 5000}).json())
    for name, start in (("start", 0), ("middle", steps // 2), ("end", max(0, steps - 499))):
        timed(f"replay page of 500 frames at the {name} (step {start})",
              lambda: client.get(f"{url}replay/", {"start": start, "count": 500}).json())
    timed("final view (what match.final sends)", lambda: replay.final_view(match.pk))
    print("without snapshots (a replay from the first step, as before):")
    Snapshot.objects.filter(match=match).delete()
    Match.objects.filter(pk=match.pk).update(final_view=None)
    timed(f"replay page of 500 frames at the end (step {max(0, steps - 499)})",
          lambda: client.get(f"{url}replay/", {"start": max(0, steps - 499), "count": 500}).json())
    timed("final view, computed from the log", lambda: replay.final_view(match.pk))
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
