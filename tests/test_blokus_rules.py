"""Blokus rules engine (games/blokus/rules.py) against the spec's worked examples.

Spec: shared/specs/blokus-xml.seed.md ("Spielstein Transformationen") and the notes' section
Rules (the notes win).  Expected cells below are worked out by hand from the seed's formulas.
The 2027 variant is checked against the `socha` 5.x engine (the official client's rules), and
2021 move generation against a naive checker written here from the notes' rules.
"""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.blokus import rules
from games.blokus.rules import (
    BlokusState, COLORS, SHAPES, new_state, normalize_config, piece_cells, points_for,
)
from tests import needs

EMPTY_ROW = "." * 20


def fresh(variant="2021", start_piece="PENTO_V"):
    return new_state({"variant": variant, "start_piece": start_piece}, 0)


def play(state, action):
    """Apply ``action`` for the seat to act; returns the happenings."""
    (seat,) = state.to_act()
    return state.apply({seat: action})


def set_move(color, kind, rotation, flipped, x, y):
    return ["set", color, kind, rotation, flipped, x, y]


#: Round 1 with start piece PENTO_V, one colour per corner (cells worked out by hand):
#: BLUE (0,0)(0,1)(0,2)(1,2)(2,2); YELLOW (17,0)(18,0)(19,0)(17,1)(17,2);
#: RED (19,19)(19,18)(19,17)(18,17)(17,17); GREEN (0,19)(1,19)(2,19)(2,18)(2,17).
FIRST_ROUND = [
    set_move("BLUE", "PENTO_V", "NONE", False, 0, 0),
    set_move("YELLOW", "PENTO_V", "RIGHT", False, 17, 0),
    set_move("RED", "PENTO_V", "MIRROR", False, 17, 17),
    set_move("GREEN", "PENTO_V", "LEFT", False, 0, 17),
]


def corner_round(variant="2021"):
    """A game after :data:`FIRST_ROUND`: BLUE to move at turn 4."""
    state = fresh(variant, "PENTO_V")
    for action in FIRST_ROUND:
        play(state, action)
    return state


def observation_with(cells: dict, turn=4, shapes=None, valid=COLORS, variant="2021", **extra):
    """An observation dict for :meth:`BlokusState.from_observation`: ``cells`` maps a colour
    letter to [(x, y), ...]; ``shapes`` maps colours to their unplaced shapes (default: all
    but the start piece PENTO_V)."""
    board = [list(EMPTY_ROW) for _ in range(20)]
    for letter, coords in cells.items():
        for x, y in coords:
            board[y][x] = letter
    default = [s for s in SHAPES if s != "PENTO_V"]
    shapes = {c: list((shapes or {}).get(c, default)) for c in COLORS}
    obs = {"variant": variant, "turn": turn, "start_piece": "PENTO_V", "board": ["".join(r) for r in board],
           "shapes": shapes, "valid_colors": list(valid), "last_move": None, "last_cells": [],
           "last_move_mono": {}}
    obs.update(extra)
    return obs


# --- transformations (seed) ---------------------------------------------------------------------

PENTO_L_BY_HAND = {
    # base (0,0)(0,1)(0,2)(0,3)(1,3)
    ("NONE", False): {(0, 0), (0, 1), (0, 2), (0, 3), (1, 3)},
    # (x,y)->(-y,x): (0,0)(-1,0)(-2,0)(-3,0)(-3,1), normalised by +3 in x
    ("RIGHT", False): {(0, 0), (1, 0), (2, 0), (3, 0), (0, 1)},
    # (x,y)->(-x,-y): (0,0)(0,-1)(0,-2)(0,-3)(-1,-3), normalised by +1, +3
    ("MIRROR", False): {(0, 0), (1, 0), (1, 1), (1, 2), (1, 3)},
    # (x,y)->(y,-x): (0,0)(1,0)(2,0)(3,0)(3,-1), normalised by +1 in y
    ("LEFT", False): {(3, 0), (0, 1), (1, 1), (2, 1), (3, 1)},
    # LEFT, then (x,y)->(-x,y): (0,0)(-1,0)(-2,0)(-3,0)(-3,-1), normalised by +3, +1
    ("LEFT", True): {(0, 0), (0, 1), (1, 1), (2, 1), (3, 1)},
}


