"""Admission at the ports Daphne serves (the web port and Hanabi's bot port), over real
sockets against a server started as the README does: one address holds at most its cap of
connections before any request is read (upgrade requests left unfinished included), a
request line and headers sent a byte at a time, or a kept-alive connection left idle, is
closed after ``ARENA_REQUEST_HEADERS_TIMEOUT``, and a WebSocket once open is not; a refused
connection to the Hanabi port is closed straight after ``accept()`` without a byte of answer,
and a bot refused on the web port's bot route gets HTTP 403 at the handshake.

The flooding client connects from 127.0.0.2, the honest ones from 127.0.0.1, and the
loopback exemption is off (``ARENA_ADMISSION_EXEMPT=""``) so that the caps apply to both.
"""
from __future__ import annotations

import base64
import os
import socket
import time

import httpx

from tests.hanabi_client import HanabiClient
from tests.serverproc import wait_until
from tests.test_admission import FLOODER, closed_within, connect_from, serve, still_open


def upgrade_request(port: int, path: str = "/") -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def open_count(socks) -> int:
    return sum(still_open(s) for s in socks)


def test_one_address_holds_at_most_its_cap_of_unfinished_requests_on_the_web_and_hanabi_ports(arena_factory):
    """200 connections from one address to each port, each with half an upgrade request (as
    a slow-loris client sends it): the address holds 8 on the web port and 5 on the Hanabi
    port, the rest are closed at once; honest clients from another address still load a
    page and play."""
    arena = serve(arena_factory, ARENA_MAX_CONNECTIONS_PER_ADDRESS=5, ARENA_WEB_MAX_CONNECTIONS_PER_ADDRESS=8,
                  ARENA_CONNECTIONS_PER_S_PER_ADDRESS=10000, ARENA_WEB_CONNECTIONS_PER_S_PER_ADDRESS=10000,
                  ARENA_REQUEST_HEADERS_TIMEOUT=300)
    held: dict[int, list] = {arena.http_port: [], arena.hanabi_port: []}
    try:
        for port, socks in held.items():
            for _ in range(200):
                try:
                    sock = connect_from(FLOODER, port)
                    sock.sendall(upgrade_request(port)[:30])
                    socks.append(sock)
                except OSError:  # refused at once (a reset, or the backlog): refused all the same
                    pass
        counts = wait_until(lambda: (c := {p: open_count(s) for p, s in held.items()})
                            and sum(c.values()) <= 13 and c, 30, "the refused connections closed")
        assert counts == {arena.http_port: 8, arena.hanabi_port: 5}
        assert httpx.get(arena.url + "/", timeout=30).status_code == 200
        bot = HanabiClient(arena.hanabi_port, "honest")
        assert bot.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["honest"]
        bot.close()
        log = arena.log()
        assert "connections open from 127.0.0.2 (at most 8)" in log
        assert "connections open from 127.0.0.2 (at most 5)" in log
    finally:
        for socks in held.values():
            for sock in socks:
                sock.close()


def trickle(sock: socket.socket, head: bytes, limit: float = 60.0) -> float:
    """Send ``head`` (a request line and headers, without the blank line that ends them),
    then a header that never ends, a byte every 0.2 s; seconds until the server closes (at
    most ``limit``)."""
    started = time.monotonic()
    sock.settimeout(0.2)
    stream = iter(head + b"X-Pad: ")
    while time.monotonic() - started < limit:
        try:
            sock.sendall(bytes([next(stream, ord("a"))]))
            if sock.recv(65536) == b"":
                break
        except TimeoutError:
            continue
        except OSError:
            break
    return time.monotonic() - started


def test_a_request_sent_a_byte_at_a_time_or_an_idle_kept_alive_connection_is_closed_after_the_deadline(arena_factory):
    """A slow-loris upgrade request on each port, a byte every 0.2 s, is closed after the
    2 s deadline (before, it was never closed); so is a kept-alive HTTP connection that
    sends nothing after its first response.  A Hanabi bot whose WebSocket is open stays."""
    deadline = 2.0
    arena = serve(arena_factory, ARENA_REQUEST_HEADERS_TIMEOUT=deadline, ARENA_FIRST_MESSAGE_TIMEOUT=120)
    bot = HanabiClient(arena.hanabi_port, "patient")
    bot.wait_for("CONNECTION_RESPONSE")
    for port in (arena.http_port, arena.hanabi_port):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            took = trickle(sock, upgrade_request(port)[:-2])
        assert took < 60, f"port {port}: the trickling client was never closed"
        assert took >= deadline - 0.05, "not before the deadline"
    with socket.create_connection(("127.0.0.1", arena.http_port)) as sock:
        sock.sendall(f"GET /static/nothing HTTP/1.1\r\nHost: 127.0.0.1:{arena.http_port}\r\n\r\n".encode())
        sock.settimeout(30)
        assert sock.recv(65536).startswith(b"HTTP/1.1 404")
        took = closed_within(sock, 60)
        assert took is not None and took >= deadline - 0.5, "an idle kept-alive connection is closed in time"
    assert arena.log().count("no complete request line and headers within 2 s; closed") >= 3
    assert not bot.done.is_set() and bot.close_code is None, "an open WebSocket is not timed out"
    bot.close()


def test_a_refused_hanabi_connection_gets_no_answer_and_the_web_ports_bot_route_answers_403(arena_factory):
    """Hanabi's own port refuses at ``accept()``: the connection is closed before any byte of
    answer, whatever the client sent.  The web port's bot route (``/ws/bots/hanabi/``) admits
    the connection to the web port, then refuses the bot's handshake by the bot caps: HTTP
    403, the WebSocket never opens."""
    arena = serve(arena_factory, ARENA_MAX_CONNECTIONS_PER_ADDRESS=2, ARENA_REQUEST_HEADERS_TIMEOUT=300)
    kept = [HanabiClient(arena.hanabi_port, f"kept-{i}", host="127.0.0.1") for i in range(2)]
    for bot in kept:
        bot.wait_for("CONNECTION_RESPONSE")
    refused = socket.create_connection(("127.0.0.1", arena.hanabi_port))
    try:
        refused.sendall(upgrade_request(arena.hanabi_port))
    except OSError:
        pass
    refused.settimeout(30)
    try:
        answer = refused.recv(65536)
    except OSError:  # reset: refused all the same
        answer = b""
    assert answer == b"", "closed without an answer"
    refused.close()
    route = [HanabiClient(arena.http_port, f"route-{i}", path="/ws/bots/hanabi/") for i in range(2)]
    for bot in route:
        bot.wait_for("CONNECTION_RESPONSE")
    with socket.create_connection(("127.0.0.1", arena.http_port)) as third:
        third.sendall(upgrade_request(arena.http_port, "/ws/bots/hanabi/"))
        third.settimeout(30)
        assert third.recv(65536).startswith(b"HTTP/1.1 403")
    for bot in kept + route:
        bot.close()
