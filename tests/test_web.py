"""Pages and the JSON API as a visitor uses them: lobby, creating and joining tables,
history filters and pages, match details, replays, and hostile names shown safely."""
from __future__ import annotations

import datetime
import random
import re

import pytest
from django.urls import path
from django.utils import timezone

from games.arena.models import Match, Seat
from games.arena.play import tables
from games.arena.play.eventlog import write_rows
from games.liars_dice import bots
from games.liars_dice.rules import new_state
from webapp import urls as webapp_urls

pytestmark = pytest.mark.django_db

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def finished_match(names, seed=7, finished_at=None, config=None) -> Match:
    """A match played to the end by built-in policies and stored exactly as the arena does."""
    config = config or {"players": len(names), "dice": 2, "games": 1}
    match = tables.create_table("liars_dice", config, [tables.OPEN_BOT] * len(names), None)
    Match.objects.filter(pk=match.pk).update(seed=seed, status=Match.Status.RUNNING)
    for i, name in enumerate(names):
        Seat.objects.filter(match=match, index=i).update(occupied=True, display_name=tables.clean_name(name))
    state, rng, rows, step, seq = new_state(config, seed), random.Random(seed), [], 0, 0
    while not state.is_terminal():
        step += 1
        answers = {s: bots.probability_bot(state.observation(s), state.legal_actions(s), rng) for s in state.to_act()}
        for s, a in answers.items():
            seq += 1
            rows.append((match.pk, seq, step, s, a, False, "", 1.0, ""))
        state.apply(answers)
    write_rows(rows)
    tables.finish(match.pk, state.result())
    if finished_at:
        Match.objects.filter(pk=match.pk).update(finished_at=finished_at)
    return Match.objects.get(pk=match.pk)


def test_lobby_lists_games_and_offers_a_table(client):
    page = client.get("/").content.decode()
    assert "Liar&#x27;s Dice" in page or "Liar's Dice" in page
    assert "/tables/new/liars_dice/" in page
    assert "5533" in page
    from django.contrib.staticfiles import finders

    assert 'rel="icon"' in page and finders.find("arena/favicon.svg")


def test_guest_creates_a_table_and_another_guest_joins_it(client, django_user_model):
    resp = client.post("/tables/new/liars_dice/", {"nickname": "ann", "players": "3", "dice": "4", "games": "2",
                                                   "seat0": "me", "seat1": "open_human", "seat2": "builtin:random"})
    assert resp.status_code == 302
    match = Match.objects.get()
    assert match.config == {"players": 3, "dice": 4, "games": 2} and match.status == "open"
    seats = list(match.seats.order_by("index"))
    assert [s.display_name for s in seats] == ["ann", "", "Random bot"]
    from django.test import Client

    other = Client()
    page = other.get(f"/matches/{match.pk}/").content.decode()
    assert "Take this seat" in page
    other.post(f"/matches/{match.pk}/join/1/", {"nickname": "ben"})
    assert Seat.objects.get(match=match, index=1).display_name == "ben"
    # Nobody can take a seat twice or a taken seat.
    assert tables.join_seat(match.pk, 1, tables.Sitter("cid", session_key="zzz")) == "That seat is taken."


def test_create_table_rejects_bad_configuration(client):
    resp = client.post("/tables/new/liars_dice/", {"nickname": "ann", "players": "9", "dice": "6", "games": "1",
                                                   "seat0": "me", "seat1": "open_bot"})
    assert resp.status_code == 200
    assert "players must be a whole number from 2 to 6" in resp.content.decode()
    assert not Match.objects.exists()


