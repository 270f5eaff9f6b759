"""Blokus as the Software-Challenge plays it: 2021 (swc_2021_blokus) and the 2027 variant.

Pure Python, no Django.  Spec: ``shared/specs/blokus-xml.notes.md`` section "Rules" (where it
and the seed disagree the notes win), checked against the official 2021 server
(software-challenge/backend, plugin2021 ``GameState.kt``, ``GameRuleLogic.kt``, ``Game.kt``):

- Board 20x20, x right, y down, (0, 0) top-left.  Colours move in the order BLUE, YELLOW,
  RED, GREEN; seat 0 (team ONE) plays BLUE and RED, seat 1 (team TWO) YELLOW and GREEN.
- ``turn`` counts moves from 0; the colour to move is ``COLORS[turn % 4]`` and
  ``round = 1 + turn // 4``.  After a move the turn advances to the next colour still in
  ``validColors`` (dropped colours' turn numbers are passed over but still count).
- After every move: if ``round > 25`` the valid colours are cleared (game over); then, while
  the colour to move has no legal SetMove it is dropped from ``validColors`` and the turn
  advances again (``GameRuleLogic.removeInvalidColors``).  The game is over when no colour is
  valid or ``round > 25``.
- A colour's first move (it still has all 21 pieces) must place the start piece: covering one
  of the four board corners (2021) or touching the border (2027).  Later moves place an
  unplaced piece on free cells, sharing no edge with the own colour and at least one corner
  with it.  Skipping is legal after the colour's first move.
- Points per colour: 89 minus the squares of its unplaced pieces; 104 (89 + 15) when all are
  placed, 109 if the last one was the MONO.  Team points are the sum over its two colours;
  win points 2 / 1 / 0.

The 2027 variant (swc_2027_blokus) differs only where ``socha`` 5.1's engine does, found by
calling it (``from socha import _socha``) and by playing random games through it in lockstep
with this module (tests/test_blokus_rules.py keeps doing so): the first move must touch the
border (``NotOnBorder``) instead of covering a corner; the start piece may be any pentomino,
PENTO_X included; ``GameState.is_over()`` holds from round 25 on (turn 96), so 24 rounds are
played; the valid colours are not cleared at that limit (plugin2027 ``Game.kt``).  Everything
else (transformations, skip and drop rules, turn bookkeeping, points) is the same.

Legal-move generation works on bitboards: Python ints with one bit per cell, rows padded to a
stride of 21 bits so that shifting a board by one column never wraps into the next row (the
padding column 20 is never a board cell).  Each piece variant (a distinct rotation/flip) is a
set of bit offsets from its anchor (the top-left of its bounding box, the wire's
``position``); the anchors where a variant fits are computed for every position at once by
AND-ing shifted copies of the colour's free-cell board.
"""
from __future__ import annotations

import functools
import random
from typing import Any, Mapping, NamedTuple

from games.base import Action, State

COLORS = ("BLUE", "YELLOW", "RED", "GREEN")
TEAMS = ("ONE", "TWO")
SHAPES = ("MONO", "DOMINO", "TRIO_L", "TRIO_I", "TETRO_O", "TETRO_T", "TETRO_I", "TETRO_L", "TETRO_Z",
          "PENTO_L", "PENTO_T", "PENTO_V", "PENTO_S", "PENTO_Z", "PENTO_I", "PENTO_P", "PENTO_W",
          "PENTO_U", "PENTO_R", "PENTO_X", "PENTO_Y")
ROTATIONS = ("NONE", "RIGHT", "MIRROR", "LEFT")
VARIANTS = ("2021", "2027")
CAUSES = ("REGULAR", "LEFT", "RULE_VIOLATION", "SOFT_TIMEOUT", "HARD_TIMEOUT")

SET, SKIP, FORFEIT = "set", "skip", "forfeit"
BOARD_SIZE = 20
STRIDE = BOARD_SIZE + 1           # bits per row: 20 cells + 1 padding bit that is never a cell
ROUND_LIMIT = 25                  # Constants.ROUND_LIMIT: the game ends when round > 25
MAX_REASON = 200                  # characters of a forfeit's public reason

