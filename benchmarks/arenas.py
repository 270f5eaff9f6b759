"""Several arenas on one database: one arena process against two, on this two-core machine,
with PostgreSQL and Redis on it too (issue 26).

What it measures
    Per side (``one``: one arena process; ``two``: two), alternating, ``--rounds`` times, each
    on a fresh PostgreSQL database (made from a migrated template) and Redis key prefix:

    * **built-in tables**: ``--tables`` tables of two built-in Liar's Dice bots (2 players,
      ``--dice`` dice, ``--games`` games), written to the database in one transaction once
      the arenas run, so that they take them only as they take any unowned work: claimed with
      ``SELECT ... FOR UPDATE SKIP LOCKED`` by their sweeps (every 2 s, and again as soon as a
      match ends while tables wait), at most ``ARENA_CLAIM_RUNNING`` (50) running at once each.  Matches per second from the
      first match's start to the last one's end (the rows' ``started_at`` and ``finished_at``);
    * **TCP bots**: ``--pairs`` pairs of Liar's Dice bots (``tests.ld_bot.LDBot`` threads in this
      process, answering at once), each pair connected to one arena (spread evenly), each
      pair one automatic table of ``--bot-games`` games.  Matches per second from the first
      bot's connect to the last bot's close, and per arena the p99 of the server's time per
      move as the bots see it: from a bot's answer to the next request it receives (both
      requests of a step go out together, so this is the server's step plus the loopback);
    * the arenas' CPU seconds (``/proc/<pid>/stat``, from their start-up's end) and the
      PostgreSQL backends' CPU over the same span (the shell that writes the built-in tables
      has its own backend, counted while it lives: the tables' writing is in that figure).

    Then, in this process against a database of the same schema: the **claim's cost per
    match** (``tables.claim_tables_to_start`` on ``--claim-batch`` full tables, per table
    claimed, wall time, 5 times) and the **lease renewal** (``tables.renew_leases`` with
    ``--owned`` running matches owned by one arena, wall time per renewal, 20 times), with
    the renewals per second a deployment makes (each arena renews every third of
    ``ARENA_LEASE``).

    Target: two arenas >= 1.5x one arena's matches per second.

How
    Servers are ``manage.py serve --role arena`` (``tests.serverproc.start_arena``), not
    pinned (two arenas need both cores).  The load average is printed with every figure.

Run: ``.venv/bin/python benchmarks/arenas.py`` (``--rounds``, ``--tables``, ``--pairs``).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from benchmarks.scaled_moves import cpu_of  # noqa: E402

PG = "postgresql://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379/0"


def load() -> float:
    return os.getloadavg()[0]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else float("nan")


def spread(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def pg(database: str = "postgres"):
    import psycopg

    return psycopg.connect(f"{PG}/{database}", autocommit=True)


class Template:
    """A migrated database that each side's fresh database is copied from."""

    def __init__(self):
        self.name = f"arena_bench_tmpl_{uuid.uuid4().hex[:8]}"
        with pg() as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{self.name}"}
        subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)

    def copy(self) -> str:
        name = f"arena_bench_{uuid.uuid4().hex[:10]}"
        with pg() as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.name}"')
        return name

    def drop(self, name: str | None = None) -> None:
        with pg() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name or self.name}" WITH (FORCE)')


def shell(env: dict, script: str) -> str:
    """Run ``script`` with ``manage.py shell -c`` on ``env``'s database; what it printed."""
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", script], cwd=ROOT,
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return out.stdout


class Side:
    """``arenas`` arena processes on one fresh database: ``start()``, ``stop()``."""

    def __init__(self, arenas: int, template: Template, args):
        self.count, self.template, self.args = arenas, template, args
        self.database = template.copy()
        self.env = {"DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{self.database}", "REDIS_URL": REDIS,
                    "ARENA_CHANNEL_PREFIX": f"b{uuid.uuid4().hex[:8]}", "LOG_LEVEL": "WARNING",
                    "LIARS_DICE_AUTO_GAMES": str(args.bot_games), "LIARS_DICE_AUTO_PLAYERS": "2",
                    "LIARS_DICE_AUTO_DICE": str(args.dice)}
        self.servers = []

    def start(self) -> tuple[list[int], list[float], float]:
        """Start the arenas; ``(their pids, their CPU seconds so far, the database's)``, the
        figures' starting points (start-up's CPU is not counted)."""
        from tests.serverproc import start_arena

        self.servers = [start_arena(role="arena", env={**self.env, "ARENA_NAME": f"arena{k + 1}"})
                        for k in range(self.count)]
        pids = [s.proc.pid for s in self.servers]
        return pids, [cpu_of(pid) for pid in pids], self.database_cpu()

    def database_cpu(self) -> float:
        with pg() as conn:
            pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                                               [self.database]).fetchall()]
        return sum(cpu_of(pid) for pid in pids)

    def rows(self, query: str, params=()) -> list[tuple]:
        with pg(self.database) as conn:
            return conn.execute(query, params).fetchall()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
            shutil.rmtree(server.data_dir, ignore_errors=True)
        self.template.drop(self.database)


