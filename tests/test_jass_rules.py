"""Jass (Schieber) rules: worked examples and properties (games/jass/rules.py)."""
from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings, strategies as st

from games.jass import protocol, rules
from games.jass.rules import CARD_INDEX, CARD_NAMES, PUSH

C = CARD_INDEX  # card number by name


def deal(*hands_text: str) -> list[list[str]]:
    """Four hands from space-separated names; the last hand may be omitted (gets the rest)."""
    hands = [h.split() for h in hands_text]
    if len(hands) == 3:
        used = {c for h in hands for c in h}
        hands.append([c for c in CARD_NAMES if c not in used])
    return hands


def play(state: rules.JassState, *steps) -> list[dict]:
    """Apply actions for whoever is on turn; returns all happenings."""
    out = []
    for action in steps:
        out += state.apply({state.to_act()[0]: action})
    return out


def legal_names(hand: str, trick: str, trump: int) -> set[str]:
    mask = rules.legal_cards(rules.names_to_mask(hand.split()), [C[c] for c in trick.split()], trump)
    return set(rules.mask_to_names(mask))


# --- tables ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", rules.TRUMPS)
def test_every_mode_has_152_card_points(mode):
    assert sum(rules.CARD_POINTS[mode]) == 152


def test_point_values_per_mode():
    pts = rules.CARD_POINTS
    assert [pts[rules.HEARTS][C[c]] for c in "HJ H9 HA H10 H8 SJ S9 SA".split()] == [20, 14, 11, 10, 0, 2, 0, 11]
    assert [pts[rules.OBE_ABE][C[c]] for c in "DA D8 D6 DJ D9".split()] == [11, 8, 0, 2, 0]
    assert [pts[rules.UNE_UFE][C[c]] for c in "DA D8 D6 D10 DK".split()] == [0, 8, 11, 10, 4]


def test_card_names_follow_the_protocol_order():
    assert CARD_NAMES[:9] == ("DA", "DK", "DQ", "DJ", "D10", "D9", "D8", "D7", "D6")
    assert CARD_NAMES[27] == "CA" and CARD_NAMES[35] == "C6" and len(CARD_NAMES) == 36


# --- trick winner ---------------------------------------------------------------------------
@pytest.mark.parametrize("cards, first, trump, winner", [
    ("SA SK H6 SQ", 0, rules.HEARTS, 2),   # the lowest trump beats the led ace (0 -> 3 -> 2 -> 1)
    ("H9 HJ HA HK", 1, rules.HEARTS, 0),   # Buur beats Nell: second card is played by seat 0
    ("HA H9 HK H6", 1, rules.HEARTS, 0),   # Nell beats the ace
    ("SK DA S6 SQ", 2, rules.OBE_ABE, 2),  # an off-suit ace never wins
    ("SK S6 SA D6", 2, rules.UNE_UFE, 1),  # Une-Ufe: the six wins
    ("C10 CJ CQ CA", 3, rules.UNE_UFE, 3),  # Une-Ufe: the ten beats the jack
    ("DQ DA D8 D7", 0, rules.OBE_ABE, 3),  # seed example: win 3
])
def test_trick_winner(cards, first, trump, winner):
    assert rules.trick_winner([C[c] for c in cards.split()], first, trump) == winner


# --- legal cards ----------------------------------------------------------------------------
def test_lead_is_free():
    assert legal_names("DA HJ C6", "", rules.SPADES) == {"DA", "HJ", "C6"}


def test_obe_abe_follow_suit_if_you_can_else_anything():
    assert legal_names("DA D6 HJ C6", "DK", rules.OBE_ABE) == {"DA", "D6"}
    assert legal_names("HJ C6", "DK", rules.UNE_UFE) == {"HJ", "C6"}


def test_follow_suit_or_trump():
    assert legal_names("SA S7 HJ H6 DA", "SK", rules.HEARTS) == {"SA", "S7", "HJ", "H6"}
    assert legal_names("HJ H6 DA", "SK", rules.HEARTS) == {"HJ", "H6", "DA"}


def test_trump_led_must_follow_with_trump():
    assert legal_names("HA H6 SA DA", "HK", rules.HEARTS) == {"HA", "H6"}


