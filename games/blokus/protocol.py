"""Blokus XML codec: the Software-Challenge 2021 protocol (``specs/blokus-xml.seed.md``, its
notes win) and the 2027 variant as the current official client ``socha`` 5.1 reads it.

Pure: no Django, no sockets.  Server -> client messages are bytes exactly as the official
server's XStream writer produced them; client -> server messages arrive as lxml elements (the
transport parses the stream) and become plain dicts; replay files go both ways.

The stream (XStream's ``PrettyPrintWriter`` under the root ``<protocol>``): the server writes
``<protocol>`` once (:data:`PROTOCOL_OPEN`); every message then starts on a new line indented
by two spaces, children two more per level, and no newline follows a message (the next one
brings its own); ``</protocol>`` closes the stream on a line of its own
(:data:`PROTOCOL_CLOSE`).  Empty elements are written ``<tag/>``.  Escaping as XStream:
``& < > " '`` and CR as entities, tab and newline as ``&#x9;``/``&#xa;`` inside attributes.
Characters XML 1.0 cannot carry at all become U+FFFD (XStream would write ``&#x1;``, which
no conforming parser reads).

2021 vs 2027 (server -> client), from the official sources (software-challenge/backend:
plugin2021 ``ConverterTest.kt``, plugin2027 ``ConverterTest.kt``, ``GameResultTest.kt``) and
what ``socha`` 5.1 parses (``api/protocol/protocol.py``, ``api/networking/utils.py``):

- memento state, 2021: ``<state class="state" turn round startPiece>`` with children
  ``startTeam`` (``<startTeam class="team">ONE</startTeam>``), ``blueShapes`` ..
  ``greenShapes``, ``validColors``, ``first``/``second`` (``displayName`` + ``<color
  class="team">``), ``board``, ``lastMove`` (absent before the first move), ``lastMoveMono``.
  2027: ``<state class="state" startTeam turn startPiece round>`` (``startTeam`` is an
  attribute, no ``first``/``second``), children ``lastMove``, ``board``, ``lastMoveMono``,
  the four shape lists, ``validColors``.  ``socha``'s parser fails on unknown elements, so a
  2027 memento must carry nothing else.
- MoveRequest: 2021 ``sc.framework.plugins.protocol.MoveRequest``, 2027 ``moveRequest``.
- move classes: ``sc.plugin2021.SetMove``/``SkipMove`` vs ``sc.plugin2027.*``; the same
  ``<piece color kind rotation isFlipped><position x y/></piece>`` and ``<color>`` inside.
- result, 2021: ``<definition>`` (fragments "Gewinner" SUM, "∅ Punkte" AVERAGE), one ``<score
  cause reason>`` of two ``<part>`` (win points, team points) per player, one ``<winner
  displayName><color class="team">`` per winner (both on a draw).  2027: fragments
  "Siegpunkte" and "Punkte", ``<scores>`` of ``<entry><player name team/><score><part/>..``
  (a player who forfeited scores all zeros), one ``<winner team regular reason/>`` (no
  ``team`` on a draw; ``regular="false"`` and the offence as reason after a forfeit).
- ``lastMoveMono`` entries: 2021 ``<entry><color>BLUE</color><boolean>true</boolean></entry>``.
  For 2027 the official server's test writes the same, but ``socha`` 5.1 expects
  ``<entry><sc.plugin2027.Color>BLUE</sc.plugin2027.Color>...`` ("UNBESTÄTIGT" in its
  source) and its parser raises an error on ``<color>`` there, ending the client; we write
  what socha reads.  It only appears once a colour has placed all 21 pieces.
- welcome, joined, left, prepared, observed, error, errorpacket, paused: the same both years.
- client side, ``socha`` 5.1 sends ``<join/>`` without a ``gameType`` (its ``Join`` has none),
  ``SkipMove`` with a ``<color>``, and closes with ``<close/>``.

The official 2021 server reports a hard timeout with cause ``SOFT_TIMEOUT`` (``Game.kt``);
we write ``HARD_TIMEOUT`` as the notes list it.
"""
from __future__ import annotations

import functools
import re
import uuid
from copy import deepcopy
from typing import Iterable, Mapping, Sequence

from lxml import etree

from games.base import Action, ProtocolError
from games.blokus import rules
from games.blokus.rules import COLORS, ROTATIONS, SHAPES, TEAMS

#: gameType on the wire -> rules variant.
GAME_TYPES = {"swc_2021_blokus": "2021", "swc_2027_blokus": "2027"}
#: rules variant -> gameType on the wire.
GAME_TYPE_OF = {variant: game_type for game_type, variant in GAME_TYPES.items()}

#: The first bytes the server sends on a connection (each message brings its own newline).
PROTOCOL_OPEN = b"<protocol>"
#: The last bytes the server sends before it closes a connection.
PROTOCOL_CLOSE = b"\n</protocol>"

#: The official score reasons per cause (plugin2021 ``Game.getScoreFor``); a rule violation's
#: reason is the mistake's own text.  The transport gives them with a forfeit.
OFFICIAL_REASONS = {
    "SOFT_TIMEOUT": "Der Spieler hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet",
    "HARD_TIMEOUT": "Der Spieler hat innerhalb von 10 Sekunden nach Aufforderung keinen Zug gesendet",
    "LEFT": "Der Spieler hat das Spiel verlassen",
}

_MOVE_PACKAGE = {"2021": "sc.plugin2021", "2027": "sc.plugin2027"}
_YEAR_OF_PACKAGE = {package: year for year, package in _MOVE_PACKAGE.items()}
_MOVE_REQUEST = {"2021": "sc.framework.plugins.protocol.MoveRequest", "2027": "moveRequest"}
_FRAGMENTS = {"2021": (("Gewinner", "SUM"), ("∅ Punkte", "AVERAGE")),
              "2027": (("Siegpunkte", "SUM"), ("Punkte", "AVERAGE"))}
_COLOR_OF_LETTER = {name[0]: name for name in COLORS}


# --- writing XML as XStream does ---------------------------------------------------------------

# An attribute name we write back (ASCII, no namespace).
_XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,60}")
# Characters XML 1.0 cannot carry, even as character references.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;",
                               "\r": "&#xd;"})
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;",
                               "\r": "&#xd;", "\t": "&#x9;", "\n": "&#xa;"})


# Text that needs no escaping (most of what we write: numbers, names of colours, pieces and
# classes): checking for it costs a quarter of escaping.
_PLAIN = re.compile(r"[\w .:/-]*", re.ASCII)


def _text(value) -> str:
    text = str(value)
    if _PLAIN.fullmatch(text):
        return text
    return _NOT_XML.sub("\ufffd", text).translate(_TEXT_ESCAPES)


def _attr(value) -> str:
    text = str(value)
    if _PLAIN.fullmatch(text):
        return text
    return _NOT_XML.sub("\ufffd", text).translate(_ATTR_ESCAPES)