@pytest.mark.parametrize("rotation,flipped", list(PENTO_L_BY_HAND))
def test_pento_l_transformations_as_the_seed_describes(rotation, flipped):
    expected = PENTO_L_BY_HAND[(rotation, flipped)]
    assert set(piece_cells("PENTO_L", rotation, flipped, 0, 0)) == expected
    # the position is the top-left of the transformed piece's bounding box
    assert set(piece_cells("PENTO_L", rotation, flipped, 5, 7)) == {(x + 5, y + 7) for x, y in expected}


def test_seed_example_first_move_pento_v_right_at_17_0():
    assert sorted(piece_cells("PENTO_V", "RIGHT", False, 17, 0)) == [(17, 0), (17, 1), (17, 2), (18, 0), (19, 0)]
    state = fresh("2021", "PENTO_V")
    assert state.is_legal(0, set_move("BLUE", "PENTO_V", "RIGHT", False, 17, 0))


def test_distinct_orientations_per_shape():
    # the standard counts of fixed polyominoes: 91 orientations in all (63 for the pentominoes)
    expected = {"MONO": 1, "DOMINO": 2, "TRIO_L": 4, "TRIO_I": 2, "TETRO_O": 1, "TETRO_T": 4, "TETRO_I": 2,
                "TETRO_L": 8, "TETRO_Z": 4, "PENTO_L": 8, "PENTO_T": 4, "PENTO_V": 4, "PENTO_S": 8,
                "PENTO_Z": 4, "PENTO_I": 2, "PENTO_P": 8, "PENTO_W": 4, "PENTO_U": 4, "PENTO_R": 8,
                "PENTO_X": 1, "PENTO_Y": 8}
    for shape, count in expected.items():
        spellings = {frozenset(piece_cells(shape, r, f, 0, 0)) for r in rules.ROTATIONS for f in (False, True)}
        assert len(spellings) == count, shape
        assert len(rules.PIECE_VARIANTS[rules.SHAPE_INDEX[shape]]) == count, shape


def test_piece_cells_refuses_bad_names():
    for args in (("PENTO_Q", "NONE", False), ("PENTO_L", "UP", False), ("PENTO_L", "NONE", "yes")):
        with pytest.raises(ValueError):
            piece_cells(*args, 0, 0)


# --- config ---------------------------------------------------------------------------------

def test_config_defaults_and_errors():
    assert normalize_config({}) == {"variant": "2021", "start_piece": None}
    x_start = {"variant": "2027", "start_piece": "PENTO_X"}
    assert normalize_config(x_start) == x_start
    assert normalize_config({"variant": "2027", "colour": 1}) == {"variant": "2027", "start_piece": None}
    for bad in ({"variant": "2022"}, {"start_piece": "PENTO_X"}, {"start_piece": "MONO"}, {"variant": ["2021"]}):
        with pytest.raises(ValueError):
            normalize_config(bad)


def test_start_piece_is_drawn_from_the_seed():
    pieces_2021 = {new_state({}, seed).start_piece for seed in range(300)}
    assert pieces_2021 == set(rules.VARIANT_RULES["2021"].start_pieces)
    assert "PENTO_X" not in pieces_2021 and len(pieces_2021) == 11
    assert "PENTO_X" in {new_state({"variant": "2027"}, seed).start_piece for seed in range(300)}
    assert new_state({}, 42).start_piece == new_state({}, 42).start_piece


# --- first moves ------------------------------------------------------------------------------

def test_first_move_must_cover_a_corner_in_2021_and_touch_the_border_in_2027():
    on_border = set_move("BLUE", "PENTO_V", "RIGHT", False, 10, 0)     # cells (10..12, 0), (10, 1..2)
    inside = set_move("BLUE", "PENTO_V", "RIGHT", False, 5, 5)
    corner = set_move("BLUE", "PENTO_V", "NONE", False, 0, 17)         # covers (0, 19)
    s21, s27 = fresh("2021"), fresh("2027")
    assert not s21.is_legal(0, on_border) and s27.is_legal(0, on_border)
    assert not s21.is_legal(0, inside) and not s27.is_legal(0, inside)
    assert s21.is_legal(0, corner) and s27.is_legal(0, corner)
    with pytest.raises(ValueError):
        play(s21, on_border)
    for action in s21.legal_actions(0):
        cells = set(piece_cells(*action[2:]))
        assert action[2] == "PENTO_V" and cells & {(0, 0), (19, 0), (0, 19), (19, 19)}
    for action in s27.legal_actions(0):
        cells = set(piece_cells(*action[2:]))
        assert action[2] == "PENTO_V" and any(x in (0, 19) or y in (0, 19) for x, y in cells)


