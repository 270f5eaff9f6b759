"""Liar's Dice rules engine (games/liars_dice/rules.py) against the spec's worked examples.

The notes (specs/liars-dice-tcp.notes.md) win over the seed.  States are built with
``new_state(config, seed)``; where an example needs particular dice the hands are set directly
(the play order is whatever the seed shuffled, so the tests name players by their place in it).
"""
from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.liars_dice.rules import (
    BID, CHALLENGE, MAX_COUNT, PASS, RECENT_BIDS, bid_raises, is_valid_bid, new_state, normalize_config,
)


def fresh(players=3, dice=3, games=1, seed=7):
    """A new match and its play order for game 1 (``order[0]`` is on turn)."""
    state = new_state({"players": players, "dice": dice, "games": games}, seed)
    return state, list(state.order)


def step(state, overrides: dict, default=PASS):
    """Apply a move where ``overrides`` answer for some seats and everyone else sends ``default``."""
    actions = {seat: default for seat in state.to_act()}
    actions.update(overrides)
    return state.apply(actions)


def lose_round(state, seat):
    """``seat`` sends nothing (missing reply), everyone else passes: ``seat`` loses a die."""
    (happening,) = step(state, {seat: None})
    assert happening["round_loser"] == seat
    return happening


# --- the raise rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, raises", [
    ((0, 0), (1, 1), True),    # any bid opens the round
    ((0, 0), (6, 1), True),
    ((3, 2), (4, 2), True),    # same count, higher face
    ((3, 2), (3, 2), False),   # the same bid again
    ((3, 2), (2, 2), False),   # same count, lower face
    ((3, 2), (1, 3), True),    # more dice, any face
    ((6, 2), (1, 3), True),
    ((3, 2), (6, 1), False),   # fewer dice, even with a higher face
    ((6, 5), (6, 5), False),
    ((6, 5), (6, 6), True),
])
def test_raise_rule(old, new, raises):
    assert bid_raises(*old, *new) is raises
    assert is_valid_bid([BID, *new], old) is raises


@pytest.mark.parametrize("bid", [
    [BID, 0, 2], [BID, 7, 2], [BID, -1, 2], [BID, 3, 0], [BID, 3, -4],
    [BID, True, 2], [BID, 3, True], [BID, 3.0, 2], [BID, 3, 2.0], [BID, 2.5, 3],
    [BID, "3", 2], [BID, None, 2], [BID, 3], [BID, 3, 2, 1], [3, 2], "bid", None, CHALLENGE, PASS,
    [BID, 3, MAX_COUNT + 1], [BID, 3, 10**4000],
])
def test_bids_that_are_not_dice(bid):
    assert not is_valid_bid(bid, (0, 0))


