"""Contract bridge wire codec: the seed's text protocol, in the syntax we define for it.

The seed (specs/bridge-text.seed.md, a 2003 proposal nobody implemented) names the messages,
their classes and their argument types but lost its wire syntax; ours is in
docs/bridge-protocol.md, which this module implements.  In short: UTF-8 lines ending in
``\\n`` (``\\r\\n`` accepted), the message name first, arguments separated by single spaces,
a list as further items, a free-text argument (a name, a NAK's description) last or in
double quotes.  Classes: PLAYER (client to server), CLIENT (server to one client), GAME
(server to every client at the table).

Pure, as every codec here (docs/architecture.md, "Layers"): client lines become the
dataclasses below (:func:`parse_line`), rules actions go to and from the wire
(:func:`call_to_wire`, :func:`card_to_wire`, ...), and server lines are built from the rules'
observations and happenings (:func:`board_start`, :func:`step_messages`, :func:`resync`).
Every formatter returns one line without its terminator; :func:`encode` adds them.

Wire forms of the rules' actions: a card is rank then suit (``10H``, ``AS``; the rules say
``HT``, ``SA``); a call is ``1C`` ... ``7NT``, ``PASS``, ``DOUBLE``, ``REDOUBLE`` (the rules:
``P``, ``X``, ``XX``).  Positions are ``N E S W`` (rules seats 0-3), teams ``NS EW`` (sides
0, 1), ``0`` a position where nobody is to act.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from games.base import ProtocolError
from games.bridge.rules import CALL_INDEX, CARD_INDEX, RANK_LETTERS, SEAT_LETTERS, STRAIN_NAMES
from games.names import clean_name

#: Longest client line in bytes, its terminator not counted: a quoted 40-character name in
#: four-byte UTF-8 and a 100-character key fit with room to spare.  Server lines are not
#: bound by it: the longest auction (319 calls) makes an AUCOPEN of 1,751 bytes.
MAX_LINE = 512
#: Longest bot key (the arena's own bound, ``games.arena.bots.bot_keys.MAX_KEY``; repeated here
#: because a codec imports nothing of the arena).
MAX_KEY = 100
#: Longest game or tournament id (the seed's ``string``: letters and digits).
MAX_ID = 32
#: Longest NAK description sent; longer ones are cut (a NAK never grows without bound).
MAX_TEXT = 300

TEAMS = ("NS", "EW")
DOUBLE_STATUS = ("UNDOUBLED", "DOUBLED", "REDOUBLED")  # ours: the seed names no values
VULNERABILITY = ("NONVUL", "VUL")  # ours, likewise
NO_POSITION = "0"  # the seed: "0 if no bids [no play] are being accepted"
PASSED_OUT = "PASS"  # ours: AUCCLOSE's one argument when four passes end the auction

_CALL_WORDS = {"P": "PASS", "X": "DOUBLE", "XX": "REDOUBLE"}
_WIRE_CALLS = {v: k for k, v in _CALL_WORDS.items()}
_WIRE_RANKS = {r: ("10" if r == "T" else r) for r in RANK_LETTERS}
_ID = re.compile(r"[A-Za-z0-9]{1,%d}" % MAX_ID)
_KEY = re.compile(r"[\x21-\x7e]{1,%d}" % MAX_KEY)
#: Tournament ids as we issue them (docs: JOIN-T): ``T`` and digits for a team match at one
#: table, ``E`` and digits for an arena event (a Mitchell or Howell of pairs).
_TOURNAMENT_ID = re.compile(r"[TE][0-9]{1,%d}" % (MAX_ID - 1))


# --- the seed's types --------------------------------------------------------------------------
def card_to_wire(card: str) -> str:
    """A rules card (``"HT"``) as the seed's ``cardinal cardsuit`` (``"10H"``)."""
    return _WIRE_RANKS[card[1]] + card[0]


