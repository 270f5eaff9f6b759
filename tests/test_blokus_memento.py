"""The memento encoder against the plain one it replaced.

``protocol.memento`` puts a memento together from cached parts (board rows, piece lists, the
last move, the names) so that a move costs the server little.  A bot must get exactly the
bytes the plain writer gave: every element written in full, every value escaped, for every
memento.  The plain writer lives here as the reference; the two are compared over whole random
games of both years (skips, a game's end, odd names and room ids, finished colours), in the
stream's indentation and in the replay file's.  Board rows, which the rules now take from a
cache too, are compared with a cell-by-cell reading of the bitboards.
"""
from __future__ import annotations

import random

import pytest

from games.blokus import protocol, rules
from games.blokus.rules import BOARD_SIZE, COLORS, STRIDE, TEAMS

# Names and room ids with every character the writer escapes, alone and together.
NAMES = (["", ""], ["Bob", "Alice"], ['A&B <"x"> \'y\'\ttab', "ctl\x01\x7f"], ["Tom & Jerry", "x:y/z-1.2_3 4"],
         ["\u00e9t\u00e9 \U0001F600", "x" * 40], ["line\nbreak", "cr\rhere"], ["O'Brien", "tab\there"],
         ['say "hi"', "a>b"])
ROOMS = ("12", "cb3bc426-5c70-48b9-9307-943bc328b503", "r<&>'\"", "R&D")


# --- the reference: the plain element writer, every element in full ----------------------------

def _escape(value, table) -> str:
    return protocol._NOT_XML.sub("\ufffd", str(value)).translate(table)


