"""Liar's Dice: the server's memory per running match, and missed deadlines, for 1, 100 and
1,000 matches of TCP bots at once in one arena process.

What it measures
    For each number of matches (``--matches``, default ``1,100,1000``), on a fresh server:

    * the server's resident memory (``VmRSS``) before any bot connects, and while that many
      matches run at once (mean of the samples over ``--hold`` seconds, and the largest), and
      the difference per match;
    * missed deadlines: answers the server had to supply because none came within
      ``LIARS_DICE_BOT_DEADLINE`` (3 s; a forced move "no reply within 3 s"), from the event
      log, and every other forced move;
    * the pace: moves per second over the hold, the server's CPU (share of one core), the
      1-minute load average;
    * the lag: the moves per second the bots' think times allow (every match waits for the
      slower of its two bots: a move takes ``think * (0.5 + 2/3)`` on average, see
      :func:`allowed_moves_per_s`) against those played, and the time per move that implies
      was added (``n / played - n / allowed``; by the server, the loopback and the bots' own
      single process): a lag well under the deadline misses none, yet is a server falling
      behind.

How
    The server is ``manage.py serve`` as the README starts it (``tests.serverproc.start_arena``:
    web and arena in one process, SQLite, the in-memory channel layer), its automatic table
    set to 2 players, 6 dice and 1,000 games, so no match ends while it is measured.  The bots
    run in one child process (this script with ``--bots``, one epoll loop): two connections
    per match, connected ``--pairs-per-s`` pairs a second (bots are seated one at a time,
    at most ``ARENA_MAX_PENDING_SEATINGS`` waiting), each answering every ``move_request``
    after a think time drawn uniformly from 0.5x to 1.5x ``--think`` (default 0.5 s) with the
    policy of the reference's ``bots/basic.js`` (raise the count by one, or challenge 20% of the
    time).  The hold starts once the event log shows every match playing.

Target: 1,000 matches at once with no missed deadline.  Run:
``.venv/bin/python benchmarks/liars_dice_memory.py`` (``--help`` for the knobs; about 3 minutes).
"""
from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import selectors
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# The bots (child process)
# --------------------------------------------------------------------------------------------
class ThinkingBot:
    """One connection: answers each ``move_request`` after a think time (seed wire format)."""

    __slots__ = ("sock", "buf")

    def __init__(self, port: int, name: str):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(json.dumps({"name": name}).encode() + b"\n")
        self.sock.setblocking(False)
        self.buf = b""

    def requests(self) -> list[dict] | None:
        """The move_requests that came in (None: the server closed the connection)."""
        data = self.sock.recv(1 << 16)
        if not data:
            return None
        lines = (self.buf + data).split(b"\n")
        self.buf = lines.pop()
        return [msg for msg in map(json.loads, lines) if msg["subject"] == "move_request"]


def basic_move(msg: dict, rng: random.Random):
    """bots/basic.js's policy: challenge a bid 20% of the time, else raise on turn, else pass."""
    last = msg["last_bid"]
    if last[0] > 0 and rng.random() < 0.2:
        return "challenge"
    if msg["other_hands"][0][0] == 0:
        return [max(last[0], 1), last[1] + 1]
    return "pass"


def bots_main(port: int, matches: int, pairs_per_s: float, think: float) -> None:
    """Connect ``matches`` pairs at ``pairs_per_s``, answer until the server closes them all;
    prints ``{"answers", "closed"}`` on exit (SIGTERM ends it too)."""
    import signal

    rng = random.Random(1)
    sel = selectors.DefaultSelector()
    due: list = []  # (time, seq, bot, line) answers waiting out their think time
    answers = closed = seq = 0
    running = True

    def stop(*_):
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    started, connected = time.monotonic(), 0
    while running:
        now = time.monotonic()
        while connected < matches and connected < (now - started) * pairs_per_s + 1:
            for k in range(2):
                bot = ThinkingBot(port, f"mem{connected}-{k}")
                sel.register(bot.sock, selectors.EVENT_READ, bot)
            connected += 1
        timeout = max(0.0, min(due[0][0] - now, 0.05)) if due else 0.05
        for key, _ in sel.select(timeout):
            bot = key.data
            try:
                msgs = bot.requests()
            except ConnectionError:
                msgs = None
            if msgs is None:
                sel.unregister(bot.sock)
                bot.sock.close()
                closed += 1
                continue
            for msg in msgs:
                line = json.dumps({"message_id": msg["message_id"], "move": basic_move(msg, rng)}).encode() + b"\n"
                seq += 1
                heapq.heappush(due, (time.monotonic() + think * rng.uniform(0.5, 1.5), seq, bot, line))
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, bot, line = heapq.heappop(due)
            try:
                bot.sock.send(line)  # a few dozen bytes: the socket's buffer has room
                answers += 1
            except OSError:
                pass
        if connected == matches and closed == 2 * matches:
            break
    print(json.dumps({"answers": answers, "closed": closed}), flush=True)


