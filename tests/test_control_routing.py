"""Control routing between several arenas (docs/architecture.md, *Control routing*), in one
process on the in-memory channel layer: two :class:`Arena` objects, each with its own channel
and ``ArenaProcess`` row, and the web side's consumers.  A person's moves and resyncs go to
the arena that runs the match, a message sent to the wrong one is sent on once, organisers'
requests reach the owner from any arena, a table change goes to the table's owner, and a bot
socket opened without an arena in its process is bound to one arena for its whole life."""
from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.utils import timezone

from games.arena.bots import bot_sockets
from games.arena.models import ArenaProcess, Match
from games.arena.play import tables
from games.arena.play.arena import NO_ARENA
from games.arena.play.arena import Arena
from games.arena.web import views
from tests.test_consumers import communicator, guest_session, next_view
from webapp.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]

CONFIG = {"players": 2, "dice": 2, "games": 1}


@pytest.fixture(autouse=True)
def fresh_layer_and_patient_people():
    """A new in-memory channel layer per test; people have long enough that a match waits
    for them whatever the machine's load."""
    channel_layers.backends = {}
    old = dict(settings.ARENA)
    settings.ARENA.update({"HUMAN_DEADLINE": 60.0, "HUMAN_CHALLENGE_WINDOW": 0.3, "ROUND_PAUSE": 0.0,
                           "BUILTIN_DELAY": 0.0})
    yield
    settings.ARENA.clear()
    settings.ARENA.update(old)


async def two_arenas() -> tuple[Arena, Arena]:
    """Arenas "arena-a" and "arena-b", started, without their sweeps: which arena starts a
    table is the test's choice (:func:`run_at`)."""
    arenas = []
    for name in ("arena-a", "arena-b"):
        arena = Arena(listen=False)
        arena.name = name
        await arena.start()
        for task in arena._background:
            if task.get_name() == "arena-sweep":
                task.cancel()
        arenas.append(arena)
    return arenas[0], arenas[1]


async def run_at(arena: Arena, seats: list[str], sitter=None, paused: bool = False) -> int:
    """A Liar's Dice match of ``seats`` started at ``arena``, owned by it in the database
    (``Match.owner``, which ``tables.try_start`` also sets once matches have leases)."""
    match = await sync_to_async(tables.create_table)("liars_dice", CONFIG, seats, sitter)
    if paused:
        arena.start_paused.add(match.pk)
    await arena.maybe_start(match.pk)
    assert match.pk in arena.runners
    await sync_to_async(lambda: Match.objects.filter(pk=match.pk).update(owner=arena.name))()
    return match.pk


def spy(arena: Arena) -> list[dict]:
    """Every message ``arena``'s control loop handles from now on."""
    heard = []
    handle = arena._handle_control

    async def handle_and_note(msg):
        heard.append(msg)
        await handle(msg)

    arena._handle_control = handle_and_note
    return heard


async def until(predicate, what: str, turns: int = 500):
    """Let the loop run until ``predicate()`` holds (a bound on turns, not on time)."""
    for _ in range(turns):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def stop_all(*arenas: Arena) -> None:
    for arena in arenas:
        await arena.stop()


async def test_a_person_plays_through_the_web_at_the_arena_that_runs_the_match_and_no_other():
    a, b = await two_arenas()
    key, sitter = await sync_to_async(guest_session)("rita")
    heard_a, heard_b = spy(a), spy(b)
    try:
        match_id = await run_at(b, ["me", "builtin:random"], sitter)
        player = communicator(match_id, key)
        assert (await player.connect())[0]
        moves = 0
        while True:
            msg = await next_view(player)
            view = msg["view"]
            if view["terminal"]:
                break
            request = msg.get("request")
            if request and request["kind"] == "turn":
                action = ["bid", view["your_hand"][0], 1] if view["last_bid"] is None else "challenge"
                await player.send_json_to({"type": "act", "version": request["version"], "action": action})
                moves += 1
        assert moves >= 1 and sum(view["wins"]) == 1
        await player.disconnect()
        await asyncio.wait_for(asyncio.gather(*b.tasks.values()), 5)
        assert await sync_to_async(lambda: Match.objects.get(pk=match_id).status)() == Match.Status.FINISHED
        kinds_b = [m["type"] for m in heard_b]
        assert kinds_b.count("human.action") >= moves and "resync" in kinds_b
        assert all(m["type"] == "presence" for m in heard_a), "the other arena hears who watches, nothing else"
        assert heard_a, "presence reaches every arena"
    finally:
        await stop_all(a, b)