class _El:
    """An element to write: tag, attributes in order, then either text or children."""

    __slots__ = ("tag", "attrs", "children", "text")

    def __init__(self, tag: str, attrs: Sequence[tuple[str, object]] = (), children: Sequence["_El"] = (),
                 text: str | None = None):
        self.tag, self.attrs, self.children, self.text = tag, attrs, children, text

    def lines(self, level: int, out: list[str]) -> list[str]:
        pad = "  " * level
        head = pad + _start_tag(self.tag, self.attrs)
        if self.text is not None:
            out.append(f"{head}>{_text(self.text)}</{self.tag}>")
        elif not self.children:
            out.append(head + "/>")
        else:
            out.append(head + ">")
            for child in self.children:
                child.lines(level + 1, out)
            out.append(f"{pad}</{self.tag}>")
        return out


def _start_tag(tag: str, attrs: Sequence[tuple[str, object]]) -> str:
    """``<tag k="v" ...`` without its closing ``>`` or ``/>``."""
    return "<" + tag + "".join([f' {k}="{_attr(_wire(v))}"' for k, v in attrs])


def _wire(value) -> str:
    """Python values as XStream writes them (booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _message(el: _El) -> bytes:
    """One message inside the ``<protocol>`` stream: newline, indented one level."""
    return ("\n" + "\n".join(el.lines(1, []))).encode("utf-8")


def _room(room_id: str, data: _El) -> _El:
    return _El("room", [("roomId", room_id)], [data])


# --- server -> client ------------------------------------------------------------------------

def joined(room_id: str) -> bytes:
    """``<joined roomId=".."/>``: a player's join was accepted (seed, "Spiel betreten")."""
    return _message(_El("joined", [("roomId", room_id)]))


def left(room_id: str) -> bytes:
    """``<left roomId=".."/>``: the room closed, sent after the result (seed, "Spiel verlassen")."""
    return _message(_El("left", [("roomId", room_id)]))


def welcome(room_id: str, seat: int) -> bytes:
    """The welcome message telling a player its team: seat 0 -> ``ONE``, seat 1 -> ``TWO``
    (notes: upper case, as the last 2021 releases and 2027 send it).  Raises ``IndexError``
    for a seat other than 0 or 1."""
    return _message(_room(room_id, _El("data", [("class", "welcomeMessage"), ("color", TEAMS[seat])])))


def memento(room_id: str, observation: Mapping, names: Sequence[str]) -> bytes:
    """The ``memento`` room message for a rules observation (contract shape); ``names`` are
    the display names of seat 0 and seat 1 (2021 writes them in ``first``/``second``).
    ``observation["variant"]`` chooses the 2021 or 2027 form (module docstring)."""
    return ("\n" + _memento_text(room_id, observation, names, 1)).encode("utf-8")


def move_request(room_id: str, variant: str) -> bytes:
    """The MoveRequest room message (2021 ``sc.framework.plugins.protocol.MoveRequest``,
    2027 ``moveRequest``).  Raises ``KeyError`` for an unknown variant."""
    return _message(_room(room_id, _El("data", [("class", _MOVE_REQUEST[variant])])))


def result(room_id: str, result: Mapping, names: Sequence[str], variant: str) -> bytes:
    """The ``result`` room message for a rules ``result()`` dict (contract shape) and the two
    seats' display names, in the variant's form (module docstring)."""
    return _message(_result_room(room_id, result, names, variant))


def error(room_id: str, message: str, action: Action, variant: str, hints: Iterable[str] = ()) -> bytes:
    """The ``error`` room message the offender and the observers get for an invalid move:
    ``<data class="error" message="..">`` echoing the move as ``<originalMessage
    class="sc.plugin20xx.SetMove">`` with its piece or colour and its ``hints`` as the client
    sent them (sc.protocol.room.ErrorMessage).  Raises ``ValueError`` for an action that is
    not a set or skip."""
    children = [_El("originalMessage", [("class", _move_class(action, variant))],
                    _move_children(action) + [_El("hint", [("content", h)]) for h in hints])]
    return _message(_room(room_id, _El("data", [("class", "error"), ("message", message)], children)))


def errorpacket(message: str, original=None) -> bytes:
    """``<errorpacket message="..">``: a request the server refuses (before it disconnects).

    ``original`` is the offending request as an lxml element: it is echoed as
    ``<originalRequest class="TAG" attr=".."/>`` (its tag and attributes, not its children),
    as the official ``ErrorPacket`` does.  Without it the packet is written empty (``socha``
    frames errorpackets by their end tag, so give one where there is one)."""
    children = []
    if original is not None:
        attrs = [("class", _local_name(original))]
        # Plain attribute names only: a namespaced one ("{uri}name") cannot be written back.
        attrs += [(k, v[:MAX_ID_LENGTH]) for k, v in list(original.attrib.items())[:10]
                  if k != "class" and _XML_NAME.fullmatch(k)]
        children.append(_El("originalRequest", attrs))
    return _message(_El("errorpacket", [("message", message)], children))


def prepared(room_id: str, codes: Sequence[str]) -> bytes:
    """The admin's reply to ``prepare``: the room and one reservation code per slot."""
    return _message(_El("prepared", [("roomId", room_id)], [_El("reservation", text=code) for code in codes]))


def observed(room_id: str) -> bytes:
    """``<observed roomId=".."/>``: the admin's reply to ``observe``."""
    return _message(_El("observed", [("roomId", room_id)]))


def joined_game_room(room_id: str, player_count: int) -> bytes:
    """``<joinedGameRoom roomId playerCount/>``, sent to admins when a player joins a room
    with a plain ``join`` (notes, "Admin")."""
    return _message(_El("joinedGameRoom", [("roomId", room_id), ("playerCount", int(player_count))]))


def paused(room_id: str, is_paused: bool) -> bytes:
    """``<data class="paused" paused=".."/>`` in a room message: observers learn that the
    room was paused or resumed (sc.protocol.room.GamePaused)."""
    return _message(_room(room_id, _El("data", [("class", "paused"), ("paused", bool(is_paused))])))


def move_message(room_id: str, action: Action, variant: str, hints: Iterable[str] = ()) -> bytes:
    """A client's move as a ``room`` message, in the seed's form (what a bot sends; the tests
    and scripted clients speak through it).  ``["skip", None]`` writes a SkipMove without
    ``<color>``.  Raises ``ValueError`` for an action that is not a set or skip."""
    children = _move_children(action) + [_El("hint", [("content", h)]) for h in hints]
    return _message(_room(room_id, _El("data", [("class", _move_class(action, variant))], children)))


def _move_class(action: Action, variant: str) -> str:
    verb = action[0] if isinstance(action, (list, tuple)) and action else None
    kind = {"set": "SetMove", "skip": "SkipMove"}.get(verb)
    if kind is None:
        raise ValueError(f"not a move: {action!r}")
    return f"{_MOVE_PACKAGE[variant]}.{kind}"


