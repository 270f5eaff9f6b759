"""What one hostile browser client may cost the server, against
a real server process (``manage.py serve``) over real sockets, with a bots-only match running
at full speed: floods are closed (4008), a spectator that does not acknowledge is sent only a
few views and then skips to the newest (or is closed, 4009), deep JSON gets an error, big
request bodies get 413 before they are read, and foreign pages cannot open a match socket."""
from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import socket
import time
import urllib.parse
import urllib.request

import pytest
import websockets

from benchmarks.spectator_fanout import running_match
from tests.human_client import Guest
from tests.ld_bot import LDBot, simple_move
from tests.serverproc import start_arena, wait_until

UNACKED_VIEWS = 32  # the default ARENA_WS_UNACKED_VIEWS
ACK_TIMEOUT_S = 3


@pytest.fixture(scope="module")
def busy_match():
    """A server with two TCP bots playing a 1000-game match; yields (server, match id, bots)."""
    server = start_arena(env={"LIARS_DICE_AUTO_GAMES": "1000", "ARENA_WS_ACK_TIMEOUT": str(ACK_TIMEOUT_S),
                              "LOG_LEVEL": "WARNING"})
    bots = []

    def decide(msg, rng):
        time.sleep(0.002)  # a few hundred views a second: the match outlasts the module
        return simple_move(msg, rng)

    try:
        bots = [LDBot(server.liars_dice_port, f"bot{k}", decide=lambda msg, rng=random.Random(k): decide(msg, rng))
                for k in range(2)]
        yield server, running_match(server.data_dir / "arena.sqlite3"), bots
    finally:
        for bot in bots:
            bot.close()
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


def ws_url(server, match_id: int) -> str:
    return f"ws://127.0.0.1:{server.http_port}/ws/matches/{match_id}/"


def requests_seen(bots) -> int:
    return sum(len(b.requests()) for b in bots)


async def drain(ws, quiet_s: float = 0.5) -> list[dict]:
    """Every message already received (until none comes for ``quiet_s``)."""
    messages = []
    while True:
        try:
            messages.append(json.loads(await asyncio.wait_for(ws.recv(), quiet_s)))
        except TimeoutError:
            return messages


def test_a_flooding_client_is_closed_with_a_reason(busy_match):
    server, match_id, _ = busy_match

    async def flood():
        async with websockets.connect(ws_url(server, match_id), origin=server.url, max_queue=None) as ws:
            try:
                for _ in range(1000):  # about 200 a second: cheap for the server, over the rate
                    await ws.send('{"type": "hello"}')
                    await asyncio.sleep(0.005)
            except websockets.ConnectionClosed:
                pass
            await asyncio.wait_for(ws.wait_closed(), 10)
            return ws.close_code, ws.close_reason

    code, reason = asyncio.run(flood())
    assert code == 4008 and "too many messages" in reason
    assert server.proc.poll() is None


def test_a_spectator_that_acknowledges_every_view_keeps_up_with_a_fast_match(busy_match):
    server, match_id, _ = busy_match

    async def watch():
        versions = []
        async with websockets.connect(ws_url(server, match_id), origin=server.url) as ws:
            while len(versions) < 300:  # far more than WS_BURST, at the bots' pace
                msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if msg["type"] == "match.view":
                    versions.append(msg["version"])
                    await ws.send(json.dumps({"type": "ack", "version": msg["version"]}))
        return versions

    versions = asyncio.run(watch())
    assert versions == sorted(versions) and len(versions) == 300


def test_a_spectator_that_does_not_acknowledge_gets_a_few_views_then_the_newest_then_is_closed(busy_match):
    server, match_id, bots = busy_match

    async def lagging_spectator():
        # The client library reads everything the server sends into its own queue (max_queue
        # None), so what is queued here is exactly what the server sent.
        async with websockets.connect(ws_url(server, match_id), origin=server.url, max_queue=None) as ws:
            start = requests_seen(bots)
            await asyncio.to_thread(wait_until, lambda: requests_seen(bots) > start + 400, 30, "bots to play on")
            first = await drain(ws)
            last_sent = max(m["version"] for m in first)
            await ws.send(json.dumps({"type": "ack", "version": last_sent}))
            after_ack = await drain(ws)
            await asyncio.wait_for(ws.wait_closed(), ACK_TIMEOUT_S + 10)
            return first, after_ack, ws.close_code

    first, after_ack, code = asyncio.run(lagging_spectator())
    views = [m for m in first if m["type"] == "match.view"]
    assert 1 <= len(views) <= UNACKED_VIEWS  # ~200 views happened meanwhile
    # The ack opens the window: the newest view comes, skipping all that were held back.
    resumed = [m["version"] for m in after_ack if m["type"] == "match.view"]
    assert resumed and resumed[0] > views[-1]["version"] + 50
    assert len(resumed) <= UNACKED_VIEWS
    assert code == 4009  # then no ack for ARENA_WS_ACK_TIMEOUT: closed


