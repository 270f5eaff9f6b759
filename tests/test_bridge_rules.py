"""Contract bridge rules: worked examples and properties (games/bridge/rules.py)."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings, strategies as st

from games.bridge import rules, scoring
from games.bridge.rules import CARD_NAMES, new_state, new_state_from_deal

N, E, S, W = range(4)

# Each player holds one whole suit: North spades, East hearts, South diamonds, West clubs.
# Nobody can ever follow suit, so the leader of a trick wins it unless someone ruffs.
SUITED = [[s + r for r in "AKQJT98765432"] for s in "SHDC"]


def round_robin() -> list[list[str]]:
    """Card c of the 52 (clubs first, twos first) to seat c % 4: every hand holds 3-4 of each suit."""
    return [[CARD_NAMES[c] for c in range(52) if c % 4 == seat] for seat in range(4)]


def play(state: rules.BridgeState, *actions: str) -> list[dict]:
    """Apply actions for whoever is to act; returns all happenings."""
    out = []
    for action in actions:
        out += state.apply({state.to_act()[0]: action})
    return out


def play_randomly(state: rules.BridgeState, rng: random.Random, check=None) -> None:
    while not state.is_terminal():
        seat = state.to_act()[0]
        if check:
            check(state)
        state.apply({seat: rng.choice(state.legal_actions(seat))})


# --- cards and calls ------------------------------------------------------------------------
def test_card_and_call_names():
    assert len(set(CARD_NAMES)) == 52
    assert CARD_NAMES[0] == "C2" and CARD_NAMES[12] == "CA" and CARD_NAMES[51] == "SA"
    assert rules.mask_to_names(rules.names_to_mask(["C2", "SA", "HT", "S2"])) == ["SA", "S2", "HT", "C2"]
    assert rules.CALL_NAMES[:6] == ("1C", "1D", "1H", "1S", "1NT", "2C")
    assert rules.CALL_NAMES[34:] == ("7NT", "P", "X", "XX")
    with pytest.raises(ValueError):
        rules.names_to_mask(["SA", "SA"])
    with pytest.raises(ValueError):
        rules.names_to_mask(["S1"])


@pytest.mark.parametrize("text, card", [("SA", "SA"), ("as", "SA"), ("KH", "HK"), ("h10", "HT"), ("10h", "HT"),
                                        ("Ct", "CT"), (" D2 ", "D2")])
def test_parse_card(text, card):
    assert rules.parse_card(text) == card


@pytest.mark.parametrize("text", ["", "S1", "SS", "XA", "S11", 12, "SAK"])
def test_parse_card_refuses(text):
    with pytest.raises(ValueError):
        rules.parse_card(text)


@pytest.mark.parametrize("text, call", [("1NT", "1NT"), ("1n", "1NT"), ("7nt", "7NT"), ("3s", "3S"),
                                        ("PASS", "P"), ("passes", "P"), ("p", "P"), ("Double", "X"),
                                        ("doubles", "X"), ("x", "X"), ("redoubles", "XX"), ("xx", "XX")])
def test_parse_call(text, call):
    assert rules.parse_call(text) == call


@pytest.mark.parametrize("text", ["8C", "0NT", "1X", "", "NT", None])
def test_parse_call_refuses(text):
    with pytest.raises(ValueError):
        rules.parse_call(text)


# --- boards (Law 2) -------------------------------------------------------------------------
# Law 2's table for boards 1-16, repeated for 17-32: (dealer, vulnerability).
LAW_2 = [(N, "None"), (E, "NS"), (S, "EW"), (W, "Both"), (N, "NS"), (E, "EW"), (S, "Both"), (W, "None"),
         (N, "EW"), (E, "Both"), (S, "None"), (W, "NS"), (N, "Both"), (E, "None"), (S, "NS"), (W, "EW")]


@pytest.mark.parametrize("board", range(1, 33))
def test_dealer_and_vulnerability_follow_the_16_board_cycle(board):
    dealer, vul = LAW_2[(board - 1) % 16]
    assert rules.board_dealer(board) == dealer
    assert rules.board_vulnerability(board) == vul
    state = new_state({"board": board}, 7)
    obs = state.public_observation()
    assert (obs["board"], obs["dealer"], obs["vulnerability"]) == (board, dealer, vul)
    assert state.to_act() == (dealer,)


def test_a_sequence_of_boards_follows_the_cycle():
    state = new_state({"board": 15, "boards": 4}, 3)
    seen = []
    while not state.is_terminal():
        seen.append((state.board, state.dealer, state.vulnerability))
        play(state, "P", "P", "P", "P")
    assert seen == [(15, S, "NS"), (16, W, "EW"), (17, N, "None"), (18, E, "NS")]


# --- the deal -------------------------------------------------------------------------------
def test_the_seed_decides_the_deal():
    a, b, c = new_state({}, 5), new_state({}, 5), new_state({}, 6)
    assert a.full_observation()["hands"] == b.full_observation()["hands"] != c.full_observation()["hands"]


def test_an_explicit_deal_is_played():
    state = new_state_from_deal(SUITED, board=3)
    assert state.full_observation()["dealt"] == SUITED
    assert state.dealer == S
    with pytest.raises(ValueError):
        new_state_from_deal([SUITED[0], SUITED[0], SUITED[2], SUITED[3]])
    with pytest.raises(ValueError):
        new_state_from_deal([SUITED[0][:12], SUITED[1] + [SUITED[0][12]], SUITED[2], SUITED[3]])


def test_a_deal_may_carry_its_own_dealer_and_vulnerability():
    """The replay room keeps the board's number while the hands turn one seat (BEN's board N
    "Open" then "Closed"): dealer and vulnerability turn with the cards, not with Law 2."""
    state = new_state({"board": 1, "deals": [{"board": 1, "hands": SUITED, "dealer": E, "vulnerability": "EW"}]}, 0)
    assert (state.board, state.dealer, state.vulnerability) == (1, E, "EW")
    assert state.to_act() == (E,)
    assert state.public_observation()["vulnerability"] == "EW"
    play(state, "1NT", "P", "P", "P")
    play_out(state)
    assert state.is_terminal()
    record = state.board_records()[0]
    assert record["dealer"] == E and record["vulnerability"] == "EW"
    plain = new_state_from_deal(SUITED, board=1)
    assert (plain.dealer, plain.vulnerability) == (N, "None")
    for bad in ({"dealer": 4}, {"dealer": "E"}, {"vulnerability": "All"}):
        with pytest.raises(ValueError):
            new_state({"deals": [{"hands": SUITED, **bad}]}, 0)


@pytest.mark.parametrize("config", [{"boards": 0}, {"boards": 1001}, {"board": 0}, {"board": True},
                                    {"deals": [{"hands": SUITED}, {"hands": SUITED}]}, {"deals": [{"hands": []}]},
                                    {"deals": [{"hands": SUITED, "board": 0}]}, {"deals": "x"}])
def test_bad_configurations_are_refused(config):
    with pytest.raises(ValueError):
        new_state(config, 1)


# --- the auction ----------------------------------------------------------------------------
def test_four_passes_pass_the_deal_out():
    state = new_state_from_deal(SUITED)
    assert play(state, "P", "P", "P") == []
    assert not state.is_terminal()
    happenings = play(state, "P")
    assert happenings[0]["type"] == "board_over" and happenings[0]["contract"] == "Pass"
    assert happenings[0]["score"] == 0 and happenings[0]["result"] == "Pass"
    assert happenings[1] == {"type": "match_over", "totals": [0, 0], "winner": None}
    assert state.is_terminal() and state.to_act() == ()
    assert state.result()["scores"] == [0, 0, 0, 0] and state.result()["winner"] is None
    assert state.public_observation()["contract"] == "Pass"


def test_three_passes_after_a_bid_close_the_auction():
    state = new_state_from_deal(SUITED)  # board 1: North deals
    happenings = play(state, "P", "1C", "P", "P")
    assert happenings == [] and state.public_observation()["contract"] is None
    [closed] = play(state, "P")
    assert closed == {"type": "auction_closed", "board": 1, "contract": "1C", "level": 1, "strain": "C",
                      "doubled": 0, "declarer": E, "dummy": W, "leader": S}
    assert state.to_act() == (S,)


def test_insufficient_bids_are_refused():
    state = new_state_from_deal(SUITED)
    play(state, "2H")
    for call in ("1C", "2C", "2D", "2H"):
        assert not state.is_legal(E, call)
        with pytest.raises(ValueError, match="insufficient"):
            state.apply({E: call})
    assert state.is_legal(E, "2S") and state.is_legal(E, "2NT") and state.is_legal(E, "3C")
    assert state.legal_actions(E) == ["P"] + list(rules.CALL_NAMES[rules.CALL_INDEX["2S"]:35]) + ["X"]


def test_double_only_an_opponents_undoubled_bid():
    state = new_state_from_deal(SUITED)
    assert not state.is_legal(N, "X")  # nothing to double
    play(state, "1S")
    assert state.is_legal(E, "X")
    play(state, "P")
    with pytest.raises(ValueError, match="opponents"):
        state.apply({S: "X"})  # partner's bid
    play(state, "P")
    assert state.is_legal(W, "X")  # an opponent's bid, two passes later: still the last bid
    play(state, "X")
    assert not state.is_legal(N, "X")  # already doubled
    assert "XX" in state.legal_actions(N) and "X" not in state.legal_actions(N)


def test_redouble_only_an_opponents_double_of_your_side():
    state = new_state_from_deal(SUITED)
    play(state, "1S")
    assert not state.is_legal(E, "XX")  # no double yet
    with pytest.raises(ValueError, match="redouble"):
        state.apply({E: "XX"})
    play(state, "X")                     # East doubles North's 1S
    assert state.is_legal(S, "XX")       # South redoubles partner's doubled bid
    play(state, "P")
    assert not state.is_legal(W, "XX")   # West may not redouble partner's double
    play(state, "P")
    assert state.is_legal(N, "XX")
    play(state, "XX")
    assert not state.is_legal(E, "XX") and not state.is_legal(E, "X")
    play(state, "P", "P", "P")
    assert state.contract() == "1SXX" and state.declarer == N


def test_a_new_bid_ends_the_double():
    state = new_state_from_deal(SUITED)
    play(state, "1S", "X", "2S", "P", "P", "P")
    assert state.contract() == "2S"


def test_declarer_is_the_first_of_the_side_to_name_the_strain():
    state = new_state_from_deal(SUITED)
    # North names hearts first, South bids the final 4H: North declares
    play(state, "1H", "P", "2C", "P", "2H", "P", "4H", "P", "P", "P")
    assert (state.contract(), state.declarer, state.dummy) == ("4H", N, S)
    state = new_state_from_deal(SUITED)
    # an opponent's earlier 1NT does not count: South names no-trump first for North-South
    play(state, "1S", "1NT", "2NT", "P", "3NT", "P", "P", "P")
    assert (state.contract(), state.declarer) == ("3NT", S)


def test_only_the_caller_on_turn_may_call():
    state = new_state_from_deal(SUITED)
    assert not state.is_legal(E, "P") and state.legal_actions(E) == []
    assert state.why_illegal(E, "P") == "it is North's turn, not East's"
    with pytest.raises(ValueError, match="no action for seat 0"):
        state.apply({E: "P"})
    assert not state.is_legal(N, "pass") and not state.is_legal(N, 35)  # canonical names only


# --- the play -------------------------------------------------------------------------------
def auction_1s_by_north() -> rules.BridgeState:
    state = new_state_from_deal(SUITED)
    play(state, "1S", "P", "P", "P")
    return state


def test_opening_lead_from_declarers_left_and_dummy_played_by_declarer():
    state = auction_1s_by_north()
    assert (state.declarer, state.dummy) == (N, S)
    assert state.to_act() == (E,)  # East, on North's left, leads
    public = state.public_observation()
    assert public["dummy_hand"] is None and public["contract"] == "1S"
    happenings = play(state, "HA")
    assert happenings[0] == {"type": "card", "seat": E, "by": E, "card": "HA"}
    assert happenings[1] == {"type": "dummy", "seat": S, "cards": SUITED[S]}
    # dummy's turn: declarer is asked, dummy's hand plays
    assert state.to_act() == (N,) and state.player == S
    assert state.public_observation()["dummy_hand"] == SUITED[S]
    assert state.legal_actions(N) == SUITED[S]  # cannot follow hearts: any of dummy's cards
    assert state.legal_actions(S) == [] and not state.is_legal(S, "DA")
    assert "dummy" in state.why_illegal(S, "DA")
    assert not state.is_legal(N, "S2")  # declarer's own card is not dummy's
    happenings = play(state, "D2")
    assert happenings == [{"type": "card", "seat": S, "by": N, "card": "D2"}]
    assert state.to_act() == (W,)
    play(state, "C2")
    assert state.to_act() == (N,) and state.player == N
    happenings = play(state, "S2")  # North ruffs the heart lead
    assert happenings[-1] == {"type": "trick_over", "board": 1, "trick": 1, "first": E,
                              "cards": ["HA", "D2", "C2", "S2"], "winner": N, "tricks_won": [1, 0]}
    assert state.to_act() == (N,)


def test_the_whole_board_and_its_score():
    state = auction_1s_by_north()
    play(state, "HA", "D2", "C2", "S2")
    for spade in SUITED[N][:12]:  # North leads his spades; nobody follows
        seat_suits = [spade] + [rules.mask_to_names(state.hands[s])[-1] for s in (E, S, W)]
        play(state, *seat_suits)
    assert state.is_terminal()
    assert state.public_observation()["contract"] == "1S"
    [record] = state.board_records()
    assert record["tricks"] == 13 and record["result"] == "1SN+6"
    assert record["score"] == 30 + 6 * 30 + 50
    assert state.result()["scores"] == [260, 0, 260, 0] and state.result()["winner"] == 0
    assert len(record["play"]) == 13 and sum(len(t["cards"]) for t in record["play"]) == 52


def test_thirteen_down_redoubled_vulnerable():
    # board 4: West deals, both vulnerable; North, on West's left, leads his spades and wins all
    state = new_state_from_deal(SUITED, board=4)
    play(state, "7NT", "X", "XX", "P", "P", "P")
    assert (state.contract(), state.declarer, state.to_act()) == ("7NTXX", W, (N,))
    while not state.is_terminal():
        seat = state.to_act()[0]
        play(state, state.legal_actions(seat)[0])
    assert state.board_records()[0]["result"] == "7NTXXW-13"
    assert state.result()["totals"] == [7600, 0]


def test_revoke_is_refused():
    state = new_state_from_deal(round_robin())
    play(state, "1NT", "P", "P", "P")  # North declares, East leads
    assert state.to_act() == (E,)
    play(state, "C3")
    # South (dummy) holds clubs, so only clubs; declarer is asked
    assert state.legal_actions(N) == ["CQ", "C8", "C4"]
    with pytest.raises(ValueError, match="follow suit"):
        state.apply({N: "D3"})  # dummy's diamond
    with pytest.raises(ValueError, match="not hold"):
        state.apply({N: "C2"})  # declarer's own club
    play(state, "C8", "CK")
    assert not state.is_legal(N, "SJ") and state.is_legal(N, "CA")
    play(state, "CA")
    assert state.tricks[-1] == (E, tuple(rules.CARD_INDEX[c] for c in ("C3", "C8", "CK", "CA")), N)


@pytest.mark.parametrize("strain, cards, first, winner", [
    (rules.NOTRUMP, ["H2", "HA", "SA", "H3"], N, E),   # an off-suit ace never wins
    (3, ["H2", "HA", "S2", "H3"], N, S),                # the lowest trump beats the led ace
    (3, ["H2", "S3", "S2", "SK"], W, S),                # the highest trump wins (W, N, E, S)
    (0, ["DT", "DJ", "H2", "DQ"], E, N),                # trumps (clubs) absent: highest of the suit led
])
def test_trick_winners(strain, cards, first, winner):
    power = rules.POWER[strain][rules.SUIT_OF[rules.CARD_INDEX[cards[0]]]]
    powers = [power[rules.CARD_INDEX[c]] for c in cards]
    assert (first + powers.index(max(powers))) % 4 == winner


def test_clone_is_independent():
    state = auction_1s_by_north()
    copy = state.clone()
    play(copy, "HA", "D2")
    assert state.to_act() == (E,) and copy.to_act() == (W,)
    assert len(state.legal_actions(E)) == 13


def test_instant_replay_hides_the_hands_until_both_tables_are_done():
    rotated = SUITED[3:] + SUITED[:3]  # the same hands one seat round
    state = new_state({"boards": 2, "deals": [{"board": 1, "hands": SUITED}, {"board": 1, "hands": rotated}]}, 1)
    play(state, "P", "P", "P", "P")
    assert state.board == 1 and state.dealt != tuple(rules.names_to_mask(h) for h in SUITED)
    assert state.revealed_observation()["board_hands"] == [None]  # the same cards are being played
    assert state.full_observation()["board_hands"] == [SUITED]
    play(state, "P", "P", "P", "P")
    assert state.revealed_observation()["board_hands"] == [SUITED, rotated]


@pytest.mark.parametrize("seed", range(6))
def test_replay_plays_each_board_twice_turned_one_seat_and_scores_imps(seed):
    """A team match at one table: the Closed room holds the Open room's cards one seat on,
    with the dealer one seat on and the vulnerability turned, under the same board number;
    each pair of rooms scores the IMPs of North-South's two scores added (Law 78B)."""
    state, rng = new_state({"board": 2, "boards": 3, "replay": True}, seed), random.Random(seed)
    assert state.public_observation()["room"] == "Open"
    play_randomly(state, rng)
    records = state.board_records()
    assert [r["board"] for r in records] == [2, 2, 3, 3, 4, 4]
    assert [r["room"] for r in records] == ["Open", "Closed"] * 3
    expected = [0, 0]
    for open_room, closed in zip(records[::2], records[1::2]):
        h = open_room["hands"]
        assert closed["hands"] == [h[3], h[0], h[1], h[2]]
        assert closed["dealer"] == (open_room["dealer"] + 1) % 4
        turned = {"None": "None", "Both": "Both", "NS": "EW", "EW": "NS"}[open_room["vulnerability"]]
        assert closed["vulnerability"] == turned
        imps = scoring.imps(open_room["score"] + closed["score"])
        assert open_room["imps"] is None and closed["imps"] == imps
        expected[0 if imps > 0 else 1] += abs(imps)
    result = state.result()
    assert result["imps"] == expected and result["scores"] == [expected[0], expected[1]] * 2
    assert result["winner"] == (None if expected[0] == expected[1] else 0 if expected[0] > expected[1] else 1)
    assert state.public_observation()["imps"] == expected