def card_from_wire(text: str) -> str:
    """The seed's card (rank then suit: ``10H``, ``AS``; any case, ``T`` also for ten) as a
    rules card (``"HT"``, ``"SA"``).  Raises :class:`ProtocolError` naming the text."""
    t = text.upper()
    rank, suit = t[:-1], t[-1:]
    rank = "T" if rank == "10" else rank
    if len(rank) == 1 and rank in RANK_LETTERS and suit and suit in "CDHS":
        return suit + rank
    raise ProtocolError(f"{text[:20]!r} is not a card: rank then suit, e.g. 10H, AS, 2C")


def call_to_wire(call: str) -> str:
    """A rules call (``"1NT"``, ``"P"``, ``"X"``, ``"XX"``) as the seed's bid (``1NT``,
    ``PASS``, ``DOUBLE``, ``REDOUBLE``)."""
    return _CALL_WORDS.get(call, call)


def call_from_wire(text: str) -> str:
    """The seed's bid (``1C`` ... ``7NT``, ``PASS``, ``DOUBLE``, ``REDOUBLE``; any case) as a
    rules call.  Raises :class:`ProtocolError` naming the text."""
    t = text.upper()
    if t in _WIRE_CALLS:
        return _WIRE_CALLS[t]
    if t in CALL_INDEX and t not in _CALL_WORDS:  # the rules' P, X, XX are not the seed's
        return t
    raise ProtocolError(f"{text[:20]!r} is not a bid: 1C ... 7NT (level 1-7, strain C D H S NT), "
                        "PASS, DOUBLE or REDOUBLE")


def position_to_wire(seat: int | None) -> str:
    """A seat 0-3 as ``N E S W``; None (nobody to act) as ``0``."""
    return NO_POSITION if seat is None or seat < 0 else SEAT_LETTERS[seat]


def position_from_wire(text: str) -> int:
    """``N E S W`` (any case) as a seat 0-3.  Raises :class:`ProtocolError`."""
    t = text.upper()
    if len(t) == 1 and t in SEAT_LETTERS:
        return SEAT_LETTERS.index(t)
    raise ProtocolError(f"{text[:20]!r} is not a position: N, E, S or W")


# --- client messages (class PLAYER) ------------------------------------------------------------
@dataclass(frozen=True)
class Hello:
    """``HELLO <name>`` or ``HELLO "<name>" <key>`` (seed: HELLO; the key is ours)."""
    name: str
    key: str | None = None


@dataclass(frozen=True)
class GamesRequest:
    """``GAMES`` with no argument: asks for the GAMES list (ours: the seed only has the answer)."""


@dataclass(frozen=True)
class TournamentsRequest:
    """``TOURNAMENTS`` with no argument: asks for the TOURNAMENTS list (ours, likewise)."""


@dataclass(frozen=True)
class JoinM:
    """``JOIN-M [<gameid> | NEW | ANY] [<position>]`` (seed: JOIN-M).

    ``game``: a game id, ``NEW`` (a new game: the seed's omitted id) or ``ANY`` (ours: the
    server chooses an open game, or makes one); ``seat``: 0-3 or None (the server chooses)."""
    game: str = "NEW"
    seat: int | None = None


@dataclass(frozen=True)
class JoinT:
    """``JOIN-T [<tournamentid>] <partner>`` (seed: JOIN-T): ``tournament`` None for a new or
    waiting team match, ``T<n>`` a waiting team match, ``E<n>`` the arena's pair event ``n``;
    ``partner`` the name of the player to partner."""
    partner: str
    tournament: str | None = None


@dataclass(frozen=True)
class Bid:
    """``BID <bid>`` (seed: BID); ``call`` is the rules' call (``"1NT"``, ``"P"``, ``"X"``)."""
    call: str


@dataclass(frozen=True)
class Play:
    """``PLAY <card>`` (seed: PLAY); ``card`` is the rules' card (``"HT"``).  Declarer sends
    dummy's cards too."""
    card: str