def builtin_round(arenas: int, template: Template, args) -> dict:
    """Matches per second of ``--tables`` built-in tables taken by ``arenas`` arenas."""
    side = Side(arenas, template, args)
    try:
        pids, cpu0, db0 = side.start()
        t0 = time.monotonic()
        # Written in one transaction once every arena runs: they appear at once, to be claimed.
        shell(side.env, "from django.db import transaction\nfrom games.arena.play import tables\n"
                        "with transaction.atomic():\n"
                        f"    for _ in range({args.tables}):\n"
                        f"        tables.create_table('liars_dice', {{'players': 2, 'dice': {args.dice}, "
                        f"'games': {args.games}}}, ['builtin:random', 'builtin:probability'], None)\n")
        deadline = time.monotonic() + args.timeout
        while side.rows("SELECT count(*) FROM arena_match WHERE status IN ('open', 'running')")[0][0]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{arenas} arena(s): the built-in tables did not finish in {args.timeout} s")
            time.sleep(0.2)
        cpu = [cpu_of(pid) - c for pid, c in zip(pids, cpu0)]
        (first, last, finished, aborted), = side.rows(
            "SELECT min(started_at), max(finished_at), count(*) FILTER (WHERE status = 'finished'), "
            "count(*) FILTER (WHERE status = 'aborted') FROM arena_match")
        per_arena = dict(side.rows("SELECT owner, count(*) FROM arena_match GROUP BY owner"))
        seconds = (last - first).total_seconds()
        return {"matches": finished, "aborted": aborted, "seconds": seconds, "rate": finished / seconds,
                "cpu": cpu, "db_cpu": side.database_cpu() - db0, "per_arena": per_arena, "load": load(),
                "wall": time.monotonic() - t0}
    finally:
        side.stop()


def tcp_round(arenas: int, template: Template, args) -> dict:
    """Matches per second of ``--pairs`` pairs of TCP bots spread over ``arenas`` arenas, and
    each arena's p99 from a bot's answer to its next request."""
    from tests.ld_bot import LDBot, simple_move

    side = Side(arenas, template, args)
    bots: list[tuple[int, LDBot]] = []
    answered: dict[int, list[float]] = {}
    try:
        pids, cpu0, db0 = side.start()
        t0 = time.monotonic()
        for pair in range(args.pairs):
            arena = pair % arenas
            for k in range(2):
                sent: list[float] = []
                rng = random.Random(pair * 2 + k)

                def decide(msg, rng=rng, sent=sent):
                    move = simple_move(msg, rng)
                    sent.append(time.monotonic())
                    return move
                bot = LDBot(side.servers[arena].liars_dice_port, f"p{pair}-{k}", decide=decide)
                answered[id(bot)] = sent
                bots.append((arena, bot))
        for _, bot in bots:
            if not bot.closed.wait(args.timeout):
                raise RuntimeError(f"{arenas} arena(s): a bot match did not end in {args.timeout} s")
        wall = time.monotonic() - t0
        cpu = [cpu_of(pid) - c for pid, c in zip(pids, cpu0)]
        waits: dict[int, list[float]] = {k: [] for k in range(arenas)}
        for arena, bot in bots:
            sent = answered[id(bot)]
            arrivals = [at for at, msg in zip(bot.stamps, bot.received) if msg.get("subject") == "move_request"]
            # the request after each answer: answers and requests alternate for each bot
            waits[arena] += [(b - a) * 1e6 for a, b in zip(sent, arrivals[1:]) if b >= a]
        finished = side.rows("SELECT count(*) FROM arena_match WHERE status = 'finished'")[0][0]
        return {"matches": finished, "seconds": wall, "rate": finished / wall, "cpu": cpu,
                "db_cpu": side.database_cpu() - db0, "p99_us": [pct(waits[k], 99) for k in range(arenas)],
                "moves": [len(waits[k]) for k in range(arenas)], "load": load()}
    finally:
        for _, bot in bots:
            bot.close()
        side.stop()