def test_normalize_config_defaults_and_errors():
    assert normalize_config(None) == {"players": 2, "dice": 6, "games": 1}
    assert normalize_config({"players": 6, "dice": 1, "games": 3}) == {"players": 6, "dice": 1, "games": 3}
    for bad in ({"players": 1}, {"players": 7}, {"dice": 0}, {"games": 0}, {"players": True},
                {"dice": 2.0}, {"games": "2"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            normalize_config(bad)


# --- one round, move by move --------------------------------------------------------------------

def test_round_start():
    state, order = fresh(players=4, dice=5)
    assert sorted(order) == [0, 1, 2, 3]
    assert state.to_act() == tuple(order), "everyone answers, the player on turn first"
    assert state.on_turn == order[0]
    assert (state.game_number, state.round_number, state.move_number) == (1, 1, 1)
    for seat in range(4):
        hand = state.hands[seat]
        assert len(hand) == 5 and hand == sorted(hand) and all(1 <= d <= 6 for d in hand)
        obs = state.observation(seat)
        assert obs["last_bid"] is None and obs["your_hand"] == hand


def test_a_raising_bid_passes_the_turn_and_the_bidder_goes_last():
    state, (a, b, c) = fresh()
    assert step(state, {a: [BID, 3, 1]}) == []
    assert state.to_act() == (b, c, a)
    assert state.on_turn == b and state.last_bid == (3, 1) and state.last_bidder == a
    assert state.move_number == 2 and state.round_number == 1
    assert step(state, {b: [BID, 2, 2]}) == []
    assert state.to_act() == (c, a, b) and state.last_bid == (2, 2)
    assert state.bids == [[a, 3, 1], [b, 2, 2]]


def test_bids_from_players_not_on_turn_are_ignored():
    state, (a, b, c) = fresh()
    # b and c send anything at all: a bid (even a wild one), "pass", another string
    assert step(state, {a: [BID, 2, 1], b: [BID, 6, 9], c: "whatever"}) == []
    assert state.last_bid == (2, 1) and state.last_bidder == a
    assert step(state, {b: [BID, 2, 2], c: [BID, 7, 0], a: 42}) == []
    assert state.last_bid == (2, 2) and state.last_bidder == b
    assert state.counts == [3, 3, 3]


@pytest.mark.parametrize("bad", [
    PASS, "bogus", [BID, 3, 1], [BID, 2, 1], [BID, 7, 2], [BID, 0, 2], [BID, 3, 0], [BID, True, 2],
    [BID, 4, 1.0], [BID, 2.5, 3], [3, 2], 42, [BID, 3],
])
def test_on_turn_anything_but_a_raising_bid_or_a_challenge_loses(bad):
    state, (a, b, c) = fresh()
    step(state, {a: [BID, 3, 1]})  # b is on turn against [3, 1]
    (over,) = step(state, {b: bad})
    assert over["type"] == "round_over"
    assert over["round_loser"] == b and over["round_challenger"] is None
    assert over["reason"] == "invalid_move"
    assert state.counts[b] == 2 and state.counts[a] == state.counts[c] == 3


def test_pass_on_the_first_move_loses():
    state, (a, b, c) = fresh()
    (over,) = step(state, {a: PASS})
    assert (over["round_loser"], over["round_challenger"], over["reason"]) == (a, None, "invalid_move")


# --- settlement order ---------------------------------------------------------------------------

def test_a_missing_answer_comes_before_any_challenge():
    state, (a, b, c) = fresh()
    step(state, {a: [BID, 1, 9]})  # an absurd bid: any challenge would win
    (over,) = step(state, {b: CHALLENGE, c: None, a: CHALLENGE})
    assert (over["round_loser"], over["round_challenger"], over["reason"]) == (c, None, "no_answer")


def test_the_first_missing_answer_in_turn_order_loses():
    state, (a, b, c) = fresh()
    step(state, {a: [BID, 2, 1]})  # turn order now b, c, a
    (over,) = step(state, {a: None, c: None, b: [BID, 2, 2]})
    assert over["round_loser"] == c
    state, (a, b, c) = fresh()
    step(state, {a: [BID, 2, 1]})
    (over,) = step(state, {a: None, b: None})
    assert over["round_loser"] == b, "the player on turn is scanned first"


def test_a_challenge_comes_before_the_bid_on_turn():
    state, (a, b, c) = fresh()
    state.hands[a], state.hands[b], state.hands[c] = [1, 1, 1], [1, 1, 1], [1, 1, 1]
    step(state, {a: [BID, 6, 1]})
    (over,) = step(state, {b: [BID, 6, 2], c: CHALLENGE})  # b's good bid does not count
    assert over["round_challenger"] == c and over["round_loser"] == a and over["reason"] == "challenge"
    assert over["bid"] == [6, 1] and over["bidder"] == a and over["shown"] == 0


def test_of_several_challenges_the_one_nearest_the_player_on_turn_counts():
    # turn order b (on turn), c, d, a (previous bidder)
    state, (a, b, c, d) = fresh(players=4)
    state.hands = [[2, 2, 2] for _ in range(4)]
    step(state, {a: [BID, 2, 5]})  # true: twelve 2s
    (over,) = step(state, {c: CHALLENGE, d: CHALLENGE, a: CHALLENGE, b: [BID, 2, 6]})
    assert over["round_challenger"] == c and over["round_loser"] == c
    state, (a, b, c, d) = fresh(players=4)
    step(state, {a: [BID, 2, 5]})
    (over,) = step(state, {b: CHALLENGE, d: CHALLENGE})
    assert over["round_challenger"] == b, "the player on turn is found first"
    state, (a, b, c, d) = fresh(players=4)
    step(state, {a: [BID, 2, 5]})
    (over,) = step(state, {a: CHALLENGE, d: CHALLENGE, b: [BID, 3, 5]})
    assert over["round_challenger"] == d, "the previous bidder is found last"


# --- challenges ---------------------------------------------------------------------------------

def test_a_challenge_counts_exactly_the_face_and_ones_are_not_wild():
    state, (a, b, c) = fresh()
    state.hands[a], state.hands[b], state.hands[c] = [1, 1, 3], [1, 3, 5], [2, 2, 6]
    step(state, {a: [BID, 3, 3]})  # two 3s on the table (four if ones were wild)
    (over,) = step(state, {b: CHALLENGE})
    assert over["shown"] == 2
    assert (over["round_loser"], over["round_challenger"]) == (a, b), "the bid was false: the bidder loses"
    hands = [None] * 3  # the round's hands are shown by seat
    hands[a], hands[b], hands[c] = [1, 1, 3], [1, 3, 5], [2, 2, 6]
    assert over["hands"] == hands and over["bid"] == [3, 3] and over["bidder"] == a


def test_ones_count_as_ones_only():
    state, (a, b, c) = fresh()
    state.hands[a], state.hands[b], state.hands[c] = [1, 1, 4], [1, 6, 6], [2, 2, 6]
    step(state, {a: [BID, 1, 3]})
    (over,) = step(state, {c: CHALLENGE, b: [BID, 1, 4]})
    assert over["shown"] == 3 and (over["round_loser"], over["round_challenger"]) == (c, c)


def test_a_bid_met_exactly_stands_and_the_challenger_loses():
    state, (a, b, c) = fresh()
    state.hands[a], state.hands[b], state.hands[c] = [5, 5, 6], [1, 2, 3], [4, 5, 6]
    step(state, {a: [BID, 5, 3]})
    (over,) = step(state, {b: CHALLENGE})
    assert over["shown"] == 3 and over["round_loser"] == b and over["round_challenger"] == b
    assert state.counts[b] == 2 and sum(state.counts) == 8


def test_only_hands_still_in_the_game_count():
    state, (a, b, c) = fresh(players=3, dice=1)
    lose_round(state, c)  # c is out, with no dice
    assert state.counts[c] == 0 and state.hands[c] == []
    assert c not in state.to_act()
    first = state.on_turn
    other = a if first == b else b
    state.hands[first], state.hands[other] = [4], [4]
    step(state, {first: [BID, 4, 2]})
    (over,) = step(state, {other: CHALLENGE})
    assert over["shown"] == 2 and over["round_loser"] == other


@pytest.mark.parametrize("who", ["on_turn", "other"])
def test_a_challenge_before_any_bid_fails(who):
    state, (a, b, c) = fresh()
    state.hands = [[6, 6, 6]] * 3
    challenger = a if who == "on_turn" else c
    (over,) = step(state, {challenger: CHALLENGE})
    assert (over["round_loser"], over["round_challenger"], over["reason"]) == (challenger, challenger, "challenge")
    assert over["bid"] is None and over["bidder"] is None


@pytest.mark.parametrize("hands, shown", [([[2, 2, 2]] * 3, 9), ([[3, 3, 3]] * 3, 0)])
def test_a_player_may_challenge_their_own_bid(hands, shown):
    state, (a, b, c) = fresh()
    state.hands = [list(h) for h in hands]
    step(state, {a: [BID, 2, 4]})
    (over,) = step(state, {a: CHALLENGE, b: [BID, 2, 5]})
    assert over["shown"] == shown
    assert over["round_challenger"] == a and over["round_loser"] == a, "true or false, the bidder challenged"


# --- rounds, games, the match -------------------------------------------------------------------

def test_the_loser_starts_the_next_round_with_new_dice():
    state, (a, b, c) = fresh(dice=4, seed=11)
    step(state, {a: [BID, 2, 1]})
    (over,) = step(state, {c: None})
    assert over["state"] == [[s, 3 if s == c else 4] for s in range(3)]
    assert over["round_loser"] == c and over["game_winner"] is None
    assert state.round_number == 2 and state.move_number == 1 and state.last_bid == (0, 0)
    assert state.on_turn == c and state.to_act() == (c, a, b), "same play order, starting with the loser"
    assert [len(h) for h in state.hands] == state.counts and state.bids == []


def test_when_the_loser_is_out_the_next_player_with_dice_in_play_order_starts():
    state, (a, b, c, d) = fresh(players=4, dice=1, seed=3)
    lose_round(state, b)
    assert state.on_turn == c and state.to_act() == (c, d, a)
    lose_round(state, a)  # the next after a is b, who is out: c starts
    assert state.on_turn == c and state.to_act() == (c, d)
    lose_round(state, d)  # the next after d is a then b, both out: c
    assert state.is_terminal() and state.wins[c] == 1


def test_the_game_ends_when_one_player_has_dice():
    state, (a, b) = fresh(players=2, dice=2)
    lose_round(state, a)
    assert not state.is_terminal()
    (over,) = step(state, {a: None})
    assert over["game_winner"] == b and over["state"][a] == [a, 0] and over["state"][b] == [b, 2]
    assert state.is_terminal() and state.to_act() == () and state.legal_actions(b) == []
    assert state.result() == {"scores": [1 if s == b else 0 for s in range(2)], "winner": b}
    with pytest.raises(ValueError):
        state.apply({a: PASS, b: PASS})


def test_apply_needs_an_answer_from_everyone_asked():
    state, (a, b, c) = fresh()
    with pytest.raises(ValueError, match="no action"):
        state.apply({a: [BID, 2, 1], b: PASS})


def test_several_games_reshuffle_the_play_order_and_restart_the_dice():
    per_game = defaultdict(set)  # game number -> play orders seen over the seeds
    changed = 0
    for seed in range(12):
        state = new_state({"players": 4, "dice": 2, "games": 3}, seed)
        orders = []
        for game in (1, 2, 3):
            assert state.game_number == game and state.round_number == 1
            assert state.counts == [2, 2, 2, 2]
            assert state.to_act() == tuple(state.order) and sorted(state.order) == [0, 1, 2, 3]
            orders.append(tuple(state.order))
            per_game[game].add(tuple(state.order))
            while state.game_number == game and not state.is_terminal():
                lose_round(state, state.to_act()[-1])
        assert state.is_terminal() and sum(state.wins) == 3
        changed += len(set(orders)) > 1
    assert all(len(orders) > 3 for orders in per_game.values()), "every game shuffles the play order"
    assert changed >= 10, "the order changes between the games of a match"


def test_result_with_a_tie_has_no_winner():
    state = new_state({"players": 2, "dice": 1, "games": 2}, 5)
    lose_round(state, state.order[0])
    first_winner = state.wins.index(1)
    lose_round(state, first_winner)
    assert state.is_terminal() and state.result() == {"scores": [1, 1], "winner": None}


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_three_to_six_players_with_eliminations(players):
    rng = random.Random(players)
    for seed in range(15):
        state = new_state({"players": players, "dice": 2, "games": 2}, seed)
        eliminated_seen = False
        steps = 0
        while not state.is_terminal():
            steps += 1
            assert steps < 5000
            actors = state.to_act()
            assert all(state.counts[s] > 0 for s in actors) and actors[0] == state.on_turn
            actions = {}
            for seat in actors:
                legal = state.legal_actions(seat)
                roll = rng.random()
                actions[seat] = None if roll < 0.05 else rng.choice(legal)
            for over in state.apply(actions):
                assert len(over["state"]) == players
                eliminated_seen |= any(n == 0 for _, n in over["state"])
        assert eliminated_seen and sum(state.wins) == 2


# --- legal actions ------------------------------------------------------------------------------

def test_legal_actions():
    state, (a, b, c) = fresh(dice=2)
    on_turn = state.legal_actions(a)
    assert CHALLENGE not in on_turn, "nothing to challenge before the first bid"
    assert len(on_turn) == 6 * 6 and [BID, 1, 1] in on_turn and [BID, 6, 6] in on_turn
    assert state.legal_actions(b) == [PASS]
    step(state, {a: [BID, 4, 5]})
    assert state.legal_actions(c) == [PASS, CHALLENGE]
    assert sorted(state.legal_actions(b), key=str) == sorted(
        [CHALLENGE, [BID, 5, 5], [BID, 6, 5]] + [[BID, f, 6] for f in range(1, 7)], key=str)
    assert all(is_valid_bid(x, state.last_bid) for x in state.legal_actions(b) if x != CHALLENGE)
    step(state, {b: [BID, 6, 6]})
    assert state.legal_actions(c) == [CHALLENGE], "no bid left to make: challenge"


def test_eliminated_players_are_not_asked():
    state, (a, b, c) = fresh(dice=1)
    lose_round(state, a)
    assert a not in state.to_act() and state.legal_actions(a) == [] and not state.is_legal(a, PASS)
    assert state.is_legal(b, "anything")


# --- what each seat sees ------------------------------------------------------------------------

def _with_other_hand_changed(state, seat):
    other = state.clone()
    for s in range(other.num_seats):
        if s != seat and other.hands[s]:
            other.hands[s] = [7 - d for d in other.hands[s]][::-1]
    return other


def test_observation_never_holds_another_seats_hand():
    state, (a, b, c) = fresh(dice=3)
    step(state, {a: [BID, 2, 2]})
    for seat in range(3):
        obs = state.observation(seat)
        assert obs["your_hand"] == state.hands[seat] and obs["your_seat"] == seat
        assert "hands" not in obs
        changed = _with_other_hand_changed(state, seat)
        assert changed.full_observation() != state.full_observation()
        assert changed.observation(seat) == obs, "the observation depends on no other seat's dice"
        json.dumps(obs)


def test_public_observation_holds_no_current_hand():
    state, (a, b, c) = fresh(dice=3)
    lose_round(state, b)  # last round's hands are public now; the new ones are not
    pub = state.public_observation()
    assert "hands" not in pub and "your_hand" not in pub
    assert pub["last_round"]["hands"] != state.hands
    changed = state.clone()
    changed.hands = [[7 - d for d in h][::-1] for h in changed.hands]
    assert changed.public_observation() == pub
    assert state.full_observation()["hands"] == state.hands
    json.dumps(pub)


# --- determinism and clones ---------------------------------------------------------------------

def _play(config, seed, policy_seed, record=None, replay=None):
    state = new_state(config, seed)
    rng = random.Random(policy_seed)
    log = []
    i = 0
    while not state.is_terminal():
        if replay is not None:
            actions = replay[i]
        else:
            actions = {s: rng.choice(state.legal_actions(s) + [None]) for s in state.to_act()}
        i += 1
        log.append((json.dumps(actions, sort_keys=True), state.apply(actions), state.full_observation()))
        if record is not None:
            record.append(actions)
    return state, log


def test_same_config_seed_and_actions_give_the_same_match():
    config = {"players": 4, "dice": 3, "games": 2}
    recorded = []
    first, log1 = _play(config, 42, 1, record=recorded)
    second, log2 = _play(config, 42, 99, replay=recorded)
    assert log1 == log2 and first.result() == second.result()
    assert new_state(config, 42).full_observation() == new_state(config, 42).full_observation()
    assert new_state(config, 42).hands != new_state(config, 43).hands


def test_clone_is_independent():
    state, (a, b, c) = fresh(dice=3)
    step(state, {a: [BID, 2, 1]})
    before = state.full_observation()
    copy = state.clone()
    step(copy, {b: [BID, 2, 2]})
    lose_round(copy, c)
    copy.hands[a].append(6)
    assert state.full_observation() == before
    # the copy's dice are the ones the original would roll next
    twin = state.clone()
    assert lose_round(state, c)["state"] == lose_round(twin, c)["state"]
    assert state.hands == twin.hands and state.order == twin.order


# --- properties ---------------------------------------------------------------------------------

GARBAGE = [[BID, 7, 1], [BID, 0, 1], [BID, 3, 0], [BID, True, 2], [BID, 2.0, 3], [BID, 2.5, 3],
           "xyz", 42, [BID, 3], [BID, -1, 5], [2, 3]]
KINDS = ("raise", CHALLENGE, PASS, None, "garbage")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), dice=st.integers(1, 8), games=st.integers(1, 3),
       seed=st.integers(0, 2**62), policy_seed=st.integers(0, 2**32),
       weights=st.lists(st.integers(0, 6), min_size=5, max_size=5))
