"""Liar's Dice bots over TCP (specs/liars-dice-tcp.*): the listener and the seat endpoint.

A connection is seated (the oldest open bot seat, else an automatic table) once it has sent a
name message, or once it has been connected ``seat_silent_after`` seconds without sending
anything unusable (no bad line, no line half-sent): the name is optional (the reference seats
a bot as it connects), but a client that connects and hangs up at once, or sends only junk,
costs no database work and leaves no table behind.  The bot may send ``{"name": ...}`` at
any time; only the first counts.  A registered bot sends its key with its first name,
``{"name": ..., "key": "arena-key-..."}`` (games/arena/bots/bot_keys.py), and plays under its
registered name; a refused key gets an ``{"subject": "error", "message": ...}`` line and
the connection is closed.  A bot without a key that sends a registered bot's name, or a
look-alike (games/arena/bots/names.py), plays under the name of a bot that sent none: the
reference refuses no name, and no bot sees a name on the wire, so nothing changes for it.
Each request waits 3 s for the reply whose ``message_id`` matches; what the notes call a
missing, late or malformed reply becomes a ``None`` answer, which loses the round by rule.
"""
from __future__ import annotations

import asyncio
import logging
import os
import random

from django.conf import settings

from games.arena.bots.bot_keys import KeyRefused
from games.arena.play.arena import SeatingBusy
from games.arena.play.seats import Answer, SeatEndpoint, TimedRequest, resolved
from games.names import clean_name
from games.arena.bots.transport import Deadlines, LineConnection, admission_from_settings, start_line_server
from games.base import ProtocolError
from games.liars_dice import protocol

log = logging.getLogger("arena.liars_dice")

GAME = "liars_dice"
#: Bad lines logged per connection before the log goes quiet for it.
MAX_LOGGED_BAD_LINES = 20
_ids = random.Random(os.urandom(16))


def new_message_id() -> str:
    """A ``message_id`` for a request: 12 hex digits (48 random bits, as ``os.urandom(6)``
    gave, without a system call per request).  Only the bot it is sent to sees it, and a
    reply is taken only on that bot's own connection, so it needs no secrecy: it tells a
    reply to this request from a late one."""
    return "%012x" % _ids.getrandbits(48)