ClientMessage = Hello | GamesRequest | TournamentsRequest | JoinM | JoinT | Bid | Play
CLIENT_MESSAGES = ("HELLO", "GAMES", "TOURNAMENTS", "JOIN-M", "JOIN-T", "BID", "PLAY")
#: What each client message looks like, for the error that names the right form.
USAGE = {
    "HELLO": 'HELLO <your name>, or HELLO "<your name>" <bot key>',
    "GAMES": "GAMES (no argument)",
    "TOURNAMENTS": "TOURNAMENTS (no argument)",
    "JOIN-M": "JOIN-M [<gameid> | NEW | ANY] [N | E | S | W]",
    "JOIN-T": "JOIN-T [<tournamentid>] <partner's name>",
    "BID": "BID <bid>, e.g. BID 1NT, BID PASS, BID DOUBLE",
    "PLAY": "PLAY <card>, e.g. PLAY 10H, PLAY AS",
}


def _decode(line: bytes | str, limit: int | None = MAX_LINE) -> str:
    """One line as text: terminator removed, at most ``limit`` bytes (None: any length), UTF-8,
    no other control character."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else bytes(line)
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if limit is not None and len(raw) > limit:
        raise ProtocolError(f"line too long: {len(raw)} bytes, at most {limit}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("the line is not UTF-8") from None
    bad = next((ch for ch in text if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        raise ProtocolError(f"control character {ord(bad):#04x} in the line: one message per line, "
                            "arguments separated by single spaces")
    return text


def _free_text(text: str, what: str) -> tuple[str, str]:
    """Split a free-text argument from the front of ``text``: a double-quoted string (``\\"``
    and ``\\\\`` inside) and what follows it, or the whole text.  Returns (value, rest)."""
    if not text.startswith('"'):
        return text, ""
    out, i = [], 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
            out.append(text[i + 1])
            i += 2
            continue
        if ch == '"':
            rest = text[i + 1:]
            if rest and not rest.startswith(" "):
                raise ProtocolError(f"{what}: a space must follow the closing quote")
            return "".join(out), rest[1:]
        out.append(ch)
        i += 1
    raise ProtocolError(f"{what}: the opening double quote is never closed")


def _name(text: str, what: str) -> str:
    name = clean_name(text)
    if not name:
        raise ProtocolError(f"{what} is empty")
    return name


def parse_line(line: bytes | str) -> ClientMessage:
    """Parse one line from a client (a PLAYER-class message) into its dataclass.

    ``line`` may end in ``\\n`` or ``\\r\\n``; the message name may be in any case, cards and
    bids too.  Names are cleaned (:func:`games.names.clean_name`: printable, at most 40
    characters).  Raises :class:`ProtocolError` for a line over :data:`MAX_LINE` bytes, not
    UTF-8, an unknown message, a wrong number of arguments or a bad card, bid, position or
    id: its message names the form expected, for the NAK.  Legality (whose turn, which bid
    is sufficient) is the rules' to judge, not the codec's.
    """
    text = _decode(line)
    if not text.strip():
        raise ProtocolError("empty line: a message name first, e.g. HELLO, JOIN-M, BID, PLAY")
    head, _, rest = text.strip(" ").partition(" ")
    name = head.upper()
    if name not in USAGE:
        raise ProtocolError(f"unknown message {head[:20]!r}: a client sends {', '.join(CLIENT_MESSAGES)}")
    rest = rest.strip(" ")
    if name == "HELLO":
        if not rest:
            raise ProtocolError(f"HELLO needs your name: {USAGE[name]}")
        quoted = rest.startswith('"')
        value, after = _free_text(rest, "HELLO's name")
        if not quoted:
            return Hello(_name(value, "HELLO's name"))
        words = after.split()
        if len(words) > 1 or (words and not _KEY.fullmatch(words[0])):
            raise ProtocolError(f"after the quoted name HELLO takes one bot key (at most {MAX_KEY} "
                                f"characters, no spaces): {USAGE[name]}")
        return Hello(_name(value, "HELLO's name"), words[0] if words else None)
    if name == "JOIN-T":
        if not rest:
            raise ProtocolError(f"JOIN-T needs your partner's name: {USAGE[name]}")
        first, _, more = rest.partition(" ")
        tournament = None
        if more.strip(" ") and _TOURNAMENT_ID.fullmatch(first.upper()):
            tournament, rest = first.upper(), more.strip(" ")
        value, after = _free_text(rest, "JOIN-T's partner name")
        if after.strip(" "):
            raise ProtocolError(f"nothing may follow the quoted partner name: {USAGE[name]}")
        return JoinT(_name(value, "the partner's name"), tournament)
    args = rest.split()
    if name in ("GAMES", "TOURNAMENTS"):
        if args:
            raise ProtocolError(f"{name} takes no argument from a client: {USAGE[name]}")
        return GamesRequest() if name == "GAMES" else TournamentsRequest()
    if name == "JOIN-M":
        return _join_m(args)
    if len(args) != 1:
        raise ProtocolError(f"{name} takes one argument, got {len(args)}: {USAGE[name]}")
    if name == "BID":
        return Bid(call_from_wire(args[0]))
    return Play(card_from_wire(args[0]))


def _join_m(args: list[str]) -> JoinM:
    if len(args) > 2:
        raise ProtocolError(f"JOIN-M takes at most two arguments, got {len(args)}: {USAGE['JOIN-M']}")
    game, seat = "NEW", None
    if args and len(args[-1]) == 1 and args[-1].upper() in SEAT_LETTERS:
        seat = position_from_wire(args.pop())  # a one-letter id is never ours (docs: gameid)
    if args:
        word = args.pop()
        if word.upper() in ("NEW", "ANY"):
            game = word.upper()
        elif _ID.fullmatch(word):
            game = word
        else:
            raise ProtocolError(f"{word[:40]!r} is not a game id (letters and digits, at most {MAX_ID}) "
                                f"nor a position: {USAGE['JOIN-M']}")
    if args:
        raise ProtocolError(f"JOIN-M's second argument must be a position N, E, S or W: {USAGE['JOIN-M']}")
    return JoinM(game, seat)


def format_client(msg: ClientMessage) -> str:
    """A client message as its line (what a bot sends): the inverse of :func:`parse_line`, for
    scripted clients and the documentation's example."""
    if isinstance(msg, Hello):
        plain = msg.key is None and not msg.name.startswith('"')
        return f"HELLO {msg.name}" if plain else " ".join(["HELLO", quote(msg.name)] + [msg.key] * bool(msg.key))
    if isinstance(msg, GamesRequest):
        return "GAMES"
    if isinstance(msg, TournamentsRequest):
        return "TOURNAMENTS"
    if isinstance(msg, JoinM):
        return " ".join(["JOIN-M", msg.game] + ([] if msg.seat is None else [SEAT_LETTERS[msg.seat]]))
    if isinstance(msg, JoinT):
        plain = msg.tournament is None and not msg.partner.startswith('"') \
            and not _TOURNAMENT_ID.fullmatch(msg.partner.partition(" ")[0].upper())
        partner = msg.partner if plain else quote(msg.partner)
        return " ".join(["JOIN-T"] + ([msg.tournament] if msg.tournament else []) + [partner])
    if isinstance(msg, Bid):
        return f"BID {call_to_wire(msg.call)}"
    return f"PLAY {card_to_wire(msg.card)}"


