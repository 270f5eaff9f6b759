"""The Blue Chip Bridge table-manager protocol, version 18: the wire codec of the second bridge
listener (issue 24, "The Blue Chip table manager"; ../shared/specs/bridge-text.notes.md,
"The protocol real bridge robots speak" and "What robots' own parsers require").

Pure, like every codec (docs/architecture.md, "Layers"): no Django, no I/O.  Three parts:

1. **Server lines**, one function each, formatted exactly as the robots' parsers need them
   (BEN's ``table_manager_client.py`` reads the deal line and the others' calls and cards
   case-sensitively; see the notes' "What robots' own parsers require").  Lines are ``str``
   without the line end; :func:`encode` adds CRLF.
2. **Client lines**: :func:`parse_client_line` reads any line a robot may send (CRLF or LF, any
   case, doubled spaces as WBridge5 writes them, ``as ANYPL``, protocol 18 or 19 with text
   after it, `` Alert. text`` / `` Infos. text`` after a call) into a :class:`ClientLine`, and
   raises :class:`games.base.ProtocolError` for anything else.
3. **One connection's conversation**, :class:`Connection`: a sans-I/O state machine.  A
   transport feeds it the robot's lines (:meth:`Connection.feed`) and the table's progress
   (:meth:`Connection.observe`, the seat's observation and the step's happenings after every
   step), and writes out the lines it returns; :attr:`Connection.pauses` says whether to pause
   before each line (version 18).

The conversation of one seat (notes, steps 1-5)::

    robot                                           table manager
    Connecting "TEAM" as North using protocol version 18
                                                    North ("TEAM") seated
    North ready for teams                           (once four are seated)
                                                    Teams : N/S : "A" E/W : "B"
    North ready to start                            Start of board
    North ready for deal                            Board number 1. Dealer North. Neither vulnerable.
    North ready for cards                           North's cards : S A T 4 3. H -. D K T. C K T 6.
    North bids 1NT                                  (its own call: no answer)
    North ready for East's bid                      East passes
    ...                                             East to lead        (only to the player on lead)
    North ready for East's card to trick 1          East plays 5H
    North ready for dummy                           Dummy's cards : S ... (every non-dummy that asks)
    North plays 2H / South plays 7H                 (declarer plays dummy's cards under dummy's seat)
    North ready for dummy's card to trick 2         South plays 7H (dummy's real seat, to every asker)
    ...                                             Timing - N/S : this board 01:02, total 0:01:02.  E/W : ...
                                                    Start of board ... or End of session

A request the table cannot answer yet (the call is not made) waits in the connection and is
answered by the :meth:`Connection.observe` that brings it.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from games.base import ProtocolError
from games.bridge.rules import (
    CARD_INDEX, NEXT, PARTNER, POWER, SEAT_NAMES, SUIT_OF, mask_to_names, names_to_mask,
    parse_call, parse_card,
)

#: Longest line accepted from a robot (characters, the line end excluded): room for a call
#: with a long explanation, none for a flood.
MAX_LINE = 600
#: Longest explanation passed on to the opponents, and longest team name kept.
MAX_EXPLANATION = 400
MAX_TEAM = 40
#: The protocol versions spoken; version 18 robots need a pause before each line (notes).
VERSIONS = (18, 19)

_VULNERABLE_WORDS = {"None": "Neither", "NS": "N/S", "EW": "E/W", "Both": "Both"}
_SUIT_ORDER = "SHDC"  # the order hands are written in
_CALL_VERBS = {"P": "passes", "X": "doubles", "XX": "redoubles"}


# --- server lines ---------------------------------------------------------------------------
def encode(line: str) -> bytes:
    """A server line on the wire: CRLF-terminated (notes: "ASCII lines ending in CRLF").  Team
    names and explanations may hold other characters: those go out as UTF-8."""
    return (line + "\r\n").encode("utf-8")


def seated_line(seat: int, team: str) -> str:
    """``North ("TEAM") seated``: the answer to ``Connecting`` (notes, step 1)."""
    return f'{SEAT_NAMES[seat]} ("{_check_team(team)}") seated'


def teams_line(ns_team: str, ew_team: str, scoring: str | None = None) -> str:
    """``Teams : N/S : "A" E/W : "B"``, optionally followed by `` Playing IMP`` or
    `` Playing MP``: the only form BEN's teams regex reads; other spacings, or an empty name,
    make it crash (notes, "What robots' own parsers require")."""
    if scoring not in (None, "IMP", "MP"):
        raise ValueError(f"scoring must be IMP, MP or None, got {scoring!r}")
    line = f'Teams : N/S : "{_check_team(ns_team)}" E/W : "{_check_team(ew_team)}"'
    return line + (f" Playing {scoring}" if scoring else "")


START_OF_BOARD = "Start of board"
END_OF_SESSION = "End of session"


def board_line(board: int, dealer: int, vulnerability: str) -> str:
    """``Board number 1. Dealer North. Neither vulnerable.`` from the rules' board number,
    dealer seat and vulnerability name (``None``/``NS``/``EW``/``Both``).  BEN reads it
    case-sensitively: lower-case "number", the dealer capitalised, the vulnerability exactly
    Neither, N/S, E/W or Both (notes)."""
    return f"Board number {board}. Dealer {SEAT_NAMES[dealer]}. {_VULNERABLE_WORDS[vulnerability]} vulnerable."


def hand_text(cards: Iterable[str]) -> str:
    """Cards (rules' names, any order) as the protocol writes a hand: ``S A T 4 3. H -. D K T.
    C K T 6.``: spades to clubs, ranks high to low, T for ten, ``-`` for a void, a full stop
    after every suit (BEN keeps only what comes before the last full stop: without the last
    one it loses the clubs)."""
    names = mask_to_names(names_to_mask(cards))  # spades first, each suit high to low
    parts = []
    for suit in _SUIT_ORDER:
        ranks = [n[1] for n in names if n[0] == suit]
        parts.append(f"{suit} {' '.join(ranks) if ranks else '-'}.")
    return " ".join(parts)


def cards_line(seat: int, cards: Iterable[str]) -> str:
    """``North's cards : S A T 4 3. H -. D K T. C K T 6.``: a seat's hand, to that seat only
    (notes, step 2)."""
    return f"{SEAT_NAMES[seat]}'s cards : {hand_text(cards)}"


def dummy_line(cards: Iterable[str]) -> str:
    """``Dummy's cards : S A Q T 8 2. H K 7. D K 5 2. C A 7 6.``: dummy's hand after the
    opening lead, to each seat that asks ``ready for dummy`` (notes, step 4)."""
    return f"Dummy's cards : {hand_text(cards)}"


def call_line(seat: int, call: str, explanation: str = "", alert: bool = False,
              to_partner: bool = False) -> str:
    """A call as the others receive it: ``North bids 1NT``, ``North passes``, ``North doubles``,
    ``North redoubles``, no full stop (BEN reads ``passes.`` as a bid and crashes).

    An explanation goes to the bidder's opponents only, as `` Alert. text`` (an alerted call)
    or `` Infos. text``; the partner (``to_partner``) gets the bare call; without text there is
    no ``Alert.`` at all: a bare one makes the next robot wait for text that never comes
    (notes, "Alerts")."""
    verb = _CALL_VERBS.get(call)
    line = f"{SEAT_NAMES[seat]} {verb}" if verb else f"{SEAT_NAMES[seat]} bids {_bid_text(call)}"
    text = _clean_text(explanation, MAX_EXPLANATION)
    if text and not to_partner:
        line += f" {'Alert' if alert else 'Infos'}. {text}"
    return line


def card_line(seat: int, card: str) -> str:
    """``South plays 7H``: rank before suit, under the seat whose hand it came from, dummy's
    real seat included (BEN asserts the seat name; never ``Dummy plays``)."""
    name = parse_card(card)
    return f"{SEAT_NAMES[seat]} plays {name[1]}{name[0]}"


def to_lead_line(seat: int, dummy: bool = False) -> str:
    """``West to lead``, or ``Dummy to lead`` (to declarer): sent only to the player on lead."""
    return "Dummy to lead" if dummy else f"{SEAT_NAMES[seat]} to lead"


def timing_line(ns_board: float, ns_total: float, ew_board: float, ew_total: float) -> str:
    """``Timing - N/S : this board 01:02, total 0:12:34.  E/W : this board 00:58, total
    0:11:02.``: each side's thinking time (seconds) on the board (mm:ss) and in the session so
    far (h:mm:ss), after every board, passed-out ones included (robots read exactly one line
    there; BEN only looks at its first word)."""
    return (f"Timing - N/S : this board {_mm_ss(ns_board)}, total {_h_mm_ss(ns_total)}.  "
            f"E/W : this board {_mm_ss(ew_board)}, total {_h_mm_ss(ew_total)}.")


def _mm_ss(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 60:02d}:{s % 60:02d}"


def _h_mm_ss(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _bid_text(call: str) -> str:
    if call[1:] not in ("C", "D", "H", "S", "NT") or call[0] not in "1234567":
        raise ValueError(f"{call!r} is not a call name (1C ... 7NT, P, X, XX)")
    return call  # the rules' names are the protocol's: 1NT, 3S


def _clean_text(text: str | None, limit: int) -> str:
    """Printable characters, spaces collapsed, at most ``limit``: what may go into a line."""
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in str(text or "")).split())
    return text[:limit]


def _check_team(team: str) -> str:
    if not isinstance(team, str) or not team or '"' in team or team != _clean_text(team, MAX_TEAM):
        raise ValueError(f"a team name must be 1-{MAX_TEAM} printable characters without quotes, got {team!r}")
    return team


def clean_team(name: str, fallback: str) -> str:
    """A team name fit for the ``seated`` and ``Teams`` lines: printable, no double quote
    (the lines quote it), at most :data:`MAX_TEAM` characters, and never empty: ``fallback``
    then (BEN crashes on ``""``)."""
    return _clean_text(str(name or "").replace('"', "'"), MAX_TEAM) or _clean_text(fallback, MAX_TEAM)


# --- client lines ---------------------------------------------------------------------------
_SEAT = r"(north|east|south|west)"
_CONNECT = re.compile(
    r'connecting "(?P<team>[^"]*)" as (?P<seat>north|east|south|west|anypl)'
    r" using protocol version (?P<version>\d{1,4})(?:\b.*)?", re.I)
_READY = re.compile(_SEAT + r" ready (?P<what>for teams|to start|for deal|for cards|for dummy)", re.I)
_READY_BID = re.compile(_SEAT + r" ready for " + _SEAT + r"'s bid", re.I)
_READY_CARD = re.compile(_SEAT + r" ready for (north|east|south|west|dummy)'s card to trick (\d{1,2})", re.I)
# A call, a full stop some table managers add, then an optional "Alert." or "Infos." and text
# (also glued on, as in "1H.Infos.C=0-8": the forms the robots' own managers read).
_CALL = re.compile(
    _SEAT + r" (?:(?P<verb>passes|doubles|redoubles)|bids (?P<bid>[1-7](?:nt|n|c|d|h|s)))\.?"
    r"(?: ?(?P<kind>alert|infos)\.(?P<text>.*))?", re.I)
_PLAY = re.compile(_SEAT + r" plays (?P<card>(?:10|[2-9tjqka])[shdc])", re.I)


@dataclass(frozen=True)
class ClientLine:
    """One line from a robot, read.  ``kind``: ``connect`` (``team``, ``seat`` or None for
    ``ANYPL``, ``version``), ``teams``, ``start``, ``deal``, ``cards``, ``dummy`` (the
    ``ready for ...`` requests), ``bid_of`` (``of``: the seat whose call it waits for),
    ``card_of`` (``of``: a seat or -1 for "dummy", ``trick`` 1-13), ``call`` (``call`` in the
    rules' names, ``alert``, ``explanation``), ``play`` (``card`` in the rules' names; ``seat``
    is the hand it names, dummy's when declarer plays for it).  ``seat`` is the sender's seat
    as written (0-3) except as said."""

    kind: str
    seat: int | None = None
    team: str = ""
    version: int = 0
    of: int | None = None
    trick: int = 0
    call: str = ""
    card: str = ""
    alert: bool = False
    explanation: str = ""


def _seat(word: str) -> int:
    return SEAT_NAMES.index(word.capitalize())


def parse_client_line(raw: str | bytes) -> ClientLine:
    """Read one robot line (notes, "Accept from robots").  Bytes are decoded as UTF-8, or
    Latin-1 if they are not; the line end (CRLF or LF) is dropped; case and runs of spaces do
    not matter (WBridge5 writes ``WEST ready for  NORTH's bid``).  Raises
    :class:`ProtocolError` naming the line if it is no protocol line, too long, or a
    ``Connecting`` with an empty team name or an unknown version."""
    if len(raw) > MAX_LINE + 2:  # + the line end
        raise ProtocolError(f"line too long ({len(raw)} characters; at most {MAX_LINE})")
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raw = bytes(raw).decode("latin-1")
    line = " ".join(raw.split())
    shown = line[:80]
    m = _CONNECT.fullmatch(line)
    if m:
        team = _clean_text(m["team"], MAX_TEAM)
        if not team:
            raise ProtocolError(f'a team name is needed between the quotes: {shown!r}')
        version = int(m["version"])
        if version not in VERSIONS:
            raise ProtocolError(f"protocol version {version} is not spoken here (18 or 19): {shown!r}")
        seat = None if m["seat"].upper() == "ANYPL" else _seat(m["seat"])
        return ClientLine("connect", seat, team=team, version=version)
    m = _READY.fullmatch(line)
    if m:
        kind = {"for teams": "teams", "to start": "start", "for deal": "deal",
                "for cards": "cards", "for dummy": "dummy"}[m["what"].lower()]
        return ClientLine(kind, _seat(m[1]))
    m = _READY_BID.fullmatch(line)
    if m:
        return ClientLine("bid_of", _seat(m[1]), of=_seat(m[2]))
    m = _READY_CARD.fullmatch(line)
    if m:
        trick = int(m[3])
        if not 1 <= trick <= 13:
            raise ProtocolError(f"there is no trick {trick} (1-13): {shown!r}")
        return ClientLine("card_of", _seat(m[1]), of=-1 if m[2].lower() == "dummy" else _seat(m[2]), trick=trick)
    m = _CALL.fullmatch(line)
    if m:
        call = parse_call(m["verb"] or m["bid"])
        text = _clean_text(m["text"], MAX_EXPLANATION) if m["kind"] else ""
        return ClientLine("call", _seat(m[1]), call=call, explanation=text,
                          alert=bool(m["kind"]) and m["kind"].lower() == "alert")
    m = _PLAY.fullmatch(line)
    if m:
        return ClientLine("play", _seat(m[1]), card=parse_card(m["card"]))
    raise ProtocolError(f"not a Blue Chip protocol line: {shown!r}")


# --- the auction and the play as a client knows them ------------------------------------------
def auction_over(calls: list[str]) -> bool:
    """Whether a sequence of calls (the rules' names, the dealer's first) is a finished
    auction: four passes, or three passes after any call once a bid was made (Law 22)."""
    if calls == ["P"] * 4:
        return True
    return len(calls) >= 4 and calls[-3:] == ["P"] * 3 and any(c not in ("P", "X", "XX") for c in calls)


def declarer_of(calls: list[str], dealer: int) -> int | None:
    """The declarer of a finished auction: the first player of the side that made the last bid
    to name its strain (Law 22); None when passed out."""
    bids = [(i, c) for i, c in enumerate(calls) if c not in ("P", "X", "XX")]
    if not bids:
        return None
    last_i, last = bids[-1]
    side = (dealer + last_i) & 1
    for i, c in bids:
        if (dealer + i) & 1 == side and c[1:] == last[1:]:
            return (dealer + i) % 4
    raise AssertionError("unreachable: the last bid names its own strain")


def _strain_of(calls: list[str]) -> int:
    last = [c for c in calls if c not in ("P", "X", "XX")][-1]
    return "CDHS".index(last[1]) if last[1:] != "NT" else 4


def next_hand(cards: list[tuple[int, str]], leader: int, strain: int) -> int:
    """The seat whose hand plays after ``cards`` ((seat, card) in play order): the opening
    leader first, the next seat clockwise within a trick, the trick's winner (Law 44) after
    its fourth card."""
    if not cards:
        return leader
    if len(cards) % 4:
        return NEXT[cards[-1][0]]
    trick = cards[-4:]
    power = POWER[strain][SUIT_OF[CARD_INDEX[trick[0][1]]]]
    return max(trick, key=lambda sc: power[CARD_INDEX[sc[1]]])[0]


# --- the table as one connection sees it --------------------------------------------------------
@dataclass
class BoardLog:
    """One board as the table played it, gathered from observations and happenings: what a
    connection answers from.  ``serial``: the board's place in the session (0, 1, ...)."""

    serial: int
    number: int
    dealer: int
    vulnerability: str
    hand: list[str]
    calls: list[str] = field(default_factory=list)
    cards: list[tuple[int, str]] = field(default_factory=list)
    dummy_hand: list[str] | None = None
    finished: bool = False
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])  # thinking time per side
    totals: list[float] = field(default_factory=lambda: [0.0, 0.0])  # session totals at its end


def board_from_observation(obs: Mapping, serial: int) -> BoardLog:
    """The board in play as far as the table has played it, from a seat's observation: the
    seat's hand as dealt (what it holds and what it played), the calls, the cards, dummy's
    hand as exposed.  A connection opened mid-board (a robot reconnecting) starts from it,
    and its robot then asks for the calls and cards again, answered at once."""
    cards = [((t["first"] + i) % 4, c) for t in obs["tricks"] for i, c in enumerate(t["cards"])]
    trick = obs["trick"]
    cards += [((trick["first"] + i) % 4, c) for i, c in enumerate(trick["cards"])]
    hand = list(obs["hand"]) + [c for s, c in cards if s == obs["seat"]]
    dummy_hand = None
    if obs.get("dummy_hand") is not None:
        dummy_hand = list(obs["dummy_hand"]) + [c for s, c in cards if s == obs["dummy"]]
    return BoardLog(serial, obs["board"], obs["dealer"], obs["vulnerability"], hand,
                    list(obs["calls"]), cards, dummy_hand)


@dataclass
class Step:
    """What :meth:`Connection.feed` made of a line: ``lines`` to write now; ``connect`` (the
    parsed ``Connecting`` line: the transport picks the seat and calls
    :meth:`Connection.take_seat`); ``call`` or ``card`` (the rules' action name) for the
    runner, with the call's ``alert`` and ``explanation``; ``replayed``: the table has that
    action already (a reconnected robot replaying the board, or a robot answering after its
    deadline's forced action): not for the runner."""

    lines: list[str] = field(default_factory=list)
    connect: ClientLine | None = None
    call: str | None = None
    card: str | None = None
    alert: bool = False
    explanation: str = ""
    replayed: bool = False

    @property
    def action(self) -> str | None:
        return self.call or self.card


# Phases of a connection.
CONNECTING, SEATING, SEATED, WANT_TEAMS, TEAMS, WANT_BOARD, BOARD, OVER = range(8)


class Connection:
    """One robot's conversation with the table manager, without I/O (module docstring).

    The transport calls, in any interleaving: :meth:`feed` with each line the robot sends
    (raises :class:`ProtocolError` for a line that is malformed or out of turn, with what
    was expected); :meth:`take_seat` after a ``connect``; :meth:`set_teams` once four are
    seated; :meth:`observe` with the seat's observation and the step's happenings when the
    match starts and after every step; :meth:`end_session` if the session is stopped.  Each
    returns the lines to write, in order.  :attr:`pauses`: pause before each line (a version
    18 robot, notes); :meth:`expected`: what the robot may send now.

    ``explanations`` is shared by the four connections of a table: a call's explanation, kept
    under ``(board serial, call number)``, reaches the bidder's opponents through it.
    ``clock`` (seconds) measures each side's thinking time for the ``Timing`` line: the time
    from one step to the next goes to the side that acted.
    """

    def __init__(self, explanations: dict | None = None, clock: Callable[[], float] = time.monotonic):
        self.explanations = {} if explanations is None else explanations
        self.clock = clock
        self.phase = CONNECTING
        self.seat: int | None = None
        self.team = ""
        self.version = 0
        self.teams: tuple[str, str, str | None] | None = None
        self.boards: list[BoardLog] = []  # the robot is on boards[0]; the table may be ahead
        self.session_over = False
        #: Set when the table recorded an action other than the one this robot sent (a
        #: deadline's forced action, a refused call): the robot's view is out of step.
        self.out_of_step: str | None = None
        self._totals = [0.0, 0.0]
        self._last_serial = -1  # the last board added to ``boards``
        self._last_step_at: float | None = None
        self._acting_side: int | None = None
        self._reset_board()

    def _reset_board(self) -> None:
        self.stage = "start"  # then deal, cards, bidding (the auction and the play)
        self.calls: list[str] = []  # the calls this robot has seen or made
        self.cards: list[tuple[int, str]] = []  # likewise the cards
        self.pending: ClientLine | None = None  # a request the table cannot answer yet
        self.asked_dummy = False
        self.lead_told = -1  # the card number whose "to lead" went out

    @property
    def pauses(self) -> bool:
        """Whether the transport pauses before each line it writes (version 18; notes: "A
        widely used table manager pauses 300 ms ... and none for version 19")."""
        return self.version == 18

    # --- the transport's calls ---------------------------------------------------------------
    def feed(self, raw: str | bytes) -> Step:
        """One line from the robot: what to write back, and what it asks of the table."""
        msg = parse_client_line(raw)
        if self.phase == CONNECTING:
            if msg.kind != "connect":
                raise ProtocolError('expected "Connecting "TEAM" as <seat> using protocol version 18" first')
            self.team, self.version, self.phase = msg.team, msg.version, SEATING
            return Step(connect=msg)
        if self.phase == SEATING:
            raise ProtocolError("wait for the seated line before sending more")
        if msg.kind == "connect":
            raise ProtocolError("already connected")
        if msg.kind != "play" and msg.seat != self.seat:
            raise ProtocolError(f"you are {SEAT_NAMES[self.seat]}: {self._expect_text()}")
        if self.phase == SEATED and msg.kind == "teams":
            self.phase = WANT_TEAMS
            return Step(self._send_teams())
        if self.phase in (TEAMS, WANT_BOARD) and msg.kind == "start":
            if self.phase == TEAMS:
                self.phase = WANT_BOARD
                return Step(self._pump())
            return Step()  # a repeated "ready to start" (notes): nothing to add
        if self.phase == BOARD:
            step = self._feed_board(msg)
            self._check_in_step()  # a replayed action is compared at once
            return step
        raise ProtocolError(self._expect_text())

    def take_seat(self, seat: int) -> list[str]:
        """The transport gave the robot ``seat`` (its own choice, or a free one for ANYPL)."""
        if self.phase != SEATING:
            raise RuntimeError("take_seat comes once, after the connect line")
        self.seat, self.phase = seat, SEATED
        return [seated_line(seat, self.team)]

    def set_teams(self, ns_team: str, ew_team: str, scoring: str | None = None) -> list[str]:
        """Four are seated: the team names (cleaned with :func:`clean_team`) and optionally
        ``IMP`` or ``MP``; the ``Teams`` line goes out now or when the robot asks."""
        self.teams = (ns_team, ew_team, scoring)
        return self._send_teams()

    def observe(self, obs: Mapping, happenings: Iterable[Mapping] = ()) -> list[str]:
        """The seat's observation after a step (or at the match's start, without happenings)
        and that step's happenings (``card``, ``dummy``, ``trick_over``, ``board_over``; a call
        has none: it is read from ``obs["calls"]``)."""
        now = self.clock()
        log = self.boards[-1] if self.boards and not self.boards[-1].finished else None
        if log is not None and self._last_step_at is not None and self._acting_side is not None:
            log.seconds[self._acting_side] += now - self._last_step_at
            self._totals[self._acting_side] += now - self._last_step_at
        self._last_step_at = now
        for h in happenings:
            if log is None:
                break
            kind = h.get("type")
            if kind == "card":
                log.cards.append((h["seat"], h["card"]))
            elif kind == "dummy":
                log.dummy_hand = list(h["cards"])
            elif kind == "board_over":
                log.calls = list(h["calls"])
                log.finished = True
                log.totals = list(self._totals)
                log = None
        if log is not None:
            log.calls = list(obs["calls"])
            if log.dummy_hand is None and obs.get("dummy_hand") is not None:  # missed the happening
                log.dummy_hand = list(obs["dummy_hand"]) + [c for s, c in log.cards if s == obs["dummy"]]
        if obs.get("terminal"):
            self.session_over = True
            self._acting_side = None
        else:
            serial = len(obs.get("results") or ())
            if serial > self._last_serial:
                self._last_serial = serial
                self.boards.append(board_from_observation(obs, serial))
            to_act = obs.get("to_act") or ()
            self._acting_side = to_act[0] & 1 if to_act else None
        self._check_in_step()
        return self._pump()

    def end_session(self) -> list[str]:
        """The session is stopped now (the match aborted): ``End of session``, once."""
        self.session_over = True
        if self.phase == OVER:
            return []
        self.phase = OVER
        return [END_OF_SESSION]

    def expected(self) -> list[str]:
        """The lines the robot may send now (for error messages and tests); empty while it
        waits for the table."""
        me = SEAT_NAMES[self.seat] if self.seat is not None else "<seat>"
        if self.phase == CONNECTING:
            return ['Connecting "TEAM" as <seat> using protocol version 18']
        if self.phase == SEATED:
            return [f"{me} ready for teams"]
        if self.phase in (TEAMS, WANT_BOARD):
            return [f"{me} ready to start"]
        if self.phase != BOARD or self.pending is not None:
            return []
        if self.stage == "deal":
            return [f"{me} ready for deal"]
        if self.stage == "cards":
            return [f"{me} ready for cards"]
        if self.stage != "bidding":
            return []
        log = self.boards[0]
        out = []
        if not auction_over(self.calls):
            caller = (log.dealer + len(self.calls)) % 4
            return [f"{me} bids <call>" if caller == self.seat else f"{me} ready for {SEAT_NAMES[caller]}'s bid"]
        declarer = declarer_of(self.calls, log.dealer)
        if declarer is None or len(self.cards) == 52:
            return []
        dummy = PARTNER[declarer]
        if self.seat != dummy and not self.asked_dummy and (self.cards or NEXT[declarer] != self.seat):
            out.append(f"{me} ready for dummy")
        hand = next_hand(self.cards, NEXT[declarer], _strain_of(self.calls))
        trick = len(self.cards) // 4 + 1
        if hand == self.seat and hand != dummy or hand == dummy and self.seat == declarer:
            out.append(f"{SEAT_NAMES[hand]} plays <card>")
        else:
            out.append(f"{me} ready for {'dummy' if hand == dummy else SEAT_NAMES[hand]}'s card to trick {trick}")
        return out

    # --- inside ---------------------------------------------------------------------------
    def _expect_text(self) -> str:
        expected = self.expected()
        if expected:
            return "expected " + " or ".join(f'"{e}"' for e in expected)
        return "nothing expected now: wait for the table manager's line"

    def _send_teams(self) -> list[str]:
        if self.phase != WANT_TEAMS or self.teams is None:
            return []
        self.phase = TEAMS
        ns, ew, scoring = self.teams
        return [teams_line(clean_team(ns, "N/S"), clean_team(ew, "E/W"), scoring)]

    def _feed_board(self, msg: ClientLine) -> Step:
        if self.pending is not None:
            raise ProtocolError("still waiting for the table to answer your last request")
        log, me = self.boards[0], self.seat
        wrong = ProtocolError(self._expect_text())
        if msg.kind == "start" and self.stage == "deal":
            return Step()  # a repeated "ready to start"
        if msg.kind == "deal" and self.stage == "deal":
            self.stage = "cards"
            return Step([board_line(log.number, log.dealer, log.vulnerability)])
        if msg.kind == "cards" and self.stage == "cards":
            self.stage = "bidding"
            return Step([cards_line(me, log.hand)] + self._pump())
        if self.stage != "bidding":
            raise wrong
        if not auction_over(self.calls):
            caller = (log.dealer + len(self.calls)) % 4
            if msg.kind == "call" and caller == me:
                if msg.explanation:
                    self.explanations[(log.serial, len(self.calls))] = (msg.alert, msg.explanation)
                replayed = len(log.calls) > len(self.calls)
                self.calls.append(msg.call)
                return Step(self._pump(), call=msg.call, alert=msg.alert, explanation=msg.explanation,
                            replayed=replayed)
            if msg.kind == "bid_of" and msg.of == caller and caller != me:
                self.pending = msg
                return Step(self._pump())
            raise wrong
        declarer = declarer_of(self.calls, log.dealer)
        if declarer is None or len(self.cards) == 52:
            raise wrong  # the board is over: the Timing line comes
        dummy = PARTNER[declarer]
        # "ready for dummy" from a non-dummy once, at any time after the auction (some robots
        # ask before the opening lead) except by the opening leader before it has led: that
        # request would wait for its own card.
        if msg.kind == "dummy" and me != dummy and not self.asked_dummy and (self.cards or NEXT[declarer] != me):
            self.asked_dummy = True
            self.pending = msg
            return Step(self._pump())
        hand = next_hand(self.cards, NEXT[declarer], _strain_of(self.calls))
        trick = len(self.cards) // 4 + 1
        mine = hand == me and me != dummy or hand == dummy and me == declarer
        if msg.kind == "play" and mine and msg.seat == hand:
            replayed = len(log.cards) > len(self.cards)
            self.cards.append((hand, msg.card))
            return Step(self._pump(), card=msg.card, replayed=replayed)
        if (msg.kind == "card_of" and not mine and msg.trick == trick
                and (msg.of == hand or msg.of == -1 and hand == dummy)):
            self.pending = msg
            return Step(self._pump())
        raise wrong

    def _check_in_step(self) -> None:
        """Compare what this robot sent with what the table recorded (``out_of_step``)."""
        if self.phase != BOARD or not self.boards or self.out_of_step:
            return
        log = self.boards[0]
        for mine, table, what in ((self.calls, log.calls, "call"), (self.cards, log.cards, "card")):
            for i in range(min(len(mine), len(table))):
                if mine[i] != table[i]:
                    self.out_of_step = f"the table recorded {what} {table[i]} where this robot has {mine[i]}"
                    return

    def _pump(self) -> list[str]:
        """Every line the table can send now: the answer to a waiting request, then the lines
        nobody asks for (``to lead``, ``Timing``, ``Start of board``, ``End of session``)."""
        out: list[str] = []
        while True:
            if self.phase == WANT_BOARD:
                if self.boards:
                    self.phase = BOARD
                    self.stage = "deal"
                    out.append(START_OF_BOARD)
                elif self.session_over:
                    self.phase = OVER
                    out.append(END_OF_SESSION)
                return out
            if self.phase != BOARD or self.stage != "bidding":
                return out
            log = self.boards[0]
            p = self.pending
            if p is not None:
                line = self._answer(log, p)
                if line is None:
                    return out
                out.append(line)
                self.pending = None
            caught_up = len(log.calls) >= len(self.calls) and len(log.cards) >= len(self.cards)
            if not caught_up:
                return out
            if auction_over(self.calls):
                declarer = declarer_of(self.calls, log.dealer)
                if declarer is None or len(self.cards) == 52:
                    if not log.finished:
                        return out
                    out.append(timing_line(log.seconds[0], log.totals[0], log.seconds[1], log.totals[1]))
                    self.boards.pop(0)
                    self._reset_board()
                    self.phase = WANT_BOARD
                    continue
                k = len(self.cards)
                hand = next_hand(self.cards, NEXT[declarer], _strain_of(self.calls))
                dummy = PARTNER[declarer]
                player = declarer if hand == dummy else hand
                if k % 4 == 0 and player == self.seat and self.lead_told < k:
                    self.lead_told = k
                    out.append(to_lead_line(hand, hand == dummy))
            return out

    def _answer(self, log: BoardLog, p: ClientLine) -> str | None:
        """The answer to waiting request ``p``, or None while the table lacks it."""
        if p.kind == "bid_of":
            k = len(self.calls)
            if len(log.calls) <= k:
                return None
            call = log.calls[k]
            self.calls.append(call)
            alert, text = self.explanations.get((log.serial, k), (False, ""))
            return call_line(p.of, call, text, alert, to_partner=p.of == PARTNER[self.seat])
        if p.kind == "card_of":
            k = len(self.cards)
            if len(log.cards) <= k:
                return None
            self.cards.append(log.cards[k])
            return card_line(*log.cards[k])
        if p.kind == "dummy":
            if log.dummy_hand is None:
                return None
            return dummy_line(log.dummy_hand)
        raise AssertionError(p.kind)
