"""How much stronger the rule-based Jass bot is than the random bot, and how fast it answers.

Plays with the rules engine directly, every bot seeing only ``observation(seat)`` as in the
arena (games/jass/bots.py):

1. Margin per deal: ``DEALS`` one-deal matches, each seed's deal played twice with the teams
   swapping seats (rule bots North-South, then East-West: same cards, same dealer), so luck of
   the cards cancels.  Prints the rule team's points minus the random team's per deal (Match
   bonus included) with a 95% confidence interval over the seed pairs.
2. Full matches to 1000 points: ``MATCHES`` matches, the rule team alternating between
   North-South and East-West; its win rate with a 95% (Wilson) interval.
3. Decision time of the rule bot per call (the policy alone, the observation built before),
   p50/p99/max over every call in part 1, trump decisions and card plays together.

    .venv/bin/python benchmarks/jass_bots.py [DEALS (default 2000)] [MATCHES (default 400)]
"""
from __future__ import annotations

import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from games.jass import rules  # noqa: E402
from games.jass.bots import random_bot, rule_bot  # noqa: E402


def play(policies, seed: int, config: dict, times: list | None = None) -> list[int]:
    """Play one match; returns the team points [N-S, E-W].  Appends the rule bot's decision
    times to ``times`` as (seconds, whether it had more than one legal action)."""
    state = rules.new_state(config, seed)
    rngs = [random.Random(seed * 4 + s) for s in range(4)]
    clock = time.perf_counter
    while not state.is_terminal():
        seat = state.to_act()[0]
        obs = state.observation(seat)
        legal = state.legal_actions(seat)
        policy = policies[seat]
        if times is not None and policy is rule_bot:
            t0 = clock()
            action = policy(obs, legal, rngs[seat])
            times.append((clock() - t0, len(legal) > 1))
        else:
            action = policy(obs, legal, rngs[seat])
        state.apply({seat: action})
    return list(state.match_points)


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main(deals: int, matches: int) -> None:
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} (1 min), "
          f"{os.cpu_count()} cpus")
    rule_team = [rule_bot, random_bot, rule_bot, random_bot]
    random_team = [random_bot, rule_bot, random_bot, rule_bot]

    # 1. Margin per deal, duplicate style.
    pairs = deals // 2
    times: list[tuple[float, bool]] = []
    margins, rule_points, matches_taken = [], 0, 0
    started = time.perf_counter()
    for i in range(pairs):
        seed = 1_000_000 + i
        ns = play(rule_team, seed, {"max_deals": 1}, times)
        ew = play(random_team, seed, {"max_deals": 1}, times)
        margins.append(((ns[0] - ns[1]) + (ew[1] - ew[0])) / 2)
        rule_points += ns[0] + ew[1]
        matches_taken += (ns[0] >= 257) + (ew[1] >= 257)
    elapsed = time.perf_counter() - started
    mean = sum(margins) / pairs
    sd = math.sqrt(sum((m - mean) ** 2 for m in margins) / (pairs - 1))
    half = 1.96 * sd / math.sqrt(pairs)
    print(f"margin per deal, rule team minus random team: {mean:.1f} points "
          f"(95% CI {mean - half:.1f} to {mean + half:.1f}) over {2 * pairs} deals "
          f"({pairs} deals played from both sides); rule team {rule_points / (2 * pairs):.1f} "
          f"points per deal of 157 (+100 per Match), Matches {matches_taken}; {elapsed:.1f} s")

    # 2. Full matches to 1000.
    wins = 0
    for i in range(matches):
        seed = 2_000_000 + i
        policies, team = (rule_team, 0) if i % 2 == 0 else (random_team, 1)
        points = play(policies, seed, {})
        wins += points[team] > points[1 - team]
    p = wins / matches
    z = 1.96
    centre = (p + z * z / (2 * matches)) / (1 + z * z / matches)
    spread = z * math.sqrt(p * (1 - p) / matches + z * z / (4 * matches * matches)) / (1 + z * z / matches)
    print(f"matches to 1000 won by the rule team: {wins}/{matches} = {p:.1%} "
          f"(95% CI {centre - spread:.1%} to {centre + spread:.1%})")

    # 3. Decision time.
    us = 1e6
    for label, values in (("all calls", [t for t, _ in times]),
                          ("calls with a choice", [t for t, choice in times if choice])):
        values.sort()
        print(f"rule bot decision time, {label} ({len(values)}): p50 {percentile(values, 0.5) * us:.0f} us, "
              f"p99 {percentile(values, 0.99) * us:.0f} us, max {values[-1] * us:.0f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 400)
