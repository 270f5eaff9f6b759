"""The Liar's Dice wire codec (games/liars_dice/protocol.py) against the seed and its notes.

What a bot reads: ids 1-based within the match, the recipient always 0, ``other_hands`` in
turn order from the player on turn to the previous bidder; ``round_over.game_winner``
absolute even for the winner (a quirk kept for existing bots).
"""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.base import ProtocolError
from games.liars_dice import protocol
from games.liars_dice.rules import BID, CHALLENGE, PASS, new_state


def decode(data: bytes) -> dict:
    """One wire message: a single ``\\n``-terminated line of UTF-8 JSON."""
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    return json.loads(data.decode("utf-8"))


def request_for(state, seat, message_id="m1") -> dict:
    return decode(protocol.move_request(state.observation(seat), message_id))


def overs_for(happenings, seat) -> list[dict]:
    return [decode(protocol.round_over(h, seat)) for h in happenings if h["type"] == "round_over"]


def play(state, overrides, default=PASS):
    actions = {s: default for s in state.to_act()}
    actions.update(overrides)
    return state.apply(actions)


def wire(seat, recipient):
    return 0 if seat == recipient else seat + 1


# --- move_request -------------------------------------------------------------------------------

def test_move_request_at_the_start_of_a_match():
    state = new_state({"players": 4, "dice": 5}, 3)
    order = state.order
    for seat in range(4):
        msg = request_for(state, seat, message_id=f"id-{seat}")
        assert list(msg) == ["subject", "message_id", "game_number", "round_number", "move_number",
                             "your_hand", "other_hands", "last_bid"]
        assert msg["subject"] == "move_request" and msg["message_id"] == f"id-{seat}"
        assert (msg["game_number"], msg["round_number"], msg["move_number"]) == (1, 1, 1)
        assert msg["last_bid"] == [0, 0], "an empty bid: the first move of the round"
        assert msg["your_hand"] == sorted(state.hands[seat]) and len(msg["your_hand"]) == 5
        assert msg["other_hands"] == [[wire(s, seat), 5] for s in order], "every player, in turn order"
        ids = [pid for pid, _ in msg["other_hands"]]
        assert ids.count(0) == 1 and sorted(ids) == sorted({0} | {s + 1 for s in range(4) if s != seat})
        assert (msg["other_hands"][0][0] == 0) == (seat == order[0]), "it is your turn when the first id is 0"


def test_move_request_after_bids_rotates_to_the_player_on_turn_and_ends_with_the_bidder():
    state = new_state({"players": 3, "dice": 4}, 8)
    a, b, c = state.order
    play(state, {a: [BID, 3, 2]})
    play(state, {b: [BID, 5, 2]})
    for seat in range(3):
        msg = request_for(state, seat)
        assert msg["move_number"] == 3 and msg["round_number"] == 1
        assert msg["last_bid"] == [5, 2], "the standing bid, [face, count]"
        assert [pid for pid, _ in msg["other_hands"]] == [wire(c, seat), wire(a, seat), wire(b, seat)]
        assert msg["other_hands"][-1][0] == wire(b, seat), "the previous bidder is last"


def test_move_request_leaves_out_eliminated_players_and_shows_dice_left():
    state = new_state({"players": 3, "dice": 2}, 21)
    a, b, c = state.order
    play(state, {b: None})       # b: 1 die, and b starts
    play(state, {b: None})       # b is out; c (next after b) starts
    play(state, {a: None})       # a: 1 die, a starts round 4
    assert state.counts[b] == 0 and state.round_number == 4
    for seat in (a, c):
        msg = request_for(state, seat)
        assert msg["other_hands"] == [[wire(a, seat), 1], [wire(c, seat), 2]]
        assert msg["round_number"] == 4 and msg["move_number"] == 1 and msg["last_bid"] == [0, 0]
    assert len(request_for(state, a)["your_hand"]) == 1


def test_move_request_game_number_counts_games():
    state = new_state({"players": 2, "dice": 1, "games": 3}, 4)
    play(state, {state.order[0]: None})
    assert state.game_number == 2
    msg = request_for(state, 0)
    assert (msg["game_number"], msg["round_number"], msg["move_number"]) == (2, 1, 1)


def test_move_request_is_one_compact_line():
    state = new_state({"players": 2, "dice": 6}, 1)
    data = protocol.move_request(state.observation(0), "abc")
    assert data.endswith(b"\n") and b"\n" not in data[:-1] and b" " not in data


# --- round_over ---------------------------------------------------------------------------------

