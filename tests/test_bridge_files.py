"""Bridge boards as PBN and LIN (games/bridge/files.py): what we write, endplay reads back to
the same boards; what endplay writes, we import; files in the tools' own styles import;
malformed and hostile files are refused with a message that says why."""
from __future__ import annotations

import random
from urllib.parse import unquote

import pytest
from endplay.config import suppress_unicode
from endplay.parsers import lin as endplay_lin, pbn as endplay_pbn
from endplay.types import Bid, Board, Card, Contract, Deal, Denom, Penalty, Player, Vul

from games.bridge import files, rules

NAMES = ["Ann", "Bob", "Cyd", "Dee"]  # North, East, South, West
STRAIN_OF = {Denom.clubs: "C", Denom.diamonds: "D", Denom.hearts: "H", Denom.spades: "S", Denom.nt: "NT"}
VUL_OF = {Vul.none: "None", Vul.ns: "NS", Vul.ew: "EW", Vul.both: "Both"}


def play_boards(seed: int, boards: int, calls: list[list[str]] | None = None) -> list[dict]:
    """Boards 1.. played out by random legal calls and cards (an auction given in ``calls``
    for the first boards), as board records."""
    state, rng = rules.new_state({"boards": boards}, seed), random.Random(seed)
    calls = calls or []
    while not state.is_terminal():
        seat = state.to_act()[0]
        if state.phase == 0 and state.played < len(calls):
            action = calls[state.played][len(state.calls)]
        else:
            legal = state.legal_actions(seat)
            action = "P" if state.phase == 0 and rng.random() < 0.6 else rng.choice(legal)
        state.apply({seat: action})
    return state.board_records()


# Board 1 passed out, board 2 redoubled, board 3 doubled, then five random boards: every
# dealer and vulnerability of boards 1-8.
RECORDS = play_boards(11, 8, [["P", "P", "P", "P"], ["1H", "X", "XX", "P", "P", "P"], ["P", "3NT", "X", "P", "P", "P"]])


def flat_play(record: dict) -> list[str]:
    return [card for trick in record["play"] for card in trick["cards"]]


def endplay_call(bid) -> str:
    if hasattr(bid, "level"):
        return f"{bid.level}{STRAIN_OF[bid.denom]}"
    return {Penalty.passed: "P", Penalty.doubled: "X", Penalty.redoubled: "XX"}[bid.penalty]


def endplay_card(card) -> str:
    with suppress_unicode():
        return str(card)


def endplay_hands(deal) -> list[list[str]]:
    with suppress_unicode():
        return [sorted(endplay_card(c) for c in deal[Player(seat)]) for seat in range(4)]


def test_the_records_cover_pass_out_doubles_and_every_dealer():
    assert RECORDS[0]["contract"] == "Pass" and RECORDS[1]["contract"].endswith("XX")
    assert RECORDS[2]["contract"] == "3NTX"
    assert {r["dealer"] for r in RECORDS} == {0, 1, 2, 3}
    assert {r["vulnerability"] for r in RECORDS} == {"None", "NS", "EW", "Both"}


def test_pbn_we_write_endplay_reads_to_the_same_boards():
    text = files.export_pbn(RECORDS, NAMES, event="Arena match 7", site="arena.test")
    assert text.startswith("% PBN 2.1\r\n% EXPORT\r\n[Event \"Arena match 7\"]\r\n")
    read = endplay_pbn.loads(text)
    assert len(read) == len(RECORDS)
    for board, record in zip(read, RECORDS):
        assert board.board_num == record["board"]
        assert int(board.dealer) == record["dealer"]
        assert VUL_OF[board.vul] == record["vulnerability"]
        assert endplay_hands(board.deal) == [sorted(h) for h in record["hands"]]
        assert [endplay_call(b) for b in board.auction] == record["calls"]
        assert [endplay_card(c) for c in board.play] == flat_play(record)
        assert [board.info[seat] for seat in ("North", "East", "South", "West")] == NAMES
        contract = board.contract
        if record["contract"] == "Pass":
            assert contract.is_passout()
            continue
        penalty = {Penalty.passed: "", Penalty.doubled: "X", Penalty.redoubled: "XX"}[contract.penalty]
        assert f"{contract.level}{STRAIN_OF[contract.denom]}{penalty}" == record["contract"]
        assert int(contract.declarer) == record["declarer"]
        assert contract.level + 6 + contract.result == record["tricks"]  # the Result tag: declarer's tricks
        assert board.info["Score"] == f"NS {record['score']}"


