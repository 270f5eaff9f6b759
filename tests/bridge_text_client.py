"""A bridge bot written from docs/bridge-protocol.md alone, as a stranger to this code would:
it imports nothing of the server.  It connects, says HELLO, joins, and answers every
AUCOPEN and TRICK that names it (or dummy, when it is declarer) with a legal random call or
card, keeping only what the GAME messages tell it.  Every line it receives is kept."""
from __future__ import annotations

import random
import socket
import threading
import time

SEATS = "NESW"
STRAINS = ["C", "D", "H", "S", "NT"]
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def bid_rank(bid: str) -> int:
    """0 (1C) ... 34 (7NT)."""
    return (int(bid[0]) - 1) * 5 + STRAINS.index(bid[1:])


class TextClient:
    """One connection: ``send(line)``, ``lines`` (every line received, in order), ``wait_for``.
    With ``boards``, it stops answering after that many ``SCORE-M`` lines, as a bot that hangs
    would (decided as it reads, so no later request is answered whatever the server's pace)."""

    def __init__(self, port: int, name: str | None = None, key: str | None = None, seed: int = 0,
                 play: bool = True, host: str = "127.0.0.1", boards: int | None = None):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.name = name
        self.rng = random.Random(seed)
        self.play = play
        self.boards = boards
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.closed = False
        self.seat: int | None = None
        self.game: str | None = None
        self.hand: list[str] = []
        self.dummy_cards: list[str] = []
        self.declarer: int | None = None
        self.sent: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if name is not None:
            self.send(f'HELLO "{name}" {key}' if key else f"HELLO {name}")

    # --- the wire ----------------------------------------------------------------------------
    def send(self, line: str) -> None:
        self.sent.append(line)
        try:
            self.sock.sendall(line.encode() + b"\n")
        except OSError:
            pass

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            buf += data
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode()
                with self.cond:
                    self.lines.append(line)
                    self.cond.notify_all()
                self._react(line)
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait_for(self, predicate, timeout: float = 60.0, start: int = 0) -> str:
        """The first line from index ``start`` on for which ``predicate(line)`` holds."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if predicate(line):
                        return line
                left = end - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(f"{self.name}: no such line; got {self.lines[-20:]}")
                self.cond.wait(left)

    def wait_closed(self, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        with self.cond:
            while not self.closed:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name}: still open; last lines {self.lines[-10:]}")
                self.cond.wait(left)

    def naks(self) -> list[str]:
        return [line for line in self.lines if line.startswith("NAK ")]

    # --- playing -----------------------------------------------------------------------------
    def _react(self, line: str) -> None:
        name, *args = line.split(" ")
        if name == "JOINED" and len(args) >= 3 and " ".join(args[2:]) == self.name:
            self.game, self.seat = args[0], SEATS.index(args[1])
        elif name == "HAND":
            self.hand, self.dummy_cards, self.declarer = list(args), [], None
        elif name == "AUCCLOSE":
            self.declarer = SEATS.index(args[4]) if len(args) == 5 else None
        elif name == "SCORE-M" and self.boards is not None:
            self.boards -= 1
            if self.boards <= 0:
                self.play = False
        elif name == "DUMMY":
            self.dummy_cards = list(args)
        elif name == "PLAY":
            seat, card = SEATS.index(args[0]), args[1]
            for cards in (self.hand, self.dummy_cards):
                if card in cards and (seat == self.seat or self.declarer is not None
                                      and seat == (self.declarer + 2) % 4 and cards is self.dummy_cards):
                    cards.remove(card)
        elif name == "AUCOPEN" and self.play and args and args[0] != "0" and SEATS.index(args[0]) == self.seat:
            self.send("BID " + self.choose_call(args[1:]))
        elif name == "TRICK" and self.play and args and args[0] != "0" and self.seat is not None:
            to_play = SEATS.index(args[0])
            dummy = None if self.declarer is None else (self.declarer + 2) % 4
            if to_play == self.seat and self.seat != dummy:
                self.send("PLAY " + self.choose_card(self.hand, args[1:]))
            elif to_play == dummy and self.seat == self.declarer:
                self.send("PLAY " + self.choose_card(self.dummy_cards, args[1:]))

    def choose_call(self, calls: list[str]) -> str:
        """A legal call: pass mostly, else a higher bid, a double of the opponents' bid or a
        redouble of the opponents' double (a call an odd number of places before ours is an
        opponent's)."""
        options = ["PASS"] * 6
        bids = [i for i, c in enumerate(calls) if c not in ("PASS", "DOUBLE", "REDOUBLE")]
        low = bid_rank(calls[bids[-1]]) + 1 if bids else 0
        if low <= 34:
            options += [f"{r // 5 + 1}{STRAINS[r % 5]}" for r in self.rng.sample(range(low, 35), min(3, 35 - low))]
        acts = [i for i, c in enumerate(calls) if c != "PASS"]
        if acts and (len(calls) - acts[-1]) % 2 == 1:  # the last call that was not a pass is theirs
            options.append({"DOUBLE": "REDOUBLE", "REDOUBLE": "PASS"}.get(calls[acts[-1]], "DOUBLE"))
        return self.rng.choice(options)

    def choose_card(self, cards: list[str], trick: list[str]) -> str:
        """A random card, of the suit led when it can."""
        if trick:
            led = trick[0][-1]
            same = [c for c in cards if c[-1] == led]
            if same:
                return self.rng.choice(same)
        return self.rng.choice(cards)
