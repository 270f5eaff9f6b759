"""Hanabi bot against bot over the WebSocket protocol: our server against WebSocket floors.

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
      else;
    * **the mandated server's floors** (issue 25: the project runs on Daphne and Channels):
      the same script played the same way by a bare ASGI WebSocket application served by
      Daphne as it ships (``--daphne-serve``: no Django, no Channels, none of our changes to
      Daphne's classes; the same frame bounds as ``manage.py serve``), and by a Channels
      ``AsyncWebsocketConsumer`` on the same Daphne (Channels' dispatch and our in-memory
      channel layer, without Channels' hop to a thread per message, as our bot consumer).
      If Daphne's floor alone costs 2x the ``websockets`` floor, target 2 cannot be met on
      the mandated server.

    For each: the server process's CPU (user + system, every thread, ``/proc/<pid>/stat``)
    from before the first bot connects to after the last game, over the actions played (a
    bot's play, discard or hint; connecting, joining and starting are in the CPU too, on
    every side), and the headline ratio ours / floor per round, with min–max over the rounds
    and the 1-minute load average; beside it ours / Daphne's floor and Daphne's floor /
    the ``websockets`` floor.  Each round plays ours, then the floors, in turn.  With
    ``--py-spy``, one more round of ours and of Daphne's floor under py-spy
    (benchmarks/pyspy_split.py), not counted: their CPU by layer.  Ours also gives the time
    from a bot sending its action to its receiving that action's response (p50, p99: the
    server's turn-around, loopback included).  With ``--pin`` (default) every server runs on
    CPU 0 and the bots (this process) on CPU 1.

    .venv/bin/python benchmarks/hanabi_ws_games.py [--games 20] [--players 3] [--rounds 3] [--py-spy]
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


# --- the floors ---------------------------------------------------------------------------------
# Every floor plays the same script the same way (module docstring); only the server differs.
def _bot_of(text: str) -> tuple[int, int]:
    """(game, player) of a ``CONNECTION_REQUEST`` frame: its bot is named ``g{game}-{player}``."""
    return tuple(int(part) for part in json.loads(text)["name"][1:].split("-"))


async def _join(tables: dict, script: list, game: int, player: int, send, close) -> dict:
    """Seat ``player`` of ``game`` (``send(text)`` and ``close()`` are its socket's coroutine
    functions): one frame to each player already joined, itself included; returns the table."""
    if player == 0:
        tables[game] = {"senders": [], "closers": [], "inbox": asyncio.Queue()}
    table, frames = tables[game], script[game]
    table["senders"].append(send)
    table["closers"].append(close)
    for i, other in enumerate(table["senders"]):
        await other(frames[i][player - i])
    return table


async def _play(table: dict, frames: list) -> None:
    """The game, run by its last player's connection: one frame to every player per frame
    any of them sends (the table's inbox), until the frames are out; then every socket closes."""
    inbox, senders = table["inbox"], table["senders"]
    for step in range(len(frames[-1]) - 1):
        await inbox.get()
        for i, other in enumerate(senders):
            await other(frames[i][len(frames) - i + step])
    for close in table["closers"]:
        await close()


async def serve_floor(script_path: str, port: int) -> None:
    """The ``websockets`` floor (module docstring): game ``k``'s player ``i`` (its bot is
    named ``g{k}-{i}``) gets ``script[k][i]`` in order: one frame to each player already
    joined when a player joins (the ``CONNECTION_RESPONSE``s), then one frame to every player
    per frame any of them sends, until the frames are out; then every socket is closed."""
    from websockets.asyncio.server import serve

    script = json.loads(Path(script_path).read_text())
    tables: dict[int, dict] = {}

    async def bot(ws):
        game, player = _bot_of(await ws.recv())
        table = await _join(tables, script, game, player, ws.send, ws.close)
        if player < len(script[game]) - 1:  # the last to join runs the game
            async for text in ws:
                await table["inbox"].put(text)
            return
        reader = asyncio.ensure_future(_read_into(ws, table["inbox"]))
        await _play(table, script[game])
        reader.cancel()

    async with serve(bot, "127.0.0.1", port, max_size=2**16, compression=None):
        await asyncio.Future()


async def _read_into(ws, inbox: asyncio.Queue) -> None:
    async for text in ws:
        await inbox.put(text)


def asgi_floor(script: list):
    """The bare ASGI floor: the same script through a plain ASGI WebSocket application (no
    Django, no Channels), for :func:`serve_daphne`."""
    tables: dict[int, dict] = {}

    async def app(scope, receive, send):
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        first = await receive()
        if first["type"] != "websocket.receive":
            return

        async def send_text(text: str) -> None:
            await send({"type": "websocket.send", "text": text})

        async def close() -> None:
            await send({"type": "websocket.close"})

        game, player = _bot_of(first["text"])
        table = await _join(tables, script, game, player, send_text, close)
        if player < len(script[game]) - 1:
            await _receive_into(receive, table["inbox"])
            return
        reader = asyncio.ensure_future(_receive_into(receive, table["inbox"]))
        await _play(table, script[game])
        await reader  # until its disconnect (an ASGI application that returns is reaped)

    return app


async def _receive_into(receive, inbox: asyncio.Queue) -> None:
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        await inbox.put(message.get("text"))


def channels_floor(script: list):
    """The same script through a Channels ``AsyncWebsocketConsumer`` (Channels' consumer,
    dispatch and channel layer, our ``LocalChannelLayer`` as ours has; no Django project, no
    middleware), for :func:`serve_daphne`.  Its ``dispatch`` skips Channels' hop to a worker
    thread per message, as ours does (games/arena/bots/bot_sockets.py)."""
    import django
    from django.conf import settings

    settings.configure(CHANNEL_LAYERS={"default": {"BACKEND": "games.arena.play.layers.LocalChannelLayer",
                                                   "CONFIG": {"capacity": 1000}}})
    django.setup()
    from channels.consumer import get_handler_name
    from channels.generic.websocket import AsyncWebsocketConsumer

    tables: dict[int, dict] = {}

    class FloorConsumer(AsyncWebsocketConsumer):
        table: dict | None = None

        async def dispatch(self, message):
            await getattr(self, get_handler_name(message))(message)

        async def receive(self, text_data=None, bytes_data=None):
            if self.table is not None:
                await self.table["inbox"].put(text_data)
                return
            game, player = _bot_of(text_data)
            self.table = await _join(tables, script, game, player, self.send_text, self.close)
            if player == len(script[game]) - 1:
                self.game_task = asyncio.ensure_future(_play(self.table, script[game]))

        async def send_text(self, text: str) -> None:
            await self.send(text_data=text)

    return FloorConsumer.as_asgi()


def serve_daphne(script_path: str, port: int, kind: str) -> None:
    """A Daphne floor: ``kind`` "asgi" (:func:`asgi_floor`) or "channels"
    (:func:`channels_floor`) served by Daphne with the frame bounds ``manage.py serve`` gives
    it, as it ships (none of our changes to its classes)."""
    from daphne.server import Server  # installs Twisted's asyncio reactor: first

    script = json.loads(Path(script_path).read_text())
    app = asgi_floor(script) if kind == "asgi" else channels_floor(script)
    Server(application=app, endpoints=[f"tcp:port={port}:interface=127.0.0.1"], verbosity=0,
           websocket_max_message_size=2**16, websocket_max_frame_size=2**16).run()


def measured(pid: int, port: int, games: int, players: int) -> tuple[float, int, list[float], list]:
    """CPU ms per action of server ``pid`` over ``games`` games, the actions, the turn-arounds
    and the frames."""
    cpu0 = cpu_s(pid)
    actions, turnarounds, script = play(port, games, players)
    return (cpu_s(pid) - cpu0) / actions * 1000, actions, turnarounds, script


#: The floors, in the order they play in each round: (label, how this script serves it).
FLOORS = (("websockets", "--floor-serve"), ("Daphne", "asgi"), ("Daphne + Channels", "channels"))


def start_floor(how: str, script_file: Path, pin: bool) -> tuple[subprocess.Popen, int]:
    """A floor server in a process of its own (pinned to CPU 0 with ``pin``): its process and port."""
    port = free_port()
    if how == "--floor-serve":
        command = [sys.executable, __file__, "--floor-serve", str(script_file), str(port)]
    else:
        command = [sys.executable, __file__, "--daphne-serve", str(script_file), str(port), how]
    proc = subprocess.Popen(command)
    wait_for_port(port, proc=proc)
    if pin:
        pin_all_threads(proc.pid, 0)
    return proc, port


def spread(values: list[float], digits: int = 3) -> str:
    """``min-max (median m)`` of a series."""
    return (f"{min(values):.{digits}f}-{max(values):.{digits}f} "
            f"(median {statistics.median(values):.{digits}f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="servers on CPU 0, bots on CPU 1")
    parser.add_argument("--py-spy", action="store_true",
                        help="after the rounds, one more round of ours and of the Daphne floor under py-spy "
                        "(not counted): the split of their CPU by layer")
    parser.add_argument("--floor-serve", nargs=2, metavar=("SCRIPT", "PORT"), help=argparse.SUPPRESS)
    parser.add_argument("--daphne-serve", nargs=3, metavar=("SCRIPT", "PORT", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_serve:
        asyncio.run(serve_floor(args.floor_serve[0], int(args.floor_serve[1])))
        return
    if args.daphne_serve:
        serve_daphne(args.daphne_serve[0], int(args.daphne_serve[1]), args.daphne_serve[2])
        return
    if args.pin:
        os.sched_setaffinity(0, {1})
    arena = start_arena(env={"ARENA_ADMISSION_EXEMPT": "loopback"})
    floors: dict[str, tuple[subprocess.Popen, int]] = {}
    script_file = Path(tempfile.mkdtemp(prefix="hanabi-floor-")) / "frames.json"
    try:
        if args.pin:
            pin_all_threads(arena.proc.pid, 0)
        ours_ms, loads, all_turnarounds = [], [], []
        floor_ms: dict[str, list[float]] = {label: [] for label, _ in FLOORS}
        for round_ in range(args.rounds):
            ms, actions, turnarounds, script = measured(arena.proc.pid, arena.hanabi_port, args.games, args.players)
            ours_ms.append(ms)
            all_turnarounds += turnarounds
            if not floors:
                script_file.write_text(json.dumps(script))
                for label, how in FLOORS:
                    floors[label] = start_floor(how, script_file, args.pin)
            for label, _ in FLOORS:
                proc, port = floors[label]
                ms, floor_actions, _, floor_script = measured(proc.pid, port, args.games, args.players)
                if floor_script != json.loads(script_file.read_text()):
                    raise SystemExit(f"the {label} floor's bots did not receive ours' frames")
                floor_ms[label].append(ms)
            loads.append(os.getloadavg()[0])
            ws, daphne, chan = (floor_ms[label][-1] for label, _ in FLOORS)
            print(f"round {round_ + 1}: {actions} actions; server CPU per action: ours {ours_ms[-1]:.3f} ms, "
                  f"websockets floor {ws:.3f} ms, ours / floor {ours_ms[-1] / ws:.2f}; Daphne floor {daphne:.3f} ms, "
                  f"ours / Daphne {ours_ms[-1] / daphne:.2f}, Daphne / websockets {daphne / ws:.2f}; "
                  f"Daphne + Channels {chan:.3f} ms, ours / it {ours_ms[-1] / chan:.2f}; "
                  f"load {loads[-1]:.2f} (1 min)", flush=True)
        ws_ms, daphne_ms, chan_ms = (floor_ms[label] for label, _ in FLOORS)
        ratios = sorted(o / f for o, f in zip(ours_ms, ws_ms))
        all_turnarounds.sort()
        p99 = all_turnarounds[int(len(all_turnarounds) * 0.99)]
        print(f"{args.rounds} rounds of {args.games} games of {args.players} players"
              f"{', servers pinned to CPU 0, bots to CPU 1' if args.pin else ''}; load {min(loads):.2f}-{max(loads):.2f}")
        print(f"server CPU per action: ours {min(ours_ms):.3f}-{max(ours_ms):.3f} ms, "
              f"floor {min(ws_ms):.3f}-{max(ws_ms):.3f} ms; "
              f"ours / floor {ratios[0]:.2f}-{ratios[-1]:.2f} (median {statistics.median(ratios):.2f})")
        print(f"the mandated server's floors (same rounds, alternating): Daphne (bare ASGI) {spread(daphne_ms)} ms, "
              f"Daphne + Channels consumer {spread(chan_ms)} ms")
        by_round = {
            "ours / Daphne floor": [o / d for o, d in zip(ours_ms, daphne_ms)],
            "Daphne floor / websockets floor": [d / w for d, w in zip(daphne_ms, ws_ms)],
            "Daphne + Channels / Daphne": [c / d for c, d in zip(chan_ms, daphne_ms)],
            "ours / Daphne + Channels floor": [o / c for o, c in zip(ours_ms, chan_ms)],
        }
        for name, values in by_round.items():
            print(f"  {name}: {spread(values, 2)}")
        print(f"action sent -> its response received (ours): p50 {statistics.median(all_turnarounds) * 1000:.1f} ms, "
              f"p99 {p99 * 1000:.1f} ms over {len(all_turnarounds)} actions")
        figure(f"Hanabi server CPU per action ({args.players} players)", round(statistics.median(ours_ms), 3), "ms")
        figure("Hanabi WebSocket floor CPU per action", round(statistics.median(ws_ms), 3), "ms")
        figure("Hanabi CPU per action, ours / floor", round(statistics.median(ratios), 2), "x", target=TARGET_RATIO)
        figure("Hanabi CPU per action, Daphne floor / websockets floor",
               round(statistics.median(by_round["Daphne floor / websockets floor"]), 2), "x")
        figure("Hanabi CPU per action, ours / Daphne floor",
               round(statistics.median(by_round["ours / Daphne floor"]), 2), "x")
        figure("Hanabi action -> response p99", round(p99 * 1000, 1), "ms")
        if args.py_spy:
            profile_round(arena, floors["Daphne"], args)
    finally:
        for proc, _ in floors.values():
            proc.terminate()
            proc.wait(10)
        arena.stop()


def profile_round(arena, daphne: tuple[subprocess.Popen, int], args) -> None:
    """One more round of ours, then of the Daphne floor, each under py-spy (not counted)."""
    from benchmarks.pyspy_split import Sampler, report

    for what, pid, port in (("ours", arena.proc.pid, arena.hanabi_port),
                            ("the Daphne floor", daphne[0].pid, daphne[1])):
        sampler = Sampler(pid, cpu=1 if args.pin else None).start()
        if sampler is None:
            print("py-spy is not installed (pip install py-spy): no profile")
            return
        ms, actions, _, _ = measured(pid, port, args.games, args.players)
        samples = sampler.stop()
        report(samples, f"{what}, one more round of {args.games} games ({ms:.3f} ms CPU per action under "
                        f"py-spy; load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
