"""Scripted Blue Chip table-manager clients for tests: they read the server's lines as the
robots do (issue 24, "Tests and benchmarks"; games/bridge/bluechip.py).

The ``ben_*`` functions re-state, in our own code, how BEN's ``src/table_manager_client.py``
(github.com/lorserker/ben) reads and writes each line: the teams regex and its unpacking of
the first match (no match: it crashes), the deal line's board-number and dealer/vulnerability
regexes (case-sensitive; the dealer's first letter looked up in "NESW"; the vulnerability
asserted to be Neither, N/S, E/W or Both), the hand taken between the first ``:`` and the
last ``.`` with spaces, ``-`` and suit letters dropped, the seat asserted as the first word of
another's call or card, the card read as the last word reversed, a call's second word (or
third, for ``bids``) with an ``Alert.``/``Infos.`` word and the explanation after it.  A line
BEN would crash on raises here (``IndexError``, ``AssertionError``, ``ValueError``).

:class:`BenClient` follows BEN's sequence exactly: what it sends when, and how many lines it
reads (one "to lead" line when on lead, one line after the auction of a passed-out board or
after trick 13).  :class:`WBridge5Client` writes as WBridge5 does: ``as ANYPL`` (the seat comes
from the ``seated`` answer) and its lines upper case with doubled spaces.  Both are blocking
clients over a real socket; the calls and cards come from callbacks.
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from typing import Callable

SEATS = ["North", "East", "South", "West"]

# BEN: the team names in quotes, then optionally "Playing IMP" or "Playing MP".
_BEN_TEAMS = re.compile('N/S : "([^"]+)" E/W : "([^"]+)"(?:.*?Playing (\\w+))?')
_BEN_BOARD = re.compile(r"Board number (\d+)\.")
# BEN: the dealer is the shortest run of letters before ". ", the vulnerability what follows
# up to " vulnerable"; searched, case-sensitively.
_BEN_DEALER_VULN = re.compile(r"(?P<dealer>[a-zA-Z]+?)\.\s(?P<vuln>.+?)\svulnerable")


def ben_line(raw: bytes) -> str:
    """A line as BEN's ``receive_line`` keeps it: decoded, every CR and LF removed."""
    return raw.decode().replace("\r", "").replace("\n", "")


def ben_teams(line: str) -> tuple[str, str, str]:
    """(N/S team, E/W team, "IMP"/"MP"/"") as BEN unpacks its teams regex's first match."""
    ns, ew, scoring = _BEN_TEAMS.findall(line)[0]
    return ns, ew, scoring


def ben_deal(line: str) -> tuple[int, int, bool, bool]:
    """(board number, dealer 0-3, N/S vulnerable, E/W vulnerable) from the deal line."""
    if "number" not in line:
        raise ValueError(f"expecting board number: {line!r}")
    board = int(_BEN_BOARD.search(line).group(1))
    m = _BEN_DEALER_VULN.search(line)
    dealer = "NESW".index(m.group("dealer")[0])
    vuln = m.group("vuln")
    assert vuln in {"Neither", "N/S", "E/W", "Both"}, vuln
    return board, dealer, vuln in ("N/S", "Both"), vuln in ("E/W", "Both")


def ben_hand(line: str) -> str:
    """A hand line in BEN's form: suits spades to clubs separated by ``.``, e.g.
    ``AT43..KT.KT6`` (what lies between the first ``:`` and the last ``.``)."""
    text = line[line.index(":") + 1:line.rindex(".")]
    for drop in (" ", "-", "S", "H", "D", "C"):
        text = text.replace(drop, "")
    return text


