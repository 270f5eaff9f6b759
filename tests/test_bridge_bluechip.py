"""The Blue Chip table-manager codec (games/bridge/bluechip.py): every server line's exact text,
every client line the robots send, malformed lines, and whole boards through four
connections' state machines with the rules engine, read back as BEN reads them
(tests/bluechip_client.py)."""
from __future__ import annotations

import selectors
import socket
import threading
import time

import pytest

from games.base import ProtocolError
from games.bridge import bluechip as bc
from games.bridge.rules import board_dealer, board_vulnerability, hands_to_masks, new_state
from tests.bluechip_client import (
    BenClient, WBridge5Client, ben_bid, ben_call_name, ben_call_text, ben_card, ben_card_text, ben_deal,
    ben_hand, ben_teams,
)

SEATS = ["North", "East", "South", "West"]


def hand(text: str) -> list[str]:
    """``"S A T 4 3. H -. ..."`` as the rules' card names."""
    cards = []
    for part in text.split("."):
        words = part.split()
        if words:
            cards += [words[0] + r for r in words[1:] if r != "-"]
    return cards


# A deal with voids (West's spades, North's hearts) and every ten.
DEAL_TEXT = ["S A T 4 3. H -. D K T 9 8. C K T 6 5 2.",
             "S K Q J. H A K Q J T. D A Q. C A Q J.",
             "S 9 8 7 6 5 2. H 9 8. D J 7. C 9 8 7.",
             "S -. H 7 6 5 4 3 2. D 6 5 4 3 2. C 4 3."]
DEAL = [hand(t) for t in DEAL_TEXT]
hands_to_masks(DEAL)  # a deal: each card once


def ben_form(cards: list[str]) -> str:
    return ".".join("".join(c[1] for c in cards if c[0] == suit) for suit in "SHDC")


# --- server lines -----------------------------------------------------------------------------
def test_hand_lines_exactly():
    assert bc.cards_line(0, DEAL[0]) == "North's cards : S A T 4 3. H -. D K T 9 8. C K T 6 5 2."
    assert bc.cards_line(1, DEAL[1]) == "East's cards : S K Q J. H A K Q J T. D A Q. C A Q J."
    assert bc.cards_line(3, list(reversed(DEAL[3]))) == "West's cards : S -. H 7 6 5 4 3 2. D 6 5 4 3 2. C 4 3."
    assert bc.dummy_line(DEAL[2]) == "Dummy's cards : S 9 8 7 6 5 2. H 9 8. D J 7. C 9 8 7."
    # a long suit and three voids
    assert bc.hand_text([f"C{r}" for r in "23456789TJQKA"]) == "S -. H -. D -. C A K Q J T 9 8 7 6 5 4 3 2."
    for seat in range(4):  # as BEN reads them: between ':' and the last '.', clubs included
        assert ben_hand(bc.cards_line(seat, DEAL[seat])) == ben_form(DEAL[seat])
    assert ben_hand(bc.cards_line(0, DEAL[0])) == "AT43..KT98.KT652"


@pytest.mark.parametrize("board, line", [
    (1, "Board number 1. Dealer North. Neither vulnerable."),
    (2, "Board number 2. Dealer East. N/S vulnerable."),
    (3, "Board number 3. Dealer South. E/W vulnerable."),
    (4, "Board number 4. Dealer West. Both vulnerable."),
    (16, "Board number 16. Dealer West. E/W vulnerable."),
    (17, "Board number 17. Dealer North. Neither vulnerable."),
])
def test_board_lines_every_dealer_and_vulnerability(board, line):
    text = bc.board_line(board, board_dealer(board), board_vulnerability(board))
    assert text == line
    vul = board_vulnerability(board)
    assert ben_deal(text) == (board, board_dealer(board), vul in ("NS", "Both"), vul in ("EW", "Both"))


