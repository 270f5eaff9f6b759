"""``manage.py serve`` when one of its ports is taken: it exits with a non-zero status and
says which setting to change, for every port it opens (the web port and each bot listener,
TCP or WebSocket); before, it logged CRITICAL and exited with 0 (the web and Hanabi ports)
or went on without its arena (a TCP bot port)."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest

from tests.serverproc import ROOT, free_port


#: Every port ``manage.py serve`` listens on.
PORT_SETTINGS = ("ARENA_HTTP_PORT", "LIARS_DICE_PORT", "BLOKUS_PORT", "HANABI_PORT", "BRIDGE_PORT",
                 "BRIDGE_TABLE_MANAGER_PORT")


@pytest.mark.parametrize("setting, role, words", [
    ("ARENA_HTTP_PORT", "all", "web server: cannot listen on 127.0.0.1:{port} (Address already in use); "
                               "set ARENA_HTTP_PORT (or --port) to a free port"),
    ("LIARS_DICE_PORT", "all", "Liar's Dice bot listener: cannot listen on 127.0.0.1:{port} (Address already in use); "
                               "set LIARS_DICE_PORT to a free port"),
    ("BLOKUS_PORT", "arena", "Blokus bot listener: cannot listen on 127.0.0.1:{port} (Address already in use); "
                             "set BLOKUS_PORT to a free port"),
    ("HANABI_PORT", "all", "Hanabi bot listener: cannot listen on 127.0.0.1:{port} (Address already in use); "
                           "set HANABI_PORT to a free port"),
    ("BRIDGE_PORT", "all", "Contract bridge (text protocol) bot listener: cannot listen on 127.0.0.1:{port} "
                           "(Address already in use); set BRIDGE_PORT to a free port"),
    ("BRIDGE_TABLE_MANAGER_PORT", "all", "Contract bridge (Blue Chip table manager) bot listener: cannot listen on "
                                         "127.0.0.1:{port} (Address already in use); set BRIDGE_TABLE_MANAGER_PORT to "
                                         "a free port"),
])
def test_a_taken_port_stops_the_server_with_a_failure_status_naming_its_setting(tmp_path, setting, role, words):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        # The other ports are free ones, which another program may take between choosing and
        # listening (the server then names that port): choose again, up to three times.
        for _ in range(3):
            env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path), setting: str(port)}
            for other in PORT_SETTINGS:
                if other != setting:
                    env[other] = str(free_port())
            env.pop("DJANGO_SETTINGS_MODULE", None)
            out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "serve", "--role", role], cwd=ROOT,
                                 env=env, capture_output=True, text=True, timeout=120)
            if out.returncode == 0 or f":{port} " in out.stderr:
                break
    finally:
        taken.close()
    assert out.returncode != 0, out.stdout + out.stderr
    assert "CommandError: " + words.format(port=port) in out.stderr


@pytest.mark.parametrize("reuse", ["0", "1"])
def test_a_second_arena_on_the_first_ones_ports_stops_with_a_failure_status(arena_factory, tmp_path, reuse):
    """Issue 26: a second ``--role arena`` on the same host and ports exits 1 naming a port's
    setting; also with ``ARENA_REUSE_PORT=1`` when the first arena did not share its ports
    (``SO_REUSEPORT`` lets a port be shared only by listeners that all asked for it)."""
    first = arena_factory(role="arena")
    env = {**first.env, "ARENA_DATA_DIR": str(tmp_path), "ARENA_REUSE_PORT": reuse}
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "serve", "--role", "arena"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert re.search(r"CommandError: .* bot listener: cannot listen on 127\.0\.0\.1:\d+ \(Address already in use\); "
                     r"set [A-Z_]+_PORT to a free port", out.stderr), out.stderr
    assert first.proc.poll() is None, "the first arena goes on"
