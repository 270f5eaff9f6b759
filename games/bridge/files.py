"""Bridge boards in and out as PBN and LIN files (issue 24, "History, exports, analysis").

Pure Python, no Django (the arena wires these in).  Written with our own code rather than
endplay's writers and readers, for three reasons: a download is served by the web process,
which must not import endplay (about 2.5 s and 97 MB, matplotlib included); an import reads
hostile text and must be bounded and say clearly what is wrong (endplay's parsers have no
bounds and fail with ``RuntimeError``/``IndexError`` on malformed files, and its LIN reader
takes the trick count from the wrong side when North did not lead); and the formats are
small.  endplay stays the yardstick: tests/test_bridge_files.py proves that endplay reads
what we write back to the same boards and that we read what endplay writes.

**PBN** (Portable Bridge Notation 2.1, export format), one game per board:

- ``% PBN 2.1`` and ``% EXPORT`` first; lines end in CR LF; a blank line after each game;
- the mandatory tags in the standard's order: Event, Site, Date (``YYYY.MM.DD``), Board,
  West, North, East, South, Dealer (``N``/``E``/``S``/``W``), Vulnerable (``None``, ``NS``,
  ``EW``, ``All``), Deal (``<dealer>:`` then the hands clockwise from the dealer, each
  ``spades.hearts.diamonds.clubs`` from the ace down, ``T`` for ten), Scoring (``IMP`` by
  default for duplicate, ``Rubber`` for a rubber), Declarer, Contract (``4S``, ``3NTX``,
  ``Pass``), Result (declarer's side's tricks); a passed-out board has an empty Declarer and
  Result;
- a duplicate board's ``Score`` tag (``NS 420``, ``NS -100``: North-South's score);
- the Auction section (``[Auction "<dealer>"]``, four calls a line: ``Pass``, ``X``, ``XX``,
  ``1C`` ... ``7NT``) and the Play section (``[Play "<opening leader>"]``, one trick a line,
  the cards in the columns of the seats clockwise from the opening leader, so a line is not
  in the order the cards were played once someone else wins a trick).

The standard's character set is ISO 8859-1: :func:`export_pbn` writes only characters it has
(others in names are folded to their base letter or ``?``), so encode its text with
:data:`PBN_ENCODING`.

**LIN** (Bridge Base Online), one board a line: ``pn|S,W,N,E|`` (names, South first),
``st||``, ``md|<dealer><S>,<W>,<N>,<E>|`` (dealer 1 South, 2 West, 3 North, 4 East; each hand
``S<ranks>H<ranks>D<ranks>C<ranks>``), ``rh||``, ``ah|Board N|``, ``sv|o|`` (``o`` none, ``n``
N-S, ``e`` E-W, ``b`` both), ``mb|<call>|`` (``p``, ``d``, ``r``, ``1N``, ``4S``), ``pg||``
after the auction and after each trick, ``pc|<card>|`` in the order played.  LIN has no
result: the replay computes it from the play (and a claim's ``mc|<tricks>|`` when reading).
:func:`handviewer_url` opens a board in BBO's handviewer.

**Import** (:func:`read_boards`, :func:`read_pbn`, :func:`read_lin`): every board is replayed
through :mod:`games.bridge.rules`, so every call and card is legal; the result is a list of
boards (shape in :func:`read_boards`).  Bounds, checked before any work they protect:
:data:`MAX_FILE_CHARS`, :data:`MAX_LINE_CHARS`, :data:`MAX_BOARDS`; unknown tags and LIN
commands are skipped, not kept.  Errors are ``ValueError`` with a message for the uploader
naming the board and line.
"""
from __future__ import annotations

import re
import unicodedata
from datetime import date as Date
from typing import Iterable, Sequence
from urllib.parse import quote

from games.bridge import rules
from games.names import clean_name

PBN_ENCODING = "iso-8859-1"
HANDVIEWER = "https://www.bridgebase.com/tools/handviewer.html?lin="

#: Characters a file to import may have (about 1,000 boards with their play, names and
#: some commentary; a board of PBN with its play is about 700 characters).
MAX_FILE_CHARS = 2_000_000
#: Characters one line may have.  PBN's export format keeps lines to 255; a LIN board with its
#: play on one line is about 600, a few thousand with long alert explanations.
MAX_LINE_CHARS = 20_000
#: Boards one file may hold (the most a match plays, rules.MAX_BOARDS).
MAX_BOARDS = rules.MAX_BOARDS
#: Characters kept of a free-text tag (Event, Site, Date, names).
MAX_TEXT = 100

