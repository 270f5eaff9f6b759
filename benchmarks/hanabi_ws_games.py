"""Hanabi bot against bot over the WebSocket protocol: our server against a WebSocket floor.

What it measures
    ``--rounds`` rounds (default 3); in each, ``--games`` games (default 20) one after the
    other between ``--players`` scripted bots (tests/hanabi_client.py: written from the
    protocol document; each answers as soon as it is on turn), first against ours, then
    against the floor:

    * **ours**: ``manage.py serve`` as the README runs it (SQLite, the in-memory channel
      layer; one server for every round), each game on the automatic table (connect, join,
      start);
    * **the floor**: a minimal asyncio WebSocket server (the ``websockets`` package, in a
      process of its own started by this script with ``--floor-serve``) that does only the
      wire work of each action: read one frame, send each player a frame; the frames are the
      very ones ours sent in the first round (each player's, in order, as its bot received
      them: compact JSON, so of the same size), so the bots play the same games, action for
      action.  It reads the ``CONNECTION_REQUEST`` to know which bot is which, and nothing
      else.

    For each: the server process's CPU (user + system, every thread, ``/proc/<pid>/stat``)
    from before the first bot connects to after the last game, over the actions played (a
    bot's play, discard or hint; connecting, joining and starting are in the CPU too, on
    both sides), and the headline ratio ours / floor per round, with min–max over the rounds
    and the 1-minute load average.  Ours also gives the time from a bot sending its action
    to its receiving that action's response (p50, p99: the server's turn-around, loopback
    included).  With ``--pin`` (default) both servers run on CPU 0 and the bots (this
    process) on CPU 1.

    .venv/bin/python benchmarks/hanabi_ws_games.py [--games 20] [--players 3] [--rounds 3]
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.figures import figure  # noqa: E402
from benchmarks.liars_dice_reference import pin_all_threads  # noqa: E402
from benchmarks.reconnect_flood import cpu_s  # noqa: E402
from tests.hanabi_client import HanabiClient  # noqa: E402
from tests.serverproc import free_port, start_arena, wait_for_port  # noqa: E402

#: The issue's bound on ours / floor (issue 25, target 2).
TARGET_RATIO = 2.0
ACTIONS = ("PLAY_CARD_REQUEST", "DISCARD_CARD_REQUEST", "HINT_COLOR_REQUEST", "HINT_NUMBER_REQUEST")


def compact(msg: dict) -> str:
    """A received message as the server wrote it (compact JSON, keys in order, UTF-8)."""
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


class TimedClient(HanabiClient):
    """A client that notes when it sent each action and when its response came."""

    def __init__(self, *args, **kwargs):
        self.sent_at: float | None = None
        self.turnarounds: list[float] = []
        self.actions = 0
        super().__init__(*args, **kwargs)

    def send(self, msg) -> None:
        if isinstance(msg, dict) and msg.get("msg_type") in ACTIONS:
            self.sent_at = time.perf_counter()
            self.actions += 1
        super().send(msg)

    def choose(self, state: dict) -> dict:
        if self.sent_at is not None:
            self.turnarounds.append(time.perf_counter() - self.sent_at)
            self.sent_at = None
        return super().choose(state)


def play(port: int, games: int, players: int) -> tuple[int, list[float], list[list[list[str]]]]:
    """Play ``games`` games on ``port``; returns the actions played, the turn-arounds (s) and
    each game's frames by player (for the floor to send)."""
    actions, turnarounds, script = 0, [], []
    for game in range(games):
        clients = []
        for i in range(players):
            clients.append(TimedClient(port, f"g{game}-{i}", start_when=players if i == players - 1 else None))
            clients[-1].wait_for("CONNECTION_RESPONSE")
        for client in clients:
            client.wait_for("GAME_OVER_RESPONSE", timeout=120)
        for client in clients:
            client.close()
            client.thread.join(10)
            actions += client.actions
            turnarounds += client.turnarounds
        script.append([[compact(m) for m in client.messages] for client in clients])
    return actions, turnarounds, script