def test_round_over_ids_are_relative_except_the_game_winner():
    state = new_state({"players": 3, "dice": 1}, 5)
    a, b, c = state.order
    state.hands[a], state.hands[b], state.hands[c] = [2], [2], [5]
    play(state, {a: [BID, 2, 3]})
    (over,) = play(state, {c: CHALLENGE})  # only two 2s: the bidder a loses and is out
    assert over["round_loser"] == a and over["round_challenger"] == c and over["game_winner"] is None
    for seat in range(3):
        (msg,) = overs_for([over], seat)
        assert list(msg) == ["subject", "game_number", "round_number", "state", "round_loser",
                             "round_challenger", "game_winner"]
        assert msg["subject"] == "round_over" and msg["game_number"] == 1 and msg["round_number"] == 1
        assert msg["state"] == [[wire(s, seat), 0 if s == a else 1] for s in range(3)], \
            "every player, 0-dice ones included, in seat order"
        assert msg["round_loser"] == wire(a, seat) and msg["round_challenger"] == wire(c, seat)
        assert msg["game_winner"] == -1, "the game goes on"
    assert overs_for([over], a)[0]["round_loser"] == 0
    assert overs_for([over], c)[0]["round_challenger"] == 0
    # round 2: b and c; b sends nothing and loses the game
    (last,) = play(state, {b: None})
    assert last["game_winner"] == c and last["round_challenger"] is None
    for seat in range(3):
        (msg,) = overs_for([last], seat)
        assert msg["round_number"] == 2
        assert msg["round_challenger"] == -1, "no challenger: lost by a missing or invalid move"
        assert msg["round_loser"] == wire(b, seat)
        assert msg["game_winner"] == c + 1, "absolute id, for the winner too (never 0)"
        assert msg["state"] == [[wire(s, seat), 1 if s == c else 0] for s in range(3)]


def test_round_over_after_a_failed_early_challenge_names_the_recipient_twice():
    state = new_state({"players": 2, "dice": 2}, 9)
    a, b = state.order
    (over,) = play(state, {b: CHALLENGE})
    msg = overs_for([over], b)[0]
    assert (msg["round_loser"], msg["round_challenger"]) == (0, 0)
    msg = overs_for([over], a)[0]
    assert (msg["round_loser"], msg["round_challenger"]) == (b + 1, b + 1)


def test_wire_id():
    assert protocol.wire_id(None, 0) == -1
    assert protocol.wire_id(2, 2) == 0
    assert protocol.wire_id(0, 2) == 1 and protocol.wire_id(5, 0) == 6


def test_every_message_of_random_matches_keeps_the_invariants():
    rng = random.Random(0)
    for seed in range(30):
        players = 2 + seed % 5
        state = new_state({"players": players, "dice": 1 + seed % 3, "games": 2}, seed)
        last_bidder = None
        while not state.is_terminal():
            for seat in range(players):
                msg = request_for(state, seat)
                ids = [pid for pid, _ in msg["other_hands"]]
                assert ids[0] == wire(state.on_turn, seat)
                if last_bidder is not None:
                    assert ids[-1] == wire(last_bidder, seat) and msg["last_bid"] != [0, 0]
                else:
                    assert msg["last_bid"] == [0, 0] and msg["move_number"] == 1
                assert all(n > 0 for _, n in msg["other_hands"])
                assert (0 in ids) == (state.counts[seat] > 0)
                assert msg["your_hand"] == sorted(msg["your_hand"])
            actions = {s: rng.choice(state.legal_actions(s) + [None]) for s in state.to_act()}
            on_turn = state.on_turn
            happenings = state.apply(actions)
            last_bidder = None if happenings else on_turn
            for seat in range(players):
                for msg in overs_for(happenings, seat):
                    assert len(msg["state"]) == players
                    assert [pid for pid, _ in msg["state"]].count(0) == 1
                    assert msg["game_winner"] != 0


# --- from the wire ------------------------------------------------------------------------------

@pytest.mark.parametrize("move, action", [
    ("challenge", CHALLENGE),
    ("pass", PASS),
    ("anything else", PASS),
    ("", PASS),
    ("Challenge", PASS),
    ([3, 2], [BID, 3, 2]),
    ([3.0, 2.0], [BID, 3, 2]),
    ([6, 1], [BID, 6, 1]),
    ([7, 0], [BID, 7, 0]),          # two whole numbers: the rules decide (it loses on turn)
    ([-1, 3], [BID, -1, 3]),
    ([3, 2**31 - 1], [BID, 3, 2**31 - 1]),   # past any table, but a count: a bid
    ([3, 2147483647.0], [BID, 3, 2**31 - 1]),
    ([3, -(2**31 - 1)], [BID, 3, -(2**31 - 1)]),
])
def test_move_to_action(move, action):
    got = protocol.move_to_action(move)
    assert got == action and type(got) is type(action)
    if isinstance(action, list):
        assert [type(x) for x in got] == [type(x) for x in action]
        assert protocol.action_to_move(got) == got[1:]
    else:
        assert protocol.action_to_move(got) == got


@pytest.mark.parametrize("move", [
    None, 3, 2.0, True, {}, {"face": 3, "count": 2}, [], [3], [3, 2, 1],
])
def test_move_to_action_refuses_other_shapes(move):
    with pytest.raises(ProtocolError, match='"move" must be'):
        protocol.move_to_action(move)


