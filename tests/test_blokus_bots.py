"""Built-in Blokus bots (games/blokus/bots.py): legal answers only, and the heuristic beats random."""
from __future__ import annotations

import json
import random

import pytest

from games.blokus import rules
from games.blokus.bots import BUILTIN_BOTS, heuristic_bot, random_bot


def play_game(seed, policies, variant="2021"):
    """One game; ``policies[seat]``.  Every answer must be legal; returns the final state."""
    rng = random.Random(seed)
    state = rules.new_state({"variant": variant}, seed)
    while not state.is_terminal():
        (seat,) = state.to_act()
        obs = json.loads(json.dumps(state.observation(seat)))      # what a seat really gets
        legal = state.legal_actions(seat)
        action = policies[seat](obs, legal, rng)
        assert state.is_legal(seat, action), action
        if action[0] == "skip":       # neither bot skips while it could place a piece
            assert all(a[0] == "skip" for a in legal)
        state.apply({seat: action})
    return state


def test_registry():
    assert set(BUILTIN_BOTS) == {"random", "heuristic"}
    for label, policy in BUILTIN_BOTS.values():
        assert isinstance(label, str) and callable(policy)


@pytest.mark.parametrize("variant", rules.VARIANTS)
@pytest.mark.parametrize("seed", [3, 4])
def test_bots_play_only_legal_moves(variant, seed):
    state = play_game(seed, {0: heuristic_bot, 1: random_bot}, variant)
    assert state.result()["causes"] == ["REGULAR", "REGULAR"]
    state = play_game(seed, {0: random_bot, 1: heuristic_bot}, variant)
    assert state.is_terminal()


def test_bots_skip_when_nothing_fits():
    obs = {"board": ["." * 20] * 20, "round": 5}
    for policy in (random_bot, heuristic_bot):
        assert policy(obs, [["skip", "RED"]], random.Random(1)) == ["skip", "RED"]


def test_heuristic_beats_random():
    """20 seeded games, the heuristic alternating between team ONE and team TWO."""
    wins = 0
    for game in range(20):
        seat = game % 2
        state = play_game(1000 + game, {seat: heuristic_bot, 1 - seat: random_bot})
        wins += state.result()["winner"] == seat
    assert wins >= 17, f"heuristic won only {wins} of 20"
