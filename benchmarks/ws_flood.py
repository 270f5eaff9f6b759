"""Hostile browser clients against the one-process server: memory and a healthy match's pace.

What it measures
    * the server process's resident memory (``VmRSS`` from ``/proc/<pid>/status``) before and
      after (and at the peak during) ``--flood-s`` seconds of one anonymous WebSocket on the
      healthy match's page sending small messages (``{"type": "resync"}``, the one that costs
      the server the most) as fast as it can, reconnecting whenever the server closes it;
    * the same for ``--spectators`` clients that open the match's WebSocket and then never
      read a byte, for ``--idle-s`` seconds;
    * the healthy match's request rate (``move_request`` messages per second the two bots
      receive) before the attacks and during each of them.

How
    The server is ``manage.py serve`` (``tests.serverproc.start_arena``: free ports, its own
    data directory).  Two scripted TCP bots (``tests.ld_bot.LDBot``) sit at the automatic
    table, a match of 1000 games that outlasts the run, and answer after ``--bot-delay``
    seconds.  The flooder is the ``websockets`` package's asyncio client (it stops reading
    once its own small receive queue is full, as a client that never reads would); the idle
    spectators are plain sockets that send the opening handshake and never call ``recv``.

Bar: memory grows less than 50 MB, the healthy rate moves less than 20%.
Run: ``.venv/bin/python benchmarks/ws_flood.py`` (about 100 s).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.spectator_fanout import running_match  # noqa: E402
from tests.ld_bot import LDBot, slow_simple_move  # noqa: E402
from tests.serverproc import start_arena  # noqa: E402


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Sampler:
    """Samples a process's RSS every 0.2 s on a thread; ``peak`` since the last ``reset``."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0.0, threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stop.wait(0.2):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except (OSError, RuntimeError):
                return

    def reset(self):
        self.peak = rss_mb(self.pid)


def request_rate(bots: list[LDBot], seconds: float) -> float:
    """``move_request`` messages the bots received per second over the next ``seconds``."""
    before = sum(len(b.requests()) for b in bots)
    time.sleep(seconds)
    return (sum(len(b.requests()) for b in bots) - before) / seconds


async def flood(url: str, origin: str, seconds: float) -> dict:
    """One client at a time sending ``{"type": "resync"}`` as fast as it can for ``seconds``;
    a closed connection is reopened.  Returns messages sent, connections, close reasons."""
    import websockets

    sent, connections, reasons = 0, 0, {}
    end = time.monotonic() + seconds
    frame = json.dumps({"type": "resync"})
    while time.monotonic() < end:
        connections += 1
        try:
            async with websockets.connect(url, additional_headers={"Origin": origin}, max_queue=4) as ws:
                while time.monotonic() < end:
                    for _ in range(100):
                        await ws.send(frame)
                    sent += 100
        except websockets.ConnectionClosed as exc:
            key = f"{exc.rcvd.code} {exc.rcvd.reason}" if exc.rcvd else "no close frame"
            reasons[key] = reasons.get(key, 0) + 1
        except OSError as exc:
            reasons[type(exc).__name__] = reasons.get(type(exc).__name__, 0) + 1
            await asyncio.sleep(0.05)
    return {"sent": sent, "connections": connections, "reasons": reasons}


def idle_spectators(port: int, match_id: int, count: int) -> list[socket.socket]:
    """``count`` sockets that complete nothing but send the WebSocket opening handshake."""
    socks = []
    for _ in range(count):
        s = socket.socket()
        # A small receive window, as a hostile client would ask for: the kernel then holds
        # little of what the server writes, and the rest stays in the server's buffers.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /ws/matches/{match_id}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Origin: http://127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        socks.append(s)
    return socks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flood-s", type=float, default=30.0)
    parser.add_argument("--spectators", type=int, default=50)
    parser.add_argument("--idle-s", type=float, default=40.0)
    parser.add_argument("--bot-delay", type=float, default=0.01, help="each bot's delay before answering (s)")
    parser.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for the server (repeatable)")
    args = parser.parse_args()

    env = {"LIARS_DICE_AUTO_GAMES": "1000", "LOG_LEVEL": "WARNING"}
    env.update(kv.split("=", 1) for kv in args.server_env)
    server = start_arena(env=env)
    pid = server.proc.pid
    bots, socks = [], []
    try:
        bots = [LDBot(server.liars_dice_port, f"bot{k}", decide=slow_simple_move(args.bot_delay, random.Random(k))) for k in range(2)]
        match_id = running_match(server.data_dir / "arena.sqlite3")
        sampler = Sampler(pid)
        time.sleep(2.0)  # let start-up settle
        base_rate = request_rate(bots, 5.0)
        print(f"WebSocket floods against match {match_id}; healthy bots answer after {args.bot_delay * 1000:.0f} ms"
              + (f"; server env {args.server_env}" if args.server_env else ""))
        print(f"  healthy match, no attack: {base_rate:.1f} requests/s; server RSS {rss_mb(pid):.0f} MB")

        # One flooding connection.
        before = rss_mb(pid)
        sampler.reset()
        result: dict = {}
        thread = threading.Thread(target=lambda: result.update(asyncio.run(flood(
            f"ws://127.0.0.1:{server.http_port}/ws/matches/{match_id}/", server.url, args.flood_s))))
        thread.start()
        time.sleep(2.0)
        rate = request_rate(bots, max(1.0, args.flood_s - 4.0))
        thread.join()
        time.sleep(2.0)
        after = rss_mb(pid)
        print(f"  one flooding connection for {args.flood_s:.0f} s: RSS {before:.0f} -> {after:.0f} MB "
              f"(+{after - before:.0f} MB, peak +{sampler.peak - before:.0f} MB); healthy rate {rate:.1f} requests/s "
              f"({(rate - base_rate) / base_rate * 100:+.0f}%); {result.get('sent', 0)} messages sent over "
              f"{result.get('connections', 0)} connection(s), closed with {result.get('reasons')}")

        # Spectators that never read.
        before = rss_mb(pid)
        sampler.reset()
        socks = idle_spectators(server.http_port, match_id, args.spectators)
        time.sleep(2.0)
        rate = request_rate(bots, max(1.0, args.idle_s - 2.0))
        after = rss_mb(pid)
        still_open = 0
        for s in socks:
            s.setblocking(False)
            try:
                still_open += s.recv(1, socket.MSG_PEEK) != b""
            except BlockingIOError:
                still_open += 1
            except OSError:
                pass
        print(f"  {args.spectators} spectators that never read, for {args.idle_s:.0f} s: RSS {before:.0f} -> {after:.0f} MB "
              f"(+{after - before:.0f} MB, peak +{sampler.peak - before:.0f} MB); healthy rate {rate:.1f} requests/s "
              f"({(rate - base_rate) / base_rate * 100:+.0f}%); {still_open} of them still connected")
        alive = server.proc.poll() is None and not any(b.closed.is_set() for b in bots)
        print(f"  match still running: {alive}.  Bar: memory +50 MB at most, healthy rate within 20%.")
        sampler.stop.set()
    finally:
        for s in socks:
            s.close()
        for b in bots:
            b.close()
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
