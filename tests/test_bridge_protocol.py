"""The bridge text protocol's codec (games/bridge/protocol.py) against its page,
docs/bridge-protocol.md: every message parsed and formatted, every malformed form refused with
a usable reason, the example session of the page replayed through the rules, and random
boards read back by a client that knows nothing but the lines it was sent."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from games.base import ProtocolError
from games.bridge import protocol as p
from games.bridge.rules import CALL_NAMES, CARD_NAMES, SEAT_LETTERS, new_state, new_state_from_deal

DOC = Path(__file__).resolve().parent.parent / "docs" / "bridge-protocol.md"
N, E, S, W = range(4)


def play_out(state, *actions):
    """Apply actions for whoever is to act."""
    for action in actions:
        state.apply({state.to_act()[0]: action})


# --- the seed's types ---------------------------------------------------------------------------
def test_all_52_cards_round_trip():
    wires = [p.card_to_wire(c) for c in CARD_NAMES]
    assert len(set(wires)) == 52
    assert p.card_to_wire("HT") == "10H" and p.card_to_wire("SA") == "AS" and p.card_to_wire("C2") == "2C"
    for card, wire in zip(CARD_NAMES, wires):
        assert re.fullmatch(r"(10|[2-9JQKA])[CDHS]", wire), "the seed's cardinal then cardsuit"
        assert p.card_from_wire(wire) == card
        assert p.card_from_wire(wire.lower()) == card
    assert p.card_from_wire("TH") == "HT", "T for ten is accepted too"


def test_all_38_calls_round_trip():
    wires = [p.call_to_wire(c) for c in CALL_NAMES]
    assert wires[:5] == ["1C", "1D", "1H", "1S", "1NT"] and wires[34:] == ["7NT", "PASS", "DOUBLE", "REDOUBLE"]
    for call, wire in zip(CALL_NAMES, wires):
        assert p.call_from_wire(wire) == call
        assert p.call_from_wire(wire.lower()) == call


@pytest.mark.parametrize("text", ["AH0", "1H", "11H", "H10", "HA", "A", "", "AX", "10", "AS,"])
def test_bad_cards(text):
    with pytest.raises(ProtocolError, match="not a card: rank then suit"):
        p.card_from_wire(text)


@pytest.mark.parametrize("text", ["P", "X", "XX", "8C", "0NT", "1N", "1NTX", "PASSES", "", "NT"])
def test_bad_bids(text):
    with pytest.raises(ProtocolError, match="not a bid: 1C ... 7NT"):
        p.call_from_wire(text)


def test_positions():
    assert [p.position_to_wire(s) for s in (0, 1, 2, 3, None, -1)] == ["N", "E", "S", "W", "0", "0"]
    assert [p.position_from_wire(x) for x in "NESWnesw"] == [0, 1, 2, 3, 0, 1, 2, 3]
    for bad in ("0", "X", "NS", ""):
        with pytest.raises(ProtocolError, match="not a position"):
            p.position_from_wire(bad)


# --- client lines -------------------------------------------------------------------------------
@pytest.mark.parametrize("line, message", [
    ("HELLO Ann", p.Hello("Ann")),
    ("HELLO Ann Smith\n", p.Hello("Ann Smith")),
    ('HELLO "Ann Smith" arena-key-Ab_9-x\r\n', p.Hello("Ann Smith", "arena-key-Ab_9-x")),
    ('HELLO "Ann \\"the bot\\" Smith"', p.Hello('Ann "the bot" Smith')),
    ('HELLO "Ann"', p.Hello("Ann")),
    ("hello  Ann ", p.Hello("Ann")),
    ("GAMES", p.GamesRequest()),
    ("TOURNAMENTS", p.TournamentsRequest()),
    ("JOIN-M", p.JoinM("NEW", None)),
    ("JOIN-M NEW", p.JoinM("NEW", None)),
    ("JOIN-M any", p.JoinM("ANY", None)),
    ("JOIN-M 42", p.JoinM("42", None)),
    ("JOIN-M 42 S", p.JoinM("42", S)),
    ("JOIN-M ANY W", p.JoinM("ANY", W)),
    ("JOIN-M E", p.JoinM("NEW", E)),
    ("JOIN-T Bea", p.JoinT("Bea")),
    ("JOIN-T Bea Jones", p.JoinT("Bea Jones")),
    ("JOIN-T T12 Bea Jones", p.JoinT("Bea Jones", "T12")),
    ('JOIN-T "T12 Bea"', p.JoinT("T12 Bea")),
    ('JOIN-T T3 "T12 Bea"', p.JoinT("T12 Bea", "T3")),
    ("JOIN-T T12", p.JoinT("T12")),
    ("JOIN-T E12 Bea", p.JoinT("Bea", "E12")),
    ("join-t e7 Bea Jones", p.JoinT("Bea Jones", "E7")),
    ('JOIN-T "E12 Bea"', p.JoinT("E12 Bea")),
    ("BID 1NT", p.Bid("1NT")),
    ("BID 7c", p.Bid("7C")),
    ("BID PASS", p.Bid("P")),
    ("bid double", p.Bid("X")),
    ("BID REDOUBLE", p.Bid("XX")),
    ("PLAY 10H", p.Play("HT")),
    ("PLAY as", p.Play("SA")),
    ("PLAY 2C\r\n", p.Play("C2")),
])
def test_client_messages_parse(line, message):
    assert p.parse_line(line) == message
    assert p.parse_line(line.encode("utf-8")) == message


@pytest.mark.parametrize("message", [
    p.Hello("Ann"), p.Hello("Ann Smith", "k3y"), p.Hello('A "quoted" \\ name', "k"), p.GamesRequest(),
    p.TournamentsRequest(), p.JoinM(), p.JoinM("ANY", N), p.JoinM("7", W), p.JoinT("Bea"),
    p.JoinT("Bea Jones", "T4"), p.JoinT("Bea", "E4"), p.JoinT("E4 lookalike"), p.JoinT("T4 lookalike"), p.JoinT("t4 lookalike"), p.JoinT('"Bea"'),
    p.Hello('"Ann"'), p.Hello('"Ann" k'), *(p.Bid(c) for c in CALL_NAMES),
    *(p.Play(c) for c in CARD_NAMES)])
def test_client_messages_format_and_parse_back(message):
    assert p.parse_line(p.format_client(message)) == message


def test_names_are_cleaned():
    assert p.parse_line("HELLO " + "x" * 100).name == "x" * 40, "cut to the arena's 40 characters"
    assert p.parse_line('HELLO "  Ann  "').name == "Ann"


@pytest.mark.parametrize("line, reason", [
    ("", "empty line"),
    ("   ", "empty line"),
    ("HELO Ann", "unknown message 'HELO': a client sends HELLO, GAMES"),
    ("AUCOPEN N", "unknown message 'AUCOPEN'"),
    ("HELLO", "HELLO needs your name"),
    ('HELLO ""', "HELLO's name is empty"),
    ('HELLO "Ann', "never closed"),
    ('HELLO "Ann"key', "a space must follow the closing quote"),
    ('HELLO "Ann" key extra', "one bot key"),
    ('HELLO "Ann" ' + "k" * 101, "one bot key"),
    ("GAMES 3", "GAMES takes no argument"),
    ("TOURNAMENTS x", "TOURNAMENTS takes no argument"),
    ("JOIN-M 7 N S", "at most two arguments"),
    ("JOIN-M 7-b", "not a game id"),
    ("JOIN-M N 7", "second argument must be a position"),
    ("JOIN-M 7 8", "second argument must be a position"),
    ("JOIN-T", "JOIN-T needs your partner's name"),
    ('JOIN-T "Bea" x', "nothing may follow the quoted partner name"),
    ("BID", "BID takes one argument, got 0: BID <bid>"),
    ("BID 1NT 2C", "BID takes one argument, got 2"),
    ("BID 1N", "not a bid"),
    ("BID P", "not a bid"),
    ("PLAY", "PLAY takes one argument, got 0: PLAY <card>"),
    ("PLAY HA", "not a card: rank then suit"),
    ("PLAY 10H\tx", "control character 0x09"),
    ("BID 1NT\r\r\n", "control character 0x0d"),
    ("BID 1NT\nPLAY AS", "control character 0x0a"),
])
def test_malformed_lines_are_refused_with_a_reason(line, reason):
    with pytest.raises(ProtocolError) as caught:
        p.parse_line(line)
    assert reason in str(caught.value)


def test_bounds_and_encoding():
    longest = "HELLO " + "a" * (p.MAX_LINE - 6)
    assert p.parse_line(longest + "\r\n").name == "a" * 40
    with pytest.raises(ProtocolError, match=f"line too long: {p.MAX_LINE + 1} bytes, at most {p.MAX_LINE}"):
        p.parse_line(longest + "a\n")
    with pytest.raises(ProtocolError, match="not UTF-8"):
        p.parse_line(b"HELLO \xff\xfe\n")
    assert p.parse_line("HELLO Zoë 🂡".encode()).name == "Zoë 🂡"


# --- server lines -------------------------------------------------------------------------------
@pytest.mark.parametrize("line, expected, parsed", [
    (p.games(["7", "12"]), "GAMES 7 12", ("7", "12")),
    (p.games([]), "GAMES", ()),
    (p.tournaments(["T3"]), "TOURNAMENTS T3", ("T3",)),
    (p.joined("7", E, "Ben Jones"), "JOINED 7 E Ben Jones", ("7", E, "Ben Jones")),
    (p.joined("7", E), "JOINED 7 E", ("7", E, None)),
    (p.nak("it is North's turn,\nnot East's"), "NAK it is North's turn, not East's",
     ("it is North's turn, not East's",)),
    (p.aucopen(N, []), "AUCOPEN N", (N, ())),
    (p.aucopen(None, ["1C", "P", "1NT", "X", "XX", "P", "P", "P"]),
     "AUCOPEN 0 1C PASS 1NT DOUBLE REDOUBLE PASS PASS PASS", (None, ("1C", "P", "1NT", "X", "XX", "P", "P", "P"))),
    (p.bid(W, "XX"), "BID W REDOUBLE", (W, "XX")),
    (p.hand(["SA", "HT", "C2"]), "HAND AS 10H 2C", (("SA", "HT", "C2"),)),
    (p.play(S, "DT"), "PLAY S 10D", (S, "DT")),
    (p.dummy(["SK", "D9"]), "DUMMY KS 9D", (("SK", "D9"),)),
    (p.trick(E, ["SA", "S2"]), "TRICK E AS 2S", (E, ("SA", "S2"))),
    (p.trick(None, []), "TRICK 0", (None, ())),
    (p.trickswon([N, N, W]), "TRICKSWON N N W", ((N, N, W),)),
    (p.trickswon([]), "TRICKSWON", ((),)),
    (p.aucclose("3NTX", S), "AUCCLOSE NT 3NT DOUBLED NS S", ("NT", "3NT", 1, 0, S)),
    (p.aucclose("4H", E), "AUCCLOSE H 4H UNDOUBLED EW E", ("H", "4H", 0, 1, E)),
    (p.aucclose("7CXX", W), "AUCCLOSE C 7C REDOUBLED EW W", ("C", "7C", 2, 1, W)),
    (p.aucclose("Pass"), "AUCCLOSE PASS", ()),
    (p.score_m([50, 120], [0, 60], [False, True]), "SCORE-M 50 0 NONVUL 120 60 VUL", (50, 0, False, 120, 60, True)),
])
def test_server_messages_format_and_parse_back(line, expected, parsed):
    assert line == expected
    msg = p.parse_server_line(line + "\n")
    assert (msg.name, msg.args) == (expected.split(" ")[0], parsed)


def test_server_lines_stay_one_line_and_bounded():
    assert p.nak("x" * 1000) == "NAK " + "x" * p.MAX_TEXT
    assert p.nak("") == "NAK refused"
    assert p.joined("7", N, "a\r\nb") == "JOINED 7 N a  b"
    assert p.encode(["TRICK 0", "TRICKSWON N"]) == b"TRICK 0\nTRICKSWON N\n"
    with pytest.raises(ValueError):
        p.joined("7 8", N)
    with pytest.raises(ValueError):
        p.games(["a-b"])


@pytest.mark.parametrize("line", ["HELLO Ann", "AUCCLOSE H 4S UNDOUBLED EW E", "AUCCLOSE NT 3NT",
                                  "SCORE-M 1 2 VUL 3 4", "SCORE-M -1 0 VUL 0 0 VUL", "BID N", "TRICK X",
                                  "JOINED 7", "AUCCLOSE S 4S DOUBLE NS N"])
def test_bad_server_lines_are_refused(line):
    with pytest.raises(ProtocolError):
        p.parse_server_line(line)


# --- the stream of a board ----------------------------------------------------------------------
SUITED = [[s + r for r in "AKQJT98765432"] for s in "SHDC"]  # North all spades, East hearts, ...


def stepped(state, action):
    """Apply ``action`` for the seat to act; returns each seat's messages."""
    before = state.public_observation()
    happenings = state.apply({state.to_act()[0]: action})
    return [p.step_messages(before, action, happenings, state.observation(s)) for s in range(4)]


