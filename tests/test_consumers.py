"""The browser WebSocket consumer, in process (channels' WebsocketCommunicator) against a
running arena: versioned views, resync, people's moves, and what each audience may see."""
from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore

from games.arena.models import Match
from games.arena.play import tables
from games.arena.play.arena import Arena
from webapp.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fresh_layer_and_fast_people():
    """A new in-memory channel layer per test (its queues belong to one event loop)."""
    channel_layers.backends = {}
    old = dict(settings.ARENA)
    settings.ARENA.update({"HUMAN_DEADLINE": 10.0, "HUMAN_CHALLENGE_WINDOW": 0.3, "ROUND_PAUSE": 0.0,
                           "BUILTIN_DELAY": 0.0})
    yield
    settings.ARENA.clear()
    settings.ARENA.update(old)


def guest_session(nickname: str) -> tuple[str, tables.Sitter]:
    store = SessionStore()
    store["nickname"] = nickname
    store.create()
    return store.session_key, tables.Sitter(name=nickname, session_key=store.session_key)


def communicator(match_id: int, session_key: str | None = None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if session_key:
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode()))
    return WebsocketCommunicator(application, f"/ws/matches/{match_id}/", headers=headers)


async def next_view(comm: WebsocketCommunicator, timeout: float = 5.0) -> dict:
    """The next view or final view, acknowledged as the browser does (else the server stops
    sending after ``WS_UNACKED_VIEWS``)."""
    while True:
        msg = await comm.receive_json_from(timeout)
        if msg["type"] in ("match.view", "match.final"):
            await comm.send_json_to({"type": "ack", "version": msg.get("version", 0)})
            return msg


def assert_no_current_hands(view: dict, own_seat: int | None) -> None:
    """A live view carries no current hand but the viewer's own."""
    if view["terminal"]:
        return
    assert "hands" not in view
    if own_seat is None:
        assert "your_hand" not in view
    else:
        assert view["your_seat"] == own_seat


async def start_match(seats: list[str], sitter, config=None) -> tuple[Arena, int]:
    arena = Arena(listen=False)
    await arena.start()
    match = await sync_to_async(tables.create_table)("liars_dice", config or {"players": 2, "dice": 2, "games": 1},
                                                     seats, sitter)
    await arena.maybe_start(match.pk)
    assert match.pk in arena.runners
    return arena, match.pk


async def test_person_plays_builtin_bot_and_spectator_sees_only_public_views():
    key, sitter = await sync_to_async(guest_session)("dora")
    arena, match_id = await start_match(["me", "builtin:random"], sitter)
    player, spectator = communicator(match_id, key), communicator(match_id)
    assert (await player.connect())[0] and (await spectator.connect())[0]
    seen_versions = []
    try:
        while True:
            msg = await next_view(player)
            view = msg["view"]
            seen_versions.append(msg["version"])
            if view["terminal"]:
                break
            assert msg["audience"] == 0
            assert_no_current_hands(view, own_seat=0)
            assert len(view["your_hand"]) == view["dice_counts"][0]
            request = msg.get("request")
            if request and request["kind"] == "turn":
                action = ["bid", view["your_hand"][0], 1] if view["last_bid"] is None else "challenge"
                await player.send_json_to({"type": "act", "version": request["version"], "action": action})
        assert sum(view["wins"]) == 1 and "hands" in view  # the end shows every hand
        assert seen_versions == sorted(set(seen_versions))
        # The spectator saw the same match, without anyone's current dice.
        spectated, countdowns = [], 0
        while not await spectator.receive_nothing(0.05):
            msg = await spectator.receive_json_from()
            if msg["type"] == "match.view":
                await spectator.send_json_to({"type": "ack", "version": msg["version"]})
                assert msg["audience"] == "public"
                assert_no_current_hands(msg["view"], own_seat=None)
                assert "request" not in msg  # only the person's own view carries it
                countdowns += "0" in msg["deadlines"]  # ...but everyone sees how long they have
                spectated.append(msg["version"])
        assert spectated and spectated[-1] == seen_versions[-1]
        assert countdowns > 0
        await asyncio.wait_for(asyncio.gather(*arena.tasks.values()), 5)
        match = await sync_to_async(Match.objects.get)(pk=match_id)
        assert match.status == Match.Status.FINISHED
    finally:
        await player.disconnect()
        await spectator.disconnect()
        await arena.stop()