# --- the floor ----------------------------------------------------------------------------------
async def serve_floor(script_path: str, port: int) -> None:
    """The floor server (module docstring): game ``k``'s player ``i`` (its bot is named
    ``g{k}-{i}``) gets ``script[k][i]`` in order: one frame to each player already joined
    when a player joins (the ``CONNECTION_RESPONSE``s), then one frame to every player per
    frame any of them sends, until the frames are out; then every socket is closed."""
    from websockets.asyncio.server import serve

    script = json.loads(Path(script_path).read_text())
    tables: dict[int, dict] = {}

    async def bot(ws):
        game, player = (int(part) for part in json.loads(await ws.recv())["name"][1:].split("-"))
        if player == 0:
            tables[game] = {"sockets": [], "inbox": asyncio.Queue()}
        table, frames = tables[game], script[game]
        table["sockets"].append(ws)
        for i, other in enumerate(table["sockets"]):
            await other.send(frames[i][player - i])
        if player < len(frames) - 1:  # the last to join runs the game
            async for text in ws:
                await table["inbox"].put(text)
            return
        inbox, sockets = table["inbox"], table["sockets"]
        reader = asyncio.ensure_future(_read_into(ws, inbox))
        for step in range(len(frames[-1]) - 1):
            await inbox.get()
            for i, other in enumerate(sockets):
                await other.send(frames[i][len(frames) - i + step])
        for other in sockets:
            await other.close()
        reader.cancel()

    async with serve(bot, "127.0.0.1", port, max_size=2**16, compression=None):
        await asyncio.Future()


async def _read_into(ws, inbox: asyncio.Queue) -> None:
    async for text in ws:
        await inbox.put(text)


def measured(pid: int, port: int, games: int, players: int) -> tuple[float, int, list[float], list]:
    """CPU ms per action of server ``pid`` over ``games`` games, the actions, the turn-arounds
    and the frames."""
    cpu0 = cpu_s(pid)
    actions, turnarounds, script = play(port, games, players)
    return (cpu_s(pid) - cpu0) / actions * 1000, actions, turnarounds, script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="servers on CPU 0, bots on CPU 1")
    parser.add_argument("--floor-serve", nargs=2, metavar=("SCRIPT", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_serve:
        asyncio.run(serve_floor(args.floor_serve[0], int(args.floor_serve[1])))
        return
    if args.pin:
        os.sched_setaffinity(0, {1})
    arena = start_arena(env={"ARENA_ADMISSION_EXEMPT": "loopback"})
    floor = None
    script_file = Path(tempfile.mkdtemp(prefix="hanabi-floor-")) / "frames.json"
    try:
        if args.pin:
            pin_all_threads(arena.proc.pid, 0)
        ours_ms, floor_ms, loads, all_turnarounds = [], [], [], []
        for round_ in range(args.rounds):
            ms, actions, turnarounds, script = measured(arena.proc.pid, arena.hanabi_port, args.games, args.players)
            ours_ms.append(ms)
            all_turnarounds += turnarounds
            if floor is None:
                script_file.write_text(json.dumps(script))
                floor_port = free_port()
                floor = subprocess.Popen([sys.executable, __file__, "--floor-serve", str(script_file), str(floor_port)])
                wait_for_port(floor_port)
                if args.pin:
                    pin_all_threads(floor.pid, 0)
            ms, floor_actions, _, floor_script = measured(floor.pid, floor_port, args.games, args.players)
            if floor_script != json.loads(script_file.read_text()):
                raise SystemExit("the floor's bots did not receive ours' frames")
            floor_ms.append(ms)
            loads.append(os.getloadavg()[0])
            print(f"round {round_ + 1}: {actions} actions; server CPU per action: ours {ours_ms[-1]:.3f} ms, "
                  f"floor {floor_ms[-1]:.3f} ms, ours / floor {ours_ms[-1] / floor_ms[-1]:.2f}; "
                  f"load {loads[-1]:.2f} (1 min)", flush=True)
        ratios = sorted(o / f for o, f in zip(ours_ms, floor_ms))
        all_turnarounds.sort()
        p99 = all_turnarounds[int(len(all_turnarounds) * 0.99)]
        print(f"{args.rounds} rounds of {args.games} games of {args.players} players"
              f"{', servers pinned to CPU 0, bots to CPU 1' if args.pin else ''}; load {min(loads):.2f}-{max(loads):.2f}")
        print(f"server CPU per action: ours {min(ours_ms):.3f}-{max(ours_ms):.3f} ms, "
              f"floor {min(floor_ms):.3f}-{max(floor_ms):.3f} ms; "
              f"ours / floor {ratios[0]:.2f}-{ratios[-1]:.2f} (median {statistics.median(ratios):.2f})")
        print(f"action sent -> its response received (ours): p50 {statistics.median(all_turnarounds) * 1000:.1f} ms, "
              f"p99 {p99 * 1000:.1f} ms over {len(all_turnarounds)} actions")
        figure(f"Hanabi server CPU per action ({args.players} players)", round(statistics.median(ours_ms), 3), "ms")
        figure("Hanabi WebSocket floor CPU per action", round(statistics.median(floor_ms), 3), "ms")
        figure("Hanabi CPU per action, ours / floor", round(statistics.median(ratios), 2), "x", target=TARGET_RATIO)
        figure("Hanabi action -> response p99", round(p99 * 1000, 1), "ms")
    finally:
        if floor is not None:
            floor.terminate()
            floor.wait(10)
        arena.stop()


if __name__ == "__main__":
    main()
