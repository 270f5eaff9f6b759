"""``manage.py tournament``: create, run, show and cancel tournaments from the command line.

- ``create``: write a tournament for the deployment's arenas to run (they start it at their
  next sweep, or at ``--starts-at``).
- ``run``: for a bot author's own machine, in the manner of the Software-Challenge's test
  mode: create it and run it here, in this process, on the embedded default (an arena with
  every game's TCP doors, so bots may connect to them), with a progress bar and the running
  score; at the end the standings with their 95% intervals and each entrant's forced moves,
  as text or (``--json``) as JSON.  Ctrl-C cancels it cleanly and prints what was played.
- ``show ID`` (``--json``, ``--csv``), ``list``, ``join ID --entrant ...``, ``cancel ID``.

Entrants: ``builtin:<name>`` (``manage.py tournament bots <game>`` lists them),
``registered:<id>`` (a registered bot: one the server calls, or one that connects with its
key), and for games whose bots the server calls, ``http:<base URL>`` (registered here under a
local user ``local`` on first use; ``http:<url>#seed`` for the seed's path style).
"""
from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from games.arena import registry
from games.arena.bots.bot_sockets import bot_socket_addresses
from games.arena.models import RegisteredBot, Tournament
from games.arena.play.arena import ListenerError
from games.arena.tournaments import schedule, standings

#: Seconds between two progress reads while ``run`` waits for its tournament.
POLL_S = 0.5


def _http_entrant(game: str, spec_text: str) -> str:
    """``registered:<id>`` for an ``http:<url>`` entrant: the local user's bot with that base
    URL, registered on first use (checked as any registered URL is)."""
    from games.arena.bots import http_bots

    url, _, style = spec_text.partition("#")
    spec = registry.get(game)
    if not spec.calls_bots:
        raise CommandError(f"{spec.title} bots connect to the arena: use registered:<id>, not an http: URL")
    try:
        url = http_bots.check_url(url)
    except ValueError as exc:
        raise CommandError(f"{spec_text}: {exc}") from None
    user, _ = get_user_model().objects.get_or_create(username="local")
    bot = RegisteredBot.objects.filter(owner=user, game=game, base_url=url).first()
    if bot is None:
        name = url.split("://", 1)[-1][:40]
        with transaction.atomic():
            bot = RegisteredBot.objects.create(owner=user, game=game, name=name, base_url=url,
                                               path_style=RegisteredBot.PathStyle.SEED if style == "seed"
                                               else RegisteredBot.PathStyle.KIT)
    return f"registered:{bot.pk}"


def _creator(username: str | None, entrants: list[str]) -> int | None:
    """The user a tournament made here is created as (its creator may enter their own
    registered bots unshared, schedule.create): ``username``'s, else the one owner of the
    unshared registered bots among ``entrants`` (a bot author running their own bot, or the
    ``local`` user's HTTP bots), else nobody.  Raises ``CommandError`` for an unknown user."""
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user {username!r}.")
        return user.pk
    ids = [int(key) for e in entrants if e.startswith("registered:")  # a bridge pair: registered:<id>+<id>
           for key in e.split(":", 1)[1].split("+") if key.isdigit()]
    owners = set(RegisteredBot.objects.filter(pk__in=ids, shared=False).values_list("owner_id", flat=True))
    return owners.pop() if len(owners) == 1 else None


def _config(pairs: list[str]) -> dict:
    config = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise CommandError(f"--config takes key=value, not {pair!r}")
        config[key] = int(value) if value.lstrip("-").isdigit() else value
    return config