def test_handshake_lines():
    assert bc.seated_line(0, "BEN") == 'North ("BEN") seated'
    assert bc.seated_line(3, "Wbridge5") == 'West ("Wbridge5") seated'
    assert bc.teams_line("Alpha", "Beta") == 'Teams : N/S : "Alpha" E/W : "Beta"'
    assert bc.teams_line("A b", "C", "IMP") == 'Teams : N/S : "A b" E/W : "C" Playing IMP'
    assert bc.teams_line("A", "B", "MP") == 'Teams : N/S : "A" E/W : "B" Playing MP'
    assert ben_teams(bc.teams_line("A b", "C", "IMP")) == ("A b", "C", "IMP")
    assert ben_teams(bc.teams_line("Alpha", "Beta")) == ("Alpha", "Beta", "")
    for bad in ("", 'a"b', "x" * 41, "tab\there"):
        with pytest.raises(ValueError):
            bc.teams_line(bad, "B")
    with pytest.raises(ValueError):
        bc.teams_line("A", "B", "RUBBER")
    assert bc.clean_team('  "Quoted"\x00 team ', "N/S") == "'Quoted' team"
    assert bc.clean_team("", "N/S") == "N/S"
    assert bc.START_OF_BOARD == "Start of board"
    assert bc.END_OF_SESSION == "End of session"
    assert bc.encode("Start of board") == b"Start of board\r\n"


def test_call_lines_and_alerts():
    assert bc.call_line(0, "1NT") == "North bids 1NT"
    assert bc.call_line(1, "7C") == "East bids 7C"
    assert bc.call_line(2, "P") == "South passes"
    assert bc.call_line(3, "X") == "West doubles"
    assert bc.call_line(0, "XX") == "North redoubles"
    # the explanation to the opponents, the bare call to the partner, never a bare "Alert."
    assert bc.call_line(1, "2C", "both majors", alert=True) == "East bids 2C Alert. both majors"
    assert bc.call_line(1, "2C", "both majors", alert=True, to_partner=True) == "East bids 2C"
    assert bc.call_line(0, "1NT", "15-17") == "North bids 1NT Infos. 15-17"
    assert bc.call_line(0, "1NT", "", alert=True) == "North bids 1NT"
    assert bc.call_line(0, "P", "  \x07 ", alert=True) == "North passes"
    assert bc.call_line(0, "2D", "multi\r\nline") == "North bids 2D Infos. multi line"
    with pytest.raises(ValueError):
        bc.call_line(0, "8C")
    # as BEN reads them
    assert ben_bid(bc.call_line(0, "1NT"), 0) == ("1N", False, None)
    assert ben_bid(bc.call_line(2, "P"), 2) == ("PASS", False, None)
    assert ben_bid(bc.call_line(3, "X"), 3) == ("X", False, None)
    assert ben_bid(bc.call_line(0, "XX"), 0) == ("XX", False, None)
    assert ben_bid(bc.call_line(1, "2C", "both majors", True), 1) == ("2C", True, "both majors")
    assert ben_bid(bc.call_line(0, "1NT", "15-17"), 0) == ("1N", False, "15-17")


def test_card_and_lead_and_timing_lines():
    assert bc.card_line(2, "H7") == "South plays 7H"
    assert bc.card_line(0, "ST") == "North plays TS"
    assert bc.card_line(3, "CA") == "West plays AC"
    assert ben_card(bc.card_line(2, "H7"), 2) == "H7"
    with pytest.raises(AssertionError):  # BEN asserts the real seat
        ben_card("Dummy plays 7H", 2)
    assert bc.to_lead_line(3) == "West to lead"
    assert bc.to_lead_line(2, dummy=True) == "Dummy to lead"
    assert bc.timing_line(62, 754, 58.4, 662) == (
        "Timing - N/S : this board 01:02, total 0:12:34.  E/W : this board 00:58, total 0:11:02.")
    assert bc.timing_line(0, 3600 * 2 + 1, 3599.6, 0) == (
        "Timing - N/S : this board 00:00, total 2:00:01.  E/W : this board 60:00, total 0:00:00.")


# --- client lines -----------------------------------------------------------------------------
@pytest.mark.parametrize("raw, expected", [
    ('Connecting "BEN" as North using protocol version 18\r\n', ("connect", 0, "BEN", 18)),
    ('Connecting "BEN" as North using protocol version 18\n', ("connect", 0, "BEN", 18)),
    ('Connecting "Wbridge5" as ANYPL using protocol version 18', ("connect", None, "Wbridge5", 18)),
    ('connecting  "Jack 6"  AS  west using protocol version 19', ("connect", 3, "Jack 6", 19)),
    ('Connecting "GIB" as South using protocol version 18 (GIB 2024)', ("connect", 2, "GIB", 18)),
    (b'Connecting "Q\xe9" as East using protocol version 18\r\n', ("connect", 1, "Q\xe9", 18)),
])
def test_connect_variants(raw, expected):
    msg = bc.parse_client_line(raw)
    assert (msg.kind, msg.seat, msg.team, msg.version) == expected