def test_auction_stream_and_its_close():
    state = new_state_from_deal(SUITED, board=1)  # North deals
    assert p.board_start(state.observation(E)) == ["HAND " + " ".join(p.card_to_wire(c) for c in SUITED[E]),
                                                   "AUCOPEN N"]
    assert stepped(state, "1S")[W] == ["BID N 1S", "AUCOPEN E 1S"]
    assert stepped(state, "X")[N] == ["BID E DOUBLE", "AUCOPEN S 1S DOUBLE"]
    assert stepped(state, "XX")[S] == ["BID S REDOUBLE", "AUCOPEN W 1S DOUBLE REDOUBLE"]
    play_out(state, "P", "P")
    assert stepped(state, "P") == [["BID E PASS", "AUCOPEN 0 1S DOUBLE REDOUBLE PASS PASS PASS",
                                    "AUCCLOSE S 1S REDOUBLED NS N", "TRICK E"]] * 4


def test_play_stream_dummy_trick_and_score():
    state = new_state({"scoring": "rubber", "dealer": N, "deals": [{"hands": SUITED}]}, 1)
    play_out(state, "1S", "P", "P", "P")  # North declares, East leads, South is dummy
    out = stepped(state, "HA")
    south = " ".join(p.card_to_wire(c) for c in SUITED[S][:])
    assert out[N] == ["PLAY E AH", "DUMMY " + south, "TRICK S AH"], "dummy's turn: declarer plays"
    assert out == [out[N]] * 4, "every seat, dummy included, gets the same lines"
    assert stepped(state, "D2")[E] == ["PLAY S 2D", "TRICK W AH 2D"], "dummy's card under dummy's seat"
    stepped(state, "C2")
    assert stepped(state, "S2")[S] == ["PLAY N 2S", "TRICK 0 AH 2D 2C 2S", "TRICKSWON N", "TRICK N"]
    for _ in range(11):  # North leads a spade each trick; nobody can follow
        stepped(state, state.legal_actions(N)[0])
        for seat in (E, S, W):
            stepped(state, state.legal_actions(state.to_act()[0])[-1])
    stepped(state, "S3")  # each hand's last card: North led high and the others threw low
    stepped(state, "HK")
    stepped(state, "DA")
    last = stepped(state, "CA")
    assert last[E][:3] == ["PLAY W AC", "TRICK 0 3S KH AD AC", "TRICKSWON " + " ".join("N" * 13)]
    # 1S with 13 tricks: 30 below the line; above, 6 overtricks (180) and North's five honours (150)
    assert last[E][3] == "SCORE-M 330 30 NONVUL 0 0 NONVUL"
    assert last[E][4].startswith("HAND ") and last[E][5] == "AUCOPEN E", "the next deal, dealt by East"
    assert last[N][4] != last[E][4], "each seat its own hand"


