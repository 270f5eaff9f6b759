"""A reconnect flood on the Liar's Dice port against a healthy match.

What it measures
    A real server (``manage.py serve``, as the README starts it, SQLite) runs a healthy
    Liar's Dice match between two scripted TCP bots (tests/ld_bot.py; 2 players, 6 dice, 1000
    games, each answering after ``--bot-delay`` seconds, 10 ms by default, so that the match
    has a steady pace and is not itself a CPU hog) from 127.0.0.1.  Flooding processes connect from 127.0.0.2,
    send ``{"name": "flood"}`` and hang up, as fast as they can, for ``--flood`` seconds.  It
    prints the move requests per second the healthy bot receives before, during and after the
    flood, the server's RSS at each point, how many connections the flooders made, and then
    how long a new pair of bots waits from connecting to its first ``move_request`` (seated,
    table started; the pair then hangs up, so the "after" rate is the healthy match alone).

    By default only 127.0.0.1 is exempt from the per-address admission caps (the healthy
    bots; the flooder is an address like any other).  ``--exempt-flooder`` exempts all of
    loopback, as the server's default does, so that the flood meets only what every
    connection meets: nothing done for it before it has spoken, no database step once it is
    gone, at most ``ARENA_MAX_PENDING_SEATINGS`` waiting to be seated.

Bar: the flood moves the healthy rate by less than 20%, and the new pair is seated within
1 s of the flood's end.  Run: ``.venv/bin/python benchmarks/reconnect_flood.py [--flood 3]
[--flooders 4] [--exempt-flooder]``.  Loopback only; bounded by ``--flood`` seconds.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.figures import figure  # noqa: E402
from benchmarks.tcp_flood import rss_mb  # noqa: E402
from tests.ld_bot import LDBot, slow_simple_move  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402

FLOODER = "127.0.0.2"
NAME = b'{"name": "flood"}\n'
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)  # Linux 4.2


def flood(port: int, seconds: float, made) -> None:
    """Connect from :data:`FLOODER`, send a name, hang up; for ``seconds``; count in ``made``."""
    count = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            sock = socket.socket()
            # The port is chosen at connect, not at bind: bind-time choice avoids every port in
            # TIME_WAIT and serialises the flooding processes (4 made 2,000/s where 1 made 13,000).
            sock.setsockopt(socket.SOL_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            sock.bind((FLOODER, 0))
            sock.connect(("127.0.0.1", port))
            sock.send(NAME)
            sock.close()
            count += 1
        except OSError:
            sock.close()
    with made.get_lock():
        made.value += count


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rate_over(bot: LDBot, seconds: float) -> float:
    """Move requests a second the bot receives over the next ``seconds``."""
    start, started = len(bot.requests()), time.monotonic()
    time.sleep(seconds)
    return (len(bot.requests()) - start) / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flood", type=float, default=3.0, help="seconds of flood")
    parser.add_argument("--flooders", type=int, default=1,
                        help="flooding processes (one makes the most: several contend for ports in the kernel)")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of the before and after phases")
    parser.add_argument("--bot-delay", type=float, default=0.01, help="the healthy bots' delay before answering (s)")
    parser.add_argument("--exempt-flooder", action="store_true", help="exempt all of loopback (the default setting)")
    args = parser.parse_args()
    env = {"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6", "LIARS_DICE_AUTO_GAMES": "1000",
           "ARENA_ADMISSION_EXEMPT": "loopback" if args.exempt_flooder else "127.0.0.1"}
    arena = start_arena(env=env)
    try:
        port, pid = arena.liars_dice_port, arena.proc.pid
        a, b = (LDBot(port, f"healthy-{k}", slow_simple_move(args.bot_delay, random.Random(k))) for k in "ab")
        time.sleep(1.0)
        rss0 = rss_mb(pid)
        before = rate_over(a, args.seconds)
        print(f"before:  {before:7.1f} requests/s; RSS {rss0:.0f} MB")
        made = multiprocessing.Value("l", 0)
        procs = [multiprocessing.Process(target=flood, args=(port, args.flood, made), daemon=True)
                 for _ in range(args.flooders)]
        cpu0 = cpu_s(pid)
        for p in procs:
            p.start()
        during = rate_over(a, args.flood)
        rss1 = rss_mb(pid)
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
        server_cpu = cpu_s(pid) - cpu0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        flood_cpu = children.ru_utime + children.ru_stime
        flood_end = time.monotonic()
        pair = [LDBot(port, f"late-{k}", slow_simple_move(args.bot_delay, random.Random(k))) for k in "ab"]
        refused = 0
        while not all(bot.requests() for bot in pair) and time.monotonic() - flood_end < 120:
            for i, bot in enumerate(pair):
                if bot.closed.is_set() and not bot.requests():  # refused (server busy): connect again
                    refused += 1
                    pair[i] = LDBot(port, f"late-{i}", slow_simple_move(args.bot_delay, random.Random(i)))
            time.sleep(0.005)
        seated = time.monotonic() - flood_end
        for bot in pair:
            bot.close()
        after = rate_over(a, args.seconds)
        rss2 = rss_mb(pid)
        print(f"during:  {during:7.1f} requests/s ({(during - before) / before * 100:+.1f}%); RSS {rss1:.0f} MB "
              f"({rss1 - rss0:+.0f} MB); {made.value} connect-name-hangups from {FLOODER} in {args.flood:g} s "
              f"({made.value / args.flood:.0f}/s, {'exempt' if args.exempt_flooder else 'not exempt'})")
        print(f"CPU during the flood: server {server_cpu / args.flood * 100:.0f}% of a core "
              f"({server_cpu / max(1, made.value) * 1e6:.0f} us a connection, the healthy match included), "
              f"flooders {flood_cpu / args.flood * 100:.0f}% ({os.cpu_count()} cores in all)")
        print(f"after:   {after:7.1f} requests/s ({(after - before) / before * 100:+.1f}%); RSS {rss2:.0f} MB "
              f"({rss2 - rss0:+.0f} MB)")
        print(f"a new pair's first move_request {seated:.3f} s after the flood ended"
              + (f" ({refused} connection(s) of the pair refused first)" if refused else ""))
        figure("healthy LD match slowed during a reconnect flood", round(max(0.0, (before - during) / before * 100), 1),
               "%", 20.0)
        figure("a new pair's first move after the flood", round(seated, 3), "s", 1.0)
        log = arena.log()
        print(f"server log: {log.count('took seat')} seatings, {log.count('connection refused')} refusal lines")
        for bot in (a, b):
            bot.close()
    finally:
        arena.stop()


if __name__ == "__main__":
    main()