def test_buur_is_never_forced():
    assert legal_names("HJ SA DA", "HK", rules.HEARTS) == {"HJ", "SA", "DA"}
    # with another trump the Buur holder must follow trump (either trump)
    assert legal_names("HJ H6 SA", "HK", rules.HEARTS) == {"HJ", "H6"}


def test_no_under_trumping():
    # spades led, H9 trumped in; South holds spades: follow suit (or over-trump, none here)
    assert legal_names("S7 H6 HA", "SA H9", rules.HEARTS) == {"S7"}
    # no spades: anything but a lower trump
    assert legal_names("D6 H6 HJ", "SA H9", rules.HEARTS) == {"D6", "HJ"}


def test_under_trumping_allowed_with_only_trumps():
    assert legal_names("H6 H7", "SA H9", rules.HEARTS) == {"H6", "H7"}


def test_under_trump_is_measured_against_the_best_trump_in_the_trick():
    # H6 then the over-trump H9: the ace is lower than H9 (the kit compares with H6)
    assert legal_names("HA D7", "SA H6 H9", rules.HEARTS) == {"D7"}
    assert legal_names("HA HJ D7", "SA H6 H9", rules.HEARTS) == {"D7", "HJ"}


def test_legal_mask_of_the_state_matches_the_function():
    state = rules.new_state_from_deal(None, deal(
        "SA SK H6 D6 D7 D8 D9 D10 DJ", "S7 HA C6 C7 C8 C9 C10 CJ CQ", "S6 H9 HQ HJ DA DK DQ CA CK"), dealer=1)
    play(state, rules.HEARTS, "SA", "HK")  # North leads SA, West (who holds spades) trumps with HK
    assert state.to_act() == (2,)
    assert set(state.legal_actions(2)) == {"S6", "H9", "HJ"}  # follow spades or over-trump
    assert not state.is_legal(2, "HQ")
    assert "under-trumping" in state.why_illegal(2, "HQ")
    assert "follow suit" in state.why_illegal(2, "DA")
    assert "do not hold" in state.why_illegal(2, "C6")
    assert "not a card" in state.why_illegal(2, "X9")
    assert "turn" in state.why_illegal(0, "D6")
    with pytest.raises(ValueError, match="under-trumping"):
        state.apply({2: "HQ"})
    happenings = play(state, "HJ", "S7")
    assert happenings == [{"type": "trick_over", "deal": 1, "trick": 1, "cards": ["SA", "HK", "HJ", "S7"],
                           "first": 0, "win": 2, "points": 11 + 4 + 20 + 0, "deal_points": [35, 0]}]
    assert state.to_act() == (2,)


# --- trump declaration ----------------------------------------------------------------------
def test_forehand_declares_or_pushes_and_partner_must_declare():
    state = rules.new_state_from_deal(None, deal("DA DK DQ DJ D10 D9 D8 D7 D6",
                                                 "HA HK HQ HJ H10 H9 H8 H7 H6",
                                                 "SA SK SQ SJ S10 S9 S8 S7 S6"), dealer=0)
    assert state.to_act() == (3,)  # forehand is the player after the dealer: West
    assert state.legal_actions(3) == [0, 1, 2, 3, 4, 5, PUSH]
    assert state.legal_actions(0) == []
    assert not state.is_legal(3, True)  # a bool is not trump 1
    assert not state.is_legal(3, 10) and not state.is_legal(3, "10")
    assert state.observation(3)["forehand"] == -1
    play(state, PUSH)
    assert state.to_act() == (1,)  # West's partner, East
    assert state.legal_actions(1) == [0, 1, 2, 3, 4, 5]
    assert "may not push back" in state.why_illegal(1, PUSH)
    assert state.observation(1)["forehand"] == 0
    play(state, rules.UNE_UFE)
    obs = state.observation(1)
    assert (obs["trump"], obs["declarer"], obs["forehand"]) == (5, 1, 0)
    assert state.to_act() == (3,)  # the forehand leads the first trick even after pushing
    assert obs["tricks"] == [{"cards": [], "first": 3}]


def test_declaring_forehand_keeps_the_lead():
    state = rules.new_state_from_deal(None, deal("DA DK DQ DJ D10 D9 D8 D7 D6",
                                                 "HA HK HQ HJ H10 H9 H8 H7 H6",
                                                 "SA SK SQ SJ S10 S9 S8 S7 S6"), dealer=2)
    assert state.to_act() == (1,)
    play(state, rules.SPADES)
    assert state.to_act() == (1,) and state.forehand == 1 and state.declarer == 1