def test_random_playouts(players, dice, games, seed, policy_seed, weights):
    weights[0] += 1
    config = {"players": players, "dice": dice, "games": games}
    state = new_state(config, seed)
    rng = random.Random(policy_seed)
    recorded, happenings_seen = [], []
    steps = 0
    max_steps = games * players * dice * (6 * players * dice + 2)
    while not state.is_terminal():
        steps += 1
        assert steps <= max_steps, "the match must end"
        actors = state.to_act()
        on_turn = state.on_turn
        assert actors and actors[0] == on_turn and len(set(actors)) == len(actors)
        assert all(state.counts[s] > 0 for s in actors)
        assert sum(1 for s in range(players) if state.counts[s] > 0) == len(actors) >= 2
        legal = state.legal_actions(on_turn)
        assert legal, "the player on turn always has something to do"
        actions = {}
        for seat in actors:
            kind = rng.choices(KINDS, weights)[0]
            if kind == "raise":
                options = state.legal_actions(seat)
                bids = [x for x in options if x != CHALLENGE] or [CHALLENGE]
                actions[seat] = rng.choice(bids if seat == on_turn else options)
            elif kind == "garbage":
                actions[seat] = rng.choice(GARBAGE)
            else:
                actions[seat] = kind
        total_before, counts_before = sum(state.counts), list(state.counts)
        game_before, order_before = state.game_number, list(state.order)
        recorded.append(actions)
        happened = state.apply(actions)
        happenings_seen.extend(happened)
        if not happened:
            bid = actions[on_turn]
            assert bid in legal and bid != CHALLENGE
            assert all(actions[s] is not None and actions[s] != CHALLENGE for s in actors)
            assert state.last_bid == (bid[1], bid[2]) and state.last_bidder == on_turn
            continue
        (over,) = happened
        loser = over["round_loser"]
        after = [n for _, n in over["state"]]
        assert sum(after) == total_before - 1, "one die per round"
        assert after[loser] == counts_before[loser] - 1
        assert [s for s, _ in over["state"]] == list(range(players))
        alive = [s for s in range(players) if after[s] > 0]
        assert over["game_winner"] == (alive[0] if len(alive) == 1 else None)
        if over["round_challenger"] is None:
            assert over["reason"] in ("no_answer", "invalid_move")
        if over["game_winner"] is None:
            assert state.game_number == game_before and state.order == order_before
            expected = loser
            while after[expected] == 0:
                expected = order_before[(order_before.index(expected) + 1) % players]
            assert state.on_turn == expected
        elif not state.is_terminal():
            assert state.game_number == game_before + 1 and state.counts == [dice] * players
        for seat in range(players):
            obs = state.observation(seat)
            assert "hands" not in obs and obs["your_hand"] == (state.hands[seat] if not state.is_terminal() else [])
    assert sum(state.wins) == games
    assert sum(1 for h in happenings_seen if h["game_winner"] is not None) == games
    result = state.result()
    assert result["scores"] == state.wins
    # the recorded joint actions replay to the same match
    replay = new_state(config, seed)
    replayed = []
    for actions in recorded:  # as the event log keeps them: through JSON
        replayed.extend(replay.apply({seat: json.loads(json.dumps(a)) for seat, a in actions.items()}))
    assert replay.is_terminal() and replay.result() == result
    assert replayed == happenings_seen and replay.full_observation() == state.full_observation()


