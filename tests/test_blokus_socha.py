"""The official Python client of the current contest (``socha`` 5.x, MIT, a test dependency)
plays whole ``swc_2027_blokus`` games through our Blokus port, unchanged.

Run as a script, this file is that client: ``python tests/test_blokus_socha.py --host H
--port P`` starts ``socha``'s own ``Starter`` with a logic that picks a random move from
``socha``'s ``possible_moves()`` and prints one line per event (``UPDATE turn``, ``MOVE``,
``RESULT``, ``ERROR``), so the tests can follow the game from its output.  ``socha`` joins
with a bare ``<join/>`` (its ``Join`` has no game type), which our port takes as the current
contest year; it parses every message with its own parser, so a message it could not read
would end it with an error.
"""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120.0  # a whole game of random moves through socha's pure-Python parser


def run_socha_player(port: int, seed: int, *extra: str) -> subprocess.Popen:
    """This file as a socha client process joining on ``port`` (stdout: one line per event)."""
    from tests import needs  # imported here: run as a script, this file is not in the package

    needs.module("socha", "socha, the Software-Challenge client")  # fails (or skips) here, not in the child
    return subprocess.Popen([sys.executable, __file__, "--host", "127.0.0.1", "--port", str(port),
                             "--seed", str(seed), *extra],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen) -> list[str]:
    """Wait for a socha client to end on its own; its output lines."""
    try:
        out, _ = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail("the socha client did not finish:\n" + out[-3000:])
    return out.splitlines()


def api(arena, path):
    with urllib.request.urlopen(arena.url + path, timeout=10) as resp:
        return json.load(resp)


def events(lines: list[str], kind: str) -> list[str]:
    return [line.split(" ", 1)[1] if " " in line else "" for line in lines if line.split(" ", 1)[0] == kind]


@pytest.fixture
def server(arena_factory):
    from tests.test_liars_dice_tcp import sigint_not_ignored

    with sigint_not_ignored():
        # A real client's pace: the default limits (2 s soft, 10 s hard) stay as they are.
        return arena_factory(env={"ARENA_BUILTIN_DELAY": "0", "ARENA_ROUND_PAUSE": "0"})


def check_regular_game(arena, match_id: int, socha_seats: list[int], lines_per_seat: dict[int, list[str]]):
    """The match finished REGULAR for both, no move was forced (every move was accepted), and
    each socha client saw the game to its end."""
    from tests.serverproc import wait_until

    match = wait_until(lambda: (lambda m: m if m["status"] == "finished" else None)(
        api(arena, f"/api/matches/{match_id}/")), 30, "the match finished")
    assert match["config"]["variant"] == "2027"
    assert match["result"]["causes"] == ["REGULAR", "REGULAR"], match["result"]
    assert not [e for e in match["events"] if e["forced"]], "every move was accepted"
    for seat in socha_seats:
        lines = lines_per_seat[seat]
        assert not events(lines, "ERROR"), lines[-20:]
        moves = events(lines, "MOVE")
        assert moves, "the socha client moved"
        assert len(moves) == len([e for e in match["events"] if e["seat"] == seat]), \
            "every move the client sent is in the log"
        (result,) = events(lines, "RESULT")
        assert "Siegpunkte" in result, "socha parsed our result"
        assert "LEFT" in lines, "and our <left>"
    return match


def test_socha_client_plays_a_whole_2027_game_against_a_builtin_bot(server):
    from tests.human_client import Guest

    match_id = Guest(server.url, "organiser").create_table(
        "blokus", {"variant": "2027"}, ["builtin:heuristic", "open_bot"])
    proc = run_socha_player(server.blokus_port, seed=1)
    lines = finish(proc)
    assert proc.returncode == 0, lines[-20:]
    assert f"JOINED {match_id}" in lines, "the open bot seat of the table made on the web"
    match = check_regular_game(server, match_id, [1], {1: lines})
    assert [s["name"] for s in match["seats"]][0] == "Heuristic bot"


def test_two_socha_clients_play_a_whole_2027_game_against_each_other(server):
    procs = [run_socha_player(server.blokus_port, seed=seed) for seed in (2, 3)]
    outputs = [finish(p) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[-20:] for o in outputs]
    (room,) = {events(o, "JOINED")[0] for o in outputs}
    teams = sorted(events(o, "WELCOME")[0] for o in outputs)
    assert teams == ["ONE", "TWO"]
    by_seat = {0 if events(o, "WELCOME")[0] == "ONE" else 1: o for o in outputs}
    check_regular_game(server, int(room), [0, 1], by_seat)


# --- the socha client (run as a script) ------------------------------------------------------------

def _main() -> None:
    import argparse
    import random

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--seed", type=int, default=0)
    ours, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0], *rest]  # socha's Starter reads its own options (--host, --port)

    from socha import GameState, TeamEnum
    from socha.api.networking.game_client import IClientHandler
    from socha.api.protocol.protocol import WelcomeMessage
    from socha.starter import Starter

    rng = random.Random(ours.seed)

    def say(*parts) -> None:
        print(*parts, flush=True)

    class RandomLogic(IClientHandler):
        state: GameState | None = None

        def on_game_joined(self, room_id) -> None:
            say("JOINED", room_id)

        def on_room_message(self, data) -> None:
            if isinstance(data, WelcomeMessage):
                say("WELCOME", "ONE" if data.team == TeamEnum.One else "TWO" if data.team == TeamEnum.Two else data.team)
            else:
                say("ROOM", data)

        def on_update(self, state: GameState) -> None:
            self.state = state
            say("UPDATE", state.turn)

        def calculate_move(self):
            move = rng.choice(self.state.possible_moves())
            say("MOVE", move)
            return move

        def on_game_over(self, result) -> None:
            say("RESULT", result)

        def on_error(self, message: str) -> None:
            say("ERROR", message)

        def on_game_left(self) -> None:
            say("LEFT")

    # socha asks PyPI for a newer version at start; a test must not depend on the network.
    Starter.check_socha_version = staticmethod(lambda: None)
    Starter(logic=RandomLogic())


if __name__ == "__main__":
    _main()
