"""What every view is built from, game by game: the observations' keys (the browser's table
scripts, the codecs and the replay read them by name, so a renamed or missing key is a broken
page), and the views that may show more than a seat's own (the public and the revealed
observations) show only what is over.  Random games straight through the rules engines,
with hands tracked from each seat's own observation."""
from __future__ import annotations

import random

import pytest

from games.blokus import rules as blokus_rules
from games.jass import rules as jass_rules
from games.liars_dice import rules as ld_rules

# --- Liar's Dice ------------------------------------------------------------------------------

LD_PUBLIC = {"game_number", "games", "round_number", "move_number", "order", "dice_counts", "on_turn", "to_act",
             "last_bid", "last_bidder", "bids", "bids_made", "wins", "last_round", "terminal"}
LD_ROUND_OVER = {"type", "game_number", "round_number", "state", "round_loser", "round_challenger", "game_winner",
                 "reason", "bid", "bidder", "shown", "hands"}


@pytest.mark.parametrize("seed", range(4))
def test_liars_dice_views_have_their_keys_and_show_only_the_round_just_over(seed):
    rng = random.Random(seed)
    state = ld_rules.new_state({"players": 3, "dice": 2, "games": 2}, seed)
    seen = {}  # seat -> the dice it saw in its own observation this round
    rounds = 0
    while not state.is_terminal():
        public = state.public_observation()
        assert set(public) == LD_PUBLIC
        assert set(state.full_observation()) == LD_PUBLIC | {"hands"}
        for seat in range(3):
            own = state.observation(seat)
            assert set(own) == LD_PUBLIC | {"your_seat", "your_hand"} and own["your_seat"] == seat
            assert {k: own[k] for k in LD_PUBLIC} == public, "a seat's view is the public one plus its dice"
            assert len(own["your_hand"]) == public["dice_counts"][seat]
            seen[seat] = own["your_hand"]
        actions = {}
        for seat in state.to_act():
            legal = state.legal_actions(seat)
            actions[seat] = rng.choice(legal[:3] if rng.random() < 0.7 else legal)
        for happening in state.apply(actions):
            if happening["type"] == "round_over":
                rounds += 1
                assert set(happening) == LD_ROUND_OVER
                assert [sorted(h) for h in happening["hands"]] == [sorted(seen.get(s, [])) for s in range(3)]
                assert state.public_observation()["last_round"] == happening
    assert rounds >= 4
    assert set(state.result()) == {"scores", "winner"} and sum(state.result()["scores"]) == 2


# --- Jass -------------------------------------------------------------------------------------

JASS_PUBLIC = {"deal_number", "dealer", "forehand_player", "forehand", "trump", "declarer", "phase", "current_player",
               "to_act", "tricks", "hand_sizes", "deal_points", "match_points", "points_to_win", "match_bonus",
               "max_deals", "hslu_undertrump", "last_deal", "games", "terminal", "winner_team"}
JASS_DEAL_OVER = {"type", "deal", "dealer", "forehand", "declarer", "trump", "tricks", "points", "match", "complete",
                  "match_points"}


@pytest.mark.parametrize("seed", range(3))
def test_jass_views_have_their_keys_and_reveal_only_the_deal_over(seed):
    """Three deals; the revealed observation shows, from the second on, the four hands the
    seats held at the start of the previous deal, never the deal in play."""
    rng = random.Random(seed)
    state = jass_rules.new_state({"points_to_win": 5000, "max_deals": 3, "hslu_undertrump": seed % 2}, seed)
    dealt = {}  # deal number -> each seat's hand at the deal's first request
    happenings = []
    while not state.is_terminal():
        deal = state.deal_number
        public = state.public_observation()
        assert set(public) == JASS_PUBLIC and public["hslu_undertrump"] == seed % 2
        for seat in range(4):
            own = state.observation(seat)
            assert set(own) == JASS_PUBLIC | {"seat", "hand"}
            assert {k: own[k] for k in JASS_PUBLIC} == public
        dealt.setdefault(deal, [state.observation(s)["hand"] for s in range(4)])
        revealed = state.revealed_observation()
        assert set(revealed) == JASS_PUBLIC | {"last_deal_hands"}
        if deal == 1:
            assert revealed["last_deal_hands"] is None and public["last_deal"] is None
        else:
            assert revealed["last_deal_hands"] == dealt[deal - 1], "the hands of the deal just over, as dealt"
        held = [set(state.observation(s)["hand"]) for s in range(4)]
        assert all(set(h) != held[s] for s, h in enumerate(revealed["last_deal_hands"] or []) if held[s])
        (seat,) = state.to_act()
        happenings += state.apply({seat: rng.choice(state.legal_actions(seat))})
    assert sorted(dealt) == [1, 2, 3]
    deal_overs = [h for h in happenings if h["type"] == "deal_over"]
    assert [h["deal"] for h in deal_overs] == [1, 2, 3] and all(set(h) == JASS_DEAL_OVER for h in deal_overs)
    (over,) = [h for h in happenings if h["type"] == "match_over"]
    result = state.result()
    assert over == {"type": "match_over", "winner_team": result["winner_team"], "match_points": result["team_points"]}
    assert set(result) == {"scores", "winner", "winner_team", "winners", "team_points", "deals"}
    assert result["deals"] == 3 and set(state.full_observation()) == JASS_PUBLIC | {"hands", "dealt"}