def test_a_deeply_nested_message_gets_an_error_and_the_connection_stays_usable(busy_match):
    server, match_id, _ = busy_match

    async def deep():
        async with websockets.connect(ws_url(server, match_id), origin=server.url) as ws:
            await ws.send("[" * 8000 + "]" * 8000)
            await ws.send('{"type": "resync"}')
            kinds, errors = set(), []
            while "match.view" not in kinds or not errors:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
                kinds.add(msg["type"])
                if msg["type"] == "match.error":
                    errors.append(msg["message"])
                else:
                    await ws.send(json.dumps({"type": "ack", "version": msg.get("version", 0)}))
            return errors

    assert asyncio.run(deep()) == ["Message nested too deep."]
    assert "RecursionError" not in server.log() and "Traceback" not in server.log()


def test_websocket_from_a_foreign_page_is_refused_and_from_the_arena_accepted(busy_match):
    server, match_id, _ = busy_match

    async def open_with(origin: str):
        async with websockets.connect(ws_url(server, match_id), origin=origin) as ws:
            return json.loads(await asyncio.wait_for(ws.recv(), 10))["type"]

    with pytest.raises(websockets.InvalidStatus) as refused:
        asyncio.run(open_with("http://evil.example"))
    assert refused.value.response.status_code == 403
    assert asyncio.run(open_with(server.url)) == "match.view"


