"""The built-in bridge bots: how fast they play and how much stronger the rule-based bot is.

Plays with the rules engine directly, every bot seeing only ``observation(seat)`` as in the
arena (games/bridge/bots.py):

1. Boards per second: whole boards (auction and play) with the same bot in all four seats,
   the observation built for every decision as the runner does; CPU time of this process.
2. IMPs per board, teams of four with instant replay: each seeded deal is played in the Open
   room and again in the Closed room with the hands turned one seat
   (``bots.replay_deal``: the same cards deal and are vulnerable), pair A North-South in both
   rooms, so each pair holds both sides' cards; pair A's IMPs on the board are
   ``scoring.imps`` of the sum of the two North-South scores.  Printed as the mean over the
   boards with a 95% confidence interval (normal approximation, 1.96 standard errors).
   Rule pair against random pair, and the rule pair against itself as a check (exactly 0:
   the bot is deterministic, so the Closed room repeats the Open room turned round).  Two
   more matches say where the strength lies: against a pair that bids as the rule bot but
   plays random cards (the worth of the card play), and against a pair that always passes
   but plays as the rule bot (the worth of the bidding against silent opponents).

    .venv/bin/python benchmarks/bridge_bots.py [--boards 1000] [--seconds 2]
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from benchmarks.figures import figure  # noqa: E402
from games.bridge import rules, scoring  # noqa: E402
from games.bridge.bots import random_bot, replay_deal, rule_bot  # noqa: E402


def rule_bids_random_cards(obs: dict, legal: list, rng: random.Random):
    """The rule bot's calls, random legal cards."""
    return rule_bot(obs, legal, rng) if obs["phase"] == "auction" else rng.choice(legal)


def passes_rule_cards(obs: dict, legal: list, rng: random.Random):
    """Always passes (it defends whatever the opponents bid), the rule bot's cards."""
    return "P" if obs["phase"] == "auction" else rule_bot(obs, legal, rng)


def deal(rng: random.Random) -> list[list[str]]:
    deck = list(rules.CARD_NAMES)
    rng.shuffle(deck)
    return [deck[13 * i:13 * i + 13] for i in range(4)]


def play(hands, board: int, policies, seed: int) -> int:
    """Play one board; returns North-South's score."""
    state = rules.new_state_from_deal(hands, board)
    rngs = [random.Random(seed * 4 + s) for s in range(4)]
    while not state.is_terminal():
        seat = state.to_act()[0]
        action = policies[seat](state.observation(seat), state.legal_actions(seat), rngs[seat])
        state.apply({seat: action})
    return state.board_records()[0]["score"]


def boards_per_second(policy, seconds: float) -> float:
    rng = random.Random(1)
    boards = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        play(deal(rng), boards % 16 + 1, [policy] * 4, boards)
        boards += 1
    return boards / elapsed


def team_match(pair_a, pair_b, boards: int, seed: int) -> tuple[float, float, list[int]]:
    """Pair A's IMPs per board against pair B with instant replay (module docstring):
    the mean, the half-width of its 95% interval, and the IMPs of each board."""
    rng = random.Random(seed)
    policies = [pair_a, pair_b, pair_a, pair_b]
    imps = []
    for i in range(boards):
        hands, board = deal(rng), i % 16 + 1
        open_room = play(hands, board, policies, seed + i)
        closed_room = play(*replay_deal(hands, board), policies, seed + i)
        imps.append(scoring.imps(open_room + closed_room))
    mean = sum(imps) / boards
    sd = math.sqrt(sum((x - mean) ** 2 for x in imps) / (boards - 1)) if boards > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(boards), imps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=1000, help="boards (deals) per team match")
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per bot for boards/s")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} (1 min), "
          f"{os.cpu_count()} cpus")

    for name, policy in (("rule-based", rule_bot), ("random", random_bot)):
        rate = boards_per_second(policy, args.seconds)
        print(f"{name} bot in all four seats: {rate:.0f} boards/s (CPU)")
        figure(f"Bridge {name} bot, boards played out", round(rate), "boards/s", better="higher")

    for label, a, b in (("rule pair vs random pair", rule_bot, random_bot),
                        ("rule pair vs rule pair", rule_bot, rule_bot),
                        ("rule pair vs rule bidding with random cards", rule_bot, rule_bids_random_cards),
                        ("rule pair vs always passing with rule cards", rule_bot, passes_rule_cards)):
        started = time.perf_counter()
        mean, half, imps = team_match(a, b, args.boards, 20_260_000)
        won = sum(x > 0 for x in imps)
        lost = sum(x < 0 for x in imps)
        print(f"{label}: {mean:+.2f} IMPs per board (95% CI {mean - half:+.2f} to {mean + half:+.2f}) "
              f"over {args.boards} boards with instant replay ({2 * args.boards} tables); "
              f"boards won {won}, lost {lost}; {time.perf_counter() - started:.1f} s")
        if b is random_bot:
            figure("Bridge rule pair vs random pair, IMPs per board", round(mean, 2), "IMPs/board",
                   target=10, better="higher")


if __name__ == "__main__":
    main()