async def test_reconnect_resyncs_to_the_same_view_and_illegal_moves_are_refused():
    key, sitter = await sync_to_async(guest_session)("eve")
    settings.ARENA["HUMAN_DEADLINE"] = 30.0
    arena, match_id = await start_match(["me", "builtin:probability"], sitter)
    player = communicator(match_id, key)
    await player.connect()
    try:
        msg = await next_view(player)
        while not msg.get("request") or msg["request"]["kind"] != "turn":
            msg = await next_view(player)
        # A non-raising bid is refused with a message, and the request stays open.
        await player.send_json_to({"type": "act", "version": msg["request"]["version"], "action": ["bid", 3, 0]})
        error = await player.receive_json_from(5)
        assert error["type"] == "match.error" and "not a legal move" in error["message"]
        # A move for a version that is not open is refused too.
        await player.send_json_to({"type": "act", "version": msg["version"] + 7, "action": "challenge"})
        assert (await player.receive_json_from(5))["type"] == "match.error"
        await player.disconnect()
        # A new connection (a reload) gets the very same view and open request back.
        again = communicator(match_id, key)
        await again.connect()
        resent = await next_view(again)
        assert resent["version"] == msg["version"] and resent["view"] == msg["view"]
        assert resent["request"]["version"] == msg["request"]["version"]
        await again.send_json_to({"type": "resync"})
        assert (await next_view(again))["version"] == msg["version"]
        await again.disconnect()
    finally:
        await arena.stop()
    match = await sync_to_async(Match.objects.get)(pk=match_id)
    assert match.status == Match.Status.ABORTED  # stopped mid-match: aborted, not lost


async def test_spectators_cannot_move_and_garbage_is_answered_not_fatal():
    key, sitter = await sync_to_async(guest_session)("finn")
    arena, match_id = await start_match(["me", "builtin:random"], sitter)
    spectator = communicator(match_id)
    await spectator.connect()
    try:
        view = await next_view(spectator)
        await spectator.send_json_to({"type": "act", "version": view["version"], "action": "challenge"})
        assert "watching" in (await spectator.receive_json_from(5))["message"]
        await spectator.send_to(text_data="{not json")
        assert (await spectator.receive_json_from(5))["type"] == "match.error"
        await spectator.send_to(text_data="x" * 20000)
        assert "too large" in (await spectator.receive_json_from(5))["message"]
        await spectator.send_json_to({"type": "resync"})
        assert (await next_view(spectator))["version"] >= view["version"]
    finally:
        await spectator.disconnect()
        await arena.stop()


async def watch_jass_step_by_step(omniscient: bool, person: bool) -> list[dict]:
    """A two-deal Jass table of built-in bots (and a person at seat 1 who always plays their
    first legal card), held paused and let through one step per view, so that a spectator
    sees every view of the match, however busy the machine.  Returns the spectator's messages."""
    seats = ["builtin:random", "me" if person else "builtin:rules", "builtin:random", "builtin:rules"]
    _, sitter = await sync_to_async(guest_session)("gus")
    arena = Arena(listen=False)
    await arena.start()
    try:
        match = await sync_to_async(tables.create_table)("jass", {"points_to_win": 5000, "max_deals": 2}, seats,
                                                         sitter, omniscient=omniscient)
        await arena.maybe_start(match.pk)
        runner = arena.runners[match.pk]
        runner.pause(True)
        comm = communicator(match.pk)
        assert (await comm.connect())[0]

        async def play_for_the_person():
            while True:
                request = runner.endpoints[1].open_request
                if request:
                    await runner.human_action(1, request["version"], runner.state.legal_actions(1)[0])
                await asyncio.sleep(0.005)

        player = asyncio.create_task(play_for_the_person()) if person else None
        messages = []
        try:
            while not messages or not messages[-1]["view"]["terminal"]:
                runner.step_once()
                messages.append(await next_view(comm, timeout=30))
                assert messages[-1]["type"] == "match.view", "a view for every step, the last one too"
        finally:
            if player:
                player.cancel()
            await comm.disconnect()
        return messages
    finally:
        await arena.stop()


def cards_played_by_seat(tricks: list[dict]) -> list[set]:
    """Who played which card in a deal's finished tricks (wire form: ``first`` leads, then
    counter-clockwise as ``jass_rules.NEXT`` says)."""
    from games.jass.rules import NEXT

    played = [set(), set(), set(), set()]
    for trick in tricks:
        seat = trick["first"]
        for card in trick["cards"]:
            played[seat].add(card)
            seat = NEXT[seat]
    return played