def quote(text: str) -> str:
    """``text`` double-quoted, ``"`` and ``\\`` escaped by a backslash."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- server messages: one line each ------------------------------------------------------------
def _one_line(text: str) -> str:
    """Free text made safe for one line: control characters to spaces, bounded."""
    clean = "".join(" " if ord(ch) < 32 or ord(ch) == 127 else ch for ch in str(text)).strip()
    return clean[:MAX_TEXT]


def _check_id(gameid: str) -> str:
    if not _ID.fullmatch(str(gameid)):
        raise ValueError(f"{gameid!r} is not an id of letters and digits")
    return str(gameid)


def games(gameids: Iterable[str]) -> str:
    """``GAMES <gameid>*`` (class CLIENT): the games open to JOIN-M, fewer than four seated.
    The answer to an accepted HELLO and to ``GAMES``."""
    return " ".join(["GAMES", *map(_check_id, gameids)])


def tournaments(ids: Iterable[str]) -> str:
    """``TOURNAMENTS <tournamentid>*`` (class CLIENT): the team matches waiting (``T``) and the
    arena's pair events open to pairs (``E``)."""
    return " ".join(["TOURNAMENTS", *map(_check_id, ids)])


def joined(gameid: str, seat: int, name: str | None = None) -> str:
    """``JOINED <gameid> <position> [<name>]`` (class GAME): a player took a seat; sent to
    everyone at the table, the joiner included."""
    line = f"JOINED {_check_id(gameid)} {SEAT_LETTERS[seat]}"
    name = _one_line(name or "")
    return f"{line} {name}" if name else line


