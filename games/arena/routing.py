"""WebSocket routes of the browser side."""
from django.urls import path

from games.arena.web.consumers import MatchConsumer, TournamentConsumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/", MatchConsumer.as_asgi()),
    path("ws/tournaments/<int:tournament_id>/", TournamentConsumer.as_asgi()),
]
