"""Liar's Dice side by side with the reference simulator: server CPU per move, rates, memory.

What it measures
    For each server, one match of ``--games`` games (default 100) of 2 players x 6 dice
    between two copies of the reference's own bot, ``bots/basic.js``, unchanged:

    * games per second and moves per second (a move is one step: a ``move_request`` to every
      player still in the game, here always both);
    * the server process's CPU time per move, in ms: user + system from
      ``/proc/<pid>/stat`` (every thread), from just before the match to just after it, over
      the moves played (answers the bots sent / 2);
    * the server's peak RSS (``VmHWM``; the reference's from ``wait4``, as it exits after its
      match) and, for ours, its RSS after the match;
    * the 1-minute load average at each figure (this machine has 2 cores, shared with other
      work), and the ratio ours / reference of the medians.

    The servers run one after the other, alternating (reference, ours, yardstick, reference, ...),
    ``--rounds`` times each, in both placements (``--pin both``): pinned (the server on CPU 0,
    both bots on CPU 1, ``taskset``) and left to the scheduler.  The headline figures (through
    ``benchmarks/figures.py``) are the medians and their ratio, per placement; the target is
    a ratio of at most 0.5.

How
    * **The reference**: ``simulator/index.ts`` of github.com/andrijast/liars-dice in the
      directory ``--reference`` (kept outside this repository), run as its README says:
      ``deno run --allow-net ./simulator/index.ts 2 6 GAMES PORT`` with the Deno binary
      ``--deno`` (npm's ``deno`` package: ``node_modules/deno/deno``; when the path given is a
      launcher script, the binary beside what it links to is used, so that the CPU measured
      is Deno's).  Its one remote import (deno.land's colour helpers) is mapped by an import
      map to a local file written here whose functions return the text as it is; nothing
      else is changed.  It waits a second after both bots are in; the
      CPU figure starts at its "Get ready" line and its rate at "Game 1 begins!".
    * **Ours**: ``manage.py serve`` as the README starts it (``tests.serverproc.start_arena``:
      web and arena in one process, SQLite event log, the in-memory channel layer, the
      default log level), its automatic table set to 2 players, 6 dice, ``--games`` games;
      a fresh server (and data directory) per match.  The CPU figure covers the bots'
      seating too; the rate is from starting the bots to their exit (the server closes their
      connections once the result is stored).
    * **The yardstick** (``floor``, ``--no-floor`` to leave it out): an asyncio server in
      this script that does only what every move needs on the wire (read both answers, write
      both requests) for as many moves as ours played, with the same bots: what any server
      on Python's asyncio pays per move here before its own work.
    * **At the reference's pace** (``--pace``, default both paces): the reference stalls about
      40 ms after each ``round_over`` (it writes it and the next ``move_request`` as two
      sends with Nagle's algorithm on, so the request waits for the bot's delayed ACK), so
      it plays 65-85 moves/s where ours plays over 1,000, and a slower pace costs a server
      more per move (more sleeps and wake-ups).  ``ours paced`` and ``floor paced`` put a
      proxy (this script with ``--pace-proxy``, on the bots' CPU) between the bots and the
      server that holds what the server sends a bot after a ``round_over`` line for
      ``--stall-ms`` (40), as the reference's own socket holds it; every byte and both
      processes are unchanged, and the server's CPU is measured as before (the proxy's is
      not: it stands for the bots' kernel).  Pacing from the outside is fair where a table
      pace would not be: a pace per step would sleep on every move, which the reference
      does not, and the stall comes from the reference's sockets, not from its rules.  The
      paced yardstick sends a ``round_over`` as often as our last paced match did.
      Targets: ours / reference at most 0.5 at full speed, 1.0 paced.
    * **The bots**: ``node bots/basic.js`` from the reference's directory, twice.  It connects
      to port 5533; a ``--require`` preload written here changes that port to the server's
      and counts the answers the bot writes (its file is not touched).

Run: ``.venv/bin/python benchmarks/liars_dice_reference.py --reference /tmp/ld-ref
--deno /tmp/deno/node_modules/deno/deno`` (``--help`` for the knobs; about 5 minutes, the
reference taking some 40 s a match).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from tests.serverproc import free_port, start_arena  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
#: The colour helpers the reference imports from deno.land, as plain text (no colours).
COLORS_TS = "export const blue = (s: string) => s;\n" \
            "export const yellow = (s: string) => s;\n" \
            "export const green = (s: string) => s;\n"
COLORS_URL = "https://deno.land/std@0.198.0/fmt/colors.ts"
#: Preloaded into each bot (``node --require``): basic.js connects to 5533; point it at
#: LD_PORT, and count the answers it writes (written to LD_STATS at exit).
PRELOAD_JS = """'use strict';
const net = require('net');
const fs = require('fs');
const port = Number(process.env.LD_PORT);
const createConnection = net.createConnection;
let answers = 0;
net.createConnection = function (options, ...rest) {
  if (options && typeof options === 'object' && options.port === 5533) options = {...options, port};
  const socket = createConnection.call(this, options, ...rest);
  const write = socket.write;
  socket.write = function (data, ...more) {
    if (typeof data === 'string' && data.includes('"message_id"')) answers += 1;
    return write.call(this, data, ...more);
  };
  return socket;
};
process.on('exit', () => fs.writeFileSync(process.env.LD_STATS, JSON.stringify({answers})));
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def status_kb(pid: int, key: str) -> int:
    """A ``/proc/<pid>/status`` figure in KiB (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def pin_all_threads(pid: int, cpu: int) -> None:
    """Pin every thread of ``pid`` to ``cpu`` (threads it starts later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {cpu})