def test_passed_out_board_duplicate_score():
    state = new_state({"board": 2, "boards": 2}, 5)  # board 2: East deals, North-South vulnerable
    play_out(state, "P", "P", "P")
    out = stepped(state, "P")[S]
    assert out[:4] == ["BID N PASS", "AUCOPEN 0 PASS PASS PASS PASS", "AUCCLOSE PASS",
                       "SCORE-M 0 0 NONVUL 0 0 VUL"], "duplicate: the vulnerability of board 3, next"
    assert out[4].startswith("HAND ") and out[5] == "AUCOPEN S"
    play_out(state, "1NT", "P", "P", "P")
    while not state.is_terminal():
        last = stepped(state, state.legal_actions(state.to_act()[0])[0])
    totals = state.result()["totals"]
    assert last[N][-1] == f"SCORE-M {totals[0]} 0 NONVUL {totals[1]} 0 VUL", "duplicate: the points so far above"
    assert "HAND" not in " ".join(last[N]), "no next board"


def test_step_messages_refuse_a_foreign_action():
    state = new_state({}, 1)
    with pytest.raises(ValueError):
        p.step_messages(state.public_observation(), "pass", [], state.observation(N))


def test_forced_notice_is_on_the_page():
    page = DOC.read_text(encoding="utf-8").splitlines()
    assert "< " + p.forced_notice("P", "deadline passed") in page
    assert "< " + p.forced_notice(p.forced_action(["SA", "C2", "HT"]), "deadline passed") in page


