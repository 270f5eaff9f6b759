"""What an idle arena costs: the server's CPU per second with nothing playing (issue 25).

What it measures
    ``manage.py serve`` as the README starts it (``tests.serverproc.start_arena``: a fresh
    SQLite file, the in-memory channel layer), no bot connected, no page open: its CPU time
    per second (every thread; the loop thread's and the others' apart, from
    ``/proc/<pid>/task/<tid>/schedstat``) over ``--seconds`` (default 20), ``--rounds``
    times (default 3) on the same server, after ``--settle`` seconds (default 5) of start-up.
    This is the arena's own background (the 2 s sweep, the lease loop, the analyses' poll):
    a match played at the reference's pace (about 80 moves a second) pays it per move, so
    each millisecond a second here is about 0.012 ms a move in
    ``liars_dice_reference.py``'s ``ours paced``.  With ``--pin`` (default) the server runs
    on CPU 0.

Run: ``.venv/bin/python benchmarks/idle_arena.py`` (``--help`` for the knobs).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402


def thread_cpu(pid: int) -> dict[int, int]:
    """Each live thread of ``pid``: its time on a CPU so far, ns."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                times[int(tid)] = int(stat.read().split()[0])
        except OSError:  # it ended meanwhile
            pass
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of a round (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on the same server (default 3)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds left to start-up first (default 5)")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="the server on CPU 0 (default: on)")
    args = parser.parse_args()
    arena = start_arena(env={"LOG_LEVEL": "WARNING"})
    pid = arena.proc.pid
    totals = []
    try:
        if args.pin and os.cpu_count() >= 2:
            for tid in thread_cpu(pid):
                os.sched_setaffinity(tid, {0})
        time.sleep(args.settle)
        for round_ in range(args.rounds):
            before = thread_cpu(pid)
            time.sleep(args.seconds)
            after = thread_cpu(pid)
            spent = {tid: (ns - before.get(tid, 0)) / args.seconds / 1e6 for tid, ns in after.items()}
            loop = spent.pop(pid, 0.0)
            totals.append(loop + sum(spent.values()))
            print(f"round {round_ + 1}: {totals[-1]:.2f} ms of CPU a second (the loop thread {loop:.2f}, the others "
                  f"{sum(spent.values()):.2f})  [load average {os.getloadavg()[0]:.2f}]")
    finally:
        arena.stop()
    print(f"idle arena: {statistics.median(totals):.2f} ({min(totals):.2f}-{max(totals):.2f}) ms of CPU a second")
    figure("Idle arena CPU", round(statistics.median(totals), 2), "ms/s")


if __name__ == "__main__":
    main()