_STRAIN_PBN = ("C", "D", "H", "S", "NT")
_SUITS_PBN = "SHDC"  # the order suits are written in, spades first
_VUL_PBN = {"None": "None", "NS": "NS", "EW": "EW", "Both": "All"}
_VUL_FROM_PBN = {"NONE": "None", "LOVE": "None", "-": "None", "NS": "NS", "EW": "EW", "ALL": "Both",
                 "BOTH": "Both"}
_VUL_LIN = {"None": "o", "NS": "n", "EW": "e", "Both": "b"}
_VUL_FROM_LIN = {"o": "None", "0": "None", "-": "None", "n": "NS", "e": "EW", "b": "Both"}
# LIN's seats: 1 South, 2 West, 3 North, 4 East; the order of names and hands.
_LIN_ORDER = (2, 3, 0, 1)
_LIN_DEALER = {2: "1", 3: "2", 0: "3", 1: "4"}


# --- export ---------------------------------------------------------------------------------
def _hand_by_suit(cards: Iterable[str]) -> dict[str, str]:
    """Ranks held per suit letter (``{"S": "AT43", ...}``), highest first, from card names
    already sorted that way (rules.mask_to_names)."""
    ranks = {s: "" for s in _SUITS_PBN}
    for card in cards:
        ranks[card[0]] += card[1]
    return ranks


def pbn_deal(hands: Sequence[Sequence[str]], first: int) -> str:
    """The PBN ``Deal`` value: ``"N:AKQ.T98.J7.6543 ..."``, the hands clockwise from ``first``
    (hands in seat order N, E, S, W)."""
    parts = []
    for i in range(4):
        seat = (first + i) % 4
        by_suit = _hand_by_suit(rules.mask_to_names(rules.names_to_mask(hands[seat])))
        parts.append(".".join(by_suit[s] for s in _SUITS_PBN))
    return f"{rules.SEAT_LETTERS[first]}:{' '.join(parts)}"


def _latin1(text: str) -> str:
    """``text`` in ISO 8859-1: accents the set lacks dropped (NFKD), anything else ``?``."""
    if all(ord(ch) < 256 for ch in text):
        return text
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return "".join(ch if ord(ch) < 256 else "?" for ch in unicodedata.normalize("NFC", folded))


def _tag(name: str, value: object) -> str:
    """A PBN tag line; free text is cleaned, folded to ISO 8859-1 and escaped (``\\"``,
    ``\\\\``)."""
    text = str(value)
    if name in ("Event", "Site", "West", "North", "East", "South"):
        text = _latin1(clean_name(text)).replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name} "{text}"]'


def _pbn_call(name: str) -> str:
    return "Pass" if name == "P" else name


def _play_rows(record: dict) -> list[str]:
    """The Play section's lines: each trick's cards in the columns of the seats clockwise
    from the opening leader (PBN 2.1, section "Play")."""
    leader = rules.NEXT[record["declarer"]]
    rows = []
    for trick in record["play"]:
        by_seat = {}
        for i, card in enumerate(trick["cards"]):
            by_seat[(trick["first"] + i) % 4] = card
        rows.append(" ".join(by_seat.get((leader + i) % 4, "-") for i in range(4)))
    return rows


def _pbn_game(record: dict, names: Sequence[str], event: str, site: str, day: str, scoring: str) -> list[str]:
    dealer = record["dealer"]
    declarer = record["declarer"]
    passed_out = declarer is None
    lines = [
        _tag("Event", event), _tag("Site", site), _tag("Date", day), _tag("Board", record["board"]),
        _tag("West", names[3]), _tag("North", names[0]), _tag("East", names[1]), _tag("South", names[2]),
        _tag("Dealer", rules.SEAT_LETTERS[dealer]), _tag("Vulnerable", _VUL_PBN[record["vulnerability"]]),
        _tag("Deal", pbn_deal(record["hands"], dealer)), _tag("Scoring", scoring),
        _tag("Declarer", "" if passed_out else rules.SEAT_LETTERS[declarer]),
        _tag("Contract", record["contract"]), _tag("Result", "" if passed_out else record["tricks"]),
    ]
    if "rubber" not in record:
        lines.append(_tag("Score", f"NS {record['score']}"))
    calls = [_pbn_call(c) for c in record["calls"]]
    lines.append(_tag("Auction", rules.SEAT_LETTERS[dealer]))
    lines += [" ".join(calls[i:i + 4]) for i in range(0, len(calls), 4)]
    if not passed_out:
        lines.append(_tag("Play", rules.SEAT_LETTERS[rules.NEXT[declarer]]))
        lines += _play_rows(record)
    return lines