def test_first_move_must_be_the_start_piece_and_cannot_be_skipped():
    for variant in rules.VARIANTS:
        state = fresh(variant, "PENTO_V")
        assert not state.is_legal(0, set_move("BLUE", "PENTO_L", "NONE", False, 0, 0))
        assert not state.is_legal(0, ["skip", "BLUE"])
        assert ["skip", "BLUE"] not in state.legal_actions(0)
        with pytest.raises(ValueError):
            play(state, ["skip", "BLUE"])
        assert state.turn == 0


def test_first_round_takes_one_corner_each():
    state = corner_round()
    assert state.turn == 4 and state.round == 2 and state.to_act() == (0,)
    obs = state.observation(0)
    assert obs["board"][0][:3] == "B.." and obs["board"][0][17:] == "YYY"
    assert obs["board"][19][:3] == "GGG" and obs["board"][19][17:] == "..R"
    assert ["skip", "BLUE"] in state.legal_actions(0)      # skipping is legal after the first move


# --- later moves ------------------------------------------------------------------------------

def test_edge_contact_refused_corner_contact_required():
    state = corner_round()
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 1, 1))   # edge with (0,1), (1,2)
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 5, 5))   # no corner
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 0, 0))   # occupied
    assert state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 3, 3))       # corner of (2,2)
    assert not state.is_legal(1, set_move("BLUE", "MONO", "NONE", False, 3, 3))   # not team TWO's turn
    assert not state.is_legal(0, set_move("RED", "MONO", "NONE", False, 3, 3))    # not RED's turn


def test_other_colours_may_be_touched():
    obs = observation_with({"B": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)], "Y": [(4, 3), (3, 4)]})
    state = BlokusState.from_observation(obs)
    # (3,3) shares edges with YELLOW's (4,3) and (3,4) and a corner with BLUE's (2,2)
    assert state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 3, 3))


def test_out_of_board_refused():
    state = corner_round()
    assert not state.is_legal(0, set_move("BLUE", "PENTO_I", "NONE", False, 3, 16))   # y 16..20
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, -1, 3))
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 20, 3))
    for action in state.legal_actions(0)[:-1]:
        assert all(0 <= x < 20 and 0 <= y < 20 for x, y in piece_cells(*action[2:]))


def test_duplicate_shape_refused():
    state = corner_round()
    play(state, set_move("BLUE", "MONO", "NONE", False, 3, 3))
    for _ in range(3):
        play(state, ["skip", COLORS[state.current_color]])
    assert state.current_color == 0
    assert not state.is_legal(0, set_move("BLUE", "MONO", "NONE", False, 4, 4))      # a free corner, but placed
    assert state.is_legal(0, set_move("BLUE", "DOMINO", "NONE", False, 4, 4))


def test_any_spelling_of_a_legal_placement_is_legal():
    state = corner_round()
    # TETRO_O looks the same in every rotation and flip
    for rotation in rules.ROTATIONS:
        for flipped in (False, True):
            assert state.is_legal(0, set_move("BLUE", "TETRO_O", rotation, flipped, 3, 3))
    placements = [a for a in state.legal_actions(0) if a[0] == "set"]
    listed = [a for a in placements if a[2] == "TETRO_O" and a[5:] == [3, 3]]
    assert len(listed) == 1          # listed once, in its canonical spelling
    # a vertical PENTO_I at (3,3) is NONE or MIRROR, flipped or not: four spellings, one listing
    for rotation in ("NONE", "MIRROR"):
        for flipped in (False, True):
            assert state.is_legal(0, set_move("BLUE", "PENTO_I", rotation, flipped, 3, 3))
    # ...and horizontal (RIGHT or LEFT) is the other orientation: two listings in all
    assert len([a for a in placements if a[2] == "PENTO_I" and a[5:] == [3, 3]]) == 2


