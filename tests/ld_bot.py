"""A scripted Liar's Dice bot over real TCP, written from the seed and notes only.

``LDBot`` speaks the wire format; tests give it a ``decide(move_request) -> move`` function
(or raw bytes to send) and read back everything it received.
"""
from __future__ import annotations

import json
import random
import socket
import threading
import time
from typing import Callable


def simple_move(msg: dict, rng: random.Random = random.Random(0)):
    """A plausible bot: on turn, raise the count by one or (35%) challenge; else pass.  Like
    the reference's own bots/basic.js it raises past the dice on the table: a certainly false
    bid, which the reference accepts and leaves to the next challenge."""
    on_turn = msg["other_hands"][0][0] == 0
    last = msg["last_bid"]
    if not on_turn:
        return "pass"
    if last == [0, 0]:
        return [rng.randint(1, 6), 1]
    if rng.random() < 0.35:
        return "challenge"
    return [last[0], last[1] + 1]


def basic_move(msg: dict, rng: random.Random = random.Random(0)):
    """As the reference simulator's bots/basic.js plays: anyone challenges a standing bid with
    probability 0.2; otherwise the player on turn bids the last bid with its count raised by
    one (face 1 to open), whatever the dice on the table; the others pass."""
    last = msg["last_bid"]
    if last[0] > 0 and rng.random() < 0.2:
        return "challenge"
    if msg["other_hands"][0][0] == 0:
        return [last[0] or 1, last[1] + 1]
    return "pass"


def slow_simple_move(delay_s: float, rng: random.Random) -> Callable:
    """A ``decide`` for :class:`LDBot`: :func:`simple_move` after ``delay_s`` seconds (a bot
    that thinks, so a benchmark's healthy match has a steady pace)."""
    def decide(msg: dict):
        time.sleep(delay_s)
        return simple_move(msg, rng)
    return decide


class LDBot:
    """Connects to ``port``, optionally sends ``{"name": name}``, then answers each
    ``move_request`` with ``decide(msg)`` (None: say nothing) on a background thread.

    ``received`` keeps every message from the server, ``stamps`` the ``clock()`` of each
    arrival (default: wall time); ``closed`` is set when it hangs up.
    """

    def __init__(self, port: int, name: str | None = "bot", decide: Callable | None = simple_move,
                 host: str = "127.0.0.1", clock: Callable[[], float] = time.monotonic):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.decide = decide
        self.received: list[dict] = []
        self.clock = clock
        self.stamps: list[float] = []  # clock() at each arrival, as received
        self.closed = threading.Event()
        self.lock = threading.Lock()
        if name is not None:
            self.send_obj({"name": name})
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send_raw(self, data: bytes) -> None:
        with self.lock:
            self.sock.sendall(data)

    def send_obj(self, obj) -> None:
        self.send_raw((json.dumps(obj) + "\n").encode())

    def _run(self) -> None:
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    msg = json.loads(line)
                    self.stamps.append(self.clock())
                    self.received.append(msg)
                    if msg.get("subject") == "move_request":
                        self.answer(msg)
        except OSError:
            pass
        finally:
            self.closed.set()

    def answer(self, msg: dict) -> None:
        """Reply to one ``move_request`` with ``decide(msg)`` (None: stay silent)."""
        if self.decide is not None:
            move = self.decide(msg)
            if move is not None:
                self.send_obj({"message_id": msg["message_id"], "move": move})

    def requests(self) -> list[dict]:
        return [m for m in self.received if m.get("subject") == "move_request"]

    def round_overs(self) -> list[dict]:
        return [m for m in self.received if m.get("subject") == "round_over"]

    def close(self) -> None:
        """Hang up.  The shutdown sends the FIN at once: a bare close while the reading thread
        is blocked in ``recv`` sends nothing until that ``recv`` returns (Linux)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