def test_forced_action():
    assert p.forced_action(["P", "1C", "1D", "X"]) == "P"
    assert p.forced_action(["SA", "S2", "HT", "H2", "C2", "D3"]) == "C2", "lowest rank, clubs first on a tie"
    assert p.forced_action(["SK", "HQ"]) == "HQ"


# --- resync -------------------------------------------------------------------------------------
def test_resync_in_the_auction_and_the_play_and_at_the_end():
    state = new_state({"board": 1}, 3)
    play_out(state, "1H", "P")
    assert p.resync(state.observation(W)) == [
        "SCORE-M 0 0 NONVUL 0 0 NONVUL", p.hand(state.observation(W)["hand"]), "AUCOPEN S 1H PASS"]
    play_out(state, "P", "P")
    lead = state.legal_actions(E)[0]
    play_out(state, lead)
    obs = state.observation(E)
    assert p.resync(obs) == [
        "SCORE-M 0 0 NONVUL 0 0 NONVUL", p.hand(obs["hand"]), "AUCOPEN 0 1H PASS PASS PASS",
        "AUCCLOSE H 1H UNDOUBLED NS N", p.dummy(obs["dummy_hand"]), "TRICKSWON",
        f"TRICK S {p.card_to_wire(lead)}"]
    while not state.is_terminal():
        play_out(state, state.legal_actions(state.to_act()[0])[-1])
    obs = state.observation(S)
    out = p.resync(obs)
    assert out[0].startswith("SCORE-M ") and not any(line.startswith(("HAND", "DUMMY")) for line in out)
    assert out[1:3] == ["AUCOPEN 0 1H PASS PASS PASS", "AUCCLOSE H 1H UNDOUBLED NS N"]
    assert out[4] == p.trick(None, obs["tricks"][-1]["cards"])
    passed = new_state({}, 3)
    play_out(passed, "P", "P", "P", "P")
    assert p.resync(passed.observation(N))[1:] == ["AUCOPEN 0 PASS PASS PASS PASS", "AUCCLOSE PASS"]