def _move_children(action: Action) -> list[_El]:
    """The inside of a SetMove (``<piece>``) or SkipMove (``<color>``, if known)."""
    if action[0] == "set":
        _, color, kind, rotation, flipped, x, y = action
        return [_El("piece", [("color", color), ("kind", kind), ("rotation", rotation), ("isFlipped", bool(flipped))],
                    [_El("position", [("x", x), ("y", y)])])]
    return [] if action[1] is None else [_El("color", text=action[1])]


# --- the memento, written from cached parts -------------------------------------------------
#
# A memento goes out after every move (to both players and every observer) and most of it is
# what the previous one said: the board but the rows the move covered, the unplaced pieces
# but one colour's, the names.  So it is put together from parts, each written once per
# (indentation, content) and then taken from a cache; only the state's opening tag is written
# anew every time.  Small or rare parts go through the element writer above; board rows, piece
# lists, the state's tag and the last placement (most of a memento, or new after every move)
# are written as lines of their fixed shape.  Writing a whole
# element tree per memento cost about 0.16 ms, the largest share of the server's time per move;
# this costs about 0.03 ms.  tests/test_blokus_memento.py holds the bytes to the plain writer's
# over whole games.

#: Parts kept written at most, per kind (a few hundred bytes each).  Only a running game's
#: current parts are read again (at most 20 rows, 4 piece lists, ...), so about a hundred games
#: at a time find theirs; beyond that the parts are written anew, at the old cost.
PART_CACHE_SIZE = 2048
_EMPTY_ROW = "." * rules.BOARD_SIZE


def _lines(level: int, elements: Iterable[_El]) -> str:
    """``elements`` written at ``level``, one string ("" for none)."""
    out: list[str] = []
    for el in elements:
        el.lines(level, out)
    return "\n".join(out)


def _team(tag: str, team: str) -> _El:
    return _El(tag, [("class", "team")], text=team)


def _last_move(action, variant: str) -> list[_El]:
    if not isinstance(action, (list, tuple)) or not action or action[0] not in ("set", "skip"):
        return []  # before the first move (a forfeit is not a move)
    return [_El("lastMove", [("class", _move_class(action, variant))], _move_children(action))]


@functools.lru_cache(maxsize=PART_CACHE_SIZE)
def _shapes_part(level: int, color: str, shapes: tuple[str, ...]) -> str:
    """``<blueShapes>`` etc.: a ``<shape>`` per unplaced piece (``<blueShapes/>`` for none)."""
    pad, tag = "  " * level, f"{color.lower()}Shapes"
    if not shapes:
        return f"{pad}<{tag}/>"
    shape_lines = _shape_lines(level + 1)
    return "\n".join([f"{pad}<{tag}>", *[shape_lines.get(s) or _shape_line(level + 1, s) for s in shapes],
                      f"{pad}</{tag}>"])


@functools.lru_cache(maxsize=8)
def _shape_lines(level: int) -> dict[str, str]:
    """The ``<shape>`` line of every shape at ``level``: a piece list misses its cache after
    every move of its colour, and its lines are always among these."""
    return {s: _shape_line(level, s) for s in SHAPES}


def _shape_line(level: int, shape: str) -> str:
    return f"{'  ' * level}<shape>{_text(shape)}</shape>"


@functools.lru_cache(maxsize=PART_CACHE_SIZE)
def _valid_colors_part(level: int, colors: tuple[str, ...]) -> str:
    return _lines(level, [_El("validColors", (), [_El("color", text=c) for c in colors])])


@functools.lru_cache(maxsize=PART_CACHE_SIZE)
def _players_part(level: int, names: tuple[str, ...]) -> str:
    """2021's ``first`` and ``second``: display name and team of seat 0 and seat 1."""
    return _lines(level, [_El(tag, [("displayName", names[seat])], [_team("color", TEAMS[seat])])
                          for seat, tag in enumerate(("first", "second"))])


def _last_move_part(level: int, action: tuple | None, variant: str) -> str:
    """``<lastMove class="..SetMove|..SkipMove">``, "" before the first move.  A placement of
    the rules' own names and whole numbers (every one a move writes) is written straight as
    its five lines: the part is new after every move, so no cache helps it."""
    if (isinstance(action, tuple) and len(action) == 7 and action[0] == "set"
            and action[1] in COLORS and action[2] in _SHAPE_SET and action[3] in ROTATIONS
            and isinstance(action[4], bool) and type(action[5]) is int and type(action[6]) is int):
        _, color, kind, rotation, flipped, x, y = action
        pad = "  " * level
        return (f'{pad}<lastMove class="{_MOVE_PACKAGE[variant]}.SetMove">\n'
                f'{pad}  <piece color="{color}" kind="{kind}" rotation="{rotation}" '
                f'isFlipped="{"true" if flipped else "false"}">\n'
                f'{pad}    <position x="{x}" y="{y}"/>\n{pad}  </piece>\n{pad}</lastMove>')
    return _lines(level, _last_move(action, variant))


_SHAPE_SET = frozenset(SHAPES)


@functools.lru_cache(maxsize=PART_CACHE_SIZE)
def _last_move_mono_part(level: int, entries: tuple[tuple[str, bool], ...], variant: str) -> str:
    """``entries``: ``(colour, whether its last piece was the MONO)`` per colour done."""
    # 2027: the entry's key as socha 5.1 reads it (module docstring); the 2027 server's own
    # test writes <color>, which socha's parser refuses with an error.
    key = "color" if variant == "2021" else "sc.plugin2027.Color"
    return _lines(level, [_El("lastMoveMono", (), [
        _El("entry", (), [_El(key, text=c), _El("boolean", text=_wire(bool(v)))]) for c, v in entries])])


@functools.lru_cache(maxsize=16)
def _team_part(level: int, team: str) -> str:
    """2021's ``<startTeam class="team">``."""
    return _lines(level, [_team("startTeam", team)])


def _board_part(level: int, rows: Sequence[str]) -> str:
    """``<board>``: a ``<field x y content/>`` per occupied cell, row by row (y, then x), as
    BoardConverter writes it; ``<board/>`` when empty.  ``rows``: the observation's 20
    strings of '.' or a colour's letter."""
    pad = "  " * level
    fields = [_row_part(level + 1, y, row) for y, row in enumerate(rows) if row != _EMPTY_ROW]
    fields = [f for f in fields if f]
    if not fields:
        return pad + "<board/>"
    return "\n".join([pad + "<board>", *fields, pad + "</board>"])


@functools.lru_cache(maxsize=PART_CACHE_SIZE)
def _row_part(level: int, y: int, row: str) -> str:
    """The ``<field>`` lines of board row ``y``; raises ``KeyError`` for a letter that is not
    a colour's."""
    pad = "  " * level
    return "\n".join([f'{pad}<field x="{x}" y="{y}" content="{_COLOR_OF_LETTER[ch]}"/>'
                      for x, ch in enumerate(row) if ch != "."])


