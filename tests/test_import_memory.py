"""What an import costs the server's memory: for every game's log format, a valid file with
one long string, files of many small values and files nested deep, each near the 5 MiB
upload bound, are read (or refused) with a peak memory of a few times the file's size.

Each import runs in a fresh process (tests/import_memory_child.py) that reports the rise of
its peak resident memory (libxml2's allocations count too, which tracemalloc would miss), so
the bound is a ratio to the upload's size, whatever the machine's speed or load.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from games.hanabi import hanablive
from games.jass import bots, logs, protocol
from games.jass.rules import new_state
from tests.test_hanabi_hanablive import finished

ROOT = Path(__file__).resolve().parent.parent
#: Size of the hostile files (characters): near the upload bound (games/arena/web/exchange.py).
SIZE = 4_500_000
#: Peak memory an import may cost, as a multiple of its file's size.  Measured: 1.1 to 3.9
#: (the decoded text is 1 of it); before the bounds a long string cost 122 and a list of
#: short strings 36.
FACTOR = 5
BLOKUS = (ROOT / "tests" / "data" / "blokus" / "synthetic-2021-regular.xml").read_text()


def peak_rise(tmp_path, game: str, text: str) -> tuple[float, dict]:
    """(the import's peak memory rise / the file's size, the child's outcome)."""
    data = text.encode()
    path = tmp_path / "upload"
    path.write_bytes(data)
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "import_memory_child.py"), game, str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["peak_rise_kib"] * 1024 / len(data), result


def hanabi_with(extra) -> str:
    state = finished(2, 9)
    game = hanablive.export_game(["a", "b"], state.faces, state.history)
    game["notes"] = extra
    return json.dumps(game, separators=(",", ":"))


def jass_with(extra) -> str:
    state, rng = new_state({"max_deals": 1}, 3), random.Random(1)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: bots.rule_bot(state.observation(seat), state.legal_actions(seat), rng)})
    game = protocol.game_log(state.deal_records()[0])
    game["comment"] = extra
    return json.dumps(game, separators=(",", ":"))


def blokus_with(inside_protocol: str) -> str:
    return BLOKUS.replace("<protocol>", "<protocol>" + inside_protocol, 1)


def nested(n: int) -> str:
    return "[" * n + "]" * n


VALID = {
    "hanabi": hanabi_with("x" * SIZE),
    "jass": jass_with("x" * SIZE),
    "blokus": BLOKUS.replace("<protocol>", f'<protocol note="{"x" * SIZE}">', 1),
}
HOSTILE = [
    pytest.param("hanabi", hanabi_with(["ab"] * (SIZE // 5)), "more than 5,000 JSON values", id="hanabi-short-strings"),
    pytest.param("hanabi", hanabi_with([{}] * (SIZE // 3)), "more than 5,000 JSON values", id="hanabi-empty-objects"),
    pytest.param("hanabi", hanabi_with("@").replace('"@"', nested(SIZE // 2)), "nested deeper than 4 levels",
                 id="hanabi-deep"),
    pytest.param("hanabi", hanabi_with("\n" * (SIZE // 2)), None, id="hanabi-long-string-of-escapes"),
    pytest.param("jass", jass_with(["ab"] * (SIZE // 5)), f"more than {logs.MAX_VALUES:,} JSON values",
                 id="jass-short-strings"),
    pytest.param("jass", jass_with([1000] * (SIZE // 5)), f"more than {logs.MAX_VALUES:,} JSON values",
                 id="jass-numbers"),
    pytest.param("jass", nested(50_000), "nested deeper than 8 levels", id="jass-deep"),
    pytest.param("jass", "\n" * SIZE, "the file is empty", id="jass-empty-lines"),
    pytest.param("jass", "1\n" * (SIZE // 2), "line 1", id="jass-one-number-a-line"),
    pytest.param("blokus", blokus_with('<room><data class="error"/></room>' * 100_000), "more than 500 messages",
                 id="blokus-many-messages"),
    pytest.param("blokus", blokus_with("<a>" * (SIZE // 3)), "nested deeper than 16 levels", id="blokus-deep"),
    pytest.param("blokus", blokus_with(f"<!--{'x' * SIZE}-->"), None, id="blokus-long-comment"),
]


@pytest.mark.parametrize("game", sorted(VALID))
def test_a_valid_file_with_one_long_string_imports_at_a_few_times_its_size(tmp_path, game):
    factor, result = peak_rise(tmp_path, game, VALID[game])
    assert "error" not in result, result
    assert result["steps"] > 0
    assert factor < FACTOR, f"{game}: the import's peak memory rose by {factor:.1f} times the file's size"


@pytest.mark.parametrize("game, text, error", HOSTILE)
def test_many_small_values_and_deep_nesting_cost_a_few_times_the_files_size(tmp_path, game, text, error):
    factor, result = peak_rise(tmp_path, game, text)
    if error is not None:
        assert error in result.get("error", ""), result
    assert factor < FACTOR, f"{game}: the import's peak memory rose by {factor:.1f} times the file's size"


def test_the_measure_before_parsing_skips_strings_escapes_included_and_counts_values_and_depth():
    """What :func:`~games.arena.bots.json_limits.json_size_problem` counts: brackets and commas in
    strings (escaped quotes included) are not structure; an unterminated string runs to the
    end; a key and its value count once."""
    from games.arena.bots.json_limits import json_size_problem, json_too_deep

    text = '{"a": "[[[[,,,,\\"]]", "b": [1, 2]}'
    assert json.loads(text) == {"a": '[[[[,,,,"]]', "b": [1, 2]}
    assert json_size_problem(text, 2, 5) is None
    assert json_size_problem(text, 2, 4) == "more than 4 JSON values"
    assert json_size_problem(text, 1, 5) == "nested deeper than 1 levels"
    assert json_size_problem('["[[[[[', 1, 2) is None, "unterminated: one array and its string"
    assert json_too_deep(b'[["\\\\"], [[[1]]]]', 3) and not json_too_deep(b'[["\\\\[[["], [[1]]]', 3)
