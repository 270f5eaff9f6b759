"""A bot's seat at a bridge table, whichever door it came through (docs/bridge-protocol.md,
"Deadlines and forced actions" and "Reconnecting"; the notes' Blue Chip table manager).

Both bot doors (the text protocol, ``transport.py``; the Blue Chip table manager,
``table_manager.py``) seat a bot as a :class:`BridgeBotSeat` subclass that speaks its wire
protocol.  What they share lives here: one open request at a time with its deadline, a
call or card taken only when it is legal (a refused one changes nothing: the seat may answer
again until its deadline), the forced action at the deadline (a pass in the auction, else the
lowest legal card, :func:`games.bridge.protocol.forced_action`), and a seat that outlives its
connection: a bot that drops is ``gone`` and gets forced actions at each deadline until it
connects again and is :meth:`BridgeBotSeat.attach`-ed to its seat.
"""
from __future__ import annotations

import asyncio

from games.arena.play.seats import Answer, SeatEndpoint, TimedRequest
from games.bridge import protocol
from games.bridge.rules import CALL_INDEX, BridgeState


class BridgeBotSeat(SeatEndpoint):
    """A bridge bot's seat: requests, deadlines and forced actions; the connection
    (``link``: any object with ``close()``) is the subclass's.

    Subclasses send their protocol's lines in :meth:`asked` (the request went out),
    :meth:`forced` (the server acted for the seat), ``start``, ``notify`` and ``close``; their
    connection handlers hand the bot's call or card to :meth:`offer`.
    """

    kind = "protocol"

    def __init__(self, deadline_s: float, display_name: str):
        self.deadline_s = deadline_s
        self.display_name = display_name
        self.link = None
        self.gone = False
        self.request: TimedRequest | None = None
        self._state: BridgeState | None = None
        self._seat = -1

    # --- the connection ---------------------------------------------------------------------
    def attach(self, link) -> None:
        """A connection (back) at this seat: it answers from now on."""
        self.link, self.gone = link, False

    def detach(self, link) -> None:
        """``link`` closed: the seat is gone until a connection is attached again; an open
        request is answered by its deadline with the forced action (notes: "a robot that
        drops is replaced by a forced action at its deadline and may reconnect")."""
        if self.link is link:
            self.link, self.gone = None, True

    @property
    def waiting_for(self) -> bool:
        """Whether a call or card of this seat's is asked for now."""
        return self.request is not None and self.request.pending

    def offer(self, action: str) -> str | None:
        """A call or card (a rules action name) from the bot: None when it answers the open
        request, else why it is refused (a NAK's text; the request stays open)."""
        if not self.waiting_for:
            return "it is not your turn"
        state, seat = self._state, self._seat
        if not state.is_legal(seat, action):
            return state.why_illegal(seat, action) or f"{action} is not legal now"
        self.request.resolve(action)
        return None

    # --- the runner's side ------------------------------------------------------------------
    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time replaces ``BRIDGE_BOT_DEADLINE`` for this seat."""
        self.deadline_s = seconds

    def ask(self, state: BridgeState, seat: int, version: int) -> "asyncio.Future[Answer]":
        """A call or a card is due from ``seat`` (declarer's for dummy's cards): the request
        waits ``deadline_s`` seconds, then the forced action is taken."""
        self._state, self._seat = state, seat
        self.request = TimedRequest(self.deadline_s, self._deadline_passed)
        self.asked(state, seat)
        return self.request.future

    def _deadline_passed(self) -> Answer:
        state, seat = self._state, self._seat
        action = protocol.forced_action(state.legal_actions(seat))
        why = "disconnected" if self.link is None else "deadline passed"
        self.forced(action, why)
        what = "pass" if action == "P" else "lowest legal card"
        kind = "call" if action in CALL_INDEX else "card"
        reason = ("disconnected: " if self.link is None else f"no {kind} within {self.deadline_s:g} s: ") + what
        return Answer(action, True, reason)

    # --- for subclasses ---------------------------------------------------------------------
    def asked(self, state: BridgeState, seat: int) -> None:
        """The request for ``seat`` went out (its protocol may say so to the bot)."""

    def forced(self, action: str, why: str) -> None:
        """The server takes ``action`` for the seat, because of ``why`` ("deadline passed" or
        "disconnected"); the protocol may tell the bot before the step's lines go out."""