def test_history_filters_and_pages(client):
    now = timezone.now()
    for i in range(30):
        finished_match(["alpha", f"bot{i}"], seed=i, finished_at=now - datetime.timedelta(days=i))
    page1 = client.get("/history/").content.decode()
    assert "Page 1 of 2 (30 matches)" in page1
    assert client.get("/history/?player=bot29").content.decode().count("/matches/") >= 1
    api = client.get("/api/matches/", {"player": "BOT1"}).json()  # any case, part of a name
    assert api["count"] == 11  # bot1, bot10..bot19
    day = (now - datetime.timedelta(days=3)).date().isoformat()
    api = client.get("/api/matches/", {"date_from": day, "date_to": day}).json()
    assert api["count"] == 1 and api["results"][0]["seats"][1]["name"] == "bot3"
    assert client.get("/api/matches/", {"page": 2}).json()["results"][-1]["seats"][1]["name"] == "bot29"
    assert client.get("/api/matches/", {"game": "nonexistent"}).status_code == 400  # said, not ignored
    assert client.get("/api/matches/", {"date_from": "garbage"}).status_code == 400
    assert client.get("/api/matches/").json()["count"] == 30


def test_history_filters_by_status_from_its_form_and_says_its_times_are_utc(client):
    done = finished_match(["alpha", "beta"], finished_at=timezone.now().replace(hour=13, minute=5))
    stopped = tables.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["open_bot", "open_bot"], None)
    tables.abort(stopped.pk, "abandoned: every player left")
    page = client.get("/history/").content.decode()
    form = page[page.index("<form"):page.index("</form>")]
    assert '<select name="status">' in form and '<option value="aborted">Aborted</option>' in form
    assert f"{done.finished_at:%Y-%m-%d} 13:05 UTC" in page
    aborted = client.get("/history/", {"status": "aborted"}).content.decode()
    assert f"/matches/{stopped.pk}/" in aborted and f"/matches/{done.pk}/" not in aborted
    assert '<option value="aborted" selected>' in aborted  # the form keeps the choice
    finished = client.get("/history/", {"status": "finished"}).content.decode()
    assert f"/matches/{done.pk}/" in finished and f"/matches/{stopped.pk}/" not in finished


def test_match_detail_replays_to_the_recorded_result(client):
    match = finished_match(["p1", "p2", "p3"], seed=11, config={"players": 3, "dice": 3, "games": 2})
    detail = client.get(f"/api/matches/{match.pk}/").json()
    assert detail["status"] == "finished" and detail["seed"] == "11"
    assert detail["events"][0]["seq"] == 1 and len(detail["events"]) == match.events.count()
    replay = client.get(f"/api/matches/{match.pk}/replay/", {"count": 500}).json()
    frames = replay["frames"]
    assert replay["complete"] and replay["total"] == len(frames)
    assert frames[-1]["view"]["wins"] == detail["result"]["scores"]
    assert all("hands" in f["view"] for f in frames)
    later = client.get(f"/api/matches/{match.pk}/replay/", {"start": 5, "count": 2}).json()["frames"]
    assert [f["step"] for f in later] == [frames[5]["step"], frames[6]["step"]]


def test_running_match_keeps_seed_and_events_private(client):
    match = tables.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["open_bot", "open_bot"], None)
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    detail = client.get(f"/api/matches/{match.pk}/").json()
    assert "seed" not in detail and detail["events"] is None
    assert client.get(f"/api/matches/{match.pk}/replay/").status_code == 409


def test_hostile_names_are_escaped_everywhere(client):
    match = finished_match([EVIL, "plain"])
    for url in ("/", "/history/", f"/matches/{match.pk}/", "/history/?player=plain"):
        page = client.get(url).content.decode()
        assert "<script>alert" not in page and "<img src=x" not in page, url
    assert client.get(f"/api/matches/{match.pk}/").json()["seats"][0]["name"] == tables.clean_name(EVIL)


def test_names_are_cleaned_of_control_characters_and_bounded():
    assert tables.clean_name("  a\x00b\nc\x1b[31m  ") == "abc[31m"
    assert len(tables.clean_name("x" * 500)) == tables.MAX_NAME


def test_each_game_has_a_rules_page_linked_from_its_tables(client):
    from games.arena import registry

    for spec in registry.all_games():
        page = client.get(f"/rules/{spec.slug}/")
        assert page.status_code == 200 and spec.title.split(" ")[0] in page.content.decode()
        assert f"/rules/{spec.slug}/" in client.get(f"/tables/new/{spec.slug}/").content.decode()
        assert f"/rules/{spec.slug}/" in client.get("/").content.decode()
    assert "Ones are not wild" in client.get("/rules/liars_dice/").content.decode()
    assert "no Weis and no Stöck" in client.get("/rules/jass/").content.decode()
    assert client.get("/rules/chess/").status_code == 404
    match = finished_match(["a", "b"])
    assert "/rules/liars_dice/" in client.get(f"/matches/{match.pk}/").content.decode()


