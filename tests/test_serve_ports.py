"""``manage.py serve`` when one of its ports is taken: it exits with a non-zero status and
says which setting to change, for every port it opens (the web port and each bot listener,
TCP or WebSocket); before, it logged CRITICAL and exited with 0 (the web and Hanabi ports)
or went on without its arena (a TCP bot port)."""
from __future__ import annotations

import os
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
