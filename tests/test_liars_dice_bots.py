"""Built-in Liar's Dice bots: always legal, see only their own observation, and the
probability bot clearly beats the random one."""
import random

from games.liars_dice import bots
from games.liars_dice.rules import new_state


def play(policies, seed, config=None):
    state = new_state(config or {"players": 2, "dice": 6, "games": 1}, seed)
    rngs = [random.Random(seed + i) for i in range(len(policies))]
    while not state.is_terminal():
        answers = {}
        for s in state.to_act():
            obs = state.observation(s)
            assert "hands" not in obs  # a bot thinks with its own observation only
            action = policies[s](obs, state.legal_actions(s), rngs[s])
            assert action in state.legal_actions(s)
            answers[s] = action
        state.apply(answers)
    return state.result()


def test_probability_bot_wins_at_least_four_in_five_against_random():
    wins = 0
    for i in range(200):
        seats = [bots.probability_bot, bots.random_bot] if i % 2 == 0 else [bots.random_bot, bots.probability_bot]
        wins += play(seats, seed=1000 + i)["winner"] == i % 2
    assert wins >= 160, wins


def test_bots_play_legal_moves_at_full_tables():
    for seed in range(20):
        policies = [bots.random_bot, bots.probability_bot] * 3
        result = play(policies, seed, {"players": 6, "dice": 3, "games": 2})
        assert sum(result["scores"]) == 2


def test_probability_estimate():
    assert bots.at_least(0, 5) == 1.0
    assert bots.at_least(6, 5) == 0.0
    assert abs(bots.at_least(1, 1) - 1 / 6) < 1e-12
    # Holding two fours, "two fours" is certain whatever the others hold.
    assert bots.bid_probability(4, 2, [4, 4, 1], 12) == 1.0


def test_the_probability_cache_is_bounded():
    """Asking about ever new counts does not grow the cache without limit."""
    for k in range(bots.AT_LEAST_CACHE + 500):
        bots.at_least(k + 10**6, 5)
    info = bots.at_least.cache_info()
    assert info.maxsize == bots.AT_LEAST_CACHE and info.currsize <= bots.AT_LEAST_CACHE


def test_the_probability_bot_never_challenges_its_own_bid():
    """After its own bid the probability bot lets it stand, even one it rates unlikely (such
    as 2 x one, its best raise over 1 x six with one die each): challenging it can only cost
    its own die."""
    asked = 0
    for seed in range(300):
        state = new_state({"players": 2 + seed % 3, "dice": 1 + seed % 3, "games": 1}, seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            answers = {}
            for s in state.to_act():
                answers[s] = bots.probability_bot(state.observation(s), state.legal_actions(s), rng)
                if s != state.on_turn and state.last_bidder == s:
                    asked += 1
                    assert answers[s] == "pass", (seed, state.observation(s))
            state.apply(answers)
    assert asked > 500


def test_the_probability_bot_challenges_a_bid_past_the_table():
    """A count above the dice in play (which the reference accepts) is certainly false."""
    state = new_state({"players": 2, "dice": 2, "games": 1}, 3)
    first, second = state.to_act()
    state.apply({first: ["bid", 2, 5], second: "pass"})
    assert state.last_bid == (2, 5)
    assert state.legal_actions(second) == ["challenge"]
    assert bots.probability_bot(state.observation(second), state.legal_actions(second), random.Random(1)) == "challenge"
    assert bots.bid_probability(2, 5, [2, 2], 4) == 0.0