def test_malformed_actions_are_illegal_not_errors():
    state = corner_round()
    for action in (None, "skip", [], ["set"], ["set", "BLUE", "MONO", "NONE", 0, 3, 3],
                   ["set", "BLUE", "MONO", "NONE", False, 3.0, 3], ["set", "BLUE", "MONO", "NONE", False, True, 3],
                   ["set", "BLUE", "MONO", "NONE", False, 10**30, 3], ["set", ["BLUE"], "MONO", "NONE", False, 3, 3],
                   ["set", "BLUE", {"MONO": 1}, "NONE", False, 3, 3], ["skip", "RED"], ["skip", ["BLUE"]], ["skip"],
                   {"a": 1}):
        assert not state.is_legal(0, action)
        with pytest.raises(ValueError):
            play(state, action)


def test_move_happening_and_last_move():
    state = corner_round()
    happenings = play(state, set_move("BLUE", "TRIO_L", "NONE", False, 3, 3))
    assert happenings == [{"type": "move", "color": "BLUE", "action": set_move("BLUE", "TRIO_L", "NONE", False, 3, 3),
                           "cells": [[3, 3], [3, 4], [4, 4]]}]
    obs = state.public_observation()
    assert obs["last_move"] == set_move("BLUE", "TRIO_L", "NONE", False, 3, 3)
    assert sorted(obs["last_cells"]) == [[3, 3], [3, 4], [4, 4]]
    assert "TRIO_L" not in obs["shapes"]["BLUE"] and len(obs["shapes"]["BLUE"]) == 19
    assert obs["current_color"] == "YELLOW" and obs["current_seat"] == 1


MISTAKE_CASES = [
    # (name, after the first round?, action, kind)
    ("wrong colour", True, set_move("RED", "MONO", "NONE", False, 3, 3), "WRONG_COLOR"),
    ("skip of another colour", True, ["skip", "YELLOW"], "WRONG_COLOR"),
    ("first move elsewhere", False, set_move("BLUE", "PENTO_V", "NONE", False, 6, 6), None),  # variant's kind
    ("no shared corner", True, set_move("BLUE", "MONO", "NONE", False, 5, 5), "NO_SHARED_CORNER"),
    ("not the start piece", False, set_move("BLUE", "PENTO_L", "NONE", False, 0, 0), "WRONG_SHAPE"),
    ("first move skipped", False, ["skip", "BLUE"], "SKIP_FIRST_TURN"),
    ("placed twice", True, set_move("BLUE", "PENTO_V", "NONE", False, 3, 3), "DUPLICATE_SHAPE"),
    ("off the board", True, set_move("BLUE", "PENTO_I", "NONE", False, 3, 16), "OUT_OF_BOUNDS"),
    ("on a piece", True, set_move("BLUE", "MONO", "NONE", False, 17, 0), "OBSTRUCTED"),
    ("edge with own colour", True, set_move("BLUE", "MONO", "NONE", False, 1, 1), "TOUCHES_SAME_COLOR"),
    ("garbage", True, ["set", "BLUE", "MONO"], "INVALID_FORMAT"),
]


@pytest.mark.parametrize("variant", rules.VARIANTS)
@pytest.mark.parametrize("name,later,action,kind", MISTAKE_CASES, ids=[c[0] for c in MISTAKE_CASES])
def test_mistakes_are_worded_as_the_official_server_does(variant, name, later, action, kind):
    state = corner_round(variant) if later else fresh(variant)
    kind = kind or {"2021": "NOT_IN_CORNER", "2027": "NOT_ON_BORDER"}[variant]
    assert state.mistake_kind(action) == kind
    assert state.placement_mistake(action) == rules.MOVE_MISTAKES[kind]
    assert state.mistake(0, action) == rules.MOVE_MISTAKES[kind]
    assert state.mistake(1, action) == rules.MOVE_MISTAKES["WRONG_COLOR"]
    with pytest.raises(ValueError, match=rules.MOVE_MISTAKES[kind]):
        play(state, action)


