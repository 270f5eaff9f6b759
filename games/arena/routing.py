"""WebSocket routes of the browser side."""
from django.urls import path

from games.arena.web.consumers import MatchConsumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/", MatchConsumer.as_asgi()),
]
