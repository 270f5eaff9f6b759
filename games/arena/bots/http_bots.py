"""Calling bots over HTTP (docs/architecture.md, "Layers"): one shared httpx client with
keep-alive, and the guards that untrusted bot URLs need.

- http and https only; a bot URL carries no user name or password;
- the response body is read up to :data:`MAX_RESPONSE_BYTES` and no further;
- redirects are followed only to the same scheme, host and port (307/308, at most 3);
- every httpx timeout (connect, read, write, pool) comes from the call's deadline, so a
  bot has the whole deadline and not httpx's default 5 s;
- an answer nested deeper than :data:`MAX_JSON_DEPTH` is a bad answer, refused before it is
  parsed (a deep one made ``json.loads`` raise ``RecursionError``);
- "test the connection" calls go through a pool of their own (:data:`PROBE`), so probes
  never take a match call's connections or its deadline;
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

import httpcore
import httpx
from django.conf import settings

from games.arena.bots import json_limits
from games.arena.bots.answer_text import status_words

MAX_RESPONSE_BYTES = 64 * 1024
MAX_REDIRECTS = 3
#: Deepest nesting of arrays and objects accepted in a bot's answer (a Jass answer has 1).
MAX_JSON_DEPTH = 32

#: The two connection pools: calls made for matches, and "test the connection" probes.
MATCH, PROBE = "match", "probe"

#: IPv6 ranges whose low 32 bits are an IPv4 address the packet is really for (checked, so a
#: private IPv4 address cannot hide in them): NAT64's well-known prefix (RFC 6052), SIIT's
#: ``::ffff:0:a.b.c.d`` (RFC 2765) and the deprecated IPv4-compatible ``::a.b.c.d`` (RFC 4291).
_LOW_32_EMBEDDED = [ipaddress.ip_network(n) for n in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")]
#: NAT64 for local use (RFC 8215): where the IPv4 address sits depends on the operator's
#: prefix length, so the whole range counts as local, as a private address does.
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


class BotCallError(Exception):
    """A call to a bot failed; the message says why in terms a bot author can act on.
    ``status`` is the HTTP status when the bot answered with one other than 200, else None."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class BlockedAddress(httpcore.ConnectError):
    """The bot's host resolves to an address the operator does not allow."""


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries for translation or tunnelling: 6to4
    (``2002::/16``), Teredo's client (``2001::/32``), NAT64 ``64:ff9b::/96``, SIIT
    ``::ffff:0:a.b.c.d`` and IPv4-compatible ``::a.b.c.d``.  Empty for other addresses."""
    found = []
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.append(ip.teredo[1])
    if int(ip) > 1 and any(ip in net for net in _LOW_32_EMBEDDED):  # not :: and ::1 themselves
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def address_allowed(address: str, allow_private: bool) -> bool:
    """Whether a bot at IP ``address`` (IPv4 or IPv6, with or without a ``%zone``) may be
    called.  Public unicast addresses always may; loopback, private, link-local and other
    special ranges only with ``allow_private``; multicast and unspecified never.  An IPv6
    address that embeds an IPv4 one (see :func:`embedded_ipv4`) must pass for both, and an
    IPv4-mapped one (``::ffff:a.b.c.d``) is judged as its IPv4 address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    candidates = [ip]
    if ip.version == 6:
        candidates = [ip.ipv4_mapped] if ip.ipv4_mapped else [ip, *embedded_ipv4(ip)]
    for candidate in candidates:
        if candidate.is_multicast or candidate.is_unspecified:
            return False
        local = not candidate.is_global or (candidate.version == 6 and candidate in _NAT64_LOCAL)
        if local and not allow_private:
            return False
    return True