def test_replay_only_with_duplicate_scoring():
    with pytest.raises(ValueError, match="replay"):
        new_state({"scoring": "rubber", "replay": True}, 1)
    with pytest.raises(ValueError, match="replay"):
        new_state({"replay": "yes"}, 1)


def test_revealed_shows_an_earlier_board_once_it_is_over():
    state = new_state({"boards": 2}, 11)
    first = state.full_observation()["dealt"]
    assert state.revealed_observation()["board_hands"] == []
    play(state, "P", "P", "P", "P")
    assert state.revealed_observation()["board_hands"] == [first]


# --- rubber bridge --------------------------------------------------------------------------
def play_out(state: rules.BridgeState) -> list[dict]:
    """Play the board in hand to its end with each seat's first legal card."""
    out = []
    board = state.played
    while state.played == board and not state.is_terminal():
        seat = state.to_act()[0]
        out += state.apply({seat: state.legal_actions(seat)[0]})
    return out


def test_a_rubber_won_two_games_to_none_with_honours():
    state = new_state({"scoring": "rubber", "dealer": N, "deals": [{"hands": SUITED}] * 2}, 1)
    assert (state.board, state.dealer, state.vulnerability) == (1, N, "None")
    play(state, "4S", "P", "P", "P")
    happenings = play_out(state)  # North takes all 13 tricks: 4S+3, and holds the five honours
    [over] = [h for h in happenings if h["type"] == "board_over"]
    assert over["rubber"] == {"above": [90 + 150, 0], "below": [120, 0], "game": 0, "rubber": None}
    assert over["score"] == 360 and over["totals"] == [360, 0]
    # the deal passes to East; North-South have a game: vulnerable
    assert (state.board, state.dealer, state.vulnerability) == (2, E, "NS")
    assert state.public_observation()["rubber"]["games"] == [1, 0]
    play(state, "P", "P", "P", "4S", "P", "P", "P")
    happenings = play_out(state)
    assert happenings[-1] == {"type": "match_over", "totals": [1420, 0], "winner": 0,
                              "unfinished_rubber_bonus": [0, 0]}
    assert state.is_terminal() and state.result()["scores"] == [1420, 0, 1420, 0]
    assert state.public_observation()["rubber"]["winner"] == 0