def ben_bid(line: str, seat: int) -> tuple[str, bool, str | None]:
    """(call, alerted, explanation) of another seat's call: calls as BEN names them (``1N``,
    ``PASS``, ``X``, ``XX``).  Asserts that the line names ``seat`` first, capitalised."""
    parts = line.strip().split()
    assert parts[0] == SEATS[seat], f"expected a call of {SEATS[seat]}: {line!r}"
    if parts[1].upper() in ("PASSES", "DOUBLES", "REDOUBLES"):
        bid = parts[1].upper()
    else:
        bid = parts[2].rstrip(".").upper().replace("NT", "N")
    explanation, alert = None, False
    for word in ("Alert.", "Infos."):
        if word in parts:
            explanation = " ".join(parts[parts.index(word) + 1:])
            alert = word == "Alert."
            break
    return {"PASSES": "PASS", "DOUBLES": "X", "REDOUBLES": "XX"}.get(bid, bid), alert, explanation


def ben_card(line: str, seat: int) -> str:
    """Another seat's card as BEN reads it: suit then rank (``H7``); asserts the seat."""
    parts = line.strip().split()
    assert parts[0] == SEATS[seat], f"expected a card of {SEATS[seat]}: {line!r}"
    return parts[-1][::-1].upper()


def ben_call_text(seat: int, call: str, explanation: str = "", alert: bool = False) -> str:
    """A call as BEN sends it (``North bids 1NT``, ``passes``, ``doubles``, ``redoubles``,
    then `` Alert. text`` or `` Infos. text``); ``call`` in the rules' names."""
    words = {"P": "passes", "X": "doubles", "XX": "redoubles"}
    text = f"{SEATS[seat]} {words[call]}" if call in words else f"{SEATS[seat]} bids {call}"
    if explanation:
        text += (" Alert. " if alert else " Infos. ") + explanation
    return text


def ben_card_text(seat: int, card: str) -> str:
    """A card as BEN sends it: ``North plays KH`` (rank first); ``card`` suit first."""
    return f"{SEATS[seat]} plays {card[::-1]}"


def ben_call_name(call: str) -> str:
    """BEN's name of a call (``1N``, ``PASS``) as the rules name it (``1NT``, ``P``)."""
    return {"PASS": "P"}.get(call, call[:1] + "NT" if call.endswith("N") else call)


def hand_cards(ben: str) -> list[str]:
    """A BEN hand (``AT43..KT.KT6``) as the rules' card names."""
    return [suit + rank for suit, ranks in zip("SHDC", ben.split(".")) for rank in ranks]


# --- choosing ---------------------------------------------------------------------------------
def legal_cards(hand: list[str], trick: list[str]) -> list[str]:
    """The cards of ``hand`` (rules' names) that may go on ``trick`` (its cards so far)."""
    if trick:
        follow = [c for c in hand if c[0] == trick[0][0]]
        if follow:
            return follow
    return list(hand)


def _winner(trick: list[tuple[int, str]], strain: str) -> int:
    order = "23456789TJQKA"
    led = trick[0][1][0]

    def power(card: str) -> int:
        return (100 if card[0] == strain else 0 if card[0] == led else -100) + order.index(card[1])
    return max(trick, key=lambda sc: power(sc[1]))[0]


@dataclass
class BoardSeen:
    """One board as a client read it."""

    number: int = 0
    dealer: int = -1
    vulnerable: tuple[bool, bool] = (False, False)
    hand: str = ""  # BEN's form
    dummy: str = ""  # BEN's form, "" if not seen (dummy itself, a passed-out board)
    calls: list[str] = field(default_factory=list)  # the rules' names
    explanations: dict[int, tuple[bool, str]] = field(default_factory=dict)
    declarer: int | None = None
    play: list[tuple[int, str]] = field(default_factory=list)  # (seat, card) in play order
    to_lead: list[str] = field(default_factory=list)  # the "to lead" lines received
    timing: str = ""


ChooseCall = Callable[["BenClient", BoardSeen], "str | tuple[str, str, bool]"]
ChooseCard = Callable[["BenClient", BoardSeen, int, list[str]], str]


