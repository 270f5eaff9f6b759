"""Jass HTTP JSON codec (games/jass/protocol.py) against the seed's messages and log format."""
from __future__ import annotations

import json
import random
from datetime import datetime

import pytest
from hypothesis import given, settings, strategies as st

from games.base import ProtocolError
from games.jass import protocol, rules
from games.jass.rules import CARD_NAMES, PUSH

# The seed's example messages exactly as extracted (specs/jass-http.seed.md), typos included;
# :func:`seed_message` undoes the one extraction artefact the notes name ("V0. 2 " is "V0.2").
SEED_TRUMP_1 = '''{"version": "V0. 2 ", "dealer": 0, "currentPlayer": 3, "playerView":
3, "forehand": -1, "trump": -1, "tricks": [], "jassTyp":
"SCHIEBER_1000", "player": [{"hand": []}, {"hand": []}, {"hand":
[]}, {"hand": ["D10", "HA", "HJ", "SQ", "S10", "S7", "S6", "CK",
"C7"]}]}'''

SEED_TRUMP_2 = '''{"version": "V0. 2 ", "dealer": 0, "currentPlayer": 1, "playerView":
1, "forehand": 0, "trump": -1, "tricks": [], "jassTyp":
"SCHIEBER_1000", "player": [{"hand": []}, {"hand": ["DJ", "D9",
"H6", "SK", "CA", "CJ", "C9", "C8", "C6"]}, {"hand": []}, {"hand":
[]}]}'''

SEED_CARD_1 = '''{"version": "V0. 2 ", "dealer": 1, "currentPlayer": 1, "playerView":
1 , "trump": 4, "forehand": 0 , "tricks": [{"cards": ["SQ", "S9",
"S10", "SJ"], "points": 15, "win": 0, "first": 0}, {"cards": ["DQ",
"DA", "D8"], "first": 0}], "jassTyp": "SCHIEBER_1000", "player":
[{"hand": []}, {"hand": ["D7", "D6", "HA", "HK", "H9", "H7", "H6",
"C8"]}, {"hand": []}, {"hand": []}]}'''

SEED_CARD_2 = '''{"version": "V0. 2 ", "dealer": 1, "currentPlayer": 2, "playerView":
1, "trump": 4, "forehand": 0 , "tricks": [{"cards": ["SQ", "S9",
"S10", "SJ"], "points": 15, "win": 0, "first": 0}, {"cards": ["DQ",
"DA", "D8", "D7"], "points": 22, "win": 3, "first": 0}, {"cards":
["HJ"], "first": 3}], "jassTyp": "SCHIEBER_1000", "player":
[{"hand": []}, {"hand": []}, {"hand": ["DK", "D9", "H10", "SA",
"CQ", "C9", "C7"]}, {"hand": []}]}'''

SEED_CARD_3 = '''{"version": "V0. 2 ", "dealer": 1, "currentPlayer": 1, "playerView":
1, "trump": 4, "forehand": 0 , "tricks": [{"cards": ["SQ", "S9",
"S10", "SJ"], "points": 15, "win": 0, "first": 0}, {"cards": ["DQ",
"DA", "D8", "D7"], "points": 22, "win": 3, "first": 0}, {"cards":
["HJ", "H10", "H6", "HQ"], "points": 15, "win": 0, "first": 3},
{"cards": ["CJ", "C10", "C7"], "first": 0}], "jassTyp":
"SCHIEBER_1000", "player": [{"hand": []}, {"hand": ["D6", "HA",
"HK", "H9", "H7", "C8"]}, {"hand": []}, {"hand": []}]}'''

SEED_CARD_4 = '''{"version": "V0. 2 ", "dealer": 3, "currentPlayer": 1, "playerView":
1, "trump": 5, "forehand": 0 , "tricks": [{"cards": ["CA", "CQ",
"C10", "CJ"], "points": 15, "win": 0, "first": 2}, {"cards": ["D7",
"D9", "DA", "DQ"], "points": 3, "win": 0, "first": 0}, {"cards":
["S8", "D10", "SQ", "SK"], "points": 25, "win": 0, "first": 0},
{"cards": ["C9", "C7", "C8", "S9"], "points": 8, "win": 3, "first":
0}, {"cards": ["HQ", "H8", "HJ", "HA"], "points": 13, "win": 2,
"first": 3}, {"cards": ["S10", "S6", "S7", "C6"], "points": 32,
"win": 1, "first": 2}, {"cards": ["DK", "D6", "HK", "SA"], "points":
19, "win": 0, "first": 1}, {"cards": ["H6", "H10", "H9", "D8"],
"points": 29, "win": 0, "first": 0}, {"cards": ["DJ", "CK", "H7"],
"first": 0}], "jassTyp": "SCHIEBER_1000", "player": [{"hand": []},
{"hand": ["SJ"]}, {"hand": []}, {"hand": []}]}'''