#: Normalised cells of each shape, (x, y), in the notes' order (section Rules, "Shapes").
SHAPE_CELLS: dict[str, tuple[tuple[int, int], ...]] = {
    "MONO": ((0, 0),),
    "DOMINO": ((0, 0), (1, 0)),
    "TRIO_L": ((0, 0), (0, 1), (1, 1)),
    "TRIO_I": ((0, 0), (0, 1), (0, 2)),
    "TETRO_O": ((0, 0), (1, 0), (0, 1), (1, 1)),
    "TETRO_T": ((0, 0), (1, 0), (2, 0), (1, 1)),
    "TETRO_I": ((0, 0), (0, 1), (0, 2), (0, 3)),
    "TETRO_L": ((0, 0), (0, 1), (0, 2), (1, 2)),
    "TETRO_Z": ((0, 0), (1, 0), (1, 1), (2, 1)),
    "PENTO_L": ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3)),
    "PENTO_T": ((0, 0), (1, 0), (2, 0), (1, 1), (1, 2)),
    "PENTO_V": ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2)),
    "PENTO_S": ((1, 0), (2, 0), (3, 0), (0, 1), (1, 1)),
    "PENTO_Z": ((0, 0), (1, 0), (1, 1), (1, 2), (2, 2)),
    "PENTO_I": ((0, 0), (0, 1), (0, 2), (0, 3), (0, 4)),
    "PENTO_P": ((0, 0), (1, 0), (0, 1), (1, 1), (0, 2)),
    "PENTO_W": ((0, 0), (0, 1), (1, 1), (1, 2), (2, 2)),
    "PENTO_U": ((0, 0), (0, 1), (1, 1), (2, 1), (2, 0)),
    "PENTO_R": ((0, 1), (1, 1), (1, 2), (2, 1), (2, 0)),
    "PENTO_X": ((1, 0), (0, 1), (1, 1), (2, 1), (1, 2)),
    "PENTO_Y": ((0, 1), (1, 0), (1, 1), (1, 2), (1, 3)),
}
SHAPE_SIZE = tuple(len(SHAPE_CELLS[s]) for s in SHAPES)
SHAPE_INDEX = {s: i for i, s in enumerate(SHAPES)}
COLOR_INDEX = {c: i for i, c in enumerate(COLORS)}
ALL_SHAPES = (1 << len(SHAPES)) - 1   # bit i set = SHAPES[i] not yet placed
SUM_MAX_SQUARES = 89                  # GameRuleLogic.SUM_MAX_SQUARES
ALL_PLACED_BONUS = 15
MONO_LAST_BONUS = 5
PENTOMINOES = tuple(s for s in SHAPES if len(SHAPE_CELLS[s]) == 5)


def _bit(x: int, y: int) -> int:
    return 1 << (y * STRIDE + x)


#: Every board cell; the padding column and everything past row 19 are outside.
BOARD_MASK = sum(_bit(x, y) for y in range(BOARD_SIZE) for x in range(BOARD_SIZE))
CORNER_CELLS = _bit(0, 0) | _bit(BOARD_SIZE - 1, 0) | _bit(0, BOARD_SIZE - 1) | _bit(BOARD_SIZE - 1, BOARD_SIZE - 1)
BORDER_CELLS = sum(_bit(x, y) for y in range(BOARD_SIZE) for x in range(BOARD_SIZE)
                   if x in (0, BOARD_SIZE - 1) or y in (0, BOARD_SIZE - 1))


#: The official texts of a refused move (plugin2021 ``MoveMistake``; 2027: socha 5.1's
#: exceptions, identical but for NOT_ON_BORDER).  GAME_OVER is ours: the server never asks then.
MOVE_MISTAKES = {
    "WRONG_COLOR": "Die Farbe des Zuges ist nicht an der Reihe",
    "NOT_IN_CORNER": "Der erste Zug muss auf eine freie Ecke gesetzt werden",
    "NOT_ON_BORDER": "Der erste Zug muss an den Rand gesetzt werden",
    "NO_SHARED_CORNER": "Alle Teile müssen ein vorheriges Teil gleicher Farbe über mindestens eine Ecke berühren",
    "WRONG_SHAPE": "Der erste Zug muss den festgelegten Spielstein setzen",
    "SKIP_FIRST_TURN": "Der erste Zug muss einen Stein setzen",
    "DUPLICATE_SHAPE": "Der gewählte Stein wurde bereits gesetzt",
    "OUT_OF_BOUNDS": "Der Spielstein passt nicht vollständig auf das Spielfeld",
    "OBSTRUCTED": "Der Spielstein würde eine andere Farbe überlagern",
    "TOUCHES_SAME_COLOR": "Der Spielstein berührt ein Feld gleicher Farbe",
    "INVALID_FORMAT": "Der Zug konnte nicht erkannt werden",
    "GAME_OVER": "Das Spiel ist bereits beendet",
}


class VariantRules(NamedTuple):
    """What differs between the 2021 and 2027 rules (module docstring)."""
    start_cells: int                 # a first move must cover one of these cells
    start_pieces: tuple[str, ...]    # the start piece is drawn from these
    start_mistake: str               # the MOVE_MISTAKES kind of a first move off the start cells
    last_round: int                  # the game is over once round > last_round
    clear_at_limit: bool             # past the last round validColors is emptied (2021 server)
    game_type: str                   # the wire's gameType


VARIANT_RULES = {
    # 2021: cover one of the four corners (GameRuleLogic.isOnCorner); any pentomino but X.
    "2021": VariantRules(CORNER_CELLS, tuple(s for s in PENTOMINOES if s != "PENTO_X"), "NOT_IN_CORNER",
                         ROUND_LIMIT, True, "swc_2021_blokus"),
    # 2027: touch the border (socha's NotOnBorder); PENTO_X may be the start piece too
    # (backend's getRandomStartPentomino: "in contrast to the 2021 implementation");
    # socha's GameState.is_over() is true from round 25 on (turn 96), so 24 rounds are
    # played; the colours are not cleared at the limit (plugin2027 Game.onRoundBasedAction).
    "2027": VariantRules(BORDER_CELLS, PENTOMINOES, "NOT_ON_BORDER", ROUND_LIMIT - 1, False,
                         "swc_2027_blokus"),
}


