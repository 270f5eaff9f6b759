"""Request deadlines (games/arena/play/seats.py): every request resolves to its timeout answer at
its own deadline, never before, however many wait on the loop's one timer per length."""
from __future__ import annotations

import asyncio

from games.arena.play.seats import Answer, Deadlines, TimedRequest


def timeout_answer(name: str):
    return lambda: Answer(None, True, f"{name} ran out")


async def test_each_request_expires_at_its_own_deadline_unless_answered():
    loop = asyncio.get_running_loop()
    started = loop.time()
    first = TimedRequest(0.05, timeout_answer("first"))
    await asyncio.sleep(0.02)
    answered = TimedRequest(0.05, timeout_answer("answered"))
    second = TimedRequest(0.05, timeout_answer("second"))
    assert answered.resolve("pass")
    done_at = {}
    for name, request in (("first", first), ("second", second)):
        request.future.add_done_callback(lambda _, name=name: done_at.setdefault(name, loop.time() - started))
    assert (await first.future).reason == "first ran out"
    assert not second.future.done(), "not before its own deadline"
    assert (await second.future).reason == "second ran out"
    assert (await answered.future).action == "pass" and not answered.resolve("challenge")
    assert 0.05 <= done_at["first"] < 0.07 + 0.02 and 0.07 <= done_at["second"]
    assert (await first.future).think_ms >= 50


async def test_lengths_keep_their_own_order_and_a_timeout_may_ask_again():
    """A long deadline made first does not hold up a short one made later; a request made by
    a timeout answer (as an endpoint asking again) gets its deadline too."""
    again: list[TimedRequest] = []

    def ask_again():
        again.append(TimedRequest(0.02, timeout_answer("again")))
        return Answer(None, True, "short ran out")

    long = TimedRequest(0.3, timeout_answer("long"))
    short = TimedRequest(0.02, ask_again)
    assert (await asyncio.wait_for(short.future, 0.2)).reason == "short ran out"
    assert not long.future.done()
    assert (await asyncio.wait_for(again[0].future, 0.2)).reason == "again ran out"
    assert (await long.future).reason == "long ran out"


async def test_answered_requests_do_not_pile_up():
    for _ in range(1000):
        TimedRequest(3.0, timeout_answer("x")).resolve("pass")
    assert len(Deadlines.of(asyncio.get_running_loop(), 3.0).waiting) <= 1