def load() -> float:
    return os.getloadavg()[0]


def deno_binary(path: str) -> str:
    """The Deno executable itself: ``path``, or, when that is npm's Node launcher
    (``node_modules/.bin/deno``), the binary beside the script it links to.  Raises
    ``SystemExit`` naming the path when there is none."""
    found = shutil.which(path) or path
    for candidate in (Path(found), Path(found).resolve().parent / "deno"):
        try:
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return str(candidate)
        except OSError:
            pass
    raise SystemExit(f"--deno {path}: not the Deno binary (npm's is node_modules/deno/deno)")



def reaped(server: subprocess.Popen):
    """Wait for ``server`` to exit; its resource usage (``os.wait4``: CPU and peak RSS)."""
    _, status, usage = os.wait4(server.pid, 0)
    server.returncode = os.waitstatus_to_exitcode(status)
    return usage


def kill_unless_done(server: subprocess.Popen) -> None:
    """Kill ``server`` if it has not exited (a failed match)."""
    if server.returncode is None:
        server.kill()
        server.wait()

class Bench:
    """The shim files (in a temporary directory) and one match per server on demand."""

    def __init__(self, args):
        self.args = args
        self.reference = Path(args.reference).resolve()
        self.moves = 3500  # the yardstick plays as many moves as our last match
        self.rounds = 0  # and sends as many round_over lines as our last paced match
        self.deno = deno_binary(args.deno) if args.only != "ours" else None
        self.tmp = Path(tempfile.mkdtemp(prefix="ld-reference-"))
        (self.tmp / "colors.ts").write_text(COLORS_TS)
        (self.tmp / "import_map.json").write_text(json.dumps({"imports": {COLORS_URL: "./colors.ts"}}))
        (self.tmp / "preload.cjs").write_text(PRELOAD_JS)

    def bots(self, port: int, pinned: bool) -> list[subprocess.Popen]:
        """Start the two basic.js bots against ``port``."""
        procs = []
        for k in range(2):
            env = dict(os.environ, LD_PORT=str(port), LD_STATS=str(self.tmp / f"bot{k}.json"))
            command = [self.args.node, "--require", str(self.tmp / "preload.cjs"), "bots/basic.js"]
            if pinned:
                command = ["taskset", "-c", str(self.args.bots_cpu)] + command
            procs.append(subprocess.Popen(command, cwd=self.reference, env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        return procs

    def answers(self, bots: list[subprocess.Popen], timeout: float) -> int:
        """Wait for the bots to exit; the answers they sent."""
        total = 0
        for k, proc in enumerate(bots):
            if proc.wait(timeout) != 0:
                raise RuntimeError(f"bot {k} exited with {proc.returncode}")
            total += json.loads((self.tmp / f"bot{k}.json").read_text())["answers"]
        return total

    def reference_match(self, pinned: bool) -> dict:
        """One match on the reference server (a fresh process, which exits after it).  It
        takes every connection it accepts as a player, so it is not probed: its "waiting for
        bots" line says it listens."""
        port = free_port()
        command = [self.deno, "run", "--allow-net", f"--import-map={self.tmp / 'import_map.json'}",
                   "./simulator/index.ts", "2", "6", str(self.args.games), str(port)]
        if pinned:
            command = ["taskset", "-c", str(self.args.server_cpu)] + command
        server = subprocess.Popen(command, cwd=self.reference, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
        marks: dict[str, threading.Event] = {"waiting for bots": threading.Event(), "Get ready": threading.Event(),
                                             "Game 1 begins": threading.Event()}
        at: dict[str, float] = {}
        tail: list[str] = []

        def drain():  # its console: keep reading (a full pipe would stall it), note the marks
            for line in server.stdout:
                tail[:] = (tail + [line])[-20:]
                for mark, event in marks.items():
                    if mark in line and not event.is_set():
                        at[mark] = time.perf_counter()
                        event.set()

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            if not marks["waiting for bots"].wait(30):
                raise RuntimeError("the reference did not start:\n" + "".join(tail))
            bots = self.bots(port, pinned)
            if not marks["Get ready"].wait(30):
                raise RuntimeError("the bots did not join the reference:\n" + "".join(tail))
            cpu0 = cpu_seconds(server.pid)
            answers = self.answers(bots, self.args.timeout)
            end = time.perf_counter()
            usage = reaped(server)
        finally:
            kill_unless_done(server)
        reader.join(5)
        return {"seconds": end - at["Game 1 begins"], "answers": answers,
                "cpu": usage.ru_utime + usage.ru_stime - cpu0, "peak_kb": usage.ru_maxrss, "rss_kb": None}

    def paced(self, port: int, pinned: bool):
        """A pacing proxy (:func:`pace_main`) in front of ``port``, on the bots' CPU when
        pinned; returns (the process, the port the bots connect to)."""
        command = [sys.executable, __file__, "--pace-proxy", str(port), str(self.args.stall_ms / 1000)]
        if pinned:
            command = ["taskset", "-c", str(self.args.bots_cpu)] + command
        proxy = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        return proxy, int(proxy.stdout.readline())

    def proxy_stalls(self, proxy: subprocess.Popen) -> int:
        """The stalls a pacing proxy held, once both bots have left."""
        out, _ = proxy.communicate(timeout=30)
        return json.loads(out)["stalls"]

    def floor_match(self, pinned: bool, paced: bool = False) -> dict:
        """As many moves as ours played last, on the yardstick (:func:`floor_main`); ``paced``:
        with a ``round_over`` as often as ours sent one, through the pacing proxy."""
        every = max(1, round(self.moves / self.rounds)) if paced and self.rounds else 0
        command = [sys.executable, __file__, "--floor-server", str(self.moves), str(every)]
        if pinned:
            command = ["taskset", "-c", str(self.args.server_cpu)] + command
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        proxy = None
        try:
            port = int(server.stdout.readline())
            if paced:
                proxy, port = self.paced(port, pinned)
            cpu0, start = cpu_seconds(server.pid), time.perf_counter()
            answers = self.answers(self.bots(port, pinned), self.args.timeout)
            end = time.perf_counter()
            usage = reaped(server)
            if proxy is not None:
                self.proxy_stalls(proxy)
        finally:
            kill_unless_done(server)
            if proxy is not None:
                kill_unless_done(proxy)
        return {"seconds": end - start, "answers": answers, "cpu": usage.ru_utime + usage.ru_stime - cpu0,
                "peak_kb": usage.ru_maxrss, "rss_kb": None}

    def our_match(self, pinned: bool, paced: bool = False) -> dict:
        """One match on ``manage.py serve`` (a fresh server and data directory); ``paced``:
        at the reference's pace, through the pacing proxy (:func:`pace_main`)."""
        env = {"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6",
               "LIARS_DICE_AUTO_GAMES": str(self.args.games)}
        server = start_arena(env=env)
        proxy = None
        try:
            pid = server.proc.pid
            if pinned:
                pin_all_threads(pid, self.args.server_cpu)
            port = server.liars_dice_port
            if paced:
                proxy, port = self.paced(port, pinned)
            time.sleep(0.5)  # let start-up work (the arena's own start) settle
            cpu0 = cpu_seconds(pid)
            start = time.perf_counter()
            answers = self.answers(self.bots(port, pinned), self.args.timeout)
            end = time.perf_counter()
            time.sleep(0.2)  # the match's last database steps run after the bots are told
            cpu = cpu_seconds(pid) - cpu0
            peak, rss = status_kb(pid, "VmHWM"), status_kb(pid, "VmRSS")
            if proxy is not None:
                self.rounds = self.proxy_stalls(proxy) // 2  # each round_over stalls both bots
        finally:
            server.stop()
            shutil.rmtree(server.data_dir, ignore_errors=True)
            if proxy is not None:
                kill_unless_done(proxy)
        self.moves = answers // 2
        return {"seconds": end - start, "answers": answers, "cpu": cpu, "peak_kb": peak, "rss_kb": rss}


#: The reference's stall after a ``round_over`` (seconds): it writes ``round_over`` and the
#: next ``move_request`` as two sends on a socket with Nagle's algorithm on, so the request
#: waits for the bot's delayed ACK of the first (Linux: 40 ms).
REFERENCE_STALL_S = 0.040


def pace_main(server_port: int, stall: float) -> None:
    """The reference's pace for another server (``--pace-proxy``): a TCP proxy between each
    bot and ``server_port`` that passes every byte on at once, except that what the server
    sends a bot after a ``round_over`` line is held until ``stall`` seconds after that line
    went out, as the reference's own sockets hold it (:data:`REFERENCE_STALL_S`).  The bots,
    the server and the bytes are unchanged; only when the bots get the next request moves.
    Prints its port, then serves until both bots have left; prints ``{"stalls"}`` at the end."""
    import asyncio

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        stalls = 0
        left = asyncio.Event()
        pairs = 0

        async def pipe_to_bot(server_reader, bot_writer) -> None:
            nonlocal stalls
            held_until = 0.0
            pending = b""
            while True:
                data = await server_reader.read(1 << 16)
                if not data:
                    break
                pending += data
                while pending:
                    wait = held_until - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    cut = pending.find(b'"round_over"')
                    if cut < 0:
                        bot_writer.write(pending)
                        pending = b""
                        break
                    end = pending.find(b"\n", cut) + 1 or len(pending)
                    bot_writer.write(pending[:end])
                    pending = pending[end:]
                    held_until = loop.time() + stall
                    stalls += 1
            bot_writer.close()

        async def pipe_to_server(bot_reader, server_writer) -> None:
            while data := await bot_reader.read(1 << 16):
                server_writer.write(data)
            server_writer.close()

        async def bot(bot_reader, bot_writer) -> None:
            nonlocal pairs
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", server_port)
            pairs += 1
            await asyncio.gather(pipe_to_bot(server_reader, bot_writer), pipe_to_server(bot_reader, server_writer),
                                 return_exceptions=True)
            pairs -= 1
            if not pairs:
                left.set()

        server = await asyncio.start_server(bot, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await left.wait()
        print(json.dumps({"stalls": stalls}), flush=True)

    asyncio.run(serve())


def floor_main(moves: int, round_every: int = 0) -> None:
    """The yardstick (``--floor-server``): an asyncio server that does only what every move
    needs on the wire, with nothing behind it: it takes two bots, and per move reads both
    answers (one ``json.loads`` each) and writes each bot a fixed ``move_request`` (the
    first opens a round; basic.js bids or passes); with ``round_every``, every that many
    moves a ``round_over`` first, in a send of its own (as ours sends it); after ``moves``
    moves it hangs up.  It prints its port, then serves."""
    import asyncio

    requests = [json.dumps({"subject": "move_request", "message_id": "m", "game_number": 1, "round_number": 1,
                            "move_number": 1, "your_hand": [1, 2, 3, 4, 5, 6],
                            "other_hands": hands, "last_bid": [0, 0]}).encode() + b"\n"
                for hands in ([[0, 6], [2, 6]], [[1, 6], [0, 6]])]
    round_over = json.dumps({"subject": "round_over", "game_number": 1, "round_number": 1,
                             "state": [[0, 6], [2, 5]], "round_loser": 2, "round_challenger": 0,
                             "game_winner": -1}).encode() + b"\n"

    async def serve() -> None:
        bots: list = []
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        state = {"answers": 0, "moves": 0}

        class Floor(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport = transport
                bots.append(self)
                if len(bots) == 2:
                    ask()

            def data_received(self, data):
                for line in data.split(b"\n"):
                    if line and "message_id" in json.loads(line):
                        state["answers"] += 1
                if state["answers"] == 2:
                    state["answers"] = 0
                    state["moves"] += 1
                    if state["moves"] >= moves:
                        for bot in bots:
                            bot.transport.close()
                        done.set_result(None)
                    elif round_every and state["moves"] % round_every == 0:
                        for bot in bots:
                            bot.transport.write(round_over)
                        loop.call_soon(ask)
                    else:
                        ask()

        def ask():
            for bot, request in zip(bots, requests):
                bot.transport.write(request)

        server = await loop.create_server(Floor, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await done
        await asyncio.sleep(0.1)

    asyncio.run(serve())


def line(name: str, r: dict, games: int) -> str:
    """One match's figures (the yardstick plays moves, not games)."""
    moves = r["answers"] / 2
    rate = "       -       " if name.startswith("floor") else f"{games / r['seconds']:7.1f} games/s"
    rss = f", RSS after {r['rss_kb'] / 1024:.0f} MB" if r["rss_kb"] else ""
    return (f"  {name:11s} {rate} {moves / r['seconds']:8.0f} moves/s  "
            f"{r['cpu'] * 1000 / moves:6.3f} ms CPU/move ({r['cpu']:.2f} s for {moves:.0f} moves)  "
            f"peak RSS {r['peak_kb'] / 1024:.0f} MB{rss}  load {r['load']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", help="the reference's checkout (github.com/andrijast/liars-dice); required")
    parser.add_argument("--deno", default="deno", help="the Deno binary (npm's: node_modules/deno/deno; default: deno "
                        "on PATH)")
    parser.add_argument("--node", default="node", help="the Node binary for the bots")
    parser.add_argument("--games", type=int, default=100, help="games in the match (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="matches per server and placement (default 3)")
    parser.add_argument("--pin", choices=("both", "yes", "no"), default="both",
                        help="pinned (server CPU 0, bots CPU 1), left to the scheduler, or both (default)")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bots-cpu", type=int, default=1)
    parser.add_argument("--only", choices=("both", "ours", "reference"), default="both",
                        help="run one server only (e.g. to profile ours)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a match may take")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the yardstick: an asyncio server doing only the reads and writes of "
                        "each move (default: on)")
    parser.add_argument("--pace", choices=("both", "full", "reference"), default="both",
                        help="ours (and the yardstick) at full speed, at the reference's pace (its stall after "
                        "each round_over, through a pacing proxy), or both (default)")
    parser.add_argument("--stall-ms", type=float, default=REFERENCE_STALL_S * 1000,
                        help="the reference's stall after a round_over, for --pace (default %(default)g ms)")
    parser.add_argument("--floor-server", type=int, nargs="+", metavar="MOVES", help=argparse.SUPPRESS)
    parser.add_argument("--pace-proxy", nargs=2, metavar=("PORT", "STALL_S"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_server:
        floor_main(*args.floor_server)
        return
    if args.pace_proxy:
        pace_main(int(args.pace_proxy[0]), float(args.pace_proxy[1]))
        return
    if not args.reference:
        parser.error("--reference is required: the folder of github.com/andrijast/liars-dice (bots/basic.js, simulator/)")
    bench = Bench(args)
    paces = {"both": [False, True], "full": [False], "reference": [True]}[args.pace]
    servers = [("reference", bench.reference_match)] if args.only in ("both", "reference") else []
    for paced in paces:  # a paced match after a full-speed one, each yardstick after ours
        suffix = " paced" if paced else ""
        if args.only in ("both", "ours"):
            servers.append(("ours" + suffix, lambda pinned, paced=paced: bench.our_match(pinned, paced)))
        if args.floor:
            servers.append(("floor" + suffix, lambda pinned, paced=paced: bench.floor_match(pinned, paced)))
    placements = {"both": [True, False], "yes": [True], "no": [False]}[args.pin]
    print(f"Liar's Dice, 2 players x 6 dice, {args.games} games a match, two unchanged bots/basic.js; "
          f"{os.cpu_count()} cores, load {load():.2f}")
    try:
        for pinned in placements:
            print(f"{'pinned: server on CPU %d, bots on CPU %d' % (args.server_cpu, args.bots_cpu) if pinned else 'not pinned'}")
            results: dict[str, list[dict]] = {name: [] for name, _ in servers}
            for _ in range(args.rounds):
                for name, run in servers:
                    r = run(pinned)
                    r["load"] = load()
                    results[name].append(r)
                    print(line(name, r, args.games), flush=True)
            cpu = {name: [r["cpu"] * 2000 / r["answers"] for r in rs] for name, rs in results.items()}
            med = {name: statistics.median(values) for name, values in cpu.items()}
            summary = "  ".join(f"{name} {value:.3f} ms" for name, value in med.items())
            print(f"  median CPU per move: {summary}  load {load():.2f}", flush=True)
            placement = "pinned" if pinned else "not pinned"
            for name, value in med.items():
                figure(f"LD server CPU per move, {name} ({placement})", round(value, 4), "ms")
            # Ours against the reference (its medians: it has one pace), and against the
            # yardstick at the same pace; each with its range over the rounds.
            for suffix, target in (("", 0.5), (" paced", 1.0)):
                ours = "ours" + suffix
                if ours not in med:
                    continue
                for anchor, goal in (("reference", target), ("floor" + suffix, None)):
                    if anchor not in med:
                        continue
                    ratios = [o / a for o, a in zip(cpu[ours], cpu[anchor])]
                    print(f"  {ours} / {anchor}: {med[ours] / med[anchor]:.2f} (rounds {min(ratios):.2f}-"
                          f"{max(ratios):.2f})", flush=True)
                    figure(f"LD CPU per move, {ours} / {anchor} ({placement})",
                           round(med[ours] / med[anchor], 3), "x", target=goal)
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
