"""Built-in Blokus bots.  They see only their observation, like any other seat (Blokus has no
hidden information, so that is everything).

Policies have the signature ``policy(observation, legal_actions, rng) -> action``; the
actions are the rules' ``["set", colour, kind, rotation, flipped, x, y]`` / ``["skip", colour]``.
"""
from __future__ import annotations

import random

from games.blokus import rules
from games.blokus.rules import COLORS, SET, STRIDE, diagonal_neighbours, edge_neighbours, piece_mask

#: Rounds in which the heuristic still pulls towards the centre (the opening race for space).
OPENING_ROUNDS = 6
#: Weights of the heuristic's terms (tuned by hand against the random bot, benchmarks/blokus_bots.py).
W_SIZE = 4.0            # per square placed: big pieces first, they are hardest to place late
W_OWN_CORNERS = 1.0     # per own corner cell gained
W_BLOCKED = 1.5         # per opponent corner cell covered
W_CENTRE = 0.6          # per step closer to the centre, in the opening
CENTRE = 9.5


def random_bot(obs: dict, legal: list, rng: random.Random):
    """Any legal placement, uniformly; skips only when there is none."""
    placements = [a for a in legal if a[0] == SET]
    if placements:
        return rng.choice(placements)
    return legal[-1]


def _boards(obs: dict) -> tuple[list[int], int]:
    """``(own bitboard per colour, occupied)`` from the observation's board strings."""
    own = [0, 0, 0, 0]
    letter = {name[0]: c for c, name in enumerate(COLORS)}
    for y, row in enumerate(obs["board"]):
        for x, ch in enumerate(row):
            if ch != ".":
                own[letter[ch]] |= 1 << (y * STRIDE + x)
    occupied = own[0] | own[1] | own[2] | own[3]
    return own, occupied


def _corner_cells(own: int, occupied: int) -> int:
    """Cells where a colour with cells ``own`` may continue (free, diagonal to own, no edge)."""
    return diagonal_neighbours(own) & ~(occupied | edge_neighbours(own)) & rules.BOARD_MASK


def heuristic_bot(obs: dict, legal: list, rng: random.Random):
    """Greedy one-ply evaluation of every placement:
    ``4 x squares + own corner cells gained + 1.5 x opponents' corner cells covered
    + 0.6 x closeness to the centre`` (the last only in the first six rounds), ties broken at
    random.  Skips only when no placement exists.  About 5-20 ms per move (benchmarks)."""
    placements = [a for a in legal if a[0] == SET]
    if not placements:
        return legal[-1]
    color = rules.COLOR_INDEX[placements[0][1]]
    own, occupied = _boards(obs)
    my_own = own[color]
    base_corners = _corner_cells(my_own, occupied).bit_count()
    opponent_corners = 0
    for c in range(4):
        if c % 2 != color % 2:
            opponent_corners |= _corner_cells(own[c], occupied)
    opening = obs.get("round", 1) <= OPENING_ROUNDS
    best, best_score = None, None
    for action in placements:
        _, _, kind, rotation, flipped, x, y = action
        mask = piece_mask(kind, rotation, flipped, x, y)
        size = mask.bit_count()
        new_own = my_own | mask
        gained = _corner_cells(new_own, occupied | mask).bit_count() - base_corners
        score = W_SIZE * size + W_OWN_CORNERS * gained + W_BLOCKED * (mask & opponent_corners).bit_count()
        if opening:
            cells = rules.piece_cells(kind, rotation, flipped, x, y)
            cx = sum(c[0] for c in cells) / size
            cy = sum(c[1] for c in cells) / size
            score -= W_CENTRE * (abs(cx - CENTRE) + abs(cy - CENTRE))
        score += rng.random() * 1e-3   # random tie-break, tiny next to every term
        if best_score is None or score > best_score:
            best, best_score = action, score
    return best


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "heuristic": ("Heuristic bot", heuristic_bot),
}
