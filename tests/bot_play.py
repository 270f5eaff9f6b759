"""Play a one-seat-at-a-time game's state to its end with built-in policies, the way the
runner asks them: each policy sees only ``observation(seat)`` and the legal actions, and every
answer is checked (the bot tests of the trick-taking games share it)."""
from __future__ import annotations

import copy
import random


def play_checked(state, policies, seed: int, secret_keys: set[str], check=None):
    """Play ``state`` to its end: ``policies[seat](observation, legal, rng)`` answers for each
    seat, with one ``random.Random(seed * 4 + seat)`` per seat.  Asserts that no observation
    carries a key of ``secret_keys``, that every answer is legal and that no policy changes
    its observation; ``check(state, seat, obs, legal, action)`` may check more before each
    move.  Returns the finished state."""
    rngs = [random.Random(seed * 4 + s) for s in range(len(policies))]
    while not state.is_terminal():
        (seat,) = state.to_act()
        obs = state.observation(seat)
        assert not secret_keys & obs.keys()
        legal = state.legal_actions(seat)
        before = copy.deepcopy(obs)
        action = policies[seat](obs, list(legal), rngs[seat])
        assert action in legal, (seat, action, legal, obs)
        assert obs == before, "a bot must not change its observation"
        if check:
            check(state, seat, obs, legal, action)
        state.apply({seat: action})
    return state
