"""Contract bridge over each bot door: boards per second, and the server's CPU per message
against an asyncio line floor measured in the same run.

What it measures
    For each door, one automatic table of four bots over real sockets, ``--boards`` boards
    each played twice (instant replay, the automatic table's default):

    * **text**: four clients of the text protocol (``tests/bridge_text_client.py``, written
      from docs/bridge-protocol.md alone: random legal calls, mostly passes, and cards);
    * **bluechip**: four robots that speak the Blue Chip table manager as BEN does
      (``tests/bluechip_client.py``), with the same kind of random calls and cards, no pause
      before lines (``BRIDGE_TABLE_MANAGER_PAUSE=0``: the pause is for old robots, and would
      only measure itself);
    * **floor**: an asyncio server in this script that does only a line protocol's wire
      work with nothing behind it: four clients, each line read answered with as many lines
      as the bridge door wrote per line it read in the same round (at least
      :data:`FLOOR_LINES` lines read, so its CPU time is well above the clock's tick).

    Per run: boards per second (from the four joined to the last connection closed), and
    the server process's CPU (user + system from ``/proc/<pid>/stat``, every thread) per
    message, a message being a line read or written by the server.  The server's CPU covers
    its whole match: seating, the event log, storing the result, the analyses are off
    (``ARENA``'s analysis worker is idle until the match ends and the figure is taken before
    it would start its work in a spawned process, whose CPU is not the server's).

    The doors and the floor run one after the other, alternating, ``--rounds`` times; each
    round's ratio is the door's CPU per message over the floor's in that round.  Reported:
    min, median and max over the rounds, and the 1-minute load average.

Run: ``.venv/bin/python benchmarks/bridge_tcp_boards.py`` (``--help``; about a minute).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from tests.bluechip_client import BenClient  # noqa: E402
from tests.bridge_text_client import TextClient  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
#: Lines the floor reads at least, so that its CPU time is well above the clock tick (10 ms).
FLOOR_LINES = 20_000
#: The rules' bids, lowest first.
BIDS = [f"{level}{strain}" for level in range(1, 8) for strain in ("C", "D", "H", "S", "NT")]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` (every thread), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def text_match(port: int, seed: int) -> tuple[int, int]:
    """Four text-protocol clients at one automatic table until the server closes them;
    ``(lines the server read, lines it wrote)``."""
    clients = [TextClient(port, name=f"bench{i}", seed=seed + i) for i in range(4)]
    for c in clients:
        c.send(f"HELLO bench{clients.index(c)}")
        c.send("JOIN-M ANY")
    for c in clients:
        c.wait_closed(600)
    return sum(len(c.sent) for c in clients), sum(len(c.lines) for c in clients)


def ben_match(port: int, seed: int) -> tuple[int, int]:
    """Four BEN-style robots at one automatic table until ``End of session``."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def call(client, board):
        """Mostly a pass, else one of the three cheapest bids over the last (as the text
        clients: random and legal)."""
        last = max((BIDS.index(c) for c in board.calls if c in BIDS), default=-1)
        with lock:
            if last < len(BIDS) - 1 and rng.random() < 0.3:
                return rng.choice(BIDS[last + 1:last + 4])
            return "P"

    def card(client, board, seat, legal):
        with lock:
            return rng.choice(legal)

    robots = [BenClient("Bench", seat, call, card, timeout=120) for seat in range(4)]
    errors: list[BaseException] = []

    def run(robot: BenClient) -> None:
        try:
            robot.connect(("127.0.0.1", port))
            robot.join()
            robot.play_session()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            robot.close()

    threads = [threading.Thread(target=run, args=(r,)) for r in robots]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    if errors:
        raise RuntimeError(f"a robot failed: {errors[0]!r}")
    return sum(len(r.sent) for r in robots), sum(len(r.received) for r in robots)


def door_round(door: str, boards: int, seed: int) -> dict:
    """One match at a fresh server through ``door`` ("text" or "bluechip")."""
    env = {"BRIDGE_AUTO_BOARDS": str(boards), "BRIDGE_AUTO_REPLAY": "1", "BRIDGE_TABLE_MANAGER_PAUSE": "0",
           "BRIDGE_BOT_DEADLINE": "30"}
    server = start_arena(env=env)
    try:
        pid = server.proc.pid
        time.sleep(0.5)  # let the arena's own start settle
        cpu0, start = cpu_seconds(pid), time.perf_counter()
        if door == "text":
            read, written = text_match(server.bridge_port, seed)
        else:
            read, written = ben_match(server.table_manager_port, seed)
        seconds = time.perf_counter() - start
        time.sleep(0.2)  # the result is stored after the last line goes out
        cpu = cpu_seconds(pid) - cpu0
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)
    return {"boards": 2 * boards, "seconds": seconds, "read": read, "written": written, "cpu": cpu}