class Command(BaseCommand):
    help = "Create, run, show or cancel tournaments (see the module docstring)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        for name in ("create", "run"):
            p = sub.add_parser(name, help="create a tournament" if name == "create"
                               else "create a tournament and run it here to the end")
            p.add_argument("--game", required=True, choices=[g.slug for g in registry.all_games()])
            p.add_argument("--format", default="round_robin", choices=Tournament.Format.values)
            p.add_argument("--entrant", action="append", default=[], required=True,
                           help="builtin:<name>, registered:<id> or http:<url> (repeat); bridge pairs "
                                "also registered:<id>+<id>")
            p.add_argument("--config", action="append", default=[], help="key=value of the game's configuration")
            p.add_argument("--name", default="")
            p.add_argument("--per-pairing", type=int, default=1,
                           help="round robin: matches per pairing; duplicate: deals per pairing; "
                                "mitchell, howell: boards per round")
            p.add_argument("--scoring", default="", choices=["", *Tournament.Scoring.values],
                           help="mitchell, howell (bridge pairs): scoring across the field")
            p.add_argument("--rounds", type=int, default=0, help="Swiss rounds (0: enough for the entrants)")
            p.add_argument("--at-once", type=int, default=4, help="matches running at once")
            p.add_argument("--think", type=int, default=None, help="bots' seconds per move")
            p.add_argument("--pace", type=float, default=0.0, help="least seconds per move")
            p.add_argument("--unrated", action="store_true")
            p.add_argument("--late-join", action="store_true")
            p.add_argument("--wait", type=float, default=60.0,
                           help="seconds a match waits for a connecting entrant before it forfeits")
            p.add_argument("--early-stop", action="store_true",
                           help="two entrants: stop once one is better with 95%% confidence")
            p.add_argument("--starts-at", default=None, help="ISO time (create only; default now)")
            p.add_argument("--json", action="store_true", help="print the result as JSON")
            p.add_argument("--as", dest="as_user", default=None, metavar="USERNAME",
                           help="create it as this user, who may enter their own bots unshared (default: the "
                                "owner of the unshared registered bots entered, when they have one owner)")
            p.add_argument("--no-migrate", action="store_true")
        p = sub.add_parser("show", help="a tournament's standings")
        p.add_argument("id", type=int)
        p.add_argument("--json", action="store_true")
        p.add_argument("--csv", action="store_true")
        sub.add_parser("list", help="the tournaments")
        p = sub.add_parser("join", help="enter a bot before the start (or late into a Swiss that allows it)")
        p.add_argument("id", type=int)
        p.add_argument("--entrant", required=True, help="builtin:<name>, registered:<id> or http:<url>")
        p = sub.add_parser("cancel", help="cancel a tournament (its finished matches stay)")
        p.add_argument("id", type=int)
        p = sub.add_parser("bots", help="a game's built-in bots")
        p.add_argument("game", choices=[g.slug for g in registry.all_games()])

    def handle(self, *args, action, **options):
        return getattr(self, f"_{action}")(**options)

    # --- create and run ---------------------------------------------------------------
    def _create(self, **o) -> None:
        if not o["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        tournament = self._make(o, starts_at=datetime.fromisoformat(o["starts_at"]) if o["starts_at"] else None)
        self.stdout.write(f"tournament {tournament.pk} created: {tournament.name} "
                          f"({tournament.entrants.count()} entrants); the arenas start it at "
                          f"{timezone.localtime(tournament.starts_at):%Y-%m-%d %H:%M:%S}")

    def _make(self, o: dict, starts_at=None) -> Tournament:
        entrants = [_http_entrant(o["game"], e[5:]) if e.startswith("http:") else e for e in o["entrant"]]
        try:
            return schedule.create(
                game=o["game"], config=_config(o["config"]), format=o["format"], entrants=entrants, name=o["name"],
                per_pairing=o["per_pairing"], rounds=o["rounds"], at_once=o["at_once"], think_s=o["think"],
                pace_s=o["pace"], rated=not o["unrated"], late_join=o["late_join"], wait_s=o["wait"],
                early_stop=o["early_stop"], starts_at=starts_at, scoring=o["scoring"],
                created_by_id=_creator(o["as_user"], entrants))
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _run(self, **o) -> None:
        if not o["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        tournament = self._make(o)
        if o["verbosity"] < 2:  # the progress bar says it: no line per match
            logging.getLogger("arena").setLevel(logging.WARNING)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            if o["game"] in bot_socket_addresses().values():
                # The game's bots connect over WebSocket (Hanabi): Daphne serves that port, on
                # one loop with the arena, as ``serve --role arena`` does; Ctrl-C stops the
                # reactor (no KeyboardInterrupt here), so a tournament still running after it
                # was stopped so.
                from games.arena.management.commands.serve import Command as Serve

                Serve()._daphne(settings.ARENA["HOST"], None, with_arena=True,
                                then=lambda arena: self._watch(tournament, quiet=o["json"]))
            else:
                asyncio.run(self._run_here(tournament, quiet=o["json"]))
        except KeyboardInterrupt:
            pass
        except ListenerError as exc:
            schedule.cancel(tournament.pk, f"not run: {exc}")
            raise CommandError(str(exc)) from None
        tournament.refresh_from_db()
        if tournament.status in (Tournament.Status.SCHEDULED, Tournament.Status.RUNNING):
            schedule.cancel(tournament.pk, "stopped with Ctrl-C")  # its arena stopped its matches
            self.stderr.write("stopped with Ctrl-C: what was played so far follows")
            tournament.refresh_from_db()
        self._print(tournament, as_json=o["json"])

    async def _run_here(self, tournament: Tournament, quiet: bool) -> None:
        """An arena in this process (every game's TCP doors) runs the tournament, with every
        other waiting table of this database as any arena does, until it is over."""
        from games.arena.play.arena import Arena

        arena = Arena()
        await arena.start()
        try:
            await self._watch(tournament, quiet)
        finally:
            await arena.stop()

    async def _watch(self, tournament: Tournament, quiet: bool) -> None:
        """A progress bar on stderr with the running score, until the tournament is over."""
        from asgiref.sync import sync_to_async
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(file=sys.stderr)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=console, disable=quiet) as bar:
            task = bar.add_task(tournament.name, total=None)
            while True:
                await asyncio.sleep(POLL_S)
                t, table = await sync_to_async(_read)(tournament.pk)
                leaders = "  ".join(f"{r.name} {r.points:g}" for r in table.rows[:4])
                bar.update(task, total=table.planned, completed=table.done,
                           description=f"{t.name} [{leaders}]")
                if t.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
                    break

    # --- reading --------------------------------------------------------------------
    def _print(self, tournament: Tournament, as_json: bool = False, as_csv: bool = False) -> None:
        table = standings.compute(tournament)
        if as_json:
            self.stdout.write(json.dumps(standings.as_json(table), indent=1))
            return
        if as_csv:
            self.stdout.write(standings.as_csv(table), ending="")
            return
        from rich.console import Console
        from rich.table import Table as RichTable

        t = tournament
        out = RichTable(title=f"{t.name}: {t.get_format_display()}, {t.get_status_display()}"
                              f" ({table.done} of {table.planned} matches)")
        pairs = t.format in schedule.MOVEMENTS  # bridge pairs: field, boards, matchpoints or IMPs
        points = ("matchpoints" if t.scoring == Tournament.Scoring.MATCHPOINTS else "IMPs") if pairs else "points"
        columns = (("#", "field", "pair", "rounds", "boards", points) if pairs
                   else ("#", "entrant", "games", points, "W-D-L"))
        for column in (*columns, table.statistic, "95% interval", "forfeits", "forced moves"):
            out.add_column(column, justify="left" if column in ("entrant", "pair", "field") else "right")
        for n, r in zip(standings.ranks(table), table.rows):
            interval = "" if r.low is None or r.low != r.low else f"{r.low:.3f} to {r.high:.3f}"
            first = ((str(n), r.field, r.name, str(r.games), str(r.boards), f"{r.points:g}") if pairs
                     else (str(n), r.name, str(r.games), f"{r.points:g}", f"{r.wins}-{r.draws}-{r.losses}"))
            out.add_row(*first, "" if r.stat is None else f"{r.stat:.3f}", interval, str(r.forfeits), str(r.forced))
        console = Console(file=self.stdout, width=120)
        console.print(out)
        if t.note:
            console.print(t.note)

    def _show(self, id, json=False, csv=False, **_) -> None:
        tournament = Tournament.objects.filter(pk=id).first()
        if tournament is None:
            raise CommandError(f"no tournament {id}")
        self._print(tournament, as_json=json, as_csv=csv)

    def _list(self, **_) -> None:
        for t in Tournament.objects.order_by("-pk")[:100]:
            self.stdout.write(f"{t.pk:6d}  {t.status:9s}  {t.game:10s}  {t.format:11s}  {t.name}")

    def _join(self, id, entrant, **_) -> None:
        t = Tournament.objects.filter(pk=id).first()
        if t is None:
            raise CommandError(f"no tournament {id}")
        choice = _http_entrant(t.game, entrant[5:]) if entrant.startswith("http:") else entrant
        try:
            row = schedule.join(id, choice, t.created_by_id)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{row.display_name} entered tournament {id} as entrant {row.index} "
                          f"(from round {row.joined_round})")

    def _cancel(self, id, **_) -> None:
        live = schedule.cancel(id)
        self.stdout.write(f"tournament {id} cancelled; {len(live)} live matches end at their arenas' next sweep")

    def _bots(self, game, **_) -> None:
        for name, (title, _) in registry.get(game).builtin_bots.items():
            self.stdout.write(f"builtin:{name}  ({title})")


def _read(tournament_id: int):
    t = Tournament.objects.get(pk=tournament_id)
    return t, standings.compute(t)
