"""The bridge rules engine: random deals played out a second (issue 24, "Benchmarks").

Each board is a fresh seeded state (``games.bridge.rules.new_state``): a random auction
(each call a pass with probability 0.6, else a uniformly random legal call, so that auctions
end at all levels and some boards are passed out) and then uniformly random legal cards to
the end of trick 13.  Measured three ways, alternated in rounds so that the shared
machine's load falls on all alike (CPU time of this process):

- **runner**: driven as the arena's runner drives a game (``games/arena/play/runner.py``): per
  decision ``to_act()``, ``observation(seat)`` of the seat asked, ``legal_actions(seat)``, a
  random pick, ``apply``, and the spectators' ``public_observation()``;
- **engine**: the State API alone (``to_act``, ``legal_actions``, ``apply``), no views;
- **fast path**: call numbers and card masks (``legal_calls``, ``make_call``,
  ``legal_cards``, ``play_card_index``), what a searching bot would use;
- **floor**: the yardstick, measured in the same run: a deck shuffled into four hands and 52
  cards drawn at random in turn with no rule at all (no auction, no following suit, no trick
  winner): what any engine pays for the chance alone.  Each figure is given as deals/s and as
  its cost in floors (how many floor deals' time one of its deals takes, the median of
  the rounds' ratios).

    .venv/bin/python benchmarks/bridge_rules.py [--seconds 1.0] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from benchmarks.figures import figure  # noqa: E402
from games.bridge import rules  # noqa: E402


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def runner_board(rng: random.Random) -> int:
    """One board as the runner plays it; returns the cards played (0 if passed out)."""
    state = rules.new_state({}, rng.randrange(2**32))
    uniform = rng.random
    cards = 0
    while True:
        actors = state.to_act()
        if not actors:
            return cards
        seat = actors[0]
        state.observation(seat)
        legal = state.legal_actions(seat)
        if state.phase == 0:
            action = "P" if uniform() < 0.6 else legal[int(uniform() * len(legal))]
        else:
            action = legal[int(uniform() * len(legal))]
            cards += 1
        state.apply({seat: action})
        state.public_observation()


def engine_board(rng: random.Random) -> int:
    """One board through the State API without views; returns the cards played."""
    state = rules.new_state({}, rng.randrange(2**32))
    uniform = rng.random
    cards = 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        if state.phase == 0:
            action = "P" if uniform() < 0.6 else legal[int(uniform() * len(legal))]
        else:
            action = legal[int(uniform() * len(legal))]
            cards += 1
        state.apply({seat: action})
    return cards


def fast_board(rng: random.Random) -> int:
    """One board through call numbers and card masks; returns the cards played."""
    state = rules.new_state({}, rng.randrange(2**32))
    uniform = rng.random
    while state.phase == 0:
        calls = state.legal_calls()
        state.make_call(rules.PASS if uniform() < 0.6 else calls[int(uniform() * len(calls))])
    cards = 0
    while state.phase == 1:
        mask = state.legal_cards()
        for _ in range(int(uniform() * mask.bit_count())):
            mask &= mask - 1  # drop the lowest card: a uniform pick of the remaining ones
        state.play_card_index((mask & -mask).bit_length() - 1)
        cards += 1
    return cards


def floor_board(rng: random.Random) -> int:
    """The yardstick (module docstring): shuffle, deal, 52 random cards in turn, no rules."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [deck[0:13], deck[13:26], deck[26:39], deck[39:52]]
    uniform = rng.random
    seat = 0
    for _ in range(52):
        hand = hands[seat]
        hand.pop(int(uniform() * len(hand)))
        seat = (seat + 1) % 4
    return 52


WAYS = {"runner": runner_board, "engine": engine_board, "fast path": fast_board, "floor": floor_board}


def measure(board, seconds: float, seed: int) -> tuple[float, float]:
    """Boards and cards a CPU second of ``board`` over about ``seconds``."""
    rng = random.Random(seed)
    boards = cards = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        for _ in range(10):
            cards += board(rng)
        boards += 10
    return boards / elapsed, cards / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per way per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {load()}")
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
    for r in range(args.rounds):
        for name, board in WAYS.items():
            rates[name].append(measure(board, args.seconds, r))
        print(f"round {r + 1} ({load()})")
        floor = rates["floor"][-1][0]
        for name in WAYS:
            boards, cards = rates[name][-1]
            print(f"  {name:<10} {boards:8.0f} boards/s {cards:9.0f} cards/s   {floor / boards:6.1f} floors")
    print(f"median over {args.rounds} rounds ({load()})")
    floors = {name: statistics.median(f / b for (f, _), (b, _) in zip(rates["floor"], rates[name])) for name in WAYS}
    for name in WAYS:
        boards = statistics.median(b for b, _ in rates[name])
        cards = statistics.median(c for _, c in rates[name])
        print(f"  {name:<10} {boards:8.0f} boards/s {cards:9.0f} cards/s   {floors[name]:6.1f} floors")
    for name in ("runner", "engine"):
        boards = statistics.median(b for b, _ in rates[name])
        figure(f"Bridge random boards played out, {name}", round(boards), "boards/s", better="higher")
        figure(f"Bridge random board, {name}, cost in floor boards", round(floors[name], 1), "x")


if __name__ == "__main__":
    main()