# --- pieces -------------------------------------------------------------------------------

def _transform(cells, rotation: str, flipped: bool) -> tuple[tuple[int, int], ...]:
    """The seed's transformation: rotate about the origin, then (if flipped) mirror
    (x, y) -> (-x, y), then normalise to the top-left.  Returns sorted cells (by y, x)."""
    if rotation == "NONE":
        out = [(x, y) for x, y in cells]
    elif rotation == "RIGHT":
        out = [(-y, x) for x, y in cells]
    elif rotation == "MIRROR":
        out = [(-x, -y) for x, y in cells]
    elif rotation == "LEFT":
        out = [(y, -x) for x, y in cells]
    else:
        raise ValueError(f"unknown rotation {rotation!r}; expected one of {', '.join(ROTATIONS)}")
    if flipped:
        out = [(-x, y) for x, y in out]
    min_x = min(x for x, _ in out)
    min_y = min(y for _, y in out)
    return tuple(sorted(((x - min_x, y - min_y) for x, y in out), key=lambda c: (c[1], c[0])))


class PieceVariant(NamedTuple):
    """One distinct orientation of a shape, spelled canonically (the first (rotation,
    flipped) in ROTATIONS x (False, True) order that gives these cells)."""
    shape: int                       # index into SHAPES
    rotation: str
    flipped: bool
    cells: tuple[tuple[int, int], ...]   # normalised (dx, dy), sorted by (dy, dx)
    width: int
    height: int
    offsets: tuple[int, ...]         # bit offsets of the cells from the anchor
    mask: int                        # the cells as a bitboard with the anchor at (0, 0)
    fit: int                         # anchors (bits) where the bounding box stays on the board


def _build_variants():
    by_shape: list[tuple[PieceVariant, ...]] = []
    spelling: dict[tuple[int, str, bool], PieceVariant] = {}
    for s, name in enumerate(SHAPES):
        found: dict[tuple, PieceVariant] = {}
        for rotation in ROTATIONS:
            for flipped in (False, True):
                cells = _transform(SHAPE_CELLS[name], rotation, flipped)
                if cells not in found:
                    width = 1 + max(x for x, _ in cells)
                    height = 1 + max(y for _, y in cells)
                    offsets = tuple(y * STRIDE + x for x, y in cells)
                    fit = sum(_bit(x, y) for y in range(BOARD_SIZE - height + 1)
                              for x in range(BOARD_SIZE - width + 1))
                    found[cells] = PieceVariant(s, rotation, flipped, cells, width, height, offsets,
                                                sum(1 << o for o in offsets), fit)
                spelling[(s, rotation, flipped)] = found[cells]
        by_shape.append(tuple(found.values()))
    return tuple(by_shape), spelling


#: ``PIECE_VARIANTS[shape index]``: the distinct orientations (91 in all).
#: ``_SPELLING[(shape index, rotation, flipped)]``: the orientation any spelling gives.
PIECE_VARIANTS, _SPELLING = _build_variants()


def piece_cells(kind: str, rotation: str, flipped: bool, x: int, y: int) -> list[tuple[int, int]]:
    """Board cells ``[(x, y), ...]`` of a piece ``kind`` turned by ``rotation``, mirrored if
    ``flipped``, with the top-left of its bounding box at ``(x, y)`` (seed, "Spielstein
    Transformationen").  Cells may lie off the board; callers check.  Raises ``ValueError``
    on an unknown kind or rotation or a non-bool ``flipped``."""
    if kind not in SHAPE_INDEX:
        raise ValueError(f"unknown piece kind {kind!r}")
    if rotation not in ROTATIONS:
        raise ValueError(f"unknown rotation {rotation!r}; expected one of {', '.join(ROTATIONS)}")
    if not isinstance(flipped, bool):
        raise ValueError(f"flipped must be true or false, got {flipped!r}")
    variant = _SPELLING[(SHAPE_INDEX[kind], rotation, flipped)]
    return [(x + dx, y + dy) for dx, dy in variant.cells]


def piece_mask(kind: str, rotation: str, flipped: bool, x: int, y: int) -> int:
    """The cells of :func:`piece_cells` as a bitboard (bit ``y * STRIDE + x`` per cell).
    Raises ``ValueError`` like :func:`piece_cells`, and when the piece leaves the board."""
    cells = piece_cells(kind, rotation, flipped, x, y)   # validates the names
    variant = _SPELLING[(SHAPE_INDEX[kind], rotation, flipped)]
    if type(x) is not int or type(y) is not int or x < 0 or y < 0 \
            or x + variant.width > BOARD_SIZE or y + variant.height > BOARD_SIZE:
        raise ValueError(f"{kind} at ({x!r}, {y!r}) does not fit on the board: {cells}")
    return variant.mask << (y * STRIDE + x)


def cell_bit(x: int, y: int) -> int:
    """The bitboard with only cell (x, y) set (0 <= x, y < 20; not checked)."""
    return _bit(x, y)


# --- bitboard helpers -------------------------------------------------------------------------

