"""``manage.py serve``: the whole arena in one process, or one of its roles.

- ``--role all`` (default): Daphne (HTTP + WebSockets) and the arena (bot listeners, match
  runners) on one asyncio loop.
- ``--role web``: Daphne only; needs ``REDIS_URL`` so it can reach an arena process.
- ``--role arena``: bot listeners and runners only.

Migrations are applied first unless ``--no-migrate``.
"""
from __future__ import annotations

import asyncio
import gc
import logging
import signal

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

log = logging.getLogger("arena")


def freeze_startup_heap() -> None:
    """Exempt what start-up loaded (Django, the apps, the libraries: most of the heap) from
    the garbage collector's full collections, which otherwise walk all of it every second or
    so under load and stall the loop: about 60 ms each with 500 spectators on a match, the
    whole tail of the views' delivery time (benchmarks/spectator_fanout.py).  Objects made
    later are collected as before; the frozen ones are freed by reference counting as usual,
    only cycles among them stay (start-up objects live for the whole process anyway)."""
    gc.collect()
    gc.freeze()


class Command(BaseCommand):
    help = "Run the arena: web server, bot listeners and match runners."

    def add_arguments(self, parser):
        parser.add_argument("--role", choices=["all", "web", "arena"], default="all")
        parser.add_argument("--host", default=settings.ARENA["HOST"])
        parser.add_argument("--port", type=int, default=settings.ARENA["HTTP_PORT"])
        parser.add_argument("--no-migrate", action="store_true")

    def handle(self, *args, role, host, port, no_migrate, **options):
        if role == "web" and not settings.REDIS_URL:
            raise CommandError("--role web needs REDIS_URL: the in-memory channel layer cannot reach another process")
        # A server started from a shell without job control inherits SIGINT as ignored, and
        # then neither Twisted nor asyncio would stop cleanly on Ctrl-C (or a test's SIGINT).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if not no_migrate:
            call_command("migrate", interactive=False, verbosity=0)
        if role == "arena":
            asyncio.run(self._arena_only())
        else:
            self._daphne(host, port, with_arena=role == "all")

    def _daphne(self, host: str, port: int, with_arena: bool) -> None:
        from daphne.server import Server  # installs the asyncio reactor; import before twisted
        from twisted.internet import defer, reactor

        from webapp.asgi import application

        arena = None
        if with_arena:
            from games.arena.service import Arena

            arena = Arena()

        def ready():
            log.info("web server on http://%s:%d/", host, port)
            freeze_startup_heap()
            if arena is not None:
                asyncio.ensure_future(arena.start())

        if arena is not None:
            reactor.addSystemEventTrigger(
                "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(arena.stop())))
        Server(application=application, endpoints=[f"tcp:port={port}:interface={host}"],
               ready_callable=ready, verbosity=0).run()

    async def _arena_only(self) -> None:
        from games.arena.service import Arena

        arena = Arena()
        await arena.start()
        freeze_startup_heap()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info("arena running (no web server); Ctrl-C stops it")
        await stop.wait()
        await arena.stop()