def test_play_again_offers_the_same_settings_and_seats(client):
    client.post("/nickname/", {"nickname": "ann"})
    client.post("/tables/new/liars_dice/", {"players": "3", "dice": "4", "games": "2",
                                            "seat0": "open_human", "seat1": "me", "seat2": "builtin:random"})
    first = Match.objects.get()
    Match.objects.filter(pk=first.pk).update(status=Match.Status.FINISHED, result={"scores": [0, 1, 0], "winner": 1})
    page = client.get(f"/matches/{first.pk}/").content.decode()
    assert f"/tables/new/liars_dice/?again={first.pk}" in page and "New table" in page
    form = client.get(f"/tables/new/liars_dice/?again={first.pk}").content.decode()
    assert re.search(r'name="dice"[^>]*value="4"', form) and re.search(r'name="games"[^>]*value="2"', form)
    for index, choice in enumerate(["open_human", "me", "builtin:random"]):
        assert re.search(rf'name="seat{index}"[^>]*>.*?<option value="{choice}" selected', form, re.S), (index, choice)


def test_api_errors_are_json_and_say_what_is_wrong(client):
    match = finished_match(["a", "b"])
    Match.objects.filter(pk=match.pk).update(seed=2**62 - 1)
    assert client.get(f"/api/matches/{match.pk}/").json()["seed"] == str(2**62 - 1)  # exact in JavaScript too
    missing = client.get("/api/matches/999999/")
    assert missing.status_code == 404 and missing.json() == {"error": "there is no match 999999"}
    assert client.get("/api/matches/999999/replay/").status_code == 404
    for url, params, message in (
            ("/api/matches/", {"page": "99"}, "page 99 does not exist: there is 1 page"),
            ("/api/matches/", {"page": "x"}, "page must be a whole number"),
            ("/api/matches/", {"date_from": "garbage"}, "date_from must be a date like 2026-01-31"),
            ("/api/matches/", {"game": "chess"}, "game must be one of"),
            (f"/api/matches/{match.pk}/replay/", {"start": "abc"}, "start must be a whole number"),
            (f"/api/matches/{match.pk}/replay/", {"count": "0"}, "count must be a whole number from 1 to 500"),
            (f"/api/matches/{match.pk}/", {"after": "-1"}, "after must be a whole number")):
        resp = client.get(url, params)
        assert resp.status_code == 400 and message in resp.json()["error"], (url, params, resp.content)
    frames = client.get(f"/api/matches/{match.pk}/replay/", {"start": 0, "count": 2}).json()
    assert frames["total"] > 2 and len(frames["frames"]) == 2  # the page says how long the replay is


def test_same_names_are_told_apart_by_seat():
    assert tables.tell_apart(["Random bot", "Ann", "Random bot", ""], ["1", "2", "3", "4"]) == \
        ["Random bot (1)", "Ann", "Random bot (3)", ""]
    bots_only = tables.create_table("liars_dice", {"players": 3}, ["builtin:random"] * 3, None)
    assert [s.display_name for s in bots_only.seats.order_by("index")] == \
        ["Random bot (1)", "Random bot (2)", "Random bot (3)"]
    jass = tables.create_table("jass", {}, ["builtin:random", "builtin:rules"] * 2, None)
    assert [s.display_name for s in jass.seats.order_by("index")] == \
        ["Random bot (N)", "Rule-based bot (E)", "Random bot (S)", "Rule-based bot (W)"]
    # Two guests who chose the same nickname: told apart when the match starts.
    table = tables.create_table("liars_dice", {"players": 2}, ["me", "open_human"], tables.Sitter("Ann", session_key="s1"))
    assert tables.join_seat(table.pk, 1, tables.Sitter("Ann", session_key="s2")) is None
    started = tables.try_start(table.pk)
    assert [s.display_name for s in started.started_seats] == ["Ann (1)", "Ann (2)"]
    assert [s.display_name for s in table.seats.order_by("index")] == ["Ann (1)", "Ann (2)"]