# --- deals, points, end of match ------------------------------------------------------------
def all_tricks_to_north(config=None) -> rules.JassState:
    """North holds every heart and leads trump nine times: North-South take all nine tricks."""
    state = rules.new_state_from_deal(config, deal("HA HK HQ HJ H10 H9 H8 H7 H6",
                                                   "DA DK DQ DJ D10 D9 D8 D7 D6",
                                                   "SA SK SQ SJ S10 S9 S8 S7 S6"), dealer=1, seed=5)
    play(state, rules.HEARTS)
    happenings = []
    while state.deal_number == 1 and not state.is_terminal():
        seat = state.to_act()[0]
        happenings += state.apply({seat: state.legal_actions(seat)[0]})
    return state, happenings


def test_match_scores_257_with_the_bonus():
    state, happenings = all_tricks_to_north()
    over = next(h for h in happenings if h["type"] == "deal_over")
    assert over["points"] == [257, 0] and over["match"] == 0 and over["complete"]
    assert state.match_points == [257, 0]
    assert sum(t["points"] for t in over["tricks"]) == 157


def test_match_without_the_bonus_is_157():
    state, happenings = all_tricks_to_north({"match_bonus": False})
    over = next(h for h in happenings if h["type"] == "deal_over")
    assert over["points"] == [157, 0] and over["match"] == 0


def test_the_deal_passes_in_play_order_and_the_forehand_deals_next():
    state = rules.new_state({"points_to_win": 100_000}, 3)
    rng = random.Random(0)
    dealers = [state.dealer]
    while state.deal_number < 6:
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
        if state.dealer != dealers[-1]:
            dealers.append(state.dealer)
    assert all(b == (a + 3) % 4 for a, b in zip(dealers, dealers[1:]))
    assert state.forehand_player == (state.dealer + 3) % 4


def test_match_ends_on_the_trick_that_reaches_the_target():
    state = rules.new_state({"points_to_win": 40}, 11)
    rng = random.Random(1)
    last = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        last = state.apply({seat: rng.choice(state.legal_actions(seat))})
    kinds = [h["type"] for h in last]
    assert kinds == ["trick_over", "deal_over", "match_over"]
    team = last[0]["win"] & 1
    assert state.winner_team == team and state.match_points[team] >= 40
    assert state.match_points[1 - team] < 40
    assert last[1]["complete"] is False and state.deal_number == 1
    assert state.result()["winners"] == [team, team + 2]
    assert state.to_act() == () and state.legal_actions(0) == []
    with pytest.raises(ValueError, match="over"):
        state.apply({0: "DA"})


def test_max_deals_ends_after_that_many_deals():
    state = rules.new_state({"max_deals": 2}, 4)
    rng = random.Random(2)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    a, b = state.match_points
    assert state.deal_number == 2 and a + b in (314, 414, 514)
    assert state.result()["winner_team"] == (0 if a > b else 1)
    assert len(state.deal_records()) == 2


def test_scoreboard_lists_every_finished_game_in_every_view():
    """The observations carry a scoreboard of the match's finished games (trump, who
    declared, points per team, Match), the same for players, spectators and replays."""
    state = rules.new_state({"points_to_win": 1500}, 21)
    rng = random.Random(3)
    seen = 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        games = state.observation(seat)["games"]
        assert len(games) == state.deal_number - 1  # only finished games, never the one in play
        seen = max(seen, len(games))
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    records = state.deal_records()
    assert len(records) >= 5 and seen == len(records) - 1
    # the match ended during the last game: it is listed too, marked as cut short
    assert records[-1]["complete"] is False
    for view in (state.public_observation(), state.full_observation(), state.revealed_observation(),
                 state.observation(0)):
        games = view["games"]
        assert [g["deal"] for g in games] == list(range(1, len(records) + 1))
        for g, r in zip(games, records):
            assert (g["trump"], g["declarer"], g["forehand"], g["points"], g["match"], g["complete"]) == (
                r["trump"], r["declarer"], r["forehand"], r["points"], r["match"], r["complete"])
            assert "hands" not in g and "tricks" not in g  # a summary, not the whole deal
    assert [sum(g["points"][t] for g in state.public_observation()["games"]) for t in (0, 1)] == state.match_points


