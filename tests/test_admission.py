"""Admission at the bot ports, over real sockets: one address holding many idle connections
cannot keep an honest bot out (``ARENA_MAX_CONNECTIONS_PER_ADDRESS``); a connection that says
nothing valid is closed after ``ARENA_FIRST_MESSAGE_TIMEOUT``, one that sends a message a byte
at a time after ``ARENA_MESSAGE_TIMEOUT``; a bot that has spoken may wait for its opponent as
long as it takes; connections that hang up before speaking leave no row behind.

The flooding client connects from 127.0.0.2 (loopback too, but another address than the
honest bots' 127.0.0.1), and the tests switch the loopback exemption off
(``ARENA_ADMISSION_EXEMPT=""``) so that the caps apply to both.
"""
from __future__ import annotations

import asyncio
import socket
import sqlite3
import time

from tests.blokus_client import Player, XmlClient
from tests.ld_bot import LDBot
from tests.serverproc import wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored

FLOODER = "127.0.0.2"


def serve(arena_factory, **env):
    base = {"ARENA_ADMISSION_EXEMPT": "", "LIARS_DICE_AUTO_DICE": "1", "LIARS_DICE_BOT_DEADLINE": "2"}
    base.update({k: str(v) for k, v in env.items()})
    with sigint_not_ignored():
        return arena_factory(env=base)


