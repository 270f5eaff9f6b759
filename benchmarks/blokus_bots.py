"""How much stronger the heuristic Blokus bot is than the random bot, and how fast both think.

Plays ``N`` games with the rules engine directly (variant 2021 by default), the heuristic
alternating between team ONE (BLUE, RED, moves first) and team TWO, and prints its win rate
with a 95% confidence interval, the mean team points, each bot's time per move (mean, 99th
percentile, max; observation -> action, with the observation passed through JSON as a seat
gets it) and the rules' own time per game.

    .venv/bin/python benchmarks/blokus_bots.py [N] [2021|2027]
"""
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.blokus.bots import heuristic_bot, random_bot
from games.blokus.rules import new_state


def play(policies, seed: int, variant: str, think: dict, rules_time: list) -> dict:
    """One game; returns its result.  Appends per-move think times to ``think[name]``."""
    state = new_state({"variant": variant}, seed)
    rng = random.Random(seed)
    spent = 0.0
    while not state.is_terminal():
        t0 = time.perf_counter()
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        obs = json.loads(json.dumps(state.observation(seat)))
        t1 = time.perf_counter()
        action = policies[seat](obs, legal, rng)
        t2 = time.perf_counter()
        state.apply({seat: action})
        t3 = time.perf_counter()
        think[policies[seat].__name__].append(t2 - t1)
        spent += (t1 - t0) + (t3 - t2)
    rules_time.append(spent)
    return state.result()


def main(n: int, variant: str) -> None:
    wins = draws = 0
    points = {"heuristic": [], "random": []}
    think = {"heuristic_bot": [], "random_bot": []}
    rules_time: list[float] = []
    started = time.perf_counter()
    for i in range(n):
        h = i % 2
        policies = {h: heuristic_bot, 1 - h: random_bot}
        result = play(policies, i, variant, think, rules_time)
        wins += result["winner"] == h
        draws += result["winner"] is None
        points["heuristic"].append(result["scores"][h])
        points["random"].append(result["scores"][1 - h])
    elapsed = time.perf_counter() - started
    rate = wins / n
    half = 1.96 * math.sqrt(rate * (1 - rate) / n)
    print(f"Blokus {variant}: heuristic vs random, {n} games (heuristic team ONE in half of them)")
    print(f"  heuristic won {wins}/{n} = {rate:.1%} (95% CI {max(0, rate - half):.1%} to {min(1, rate + half):.1%}), "
          f"{draws} draws, {n / elapsed:.1f} games/s")
    print(f"  mean team points: heuristic {statistics.mean(points['heuristic']):.1f}, "
          f"random {statistics.mean(points['random']):.1f}")
    for name, times in think.items():
        times.sort()
        print(f"  {name}: {statistics.mean(times) * 1000:.2f} ms/move mean, "
              f"p99 {times[int(len(times) * 0.99)] * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms ({len(times)} moves)")
    print(f"  rules (legal_actions + observation + apply): {statistics.mean(rules_time) * 1000:.1f} ms per game mean")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, sys.argv[2] if len(sys.argv) > 2 else "2021")
