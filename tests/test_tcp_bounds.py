"""Each bot connection's bounded share (issue 6, item 7), over real sockets: a connection
sending junk is disconnected with an error line after ``ARENA_MAX_BAD_LINES``; one sending
faster than ``ARENA_LINES_PER_S`` is read no faster, and the other bots still play."""
from __future__ import annotations

import json
import socket
import threading

from tests.ld_bot import LDBot
from tests.serverproc import wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored


def read_all(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_junk_lines_get_an_error_line_and_the_connection_is_closed(arena_factory):
    with sigint_not_ignored():
        arena = arena_factory(env={"ARENA_MAX_BAD_LINES": "50"})
    with socket.create_connection(("127.0.0.1", arena.liars_dice_port)) as sock:
        sock.sendall(b"{}\n" * 49)
        sock.sendall(b"{}\n" * 1000)
        lines = [json.loads(line) for line in read_all(sock).splitlines()]
    assert lines[-1] == {"subject": "error", "message": "50 lines that break the protocol; disconnected"}
    assert "50 bad lines; disconnected" in arena.log()


def test_a_connection_over_its_line_rate_is_paused_and_a_match_goes_on(arena_factory):
    with sigint_not_ignored():
        arena = arena_factory(env={"ARENA_MAX_BAD_LINES": "1000000000", "ARENA_LINES_PER_S": "100",
                                   "ARENA_LINES_BURST": "100", "LIARS_DICE_AUTO_DICE": "2",
                                   "LIARS_DICE_AUTO_GAMES": "30"})
    stop = threading.Event()
    flooder = None

    def flood():
        nonlocal flooder
        flooder = socket.create_connection(("127.0.0.1", arena.liars_dice_port))
        try:
            while not stop.is_set():
                flooder.sendall(b"{}\n" * 10000)
        except OSError:
            pass

    a, b = LDBot(arena.liars_dice_port, "player-a"), LDBot(arena.liars_dice_port, "player-b")
    wait_until(lambda: a.requests(), 10, "the match under way")
    threading.Thread(target=flood, daemon=True).start()
    try:
        wait_until(lambda: "over 100 lines/s; reading paused" in arena.log(), 10, "the flooder paused")
        assert a.closed.wait(30) and b.closed.wait(30), "the match between the two bots finished"
        assert a.round_overs()[-1]["game_winner"] != -1
    finally:
        stop.set()
        if flooder is not None:
            flooder.close()