def test_lin_we_write_endplay_reads_to_the_same_boards():
    text = files.export_lin(RECORDS, NAMES)
    read = endplay_lin.loads(text)
    assert len(read) == len(RECORDS) == len(text.splitlines())
    for board, record in zip(read, RECORDS):
        assert board.board_num == record["board"]
        assert int(board.dealer) == record["dealer"]
        assert VUL_OF[board.vul] == record["vulnerability"]
        assert endplay_hands(board.deal) == [sorted(h) for h in record["hands"]]
        assert [endplay_call(b) for b in board.auction] == record["calls"]
        assert [endplay_card(c) for c in board.play] == flat_play(record)
        assert [board.info[seat] for seat in ("North", "East", "South", "West")] == NAMES
        # LIN has no result (endplay computes one from the play its own way): ours, from the
        # replay of the same file, is the record's
    for board, record in zip(files.read_lin(text), RECORDS):
        assert (board["contract"], board["declarer"], board["tricks"]) == (record["contract"], record["declarer"], record["tricks"])


def endplay_board(record: dict) -> Board:
    """A board record built as endplay's own Board, to be written by endplay's writers."""
    deal = Deal(files.pbn_deal(record["hands"], 0))
    auction = [Bid({"P": "pass", "X": "x", "XX": "xx"}.get(c, c)) for c in record["calls"]]
    play = [Card(c) for c in flat_play(record)]
    vul = {v: k for k, v in VUL_OF.items()}[record["vulnerability"]]
    if record["declarer"] is None:
        contract = Contract("Pass")
    else:
        contract = Contract(record["contract"])
        contract.declarer = Player(record["declarer"])
        contract.result = record["tricks"] - 6 - contract.level
    return Board(deal, auction, play, record["board"], vul=vul, dealer=Player(record["dealer"]), contract=contract,
                 North=NAMES[0], East=NAMES[1], South=NAMES[2], West=NAMES[3])


def assert_same_boards(read: list[dict], records: list[dict]) -> None:
    assert len(read) == len(records)
    for board, record in zip(read, records):
        assert board["board"] == board["engine_board"] == record["board"]
        assert (board["dealer"], board["vulnerability"]) == (record["dealer"], record["vulnerability"])
        assert board["hands"] == record["hands"]
        assert board["calls"] == record["calls"]
        assert board["play"] == flat_play(record)
        assert (board["contract"], board["declarer"], board["tricks"]) == (record["contract"], record["declarer"], record["tricks"])
        assert board["complete"] and board["names"] == NAMES


def test_pbn_endplay_writes_we_import():
    text = endplay_pbn.dumps([endplay_board(r) for r in RECORDS])
    assert '[Vulnerable "All"]' in text  # endplay's own spelling, not ours copied
    assert_same_boards(files.read_boards(text), RECORDS)


def test_lin_endplay_writes_we_import():
    text = endplay_lin.dumps([endplay_board(r) for r in RECORDS])
    assert text.count("pn|") == len(RECORDS) and ",|" in text  # BBO's style: the fourth hand left out
    assert_same_boards(files.read_boards(text), RECORDS)


def test_our_own_round_trips_and_the_match_they_import_into_scores_the_same():
    for text in (files.export_pbn(RECORDS, NAMES), files.export_lin(RECORDS, NAMES)):
        boards = files.read_boards(text)
        assert_same_boards(boards, RECORDS)
        imported = files.match_import(boards)
        state = rules.new_state(imported["config"], 0)
        for seat, action in imported["steps"]:
            state.apply({seat: action})
        assert state.is_terminal()
        assert [(r["contract"], r["result"], r["score"]) for r in state.board_records()] == \
            [(r["contract"], r["result"], r["score"]) for r in RECORDS]
        assert imported["names"] == NAMES