class BenClient:
    """A blocking client that sends and reads exactly as BEN does (module docstring).

    ``choose_call(client, board)`` returns the rules' call name, or ``(call, explanation,
    alert)``; ``choose_card(client, board, hand seat, legal cards)`` returns a card name.
    ``sock``: an already connected socket (tests use ``socket.socketpair``), else
    :meth:`connect` opens one to ``address``.
    """

    def __init__(self, team: str, seat: int | None, choose_call: ChooseCall, choose_card: ChooseCard,
                 sock: socket.socket | None = None, timeout: float = 10.0):
        self.team = team
        self.seat = seat
        self.choose_call = choose_call
        self.choose_card = choose_card
        self.sock = sock
        self.timeout = timeout
        self._buffer = b""
        self.received: list[str] = []
        self.sent: list[str] = []
        self.teams: tuple[str, str, str] | None = None
        self.boards: list[BoardSeen] = []
        self.ended = False

    # --- the wire ------------------------------------------------------------------------------
    def connect(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=self.timeout)
        # BEN talks through asyncio's streams, which switch Nagle's algorithm off; two lines
        # written in a row would otherwise wait for the server's delayed ACK (about 40 ms).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, text: str) -> None:
        self.sent.append(text)
        self.sock.sendall((text + "\r\n").encode())

    def read_line(self) -> str:
        self.sock.settimeout(self.timeout)
        while b"\n" not in self._buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the table manager closed the connection")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\n", 1)
        line = ben_line(raw)
        self.received.append(line)
        if line == "End of session":
            self.ended = True
        return line

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()

    # --- what BEN writes ---------------------------------------------------------------------
    def connect_text(self) -> str:
        return f'Connecting "{self.team}" as {SEATS[self.seat]} using protocol version 18'

    def ready_text(self, what: str) -> str:
        return f"{SEATS[self.seat]} {what}"

    def ready_bid_text(self, of: int) -> str:
        return f"{SEATS[self.seat]} ready for {SEATS[of]}'s bid"

    def ready_card_text(self, of: int, dummy: bool, trick: int) -> str:
        return f"{SEATS[self.seat]} ready for {'dummy' if dummy else SEATS[of]}'s card to trick {trick}"

    def call_text(self, call: str, explanation: str, alert: bool) -> str:
        return ben_call_text(self.seat, call, explanation, alert)

    def card_text(self, seat: int, card: str) -> str:
        return ben_card_text(seat, card)

    def take_seat(self, seated: str) -> None:
        """The ``seated`` answer (BEN reads and ignores it)."""

    # --- BEN's sequence --------------------------------------------------------------------
    def join(self) -> None:
        """Connect, read the seated line, ask for the teams and read them, say ready to start."""
        self.send(self.connect_text())
        self.take_seat(self.read_line())
        self.send(self.ready_text("ready for teams"))
        self.teams = ben_teams(self.read_line())
        self.send(self.ready_text("ready to start"))

    def play_session(self) -> None:
        """Boards until ``End of session``."""
        while True:
            line = self.read_line()
            while line.lower() != "start of board":
                if self.ended:
                    return
                self.send(self.ready_text("ready to start"))
                line = self.read_line()
            self.play_board()

    def play_board(self) -> BoardSeen:
        """One board, after ``Start of board`` was read."""
        board = BoardSeen()
        self.boards.append(board)
        self.send(self.ready_text("ready for deal"))
        deal = self.read_line()
        board.number, board.dealer, ns, ew = ben_deal(deal)
        board.vulnerable = (ns, ew)
        self.send(self.ready_text("ready for cards"))
        board.hand = ben_hand(self.read_line())
        self._auction(board)
        if board.declarer is None:
            board.timing = self.read_line()  # BEN reads one line after a passed-out auction
            return board
        self._play(board)
        board.timing = self.read_line()  # and one after trick 13
        return board

    def _auction(self, board: BoardSeen) -> None:
        caller = board.dealer
        while not _auction_over(board.calls):
            if caller == self.seat:
                choice = self.choose_call(self, board)
                call, explanation, alert = (choice, "", False) if isinstance(choice, str) else choice
                board.calls.append(call)
                self.send(self.call_text(call, explanation, alert))
            else:
                self.send(self.ready_bid_text(caller))
                call, alert, explanation = ben_bid(self.read_line(), caller)
                if explanation is not None:
                    board.explanations[len(board.calls)] = (alert, explanation)
                board.calls.append(ben_call_name(call))
            caller = (caller + 1) % 4
        board.declarer = _declarer(board.calls, board.dealer)

    def _play(self, board: BoardSeen) -> None:
        declarer = board.declarer
        dummy = (declarer + 2) % 4
        leader = (declarer + 1) % 4
        strain = [c for c in board.calls if c not in ("P", "X", "XX")][-1][1]  # "N": no trumps
        mine = hand_cards(board.hand)
        dummy_cards: list[str] = []
        # the opening lead: the leader reads its "to lead" line, the others ask for the card
        if self.seat == leader:
            board.to_lead.append(self.read_line())
            card = self.choose_card(self, board, leader, legal_cards(mine, []))
            mine.remove(card)
            self.send(self.card_text(leader, card))
        else:
            self.send(self.ready_card_text(leader, False, 1))
            card = ben_card(self.read_line(), leader)
        board.play.append((leader, card))
        if self.seat != dummy:
            self.send(self.ready_text("ready for dummy"))
            board.dummy = ben_hand(self.read_line())
            dummy_cards = hand_cards(board.dummy)
        else:
            dummy_cards = mine
        trick = [(leader, card)]
        hand = (leader + 1) % 4
        while len(board.play) < 52:
            number = len(board.play) // 4 + 1
            controls = (hand == self.seat and self.seat != dummy) or (hand == dummy and self.seat == declarer)
            if controls:
                cards = dummy_cards if hand == dummy else mine
                card = self.choose_card(self, board, hand, legal_cards(cards, [c for _, c in trick]))
                cards.remove(card)
                self.send(self.card_text(hand, card))
            else:
                self.send(self.ready_card_text(hand, hand == dummy, number))
                card = ben_card(self.read_line(), hand)
                if hand == dummy and dummy_cards is not mine:
                    dummy_cards.remove(card)
            board.play.append((hand, card))
            trick.append((hand, card))
            if len(trick) < 4:
                hand = (hand + 1) % 4
                continue
            hand = _winner(trick, strain)
            trick = []
            if len(board.play) == 52:
                break
            # BEN: the winner's client reads "<seat> to lead", declarer's "Dummy to lead"
            if (hand == dummy and self.seat == declarer) or (hand == self.seat and self.seat != dummy):
                board.to_lead.append(self.read_line())


