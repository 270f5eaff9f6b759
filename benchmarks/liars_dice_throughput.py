"""Liar's Dice bot-vs-bot throughput over real TCP, and the server's own time per move.

What it measures
    * games per second (and moves per second) that the arena plays between two trivial
      scripted bots over TCP on loopback: 2 players, 6 dice, a match of ``--games`` games
      (the automatic table's ``LIARS_DICE_AUTO_GAMES``), ``--matches`` matches one after the
      other per pair of bots, ``--pairs`` pairs playing at the same time (default 1: one match
      at a time, so the figure is bounded by the round trip server -> bot -> server);
    * the server's own time per move, p50 / p99 / max, two ways:
      - ``runner``: what :class:`MatchRunner` records in ``Arena.server_times`` (from the
        runner waking up with the last answer to the next ``move_request`` handed to the
        socket);
      - ``wire``: from the moment the line with the last answer of a move is handed to the
        connection's handler (``LiarsDiceBot.on_line``, i.e. straight out of ``data_received``)
        to the last ``move_request`` of the next move written to the socket (wrapped
        ``LiarsDiceBot.ask``).  This adds the answer's decoding and the loop's scheduling of
        the runner, so it is the honest "server time" a bot sees (minus the kernel).
    * what the runner's step is made of, at the median and in the p99 tail (issue 25,
      ``--parts``, default on): one more match after the rounds, not in the figures, with
      the step's parts timed inside the server (:class:`StepParts`), and which steps
      overlapped a write of the event log's thread or a garbage collection;
    * that the event log kept up: rows in the ``Event`` table against the answers the bots
      sent (every answer of every move is one row, none forced), and every match replayed
      from its log gives the result stored for it.

How
    The arena (``games.arena.play.arena.Arena``, the same object ``manage.py serve`` runs, with
    its TCP listener, runners, channel layer and SQLite event writer) runs in this process on
    its own asyncio loop, with a fresh SQLite file in a temporary ``ARENA_DATA_DIR`` (migrated
    first), started as ``serve --role arena`` starts it (then ``freeze_startup_heap``).  The
    bots run in a child process (this script with ``--bots``, one epoll loop, no asyncio) and
    speak the wire protocol from the seed (one JSON line per message); they answer at once: on
    turn, open with ``[face, 1]``, then raise the count by one (past the dice on the table too,
    as the reference's ``bots/basic.js`` does) or challenge with probability 0.35; not on turn,
    ``"pass"``.  The log check counts the bids past the table that stood and the rounds lost by
    an invalid move, which must be none.  By default the server is pinned to CPU 0 and the bots to
    CPU 1 (``--pin no`` leaves both to the scheduler, which moves them about and costs about a
    fifth of the rate).  Defaults: 5 matches of 200 games, one pair of bots.

Target: at least 100 games per second, and server time per move p99 under 1 ms, on this
2-core machine.  Run: ``.venv/bin/python benchmarks/liars_dice_throughput.py`` (``--help``
for the knobs; ``--profile FILE`` writes a cProfile of the server process).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import selectors
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402


# --------------------------------------------------------------------------------------------
# The bots (child process)
# --------------------------------------------------------------------------------------------
class Bot:
    """One scripted bot on one connection (seed wire format, newline-framed JSON)."""

    __slots__ = ("sock", "rng", "buf", "requests", "round_overs")

    def __init__(self, port: int, name: str, seed: int, key: str | None = None):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hello = {"name": name} if key is None else {"name": name, "key": key}  # key: a registered bot's
        self.sock.sendall(json.dumps(hello).encode() + b"\n")
        self.sock.setblocking(False)
        self.rng = random.Random(seed)
        self.buf = b""
        self.requests = 0
        self.round_overs = 0

    def readable(self) -> bool:
        """Answer what came in; returns False once the server has closed the connection."""
        data = self.sock.recv(1 << 16)
        if not data:
            return False
        if self.buf:
            data = self.buf + data
        lines = data.split(b"\n")
        self.buf = lines.pop()
        out = []
        for line in lines:
            msg = json.loads(line)
            if msg["subject"] == "move_request":
                self.requests += 1
                out.append(b'{"message_id":"%s","move":%s}\n' % (
                    msg["message_id"].encode(), json.dumps(self.decide(msg)).encode()))
            else:
                self.round_overs += 1
        if out:
            self.sock.sendall(b"".join(out))  # a few dozen bytes: never blocks in practice
        return True

    def decide(self, msg: dict):
        """On turn: open with [face, 1], then raise the count or (35 %) challenge; else pass."""
        if msg["other_hands"][0][0] != 0:
            return "pass"
        last = msg["last_bid"]
        if last == [0, 0]:
            return [self.rng.randint(1, 6), 1]
        if self.rng.random() < 0.35:
            return "challenge"
        return [last[0], last[1] + 1]  # past the dice on the table too, as basic.js raises


def bots_main(port: int, matches: int, pairs: int, keys: list[str] | None = None) -> None:
    """``pairs`` pairs of bots, each pair playing ``matches`` matches in a row, on one epoll
    loop (no asyncio: the bots should cost the round trip as little as possible); with
    ``keys``, the pair's two bots are the registered bots of those keys (a tournament's
    entrants, ``benchmarks/tournament_throughput.py``)."""
    stats = {"requests": 0, "round_overs": 0, "matches": 0}
    sel = selectors.DefaultSelector()
    left = {p: matches for p in range(pairs)}
    live: dict[int, int] = {}  # pair -> bots of its current match still connected

    def connect_pair(p: int) -> None:
        m = matches - left[p]
        left[p] -= 1
        live[p] = 2
        for k in range(2):
            bot = Bot(port, f"bench{p}-{k}", seed=p * 100_000 + m * 10 + k, key=keys[k] if keys else None)
            sel.register(bot.sock, selectors.EVENT_READ, (p, bot))

    t0 = time.perf_counter()
    for p in range(pairs):
        connect_pair(p)
    while live:
        for key, _ in sel.select():
            p, bot = key.data
            try:
                alive = bot.readable()
            except ConnectionError:
                alive = False
            if alive:
                continue
            sel.unregister(bot.sock)
            bot.sock.close()
            stats["requests"] += bot.requests
            stats["round_overs"] += bot.round_overs
            live[p] -= 1
            if not live[p]:
                del live[p]
                stats["matches"] += 1
                if left[p]:
                    connect_pair(p)
    stats["seconds"] = time.perf_counter() - t0
    print(json.dumps(stats), flush=True)


# --------------------------------------------------------------------------------------------
# The floor: an asyncio loopback echo (its own processes, the same CPUs)
# --------------------------------------------------------------------------------------------
#: A line of a move_request's size (the echo's client sends it, the server sends it back).
ECHO_LINE = json.dumps({"subject": "move_request", "message_id": "0123456789ab", "game_number": 1,
                        "round_number": 1, "move_number": 1, "your_hand": [1, 2, 3, 4, 5, 6],
                        "other_hands": [[0, 6], [2, 6]], "last_bid": [0, 0]}).encode() + b"\n"


def echo_server_main() -> None:
    """The floor (``--echo-server``): an asyncio server that writes back each line it reads,
    timing in the server what the runner's figure times (from the read being handed to the
    protocol to the write handed to the socket).  Prints its port; when its client leaves,
    prints ``{"times": [seconds, ...]}``."""
    async def serve() -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        times: list[float] = []
        perf = time.perf_counter

        class Echo(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport = transport

            def data_received(self, data):
                t = perf()
                self.transport.write(data)
                times.append(perf() - t)

            def connection_lost(self, exc):
                if not done.done():
                    done.set_result(None)

        server = await loop.create_server(Echo, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await done
        print(json.dumps({"times": times}), flush=True)

    asyncio.run(serve())


def echo_client_main(port: int, count: int) -> None:
    """The echo's client (``--echo-client``): ``count`` round trips of :data:`ECHO_LINE`,
    one at a time, as a bot answers."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(count):
        sock.sendall(ECHO_LINE)
        got = 0
        while got < len(ECHO_LINE):
            got += len(sock.recv(1 << 16))
    sock.close()


