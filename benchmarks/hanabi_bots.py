"""Hanabi's built-in bots: average score per player count over many seeded games.

Every seat plays the chosen bot (``--bot convention`` by default) through the rules engine,
for 2, 3, 4 and 5 players, ``--games`` games each (1,000 by default; deals seeded
``--first-seed`` onwards, 0 by default: the convention bot's weights were tuned on seeds
0-399, so ``--first-seed 100000`` measures it on deals it never saw).
Prints the mean score with its 95% confidence interval, the median and quartiles, the share
of perfect games and of strike-outs, games/s, and the load average.  For comparison, the
published simple rule bots (Quuxplusone/Hanabi): HolmesBot 20.75 / 20.86 / 20.46 and SmartBot
23.09 / 23.30 / 22.44 for 2 / 3 / 4 players (their rules differ in details: e.g. they end on a
third strike with score 0).

    .venv/bin/python benchmarks/hanabi_bots.py [--games N] [--first-seed S] [--bot convention|random]
"""
import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.hanabi import rules  # noqa: E402
from games.hanabi.bots import BUILTIN_BOTS  # noqa: E402


def play(players: int, seed: int, policy) -> rules.HanabiState:
    state = rules.new_state({"players": players}, seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.on_turn
        state.apply({seat: policy(state.observation(seat), state.legal_actions(seat), rng)})
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first deal")
    parser.add_argument("--bot", default="convention", choices=sorted(BUILTIN_BOTS))
    args = parser.parse_args()
    label, policy = BUILTIN_BOTS[args.bot]
    print(f"{label}, {args.games} games per player count (seeds {args.first_seed}-{args.first_seed + args.games - 1}); python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.2f} (1 min)")
    for players in range(2, 6):
        started = time.perf_counter()
        states = [play(players, seed, policy) for seed in range(args.first_seed, args.first_seed + args.games)]
        elapsed = time.perf_counter() - started
        scores = [s.score() for s in states]
        mean = statistics.mean(scores)
        half = 1.96 * statistics.stdev(scores) / len(scores) ** 0.5 if len(scores) > 1 else 0.0
        q1, median, q3 = statistics.quantiles(scores, n=4)
        print(f"{players} players: mean {mean:5.2f} ± {half:.2f} (95%), median {median:g}, quartiles {q1:g}-{q3:g}, "
              f"25s {sum(s == 25 for s in scores) / len(scores):.1%}, "
              f"strike-outs {sum(s.err_tokens == 0 for s in states) / len(states):.1%}, {len(states) / elapsed:.0f} games/s")


if __name__ == "__main__":
    main()
