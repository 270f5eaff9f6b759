"""Server CPU per move of bot matches: the scaled deployment (PostgreSQL + Redis, ``--role
arena`` and ``--role web`` processes) against the embedded default (one process, SQLite, the
in-memory channel layer), alternating in one run.

What it measures
    Per side and round, the server's CPU seconds per step of one Liar's Dice match of two bots
    (2 players x 6 dice, ``--games`` games, the automatic table) that nobody watches, from just
    before the bots connect to the match's end (the arena closes the bots' connections):

    * ``ours``: the sum of the server processes' CPU (embedded: the one process; scaled: the
      arena and the web process);
    * ``with database``: plus the CPU of the PostgreSQL backends serving the scaled side's
      database (the embedded side's SQLite work is in its own process already).  Redis's own
      CPU is not counted: the Redis server is shared with whatever else runs.

    The figure is the ratio scaled / embedded per round (the sides alternate, embedded first
    in odd rounds, scaled first in even ones), printed with its min-max over the rounds and
    the load average.

How
    Servers are ``manage.py serve`` (``tests.serverproc.start_arena``), fresh for every match:
    the embedded one on a fresh SQLite file; the scaled one on a fresh PostgreSQL database
    (``--pg``, trust auth; dropped afterwards) and a private Redis key prefix (``--redis``).
    The bots are ``tests.ld_bot.LDBot`` threads in this process answering at once with
    ``simple_move``.  The server processes are pinned to CPU 0 and this process to CPU 1
    (``--pin no``: neither).  A second after start (so start-up work is not counted) the
    CPU is read from ``/proc/<pid>/stat``.

Target: scaled / embedded <= 1.5 (issue 25).
Run: ``.venv/bin/python benchmarks/scaled_moves.py`` (``--rounds``, ``--games``).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and all its threads (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin(pid: int, cpu: int) -> None:
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=False, capture_output=True)


class Side:
    """One deployment's servers for one match: ``start()``, ``pids()``, ``stop()``."""

    def __init__(self, name: str, games: int, args):
        self.name, self.games, self.args = name, games, args
        self.servers = []
        self.env = {"LIARS_DICE_AUTO_GAMES": str(games), "LIARS_DICE_AUTO_PLAYERS": "2",
                    "LIARS_DICE_AUTO_DICE": "6", "LOG_LEVEL": "WARNING"}
        self.database = None

    def start(self):
        from tests.serverproc import start_arena

        if self.name == "scaled":
            import psycopg

            self.database = f"arena_bench_{uuid.uuid4().hex[:10]}"
            with psycopg.connect(self.args.pg + "/postgres", autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{self.database}"')
            self.env.update({"DATABASE_URL": f"{self.args.pg.replace('postgresql://', 'postgres://')}/{self.database}",
                             "REDIS_URL": self.args.redis, "ARENA_CHANNEL_PREFIX": f"b{uuid.uuid4().hex[:8]}"})
            self.servers = [start_arena(role="arena", env=self.env), start_arena(role="web", env=self.env)]
        else:
            self.servers = [start_arena(env=self.env)]
        if self.args.pin == "yes":
            for server in self.servers:
                pin(server.proc.pid, 0)
        return self.servers[0].liars_dice_port

    def database_pids(self) -> list[int]:
        """PostgreSQL backends serving this side's database (none for SQLite)."""
        if self.database is None:
            return []
        import psycopg

        with psycopg.connect(self.args.pg + "/postgres", autocommit=True) as conn:
            return [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                                               [self.database]).fetchall()]

    def stop(self):
        for server in self.servers:
            server.stop()
            shutil.rmtree(server.data_dir, ignore_errors=True)
        if self.database:
            import psycopg

            with psycopg.connect(self.args.pg + "/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


def one_match(name: str, args) -> tuple[float, float, int, float]:
    """Play one match on a fresh ``name`` deployment; returns (our CPU s, database CPU s,
    steps, wall s)."""
    from tests.ld_bot import LDBot, simple_move

    side = Side(name, args.games, args)
    port = side.start()
    bots = []
    try:
        time.sleep(1.0)
        pids = [s.proc.pid for s in side.servers]
        db0 = {pid: cpu_of(pid) for pid in side.database_pids()}
        cpu0 = sum(cpu_of(pid) for pid in pids)
        spies = [subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "--format", "raw",
                                   "--nonblocking", "-r", "200", "-p", str(pid), "-o",
                                   f"{args.py_spy}-{name}-{k}.txt"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
                 for k, pid in enumerate(pids)] if args.py_spy else []
        t0 = time.monotonic()
        bots = [LDBot(port, f"{name}{k}", decide=lambda msg, rng=random.Random(k): simple_move(msg, rng))
                for k in range(2)]
        for bot in bots:
            if not bot.closed.wait(args.timeout):
                raise RuntimeError(f"{name}: the match did not end in {args.timeout} s")
        wall = time.monotonic() - t0
        cpu = sum(cpu_of(pid) for pid in pids) - cpu0
        db = sum(cpu_of(pid) - db0.get(pid, 0.0) for pid in side.database_pids())
        steps = len(bots[0].requests())
        for spy in spies:
            spy.send_signal(2)
            spy.wait(30)
    finally:
        for bot in bots:
            bot.close()
        side.stop()
    return cpu, db, steps, wall


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=100, help="games per match")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432", help="PostgreSQL server (trust auth)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--pin", choices=("yes", "no"), default="yes")
    parser.add_argument("--py-spy", metavar="PREFIX", help="sample each server process with py-spy while its match "
                        "plays (collapsed stacks to PREFIX-<side>-<n>.txt; py-spy in the venv)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    if args.pin == "yes":
        os.sched_setaffinity(0, {1})
    loads = [os.getloadavg()[0]]
    per_step: dict[str, list[float]] = {"embedded": [], "scaled": []}
    with_db: list[float] = []
    ratios, ratios_db = [], []
    print(f"Scaled deployment vs embedded: Liar's Dice, 2 bots x 6 dice, {args.games} games a match, "
          f"{args.rounds} rounds, pinned: {args.pin}")
    for r in range(args.rounds):
        order = ("embedded", "scaled") if r % 2 == 0 else ("scaled", "embedded")
        got = {}
        for name in order:
            cpu, db, steps, wall = one_match(name, args)
            got[name] = (cpu, db, steps)
            loads.append(os.getloadavg()[0])
            print(f"  round {r + 1} {name:8s}: {steps} steps in {wall:.1f} s ({steps / wall:.0f}/s), server CPU "
                  f"{cpu / steps * 1e6:.0f} us/step" + (f", PostgreSQL backends {db / steps * 1e6:.0f} us/step"
                                                         if name == "scaled" else "")
                  + f"  (load {loads[-1]:.2f})", flush=True)
        e = got["embedded"][0] / got["embedded"][2]
        s = got["scaled"][0] / got["scaled"][2]
        sdb = (got["scaled"][0] + got["scaled"][1]) / got["scaled"][2]
        per_step["embedded"].append(e * 1e6)
        per_step["scaled"].append(s * 1e6)
        with_db.append(sdb * 1e6)
        ratios.append(s / e)
        ratios_db.append(sdb / e)
    print(f"  server CPU per step: embedded {spread(per_step['embedded'])} us, scaled {spread(per_step['scaled'])} us "
          f"(+ PostgreSQL backends: {spread(with_db)} us)")
    print(f"  scaled / embedded: {min(ratios):.2f}-{max(ratios):.2f}x our processes, "
          f"{min(ratios_db):.2f}-{max(ratios_db):.2f}x with the PostgreSQL backends; "
          f"load {min(loads):.2f}-{max(loads):.2f} ({os.cpu_count()} cores); target <= 1.5x")
    figure("scaled deployment / embedded, server CPU per move (worst round)", round(max(ratios), 2), "x",
           target=1.5)
    figure("scaled deployment with PostgreSQL backends / embedded, CPU per move (worst round)",
           round(max(ratios_db), 2), "x")


if __name__ == "__main__":
    main()