def test_an_unfinished_rubber_and_a_passed_out_deal():
    state = new_state({"scoring": "rubber", "dealer": W, "boards": 2, "deals": [{"hands": SUITED}]}, 1)
    play(state, "P", "1S", "P", "P", "P")
    play_out(state)  # 1S+6 by North: 30 below, 180 above, 150 honours
    assert state.dealer == N and state.vulnerability == "None"
    happenings = play(state, "P", "P", "P", "P")
    assert happenings[0]["rubber"] == {"above": [0, 0], "below": [0, 0], "game": None, "rubber": None}
    # two deals played, no rubber: North-South's part-score earns the unfinished rubber's 50
    assert happenings[-1]["unfinished_rubber_bonus"] == [50, 0]
    assert state.result()["totals"] == [30 + 180 + 150 + 50, 0]


def test_the_first_rubber_dealer_comes_from_the_seed():
    dealers = {new_state({"scoring": "rubber"}, seed).dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert new_state({"scoring": "rubber"}, 5).dealer == new_state({"scoring": "rubber"}, 5).dealer
    with pytest.raises(ValueError):
        new_state({"scoring": "chicago"}, 1)
    with pytest.raises(ValueError):
        new_state({"scoring": "rubber", "dealer": 4}, 1)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_random_rubber_adds_up(seed):
    rng = random.Random(seed)
    state = new_state({"scoring": "rubber", "boards": 8}, seed)
    first = state.dealer
    happenings = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = "P" if state.phase == 0 and rng.random() < 0.7 else rng.choice(legal)
        happenings += state.apply({seat: action})
    records = state.board_records()
    assert [r["dealer"] for r in records] == [(first + i) % 4 for i in range(len(records))]
    sheet = state.public_observation()["rubber"]
    assert len(records) == 8 or sheet["winner"] is not None
    bonus = happenings[-1]["unfinished_rubber_bonus"]
    ns, ew = state.result()["totals"]
    assert ns - ew == sum(r["score"] for r in records) + bonus[0] - bonus[1]
    assert [ns, ew] == [sheet["above"][0] + sheet["below"][0], sheet["above"][1] + sheet["below"][1]]


# --- properties -----------------------------------------------------------------------------
def cards_in(view) -> set[str]:
    """Every card name anywhere in a JSON-able view."""
    found = set()

    def walk(x):
        if isinstance(x, str):
            if x in rules.CARD_INDEX:
                found.add(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(view)
    return found


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_deal_holds_52_distinct_cards_13_each(seed):
    state = new_state({}, seed)
    hands = state.full_observation()["hands"]
    assert [len(h) for h in hands] == [13] * 4
    assert len({c for h in hands for c in h}) == 52


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_legal_play_ends_after_13_tricks(seed):
    rng = random.Random(seed)
    state = new_state({"board": rng.randint(1, 32)}, seed)
    play_randomly(state, rng)
    [record] = state.board_records()
    if record["contract"] == "Pass":
        assert record["calls"] == ["P"] * 4 and record["score"] == 0
        return
    assert len(record["play"]) == 13
    assert sorted(c for t in record["play"] for c in t["cards"]) == sorted(CARD_NAMES)
    assert sum(state.tricks_won) == 13 and all(h == 0 for h in state.hands)
    assert record["calls"][-3:] == ["P"] * 3
    # the score is that of the contract with the tricks taken
    level, strain = state.level, state.strain
    vul = rules.side_vulnerable(record["vulnerability"], state.declarer & 1)
    score = scoring.duplicate_score(level, strain, state.doubled, vul, record["tricks"])
    assert record["score"] == (score if state.declarer & 1 == 0 else -score)
    # every trick's winner leads the next one
    for before, after in zip(record["play"], record["play"][1:]):
        assert after["first"] == before["winner"]
    json.dumps(state.full_observation())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_random_legal_auction_ends_in_a_contract_or_a_pass_out(seed):
    rng = random.Random(seed)
    state = new_state({}, seed)
    calls = 0
    while state.phase == 0:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        # every call not offered is refused
        for call in rng.sample(rules.CALL_NAMES, 5):
            assert state.is_legal(seat, call) == (call in legal)
        # pass most of the time, so auctions also end low
        state.apply({seat: "P" if rng.random() < 0.6 else rng.choice(legal)})
        calls += 1
        assert calls <= 3 + 35 * 9 + 3  # each bid may be followed by P P X P P XX P P
    if state.is_terminal():
        assert state.board_records()[0]["contract"] == "Pass"
    else:
        assert state.phase == 1 and rules.PARTNER[state.declarer] == state.dummy
        assert state.to_act() == (rules.NEXT[state.declarer],)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_illegal_cards_are_refused_and_views_hide_unplayed_cards(seed):
    rng = random.Random(seed)
    state = new_state({"boards": 2}, seed)

    def check(s: rules.BridgeState) -> None:
        played = {c for t in s.public_observation()["tricks"] for c in t["cards"]}
        played |= set(s.public_observation()["trick"]["cards"])
        played |= {c for r in s.board_records() for t in r["play"] for c in t["cards"]}
        dummy = set(rules.mask_to_names(s.hands[s.dummy])) if s.dummy_exposed() else set()
        allowed = played | dummy
        assert cards_in(s.public_observation()) <= allowed
        revealed = s.revealed_observation()
        assert cards_in({k: v for k, v in revealed.items() if k != "board_hands"}) <= allowed
        for seat in range(4):
            own = set(rules.mask_to_names(s.hands[seat]))
            obs = s.observation(seat)
            assert set(obs["hand"]) == own
            assert cards_in(obs) <= allowed | own
        if s.phase == 1:
            seat = s.to_act()[0]
            assert seat != s.dummy
            legal = set(s.legal_actions(seat))
            hand = set(rules.mask_to_names(s.hands[s.player]))
            assert legal and legal <= hand
            for card in rng.sample(CARD_NAMES, 6):
                assert s.is_legal(seat, card) == (card in legal)
                if card not in legal:
                    with pytest.raises(ValueError):
                        s.clone().apply({seat: card})
            if s.trick:  # follow suit when you can
                led = rules.SUIT_OF[s.trick[0]]
                if any(rules.SUIT_OF[rules.CARD_INDEX[c]] == led for c in hand):
                    assert all(rules.SUIT_OF[rules.CARD_INDEX[c]] == led for c in legal)
                else:
                    assert legal == hand
            for other in range(4):
                if other != seat:
                    assert s.legal_actions(other) == []

    play_randomly(state, rng, check)
    assert len(state.board_records()) == 2
    assert [b["board"] for b in state.board_records()] == [1, 2]
