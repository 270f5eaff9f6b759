"""Spectators' fan-out (games/arena/web/consumers.py, :class:`Audience`): one channel-layer
subscription per match and process for all its spectators, views handed out a batch per turn
of the loop, the newest view winning over one not yet handed out; and the WebSocket frames the
server writes for them (games/arena/management/commands/serve.py)."""
from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers, get_channel_layer
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from games.arena.play.layers import LocalChannelLayer
from games.arena.play.runner import public_group, seat_group
from games.arena.web.consumers import Audience


class FakeConsumer:
    """Records what the audience hands it (``hand_view`` for views, ``dispatch`` for the rest),
    as ``(type, version)``."""

    def __init__(self, name: str, fail: bool = False):
        self.name, self.fail = name, fail
        self.got: list[tuple] = []
        self.closed: int | None = None
        self.match_id = 1

    async def dispatch(self, message):
        if self.fail:
            raise RuntimeError("broken")
        self.got.append((message["type"], message.get("version")))

    def hand_view(self, message):
        if self.fail:
            raise RuntimeError("broken")
        self.got.append((message["type"], message.get("version")))

    async def _close(self, code, reason):
        self.closed = code


def view(version: int) -> dict:
    return {"type": "match.view", "version": version, "ts": 0.0, "audience": "public", "text": f'{{"v": {version}}}'}


async def turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


@pytest.fixture
def layer():
    return LocalChannelLayer()


async def test_one_subscription_per_group_for_any_number_of_spectators(layer):
    group = public_group(7)
    members = [FakeConsumer(f"c{k}") for k in range(5)]
    audiences = {await Audience.join(layer, group, c) for c in members}
    assert len(audiences) == 1 and Audience.of(layer, group) in audiences
    assert len(layer.groups[group]) == 1  # one channel in the group, however many watch
    await layer.group_send(group, view(1))
    await turns()
    assert all(c.got == [("match.view", 1)] for c in members)
    for c in members:
        await Audience.of(layer, group).leave(c)
    assert Audience.of(layer, group) is None and not layer.groups.get(group)
    # A later spectator subscribes anew.
    late = FakeConsumer("late")
    await Audience.join(layer, group, late)
    await layer.group_send(group, view(2))
    await turns()
    assert late.got == [("match.view", 2)] and len(layer.groups[group]) == 1
    await Audience.of(layer, group).leave(late)


async def test_audiences_are_per_group(layer):
    public, other = FakeConsumer("public"), FakeConsumer("other match")
    await Audience.join(layer, public_group(1), public)
    await Audience.join(layer, public_group(2), other)
    await layer.group_send(public_group(1), view(1))
    await layer.group_send(seat_group(1, 0), view(99))  # a seat's view: no audience is in its group
    await turns()
    assert public.got == [("match.view", 1)] and other.got == []
    await Audience.of(layer, public_group(1)).leave(public)
    await Audience.of(layer, public_group(2)).leave(other)


async def test_the_newest_view_wins_over_one_not_yet_handed_out(layer, monkeypatch):
    monkeypatch.setattr(Audience, "BATCH", 1)  # one member per turn of the loop
    group = public_group(3)
    members = [FakeConsumer(f"c{k}") for k in range(4)]
    for c in members:
        await Audience.join(layer, group, c)
    # Two views published before the audience ran at all: only the newer is handed out.
    await layer.group_send(group, view(1))
    await layer.group_send(group, view(2))
    await turns(10)
    assert all(c.got == [("match.view", 2)] for c in members)
    # A view that comes while an older one is being handed out: those not reached yet skip the
    # older one, then everyone gets the newer one.
    await layer.group_send(group, view(3))
    await turns(3)  # the first member or two got view 3
    await layer.group_send(group, view(4))
    await turns(12)
    for c in members:
        versions = [v for _, v in c.got]
        assert versions == sorted(versions) and versions[-1] == 4, (c.name, versions)
    assert [v for _, v in members[0].got] == [2, 3, 4]
    assert [v for _, v in members[-1].got] == [2, 4]
    await asyncio.gather(*(Audience.of(layer, group).leave(c) for c in members))


