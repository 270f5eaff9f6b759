"""Jass bots over HTTP against real local bot services, in both path styles: the requests
they get, the random valid move on every kind of failure, and no stalling of other matches."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.conf import settings
from django.contrib.auth.models import User

from games.arena.bots import http_bots
from games.arena.models import Event, Match, RegisteredBot
from games.arena.play import tables
from games.arena.play.arena import Arena
from tests.jass_bot_service import BotService

pytestmark = [pytest.mark.django_db(transaction=True)]

ONE_GAME = {"points_to_win": 1000, "match_bonus": 1, "max_deals": 1}


@pytest.fixture(autouse=True)
def fresh_layer(monkeypatch):
    channel_layers.backends = {}
    http_bots._clients.clear()
    monkeypatch.setitem(settings.ARENA, "JASS_BOT_DEADLINE", 0.5)
    monkeypatch.setitem(settings.ARENA, "ROUND_PAUSE", 0.0)
    yield


@pytest.fixture
def service():
    svc = BotService(slow_s=1.0)
    yield svc
    svc.close()


def register(name: str, url: str, style: str, shared: bool = True) -> RegisteredBot:
    """A bot of user "author"; shared by default, so that tables without a sitter may seat it."""
    owner, _ = User.objects.get_or_create(username="author")
    return RegisteredBot.objects.create(owner=owner, game="jass", name=name, base_url=url, path_style=style,
                                        shared=shared)


async def play(seats: list[str], config=ONE_GAME, timeout: float = 60, until=None) -> Match:
    """Play a table to the end; ``until()`` (e.g. "every game_info arrived") is awaited too,
    since game_info calls go out after the last move and may still be in flight."""
    arena = Arena(listen=False)
    await arena.start()
    try:
        match = await sync_to_async(tables.create_table)("jass", config, seats, None)
        await arena.maybe_start(match.pk)
        await asyncio.wait_for(arena.tasks[match.pk], timeout)
        deadline = time.monotonic() + 5
        while until is not None and not until() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        await arena.stop()
    return await sync_to_async(Match.objects.get)(pk=match.pk)


async def test_kit_style_bots_get_their_own_hand_and_game_info(service):
    good = await sync_to_async(register)("good", service.url("good"), "kit")
    match = await play([f"registered:{good.pk}", "builtin:rules", f"registered:{good.pk}", "builtin:random"],
                       until=lambda: [p for p, _ in service.calls].count("/good/game_info") >= 2)
    assert match.status == "finished"
    paths = [p for p, _ in service.calls]
    assert {"/good/action_trump", "/good/action_play_card", "/good/game_info"} >= set(paths)
    assert "/good/action_play_card" in paths and paths.count("/good/game_info") == 2  # one per bot
    for path, body in service.calls:
        assert body["version"] == "V0.2"
        if path.endswith("game_info"):
            assert body["currentPlayer"] == -1 and len(body["tricks"]) == 9
            continue
        view = body["playerView"]
        assert view in (0, 2) and body["currentPlayer"] == view
        assert [len(p["hand"]) > 0 for p in body["player"]] == [i == view for i in range(4)]
    forced = await sync_to_async(lambda: list(Event.objects.filter(match=match, forced=True)))()
    assert forced == []


async def test_seed_style_paths(service):
    bot = await sync_to_async(register)("seedbot", service.url(), "seed")
    match = await play([f"registered:{bot.pk}", "builtin:random", "builtin:random", "builtin:random"],
                       until=lambda: any(p == "/game_info" for p, _ in service.calls))
    assert match.status == "finished"
    assert {p for p, _ in service.calls} >= {"/play_card", "/game_info"}


@pytest.mark.parametrize("name, reason, detail", [
    ("slow", "no answer within 0.5 s", "no answer within 0.5 s"),
    ("garbage", "no valid answer", "not JSON"),
    ("error", "HTTP status 500", "HTTP status 500"),
    ("wrongkey", "not a valid card reply", 'no "card" key'),
    ("illegal", "illegal card", "you do not hold"),
    ("deep", "no valid answer", "nested more than 32 levels"),
])
async def test_broken_bots_get_random_valid_moves_recorded_as_forced(service, name, reason, detail):
    """The public reason says what kind of failure; the detail (to the bot's owner) says exactly what."""
    bot = await sync_to_async(register)(name, service.url(name), "kit")
    match = await play([f"registered:{bot.pk}", "builtin:random", "builtin:random", "builtin:random"])
    assert match.status == "finished"
    events = await sync_to_async(lambda: list(Event.objects.filter(match=match, seat=0)))()
    plays = [e for e in events if isinstance(e.action, str) and e.action != "push"]
    assert len(plays) == 9
    assert all(e.forced and reason in e.reason and detail in e.detail for e in plays), \
        [(e.reason, e.detail) for e in plays][:3]


async def test_a_slow_bot_does_not_stall_another_match(service):
    slow = await sync_to_async(register)("slow", service.url("slow"), "kit")
    arena = Arena(listen=False)
    await arena.start()
    try:
        slow_match = await sync_to_async(tables.create_table)(
            "jass", ONE_GAME, [f"registered:{slow.pk}"] + ["builtin:random"] * 3, None)
        fast_match = await sync_to_async(tables.create_table)("jass", ONE_GAME, ["builtin:random"] * 4, None)
        await arena.maybe_start(slow_match.pk)
        await arena.maybe_start(fast_match.pk)
        started = time.monotonic()
        await asyncio.wait_for(arena.tasks[fast_match.pk], 10)
        assert time.monotonic() - started < 1.0
        assert not arena.tasks[slow_match.pk].done()
    finally:
        await arena.stop()


async def test_probe_shows_what_the_bot_answered(service):
    from games.jass.transport import probe

    ok = await probe(service.url("good"), "kit")
    assert ok["ok"] and ok["status"] == 200 and ok["url"].endswith("/good/action_trump")
    assert ok["verdict"].startswith("OK")
    bad = await probe(service.url("garbage"), "kit")
    assert not bad["ok"] and "not JSON" in bad["verdict"] and "oops" in bad["answer"]
    down = await probe("http://127.0.0.1:9", "seed")
    assert not down["ok"] and "ConnectError" in down["verdict"]


async def test_probe_reports_deep_answers_and_unusable_urls(service):
    from games.jass.transport import probe

    deep = await probe(service.url("deep"), "kit")
    assert not deep["ok"] and "nested more than 32 levels" in deep["verdict"]
    octal = await probe("http://0177.0.0.1:1", "seed")  # registered before URLs were checked by httpx
    assert not octal["ok"] and "invalid bot URL" in octal["verdict"]


async def test_a_bot_url_httpx_cannot_use_gets_forced_moves_not_tracebacks(caplog):
    bot = await sync_to_async(register)("octal", "http://0177.0.0.1:1", "kit")
    match = await play([f"registered:{bot.pk}", "builtin:random", "builtin:random", "builtin:random"])
    assert match.status == "finished"
    events = await sync_to_async(lambda: list(Event.objects.filter(match=match, seat=0)))()
    assert len(events) >= 9 and all(e.forced and "invalid bot URL" in e.detail for e in events)
    assert not [r for r in caplog.records if r.exc_info], "no traceback per move"


async def test_a_bot_has_the_whole_deadline_not_httpx_default(service, monkeypatch):
    """JASS_BOT_DEADLINE 10 s: a first answer after 9.5 s counts, one after 10.5 s is forced."""
    monkeypatch.setitem(settings.ARENA, "JASS_BOT_DEADLINE", 10.0)
    in_time = await sync_to_async(register)("late9500", service.url("late9500"), "kit")
    too_late = await sync_to_async(register)("late10500", service.url("late10500"), "kit")
    arena = Arena(listen=False)
    await arena.start()
    try:
        matches = [await sync_to_async(tables.create_table)(
            "jass", ONE_GAME, [f"registered:{bot.pk}"] + ["builtin:random"] * 3, None) for bot in (in_time, too_late)]
        for match in matches:
            await arena.maybe_start(match.pk)
        await asyncio.wait_for(asyncio.gather(*(arena.tasks[m.pk] for m in matches)), 40)
    finally:
        await arena.stop()
    forced = await sync_to_async(lambda: [list(Event.objects.filter(match=m, seat=0, forced=True)) for m in matches])()
    assert forced[0] == [], [e.reason for e in forced[0]]
    assert len(forced[1]) == 1 and "no answer within 10 s" in forced[1][0].reason


class HeldService(BotService):
    """A bot service that holds every request until the test calls ``release.set()`` (at most
    ``hold_s``, so that a failing test does not hang), then answers as ``good``."""

    def __init__(self, hold_s: float = 600.0):
        super().__init__()
        self.release = threading.Event()
        self.hold_s = hold_s

    def answer(self, name, action, body):
        self.release.wait(self.hold_s)
        return super().answer("good", action, body)


async def test_many_connection_tests_do_not_force_a_move_in_a_running_match(service, monkeypatch):
    """Three times ``BOT_TESTS_IN_FLIGHT`` concurrent "test the connection" requests (a
    probe of the live server sent 300; past the bound their number changes nothing) to a bot that holds
    them: the first ``BOT_TESTS_IN_FLIGHT`` reach it, the others are refused with a message;
    a match with a registered bot then plays while those tests are still held, and gets no
    forced move (the tests have their own connections, never the ones match calls use).

    The test decides when the held bot answers (after the match), and the deadline is longer
    than the test, so how busy the machine is cannot change the outcome: were the match's
    calls queued behind the held tests, it could not finish before they are released."""
    from django.core.cache import cache
    from django.test import AsyncClient

    monkeypatch.setitem(settings.ARENA, "JASS_BOT_DEADLINE", 300.0)
    monkeypatch.setitem(settings.ARENA, "BOT_TESTS_PER_MINUTE", 1000)
    in_flight = settings.ARENA["BOT_TESTS_IN_FLIGHT"]
    requests = 3 * in_flight
    await sync_to_async(cache.clear)()
    stuck = HeldService()
    try:
        owner, probed = await sync_to_async(
            lambda: (User.objects.get_or_create(username="author")[0],
                     register("stuck", stuck.url("held"), "kit", shared=False)))()
        good = await sync_to_async(register)("good", service.url("good"), "kit")
        web = AsyncClient()
        await web.aforce_login(owner)
        tests = [asyncio.create_task(web.post(f"/bots/{probed.pk}/test/", follow=True)) for _ in range(requests)]
        # Every request is answered (refused) or held before the match starts.
        refused = []
        for done in asyncio.as_completed(tests):
            refused.append(await done)
            if len(refused) == requests - in_flight:
                break
        assert all("too many connection tests are running" in p.content.decode() for p in refused)
        held = [t for t in tests if not t.done()]
        assert len(held) == in_flight
        deadline = time.monotonic() + 60
        while len(stuck.calls) < in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(stuck.calls) == in_flight, [t.result().content.decode()[-2000:] for t in held if t.done()]
        arena = Arena(listen=False)
        await arena.start()
        try:
            match = await sync_to_async(tables.create_table)(
                "jass", ONE_GAME, [f"registered:{good.pk}", "builtin:random"] * 2, None)
            await arena.maybe_start(match.pk)
            try:
                await asyncio.wait_for(asyncio.shield(arena.tasks[match.pk]), 60)
            except TimeoutError:
                pytest.fail("the match is stalled while connection tests are held")
            assert not any(t.done() for t in held), "the tests were held while the match played"
        finally:
            stuck.release.set()
            await arena.stop()
        pages = await asyncio.gather(*tests)
    finally:
        stuck.release.set()
        stuck.close()
    match = await sync_to_async(Match.objects.get)(pk=match.pk)
    assert match.status == "finished"
    forced = await sync_to_async(lambda: list(Event.objects.filter(match=match, forced=True)))()
    assert forced == [], [e.reason for e in forced][:3]
    assert sum("too many connection tests are running" in p.content.decode() for p in pages) == requests - in_flight
    assert len(stuck.calls) == in_flight
    await sync_to_async(probed.refresh_from_db)()
    assert probed.last_check["ok"], "a held test got its answer once released"


@pytest.fixture
def kit_service():
    """The HSLU kit's own bot service (``jass.service.PlayerServiceApp``, unchanged) with its
    random agent added as "kitrandom", served by Werkzeug on a free port."""
    import threading

    from jass.agents.agent_random_schieber import AgentRandomSchieber
    from jass.service.player_service_app import PlayerServiceApp
    from werkzeug.serving import make_server

    app = PlayerServiceApp("kit_service")
    app.add_player("kitrandom", AgentRandomSchieber())
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


async def test_the_kits_own_bot_service_plays_without_a_forced_move(kit_service, monkeypatch):
    """Four seats of the kit's random agent behind the kit's Flask service, on a table with
    the HSLU under-trumping option: every answer is accepted (the kit's agent computes its
    valid cards from our request with the kit's rule, so a wrong ``first`` or hand would
    show up as a forced move)."""
    monkeypatch.setitem(settings.ARENA, "JASS_BOT_DEADLINE", 5.0)
    bot = await sync_to_async(register)("kit random", kit_service + "/kitrandom", "kit")
    config = {"points_to_win": 5000, "match_bonus": 1, "max_deals": 4, "hslu_undertrump": 1}
    match = await play([f"registered:{bot.pk}"] * 4, config=config)
    assert match.status == "finished"
    events = await sync_to_async(lambda: list(Event.objects.filter(match=match)))()
    assert len(events) >= 4 * 37  # four deals: a trump decision (or two) and 36 cards each
    assert [e.reason for e in events if e.forced] == []


async def test_probe_says_what_to_check_on_404_405_and_the_kits_400(kit_service, monkeypatch):
    from games.jass.transport import probe

    # What the verdicts say, not how fast: the kit's service may be slow on a busy machine.
    monkeypatch.setitem(settings.ARENA, "JASS_BOT_DEADLINE", 5.0)

    ok = await probe(kit_service + "/kitrandom", "kit")
    assert ok["ok"], ok["verdict"]
    wrong_style = await probe(kit_service + "/kitrandom", "seed")
    assert wrong_style["status"] == 404 and "check the path style" in wrong_style["verdict"]
    # Flask's 404 page, said in words: the status with its name and the page's text, no markup.
    assert wrong_style["verdict"].startswith("HTTP status 404 Not Found (expected 200), answering “Not Found The "
                                             "requested URL was not found on the server."), wrong_style["verdict"]
    assert "<" not in wrong_style["verdict"] and len(wrong_style["verdict"].split("”")[0]) < 200
    wrong_name = await probe(kit_service + "/nobody", "kit")
    assert wrong_name["status"] == 400 and "the name the bot was added under" in wrong_name["verdict"]
    get_only = await probe(kit_service + "/static", "seed")  # Flask's static route takes GET only
    assert get_only["status"] == 405 and "does not take POST" in get_only["verdict"]