# --- a client that knows only its lines ---------------------------------------------------------
class Client:
    """What a bot can know from the lines it was sent, read with :func:`p.parse_server_line`."""

    def __init__(self):
        self.hand = self.dummy = None
        self.calls, self.turn, self.trick, self.won, self.contract, self.score = (), None, (), (), None, None

    def read(self, line: str) -> None:
        msg = p.parse_server_line(line)
        a = msg.args
        if msg.name == "HAND":
            self.hand, self.dummy, self.trick, self.won, self.contract = list(a[0]), None, (), (), None
        elif msg.name == "AUCOPEN":
            self.turn, self.calls = a
        elif msg.name == "AUCCLOSE":
            self.contract = a
        elif msg.name == "DUMMY":
            self.dummy = list(a[0])
        elif msg.name == "PLAY":
            for held in (self.hand, self.dummy):
                if held and a[1] in held:
                    held.remove(a[1])
        elif msg.name == "TRICK":
            self.turn, self.trick = a
        elif msg.name == "TRICKSWON":
            self.won = a[0]
        elif msg.name == "SCORE-M":
            self.score = a

    def agrees_with(self, obs: dict) -> None:
        """The client's picture is the observation's (board in play)."""
        assert self.hand == obs["hand"]
        assert self.dummy == obs["dummy_hand"]
        assert self.calls == tuple(obs["calls"])
        assert self.turn == obs["player"]
        if obs["phase"] == "play":
            assert self.trick == tuple(obs["trick"]["cards"])
            assert self.won == tuple(t["winner"] for t in obs["tricks"])
            assert self.contract[4] == obs["declarer"]
        assert p.parse_server_line(p.score_from_view(obs)).args == self.score


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scoring=st.sampled_from(["duplicate", "rubber"]))
def test_random_boards_read_back_and_hide_every_unplayed_card(seed, scoring):
    """Two boards played at random: each seat's client, fed its lines, sees what its
    observation says; a reconnecting client (resync) sees the same; and no line to a seat
    names a card another seat still holds, but dummy's once the opening lead is made."""
    rng = random.Random(seed)
    state = new_state({"scoring": scoring, "boards": 2, "board": rng.randrange(1, 17)}, seed)
    clients = [Client() for _ in range(4)]
    dealt = state.full_observation()["dealt"]
    played: set[str] = set()
    for seat in range(4):
        for line in p.board_start(state.observation(seat)) + [p.score_from_view(state.observation(seat))]:
            clients[seat].read(line)
    while not state.is_terminal():
        action = rng.choice(state.legal_actions(state.to_act()[0]))
        before = state.public_observation()
        dummy_seat, exposed = before["dummy"], before["dummy_hand"] is not None
        happenings = state.apply({state.to_act()[0]: action})
        played |= {h["card"] for h in happenings if h["type"] == "card"}
        exposed = exposed or any(h["type"] == "dummy" for h in happenings)
        new_board = any(h["type"] == "board_over" for h in happenings)
        for seat in range(4):
            obs = state.observation(seat)
            lines = p.step_messages(before, action, happenings, obs)
            again = p.resync(obs) if not state.is_terminal() else []  # to a client reconnecting now
            for line in lines + again:
                msg = p.parse_server_line(line)
                if msg.name == "HAND":  # the next deal: the seat's own new hand
                    assert msg.args[0] == tuple(obs["hand"])
                shown = (msg.args[1],) if msg.name == "PLAY" else msg.args[0] if msg.name == "DUMMY" \
                    else msg.args[1] if msg.name == "TRICK" else ()
                for card in shown:
                    seen = card in dealt[seat] or card in played or (exposed and card in dealt[dummy_seat])
                    assert seen, f"{line!r} shows {card} to {SEAT_LETTERS[seat]}"
            for line in lines:
                clients[seat].read(line)
            if not state.is_terminal():
                clients[seat].agrees_with(obs)
                fresh = Client()
                for line in again:
                    fresh.read(line)
                fresh.agrees_with(obs)
        if new_board and not state.is_terminal():
            dealt, played = state.full_observation()["dealt"], set()
    for seat in range(4):
        assert clients[seat].score == p.parse_server_line(p.score_from_view(state.observation(seat))).args