def edge_neighbours(board: int) -> int:
    """Cells sharing an edge with a cell of ``board`` (wraps land in padding; masked)."""
    return ((board << 1) | (board >> 1) | (board << STRIDE) | (board >> STRIDE)) & BOARD_MASK


def diagonal_neighbours(board: int) -> int:
    """Cells sharing only a corner with a cell of ``board`` (plus ones sharing an edge with
    another of its cells; callers remove those with the forbidden board)."""
    return ((board << (STRIDE + 1)) | (board << (STRIDE - 1))
            | (board >> (STRIDE - 1)) | (board >> (STRIDE + 1))) & BOARD_MASK


def iter_bits(board: int):
    """Indices of the set bits of ``board``, lowest first."""
    while board:
        low = board & -board
        yield low.bit_length() - 1
        board ^= low


ROW_BITS = (1 << BOARD_SIZE) - 1   # the 20 cells of a row, shifted down to bit 0


@functools.lru_cache(maxsize=2048)
def _row_text(blue: int, yellow: int, red: int, green: int) -> str:
    """A board row as 20 letters ('.', 'B', 'Y', 'R', 'G') from each colour's 20 bits of it.
    Cached: a move changes at most five rows, the rest repeat from view to view."""
    row = ["."] * BOARD_SIZE
    for letter, bits in (("B", blue), ("Y", yellow), ("R", red), ("G", green)):
        for x in iter_bits(bits):
            row[x] = letter
    return "".join(row)


@functools.lru_cache(maxsize=64)
def _board_rows(blue: int, yellow: int, red: int, green: int) -> tuple[str, ...]:
    """The 20 rows (:func:`_row_text`) of the board of these four colours' bitboards.  Cached
    too: after a move, the memento and the spectators' view both ask for the same board."""
    return tuple(_row_text(blue >> s & ROW_BITS, yellow >> s & ROW_BITS, red >> s & ROW_BITS, green >> s & ROW_BITS)
                 for s in range(0, BOARD_SIZE * STRIDE, STRIDE))


def _rows_changed(before: tuple[int, ...], rows: tuple[str, ...], own: tuple[int, ...]) -> tuple[str, ...]:
    """The board rows of the colours' bitboards ``own``, from the ``rows`` of the bitboards
    ``before``: the rows with a changed cell are written again (:func:`_row_text`)."""
    changed = 0
    for old, new in zip(before, own):
        changed |= old ^ new
    if not changed:
        return rows
    rows = list(rows)
    blue, yellow, red, green = own
    while changed:
        y = ((changed & -changed).bit_length() - 1) // STRIDE
        s = y * STRIDE
        rows[y] = _row_text(blue >> s & ROW_BITS, yellow >> s & ROW_BITS, red >> s & ROW_BITS, green >> s & ROW_BITS)
        changed &= ~(ROW_BITS << s)
    return tuple(rows)


@functools.lru_cache(maxsize=4096)
def _shape_names(shapes: int) -> tuple[str, ...]:
    """The names of the shapes in the bit set ``shapes`` (bit i: SHAPES[i]), in SHAPES order."""
    return tuple(SHAPES[i] for i in iter_bits(shapes))


def _anchors(variant: PieceVariant, free: int, corners: int) -> int:
    """Anchors where ``variant`` lies on ``free`` cells only and covers a ``corners`` cell.

    Bit p of ``free >> o`` says whether cell p + o is free, so AND-ing over the variant's
    offsets tests every anchor at once; OR-ing ``corners >> o`` likewise tests "some cell of
    the piece is a corner cell"."""
    a = variant.fit
    for o in variant.offsets:
        a &= free >> o
        if not a:
            return 0
    touch = 0
    for o in variant.offsets:
        touch |= corners >> o
    return a & touch


# --- config and state ---------------------------------------------------------------------------

def normalize_config(config: Mapping | None) -> dict:
    """Validate and complete a match configuration.

    Keys: ``variant`` ("2021" default, or "2027"); ``start_piece``: ``None`` (drawn from the
    seed) or a pentomino allowed as start piece in that variant (imported replays give it).
    Unknown keys are ignored (as the other games do).  Raises ``ValueError`` naming the bad key."""
    config = dict(config or {})
    variant = config.get("variant", "2021")
    if variant is None:
        variant = "2021"
    if isinstance(variant, int) and not isinstance(variant, bool):
        variant = str(variant)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    start_piece = config.get("start_piece")
    if start_piece in ("", None):
        start_piece = None
    elif start_piece not in VARIANT_RULES[variant].start_pieces:
        raise ValueError(f"start_piece must be one of {', '.join(VARIANT_RULES[variant].start_pieces)} "
                         f"in variant {variant}, got {start_piece!r}")
    return {"variant": variant, "start_piece": start_piece}


def new_state(config: Mapping | None, seed: int) -> "BlokusState":
    """A new game.  The start piece is the config's if set, else drawn with
    ``random.Random(seed)`` from the variant's start pieces.  Raises ``ValueError`` on a bad
    config."""
    cfg = normalize_config(config)
    start_piece = cfg["start_piece"] or random.Random(seed).choice(VARIANT_RULES[cfg["variant"]].start_pieces)
    return BlokusState(cfg["variant"], start_piece)


