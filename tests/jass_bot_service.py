"""Scripted Jass bot services over real HTTP, written from the seed and notes: one process
may host a seed-style bot (``/select_trump``, ``/play_card``, ``/game_info``) or kit-style
bots (``/<name>/action_trump``, ...).  Behaviour per bot name: ``good`` plays a legal card,
``slow`` sleeps past the deadline, ``garbage`` answers non-JSON, ``illegal`` plays a card it
does not hold, ``wrongkey`` answers ``{"cards": ...}``, ``error`` answers 500, ``deep`` answers
JSON nested 10,000 deep, ``late<ms>`` (e.g. ``late9500``) waits that many milliseconds before
its first answer and then plays as ``good``."""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from games.jass.rules import CARD_INDEX, CARD_NAMES, legal_cards, names_to_mask


def legal_card(body: dict) -> str:
    """The first legal card of the player's hand, from the request alone."""
    seat = body["playerView"]
    hand = names_to_mask(body["player"][seat]["hand"])
    current = body["tricks"][-1]["cards"] if body["tricks"] and "win" not in body["tricks"][-1] else []
    mask = legal_cards(hand, [CARD_INDEX[c] for c in current], body["trump"])
    return next(CARD_NAMES[c] for c in range(36) if mask >> c & 1)


class Server(ThreadingHTTPServer):
    """Python's server listens with a backlog of 5: many bots (or connection tests) connecting
    at once on a busy machine would wait on SYN retries, seconds each, before they are heard."""

    request_queue_size = 128

    def handle_error(self, request, client_address):
        """A ``slow`` or ``late`` bot's answer after the arena gave up finds the connection
        closed, as it should: not a traceback in the test output.  Anything else still is."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class BotService:
    """Runs on 127.0.0.1:<free port> in a thread; ``calls`` records (path, body)."""

    def __init__(self, slow_s: float = 1.0):
        service = self
        self.calls: list[tuple[str, dict]] = []
        self.slow_s = slow_s
        self._late_done: set[str] = set()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real bot services

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.calls.append((self.path, body))
                parts = self.path.strip("/").split("/")
                name, action = (parts[0], parts[1]) if len(parts) == 2 else ("good", parts[0])
                status, data = service.answer(name, action, body)
                raw = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, name: str, action: str, body: dict):
        if action == "game_info":
            return 200, b""
        trump = action in ("select_trump", "action_trump")
        if name == "slow":
            time.sleep(self.slow_s)
        if name.startswith("late") and name not in self._late_done:
            self._late_done.add(name)
            time.sleep(int(name[4:]) / 1000)
        if name == "deep":
            return 200, b"[" * 10000 + b"]" * 10000
        if name == "garbage":
            return 200, b"<html>oops</html>"
        if name == "error":
            return 500, b"Internal Server Error"
        if name == "wrongkey":
            return 200, {"cards": "C8"}
        if trump:
            return 200, {"trump": 10 if body["forehand"] == -1 and name == "pusher" else 4}
        if name == "illegal":
            seat = body["playerView"]
            held = set(body["player"][seat]["hand"])
            return 200, {"card": next(c for c in CARD_NAMES if c not in held)}
        return 200, {"card": legal_card(body)}

    def url(self, name: str | None = None) -> str:
        base = f"http://127.0.0.1:{self.port}"
        return f"{base}/{name}" if name else base

    def close(self) -> None:
        self.server.shutdown()