async def test_messages_other_than_views_are_never_dropped(layer, monkeypatch):
    monkeypatch.setattr(Audience, "BATCH", 1)
    group = public_group(4)
    members = [FakeConsumer(f"c{k}") for k in range(3)]
    for c in members:
        await Audience.join(layer, group, c)
    await layer.group_send(group, {"type": "table.update"})
    await layer.group_send(group, view(1))
    await layer.group_send(group, {"type": "match.error", "message": "x"})
    await layer.group_send(group, view(2))
    await turns(20)
    assert all(c.got == [("table.update", None), ("match.error", None), ("match.view", 2)] for c in members)
    for c in members:
        await Audience.of(layer, group).leave(c)


async def test_a_failing_spectator_is_closed_and_the_others_still_get_the_view(layer):
    group = public_group(5)
    good, bad, other = FakeConsumer("good"), FakeConsumer("bad", fail=True), FakeConsumer("other")
    for c in (good, bad, other):
        await Audience.join(layer, group, c)
    await layer.group_send(group, view(1))
    await turns()
    assert good.got == other.got == [("match.view", 1)]
    assert bad.closed == 1011 and bad not in Audience.of(layer, group).members
    for c in (good, bad, other):
        await Audience.of(layer, group).leave(c)
    assert Audience.of(layer, group) is None


# --- with the real consumer and a running match ---------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_spectators_of_a_match_share_one_subscription_and_a_person_is_not_in_it():
    from tests.test_consumers import communicator, guest_session, next_view, start_match

    channel_layers.backends = {}
    key, sitter = await sync_to_async(guest_session)("ida")
    arena, match_id = await start_match(["me", "builtin:random"], sitter)
    layer = get_channel_layer()
    player = communicator(match_id, key)
    spectators = [communicator(match_id) for _ in range(3)]
    try:
        for comm in [player, *spectators]:
            assert (await comm.connect())[0]
        audience = Audience.of(layer, public_group(match_id))
        assert len(audience.members) == 3  # the spectators; the person's consumer is not one
        assert len(layer.groups[public_group(match_id)]) == 1
        assert all(m.seat is None for m in audience.members)
        own = await next_view(player)
        assert own["audience"] == 0
        for comm in spectators:
            msg = await next_view(comm)
            assert msg["audience"] == "public" and "your_hand" not in msg["view"]
    finally:
        for comm in [player, *spectators]:
            await comm.disconnect()
        await arena.stop()
    assert Audience.of(layer, public_group(match_id)) is None
    assert not layer.groups.get(public_group(match_id))