# --- the reference's bid rule -------------------------------------------------------------------

def reference_check_next_bid(curr: dict, nxt: dict) -> bool:
    """The reference server's raise check, transcribed from its words in the notes ("A bid
    [face, count] raises [oldface, oldcount] when count >= oldcount and (count > oldcount or
    face > oldface)") on its own bid shape ``{"value": face, "count": count}``; it never looks
    at the dice on the table."""
    if nxt["count"] < curr["count"]:
        return False
    if nxt["count"] > curr["count"]:
        return True
    return nxt["value"] > curr["value"]


BIDS = st.tuples(st.integers(1, 6), st.integers(1, MAX_COUNT))
SMALL_COUNTS = st.tuples(st.integers(1, 6), st.integers(1, 30))  # pairs near each other, too


@settings(max_examples=2000, deadline=None)
@given(old=st.one_of(st.just((0, 0)), BIDS, SMALL_COUNTS), new=st.one_of(BIDS, SMALL_COUNTS))
def test_every_pair_of_bids_gets_the_reference_verdict(old, new):
    """Every bid [face 1-6, count 1 .. 2**31 - 1] after every bid or the start [0, 0]: valid
    here exactly when the reference's check calls it a raise, whatever the dice in play."""
    expected = reference_check_next_bid({"value": old[0], "count": old[1]}, {"value": new[0], "count": new[1]})
    assert bid_raises(*old, *new) is expected
    assert is_valid_bid([BID, *new], old) is expected