@pytest.mark.parametrize("raw, kind, seat, of, trick", [
    ("North ready for teams", "teams", 0, None, 0),
    ("EAST  READY  TO  START\r\n", "start", 1, None, 0),
    ("south ready for deal", "deal", 2, None, 0),
    ("West ready for cards", "cards", 3, None, 0),
    ("North ready for dummy", "dummy", 0, None, 0),
    ("WEST ready for  NORTH's bid", "bid_of", 3, 0, 0),
    ("East ready for South's bid\r\n", "bid_of", 1, 2, 0),
    ("South ready for West's card to trick 1", "card_of", 2, 3, 1),
    ("SOUTH ready for  dummy's card to trick  13", "card_of", 2, -1, 13),
])
def test_ready_variants(raw, kind, seat, of, trick):
    msg = bc.parse_client_line(raw)
    assert (msg.kind, msg.seat, msg.of, msg.trick) == (kind, seat, of, trick)


@pytest.mark.parametrize("raw, seat, call, alert, text", [
    ("North bids 1NT", 0, "1NT", False, ""),
    ("North bids 1N", 0, "1NT", False, ""),
    ("WEST PASSES", 3, "P", False, ""),
    ("WEST  BIDS  3nt\r\n", 3, "3NT", False, ""),
    ("East doubles", 1, "X", False, ""),
    ("East doubles.", 1, "X", False, ""),
    ("South redoubles", 2, "XX", False, ""),
    ("North bids 2C Alert. both majors, 5-5", 0, "2C", True, "both majors, 5-5"),
    ("North bids 1H Infos. 12-14 HCP", 0, "1H", False, "12-14 HCP"),
    ("North bids 1H.Infos.C=0-8,D=4-8", 0, "1H", False, "C=0-8,D=4-8"),
    ("North passes Alert.", 0, "P", True, ""),
    ("North bids 7S Alert. " + "x" * 1000, 0, "7S", True, None),
])
def test_call_variants(raw, seat, call, alert, text):
    if len(raw) > bc.MAX_LINE:
        with pytest.raises(ProtocolError, match="too long"):
            bc.parse_client_line(raw)
        return
    msg = bc.parse_client_line(raw)
    assert (msg.kind, msg.seat, msg.call, msg.alert, msg.explanation) == ("call", seat, call, alert, text)


def test_long_explanation_is_cut():
    msg = bc.parse_client_line("North bids 2C Alert. " + "y" * 500)
    assert msg.explanation == "y" * bc.MAX_EXPLANATION


@pytest.mark.parametrize("raw, seat, card", [
    ("North plays KH", 0, "HK"),
    ("south plays 7h", 2, "H7"),
    ("WEST PLAYS TS", 3, "ST"),
    ("East plays 10D", 1, "DT"),
])
def test_play_variants(raw, seat, card):
    msg = bc.parse_client_line(raw)
    assert (msg.kind, msg.seat, msg.card) == ("play", seat, card)


@pytest.mark.parametrize("raw, why", [
    ("", "not a Blue Chip"),
    ("hello", "not a Blue Chip"),
    ('Connecting "" as North using protocol version 18', "team name"),
    ('Connecting "X" as North using protocol version 17', "version 17"),
    ("Connecting X as North using protocol version 18", "not a Blue Chip"),
    ('Connecting "X" as Northeast using protocol version 18', "not a Blue Chip"),
    ("North bids 8H", "not a Blue Chip"),
    ("North bids 1NT please", "not a Blue Chip"),
    ("North bids", "not a Blue Chip"),
    ("North passes.  now", "not a Blue Chip"),
    ("Dummy plays 7H", "not a Blue Chip"),
    ("North plays 1H", "not a Blue Chip"),
    ("North plays H", "not a Blue Chip"),
    ("North ready for dummy's card to trick 14", "no trick 14"),
    ("North ready for dummy's bid", "not a Blue Chip"),
    ("x" * 700, "too long"),
    (b"x" * 700, "too long"),
])
def test_malformed_lines(raw, why):
    with pytest.raises(ProtocolError, match=why):
        bc.parse_client_line(raw)


