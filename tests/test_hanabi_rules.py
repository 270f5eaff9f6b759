"""Hanabi rules: worked examples on a fixed deal, and properties over random games
(hypothesis): the score, the tokens, the final round, replays, and what each view hides."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hanabi import rules
from games.hanabi.rules import COLORS, DECK


def deck(*first: tuple[str, int]) -> list[list]:
    """A full deck whose first cards are ``first`` (the rest in the standard order)."""
    rest = list(DECK)
    for card in first:
        rest.remove(card)
    return [list(card) for card in [*first, *rest]]


def play(state: rules.HanabiState, *actions) -> list[dict]:
    out = []
    for action in actions:
        out += state.apply({state.on_turn: list(action)})
    return out


# Two players, 5 cards each: seat 0 holds ids 1-5, seat 1 ids 6-10, the deck starts at id 11.
HANDS = [("RED", 1), ("RED", 2), ("BLUE", 1), ("WHITE", 5), ("GREEN", 3),
         ("RED", 1), ("YELLOW", 1), ("RED", 3), ("BLUE", 2), ("GREEN", 1),
         ("RED", 4), ("YELLOW", 2)]


@pytest.fixture
def game() -> rules.HanabiState:
    return rules.new_state({"players": 2, "deck": deck(*HANDS)}, 0)


def test_the_deal_hands_and_ids(game):
    assert game.hands == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]] and game.deck[:2] == [11, 12]
    assert len(game.deck) == 40 and game.faces[3] == ("WHITE", 5)
    assert (game.hint_tokens, game.err_tokens, game.on_turn, game.turns_left) == (8, 3, 0, None)
    assert rules.hand_size(3) == 5 and rules.hand_size(4) == 4
    four = rules.new_state({"players": 4}, 1)
    assert [len(h) for h in four.hands] == [4] * 4 and len(four.deck) == 34


def test_a_hint_teaches_the_touched_cards_and_rules_out_the_rest(game):
    [happening] = play(game, ["color", 1, "RED"])
    assert happening == {"type": "hint", "seat": 0, "target": 1, "color": "RED", "touched": [6, 8]}
    assert game.knowledge(6) == {"color": "RED", "number": None, "not_colors": [], "not_numbers": []}
    assert game.knowledge(7)["not_colors"] == ["RED"] and game.hint_tokens == 7 and game.on_turn == 1
    play(game, ["number", 0, 1])  # seat 1 tells seat 0 its ones
    assert game.knowledge(1)["number"] == 1 and game.knowledge(3)["number"] == 1
    assert game.knowledge(2)["not_numbers"] == [1]
    play(game, ["number", 1, 4])  # touches nothing: legal, every card learns "not 4"
    assert all(game.knowledge(cid)["not_numbers"] == [4] for cid in game.hands[1])
    play(game, ["color", 0, "RED"])  # a positive hint clears the ruled-out colours (as the original)
    assert game.knowledge(1) == {"color": "RED", "number": 1, "not_colors": [], "not_numbers": []}
    assert game.knowledge(3)["not_colors"] == ["RED"]


def test_hints_need_a_token_and_another_player(game):
    assert not game.is_legal(0, ["color", 0, "RED"]), "no hint to yourself"
    assert not game.is_legal(1, ["color", 0, "RED"]), "not on turn"
    assert not game.is_legal(0, ["number", 1, 6]) and not game.is_legal(0, ["color", 1, "PINK"])
    assert not game.is_legal(0, ["number", 1, True]) and not game.is_legal(0, ["play", 6])
    for _ in range(8):
        play(game, ["number", 1 - game.on_turn, 5])
    assert game.hint_tokens == 0
    assert not game.is_legal(game.on_turn, ["number", 1 - game.on_turn, 5])
    assert all(a[0] in ("play", "discard") for a in game.legal_actions(game.on_turn))
    with pytest.raises(ValueError):
        play(game, ["color", 1 - game.on_turn, "RED"])


def test_plays_misplays_fives_and_discards(game):
    [happening] = play(game, ["play", 1])  # R1 fits
    assert happening == {"type": "play", "seat": 0, "card": {"id": 1, "color": "RED", "number": 1},
                         "success": True, "drawn": 11}
    assert game.hands[0] == [11, 2, 3, 4, 5], "the drawn card takes the freed slot"
    [happening] = play(game, ["play", 8])  # R3 does not fit
    assert not happening["success"] and game.err_tokens == 2 and game.discards == [8]
    play(game, ["discard", 5])
    assert game.hint_tokens == 8, "a discard at 8 tokens gains nothing (and is allowed)"
    play(game, ["number", 0, 2], ["play", 2])  # R2 fits
    assert game.fireworks["RED"] == 2 and game.hint_tokens == 7
    assert game.score() == 2


def test_a_played_five_returns_a_token_below_the_maximum():
    state = rules.new_state({"players": 2, "deck": deck(
        ("WHITE", 1), ("WHITE", 2), ("WHITE", 3), ("WHITE", 4), ("WHITE", 5),
        ("RED", 1), ("RED", 1), ("RED", 1), ("BLUE", 1), ("BLUE", 1))}, 0)
    play(state, ["number", 1, 1], ["number", 0, 5])
    assert state.hint_tokens == 6
    for cid in (1, 2, 3, 4):
        play(state, ["play", cid], ["discard", state.hands[1][0]])
    assert state.hint_tokens == 8
    play(state, ["color", 1, "RED"], ["discard", state.hands[1][0]])
    assert state.hint_tokens == 8
    play(state, ["play", 5])
    assert state.fireworks["WHITE"] == 5 and state.hint_tokens == 8, "no token above 8"


def test_the_third_misplay_ends_the_game_and_keeps_the_score(game):
    play(game, ["play", 1])  # R1 fits: score 1
    happenings = play(game, ["play", 8], ["play", 4], ["play", 9])  # R3, W5, B2: three misplays
    assert game.is_terminal() and game.err_tokens == 0 and game.to_act() == ()
    assert happenings[-1] == {"type": "game_over", "score": 1, "reason": "the third misplay"}
    assert game.result() == {"scores": [1.0, 1.0], "winner": None, "score": 1, "reason": "the third misplay"}


def test_the_final_round_is_one_more_turn_for_each_player_counted_as_the_original():
    state = rules.new_state({"players": 3}, 11)
    while state.deck:
        assert state.turns_left is None
        play(state, ["discard", state.hands[state.on_turn][0]] if state.hint_tokens < 8
             else ["number", (state.on_turn + 1) % 3, 1])
    drew_last = (state.on_turn - 1) % 3
    assert state.turns_left is None, "the original sets it on the first action with the deck empty"
    seen = []
    while not state.is_terminal():
        seen.append(state.on_turn)
        play(state, ["discard", state.hands[state.on_turn][0]])
        if not state.is_terminal():
            assert state.turns_left == 3 - len(seen)
    assert seen == [(drew_last + 1 + k) % 3 for k in range(3)], "one turn each, the last drawer last"
    assert sum(len(h) for h in state.hands) == 15 - 3, "hands shrink once the deck is empty"


def test_configs_and_decks_are_checked():
    for bad in ({"players": 1}, {"players": 6}, {"players": True}, {"players": 2, "deck": [["RED", 1]] * 50},
                {"players": 2, "deck": deck()[:-1]}, {"players": 2, "deck": [["PINK", 1]] + deck()[1:]}):
        with pytest.raises(ValueError):
            rules.normalize_config(bad)
    assert rules.normalize_config({}) == {"players": 2}


def test_views_hide_what_each_may_not_see(game):
    play(game, ["color", 1, "RED"])
    mine = game.observation(1)
    assert [c["color"] for c in mine["hands"][1]] == ["RED", None, "RED", None, None]
    assert all(c["number"] is None for c in mine["hands"][1])
    assert [c["color"] for c in mine["hands"][0]] == ["RED", "RED", "BLUE", "WHITE", "GREEN"]
    public = game.public_observation()
    assert all(c["color"] is None and c["number"] is None for c in public["hands"][0])
    assert [c["color"] for c in public["hands"][1]] == ["RED", None, "RED", None, None]
    assert "deck_faces" not in mine and "deck_faces" not in public and mine["deck"] == game.deck
    full = game.full_observation()
    assert full["deck_faces"][0] == {"id": 11, "color": "RED", "number": 4}
    assert game.revealed_observation() == public


def random_game(players: int, seed: int, moves: int | None = None) -> rules.HanabiState:
    state = rules.new_state({"players": players}, seed)
    rng = random.Random(seed)
    while not state.is_terminal() and (moves is None or len(state.history) < moves):
        action = state.random_action(rng)
        assert state.is_legal(state.on_turn, action) and action in state.legal_actions(state.on_turn)
        state.apply({state.on_turn: action})
    return state


@settings(max_examples=150, deadline=None)
@given(players=st.integers(2, 5), seed=st.integers(0, 2**32), cut=st.integers(0, 120))
def test_properties_over_random_games(players, seed, cut):
    state = rules.new_state({"players": players}, seed)
    rng = random.Random(seed)
    last_draw_at = None
    while not state.is_terminal():
        assert 0 <= state.hint_tokens <= 8 and 1 <= state.err_tokens <= 3
        assert state.score() == sum(state.fireworks.values()) <= 25
        seat = state.on_turn
        for viewer in range(players):
            obs = state.observation(viewer)
            for s, hand in enumerate(obs["hands"]):
                for card in hand:
                    k = state.knowledge(card["id"])
                    face = state.faces[card["id"] - 1]
                    shown = (card["color"], card["number"])
                    if s == viewer:
                        assert shown == (k["color"], k["number"]), "own cards only as known"
                    else:
                        assert shown == face
            assert "deck_faces" not in obs
        if len(state.history) == cut:
            copy = state.clone()
            copy.apply({seat: state.random_action(random.Random(1))})
            assert len(copy.history) == len(state.history) + 1
        had_deck = bool(state.deck)
        state.apply({seat: state.random_action(rng)})
        if had_deck and not state.deck:
            last_draw_at = len(state.history)
    assert state.score() <= 25
    if state.err_tokens > 0 and state.score() < 25:
        assert len(state.history) - last_draw_at == players, "one more turn for each player"
    replayed = rules.new_state({"players": players}, seed)
    for action in state.history:
        replayed.apply({replayed.on_turn: action})
    assert replayed.full_observation() == state.full_observation() and replayed.result() == state.result()