@settings(max_examples=300, deadline=None)
@given(players=st.integers(2, 6), dice=st.integers(1, 6), seed=st.integers(0, 2**32),
       old=st.one_of(st.just((0, 0)), BIDS, SMALL_COUNTS), new=st.one_of(BIDS, SMALL_COUNTS))
def test_a_match_takes_the_bids_the_reference_takes(players, dice, seed, old, new):
    """At a real table (2-6 players, few dice): the bid stands when it raises by the reference's
    rule, past the dice on the table or not; else the player on turn loses the round."""
    state, order = fresh(players=players, dice=dice, seed=seed)
    if old != (0, 0):
        assert step(state, {order[0]: [BID, *old]}) == []
    bidder = state.on_turn
    happenings = step(state, {bidder: [BID, *new]})
    if reference_check_next_bid({"value": old[0], "count": old[1]}, {"value": new[0], "count": new[1]}):
        assert happenings == [] and state.last_bid == new and state.last_bidder == bidder
        assert state.bids[-1] == [bidder, *new]
    else:
        (over,) = happenings
        assert (over["reason"], over["round_loser"], over["round_challenger"]) == ("invalid_move", bidder, None)


@settings(max_examples=60, deadline=None)
@given(players=st.integers(2, 6), dice=st.integers(1, 6), face=st.integers(1, 6),
       excess=st.one_of(st.integers(1, 50), st.just(MAX_COUNT - 6 * 6)))