def nak(description: str) -> str:
    """``NAK <description>`` (class CLIENT): a request refused or a line not understood."""
    return f"NAK {_one_line(description) or 'refused'}"


def aucopen(turn: int | None, calls: Sequence[str]) -> str:
    """``AUCOPEN <position|0> <bid>*`` (class GAME): whose call it is (``0`` when the auction
    is closed) and every call so far, the dealer's first."""
    return " ".join(["AUCOPEN", position_to_wire(turn), *map(call_to_wire, calls)])


def bid(seat: int, call: str) -> str:
    """``BID <position> <bid>`` (class GAME, ours: the seed's BID with the caller's position
    first): a call made."""
    return f"BID {SEAT_LETTERS[seat]} {call_to_wire(call)}"


def hand(cards: Sequence[str]) -> str:
    """``HAND <card>*`` (class CLIENT): the cards the recipient holds now, to that seat only."""
    return " ".join(["HAND", *map(card_to_wire, cards)])


def play(seat: int, card: str) -> str:
    """``PLAY <position> <card>`` (class GAME, ours like ``BID``): a card played from the hand
    at ``seat`` (dummy's seat for dummy's cards, though declarer chose them)."""
    return f"PLAY {SEAT_LETTERS[seat]} {card_to_wire(card)}"


def dummy(cards: Sequence[str]) -> str:
    """``DUMMY <card>*`` (class GAME): dummy's cards, once the opening lead is made."""
    return " ".join(["DUMMY", *map(card_to_wire, cards)])


def trick(turn: int | None, cards: Sequence[str]) -> str:
    """``TRICK <position|0> <card>*`` (class GAME): the hand to play next (dummy's position
    on dummy's turn; declarer sends the card) or ``0``, and the trick's cards in order."""
    return " ".join(["TRICK", position_to_wire(turn), *map(card_to_wire, cards)])


def trickswon(winners: Sequence[int]) -> str:
    """``TRICKSWON <position>*`` (class GAME): the winner of each finished trick, in order."""
    return " ".join(["TRICKSWON", *(SEAT_LETTERS[w] for w in winners)])


def aucclose(contract: str | None, declarer: int | None = None) -> str:
    """``AUCCLOSE <trump> <contractvalue> <double status> <team> <declarer>`` (class GAME),
    e.g. ``AUCCLOSE NT 3NT DOUBLED NS S`` for the rules' contract ``"3NTX"`` by South; the
    declarer is ours.  A passed-out deal (contract ``"Pass"``) is ``AUCCLOSE PASS`` (ours)."""
    if contract is None or contract == "Pass":
        return f"AUCCLOSE {PASSED_OUT}"
    doubled = 2 if contract.endswith("XX") else 1 if contract.endswith("X") else 0
    value = contract.rstrip("X")
    return f"AUCCLOSE {value[1:]} {value} {DOUBLE_STATUS[doubled]} {TEAMS[declarer & 1]} {SEAT_LETTERS[declarer]}"


