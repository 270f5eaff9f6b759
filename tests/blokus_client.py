"""A scripted Software-Challenge Blokus client for tests and benchmarks: a real socket, the
server's stream parsed as a client would parse it, and moves chosen from the rules.

:class:`XmlClient` connects, sends raw bytes (whole, or one byte per ``send`` with
``trickle``), and collects every message the server sends (a reader thread feeds lxml's
``XMLPullParser``; no framing assumed) with its arrival time.  :class:`Player` joins and plays:
on every MoveRequest it rebuilds the rules state from the last memento it got
(:func:`memento_observation`, :meth:`BlokusState.from_observation`) and answers with
``decide(player, state, legal)`` (default: a random legal move), which may also return raw
bytes, or None to stay silent.
"""
from __future__ import annotations

import random
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

from lxml import etree

from games.blokus import protocol
from games.blokus.rules import COLORS, BlokusState
from tests.serverproc import wait_until

COLOR_NAMES = {c.lower() + "Shapes": c for c in COLORS}


@dataclass
class Message:
    """One complete message from the server: the element and when it arrived."""

    element: etree._Element
    at: float

    @property
    def tag(self) -> str:
        return self.element.tag

    @property
    def data_class(self) -> str | None:
        """The ``class`` of a room message's ``<data>`` (``memento``, ``welcomeMessage``, ...)."""
        data = self.element.find("data") if self.element.tag == "room" else None
        return None if data is None else data.get("class")

    @property
    def data(self):
        return self.element.find("data")

    def get(self, name: str) -> str | None:
        return self.element.get(name)


def memento_observation(state_el, variant: str) -> dict:
    """A memento's ``<state>`` (2021 or 2027 form) as the rules' observation dict (the parts
    :meth:`BlokusState.from_observation` reads)."""
    board = [["."] * 20 for _ in range(20)]
    for field in state_el.find("board").iter("field"):
        board[int(field.get("y"))][int(field.get("x"))] = field.get("content")[0]
    shapes = {color: [s.text for s in state_el.find(tag).iter("shape")] for tag, color in COLOR_NAMES.items()}
    last = state_el.find("lastMove")
    last_move = None
    if last is not None:
        piece = last.find("piece")
        if piece is not None:
            position = piece.find("position")
            last_move = ["set", piece.get("color"), piece.get("kind"), piece.get("rotation"),
                         piece.get("isFlipped") == "true", int(position.get("x")), int(position.get("y"))]
        else:
            last_move = ["skip", last.findtext("color")]
    mono = {}
    for entry in state_el.find("lastMoveMono").iter("entry"):
        key, value = list(entry)
        mono[key.text] = value.text == "true"
    return {"variant": variant, "turn": int(state_el.get("turn")), "round": int(state_el.get("round")),
            "start_piece": state_el.get("startPiece"), "board": ["".join(row) for row in board],
            "shapes": shapes, "valid_colors": [c.text for c in state_el.find("validColors")],
            "last_move": last_move, "last_cells": [], "last_move_mono": mono}