def test_2027_mistake_texts_equal_socha_exceptions():
    """The same refused moves through socha's engine raise exceptions with our texts."""
    socha = needs.module("socha._socha", "socha, the Software-Challenge client")
    scolors = [socha.Color.BLUE, socha.Color.YELLOW, socha.Color.RED, socha.Color.GREEN]
    sshape = dict(zip(SHAPES, socha.PieceShape.all()))
    srot = {r.name(): r for r in socha.Rotation.all()}

    def to_socha(action):
        if action[0] == "skip":
            return socha.Move.skip_move(scolors[rules.COLOR_INDEX[action[1]]])
        _, c, kind, rotation, flipped, x, y = action
        return socha.Move.set_move(socha.Piece(scolors[rules.COLOR_INDEX[c]], sshape[kind], srot[rotation], flipped,
                                               socha.Coordinate(x, y)))

    checked = 0
    for name, later, action, kind in MISTAKE_CASES:
        if action[0] not in ("set", "skip") or len(action) not in (2, 7):
            continue
        gs = socha.GameState(start_piece=sshape["PENTO_V"])
        for first in FIRST_ROUND if later else []:
            socha.GameRuleLogic.perform_move(gs, to_socha(first))
        with pytest.raises(Exception) as caught:
            socha.GameRuleLogic.perform_move(gs, to_socha(action))
        ours = (corner_round("2027") if later else fresh("2027")).placement_mistake(action)
        assert str(caught.value) == ours, name
        checked += 1
    assert checked == len(MISTAKE_CASES) - 1


# --- dropped colours and the end ------------------------------------------------------------------

def blocked_position(blocked=("Y",), turn=4):
    """After round 1, each of YELLOW, RED, GREEN owns one corner cell; a colour letter in
    ``blocked`` finds its only diagonal neighbour taken by a stray BLUE cell, so it has no
    legal SetMove.  BLUE has room."""
    corner_of = {"Y": ((19, 0), (18, 1)), "R": ((19, 19), (18, 18)), "G": ((0, 19), (1, 18))}
    cells = {"B": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)]}
    for letter, (own, blocker) in corner_of.items():
        cells[letter] = [own]
        if letter in blocked:
            cells["B"].append(blocker)      # positions are constructed: any board will do
    return BlokusState.from_observation(observation_with(cells, turn=turn))


def test_colour_without_moves_is_dropped_and_its_turn_passed_over():
    state = blocked_position(("Y",))
    assert state.to_act() == (0,)
    happenings = play(state, ["skip", "BLUE"])
    assert happenings[-1] == {"type": "dropped", "colors": ["YELLOW"]}
    assert state.turn == 6 and state.current_color == 2          # YELLOW's turn number still counts
    assert state.observation(0)["valid_colors"] == ["BLUE", "RED", "GREEN"]
    assert state.to_act() == (0,)                                 # team ONE moves twice in a row
    play(state, ["skip", "RED"])
    play(state, ["skip", "GREEN"])
    assert state.turn == 8 and state.current_color == 0
    play(state, ["skip", "BLUE"])
    assert state.turn == 10 and state.current_color == 2          # YELLOW's turn 9 passed over


def test_several_colours_dropped_in_a_row():
    state = blocked_position(("Y", "R"))
    happenings = play(state, ["skip", "BLUE"])
    assert {"type": "dropped", "colors": ["YELLOW", "RED"]} in happenings
    assert state.turn == 7 and COLORS[state.current_color] == "GREEN" and state.to_act() == (1,)


def test_game_over_when_no_colour_is_valid_and_mono_last_scores_109():
    # BLUE alone is still valid and has only the MONO left, with a corner free at (3,3)
    obs = observation_with({"B": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)]}, turn=8, valid=["BLUE"],
                           shapes={"BLUE": ["MONO"], "YELLOW": ["DOMINO"], "RED": [], "GREEN": []},
                           last_move_mono={"RED": False, "GREEN": True})
    state = BlokusState.from_observation(obs)
    happenings = play(state, set_move("BLUE", "MONO", "NONE", False, 3, 3))
    assert {"type": "dropped", "colors": ["BLUE"]} in happenings
    assert happenings[-1]["type"] == "game_over"
    assert state.is_terminal() and state.to_act() == ()
    points = state.points()
    assert points == {"BLUE": 109, "YELLOW": 87, "RED": 104, "GREEN": 109}
    result = state.result()
    assert result["scores"] == [109 + 104, 87 + 109]
    assert result["win_points"] == [2, 0] and result["winner"] == 0
    assert result["causes"] == ["REGULAR", "REGULAR"]
    assert state.public_observation()["current_color"] is None


def test_placing_the_last_piece_other_than_mono_scores_104():
    obs = observation_with({"B": [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)]}, turn=8, valid=["BLUE", "YELLOW"],
                           shapes={"BLUE": ["DOMINO"], "YELLOW": ["MONO"], "RED": ["MONO"], "GREEN": []})
    state = BlokusState.from_observation(obs)
    play(state, set_move("BLUE", "DOMINO", "NONE", False, 3, 3))
    assert state.last_move_mono == {"BLUE": False}
    assert state.points()["BLUE"] == 104


