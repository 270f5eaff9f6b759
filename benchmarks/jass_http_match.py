"""A full Jass match (SCHIEBER_1000) against four local HTTP bots: the server's own time per
bot call, beyond the bot's own time.

The four bots are one small asyncio HTTP/1.1 keep-alive service in a separate process (so it
does not share the server's core), kit-style paths, answering a legal card.  Each answer
carries ``bot_ms``: the time inside the bot process from the request's first byte to the
answer being written.  The arena runs in this process with its real runner, HTTP seat
endpoints, shared httpx client and event writer (SQLite in a temporary directory); for every
call it records the wall time from sending to having the decoded, checked answer, minus
``bot_ms``.  That difference is what the server spends per call (encoding, httpx, the
loopback, decoding, the legality check), the figure the target is about.

Target: p99 under 2 ms beyond the bot's own time.

    .venv/bin/python benchmarks/jass_http_match.py [matches, default 3]
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def serve_bots(port_queue) -> None:
    """The bot process: a minimal keep-alive HTTP server, one legal card per request."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from tests.jass_bot_service import legal_card

    class Bot(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport, self.buf, self.started = transport, b"", None

        def data_received(self, data):
            if self.started is None:
                self.started = time.perf_counter()
            self.buf += data
            while b"\r\n\r\n" in self.buf:
                head, rest = self.buf.split(b"\r\n\r\n", 1)
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                if len(rest) < length:
                    return
                body, self.buf = rest[:length], rest[length:]
                path = head.split(b" ")[1].decode()
                if path.endswith("game_info"):
                    answer = {}
                elif path.endswith("action_trump"):
                    answer = {"trump": 4}
                else:
                    answer = {"card": legal_card(json.loads(body))}
                answer["bot_ms"] = (time.perf_counter() - self.started) * 1000
                raw = json.dumps(answer).encode()
                self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                     + str(len(raw)).encode() + b"\r\n\r\n" + raw)
                self.started = time.perf_counter() if self.buf else None

    async def main():
        server = await asyncio.get_running_loop().create_server(Bot, "127.0.0.1", 0)
        port_queue.put(server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(main())


async def run(port: int, matches: int) -> None:
    from asgiref.sync import sync_to_async
    from django.contrib.auth.models import User

    from games.arena.models import Event, RegisteredBot
    from games.arena.play import tables
    from games.arena.play.arena import Arena
    from games.jass import transport

    owner = await sync_to_async(lambda: User.objects.create(username="bench"))()
    bots = []
    for i in range(4):
        bots.append(await sync_to_async(RegisteredBot.objects.create)(
            owner=owner, game="jass", name=f"bot{i}", base_url=f"http://127.0.0.1:{port}/bot{i}", path_style="kit",
            shared=True))  # seated by the arena (no sitter), so shared
    from games.arena.management.commands.serve import freeze_startup_heap

    transport.OVERHEAD_MS = overhead = []
    arena = Arena(listen=False)
    await arena.start()
    freeze_startup_heap()  # as manage.py serve does once it is up
    started = time.perf_counter()
    deals = 0
    try:
        for _ in range(matches):
            match = await sync_to_async(tables.create_table)(
                "jass", {"points_to_win": 1000}, [f"registered:{b.pk}" for b in bots], None)
            await arena.maybe_start(match.pk)
            await arena.tasks[match.pk]
            deals += (await sync_to_async(lambda: type(match).objects.get(pk=match.pk))()).result["deals"]
    finally:
        await arena.stop()
    elapsed = time.perf_counter() - started
    forced = await sync_to_async(Event.objects.filter(forced=True).count)()
    events = await sync_to_async(Event.objects.count)()
    slowest = sorted(range(len(overhead)), key=overhead.__getitem__)[-15:]
    print("slowest calls (index, ms):", [(i, round(overhead[i], 1)) for i in slowest])
    overhead.sort()
    p = lambda q: overhead[min(len(overhead) - 1, int(q * len(overhead)))]  # noqa: E731
    print(f"{matches} matches to 1000, {deals} games, {events} events ({forced} forced) in {elapsed:.1f} s "
          f"= {events / elapsed:.0f} bot calls/s")
    print(f"server's own time per bot call (wall time minus the bot's own time), {len(overhead)} calls: "
          f"p50 {p(0.5):.3f} ms, p90 {p(0.9):.3f} ms, p99 {p(0.99):.3f} ms, max {overhead[-1]:.1f} ms, mean {statistics.fmean(overhead):.3f} ms  (target p99 < 2 ms)")
    print(f"load average: {os.getloadavg()}")


def main() -> None:
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    os.environ["ARENA_DATA_DIR"] = tempfile.mkdtemp(prefix="arena-bench-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ["ARENA_ROUND_PAUSE"] = "0"
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    ports = multiprocessing.Queue()
    bot_process = multiprocessing.Process(target=serve_bots, args=(ports,), daemon=True)
    bot_process.start()
    try:
        asyncio.run(run(ports.get(timeout=20), matches))
    finally:
        bot_process.terminate()


if __name__ == "__main__":
    main()