def _memento_text(room_id: str, obs: Mapping, names: Sequence[str], level: int) -> str:
    """The memento ``<room>`` of an observation, written at ``level`` (1 in the stream, 0 in
    a replay file), in the variant's form (module docstring)."""
    variant = obs["variant"]
    pad, inner = "  " * level, level + 3  # the room's indentation, the state's children's level
    shapes = [_shapes_part(inner, c, tuple(obs["shapes"][c])) for c in COLORS]
    valid = _valid_colors_part(inner, tuple(obs["valid_colors"]))
    last = obs["last_move"]
    last_move = _last_move_part(inner, tuple(last) if isinstance(last, list) else last, variant)
    mono = _last_move_mono_part(inner, tuple(obs["last_move_mono"].items()), variant)
    board = _board_part(inner, obs["board"])
    turn, round_, start_piece, start_team = (_attr(_wire(obs[k])) for k in ("turn", "round", "start_piece", "start_team"))
    if variant == "2021":
        state = f'<state class="state" turn="{turn}" round="{round_}" startPiece="{start_piece}">'
        team = _team_part(inner, obs["start_team"])
        parts = [team, *shapes, valid, _players_part(inner, tuple(names)), board, last_move, mono]
    else:
        state = (f'<state class="state" startTeam="{start_team}" turn="{turn}" startPiece="{start_piece}" '
                 f'round="{round_}">')
        parts = [last_move, board, mono, *shapes, valid]
    return "\n".join([f'{pad}<room roomId="{_attr(room_id)}">', f'{pad}  <data class="memento">',
                      f"{pad}    {state}", *[p for p in parts if p],
                      f"{pad}    </state>", f"{pad}  </data>", f"{pad}</room>"])


def _definition(variant: str) -> _El:
    return _El("definition", (), [
        _El("fragment", [("name", name)],
            [_El("aggregation", text=aggregation), _El("relevantForRanking", text="true")])
        for name, aggregation in _FRAGMENTS[variant]])


def _result_room(room_id: str, res: Mapping, names: Sequence[str], variant: str) -> _El:
    win_points, scores, causes, reasons = res["win_points"], res["scores"], res["causes"], res["reasons"]
    winner = res["winner"]
    if variant == "2021":
        children = [_definition(variant)]
        children += [_El("score", [("cause", causes[s]), ("reason", reasons[s])],
                         [_El("part", text=str(win_points[s])), _El("part", text=str(scores[s]))]) for s in (0, 1)]
        # Game.getWinners: the one who did not forfeit, else the higher points, else both.
        winners = (0, 1) if winner is None else (winner,)
        children += [_El("winner", [("displayName", names[s])], [_El("color", [("class", "team")], text=TEAMS[s])])
                     for s in winners]
    else:
        entries = []
        for s in (0, 1):
            # TwoPlayerGame scores a player who forfeited with zeros (GameResultTest).
            parts = (0, 0) if causes[s] != "REGULAR" else (win_points[s], scores[s])
            player_attrs = ([("name", names[s])] if names[s].strip() else []) + [("team", TEAMS[s])]
            entries.append(_El("entry", (), [_El("player", player_attrs),
                                             _El("score", (), [_El("part", text=str(p)) for p in parts])]))
        children = [_definition(variant), _El("scores", (), entries), _winner_2027(winner, causes, reasons, names)]
    return _room(room_id, _El("data", [("class", "result")], children))


def _winner_2027(winner, causes, reasons, names) -> _El:
    """GameResultConverter: ``<winner team regular reason/>``; the reason names the winner
    (regular end) or the offender (Violation texts), by display name or else team."""
    if winner is None:
        return _El("winner", [("regular", True), ("reason", "Beide Spieler sind gleichauf")])
    loser = 1 - winner
    if causes[loser] == "REGULAR":
        name = names[winner].strip() or TEAMS[winner]
        return _El("winner", [("team", TEAMS[winner]), ("regular", True),
                              ("reason", f"{name} hat am meisten Punkte erzielt.")])
    name, reason = names[loser].strip() or TEAMS[loser], reasons[loser]
    text = {
        "RULE_VIOLATION": f"Regelverletzung von {name}: {reason}",
        "SOFT_TIMEOUT": f"{name} hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht.",
        "HARD_TIMEOUT": f"{name} hat innerhalb von 10 Sekunden nach Aufforderung keinen Zug gesendet.",
        "LEFT": f"{name} hat das Spiel verlassen: {reason}",
    }.get(causes[loser], reason)
    return _El("winner", [("team", TEAMS[winner]), ("regular", False), ("reason", text)])


# --- client -> server ------------------------------------------------------------------------

#: Debug hints kept per move at most, and characters kept per hint.
MAX_HINTS = 10
MAX_HINT_LENGTH = 200
#: Longest room id, reservation code or password accepted (characters).
MAX_ID_LENGTH = 200
#: Longest slot display name accepted (characters).
MAX_NAME_LENGTH = 100
#: Child elements looked at in one message at most (hints beyond MAX_HINTS are dropped).
MAX_CHILDREN = 100

_CLOSE_TAGS = ("close", "sc.protocol.CloseConnection", "sc.protocol.responses.CloseConnection")
_COORDINATE = re.compile(r"-?[0-9]{1,6}")


def _local_name(element) -> str:
    tag = element.tag
    if not isinstance(tag, str):  # comments and processing instructions
        return "#comment"
    return tag


def _required(element, name: str, limit: int = MAX_ID_LENGTH) -> str:
    value = element.get(name)
    if value is None:
        raise ProtocolError(f'<{_local_name(element)}> needs the attribute {name}="..."')
    if len(value) > limit:
        raise ProtocolError(f"<{_local_name(element)}> {name} is longer than {limit} characters")
    return value


def _boolean(element, name: str, default: bool) -> bool:
    value = element.get(name)
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise ProtocolError(f'<{_local_name(element)}> {name} must be "true" or "false", got {value[:30]!r}')
    return value.strip().lower() == "true"


def _elements(element) -> list:
    """The child elements (comments skipped), bounded."""
    children = [c for c in element.iterchildren() if isinstance(c.tag, str)]
    if len(children) > MAX_CHILDREN:
        raise ProtocolError(f"<{_local_name(element)}> has more than {MAX_CHILDREN} child elements")
    return children