def connect_from(host: str, port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind((host, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def still_open(sock: socket.socket, wait: float = 0.0) -> bool:
    """The server has neither closed nor reset ``sock`` (within ``wait`` seconds); data the
    server sent (a greeting) is read and dropped."""
    sock.settimeout(wait or 0.01)
    try:
        while True:
            if sock.recv(65536) == b"":
                return False
    except (TimeoutError, BlockingIOError):
        return True
    except OSError:  # reset
        return False


def closed_within(sock: socket.socket, timeout: float) -> float | None:
    """Seconds until the server closes ``sock`` (reading what it sends), or None."""
    start = time.monotonic()
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass
    return time.monotonic() - start


def rows(arena, sql: str) -> list:
    db = sqlite3.connect(arena.data_dir / "arena.sqlite3", timeout=10)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_one_address_holding_idle_connections_cannot_keep_honest_bots_out(arena_factory):
    """Another address fills its share of both ports with idle connections (and tries for
    many more): it holds at most ``ARENA_MAX_CONNECTIONS_PER_ADDRESS``, the rest are closed at
    once, and bots from elsewhere still connect and play, although the listener's global cap
    is far below what the flooder tried."""
    arena = serve(arena_factory, ARENA_MAX_CONNECTIONS=40, ARENA_MAX_CONNECTIONS_PER_ADDRESS=10,
                  ARENA_CONNECTIONS_PER_S_PER_ADDRESS=1000, ARENA_FIRST_MESSAGE_TIMEOUT=120)
    idle = []
    try:
        for port in (arena.liars_dice_port, arena.blokus_port):
            for _ in range(100):
                try:
                    idle.append((port, connect_from(FLOODER, port)))
                except OSError:  # the backlog may refuse some outright: refused all the same
                    pass
        held = wait_until(lambda: _settled(idle), 20, "the refused connections closed")
        assert held == {arena.liars_dice_port: 10, arena.blokus_port: 10}
        a, b = LDBot(arena.liars_dice_port, "honest-a"), LDBot(arena.liars_dice_port, "honest-b")
        assert a.closed.wait(60) and b.closed.wait(60), "the honest match finished"
        assert a.round_overs()[-1]["game_winner"] != -1
        one, two = Player(arena.blokus_port), Player(arena.blokus_port)
        one.wait_message("joined")
        two.wait_message("room", "memento")  # seated and playing
        one.close(), two.close()
        assert "connections open from 127.0.0.2 (at most 10)" in arena.log()
        assert "refusing more" not in arena.log(), "the global cap was never reached"
    finally:
        for _, sock in idle:
            sock.close()


def _settled(idle) -> dict | None:
    """Per port, how many of ``idle`` are still open, once every refused one is closed (the
    held ones were greeted or seated; the server never answers a refused one)."""
    counts: dict[int, int] = {}
    for port, sock in idle:
        if still_open(sock):
            counts[port] = counts.get(port, 0) + 1
    return counts if sum(counts.values()) <= 20 else None


def test_a_silent_connection_is_closed_after_the_first_message_deadline_and_a_joined_bot_is_not(arena_factory):
    """Blokus: a connection that sends nothing, and one that sends only ``<protocol>``, are
    closed after ``ARENA_FIRST_MESSAGE_TIMEOUT``; a bot that joined and waits for an opponent
    stays.  Liar's Dice: a connection that sent a bad line and nothing valid is closed; a bot
    that sends nothing at all is a nameless bot (the reference seats those), and stays."""
    deadline = 1.0
    arena = serve(arena_factory, ARENA_FIRST_MESSAGE_TIMEOUT=deadline, LIARS_DICE_SEAT_SILENT_AFTER=0.2)
    mute = socket.create_connection(("127.0.0.1", arena.blokus_port))
    opened = socket.create_connection(("127.0.0.1", arena.blokus_port))
    opened.sendall(b"<protocol>")
    waiting = Player(arena.blokus_port)
    waiting.wait_message("joined")
    junk = socket.create_connection(("127.0.0.1", arena.liars_dice_port))
    junk.sendall(b"not json\n")
    nameless = socket.create_connection(("127.0.0.1", arena.liars_dice_port))
    nameless_port = nameless.getsockname()[1]
    for sock in (mute, opened, junk):
        took = closed_within(sock, 30)
        assert took is not None, "closed after the first-message deadline"
    assert "nothing valid within 1 s of connecting; closed" in arena.log()
    assert not waiting.closed.is_set(), "the joined bot waits on"
    assert still_open(nameless)
    assert f"bot 127.0.0.1:{nameless_port} took seat" in arena.log()
    waiting.close()
    nameless.close()


def test_a_message_sent_a_byte_at_a_time_is_closed_after_the_message_deadline(arena_factory):
    """A slow-loris client on each port: it opens a message and sends one more byte every
    0.2 s without ever ending it.  It is closed after ``ARENA_MESSAGE_TIMEOUT`` (2 s), long
    before its first-message deadline (120 s) would have come."""
    arena = serve(arena_factory, ARENA_FIRST_MESSAGE_TIMEOUT=120, ARENA_MESSAGE_TIMEOUT=2)
    for port, opening in ((arena.blokus_port, b'<protocol><join gameType="'),
                          (arena.liars_dice_port, b'{"name": "')):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(opening)
        started = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - started < 60:
            try:
                sock.sendall(b"x")
                if sock.recv(65536) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        took = time.monotonic() - started
        assert took < 60, "the trickling client was never closed"
        assert took >= 2 - 0.05, "not before the message deadline"
        sock.close()
    assert arena.log().count("a message begun 2 s ago has not ended; closed") == 2


def test_connections_that_hang_up_before_speaking_create_no_rows(arena_factory):
    """A thousand connections to each port that connect and hang up at once, half of them
    after a partial message: not one row is ever written for them (the first match, played
    by honest bots afterwards, is match 1: SQLite never hands out an id twice).  Then pairs
    that send a name and hang up: no match is started for them (a table starts only when
    its bots are there) and no table is left behind."""
    arena = serve(arena_factory, ARENA_ADMISSION_EXEMPT="loopback")
    for i in range(1000):
        for port in (arena.liars_dice_port, arena.blokus_port):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                if i % 2:
                    sock.sendall(b'{"na' if port == arena.liars_dice_port else b"<protocol><jo")
    a, b = LDBot(arena.liars_dice_port, "first-a"), LDBot(arena.liars_dice_port, "first-b")
    assert a.closed.wait(60) and b.closed.wait(60)
    wait_until(lambda: rows(arena, "SELECT id, status FROM arena_match"), 20, "the honest match recorded")
    assert rows(arena, "SELECT id, status FROM arena_match") == [(1, "finished")]
    assert rows(arena, "SELECT count(*) FROM arena_seat") == [(2,)]
    for _ in range(50):
        pair = [socket.create_connection(("127.0.0.1", arena.liars_dice_port)) for _ in range(2)]
        for sock in pair:
            sock.sendall(b'{"name": "hit-and-run"}\n')
        for sock in pair:
            sock.close()
    a, b = LDBot(arena.liars_dice_port, "after-a"), LDBot(arena.liars_dice_port, "after-b")
    assert a.closed.wait(60) and b.closed.wait(60)
    wait_until(lambda: rows(arena, "SELECT count(*) FROM arena_match WHERE status = 'open'")[0][0] == 0
               and rows(arena, "SELECT count(*) FROM arena_match")[0][0] == 2, 20, "every table of the hang-ups gone")
    assert [status for (status,) in rows(arena, "SELECT status FROM arena_match")] == ["finished", "finished"]
    names = {name for (name,) in rows(arena, "SELECT display_name FROM arena_seat")}
    assert names == {"first-a", "first-b", "after-a", "after-b"}


def test_a_message_for_a_browser_socket_daphne_has_closed_is_dropped_not_raised():
    """When a browser begins closing its WebSocket (or we closed it), Daphne refuses to send on
    it ("Attempt to send on a closed protocol") until the consumer hears of the disconnect: a
    table update meant for it in that window is dropped, and nothing more is tried on it,
    instead of a traceback in the server log."""
    from autobahn.exception import Disconnected

    from games.arena.web.consumers import MatchConsumer

    async def run():
        consumer = MatchConsumer()
        consumer.closing = False
        tried = []

        async def daphne_send(message):
            tried.append(message)
            raise Disconnected("Attempt to send on a closed protocol")

        consumer.base_send = daphne_send
        await consumer.table_update({"type": "table.update"})
        await consumer.match_error({"type": "match.error", "message": "x"})
        return tried, consumer.closing

    tried, closing = asyncio.run(run())
    assert [m["type"] for m in tried] == ["websocket.send"] and closing


def test_admission_counts_per_address_per_ipv6_prefix_and_spares_exempt_networks():
    """:class:`Admission` with a controlled clock: two open and one new a second (bursts of
    two) per address; IPv6 counted per /64, an IPv4-mapped address as the IPv4 one; loopback
    and a listed network never counted."""
    from games.arena.bots.transport import Admission, parse_exempt

    now = [0.0]
    admission = Admission(2, 1.0, parse_exempt("loopback, 10.1.0.0/16"), clock=lambda: now[0])
    assert admission.admit("192.0.2.1") is None and admission.admit("192.0.2.1") is None
    assert admission.admit("192.0.2.1") == "2 connections open from 192.0.2.1 (at most 2)"
    admission.release("192.0.2.1")
    assert admission.admit("192.0.2.1") == "more than 1 new connections a second from 192.0.2.1"
    now[0] += 1.0
    assert admission.admit("192.0.2.1") is None
    assert admission.admit("::ffff:192.0.2.1") == "2 connections open from 192.0.2.1 (at most 2)"
    assert admission.admit("2001:db8::1") is None and admission.admit("2001:db8::ffff:2") is None
    assert admission.admit("2001:db8::3") == "2 connections open from 2001:db8::/64 (at most 2)"
    assert admission.admit("2001:db8:0:1::1") is None, "another /64 is another subscriber"
    assert all(admission.admit(host) is None for host in ["127.0.0.1", "127.0.0.2", "::1", "10.1.2.3"] * 50)
    assert admission.admit("10.2.0.1") is None


def test_a_listener_past_its_caps_closes_new_connections_before_making_anything_for_them(caplog):
    """In process, a line listener with a global cap of 3 and at most 1 connection a second
    per address: the admitted connections are greeted and handled; the refused ones are
    closed at once, get no byte, build no connection object and leave the counts as they
    were; closing an admitted one frees its place."""
    from games.arena.bots.transport import Admission, LineConnection, start_line_server

    class Greeter(LineConnection):
        def opened(self) -> None:
            self.write(b"hello\n")

    async def run():
        made = []

        def handler(conn):
            made.append(conn)
            return type("H", (), {"on_line": lambda s, l: None, "on_bad_line": lambda s, r: None,
                                  "on_close": lambda s: None})()

        admission = Admission(max_per_address=5, per_s=1.0, exempt=[])
        listener = await start_line_server(handler, "127.0.0.1", 0, 100, 3, "probe", admission=admission)
        listener._make_connection = lambda: Greeter(handler, 100, listener.connections)

        async def connect(source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            return await asyncio.open_connection("127.0.0.1", listener.port, local_addr=(source, 0))

        async def first_bytes(reader) -> bytes:
            return await asyncio.wait_for(reader.read(100), 5)

        greeted = [await connect("127.0.0.3") for _ in range(2)]  # a bucket of 2 a second
        assert [await first_bytes(r) for r, _ in greeted] == [b"hello\n"] * 2
        too_fast, _ = await connect("127.0.0.3")
        assert await first_bytes(too_fast) == b"", "refused by the address's rate: closed, no greeting"
        greeted.append(await connect("127.0.0.4"))
        assert await first_bytes(greeted[-1][0]) == b"hello\n", "another address has its own rate"
        over_cap, _ = await connect("127.0.0.5")
        assert await first_bytes(over_cap) == b"", "refused by the global cap"
        assert len(made) == 3 and listener.open == 3 and admission.refused == 1
        greeted[0][1].close()
        while listener.open != 2:
            await asyncio.sleep(0.01)
        reader, _ = await connect("127.0.0.5")
        assert await first_bytes(reader) == b"hello\n", "a place freed by a close is taken again"
        listener.close()

    with caplog.at_level("WARNING", logger="arena.transport"):
        asyncio.run(run())
    assert "probe: 3 connections open; refusing more" in caplog.text
    assert "more than 1 new connections a second from 127.0.0.3" in caplog.text
