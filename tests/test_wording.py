"""Words a visitor reads: a seat held for a registered bot says so, an unverified name is
marked once in a match's head (not in every sentence), and the Bots page asks for an address
and a path style only for games whose bots the server calls."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from games.arena.models import Match, RegisteredBot, Seat
from games.arena.play import tables
from tests.browser_util import browser, new_page  # noqa: F401  (fixture)

@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="pw-owner-123")


@pytest.mark.django_db
def test_a_seat_held_for_a_registered_bot_says_for_whom(owner):
    bot = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="deep-bluff", key_hash="0" * 64)
    match = tables.create_table("liars_dice", {"players": 3, "dice": 2, "games": 1},
                                [f"registered:{bot.pk}", tables.OPEN_BOT, "builtin:random"],
                                tables.Sitter("owner", user_id=owner.pk))
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    held = re.search(r'<li data-seat="0">.*?</li>', page, re.S).group(0)
    assert "held for <b class=\"name\">deep-bluff</b>" in held and "open for a bot" not in held
    assert "open for a bot" in re.search(r'<li data-seat="1">.*?</li>', page, re.S).group(0)
    lobby = Client().get("/").content.decode()
    assert "held for deep-bluff" in lobby and lobby.count("open for a bot") == 1


@pytest.mark.django_db
def test_an_unverified_name_is_marked_once_in_the_head_of_a_running_match():
    match = tables.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1},
                                [tables.OPEN_BOT, tables.OPEN_BOT], None)
    Seat.objects.filter(match=match).update(occupied=True)
    Seat.objects.filter(match=match, index=0).update(display_name="Bea")
    Seat.objects.filter(match=match, index=1).update(display_name="Cal")
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    note = re.search(r'<p class="hint unverified-note".*?</p>', page, re.S).group(0)
    assert re.sub(r"<[^>]+>", "", note) == ("Bea, Cal unverified: connected without their keys; the names are only "
                                            "what they said.")
    assert page.count(">unverified<") == 1
    # That the sentences drawn by the page's script name them without the mark is checked in
    # the browser (test_liars_dice_browser_texts.py, test_browser_liars_dice.py).


@pytest.mark.django_db
def test_the_bots_form_marks_the_address_fields_as_for_http_games_only(owner):
    web = Client()
    web.force_login(owner)
    page = web.get("/bots/").content.decode()
    assert re.search(r'<select name="game"[^>]*data-http-games="jass"', page)
    assert re.search(r'<input type="text" name="base_url"[^>]*data-http-only', page)
    assert re.search(r'<select name="path_style"[^>]*data-http-only', page)


@pytest.mark.browser
def test_the_bots_page_shows_base_url_and_path_style_only_for_jass(arena, browser):  # noqa: F811
    arena.shell("from django.contrib.auth.models import User; User.objects.create_user('ann', password='pw-ann-12345')")
    page = new_page(browser)
    page.goto(arena.url + "/accounts/login/?next=/bots/")
    page.get_by_label("Username").fill("ann")
    page.get_by_label("Password").fill("pw-ann-12345")
    page.get_by_role("button", name=re.compile("Log in", re.I)).click()
    page.wait_for_url("**/bots/")
    game, url, style = page.get_by_label("Game"), page.get_by_label("Base URL"), page.get_by_label("Path style")
    for slug in ("liars_dice", "blokus", "hanabi"):
        game.select_option(slug)
        assert not url.is_visible() and not style.is_visible(), slug
    game.select_option("jass")
    assert url.is_visible() and style.is_visible()
    url.fill("http://127.0.0.1:5001")
    game.select_option("hanabi")  # an address typed for Jass is not sent for a Hanabi bot
    page.get_by_label("Name").fill("fx-bot")
    page.get_by_role("button", name="Register").click()
    page.screenshot(path="/tmp/bots-registered-hanabi.png", full_page=True)
    page.get_by_test_id("new-key").wait_for()
    page.screenshot(path="/tmp/bots-registered-hanabi.png", full_page=True)
    assert page.errors == [], page.errors
