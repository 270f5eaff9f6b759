"""``manage.py tournament run`` on a bot author's machine (issue 27, "The command line"): a
real process on the embedded default (SQLite, in-memory channel layer), as a user runs it.

- built-in bots to the end: the result table as JSON, every planned game played;
- Ctrl-C (SIGINT) in the middle stops it cleanly and prints what was played;
- a Hanabi entrant that connects over WebSocket (Daphne serves that port in this process, as
  ``serve`` does): two connections of one keyed bot fill a table's seats, one match each.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.hanabi_client import HanabiClient
from tests.serverproc import ROOT, free_port, wait_for_port, wait_until


def _env(data_dir: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update({"ARENA_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1",
                # Every TCP door listens in `run` (bots may connect): free ports, not the defaults.
                "LIARS_DICE_PORT": str(free_port()), "BLOKUS_PORT": str(free_port()),
                "HANABI_PORT": str(free_port()), "BRIDGE_PORT": str(free_port()),
                "BRIDGE_TABLE_MANAGER_PORT": str(free_port())})
    env.update(extra)
    return env


def _manage(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_run_plays_every_game_and_prints_the_standings_as_json():
    env = _env(Path(tempfile.mkdtemp(prefix="arena-cli-")))
    out = _manage(env, "tournament", "run", "--game", "liars_dice", "--entrant", "builtin:random",
                  "--entrant", "builtin:probability", "--config", "players=2", "--config", "dice=2",
                  "--per-pairing", "6", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "finished" and result["progress"]["done"] == result["progress"]["planned"] == 6
    rows = {row["name"]: row for row in result["standings"]}
    assert set(rows) == {"Random bot", "Probability bot"}
    assert [rows[name]["games"] for name in rows] == [6, 6]
    assert sum(rows[name]["points"] for name in rows) == 6  # one point a match, shared on a draw
    for row in rows.values():  # the statistic with its 95% interval, and the forced moves
        assert row["low"] <= row["stat"] <= row["high"] and row["forced"] >= 0


def test_ctrl_c_stops_the_run_and_prints_what_was_played():
    env = _env(Path(tempfile.mkdtemp(prefix="arena-cli-")))
    _manage(env, "migrate", "--verbosity", "0")
    # Paced moves: the run is still going when the signal comes, whatever the machine's speed.
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "tournament", "run", "--no-migrate",
                             "--game", "liars_dice", "--entrant", "builtin:random", "--entrant", "builtin:random",
                             "--per-pairing", "200", "--at-once", "1", "--pace", "0.2"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_port(int(env["LIARS_DICE_PORT"]), proc=proc)  # its arena is up
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "stopped with Ctrl-C" in stderr
    assert "cancelled" in stdout and "Random bot (1)" in stdout and "Random bot (2)" in stdout
    shown = _manage(env, "tournament", "show", "1", "--json")
    assert json.loads(shown.stdout)["status"] == "cancelled"


SETUP = """
import json
from django.contrib.auth import get_user_model
from games.arena.bots import bot_keys
from games.arena.models import RegisteredBot
user = get_user_model().objects.create(username="author")
key, key_hash = bot_keys.new_key()
bot = RegisteredBot.objects.create(owner=user, game="hanabi", name="my-hanabi", key_hash=key_hash)
print(json.dumps({"key": key, "bot": bot.pk}))
"""


def test_run_serves_the_hanabi_websocket_door_for_an_entrant_that_connects():
    env = _env(Path(tempfile.mkdtemp(prefix="arena-cli-")))
    _manage(env, "migrate", "--verbosity", "0")
    made = _manage(env, "shell", "-c", SETUP)
    assert made.returncode == 0, made.stderr
    setup = json.loads(made.stdout.strip().splitlines()[-1])
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "tournament", "run", "--no-migrate",
                             "--game", "hanabi", "--entrant", f"registered:{setup['bot']}", "--config", "players=2",
                             "--per-pairing", "2", "--at-once", "1", "--wait", "120", "--json"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(env["HANABI_PORT"])
    try:
        wait_for_port(port, proc=proc)
        # The arena's TCP doors open once it has started (before that Daphne's WebSocket port
        # answers 4503 "no arena is running; try again later", as `serve` does).
        wait_for_port(int(env["LIARS_DICE_PORT"]), proc=proc)
        for _ in range(2):  # one match per pair of connections, as the README says
            bots = [HanabiClient(port, "my-hanabi", key=setup["key"]) for _ in range(2)]
            for bot in bots:
                assert bot.done.wait(60), "a Hanabi match of the tournament did not end within 60 s"
            # The copies are told apart by number on the wire (Hanabi names its players), each
            # learning its own name as the original's client does; both played.
            assert sorted(bot.my_name for bot in bots) == ["my-hanabi", "my-hanabi (2)"]
            for bot in bots:
                assert any(m.get("msg_type", "").endswith("_RESPONSE") and "game_state" in m
                           and m.get("msg_type") != "GAME_START_RESPONSE" for m in bot.messages)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    result = json.loads(stdout)
    assert result["status"] == "finished"
    assert [(row["name"], row["games"], row["forfeits"]) for row in result["standings"]] == [("my-hanabi", 2, 0)]
