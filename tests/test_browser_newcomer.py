"""A first visitor's pages in the browser: the lobby's one line and "Play a bot now", the
history page's messages about filters it cannot apply, and the error pages, on a desktop and
a phone.  Real server (``manage.py serve``, DEBUG off), headless Chromium; screenshots go to
/tmp for a person to look at."""
from __future__ import annotations

import json
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser

SHOTS = "/tmp/arena-newcomer"


def assert_fits(page, viewport: dict, what: str) -> None:
    """The page does not scroll sideways (a phone's width is all a visitor sees)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"{what} scrolls sideways at {viewport['width']} px: {width} px wide"


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def match_id(page) -> int:
    """The match number in the page's URL (``/matches/<id>/``)."""
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def test_a_new_guest_plays_each_game_against_its_strongest_bot_in_one_click(arena, browser):  # noqa: F811
    page = new_page(browser)
    page.goto(arena.url + "/")
    intro = page.locator(".intro")
    # What the site is, and where each game's bots connect (the listeners are on 127.0.0.1).
    assert ("people and game bots play Liar's Dice, Jass (Schieber), Blokus, Hanabi and Contract bridge"
            in intro.text_content())
    assert f"Liar's Dice: TCP 127.0.0.1:{arena.liars_dice_port}" in " ".join(intro.text_content().split())
    assert f"Blokus: TCP 127.0.0.1:{arena.blokus_port}" in " ".join(intro.text_content().split())
    assert f"Hanabi: WebSocket ws://127.0.0.1:{arena.hanabi_port}" in " ".join(intro.text_content().split())
    assert (f"Contract bridge (text protocol): TCP 127.0.0.1:{arena.bridge_port} · Contract bridge (Blue Chip table "
            f"manager): TCP 127.0.0.1:{arena.table_manager_port}") in " ".join(intro.text_content().split())
    assert intro.get_by_role("link", name="/bots/").get_attribute("href") == "/bots/"

    # No nickname yet: the button asks for one on the way, then the match starts.
    page.locator("#game-liars_dice").get_by_role("button", name="Play a bot now").click()
    form = page.locator("form#nickname")
    expect(form.locator(".ask")).to_contain_text("your Liar's Dice game starts: you against the Probability bot")
    expect(form).to_be_in_viewport()
    page.screenshot(path=f"{SHOTS}-nickname-asked.png")
    form.get_by_role("textbox", name="Nickname").fill("Newcomer")
    form.get_by_role("button", name="Play").click()
    page.wait_for_url("**/matches/*/")
    me = page.locator(".player.me")
    expect(me.locator(".name")).to_have_text("Newcomer")
    expect(me.locator(".dice .die[data-face]")).to_have_count(6)  # the default table: 6 dice each
    expect(page.locator(".player:not(.me) .name")).to_have_text(["Probability bot"])
    expect(page.locator("#actions .controls[data-kind]")).to_be_visible()  # a bid or a challenge to make
    page.screenshot(path=f"{SHOTS}-liars-dice-started.png")

    # With a nickname, one click: Jass with three rule-based bots, Blokus against the heuristic
    # bot, Hanabi with two convention bots, bridge with three rule-based bots.
    for slug, bots in (("jass", ["rules"] * 3), ("blokus", ["heuristic"]), ("hanabi", ["convention"] * 2),
                       ("bridge", ["rules"] * 3)):
        page.goto(arena.url + "/")
        page.locator(f"#game-{slug}").get_by_role("button", name="Play a bot now").click()
        page.wait_for_url("**/matches/*/")
        expect(page.locator("#who-am-i")).to_contain_text("You play as Newcomer")
        url = f"{arena.url}/api/matches/{match_id(page)}/"
        wait_until(lambda: get_json(url)["status"] == "running", what=f"{slug} match running")
        seats = get_json(url)["seats"]
        person = 2 if slug in ("jass", "bridge") else 0  # a person sits South there, drawn at the bottom
        assert (seats[person]["kind"], seats[person]["name"]) == ("human", "Newcomer")
        assert [s["builtin_bot"] for s in seats if s["index"] != person] == bots
    assert page.errors == []


def test_lobby_history_and_error_pages_read_well_on_desktop_and_phone(arena, browser):  # noqa: F811
    # One finished match of two built-in bots, made on the create-table form.
    page = new_page(browser)
    page.goto(arena.url + "/tables/new/liars_dice/")
    page.locator("input[name=dice]").fill("1")
    page.select_option("select[name=seat0]", "builtin:random")
    page.select_option("select[name=seat1]", "builtin:probability")
    page.get_by_role("button", name="Create").click()
    page.wait_for_url("**/matches/*/")
    wait_until(lambda: get_json(f"{arena.url}/api/matches/")["count"] == 1, timeout=30, what="the match to finish")
    page.goto(arena.url + "/history/")
    expect(page.locator(".pages")).to_contain_text("Page 1 of 1 (1 match)")
    # Each row's cells end on one line, so the row's border runs straight under the players too.
    bottoms = page.locator("table.history tbody tr td").evaluate_all(
        "tds => tds.map(td => Math.round(td.getBoundingClientRect().bottom))")
    assert len(bottoms) == 5 and len(set(bottoms)) == 1, bottoms

    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = new_page(browser, viewport)
        page.goto(arena.url + "/")
        expect(page.locator("#game-blokus").get_by_role("button", name="Play a bot now")).to_be_visible()
        assert_fits(page, viewport, "the lobby")
        page.screenshot(path=f"{SHOTS}-lobby-{name}.png", full_page=True)

        # Filters the page cannot apply are said, and the form keeps what it can hold.
        page.goto(arena.url + "/history/?game=chess&player=ann&date_from=2026-03-05&date_to=2026-03-01&page=7")
        problems = page.locator(".filter-problems li")
        expect(problems).to_have_text([
            "Game must be one of liars_dice, jass, blokus, hanabi, bridge, got 'chess'; this filter is left out.",
            "From (2026-03-05) is after To (2026-03-01): no match finished between them.",
            "Page 7 does not exist: there is 1 page; showing page 1.",
        ])
        expect(page.get_by_role("combobox", name="Game")).to_have_value("")  # "All": what is listed
        expect(page.get_by_role("textbox", name="Player")).to_have_value("ann")
        expect(page.locator("input[name=date_from]")).to_have_value("2026-03-05")
        expect(page.locator("input[name=date_to]")).to_have_value("2026-03-01")
        assert_fits(page, viewport, "the history page")
        page.screenshot(path=f"{SHOTS}-history-errors-{name}.png", full_page=True)
        page.goto(arena.url + "/history/?date_from=yesterday")
        expect(page.locator(".filter-problems li")).to_have_text(
            ["From must be a date like 2026-01-31, got 'yesterday'; this filter is left out."])

        # A page that does not exist: the site's header, a way back, readable on a phone.
        response = page.goto(arena.url + "/no/such/page/")
        assert response.status == 404
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
        expect(page.locator(".topbar .brand")).to_be_visible()
        page.get_by_role("link", name="Finished matches").wait_for()
        assert_fits(page, viewport, "the 404 page")
        page.screenshot(path=f"{SHOTS}-404-{name}.png", full_page=True)
        page.get_by_role("link", name="Back to the lobby").click()
        expect(page.locator("#game-liars_dice")).to_be_visible()
        assert page.errors == []