def test_play_a_bot_now_asks_a_new_guest_for_a_nickname_then_seats_them_against_the_strongest_bot(client):
    lobby = client.get("/").content.decode()
    assert 'action="/play/liars_dice/"' in lobby and "you against the Probability bot" in lobby
    asked = client.post("/play/liars_dice/")
    assert asked.status_code == 302 and asked.url == "/?play=liars_dice#nickname" and not Match.objects.exists()
    form = client.get("/?play=liars_dice").content.decode()  # the lobby's nickname form, continuing to the game
    assert re.search(r'<form[^>]*id="nickname"[^>]*action="/play/liars_dice/"', form)
    assert client.post("/play/liars_dice/", {"nickname": "  \x00 "}).url == "/?play=liars_dice#nickname"
    assert "A nickname needs at least one visible character." in client.get("/?play=liars_dice").content.decode()
    started = client.post("/play/liars_dice/", {"nickname": "Newcomer"})
    match = Match.objects.get()
    assert started.status_code == 302 and started.url == f"/matches/{match.pk}/"
    assert match.config == {"players": 2, "dice": 6, "games": 1}  # the form's defaults
    assert [(s.kind, s.display_name, s.builtin_bot, s.occupied) for s in match.seats.order_by("index")] == [
        ("human", "Newcomer", "", True), ("builtin", "Probability bot", "probability", True)]
    # Full, so the arena starts it at once; until then the page shows the visitor in their seat.
    assert re.search(r'<li class="mine" data-seat="0">.*?Newcomer', client.get(started.url).content.decode(), re.S)
    # With a nickname, one click; Jass seats the person South (drawn at the bottom) with three
    # rule-based bots.
    jass = Match.objects.get(pk=int(client.post("/play/jass/").url.split("/")[2]))
    assert [s.builtin_bot or s.display_name for s in jass.seats.order_by("index")] == ["rules", "rules", "Newcomer", "rules"]
    blokus = Match.objects.get(pk=int(client.post("/play/blokus/").url.split("/")[2]))
    assert [s.builtin_bot or s.display_name for s in blokus.seats.order_by("index")] == ["Newcomer", "heuristic"]
    assert client.post("/play/chess/").status_code == 404


def test_play_a_bot_now_is_a_post_with_csrf_and_counts_against_the_table_limit(client, django_user_model, settings):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.post("/nickname/", {"nickname": "ann"})  # refused too: no token
    assert strict.post("/play/liars_dice/", {"nickname": "ann"}).status_code == 403
    assert client.get("/play/liars_dice/").status_code == 405
    assert not Match.objects.exists()
    settings.ARENA = {**settings.ARENA, "TABLES_PER_MINUTE": 2}
    client.force_login(django_user_model.objects.create_user("bob", password="secret12"))
    assert client.post("/play/liars_dice/").status_code == 302
    assert client.post("/tables/new/liars_dice/", {"players": "2", "dice": "1", "games": "1", "seat0": "me",
                                                   "seat1": "builtin:random"}).status_code == 302
    refused = client.post("/play/blokus/", follow=True)
    assert "You have created 2 tables in the last minute" in refused.content.decode()
    assert Match.objects.count() == 2  # the button and the form share one limit
    assert "You have created 2 tables" in client.post("/tables/new/liars_dice/", {
        "players": "2", "dice": "1", "games": "1", "seat0": "me", "seat1": "builtin:random"}).content.decode()