def test_jass_a_new_match_has_no_winner_yet():
    state = jass_rules.new_state(None, 1)
    assert state.public_observation()["winner_team"] is None and state.result()["winners"] == []


def test_jass_a_match_plays_the_deals_it_was_given():
    """An imported log's deals (``config["deals"]``): each deal starts with the given dealer
    and hands, whatever the seed; hands that are not the 36 cards, four times nine, are refused."""
    deck = list(jass_rules.CARD_NAMES)
    deals = []
    for dealer in (3, 0):
        random.Random(dealer).shuffle(deck)
        deals.append({"dealer": dealer, "hands": [sorted(deck[9 * s:9 * s + 9]) for s in range(4)]})
    rng = random.Random(1)
    state = jass_rules.new_state({"deals": deals, "max_deals": 2, "points_to_win": 5000}, 99)
    seen = {}
    while not state.is_terminal():
        seen.setdefault(state.deal_number, (state.public_observation()["dealer"],
                                            [sorted(state.observation(s)["hand"]) for s in range(4)]))
        (seat,) = state.to_act()
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    assert seen == {1: (3, deals[0]["hands"]), 2: (0, deals[1]["hands"])}
    short = [h[:8] for h in deals[0]["hands"]]
    twice = [deals[0]["hands"][0]] * 4
    for bad, why in (([{"dealer": 4, "hands": deals[0]["hands"]}], "dealer 0-3"),
                     ([{"dealer": 0, "hands": short}], "four hands of nine cards"),
                     ([{"dealer": 0, "hands": twice}], "each of the 36 cards once"), ("not a list", "a list")):
        with pytest.raises(ValueError, match=why):
            jass_rules.new_state({"deals": bad}, 1)


@pytest.mark.parametrize("action", [None, ["C8"], {"card": "C8"}, 3.5, "XX", 99, True])
def test_jass_malformed_actions_are_explained_not_raised(action):
    """A bot's answer that the codec let through (or a test's) is refused with a reason in
    both phases, never an exception."""
    state = jass_rules.new_state(None, 3)
    for _ in range(2):  # the trump phase, then the play phase
        (seat,) = state.to_act()
        assert not state.is_legal(seat, action)
        assert repr(action) in state.why_illegal(seat, action)
        state.apply({seat: next(a for a in state.legal_actions(seat) if a != jass_rules.PUSH)})


# --- Blokus -----------------------------------------------------------------------------------

BLOKUS_PUBLIC = {"variant", "board", "current_color", "current_seat", "last_cells", "last_move", "last_move_mono",
                 "points", "result", "round", "shapes", "start_piece", "start_team", "team_points", "terminal",
                 "turn", "valid_colors"}


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_blokus_views_have_their_keys(variant):
    rng = random.Random(5)
    state = blokus_rules.new_state({"variant": variant}, 5)
    rounds = set()
    while not state.is_terminal():
        public = state.public_observation()
        assert set(public) == BLOKUS_PUBLIC and public["variant"] == variant and public["result"] is None
        assert state.observation(0) == public == state.observation(1), "Blokus hides nothing"
        rounds.add(public["round"])
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        # mostly a placement; now and then a skip, once skipping is legal
        action = rng.choice(legal[:-1]) if len(legal) > 1 and rng.random() > 0.05 else legal[-1]
        happenings = state.apply({seat: action})
        assert happenings[0]["type"] == "move" and happenings[0]["action"] == action
    final = state.public_observation()
    assert final["terminal"] and final["result"] == state.result() and len(rounds) > 5
    assert happenings[-1] == {"type": "game_over", "cause": "REGULAR"}


def test_jass_a_card_not_held_is_explained_with_the_hand():
    """The forced-move detail that goes to the bot's owner only: the card and its hand."""
    state = jass_rules.new_state(None, 4)
    (seat,) = state.to_act()
    state.apply({seat: 0})
    (seat,) = state.to_act()
    hand = state.observation(seat)["hand"]
    card = next(c for c in jass_rules.CARD_NAMES if c not in hand)
    assert state.why_illegal(seat, card) == f"you do not hold {card}; your hand: {' '.join(hand)}"