@functools.lru_cache(maxsize=4096)
def points_for(shapes_left: int, mono_last: bool) -> int:
    """A colour's points: 89 minus the squares of its unplaced pieces (``shapes_left`` is a
    bit set over SHAPES); all placed: 104, or 109 if the last one was the MONO
    (GameRuleLogic.getPointsFromUndeployed).  Cached: the views ask for it after every move."""
    if not shapes_left:
        return SUM_MAX_SQUARES + ALL_PLACED_BONUS + (MONO_LAST_BONUS if mono_last else 0)
    return SUM_MAX_SQUARES - sum(SHAPE_SIZE[i] for i in iter_bits(shapes_left))


class BlokusState(State):
    """One Blokus game.  Build with :func:`new_state` or :meth:`from_observation`.

    Attributes: ``variant`` ("2021"/"2027"), ``turn`` (moves so far, dropped colours' turns
    included), ``start_piece`` (shape name), ``valid_colors`` (colour indices still in the
    game, turn order), ``shapes_left[c]`` (bit set over SHAPES of colour c's unplaced pieces),
    ``own[c]`` (bitboard of colour c's cells), ``occupied`` (all colours' cells),
    ``last_move`` (the last action applied, or None), ``last_cells`` ([[x, y], ...] of the
    last SetMove), ``last_move_mono`` ({colour name: bool} for colours that placed all 21),
    ``causes`` / ``reasons`` per seat (a forfeit sets the loser's).
    """

    __slots__ = ("num_seats", "variant", "rules", "turn", "start_piece", "valid_colors", "shapes_left",
                 "own", "occupied", "last_move", "last_cells", "last_move_mono", "causes", "reasons",
                 "_moves_cache", "_rows_cache")

    def __init__(self, variant: str, start_piece: str):
        if variant not in VARIANT_RULES:
            raise ValueError(f"unknown variant {variant!r}")
        if start_piece not in SHAPE_INDEX:
            raise ValueError(f"unknown start piece {start_piece!r}")
        self.num_seats = 2
        self.variant = variant
        self.rules = VARIANT_RULES[variant]
        self.turn = 0
        self.start_piece = start_piece
        self.valid_colors = [0, 1, 2, 3]
        self.shapes_left = [ALL_SHAPES] * 4
        self.own = [0, 0, 0, 0]
        self.occupied = 0
        self.last_move: Action | None = None
        self.last_cells: list[list[int]] = []
        self.last_move_mono: dict[str, bool] = {}
        self.causes = ["REGULAR", "REGULAR"]
        self.reasons = ["", ""]
        self._moves_cache: tuple | None = None   # (turn, placements) of the colour to move
        self._rows_cache: tuple | None = None    # (own, rows): the board rows last asked for

    # --- derived ---------------------------------------------------------------------------------
    @property
    def round(self) -> int:
        """``1 + turn // 4`` (GameState.roundFromTurn)."""
        return 1 + self.turn // 4

    @property
    def current_color(self) -> int:
        """Index into COLORS of the colour to move (``turn % 4``; meaningless once terminal)."""
        return self.turn % 4

    def _forfeited(self) -> bool:
        return self.causes[0] != "REGULAR" or self.causes[1] != "REGULAR"

    def is_terminal(self) -> bool:
        """No valid colour left, past the last round (``round > 25``; 2027: ``> 24``), or a
        seat forfeited."""
        return not self.valid_colors or self.round > self.rules.last_round or self._forfeited()

    def to_act(self) -> tuple[int, ...]:
        """``(current_color % 2,)``: the team of the colour to move; ``()`` when over."""
        return () if self.is_terminal() else (self.turn % 2,)

    def is_first_move(self, color: int) -> bool:
        """Whether ``color`` still has all 21 pieces (GameRuleLogic.isFirstMove)."""
        return self.shapes_left[color] == ALL_SHAPES

    def free_and_corners(self, color: int) -> tuple[int, int]:
        """Bitboards for ``color``: cells a piece may cover (on the board, empty, no edge
        with the own colour) and cells one of them must cover (free cells diagonal to the own
        colour; on the first move the variant's start cells)."""
        own = self.own[color]
        free = BOARD_MASK & ~(self.occupied | edge_neighbours(own))
        if self.is_first_move(color):
            return free, free & self.rules.start_cells
        return free, free & diagonal_neighbours(own)

    def _shapes_to_try(self, color: int) -> int:
        if self.is_first_move(color):
            return 1 << SHAPE_INDEX[self.start_piece]
        return self.shapes_left[color]

    def placements(self, color: int | None = None) -> tuple[tuple[PieceVariant, int, int], ...]:
        """Every legal placement of ``color`` (default: the colour to move) as
        ``(variant, x, y)``, each distinct cell set once, ordered by shape, variant, y, x.
        The colour to move's list is cached until the next move."""
        if color is None:
            color = self.current_color
            cache = self._moves_cache
            if cache is not None and cache[0] == self.turn:
                return cache[1]
        free, corners = self.free_and_corners(color)
        out = []
        if corners:
            for s in iter_bits(self._shapes_to_try(color)):
                for variant in PIECE_VARIANTS[s]:
                    anchors = _anchors(variant, free, corners)
                    for p in iter_bits(anchors):
                        y, x = divmod(p, STRIDE)
                        out.append((variant, x, y))
        placements = tuple(out)
        if color == self.current_color:
            self._moves_cache = (self.turn, placements)
        return placements

    def has_placement(self, color: int) -> bool:
        """Whether ``color`` has any legal SetMove (cheaper than listing them)."""
        free, corners = self.free_and_corners(color)
        if not corners:
            return False
        for s in iter_bits(self._shapes_to_try(color)):
            for variant in PIECE_VARIANTS[s]:
                if _anchors(variant, free, corners):
                    return True
        return False

    # --- actions ---------------------------------------------------------------------------------
    def _parse_set(self, action) -> tuple[int, PieceVariant, int, int] | None:
        """``(colour, variant, x, y)`` of a well-formed SetMove action, else None."""
        if not isinstance(action, (list, tuple)) or len(action) != 7 or action[0] != SET:
            return None
        _, color, kind, rotation, flipped, x, y = action
        if (type(color) is not str or type(kind) is not str or type(rotation) is not str
                or color not in COLOR_INDEX or kind not in SHAPE_INDEX or rotation not in ROTATIONS
                or not isinstance(flipped, bool) or type(x) is not int or type(y) is not int):
            return None
        return COLOR_INDEX[color], _SPELLING[(SHAPE_INDEX[kind], rotation, flipped)], x, y

    def mistake_kind(self, action) -> str | None:
        """The kind of mistake that makes a SetMove/SkipMove action illegal now (a key of
        :data:`MOVE_MISTAKES`), or None if it is legal.  Checked in the official order
        (GameRuleLogic.validateSetMove): colour, shape, bounds, occupied, edge contact, then
        the first move's start cells or the shared corner."""
        if self.is_terminal():
            return "GAME_OVER"
        color = self.current_color
        if isinstance(action, (list, tuple)) and len(action) == 2 and action[0] == SKIP:
            if action[1] != COLORS[color]:
                return "WRONG_COLOR"
            return "SKIP_FIRST_TURN" if self.is_first_move(color) else None
        parsed = self._parse_set(action)
        if parsed is None:
            return "INVALID_FORMAT"
        c, variant, x, y = parsed
        if c != color:
            return "WRONG_COLOR"
        first = self.is_first_move(color)
        if first:
            if SHAPES[variant.shape] != self.start_piece:
                return "WRONG_SHAPE"
        elif not self.shapes_left[color] >> variant.shape & 1:
            return "DUPLICATE_SHAPE"
        if x < 0 or y < 0 or x + variant.width > BOARD_SIZE or y + variant.height > BOARD_SIZE:
            return "OUT_OF_BOUNDS"
        mask = variant.mask << (y * STRIDE + x)
        if mask & self.occupied:
            return "OBSTRUCTED"
        own = self.own[color]
        if mask & edge_neighbours(own):
            return "TOUCHES_SAME_COLOR"
        if first:
            if not mask & self.rules.start_cells:
                return self.rules.start_mistake
        elif not mask & diagonal_neighbours(own):
            return "NO_SHARED_CORNER"
        return None

    def placement_mistake(self, action) -> str | None:
        """Why ``action`` is illegal for the colour to move, as the official server words it
        (:data:`MOVE_MISTAKES`, German), or None when it is legal."""
        kind = self.mistake_kind(action)
        return None if kind is None else MOVE_MISTAKES[kind]

    def mistake(self, seat: int, action) -> str | None:
        """Like :meth:`placement_mistake` for ``seat``: a seat not to act gets the
        WRONG_COLOR text; a forfeit is never a move."""
        if seat not in self.to_act() and not self.is_terminal():
            return MOVE_MISTAKES["WRONG_COLOR"]
        return self.placement_mistake(action)

    def is_legal(self, seat: int, action: Action) -> bool:
        """Whether ``seat`` may play ``action`` now: a legal SetMove in ANY rotation/flip
        spelling or a legal SkipMove of the colour to move (never a forfeit)."""
        if seat not in self.to_act():
            return False
        return self.mistake_kind(action) is None

    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal placement once (canonical spelling), then ``["skip", colour]`` when
        skipping is legal (after the colour's first move); ``[]`` for a seat not to act."""
        if seat not in self.to_act():
            return []
        color = self.current_color
        name = COLORS[color]
        out: list[Action] = [[SET, name, SHAPES[v.shape], v.rotation, v.flipped, x, y]
                             for v, x, y in self.placements()]
        if not self.is_first_move(color):
            out.append([SKIP, name])
        return out

    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Play the answer of the seat to act.  ``["forfeit", cause, reason]`` ends the game
        against the seat that sends it; out of turn only with cause LEFT (a player who
        leaves loses at once).  Returns happenings: ``{"type": "move", "color", "action",
        "cells"}``, then ``{"type": "dropped", "colors"}`` if colours were dropped, then
        ``{"type": "game_over", "cause"}`` if the game ended.  Raises ``ValueError`` when the
        game is over, the seat's answer is missing, or the action is illegal."""
        actors = self.to_act()
        if not actors:
            raise ValueError("the game is over")
        # A forfeit may come from the seat not to move: a player who leaves loses at once,
        # out of turn too, as on the official server.
        for seat, action in actions.items():
            if seat in (0, 1) and isinstance(action, (list, tuple)) and len(action) == 3 and action[0] == FORFEIT:
                if seat != actors[0] and action[1] != "LEFT":
                    raise ValueError(f"only leaving ends the game out of turn, not {action[1]!r}")
                return self._forfeit(seat, action[1], action[2])
        seat = actors[0]
        if seat not in actions:
            raise ValueError(f"no action for seat {seat}")
        action = actions[seat]
        mistake = self.mistake_kind(action)
        if mistake is not None:
            raise ValueError(f"illegal move {str(action)[:200]}: {MOVE_MISTAKES[mistake]}")
        color = self.current_color
        happenings: list[dict] = []
        if action[0] == SET:
            _, variant, x, y = self._parse_set(action)
            mask = variant.mask << (y * STRIDE + x)
            self.own[color] |= mask
            self.occupied |= mask
            self.shapes_left[color] &= ~(1 << variant.shape)
            if not self.shapes_left[color]:
                self.last_move_mono[COLORS[color]] = variant.shape == 0
            self.last_cells = [[x + dx, y + dy] for dx, dy in variant.cells]
            self.last_move = [SET, COLORS[color], SHAPES[variant.shape], action[3], action[4], x, y]
            happenings.append({"type": "move", "color": COLORS[color], "action": list(self.last_move),
                               "cells": [list(c) for c in self.last_cells]})
        else:
            self.last_move = [SKIP, COLORS[color]]
            happenings.append({"type": "move", "color": COLORS[color], "action": list(self.last_move), "cells": []})
        self._moves_cache = None
        self._advance()
        dropped = self._after_move()
        if dropped:
            happenings.append({"type": "dropped", "colors": dropped})
        if self.is_terminal():
            happenings.append({"type": "game_over", "cause": "REGULAR"})
        return happenings

    def _advance(self) -> None:
        """GameState.advance: next turn, passing over colours no longer valid."""
        if not self.valid_colors:
            return
        self.turn += 1
        while self.turn % 4 not in self.valid_colors:
            self.turn += 1

    def _after_move(self) -> list[str]:
        """Game.checkGameOver: past the round limit all colours are cleared; then colours
        without a SetMove are dropped one after another (removeInvalidColors)."""
        if self.rules.clear_at_limit and self.round > self.rules.last_round:
            self.valid_colors = []
        dropped = []
        while self.valid_colors and not self.has_placement(self.current_color):
            color = self.current_color
            self.valid_colors.remove(color)
            dropped.append(COLORS[color])
            self._advance()
        return dropped

    def _forfeit(self, seat: int, cause, reason) -> list[dict]:
        if cause not in CAUSES or cause == "REGULAR":
            raise ValueError(f"forfeit cause must be one of {', '.join(CAUSES[1:])}, got {cause!r}")
        self.causes[seat] = cause
        self.reasons[seat] = str(reason)[:MAX_REASON]
        return [{"type": "game_over", "cause": cause, "seat": seat, "reason": self.reasons[seat]}]

    # --- views ------------------------------------------------------------------------------
    def points(self) -> dict[str, int]:
        """``{colour: points}`` (:func:`points_for`)."""
        return {name: points_for(self.shapes_left[c], self.last_move_mono.get(name, False))
                for c, name in enumerate(COLORS)}

    def team_points(self) -> list[int]:
        """``[team ONE, team TWO]``: the sums of the teams' two colours."""
        p = self.points()
        return [p["BLUE"] + p["RED"], p["YELLOW"] + p["GREEN"]]

    def result(self) -> dict:
        """``{"scores": team points, "win_points": [2, 0] | [1, 1] | [0, 2], "winner": seat |
        None, "causes", "reasons", "points"}``.  A seat that forfeited loses whatever the
        points (Game.getScoreFor)."""
        team = self.team_points()
        if self._forfeited():
            loser = 0 if self.causes[0] != "REGULAR" else 1
            winner = 1 - loser
        elif team[0] != team[1]:
            winner = 0 if team[0] > team[1] else 1
        else:
            winner = None
        win_points = [1, 1] if winner is None else [2 if s == winner else 0 for s in range(2)]
        return {"scores": team, "win_points": win_points, "winner": winner,
                "causes": list(self.causes), "reasons": list(self.reasons), "points": self.points()}

    def board_rows(self) -> list[str]:
        """The board as 20 strings, ``rows[y][x]`` one of '.', 'B', 'Y', 'R', 'G'.  Asked for
        after every move (the memento): only the rows the board changed in since the last
        time are written again (a move touches at most five)."""
        own = tuple(self.own)
        cached = getattr(self, "_rows_cache", None)  # (a state unpickled from before the cache)
        if cached is None:
            rows = _board_rows(*own)
        elif cached[0] == own:
            rows = cached[1]
        else:
            rows = _rows_changed(cached[0], cached[1], own)
        self._rows_cache = (own, rows)
        return list(rows)

    def public_observation(self) -> dict:
        """Everything (Blokus has no hidden information); see the contract in the brief."""
        terminal = self.is_terminal()
        color = None if terminal else self.current_color
        points = self.points()
        return {
            "variant": self.variant,
            "turn": self.turn,
            "round": self.round,
            "start_piece": self.start_piece,
            "start_team": TEAMS[0],
            "current_color": None if color is None else COLORS[color],
            "current_seat": None if color is None else color % 2,
            "valid_colors": [COLORS[c] for c in self.valid_colors],
            "shapes": {name: list(_shape_names(self.shapes_left[c])) for c, name in enumerate(COLORS)},
            "board": self.board_rows(),
            "last_move": None if self.last_move is None else list(self.last_move),
            "last_cells": [list(c) for c in self.last_cells],
            "last_move_mono": dict(self.last_move_mono),
            "points": points,
            "team_points": [points["BLUE"] + points["RED"], points["YELLOW"] + points["GREEN"]],
            "terminal": terminal,
            "result": self.result() if terminal else None,
        }

    def memento_observation(self) -> dict:
        """What the protocol's memento writes (:func:`games.blokus.protocol.memento`), and only
        that: the keys ``variant, turn, round, start_piece, start_team, shapes, valid_colors,
        board, last_move, last_move_mono`` of :meth:`public_observation` with the same values,
        sequences as tuples (shared with the state's caches: read, never change).  Made after
        every move for the players; the full observation's points, result and last cells
        were a third of the memento's cost."""
        return {
            "variant": self.variant,
            "turn": self.turn,
            "round": 1 + self.turn // 4,
            "start_piece": self.start_piece,
            "start_team": TEAMS[0],
            "shapes": {name: _shape_names(self.shapes_left[c]) for c, name in enumerate(COLORS)},
            "valid_colors": tuple(COLORS[c] for c in self.valid_colors),
            "board": self.board_rows(),
            "last_move": None if self.last_move is None else tuple(self.last_move),
            "last_move_mono": self.last_move_mono,
        }

    def observation(self, seat: int) -> dict:
        """Same as :meth:`public_observation` (no hidden information)."""
        return self.public_observation()

    def full_observation(self) -> dict:
        """Same as :meth:`public_observation` (no hidden information)."""
        return self.public_observation()

    def clone(self) -> "BlokusState":
        """An independent copy."""
        other = BlokusState.__new__(BlokusState)
        other.num_seats = 2
        other.variant = self.variant
        other.rules = self.rules
        other.turn = self.turn
        other.start_piece = self.start_piece
        other.valid_colors = list(self.valid_colors)
        other.shapes_left = list(self.shapes_left)
        other.own = list(self.own)
        other.occupied = self.occupied
        other.last_move = None if self.last_move is None else list(self.last_move)
        other.last_cells = [list(c) for c in self.last_cells]
        other.last_move_mono = dict(self.last_move_mono)
        other.causes = list(self.causes)
        other.reasons = list(self.reasons)
        other._moves_cache = self._moves_cache
        other._rows_cache = self._rows_cache
        return other

    @classmethod
    def from_observation(cls, obs: Mapping[str, Any]) -> "BlokusState":
        """Rebuild a state from an observation dict (bots, imports): variant, turn, start
        piece, board, shapes left, valid colours, last move (and cells), last_move_mono, and
        a forfeit recorded in ``result``.  Raises ``ValueError`` on malformed input."""
        try:
            variant = str(obs.get("variant", "2021"))
            state = cls(variant, obs["start_piece"])
            turn = obs["turn"]
            if type(turn) is not int or not 0 <= turn <= 4 * (ROUND_LIMIT + 2):
                raise ValueError(f"bad turn {turn!r}")
            state.turn = turn
            board = obs["board"]
            if len(board) != BOARD_SIZE or any(len(row) != BOARD_SIZE for row in board):
                raise ValueError("the board must be 20 strings of 20 characters")
            letters = {name[0]: c for c, name in enumerate(COLORS)}
            for y, row in enumerate(board):
                for x, ch in enumerate(row):
                    if ch == ".":
                        continue
                    if ch not in letters:
                        raise ValueError(f"bad board character {ch!r}")
                    state.own[letters[ch]] |= _bit(x, y)
                    state.occupied |= _bit(x, y)
            shapes = obs["shapes"]
            for c, name in enumerate(COLORS):
                left = 0
                for s in shapes[name]:
                    left |= 1 << SHAPE_INDEX[s]
                state.shapes_left[c] = left
            state.valid_colors = sorted({COLOR_INDEX[name] for name in obs["valid_colors"]})
            last = obs.get("last_move")
            state.last_move = None if last is None else list(last)
            state.last_cells = [[int(x), int(y)] for x, y in obs.get("last_cells") or []]
            state.last_move_mono = {str(k): bool(v) for k, v in (obs.get("last_move_mono") or {}).items()
                                    if k in COLOR_INDEX}
            result = obs.get("result")
            if result:
                for seat in range(2):
                    cause = result["causes"][seat]
                    if cause in CAUSES:
                        state.causes[seat] = cause
                        state.reasons[seat] = str(result["reasons"][seat])[:MAX_REASON]
            return state
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed Blokus observation: {exc!r}") from exc