def seed_message(text: str) -> dict:
    return json.loads(text.replace('"V0. 2 "', '"V0.2"'))


def fill(*known: str) -> list[list[str]]:
    """Four hands: the ones given (space-separated names, "" for unknown) are completed in seat
    order from the cards nobody was given."""
    hands = [h.split() for h in known]
    rest = [c for c in CARD_NAMES if all(c not in h for h in hands)]
    for hand in hands:
        while len(hand) < 9:
            hand.append(rest.pop(0))
    return hands


def run(state: rules.JassState, *actions) -> None:
    for action in actions:
        state.apply({state.to_act()[0]: action})


def body_for(state: rules.JassState, seat: int) -> dict:
    """What the bot at ``seat`` receives, through the wire bytes (``http_bots.post_json``
    sends the body as compact JSON)."""
    return json.loads(json.dumps(protocol.request_body(state.observation(seat)), separators=(",", ":")))


# --- the seed's examples --------------------------------------------------------------------
def test_seed_trump_selection_messages():
    # dealer North: West is forehand; West pushes and East must declare
    state = rules.new_state_from_deal(None, fill(
        "", "DJ D9 H6 SK CA CJ C9 C8 C6", "", "D10 HA HJ SQ S10 S7 S6 CK C7"), dealer=0)
    assert protocol.request_kind(state.observation(3)) == "trump"
    assert body_for(state, 3) == seed_message(SEED_TRUMP_1)
    run(state, PUSH)
    assert body_for(state, 1) == seed_message(SEED_TRUMP_2)


def seed_obe_abe_deal() -> rules.JassState:
    """The seed's first game: dealer East, North pushes, South declares Obe-Abe."""
    return rules.new_state_from_deal(None, fill(
        "SQ DQ HQ CJ",
        "SJ D7 D6 HA HK H9 H7 H6 C8",
        "S10 D8 DK D9 H10 SA CQ C9 C7",
        "S9 DA HJ C10"), dealer=1)


def test_seed_play_card_messages():
    state = seed_obe_abe_deal()
    run(state, PUSH, rules.OBE_ABE, "SQ", "S9", "S10", "SJ", "DQ", "DA", "D8")
    assert protocol.request_kind(state.observation(1)) == "card"
    assert body_for(state, 1) == seed_message(SEED_CARD_1)

    run(state, "D7", "HJ")
    expected = seed_message(SEED_CARD_2)
    # The seed's second example says "playerView": 1 but carries South's hand for South on
    # turn; the kit's own check calls that "Hand data for wrong player".  The view is South's.
    assert expected["playerView"] == 1
    expected["playerView"] = 2
    assert body_for(state, 2) == expected

    run(state, "H10", "H6", "HQ", "CJ", "C10", "C7")
    assert body_for(state, 1) == seed_message(SEED_CARD_3)


def test_seed_une_ufe_message_near_the_end_of_a_deal():
    # every card of this deal shows in the message: the hands follow from the tricks
    state = rules.new_state_from_deal(None, [
        "C10 D7 S8 C9 HA S7 D6 H6 DJ".split(),
        "CQ DQ SK S9 HJ S6 DK D8 SJ".split(),
        "CA DA SQ C8 H8 S10 SA H9 H7".split(),
        "CJ D9 D10 C7 HQ C6 HK H10 CK".split(),
    ], dealer=3)
    run(state, PUSH, rules.UNE_UFE)
    for trick in seed_message(SEED_CARD_4)["tricks"]:
        run(state, *trick["cards"])
    assert body_for(state, 1) == seed_message(SEED_CARD_4)
    assert state.legal_actions(1) == ["SJ"]


def test_requests_carry_only_the_recipients_hand_and_what_the_kit_parser_needs():
    state = rules.new_state(None, 5)
    rng = random.Random(5)
    for _ in range(60):
        seat = state.to_act()[0]
        for view in range(4):
            body = body_for(state, view)
            assert body["version"] == "V0.2" and body["playerView"] == view
            assert body["currentPlayer"] == seat
            assert all(body["player"][i]["hand"] == [] for i in range(4) if i != view)
            assert body["player"][view]["hand"] == state.observation(view)["hand"]
            assert all("first" in t for t in body["tricks"])
            for key in ("dealer", "trump", "forehand", "tricks", "jassTyp"):
                assert key in body
        state.apply({seat: rng.choice(state.legal_actions(seat))})


def test_jass_type_follows_the_config():
    assert protocol.jass_type(rules.new_state(None, 1).observation(0)) == "SCHIEBER_1000"
    assert protocol.jass_type(rules.new_state({"points_to_win": 2500}, 1).observation(0)) == "SCHIEBER"
    assert protocol.jass_type(rules.new_state({"max_deals": 12}, 1).observation(0)) == "SCHIEBER"