def test_points_formula():
    all_shapes = (1 << 21) - 1
    assert points_for(all_shapes, False) == 0             # 89 squares left
    assert points_for(1 << rules.SHAPE_INDEX["MONO"], False) == 88
    assert points_for(1 << rules.SHAPE_INDEX["PENTO_X"], False) == 84
    assert points_for(0, False) == 104 and points_for(0, True) == 109


@pytest.mark.parametrize("variant,moves", [("2021", 100), ("2027", 96)])
def test_game_ends_after_the_last_round(variant, moves):
    """Everyone skips after the first round: 2021 ends when round 26 would start (turn 100),
    2027 when round 25 would (socha: is_over() from turn 96)."""
    state = corner_round(variant)
    applied = 4
    while not state.is_terminal():
        play(state, ["skip", COLORS[state.current_color]])
        applied += 1
    assert applied == moves and state.turn == moves
    obs = state.public_observation()
    assert obs["terminal"] and obs["current_color"] is None
    assert obs["valid_colors"] == ([] if variant == "2021" else list(COLORS))
    assert state.result()["scores"] == [10, 10] and state.result()["win_points"] == [1, 1]
    assert state.result()["winner"] is None


def test_draw_and_win_points():
    state = corner_round()
    assert state.team_points() == [10, 10]
    play(state, set_move("BLUE", "MONO", "NONE", False, 3, 3))
    assert state.team_points() == [11, 10]
    assert state.points() == {"BLUE": 6, "YELLOW": 5, "RED": 5, "GREEN": 5}


# --- forfeits ---------------------------------------------------------------------------------

def test_forfeit_ends_the_game_against_the_seat_to_act():
    state = corner_round()
    play(state, set_move("BLUE", "MONO", "NONE", False, 3, 3))    # team ONE leads on points
    assert state.to_act() == (1,)
    forfeit = ["forfeit", "RULE_VIOLATION", "x" * 500]
    assert not state.is_legal(1, forfeit) and forfeit not in state.legal_actions(1)
    happenings = play(state, forfeit)
    assert happenings[-1]["type"] == "game_over" and happenings[-1]["cause"] == "RULE_VIOLATION"
    assert state.is_terminal() and state.to_act() == ()
    result = state.result()
    assert result["causes"] == ["REGULAR", "RULE_VIOLATION"]
    assert len(result["reasons"][1]) == rules.MAX_REASON
    assert result["win_points"] == [2, 0] and result["winner"] == 0


def test_forfeit_loses_even_when_ahead():
    state = corner_round()
    play(state, set_move("BLUE", "MONO", "NONE", False, 3, 3))
    play(state, ["skip", "YELLOW"])
    assert state.to_act() == (0,) and state.team_points()[0] > state.team_points()[1]
    play(state, ["forfeit", "SOFT_TIMEOUT", "no move within 2 s"])
    assert state.result()["win_points"] == [0, 2] and state.result()["winner"] == 1
    assert state.result()["causes"] == ["SOFT_TIMEOUT", "REGULAR"]
    with pytest.raises(ValueError):
        play(state, ["skip", "RED"])


def test_only_leaving_loses_out_of_turn():
    state = corner_round()
    assert state.to_act() == (0,)
    with pytest.raises(ValueError, match="out of turn"):
        state.apply({1: ["forfeit", "RULE_VIOLATION", "a move nobody asked for"]})
    assert not state.is_terminal()
    state.apply({1: ["forfeit", "LEFT", "Der Spieler hat das Spiel verlassen"]})
    assert state.is_terminal() and state.result()["causes"] == ["REGULAR", "LEFT"]
    assert state.result()["winner"] == 0


def test_forfeit_needs_a_known_cause():
    state = corner_round()
    for cause in ("REGULAR", "LAZY", None):
        with pytest.raises(ValueError):
            play(state, ["forfeit", cause, "why"])
    assert not state.is_terminal()


# --- property tests on seeded random games -------------------------------------------------------