def parse_message(element, variant: str | None = None) -> dict:
    """One complete top-level lxml element from a client as a dict.

    Results (``type`` first):

    - ``{"type": "join", "game_type": str | None, "key": str | None}`` (``socha`` 5.1 sends
      ``<join/>`` without a game type; an unknown game type is refused here; ``key``: a
      registered bot's key, an attribute the official server ignores, games/arena/bots/bot_keys.py),
    - ``{"type": "joinPrepared", "code": str}``, ``{"type": "joinRoom", "room_id": str,
      "key": str | None}``,
    - ``{"type": "authenticate", "password": str}``,
    - ``{"type": "prepare", "game_type": str, "pause": bool, "slots": [{"name": str,
      "can_timeout": bool, "reserved": bool}, {...}]}`` (exactly two slots; ``pause``
      defaults to false, ``canTimeout`` and ``reserved`` to true, ``displayName`` to ""),
    - ``{"type": "observe" | "step" | "cancel", "room_id": str}``,
      ``{"type": "pause", "room_id": str, "pause": bool}``,
    - ``{"type": "move", "room_id": str, "variant": "2021" | "2027", "action": action,
      "hints": [str, ...]}`` for a SetMove/SkipMove of either year (``variant`` given: only
      that year's classes); a SkipMove without ``<color>`` gives ``["skip", None]``: the
      transport puts in the current colour.  At most :data:`MAX_HINTS` hints of at most
      :data:`MAX_HINT_LENGTH` characters are kept;
    - ``{"type": "close"}`` for ``<close/>``, ``<sc.protocol.CloseConnection/>`` and
      ``<sc.protocol.responses.CloseConnection/>``.

    Whether a room id is the connection's room, and whether the move is legal, is the
    transport's and the rules' business.  Raises :class:`ProtocolError` naming what is wrong
    for anything else (unknown element or class, bad colour, shape, rotation or number,
    missing or overlong attribute, more than :data:`MAX_CHILDREN` child elements).
    """
    tag = _local_name(element)
    if tag in _CLOSE_TAGS:
        return {"type": "close"}
    if tag == "join":
        game_type = element.get("gameType")
        if game_type is not None and game_type not in GAME_TYPES:
            raise ProtocolError(f"unknown gameType {game_type[:60]!r}: this server plays {', '.join(GAME_TYPES)}")
        return {"type": "join", "game_type": game_type, "key": element.get("key")}
    if tag == "joinPrepared":
        return {"type": "joinPrepared", "code": _required(element, "reservationCode")}
    if tag == "joinRoom":
        return {"type": "joinRoom", "room_id": _required(element, "roomId"), "key": element.get("key")}
    if tag == "authenticate":
        return {"type": "authenticate", "password": _required(element, "password")}
    if tag in ("observe", "step", "cancel"):
        return {"type": tag, "room_id": _required(element, "roomId")}
    if tag == "pause":
        if element.get("pause") is None:
            raise ProtocolError('<pause> needs the attribute pause="true" or pause="false"')
        return {"type": "pause", "room_id": _required(element, "roomId"), "pause": _boolean(element, "pause", True)}
    if tag == "prepare":
        return _parse_prepare(element)
    if tag == "room":
        return _parse_room(element, variant)
    raise ProtocolError(f"unknown message <{tag[:60]}>: expected join, joinPrepared, joinRoom, room, "
                        "authenticate, prepare, observe, pause, step, cancel or close")


def _parse_prepare(element) -> dict:
    game_type = _required(element, "gameType")
    if game_type not in GAME_TYPES:
        raise ProtocolError(f"unknown gameType {game_type[:60]!r}: this server plays {', '.join(GAME_TYPES)}")
    slots = []
    for child in _elements(element):
        if _local_name(child) != "slot":
            raise ProtocolError(f"<prepare> may only contain <slot> elements, not <{_local_name(child)[:60]}>")
        name = child.get("displayName", "")
        if len(name) > MAX_NAME_LENGTH:
            raise ProtocolError(f"<slot> displayName is longer than {MAX_NAME_LENGTH} characters")
        slots.append({"name": name, "can_timeout": _boolean(child, "canTimeout", True),
                      "reserved": _boolean(child, "reserved", True)})
    if len(slots) != 2:
        raise ProtocolError(f"<prepare> needs exactly two <slot> elements (one per team), got {len(slots)}")
    return {"type": "prepare", "game_type": game_type, "pause": _boolean(element, "pause", False), "slots": slots}


def _parse_room(element, variant: str | None) -> dict:
    room_id = _required(element, "roomId")
    children = element if len(element) == 1 else _elements(element)
    if len(children) != 1 or _local_name(children[0]) != "data":
        raise ProtocolError('<room> must contain exactly one <data class="..."> element')
    data = children[0]
    cls = _required(data, "class")
    package, _, kind = cls.rpartition(".")
    year = _YEAR_OF_PACKAGE.get(package)
    if year is None or kind not in ("SetMove", "SkipMove"):
        years = [variant] if variant else list(_MOVE_PACKAGE)
        expected = " or ".join(f"{_MOVE_PACKAGE[v]}.SetMove/SkipMove" for v in years)
        raise ProtocolError(f"unknown move class {cls[:80]!r}: expected {expected}")
    if variant is not None and year != variant:
        raise ProtocolError(f"{cls} is a {year} move; this room plays {GAME_TYPE_OF[variant]} "
                            f"({_MOVE_PACKAGE[variant]}.SetMove/SkipMove)")
    hints, piece, color = [], None, None
    for child in _elements(data):
        name = _local_name(child)
        if name == "hint":
            if len(hints) < MAX_HINTS:
                hints.append((child.get("content") or "")[:MAX_HINT_LENGTH])
        elif name == "piece" and kind == "SetMove" and piece is None:
            piece = child
        elif name == "color" and kind == "SkipMove" and color is None:
            color = _enum((child.text or "").strip(), COLORS, "color")
        else:
            raise ProtocolError(f"unexpected <{name[:60]}> in {cls}")
    if kind == "SkipMove":
        action = ["skip", color]
    elif piece is None:
        raise ProtocolError(f'{cls} needs a <piece color kind rotation isFlipped><position x y/></piece>')
    else:
        action = _parse_piece(piece)
    return {"type": "move", "room_id": room_id, "variant": year, "action": action, "hints": hints}