def echo_floor(count: int, server_cpu: int, bots_cpu: int) -> list[float]:
    """One run of the floor: the echo server on ``server_cpu`` (-1: unpinned), its client on
    ``bots_cpu``, ``count`` round trips; the server's times (seconds)."""
    import subprocess

    def pinned(cpu: int) -> list[str]:
        return ["taskset", "-c", str(cpu)] if cpu >= 0 else []

    server = subprocess.Popen(pinned(server_cpu) + [sys.executable, __file__, "--echo-server"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        subprocess.run(pinned(bots_cpu) + [sys.executable, __file__, "--echo-client", port, str(count)], check=True)
        return json.loads(server.stdout.readline())["times"]
    finally:
        server.kill()
        server.wait()


# --------------------------------------------------------------------------------------------
# The server (this process)
# --------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-100) of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))]


def setup_django(data_dir: Path, games: int) -> None:
    os.environ["ARENA_DATA_DIR"] = str(data_dir)
    os.environ["LIARS_DICE_PORT"] = "0"  # any free port
    os.environ["LIARS_DICE_AUTO_PLAYERS"] = "2"
    os.environ["LIARS_DICE_AUTO_DICE"] = "6"
    os.environ["LIARS_DICE_AUTO_GAMES"] = str(games)
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def instrument_wire(wire_times: list[float], counters: dict) -> None:
    """Wrap the Liar's Dice endpoint (in this process only) to time answer-in -> request-out."""
    from games.liars_dice.transport import LiarsDiceBot

    perf = time.perf_counter
    orig_on_line, orig_ask = LiarsDiceBot.on_line, LiarsDiceBot.ask
    last_line: dict[int, float] = {}   # id(state) -> time the latest line of that match came in
    last_version: dict[int, int] = {}
    started: dict[int, tuple[float, int]] = {}  # id(state) -> (answer-in time, index in wire_times)

    def on_line(self, line):
        t = perf()
        orig_on_line(self, line)
        st = getattr(self, "_bench_state", None)
        if st is not None:
            last_line[st] = t

    def ask(self, state, seat, version):
        key = id(state)
        self._bench_state = key
        fut = orig_ask(self, state, seat, version)
        counters["asks"] += 1
        if last_version.get(key) != version:  # the first request of a move
            last_version[key] = version
            t = last_line.pop(key, None)
            if t is None or version == 1:  # (version 1: a new match; its state may reuse an old id)
                started.pop(key, None)
            else:
                started[key] = (t, len(wire_times))
                wire_times.append(perf() - t)
        elif key in started:  # a further request of the same move: the move ends later
            t, index = started[key]
            wire_times[index] = perf() - t
        return fut

    LiarsDiceBot.on_line, LiarsDiceBot.ask = on_line, ask


class StepParts:
    """Issue 25: what the runner's step (``Arena.server_times``: from its having the last
    answer to the next requests handed to the sockets) is made of, step by step, in this
    process (one match at a time: ``--pairs 1``).  :meth:`install` wraps, with a
    ``perf_counter`` on either side: the event log's ``append`` (the hand-off), the rules'
    ``apply``, the observations and the lines' encoding, the connections' ``write`` (the
    ``send``), the views' publication, and ``_show`` (whose time beyond the views and the
    requests is the wait before the requests: after a round over, ``requests_read_apart``
    turns the loop twice first); and notes when the event log's thread writes a batch and
    when the garbage collector runs, to say which steps overlapped one.  :meth:`report`
    prints the parts' means over the middle tenth of the steps, all of them and the slowest
    1 % (the p99 tail).  Only for a match of its own: the wrappers cost a few microseconds
    a step."""

    #: The parts, none inside another; "the rest" is the step less all of them.
    PARTS = ("event log append", "rules apply", "observation + encoding", "socket writes (send)", "views",
             "wait in _show (loop turns)")

    def __init__(self):
        self.steps: list[dict] = []  # per step: total, the parts (s), round_over, started at
        self.batches: list[tuple[float, float]] = []  # the writer thread's write_rows (start, end)
        self.collections: list[tuple[float, float]] = []
        self._current: dict | None = None
        self._gc_started = 0.0

    def install(self) -> None:
        """Wrap the parts (class docstring), in this process, for good."""
        import gc

        from games.arena.bots.transport import BotConnection
        from games.arena.play import eventlog, runner
        from games.liars_dice import protocol
        from games.liars_dice.rules import LiarsDiceState
        from games.liars_dice.transport import LiarsDiceBot

        perf, parts = time.perf_counter, self

        def timed(cls, name: str, part: str) -> None:
            orig = getattr(cls, name)

            def wrapper(*args, **kwargs):
                t = perf()
                try:
                    return orig(*args, **kwargs)
                finally:
                    if parts._current is not None:
                        parts._current[part] += perf() - t
            setattr(cls, name, wrapper)

        def timed_async(cls, name: str, part: str) -> None:
            orig = getattr(cls, name)

            async def wrapper(*args, **kwargs):
                t = perf()
                try:
                    return await orig(*args, **kwargs)
                finally:
                    if parts._current is not None:
                        parts._current[part] += perf() - t
            setattr(cls, name, wrapper)

        timed(LiarsDiceState, "apply", "rules apply")
        timed(LiarsDiceState, "observation", "observation + encoding")
        timed(protocol, "move_request", "observation + encoding")
        timed(protocol, "round_over", "observation + encoding")
        timed(BotConnection, "write", "socket writes (send)")
        timed(LiarsDiceBot, "ask", "ask")  # (its parts are above: for the wait in _show)
        timed_async(eventlog.EventWriter, "append", "event log append")
        timed_async(runner.MatchRunner, "_publish_views", "views")
        Runner = runner.MatchRunner
        orig_answers, orig_ask, orig_show = Runner._answers, Runner._ask, Runner._show

        async def answers(self, actors, futures):
            got = await orig_answers(self, actors, futures)
            parts._current = dict.fromkeys(parts.PARTS + ("ask",), 0.0)
            parts._current["at"] = self._answered_at
            return got

        async def show(self, told, ask=None):
            t = perf()
            await orig_show(self, told, ask)
            if parts._current is not None and ask is not None:
                parts._current["show"] = perf() - t
                parts._current["round_over"] = bool(told.happenings)

        async def ask(self, actors, told):
            before = len(self.server_times) if self.server_times is not None else 0
            futures = await orig_ask(self, actors, told)
            step, parts._current = parts._current, None
            if step is not None and self.server_times is not None and len(self.server_times) > before:
                step["total"] = self.server_times[-1]
                parts.steps.append(step)
            return futures

        Runner._answers, Runner._ask, Runner._show = answers, ask, show
        orig_write_rows = eventlog.write_rows

        def write_rows(rows):
            t = perf()
            try:
                return orig_write_rows(rows)
            finally:
                parts.batches.append((t, perf()))
        eventlog.write_rows = write_rows

        def on_gc(phase, info):
            if phase == "start":
                parts._gc_started = perf()
            else:
                parts.collections.append((parts._gc_started, perf()))
        gc.callbacks.append(on_gc)

    def report(self) -> None:
        """Print the parts (class docstring)."""
        steps = [s for s in self.steps if "show" in s]
        for s in steps:
            # _show's time not spent in the views or the asks: the loop's turns before the
            # request after a round over, and the runner's own lines there.
            s["wait in _show (loop turns)"] = max(0.0, s["show"] - s["views"] - s["ask"])
        steps.sort(key=lambda s: s["total"])
        n = len(steps)
        tail = steps[int(n * 0.99):]
        middle = steps[int(n * 0.45):int(n * 0.55)]

        def overlaps(step, intervals) -> bool:
            start, end = step["at"], step["at"] + step["total"]
            return any(a < end and b > start for a, b in intervals)

        print(f"  the runner's step in parts (one more match, wrapped: not in the figures above; {n} steps, "
              f"load {os.getloadavg()[0]:.2f}); mean us per step over the middle 10 % (p45-p55), all steps, "
              f"and the slowest 1 % (from p99, {len(tail)} steps):")
        rows = [("step (Arena.server_times)", "total")] + [(p, p) for p in self.PARTS]
        for label, key in rows:
            values = [statistics.fmean(s[key] for s in group) * 1e6 for group in (middle, steps, tail)]
            print(f"    {label:32s} {values[0]:8.1f} {values[1]:8.1f} {values[2]:8.1f}")
        rest = [statistics.fmean(s["total"] - sum(s[p] for p in self.PARTS) for s in group) * 1e6
                for group in (middle, steps, tail)]
        print(f"    {'the rest (runner, loop, GIL)':32s} {rest[0]:8.1f} {rest[1]:8.1f} {rest[2]:8.1f}")
        for label, test in (("ending a round (round_over sent)", lambda s: s["round_over"]),
                            ("overlapping an event-log batch's write", lambda s: overlaps(s, self.batches)),
                            ("overlapping a garbage collection", lambda s: overlaps(s, self.collections))):
            shares = [sum(map(test, group)) / max(1, len(group)) for group in (middle, steps, tail)]
            print(f"    steps {label:40s} {shares[0]:7.0%} {shares[1]:8.0%} {shares[2]:8.0%}")
        if self.batches:
            spans = [b - a for a, b in self.batches]
            print(f"    event-log batches: {len(spans)}, write_rows {statistics.fmean(spans) * 1e6:.0f} us mean, "
                  f"p99 {pct(spans, 99) * 1e6:.0f} us (the writer thread, wall time)")


async def server_main(args, results: dict, parts: StepParts | None = None) -> None:
    from games.arena.play.arena import Arena

    from games.arena.management.commands.serve import freeze_startup_heap

    arena = Arena()
    arena.server_times = []
    if parts is not None:
        parts.install()
    await arena.start()
    freeze_startup_heap()  # as manage.py serve does once it is up
    port = arena.listeners[0].port
    if args.clients == "node":  # benchmarks/node/ld_bots.js, pinned as the Python bots are
        pin = ["taskset", "-c", str(args.bots_cpu)] if args.bots_cpu >= 0 else []
        proc = await asyncio.create_subprocess_exec(
            *pin, "node", str(ROOT / "benchmarks" / "node" / "ld_bots.js"), str(port), str(args.matches),
            str(args.pairs), stdout=asyncio.subprocess.PIPE)
    else:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--bots", "--port", str(port), "--matches", str(args.matches),
            "--pairs", str(args.pairs), "--cpu", str(args.bots_cpu), stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    # The runner task finishes the match (writes the result) right after closing the sockets.
    while arena.tasks:
        await asyncio.sleep(0.01)
    await arena.writer.flush()
    results["bots"] = json.loads(out)
    results["server_times"] = arena.server_times
    results["written"] = arena.writer.written
    await arena.stop()


def check_log(results: dict) -> dict:
    """Event rows against the bots' answers; each match replayed from its log, counting the
    bids past the dice on the table that stood and the rounds lost by an invalid move (the
    bots make none: every raise is valid, as for the reference)."""
    from django.db.models import Count, Max

    from games.arena.models import Event, Match
    from games.arena.play import replay
    from games.liars_dice.rules import new_state

    matches = list(Match.objects.order_by("pk"))
    per_match = {r["match"]: r for r in Event.objects.values("match").annotate(n=Count("id"), top=Max("seq"))}
    replay_ok = past_table = invalid = 0
    for m in matches:
        state = new_state(m.config, m.seed)
        for _, answers in replay.logged_steps(m.pk):
            happenings = state.apply({a["seat"]: a["action"] for a in answers})
            past_table += not happenings and state.last_bid[1] > sum(state.counts)
            invalid += sum(h["reason"] == "invalid_move" for h in happenings)
        if m.status == "finished" and state.is_terminal() and state.result() == m.result:
            replay_ok += 1
    return {
        "matches": len(matches),
        "finished": sum(m.status == "finished" for m in matches),
        "games_won": sum(sum(m.result["scores"]) for m in matches if m.status == "finished"),
        "events": Event.objects.count(),
        "forced": Event.objects.filter(forced=True).count(),
        "seq_gapless": all(r["n"] == r["top"] for r in per_match.values()),
        "replayed_ok": replay_ok,
        "past_table": past_table,
        "invalid_moves": invalid,
    }


def serve_main(args) -> None:
    """Games per second against ``manage.py serve`` (a separate process, web included), as a
    user running ./scripts/run.sh and their bots would see it; with moves per second and the
    server's CPU per move (``/proc/<pid>/stat``, user + system, over the bots' run)."""
    import subprocess

    from benchmarks.liars_dice_reference import cpu_seconds, pin_all_threads
    from tests.serverproc import start_arena

    server = start_arena(env={"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6",
                              "LIARS_DICE_AUTO_GAMES": str(args.games), "LOG_LEVEL": "WARNING"})
    pin = []
    try:
        if args.pin != "no":
            server_cpu, bots_cpu = args.pin.split(",")
            pin_all_threads(server.proc.pid, int(server_cpu))
            pin = ["taskset", "-c", bots_cpu]
        if args.clients == "node":
            command = ["node", str(ROOT / "benchmarks" / "node" / "ld_bots.js"), str(server.liars_dice_port),
                       str(args.matches), str(args.pairs)]
        else:
            command = [sys.executable, __file__, "--bots", "--port", str(server.liars_dice_port),
                       "--matches", str(args.matches), "--pairs", str(args.pairs)]
        time.sleep(0.5)  # the arena's own start-up work
        cpu0 = cpu_seconds(server.proc.pid)
        bots = json.loads(subprocess.run(pin + command, capture_output=True, text=True, check=True).stdout)
        time.sleep(0.2)  # the last match's end is stored after its bots are told
        cpu = cpu_seconds(server.proc.pid) - cpu0
    finally:
        server.stop()
    games = args.games * bots["matches"]
    moves = bots["requests"] / 2  # every move asks both players
    print(f"Liar's Dice throughput ({args.clients} bots) against manage.py serve: 2 players, 6 dice, "
          f"{args.games} games a match, {bots['matches']} match(es) x {args.pairs} pair(s); "
          f"{'pinned ' + args.pin if pin else 'not pinned'}")
    print(f"  {games} games, {bots['requests']} move_requests answered in {bots['seconds']:.2f} s; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"  games per second: {games / bots['seconds']:.1f}   moves per second: {moves / bots['seconds']:.0f}   "
          f"server CPU per move: {cpu * 1000 / moves:.3f} ms   (target >= 100 games/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per match (LIARS_DICE_AUTO_GAMES)")
    parser.add_argument("--matches", type=int, default=5, help="consecutive matches per pair of bots")
    parser.add_argument("--pairs", type=int, default=1, help="pairs of bots playing at the same time")
    parser.add_argument("--profile", help="write a cProfile of the server process to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    parser.add_argument("--pin", default="0,1", help="CPUs for server,bots (sched_setaffinity); 'no' to leave "
                        "both to the scheduler (default 0,1)")
    parser.add_argument("--clients", choices=("python", "node"), default="python",
                        help="the bots: this script's Python bots, or benchmarks/node/ld_bots.js (Node, as "
                        "course bots and the reference's own bots are written)")
    parser.add_argument("--server", choices=("in-process", "serve"), default="in-process",
                        help="in-process: the arena in this process, instrumented (default); serve: the "
                        "one-process server as the README starts it (web and arena, ./scripts/run.sh), "
                        "timed from the bots' side, with the server process's CPU per move")
    parser.add_argument("--rounds", type=int, default=3,
                        help="in-process: rounds of (the echo floor, our matches), then the floor once more "
                        "(default 3)")
    parser.add_argument("--parts", action=argparse.BooleanOptionalAction, default=True,
                        help="in-process: after the rounds, one more match with the runner's step timed in parts "
                        "(issue 25; not in the figures; default: on)")
    parser.add_argument("--echo-moves", type=int, default=10_000, help="round trips of each echo floor run")
    parser.add_argument("--bots", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, default=-1, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--echo-client", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server_main()
        return
    if args.echo_client:
        echo_client_main(*args.echo_client)
        return
    if args.bots:
        if args.cpu >= 0:
            os.sched_setaffinity(0, {args.cpu})
        bots_main(args.port, args.matches, args.pairs)
        return

    if args.server == "serve":
        serve_main(args)
        return
    args.bots_cpu = server_cpu = -1
    if args.pin != "no":
        server_cpu, args.bots_cpu = (int(c) for c in args.pin.split(","))
        os.sched_setaffinity(0, {server_cpu})
    data_dir = Path(tempfile.mkdtemp(prefix="bench-ld-"))
    try:
        setup_django(data_dir, args.games)
        wire_times: list[float] = []
        counters = {"asks": 0}
        instrument_wire(wire_times, counters)
        load_before = os.getloadavg()
        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        # Rounds alternate the floor and ours: floor, ours, floor, ours, ..., floor.
        echo_p99: list[float] = []
        ours_p99: list[float] = []
        ratios: list[float] = []
        results = {"bots": {"requests": 0, "round_overs": 0, "matches": 0, "seconds": 0.0}, "server_times": [],
                   "written": 0}
        echo_p99.append(pct(echo_floor(args.echo_moves, server_cpu, args.bots_cpu), 99) * 1e6)
        for _ in range(args.rounds):
            one: dict = {}
            asyncio.run(server_main(args, one))
            for key in ("requests", "round_overs", "matches", "seconds"):
                results["bots"][key] += one["bots"][key]
            results["server_times"] += one["server_times"]
            results["written"] += one["written"]
            ours_p99.append(pct(one["server_times"], 99) * 1e6)
            echo_p99.append(pct(echo_floor(args.echo_moves, server_cpu, args.bots_cpu), 99) * 1e6)
            # against the mean of the floor's runs either side of it
            ratios.append(ours_p99[-1] / ((echo_p99[-2] + echo_p99[-1]) / 2))
            print(f"  round {len(ours_p99)}: runner p99 {ours_p99[-1]:.1f} us, echo p99 {echo_p99[-2]:.1f} / "
                  f"{echo_p99[-1]:.1f} us, ratio {ratios[-1]:.2f}; {one['bots']['matches'] * args.games / one['bots']['seconds']:.1f} "
                  f"games/s; load {os.getloadavg()[0]:.2f}", flush=True)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        load_after = os.getloadavg()
        log = check_log(results)
        bots = results["bots"]
        games = args.games * bots["matches"]
        moves = len(results["server_times"])  # one entry per step (the last one of a match: to its end)
        server_us = [t * 1e6 for t in results["server_times"]]
        wire_us = [t * 1e6 for t in wire_times]

        print(f"Liar's Dice throughput ({args.clients} bots): 2 players, 6 dice, {args.games} games a match, "
              f"{args.matches} match(es) one after another x {args.pairs} pair(s) of bots at once")
        print(f"  load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
              f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} cores)"
              f"{'  [cProfile on: slower]' if profiler else ''}")
        print(f"  {games} games, {moves} moves ({moves / games:.1f} a game), {bots['requests']} move_requests "
              f"answered in {bots['seconds']:.2f} s (bot side, connect to last close)")
        print(f"  games per second: {games / bots['seconds']:.1f}   moves per second: {moves / bots['seconds']:.0f}"
              f"   (target >= 100 games/s)")
        for label, values in (("runner", server_us), ("wire", wire_us)):
            print(f"  server time per move, {label:6s}: p50 {pct(values, 50):6.1f} us  p99 {pct(values, 99):6.1f} us"
                  f"  max {max(values):8.1f} us  mean {statistics.fmean(values):6.1f} us  (n={len(values)}; "
                  f"target p99 < 1000 us)")
        ok = (log["events"] == bots["requests"] == counters["asks"] == results["written"]
              and log["forced"] == 0 and log["seq_gapless"] and log["finished"] == bots["matches"]
              and log["games_won"] == games and log["replayed_ok"] == log["matches"] and log["invalid_moves"] == 0)
        print(f"  event log: {log['events']} rows written ({results['written']} by the writer) for "
              f"{bots['requests']} answers sent by the bots and {counters['asks']} requests asked; "
              f"{log['forced']} forced; seq gapless: {log['seq_gapless']}; {log['finished']}/{log['matches']} "
              f"matches finished, {log['games_won']} games in their results; {log['replayed_ok']} replayed from "
              f"the log to the stored result; {log['past_table']} bids past the dice on the table stood, "
              f"{log['invalid_moves']} rounds lost by an invalid move  -> {'OK' if ok else 'MISMATCH'}")
        print(f"  server time per move p99 / asyncio echo's in-server p99: median {statistics.median(ratios):.2f} "
              f"(rounds {min(ratios):.2f}-{max(ratios):.2f}); echo p99 {min(echo_p99):.1f}-{max(echo_p99):.1f} us; "
              f"runner p99 {min(ours_p99):.1f}-{max(ours_p99):.1f} us  (target <= 3)")
        if args.parts:  # after the log's check: its match is not in the figures
            parts = StepParts()
            asyncio.run(server_main(args, {}, parts))
            parts.report()
        figure("LD server time per move p99 / asyncio echo p99", round(statistics.median(ratios), 2), "x", target=3)
        figure("LD games per second, two bots", round(games / bots["seconds"], 1), "games/s", target=100,
               better="higher")
        if not ok:
            sys.exit(1)
    finally:
        if args.keep:
            print(f"  data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
