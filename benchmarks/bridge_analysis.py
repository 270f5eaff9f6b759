"""Double-dummy analysis of bridge boards (issue 24, "Benchmarks"): its cost per board and
the event loop's longest stall while it runs (target: never more than 5 ms).

What the arena will do after each board: await ``games.bridge.analysis.analyse`` (DDS through
endplay, in a spawned worker process) from its event loop.  Here a ticker task on the loop
asks to wake every millisecond and records the longest it waited beyond that; each round
measures, in turn:

- **floor**: the ticker alone for as long as the round's analysis took: the stall this
  machine's scheduling gives any loop (the yardstick, measured in the same run);
- **analysis**: ``--boards`` random deals (seeded, each with its board's dealer and
  vulnerability) sent together, as a burst of finished boards would be, with the ticker
  running: per board the worker's CPU seconds (``time.process_time`` in the worker), the
  wall time per board (the burst's wall time over its boards) and the loop's longest stall.

The first analysis (starting the worker, which imports endplay) is timed apart as the
warm-up.  Each figure is printed per round and as the min-max over the rounds, with the
load average.

    .venv/bin/python benchmarks/bridge_analysis.py [--boards 8] [--rounds 3] [--workers 1]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from benchmarks.figures import figure  # noqa: E402
from games.bridge import analysis, rules  # noqa: E402

TARGET_STALL_MS = 5.0


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


class Ticker:
    """A task that asks to wake every millisecond; ``worst`` is the longest it waited beyond
    that, in seconds."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.running = True
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        last = time.perf_counter()
        while self.running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.001)
            last = now

    @classmethod
    async def started(cls) -> "Ticker":
        """A ticker already running (its first wake-up asked for) before the caller goes on."""
        ticker = cls()
        await asyncio.sleep(0.005)
        return ticker

    async def stop(self) -> float:
        self.running = False
        await self.task
        return self.worst


def deals(count: int, seed: int) -> list[tuple[list[list[str]], int, str]]:
    """``count`` random deals as boards seed, seed+1, ... would deal them: (hands, dealer,
    vulnerability)."""
    out = []
    for i in range(count):
        board = seed * count + i + 1
        state = rules.new_state({"board": board}, board)
        out.append(([rules.mask_to_names(h) for h in state.dealt], state.dealer, state.vulnerability))
    return out


async def one_round(boards: int, seed: int) -> dict:
    todo = deals(boards, seed)
    ticker = await Ticker.started()
    start = time.perf_counter()
    results = await asyncio.gather(*(analysis.analyse_timed(*deal) for deal in todo))
    wall = time.perf_counter() - start
    stall = await ticker.stop()
    floor_ticker = await Ticker.started()
    await asyncio.sleep(wall)
    floor = await floor_ticker.stop()
    return {"cpu": sum(cpu for _, cpu in results) / boards, "wall": wall / boards, "stall": stall, "floor": floor}


async def main_async(args) -> None:
    analysis.WORKERS = args.workers
    print(f"python {sys.version.split()[0]}, {args.workers} worker(s), {args.boards} boards a round, {load()}")
    ticker = await Ticker.started()
    start = time.perf_counter()
    (hands, dealer, vul), = deals(1, 10_000)
    await analysis.analyse(hands, dealer, vul)
    warm = time.perf_counter() - start
    warm_stall = await ticker.stop()
    print(f"warm-up (start the worker, import endplay, one board): {warm:.2f} s wall, "
          f"the loop's longest stall {warm_stall * 1000:.1f} ms")
    rounds = []
    for r in range(args.rounds):
        got = await one_round(args.boards, r)
        rounds.append(got)
        print(f"round {r + 1}: {got['cpu'] * 1000:6.0f} ms CPU/board {got['wall'] * 1000:6.0f} ms wall/board   "
              f"loop's longest stall {got['stall'] * 1000:5.1f} ms (floor {got['floor'] * 1000:5.1f} ms)   {load()}")
    analysis.shutdown()

    def span(key: str) -> tuple[float, float]:
        values = [r[key] * 1000 for r in rounds]
        return min(values), max(values)

    print(f"min-max over {args.rounds} rounds ({load()})")
    for key, label in (("cpu", "CPU per board (worker)"), ("wall", "wall per board"),
                       ("stall", "loop's longest stall"), ("floor", "floor: the loop's longest stall, idle")):
        low, high = span(key)
        print(f"  {label:<40} {low:8.1f} - {high:8.1f} ms")
    figure("Bridge double-dummy analysis, worker CPU per board", round(span("cpu")[1]), "ms")
    figure("Bridge double-dummy analysis, wall per board", round(span("wall")[1]), "ms")
    figure("Bridge double-dummy analysis, event loop's longest stall", round(span("stall")[1], 1), "ms",
           target=TARGET_STALL_MS)
    figure("Bridge double-dummy analysis, idle loop's longest stall (floor)", round(span("floor")[1], 1), "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=8, help="deals analysed together in each round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=analysis.WORKERS, help="worker processes")
    args = parser.parse_args()
    if not 1 <= args.boards <= analysis.MAX_QUEUED:
        parser.error(f"--boards is 1 to {analysis.MAX_QUEUED} (the analysis queue's bound)")
    asyncio.run(main_async(args))


if __name__ == "__main__":  # the workers are spawned: they import this file without running it
    main()
