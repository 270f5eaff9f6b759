"""ASGI entry point: Django for HTTP, the arena's consumers for WebSockets."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from games.arena.routing import websocket_urlpatterns  # noqa: E402


class AllowedHostsOrigin(OriginValidator):
    """Refuse a WebSocket whose ``Origin`` is not one of ``settings.ALLOWED_HOSTS``: a
    page on another site must not open a visitor's match socket.

    Channels' ``AllowedHostsOriginValidator`` copies the list once, when this module is
    imported; this reads it at each connection, so it is the list Django checks ``Host``
    against, also after a change (the test runner adds ``testserver``)."""

    def __init__(self, application):
        self.application = application  # OriginValidator's other attribute is the property

    @property
    def allowed_origins(self) -> list[str]:
        return settings.ALLOWED_HOSTS


application = ProtocolTypeRouter(
    {
        # The one-process server has no web server in front of it: it serves /static/ itself
        # (from STATICFILES_DIRS and the apps, whatever DEBUG says).
        "http": ASGIStaticFilesHandler(django_asgi_app),
        "websocket": AllowedHostsOrigin(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