def test_scoreboard_shows_a_match_with_its_bonus():
    state, _ = all_tricks_to_north()
    (game,) = state.public_observation()["games"]
    assert game == {"deal": 1, "dealer": 1, "declarer": 0, "forehand": 1, "trump": rules.HEARTS,
                    "points": [257, 0], "match": 0, "complete": True}


def test_config_is_checked():
    assert rules.normalize_config(None) == {"points_to_win": 1000, "match_bonus": True, "max_deals": 0,
                                            "hslu_undertrump": False}
    assert rules.normalize_config({"match_bonus": 0})["match_bonus"] is False
    for bad in ({"points_to_win": 0}, {"points_to_win": True}, {"max_deals": -1}, {"match_bonus": "yes"}, {"hslu_undertrump": 2},
                {"match_bonus": 1.0}):
        with pytest.raises(ValueError):
            rules.normalize_config(bad)


def test_new_state_from_deal_checks_the_hands():
    with pytest.raises(ValueError, match="9 cards"):
        rules.new_state_from_deal(None, [["DA"], [], [], []], dealer=0)
    hands = deal("DA DK DQ DJ D10 D9 D8 D7 D6", "HA HK HQ HJ H10 H9 H8 H7 H6", "SA SK SQ SJ S10 S9 S8 S7 S6")
    hands[3][0] = "DA"
    with pytest.raises(ValueError, match="twice|36"):
        rules.new_state_from_deal(None, hands, dealer=0)
    with pytest.raises(ValueError, match="dealer"):
        rules.new_state_from_deal(None, deal("DA DK DQ DJ D10 D9 D8 D7 D6", "HA HK HQ HJ H10 H9 H8 H7 H6",
                                             "SA SK SQ SJ S10 S9 S8 S7 S6"), dealer=4)


# --- observations ---------------------------------------------------------------------------
_CARD_RE = re.compile(r'"([DHSC](?:10|[AKQJ9876]))"')


def played_cards(state: rules.JassState) -> set[str]:
    """Every card played so far in the current deal (public)."""
    return {c for t in state.observation(0)["tricks"] for c in t["cards"]}


def test_observations_hide_other_hands():
    state = rules.new_state(None, 8)
    rng = random.Random(8)
    for _ in range(400):
        if state.is_terminal():
            break
        public = played_cards(state)
        for seat in range(4):
            text = json.dumps(state.observation(seat))
            assert set(_CARD_RE.findall(text)) <= public | set(rules.mask_to_names(state.hands[seat]))
        assert set(_CARD_RE.findall(json.dumps(state.public_observation()))) <= public
        full = state.full_observation()
        assert [set(h) for h in full["hands"]] == [set(rules.mask_to_names(h)) for h in state.hands]
        seat = state.to_act()[0]
        happenings = state.apply({seat: rng.choice(state.legal_actions(seat))})
        # happenings go to every seat: only cards already played may appear in them
        trick = happenings[0]["cards"] if happenings else []
        for h in happenings:
            assert set(_CARD_RE.findall(json.dumps(h))) <= public | set(trick)


def test_observation_shape():
    state = rules.new_state(None, 2)
    obs = state.observation(state.to_act()[0])
    for key in ("deal_number", "dealer", "forehand_player", "forehand", "trump", "declarer", "phase",
                "current_player", "to_act", "tricks", "hand_sizes", "deal_points", "match_points",
                "points_to_win", "match_bonus", "max_deals", "last_deal", "games", "terminal",
                "winner_team", "seat", "hand"):
        assert key in obs
    assert obs["phase"] == "trump" and obs["hand_sizes"] == [9, 9, 9, 9] and len(obs["hand"]) == 9
    assert "hand" not in state.public_observation() and "hands" not in state.public_observation()
    json.dumps(state.full_observation())


def test_clone_is_independent():
    state = rules.new_state(None, 9)
    play(state, 0)
    copy = state.clone()
    seat = copy.to_act()[0]
    copy.apply({seat: copy.legal_actions(seat)[0]})
    assert state.observation(0)["tricks"] == [{"cards": [], "first": state.forehand_player}]
    assert copy.observation(0)["tricks"][0]["cards"] != []
    # the clone deals the same future
    a, b = state.clone(), state.clone()
    for s in (a, b):
        rng = random.Random(3)
        while s.deal_number < 3:
            seat = s.to_act()[0]
            s.apply({seat: rng.choice(s.legal_actions(seat))})
    assert a.full_observation() == b.full_observation()