def score_m(above: Sequence[int], below: Sequence[int], vulnerable: Sequence[bool]) -> str:
    """``SCORE-M <above NS> <below NS> <vul NS> <above EW> <below EW> <vul EW>`` (class
    GAME), each pair ``[NS, EW]``; vulnerability ``VUL`` or ``NONVUL``."""
    ns = f"{above[0]} {below[0]} {VULNERABILITY[bool(vulnerable[0])]}"
    ew = f"{above[1]} {below[1]} {VULNERABILITY[bool(vulnerable[1])]}"
    return f"SCORE-M {ns} {ew}"


def encode(lines: Iterable[str]) -> bytes:
    """Lines as bytes on the wire: UTF-8, each ended by ``\\n``."""
    return "".join(line + "\n" for line in lines).encode("utf-8")


# --- server messages from the rules' views -----------------------------------------------------
def _turn(obs: dict) -> int | None:
    """The hand to act in a view (dummy's on dummy's turn), None when the board is over."""
    return None if obs["terminal"] else obs["player"]


def score_from_view(obs: dict) -> str:
    """SCORE-M from any view (a seat's or the public one).

    Rubber scoring: the score sheet, each side vulnerable once it has won a game.
    Duplicate scoring has no line (ours): each side's points so far go above the line, 0
    below, and the vulnerability is the board's in play (the last one's once the match is
    over)."""
    sheet = obs["rubber"]
    if sheet is not None:
        return score_m(sheet["above"], sheet["below"], [g > 0 for g in sheet["games"]])
    vul = obs["vulnerability"]
    return score_m(obs["totals"], [0, 0], [vul in ("NS", "Both"), vul in ("EW", "Both")])


def board_start(obs: dict) -> list[str]:
    """What a seat receives as a board is dealt: ``HAND`` (its 13 cards), then ``AUCOPEN``
    with the dealer to call.  ``obs`` is the seat's observation
    (:meth:`games.bridge.rules.BridgeState.observation`) at the board's start."""
    return [hand(obs["hand"]), aucopen(obs["dealer"], [])]


def resync(obs: dict) -> list[str]:
    """Every GAME-class message (and HAND) that puts a reconnecting client back in step with
    its seat's observation ``obs`` alone, as the seed intends GAME messages to allow.

    Order: ``SCORE-M``; ``HAND``; ``AUCOPEN`` (whose call, the calls so far); then, once the
    auction has closed, ``AUCCLOSE``, ``DUMMY`` (after the opening lead), ``TRICKSWON`` and
    ``TRICK`` (the hand to play and the trick so far).  At the end of the match: the last
    board's auction, contract, tricks and the final score, and no HAND.  Carries no card of
    another seat but dummy's exposed ones, since ``obs`` has none."""
    out = [score_from_view(obs)]
    if not obs["terminal"]:
        out.append(hand(obs["hand"]))
    auction_open = obs["phase"] == "auction"
    out.append(aucopen(_turn(obs) if auction_open else None, obs["calls"]))
    if auction_open:
        return out
    out.append(aucclose(obs["contract"], obs["declarer"]))
    if obs["contract"] == "Pass":  # the last board of the match, passed out
        return out
    if obs["dummy_hand"] is not None:
        out.append(dummy(obs["dummy_hand"]))
    out.append(trickswon([t["winner"] for t in obs["tricks"]]))
    if obs["terminal"]:
        last = obs["tricks"][-1]["cards"] if obs["tricks"] else []
        out.append(trick(None, last))
    else:
        out.append(trick(_turn(obs), obs["trick"]["cards"]))
    return out