def floor_main(lines: int, fan: int) -> None:
    """The yardstick (``--floor-server``): an asyncio server that takes four clients and
    answers each line read with ``fan`` fixed lines to that client, until ``lines`` lines
    were read; then it hangs up.  It prints its port, then serves."""
    import asyncio

    answer = b"AUCOPEN N 1C PASS 1S 2D 2S PASS PASS 3D DOUBLE PASS PASS PASS\n" * fan

    async def serve() -> None:
        done = asyncio.get_running_loop().create_future()
        state = {"read": 0}
        peers: list = []

        class Floor(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport, self.buffer = transport, b""
                peers.append(self)

            def data_received(self, data):
                self.buffer += data
                *complete, self.buffer = self.buffer.split(b"\n")
                for _ in complete:
                    state["read"] += 1
                    self.transport.write(answer)
                if state["read"] >= lines and not done.done():
                    for peer in peers:
                        peer.transport.close()
                    done.set_result(None)

        server = await asyncio.get_running_loop().create_server(Floor, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await done
        await asyncio.sleep(0.1)

    asyncio.run(serve())


def floor_round(lines: int, fan: int) -> dict:
    """The yardstick: four clients in threads, each sending a line and reading ``fan``
    lines back, ``lines`` lines in all."""
    server = subprocess.Popen([sys.executable, __file__, "--floor-server", str(lines), str(fan)],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        cpu0, start = cpu_seconds(server.pid), time.perf_counter()
        per_client = lines // 4 + 1

        def client() -> None:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                reader = sock.makefile("rb")
                for _ in range(per_client):
                    try:
                        sock.sendall(b"PLAY 10H\n")
                        for _ in range(fan):
                            if not reader.readline():
                                return
                    except OSError:
                        return

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(server.pid) - cpu0
        server.wait(10)
    finally:
        server.kill()
    return {"seconds": seconds, "read": lines, "written": lines * fan, "cpu": cpu}


def per_message_us(r: dict) -> float:
    return r["cpu"] * 1e6 / (r["read"] + r["written"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=8, help="boards per match, each played twice (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each door and the floor (default 3)")
    parser.add_argument("--doors", default="text,bluechip", help="which doors (default text,bluechip)")
    parser.add_argument("--floor-server", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_server:
        floor_main(*args.floor_server)
        return
    doors = [d for d in args.doors.split(",") if d]
    ratios: dict[str, list[float]] = {d: [] for d in doors}
    rates: dict[str, list[float]] = {d: [] for d in doors}
    print(f"bridge over each door: {args.boards} boards x 2 rooms per match, {args.rounds} rounds, "
          f"load {os.getloadavg()[0]:.2f}")
    for k in range(args.rounds):
        for door in doors:
            r = door_round(door, args.boards, seed=1000 * k)
            fan = max(1, round(r["written"] / r["read"]))
            f = floor_round(max(r["read"], FLOOR_LINES), fan)
            ratio = per_message_us(r) / per_message_us(f)
            ratios[door].append(ratio)
            rates[door].append(r["boards"] / r["seconds"])
            print(f"  round {k + 1} {door:8s} {r['boards'] / r['seconds']:6.1f} boards/s  "
                  f"{r['read']} lines read, {r['written']} written  "
                  f"{per_message_us(r):6.1f} µs CPU/message; floor {per_message_us(f):5.1f} µs "
                  f"(fan {fan})  ratio {ratio:5.2f}  load {os.getloadavg()[0]:.2f}")
    for door in doors:
        rs, bs = sorted(ratios[door]), sorted(rates[door])
        print(f"{door}: CPU per message / asyncio floor: min {rs[0]:.2f}, median {statistics.median(rs):.2f}, "
              f"max {rs[-1]:.2f}; boards/s min {bs[0]:.1f}, median {statistics.median(bs):.1f}, max {bs[-1]:.1f}")
        figure(f"Bridge {door} door: server CPU per message / asyncio floor", round(statistics.median(rs), 2), "x")
        figure(f"Bridge {door} door: boards per second (4 bots, one table)", round(statistics.median(bs), 1),
               "boards/s", better="higher")


if __name__ == "__main__":
    main()