def random_game(seed, variant="2021", skip_rate=0.03, on_position=None):
    """Play a seeded random game; ``on_position(state)`` before every move.  Returns
    ``(state, actions)``."""
    rng = random.Random(seed)
    state = new_state({"variant": variant}, seed)
    actions = []
    while not state.is_terminal():
        if on_position:
            on_position(state)
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        sets = [a for a in legal if a[0] == "set"]
        action = rng.choice(sets) if sets and rng.random() >= skip_rate else legal[-1]
        state.apply({seat: action})
        actions.append(action)
    return state, actions


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(rules.VARIANTS))
def test_every_legal_action_is_legal_and_applies(seed, variant):
    rng = random.Random(seed)

    def check(state):
        (seat,) = state.to_act()
        legal = state.legal_actions(seat)
        assert legal, "a colour to move always has a move"
        assert len({json.dumps(a) for a in legal}) == len(legal)
        assert not state.legal_actions(1 - seat)
        for action in rng.sample(legal, min(12, len(legal))):
            assert state.is_legal(seat, action)
            assert not state.is_legal(1 - seat, action)
            copy = state.clone()
            copy.apply({seat: action})
            assert copy.turn > state.turn or copy.is_terminal()
    random_game(seed, variant, on_position=check)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(rules.VARIANTS))
def test_from_observation_reproduces_legal_actions(seed, variant):
    def check(state):
        obs = json.loads(json.dumps(state.public_observation()))     # through JSON, as bots get it
        rebuilt = BlokusState.from_observation(obs)
        (seat,) = state.to_act()
        assert rebuilt.legal_actions(seat) == state.legal_actions(seat)
        assert rebuilt.public_observation() == state.public_observation()
    final, _ = random_game(seed, variant, on_position=check)
    assert BlokusState.from_observation(final.public_observation()).result() == final.result()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(rules.VARIANTS))
def test_board_invariants_and_replay(seed, variant):
    state, actions = random_game(seed, variant)
    pieces = {c: [] for c in COLORS}
    for action in actions:
        if action[0] == "set":
            pieces[action[1]].append(set(piece_cells(*action[2:])))
    board = state.public_observation()["board"]
    for color, placed in pieces.items():
        cells = {(x, y) for y, row in enumerate(board) for x, ch in enumerate(row) if ch == color[0]}
        assert len(cells) == sum(len(p) for p in placed)            # no overlaps, nothing lost
        assert set().union(*placed) == cells
        for i, a in enumerate(placed):                              # no own-colour edge contact
            for b in placed[i + 1:]:
                assert not any(abs(x1 - x2) + abs(y1 - y2) == 1 for x1, y1 in a for x2, y2 in b)
        assert len({frozenset(p) for p in placed}) == len(placed)
    # the same (config, seed, actions) replays to the same result
    replay = new_state({"variant": variant}, seed)
    for action in actions:
        replay.apply({replay.to_act()[0]: action})
    assert replay.public_observation() == state.public_observation()
    assert replay.result() == state.result()


# --- 2021: against a naive checker written from the notes ------------------------------------------

def naive_cells(kind, rotation, flipped):
    """The seed's transformation, written out again independently of rules.py."""
    turn = {"NONE": lambda x, y: (x, y), "RIGHT": lambda x, y: (-y, x),
            "MIRROR": lambda x, y: (-x, -y), "LEFT": lambda x, y: (y, -x)}[rotation]
    cells = [turn(x, y) for x, y in rules.SHAPE_CELLS[kind]]
    if flipped:
        cells = [(-x, y) for x, y in cells]
    mx, my = min(x for x, _ in cells), min(y for _, y in cells)
    return [(x - mx, y - my) for x, y in cells]


def naive_placements(obs):
    """Every legal (shape, cells) for the colour to move, by trying every shape, rotation,
    flip and position against the notes' rules one cell at a time."""
    color = obs["current_color"]
    letter = color[0]
    board = obs["board"]
    left = obs["shapes"][color]
    first = len(left) == 21
    kinds = [obs["start_piece"]] if first else left
    corners = {(0, 0), (19, 0), (0, 19), (19, 19)}
    out = set()

    def at(x, y):
        return board[y][x] if 0 <= x < 20 and 0 <= y < 20 else None

    for kind in kinds:
        for rotation in rules.ROTATIONS:
            for flipped in (False, True):
                shape = naive_cells(kind, rotation, flipped)
                for y in range(20):
                    for x in range(20):
                        cells = [(x + dx, y + dy) for dx, dy in shape]
                        if any(at(cx, cy) != "." for cx, cy in cells):
                            continue                       # off the board or occupied
                        if any(at(cx + ex, cy + ey) == letter for cx, cy in cells
                               for ex, ey in ((1, 0), (-1, 0), (0, 1), (0, -1))):
                            continue                       # edge with own colour
                        if first:
                            if not corners & set(cells):
                                continue
                        elif not any(at(cx + ex, cy + ey) == letter for cx, cy in cells
                                     for ex, ey in ((1, 1), (-1, 1), (1, -1), (-1, -1))):
                            continue                       # no corner with own colour
                        out.add((kind, frozenset(cells)))
    return out