async def test_a_message_at_the_wrong_arena_is_sent_on_once_or_answered_from_the_database():
    a, b = await two_arenas()
    key, sitter = await sync_to_async(guest_session)("sam")
    layer = get_channel_layer()
    reply = await layer.new_channel()

    async def answer(message: dict) -> dict:
        await layer.send(a.channel, {**message, "reply": reply})
        return await asyncio.wait_for(layer.receive(reply), 5)

    try:
        match_id = await run_at(b, ["me", "builtin:random"], sitter)
        await until(lambda: b.runners[match_id].latest_for(0) is not None, "the first view")
        # A resync at the arena that does not run the match: answered by the one that does.
        view = await answer({"type": "resync", "match": match_id, "audience": 0})
        assert view["type"] == "match.view" and view["version"] == b.runners[match_id].version
        # A move there reaches the runner, whose own error comes back (a version long gone).
        error = await answer({"type": "human.action", "match": match_id, "seat": 0, "version": -5,
                              "action": "challenge"})
        assert error["type"] == "match.error" and error["message"] != "This match is not running."
        # Sent on once only: a forwarded message the database sends back is answered.
        error = await answer({"type": "human.action", "match": match_id, "seat": 0, "version": 1,
                              "action": "challenge", "forwarded": True})
        assert error == {"type": "match.error", "message": "This match is not running."}
        # Its owner died (a name no live arena has): nobody to send it to.
        await sync_to_async(lambda: Match.objects.filter(pk=match_id).update(owner="arena-gone"))()
        assert await answer({"type": "resync", "match": match_id, "audience": 0}) == {
            "type": "match.error", "message": NO_ARENA}
        # (back to its real owner: an arena records only its own runs' ends)
        await sync_to_async(lambda: Match.objects.filter(pk=match_id).update(owner=b.name))()
        await b.cancel(match_id)
        await asyncio.wait_for(asyncio.gather(*b.tasks.values(), return_exceptions=True), 5)
        # Over: match.gone, for the page to read its end from the database.
        assert await answer({"type": "resync", "match": match_id, "audience": "public"}) == {"type": "match.gone"}
    finally:
        await stop_all(a, b)


async def test_an_organiser_at_any_arena_pauses_steps_and_cancels_the_match_where_it_runs():
    a, b = await two_arenas()
    try:
        match_id = await run_at(b, ["builtin:random", "builtin:random"], paused=True)
        runner = b.runners[match_id]
        await a.step(match_id)
        await until(lambda: runner.step == 1, "one step")
        await a.pause(match_id, True)
        assert runner.paused
        with pytest.raises(LookupError, match="another arena"):
            await a.watch(match_id, object())
        await a.cancel(match_id, "cancelled from arena-a")
        await asyncio.wait_for(asyncio.gather(*b.tasks.values(), return_exceptions=True), 5)
        match = await sync_to_async(Match.objects.get)(pk=match_id)
        assert match.status == Match.Status.ABORTED and match.result["aborted"] == "cancelled from arena-a"
        assert runner.step == 1
        with pytest.raises(LookupError, match="is over"):
            await a.step(match_id)
        with pytest.raises(LookupError, match="unknown"):
            await a.pause(10**9, True)
        # A running match whose arena died: no live arena to ask.
        other = await run_at(b, ["builtin:random", "builtin:random"], paused=True)
        await sync_to_async(lambda: Match.objects.filter(pk=other).update(owner="arena-gone"))()
        with pytest.raises(LookupError, match="not running at any live arena"):
            await a.cancel(other)
        # ...and an arena asked for a match it does not run sends nothing on again.
        await sync_to_async(lambda: Match.objects.filter(pk=other).update(owner="arena-b"))()
        with pytest.raises(LookupError, match="not running here"):
            await a.pause(other, False, forwarded=True)
        assert b.runners[other].paused
    finally:
        await stop_all(a, b)