def _wire(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class El:
    """tag, attributes in order, then text or children; written as XStream's pretty printer."""

    def __init__(self, tag, attrs=(), children=(), text=None):
        self.tag, self.attrs, self.children, self.text = tag, attrs, children, text

    def lines(self, level: int, out: list[str]) -> list[str]:
        pad = "  " * level
        head = pad + "<" + self.tag + "".join(f' {k}="{_escape(_wire(v), protocol._ATTR_ESCAPES)}"'
                                              for k, v in self.attrs)
        if self.text is not None:
            out.append(f"{head}>{_escape(self.text, protocol._TEXT_ESCAPES)}</{self.tag}>")
        elif not self.children:
            out.append(head + "/>")
        else:
            out.append(head + ">")
            for child in self.children:
                child.lines(level + 1, out)
            out.append(f"{pad}</{self.tag}>")
        return out


def reference_last_move(action, variant: str) -> list[El]:
    if action is None:
        return []
    package = "sc.plugin2021" if variant == "2021" else "sc.plugin2027"
    if action[0] == "set":
        _, color, kind, rotation, flipped, x, y = action
        attrs = [("color", color), ("kind", kind), ("rotation", rotation), ("isFlipped", bool(flipped))]
        children = [El("piece", attrs, [El("position", [("x", x), ("y", y)])])]
        return [El("lastMove", [("class", f"{package}.SetMove")], children)]
    return [El("lastMove", [("class", f"{package}.SkipMove")], [El("color", text=action[1])])]


def reference_memento_room(room_id: str, obs: dict, names) -> El:
    """The memento ``<room>`` as an element tree (the encoder as it was)."""
    variant = obs["variant"]
    shapes = [El(f"{c.lower()}Shapes", (), [El("shape", text=s) for s in obs["shapes"][c]]) for c in COLORS]
    valid = El("validColors", (), [El("color", text=c) for c in obs["valid_colors"]])
    fields = [El("field", [("x", x), ("y", y), ("content", protocol._COLOR_OF_LETTER[ch])])
              for y, row in enumerate(obs["board"]) for x, ch in enumerate(row) if ch != "."]
    board = El("board", (), fields)
    key = "color" if variant == "2021" else "sc.plugin2027.Color"
    mono = El("lastMoveMono", (), [El("entry", (), [El(key, text=c), El("boolean", text=_wire(bool(v)))])
                                   for c, v in obs["last_move_mono"].items()])
    if variant == "2021":
        attrs = [("class", "state"), ("turn", obs["turn"]), ("round", obs["round"]), ("startPiece", obs["start_piece"])]
        players = [El(tag, [("displayName", names[seat])], [El("color", [("class", "team")], text=TEAMS[seat])])
                   for seat, tag in enumerate(("first", "second"))]
        children = ([El("startTeam", [("class", "team")], text=obs["start_team"])] + shapes + [valid] + players
                    + [board] + reference_last_move(obs["last_move"], variant) + [mono])
    else:
        attrs = [("class", "state"), ("startTeam", obs["start_team"]), ("turn", obs["turn"]),
                 ("startPiece", obs["start_piece"]), ("round", obs["round"])]
        children = reference_last_move(obs["last_move"], variant) + [board, mono] + shapes + [valid]
    return El("room", [("roomId", room_id)], [El("data", [("class", "memento")], [El("state", attrs, children)])])


def reference_memento(room_id: str, obs: dict, names) -> bytes:
    return ("\n" + "\n".join(reference_memento_room(room_id, obs, names).lines(1, []))).encode()


def reference_rows(state) -> list[str]:
    """The board read cell by cell from the colours' bitboards."""
    return ["".join(next((name[0] for c, name in enumerate(COLORS) if state.own[c] >> (y * STRIDE + x) & 1), ".")
                    for x in range(BOARD_SIZE)) for y in range(BOARD_SIZE)]


# --- whole games ----------------------------------------------------------------------------------

def random_game(variant: str, seed: int):
    """Every state of a random game (a skip now and then, where allowed), start and end included."""
    rng = random.Random(seed)
    state = rules.new_state({"variant": variant}, seed)
    yield state
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        placements = [a for a in legal if a[0] == "set"]
        skip = legal[-1] if legal[-1][0] == "skip" else None
        state.apply({seat: skip if skip and (not placements or rng.random() < 0.1) else rng.choice(placements)})
        yield state


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_every_memento_of_random_games_is_the_plain_writers(variant):
    rng = random.Random(17)
    mementos = 0
    for game in range(12):
        names = NAMES[game % len(NAMES)]
        room = ROOMS[game % len(ROOMS)]
        for state in random_game(variant, 1000 * game + 7):
            obs = state.public_observation()
            if rng.random() < 0.2:  # colours done with all their pieces (random games rarely get there)
                obs["last_move_mono"] = {c: rng.random() < 0.5 for c in rng.sample(COLORS, rng.randint(1, 4))}
            assert protocol.memento(room, obs, names) == reference_memento(room, obs, names), (game, state.turn)
            mementos += 1
        assert state.is_terminal()
    assert mementos > 12 * 40


def test_the_replay_files_mementos_are_the_plain_writers_at_column_zero():
    state, steps = None, []
    for state in random_game("2021", 5):
        if state.last_move is not None:
            steps.append((rules.COLOR_INDEX[state.last_move[1]] % 2, list(state.last_move)))
    names = ["Bob", "A&B"]
    text = protocol.export_replay({"variant": "2021"}, 5, steps, names, room_id="R")
    replay = rules.new_state({"variant": "2021"}, 5)
    expected = ["\n".join(reference_memento_room("R", replay.public_observation(), names).lines(0, []))]
    for seat, action in steps:
        replay.apply({seat: action})
        expected.append("\n".join(reference_memento_room("R", replay.public_observation(), names).lines(0, [])))
    assert text.startswith("<protocol>\n" + "\n".join(expected) + "\n<room roomId=\"R\">\n  <data class=\"result\">")


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_board_rows_are_the_bitboards_read_cell_by_cell(variant):
    for game in range(6):
        for state in random_game(variant, 300 + game):
            assert state.board_rows() == reference_rows(state) == state.public_observation()["board"]


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_the_lean_memento_observation_writes_the_same_memento_as_the_full_one(variant):
    """What the players get after every move (``Room.memento``) is made from
    ``memento_observation``; it must write byte for byte what the full observation writes."""
    for game in range(6):
        names = NAMES[game % len(NAMES)]
        for state in random_game(variant, 500 * game + 3):
            assert (protocol.memento("9", state.memento_observation(), names)
                    == protocol.memento("9", state.public_observation(), names)), (game, state.turn)
