"""Every frame the server sends to a browser page or a bot socket, recorded where the consumer
sends it, with what was secret at that moment, for the hidden-information tests
(tests/test_hanabi_hidden.py, tests/test_hidden_information.py); and pages driven as a
browser drives them (acks, moves, resyncs, a reload, the reload after the end)."""
from __future__ import annotations

import asyncio
import json
import random
from typing import Callable

from channels.testing import WebsocketCommunicator
from django.conf import settings

from games.arena.bots.bot_sockets import BotSocketConsumer
from games.arena.web.consumers import MatchConsumer
from webapp.asgi import application

#: A recipient that is not seated: ``(SPECTATOR, consumer id)``.
SPECTATOR = "spectator"
#: What :meth:`Recorder.moment` records before the match's runner exists, and after it ended.
BEFORE, OVER = "before", "over"


class Recorder:
    """Wraps ``MatchConsumer.send`` and ``BotSocketConsumer.send``: each text frame as
    ``(recipient, message, moment)`` in :attr:`frames`, where recipient is ``("seat", i)``
    for a page whose session is ``people[key] = i``, ``(SPECTATOR, id)`` for any other page,
    ``("bot", client address)`` for a bot socket; and moment is ``secrets(state)`` of the
    match's running state then (:data:`BEFORE` before it runs, :data:`OVER` after)."""

    def __init__(self, arena, secrets: Callable):
        self.arena = arena
        self.secrets = secrets
        self.match_id: int | None = None
        self.runner = None
        self.frames: list[tuple[tuple, dict, object]] = []

    def moment(self):
        runner = self.arena.runners.get(self.match_id)
        if runner is not None:
            self.runner = runner
            return self.secrets(runner.state)
        return OVER if self.runner is not None else BEFORE

    def install(self, monkeypatch, people: dict[str, int]) -> None:
        recorder = self
        page_send, bot_send = MatchConsumer.send, BotSocketConsumer.send

        async def recording_page_send(consumer, text_data=None, bytes_data=None, close=False):
            if text_data is not None and not consumer.closing:
                session = consumer.scope.get("session")
                key = session.session_key if session is not None else None
                who = ("seat", people[key]) if key in people else (SPECTATOR, id(consumer))
                recorder.frames.append((who, json.loads(text_data), recorder.moment()))
            return await page_send(consumer, text_data, bytes_data, close)

        async def recording_bot_send(consumer, text_data=None, bytes_data=None, close=False):
            if text_data is not None:
                who = ("bot", consumer.scope["client"][0])
                recorder.frames.append((who, json.loads(text_data), recorder.moment()))
            return await bot_send(consumer, text_data, bytes_data, close)

        monkeypatch.setattr(MatchConsumer, "send", recording_page_send)
        monkeypatch.setattr(BotSocketConsumer, "send", recording_bot_send)

    def kinds(self) -> dict[str, set]:
        """Recipient kind -> the message types it got."""
        out: dict[str, set] = {}
        for who, message, _ in self.frames:
            out.setdefault(who[0], set()).add(message.get("msg_type") or message.get("type"))
        return out


async def open_page(match_id: int, session_key: str | None) -> WebsocketCommunicator:
    """A browser tab on the match page's WebSocket, as a guest with ``session_key`` or anonymous."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if session_key:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode()))
    comm = WebsocketCommunicator(application, f"/ws/matches/{match_id}/", headers=headers)
    assert (await comm.connect())[0]
    return comm


async def drive_page(comm, rng: random.Random, runner_of, seat: int | None, choose: Callable,
                     hostile: bool = False, until_reload: int | None = None) -> None:
    """Read a page's messages until ``match.over`` (or, with ``until_reload``, that many
    views), acknowledging views as a browser does.  A seated person answers its requests with
    ``choose(state, seat, rng)`` (a refused move before its first answer, sometimes nothing); every page
    asks for a resync now and then; a ``hostile`` one, every fifth view, a resync and a move
    naming seat 0."""
    views, garbled = 0, False
    while True:
        try:
            msg = await comm.receive_json_from(30)
        except asyncio.TimeoutError:
            raise AssertionError(f"the page of seat {seat} heard nothing for 30 s") from None
        if msg["type"] in ("match.over", "match.final"):
            return
        if msg["type"] != "match.view":
            continue
        views += 1
        await comm.send_json_to({"type": "ack", "version": msg["version"]})
        roll = rng.random()
        if hostile and views % 5 == 1:  # every fifth view: a resync for seat 0, a move as seat 0
            await comm.send_json_to({"type": "resync", "audience": 0, "seat": 0})
            await comm.send_json_to({"type": "act", "version": msg["version"], "action": ["anything"], "seat": 0})
        elif roll < 0.1:
            await comm.send_json_to({"type": "resync"})
        request = msg.get("request")
        state = runner_of().state
        if seat is not None and request and not msg["view"]["terminal"] and seat in state.to_act():
            if not garbled:  # a refused move first, once (its match.error is checked too)
                garbled = True
                await comm.send_json_to({"type": "act", "version": request["version"], "action": ["no such move"]})
            if roll < 0.95:
                await comm.send_json_to({"type": "act", "version": request["version"],
                                         "action": choose(state, seat, rng)})
        if until_reload is not None and views >= until_reload:
            return


async def person_or_spectator(match_id: int, key: str | None, seat: int | None, seed: int, runner_of,
                              choose: Callable, comms: list, hostile: bool = False,
                              reload_after: int | None = None) -> None:
    """One browser tab through the whole match: it reloads after ``reload_after`` views (a
    new connection and its first view), plays or watches to the end, then reloads once more
    and gets the finished match's ``match.final``."""
    comm = await open_page(match_id, key)
    comms.append(comm)
    if reload_after:
        await drive_page(comm, random.Random(seed), runner_of, seat, choose, hostile, until_reload=reload_after)
        await comm.disconnect()
        comm = await open_page(match_id, key)
        comms.append(comm)
    await drive_page(comm, random.Random(seed + 1), runner_of, seat, choose, hostile)
    comm = await open_page(match_id, key)
    comms.append(comm)
    assert (await comm.receive_json_from(30))["type"] == "match.final"


def guest_session(nickname: str) -> str:
    """A guest's session key (a browser session with ``nickname`` set), for a page's socket."""
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["nickname"] = nickname
    store.create()
    return store.session_key


def random_legal(state, seat: int, rng: random.Random):
    """A person's move: any legal action."""
    return rng.choice(state.legal_actions(seat))
