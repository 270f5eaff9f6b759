"""Each bot connection's bounded share, over real sockets: a connection
sending junk is disconnected with an error line after ``ARENA_MAX_BAD_LINES``; one sending
faster than ``ARENA_LINES_PER_S`` is read no faster, and the other bots still play."""
from __future__ import annotations

import json
import socket
import threading
import time

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
    """A bot floods junk lines while two others play: the server reads it at no more than
    ``ARENA_LINES_PER_S`` after its burst (so its 600th bad line, which gets it disconnected,
    comes 5 s after it connected at the earliest: a busy machine only makes that later), and
    the match between the two others goes on to its end."""
    rate, burst, max_bad = 100, 100, 600
    with sigint_not_ignored():
        arena = arena_factory(env={"ARENA_MAX_BAD_LINES": str(max_bad), "ARENA_LINES_PER_S": str(rate),
                                   "ARENA_LINES_BURST": str(burst), "LIARS_DICE_AUTO_DICE": "2",
                                   "LIARS_DICE_AUTO_GAMES": "30"})
    flood = {}

    def flooder():
        with socket.create_connection(("127.0.0.1", arena.liars_dice_port)) as sock:
            sock.settimeout(60)  # the server stopped reading and never hung up: the test fails
            try:
                while True:
                    sock.sendall(b"{}\n" * 10000)
            except TimeoutError:
                flood["outcome"] = "still connected after 60 s"
            except OSError:
                flood["outcome"] = "disconnected"
            flood["ended"] = time.monotonic()

    a, b = LDBot(arena.liars_dice_port, "player-a"), LDBot(arena.liars_dice_port, "player-b")
    wait_until(lambda: a.requests(), 10, "the match under way")
    flood["started"] = time.monotonic()
    threading.Thread(target=flooder, daemon=True).start()
    wait_until(lambda: "ended" in flood, 90, "the flooder's end")
    assert flood["outcome"] == "disconnected"
    assert flood["ended"] - flood["started"] >= (max_bad - burst) / rate, "read no faster than the rate"
    assert "over 100 lines/s; reading paused" in arena.log()
    assert a.closed.wait(60) and b.closed.wait(60), "the match between the two bots finished"
    assert a.round_overs()[-1]["game_winner"] != -1