def test_a_bid_past_the_dice_on_the_table_stands_and_a_challenge_decides_it(players, dice, face, excess):
    """A count above the dice in play is a raise, as for the reference (whose basic.js raises the
    count by one whatever is left), and certainly false: whoever challenges it wins, and the
    bidder loses a die."""
    state, order = fresh(players=players, dice=dice)
    bidder = order[0]
    count = players * dice + excess
    assert step(state, {bidder: [BID, face, count]}) == []
    assert state.last_bid == (face, count) and state.last_bidder == bidder
    challenger = state.to_act()[-1 if players > 2 else 0]
    (over,) = step(state, {challenger: CHALLENGE})
    assert (over["reason"], over["round_challenger"], over["round_loser"]) == ("challenge", challenger, bidder)
    assert over["bid"] == [face, count] and over["shown"] <= players * dice
    assert state.counts[bidder] == dice - 1


def test_a_round_that_runs_on_keeps_its_views_small():
    """Two players raising the count by one, 1,000 times: the state and its views keep the
    latest RECENT_BIDS bids and the number made."""
    state, (a, b) = fresh(players=2, dice=1)
    for count in range(1, 1001):
        assert step(state, {state.on_turn: [BID, 3, count]}) == []
    view = state.public_observation()
    assert view["bids_made"] == 1000 and len(view["bids"]) == RECENT_BIDS
    assert view["bids"][-1][1:] == [3, 1000] and view["bids"][0][1:] == [3, 1001 - RECENT_BIDS]
    assert len(json.dumps(view)) < 3000