def step_messages(before: dict, action: str, happenings: list[dict], obs: dict) -> list[str]:
    """What one seat receives after one step of the rules, in order.

    ``before``: any view (the public one will do) from before the step; ``action``: the call
    or card applied; ``happenings``: what :meth:`~games.bridge.rules.BridgeState.apply`
    returned; ``obs``: the recipient's observation after the step.

    A call: ``BID <caller> <bid>``, then ``AUCOPEN`` (the next caller, or ``0`` and then
    ``AUCCLOSE`` and ``TRICK <leader>`` when the auction closes).  A card: ``PLAY <hand>
    <card>``, ``DUMMY`` after the opening lead, ``TRICK`` (the next hand and the trick so
    far; when the trick is complete ``TRICK 0 <4 cards>``, ``TRICKSWON`` and ``TRICK
    <winner>``).  After a board: ``SCORE-M``, then the next board's :func:`board_start`.
    """
    out: list[str] = []
    kinds = {h["type"]: h for h in happenings}
    board_over = kinds.get("board_over")
    if action in CALL_INDEX:
        calls = board_over["calls"] if board_over else obs["calls"]
        out.append(bid(before["player"], action))
        closed = "auction_closed" in kinds
        out.append(aucopen(None if closed or board_over else obs["player"], calls))
        if closed:
            h = kinds["auction_closed"]
            out += [aucclose(h["contract"], h["declarer"]), trick(h["leader"], [])]
        elif board_over:
            out.append(aucclose("Pass"))
    elif action in CARD_INDEX:
        card = kinds["card"]
        out.append(play(card["seat"], card["card"]))
        if "dummy" in kinds:
            out.append(dummy(kinds["dummy"]["cards"]))
        over = kinds.get("trick_over")
        if over is None:
            out.append(trick(obs["player"], obs["trick"]["cards"]))
        else:
            winners = [t["winner"] for t in before["tricks"]] + [over["winner"]]
            out += [trick(None, over["cards"]), trickswon(winners)]
            if not board_over:
                out.append(trick(over["winner"], []))
    else:
        raise ValueError(f"{action!r} is neither a call nor a card")
    if board_over:
        out.append(score_from_view(obs))
        if not obs["terminal"]:
            out += board_start(obs)
    return out


def forced_action(legal: Sequence[str]) -> str:
    """The action the arena takes for a seat past its deadline (docs: deadlines): a pass in
    the auction, else the lowest legal card (lowest rank; among equal ranks clubs, then
    diamonds, hearts, spades).  ``legal`` is ``state.legal_actions(seat)``, not empty."""
    if "P" in legal:
        return "P"
    return min(legal, key=lambda c: (RANK_LETTERS.index(c[1]), "CDHS".index(c[0])))


def forced_notice(action: str, reason: str) -> str:
    """The ``NAK`` to the seat the server acted for (docs: deadlines), e.g. ``NAK deadline
    passed: the server called PASS for you`` or ``... played 2C for you``.  ``action`` is
    the rules' call or card, ``reason`` why the seat did not answer."""
    if action in CALL_INDEX:
        return nak(f"{reason}: the server called {call_to_wire(action)} for you")
    return nak(f"{reason}: the server played {card_to_wire(action)} for you")


# --- reading server lines (scripted clients, tests) --------------------------------------------
@dataclass(frozen=True)
class ServerMessage:
    """A server line read back: ``name`` and ``args`` typed as the rules spell them (seats
    0-3 or None for ``0``, rules card and call names, ints, bools for vulnerability, str)."""
    name: str
    args: tuple


def _list(args: list[str], convert) -> tuple:
    return tuple(convert(a) for a in args)


def _turn_from_wire(text: str) -> int | None:
    return None if text == NO_POSITION else position_from_wire(text)


def _int(text: str) -> int:
    if not text.isdigit():
        raise ProtocolError(f"{text[:20]!r} is not a whole number")
    return int(text)


