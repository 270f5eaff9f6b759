"""The seat both bridge bot doors share (games/bridge/bot_seat.py): legal answers only, the
forced action at the deadline, a seat that outlives its connection."""
from __future__ import annotations

import asyncio

from games.bridge.bot_seat import BridgeBotSeat
from games.bridge.rules import new_state


class Recorder(BridgeBotSeat):
    def __init__(self, deadline_s: float):
        super().__init__(deadline_s, "bot")
        self.told: list = []

    def asked(self, state, seat):
        self.told.append(("asked", seat))

    def forced(self, action, why):
        self.told.append(("forced", action, why))


def test_a_refused_call_leaves_the_request_open_and_a_legal_one_answers_it():
    async def go():
        state = new_state({"board": 1}, 3)  # board 1: North deals
        seat = Recorder(5.0)
        seat.attach(object())
        future = seat.ask(state, 0, 1)
        assert seat.told == [("asked", 0)]
        assert seat.offer("XX") is not None and not future.done()
        assert seat.offer("1NT") is None
        answer = await future
        assert (answer.action, answer.forced) == ("1NT", False)
        assert seat.offer("2C") == "it is not your turn"
    asyncio.run(go())


def test_silence_passes_and_a_dropped_bot_is_forced_at_its_deadline_then_may_come_back():
    async def go():
        state = new_state({"board": 1}, 3)
        seat, link = Recorder(0.05), object()
        seat.attach(link)
        answer = await seat.ask(state, 0, 1)
        assert (answer.action, answer.forced, answer.reason) == ("P", True, "no call within 0.05 s: pass")
        state.apply({0: "P"})
        seat.detach(link)
        assert seat.gone
        answer = await seat.ask(state, 1, 2)
        assert (answer.action, answer.reason) == ("P", "disconnected: pass")
        assert seat.told[-1] == ("forced", "P", "disconnected")
        seat.attach(object())
        assert not seat.gone
    asyncio.run(go())