def test_websocket_from_another_port_or_name_is_refused_with_a_visitors_cookie(busy_match):
    """Scheme, host and port must be the handshake's own (``Host``), as Django's CSRF check
    has it: a page served on another port of the same machine is another site."""
    server, match_id, _ = busy_match
    guest = Guest(server.url, "Visitor")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', guest.get("/")).group(1)
    guest.opener.open(urllib.request.Request(  # a guest's session: a cookie worth stealing
        server.url + "/nickname/", data=urllib.parse.urlencode({"csrfmiddlewaretoken": token, "nickname": "Visitor"})
        .encode(), headers={"Referer": server.url + "/"}), timeout=10).read()
    cookie = "; ".join(f"{c.name}={c.value}" for c in guest.jar)
    assert "sessionid=" in cookie

    async def open_with(origin: str, host: str = "127.0.0.1"):
        url = f"ws://{host}:{server.http_port}/ws/matches/{match_id}/"
        async with websockets.connect(url, origin=origin, additional_headers={"Cookie": cookie}) as ws:
            return json.loads(await asyncio.wait_for(ws.recv(), 10))["type"]

    other_port = server.http_port + 1 if server.http_port < 65535 else server.http_port - 1
    for origin in (f"http://127.0.0.1:{other_port}", "http://localhost:9999", "http://127.0.0.1",
                   f"https://127.0.0.1:{server.http_port}", f"http://localhost:{server.http_port}"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            asyncio.run(open_with(origin))
        assert refused.value.response.status_code == 403, origin
    assert asyncio.run(open_with(server.url)) == "match.view"
    # The same page reached by another of the site's names is its own origin there.
    assert asyncio.run(open_with(f"http://localhost:{server.http_port}", host="localhost")) == "match.view"


@pytest.mark.parametrize("origin, host, scheme, trusted, accepted", [
    ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", [], True),
    ("http://127.0.0.1:8897", "127.0.0.1:8000", "ws", [], False),
    ("http://localhost:9999", "127.0.0.1:8000", "ws", [], False),
    ("http://localhost:8000", "127.0.0.1:8000", "ws", [], False),
    ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", [], False),
    ("https://127.0.0.1:8000", "127.0.0.1:8000", "wss", [], True),
    ("http://evil.example:8000", "evil.example:8000", "ws", [], False),  # Host not allowed
    ("", "127.0.0.1:8000", "ws", [], False),
    ("http://127.0.0.1:8000", "", "ws", [], False),
    # TLS ends at a proxy: the browser's https origin is trusted by name
    ("https://localhost", "localhost", "ws", ["https://localhost"], True),
    ("https://a.localhost", "localhost", "ws", ["https://*.localhost"], True),
    ("http://a.localhost", "localhost", "ws", ["https://*.localhost"], False),
])
def test_same_origin_compares_scheme_host_and_port(settings, origin, host, scheme, trusted, accepted):
    from webapp.asgi import same_origin

    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    settings.CSRF_TRUSTED_ORIGINS = trusted
    headers = [(b"origin", origin.encode()), (b"host", host.encode())]
    assert same_origin({"type": "websocket", "scheme": scheme, "headers": headers}) is accepted
    assert not same_origin({"type": "websocket", "scheme": scheme, "headers": headers + headers[:1]})


def http_post_head(server, headers: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    sock.sendall((f"POST /import/jass/ HTTP/1.1\r\nHost: 127.0.0.1:{server.http_port}\r\n"
                  "Content-Type: multipart/form-data; boundary=x\r\n" + headers + "\r\n").encode())
    return sock


def read_status(sock: socket.socket) -> str:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode()


def test_a_100_mb_upload_is_refused_by_its_content_length_before_the_body_is_sent(busy_match):
    server, _, _ = busy_match
    with http_post_head(server, f"Content-Length: {100 * 1024 * 1024}\r\n") as sock:
        # Not a byte of the body sent: the answer can only come from the headers.
        assert read_status(sock).startswith("HTTP/1.1 413")


def test_a_chunked_upload_over_the_limit_is_refused(busy_match):
    server, _, _ = busy_match
    with http_post_head(server, "Transfer-Encoding: chunked\r\n") as sock:
        chunk = b"%x\r\n%s\r\n" % (1024 * 1024, b"x" * 1024 * 1024)
        try:
            for _ in range(8):  # 8 MiB, over ARENA_MAX_REQUEST_BYTES (about 5 MiB)
                sock.sendall(chunk)
        except OSError:  # the server may stop reading once it has refused
            pass
        assert read_status(sock).startswith("HTTP/1.1 413")


def test_a_spectator_that_does_not_read_its_socket_gets_whole_views_in_order_once_it_reads(busy_match):
    """Views go out through serve.py's ``write_now`` (straight to the socket, Twisted's buffer
    for what the socket cannot take): a spectator with a small receive buffer that reads
    nothing for a while gets, once it reads, whole frames of whole views, none older than one
    before it (the first may come twice: as the answer to the connection's resync and from the
    match), and no more than the window.  (``tests/test_audience.py`` fills a socket for
    certain.)"""
    from websockets.client import ClientProtocol
    from websockets.uri import parse_uri

    server, match_id, bots = busy_match
    ws = ClientProtocol(parse_uri(ws_url(server, match_id)), origin=server.url, max_size=None)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server.http_port))
    try:
        ws.send_request(ws.connect())
        sock.sendall(b"".join(ws.data_to_send()))
        start = requests_seen(bots)
        # Not reading while the bots play on: until 200 more requests, at most half the
        # server's ack timeout (a busy machine took longer than the timeout for the 200).
        deadline = time.monotonic() + ACK_TIMEOUT_S / 2
        while requests_seen(bots) <= start + 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        texts = []
        sock.settimeout(1.0)
        while True:
            # Read until the views stop coming, or until the server closes: its ack timeout
            # (the window stayed full) may come while this reads, and as this client never
            # answers the close, Autobahn then drops the connection with a reset.
            try:
                data = sock.recv(65536)
            except TimeoutError:
                break
            if not data:
                break
            ws.receive_data(data)
            events = ws.events_received()
            texts += [event.data for event in events if getattr(event, "opcode", None) is not None
                      and event.opcode.name == "TEXT"]
            if any(getattr(event, "opcode", None) is not None and event.opcode.name == "CLOSE" for event in events):
                break
    finally:
        sock.close()
    views = [json.loads(text) for text in texts]
    versions = [m["version"] for m in views if m["type"] == "match.view"]
    assert 2 <= len(versions) <= UNACKED_VIEWS  # no ack sent: the window's worth at most
    assert versions == sorted(versions) and len(set(versions)) >= len(versions) - 1
    assert "Traceback" not in server.log()
