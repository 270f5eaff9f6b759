"""Jass views built from what the state keeps ready (games/jass/rules.py, ``JassState``'s
docstring): they equal views built from scratch from the state's facts, a view handed out is
never changed by later moves, and pickles (replay snapshots, old ones too) rebuild what is
kept ready.  Random matches straight through the rules engine."""
from __future__ import annotations

import copy
import pickle
import random

import pytest

from games.jass import bots, protocol, rules
from games.jass.rules import CARD_NAMES

CONFIGS = [
    {"points_to_win": 1000},
    {"points_to_win": 400, "match_bonus": False, "hslu_undertrump": True},
    {"points_to_win": 100_000, "max_deals": 3},
]


def scratch_public(state: rules.JassState) -> dict:
    """The public view built from scratch, from the state's facts (the rules' docstrings),
    in the views' key order."""
    tricks = [{"cards": [CARD_NAMES[c] for c in cards], "points": pts, "win": win, "first": first}
              for cards, first, win, pts in state.tricks]
    if state.phase == 1:
        tricks.append({"cards": [CARD_NAMES[c] for c in state.trick], "first": state.trick_first})
    records = state.deal_records()
    last = records[-1] if records else None
    return {
        "deal_number": state.deal_number,
        "dealer": state.dealer,
        "forehand_player": state.forehand_player,
        "forehand": state.forehand,
        "trump": state.trump,
        "declarer": state.declarer,
        "phase": ("trump", "play", "over")[state.phase],
        "current_player": state.player,
        "to_act": list(state.to_act()),
        "tricks": tricks,
        "hand_sizes": [bin(h).count("1") for h in state.hands],
        "deal_points": list(state.deal_points),
        "match_points": list(state.match_points),
        "points_to_win": state.points_to_win,
        "match_bonus": state.match_bonus,
        "max_deals": state.max_deals,
        "hslu_undertrump": state.hslu_undertrump,
        "last_deal": None if last is None else {k: last[k] for k in (
            "deal", "dealer", "declarer", "trump", "points", "match", "complete")},
        "games": [{k: r[k] for k in ("deal", "dealer", "declarer", "forehand", "trump", "points", "match",
                                     "complete")} for r in records],
        "terminal": state.is_terminal(),
        "winner_team": state.winner_team,
    }


def assert_views_as_from_scratch(state: rules.JassState) -> None:
    public = scratch_public(state)
    for view in (state.public_observation(), state.revealed_observation(), state.full_observation()):
        assert list(view)[:len(public)] == list(public) and {k: view[k] for k in public} == public
    for seat in range(4):
        own = state.observation(seat)
        assert list(own) == list(public) + ["seat", "hand"]
        assert own == {**public, "seat": seat, "hand": rules.mask_to_names(state.hands[seat])}


def random_steps(state: rules.JassState, rng: random.Random):
    """Yield before each step, then play a random legal action; once more at the end."""
    while not state.is_terminal():
        yield
        (seat,) = state.to_act()
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    yield


@pytest.mark.parametrize("seed", range(6))
def test_views_equal_views_built_from_scratch(seed):
    state = rules.new_state(CONFIGS[seed % 3], seed)
    for _ in random_steps(state, random.Random(seed)):
        assert_views_as_from_scratch(state)


@pytest.mark.parametrize("seed", range(3))
def test_a_view_handed_out_is_never_changed_by_later_moves(seed):
    """Views share the finished tricks, the scoreboard and the last deal with later ones, so
    the state must never change them in place: every view kept through a whole match still
    equals the deep copy taken when it was handed out (trump decisions, tricks, deals and the
    end of the match included)."""
    state = rules.new_state(CONFIGS[seed % 3], seed)
    kept = []
    for _ in random_steps(state, random.Random(seed)):
        seat = state.player if state.player >= 0 else 0
        for view in (state.observation(seat), state.public_observation(), state.revealed_observation()):
            kept.append((view, copy.deepcopy(view)))
    assert len(kept) > 300
    for view, then in kept:
        assert view == then


