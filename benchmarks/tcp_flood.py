"""TCP junk floods against a healthy match.

What it measures
    A real server (``manage.py serve``, as the README starts it, SQLite) runs a healthy
    Liar's Dice match between two scripted TCP bots (tests/ld_bot.py; 2 players, 6 dice, 1000
    games, answering at once).  For each phase it prints the move requests per second the
    healthy bot receives, the latency of ``GET /api/matches/`` (p50 / max of requests made one
    after the other during the phase) and the server's RSS:

    * alone;
    * with 1 and with 4 flooding connections, each writing ``{}\\n`` as fast as the kernel
      takes it from a separate process (``--reconnect``: connecting again whenever the
      server hangs up).

    ``--max-bad-lines N`` sets ``ARENA_MAX_BAD_LINES`` (default: the server's default, which
    disconnects a flooder after that many bad lines); a huge value leaves only the per-
    connection line rate (``ARENA_LINES_PER_S``) to hold the flood back.

Bar: a flood moves the healthy rate by less than 20% and the server's memory by
less than 50 MB.  Run: ``.venv/bin/python benchmarks/tcp_flood.py [--seconds 5]``.
"""
from __future__ import annotations

import argparse
import multiprocessing
import socket
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.ld_bot import LDBot  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402

JUNK = b"{}\n" * 20000


def flood(port: int, stop, reconnect: bool) -> None:
    """Write ``{}\\n`` to the bot port until ``stop`` is set; with ``reconnect``, connect
    again whenever the server hangs up."""
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                while not stop.is_set():
                    sock.sendall(JUNK)
        except OSError:
            if not reconnect:
                return
            time.sleep(0.01)


def healthy(msg):
    """Answers at once; raises [3, 1] .. [3, 6], then challenges: rounds of ~7 moves, so the
    1000-game match outlasts the benchmark."""
    if msg["other_hands"][0][0] != 0:
        return "pass"
    face, count = msg["last_bid"]
    return [3, count + 1] if count < 6 else "challenge"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def phase(arena, bot: LDBot, seconds: float) -> tuple[float, list[float]]:
    """Requests/s the healthy bot got and API latencies (s) over ``seconds``."""
    start_count, started = len(bot.requests()), time.monotonic()
    latencies = []
    while time.monotonic() - started < seconds:
        t0 = time.monotonic()
        with urllib.request.urlopen(arena.url + "/api/matches/", timeout=60) as resp:
            resp.read()
        latencies.append(time.monotonic() - t0)
        time.sleep(0.05)
    rate = (len(bot.requests()) - start_count) / (time.monotonic() - started)
    return rate, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each phase")
    parser.add_argument("--max-bad-lines", type=int, default=None, help="ARENA_MAX_BAD_LINES for the server")
    parser.add_argument("--reconnect", action="store_true", help="flooders connect again when dropped")
    args = parser.parse_args()
    env = {"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6", "LIARS_DICE_AUTO_GAMES": "1000"}
    if args.max_bad_lines is not None:
        env["ARENA_MAX_BAD_LINES"] = str(args.max_bad_lines)
    arena = start_arena(env=env)
    try:
        a, b = LDBot(arena.liars_dice_port, "healthy-a", healthy), LDBot(arena.liars_dice_port, "healthy-b", healthy)
        time.sleep(1.0)
        pid = arena.proc.pid
        base_rss = rss_mb(pid)
        rate, lat = phase(arena, a, args.seconds)
        base = rate
        print(f"alone:        {rate:7.1f} requests/s; API p50 {statistics.median(lat) * 1000:6.1f} ms, "
              f"max {max(lat) * 1000:6.1f} ms; RSS {base_rss:.0f} MB")
        for flooders in (1, 4):
            stop = multiprocessing.Event()
            procs = [multiprocessing.Process(target=flood, args=(arena.liars_dice_port, stop, args.reconnect),
                                             daemon=True)
                     for _ in range(flooders)]
            for p in procs:
                p.start()
            time.sleep(0.5)
            rate, lat = phase(arena, a, args.seconds)
            rss = rss_mb(pid)
            stop.set()
            for p in procs:
                p.join(5)
                if p.is_alive():
                    p.kill()
            print(f"{flooders} flooder(s): {rate:7.1f} requests/s ({(rate - base) / base * 100:+.1f}%); "
                  f"API p50 {statistics.median(lat) * 1000:6.1f} ms, max {max(lat) * 1000:6.1f} ms; "
                  f"RSS {rss:.0f} MB ({rss - base_rss:+.0f} MB)")
            time.sleep(0.5)
        log = arena.log()
        print(f"server log: {log.count('bad lines; disconnected')} disconnects for bad lines, "
              f"{log.count('reading paused')} connections paused for their line rate")
        a.close()
        b.close()
    finally:
        arena.stop()


if __name__ == "__main__":
    main()
