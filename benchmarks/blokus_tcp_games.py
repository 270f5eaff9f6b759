"""Blokus bot-vs-bot games through the TCP listener (the XML stream on the Blokus port).

What it measures
    * whole games per second (and moves per second) that ``manage.py serve`` plays between
      scripted bots over TCP on loopback, ``--parallel`` games at a time (default 4), until
      ``--games`` games (default 40) are over; each bot joins with a plain ``<join>``
      (``--variant`` 2021 or 2027), plays at once, and connects again for its next game;
    * per-move latency, p50 / p90 / p99 / max: from a bot's move leaving its socket to the
      memento of that move arriving back (the server parses the move, checks it, logs it,
      applies it, and writes the memento to both players and the observers);
    * the server's CPU time per game and per move (``/proc/<pid>/stat``, user + system, and
      the two apart), the figure to judge server work by (wall time depends on the bots and on
      whatever else the machine runs); every figure is printed with the load average;
    * with ``--setup-only``, the fixed part: every game ends at its first move (an invalid
      one, RULE_VIOLATION), so the CPU per game is what seating, the match's rows, the start
      and the result cost, with no moves to speak of.  A real game's CPU per move is this
      fixed part divided by its moves (about 60) plus the cost of the moves themselves.

How
    The server is started as the README starts it (``tests/serverproc.start_arena``: a fresh
    SQLite file, the in-memory channel layer), with ``ARENA_BUILTIN_DELAY=0``.  The bots run
    in this process on one ``selectors`` loop (no threads): each parses the server's stream
    with lxml's ``XMLPullParser``, rebuilds the rules state from every memento
    (``BlokusState.from_observation``) and answers each MoveRequest with a random legal
    placement (a skip only when there is none).  The bots' own time (parsing, move generation)
    is part of each game's wall time, not of the latency figure.  On this 2-core machine
    the server and the bots share the cores.  ``--repeat`` plays the games again on the same
    server (the first round includes its warm-up: imports, caches, the database's first rows).

Run: ``.venv/bin/python benchmarks/blokus_tcp_games.py`` (``--help`` for the knobs).
"""
from __future__ import annotations

import argparse
import os
import random
import selectors
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lxml import etree  # noqa: E402

from benchmarks.figures import figure  # noqa: E402
from games.blokus import protocol  # noqa: E402
from games.blokus.rules import COLORS, BlokusState  # noqa: E402
from tests.blokus_client import memento_observation  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402

MOVE_REQUESTS = ("sc.framework.plugins.protocol.MoveRequest", "moveRequest")
#: Issue 17's bound on the server's CPU per move through the TCP listener (ms).
CPU_PER_MOVE_TARGET_MS = 0.5


