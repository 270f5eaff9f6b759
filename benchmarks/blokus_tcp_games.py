"""Blokus bot-vs-bot games through the TCP listener (the XML stream on the Blokus port),
against the Liar's Dice asyncio floor in the same run (issue 25).

What it measures
    * the server's CPU time per move (its process CPU clock, every thread; the loop thread's
      share apart): ``manage.py serve`` plays ``--games`` games (default 40) between scripted
      bots over TCP on loopback, ``--parallel`` at a time (default 4); each bot joins with a
      plain ``<join>`` (``--variant`` 2021 or 2027), plays at once, and connects again for
      its next game; also games and moves per second, the server's RSS, and the latency from
      a bot's move leaving its socket to its memento arriving back (p50 / p90 / p99 / max);
    * the fixed part per game (``--setup-games``, default 20): games that end at their first
      move (an invalid one, RULE_VIOLATION), so their CPU per game is what seating, the
      match's rows, the start and the result cost; reported as a number of moves
      (target: at most 10);
    * **the floor**: ``liars_dice_reference.floor_main`` unchanged (a fresh process; per move
      it reads both players' answers, one ``json.loads`` each, and writes both a request)
      serving as many moves as our round played, to two :class:`FloorClient` players in this
      process (Python, in place of node's basic.js: all the floor needs of a player is a
      line with a ``message_id`` per request, and its server side of the wire is the same).
      Ours / floor is the headline ratio (target: at most 3);
    * **what ours per move is made of** (issue 25, ``--decompose``, default on), each round
      and as a ratio to the same round's LD floor: (a) the rules' and the codec's work on the
      round's own moves, in this process on the server's CPU (:func:`rules_and_codec`:
      the move's bytes through the server's ``XmlStream``, ``parse_message``, ``is_legal``,
      ``apply``, the memento); (b) **the Blokus wire floor** (:func:`wire_floor_main`, a fresh
      process): an asyncio server that reads the same bots' moves with an lxml pull parser and
      writes the very bytes ours wrote in that round (each player's memento and MoveRequest
      in one write, as ours coalesces them), to the same bots; what is left of ours beside
      (a) and (b) is the runner, the endpoints, the event log and the loop, which
      ``--py-spy`` (one more round under py-spy, not counted) splits by layer.

    ``--warmup`` games (default 8) are played first and not counted (imports, caches, the
    database's first rows); then ``--rounds`` rounds (default 3) of ours, setup-only and
    floor, alternated, on the same server: a rise across rounds shows in the per-round lines
    (with the RSS), and the load of the shared machine falls on both sides alike.  Medians and
    min–max over the rounds, with the load average, end the report.

How
    The server is started as the README starts it (``tests/serverproc.start_arena``: a fresh
    SQLite file, the in-memory channel layer), with ``ARENA_BUILTIN_DELAY=0``; with ``--pin``
    (default) every server runs on CPU 0 and this process (all clients) on CPU 1.  The bots
    run in this process on one ``selectors`` loop (no threads): each parses the server's
    stream with lxml's ``XMLPullParser``, rebuilds the rules state from every memento
    (``BlokusState.from_observation``) and answers each MoveRequest with a random legal
    placement (a skip only when there is none).

Run: ``.venv/bin/python benchmarks/blokus_tcp_games.py [--py-spy]`` (``--help`` for the knobs).
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import selectors
import socket
import statistics
import subprocess
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
from tests.serverproc import cpu_seconds, start_arena  # noqa: E402

MOVE_REQUESTS = ("sc.framework.plugins.protocol.MoveRequest", "moveRequest")
#: Issue 25's bounds: the server's CPU per move at most 3 times the Liar's Dice asyncio
#: floor's, and a game's fixed part (seating, start, result) at most 10 moves.
FLOOR_RATIO_TARGET = 3.0
SETUP_RATIO_TARGET = 10.0


def rss_mb(pid: int) -> float:
    """The resident memory of ``pid`` (``VmRSS``), MB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def pin_threads(pid: int, cpu: int) -> None:
    """Pin every thread of ``pid`` to ``cpu`` (threads it starts later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {cpu})


class Bot:
    """One connection: joins, answers MoveRequests at once, records move latencies."""

    def __init__(self, port: int, game_type: str, rng: random.Random, latencies: list[float],
                 setup_only: bool = False, record: "GameRecord | None" = None, index: int = 0):
        self.record, self.index = record, index
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
        if self.record is not None:
            self.record.streams[self.index] += data
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
            if self.record is not None and self.record.first is None:
                first = data.find("state").find("first"), data.find("state").find("second")
                names = [p.get("displayName") if p is not None else "" for p in first]
                self.record.first = (self.obs, names, self.room)
        elif kind in MOVE_REQUESTS:
            if self.setup_only:  # a piece off the board: the game ends at once
                move = ["set", COLORS[self.obs["turn"] % 4], "MONO", "NONE", False, 20, 20]
            else:
                state = BlokusState.from_observation(self.obs)
                legal = state.legal_actions(state.current_color % 2)
                placements = [a for a in legal if a[0] == "set"]
                move = self.rng.choice(placements or legal)
            message = protocol.move_message(self.room, move, self.variant)
            if self.record is not None:
                self.record.moves.append(message)
            self.out += message
            self.sent_at = time.perf_counter()
            self.moves += 1
            self.flush()
        elif kind == "result":
            self.results += 1


class GameRecord:
    """One game as its two bots saw it (issue 25's decomposition): every byte each received
    (:attr:`streams`, by the order they connected), the move messages they sent in the order
    they were played (:attr:`moves`), and the first memento's observation, the players' names
    and the room (:attr:`first`)."""

    def __init__(self):
        self.streams = [bytearray(), bytearray()]
        self.moves: list[bytes] = []
        self.first: tuple[dict, list[str], str] | None = None


def loop_thread_seconds(pid: int) -> float:
    """CPU seconds of the main thread of ``pid`` (the server's event loop: every socket, the
    rules, the XML), to the nanosecond (``/proc/<pid>/task/<pid>/schedstat``: time on a CPU)."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as stat:
        return int(stat.read().split()[0]) / 1e9


def load() -> str:
    """The load average (1, 5, 15 minutes) as printed beside every figure."""
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def run(port: int, server_pid: int, games: int, parallel: int, game_type: str, seed: int,
        setup_only: bool = False, quiet: bool = False, records: list | None = None) -> dict:
    """Play ``games`` games, ``parallel`` at a time, and print the report (unless ``quiet``);
    returns ``{"games_per_s", "moves", "moves_per_s", "ms_per_game", "ms_per_move"}`` (CPU).
    With ``records`` (a list), a :class:`GameRecord` of each game is appended to it."""
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
        record = None
        if records is not None:
            record = GameRecord()
            records.append(record)
        for index in range(2):
            bot = Bot(port, game_type, random.Random(rng.random()), latencies, setup_only, record, index)
            selector.register(bot.sock, selectors.EVENT_READ, bot)

    cpu0, loop0, t0 = cpu_seconds(server_pid), loop_thread_seconds(server_pid), time.perf_counter()
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
    cpu, wall = cpu_seconds(server_pid) - cpu0, time.perf_counter() - t0
    loop = loop_thread_seconds(server_pid) - loop0
    done = finished_results // 2
    lat = sorted(latencies)
    result = {"games_per_s": done / wall, "moves": moves, "moves_per_s": moves / wall,
              "ms_per_game": cpu / max(1, done) * 1000, "ms_per_move": cpu / max(1, moves) * 1000,
              "loop_ms_per_move": loop / max(1, moves) * 1000, "rss_mb": rss_mb(server_pid)}
    if quiet:
        return result

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1000

    print(f"  ours{' (setup only)' if setup_only else ''}: {done} games ({game_type}, {parallel} at a time), "
          f"{moves} moves in {wall:.2f} s, {done / wall:.2f} games/s, {moves / wall:.0f} moves/s")
    if lat and not setup_only:
        print(f"    move -> its memento back (ms): p50 {pct(50):.2f}  p90 {pct(90):.2f}  p99 {pct(99):.2f}  "
              f"max {lat[-1] * 1000:.2f}  (mean {statistics.mean(lat) * 1000:.2f}, n={len(lat)})")
    print(f"    server CPU: {cpu:.3f} s, {result['ms_per_game']:.2f} ms per game, "
          f"{result['ms_per_move']:.3f} ms per move (the loop thread {loop / cpu:.0%}, the event log's and the "
          f"database's threads the rest); RSS {result['rss_mb']:.1f} MB  [{load()}]")
    return result


class FloorClient:
    """One player of the Liar's Dice floor: answers every ``move_request`` line at once with a
    line that carries a ``message_id`` (what basic.js's answers carry, all the floor reads)."""

    ANSWER = b'{"message_id": "m", "action": "bid", "bid": [1, 2]}\n'

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def on_readable(self) -> bool:
        """Answer each complete request; False when the floor hung up."""
        data = self.sock.recv(65536)
        if not data:
            return False
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for line in lines:
            if b"move_request" in line:
                self.sock.sendall(self.ANSWER)
        return True


def floor(moves: int, pin_cpu: int | None) -> float:
    """The server CPU per move (ms) of the Liar's Dice asyncio floor
    (``liars_dice_reference.floor_main``, unchanged: per move it reads both players' answers,
    one ``json.loads`` each, and writes both a request) serving ``moves`` moves to two
    :class:`FloorClient` players in this process; a fresh floor process per call."""
    command = [sys.executable, str(ROOT / "benchmarks" / "liars_dice_reference.py"), "--floor-server", str(moves)]
    if pin_cpu is not None:
        command = ["taskset", "-c", str(pin_cpu)] + command
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        cpu0 = cpu_seconds(server.pid)
        clients = [FloorClient(port), FloorClient(port)]
        selector = selectors.DefaultSelector()
        for client in clients:
            selector.register(client.sock, selectors.EVENT_READ, client)
        open_clients = 2
        while open_clients:
            for key, _ in selector.select(timeout=30):
                if not key.data.on_readable():
                    selector.unregister(key.fileobj)
                    key.fileobj.close()
                    open_clients -= 1
        cpu = cpu_seconds(server.pid) - cpu0  # before its exit (it sleeps 0.1 s after the last move)
        server.wait(10)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return cpu / moves * 1000


# --- issue 25: what ours per move is made of ---------------------------------------------------
def rules_and_codec(records: list[GameRecord], variant: str) -> tuple[float, int]:
    """The rules' and the codec's work per move of ours, in this process, on the moves of the
    games in ``records``: per move what the server does with them (games/blokus/transport.py
    and the runner): the move's bytes through an :class:`XmlStream` with the server's bounds,
    ``parse_message``, ``is_legal``, ``apply``, and the memento both players get
    (``protocol.memento`` of ``memento_observation``, once a move as ``Room.memento``); the
    MoveRequest is the same bytes all game, encoded once.  Returns (ms of CPU per move, moves).
    Raises ``RuntimeError`` if a move the server accepted is not legal here."""
    from games.blokus.transport import XmlStream

    cpu, moves = 0.0, 0
    for record in records:
        if record.first is None or not record.moves:
            continue
        obs, names, room = record.first
        state = BlokusState.from_observation(obs)
        streams = [XmlStream(64 * 1024, 12, 256) for _ in range(2)]  # the server's defaults (BLOKUS_MAX_*)
        for stream in streams:
            stream.feed(b"<protocol>")
        t0 = time.process_time()
        for data in record.moves:
            seat = state.current_color % 2
            (element,) = streams[seat].feed(data)
            action = list(protocol.parse_message(element)["action"])
            if not state.is_legal(seat, action):
                raise RuntimeError(f"room {room}: {action} is not legal in the replay")
            state.apply({seat: action})
            protocol.memento(room, state.memento_observation(), names)
            element.clear()
        cpu += time.process_time() - t0
        moves += len(record.moves)
    return cpu / max(1, moves) * 1000, moves


#: Where each message of our stream to a client begins (``protocol._message``: a newline and one
#: level of indentation; a closing tag at that level ends the message before it).
MESSAGE_START = re.compile(rb"\n  <(?!/)")


def wire_script(records: list[GameRecord]) -> list[tuple[bytes, list[list[bytes]]]]:
    """Each game's bytes as the wire floor sends them: (the stream's opening, for each player
    in the order they joined: its batch at the start, then the batch after each move).  A
    batch is what our server wrote to that player for that step: a memento and what follows it
    up to the next memento (the MoveRequest of the player on turn; the result, ``left`` and
    ``</protocol>`` after the last move)."""
    games = []
    for record in records:
        if not record.moves:
            continue
        players, opening = [], b""
        for stream in record.streams:
            starts = [m.start() for m in MESSAGE_START.finditer(stream)]
            opening = bytes(stream[:starts[0]])
            messages = [bytes(stream[a:b]) for a, b in zip(starts, starts[1:] + [len(stream)])]
            batches, seen_memento = [b""], False
            for message in messages:
                memento = b'class="memento"' in message[:200]
                if memento and seen_memento:
                    batches.append(b"")
                seen_memento |= memento
                batches[-1] += message
            players.append(batches)
        if len({len(batches) for batches in players}) != 1 or len(players[0]) != len(record.moves) + 1:
            raise RuntimeError(f"a game's streams do not split into a batch per move ({len(record.moves)} "
                               f"moves; {[len(b) for b in players]} batches)")
        games.append((opening, players))
    return games


def wire_floor_main(script_path: str) -> None:
    """The Blokus wire floor (``--wire-floor``): an asyncio server that pairs its connections
    in the order their first message (the join) is complete, and plays game ``k`` of the
    script with the ``k``-th pair (:func:`wire_script`): the opening at connect, each player's
    first batch when both have joined, then per move read (an lxml ``XMLPullParser`` on the
    stream, as ours reads it) each player's next batch in one write; after the last, it
    closes both.  It neither parses a move's content nor builds a message.  Prints its port."""
    import asyncio
    import pickle

    script = pickle.loads(Path(script_path).read_bytes())
    waiting: list = []
    pairs = 0

    class Game:
        def __init__(self, players: list, batches: list[list[bytes]]):
            self.players, self.batches, self.step = players, batches, 0
            for player, own in zip(players, batches):
                player.game = self
                player.transport.write(own[0])

        def moved(self) -> None:
            self.step += 1
            for player, own in zip(self.players, self.batches):
                player.transport.write(own[self.step])
            if self.step == len(self.batches[0]) - 1:
                for player in self.players:
                    player.transport.close()

    class Connection(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport
            self.game = None
            self.depth = 0
            self.parser = etree.XMLPullParser(events=("start", "end"), resolve_entities=False, no_network=True)
            transport.write(script[0][0])

        def data_received(self, data):
            nonlocal pairs
            self.parser.feed(data)
            for event, elem in self.parser.read_events():
                if event == "start":
                    self.depth += 1
                    if self.depth == 1:
                        self.root = elem
                    continue
                self.depth -= 1
                if self.depth != 1:
                    continue
                self.root.remove(elem)
                if self.game is not None:
                    self.game.moved()
                else:
                    waiting.append(self)
                    if len(waiting) == 2:
                        Game(waiting[:], script[pairs][1])
                        waiting.clear()
                        pairs += 1

    async def serve():
        server = await asyncio.get_running_loop().create_server(Connection, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()

    asyncio.run(serve())


def wire_floor(records: list[GameRecord], parallel: int, game_type: str, seed: int, pin_cpu: int | None) -> dict:
    """:func:`run` against a fresh :func:`wire_floor_main` process serving the games of
    ``records`` (same bots, same number of games and moves); returns :func:`run`'s figures."""
    import pickle
    import tempfile

    script = wire_script(records)
    path = Path(tempfile.mkdtemp(prefix="blokus-wire-")) / "script.pickle"
    path.write_bytes(pickle.dumps(script))
    command = [sys.executable, __file__, "--wire-floor", str(path)]
    if pin_cpu is not None:
        command = ["taskset", "-c", str(pin_cpu)] + command
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        return run(port, server.pid, len(script), parallel, game_type, seed, quiet=True)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(path.parent, ignore_errors=True)


def spread(values: list[float], digits: int = 3) -> str:
    """``median (min–max)`` of a series."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games a round (default 40)")
    parser.add_argument("--setup-games", type=int, default=20,
                        help="setup-only games a round (each ends at its first move; default 20, 0: none)")
    parser.add_argument("--parallel", type=int, default=4, help="games at a time (default 4)")
    parser.add_argument("--variant", choices=("2021", "2027"), default="2021")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of ours / setup / floor on the same server (default 3)")
    parser.add_argument("--warmup", type=int, default=8, help="games played first and not counted (default 8)")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="servers on CPU 0, the clients (this process) on CPU 1 (default: on)")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="alternate with the Liar's Dice asyncio floor (default: on)")
    parser.add_argument("--decompose", action=argparse.BooleanOptionalAction, default=True,
                        help="each round, also the rules and codec in-process and the Blokus wire floor on the "
                        "round's games (issue 25; default: on)")
    parser.add_argument("--py-spy", action="store_true",
                        help="after the rounds, one more round of ours under py-spy (not counted): its CPU by layer")
    parser.add_argument("--wire-floor", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.wire_floor:
        wire_floor_main(args.wire_floor)
        return
    pin = 0 if args.pin and os.cpu_count() >= 2 else None
    if pin is not None:
        os.sched_setaffinity(0, {1})
    game_type = protocol.GAME_TYPE_OF[args.variant]
    arena = start_arena(env={"ARENA_BUILTIN_DELAY": "0", "LOG_LEVEL": "WARNING"})
    ours, setups, floors, rules_ms, wire_ms = [], [], [], [], []
    print(f"Blokus over TCP, {args.games} games a round, {args.parallel} at a time, {args.rounds} rounds; "
          f"{os.cpu_count()} cores{', servers pinned to CPU 0, clients to CPU 1' if pin is not None else ''}; "
          f"{load()}")
    try:
        if pin is not None:
            pin_threads(arena.proc.pid, pin)
        if args.warmup:
            run(arena.blokus_port, arena.proc.pid, args.warmup, args.parallel, game_type, args.seed - 1, quiet=True)
        for round_ in range(args.rounds):
            print(f"round {round_ + 1}")
            records: list[GameRecord] | None = [] if args.decompose else None
            r = run(arena.blokus_port, arena.proc.pid, args.games, args.parallel, game_type, args.seed + round_,
                    records=records)
            ours.append(r["ms_per_move"])
            if args.setup_games:
                s = run(arena.blokus_port, arena.proc.pid, args.setup_games, args.parallel, game_type,
                        args.seed + round_, setup_only=True)
                setups.append(s["ms_per_game"])
                print(f"    setup per game / one move: {s['ms_per_game'] / r['ms_per_move']:.1f}")
            if args.floor:
                floors.append(floor(r["moves"], pin))
                print(f"  floor (Liar's Dice asyncio, Python clients): {r['moves']} moves, "
                      f"{floors[-1]:.3f} ms CPU per move; ours / floor {r['ms_per_move'] / floors[-1]:.2f}  [{load()}]")
            if args.decompose:
                w = wire_floor(records, args.parallel, game_type, args.seed + round_, pin)
                wire_ms.append(w["ms_per_move"])
                if pin is not None:  # where the server runs
                    os.sched_setaffinity(0, {pin})
                rules_ms.append(rules_and_codec(records, args.variant)[0])
                if pin is not None:
                    os.sched_setaffinity(0, {1})
                against = f" = {wire_ms[-1] / floors[-1]:.2f} x the LD floor" if floors else ""
                print(f"  Blokus wire floor (asyncio, lxml pull parser, our bytes): {w['moves']} moves, "
                      f"{wire_ms[-1]:.3f} ms CPU per move{against}; ours / it {r['ms_per_move'] / wire_ms[-1]:.2f}  "
                      f"[{load()}]")
                against = f" = {rules_ms[-1] / floors[-1]:.2f} x the LD floor" if floors else ""
                print(f"  rules and codec in-process (parse, is_legal, apply, memento) on the round's "
                      f"{r['moves']} moves: {rules_ms[-1]:.3f} ms CPU per move{against}  [{load()}]")
        if args.py_spy:
            from benchmarks.pyspy_split import Sampler, report

            sampler = Sampler(arena.proc.pid, cpu=1 if pin is not None else None).start()
            if sampler is None:
                print("py-spy is not installed (pip install py-spy): no profile")
            else:
                p = run(arena.blokus_port, arena.proc.pid, args.games, args.parallel, game_type, args.seed + 99,
                        quiet=True)
                report(sampler.stop(), f"ours, one more round of {args.games} games ({p['ms_per_move']:.3f} ms CPU "
                                       f"per move under py-spy; {load()})")
    finally:
        arena.stop()
    print(f"over {args.rounds} rounds, median (min–max)  [{load()}]")
    print(f"  ours: {spread(ours)} ms CPU per move")
    if floors:
        ratios = [o / f for o, f in zip(ours, floors)]
        print(f"  floor: {spread(floors)} ms CPU per move; ours / floor {spread(ratios, 2)}")
    if setups:
        setup_ratios = [s / o for s, o in zip(setups, ours)]
        print(f"  setup: {spread(setups, 2)} ms CPU per game; setup / one move {spread(setup_ratios, 1)}")
    if wire_ms:
        print(f"  Blokus wire floor: {spread(wire_ms)} ms CPU per move; "
              f"ours / it {spread([o / w for o, w in zip(ours, wire_ms)], 2)}")
        print(f"  rules and codec in-process: {spread(rules_ms)} ms CPU per move")
        if floors:
            print(f"  against the LD floor of the same round (target for ours: 3): Blokus wire floor "
                  f"{spread([w / f for w, f in zip(wire_ms, floors)], 2)}; rules and codec "
                  f"{spread([c / f for c, f in zip(rules_ms, floors)], 2)}; the two together "
                  f"{spread([(w + c) / f for w, c, f in zip(wire_ms, rules_ms, floors)], 2)}; the rest of ours "
                  f"{spread([(o - w - c) / f for o, w, c, f in zip(ours, wire_ms, rules_ms, floors)], 2)}")
    # The headline figures (benchmarks/run_all.py): medians over the rounds.
    name = f"({args.parallel} at a time)"
    figure(f"Blokus server CPU per move {name}", round(statistics.median(ours), 3), "ms")
    if floors:
        figure(f"Blokus CPU per move / LD asyncio floor {name}", round(statistics.median(ratios), 2), "x",
               FLOOR_RATIO_TARGET)
    if setups:
        figure(f"Blokus setup per game / one move {name}", round(statistics.median(setup_ratios), 1), "x",
               SETUP_RATIO_TARGET)


if __name__ == "__main__":
    main()