def test_apply_needs_the_seat_on_turn():
    state = rules.new_state(None, 1)
    with pytest.raises(ValueError, match="no action for seat"):
        state.apply({(state.to_act()[0] + 1) % 4: 0})


# --- properties -----------------------------------------------------------------------------
def reference_legal(hand: list[int], trick: list[int], trump: int) -> set[int]:
    """The rule text, card by card (module docstring, rule 3), independent of the masks."""
    suit = lambda c: c // 9  # noqa: E731
    strength = lambda c: rules._TRUMP_STRENGTH[c % 9]  # noqa: E731
    if not trick:
        return set(hand)
    lead = suit(trick[0])
    holds_lead = any(suit(c) == lead for c in hand)
    if trump >= 4:
        return {c for c in hand if suit(c) == lead} if holds_lead else set(hand)
    my_trumps = [c for c in hand if suit(c) == trump]
    if lead == trump:
        if my_trumps and my_trumps != [9 * trump + 3]:
            return set(my_trumps)
        return set(hand)
    in_trick = [c for c in trick if suit(c) == trump]
    only_trumps = len(my_trumps) == len(hand)
    out = set()
    for c in hand:
        if suit(c) == trump:
            if only_trumps or not in_trick or strength(c) > max(map(strength, in_trick)):
                out.add(c)
        elif suit(c) == lead or not holds_lead:
            out.add(c)
    return out


def reference_winner(trick: list[int], first: int, trump: int) -> int:
    order = [first, (first + 3) % 4, (first + 2) % 4, (first + 1) % 4]
    lead = trick[0] // 9

    def key(c):
        if trump < 4 and c // 9 == trump:
            return (2, rules._TRUMP_STRENGTH[c % 9])
        if c // 9 == lead:
            return (1, c % 9 if trump == rules.UNE_UFE else 8 - c % 9)
        return (0, 0)
    return order[max(range(4), key=lambda i: key(trick[i]))]


def random_deal(seed: int, choices: random.Random, config=None):
    """Play one deal with random legal actions, checking the invariants at every step."""
    state = rules.new_state(dict(config or {}, max_deals=1), seed)
    steps = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        assert legal, "legal actions must never be empty while the match runs"
        if state.phase == 1:
            hand = [c for c in range(36) if state.hands[seat] >> c & 1]
            assert {C[c] for c in legal} == reference_legal(hand, state.trick, state.trump)
            assert sum(bin(h).count("1") for h in state.hands) + len(state.trick) + 4 * len(state.tricks) == 36
        action = choices.choice(legal)
        assert state.is_legal(seat, action) and state.why_illegal(seat, action) is None
        steps.append((seat, action))
        state.apply({seat: action})
    return state, steps


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**63), choices=st.randoms(use_true_random=False), bonus=st.booleans())
def test_every_deal_totals_157_or_a_match(seed, choices, bonus):
    state, _ = random_deal(seed, choices, {"match_bonus": bonus})
    (record,) = state.deal_records()
    a, b = record["points"]
    assert sum(t["points"] for t in record["tricks"]) == 157
    tricks_won = [sum(1 for t in record["tricks"] if t["win"] & 1 == team) for team in (0, 1)]
    if 9 in tricks_won:
        assert record["match"] == tricks_won.index(9)
        assert a + b == (257 if bonus else 157)
    else:
        assert record["match"] is None and a + b == 157
    for t in record["tricks"]:
        assert t["win"] == reference_winner([C[c] for c in t["cards"]], t["first"], record["trump"])
    hands = record["hands"]
    assert sorted(c for h in hands for c in h) == sorted(CARD_NAMES)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63), choices=st.randoms(use_true_random=False))
def test_random_matches_terminate_and_replay_from_seed_and_actions(seed, choices):
    state = rules.new_state(None, seed)
    steps = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        assert legal
        action = choices.choice(legal)
        steps.append((seat, action))
        state.apply({seat: action})
        assert len(steps) < 14 * 38, "a match to 1000 needs at most 13 deals"
    assert state.deal_number <= 13
    result = state.result()
    assert max(result["team_points"]) >= 1000 and result["winner_team"] in (0, 1)
    assert min(result["team_points"]) < 1000

    replay = rules.new_state(None, seed)
    for seat, action in steps:
        assert replay.to_act() == (seat,)
        replay.apply({seat: action})
    assert replay.is_terminal()
    assert replay.full_observation() == state.full_observation()
    assert replay.result() == result
    assert replay.deal_records() == state.deal_records()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**63), choices=st.randoms(use_true_random=False))