async def test_omniscient_bot_table_shows_every_hand_but_not_with_a_person_seated():
    """A bots-only Jass table that opted in shows spectators, while the second deal is
    played, every hand of the first deal as dealt, and no hand in play; not opted in, or with
    a person seated, spectators see no hand until the match is over."""
    messages = await watch_jass_step_by_step(omniscient=True, person=False)
    live = [m["view"] for m in messages if not m["view"]["terminal"]]
    first, second = ([v for v in live if v["deal_number"] == n] for n in (1, 2))
    assert first and second and all("hands" not in v for v in live)
    assert all(v["last_deal_hands"] is None for v in first)
    deal_over = next(h for m in messages for h in m["happenings"] if h["type"] == "deal_over" and h["deal"] == 1)
    dealt = cards_played_by_seat(deal_over["tricks"])
    assert sum(map(len, dealt)) == 36
    assert all([set(h) for h in v["last_deal_hands"]] == dealt for v in second), "the first deal's four hands"
    for omniscient, person in ((False, False), (True, True)):
        messages = await watch_jass_step_by_step(omniscient, person)
        live = [m["view"] for m in messages if not m["view"]["terminal"]]
        assert any(v["deal_number"] == 2 for v in live)
        assert all("hands" not in v and not v.get("last_deal_hands") for v in live), (omniscient, person)
        assert len(messages[-1]["view"]["hands"]) == 4, "the finished match shows every hand"


async def until_over(comm: WebsocketCommunicator, timeout: float = 5.0) -> dict:
    """Read (and acknowledge) views until the ``match.over`` notice; returns it."""
    while True:
        msg = await comm.receive_json_from(timeout)
        if msg["type"] == "match.view":
            await comm.send_json_to({"type": "ack", "version": msg["version"]})
        elif msg["type"] == "match.over":
            return msg


class BrokenWriter:
    """An event log whose disk fails: the runner raises at its next step."""

    async def append(self, events):
        raise OSError("disk full")


@pytest.mark.parametrize("how, notice", [
    ("leave", "The match was aborted: every player left."),
    ("cancel", "The match was aborted: cancelled by an organiser."),
    ("stop", "The match was aborted: the server stopped during the match."),
    ("crash", "The match was aborted: internal error: OSError."),
])
async def test_every_end_of_a_match_reaches_the_player_and_the_spectator_at_once(how, notice):
    """However a running match ends, each open page (the seat's and a spectator's) is told at
    once, so no page is left saying "Waiting…" or "Ann to bid" until a reload."""
    settings.ARENA["HUMAN_DEADLINE"] = 30.0
    key, sitter = await sync_to_async(guest_session)("hana")
    arena, match_id = await start_match(["me", "builtin:random"], sitter, {"players": 2, "dice": 5, "games": 3})
    player, spectator = communicator(match_id, key), communicator(match_id)
    assert (await player.connect())[0] and (await spectator.connect())[0]
    stopped = False
    try:
        msg = await next_view(player)
        await next_view(spectator)
        if how == "leave":  # the only person here leaves
            await player.send_json_to({"type": "leave"})
        elif how == "cancel":
            await arena.cancel(match_id)
        elif how == "stop":
            await arena.stop()
            stopped = True
        else:  # the disk fails at the next step: Hana's move makes one
            arena.runners[match_id].writer = BrokenWriter()
            while not msg.get("request") or msg["request"]["kind"] != "turn":
                msg = await next_view(player)
            await player.send_json_to({"type": "act", "version": msg["request"]["version"],
                                       "action": "challenge" if msg["view"]["last_bid"] else ["bid", 1, 1]})
        for comm in (player, spectator):
            over = await until_over(comm)
            assert over["status"] == "aborted" and over["notice"] == notice
        match = await sync_to_async(Match.objects.get)(pk=match_id)
        stored = match.result["aborted"].removeprefix("abandoned: ")
        assert match.status == Match.Status.ABORTED and notice == f"The match was aborted: {stored}."
        # From now on the page is answered from the database: a resync gets the final view.
        await player.send_json_to({"type": "resync"})
        assert (await next_view(player))["type"] == "match.final"
    finally:
        await player.disconnect()
        await spectator.disconnect()
        if not stopped:
            await arena.stop()


async def test_a_page_that_joins_as_the_match_ends_is_told_too(monkeypatch):
    """The page read 'running' just before the match ended, so it joined the table's group
    after match.over had gone out: its resync finds no runner, and the page hears the end."""
    from games.arena.web.consumers import MatchConsumer

    key, sitter = await sync_to_async(guest_session)("ivo")
    arena, match_id = await start_match(["me", "builtin:random"], sitter)
    try:
        await arena.cancel(match_id)
        await asyncio.wait_for(asyncio.gather(*arena.tasks.values(), return_exceptions=True), 5)
        load = MatchConsumer._load
        monkeypatch.setattr(MatchConsumer, "_load", lambda self: (Match.Status.RUNNING, load(self)[1]))
        late = communicator(match_id, key)
        assert (await late.connect())[0]
        over = await until_over(late)
        assert over["notice"] == "The match was aborted: cancelled by an organiser."
        await late.disconnect()
    finally:
        await arena.stop()