@pytest.mark.parametrize("move", [
    [True, 2], [3, False], ["3", 2], [None, 2], [[3], 2], [3, {}], [float("nan"), 1], [3, float("inf")],
    [2.5, 3], [3, 2.5], [3, 2**31], [2**31, 1], [3, -(2**31)], [3, 2147483648.0], [3, 10**30],
])
def test_a_bid_of_anything_but_two_whole_numbers_up_to_2_31_is_malformed(move):
    """A count the reference would take as a raise is a bid here too; a number no integer of 32
    bits holds, a fraction or a boolean is a malformed reply (it loses the round)."""
    with pytest.raises(ProtocolError, match=r"a bid is \[face, count\], two whole numbers up to 2147483647"):
        protocol.move_to_action(move)


def test_a_huge_integer_count_is_a_malformed_reply_not_a_crash():
    msg = protocol.parse_line(b'{"message_id":"x","move":[3,' + b"9" * 500 + b"]}")
    with pytest.raises(ProtocolError) as info:
        protocol.move_to_action(msg["move"])
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("line", [
    b'{"message_id": "a", "move": "pass"}',
    b'{"message_id":"a","move":[3,2]}\r',
    b'  {"name": "\xc3\xa9l\xc3\xa8ve"}  ',
])
def test_parse_line_accepts_json_objects(line):
    assert isinstance(protocol.parse_line(line), dict)


@pytest.mark.parametrize("line, says", [
    (b"", "not JSON"),
    (b"hello", "not JSON"),
    (b'{"message_id": "a", "move": ', "not JSON"),
    (b"{'message_id': 'a'}", "not JSON"),
    (b'\xff\xfe\x00\x01\x80garbage', "not JSON"),
    (bytes(range(256)), "not JSON"),
    (b'{"name": "\xe9"}', "not JSON"),                          # Latin-1, not UTF-8
    ('{"name": "x"}'.encode("utf-16"), "not JSON"),
    (b'{"move": [NaN, 1]}', "NaN"),
    (b'{"move": [3, Infinity]}', "Infinity"),
    (b'{"move": [1e400, 1]}', "out of range"),
    (b"[" * 100_000, "not JSON"),
    (b"[1, 2]", "expected a JSON object, got list"),
    (b'"challenge"', "expected a JSON object, got str"),
    (b"42", "expected a JSON object, got int"),
    (b"null", "expected a JSON object, got NoneType"),
])
def test_parse_line_refuses_what_is_not_a_json_object(line, says):
    with pytest.raises(ProtocolError, match=says):
        protocol.parse_line(line)


def test_parse_line_error_quotes_the_start_of_the_line():
    with pytest.raises(ProtocolError) as info:
        protocol.parse_line(b"not json at all " * 100)
    text = str(info.value)
    assert "not json at all" in text and len(text) < 200


# --- the fast reading is the standard library's -----------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
_replies = st.fixed_dictionaries({}, optional={
    "message_id": st.text(max_size=12) | _json_values, "name": st.text(max_size=12) | _json_values,
    "move": st.sampled_from(["pass", "challenge"]) | st.tuples(_json_values, _json_values).map(list) | _json_values,
    "junk": _json_values})


def _read_both(line: bytes):
    """What parse_line and the standard library's reading make of ``line``: (result or error
    text) each."""
    outcomes = []
    for read in (protocol.parse_line, protocol._parse_slowly):
        try:
            outcomes.append(read(line))
        except ProtocolError as exc:
            outcomes.append(f"ProtocolError: {exc}")
    return outcomes


@settings(max_examples=400, deadline=None)
@given(_replies, st.sampled_from(["", " ", "\r", "\t"]), st.booleans())
def test_parse_line_reads_every_reply_as_the_standard_library_does(reply, pad, ascii_only):
    """orjson reads plain replies; whatever it reads, the result is the standard library's."""
    line = (pad + json.dumps(reply, ensure_ascii=ascii_only) + pad).encode("utf-8", "surrogatepass")
    fast, slow = _read_both(line)
    assert fast == slow


@pytest.mark.parametrize("line", [
    b'{"message_id":"a","move":[3,' + b"9" * 25 + b"]}", b'{"message_id":"a","move":[3,2.0]}',
    b'{"message_id":"a","move":[NaN,1]}', b'{"name":"\\ud800"}', b'{"move":[1e400,1]}', b"[1,2]",
    b'\xef\xbb\xbf{"name":"x"}', b'{"message_id":"a","move":[true,2]}', b'{"a":1,"a":2}', b"[" * 5000,
])
def test_parse_line_reads_odd_lines_as_the_standard_library_does(line):
    fast, slow = _read_both(line)
    assert fast == slow


def test_the_error_line_a_bot_gets_before_the_server_hangs_up():
    line = protocol.error("too many lines that break the protocol")
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"subject": "error", "message": "too many lines that break the protocol"}