def test_deal_records_replay_on_the_dealt_hands(seed, choices):
    state, steps = random_deal(seed, choices)
    (record,) = state.deal_records()
    replay = rules.new_state_from_deal({"max_deals": 1}, record["hands"], record["dealer"])
    assert rules.deal_actions(record) == steps
    for seat, action in rules.deal_actions(record):
        replay.apply({seat: action})
    assert replay.deal_records() == state.deal_records()


def test_new_state_is_deterministic_from_the_seed():
    assert rules.new_state(None, 42).full_observation() == rules.new_state(None, 42).full_observation()
    assert rules.new_state(None, 42).full_observation() != rules.new_state(None, 43).full_observation()


@pytest.mark.parametrize("seed", [0, 1, 42, 2**32 - 1, 2**63 + 5])
def test_a_seed_deals_as_ever(seed):
    """Replays deal again from the match's seed, so how a seed deals must never change: the
    first dealer is ``Random(seed).randrange(4)``; each deal then shuffles the card numbers
    0-35 with the same generator (``random.shuffle``) and gives nine each, North first."""
    state = rules.new_state({"points_to_win": 100_000, "max_deals": 4}, seed)
    reference = random.Random(seed)
    assert state.dealer == reference.randrange(4)
    moves = random.Random(seed + 1)
    for _ in range(4):
        deck = list(range(36))
        reference.shuffle(deck)
        assert state.dealt == tuple(sum(1 << c for c in deck[i:i + 9]) for i in (0, 9, 18, 27))
        number = state.deal_number
        while state.deal_number == number and not state.is_terminal():
            (seat,) = state.to_act()
            state.apply({seat: moves.choice(state.legal_actions(seat))})
    assert state.is_terminal() and state.deal_number == 4


@pytest.mark.parametrize("config, seed", [
    ({"points_to_win": 1000}, 3),  # ends at the target, mid-game
    ({"points_to_win": 100_000, "max_deals": 4, "match_bonus": False}, 8),
    ({"points_to_win": 100_000, "max_deals": 6}, 21),
])
def test_last_deal_and_the_seed_log_tell_the_game_just_over(config, seed):
    """After each game, what the table shows of it (``last_deal``, in every view) and its seed
    log say what a player saw happen: its number, the dealer (moving on in play order), who
    declared which trump, each team's points (its tricks, +100 for a Match when on), the
    Match, and whether it was played out."""
    state, rng = rules.new_state(config, seed), random.Random(seed)
    dealer, deal, declared, taken = state.public_observation()["dealer"], 1, None, []
    while not state.is_terminal():
        seat = state.to_act()[0]
        action = rng.choice(state.legal_actions(seat))
        if state.public_observation()["phase"] == "trump" and action != "push":
            declared = (seat, action)
        happenings = state.apply({seat: action})
        taken += [(h["win"], h["points"]) for h in happenings if h["type"] == "trick_over"]
        if not any(h["type"] == "deal_over" for h in happenings):
            continue
        points = [sum(p for win, p in taken if win % 2 == team) for team in (0, 1)]
        match = next((team for team in (0, 1) if len(taken) == 9 and all(w % 2 == team for w, _ in taken)), None)
        if match is not None and state.match_bonus:
            points[match] += 100
        expected = {"deal": deal, "dealer": dealer, "declarer": declared[0], "trump": declared[1],
                    "points": points, "match": match, "complete": len(taken) == 9}
        for view in (state.public_observation(), state.observation(seat), state.full_observation()):
            assert view["last_deal"] == expected, (deal, view["last_deal"], expected)
        log = protocol.game_log(state.deal_records()[-1])
        assert (log["dealer"], log["trump"]) == (dealer, declared[1])
        assert [(t["win"], t["points"]) for t in log["tricks"] if "cards" in t] == taken
        dealer, deal, declared, taken = (dealer + 3) % 4, deal + 1, None, []
    assert deal > 2
