"""Hanabi bot against bot over the WebSocket protocol, through a real server.

Starts ``manage.py serve`` (SQLite, as the README runs it) and plays ``--games`` games one
after the other between ``--players`` scripted bots (tests/hanabi_client.py: written from the
protocol document; each answers as soon as it is on turn), each game on the automatic table
(connect, join, start).  Prints games/s and actions/s, the server's CPU per action, and the
time from a bot sending its action to its receiving that action's response (p50, p99: the
server's turn-around, loopback included), with the load average.

    .venv/bin/python benchmarks/hanabi_ws_games.py [--games 20] [--players 3]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.figures import figure  # noqa: E402
from benchmarks.reconnect_flood import cpu_s  # noqa: E402
from tests.hanabi_client import HanabiClient  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402


class TimedClient(HanabiClient):
    """A client that notes when it sent each action and when its response came."""

    def __init__(self, *args, **kwargs):
        self.sent_at: float | None = None
        self.turnarounds: list[float] = []
        super().__init__(*args, **kwargs)

    def send(self, msg) -> None:
        if isinstance(msg, dict) and msg.get("msg_type", "").endswith(("CARD_REQUEST", "HINT_COLOR_REQUEST",
                                                                        "HINT_NUMBER_REQUEST")):
            self.sent_at = time.perf_counter()
        super().send(msg)

    def choose(self, state: dict) -> dict:
        if self.sent_at is not None:
            self.turnarounds.append(time.perf_counter() - self.sent_at)
            self.sent_at = None
        return super().choose(state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=3)
    args = parser.parse_args()
    arena = start_arena(env={"ARENA_ADMISSION_EXEMPT": "loopback"})
    try:
        port, pid = arena.hanabi_port, arena.proc.pid
        turnarounds, actions = [], 0
        cpu0, started = cpu_s(pid), time.perf_counter()
        for game in range(args.games):
            clients = []
            for i in range(args.players):
                clients.append(TimedClient(port, f"g{game}-{i}", start_when=args.players if i == args.players - 1 else None))
                clients[-1].wait_for("CONNECTION_RESPONSE")
            for client in clients:
                client.wait_for("GAME_OVER_RESPONSE", timeout=120)
            actions += len([m for m in clients[0].messages if "game_state" in m]) - 1
            for client in clients:
                turnarounds += client.turnarounds
                client.close()
        elapsed, cpu = time.perf_counter() - started, cpu_s(pid) - cpu0
        turnarounds.sort()
        print(f"load average {os.getloadavg()[0]:.2f} (1 min); {args.games} games of {args.players} players")
        print(f"{args.games / elapsed:.2f} games/s, {actions / elapsed:.0f} actions/s (connecting and joining included); "
              f"server CPU {cpu / actions * 1000:.2f} ms per action")
        figure(f"Hanabi server CPU per action ({args.players} players)", round(cpu / actions * 1000, 3), "ms")
        figure("Hanabi action -> response p99", round(turnarounds[int(len(turnarounds) * 0.99)] * 1000, 1), "ms")
        print(f"action sent -> its response received: p50 {statistics.median(turnarounds) * 1000:.1f} ms, "
              f"p99 {turnarounds[int(len(turnarounds) * 0.99)] * 1000:.1f} ms over {len(turnarounds)} actions")
    finally:
        arena.stop()


if __name__ == "__main__":
    main()
