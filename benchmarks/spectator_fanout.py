"""Spectator fan-out: 500 browser WebSockets watching one live Liar's Dice match.

What it measures
    For every view the match publishes (each carries ``version`` and ``ts``, the server's
    ``time.time()`` when the runner published it), the time from ``ts`` until the message has
    reached the *last* of the spectators: p50, p99 and max over the versions published in a
    measurement window.  Also: how many spectators received every version of the window, and
    how many versions the others missed.

How
    * The server is ``manage.py serve`` (Daphne + the arena in one process, the in-memory
      channel layer, SQLite), started with ``tests.serverproc.start_arena`` on free ports.
    * Two scripted bots (``tests.ld_bot.LDBot``, over real TCP, in this process) sit at the
      automatic table, a match of 1000 games of 2 players x 6 dice, and answer every
      ``move_request`` after ``--bot-delay`` seconds (default 0.05 s: about 20 views a second,
      a match that lasts far longer than the run).
    * The running match's id is read from the server's SQLite file (a running match is not in
      ``/api/matches/`` until it ends).
    * ``--spectators`` (500) WebSocket clients connect to ``/ws/matches/<id>/`` as a browser
      does (``Origin`` header, no session), spread over ``--procs`` client processes.  The
      clients are the ``websockets`` package's own protocol (``websockets.client.
      ClientProtocol``, sans-I/O) on a bare asyncio ``Protocol``: each stamps ``time.time()``
      in ``data_received`` before any parsing, and parses only after every socket that became
      readable in the same loop iteration has been stamped, so one client's parsing does not
      delay another's arrival time.
    * Once all are connected, the window opens one second later and lasts ``--duration``
      seconds; versions with ``ts`` in the window are counted, and the clients keep listening
      a few seconds more for late arrivals.
    * The server process's CPU use over the window (``/proc/<pid>/stat``), per version published,
      and the load average are printed next to the figures: this machine has 2 cores, shared by
      the server, the clients and whatever else runs.
    * The match's pace, from the bots' side: per step, the bots' turn (the requests' arrival to
      the later of the two answers: ``--bot-delay`` plus the bots' own scheduling) and the
      server's turn (that answer to the next request's arrival: everything the server's loop
      did in between, the fan-out of the last view included when it is still busy with it).

    * From the move's arrival: each view is matched with the step whose later answer the bots
      sent last before the view's ``ts``; the time from that send (this process, loopback) to
      the view's arrival at the last spectator includes everything the server did with the
      move before it published the view (``ts`` alone leaves that out).

Target (issue 25): p99 from the move's arrival to the last of 500 spectators' frame under
100 ms in 5 of 5 runs (``--runs``, each on a fresh server; the FIGURE is the worst run's p99),
with every spectator receiving every version.  Run: ``.venv/bin/python benchmarks/spectator_fanout.py``.
"""
from __future__ import annotations

import argparse
import bisect
import asyncio
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# --------------------------------------------------------------------------------------------
# Spectator clients (child processes)
# --------------------------------------------------------------------------------------------
class Spectator(asyncio.Protocol):
    """One browser-like WebSocket on one match page; keeps what ``match.view`` it received."""

    def __init__(self, uri: str, origin: str, connected: asyncio.Future, pending: list):
        from websockets.client import ClientProtocol
        from websockets.uri import parse_uri

        self.ws = ClientProtocol(parse_uri(uri), origin=origin, max_size=None)
        self.connected = connected
        self.pending = pending  # shared: spectators with stamped, unparsed data
        self.chunks: list[tuple[float, bytes]] = []
        self.fragments: list[bytes] = []
        self.views: dict[int, tuple[float, float]] = {}  # version -> (ts, arrival)
        self.acked = 0  # the newest version acknowledged
        self.transport = None
        self.closed = False

    def connection_made(self, transport):
        self.transport = transport
        self.ws.send_request(self.ws.connect())
        transport.write(b"".join(self.ws.data_to_send()))

    def data_received(self, data: bytes):
        if not self.chunks:
            self.pending.append(self)
        self.chunks.append((time.time(), data))

    def process(self) -> None:
        from websockets.frames import Opcode
        from websockets.http11 import Response

        chunks, self.chunks = self.chunks, []
        for arrival, data in chunks:
            self.ws.receive_data(data)
            for event in self.ws.events_received():
                if isinstance(event, Response):
                    if event.status_code == 101 and not self.connected.done():
                        self.connected.set_result(True)
                    elif not self.connected.done():
                        self.connected.set_exception(RuntimeError(f"handshake refused: {event.status_code}"))
                    continue
                if event.opcode in (Opcode.TEXT, Opcode.CONT):
                    self.fragments.append(event.data)
                    if event.fin:
                        text, self.fragments = b"".join(self.fragments), []
                        msg = json.loads(text)
                        if msg.get("type") == "match.view":
                            self.views.setdefault(msg["version"], (msg["ts"], arrival))
                            # Acknowledge every 8th view, as the browser does (static/arena/
                            # match.js; the server sends at most 32 ahead of the last ack).
                            if msg["version"] - self.acked >= 8:
                                self.acked = msg["version"]
                                self.ws.send_text(json.dumps({"type": "ack", "version": msg["version"]}).encode())
        out = self.ws.data_to_send()
        if out:
            self.transport.write(b"".join(out))

    def connection_lost(self, exc):
        self.closed = True
        if not self.connected.done():
            self.connected.set_exception(ConnectionError("closed during the handshake"))


