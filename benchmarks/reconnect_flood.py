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

``--game hanabi``: the same on Hanabi's WebSocket port.  Two bots from 127.0.0.1
(tests/hanabi_client.py, answering at once) play game after game on the automatic table; the
flooder opens a connection from 127.0.0.2, sends a WebSocket upgrade request, reads the answer
(or the close) and hangs up, as fast as it can.  Quiet and flooded phases of ``--seconds``
alternate ``--rounds`` times, each round ending with a control phase, the same flood against
a listener in another process that accepts and closes at once (what the flood costs the
machine, the flooder's own CPU included, whatever the server does); it prints the healthy
actions/s of each phase, their min-max, each flooded and control phase against the quiet one
before it, and the load average.
``--server-root DIR`` runs the server of another checkout (the same measurement before a
change).  Run: ``.venv/bin/python benchmarks/reconnect_flood.py --game hanabi [--rounds 4]
[--seconds 5]``.
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


def upgrade_request(port: int) -> bytes:
    """A WebSocket opening handshake request for ``port`` (any path: the Hanabi port's)."""
    return (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def flood_upgrades(port: int, seconds: float, made) -> None:
    """From :data:`FLOODER`: connect, send an upgrade request, read the answer or the close,
    hang up; for ``seconds``; count in ``made``."""
    request, count = upgrade_request(port), 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock = socket.socket()
        try:
            sock.setsockopt(socket.SOL_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            sock.bind((FLOODER, 0))
            sock.settimeout(1.0)
            sock.connect(("127.0.0.1", port))
            sock.sendall(request)
            sock.recv(4096)
            count += 1
        except OSError:
            count += 1  # refused (reset) or timed out: a connection made all the same
        finally:
            sock.close()
    with made.get_lock():
        made.value += count


def accept_and_close(ready) -> None:
    """The control's listener, in a process of its own: accept and close at once, as the
    server does with a refused connection, for as long as it runs; its port goes in ``ready``."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    ready.value = listener.getsockname()[1]
    while True:
        conn, _ = listener.accept()
        conn.close()


def hanabi_main(args) -> None:
    """``--game hanabi`` (module docstring)."""
    import statistics
    import threading

    from tests import serverproc
    from tests.hanabi_client import HanabiClient

    if args.server_root:
        serverproc.ROOT = Path(args.server_root).resolve()
    actions: list[float] = []  # when the first bot of each game saw an action's result
    stop = threading.Event()

    class Noted(list):
        def append(self, msg) -> None:
            if "game_state" in msg and msg.get("msg_type") != "GAME_START_RESPONSE":
                actions.append(time.monotonic())
            super().append(msg)

    class Counted(HanabiClient):
        """A bot that notes the time of every action's result it receives."""

        def _run(self) -> None:
            self.messages = Noted(self.messages)
            super()._run()

    def healthy(port: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                first = Counted(port, f"h{n}a")
                first.wait_for("CONNECTION_RESPONSE")
                second = HanabiClient(port, f"h{n}b", start_when=2)
                second.wait_for("GAME_OVER_RESPONSE", timeout=120)
            except Exception as exc:  # noqa: BLE001 (a game that failed: say so, go on)
                if stop.is_set():
                    return
                print(f"  healthy game {n}: {exc}", flush=True)
                time.sleep(0.5)
                continue
            for bot in (first, second):
                bot.close()

    def rate(seconds: float) -> float:
        start = time.monotonic()
        time.sleep(seconds)
        end = time.monotonic()
        return sum(1 for t in list(actions) if start <= t < end) / (end - start)

    arena = serverproc.start_arena(env={"ARENA_ADMISSION_EXEMPT": "127.0.0.1", "LOG_LEVEL": "WARNING"})
    try:
        port = arena.hanabi_port
        threading.Thread(target=healthy, args=(port,), daemon=True).start()
        time.sleep(2.0)
        quiet, flooded, ratios, made_all = [], [], [], 0
        print(f"server {serverproc.ROOT}; Hanabi port {port}; {args.rounds} rounds of {args.seconds:g} s quiet, "
              f"{args.seconds:g} s flooded; load average {os.getloadavg()[0]:.2f}", flush=True)
        control_port = multiprocessing.Value("l", 0)
        control = multiprocessing.Process(target=accept_and_close, args=(control_port,), daemon=True)
        control.start()
        while not control_port.value:
            time.sleep(0.01)
        controls = []  # the same flood against the control listener, per quiet phase

        def flooded_phase(target: int) -> tuple[float, float, float]:
            """(healthy actions/s, flooding connections/s, server CPU share) while flooding."""
            made = multiprocessing.Value("l", 0)
            procs = [multiprocessing.Process(target=flood_upgrades, args=(target, args.seconds + 0.5, made),
                                             daemon=True) for _ in range(args.flooders)]
            for p in procs:
                p.start()
            time.sleep(0.25)
            cpu0 = cpu_s(arena.proc.pid)
            got = rate(args.seconds)
            server_cpu = (cpu_s(arena.proc.pid) - cpu0) / args.seconds
            for p in procs:
                p.join(10)
            return got, made.value / (args.seconds + 0.5), server_cpu

        marginal = []  # server CPU the flood added, per flooding connection (us)
        for round_ in range(1, args.rounds + 1):
            cpu0 = cpu_s(arena.proc.pid)
            quiet.append(rate(args.seconds))
            quiet_cpu = (cpu_s(arena.proc.pid) - cpu0) / args.seconds
            got, per_s, server_cpu = flooded_phase(port)
            marginal.append(max(0.0, server_cpu - quiet_cpu) / per_s * 1e6 if per_s else 0.0)
            flooded.append(got)
            made_all += per_s * (args.seconds + 0.5)
            ratios.append(flooded[-1] / quiet[-1] if quiet[-1] else 0.0)
            against, control_per_s, _ = flooded_phase(control_port.value)
            controls.append(against / quiet[-1] if quiet[-1] else 0.0)
            print(f"  round {round_}: quiet {quiet[-1]:6.1f} actions/s, flooded {flooded[-1]:6.1f} actions/s "
                  f"({(ratios[-1] - 1) * 100:+.1f}%), {per_s:.0f} connections/s from {FLOODER}, server CPU "
                  f"{quiet_cpu * 100:.0f}% -> {server_cpu * 100:.0f}% of a core ({marginal[-1]:.0f} us a "
                  f"connection); control (the flood against another process) "
                  f"{against:6.1f} actions/s ({(controls[-1] - 1) * 100:+.1f}%, {control_per_s:.0f}/s); "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
        control.kill()
        print(f"quiet {min(quiet):.1f}-{max(quiet):.1f} actions/s, flooded {min(flooded):.1f}-{max(flooded):.1f}; "
              f"flooded/quiet {min(ratios):.2f}-{max(ratios):.2f} (median {statistics.median(ratios):.2f}); "
              f"control/quiet {min(controls):.2f}-{max(controls):.2f} (median {statistics.median(controls):.2f}); "
              f"{made_all:.0f} flooding connections, {min(marginal):.0f}-{max(marginal):.0f} us of server CPU "
              f"each; load average {os.getloadavg()[0]:.2f}")
        figure("healthy Hanabi game slowed during a reconnect flood",
               round(max(0.0, (1 - statistics.median(ratios)) * 100), 1), "%", 20.0)
        log = arena.log()
        print(f"server log: {log.count('connection refused')} refusal lines")
    finally:
        stop.set()
        arena.stop()


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
    parser.add_argument("--game", choices=["liars_dice", "hanabi"], default="liars_dice")
    parser.add_argument("--rounds", type=int, default=4, help="hanabi: quiet/flooded pairs")
    parser.add_argument("--server-root", help="hanabi: run the server of this checkout")
    args = parser.parse_args()
    if args.game == "hanabi":
        hanabi_main(args)
        return
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