# --- connections ------------------------------------------------------------------------------
class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def seated_table(clock=None, teams=("Alpha", "Beta"), scoring=None):
    """Four connections through the handshake up to "ready to start"; their lines so far."""
    shared: dict = {}
    conns = [bc.Connection(shared, clock or Clock()) for _ in range(4)]
    out: dict[int, list[str]] = {s: [] for s in range(4)}
    for s, c in enumerate(conns):
        step = c.feed(f'Connecting "{teams[s & 1]}" as {SEATS[s]} using protocol version 18\r\n')
        assert step.connect.seat == s and step.lines == []
        out[s] += c.take_seat(s)
        out[s] += c.feed(f"{SEATS[s]} ready for teams").lines
    for s, c in enumerate(conns):
        out[s] += c.set_teams(teams[0], teams[1], scoring)
        out[s] += c.feed(f"{SEATS[s]} ready to start").lines
    return conns, out


def drive(conns, state, out, clock, calls_script, choose_card=lambda legal: legal[0], until=None):
    """Play through the connections as robots that send what each connection expects (the
    first of :meth:`Connection.expected`), choosing calls from ``calls_script`` (per board:
    a list of call, or (call, explanation, alert)) and the first legal card; stop when no
    connection expects anything, or once ``until(state)``."""
    board_i = len(state.board_records())
    for _ in range(10_000):  # a whole session takes a few hundred rounds: never loop forever
        if until and until(state):
            return
        progress = False
        for s, c in enumerate(conns):
            expected = c.expected()
            if not expected:
                continue
            line = expected[0]
            if line.endswith("<call>"):
                assert state.to_act() == (s,)
                choice = calls_script[board_i][len(state.calls)]
                call, text, alert = (choice, "", False) if isinstance(choice, str) else choice
                line = ben_call_text(s, call, text, alert)
            elif line.endswith("<card>"):
                assert state.to_act() == (s,)
                line = ben_card_text(state.player, choose_card(state.legal_actions(s)))
            step = c.feed(line)
            out[s] += step.lines
            if step.action:
                clock.t += 2
                happenings = state.apply({s: step.action})
                if any(h["type"] == "board_over" for h in happenings):
                    board_i += 1
                for t, other in enumerate(conns):
                    out[t] += other.observe(state.observation(t), happenings)
            progress = True
        if not progress:
            return
    raise AssertionError("the connections kept expecting lines: a loop")


def split_boards(lines):
    """A connection's lines cut into boards: from "Start of board" to the Timing line."""
    boards, current = [], None
    for line in lines:
        if line == "Start of board":
            current = []
        elif current is not None:
            current.append(line)
            if line.startswith("Timing"):
                boards.append(current)
                current = None
    return boards


def test_whole_session_through_four_connections_read_as_ben():
    clock = Clock()
    conns, out = seated_table(clock, scoring="IMP")
    state = new_state({"board": 1, "boards": 2, "deals": [{"hands": DEAL}]}, seed=7)
    for s, c in enumerate(conns):
        out[s] += c.observe(state.observation(s))
    script = [
        # North deals board 1: 1NT (explained), East 2C (alerted), South 3NT, doubled by East
        [("1NT", "15-17", False), ("2C", "both majors", True), "3NT", "P", "P", "X", "P", "P", "P"],
        ["P", "P", "P", "P"],  # board 2 passed out
    ]
    drive(conns, state, out, clock, script)
    assert state.is_terminal()
    records = state.board_records()
    assert records[0]["contract"] == "3NTX" and records[0]["declarer"] == 0
    assert records[1]["contract"] == "Pass"
    for s in range(4):
        lines = out[s]
        assert lines[0] == f'{SEATS[s]} ("{("Alpha", "Beta")[s & 1]}") seated'
        assert lines[1] == 'Teams : N/S : "Alpha" E/W : "Beta" Playing IMP'
        assert ben_teams(lines[1]) == ("Alpha", "Beta", "IMP")
        assert lines[-1] == "End of session" and lines.count("End of session") == 1
        boards = split_boards(lines)
        assert len(boards) == 2
        for record, board in zip(records, boards):
            check_board_as_ben(s, record, board)
        assert conns[s].out_of_step is None
    # the explanations: East's alert to North and South only, North's infos to East and West
    call_lines = {s: [l for l in split_boards(out[s])[0] if " bids " in l] for s in range(4)}
    assert "East bids 2C Alert. both majors" in call_lines[0] + call_lines[2]
    assert "East bids 2C" in call_lines[3] and "North bids 1NT Infos. 15-17" in call_lines[1] + call_lines[3]
    assert "North bids 1NT" in call_lines[2]


