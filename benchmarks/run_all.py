"""Where the arena stands, in one command: runs every headline benchmark one after the other
and prints one table of their figures, each beside its target, with the load average it was
taken at.

Each benchmark prints its own full report (kept in ``--logs``, a temporary folder by
default, and named at the end) and, through :func:`benchmarks.figures.figure`, one line per
headline figure; this script only runs them and collects those lines.  A benchmark that
fails or runs past its time limit is listed as such, and the others still run.

    .venv/bin/python benchmarks/run_all.py                 # everything, at the issues' sizes
    .venv/bin/python benchmarks/run_all.py --quick         # smaller sizes, a few minutes
    .venv/bin/python benchmarks/run_all.py --only ratings,blokus

The Liar's Dice comparison with the reference server runs only when given its checkout and
Deno (``--reference``, ``--deno``; see ``benchmarks/liars_dice_reference.py``): the reference
stays outside this repository.
The machine is shared by the server and the clients of each benchmark: run it on a quiet
machine, and read every figure with its load average.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import met, parse  # noqa: E402


def benchmarks(args) -> list[tuple[str, list[str], list[str], int]]:
    """``(name, arguments, quick arguments, time limit in s)`` of each benchmark, in the order
    they run.  The arguments give the sizes the issues' targets are stated for."""
    rows = []
    if args.reference:
        ref = ["--reference", args.reference, "--deno", args.deno]
        rows.append(("liars_dice_reference", ["liars_dice_reference.py", *ref],
                     ["liars_dice_reference.py", *ref, "--rounds", "1", "--pin", "no"], 1800))
    rows += [
        ("liars_dice_memory", ["liars_dice_memory.py"], ["liars_dice_memory.py", "--quick"], 1800),
        ("jass", ["jass_playouts.py"], ["jass_playouts.py", "--deals", "200", "--rounds", "2"], 900),
        # warmed up first (--warmup games, not counted), then alternated with its floor
        ("blokus", ["blokus_tcp_games.py"], ["blokus_tcp_games.py", "--games", "12", "--setup-games", "8",
                                             "--warmup", "8"], 900),
        ("scaled", ["scaled_moves.py"], ["scaled_moves.py", "--rounds", "1", "--games", "30"], 900),
        ("idle_arena", ["idle_arena.py"], ["idle_arena.py", "--rounds", "1", "--seconds", "10"], 300),
        ("arenas", ["arenas.py"], ["arenas.py", "--rounds", "1", "--tables", "100", "--pairs", "8"], 1800),
        ("spectators", ["spectator_fanout.py"], ["spectator_fanout.py", "--duration", "5", "--runs", "1"], 1800),
        ("hanabi", ["hanabi_ws_games.py"], ["hanabi_ws_games.py", "--games", "5"], 900),
        ("ratings", ["ratings.py"], ["ratings.py", "--matches", "20000", "--bots", "1000", "--ld-matches", "500",
                                     "--jass-matches", "200"], 3600),
        ("reconnect_flood", ["reconnect_flood.py"], ["reconnect_flood.py"], 600),
        ("bridge_rules", ["bridge_rules.py"], ["bridge_rules.py", "--rounds", "1"], 600),
        ("bridge_bots", ["bridge_bots.py"], ["bridge_bots.py", "--boards", "200"], 900),
        ("bridge_analysis", ["bridge_analysis.py"], ["bridge_analysis.py", "--boards", "4", "--rounds", "1"], 900),
        ("bridge_doors", ["bridge_tcp_boards.py"], ["bridge_tcp_boards.py", "--boards", "4", "--rounds", "1"], 900),
    ]
    return rows


def run(name: str, argv: list[str], limit: int, log: Path) -> tuple[list[dict], str]:
    """Run one benchmark, its output to ``log``; ``(figures, status)``."""
    started = time.monotonic()
    with log.open("w") as out:
        try:
            proc = subprocess.run([sys.executable, str(HERE / argv[0]), *argv[1:]], cwd=ROOT, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=limit)
            status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            status = f"stopped after {limit} s"
    figures = [f for f in map(parse, log.read_text(errors="replace").splitlines()) if f]
    return figures, f"{status}, {time.monotonic() - started:.0f} s"


def table(results: list[tuple[str, list[dict], str]]) -> str:
    """The figures as a text table: benchmark, figure, value, target, met, load."""
    lines = [f"{'benchmark':<22} {'figure':<52} {'value':>12} {'target':>14} {'':<7} {'load':>5}"]
    for name, figures, status in results:
        if not figures:
            lines.append(f"{name:<22} (no figure: {status})")
        for f in figures:
            target = "" if f.get("target") is None else ("< " if f.get("better", "lower") == "lower" else ">= ") + \
                f"{f['target']:g}"
            verdict = {True: "met", False: "MISSED", None: ""}[met(f)]
            lines.append(f"{name:<22} {f['name'][:52]:<52} {f['value']:>9.4g} {f['unit']:<2} {target:>14} "
                         f"{verdict:<7} {f.get('load', float('nan')):>5.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a few minutes in all)")
    parser.add_argument("--only", help="comma-separated benchmark names (see the table's first column)")
    parser.add_argument("--reference", help="the reference Liar's Dice server's checkout (optional)")
    parser.add_argument("--deno", default="deno", help="the Deno binary for --reference (default: deno)")
    parser.add_argument("--logs", help="folder for each benchmark's full output (default: a temporary one)")
    args = parser.parse_args()
    logs = Path(args.logs or tempfile.mkdtemp(prefix="arena-benchmarks-"))
    logs.mkdir(parents=True, exist_ok=True)
    chosen = set(args.only.split(",")) if args.only else None
    results = []
    for name, full, quick, limit in benchmarks(args):
        if chosen is not None and name not in chosen:
            continue
        print(f"running {name} ...", flush=True)
        figures, status = run(name, quick if args.quick else full, limit, logs / f"{name}.txt")
        print(f"  {status}; {len(figures)} figure(s)", flush=True)
        results.append((name, figures, status))
    print()
    print(f"{os.cpu_count()} cpus; load average now {os.getloadavg()[0]:.2f}; full reports in {logs}")
    print(table(results))


if __name__ == "__main__":
    main()