class XmlClient:
    """A connection to the Blokus port.  ``messages`` fills as the server sends; ``raw`` has
    every byte received; ``closed`` is set when the server closes the connection."""

    #: Every client of the running test, closed when it ends (see the tests' fixture).
    made: list["XmlClient"] = []

    def __init__(self, port: int, host: str = "127.0.0.1", trickle: bool = False):
        XmlClient.made.append(self)
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.trickle = trickle
        self.messages: list[Message] = []
        self.raw = bytearray()
        self.closed = threading.Event()
        self.parse_error: Exception | None = None
        self.lock = threading.Lock()
        self._parser = etree.XMLPullParser(events=("start", "end"), resolve_entities=False, no_network=True)
        self._depth = 0
        self._root = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # --- sending ------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        """Send bytes (one byte per ``send`` with ``trickle``); a closed socket is ignored."""
        try:
            with self.lock:
                if self.trickle:
                    for i in range(len(data)):
                        self.sock.sendall(data[i:i + 1])
                else:
                    self.sock.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        """Hang up now.  ``shutdown`` first: a bare ``close`` from another thread than the
        reader's leaves the socket open (no FIN) until the reader's wait lets go of it."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    # --- receiving ----------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self.raw += chunk
                self._parse(chunk)
        except OSError:
            pass
        finally:
            self.closed.set()

    def _parse(self, chunk: bytes) -> None:
        try:
            self._parser.feed(chunk)
        except etree.XMLSyntaxError as exc:
            self.parse_error = exc
        for event, elem in self._parser.read_events():
            if event == "start":
                self._depth += 1
                if self._depth == 1:
                    self._root = elem
                continue
            self._depth -= 1
            if self._depth == 1:
                self._root.remove(elem)
                self._on_message(Message(elem, time.monotonic()))

    def _on_message(self, msg: Message) -> None:
        self.messages.append(msg)

    def wait_for(self, predicate: Callable[[], object], timeout: float = 20.0, what: str = "a message"):
        """Poll ``predicate`` until it returns something truthy; AssertionError after ``timeout``
        (naming the last messages received)."""
        try:
            return wait_until(predicate, timeout, what, interval=0.01)
        except AssertionError as exc:
            tags = [(m.tag, m.data_class) for m in self.messages[-5:]]
            raise AssertionError(f"{exc}; last messages {tags}") from None

    def wait_message(self, tag: str, data_class: str | None = None, timeout: float = 20.0) -> Message:
        """The first message with ``tag`` (and room data ``class``), waiting for it."""
        def find():
            return next((m for m in list(self.messages) if m.tag == tag
                         and (data_class is None or m.data_class == data_class)), None)
        return self.wait_for(find, timeout, f"<{tag}> {data_class or ''}")

    def of_class(self, data_class: str) -> list[Message]:
        return [m for m in list(self.messages) if m.data_class == data_class]

    def tags(self) -> list[str]:
        """Each message as ``tag`` or ``room:class`` (for order checks)."""
        return [f"room:{m.data_class}" if m.tag == "room" else m.tag for m in list(self.messages)]


class Player(XmlClient):
    """A client that joins (``join`` with ``game_type``, ``joinPrepared`` with ``code`` or
    ``joinRoom`` with ``room``) and plays: ``decide(player, state, legal)`` answers each
    MoveRequest with an action (sent with ``hints(player, action)``), raw bytes, or None."""

    def __init__(self, port: int, game_type: str | None = "swc_2021_blokus", code: str | None = None,
                 room: str | None = None, decide=None, seed: int = 0, hints=None, trickle: bool = False,
                 join: bool = True):
        self.variant = protocol.GAME_TYPES.get(game_type or "swc_2027_blokus", "2021")
        self.rng = random.Random(seed)
        self.decide = decide or random_move
        self.hints = hints
        self.room_id: str | None = None
        self.team: str | None = None
        self.sent: list = []  # (action or raw bytes, time sent)
        super().__init__(port, trickle=trickle)
        if not join:
            return
        if code is not None:
            request = f'<joinPrepared reservationCode="{code}"/>'
        elif room is not None:
            request = f'<joinRoom roomId="{room}"/>'
        elif game_type is None:
            request = "<join/>"
        else:
            request = f'<join gameType="{game_type}"/>'
        self.send(b"<protocol>\n  " + request.encode())

    def _on_message(self, msg: Message) -> None:
        super()._on_message(msg)
        if msg.tag == "joined":
            self.room_id = msg.get("roomId")
        elif msg.data_class == "welcomeMessage":
            self.team = msg.data.get("color")
        elif msg.data_class in ("sc.framework.plugins.protocol.MoveRequest", "moveRequest"):
            threading.Thread(target=self._answer, daemon=True).start()

    def last_state(self) -> BlokusState:
        """The rules state of the last memento received."""
        memento = self.of_class("memento")[-1]
        return BlokusState.from_observation(memento_observation(memento.data.find("state"), self.variant))

    def _answer(self) -> None:
        state = self.last_state()
        seat = state.current_color % 2
        move = self.decide(self, state, state.legal_actions(seat))
        if move is None:
            return
        if isinstance(move, bytes):
            self.sent.append((move, time.monotonic()))
            self.send(move)
            return
        hints = self.hints(self, move) if self.hints else ()
        self.sent.append((move, time.monotonic()))
        self.send(protocol.move_message(self.room_id, move, self.variant, hints))

    def moves_sent(self) -> list:
        return [m for m, _ in self.sent if not isinstance(m, bytes)]


def random_move(player: Player, state: BlokusState, legal: list):
    """A random placement; skip only when there is none."""
    placements = [a for a in legal if a[0] == "set"]
    return player.rng.choice(placements or legal)