# --------------------------------------------------------------------------------------------
# The measurement (this process)
# --------------------------------------------------------------------------------------------
def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise KeyError("VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def playing(db: sqlite3.Connection) -> int:
    """Matches running that have logged a step."""
    return db.execute("SELECT COUNT(*) FROM arena_match m WHERE m.status = 'running' AND EXISTS "
                      "(SELECT 1 FROM arena_event e WHERE e.match_id = m.id)").fetchone()[0]


def allowed_moves_per_s(n: int, think: float) -> float:
    """Moves per second ``n`` matches of two bots play when the server adds nothing: each move
    waits for both answers, each drawn uniformly from ``0.5 * think`` to ``1.5 * think``, and
    the larger of two such draws is ``0.5 * think + think * 2/3`` on average."""
    return n / (think * (0.5 + 2 / 3))


def measure(n: int, args) -> dict:
    env = {"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6", "LIARS_DICE_AUTO_GAMES": "1000"}
    server = start_arena(env=env)
    bots = None
    try:
        pid = server.proc.pid
        time.sleep(2)
        idle = rss_mb(pid)
        db = sqlite3.connect(f"file:{server.data_dir / 'arena.sqlite3'}?mode=ro", uri=True, timeout=30)
        bots = subprocess.Popen([sys.executable, __file__, "--bots", "--port", str(server.liars_dice_port),
                                 "--n", str(n), "--pairs-per-s", str(args.pairs_per_s), "--think", str(args.think)],
                                stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + n / args.pairs_per_s + 60
        while playing(db) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {playing(db)} of {n} matches playing after {n / args.pairs_per_s + 60:.0f} s")
            time.sleep(0.5)
        start_seq = db.execute("SELECT COALESCE(MAX(id), 0) FROM arena_event").fetchone()[0]
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        samples = []
        while time.monotonic() - t0 < args.hold:
            time.sleep(1.0)
            samples.append(rss_mb(pid))
        cpu, seconds = cpu_seconds(pid) - cpu0, time.monotonic() - t0
        still = playing(db)
        rows = db.execute("SELECT COUNT(*), SUM(forced), SUM(forced AND reason LIKE 'no reply within%') "
                          "FROM arena_event WHERE id > ?", (start_seq,)).fetchone()
        load = os.getloadavg()[0]
    finally:
        if bots is not None:
            bots.terminate()
            bots.wait(30)
        server.stop()
    events, forced, late = rows[0], rows[1] or 0, rows[2] or 0
    mean = sum(samples) / len(samples)
    return {"n": n, "idle": idle, "mean": mean, "peak": max(samples), "per_match": (mean - idle) / n,
            "moves_per_s": events / 2 / seconds, "allowed": allowed_moves_per_s(n, args.think), "cpu": cpu / seconds, "late": late, "forced": forced,
            "events": events, "playing": still, "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", default="1,100,1000", help="numbers of matches at once, comma-separated")
    parser.add_argument("--hold", type=float, default=30.0, help="seconds measured once every match plays")
    parser.add_argument("--think", type=float, default=0.5, help="bots' mean think time per answer (s)")
    parser.add_argument("--pairs-per-s", type=float, default=50.0, help="pairs of bots connected a second")
    parser.add_argument("--quick", action="store_true", help="1 and 100 matches, held 10 s")
    parser.add_argument("--bots", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bots:
        bots_main(args.port, args.n, args.pairs_per_s, args.think)
        return
    if args.quick:
        args.matches, args.hold = "1,100", 10.0
    print(f"Liar's Dice matches of TCP bots at once in one server (manage.py serve): 2 players, 6 dice; "
          f"bots think {args.think:g} s on average; {os.cpu_count()} cores")
    for n in (int(x) for x in args.matches.split(",")):
        r = measure(n, args)
        lag_ms = (n / r["moves_per_s"] - n / r["allowed"]) * 1000 if r["moves_per_s"] else float("inf")
        print(f"  {r['n']:5d} matches: RSS {r['idle']:.0f} MB idle, {r['mean']:.0f} MB playing (peak {r['peak']:.0f}), "
              f"{r['per_match'] * 1024:.0f} KiB per match; {r['moves_per_s']:.0f} moves/s of the {r['allowed']:.0f} "
              f"the think times allow (lag {lag_ms:.0f} ms per move), server CPU "
              f"{r['cpu'] * 100:.0f}% of a core; missed deadlines {r['late']} of {r['events']} answers "
              f"(forced in all {r['forced']}); {r['playing']} still playing; load {r['load']:.2f}", flush=True)
        figure(f"LD server RSS per match, {n} at once", round(r["per_match"] * 1024, 1), "KiB")
        figure(f"LD missed deadlines, {n} at once", r["late"], "", target=1)
        figure(f"LD lag per move, {n} at once", round(lag_ms, 1), "ms")


if __name__ == "__main__":
    main()