def export_pbn(records: Sequence[dict], names: Sequence[str] = ("", "", "", ""), *, event: str = "",
               site: str = "", day: Date | None = None, scoring: str | None = None) -> str:
    """Finished boards (:meth:`games.bridge.rules.BridgeState.board_records`) as a PBN file
    (module docstring): one game per record.  ``names`` are the seats' names in seat order
    (North, East, South, West); ``day`` the date played (``????.??.??`` if None);
    ``scoring`` the Scoring tag (default ``Rubber`` for rubber records, else ``IMP``).
    Returns text in ISO 8859-1's characters (:data:`PBN_ENCODING`)."""
    day_text = day.strftime("%Y.%m.%d") if day is not None else "????.??.??"
    out = ["% PBN 2.1", "% EXPORT"]
    for record in records:
        tag = scoring or ("Rubber" if "rubber" in record else "IMP")
        out += _pbn_game(record, names, event, site, day_text, tag)
        out.append("")
    return "\r\n".join(out) + "\r\n"


def _lin_name(name: str) -> str:
    # ``|`` ends a LIN value and ``,`` separates the names: neither may appear in one
    return " ".join(clean_name(name).replace("|", " ").replace(",", " ").split())


def export_lin(records: Sequence[dict], names: Sequence[str] = ("", "", "", "")) -> str:
    """Finished boards as LIN (module docstring), one board a line; ``names`` in seat order
    (North, East, South, West)."""
    return "".join(lin_board(record, names) + "\n" for record in records)


def lin_board(record: dict, names: Sequence[str] = ("", "", "", "")) -> str:
    """One finished board (a board record) as one LIN line, without its line end."""
    hands = []
    for seat in _LIN_ORDER:
        by_suit = _hand_by_suit(rules.mask_to_names(rules.names_to_mask(record["hands"][seat])))
        hands.append("".join(s + by_suit[s] for s in _SUITS_PBN))
    parts = [f"pn|{','.join(_lin_name(names[s]) for s in _LIN_ORDER)}|st||",
             f"md|{_LIN_DEALER[record['dealer']]}{','.join(hands)}|rh||",
             f"ah|Board {record['board']}|sv|{_VUL_LIN[record['vulnerability']]}|"]
    for call in record["calls"]:
        parts.append(f"mb|{ {'P': 'p', 'X': 'd', 'XX': 'r'}.get(call, call.replace('NT', 'N')) }|")
    parts.append("pg||")
    for trick in record["play"]:
        parts.append("".join(f"pc|{card}|" for card in trick["cards"]) + "pg||")
    return "".join(parts)


def handviewer_url(record: dict, names: Sequence[str] = ("", "", "", "")) -> str:
    """BBO's handviewer showing one finished board (its LIN in the ``lin`` parameter; ``|``
    and ``,`` left as BBO's own links leave them, everything else percent-encoded)."""
    return HANDVIEWER + quote(lin_board(record, names), safe="|,")