def test_nothing_is_asked_after_the_match():
    state = rules.new_state({"points_to_win": 1}, 1)
    rng = random.Random(0)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    with pytest.raises(ValueError):
        protocol.request_kind(state.observation(0))


def test_game_info_after_a_deal():
    state = rules.new_state({"points_to_win": 5000}, 7)
    rng = random.Random(7)
    over = None
    while over is None:
        seat = state.to_act()[0]
        for h in state.apply({seat: rng.choice(state.legal_actions(seat))}):
            if h["type"] == "deal_over":
                over = h
    body = protocol.game_info_body(over, 2, {"points_to_win": 5000})
    assert body["currentPlayer"] == -1 and body["playerView"] == 2 and body["jassTyp"] == "SCHIEBER"
    assert [p["hand"] for p in body["player"]] == [[], [], [], []]
    assert len(body["tricks"]) == 9 and all({"cards", "points", "win", "first"} <= set(t) for t in body["tricks"])
    assert body["trump"] == over["trump"] and body["forehand"] in (0, 1)
    json.dumps(body)


# --- answers --------------------------------------------------------------------------------
@pytest.mark.parametrize("body, action", [
    (b'{"trump": 3}', 3), (b'{"trump":0}', 0), ('{"trump": 5}', 5), (b'{"trump": 10}', PUSH),
    (b' {"trump": 4, "debug": "obe"} \n', 4),
])
def test_decode_trump(body, action):
    assert protocol.decode_trump(body) == action


@pytest.mark.parametrize("body, message", [
    (b"", "empty"), (b"   ", "empty"), (b"3", "object"), (b"[3]", "object"), (b"{trump: 3}", "not JSON"),
    (b"\xff\xfe", "UTF-8"), (b'{"card": "C8"}', '"trump"'), (b'{"trump": 6}', "0 Diamonds"),
    (b'{"trump": -1}', "10 push"), (b'{"trump": "3"}', "integer"), (b'{"trump": 3.0}', "integer"),
    (b'{"trump": true}', "integer"), (b'{"trump": null}', "integer"),
])
def test_decode_trump_refuses(body, message):
    with pytest.raises(ProtocolError, match=message):
        protocol.decode_trump(body)


def test_decode_card():
    assert protocol.decode_card(b'{"card": "C8"}') == "C8"
    assert protocol.decode_card('{"card":"H10","why":"highest"}') == "H10"
    for name in CARD_NAMES:
        assert protocol.decode_card(json.dumps({"card": name})) == name


@pytest.mark.parametrize("body, message", [
    (b'{"card": "c8"}', "card name"), (b'{"card": "HT"}', "card name"), (b'{"card": 33}', "card name"),
    (b'{"card": ["C8"]}', "card name"), (b'{"trump": 3}', '"card"'), (b"C8", "not JSON"), (b"", "empty"),
])
def test_decode_card_refuses(body, message):
    with pytest.raises(ProtocolError, match=message):
        protocol.decode_card(body)


def test_every_trump_answer_decodes():
    for code, action in ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (10, PUSH)):
        assert protocol.decode_trump(json.dumps({"trump": code})) == action


def test_paths():
    assert protocol.PATHS["seed"]["card"] == "/play_card"
    assert protocol.PATHS["kit"]["trump"] == "/action_trump"


# --- logs -----------------------------------------------------------------------------------
def finished_deal(seed: int, config=None) -> dict:
    state = rules.new_state(dict(config or {}, max_deals=1), seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    return state.deal_records()[0]


def test_game_log_has_every_hand_as_dealt():
    record = finished_deal(3)
    log = protocol.game_log(record)
    assert log["version"] == "V0.2" and log["jassTyp"] == "SCHIEBER" and log["currentPlayer"] == -1
    assert [len(p["hand"]) for p in log["player"]] == [9, 9, 9, 9]
    assert sorted(c for p in log["player"] for c in p["hand"]) == sorted(CARD_NAMES)
    assert len(log["tricks"]) == 9


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63))
def test_log_round_trip_and_replay(seed):
    record = finished_deal(seed)
    read = protocol.read_game_log(json.loads(json.dumps(protocol.game_log(record))))
    for key in ("dealer", "forehand", "declarer", "trump", "tricks", "hands", "complete"):
        assert read[key] == record[key]
    assert read["match"] == record["match"]
    replay = rules.new_state_from_deal({"max_deals": 1, "match_bonus": False}, read["hands"], read["dealer"])
    for seat, action in rules.deal_actions(read):
        replay.apply({seat: action})
    assert replay.deal_records()[0]["points"] == read["points"]


