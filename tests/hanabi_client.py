"""A Hanabi bot written from specs/hanabi-ws.seed.md and its notes alone, as a stranger
would write one for the original server: the ``websockets`` package's client, no Origin
header, an empty path by default, its own name taken from the first CONNECTION_RESPONSE.

It plays when ``next_player`` is its name: a card it knows to be playable, else a hint to
the next player about a card of theirs that is playable (when a token is left), else a
discard of its first card.  Every message received is kept for the tests to read.
"""
from __future__ import annotations

import json
import os
import threading
import time

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

NUMBERS = ["ONE", "TWO", "THREE", "FOUR", "FIVE"]


class HanabiClient:
    """One bot on its own thread.  ``start_game`` sends GAME_START_REQUEST once it has seen
    ``start_when`` names in a CONNECTION_RESPONSE (None: never)."""

    def __init__(self, port: int, name: str, path: str = "", start_when: int | None = None,
                 play: bool = True, host: str = "127.0.0.1", key: str | None = None):
        self.name = name
        self.start_when = start_when
        self.play = play
        self.messages: list[dict] = []
        self.close_code: int | None = None
        self.my_name: str | None = None
        self.ws = connect(f"ws://{host}:{port}{path}", open_timeout=10, max_size=2**20, legacy=True)
        self.done = threading.Event()
        self._lock = threading.Lock()
        # ``key``: ours, a registered bot's key (the original has none).
        self.send({"msg_type": "CONNECTION_REQUEST", "name": name, **({"key": key} if key else {})})
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, msg: dict | str) -> None:
        with self._lock:
            self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    def _run(self) -> None:
        started = False
        try:
            for text in self.ws:
                msg = json.loads(text)
                self.messages.append(msg)
                kind = msg.get("msg_type")
                if kind == "CONNECTION_RESPONSE":
                    if self.my_name is None:
                        self.my_name = msg["names"][-1]
                    if self.start_when and len(msg["names"]) >= self.start_when and not started:
                        started = True
                        self.send({"msg_type": "GAME_START_REQUEST"})
                elif "game_state" in msg and self.play:
                    state = msg["game_state"]
                    if state["next_player"] == self.my_name:
                        self.send(self.choose(state))
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code
            self.done.set()

    def choose(self, state: dict) -> dict:
        """The move this bot makes in ``state`` (the rules above)."""
        names = [p["name"] for p in state["players"]]
        me = names.index(self.my_name)
        played = state["played_cards"]

        def playable(color, number) -> bool:
            return NUMBERS.index(number) == (NUMBERS.index(played[color]) + 1 if color in played else 0)

        for cih in state["players"][me]["cards"]:
            card = cih["card"]
            if card["color"] and card["number"] and playable(card["color"], card["number"]):
                return {"msg_type": "PLAY_CARD_REQUEST", "played_card_id": card["id"]}
        nxt = state["players"][(me + 1) % len(names)]
        if state["hint_tokens"] > 0:
            for cih in nxt["cards"]:
                card = cih["card"]
                if playable(card["color"], card["number"]) and not cih["knowledge"]["knows_number"]:
                    return {"msg_type": "HINT_NUMBER_REQUEST", "target_player": nxt["name"], "number": card["number"]}
                if playable(card["color"], card["number"]) and not cih["knowledge"]["knows_color"]:
                    return {"msg_type": "HINT_COLOR_REQUEST", "target_player": nxt["name"], "color": card["color"]}
        if state["hint_tokens"] == state["hint_tokens_max"]:  # nothing to gain by a discard: any hint
            card = nxt["cards"][0]["card"]
            return {"msg_type": "HINT_NUMBER_REQUEST", "target_player": nxt["name"], "number": card["number"]}
        return {"msg_type": "DISCARD_CARD_REQUEST", "discarded_card_id": state["players"][me]["cards"][0]["card"]["id"]}

    def flood(self, msg: dict, count: int) -> None:
        """Send ``msg`` ``count`` times in one TCP write (masked frames, as a client sends
        them), so that the server reads them all at once."""
        payload = json.dumps(msg).encode()
        assert len(payload) < 126
        frames = b""
        for _ in range(count):
            mask = os.urandom(4)
            frames += bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self._lock:
            self.ws.socket.sendall(frames)

    def of_type(self, kind: str) -> list[dict]:
        return [m for m in list(self.messages) if m.get("msg_type") == kind]

    def wait_for(self, kind: str, timeout: float = 20.0, count: int = 1) -> list[dict]:
        """The messages of ``kind`` once ``count`` have come; raises ``TimeoutError``."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = self.of_type(kind)
            if len(found) >= count:
                return found
            if self.done.is_set():
                break
            time.sleep(0.01)
        raise TimeoutError(f"{self.name}: no {count} {kind} within {timeout} s; got "
                           f"{[m.get('msg_type') for m in self.messages][-8:]}")

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