# --- the frames (serve.py) ------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 200_000])
def test_a_prepared_frame_is_one_unmasked_text_frame_of_the_whole_text(size):
    from autobahn.twisted.websocket import WebSocketServerFactory

    from games.arena.management.commands.serve import FrameCache

    text = ("é" if size % 2 else "a") * (size // 2) + "x" * (size - 2 * (size // 2))
    frame, payload_size = FrameCache.frame_of(WebSocketServerFactory(), text)
    assert payload_size == len(text.encode())
    assert FrameCache.frame_of(WebSocketServerFactory(), text)[0] is frame  # the same text: cached
    assert FrameCache.frame_of(WebSocketServerFactory(), "".join(list(text)))[0] is frame  # equal text too
    reader = StreamReader()
    reader.feed_data(frame)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        parsed = done.value
    assert parsed.opcode == Opcode.TEXT and parsed.fin and parsed.data.decode() == text
    assert reader.at_eof()


class FakeReactor:
    """What a Twisted transport asks of its reactor: here, only recorded."""

    def __init__(self):
        self.writers, self.readers = set(), set()

    def addWriter(self, fd):
        self.writers.add(fd)

    def removeWriter(self, fd):
        self.writers.discard(fd)

    def addReader(self, fd):
        self.readers.add(fd)

    def removeReader(self, fd):
        self.readers.discard(fd)


def test_write_now_writes_at_once_and_leaves_the_rest_to_twisted_in_order():
    """serve.py's ``write_now`` on a real Twisted TCP connection whose peer does not read: the
    first writes go straight to the socket (Twisted's buffer stays empty, the socket is never
    registered for writing), what the socket cannot take is buffered by Twisted and sent by
    its ``doWrite``, later writes queue behind it, and the peer reads every byte in order."""
    import select
    import socket
    import time

    from twisted.internet import tcp
    from twisted.internet.protocol import Protocol

    from games.arena.management.commands.serve import write_now

    listener = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(listener.getsockname())
    sock, address = listener.accept()
    listener.close()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    reactor = FakeReactor()
    transport = tcp.Server(sock, Protocol(), address, None, 0, reactor)
    transport.connected = 1
    try:
        chunks = [bytes([k % 251]) * 1000 for k in range(400)]  # 400 kB: more than both buffers
        write_now(transport, chunks[0])
        assert not transport._tempDataBuffer and not transport.dataBuffer and not reactor.writers
        for chunk in chunks[1:]:
            write_now(transport, chunk)
        assert transport in reactor.writers  # the socket is full: Twisted holds the rest
        expected, received = b"".join(chunks), bytearray()
        deadline = time.monotonic() + 20
        while len(received) < len(expected) and time.monotonic() < deadline:
            # What the reactor does: doWrite once the socket is writable (while registered).
            readable, writable, _ = select.select([peer], [sock] if transport in reactor.writers else [], [], 0.1)
            if writable:
                transport.doWrite()
            if readable:
                received += peer.recv(65536)
        assert bytes(received) == expected
        assert not reactor.writers  # all sent: Twisted unregistered it
        write_now(transport, b"end")
        assert peer.recv(10) == b"end" and not reactor.writers
    finally:
        peer.close()
        sock.close()


async def test_a_frame_sent_does_not_ask_the_session_and_anything_else_still_does():
    """webapp/asgi.py's session wrapper: Channels' asks the session whether it changed on every
    message sent (it saves it only on ``http.response.start``); frames skip that."""
    from webapp.asgi import _SessionWrapper

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"session.{name} asked")

    sent = []

    async def send(message):
        sent.append(message)

    wrapper = _SessionWrapper({"cookies": {}}, send)
    wrapper.scope["session"]._wrapped = Untouchable()
    await wrapper.send({"type": "websocket.send", "text": "x"})
    assert sent == [{"type": "websocket.send", "text": "x"}]
    with pytest.raises(AssertionError, match="session.modified asked"):
        await wrapper.send({"type": "websocket.close", "code": 1000})


async def test_a_spectators_views_are_written_straight_to_its_socket_within_its_window(settings):
    """``MatchConsumer.hand_view`` (what the audience calls for each spectator): with the
    server's ``send_text_now`` (consumers.SEND_TEXT_NOW), views within the window are written
    at once with nothing to await; past the window only the newest is held, and an ack sends
    it; a socket the server cannot write to directly gets it through Channels' send."""
    from games.arena.web.consumers import MatchConsumer

    settings.ARENA = {**settings.ARENA, "WS_UNACKED_VIEWS": 2, "WS_ACK_TIMEOUT": 60}
    written, sent, direct = [], [], [True]
    consumer = MatchConsumer()
    consumer.send_text_now = lambda text: direct[0] and not written.append(text)

    async def channels_send(message):
        sent.append(message["text"])

    consumer.base_send = channels_send
    assert consumer.hand_view(view(1)) is None and consumer.hand_view(view(2)) is None
    assert written == ['{"v": 1}', '{"v": 2}']
    # The window is full: views 3 and 4 are held, only the newest stays.
    assert consumer.hand_view(view(3)) is None and consumer.hand_view(view(4)) is None
    assert written == ['{"v": 1}', '{"v": 2}'] and consumer.held["version"] == 4
    await consumer._ack(2)
    assert written[2:] == ['{"v": 4}'] and consumer.held is None
    direct[0] = False  # e.g. frames already queued in Daphne: its own path, in order
    await consumer._ack(4)
    rest = consumer.hand_view(view(5))
    assert rest is not None and sent == []
    await rest
    assert sent == ['{"v": 5}'] and written[3:] == []
    if consumer.ack_watch is not None:
        consumer.ack_watch.cancel()