def check_board_as_ben(seat, record, lines):
    """Read one board's lines as BEN reads them and compare with the rules' record."""
    assert lines[0].startswith("Board number")
    assert ben_deal(lines[0])[:2] == (record["board"], record["dealer"])
    assert ben_hand(lines[1]) == ben_form(record["hands"][seat])
    assert lines[-1].startswith("Timing - N/S : this board ")
    body = lines[2:-1]
    dealer = record["dealer"]
    # the others' calls, in order, each under its seat
    calls = [(i, c) for i, c in enumerate(record["calls"]) if (dealer + i) % 4 != seat]
    call_lines = [l for l in body if " bids " in l or l.split()[1] in ("passes", "doubles", "redoubles")]
    assert len(call_lines) == len(calls)
    for (i, call), line in zip(calls, call_lines):
        assert ben_call_name(ben_bid(line, (dealer + i) % 4)[0]) == call
    if record["declarer"] is None:
        assert body == call_lines  # a passed-out board: calls, then the Timing line
        return
    declarer = record["declarer"]
    dummy = (declarer + 2) % 4
    play = [((t["first"] + i) % 4, card) for t in record["play"] for i, card in enumerate(t["cards"])]
    controller = {s: s for s in range(4)}
    controller[dummy] = declarer
    received = [(s, c) for s, c in play if controller[s] != seat]
    card_lines = [l for l in body if " plays " in l]
    assert len(card_lines) == len(received)
    for (s, card), line in zip(received, card_lines):
        assert ben_card(line, s) == card
    dummy_lines = [l for l in body if l.startswith("Dummy's cards : ")]
    assert [ben_hand(l) for l in dummy_lines] == ([] if seat == dummy else [ben_form(record["hands"][dummy])])
    # "to lead": the opening leader, then each trick's winner's player, never after trick 13
    leaders = [record["play"][0]["first"]] + [t["winner"] for t in record["play"][:-1]]
    expect_lead = [bc.to_lead_line(w, w == dummy) for w in leaders if controller[w] == seat]
    assert [l for l in body if l.endswith(" to lead")] == expect_lead
    assert len(body) == len(call_lines) + len(card_lines) + len(dummy_lines) + len(expect_lead)


def test_timing_line_counts_each_sides_time():
    clock = Clock()
    conns, out = seated_table(clock)
    state = new_state({"board": 1, "boards": 2, "deals": [{"hands": DEAL}]}, seed=7)
    for s, c in enumerate(conns):
        out[s] += c.observe(state.observation(s))
    script = [["1NT", "P", "3NT", "P", "P", "P"], ["P"] * 4]
    drive(conns, state, out, clock, script)
    # 2 s per action, to the side that acted: board 1's six calls (three a side: North
    # deals) and 52 cards (26 a side); board 2's four passes (two a side)
    ns1 = ew1 = 2 * (3 + 26)
    t1 = bc.timing_line(ns1, ns1, ew1, ew1)
    t2 = bc.timing_line(4, ns1 + 4, 4, ew1 + 4)
    for s in range(4):
        assert [l for l in out[s] if l.startswith("Timing")] == [t1, t2]


def test_a_robot_reconnecting_mid_board_replays_it():
    clock = Clock()
    conns, out = seated_table(clock)
    state = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=7)
    for s, c in enumerate(conns):
        out[s] += c.observe(state.observation(s))
    script = [["1NT", "P", "3NT", "P", "P", "P"]]
    drive(conns, state, out, clock, script, until=lambda st: len(st.tricks) * 4 + len(st.trick) >= 6)
    # East's robot reconnects: a new connection, the handshake, then the board from its start
    late = bc.Connection(conns[0].explanations, clock)
    assert late.feed('Connecting "Beta" as East using protocol version 18').connect.seat == 1
    lines = late.take_seat(1)
    lines += late.feed("East ready for teams").lines + late.set_teams("Alpha", "Beta")
    lines += late.feed("East ready to start").lines + late.observe(state.observation(1))
    obs = state.observation(1)
    played = [((t["first"] + i) % 4, c) for t in obs["tricks"] + [obs["trick"]] for i, c in enumerate(t["cards"])]
    while late.expected():
        line = late.expected()[0]
        if line.endswith("<call>"):
            step = late.feed(ben_call_text(1, obs["calls"][len(late.calls)]))
            assert step.replayed and step.action
        elif line.endswith("<card>"):
            seat, card = played[len(late.cards)]
            step = late.feed(ben_card_text(seat, card))
            assert step.replayed and step.action
        else:
            step = late.feed(line)
        lines += step.lines
    assert late.out_of_step is None and len(late.cards) == len(played)
    conns[1], out[1] = late, lines
    drive(conns, state, out, clock, script)
    assert state.is_terminal()
    [board] = split_boards(out[1])
    check_board_as_ben(1, state.board_records()[0], board)
    # a robot that replays a different call than the table's is out of step
    other = bc.Connection()
    other.feed('Connecting "Beta" as East using protocol version 18')
    other.take_seat(1)
    other.feed("East ready for teams")
    other.set_teams("A", "B")
    other.feed("East ready to start")
    replay = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=7)
    replay.apply({0: "1NT"})
    replay.apply({1: "P"})
    other.observe(replay.observation(1))
    for line in ("East ready for deal", "East ready for cards", "East ready for North's bid"):
        other.feed(line)
    assert other.feed("East bids 2C").replayed
    assert other.out_of_step == "the table recorded call P where this robot has 2C"