def test_pbn_play_section_lists_cards_by_column_from_the_opening_leader():
    record = next(r for r in RECORDS if r["declarer"] is not None)
    text = files.export_pbn([record])
    lines = text.split("\r\n")
    start = lines.index(f'[Play "{rules.SEAT_LETTERS[rules.NEXT[record["declarer"]]]}"]')
    rows = lines[start + 1:start + 14]
    leader = rules.NEXT[record["declarer"]]
    for row, trick in zip(rows, record["play"]):
        by_seat = {(trick["first"] + i) % 4: c for i, c in enumerate(trick["cards"])}
        assert row.split() == [by_seat[(leader + i) % 4] for i in range(4)]
    assert f'[Deal "{rules.SEAT_LETTERS[record["dealer"]]}:' in text  # the dealer's hand first


def test_pbn_text_is_latin_1_and_names_are_escaped():
    text = files.export_pbn(RECORDS[:1], ['Zoë "Z"', "back\\slash", "Łukasz", "李"])
    text.encode(files.PBN_ENCODING)  # nothing outside ISO 8859-1
    assert '[North "Zoë \\"Z\\""]' in text and '[East "back\\\\slash"]' in text
    assert '[South "Lukasz"]' not in text and '[South "?ukasz"]' in text and '[West "?"]' in text
    assert files.read_pbn(text)[0]["names"][:2] == ['Zoë "Z"', "back\\slash"]
    assert files.read_boards("\ufeff" + text)[0]["hands"] == RECORDS[0]["hands"]
    assert files.decode(text.encode(files.PBN_ENCODING)) == text  # Latin-1 bytes decode
    assert files.decode(b"\xef\xbb\xbf[Board \"1\"]") == '[Board "1"]'


def test_lin_names_lose_separators_and_handviewer_link_carries_the_board():
    record = RECORDS[1]
    line = files.lin_board(record, ["a|b", "c,d", "e", "f"])
    assert line.startswith("pn|e,f,a b,c d|st||md|")
    url = files.handviewer_url(record, NAMES)
    assert url.startswith("https://www.bridgebase.com/tools/handviewer.html?lin=pn|Cyd,Dee,Ann,Bob|")
    assert " " not in url and unquote(url.split("?lin=", 1)[1]) == files.lin_board(record, NAMES)


# --- files in the tools' own styles ----------------------------------------------------------
TOOL_PBN = """% PBN 2.1
% Creator: a hand-written test file
[Event "Club pairs"]
[Site "?"]
[Date "2026.11.20"]
[Board "5"]
[West "W1"] ; a comment after a tag
[North "N1"]
[East "E1"]
[South "S1"]
[Dealer "N"]
[Vulnerable "NS"]
[Deal "E:QJ4.Q97.KT76.743 K8652.J3.A93.AJ9 AT93.AKT6.Q5.T62 7.8542.J842.KQ85"]
[Scoring "MP"]
[Declarer "W"]
[Contract "4S"]
[Result "10"]
{ a comment
  over two lines }
[Auction "N"]
Pass Pass Pass 1S! =1=
Pass 4S AP
[Note "1:five or more spades"]
[Play "N"]
H2 HQ H3 HA
S7 $1 SQ SK S3
*

[Event "#"]
[Board "6"]
[Dealer "E"]
[Vulnerable "EW"]
[Deal "N:7.8542.J842.KQ85 QJ4.Q97.KT76.743 K8652.J3.A93.AJ9 -"]
[Contract "3NT"]
[Declarer "S"]
[Result "8"]
"""