def check_url(url: str) -> str:
    """Validate a bot base URL; returns it without a trailing slash.  Raises ``ValueError``.

    Parsed with ``httpx.URL``, the parser the calls will use (a URL that urllib accepts but
    httpx refuses, such as ``http://0177.0.0.1/``, must not get in)."""
    text = url.strip()
    try:
        parts = httpx.URL(text)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ValueError(f"Not a valid URL: {str(exc)[:120]}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("A bot URL must start with http:// or https://")
    if not parts.host:
        raise ValueError("A bot URL needs a host name")
    if parts.userinfo:
        raise ValueError("A bot URL must not contain a user name or password")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise ValueError("A bot URL must not have a query (?) or fragment (#)")
    if parts.port is not None and not 0 < parts.port <= 65535:
        raise ValueError("The port in the bot URL is not a number from 1 to 65535")
    return text.rstrip("/")


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


def _limits(pool: str) -> httpx.Limits:
    if pool == PROBE:  # one-off calls: no idle connections kept; at most the probes allowed in flight
        return httpx.Limits(max_connections=max(1, settings.ARENA["BOT_TESTS_IN_FLIGHT"]),
                            max_keepalive_connections=0)
    return httpx.Limits(max_connections=200, max_keepalive_connections=100, keepalive_expiry=30)


def client(pool: str = MATCH) -> httpx.AsyncClient:
    """The process's shared client for the running event loop and ``pool`` (:data:`MATCH` or
    :data:`PROBE`; each has its own connections, keep-alive across calls)."""
    key = (asyncio.get_running_loop(), pool)
    existing = _clients.get(key)
    if existing is None or existing.is_closed:
        existing = httpx.AsyncClient(
            transport=GuardedTransport(settings.ARENA["BOT_URLS_ALLOW_PRIVATE"], _limits(pool)),
            follow_redirects=False, trust_env=False,
            # identity: a compressed body could expand past the size bound before we count it
            headers={"User-Agent": "arena/0.1", "Accept": "application/json", "Accept-Encoding": "identity"})
        _clients[key] = existing
    return existing


async def close_client() -> None:
    """Close this loop's shared clients, both pools (at arena shutdown)."""
    loop = asyncio.get_running_loop()
    for pool in (MATCH, PROBE):
        existing = _clients.pop((loop, pool), None)
        if existing is not None:
            await existing.aclose()


def json_too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays/objects more than ``limit`` deep
    (:func:`games.arena.bots.json_limits.json_too_deep`: linear, no backtracking)."""
    return json_limits.json_too_deep(raw, limit)


async def post_json(url: str, body: dict, deadline_s: float, expect_json: bool = True,
                    pool: str = MATCH) -> BotReply:
    """POST ``body`` as JSON to ``url`` and return the reply within ``deadline_s`` seconds,
    on the connections of ``pool`` (:data:`MATCH` or :data:`PROBE`).

    Raises :class:`BotCallError` on a timeout, a URL httpx cannot use, a refused or blocked
    connection, a status other than 200, a body over :data:`MAX_RESPONSE_BYTES`, a redirect
    elsewhere, a body nested deeper than :data:`MAX_JSON_DEPTH` (JSON or not: callers parse
    the text too), or (with ``expect_json``) a body that is not JSON.
    """
    started = time.perf_counter()
    payload = json.dumps(body, separators=(",", ":")).encode()
    try:
        async with asyncio.timeout(deadline_s):
            status, raw = await _exchange(url, payload, deadline_s, pool)
    except (TimeoutError, httpx.TimeoutException):
        raise BotCallError(f"no answer within {deadline_s:g} s") from None
    elapsed = (time.perf_counter() - started) * 1000
    text = raw.decode("utf-8", "replace")
    if status != 200:
        raise BotCallError(status_words(status, text), status=status)
    if not raw.strip():
        if expect_json:
            raise BotCallError("empty body (expected JSON)")
        return BotReply(status, None, text, elapsed)
    if json_too_deep(raw):
        raise BotCallError(f"answer nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        data = json.loads(raw)
    except ValueError:
        if expect_json:
            raise BotCallError(f"body is not JSON: {text[:120]!r}") from None
        data = None
    return BotReply(status, data, text, elapsed)


async def _exchange(url: str, payload: bytes, deadline_s: float, pool: str) -> tuple[int, bytes]:
    http = client(pool)
    # Every phase may take the whole deadline; the caller's asyncio.timeout bounds the sum.
    timeout = httpx.Timeout(deadline_s)
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as exc:  # not an httpx.HTTPError
        raise BotCallError(f"invalid bot URL: {str(exc)[:120]}") from None
    origin = (target.scheme, target.host, target.port)
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with http.stream("POST", target, content=payload, timeout=timeout,
                                   headers={"Content-Type": "application/json"}) as resp:
                if resp.status_code in (307, 308) and "location" in resp.headers:
                    target = target.join(resp.headers["location"])
                    if (target.scheme, target.host, target.port) != origin:
                        raise BotCallError(f"redirect to another host refused: {str(target)[:120]}")
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
        except httpx.TimeoutException:
            raise  # reported by post_json as "no answer within the deadline"
        except httpx.HTTPError as exc:
            raise BotCallError(_describe(exc)) from None
        except httpx.InvalidURL as exc:  # e.g. a redirect's Location httpx cannot use
            raise BotCallError(f"invalid URL: {str(exc)[:120]}") from None
    raise BotCallError(f"more than {MAX_REDIRECTS} redirects")


def _describe(exc: httpx.HTTPError) -> str:
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, BlockedAddress) or "may not call" in str(exc):
        return str(cause or exc)
    kind = exc.__class__.__name__
    return f"{kind}: {exc}" if str(exc) else kind