# --- the example session of docs/bridge-protocol.md ---------------------------------------------
GAME_ID = "7"


def merge(outputs: dict[int, list[str]]) -> list[str]:
    """Server lines to several seats, as the page writes them (``<NES line``: to North, East
    and South).  Lists of one length go line by line, a line every seat gets written once;
    otherwise the seats with the same lines are written together, one group after another."""
    out = []
    if len({len(lines) for lines in outputs.values()}) == 1:
        for i in range(len(next(iter(outputs.values())))):
            groups: dict[str, str] = {}
            for seat in sorted(outputs):
                groups[outputs[seat][i]] = groups.get(outputs[seat][i], "") + SEAT_LETTERS[seat]
            out += [f"<{seats} {line}" for line, seats in groups.items()]
        return out
    groups = {}
    for seat in sorted(outputs):
        groups[tuple(outputs[seat])] = groups.get(tuple(outputs[seat]), "") + SEAT_LETTERS[seat]
    return [f"<{seats} {line}" for lines, seats in groups.items() for line in lines]


def session(client_lines: list[tuple[int, str]], hands: list[list[str]]) -> list[str]:
    """The whole transcript of the page's example: each client line, then what the server
    answers, as the page documents it (GAMES after HELLO, JOINED, NAK, then the board from
    the rules and the codec), for a rubber table with this deal, North dealing.  Ends
    after the board's SCORE-M."""
    state = None
    names: dict[int, str] = {}
    seats: dict[int, int] = {}  # connection (the seat it will take) -> seat taken
    out: list[str] = []
    for conn, line in client_lines:
        out.append(f"{SEAT_LETTERS[conn]}> {line}")
        try:
            msg = p.parse_line(line)
        except ProtocolError as exc:
            out += merge({conn: [p.nak(str(exc))]})
            continue
        if isinstance(msg, p.Hello):
            names[conn] = msg.name
            out += merge({conn: [p.games([GAME_ID] if seats else [])]})
        elif isinstance(msg, p.JoinM):
            seat = msg.seat if msg.seat is not None else min(set(range(4)) - set(seats.values()))
            earlier = [p.joined(GAME_ID, s, names[c]) for c, s in sorted(seats.items(), key=lambda x: x[1])]
            seats[conn] = seat
            lines = {c: [] for c in seats}
            lines[conn] = earlier
            for c in seats:
                lines[c].append(p.joined(GAME_ID, seat, names[conn]))
            out += merge(lines)
            if len(seats) == 4:  # the table is full: the deal
                state = new_state({"scoring": "rubber", "dealer": N, "deals": [{"hands": hands}]}, 0)
                out += merge({c: p.board_start(state.observation(s)) for c, s in seats.items()})
        else:
            seat = seats[conn]
            action = msg.call if isinstance(msg, p.Bid) else msg.card
            why = state.why_illegal(seat, action)
            if why:
                out += merge({conn: [p.nak(why)]})
                continue
            before = state.public_observation()
            happenings = state.apply({seat: action})
            lines = {c: p.step_messages(before, action, happenings, state.observation(s)) for c, s in seats.items()}
            for c in lines:
                if any(x.startswith("SCORE-M") for x in lines[c]):
                    lines[c] = lines[c][:next(i for i, x in enumerate(lines[c]) if x.startswith("SCORE-M")) + 1]
            out += merge(lines)
    return out


