"""Tournaments of Liar's Dice matches: how fast the arena runs a tournament's plan, against the
bare bot-vs-bot throughput of ``benchmarks/liars_dice_throughput.py`` in the same run, and one
arena process against two on PostgreSQL (issue 27).

What it measures
    Rounds alternate the sides (bare, TCP tournament, built-in tournament), ``--rounds`` times,
    each side in a fresh process with a fresh SQLite database:

    * **bare**: ``liars_dice_throughput.py --games G --matches M`` (one pair of its scripted
      TCP bots, playing M matches of G games one after the other on automatic tables): its
      games per second;
    * **TCP tournament**: a round robin of two registered bots over TCP with their keys (the
      same scripted bots, the same wire, the same match shape: 2 players, 6 dice, G games),
      M matches, one at a time (``at_once`` 1, as the bare pair plays), each match on new
      connections as a Liar's Dice bot plays a tournament (the server closes a connection
      after its match).  Games per second (first connect to last close, bot side), the
      runner's time per move p99 (``Arena.server_times``) and the process's peak memory;
    * **built-in tournament**: M matches of two built-in bots (random against probability),
      ``--at-once`` at a time: matches per second from the tournament's start to its end,
      time per move p99, peak memory.

    Target: the TCP tournament's games per second >= 80% of the bare pair's in the same round.

    With ``--arenas``: the built-in tournament on PostgreSQL and Redis (a fresh database per
    side from a migrated template, ``benchmarks/arenas.py``'s), run by one ``manage.py serve
    --role arena`` process and by two, alternating: matches per second.  Target: two >= 1.5x one.

How
    The arena (``Arena``, as ``serve --role arena`` starts it) runs in a child process of this
    script, the bots in a grandchild (one epoll loop); not pinned.  The load average is
    printed with each round.

Run: ``.venv/bin/python benchmarks/tournament_throughput.py`` (``--matches 2000 --games 1`` by
default; ``--help``).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import figure  # noqa: E402
from benchmarks.arenas import load, pct  # noqa: E402
from benchmarks.liars_dice_throughput import bots_main  # noqa: E402


def spread(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f}-{max(values):.{digits}f} (median {statistics.median(values):.{digits}f})"


# --- a tournament in this process (child) ------------------------------------------------------
def tournament_main(kind: str, matches: int, games: int, at_once: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="bench-tournament-"))
    try:
        os.environ["ARENA_DATA_DIR"] = str(data_dir)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
        for setting in ("LIARS_DICE_PORT", "BLOKUS_PORT", "BRIDGE_PORT", "BRIDGE_TABLE_MANAGER_PORT"):
            os.environ[setting] = "0"  # any free port
        os.environ["LOG_LEVEL"] = "WARNING"
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        print(json.dumps(asyncio.run(_tournament(kind, matches, games, at_once))), flush=True)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


async def _tournament(kind: str, matches: int, games: int, at_once: int) -> dict:
    import logging

    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model

    from games.arena.bots import bot_keys
    from games.arena.management.commands.serve import freeze_startup_heap
    from games.arena.models import Match, RegisteredBot, Tournament
    from games.arena.play.arena import Arena
    from games.arena.tournaments import schedule

    logging.getLogger("arena").setLevel(logging.INFO if os.environ.get("BENCH_VERBOSE") else logging.WARNING)
    config = {"players": 2, "dice": 6, "games": games}

    def make() -> tuple[int, list[str]]:
        user = None
        if kind == "builtin":
            entrants, keys = ["builtin:random", "builtin:probability"], []
        else:
            user = get_user_model().objects.create(username="author")
            entrants, keys = [], []
            for k in range(2):
                key, key_hash = bot_keys.new_key()
                bot = RegisteredBot.objects.create(owner=user, game="liars_dice", name=f"entrant{k}",
                                                   key_hash=key_hash)
                entrants.append(f"registered:{bot.pk}")
                keys.append(key)
        t = schedule.create(game="liars_dice", config=config, format="round_robin", entrants=entrants,
                            per_pairing=matches, at_once=at_once, rated=True, wait_s=60,
                            created_by_id=user.pk if user else None)
        return t.pk, keys

    arena = Arena()
    arena.server_times = []
    await arena.start()
    freeze_startup_heap()
    tid, keys = await sync_to_async(make)()
    out: dict = {}
    t0 = time.perf_counter()
    if keys:
        port = arena.listeners[0].port
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--keyed-bots", str(port), *keys, "--matches", str(matches),
            stdout=asyncio.subprocess.PIPE)
        bots_out, _ = await proc.communicate()
        out["bots"] = json.loads(bots_out)
    while True:
        status = await sync_to_async(lambda: Tournament.objects.get(pk=tid).status)()
        if status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            break
        await asyncio.sleep(0.05)
    wall = time.perf_counter() - t0
    first, last, finished = await sync_to_async(lambda: (
        Match.objects.filter(tournament_game__tournament_id=tid).order_by("started_at")[0].started_at,
        Match.objects.filter(tournament_game__tournament_id=tid).order_by("-finished_at")[0].finished_at,
        Match.objects.filter(tournament_game__tournament_id=tid, status=Match.Status.FINISHED).count()))()
    await arena.stop()
    out.update({"matches": finished, "seconds": (last - first).total_seconds(), "wall": wall,
                "p99_us": pct(arena.server_times, 99) * 1e6, "moves": len(arena.server_times),
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    return out


def child(args, kind: str) -> dict:
    command = [sys.executable, __file__, "--child", kind, "--matches", str(args.matches), "--games", str(args.games),
               "--at-once", str(1 if kind == "tcp" else args.at_once)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bare(args) -> float:
    """Games per second of ``liars_dice_throughput.py`` with the same match shape."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "liars_dice_throughput.py"), "--games",
                           str(args.games), "--matches", str(args.matches), "--rounds", "1", "--no-parts", "--pin",
                           "no", "--echo-moves", "100"], capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(done.stdout + done.stderr)
    line = next(line for line in done.stdout.splitlines() if "games per second:" in line)
    return float(line.split("games per second:")[1].split()[0])