def test_read_kit_style_logs():
    record = finished_deal(11)
    log = protocol.game_log(record)
    # the kit writes the cards still held: nothing, for a finished deal
    kit = dict(log, player=[{"hand": []} for _ in range(4)])
    assert protocol.read_game_log(kit)["hands"] == record["hands"]
    # older files: no version, "tss" instead of "forehand", no points/win
    old = {k: v for k, v in kit.items() if k not in ("version", "forehand")}
    old["tss"] = 1 if record["forehand"] == 0 else 0
    old["tricks"] = [{"cards": t["cards"], "first": t["first"]} for t in kit["tricks"]]
    assert protocol.read_game_log(old)["tricks"] == record["tricks"]


def test_read_a_deal_cut_short_with_held_hands():
    state = rules.new_state({"points_to_win": 60}, 2)
    rng = random.Random(2)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: rng.choice(state.legal_actions(seat))})
    record = state.deal_records()[-1]
    assert not record["complete"]
    log = protocol.game_log(record)
    assert protocol.read_game_log(log)["hands"] == record["hands"]
    held = dict(log, player=[{"hand": h} for h in state.full_observation()["hands"]])
    assert protocol.read_game_log(held)["hands"] == record["hands"]
    with pytest.raises(ProtocolError, match="cut short"):
        protocol.read_game_log(dict(log, player=[{"hand": []} for _ in range(4)]))


def broken(log: dict, change) -> dict:
    log = json.loads(json.dumps(log))
    change(log)
    return log


@pytest.mark.parametrize("change, message", [
    (lambda g: g.update(version="V0.1"), "version"),
    (lambda g: g.update(dealer=4), "dealer"),
    (lambda g: g.update(trump=-1), "trump"),
    (lambda g: g.update(forehand=-1), "forehand"),
    (lambda g: g.update(tricks="none"), "tricks"),
    (lambda g: g["tricks"][2].update(win=(g["tricks"][2]["win"] + 1) % 4), "'win'"),
    (lambda g: g["tricks"][2].update(points=g["tricks"][2]["points"] + 1), "'points'"),
    (lambda g: g["tricks"][0].update(first=(g["tricks"][0]["first"] + 1) % 4), "'first'"),
    (lambda g: g["tricks"][1]["cards"].__setitem__(0, g["tricks"][0]["cards"][0]), "already played"),
    (lambda g: g["tricks"][1]["cards"].__setitem__(0, "X1"), "not a card"),
    (lambda g: g["tricks"][1]["cards"].pop(), "complete tricks"),
    (lambda g: g["player"].pop(), "four"),
    (lambda g: g["player"][0]["hand"].pop(), "neither"),
    (lambda g: g["player"][0].pop("hand"), '"hand"'),
])
def test_read_game_log_refuses(change, message):
    log = protocol.game_log(finished_deal(4))
    protocol.read_game_log(log)
    with pytest.raises(ProtocolError, match=message):
        protocol.read_game_log(broken(log, change))


def test_log_lines_round_trip():
    record = finished_deal(9)
    date = datetime(2022, 8, 29, 14, 5, 7)
    line = protocol.log_line(record, date, [11, 12, 13, 14])
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["date"] == "29.08.22 14:05:07" and entry["player_ids"] == [11, 12, 13, 14]
    read = protocol.read_log_line(line)
    assert read["date"] == date and read["player_ids"] == [11, 12, 13, 14]
    assert read["game"]["tricks"] == record["tricks"] and read["game"]["hands"] == record["hands"]
    with pytest.raises(ProtocolError, match="date"):
        protocol.read_log_line(line.replace("29.08.22", "2022-08-29"))
    with pytest.raises(ProtocolError, match="player_ids"):
        protocol.read_log_line(json.dumps({"game": entry["game"], "date": entry["date"]}))


def test_every_play_card_request_names_the_seat_that_leads_the_current_trick():
    """A bot that reads the playing order from the current trick's ``first`` must
    find itself on turn; when it leads tricks 2 to 9, ``first`` is its own seat (the previous
    trick's winner), not the previous trick's leader."""
    rng = random.Random(3)
    for seed in range(20):
        state = rules.new_state({"points_to_win": 1000}, seed)
        while not state.is_terminal():
            (seat,) = state.to_act()
            body = protocol.request_body(state.observation(seat))
            if protocol.request_kind(state.observation(seat)) == "card":
                current = body["tricks"][-1]
                assert (current["first"] - len(current["cards"])) % 4 == seat, body["tricks"]  # counter-clockwise
                if len(body["tricks"]) > 1 and not current["cards"]:
                    assert current["first"] == body["tricks"][-2]["win"]
            state.apply({seat: rng.choice(state.legal_actions(seat))})