class WBridge5Client(BenClient):
    """Writes as WBridge5 does: ``as ANYPL`` (the seat is read from the ``seated`` answer),
    seat names and verbs upper case, doubled spaces (notes, "What robots' own parsers
    require"); reads as :class:`BenClient`."""

    def connect_text(self) -> str:
        return f'Connecting "{self.team}" as ANYPL using protocol version 18'

    def take_seat(self, seated: str) -> None:
        self.seat = SEATS.index(seated.split()[0])

    def ready_text(self, what: str) -> str:
        return f"{SEATS[self.seat].upper()}  {what}"

    def ready_bid_text(self, of: int) -> str:
        return f"{SEATS[self.seat].upper()} ready for  {SEATS[of].upper()}'s bid"

    def ready_card_text(self, of: int, dummy: bool, trick: int) -> str:
        whose = "dummy" if dummy else SEATS[of].upper()
        return f"{SEATS[self.seat].upper()} ready for  {whose}'s card to trick  {trick}"

    def call_text(self, call: str, explanation: str, alert: bool) -> str:
        return ben_call_text(self.seat, call).upper().replace(" ", "  ")

    def card_text(self, seat: int, card: str) -> str:
        return ben_card_text(seat, card).upper()


def _auction_over(calls: list[str]) -> bool:
    if calls == ["P"] * 4:
        return True
    return len(calls) >= 4 and calls[-3:] == ["P"] * 3


def _declarer(calls: list[str], dealer: int) -> int | None:
    bids = [(i, c) for i, c in enumerate(calls) if c not in ("P", "X", "XX")]
    if not bids:
        return None
    side = (dealer + bids[-1][0]) & 1
    strain = bids[-1][1][1:]
    return next((dealer + i) % 4 for i, c in bids if (dealer + i) & 1 == side and c[1:] == strain)
