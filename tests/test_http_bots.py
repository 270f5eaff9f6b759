"""The HTTP client for bots against real local HTTP servers: answers, deadlines, size and
redirect bounds, and the private-address policy checked on the connected address."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings

from games.arena.bots import http_bots
from games.arena.bots.http_bots import BotCallError, post_json


class Handler(BaseHTTPRequestHandler):
    """Behaves according to the path, like a zoo of bots."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length)) if length else None
        path = self.path
        if path == "/echo":
            self._send(200, json.dumps({"got": body}).encode())
        elif path == "/slow":
            time.sleep(1.0)
            self._send(200, b"{}")
        elif path == "/text":
            self._send(200, b"hello, not json")
        elif path == "/huge":
            self._send(200, b"[" + b"1," * 100000 + b"1]")
        elif path == "/huge-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(100):
                chunk = b" " * 4096
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/error":
            self._send(500, b"boom")
        elif path == "/elsewhere":
            self.send_response(307)
            self.send_header("Location", "http://example.invalid/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/same-host":
            self.send_response(307)
            self.send_header("Location", "/echo")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._send(404, b"no such bot")

    def _send(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def bot_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(autouse=True)
def fresh_client():
    http_bots._clients.clear()
    yield
    http_bots._clients.clear()


async def test_answer_is_parsed_and_keep_alive_reuses_the_connection(bot_server):
    reply = await post_json(bot_server + "/echo", {"a": 1}, 2.0)
    assert reply.status == 200 and reply.data == {"got": {"a": 1}}
    again = await post_json(bot_server + "/echo", {"a": 2}, 2.0)
    assert again.data == {"got": {"a": 2}}
    await http_bots.close_client()


@pytest.mark.parametrize("path, message", [
    ("/slow", "no answer within 0.3 s"),
    ("/text", "not JSON"),
    ("/huge", "over the 65536 byte limit"),
    ("/huge-chunked", "over the 65536 byte limit"),
    ("/error", "HTTP status 500"),
    ("/nobot", "HTTP status 404"),
    ("/elsewhere", "redirect to another host refused"),
])
async def test_bad_bots_give_clear_errors(bot_server, path, message):
    with pytest.raises(BotCallError, match=message):
        await post_json(bot_server + path, {}, 0.3)
    await http_bots.close_client()


async def test_same_host_redirect_is_followed(bot_server):
    reply = await post_json(bot_server + "/same-host", {"x": 1}, 2.0)
    assert reply.data == {"got": {"x": 1}}
    await http_bots.close_client()


async def test_refused_connection(bot_server):
    with pytest.raises(BotCallError, match="ConnectError"):
        await post_json("http://127.0.0.1:9/echo", {}, 2.0)
    await http_bots.close_client()


async def test_private_addresses_can_be_switched_off(bot_server, monkeypatch):
    monkeypatch.setitem(settings.ARENA, "BOT_URLS_ALLOW_PRIVATE", False)
    with pytest.raises(BotCallError, match="may not call"):
        await post_json(bot_server + "/echo", {}, 2.0)
    # "localhost" is resolved here and its address checked too.
    with pytest.raises(BotCallError, match="may not call"):
        await post_json(bot_server.replace("127.0.0.1", "localhost") + "/echo", {}, 2.0)
    await http_bots.close_client()


def test_address_policy():
    allowed = http_bots.address_allowed
    assert allowed("8.8.8.8", False) and allowed("2001:4860:4860::8888", False)
    for private in ("127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.169.254", "::1",
                    "fd00::1", "::ffff:127.0.0.1", "100.64.0.1"):
        assert not allowed(private, False), private
        assert allowed(private, True), private
    assert not allowed("0.0.0.0", True) and not allowed("224.0.0.1", True)


def test_url_checks():
    assert http_bots.check_url(" http://host:8080/bot/ ") == "http://host:8080/bot"
    for bad in ("ftp://host/", "file:///etc/passwd", "http://", "http://u:p@host/", "http://host/?q=1",
                "http://host:99999/", "javascript:alert(1)"):
        with pytest.raises(ValueError):
            http_bots.check_url(bad)


def test_ipv6_forms_that_embed_a_private_ipv4_address_are_private():
    """NAT64, 6to4, IPv4-compatible, SIIT and Teredo carry an IPv4 address."""
    allowed = http_bots.address_allowed
    for embedded in ("64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2002:a00:1::",
                     "::127.0.0.1", "::ffff:0:10.0.0.1", "2001:0:4136:e378:8000:63bf:80ff:fffe",
                     "64:ff9b:1::1"):
        assert not allowed(embedded, False), embedded
        assert allowed(embedded, True), embedded
    # The same forms around a public IPv4 address are public.
    assert allowed("64:ff9b::808:808", False) and allowed("2002:808:808::1", False)


def test_urls_httpx_cannot_use_are_refused_at_registration():
    for bad in ("http://0177.0.0.1/", "http://[::1/"):
        with pytest.raises(ValueError):
            http_bots.check_url(bad)


def test_nesting_depth_is_counted_outside_strings():
    assert http_bots.json_too_deep(b"[" * 40 + b"]" * 40)
    assert not http_bots.json_too_deep(b'{"card": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')


def test_an_answer_other_than_200_is_said_in_words_with_a_short_plain_excerpt():
    from games.arena.bots.answer_text import status_words

    nginx = ("<html>\r\n<head><title>502 Bad Gateway</title><style>body{}</style></head>\r\n<body>\r\n"
             "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25</center>\r\n</body>\r\n</html>")
    assert str(status_words(502, nginx)) == "HTTP status 502 Bad Gateway (expected 200), answering “502 Bad Gateway nginx/1.25”"
    page = "<!DOCTYPE html><p>Use <b>POST</b>&nbsp;here &amp; now</p>" + "<p>more</p>" * 100
    said = str(status_words(405, page))
    assert said.startswith("HTTP status 405 Method Not Allowed (expected 200), answering “Use POST here & now more")
    assert said.endswith("…”") and "<" not in said and len(said) < 200
    assert str(status_words(400, '{"error":\n\t"player not found"}')) == \
        'HTTP status 400 Bad Request (expected 200), answering “{"error": "player not found"}”'
    assert str(status_words(599, "")) == "HTTP status 599 (expected 200) with an empty answer"