class Bot:
    """One connection: joins, answers MoveRequests at once, records move latencies."""

    def __init__(self, port: int, game_type: str, rng: random.Random, latencies: list[float],
                 setup_only: bool = False):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.variant = protocol.GAME_TYPES[game_type]
        self.rng = rng
        self.latencies = latencies
        self.setup_only = setup_only
        self.parser = etree.XMLPullParser(events=("start", "end"))
        self.depth = 0
        self.root = None
        self.room: str | None = None
        self.obs: dict | None = None
        self.sent_at: float | None = None  # when our last move left, until its memento is back
        self.moves = 0
        self.results = 0
        self.out = b"<protocol>" + f'<join gameType="{game_type}"/>'.encode()
        self.flush()

    def flush(self) -> None:
        while self.out:
            try:
                n = self.sock.send(self.out)
            except BlockingIOError:
                return
            self.out = self.out[n:]

    def on_readable(self) -> bool:
        """Read what arrived; returns False when the server closed the connection."""
        try:
            data = self.sock.recv(262144)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not data:
            return False
        self.parser.feed(data)
        for event, elem in self.parser.read_events():
            if event == "start":
                self.depth += 1
                if self.depth == 1:
                    self.root = elem
                continue
            self.depth -= 1
            if self.depth == 1:
                self.root.remove(elem)
                self.on_message(elem)
        return True

    def on_message(self, elem) -> None:
        if elem.tag == "joined":
            self.room = elem.get("roomId")
            return
        data = elem.find("data")
        kind = None if data is None else data.get("class")
        if kind == "memento":
            if self.sent_at is not None:
                self.latencies.append(time.perf_counter() - self.sent_at)
                self.sent_at = None
            self.obs = memento_observation(data.find("state"), self.variant)
        elif kind in MOVE_REQUESTS:
            if self.setup_only:  # a piece off the board: the game ends at once
                move = ["set", COLORS[self.obs["turn"] % 4], "MONO", "NONE", False, 20, 20]
            else:
                state = BlokusState.from_observation(self.obs)
                legal = state.legal_actions(state.current_color % 2)
                placements = [a for a in legal if a[0] == "set"]
                move = self.rng.choice(placements or legal)
            self.out += protocol.move_message(self.room, move, self.variant)
            self.sent_at = time.perf_counter()
            self.moves += 1
            self.flush()
        elif kind == "result":
            self.results += 1


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU time of a process, all its threads (seconds)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def load() -> str:
    """The load average (1, 5, 15 minutes) as printed beside every figure."""
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def run(port: int, server_pid: int, games: int, parallel: int, game_type: str, seed: int,
        setup_only: bool = False) -> dict:
    """Play ``games`` games, ``parallel`` at a time, and print the report; returns the
    headline figures ``{"games_per_s", "moves_per_s", "ms_per_game", "ms_per_move"}`` (CPU)."""
    rng = random.Random(seed)
    latencies: list[float] = []
    selector = selectors.DefaultSelector()
    started_games = 0
    finished_results = 0
    moves = 0
    closed = 0

    def connect_pair() -> None:
        nonlocal started_games
        started_games += 1
        for _ in range(2):
            bot = Bot(port, game_type, random.Random(rng.random()), latencies, setup_only)
            selector.register(bot.sock, selectors.EVENT_READ, bot)

    cpu0, t0 = cpu_seconds(server_pid), time.perf_counter()
    for _ in range(min(parallel, games)):
        connect_pair()
    open_bots = 2 * min(parallel, games)
    while open_bots:
        for key, _ in selector.select(timeout=30):
            bot: Bot = key.data
            if bot.on_readable():
                continue
            selector.unregister(bot.sock)
            bot.sock.close()
            open_bots -= 1
            moves += bot.moves
            finished_results += bot.results
            closed += 1
            # a game's two players close together: two closed, one game more to start
            if closed % 2 == 0 and started_games < games:
                connect_pair()
                open_bots += 2
    (user1, system1), wall = cpu_seconds(server_pid), time.perf_counter() - t0
    user, system = user1 - cpu0[0], system1 - cpu0[1]
    cpu = user + system
    done = finished_results // 2
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1000

    print(f"{done} games ({game_type}, {parallel} at a time{', setup only' if setup_only else ''}), "
          f"{moves} moves in {wall:.2f} s  [{load()}]")
    print(f"  games/s: {done / wall:.2f}    moves/s: {moves / wall:.0f}")
    if lat:
        print(f"  move -> its memento back (ms): p50 {pct(50):.2f}  p90 {pct(90):.2f}  p99 {pct(99):.2f}  "
              f"max {lat[-1] * 1000:.2f}  (mean {statistics.mean(lat) * 1000:.2f}, n={len(lat)})")
    print(f"  server CPU: {cpu:.2f} s (user {user:.2f}, system {system:.2f}), "
          f"{cpu / max(1, done) * 1000:.1f} ms per game, {cpu / max(1, moves) * 1000:.3f} ms per move  [{load()}]")
    return {"games_per_s": done / wall, "moves_per_s": moves / wall, "ms_per_game": cpu / max(1, done) * 1000,
            "ms_per_move": cpu / max(1, moves) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games to play in all (default 40)")
    parser.add_argument("--parallel", type=int, default=4, help="games at a time (default 4)")
    parser.add_argument("--variant", choices=("2021", "2027"), default="2021")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of --games on the same server (default 1)")
    parser.add_argument("--setup-only", action="store_true",
                        help="end every game at its first move (an invalid one): the fixed CPU per game")
    args = parser.parse_args()
    arena = start_arena(env={"ARENA_BUILTIN_DELAY": "0", "LOG_LEVEL": "WARNING"})
    try:
        for round_ in range(args.repeat):
            last = run(arena.blokus_port, arena.proc.pid, args.games, args.parallel,
                       protocol.GAME_TYPE_OF[args.variant], args.seed + round_, args.setup_only)
    finally:
        arena.stop()
    # The headline figures (benchmarks/run_all.py), from the last round.
    if args.setup_only:
        figure(f"Blokus server CPU per game, setup only ({args.parallel} at a time)", round(last["ms_per_game"], 1), "ms")
        return
    figure(f"Blokus server CPU per move ({args.parallel} at a time)", round(last["ms_per_move"], 3), "ms",
           CPU_PER_MOVE_TARGET_MS)
    figure(f"Blokus moves/s ({args.parallel} at a time)", round(last["moves_per_s"]), "moves/s", better="higher")
    figure(f"Blokus games/s ({args.parallel} at a time)", round(last["games_per_s"], 2), "games/s", better="higher")


if __name__ == "__main__":
    main()
