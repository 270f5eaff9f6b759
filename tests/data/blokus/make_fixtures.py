"""Writes the synthetic 2021 replay files of this folder, in the official server's format (see README.md).

Run from the repository root: ``PYTHONPATH=. .venv/bin/python tests/data/blokus/make_fixtures.py``.  The
games are played by the built-in random bot with fixed seeds; the files are then given the
traits of a file written by the official 2021 server that our own export does not have.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

from games.blokus import protocol, rules
from games.blokus.bots import random_bot

HERE = Path(__file__).parent
ROOM = "cb3bc426-5c70-48b9-9307-943bc328b503"   # the seed's example room id
NAMES = ["Bob", "Alice"]


def play(seed: int, moves: int | None = None):
    """A random game from ``seed``: (config, steps) of its first ``moves`` moves (all if None)."""
    config = {"variant": "2021", "start_piece": None}
    state = rules.new_state(config, seed)
    rng = random.Random(seed)
    steps = []
    while not state.is_terminal() and (moves is None or len(steps) < moves):
        seat = state.to_act()[0]
        action = random_bot(state.public_observation(), state.legal_actions(seat), rng)
        state.apply({seat: action})
        steps.append((seat, action))
    return config, steps, state


def rooms(text: str) -> list[str]:
    return re.findall(r"<room .*?</room>\n", text, flags=re.S)


def violation_fixture() -> None:
    """A game ended by a rule violation at move 23: the offender's invalid move is echoed in an
    ``error`` message, the result gives RULE_VIOLATION; the game was paused once after move 5,
    so that memento is in the file twice (AbstractGame.afterPause sends the state again)."""
    config, steps, state = play(11, 22)
    seat = state.to_act()[0]
    color = rules.COLORS[state.current_color]
    reason = f"Farbe {color} hat einen Stein nicht an die Ecke eines vorhandenen Teils gleicher Farbe gelegt"
    bad = ["set", color, state.public_observation()["shapes"][color][-1], "NONE", False, 9, 9]
    steps.append((seat, ["forfeit", "RULE_VIOLATION", reason]))
    text = protocol.export_replay(config, 11, steps, NAMES, room_id=ROOM)
    parts = rooms(text)
    error = "\n".join(protocol.error(ROOM, f"Ungueltiger Zug von '{NAMES[seat]}'.\n{reason}", bad, "2021")
                      .decode().splitlines()[1:]) + "\n"
    error = re.sub(r"^  ", "", error, flags=re.M)   # rooms in a replay start at column 0
    parts = parts[:6] + [parts[5]] + parts[6:-1] + [error, parts[-1]]
    (HERE / "synthetic-2021-violation.xml").write_text("<protocol>\n" + "".join(parts) + "</protocol>")


def regular_fixture() -> None:
    """A game played to its regular end; as the 2021 server does, no memento follows the move
    that ended the game (AbstractGame.next: "TODO send last state"), so the importer must
    recover it from the result (this seed's last move is the only one that fits)."""
    for seed in range(100, 400):
        config, steps, state = play(seed)
        before = rules.new_state(config, seed)
        for seat, action in steps[:-1]:
            before.apply({seat: action})
        if protocol.infer_last_move(before, state.team_points()) == steps[-1][1]:
            break
    else:
        raise SystemExit("no seed with a recoverable last move")
    text = protocol.export_replay(config, seed, steps, NAMES, room_id=ROOM)
    parts = rooms(text)
    parts = parts[:-2] + parts[-1:]   # drop the memento after the last move
    (HERE / "synthetic-2021-regular.xml").write_text("<protocol>\n" + "".join(parts) + "</protocol>")
    print("regular fixture: seed", seed, "moves", len(steps), "result", state.result()["scores"])


if __name__ == "__main__":
    violation_fixture()
    regular_fixture()