def test_handshake_anypl_version_19_and_teams_waiting():
    c = bc.Connection()
    with pytest.raises(ProtocolError, match="Connecting"):
        c.feed("North ready for teams")
    step = c.feed('Connecting "Wbridge5" as ANYPL using protocol version 19')
    assert step.connect.seat is None and step.connect.team == "Wbridge5" and not c.pauses
    with pytest.raises(ProtocolError, match="seated"):
        c.feed("South ready for teams")
    assert c.take_seat(2) == ['South ("Wbridge5") seated']
    assert c.expected() == ["South ready for teams"]
    with pytest.raises(ProtocolError, match='you are South: expected "South ready for teams"'):
        c.feed("North ready for teams")
    assert c.feed("SOUTH  READY FOR TEAMS").lines == []  # three seats still empty
    assert c.set_teams("", 'Wb"5', "MP") == ['Teams : N/S : "N/S" E/W : "Wb\'5" Playing MP']
    assert c.feed("South ready to start").lines == []  # no board yet
    assert c.feed("South ready to start").lines == []  # repeated
    state = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=1)
    assert c.observe(state.observation(2)) == ["Start of board"]
    assert c.feed("South ready to start").lines == []  # repeated once more
    assert c.feed("South ready for deal").lines == ["Board number 1. Dealer North. Neither vulnerable."]
    assert c.feed("south ready for cards").lines == ["South's cards : " + DEAL_TEXT[2]]
    assert c.expected() == ["South ready for North's bid"]
    other = bc.Connection()
    other.feed('Connecting "B" as West using protocol version 18 and more')
    assert other.pauses and other.take_seat(3) == ['West ("B") seated']
    assert other.set_teams("A", "B") == []  # not asked yet
    assert other.feed("West ready for teams").lines == ['Teams : N/S : "A" E/W : "B"']


def start_board(seat, state, conn=None):
    conn = conn or bc.Connection()
    conn.feed(f'Connecting "T" as {SEATS[seat]} using protocol version 18')
    conn.take_seat(seat)
    conn.feed(f"{SEATS[seat]} ready for teams")
    conn.set_teams("A", "B")
    conn.feed(f"{SEATS[seat]} ready to start")
    conn.observe(state.observation(seat))
    conn.feed(f"{SEATS[seat]} ready for deal")
    conn.feed(f"{SEATS[seat]} ready for cards")
    return conn


def test_requests_wait_for_the_table_and_turns_are_checked():
    state = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=1)
    east = start_board(1, state)
    with pytest.raises(ProtocolError, match="expected \"East ready for North's bid\""):
        east.feed("East passes")  # North calls first
    with pytest.raises(ProtocolError, match="expected \"East ready for North's bid\""):
        east.feed("East ready for South's bid")
    assert east.feed("East ready for North's bid").lines == []  # North has not called
    assert east.expected() == []
    with pytest.raises(ProtocolError, match="still waiting"):
        east.feed("East ready for North's bid")
    happenings = state.apply({0: "1C"})
    assert east.observe(state.observation(1), happenings) == ["North bids 1C"]
    assert east.expected() == ["East bids <call>"]
    step = east.feed("EAST  BIDS  1D Alert. five")
    assert (step.call, step.alert, step.explanation, step.lines) == ("1D", True, "five", [])
    assert east.explanations == {(0, 1): (True, "five")}
    with pytest.raises(ProtocolError):
        east.feed("East plays 2C")