def test_a_pbn_in_the_tools_style_imports():
    five, six = files.read_pbn(TOOL_PBN)
    assert (five["board"], five["dealer"], five["vulnerability"]) == (5, 0, "NS")
    assert five["hands"][1] == ["SQ", "SJ", "S4", "HQ", "H9", "H7", "DK", "DT", "D7", "D6", "C7", "C4", "C3"]
    assert five["calls"] == ["P", "P", "P", "1S", "P", "4S", "P", "P", "P"]
    assert (five["contract"], five["declarer"]) == ("4S", 3)
    # rows are by column from North, the opening leader; West's HA won trick 1, so trick 2
    # was played from West: S3, S7, SQ, SK
    assert five["play"] == ["H2", "HQ", "H3", "HA", "S3", "S7", "SQ", "SK"]
    assert five["tricks"] == 10 and not five["complete"]  # claimed after two tricks
    assert five["names"] == ["N1", "E1", "S1", "W1"] and five["event"] == "Club pairs" and five["site"] == ""
    assert six["event"] == "Club pairs"  # "#": the previous game's value
    assert six["hands"][3] == ["SA", "ST", "S9", "S3", "HA", "HK", "HT", "H6", "DQ", "D5", "CT", "C6", "C2"]
    assert (six["contract"], six["declarer"], six["tricks"], six["calls"]) == ("3NT", 2, 8, [])
    assert not six["complete"]
    with pytest.raises(ValueError, match="board 5 was not played to the end"):
        files.match_import([five])


def test_a_board_whose_dealer_or_vulnerability_differs_from_its_number_replays_as_one_that_has_them():
    text = TOOL_PBN.replace('[Vulnerable "NS"]', '[Vulnerable "All"]')
    five = files.read_pbn(text)[0]
    assert five["board"] == 5 and five["engine_board"] == 13  # board 13: North deals, both vulnerable
    state = files.replay(five)
    assert (state.dealer, state.vulnerability) == (0, "Both")


BBO_LIN = ("pn|south1,west1,north1,east1|st||md|3SK8652HJ3DA93CAJ9,SAT93HAKT6DQ5CT62,S7H8542DJ842CKQ85,|"
           "rh||ah|Board 5|sv|n|mb|p|mb|p|mb|p|mb|1S!|an|5+ spades|mb|p|mb|4s|mb|p|mb|p|mb|P|pg||"
           "pc|H2|pc|HQ|pc|H3|pc|HA|pg||\npc|s3|pc|S7|pc|SQ|pc|SK|pg||mc|10|\n")
VUGRAPH_LIN = ("vg|Final,Segment 1,I,1,2,Team A,0,Team B,0|\n"
               "pn|oS,oW,oN,oE,cS,cW,cN,cE|pg||\n"
               "qx|o1|md|1SAKQHAKQDAKQCAKQJ,S5432H5432D5432C2,SJT9HJT9DJT9CT987,|sv|o|mb|7N|mb|p|mb|p|mb|p|pg||\n"
               "qx|c1|md|1SAKQHAKQDAKQCAKQJ,S5432H5432D5432C2,SJT9HJT9DJT9CT987,|sv|o|mb|p|mb|p|mb|p|mb|p|pg||\n")


def test_a_lin_in_bbos_style_imports():
    (five,) = files.read_lin(BBO_LIN)
    assert (five["board"], five["dealer"], five["vulnerability"]) == (5, 0, "NS")
    assert five["hands"][1] == ["SQ", "SJ", "S4", "HQ", "H9", "H7", "DK", "DT", "D7", "D6", "C7", "C4", "C3"]  # completed
    assert five["calls"] == ["P", "P", "P", "1S", "P", "4S", "P", "P", "P"]
    assert five["play"] == ["H2", "HQ", "H3", "HA", "S3", "S7", "SQ", "SK"]
    assert (five["contract"], five["declarer"], five["tricks"], five["complete"]) == ("4S", 3, 10, False)
    assert five["names"] == ["north1", "east1", "south1", "west1"]
    open_room, closed_room = files.read_boards(VUGRAPH_LIN)
    assert open_room["names"] == ["oN", "oE", "oS", "oW"] and closed_room["names"] == ["cN", "cE", "cS", "cW"]
    assert (open_room["contract"], open_room["declarer"], open_room["complete"]) == ("7NT", 2, False)
    assert (closed_room["contract"], closed_room["complete"]) == ("Pass", True)


# --- refusals ------------------------------------------------------------------------------
ONE_DEAL = '[Deal "N:7.8542.J842.KQ85 QJ4.Q97.KT76.743 K8652.J3.A93.AJ9 AT93.AKT6.Q5.T62"]\n'