# --- import: shared -------------------------------------------------------------------------
def decode(data: bytes) -> str:
    """An uploaded file's text: UTF-8 (a byte-order mark dropped), else ISO 8859-1, the PBN
    standard's character set (any byte string decodes so; the parsers judge the text)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode(PBN_ENCODING)


def _check_size(text: str) -> None:
    if len(text) > MAX_FILE_CHARS:
        raise ValueError(f"the file has more than {MAX_FILE_CHARS:,} characters")
    if not text.strip():
        raise ValueError("the file is empty")


def _lines(text: str):
    """``(number from 1, line without its end)``, each line checked against
    :data:`MAX_LINE_CHARS`, one at a time."""
    start, number = 0, 1
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        if end - start > MAX_LINE_CHARS:
            raise ValueError(f"line {number} is longer than {MAX_LINE_CHARS:,} characters")
        yield number, text[start:end].rstrip("\r")
        start, number = end + 1, number + 1


def _engine_board(board: int, dealer: int, vulnerability: str) -> int:
    """The board number the rules engine replays: ``board`` itself when Law 2 gives it this
    dealer and vulnerability, else the first of boards 1-16 that has them (the engine takes a
    board's dealer and vulnerability from its number; each of the 16 pairs is in the cycle)."""
    if rules.board_dealer(board) == dealer and rules.board_vulnerability(board) == vulnerability:
        return board
    return next(b for b in range(1, 17)
                if rules.board_dealer(b) == dealer and rules.board_vulnerability(b) == vulnerability)


def _complete_hands(hands: list[list[str] | None]) -> list[list[str]]:
    """Four hands, one of them possibly None (left out, as BBO leaves out the fourth): it gets
    the cards the other three lack.  Raises ``ValueError`` unless they make a deal."""
    missing = [seat for seat, hand in enumerate(hands) if hand is None]
    if len(missing) > 1:
        raise ValueError("the deal must give at least three hands")
    try:
        if missing:
            held = 0
            for hand in hands:
                if hand is not None:
                    held |= rules.names_to_mask(hand)
            hands[missing[0]] = rules.mask_to_names(rules.ALL_CARDS & ~held)
        masks = rules.hands_to_masks(hands)
    except ValueError as exc:
        raise ValueError(f"the deal is wrong: {exc}") from None
    return [rules.mask_to_names(m) for m in masks]


def replay(board: dict) -> rules.BridgeState:
    """The rules engine's state after an imported board's calls and cards (built on
    ``engine_board``).  Raises ``ValueError`` naming the first illegal call or card."""
    state = rules.new_state_from_deal(board["hands"], board["engine_board"])
    for i, call in enumerate(board["calls"], 1):
        if state.phase != 0:
            raise ValueError(f"call {i} ({call}) comes after the auction is over")
        seat = state.to_act()[0]
        problem = state.why_illegal(seat, call)
        if problem:
            raise ValueError(f"call {i} ({call} by {rules.SEAT_NAMES[seat]}): {problem}")
        state.apply({seat: call})
    for i, card in enumerate(board["play"], 1):
        if state.phase != 1:
            raise ValueError(f"card {i} ({card}) comes before the auction is over or after trick 13")
        seat = state.to_act()[0]
        problem = state.why_illegal(seat, card)
        if problem:
            raise ValueError(f"card {i} ({card} from {rules.SEAT_NAMES[state.player]}'s hand): {problem}")
        state.apply({seat: card})
    return state


_CONTRACT = re.compile(r"([1-7])(C|D|H|S|NT?)(XX|X|)")


def _contract(text: str) -> str:
    """A contract as a file writes it (``4s``, ``3N``, ``6NTXX``, ``Pass``) in our form."""
    upper = text.strip().upper()
    if upper == "PASS":
        return "Pass"
    match = _CONTRACT.fullmatch(upper)
    if not match:
        raise ValueError(f"a contract is like 4S, 3NTX or Pass, got {text!r}")
    strain = "NT" if match.group(2).startswith("N") else match.group(2)
    return f"{match.group(1)}{strain}{match.group(3)}"


def _finish(board: dict, tricks_claimed: int | None, contract_given: str | None) -> dict:
    """Replay ``board`` and fill in ``contract``, ``declarer``, ``tricks`` and ``complete``
    (shape in :func:`read_boards`); check a contract and tricks the file states against it."""
    state = replay(board)
    record = state.board_records()[0] if state.is_terminal() else None
    auction_over = state.phase != 0 or record is not None
    if auction_over:
        contract = record["contract"] if record else state.contract()
        declarer = record["declarer"] if record else state.declarer
        board["contract"], board["declarer"] = contract, declarer
        if contract_given is not None and _contract(contract_given) != contract:
            raise ValueError(f"the Contract says {contract_given} but the auction ends in {contract}")
    else:
        board["contract"] = None if contract_given is None else _contract(contract_given)
        board["declarer"] = board.get("declarer")
    played = state.tricks_won[state.declarer & 1] if state.declarer >= 0 else None
    if record is not None:
        board["tricks"] = record["tricks"]
        if tricks_claimed is not None and record["tricks"] is not None and tricks_claimed != record["tricks"]:
            raise ValueError(f"the result says {tricks_claimed} tricks but the play gives declarer {record['tricks']}")
    elif tricks_claimed is not None:
        if played is not None and not played <= tricks_claimed <= played + 13 - len(state.tricks):
            raise ValueError(f"the result says {tricks_claimed} tricks, impossible after the tricks played")
        board["tricks"] = tricks_claimed
    else:
        board["tricks"] = None
    board["complete"] = record is not None
    return board


def read_boards(text: str) -> list[dict]:
    """Boards from a PBN or a LIN file (told apart by their first characters: LIN begins with
    a two-letter command and ``|``).  Each board is::

        {"board": the file's number (else its place, from 1), "engine_board": the number the
         rules engine replays it as (same dealer and vulnerability, :func:`replay`),
         "dealer": 0-3, "vulnerability": "None"/"NS"/"EW"/"Both",
         "hands": [[13 card names] x 4] (N, E, S, W), "names": [4 names] (N, E, S, W),
         "calls": ["1NT", "P", "X", ...], "play": ["SA", ...] (in the order played),
         "contract": "4SX"/"Pass"/None, "declarer": 0-3 or None,
         "tricks": declarer's side's tricks (from the play; from the file's Result or LIN
         claim when the play stops early) or None,
         "complete": True when the auction and play went to the end (or four passes),
         "event", "site", "date": text from PBN tags ("" if absent or LIN)}

    Raises ``ValueError`` with a message naming the board and line for anything malformed,
    illegal or past the bounds (module docstring)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark left by an editor
    _check_size(text)
    head = text.lstrip("\ufeff \t\r\n")[:3]
    if re.match(r"[A-Za-z]{2}\|", head):
        return read_lin(text)
    return read_pbn(text)


# --- import: PBN ----------------------------------------------------------------------------
# A tag: [Name "value"], the value with \" and \\ escapes (possessive: no backtracking).
_TAG = re.compile(r'\[\s*+([A-Za-z0-9_]++)\s++"((?:[^"\\]++|\\.)*+)"\s*+\]')
_KNOWN_TAGS = {"event", "site", "date", "board", "west", "north", "east", "south", "dealer", "vulnerable",
               "deal", "declarer", "contract", "result", "auction", "play"}


def _pbn_hand(text: str, where: str) -> list[str] | None:
    """One hand of a Deal tag (``AKQ.T98.J7.6543``, spades first), or None for ``-``."""
    if text == "-":
        return None
    suits = text.upper().split(".")
    if len(suits) != 4:
        raise ValueError(f"{where}: a hand is four suits separated by dots, got {text!r}")
    cards = []
    for suit, ranks in zip(_SUITS_PBN, suits):
        for rank in ranks.replace("10", "T"):
            if rank not in rules.RANK_LETTERS:
                raise ValueError(f"{where}: {rank!r} is not a rank (A K Q J T 9 ... 2)")
            cards.append(suit + rank)
    return cards


def _pbn_deal(value: str, where: str) -> list[list[str]]:
    first, sep, rest = value.strip().partition(":")
    if not sep or first.upper() not in ("N", "E", "S", "W"):
        raise ValueError(f"{where}: the Deal tag starts with the first hand's seat and a colon, e.g. \"N:\"")
    hands_text = rest.split()
    if len(hands_text) != 4:
        raise ValueError(f"{where}: the Deal tag needs four hands")
    start = "NESW".index(first.upper())
    hands: list[list[str] | None] = [None] * 4
    for i, hand in enumerate(hands_text):
        hands[(start + i) % 4] = _pbn_hand(hand, where)
    try:
        return _complete_hands(hands)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _seat(value: str, what: str, where: str) -> int:
    letter = value.strip()[:1].upper()
    if letter not in ("N", "E", "S", "W"):
        raise ValueError(f"{where}: {what} must be N, E, S or W, got {value!r}")
    return "NESW".index(letter)


def _section_tokens(lines: list[str]) -> list[str]:
    """The tokens of a section's lines: comments, notes (``=1=``), NAGs (``$1``) and the
    ``!``/``?`` suffixes dropped."""
    tokens = []
    for line in lines:
        for token in line.split():
            if token.startswith(("=", "$")):
                continue
            token = token.rstrip("!?")
            if token:
                tokens.append(token)
    return tokens


def _pbn_calls(lines: list[str], where: str) -> list[str]:
    calls = []
    for token in _section_tokens(lines):
        upper = token.upper()
        if upper == "AP":  # "all pass": the three passes that end the auction
            calls += ["P", "P", "P"]
        elif upper in ("*", "+", "-"):  # the auction stops (unknown or unfinished) here
            break
        else:
            try:
                calls.append(rules.parse_call(token))
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
    return calls


def _pbn_play(lines: list[str], leader_tag: str, board: dict, where: str) -> list[str]:
    """The Play section's cards in the order played: its rows give the cards by column (the
    seats clockwise from the Play tag's seat), and who leads each trick follows from the rules,
    so the board's state is replayed as the rows are read."""
    tokens = _section_tokens(lines)
    if not tokens:
        return []
    try:
        state = replay({**board, "play": []})
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if state.phase != 1:
        raise ValueError(f"{where}: a Play section needs an auction that ends in a contract")
    first = _seat(leader_tag, "the Play tag", where)
    if first != state.player:
        raise ValueError(f"{where}: the Play tag names {rules.SEAT_NAMES[first]} but "
                         f"{rules.SEAT_NAMES[state.player]} leads (declarer's left)")
    play: list[str] = []
    for row_start in range(0, len(tokens), 4):
        row = tokens[row_start:row_start + 4]
        if row[0] == "*":
            break
        by_seat = {(first + i) % 4: token for i, token in enumerate(row)}
        stop = False
        for _ in range(4):
            token = by_seat.get(state.player, "-")
            if token in ("-", "*", "+"):
                stop = True
                break
            try:
                card = rules.parse_card(token)
            except ValueError as exc:
                raise ValueError(f"{where}: trick {row_start // 4 + 1}: {exc}") from None
            seat = state.to_act()[0]
            problem = state.why_illegal(seat, card)
            if problem:
                raise ValueError(f"{where}: trick {row_start // 4 + 1}, {card} from "
                                 f"{rules.SEAT_NAMES[state.player]}'s hand: {problem}")
            state.apply({seat: card})
            play.append(card)
            if state.phase != 1:
                break
        if stop or state.phase != 1:
            break
    return play


def _inherit(value: str, previous: dict, key: str) -> str:
    """PBN's ``#``: the previous game's value of the tag."""
    return previous[key][0] if value == "#" and key in previous else value


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """``line`` without its comments (``{...}``, which may run on over lines, and ``;`` to the
    end of the line), quoted tag values left whole; returns the text and whether a ``{``
    comment is still open at the end."""
    out = []
    i, n, quoted = 0, len(line), False
    while i < n:
        ch = line[i]
        if in_comment:
            if ch == "}":
                in_comment = False
                out.append(" ")
        elif quoted:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(line[i + 1])
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == "{":
            in_comment = True
        elif ch == ";":
            break
        else:
            out.append(ch)
            quoted = ch == '"'
        i += 1
    return "".join(out), in_comment


def read_pbn(text: str) -> list[dict]:
    """Boards from a PBN file (shape and errors in :func:`read_boards`).  Reads the tags of
    the module docstring (others are skipped), ``%`` lines, ``;`` and ``{...}`` comments,
    ``#`` (the previous game's value), the Auction's ``AP`` and notes, the Play's ``-`` and ``*``; a blank
    line ends a game.  Dealer and Vulnerable default to the board number's (Law 2)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark left by an editor
    _check_size(text)
    games: list[tuple[int, dict]] = []
    tags: dict[str, tuple[str, list[str]]] = {}
    section: list[str] | None = None
    in_comment = False
    game_line = 0
    for number, raw in _lines(text):
        if raw.startswith("%") and not in_comment:
            continue
        if not raw.strip() and not in_comment:
            if tags:
                games.append((game_line, tags))
                if len(games) > MAX_BOARDS:
                    raise ValueError(f"the file has more than {MAX_BOARDS} boards")
            tags, section = {}, None
            continue
        line, in_comment = _strip_comments(raw, in_comment)
        line = line.strip()
        if not line:
            continue
        if line.startswith("["):
            found = list(_TAG.finditer(line))
            if not found or found[0].start() != 0:
                raise ValueError(f'line {number}: a tag is [Name "value"]')
            if not tags:
                game_line = number
            section = None
            for match in found:
                name = match.group(1).lower()
                if name not in _KNOWN_TAGS or name in tags:  # unknown or repeated: skipped
                    continue
                tags[name] = (re.sub(r"\\(.)", r"\1", match.group(2)), [])
                if name in ("auction", "play"):
                    section = tags[name][1]
            continue
        if section is None:
            raise ValueError(f'line {number}: expected a tag ([Name "value"]) or a blank line')
        if len(section) >= 100:
            raise ValueError(f"line {number}: an Auction or Play section has more than 100 lines")
        section.append(line)
    if tags:
        games.append((game_line, tags))
    if len(games) > MAX_BOARDS:
        raise ValueError(f"the file has more than {MAX_BOARDS} boards")
    if not games:
        raise ValueError("the file has no board (no PBN tags)")
    boards, previous = [], {}
    for place, (line_number, game) in enumerate(games, 1):
        boards.append(_pbn_board(game, previous, place, line_number))
        previous = game
    return boards


def _pbn_board(game: dict, previous: dict, place: int, line_number: int) -> dict:
    def value(key: str) -> str:
        return _inherit(game[key][0], previous, key).strip() if key in game else ""

    def text(key: str) -> str:  # free text; PBN's "?" is "unknown"
        return "" if value(key) == "?" else clean_name(value(key))[:MAX_TEXT]

    where = f"the board at line {line_number}"
    if "deal" not in game:
        raise ValueError(f"{where}: no Deal tag")
    number_text = value("board")
    if number_text:
        if not number_text.isdigit() or not 1 <= int(number_text) <= 100_000:
            raise ValueError(f"{where}: Board must be a number from 1 to 100000, got {number_text!r}")
        number = int(number_text)
    else:
        number = place
    where = f"board {number} (line {line_number})"
    dealer_text = value("dealer") or value("auction")
    dealer = _seat(dealer_text, "Dealer", where) if dealer_text not in ("", "?") else rules.board_dealer(number)
    vul_text = value("vulnerable")
    if vul_text not in ("", "?"):
        vulnerability = _VUL_FROM_PBN.get(vul_text.upper())
        if vulnerability is None:
            raise ValueError(f"{where}: Vulnerable must be None, NS, EW or All, got {vul_text!r}")
    else:
        vulnerability = rules.board_vulnerability(number)
    board = {
        "board": number, "engine_board": _engine_board(number, dealer, vulnerability),
        "dealer": dealer, "vulnerability": vulnerability,
        "hands": _pbn_deal(value("deal"), where),
        "names": [text(seat) for seat in ("north", "east", "south", "west")],
        "calls": [], "play": [], "declarer": None,
        "event": text("event"), "site": text("site"), "date": text("date"),
    }
    if "auction" in game:
        if _seat(value("auction"), "the Auction tag", where) != dealer:
            raise ValueError(f"{where}: the auction must start with the dealer ({rules.SEAT_NAMES[dealer]})")
        board["calls"] = _pbn_calls(game["auction"][1], where)
    contract_text = value("contract")
    contract = None if contract_text in ("", "?") else ("Pass" if contract_text.upper() == "PASS" else contract_text)
    declarer_text = value("declarer")
    declarer = _seat(declarer_text, "Declarer", where) if declarer_text not in ("", "?") else None
    result_text = value("result")
    tricks = None
    if result_text not in ("", "?") and contract != "Pass":
        if not result_text.isdigit() or int(result_text) > 13:
            raise ValueError(f"{where}: Result must be declarer's tricks, 0 to 13, got {result_text!r}")
        tricks = int(result_text)
    if "play" in game and game["play"][1]:
        board["play"] = _pbn_play(game["play"][1], value("play"), board, where)
    if not board["calls"]:
        board["declarer"] = declarer  # a contract without its auction: as the file says
    try:
        board = _finish(board, tricks, contract)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if board["calls"] and declarer is not None and board["declarer"] not in (None, declarer):
        raise ValueError(f"{where}: the Declarer tag says {declarer_text} but the auction makes "
                         f"{rules.SEAT_LETTERS[board['declarer']]} declarer")
    return board


# --- import: LIN ----------------------------------------------------------------------------
def _lin_hand(text: str, where: str) -> list[str] | None:
    """One LIN hand (``SAKQHT98DJ7C6543``) as card names, or None if empty (left out)."""
    if not text.strip():
        return None
    cards, suit = [], None
    for ch in text.strip().upper().replace("10", "T"):
        if ch in _SUITS_PBN:
            suit = ch
        elif ch in rules.RANK_LETTERS and suit is not None:
            cards.append(suit + ch)
        else:
            raise ValueError(f"{where}: {ch!r} in the hand {text!r} is neither a suit (S H D C) nor a rank")
    return cards


def _lin_commands(text: str):
    """``(command, value)`` pairs of LIN text, one at a time, line ends ignored (a value never
    spans lines, but BBO's files break lines between commands)."""
    flat = "".join(line for _, line in _lines(text))
    start = 0
    while True:
        bar = flat.find("|", start)
        if bar < 0:
            return
        end = flat.find("|", bar + 1)
        if end < 0:
            end = len(flat)
        yield flat[start:bar].strip().lower(), flat[bar + 1:end]
        start = end + 1


def read_lin(text: str) -> list[dict]:
    """Boards from a LIN file: a handviewer board or a file of many (shape and errors in
    :func:`read_boards`).  A board begins at ``qx``, or at ``pn`` or ``md`` once the board in
    hand has its deal (``md``).  ``pn`` with eight names (a match's two rooms) gives the open
    room's four to ``qx|o..`` boards and the closed room's to ``qx|c..``.  Dealer and
    vulnerability default to the board number's (Law 2); the fourth hand may be left out, as
    BBO leaves it.  Other commands (``st``, ``rh``, ``pg``, ``an``, ``nt``, ...) are skipped."""
    text = text.removeprefix("\ufeff")  # a byte-order mark left by an editor
    _check_size(text)
    raw_boards: list[dict] = []
    names: list[str] = []
    room = ""
    current: dict = {}

    def close() -> None:
        if "md" in current:
            raw_boards.append(dict(current))
            if len(raw_boards) > MAX_BOARDS:
                raise ValueError(f"the file has more than {MAX_BOARDS} boards")
        current.clear()

    for command, value in _lin_commands(text):
        if command in ("qx", "pn", "md") and "md" in current:
            close()
        if command == "pn":
            names = [clean_name(n)[:MAX_TEXT] for n in value.split(",")[:8]]
        elif command == "qx":
            room = value[:1].lower()
        elif command == "md":
            current.update(md=value, pn=names, room=room)
        elif command in ("sv", "ah", "mc"):
            current[command] = value
        elif command in ("mb", "pc"):
            moves = current.setdefault(command, [])
            if len(moves) >= (400 if command == "mb" else 52):  # an auction has at most 319 calls
                raise ValueError(f"board {len(raw_boards) + 1}: more {'calls' if command == 'mb' else 'cards'} "
                                 "than a board can have")
            moves.append(value)
    close()
    if not raw_boards:
        raise ValueError("the file has no board (no md| deal)")
    return [_lin_board(raw, place) for place, raw in enumerate(raw_boards, 1)]


def _lin_board(raw: dict, place: int) -> dict:
    heading = raw.get("ah", "")
    digits = re.search(r"\d{1,6}", heading)
    number = int(digits.group()) if digits and 1 <= int(digits.group()) <= 100_000 else place
    where = f"board {number}"
    deal = raw["md"].strip()
    dealer = None
    if deal[:1] in ("1", "2", "3", "4"):
        dealer, deal = _LIN_ORDER[int(deal[0]) - 1], deal[1:]
    hands_text = deal.split(",")
    if len(hands_text) > 4:
        raise ValueError(f"{where}: md has more than four hands")
    hands: list[list[str] | None] = [None] * 4
    for i, hand in enumerate(hands_text):
        hands[_LIN_ORDER[i]] = _lin_hand(hand, where)
    try:
        hands = _complete_hands(hands)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if dealer is None:
        dealer = rules.board_dealer(number)
    vul_text = raw.get("sv", "").strip().lower()
    if vul_text:
        vulnerability = _VUL_FROM_LIN.get(vul_text)
        if vulnerability is None:
            raise ValueError(f"{where}: sv must be o, n, e or b, got {vul_text!r}")
    else:
        vulnerability = rules.board_vulnerability(number)
    calls = []
    for value in raw.get("mb", []):
        call = value.strip().rstrip("!").strip()
        if not call or call == "-":
            continue
        try:
            calls.append(rules.parse_call({"p": "P", "d": "X", "r": "XX"}.get(call.lower(), call)))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    play = []
    for value in raw.get("pc", []):
        try:
            play.append(rules.parse_card(value))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    names = raw.get("pn") or []
    if len(names) > 4 and raw.get("room") == "c":
        names = names[4:]
    names = (list(names[:4]) + ["", "", "", ""])[:4]
    board = {
        "board": number, "engine_board": _engine_board(number, dealer, vulnerability),
        "dealer": dealer, "vulnerability": vulnerability, "hands": hands,
        "names": [names[_LIN_ORDER.index(seat)] for seat in range(4)],
        "calls": calls, "play": play, "event": "", "site": "", "date": "",
    }
    claim = raw.get("mc", "").strip()
    tricks = None
    if claim:
        if not claim.isdigit() or int(claim) > 13:
            raise ValueError(f"{where}: mc (a claim) must be declarer's tricks, 0 to 13, got {claim!r}")
        tricks = int(claim)
    try:
        return _finish(board, tricks, None)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


# --- import into a match --------------------------------------------------------------------
def match_import(boards: Sequence[dict]) -> dict:
    """Imported boards as what the arena stores a match from (``GameSpec.import_match``):
    ``{"config", "steps": [(seat, action)], "names"}``: a duplicate configuration whose
    preset ``deals`` are the boards (under their ``engine_board`` numbers) and every call and
    card as the seat in ``to_act`` (declarer for dummy's cards).  ``names`` are the first
    board's.  Raises ``ValueError`` for a board not played to the end (the engine has no
    claims) or without an auction."""
    deals, steps = [], []
    for board in boards:
        if not board["complete"]:
            raise ValueError(f"board {board['board']} was not played to the end (a claim or no play): "
                             "only complete boards replay here")
        deals.append({"board": board["engine_board"], "hands": board["hands"]})
        state = rules.new_state_from_deal(board["hands"], board["engine_board"])
        for action in [*board["calls"], *board["play"]]:
            seat = state.to_act()[0]
            steps.append((seat, action))
            state.apply({seat: action})
    if not deals:
        raise ValueError("no board to import")
    config = {"scoring": "duplicate", "board": deals[0]["board"], "boards": len(deals), "deals": deals}
    return {"config": config, "steps": steps, "names": list(boards[0]["names"])}
