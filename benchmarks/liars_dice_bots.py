"""How much stronger the probability bot is than the random bot (Liar's Dice).

Plays ``N`` one-game matches (2 players, 6 dice) with the rules engine directly, the bots
swapping seats every match (the play order is shuffled by the seed anyway), and prints the
probability bot's win rate with a 95% confidence interval.

    .venv/bin/python benchmarks/liars_dice_bots.py [N]
"""
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.liars_dice.bots import probability_bot, random_bot
from games.liars_dice.rules import new_state


def play(policies, seed: int) -> int:
    """One match; returns the winning seat."""
    state = new_state({"players": 2, "dice": 6, "games": 1}, seed)
    rngs = [random.Random(seed * 2 + i) for i in range(2)]
    while not state.is_terminal():
        state.apply({s: policies[s](state.observation(s), state.legal_actions(s), rngs[s]) for s in state.to_act()})
    return state.result()["winner"]


def main(n: int) -> None:
    wins = 0
    started = time.perf_counter()
    for i in range(n):
        policies = [probability_bot, random_bot] if i % 2 == 0 else [random_bot, probability_bot]
        wins += play(policies, seed=i) == (0 if i % 2 == 0 else 1)
    rate = wins / n
    half = 1.96 * math.sqrt(rate * (1 - rate) / n)
    print(f"probability bot vs random bot: {wins}/{n} matches won = {rate:.1%} "
          f"(95% CI {rate - half:.1%} to {rate + half:.1%}); {n / (time.perf_counter() - started):.0f} matches/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