@pytest.mark.parametrize("text, message", [
    ("", "the file is empty"),
    ("x" * (files.MAX_FILE_CHARS + 1), "more than 2,000,000 characters"),
    ("[Event \"" + "x" * files.MAX_LINE_CHARS + "\"]\n" + ONE_DEAL, "line 1 is longer than 20,000"),
    ("\n".join([ONE_DEAL] * (files.MAX_BOARDS + 1)), "more than 1000 boards"),
    ("hello world\n", "line 1: expected a tag"),
    ("[Event \"x\"]\n", "no Deal tag"),
    ("{ never closed\n" + ONE_DEAL, "no board"),
    (ONE_DEAL.replace("KQ85 ", "KQ8S "), "'S' is not a rank"),
    (ONE_DEAL.replace("AT93", "AK93"), "the deal is wrong: the four hands must hold each of the 52 cards once"),
    (ONE_DEAL.replace("AT93", "AKK3"), "the deal is wrong: card SK appears twice"),
    ('[Board "0"]\n' + ONE_DEAL, "Board must be a number from 1 to 100000"),
    ('[Vulnerable "Some"]\n' + ONE_DEAL, "Vulnerable must be None, NS, EW or All"),
    (ONE_DEAL + '[Auction "N"]\n1S 1H\n', "insufficient bid: 1H does not beat 1S"),
    ('[Dealer "N"]\n' + ONE_DEAL + '[Auction "E"]\nPass\n', "the auction must start with the dealer"),
    (ONE_DEAL + '[Contract "4S"]\n[Auction "N"]\n1S AP\n', "the Contract says 4S but the auction ends in 1S"),
    (ONE_DEAL + '[Result "14"]\n', "Result must be declarer's tricks, 0 to 13"),
    (ONE_DEAL + '[Result "13"]\n[Auction "N"]\n1S AP\n[Play "E"]\nH7 H3 HA H2\n',
     "the result says 13 tricks, impossible after the tricks played"),
    (ONE_DEAL + '[Auction "N"]\n1S AP\n[Play "S"]\nH7 H3 HA H2\n', "the Play tag names South but East leads"),
    (ONE_DEAL + '[Auction "N"]\n1S AP\n[Play "E"]\nH7 D3 HA H2\n', "follow suit: H was led"),
    (ONE_DEAL + '[Auction "N"]\n1S AP\n[Play "E"]\nSA H3 HA H2\n', "not hold SA"),
    ("pn|a,b,c,d|md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,|", "at least three hands"),
    ("md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,SKQ4HQ97DKT76C74X,|", "'X' in the hand"),
    ("md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,SKQ4HQ97DKT76C743,|sv|q|", "sv must be o, n, e or b"),
    ("md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,SKQ4HQ97DKT76C743,|mb|1S|mb|1C|", "insufficient bid"),
    ("md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,SKQ4HQ97DKT76C743,|mb|1S|mb|p|mb|p|mb|p|" + "pc|H2|" * 53,
     "more cards than a board can have"),
    ("md|3S7H8542DJ842CKQ85,SAJT93HAKT6DQ5CT2,SKQ4HQ97DKT76C743,|mb|1S|mb|p|mb|p|mb|p|mc|14|",
     r"mc \(a claim\) must be declarer's tricks"),
    ("pn|a,b,c,d|st||", "no board"),
])
def test_malformed_and_hostile_files_are_refused_with_the_reason(text, message):
    with pytest.raises(ValueError, match=message):
        files.read_boards(text)


def test_a_result_the_play_contradicts_is_refused():
    record = next(r for r in RECORDS[3:] if r["declarer"] is not None)
    text = files.export_pbn([record])
    tricks = record["tricks"]
    wrong = text.replace(f'[Result "{tricks}"]', f'[Result "{(tricks + 1) % 14}"]')
    with pytest.raises(ValueError, match=f"the result says {(tricks + 1) % 14} tricks but the play gives declarer {tricks}"):
        files.read_pbn(wrong)
