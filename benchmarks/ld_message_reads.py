"""How often a Liar's Dice bot reads two protocol messages in one TCP read.

Bots that parse one JSON object per read (common in courses; they work on the reference
server) break on such a read.  The server writes each message on its own, and on tables
without people publishes the views between a ``round_over`` and the next ``move_request``
(games/arena/play/runner.py), which leaves the bot time to read the first one alone.

How: ``manage.py serve`` (tests.serverproc), an automatic table of ``--games`` games of 2
players with 2 dice, and benchmarks/node/ld_per_read.js (two Node bots counting their reads).
Run: ``.venv/bin/python benchmarks/ld_message_reads.py`` (a few seconds).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.serverproc import start_arena  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    server = start_arena(env={"LIARS_DICE_AUTO_GAMES": str(args.games), "LIARS_DICE_AUTO_DICE": "2",
                              "LOG_LEVEL": "WARNING"})
    try:
        out = subprocess.run(["node", str(ROOT / "benchmarks" / "node" / "ld_per_read.js"),
                              str(server.liars_dice_port)], capture_output=True, text=True, timeout=300, check=True)
    finally:
        server.stop()
    stats = json.loads(out.stdout)
    reads = sum(s["reads"] for s in stats.values())
    multi = sum(s["multi"] for s in stats.values())
    print(f"{args.games} games, 2 Node bots parsing one message per read: {reads} reads, {multi} with more than "
          f"one message ({100 * multi / reads:.1f}%)")


if __name__ == "__main__":
    main()
