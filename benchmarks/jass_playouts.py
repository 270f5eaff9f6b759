"""Jass rules engine throughput, side by side with the HSLU kit's Arena in one process.

What it measures (issue 17): deals per second (the protocol's "games": the trump decision
plus 36 cards) and cards (moves) per second, of

- **the kit**: ``jass.arena.Arena`` with four ``AgentRandomSchieber`` and its default checks
  (``check_move_validity=True``), playing N deals.  Per card it builds a ``GameObservation``
  for the player on turn; the agent computes the valid cards from it and draws one; the Arena
  computes them again to check the card, then plays it.
- **ours, driven as the arena's runner drives it** (``games/arena/play/runner.py``): per decision
  ``to_act()``; the observation of the seat asked (``observation(seat)``: what a built-in bot
  gets, and what an HTTP bot's request body is built from); ``legal_actions(seat)``; a
  uniformly random legal action (``legal[int(random() * len(legal))]``: the pick is the
  agent's business, so the cheapest uniform one); ``apply``.  That is the kit's work per
  card: an observation for the player on turn, its legal moves, the move checked and played.
  "matches of 50 deals" (no target, every deal complete) is the like of the kit's N deals in a
  row; "matches to 1000" is the arena's default match (its last deal is cut short: compare
  cards/s there); "one-deal matches" adds a new match per deal.

- **the kit, its agents picking as ours does** (``AgentPickingAsOurs``): the same Arena and
  checks, the agent's valid cards from the kit's rule as before, but the draw made as ours
  makes it.  The shipped agent draws with numpy (``Generator.choice(np.flatnonzero(...))``),
  which alone costs about a third of the kit's time a card: that is the agent's choice, not
  the engine's, so the ratios with a target are taken against this side (like with like),
  and the ones against the shipped kit are printed beside them, with what its pick costs
  (the difference of the two kit sides per card, in the same round).

  The runner also builds a view for spectators at every step (``public_observation()``, for
  the match's public group).  The kit has no spectators, so the headline ratios leave it out;
  the "+ spectator view" lines count it too: the whole cost of a step to the rules.

Both sides play the same number of deals per round, alternated in chunks of 50 deals (kit,
ours, ..., kit, ours, ...), so that the load of the shared machine falls on all alike; times
are this process's CPU time, and each ratio is ours / kit over one round.  ``--before FILE``
also measures another version of ``games/jass/rules.py`` in the same rounds (e.g. ``git show
HEAD:games/jass/rules.py > /tmp/rules_head.py``).  The load average is printed with every
figure.  Last, for reference only (no observations, so not comparable with the kit): the
engine alone, through the State API and through the bit-mask fast path.

Target: ours (headline lines) at least 15 times the kit's cards/s, like for like.

    .venv/bin/python benchmarks/jass_playouts.py [--deals 400] [--rounds 5] [--before FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
from jass.agents.agent_random_schieber import AgentRandomSchieber  # noqa: E402
from jass.arena.arena import Arena  # noqa: E402
from jass.game.const import MAX_TRUMP, PUSH  # noqa: E402

from benchmarks.figures import figure  # noqa: E402
from games.jass import rules  # noqa: E402

CHUNK = 50  # deals per turn of the alternation, and per "matches of 50 deals" match
KIT = "kit Arena, random agents, checks on"
KIT_LIKE = "kit Arena, agents picking as ours, checks on"


class AgentPickingAsOurs(AgentRandomSchieber):
    """The kit's random agent with our side's uniform pick: the same valid cards from the
    kit's rule, then ``valid[int(random() * len(valid))]`` (Python's ``random``) instead of
    numpy's ``Generator.choice`` over ``np.flatnonzero``, which alone costs about as much as
    a whole step of ours; and no log calls (ours makes none).  The pick is the agent's
    business, not the engine's: with it both sides pay the same for it."""

    def __init__(self, seed: int):
        super().__init__()
        self._uniform = random.Random(seed).random

    def action_trump(self, obs) -> int:
        if obs.forehand == -1 and self._uniform() < 0.5:
            return PUSH
        return int(self._uniform() * (MAX_TRUMP + 1))

    def action_play_card(self, obs) -> int:
        valid = np.flatnonzero(self._rule.get_valid_cards_from_obs(obs)).tolist()
        return valid[int(self._uniform() * len(valid))]


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# --- the two sides --------------------------------------------------------------------------
def kit_deals(deals: int, seed: int, like_ours: bool = False) -> tuple[int, int]:
    """The kit's Arena plays ``deals`` deals of four random agents (``like_ours``: agents
    that pick as ours does, :class:`AgentPickingAsOurs`); returns (deals, cards)."""
    np.random.seed(seed)  # the kit deals from numpy's global generator
    arena = Arena(nr_games_to_play=deals, print_every_x_games=deals)  # default checks on
    arena.set_players(*(AgentPickingAsOurs(seed + k) if like_ours else AgentRandomSchieber() for k in range(4)))
    with contextlib.redirect_stdout(io.StringIO()):  # its progress bar
        arena.play_all_games()
    return deals, 36 * deals


def our_deals(engine, config: dict, spectators: bool, deals: int, seed: int) -> tuple[int, int]:
    """Matches of ``config`` on the rules module ``engine`` until ``deals`` deals are played,
    driven as the runner drives them (module docstring); returns (deals, cards)."""
    rng = random.Random(seed)
    uniform = rng.random
    played = cards = 0
    while played < deals:
        state = engine.new_state(config, rng.randrange(2**32))
        while True:
            actors = state.to_act()
            if not actors:
                break
            seat = actors[0]
            state.observation(seat)
            legal = state.legal_actions(seat)
            cards += state.phase == 1  # a card, not a trump decision
            state.apply({seat: legal[int(uniform() * len(legal))]})
            if spectators:
                state.public_observation()
        played += state.deal_number
    return played, cards