def _word(text: str, words: Sequence[str]) -> int:
    if text not in words:
        raise ProtocolError(f"{text[:20]!r} is not one of {', '.join(words)}")
    return words.index(text)


def parse_server_line(line: bytes | str) -> ServerMessage:
    """Read one server line (CLIENT or GAME class) back into typed arguments; the inverse of
    the formatters above, for scripted clients and tests.  Raises :class:`ProtocolError`.

    Shapes: ``GAMES``/``TOURNAMENTS`` (ids); ``JOINED`` (id, seat, name or None); ``NAK``
    (text,); ``AUCOPEN`` (seat|None, calls tuple); ``BID`` (seat, call); ``HAND``/``DUMMY``
    (cards tuple,); ``PLAY`` (seat, card); ``TRICK`` (seat|None, cards tuple);
    ``TRICKSWON`` (seats tuple,); ``AUCCLOSE`` (strain, bid, doubled 0-2, side, declarer)
    or ``()`` when passed out; ``SCORE-M`` (above NS, below NS, vul NS, above EW, below EW,
    vul EW).  Server lines have no length bound (the reader's framing sets one)."""
    text = _decode(line, None)
    name, _, rest = text.partition(" ")
    args = rest.split(" ") if rest else []
    if name in ("NAK", "JOINED"):
        if name == "NAK":
            return ServerMessage(name, (rest,))
        if len(args) < 2:
            raise ProtocolError(f"JOINED needs a game id and a position: {text[:60]!r}")
        gameid, seat, *words = args
        return ServerMessage(name, (gameid, position_from_wire(seat), " ".join(words) or None))
    if name in ("GAMES", "TOURNAMENTS"):
        return ServerMessage(name, tuple(args))
    if name in ("AUCOPEN", "TRICK"):
        convert = call_from_wire if name == "AUCOPEN" else card_from_wire
        return ServerMessage(name, (_turn_from_wire(args[0]), _list(args[1:], convert)))
    if name in ("BID", "PLAY") and len(args) == 2:
        convert = call_from_wire if name == "BID" else card_from_wire
        return ServerMessage(name, (position_from_wire(args[0]), convert(args[1])))
    if name in ("HAND", "DUMMY"):
        return ServerMessage(name, (_list(args, card_from_wire),))
    if name == "TRICKSWON":
        return ServerMessage(name, (_list(args, position_from_wire),))
    if name == "AUCCLOSE":
        if args == [PASSED_OUT]:
            return ServerMessage(name, ())
        if len(args) == 5:
            strain, value, doubled, team, declarer = args
            if strain not in STRAIN_NAMES or call_from_wire(value)[1:] != strain:
                raise ProtocolError(f"AUCCLOSE: {value!r} is not a contract in {strain!r}")
            return ServerMessage(name, (strain, value, _word(doubled, DOUBLE_STATUS), _word(team, TEAMS),
                                        position_from_wire(declarer)))
    if name == "SCORE-M" and len(args) == 6:
        a, b, c, d, e, f = args
        return ServerMessage(name, (_int(a), _int(b), bool(_word(c, VULNERABILITY)),
                                    _int(d), _int(e), bool(_word(f, VULNERABILITY))))
    raise ProtocolError(f"not a server message: {text[:60]!r}")


__all__ = [
    "MAX_LINE", "Hello", "GamesRequest", "TournamentsRequest", "JoinM", "JoinT", "Bid", "Play",
    "ClientMessage", "parse_line", "format_client", "card_to_wire", "card_from_wire",
    "call_to_wire", "call_from_wire", "position_to_wire", "position_from_wire", "games",
    "tournaments", "joined", "nak", "aucopen", "bid", "hand", "play", "dummy", "trick",
    "trickswon", "aucclose", "score_m", "score_from_view", "board_start", "step_messages",
    "resync", "forced_action", "forced_notice", "encode", "ServerMessage", "parse_server_line",
]