def _enum(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise ProtocolError(f"unknown {what} {value[:40]!r}: expected one of {', '.join(allowed)}")
    return value


def _number(element, name: str) -> int:
    value = _required(element, name, 10).strip()
    if not _COORDINATE.fullmatch(value):
        raise ProtocolError(f"<{_local_name(element)}> {name} must be a whole number, got {value!r}")
    return int(value)


def _parse_piece(piece) -> list:
    get = piece.get
    color, kind, rotation, flipped = get("color"), get("kind"), get("rotation"), get("isFlipped", "false")
    if (color in _COLOR_SET and kind in _SHAPE_SET and rotation in _ROTATION_SET and flipped in _FLIPPED
            and len(piece) == 1 and piece[0].tag == "position"):  # what bots send: no check below fails
        x, y = piece[0].get("x"), piece[0].get("y")
        if x is not None and y is not None and _COORDINATE.fullmatch(x) and _COORDINATE.fullmatch(y):
            return ["set", color, kind, rotation, flipped == "true", int(x), int(y)]
    return _parse_piece_checked(piece)


_COLOR_SET, _ROTATION_SET, _FLIPPED = frozenset(COLORS), frozenset(ROTATIONS), {"true": True, "false": False}


def _parse_piece_checked(piece) -> list:
    """:func:`_parse_piece` with every check and its message (the fast path's fallback)."""
    color = _enum(_required(piece, "color", 20), COLORS, "color")
    kind = _enum(_required(piece, "kind", 20), SHAPES, "kind (shape)")
    rotation = _enum(_required(piece, "rotation", 20), ROTATIONS, "rotation")
    flipped = _boolean(piece, "isFlipped", False)
    children = _elements(piece)
    if len(children) != 1 or _local_name(children[0]) != "position":
        raise ProtocolError('<piece> must contain exactly one <position x=".." y=".."/>')
    return ["set", color, kind, rotation, flipped, _number(children[0], "x"), _number(children[0], "y")]


# --- replay files ----------------------------------------------------------------------------

#: Largest replay file read (characters).  A real game's file is under 1 MB.
MAX_REPLAY_CHARS = 8 * 1024 * 1024
#: Elements in one message (``<room>``) at most: a memento holds at most 400 board fields,
#: 84 unplaced shapes and about 20 others (a finished game's last memento, about 330).
MAX_ROOM_ELEMENTS = 1000
#: Room messages (mementos, the result, errors) in one replay at most: a game has at most
#: 4 * (ROUND_LIMIT + 2) = 108 turns, so at most 109 mementos; the rest is margin for the
#: repeats a paused game sends.
MAX_REPLAY_MESSAGES = 500
#: Elements in the whole file at most: a real game's file has 15,000 to 17,000 (109 full
#: mementos could not pass 56,000).
MAX_REPLAY_ELEMENTS = 100_000
MAX_REPLAY_DEPTH = 16
#: Characters fed to the XML parser at a time (what it may read ahead of the message in hand).
_REPLAY_CHUNK = 16 * 1024


def _replay_room_id(config: Mapping, seed: int) -> str:
    # A stable room id per match, shaped like the official server's UUIDs.
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"arena:blokus:{config.get('variant')}:{seed}"))


def export_replay(config: Mapping, seed: int, steps: Sequence[tuple[int, Action]], names: Sequence[str],
                  room_id: str | None = None) -> str:
    """The official replay file of a match (sc.framework.ReplayListener): ``<protocol>``, one
    ``<room>`` per memento as the observers got them (the first state, then the state after
    every move), the result if the game ended, ``</protocol>``; each room written from column
    0 and followed by a newline.  Computed by replaying ``steps`` (``[(seat, action)]``, a
    forfeit last) from ``(config, seed)``; ``names`` are the seats' display names.  Raises
    ``ValueError`` if a step does not replay."""
    state = rules.new_state(config, seed)
    room = room_id or _replay_room_id(config, seed)
    names = [str(n) for n in names]

    def block(el: _El) -> str:
        return "\n".join(el.lines(0, [])) + "\n"

    parts = ["<protocol>\n", _memento_text(room, state.public_observation(), names, 0) + "\n"]
    for number, (seat, action) in enumerate(steps, 1):
        if state.is_terminal():
            raise ValueError(f"step {number} comes after the end of the game")
        try:
            state.apply({seat: action})
        except ValueError as exc:
            raise ValueError(f"step {number} does not replay: {exc}") from None
        if not (isinstance(action, (list, tuple)) and action and action[0] == "forfeit"):
            parts.append(_memento_text(room, state.public_observation(), names, 0) + "\n")
    if state.is_terminal():
        parts.append(block(_result_room(room, state.result(), names, state.variant)))
    parts.append("</protocol>")
    return "".join(parts)


def _replay_rooms(text: str):
    """The replay's top-level messages one at a time, as ``(number, element)`` from 1, read
    incrementally with entities, DTDs and the network off.  Each message is freed once the
    caller has taken the next, so memory holds one message's elements, not the file's.
    Bounds: :data:`MAX_REPLAY_CHARS`, :data:`MAX_REPLAY_DEPTH`, :data:`MAX_ROOM_ELEMENTS`,
    :data:`MAX_REPLAY_MESSAGES`, :data:`MAX_REPLAY_ELEMENTS`, each counted as elements start,
    before they are kept.  Raises ``ValueError`` (not XML, a DOCTYPE, a root other than
    ``<protocol>``, a bound exceeded)."""
    if len(text) > MAX_REPLAY_CHARS:
        raise ValueError(f"the file is larger than {MAX_REPLAY_CHARS // (1024 * 1024)} MiB")
    if _declares_doctype(text):
        raise ValueError(_NO_DOCTYPE)
    parser = etree.XMLPullParser(events=("start", "end"), resolve_entities=False, no_network=True,
                                 load_dtd=False, huge_tree=False, remove_comments=True, remove_pis=True)
    depth = count = in_message = messages = 0
    try:
        for offset in range(0, len(text) or 1, _REPLAY_CHUNK):
            parser.feed(text[offset:offset + _REPLAY_CHUNK])
            for event, element in parser.read_events():
                if event == "end":
                    depth -= 1
                    if depth == 1:
                        yield messages, element
                        # Free this message and any before it (the parser may still refer
                        # to the element itself, so it stays, empty).
                        element.clear(keep_tail=False)
                        while element.getprevious() is not None:
                            del element.getparent()[0]
                    continue
                depth += 1
                count += 1
                in_message += 1
                if depth == 1:
                    if element.getroottree().docinfo.doctype:
                        raise ValueError(_NO_DOCTYPE)
                    if element.tag != "protocol":
                        raise ValueError(f"a replay file starts with <protocol>, not <{str(element.tag)[:40]}>")
                elif depth == 2:
                    messages, in_message = messages + 1, 1
                    if messages > MAX_REPLAY_MESSAGES:
                        raise ValueError(f"the file has more than {MAX_REPLAY_MESSAGES} messages")
                if depth > MAX_REPLAY_DEPTH:
                    raise ValueError(f"elements are nested deeper than {MAX_REPLAY_DEPTH} levels")
                if in_message > MAX_ROOM_ELEMENTS:
                    raise ValueError(f"message {messages} has more than {MAX_ROOM_ELEMENTS} elements")
                if count > MAX_REPLAY_ELEMENTS:
                    raise ValueError(f"the file has more than {MAX_REPLAY_ELEMENTS} elements")
        parser.close()
    except etree.XMLSyntaxError as exc:
        if exc.code == etree.ErrorTypes.ERR_RESOURCE_LIMIT:  # libxml2's own bounds, in our terms
            if "depth" in str(exc):
                raise ValueError(f"elements are nested deeper than {MAX_REPLAY_DEPTH} levels") from None
            raise ValueError("the file expands past what the XML reader takes (entities or sizes)") from None
        raise ValueError(f"not well-formed XML: {exc}") from None


_NO_DOCTYPE = ("the file has a DOCTYPE (XML entity or DTD declarations); a replay file has none, "
               "and one that expands entities is not read")