def test_a_different_action_recorded_puts_the_robot_out_of_step():
    state = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=1)
    north = start_board(0, state)
    step = north.feed("North bids 1C")
    assert step.action == "1C"
    happenings = state.apply({0: "P"})  # e.g. a forced pass at the deadline
    north.observe(state.observation(0), happenings)
    assert north.out_of_step == "the table recorded call P where this robot has 1C"


def test_dummy_and_leader_requests():
    state = new_state({"board": 1, "deals": [{"hands": DEAL}]}, seed=1)
    conns = [start_board(s, state) for s in range(4)]
    for call in ["1NT", "P", "3NT", "P", "P", "P"]:  # North declares, East leads, South is dummy
        seat = state.to_act()[0]
        for t, c in enumerate(conns):
            if t != seat:
                c.feed(f"{SEATS[t]} ready for {SEATS[seat]}'s bid")
        conns[seat].feed(ben_call_text(seat, call))
        happenings = state.apply({seat: call})
        lines = {t: c.observe(state.observation(t), happenings) for t, c in enumerate(conns)}
    assert lines[1][-1] == "East to lead" and all("to lead" not in " ".join(lines[t]) for t in (0, 2, 3))
    north, east, south, west = conns
    with pytest.raises(ProtocolError, match="expected \"South ready for East's card to trick 1\""):
        south.feed("South ready for dummy")  # dummy does not ask for itself
    with pytest.raises(ProtocolError):
        east.feed("East ready for dummy")  # the leader leads first
    assert north.feed("North ready for dummy").lines == []  # before the lead: waits
    with pytest.raises(ProtocolError, match="expected \"South ready for East's card to trick 1\""):
        south.feed("South ready for dummy's card to trick 1")
    assert south.feed("South ready for East's card to trick 1").lines == []
    step = east.feed("East plays KS")
    assert step.card == "SK"
    happenings = state.apply({1: "SK"})
    assert north.observe(state.observation(0), happenings) == ["Dummy's cards : " + DEAL_TEXT[2]]
    assert south.observe(state.observation(2), happenings) == ["East plays KS"]
    east.observe(state.observation(1), happenings)
    assert east.feed("East ready for dummy").lines == ["Dummy's cards : " + DEAL_TEXT[2]]
    # declarer plays dummy's card under dummy's seat, not its own
    assert north.feed("North ready for East's card to trick 1").lines == ["East plays KS"]
    with pytest.raises(ProtocolError, match="South plays <card>"):
        north.feed("North plays 2S")
    assert south.feed("South ready for dummy's card to trick 1").lines == []
    assert east.feed("East ready for dummy's card to trick 1").lines == []
    assert north.feed("South plays 2S").card == "S2"
    happenings = state.apply({0: "S2"})
    assert south.observe(state.observation(2), happenings) == ["South plays 2S"]
    assert east.observe(state.observation(1), happenings) == ["South plays 2S"]


def test_end_session_and_after():
    c = bc.Connection()
    c.feed('Connecting "T" as North using protocol version 18')
    c.take_seat(0)
    assert c.end_session() == ["End of session"]
    assert c.end_session() == []
    with pytest.raises(ProtocolError, match="nothing expected"):
        c.feed("North ready for teams")


# --- the scripted clients over real sockets ---------------------------------------------------------
def serve(server_socks, state, stop_at):
    """A minimal table manager for the test: four connections over sockets, the rules state,
    no pauses; returns when every connection has ended its session."""
    explanations: dict = {}  # one table: shared by its connections
    conns = [bc.Connection(explanations) for _ in server_socks]
    seat_of: dict[int, int] = {}
    buffers = [b""] * len(server_socks)
    sel = selectors.DefaultSelector()
    for i, sock in enumerate(server_socks):
        sel.register(sock, selectors.EVENT_READ, i)

    def write(i, lines):
        if lines:
            server_socks[i].sendall(b"".join(bc.encode(line) for line in lines))

    by_seat: dict[int, int] = {}
    started = False
    while any(c.phase != bc.OVER for c in conns):
        assert time.monotonic() < stop_at, "the session did not end in time"
        for key, _ in sel.select(timeout=0.2):
            i = key.data
            chunk = server_socks[i].recv(4096)
            assert chunk, "a client hung up"
            buffers[i] += chunk
            while b"\n" in buffers[i]:
                raw, buffers[i] = buffers[i].split(b"\n", 1)
                step = conns[i].feed(raw)
                write(i, step.lines)
                if step.connect is not None:
                    seat = step.connect.seat
                    if seat is None:  # ANYPL: the first free seat
                        seat = next(s for s in range(4) if s not in by_seat)
                    by_seat[seat], seat_of[i] = i, seat
                    write(i, conns[i].take_seat(seat))
                    if len(by_seat) == 4:
                        for j, c in enumerate(conns):
                            write(j, c.set_teams("Alpha", "Beta", "IMP"))
                if step.action:
                    happenings = state.apply({seat_of[i]: step.action})
                    for j, c in enumerate(conns):
                        write(j, c.observe(state.observation(seat_of[j]), happenings))
        if not started and len(by_seat) == 4:
            started = True
            for j, c in enumerate(conns):
                write(j, c.observe(state.observation(seat_of[j])))
    return conns