# --- one arena against two, on PostgreSQL --------------------------------------------------------
def arenas_round(count: int, template, args) -> dict:
    from benchmarks.arenas import Side, shell

    side = Side(count, template, argparse.Namespace(bot_games=args.games, dice=6))
    try:
        side.start()
        out = shell(side.env, "import json\nfrom games.arena.tournaments import schedule\n"
                              f"t = schedule.create(game='liars_dice', config={{'players': 2, 'dice': 6, "
                              f"'games': {args.games}}}, format='round_robin', entrants=['builtin:random', "
                              f"'builtin:probability'], per_pairing={args.matches}, at_once={args.arenas_at_once})\n"
                              "print(t.pk)\n")
        tid = int(out.strip().splitlines()[-1])
        deadline = time.monotonic() + args.timeout
        while side.rows("SELECT status FROM arena_tournament WHERE id = %s", [tid])[0][0] != "finished":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{count} arena(s): the tournament did not finish in {args.timeout} s")
            time.sleep(0.2)
        (first, last, finished), = side.rows(
            "SELECT min(started_at), max(finished_at), count(*) FILTER (WHERE status = 'finished') FROM arena_match")
        per_arena = dict(side.rows("SELECT owner, count(*) FROM arena_match GROUP BY owner"))
        seconds = (last - first).total_seconds()
        return {"rate": finished / seconds, "matches": finished, "per_arena": per_arena, "load": load()}
    finally:
        side.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=2000, help="matches in each tournament (and the bare run)")
    parser.add_argument("--games", type=int, default=1, help="games per match")
    parser.add_argument("--at-once", type=int, default=8, help="built-in tournament's matches at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arenas", action="store_true", help="also one arena against two on PostgreSQL")
    parser.add_argument("--arenas-only", action="store_true", help="only one arena against two on PostgreSQL")
    parser.add_argument("--arenas-at-once", type=int, default=32,
                        help="the PostgreSQL tournament's matches at once (room for two arenas)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--child", choices=("tcp", "builtin"), help=argparse.SUPPRESS)
    parser.add_argument("--keyed-bots", nargs=3, metavar=("PORT", "KEY_A", "KEY_B"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.keyed_bots:
        bots_main(int(args.keyed_bots[0]), args.matches, 1, keys=list(args.keyed_bots[1:]))
        return
    if args.child:
        tournament_main(args.child, args.matches, args.games, args.at_once)
        return

    if args.arenas_only:
        arenas_main(args)
        return
    print(f"Tournaments of Liar's Dice: {args.matches} matches of {args.games} game(s), 2 players, 6 dice; "
          f"{args.rounds} rounds alternating bare / TCP tournament / built-in tournament ({os.cpu_count()} cores)")
    ratios, tcp_rates, bare_rates, builtin_rates, tcp_p99, builtin_p99, rss = [], [], [], [], [], [], []
    for r in range(args.rounds):
        base = bare(args)
        tcp = child(args, "tcp")
        builtin = child(args, "builtin")
        tcp_games = tcp["bots"]["matches"] * args.games / tcp["bots"]["seconds"]
        bare_rates.append(base)
        tcp_rates.append(tcp_games)
        ratios.append(tcp_games / base)
        builtin_rates.append(builtin["matches"] / builtin["seconds"])
        tcp_p99.append(tcp["p99_us"])
        builtin_p99.append(builtin["p99_us"])
        rss += [tcp["maxrss_mb"], builtin["maxrss_mb"]]
        print(f"  round {r + 1}: bare {base:.1f} games/s; TCP tournament {tcp_games:.1f} games/s "
              f"({ratios[-1]:.2f} of bare), p99 {tcp['p99_us']:.0f} us, {tcp['maxrss_mb']:.0f} MB; built-in "
              f"tournament {builtin_rates[-1]:.1f} matches/s ({builtin['matches']} in {builtin['seconds']:.1f} s), "
              f"p99 {builtin['p99_us']:.0f} us, {builtin['maxrss_mb']:.0f} MB; load {load():.2f}", flush=True)
    print(f"  TCP tournament / bare pair, games per second: {spread(ratios)}  (target >= 0.80)")
    print(f"  bare {spread(bare_rates, 1)} games/s; TCP tournament {spread(tcp_rates, 1)} games/s, runner p99 "
          f"{spread(tcp_p99, 0)} us; built-in tournament {spread(builtin_rates, 1)} matches/s, runner p99 "
          f"{spread(builtin_p99, 0)} us; peak memory {spread(rss, 0)} MB")
    figure("tournament TCP games/s / bare pair's", round(statistics.median(ratios), 2), "x", target=0.8,
           better="higher")
    figure("tournament built-in matches/s", round(statistics.median(builtin_rates), 1), "matches/s")
    if args.arenas:
        arenas_main(args)


def arenas_main(args) -> None:
    """One arena process against two on PostgreSQL, alternating, ``--rounds`` times."""
    from benchmarks.arenas import Template

    template = Template()
    try:
        one, two = [], []
        for r in range(args.rounds):
            one.append(arenas_round(1, template, args))
            two.append(arenas_round(2, template, args))
            print(f"  PostgreSQL round {r + 1}: one arena {one[-1]['rate']:.1f} matches/s, two "
                  f"{two[-1]['rate']:.1f} ({two[-1]['per_arena']}); load {load():.2f}", flush=True)
        ratio = [b["rate"] / a["rate"] for a, b in zip(one, two)]
        print(f"  two arenas / one: {spread(ratio)}  (target >= 1.5)")
        figure("tournament two arenas / one", round(statistics.median(ratio), 2), "x", target=1.5, better="higher")
    finally:
        template.drop()


if __name__ == "__main__":
    main()