def doc_block(marker: str) -> list[str]:
    """The lines of the page's code block after ``marker``, comment lines left out."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split(f"<!-- {marker}: checked by tests/test_bridge_protocol.py -->", 1)[1]
    block = block.split("```text\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def doc_deal(lines: list[str]) -> list[list[str]]:
    """The example's deal, from the HAND lines the server sent each seat."""
    hands = [None] * 4
    for line in lines:
        found = re.match(r"<([NESW]) (HAND .*)", line)
        if found and hands[SEAT_LETTERS.index(found[1])] is None:
            hands[SEAT_LETTERS.index(found[1])] = list(p.parse_server_line(found[2]).args[0])
    return hands


def doc_clients(lines: list[str]) -> list[tuple[int, str]]:
    return [(SEAT_LETTERS.index(line[0]), line[3:]) for line in lines if re.match(r"[NESW]> ", line)]


def doc_resync_state(cards: int = 10):
    """The example's board after its first ``cards`` cards, replayed from the page's lines."""
    lines = doc_block("example session")
    state = new_state({"scoring": "rubber", "dealer": N, "deals": [{"hands": doc_deal(lines)}]}, 0)
    played = 0
    for conn, line in doc_clients(lines):
        try:
            msg = p.parse_line(line)
        except ProtocolError:
            continue
        if isinstance(msg, (p.Bid, p.Play)) and played < cards:
            action = msg.call if isinstance(msg, p.Bid) else msg.card
            if state.is_legal(conn, action):
                state.apply({conn: action})
                played += isinstance(msg, p.Play)
    return state


