"""Calling bots over HTTP (DESIGN.md, layer 3): one shared httpx client with keep-alive, and
the guards that untrusted bot URLs need.

- http and https only; a bot URL carries no user name or password;
- the response body is read up to :data:`MAX_RESPONSE_BYTES` and no further;
- redirects are followed only to the same scheme, host and port (307/308, at most 3);
- whether a bot may live on a loopback or private address is the operator's setting
  ``ARENA_BOT_URLS_ALLOW_PRIVATE`` (on by default for local use; turn it off for public
  deployments).  It is checked on the address each connection actually reaches: the host is
  resolved here, every address is checked, and the socket's peer address is checked again
  after connecting, so DNS tricks cannot slip a private address past the check.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from django.conf import settings

MAX_RESPONSE_BYTES = 64 * 1024
MAX_REDIRECTS = 3


class BotCallError(Exception):
    """A call to a bot failed; the message says why in terms a bot author can act on."""


class BlockedAddress(httpcore.ConnectError):
    """The bot's host resolves to an address the operator does not allow."""


def address_allowed(address: str, allow_private: bool) -> bool:
    """Whether a bot at IP ``address`` may be called.  Public unicast addresses always may;
    loopback, private, link-local and other special ranges only with ``allow_private``."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if getattr(ip, "ipv4_mapped", None):
        ip = ip.ipv4_mapped
    if ip.is_multicast or ip.is_unspecified:
        return False
    if ip.is_global:
        return True
    return allow_private


def check_url(url: str) -> str:
    """Validate a bot base URL; returns it without a trailing slash.  Raises ``ValueError``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise ValueError("A bot URL must start with http:// or https://")
    if not parts.hostname:
        raise ValueError("A bot URL needs a host name")
    if parts.username or parts.password:
        raise ValueError("A bot URL must not contain a user name or password")
    if parts.query or parts.fragment:
        raise ValueError("A bot URL must not have a query (?) or fragment (#)")
    try:
        parts.port
    except ValueError:
        raise ValueError("The port in the bot URL is not a number from 0 to 65535") from None
    return url.strip().rstrip("/")


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address policy applied where sockets connect."""

    def __init__(self, allow_private: bool):
        self.allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from None
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        blocked = [a for a in addresses if not address_allowed(a, self.allow_private)]
        if blocked:
            raise BlockedAddress(f"{host} resolves to {blocked[0]}, which this server may not call "
                                 "(private and loopback addresses are switched off)")
        error: Exception | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                error = exc
                continue
            peer = stream.get_extra_info("server_addr")
            if not peer or not address_allowed(peer[0], self.allow_private):
                await stream.aclose()
                raise BlockedAddress(f"connected to {peer and peer[0]}, which this server may not call")
            return stream
        raise httpcore.ConnectError(f"cannot connect to {host}:{port}: {error}")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport on a :class:`GuardedBackend`.  httpx has no public hook for the
    network backend, so the pool it builds is replaced by an equal one that has it."""

    def __init__(self, allow_private: bool, limits: httpx.Limits):
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(allow_private),
        )


@dataclass
class BotReply:
    """A bot's answer: ``data`` is the parsed JSON (None for an empty or, when JSON was not
    required, unparseable body), ``elapsed_ms`` the whole exchange in milliseconds."""

    status: int
    data: Any
    text: str
    elapsed_ms: float


_clients: dict = {}


def client() -> httpx.AsyncClient:
    """The process's shared client for the running event loop (keep-alive across calls)."""
    loop = asyncio.get_running_loop()
    existing = _clients.get(loop)
    if existing is None or existing.is_closed:
        existing = httpx.AsyncClient(
            transport=GuardedTransport(settings.ARENA["BOT_URLS_ALLOW_PRIVATE"],
                                       httpx.Limits(max_connections=200, max_keepalive_connections=100,
                                                    keepalive_expiry=30)),
            follow_redirects=False, trust_env=False,
            # identity: a compressed body could expand past the size bound before we count it
            headers={"User-Agent": "arena/0.1", "Accept": "application/json", "Accept-Encoding": "identity"})
        _clients[loop] = existing
    return existing


async def close_client() -> None:
    """Close this loop's shared client (at arena shutdown)."""
    existing = _clients.pop(asyncio.get_running_loop(), None)
    if existing is not None:
        await existing.aclose()


async def post_json(url: str, body: dict, deadline_s: float, expect_json: bool = True) -> BotReply:
    """POST ``body`` as JSON to ``url`` and return the reply within ``deadline_s`` seconds.

    Raises :class:`BotCallError` on a timeout, a refused or blocked connection, a status other
    than 200, a body over :data:`MAX_RESPONSE_BYTES`, a redirect elsewhere, or (with
    ``expect_json``) a body that is not JSON.
    """
    started = time.perf_counter()
    payload = json.dumps(body, separators=(",", ":")).encode()
    try:
        async with asyncio.timeout(deadline_s):
            status, raw = await _exchange(url, payload)
    except TimeoutError:
        raise BotCallError(f"no answer within {deadline_s:g} s") from None
    elapsed = (time.perf_counter() - started) * 1000
    text = raw.decode("utf-8", "replace")
    if status != 200:
        raise BotCallError(f"HTTP status {status} (expected 200): {text[:120]}")
    if not raw.strip():
        if expect_json:
            raise BotCallError("empty body (expected JSON)")
        return BotReply(status, None, text, elapsed)
    try:
        data = json.loads(raw)
    except ValueError:
        if expect_json:
            raise BotCallError(f"body is not JSON: {text[:120]!r}") from None
        data = None
    return BotReply(status, data, text, elapsed)


async def _exchange(url: str, payload: bytes) -> tuple[int, bytes]:
    http = client()
    origin = urlsplit(url)[:2]
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with http.stream("POST", url, content=payload,
                                   headers={"Content-Type": "application/json"}) as resp:
                if resp.status_code in (307, 308) and "location" in resp.headers:
                    target = urljoin(url, resp.headers["location"])
                    if urlsplit(target)[:2] != origin:
                        raise BotCallError(f"redirect to another host refused: {target[:120]}")
                    url = target
                    continue
                if 300 <= resp.status_code < 400:
                    raise BotCallError(f"HTTP status {resp.status_code}: redirects are not followed")
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                    raise BotCallError(f"response of {declared} bytes is over the {MAX_RESPONSE_BYTES} byte limit")
                body = bytearray()
                async for chunk in resp.aiter_raw():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise BotCallError(f"response is over the {MAX_RESPONSE_BYTES} byte limit")
                return resp.status_code, bytes(body)
        except BotCallError:
            raise
        except httpx.HTTPError as exc:
            raise BotCallError(_describe(exc)) from None
    raise BotCallError(f"more than {MAX_REDIRECTS} redirects")


def _describe(exc: httpx.HTTPError) -> str:
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, BlockedAddress) or "may not call" in str(exc):
        return str(cause or exc)
    kind = exc.__class__.__name__
    return f"{kind}: {exc}" if str(exc) else kind