async def clients_main(host: str, port: int, match_id: int, count: int, index: int) -> None:
    """Connect ``count`` spectators, say so on stdout, wait for the window on stdin
    (``t0 t1 grace``), then print per-version arrivals and per-spectator versions as JSON."""
    loop = asyncio.get_running_loop()
    uri = f"ws://{host}:{port}/ws/matches/{match_id}/"
    origin = f"http://{host}:{port}"
    pending: list[Spectator] = []
    scheduled = False

    def parse_pending():
        nonlocal scheduled
        scheduled = False
        batch = pending[:]
        pending.clear()
        for spectator in batch:
            spectator.process()

    def watch_pending():
        # After the I/O callbacks of an iteration have stamped their data, parse it in the next.
        nonlocal scheduled
        if pending and not scheduled:
            scheduled = True
            loop.call_soon(parse_pending)

    class Stamped(Spectator):
        def data_received(self, data):
            super().data_received(data)
            watch_pending()

    spectators: list[Spectator] = []
    sem = asyncio.Semaphore(25)  # connect at most 25 at a time

    async def connect_one(k: int):
        async with sem:
            await asyncio.sleep(random.random() * 0.01)
            fut = loop.create_future()
            _, proto = await loop.create_connection(lambda: Stamped(uri, origin, fut, pending), host, port)
            await asyncio.wait_for(fut, 30)
            spectators.append(proto)

    await asyncio.gather(*(connect_one(k) for k in range(count)))
    print(json.dumps({"connected": len(spectators)}), flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    t0, t1, grace = (float(x) for x in (await reader.readline()).split())
    await asyncio.sleep(max(0.0, t0 - time.time()))
    cpu0 = time.process_time()
    await asyncio.sleep(max(0.0, t1 - time.time()))
    cpu = time.process_time() - cpu0
    await asyncio.sleep(max(0.0, t1 + grace - time.time()))
    parse_pending()
    arrivals: dict[int, list] = {}  # version -> [ts, last arrival, receivers]
    per_spectator = []
    for s in spectators:
        mine = []
        for version, (ts, arrival) in s.views.items():
            if t0 <= ts <= t1:
                mine.append(version)
                a = arrivals.setdefault(version, [ts, arrival, 0])
                a[1] = max(a[1], arrival)
                a[2] += 1
        per_spectator.append(sorted(mine))
    print(json.dumps({"arrivals": arrivals, "per_spectator": per_spectator, "cpu": cpu,
                      "closed": sum(s.closed for s in spectators)}), flush=True)
    for s in spectators:
        s.transport.close()


# --------------------------------------------------------------------------------------------
# Coordinator
# --------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-100) of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))]


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


def running_match(db: Path, timeout: float = 30.0) -> int:
    """The id of the running match in the server's SQLite file (read-only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                row = conn.execute("SELECT id FROM arena_match WHERE status = 'running' ORDER BY id LIMIT 1").fetchone()
            if row:
                return row[0]
        except sqlite3.OperationalError:
            pass
        time.sleep(0.1)
    raise RuntimeError("no match started")


def timed(decide, log: list):
    """``decide`` that appends ``(time the request was read, time the answer is sent)``
    (``time.time()``) to ``log``: the bots' side of the match's pace."""
    def wrapper(msg: dict):
        t_request = time.time()
        move = decide(msg)
        log.append((t_request, time.time()))
        return move
    return wrapper


def pace(logs: list[list], t0: float, t1: float) -> tuple[list[float], list[float]]:
    """Per step (the k-th request of each bot; both are asked at every step) with its requests in
    [t0, t1]: the bots' turn (first request read -> later answer sent) and the server's turn
    (later answer sent -> first next request read), in ms."""
    steps = list(zip(*logs))
    bots, server = [], []
    for step, following in zip(steps, steps[1:]):
        asked, answered = min(r for r, _ in step), max(a for _, a in step)
        if t0 <= asked <= t1:
            bots.append((answered - asked) * 1000)
            server.append((min(r for r, _ in following) - answered) * 1000)
    return bots, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=500)
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--duration", type=float, default=30.0, help="measurement window (s)")
    parser.add_argument("--grace", type=float, default=5.0, help="listening after the window (s)")
    parser.add_argument("--bot-delay", type=float, default=0.05, help="each bot's delay before answering (s)")
    parser.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for the server (repeatable)")
    parser.add_argument("--py-spy", metavar="FILE", help="sample the server with py-spy over the window "
                        "(collapsed stacks to FILE; needs py-spy on PATH or in the venv)")
    parser.add_argument("--csv", metavar="FILE", help="write version,ts,latency_ms,receivers per version to FILE")
    parser.add_argument("--clients", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--match", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=5, help="runs, each on a fresh server")
    args = parser.parse_args()
    if args.clients is not None:
        asyncio.run(clients_main("127.0.0.1", args.port, args.match, args.clients, args.index))
        return
    from benchmarks.figures import figure

    p99s = [measure(args) for _ in range(args.runs)]
    met = sum(p < 100 for p in p99s)
    print(f"move sent -> last spectator's frame, p99 per run: {', '.join(f'{p:.1f}' for p in p99s)} ms; "
          f"under 100 ms in {met} of {len(p99s)} runs")
    figure(f"spectators: {args.spectators} on one match, move -> last spectator p99 (worst of {len(p99s)} runs)",
           round(max(p99s), 1), "ms", target=100)


def measure(args) -> float:
    """One run on a fresh server; prints its report and returns the p99 (ms) from a move's
    sending to its view's arrival at the last spectator."""
    from tests.ld_bot import LDBot, slow_simple_move
    from tests.serverproc import start_arena

    env = {"LIARS_DICE_AUTO_GAMES": "1000", "LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6",
           "LOG_LEVEL": "WARNING"}
    env.update(kv.split("=", 1) for kv in args.server_env)
    server = start_arena(env=env)
    bots, procs = [], []
    bot_logs: list[list] = [[], []]  # per bot: (request read, answer sent)
    try:
        bots = [LDBot(server.liars_dice_port, f"slowbot{k}",
                      decide=timed(slow_simple_move(args.bot_delay, random.Random(k)), bot_logs[k])) for k in range(2)]
        match_id = running_match(server.data_dir / "arena.sqlite3")
        per_proc = [args.spectators // args.procs + (k < args.spectators % args.procs) for k in range(args.procs)]
        t_connect = time.time()
        for k, n in enumerate(per_proc):
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--clients", str(n), "--index", str(k), "--port", str(server.http_port),
                 "--match", str(match_id)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        connected = sum(json.loads(p.stdout.readline())["connected"] for p in procs)
        connect_s = time.time() - t_connect
        t0 = time.time() + 1.0
        t1 = t0 + args.duration
        for p in procs:
            p.stdin.write(f"{t0} {t1} {args.grace}\n")
            p.stdin.flush()
        load_before = os.getloadavg()
        time.sleep(max(0.0, t0 - time.time()))
        cpu0 = cpu_seconds(server.proc.pid)
        if args.py_spy:
            spy = Path(sys.executable).with_name("py-spy")
            try:
                subprocess.Popen([str(spy) if spy.exists() else "py-spy", "record", "--format", "raw", "--nonblocking",
                                  "-r", "200", "-d", str(int(args.duration)), "-p", str(server.proc.pid),
                                  "-o", args.py_spy], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except FileNotFoundError:
                print("py-spy not found: no profile", file=sys.stderr)
        time.sleep(max(0.0, t1 - time.time()))
        cpu1 = cpu_seconds(server.proc.pid)
        load_after = os.getloadavg()
        outs = [json.loads(p.stdout.readline()) for p in procs]
        for p in procs:
            p.wait(30)
        alive = server.proc.poll() is None and not any(b.closed.is_set() for b in bots)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for b in bots:
            b.close()
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)

    user, system = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    cpu = user + system
    arrivals: dict[int, list] = {}
    per_spectator: list[list[int]] = []
    for out in outs:
        per_spectator += out["per_spectator"]
        for version, (ts, last, n) in out["arrivals"].items():
            a = arrivals.setdefault(int(version), [ts, last, 0])
            a[1] = max(a[1], last)
            a[2] += n
    versions = sorted(arrivals)
    expected = set(range(versions[0], versions[-1] + 1)) if versions else set()
    lat_ms = [(arrivals[v][1] - arrivals[v][0]) * 1000 for v in versions if arrivals[v][2] == len(per_spectator)]
    lat_any_ms = [(arrivals[v][1] - arrivals[v][0]) * 1000 for v in versions]
    missed = [len(expected - set(s)) for s in per_spectator]
    complete = sum(m == 0 for m in missed)

    if args.csv:
        with open(args.csv, "w") as f:
            f.write("version,ts,latency_ms,receivers\n")
            for v in versions:
                ts, last, n = arrivals[v]
                f.write(f"{v},{ts:.6f},{(last - ts) * 1000:.3f},{n}\n")
    print(f"Spectator fan-out: {connected} spectators on match {match_id} ({args.procs} client processes), "
          f"bots answering after {args.bot_delay * 1000:.0f} ms, window {args.duration:.0f} s"
          + (f", server env {args.server_env}" if args.server_env else ""))
    print(f"  load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} cores); server process CPU "
          f"{cpu / args.duration * 100:.0f}% of a core over the window, client processes "
          f"{sum(o['cpu'] for o in outs) / args.duration * 100:.0f}% in all; connecting took {connect_s:.1f} s")
    print(f"  {len(versions)} versions published in the window ({len(versions) / args.duration:.1f}/s), "
          f"{len(expected) - len(versions)} published but seen by no spectator; match still running: {alive}; "
          f"server CPU {cpu / max(1, len(versions)) * 1000:.1f} ms per version "
          f"({user / max(1, len(versions)) * 1000:.1f} user, {system / max(1, len(versions)) * 1000:.1f} system)")
    bots_ms, server_ms = pace(bot_logs, t0, t1)
    if bots_ms:
        print(f"  pace per step: bots' turn p50 {pct(bots_ms, 50):.1f} ms (p99 {pct(bots_ms, 99):.1f}), "
              f"server's turn p50 {pct(server_ms, 50):.1f} ms (p99 {pct(server_ms, 99):.1f}, "
              f"mean {sum(server_ms) / len(server_ms):.1f})")
    if lat_any_ms:
        print(f"  ts -> arrival at the last spectator: p50 {pct(lat_any_ms, 50):.1f} ms  p99 {pct(lat_any_ms, 99):.1f} ms"
              f"  max {max(lat_any_ms):.1f} ms  (n={len(lat_any_ms)} versions; target p99 < 100 ms)")
        if len(lat_ms) != len(lat_any_ms):
            print(f"  (over the {len(lat_ms)} versions every spectator received: p50 {pct(lat_ms, 50):.1f} ms, "
                  f"p99 {pct(lat_ms, 99):.1f} ms)" if lat_ms else "  (no version reached every spectator)")
    # From the move's arrival: each version's view follows the step whose later answer was
    # the last sent before the view's ts (the bots answer in this process, on loopback, so the
    # send is the arrival less the kernel's hand-over: this slightly overstates the latency).
    answered = sorted(max(a for _, a in step) for step in zip(*bot_logs))
    from_move = []
    for v in versions:
        ts, last, n = arrivals[v]
        k = bisect.bisect_right(answered, ts)
        if k:
            from_move.append((last - answered[k - 1]) * 1000)
    p99_move = pct(from_move, 99) if from_move else float("inf")
    if from_move:
        print(f"  move sent -> arrival at the last spectator: p50 {pct(from_move, 50):.1f} ms  p99 {p99_move:.1f} ms"
              f"  max {max(from_move):.1f} ms  (n={len(from_move)}; target p99 < 100 ms)")
    print(f"  spectators that received every version: {complete} of {len(per_spectator)}; the others missed "
          f"{sum(missed)} in all (at most {max(missed) if missed else 0} each); "
          f"{sum(o['closed'] for o in outs)} connections closed by the server", flush=True)
    return p99_move


if __name__ == "__main__":
    main()
