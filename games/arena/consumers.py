"""Browser WebSockets for playing and watching (DESIGN.md, layer 5).

``/ws/matches/<id>/``: a person seated at the match gets that seat's views (their own hidden
information, their open request) and may send moves; everyone else gets the public views.
Every view carries a version; the client asks for ``{"type": "resync"}`` when it sees a gap or
reconnects, and gets the newest view again.

Client -> server: ``{"type": "act", "version": n, "action": ...}``, ``{"type": "resync"}``.
Server -> client: ``match.view`` (see :mod:`games.arena.runner`), ``match.error``,
``table.update`` (seats or status changed: reload the table), ``match.final`` (the finished
match's last view, every hand shown).
"""
from __future__ import annotations

import logging

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from games.arena import replay, tables
from games.arena.models import Match
from games.arena.runner import public_group, seat_group, table_group
from games.arena.service import CONTROL_GROUP

log = logging.getLogger("arena.web")

MAX_MESSAGE_BYTES = 16 * 1024


def sitter_from_scope(scope) -> tables.Sitter | None:
    """The logged-in user or the guest session of a WebSocket (or HTTP) scope."""
    user = scope.get("user")
    session = scope.get("session")
    if user is not None and user.is_authenticated:
        return tables.Sitter(name=user.get_username(), user_id=user.pk)
    key = session.session_key if session is not None else None
    return tables.Sitter(name="", session_key=key) if key else None


class MatchConsumer(AsyncJsonWebsocketConsumer):
    """One browser tab on one match page."""

    async def connect(self):
        self.match_id = int(self.scope["url_route"]["kwargs"]["match_id"])
        info = await sync_to_async(self._load)()
        if info is None:
            await self.close(code=4404)
            return
        self.status, self.seat = info
        self.groups_joined = [table_group(self.match_id)]
        if self.status == Match.Status.RUNNING:
            self.groups_joined.append(seat_group(self.match_id, self.seat) if self.seat is not None
                                      else public_group(self.match_id))
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self._resync()

    def _load(self):
        match = Match.objects.filter(pk=self.match_id).first()
        if match is None:
            return None
        seat = tables.seat_of(self.match_id, sitter_from_scope(self.scope))
        return match.status, (seat.index if seat else None)

    async def disconnect(self, code):
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def _resync(self):
        if self.status == Match.Status.RUNNING:
            await self.channel_layer.group_send(CONTROL_GROUP, {
                "type": "resync", "match": self.match_id, "reply": self.channel_name,
                "audience": self.seat if self.seat is not None else "public"})
        elif self.status in (Match.Status.FINISHED, Match.Status.ABORTED):
            final = await sync_to_async(replay.final_view)(self.match_id)
            await self.send_json({"type": "match.final", **final})

    async def receive(self, text_data=None, bytes_data=None):
        if text_data is None or len(text_data) > MAX_MESSAGE_BYTES:
            await self.send_json({"type": "match.error", "message": "Message too large or not text."})
            return
        await super().receive(text_data=text_data)

    async def receive_json(self, content, **kwargs):
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "resync":
            await self._resync()
        elif kind == "act":
            if self.seat is None or self.status != Match.Status.RUNNING:
                await self.send_json({"type": "match.error", "message": "You are watching, not playing."})
                return
            version = content.get("version")
            if not isinstance(version, int):
                await self.send_json({"type": "match.error", "message": "A move needs the version it answers."})
                return
            await self.channel_layer.group_send(CONTROL_GROUP, {
                "type": "human.action", "match": self.match_id, "seat": self.seat, "version": version,
                "action": content.get("action"), "reply": self.channel_name})
        else:
            await self.send_json({"type": "match.error", "message": "Unknown message type."})

    @classmethod
    async def decode_json(cls, text_data):
        import json

        try:
            return json.loads(text_data)
        except ValueError:
            return None

    # --- from the channel layer -------------------------------------------------------------
    #: Channel-layer messages whose handlers never touch the database.  Channels' dispatch
    #: first hops to a worker thread to close stale database connections, for every message;
    #: for a view sent to 500 spectators that was 500 thread round trips (and most of the
    #: server's time: benchmarks/spectator_fanout.py), so these skip it.
    NO_DATABASE = frozenset({"match.view", "match.error", "table.update"})

    async def dispatch(self, message):
        if message.get("type") in self.NO_DATABASE:
            await getattr(self, get_handler_name(message))(message)
        else:
            await super().dispatch(message)

    async def match_view(self, event):
        # The runner encodes each view once for all who watch it (runner.view_message).
        text = event.get("text")
        if text is None:
            await self.send_json(event)
        else:
            await self.send(text_data=text)

    async def match_error(self, event):
        await self.send_json(event)

    async def table_update(self, event):
        await self.send_json({"type": "table.update"})
