"""ASGI entry point: Django for HTTP, the arena's consumers for WebSockets."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddleware  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from channels.sessions import CookieMiddleware, InstanceSessionWrapper, SessionMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.http.request import is_same_domain, split_domain_port, validate_host  # noqa: E402

from games.arena.bots.bot_sockets import BotPortRouter, bot_socket_ports  # noqa: E402
from games.arena.routing import websocket_urlpatterns  # noqa: E402


def same_origin(scope: dict) -> bool:
    """Whether a WebSocket handshake comes from one of the site's own pages, by the rule of
    Django's CSRF check (``CsrfViewMiddleware._origin_verified``): its ``Host`` is one of
    ``settings.ALLOWED_HOSTS`` and its ``Origin`` is this very ``scheme://host[:port]``
    (``ws`` counting as ``http``, ``wss`` as ``https``), or one of
    ``settings.CSRF_TRUSTED_ORIGINS`` (exact, or ``scheme://*.domain`` for its subdomains).

    The port counts: another port on the same host is another site (any local program may
    serve a page there), and the session cookie would go along with its handshake.  A
    handshake without ``Origin`` or ``Host`` is refused (browsers always send both).
    Both lists are read at each handshake, so they are the ones Django checks HTTP against,
    also after a change (the test runner adds ``testserver``)."""
    headers = {}
    for name, value in scope.get("headers", ()):
        if name in (b"origin", b"host"):
            if name in headers:  # two of a kind: which one would a check believe?
                return False
            headers[name] = value.decode("latin1")
    origin, host = headers.get(b"origin", ""), headers.get(b"host", "").lower()
    domain, _ = split_domain_port(host)
    if not origin or not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    if origin.lower() == f"{scheme}://{host}":
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    origin_scheme, _, origin_host = origin.partition("://")
    return any(trusted.startswith(f"{origin_scheme}://*.")
               and is_same_domain(origin_host.lower(), trusted.split("://*", 1)[1].lower())
               for trusted in settings.CSRF_TRUSTED_ORIGINS)


class SameOriginOnly:
    """Refuse (``403``) a WebSocket that :func:`same_origin` does not accept: a page on
    another site, or on another port of this host, must not open a visitor's match socket
    with their session cookie.  It guards the browser's routes; a bot endpoint, which
    carries no cookie and sends no ``Origin``, belongs outside it."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and same_origin(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


class _SessionWrapper(InstanceSessionWrapper):
    """Channels' session wrapper, with frames passed straight on: it saves the session and
    sets its cookie only on ``http.response.start``, but asks the session (through Django's
    ``LazyObject``) whether it changed on every message sent: 8% of the server's time when
    it sent views to 500 spectators (``benchmarks/spectator_fanout.py``)."""

    async def send(self, message):
        if message["type"] == "websocket.send":
            return await self.real_send(message)
        return await super().send(message)


class ArenaSessionMiddleware(SessionMiddleware):
    """``channels.sessions.SessionMiddleware`` with :class:`_SessionWrapper`."""

    async def __call__(self, scope, receive, send):
        wrapper = _SessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, wrapper.send)


def auth_middleware_stack(inner):
    """``channels.auth.AuthMiddlewareStack`` (cookies, session, user), with
    :class:`ArenaSessionMiddleware`."""
    return CookieMiddleware(ArenaSessionMiddleware(AuthMiddleware(inner)))


# Bots' WebSockets (a game's own port, or /ws/bots/<game>/) come first: they carry no cookie
# and send no Origin, so the browser's rules do not apply to them (games/arena/bots/bot_sockets.py).
application = BotPortRouter(ProtocolTypeRouter(
    {
        # The one-process server has no web server in front of it: it serves /static/ itself
        # (from STATICFILES_DIRS and the apps, whatever DEBUG says).
        "http": ASGIStaticFilesHandler(django_asgi_app),
        "websocket": SameOriginOnly(auth_middleware_stack(URLRouter(websocket_urlpatterns))),
    }
), bot_socket_ports())