def test_the_pages_example_session_is_what_the_codec_and_the_rules_say():
    lines = doc_block("example session")
    assert session(doc_clients(lines), doc_deal(lines)) == lines
    assert lines[0] == "N> HELLO Ann" and lines[-1].startswith("<NESW SCORE-M ")
    names = {line.split(" ")[1] for line in lines if re.match(r"[NESW]> ", line)}
    assert names == {"HELLO", "JOIN-M", "BID", "PLAY"}
    server = {line.split(" ")[1] for line in lines if line.startswith("<")}
    assert server == {"GAMES", "JOINED", "NAK", "HAND", "AUCOPEN", "BID", "AUCCLOSE", "PLAY", "DUMMY", "TRICK",
                      "TRICKSWON", "SCORE-M"}
    assert sum(line.startswith("<NESW PLAY ") for line in lines) == 52, "the whole board"


def test_the_pages_resync_example():
    state = doc_resync_state(10)
    assert len(state.public_observation()["tricks"]) == 2 and len(state.public_observation()["trick"]["cards"]) == 2
    assert doc_block("resync example") == ["<S " + line for line in p.resync(state.observation(S))]


@pytest.mark.parametrize("line", ["HELO Ann", "BID 1NT 2C", "BID 1N", "PLAY HA", "BID " + "x" * 596])
def test_the_pages_nak_examples_are_the_codecs(line):
    with pytest.raises(ProtocolError) as caught:
        p.parse_line(line)
    assert "< " + p.nak(str(caught.value)) in DOC.read_text(encoding="utf-8").splitlines()


def test_the_longest_auction_fits_one_line():
    """The page's bound on server lines: 3 passes, then every bid doubled and redoubled."""
    calls = ["P", "P", "P", "1C"]
    for b in CALL_NAMES[1:35]:
        calls += ["P", "P", "X", "P", "P", "XX", "P", "P", b]
    calls += ["P", "P", "X", "P", "P", "XX", "P", "P", "P"]
    state = new_state({}, 1)
    play_out(state, *calls)
    assert state.contract() == "7NTXX" and len(calls) == 319
    line = p.aucopen(None, state.observation(N)["calls"])
    assert len(line) == 1751 and p.parse_server_line(line).args == (None, tuple(calls))