class LiarsDiceBot(SeatEndpoint):
    """A bot connection as a seat endpoint, and the handler of its lines."""

    kind = "protocol"

    def __init__(self, conn: LineConnection, arena, deadline_s: float, max_bad_lines: int | None = None,
                 seat_silent_after: float = 1.0):
        self.conn = conn
        #: Protocol violations (not late replies) before the connection is dropped, so junk
        #: lines cannot cost the loop without end.
        self.max_bad_lines = max_bad_lines
        self.arena = arena
        self.deadline_s = deadline_s
        self.display_name = f"bot {conn.peer}"
        self.named = False
        #: A name sent after the bot saw its dice, shown once the match is over (see _set_name).
        self.held_name: str | None = None
        #: A name sent without a key, until checked against registered bots' names.
        self.claimed: str | None = None
        self.seat_id: int | None = None
        self.request: TimedRequest | None = None
        self.complaints = 0  # lines we could not use (logged up to MAX_LOGGED_BAD_LINES)
        self.bad_lines = 0  # of which protocol violations
        self.gone = False
        self.seating = False  # asked the arena for a seat (once)
        self.key = None  # a bot key sent with the name, until it is checked
        self._silent_timer = asyncio.get_running_loop().call_later(seat_silent_after, self._silent)

    def _silent(self) -> None:
        """Connected for a while, nothing unusable sent: a bot without a name (the reference
        seats those too).  One that sent a bad line must first send a valid one."""
        self._silent_timer = None
        if not self.bad_lines and not self.conn.in_message:
            self._seat()

    def _seat(self) -> None:
        """The bot has spoken (or stayed quietly connected): take a seat, once."""
        if self.seating or self.gone:
            return
        self.seating = True
        if self._silent_timer is not None:
            self._silent_timer.cancel()
            self._silent_timer = None
        self.conn.spoke()
        asyncio.get_running_loop().create_task(self._take_seat())

    async def _take_seat(self) -> None:
        # A name the bot sent before this is the one its seat is claimed under (only the first
        # counts); one that comes while it is being seated is recorded after.
        named_before = self.named
        if self.key is not None:
            try:
                await self.arena.identify_bot(GAME, self.key, self.conn.host, self)
            except KeyRefused as exc:
                log.info("liars_dice %s: bot key refused: %s", self.conn.peer, exc)
                self.conn.write(protocol.error(f"bot key refused: {exc}"))
                self.conn.close()
                return
            finally:
                self.key = None  # not kept past its check
        elif self.claimed is not None:
            await self._check_name()
        try:
            self.seat_id = await self.arena.seat_bot(GAME, self)
        except SeatingBusy as exc:
            log.warning("liars_dice %s: not seated: %s", self.conn.peer, exc)
            self.conn.write(protocol.error(f"{exc}; connect again later"))
            self.conn.close()
            return
        except Exception:
            log.exception("%s: could not seat this bot", self.conn.peer)
            self.conn.close()
            return
        if self.seat_id is None:  # gone before the arena did anything for it
            return
        if self.gone:
            await self.arena.bot_left(self.seat_id)
        elif self.named and not named_before:
            await self._show_name()

    async def _check_name(self) -> bool:
        """Take the name the bot sent (``claimed``) as its display name, unless it is a
        registered bot's name or a look-alike (games/arena/bots/names.py): a bot without its key
        never plays under one.  Its bot never sees a name on the wire, so it plays on under the
        name of a bot that sent none, and the log says why."""
        name, self.claimed = self.claimed, None
        if name is None:
            return False
        if await self.arena.claims_bot_name(GAME, name):
            log.info("liars_dice %s: %r is a registered bot's name and came without its key: shown as %r",
                     self.conn.peer, name, self.display_name)
            return False
        self.display_name = name
        return True

    async def _show_name(self) -> None:
        """A name sent once the bot was seated: checked (:meth:`_check_name`), then shown."""
        if await self._check_name() and self.seat_id is not None:
            await self.arena.bot_named(self.seat_id, self.display_name)

    async def _hold_name(self, name: str) -> None:
        """A name sent after the first request, checked now, shown when the match is over."""
        if await self.arena.claims_bot_name(GAME, name):
            log.info("liars_dice %s: %r is a registered bot's name and came without its key: not shown",
                     self.conn.peer, name)
        else:
            self.held_name = name

    # --- lines from the bot -----------------------------------------------------------------
    def _complain(self, reason: str, violation: bool = True) -> None:
        """Log a line we could not use.  A ``violation`` of the protocol (unparseable, too
        long, neither name nor reply, a malformed reply), unlike a late reply, counts towards
        ``max_bad_lines``; at that many the bot gets an error line and is disconnected."""
        self.complaints += 1
        if self.complaints <= MAX_LOGGED_BAD_LINES:
            log.warning("liars_dice %s (%s): %s", self.conn.peer, self.display_name, reason)
            if self.complaints == MAX_LOGGED_BAD_LINES:
                log.warning("liars_dice %s: further bad lines from this bot are not logged", self.conn.peer)
        if not violation:
            return
        self.bad_lines += 1
        if self.max_bad_lines is not None and self.bad_lines == self.max_bad_lines:
            log.warning("liars_dice %s (%s): %d bad lines; disconnected", self.conn.peer, self.display_name,
                        self.bad_lines)
            self.conn.write(protocol.error(f"{self.bad_lines} lines that break the protocol; disconnected"))
            self.conn.close()

    def _fail_request(self, reason: str, detail: str = "") -> None:
        """Answer the open request with ``None`` (the round is lost).  ``reason`` is shown to
        everyone; ``detail`` (what exactly was wrong, which may quote the bot's own line and
        so whatever it chose to put there) is kept for after the match, when no hand is
        secret any more."""
        req = self.request
        if req is not None and req.pending:
            req.resolve(None, forced=True, reason=reason, detail=detail[:300])

    def on_bad_line(self, reason: str) -> None:
        self._complain(reason)
        self._fail_request("malformed reply", f"malformed reply: {reason}")

    def on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            msg = protocol.parse_line(line)
        except ProtocolError as exc:
            self.on_bad_line(str(exc))
            return
        if "name" in msg:
            if "key" in msg and not self.named and not self.seating:
                # A registered bot: it plays under its registered name (see bot_keys.py).
                self.named, self.key = True, msg["key"]
            else:
                self._set_name(msg["name"])
            self._seat()  # a name message, even one whose name is refused, as the reference
        if "message_id" in msg or "move" in msg:
            self._reply(msg)
        elif "name" not in msg:
            self._complain(f"ignored a message with neither name nor message_id: {line[:80]!r}")

    def _set_name(self, name) -> None:
        """The first name counts (seed).  One sent after the bot's first request may spell out
        the dice it holds, and names go to everyone at the table, so it is held back until the
        match is over: names carry public facts only."""
        if self.named:
            return
        if not isinstance(name, str) or not clean_name(name):
            self._complain("name must be a non-empty string")
            return
        self.named = True
        if self.request is not None:
            asyncio.get_running_loop().create_task(self._hold_name(clean_name(name)))
            return
        self.claimed = clean_name(name)
        if self.seat_id is not None:
            asyncio.get_running_loop().create_task(self._show_name())

    def _show_held_name(self) -> None:
        if self.held_name is not None:
            self.display_name, self.held_name = self.held_name, None
            if self.seat_id is not None:
                asyncio.get_running_loop().create_task(self.arena.bot_named(self.seat_id, self.display_name))

    def _reply(self, msg: dict) -> None:
        req = self.request
        if req is None or not req.pending:
            self._complain(f"reply with no open request (late or unasked): message_id {msg.get('message_id')!r}",
                           violation=False)
            return
        message_id = msg.get("message_id")
        if not isinstance(message_id, str):
            self._complain("reply without a string message_id")
            self._fail_request("malformed reply", "malformed reply: no string message_id")
            return
        if message_id != req.key:
            self._complain(f"reply to message_id {message_id!r}, expected {req.key!r}; ignored", violation=False)
            return
        try:
            action = protocol.move_to_action(msg.get("move"))
        except ProtocolError as exc:
            self._complain(str(exc))
            self._fail_request("malformed reply", f"malformed reply: {exc}")
            return
        self.conn.asked_for()  # answers don't count against the connection's share of lines
        req.resolve(action)

    def on_close(self) -> None:
        self.gone = True
        if self._silent_timer is not None:
            self._silent_timer.cancel()
            self._silent_timer = None
        self._fail_request("disconnected")
        # Only a bot that had a seat is worth a line: a flood of connections that hang up
        # before being seated must not cost a log write each.
        log.log(logging.INFO if self.seat_id is not None else logging.DEBUG,
                "liars_dice %s (%s) disconnected", self.conn.peer, self.display_name)
        if self.seat_id is not None:
            asyncio.get_running_loop().create_task(self.arena.bot_left(self.seat_id))

    # --- the runner's side ------------------------------------------------------------------
    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time replaces ``LIARS_DICE_BOT_DEADLINE`` for this seat."""
        self.deadline_s = seconds

    def ask(self, state, seat: int, version: int) -> "asyncio.Future[Answer]":
        if self.gone:
            return resolved(Answer(None, True, "disconnected"))
        message_id = new_message_id()
        self.request = TimedRequest(self.deadline_s, self._no_reply, key=message_id)
        if not self.conn.write(protocol.move_request(state.observation(seat), message_id)):
            self._fail_request("disconnected")
        return self.request.future

    def _no_reply(self) -> Answer:
        # game.late() reads this reason as "said nothing in time" (the export's late mark).
        return Answer(None, True, f"no reply within {self.deadline_s:g} s")

    def notify(self, state, seat: int, happenings: list[dict]) -> None:
        if state.is_terminal():
            self._show_held_name()  # now, so the final view and the finished match carry it
        if self.gone:
            return
        for happening in happenings:
            if happening["type"] == "round_over":
                self.conn.write(protocol.round_over(happening, seat))

    def close(self, result: dict | None) -> None:
        """After the last game the server closes the connection (notes)."""
        self._show_held_name()  # an aborted match is over too
        self.conn.close()


async def start_listener(arena):
    """Listen for Liar's Dice bots on ``LIARS_DICE_HOST:LIARS_DICE_PORT`` (default 5533)."""
    cfg = settings.ARENA
    deadline, max_bad = cfg["LIARS_DICE_BOT_DEADLINE"], cfg["MAX_BAD_LINES"]
    silent = cfg["LIARS_DICE_SEAT_SILENT_AFTER"]
    return await start_line_server(
        lambda conn: LiarsDiceBot(conn, arena, deadline, max_bad, silent),
        cfg["LIARS_DICE_HOST"], cfg["LIARS_DICE_PORT"], cfg["MAX_LINE_BYTES"], cfg["MAX_CONNECTIONS"],
        "liars_dice", lines_per_s=cfg["LINES_PER_S"], burst=cfg["LINES_BURST"],
        admission=admission_from_settings(cfg),
        deadlines=Deadlines(cfg["FIRST_MESSAGE_TIMEOUT"], cfg["MESSAGE_TIMEOUT"]))
