"""Random play-outs of the Jass rules engine on one core (DESIGN.md, "Tests and measurements").

Prints deals (the protocol's "games": trump decision plus 36 cards) per second through the
public State API (``to_act``/``legal_actions``/``apply``, as the arena drives it) and through
the bit-mask fast path (``legal_mask``/``play_card_index``), plus matches to 1000 per second.
Target: at least 2,000 deals per second through the State API.

    .venv/bin/python benchmarks/jass_playouts.py [seconds per run, default 2; 3 runs each]
"""
from __future__ import annotations

import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from games.jass import rules  # noqa: E402


def playout_api(state: rules.JassState, rng: random.Random) -> None:
    """Play to the end as the arena does: ask, pick a legal action, apply."""
    choice = rng.choice
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: choice(state.legal_actions(seat))})


def playout_fast(state: rules.JassState, rng: random.Random) -> None:
    """Play to the end on masks: a uniformly random legal card by bit tricks."""
    randrange = rng.randrange
    while not state.is_terminal():
        if state.phase == 0:  # trump phase
            acts = state.legal_actions(state.player)
            state.apply({state.player: acts[randrange(len(acts))]})
            continue
        mask = state.legal_mask()
        k = randrange(mask.bit_count())
        for _ in range(k):
            mask &= mask - 1
        state.play_card_index((mask & -mask).bit_length() - 1)


def measure(name: str, config: dict, playout, seconds: float, rounds: int = 3) -> None:
    """Best and median of ``rounds`` runs of ``seconds`` each (the machine is shared)."""
    rates = []
    seed = 0
    for _ in range(rounds):
        rng = random.Random(seed)
        deals = matches = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(20):
                seed += 1
                state = rules.new_state(config, seed)
                playout(state, rng)
                deals += state.deal_number
                matches += 1
        elapsed = time.perf_counter() - start
        rates.append((deals / elapsed, matches / elapsed))
    rates.sort()
    best, median = rates[-1], rates[len(rates) // 2]
    print(f"{name:<40} best {best[0]:7.0f} deals/s ({best[1]:7.1f} matches/s), median {median[0]:7.0f} deals/s")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} (1 min)")
    measure("State API, one deal per match", {"max_deals": 1}, playout_api, seconds)
    measure("State API, matches to 1000", {}, playout_api, seconds)
    measure("fast path (masks), one deal per match", {"max_deals": 1}, playout_fast, seconds)
    measure("fast path (masks), matches to 1000", {}, playout_fast, seconds)


if __name__ == "__main__":
    main()