async def live_arena_row(name: str) -> str:
    """An ``ArenaProcess`` row of a live arena called ``name`` whose channel the test reads."""
    channel = await get_channel_layer().new_channel()
    await sync_to_async(ArenaProcess.objects.create)(
        name=name, channel=channel, host="test", pid=1, alive_until=timezone.now() + timedelta(minutes=5))
    return channel


async def waiting(channel: str) -> list[dict]:
    """The messages waiting on ``channel`` (taken off it)."""
    layer, got = get_channel_layer(), []
    while not layer._queue(channel).empty():
        got.append(await layer.receive(channel))
    return got


async def test_a_table_change_goes_to_the_tables_owner_else_to_one_live_arena():
    first, second = await live_arena_row("one"), await live_arena_row("two")
    match = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["open_bot", "open_bot"], None)
    await sync_to_async(views._announce)(match.pk)
    heard = await waiting(first) + await waiting(second)
    assert heard == [{"type": "table.changed", "match": match.pk}], "one arena, once"
    await sync_to_async(lambda: Match.objects.filter(pk=match.pk).update(owner="two"))()
    for _ in range(3):
        await sync_to_async(views._announce)(match.pk)
    assert await waiting(first) == [] and len(await waiting(second)) == 3
    await sync_to_async(lambda: ArenaProcess.objects.all().delete())()
    await sync_to_async(views._announce)(match.pk)  # no arena lives: the sweep finds it later
    assert await waiting(first) == await waiting(second) == []


def bot_socket(client: str = "192.0.2.7") -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, "/ws/bots/hanabi/")
    comm.scope["client"] = (client, 40000)
    return comm


async def test_a_bot_socket_on_a_web_process_is_bound_to_one_arena_for_its_whole_life(monkeypatch):
    monkeypatch.setattr(bot_sockets, "_in_process", {})  # no arena in this (web) process
    bot_sockets._admissions.clear()
    channels = [await live_arena_row("one"), await live_arena_row("two")]
    bot = bot_socket()
    assert (await bot.connect())[0]
    await bot.send_to(text_data='{"msg_type": "CONNECTION_REQUEST", "name": "x"}')
    await bot.send_to(text_data='{"msg_type": "GAME_START_REQUEST"}')
    await bot.disconnect()
    heard = [await waiting(channel) for channel in channels]
    bound = heard[0] or heard[1]
    assert not (heard[0] and heard[1]), "one arena only"
    assert [m["type"] for m in bound] == ["bot_socket.open", "bot_socket.frame", "bot_socket.frame",
                                          "bot_socket.gone"]
    assert bound[0]["game"] == "hanabi" and len({m["channel"] for m in bound}) == 1
    bot_sockets._admissions.clear()


async def test_a_bot_socket_with_no_live_arena_is_closed_saying_so(monkeypatch):
    monkeypatch.setattr(bot_sockets, "_in_process", {})
    bot_sockets._admissions.clear()
    bot = bot_socket()
    assert (await bot.connect())[0]
    out = await bot.receive_output(5)
    assert out == {"type": "websocket.close", "code": bot_sockets.CLOSE_NO_ARENA,
                   "reason": "no arena is running; try again later"}
    bot_sockets._admissions.clear()


async def test_a_page_whose_match_no_arena_runs_is_told_so():
    key, sitter = await sync_to_async(guest_session)("tom")
    match = await sync_to_async(tables.create_table)("liars_dice", CONFIG, ["me", "builtin:random"], sitter)
    await sync_to_async(lambda: Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING))()
    page = communicator(match.pk, key)
    assert (await page.connect())[0]
    assert await page.receive_json_from(5) == {"type": "match.error", "message": NO_ARENA}
    await page.send_json_to({"type": "act", "version": 1, "action": "challenge"})
    assert await page.receive_json_from(5) == {"type": "match.error", "message": NO_ARENA}
    await page.disconnect()