def our_sides(engine, label: str) -> dict:
    """The ways ours is measured (module docstring), named with ``label``."""
    series = {"max_deals": CHUNK, "points_to_win": engine.MAX_POINTS_TO_WIN}  # CHUNK complete deals

    def side(config: dict, spectators: bool = False):
        return lambda n, s: our_deals(engine, config, spectators, n, s)

    return {
        f"{label}, matches of {CHUNK} deals": side(series),
        f"{label}, matches of {CHUNK} deals + spectator view": side(series, True),
        f"{label}, matches to 1000": side({}),
        f"{label}, matches to 1000 + spectator view": side({}, True),
        f"{label}, one-deal matches": side({"max_deals": 1}),
    }


def compare(deals: int, rounds: int, before: str | None) -> None:
    """The kit against ours in each way of playing, alternated chunk by chunk."""
    sides = {KIT: kit_deals, KIT_LIKE: lambda n, s: kit_deals(n, s, like_ours=True), **our_sides(rules, "ours")}
    if before:
        spec = importlib.util.spec_from_file_location("rules_before", before)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        sides.update(our_sides(old, "before"))
    print(f"{deals} deals per side per round, alternated in chunks of {CHUNK}, {rounds} rounds, CPU time")
    ratios: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for r in range(rounds):
        totals = {name: [0, 0, 0.0] for name in sides}  # deals, cards, CPU seconds
        for chunk in range(0, deals, CHUNK):
            for name, play in sides.items():
                start = time.process_time()
                d, c = play(min(CHUNK, deals - chunk), 1000 * r + chunk)
                totals[name][2] += time.process_time() - start
                totals[name][0] += d
                totals[name][1] += c
        kit_d, kit_c, kit_s = totals[KIT]
        like_c, like_s = totals[KIT_LIKE][1:]
        print(f"round {r + 1} ({load()}): the kit's pick (numpy's choice) costs "
              f"{(kit_s / kit_c - like_s / like_c) * 1e6:.1f} us of its {kit_s / kit_c * 1e6:.1f} us a card")
        for name, (d, c, s) in totals.items():
            ratio = (d / s) / (kit_d / kit_s), (c / s) / (kit_c / kit_s), (c / s) / (like_c / like_s)
            ratios[name].append(ratio)
            print(f"  {name:<46} {d / s:7.0f} deals/s {c / s:8.0f} cards/s   "
                  f"x{ratio[0]:5.1f} deals/s x{ratio[1]:5.1f} cards/s; x{ratio[2]:5.1f} cards/s like for like")
    print(f"median ratio over {rounds} rounds, to the kit as shipped and to the kit picking as ours ({load()})")
    for name, rs in list(ratios.items())[1:]:
        print(f"  {name:<46} x{statistics.median(d for d, _, _ in rs):5.1f} deals/s "
              f"x{statistics.median(c for _, c, _ in rs):5.1f} cards/s "
              f"(lowest x{min(c for _, c, _ in rs):.1f}); like for like x{statistics.median(c for *_, c in rs):5.1f} "
              f"cards/s ({min(c for *_, c in rs):.1f}–{max(c for *_, c in rs):.1f})")
        if name.startswith("ours") and "spectator" not in name:
            figure(f"Jass ours / kit as shipped, {name[6:]}",
                   round(statistics.median(c for _, c, _ in rs), 1), "x", better="higher")
            figure(f"Jass ours / kit, like for like, {name[6:]}",
                   round(statistics.median(c for *_, c in rs), 1), "x", 15.0, better="higher")


# --- the engine alone, for reference --------------------------------------------------------
def playout_api(state: rules.JassState, rng: random.Random) -> int:
    """The State API without observations: ask, pick a legal action, apply; returns cards."""
    uniform = rng.random
    cards = 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        cards += state.phase == 1
        state.apply({seat: legal[int(uniform() * len(legal))]})
    return cards


def playout_fast(state: rules.JassState, rng: random.Random) -> int:
    """The bit-mask fast path: a uniformly random legal card by bit tricks; returns cards."""
    uniform = rng.random
    cards = 0
    while not state.is_terminal():
        if state.phase == 0:  # trump phase
            acts = state.legal_actions(state.player)
            state.apply({state.player: acts[int(uniform() * len(acts))]})
            continue
        mask = state.legal_mask()
        for _ in range(int(uniform() * mask.bit_count())):
            mask &= mask - 1
        state.play_card_index((mask & -mask).bit_length() - 1)
        cards += 1
    return cards


def engine_alone(name: str, config: dict, playout, seconds: float = 1.0) -> None:
    rng = random.Random(0)
    deals = cards = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(20):
            state = rules.new_state(config, rng.randrange(2**32))
            cards += playout(state, rng)
            deals += state.deal_number
    elapsed = time.process_time() - start
    print(f"  {name:<46} {deals / elapsed:7.0f} deals/s {cards / elapsed:8.0f} cards/s ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=400, help="deals per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="another games/jass/rules.py to measure in the same rounds")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {load()}")
    compare(args.deals, args.rounds, args.before)
    print("the engine alone, no observations (not comparable with the kit)")
    engine_alone("State API, matches to 1000", {}, playout_api)
    engine_alone("fast path (masks), matches to 1000", {}, playout_fast)


if __name__ == "__main__":
    main()