def _declares_doctype(text: str) -> bool:
    """Whether the prolog of the XML ``text`` (what comes before its first element: the XML
    declaration, comments, processing instructions) has a ``<!DOCTYPE``.  Checked before the
    parser sees it, as entity declarations are where an expansion bomb lives; a linear scan."""
    at = 1 if text.startswith("\ufeff") else 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if text.startswith("<?", at):
            end = text.find("?>", at + 2)
            at = end + 2
        elif text.startswith("<!--", at):
            end = text.find("-->", at + 4)
            at = end + 3
        else:
            return text.startswith("<!DOCTYPE", at)
        if end < 0:
            return False  # not well-formed: the parser says so


def _child(element, tag: str):
    found = element.find(tag)
    if found is None:
        raise ValueError(f"<{element.tag}> has no <{tag}>")
    return found


def _replay_move(el, what: str):
    """A ``lastMove`` element as ``(variant, action)``."""
    cls = el.get("class", "")
    package, _, kind = cls.rpartition(".")
    year = _YEAR_OF_PACKAGE.get(package)
    if year is None or kind not in ("SetMove", "SkipMove"):
        raise ValueError(f"{what}: unknown move class {cls[:80]!r}")
    try:
        if kind == "SetMove":
            return year, _parse_piece(_child(el, "piece"))
        return year, ["skip", _enum((_child(el, "color").text or "").strip(), COLORS, "color")]
    except ProtocolError as exc:
        raise ValueError(f"{what}: {exc}") from None


def _read_memento(state_el, number: int) -> dict:
    """A ``<state>`` element as ``{"variant", "turn", "start_piece", "board", "shapes",
    "valid_colors", "last_move", "names"}``.  Raises ``ValueError`` naming the memento."""
    what = f"memento {number}"
    try:
        turn = int(state_el.get("turn", ""))
        round_ = int(state_el.get("round", ""))
    except ValueError:
        raise ValueError(f"{what}: turn and round must be whole numbers") from None
    if not 0 <= turn <= 4 * (rules.ROUND_LIMIT + 2) or round_ != 1 + turn // 4:
        raise ValueError(f"{what}: turn {turn} and round {round_} do not fit together")
    variant = "2027" if state_el.get("startTeam") is not None else "2021"
    start_piece = state_el.get("startPiece")
    if start_piece not in SHAPES:
        raise ValueError(f"{what}: unknown startPiece {str(start_piece)[:20]!r}")
    board = [["."] * rules.BOARD_SIZE for _ in range(rules.BOARD_SIZE)]
    for field in _child(state_el, "board").iterchildren("field"):
        try:
            x, y = int(field.get("x", "")), int(field.get("y", ""))
        except ValueError:
            raise ValueError(f"{what}: a field's x and y must be whole numbers") from None
        content = field.get("content")
        if not (0 <= x < rules.BOARD_SIZE and 0 <= y < rules.BOARD_SIZE) or content not in COLORS:
            raise ValueError(f"{what}: bad field x={x} y={y} content={str(content)[:20]!r}")
        board[y][x] = content[0]
    shapes = {}
    for color in COLORS:
        listed = [(s.text or "").strip() for s in _child(state_el, f"{color.lower()}Shapes").iterchildren("shape")]
        if any(s not in SHAPES for s in listed):
            raise ValueError(f"{what}: unknown shape in {color.lower()}Shapes")
        shapes[color] = sorted(listed, key=SHAPES.index)
    valid = [(c.text or "").strip() for c in _child(state_el, "validColors")]
    last = state_el.find("lastMove")
    last_move = None
    if last is not None:
        year, last_move = _replay_move(last, what)
        if year != variant:
            raise ValueError(f"{what}: a {year} move in a {variant} state")
    names = None
    if variant == "2021":
        names = [(state_el.find(tag).get("displayName", "") if state_el.find(tag) is not None else "")
                 for tag in ("first", "second")]
    return {"variant": variant, "turn": turn, "start_piece": start_piece, "board": ["".join(r) for r in board],
            "shapes": shapes, "valid_colors": valid, "last_move": last_move, "names": names}


def _read_result(data, variant: str) -> dict:
    """A result ``<data>`` as ``{"causes", "reasons", "win_points", "points", "names"}``
    (``points`` None where the file gives none that count).  Raises ``ValueError``."""
    try:
        if variant == "2021":
            scores = data.findall("score")
            if len(scores) != 2:
                raise ValueError("the result needs two <score> elements")
            causes = [s.get("cause", "REGULAR") for s in scores]
            reasons = [s.get("reason", "") for s in scores]
            parts = [[int((p.text or "").strip()) for p in s.findall("part")] for s in scores]
            names = None
        else:
            entries = _child(data, "scores").findall("entry")
            if len(entries) != 2:
                raise ValueError("the result needs two <entry> elements")
            names = [_child(e, "player").get("name", "") for e in entries]
            parts = [[int((p.text or "").strip()) for p in _child(e, "score").findall("part")] for e in entries]
            causes, reasons = ["REGULAR", "REGULAR"], ["", ""]
            winner = data.find("winner")
            if winner is not None and winner.get("regular") == "false" and winner.get("team") in TEAMS:
                loser = 1 - TEAMS.index(winner.get("team"))
                causes[loser], reasons[loser] = _violation_of(winner.get("reason", ""))
    except ValueError as exc:
        raise ValueError(f"result: {exc}") from None
    if any(len(p) != 2 for p in parts):
        raise ValueError("result: every score has two parts (win points, points)")
    if any(c not in rules.CAUSES for c in causes):
        raise ValueError(f"result: unknown cause in {causes}")
    return {"causes": causes, "reasons": reasons, "win_points": [p[0] for p in parts],
            "points": [p[1] for p in parts], "names": names}


def _violation_of(text: str) -> tuple[str, str]:
    """A 2027 winner reason after a forfeit as ``(cause, reason)`` (sc.shared.Violation)."""
    if text.startswith("Regelverletzung von ") and ": " in text:
        return "RULE_VIOLATION", text.split(": ", 1)[1]
    if "laenger als" in text:
        return "SOFT_TIMEOUT", OFFICIAL_REASONS["SOFT_TIMEOUT"]
    if "keinen Zug gesendet" in text:
        return "HARD_TIMEOUT", OFFICIAL_REASONS["HARD_TIMEOUT"]
    if "hat das Spiel verlassen" in text:
        return "LEFT", text.split(": ", 1)[1] if ": " in text else OFFICIAL_REASONS["LEFT"]
    return "RULE_VIOLATION", text