@pytest.mark.parametrize("seed", range(3))
def test_the_built_in_bots_and_the_request_body_leave_a_view_as_it_is(seed):
    """Views share their lists with one another, and in the play phase ``to_act`` and
    ``hand_sizes`` with every match, so whoever reads one must not change it: the built-in
    bots (given the view and the legal actions, as a built-in seat calls them) and the HTTP
    bots' request body read the view of the seat on turn at every step of a match."""
    state = rules.new_state(CONFIGS[seed % 3], seed)
    for _ in random_steps(state, random.Random(seed)):
        if state.is_terminal():
            break
        seat = state.player
        view = state.observation(seat)
        then = copy.deepcopy(view)
        legal = state.legal_actions(seat)
        for _, policy in bots.BUILTIN_BOTS.values():
            assert policy(view, legal, random.Random(seed)) in legal
        protocol.request_body(view)
        protocol.request_kind(view)
        assert view == then and view == state.observation(seat)


def test_changing_a_view_does_not_change_the_next():
    """A view is the caller's dict: setting or removing its keys touches nothing kept."""
    state = rules.new_state(None, 4)
    rng = random.Random(4)
    for _ in random_steps(state, rng):
        for view in (state.observation(state.player if state.player >= 0 else 0), state.public_observation()):
            for key in list(view):
                view[key] = "changed"
            view.clear()
        assert_views_as_from_scratch(state)


@pytest.mark.parametrize("old_format", [False, True])
def test_a_pickled_state_rebuilds_its_views_and_plays_on_alike(old_format):
    """Replay snapshots are pickles.  What the state keeps ready for views is not pickled but
    rebuilt, also from a snapshot written before it existed (the default pickle state of a
    class with slots: ``(None, {slot: value})``, without those fields)."""
    state = rules.new_state(None, 11)
    rng = random.Random(11)
    for _ in random_steps(state, rng):
        if state.deal_number == 2 and len(state.tricks) == 3 and len(state.trick) == 2:
            break  # the second deal, mid-trick
    state.observation(0)  # the bases are built, the legal mask cached
    state.legal_actions(state.player)
    if old_format:
        derived = {"trick_names", "wire_done", "games", "legal_cache", "bases"}
        loaded = rules.JassState.__new__(rules.JassState)
        slots = {k: getattr(state, k) for k in rules.JassState.__slots__ if k not in derived}
        loaded.__setstate__(copy.deepcopy((None, slots)))  # as unpickling gives it: nothing shared
    else:
        blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        assert b"wire_done" not in blob
        loaded = pickle.loads(blob)
    play_rng = random.Random(5)
    while not state.is_terminal():
        assert loaded.public_observation() == state.public_observation()
        assert [loaded.observation(s) for s in range(4)] == [state.observation(s) for s in range(4)]
        (seat,) = state.to_act()
        assert loaded.legal_actions(seat) == state.legal_actions(seat)
        action = play_rng.choice(state.legal_actions(seat))
        assert loaded.apply({seat: action}) == state.apply({seat: action})
    assert loaded.full_observation() == state.full_observation() and loaded.result() == state.result()
    assert_views_as_from_scratch(loaded)


def test_a_clone_and_its_original_keep_their_own_views():
    """What is kept ready for views is the state's own: a clone and its original play on
    differently (and a clone's fields may be set directly) with views as from scratch."""
    state = rules.new_state(None, 12)
    rng = random.Random(12)
    for _ in random_steps(state, rng):
        if state.phase == 1 and len(state.tricks) == 2:
            break
    state.observation(0)  # the bases are built
    other = state.clone()
    other.hslu_undertrump = True
    for s, seed in ((other, 1), (state, 2), (other, 3)):
        for _ in zip(range(15), random_steps(s, random.Random(seed))):
            assert_views_as_from_scratch(s)
    assert_views_as_from_scratch(state)