def test_ben_and_wbridge5_clients_play_a_session_over_sockets():
    state = new_state({"board": 1, "boards": 2, "deals": [{"hands": DEAL}]}, seed=7)
    scripts = [[("1NT", "15-17", False), ("2C", "both majors", True), "3NT", "P", "P", "X", "P", "P", "P"],
               ["P", "P", "P", "P"]]

    def choose_call(client, board):
        return scripts[len(client.boards) - 1][len(board.calls)]

    def choose_card(client, board, seat, legal):
        return legal[-1]

    pairs = [socket.socketpair() for _ in range(4)]
    clients = [BenClient(("Alpha", "Beta")[s & 1], s, choose_call, choose_card, sock=pairs[s][0]) for s in range(3)]
    clients.append(WBridge5Client("Beta", None, choose_call, choose_card, sock=pairs[3][0]))
    errors = []

    def run(client):
        try:
            client.join()
            client.play_session()
        except BaseException as exc:  # reported by the test thread
            errors.append((client.seat, exc))

    result = {}
    server = threading.Thread(target=lambda: result.setdefault(
        "conns", serve([p[1] for p in pairs], state, time.monotonic() + 10)))
    server.start()
    threads = [threading.Thread(target=run, args=(c,)) for c in clients[:3]]
    for t in threads:
        t.start()
    # WBridge5 connects once the three named seats are taken (each has its seated line), so
    # that ANYPL gets West
    while any(not c.received for c in clients[:3]) and server.is_alive() and not errors:
        time.sleep(0.01)
    threads.append(threading.Thread(target=run, args=(clients[3],)))
    threads[-1].start()
    for t in threads:
        t.join(10)
    server.join(10)
    for a, b in pairs:
        a.close()
        b.close()
    assert not errors, errors
    assert clients[3].seat == 3
    records = state.board_records()
    for s, client in enumerate(clients):
        assert client.ended and client.received[-1] == "End of session"
        assert client.teams == ("Alpha", "Beta", "IMP")
        assert [b.number for b in client.boards] == [1, 2]
        for record, board in zip(records, client.boards):
            assert board.hand == ben_form(record["hands"][s])
            assert board.calls == record["calls"]
            assert board.declarer == record["declarer"]
            assert board.timing.startswith("Timing - N/S : this board ")
        first = client.boards[0]
        leaders = [records[0]["play"][0]["first"]] + [t["winner"] for t in records[0]["play"][:-1]]
        controller = [0, 1, 0, 3]  # North declares: South's leads are North's
        assert first.to_lead == [bc.to_lead_line(w, w == 2) for w in leaders if controller[w] == s]
        play = [((t["first"] + i) % 4, c) for t in records[0]["play"] for i, c in enumerate(t["cards"])]
        assert first.play == play
        if s != 2:  # South is dummy
            assert first.dummy == ben_form(records[0]["hands"][2])
        # the alert reached the opponents of East only, North's infos those of North
        assert first.explanations.get(1) == ((True, "both majors") if s in (0, 2) else None)
        assert first.explanations.get(0) == ((False, "15-17") if s in (1, 3) else None)
    assert all(c.out_of_step is None for c in result["conns"])
    # WBridge5's upper-case lines were read: its calls are in the record as West's
    assert clients[3].sent[0] == 'Connecting "Beta" as ANYPL using protocol version 18'
    assert "WEST  PASSES" in clients[3].sent