def claim_and_renew(template: Template, args) -> dict:
    """The claim's wall time per table and one lease renewal's, in this process."""
    database = template.copy()
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{database}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    from django.db import connection

    from games.arena.models import Match
    from games.arena.play import tables

    try:
        claims = []
        for _ in range(5):
            for _ in range(args.claim_batch):
                tables.create_table("liars_dice", {"players": 2}, ["builtin:random", "builtin:random"], None)
            t = time.perf_counter()
            claimed = tables.claim_tables_to_start("bench", 15.0, limit=args.claim_batch)
            claims.append((time.perf_counter() - t) / max(1, len(claimed)) * 1e3)
            Match.objects.filter(pk__in=claimed).update(status="finished")
        for _ in range(args.owned):
            tables.create_table("liars_dice", {"players": 2}, ["builtin:random", "builtin:random"], None)
        Match.objects.filter(status="open").update(status="running", owner="bench", attempt=1)
        renewals = []
        for _ in range(20):
            t = time.perf_counter()
            tables.renew_leases("bench", 15.0)
            renewals.append((time.perf_counter() - t) * 1e3)
        return {"claim_ms": claims, "renew_ms": renewals}
    finally:
        connection.close()
        template.drop(database)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tables", type=int, default=400, help="built-in tables a round (default 400)")
    parser.add_argument("--dice", type=int, default=3)
    parser.add_argument("--games", type=int, default=5, help="games of each built-in table")
    parser.add_argument("--pairs", type=int, default=16, help="pairs of TCP bots a round (default 16)")
    parser.add_argument("--bot-games", type=int, default=30, help="games of each bots' automatic table")
    parser.add_argument("--claim-batch", type=int, default=50)
    parser.add_argument("--owned", type=int, default=200, help="running matches one arena renews at once")
    parser.add_argument("--lease", type=float, default=15.0, help="ARENA_LEASE the deployment uses")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()

    template = Template()
    try:
        print(f"one arena against two, PostgreSQL + Redis, 2 cores; load {load():.2f}")
        results = {"builtin": {1: [], 2: []}, "tcp": {1: [], 2: []}}
        for round_ in range(args.rounds):
            order = (1, 2) if round_ % 2 == 0 else (2, 1)
            for kind, run in (("builtin", builtin_round), ("tcp", tcp_round)):
                for arenas in order:
                    r = run(arenas, template, args)
                    results[kind][arenas].append(r)
                    extra = (f", per arena {r['per_arena']}" if kind == "builtin" else
                             f", answer -> next request p99 per arena {[round(p) for p in r['p99_us']]} us "
                             f"over {r['moves']} moves")
                    print(f"round {round_ + 1} {kind:7s} {arenas} arena(s): {r['matches']} matches in "
                          f"{r['seconds']:.2f} s = {r['rate']:.1f}/s; arenas' CPU {[round(c, 2) for c in r['cpu']]} s, "
                          f"PostgreSQL {r['db_cpu']:.2f} s{extra}; load {r['load']:.2f}", flush=True)
        for kind in ("builtin", "tcp"):
            ratios = [b["rate"] / a["rate"] for a, b in zip(results[kind][1], results[kind][2])]
            one = [r["rate"] for r in results[kind][1]]
            two = [r["rate"] for r in results[kind][2]]
            print(f"{kind}: one arena {statistics.median(one):.1f} matches/s ({spread(one, 1)}), two "
                  f"{statistics.median(two):.1f} ({spread(two, 1)}); two / one {statistics.median(ratios):.2f} "
                  f"({spread(ratios)}); target >= 1.5")
            figure(f"arenas: two / one, matches per second ({kind} tables)", statistics.median(ratios), "x",
                   target=1.5, better="higher")
        p99 = [p for r in results["tcp"][2] for p in r["p99_us"]]
        print(f"TCP bots, two arenas: answer -> next request p99 per arena {spread(p99, 0)} us")
        figure("arenas: answer -> next request p99, two arenas (worst)", max(p99), "us", better="lower")
        cr = claim_and_renew(template, args)
        claim, renew = cr["claim_ms"], cr["renew_ms"]
        print(f"claim (SKIP LOCKED, batches of {args.claim_batch}): {statistics.median(claim):.3f} ms a table "
              f"({spread(claim, 3)}); lease renewal of {args.owned} matches: {statistics.median(renew):.2f} ms "
              f"({spread(renew)}), {3 / args.lease:.2f} renewals/s per arena at ARENA_LEASE={args.lease:g}; "
              f"load {load():.2f}")
        figure("arenas: claim per table", statistics.median(claim), "ms", better="lower")
        figure(f"arenas: lease renewal ({args.owned} matches)", statistics.median(renew), "ms", better="lower")
    finally:
        template.drop()


if __name__ == "__main__":
    main()
