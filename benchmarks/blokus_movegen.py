"""Blokus legal-move generation: our bitboard generator next to socha 5.x's engine.

Collects ``N`` mid-game positions (turns 8..60) of the 2027 variant from seeded games (random
and heuristic bots mixed, so positions are varied), rebuilds each one as a socha
``GameState`` through its constructor (turn, board, start piece, last_move_mono, undeployed
shapes via ``remove_undeployed_piece``, dropped colours via ``remove_active_color``), checks
that both produce the same number of distinct placements (socha's full list,
``GameRuleLogic.get_all_possible_moves``), then times, on the same positions in the same run:

- ours: ``BlokusState.placements()`` (variant, x, y tuples) and ``legal_actions()`` (the
  JSON-able action lists the arena uses), each from a cold cache;
- socha: ``GameRuleLogic.get_all_possible_moves(gs)`` (every legal SetMove) and
  ``gs.possible_moves()`` (its filtered "sensible" list: rounds 2-5 pentominoes only, so it
  is not the legal set; shown for reference).

Prints positions/s and moves/s for each (best of ``REPEATS`` passes).

    .venv/bin/python benchmarks/blokus_movegen.py [N]
"""
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from socha import _socha as S  # noqa: E402

from games.blokus import rules  # noqa: E402
from games.blokus.bots import heuristic_bot, random_bot  # noqa: E402

REPEATS = 3
SCOLORS = [S.Color.BLUE, S.Color.YELLOW, S.Color.RED, S.Color.GREEN]
SSHAPES = dict(zip(rules.SHAPES, S.PieceShape.all()))
SCONTENT = {c[0]: getattr(S.FieldContent, c) for c in rules.COLORS}


def collect(n: int) -> list[rules.BlokusState]:
    """``n`` positions at turns 8..60 from seeded 2027 games, a few per game."""
    positions = []
    seed = 0
    while len(positions) < n:
        rng = random.Random(seed)
        state = rules.new_state({"variant": "2027"}, seed)
        policies = [heuristic_bot if rng.random() < 0.5 else random_bot for _ in range(2)]
        wanted = set(rng.sample(range(8, 61), 6))
        while not state.is_terminal() and state.turn <= 60 and len(positions) < n:
            if state.turn in wanted:
                positions.append(state.clone())
            (seat,) = state.to_act()
            state.apply({seat: policies[seat](state.observation(seat), state.legal_actions(seat), rng)})
        seed += 1
    return positions


def to_socha(state: rules.BlokusState) -> S.GameState:
    """The same position as a socha GameState, built through its constructor."""
    obs = state.public_observation()
    fields = S.Board.random_fields()          # an empty 20x20 grid, fields[y][x]
    board = S.Board(fields)
    for y, row in enumerate(obs["board"]):
        for x, ch in enumerate(row):
            if ch != ".":
                board.set_content(S.Coordinate(x, y), SCONTENT[ch])
    mono = {SCOLORS[rules.COLOR_INDEX[c]]: v for c, v in obs["last_move_mono"].items()}
    gs = S.GameState(turn=obs["turn"], board=board, start_piece=SSHAPES[obs["start_piece"]], last_move_mono=mono)
    for c, name in enumerate(rules.COLORS):
        for shape in rules.SHAPES:
            if shape not in obs["shapes"][name]:
                gs.remove_undeployed_piece(SCOLORS[c], SSHAPES[shape])
    for c in range(4):                        # socha drops only the colour to move, then advances
        if c not in state.valid_colors:
            gs.turn = c
            gs.remove_active_color()
    gs.turn = obs["turn"]
    return gs


def best_of(fn, items) -> tuple[float, int]:
    """(best seconds over REPEATS passes, total items produced in one pass)."""
    best, produced = float("inf"), 0
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        produced = sum(fn(item) for item in items)
        best = min(best, time.perf_counter() - t0)
    return best, produced


def ours_placements(state):
    state._moves_cache = None                 # cold: no cached list from an earlier pass
    return len(state.placements())


def ours_actions(state):
    state._moves_cache = None
    (seat,) = state.to_act()
    return len(state.legal_actions(seat)) - 1     # minus the SkipMove


def main(n: int) -> None:
    positions = collect(n)
    games = [to_socha(p) for p in positions]
    for state, gs in zip(positions, games):      # same position, same legal set size
        ours = len(state.placements())
        theirs = S.GameRuleLogic.get_all_possible_moves(gs)
        # socha 5.1's Piece.coordinates() fails (unhashable Coordinate): cells from the spelling
        names = {v: k for k, v in SSHAPES.items()}
        distinct = {(p.kind, frozenset(rules.piece_cells(names[p.kind], p.rotation.name(), p.is_flipped,
                                                         p.position.x, p.position.y))) for p in theirs}
        assert gs.current_color() == SCOLORS[state.current_color]
        assert ours == len(theirs) == len(distinct), (state.turn, ours, len(theirs), len(distinct))
    rows = [
        ("ours: placements()", best_of(ours_placements, positions)),
        ("ours: legal_actions()", best_of(ours_actions, positions)),
        ("socha: GameRuleLogic.get_all_possible_moves",
         best_of(lambda g: len(S.GameRuleLogic.get_all_possible_moves(g)), games)),
        ("socha: GameState.possible_moves (filtered)", best_of(lambda g: len(g.possible_moves()), games)),
    ]
    turns = sorted(p.turn for p in positions)
    print(f"{len(positions)} positions of the 2027 variant, turns {turns[0]}..{turns[-1]}; "
          f"same distinct placement count as socha's full list at every position")
    for label, (seconds, moves) in rows:
        print(f"  {label:46s} {len(positions) / seconds:9.0f} positions/s {moves / seconds:11.0f} moves/s "
              f"({moves} moves, {seconds * 1000:.1f} ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