def test_lobby_says_what_the_site_is_and_where_bots_connect_from_the_settings_in_force(client, settings):
    settings.ALLOWED_HOSTS = ["arena.example.org"]
    settings.ARENA = {**settings.ARENA, "LIARS_DICE_HOST": "0.0.0.0", "LIARS_DICE_PORT": 6001,
                      "BLOKUS_HOST": "192.0.2.7", "BLOKUS_PORT": 13051}
    page = " ".join(re.sub(r"<[^>]+>", "", client.get("/", HTTP_HOST="arena.example.org:8080").content.decode()).split())
    assert ("people and game bots play Liar&#x27;s Dice, Jass (Schieber), Blokus, Hanabi and Contract bridge at the same tables"
            in page)
    # Every interface: the name the visitor used, without the web port; a bound address: that one.
    assert "Liar&#x27;s Dice: TCP arena.example.org:6001" in page
    assert "Blokus: TCP 192.0.2.7:13051" in page
    assert "Hanabi: WebSocket ws://127.0.0.1:4444" in page
    assert "Jass (Schieber): the server calls your bot over HTTP: register it at /bots/" in page
    settings.ALLOWED_HOSTS = ["[::1]"]
    assert "TCP <code>[::1]:6001</code>" in client.get("/", HTTP_HOST="[::1]:8000").content.decode()


def test_history_says_which_filters_it_cannot_apply_as_the_api_does(client):
    now = timezone.now()
    finished_match(["alpha", "beta"], finished_at=now)
    page = client.get("/history/").content.decode()
    assert "(1 match)" in page and "filter-problems" not in page
    for params, message, api_message in (
            ({"game": "chess"}, "Game must be one of liars_dice, jass, blokus, hanabi, bridge, got &#x27;chess&#x27;; this filter is left out.",
             "game must be one of liars_dice, jass, blokus, hanabi, bridge, got 'chess'"),
            ({"date_to": "31.01.2026"}, "To must be a date like 2026-01-31, got &#x27;31.01.2026&#x27;; this filter is left out.",
             "date_to must be a date like 2026-01-31, got '31.01.2026'"),
            ({"date_from": "2026-03-05", "date_to": "2026-03-01"},
             "From (2026-03-05) is after To (2026-03-01): no match finished between them.",
             "date_from (2026-03-05) is after date_to (2026-03-01): no match finished between them"),
            ({"page": "3"}, "Page 3 does not exist: there is 1 page; showing page 1.", "page 3 does not exist: there is 1 page"),
            ({"page": "9" * 5000}, "Page must be a whole number from 1 to 1000000000", "page must be a whole number")):
        html = client.get("/history/", params).content.decode()
        assert html.count("<li>") == 1 and message in html, (params, html[:3000])
        api = client.get("/api/matches/", params)
        assert api.status_code == 400 and api_message in api.json()["error"], params
    # Filters that cannot apply are left out: the menu says "All" and the match is listed.
    html = client.get("/history/", {"game": "chess", "player": "alp"}).content.decode()
    assert '<option value="" >' not in html and 'selected' not in html and "#1" in html and 'value="alp"' in html
    assert "No matches match these filters" in client.get("/history/", {"date_from": "2026-03-05",
                                                                   "date_to": "2026-03-01"}).content.decode()


def raise_an_error(request):
    raise RuntimeError("a view that breaks")


urlpatterns = [path("boom/", raise_an_error)] + webapp_urls.urlpatterns


@pytest.mark.urls("tests.test_web")
def test_error_pages_have_the_site_layout_and_a_way_back(client, settings, django_assert_num_queries):
    assert settings.DEBUG is False  # what visitors of a deployed site get
    for url in ("/no/such/page/", "/matches/999999/", "/rules/chess/"):
        missing = client.get(url)
        html = missing.content.decode()
        assert missing.status_code == 404 and 'class="topbar"' in html and 'name="viewport"' in html, url
        assert 'href="/">Back to the lobby' in html and 'href="/history/">Finished matches' in html, url
    assert "<code>/no/such/page/</code>" in client.get("/no/such/page/").content.decode()
    client.raise_request_exception = False
    with django_assert_num_queries(0):  # the 500 page needs no database
        broken = client.get("/boom/")
    html = broken.content.decode()
    assert broken.status_code == 500 and 'class="topbar"' in html and 'href="/">Back to the lobby' in html
    assert "a view that breaks" not in html and "Log in" not in html  # no account links: no session read