def _check_memento(state, memento: dict, number: int) -> None:
    """Refuse a memento that is not the rules' state after the same moves."""
    obs = state.public_observation()
    what = f"memento {number} (turn {memento['turn']})"
    if memento["turn"] != obs["turn"]:
        raise ValueError(f"{what}: the rules' replay is at turn {obs['turn']}")
    for y, (theirs, ours) in enumerate(zip(memento["board"], obs["board"])):
        if theirs != ours:
            x = next(i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b)
            raise ValueError(f"{what}: the board differs from the rules' replay at x={x} y={y}")
    if memento["shapes"] != obs["shapes"]:
        raise ValueError(f"{what}: the unplaced pieces differ from the rules' replay")
    if memento["valid_colors"] != obs["valid_colors"]:
        raise ValueError(f"{what}: validColors {memento['valid_colors']} differ from the rules' "
                         f"{obs['valid_colors']}")


def infer_last_move(state, points: Sequence[int]) -> Action | None:
    """The move that ended the game when a replay has no memento after it (the 2021 server
    sends none once the game is over): the only legal action of the seat to act in ``state``
    after which the game is over with team ``points`` ``[ONE, TWO]`` (the result's), else
    None (no such action, or several)."""
    seat = state.to_act()[0]
    found = []
    for action in state.legal_actions(seat):
        after = state.clone()
        after.apply({seat: action})
        if after.is_terminal() and after.team_points() == list(points):
            found.append(action)
            if len(found) > 1:
                return None
    return found[0] if found else None


def _start_of(first: dict) -> tuple[dict, object]:
    """``(config, state)``: the configuration and the rules' state at the start of the game
    memento ``first`` shows, checked against it.  Raises ``ValueError`` if it is not a
    game's first state."""
    if first["turn"] != 0 or first["last_move"] is not None:
        raise ValueError("the first memento must be the start of the game (turn 0, no lastMove)")
    try:
        config = rules.normalize_config({"variant": first["variant"], "start_piece": first["start_piece"]})
    except ValueError as exc:
        raise ValueError(f"memento 1: {exc}") from None
    state = rules.new_state(config, 0)
    _check_memento(state, first, 1)
    return config, state


def _follow(state, steps: list, first: dict, previous: dict, memento: dict, number: int) -> dict:
    """Apply the move memento ``number`` shows after ``previous`` to ``state`` (appending it to
    ``steps``) and check the memento against the rules' replay; returns the memento to compare
    the next one with.  A repeat of ``previous`` (a paused game sends its state again) is
    skipped.  Raises ``ValueError`` naming the memento."""
    if memento["variant"] != first["variant"] or memento["start_piece"] != first["start_piece"]:
        raise ValueError(f"memento {number}: variant or start piece changes within the game")
    if (memento["turn"], memento["board"], memento["last_move"]) == (
            previous["turn"], previous["board"], previous["last_move"]):
        return previous
    action = memento["last_move"]
    if action is None:
        raise ValueError(f"memento {number}: no lastMove after turn 0")
    if state.is_terminal():
        raise ValueError(f"memento {number}: the game was already over")
    seat = COLORS.index(action[1]) % 2
    try:
        state.apply({seat: action})
    except ValueError as exc:
        raise ValueError(f"memento {number}: {action!r} does not replay: {exc}") from None
    steps.append((seat, action))
    _check_memento(state, memento, number)
    return memento


def import_replay(text: str) -> dict:
    """A replay file, ours or the official server's (2021 or 2027), as a match to store:
    ``{"config": {"variant", "start_piece"}, "steps": [(seat, action)], "names": [2 str] |
    None, "date": None}`` (``GameSpec.import_match``).

    Moves come from consecutive mementos' ``lastMove`` (a repeated memento, as a paused game
    sends, is skipped); every memento is checked against the rules' replay (turn, board,
    unplaced pieces, valid colours) as it is read, and only the moves are kept (memory in
    proportion to the game, whatever the file holds).  A game the result ends with a rule
    violation, timeout or departure gets that forfeit as its last step.  When the
    game-ending move has no memento (the 2021 server sends none), it is recovered if exactly
    one legal move ends the game with the result's points; otherwise the match is stored as
    it stands (incomplete).  Raises ``ValueError`` saying what is wrong: not XML, bounds
    exceeded (:func:`_replay_rooms`), unknown elements or values, a memento or result
    inconsistent with the rules."""
    first = previous = config = state = result_data = None
    steps: list[tuple[int, Action]] = []
    mementos = 0
    for number, room in _replay_rooms(text):
        if not isinstance(room.tag, str):
            continue
        if room.tag != "room":
            raise ValueError(f"message {number}: expected <room>, got <{room.tag[:40]}>")
        data = _child(room, "data")
        cls = data.get("class")
        if cls == "memento":
            mementos += 1
            memento = _read_memento(_child(data, "state"), mementos)
            if first is None:
                first = previous = memento
                config, state = _start_of(first)
            else:
                previous = _follow(state, steps, first, previous, memento, mementos)
        elif cls == "result":
            if result_data is not None:
                raise ValueError("the file has two results")
            result_data = deepcopy(data)  # read once the variant is known; at most MAX_ROOM_ELEMENTS
        elif cls in ("error", "paused", "welcomeMessage") or cls in _MOVE_REQUEST.values():
            continue  # not part of the game's course
        else:
            raise ValueError(f"message {number}: unknown data class {str(cls)[:60]!r}")
    if first is None:
        raise ValueError("the file has no memento (no <data class=\"memento\">)")
    variant = first["variant"]
    final = _read_result(result_data, variant) if result_data is not None else None
    if final is not None and not state.is_terminal():
        offenders = [s for s in (0, 1) if final["causes"][s] != "REGULAR"]
        if offenders:
            to_move = state.to_act()[0]
            seat = offenders[0]
            # Only leaving can end a game out of turn (a player who disconnects loses at once).
            if len(offenders) > 1 or (seat != to_move and final["causes"][seat] != "LEFT"):
                raise ValueError(f"result: team {TEAMS[seat]} lost by {final['causes'][seat]} "
                                 f"while team {TEAMS[to_move]} was to move")
            action = ["forfeit", final["causes"][seat], final["reasons"][seat] or OFFICIAL_REASONS.get(
                final["causes"][seat], "")]
            state.apply({seat: action})
            steps.append((seat, action))
        else:
            action = infer_last_move(state, final["points"])
            if action is not None:
                seat = state.to_act()[0]
                state.apply({seat: action})
                steps.append((seat, action))
    if final is not None and state.is_terminal():
        ours = state.result()
        if ours["win_points"] != final["win_points"]:
            raise ValueError(f"result: win points {final['win_points']} differ from the rules' {ours['win_points']}")
        if "REGULAR" == final["causes"][0] == final["causes"][1] and ours["scores"] != final["points"]:
            raise ValueError(f"result: points {final['points']} differ from the rules' {ours['scores']}")
    names = first["names"] or (final or {}).get("names")
    if names and any(n.strip() for n in names):
        names = [n.strip()[:40] or f"Team {TEAMS[i]}" for i, n in enumerate(names)]
    else:
        names = None
    return {"config": config, "steps": steps, "names": names, "date": None}
