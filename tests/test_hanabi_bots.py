"""Hanabi's built-in bots: only legal actions, no peeking at their own faces, and the
convention bot's level on fixed deals (deterministic: seeded deals and bots)."""
from __future__ import annotations

import random
import statistics

from games.hanabi import bots, rules


def play_out(players: int, seed: int, policy) -> rules.HanabiState:
    state = rules.new_state({"players": players}, seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.on_turn
        legal = state.legal_actions(seat)
        action = policy(state.observation(seat), legal, rng)
        assert action in legal, action
        state.apply({seat: action})
    return state


def test_both_bots_play_only_legal_actions_for_every_player_count():
    for players in range(2, 6):
        for seed in range(15):
            for _, policy in bots.BUILTIN_BOTS.values():
                play_out(players, seed, policy)


def test_the_convention_bot_decides_from_what_it_may_see_only():
    """Two deals that differ only in the faces of seat 0's own hand (its cards swapped with
    cards of the deck) give seat 0 the same observation, so the same first move."""
    base = rules.new_state({"players": 3}, 5)
    faces = list(base.faces)
    faces[0], faces[20] = faces[20], faces[0]
    faces[1], faces[21] = faces[21], faces[1]
    other = rules.new_state({"players": 3, "deck": [list(f) for f in faces]}, 0)
    assert base.observation(0)["hands"][0] == other.observation(0)["hands"][0]
    assert base.faces[:2] != other.faces[:2]
    for seed in range(5):
        first = bots.convention_bot(base.observation(0), base.legal_actions(0), random.Random(seed))
        again = bots.convention_bot(other.observation(0), other.legal_actions(0), random.Random(seed))
        assert first == again


def test_the_convention_bot_is_far_better_than_chance():
    """On 60 fixed three-player deals (mean 21.9 here, about 22 over 1,000 in
    benchmarks/hanabi_bots.py); the floor guards against a regression, the random bot's mean
    is about 1."""
    convention = statistics.mean(play_out(3, seed, bots.convention_bot).score() for seed in range(60))
    chance = statistics.mean(play_out(3, seed, bots.random_bot).score() for seed in range(60))
    assert convention >= 20 and chance < 4, (convention, chance)


def two_player_deal(seat0: list, seat1: list, last_colour: str = "GREEN") -> rules.HanabiState:
    """A two-player game whose hands are ``seat0`` (ids 1-5) and ``seat1`` (ids 6-10), oldest
    first; the rest of the deck follows, cards of ``last_colour`` last."""
    rest = list(rules.DECK)
    for card in seat0 + seat1:
        rest.remove(card)
    rest.sort(key=lambda card: card[0] == last_colour)
    return rules.new_state({"players": 2, "deck": [list(card) for card in seat0 + seat1 + rest]}, 0)


def act(state: rules.HanabiState) -> list:
    seat = state.on_turn
    return bots.convention_bot(state.observation(seat), state.legal_actions(seat), random.Random(0))


def test_the_convention_bot_saves_a_critical_chop_and_the_saved_card_is_kept():
    """The next player's chop (their oldest untouched card, id 6) is a 5 and they have nothing
    to play: the hint touches it.  Its holder then neither plays it (RED would allow R1) nor
    discards it; it does not discard its new chop either (that may be critical too)."""
    state = two_player_deal([("RED", 2), ("YELLOW", 4), ("GREEN", 3), ("BLUE", 4), ("WHITE", 4)],
                            [("RED", 5), ("YELLOW", 3), ("GREEN", 4), ("BLUE", 3), ("WHITE", 2)])
    hint = act(state)
    assert hint in (["color", 1, "RED"], ["number", 1, 5]), hint
    state.apply({0: hint})
    reply = act(state)
    assert reply[0] not in ("play", "discard"), reply


def test_a_play_clue_marks_a_card_and_its_holder_plays_it():
    """Red 1 is played; the next player holds R2 between older and newer cards, and a Y2 that
    is not playable.  "2" would mark both, so the bot hints RED (marking R2 alone, newer than
    the chop), and the holder plays R2 at once although RED leaves R2..R5 possible."""
    state = two_player_deal([("RED", 1), ("YELLOW", 4), ("BLUE", 4), ("WHITE", 3), ("YELLOW", 3)],
                            [("WHITE", 4), ("YELLOW", 2), ("RED", 2), ("BLUE", 3), ("GREEN", 4)])
    state.apply({0: ["play", 1]})
    state.apply({1: ["color", 0, "GREEN"]})  # touches nothing: a pass
    hint = act(state)
    assert hint == ["color", 1, "RED"], hint
    state.apply({0: hint})
    assert act(state) == ["play", 8]
