"""Liar's Dice bots over TCP (specs/liars-dice-tcp.*): the listener and the seat endpoint.

A connection is seated as soon as it is accepted (the oldest open bot seat, else an automatic
table).  The bot may send ``{"name": ...}`` at any time; only the first counts.  Each request
waits 3 s for the reply whose ``message_id`` matches; what the notes call a missing, late or
malformed reply becomes a ``None`` answer, which loses the round by rule.
"""
from __future__ import annotations

import asyncio
import logging
import os

from django.conf import settings

from games.arena.seats import Answer, SeatEndpoint, TimedRequest, resolved
from games.arena.tables import clean_name
from games.arena.transport import LineConnection, start_line_server
from games.base import ProtocolError
from games.liars_dice import protocol

log = logging.getLogger("arena.liars_dice")

GAME = "liars_dice"
#: Bad lines logged per connection before the log goes quiet for it.
MAX_LOGGED_BAD_LINES = 20


class LiarsDiceBot(SeatEndpoint):
    """A bot connection as a seat endpoint, and the handler of its lines."""

    kind = "protocol"

    def __init__(self, conn: LineConnection, arena, deadline_s: float):
        self.conn = conn
        self.arena = arena
        self.deadline_s = deadline_s
        self.display_name = f"bot {conn.peer}"
        self.named = False
        self.seat_id: int | None = None
        self.request: TimedRequest | None = None
        self.bad_lines = 0
        self.gone = False
        asyncio.get_running_loop().create_task(self._take_seat())

    async def _take_seat(self) -> None:
        try:
            self.seat_id = await self.arena.seat_bot(GAME, self)
        except Exception:
            log.exception("%s: could not seat this bot", self.conn.peer)
            self.conn.close()
            return
        if self.gone:
            await self.arena.bot_left(self.seat_id)
        elif self.named:
            await self.arena.bot_named(self.seat_id, self.display_name)

    # --- lines from the bot -----------------------------------------------------------------
    def _complain(self, reason: str) -> None:
        self.bad_lines += 1
        if self.bad_lines <= MAX_LOGGED_BAD_LINES:
            log.warning("liars_dice %s (%s): %s", self.conn.peer, self.display_name, reason)
            if self.bad_lines == MAX_LOGGED_BAD_LINES:
                log.warning("liars_dice %s: further bad lines from this bot are not logged", self.conn.peer)

    def _fail_request(self, reason: str) -> None:
        req = self.request
        if req is not None and req.pending:
            req.resolve(None, forced=True, reason=reason)

    def on_bad_line(self, reason: str) -> None:
        self._complain(reason)
        self._fail_request(f"malformed reply: {reason}")

    def on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            msg = protocol.parse_line(line)
        except ProtocolError as exc:
            self.on_bad_line(str(exc))
            return
        if "name" in msg:
            self._set_name(msg["name"])
        if "message_id" in msg or "move" in msg:
            self._reply(msg)
        elif "name" not in msg:
            self._complain(f"ignored a message with neither name nor message_id: {line[:80]!r}")

    def _set_name(self, name) -> None:
        if self.named:
            return  # only the first name counts (seed)
        if not isinstance(name, str) or not clean_name(name):
            self._complain("name must be a non-empty string")
            return
        self.named = True
        self.display_name = clean_name(name)
        if self.seat_id is not None:
            asyncio.get_running_loop().create_task(self.arena.bot_named(self.seat_id, self.display_name))

    def _reply(self, msg: dict) -> None:
        req = self.request
        if req is None or not req.pending:
            self._complain(f"reply with no open request (late or unasked): message_id {msg.get('message_id')!r}")
            return
        message_id = msg.get("message_id")
        if not isinstance(message_id, str):
            self._complain("reply without a string message_id")
            self._fail_request("malformed reply: no string message_id")
            return
        if message_id != req.key:
            self._complain(f"reply to message_id {message_id!r}, expected {req.key!r}; ignored")
            return
        try:
            action = protocol.move_to_action(msg.get("move"))
        except ProtocolError as exc:
            self._complain(str(exc))
            self._fail_request(f"malformed reply: {exc}")
            return
        req.resolve(action)

    def on_close(self) -> None:
        self.gone = True
        self._fail_request("disconnected")
        log.info("liars_dice %s (%s) disconnected", self.conn.peer, self.display_name)
        if self.seat_id is not None:
            asyncio.get_running_loop().create_task(self.arena.bot_left(self.seat_id))

    # --- the runner's side ------------------------------------------------------------------
    def ask(self, state, seat: int, version: int) -> "asyncio.Future[Answer]":
        if self.gone:
            return resolved(Answer(None, True, "disconnected"))
        message_id = os.urandom(6).hex()
        deadline = self.deadline_s
        self.request = TimedRequest(deadline, lambda: Answer(None, True, f"no reply within {deadline:g} s"),
                                    key=message_id)
        if not self.conn.write(protocol.move_request(state.observation(seat), message_id)):
            self._fail_request("disconnected")
        return self.request.future

    def notify(self, state, seat: int, happenings: list[dict]) -> None:
        if self.gone:
            return
        for happening in happenings:
            if happening["type"] == "round_over":
                self.conn.write(protocol.round_over(happening, seat))

    def close(self, result: dict | None) -> None:
        """After the last game the server closes the connection (notes)."""
        self.conn.close()


async def start_listener(arena):
    """Listen for Liar's Dice bots on ``LIARS_DICE_HOST:LIARS_DICE_PORT`` (default 5533)."""
    cfg = settings.ARENA
    deadline = cfg["LIARS_DICE_BOT_DEADLINE"]
    return await start_line_server(
        lambda conn: LiarsDiceBot(conn, arena, deadline),
        cfg["LIARS_DICE_HOST"], cfg["LIARS_DICE_PORT"], cfg["MAX_LINE_BYTES"], cfg["MAX_CONNECTIONS"],
        "liars_dice")