def our_placements(state):
    return {(SHAPES[v.shape], frozenset((x + dx, y + dy) for dx, dy in v.cells)) for v, x, y in state.placements()}


@pytest.mark.parametrize("seed", [1, 2])
def test_2021_placements_equal_a_naive_checker(seed):
    checked = []

    def check(state):
        if state.turn in (0, 3, 4, 9, 17, 30, 45, 60):
            obs = state.public_observation()
            assert our_placements(state) == naive_placements(obs), state.turn
            checked.append(state.turn)
    random_game(seed, "2021", on_position=check)
    assert len(checked) >= 5


# --- 2027: against socha 5.x's engine ------------------------------------------------------------

def test_2027_placements_equal_socha():
    """Random 2027 games played in lockstep through socha's engine: at every position our
    legal placements equal ``GameRuleLogic.get_all_possible_moves`` (as sets of cell sets per
    shape), and turn, valid colours and points agree after every move."""
    socha = needs.module("socha._socha", "socha, the Software-Challenge client")
    scolors = [socha.Color.BLUE, socha.Color.YELLOW, socha.Color.RED, socha.Color.GREEN]
    sshape = dict(zip(SHAPES, socha.PieceShape.all()))
    sname = {v: k for k, v in sshape.items()}
    srot = {r.name(): r for r in socha.Rotation.all()}

    def socha_placements(gs):
        # socha 5.1's Piece.coordinates() cannot build a set (unhashable Coordinate), so the
        # cells come from its spelling; test_2027_transformations_equal_socha checks the transform
        return {(sname[p.kind], frozenset(piece_cells(sname[p.kind], p.rotation.name(), p.is_flipped,
                                                       p.position.x, p.position.y)))
                for p in socha.GameRuleLogic.get_all_possible_moves(gs)}

    positions = 0
    for seed in range(3):
        rng = random.Random(seed)
        state = new_state({"variant": "2027"}, seed)
        gs = socha.GameState(start_piece=sshape[state.start_piece])
        while not state.is_terminal():
            assert our_placements(state) == socha_placements(gs), (seed, state.turn)
            positions += 1
            (seat,) = state.to_act()
            legal = state.legal_actions(seat)
            action = rng.choice(legal[:-1]) if len(legal) > 1 and rng.random() > 0.03 else legal[-1]
            state.apply({seat: action})
            if action[0] == "skip":
                move = socha.Move.skip_move(scolors[rules.COLOR_INDEX[action[1]]])
            else:
                _, c, kind, rotation, flipped, x, y = action
                move = socha.Move.set_move(socha.Piece(scolors[rules.COLOR_INDEX[c]], sshape[kind], srot[rotation],
                                                       flipped, socha.Coordinate(x, y)))
            socha.GameRuleLogic.perform_move(gs, move)
            socha.GameRuleLogic.remove_invalid_colors(gs)
            if not state.is_terminal():
                assert gs.turn == state.turn
                assert [gs.is_valid_color(c) for c in scolors] == [c in state.valid_colors for c in range(4)]
        assert gs.is_over()
        assert [gs.get_points_for_color(c) for c in scolors] == list(state.points().values())
    assert positions > 100


def test_2027_transformations_equal_socha():
    socha = needs.module("socha._socha", "socha, the Software-Challenge client")
    for i, shape in enumerate(socha.PieceShape.all()):
        for rotation in socha.Rotation.all():
            for flipped in (False, True):
                gs = socha.GameState(start_piece=shape)
                socha.GameRuleLogic.perform_set_move(gs, socha.Piece(socha.Color.BLUE, shape, rotation, flipped,
                                                                     socha.Coordinate(0, 6)))
                cells = {(f.coordinate.x, f.coordinate.y) for row in gs.board.map for f in row if not f.is_empty()}
                assert cells == set(piece_cells(SHAPES[i], rotation.name(), flipped, 0, 6))
