"""One Blokus connection in process (no server): when a move counts as arrived, and how the
end of a game goes out.

The clock is ours: ``time.perf_counter`` is replaced by a counter the test moves, and a slow
parse is a parser that moves it, so the verdicts do not depend on the machine's load.
"""
from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from games.blokus import protocol, transport
from games.blokus.rules import new_state
from games.blokus.transport import BlokusClient, GuessBackoff, Room, StreamLimits, XmlConnection

SOFT = 2.0


class RecordingTransport(asyncio.Transport):
    """Keeps every ``write`` as it was made (one entry per call)."""

    def __init__(self):
        super().__init__()
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data) -> None:
        self.writes.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 40000) if name == "peername" else default


class Clock:
    """``time.perf_counter`` as the test says."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(time, "perf_counter", c)
    return c


def seated_client(soft_timeout: float = SOFT):
    """A connection whose client sits at seat 0 of room 7 (2021 rules), its stream opened."""
    rooms: dict = {}
    listener = SimpleNamespace(
        arena=None, password="secret", soft_timeout=soft_timeout, hard_timeout=10.0, no_timeout_hard=60.0, rooms=rooms,
        room=lambda match_id: rooms.setdefault(match_id, Room(match_id)), names=lambda match_id: ["Alpha", "Beta"],
        match_of=lambda endpoint: 7, forget_reservations=lambda match_id: None, guesses=GuessBackoff(3, 2.0))
    conn = XmlConnection(lambda c: BlokusClient(c, listener), StreamLimits(65536, 12, 256))
    conn.connection_made(RecordingTransport())
    client = conn.handler
    client.match_id, client.joined_sent, client.can_timeout = 7, True, True
    conn.data_received(b"<protocol>")
    return conn, client


def first_move(state) -> bytes:
    action = next(a for a in state.legal_actions(0) if a[0] == "set")
    return protocol.move_message("7", action, "2021")


def test_a_move_read_before_the_soft_limit_counts_though_its_parse_ends_after_it(clock, monkeypatch):
    async def scenario():
        conn, client = seated_client()
        state = new_state({"variant": "2021"}, seed=3)
        future = client.ask(state, 0, 1)  # the MoveRequest goes out at 1000.0
        parse = protocol.parse_message

        def starved_parse(element, *args):
            clock.now += 0.13  # the process gets the CPU back 130 ms later
            return parse(element, *args)

        monkeypatch.setattr(protocol, "parse_message", starved_parse)
        clock.now += SOFT - 0.05  # the move's bytes are read 1.95 s after the request
        conn.data_received(first_move(state))
        return await asyncio.wait_for(future, 1)

    answer = asyncio.run(scenario())
    assert not answer.forced and answer.action[0] == "set", answer


def test_a_move_read_after_the_soft_limit_loses_by_soft_timeout(clock):
    async def scenario():
        conn, client = seated_client()
        state = new_state({"variant": "2021"}, seed=3)
        future = client.ask(state, 0, 1)
        clock.now += SOFT + 0.05
        conn.data_received(first_move(state))
        return await asyncio.wait_for(future, 1)

    answer = asyncio.run(scenario())
    assert answer.forced and answer.action[:2] == ["forfeit", "SOFT_TIMEOUT"]
    assert "2 Sekunden" in answer.action[2]


def test_a_move_whose_last_bytes_come_late_is_late(clock):
    """The arrival is that of the message's last bytes: the first half in time is not enough."""
    async def scenario():
        conn, client = seated_client()
        state = new_state({"variant": "2021"}, seed=3)
        future = client.ask(state, 0, 1)
        move = first_move(state)
        clock.now += 1.0
        conn.data_received(move[:40])
        clock.now += SOFT
        conn.data_received(move[40:])
        return await asyncio.wait_for(future, 1)

    answer = asyncio.run(scenario())
    assert answer.action[:2] == ["forfeit", "SOFT_TIMEOUT"]


def test_the_result_left_and_the_end_of_the_stream_go_out_in_one_write():
    """A client that hangs up on reading the result has the whole end in what it read."""
    async def scenario():
        conn, client = seated_client()
        client.variant = "2021"
        state = new_state({"variant": "2021"}, seed=3)
        state.apply({0: ["forfeit", "LEFT", "gone"]})  # ONE left: a result with scores
        before = len(conn.transport.writes)
        client.close(state.result())
        return conn.transport.writes[before:], conn.transport.closing

    writes, closing = asyncio.run(scenario())
    assert len(writes) == 1, writes
    (end,) = writes
    assert b'class="result"' in end
    assert end.index(b'class="result"') < end.index(b'<left roomId="7"') < end.index(b"</protocol>")
    assert end.rstrip().endswith(b"</protocol>") and closing


def test_a_refusal_and_the_end_of_the_stream_go_out_in_one_write():
    async def scenario():
        conn, client = seated_client()
        before = len(conn.transport.writes)
        conn.data_received(b'<authenticate password="wrong"/>')
        return conn.transport.writes[before:]

    (write,) = asyncio.run(scenario())
    assert b"<errorpacket" in write and b"authentication failed" in write and write.rstrip().endswith(b"</protocol>")


def test_what_one_turn_writes_leaves_in_one_send_and_in_order():
    """The memento of a move and the MoveRequest after it reach the player on turn in one
    send (one system call); what was written before a close still goes out, before it."""
    async def scenario():
        conn, client = seated_client()
        await asyncio.sleep(0)  # the stream's opening has gone out
        state = new_state({"variant": "2021"}, seed=3)
        state.apply({0: next(a for a in state.legal_actions(0) if a[0] == "set")})
        before = len(conn.transport.writes)
        client.notify(state, 0, [{"type": "move"}])
        client.ask(state, 0, 2)
        unsent = conn.transport.writes[before:]
        await asyncio.sleep(0)
        one_turn = conn.transport.writes[before:]
        conn.write(b"<last/>")
        conn.close()
        return unsent, one_turn, conn.transport.writes[-1], conn.transport.closing

    unsent, one_turn, last, closing = asyncio.run(scenario())
    assert unsent == [], "nothing is sent before the turn ends"
    (send,) = one_turn
    assert send.index(b'class="memento"') < send.index(b"MoveRequest")
    assert last == b"<last/>" and closing
