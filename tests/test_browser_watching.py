"""Watching bots in the browser: a table of built-in bots made "watchable" on the create-table
form shows up under Live in a lobby that is already open, and its page follows the moves."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401

pytestmark = pytest.mark.browser


def test_a_watchable_bot_table_appears_under_live_in_an_open_lobby_and_can_be_watched(arena, browser):  # noqa: F811
    lobby = new_page(browser, viewport=PHONE)
    lobby.goto(arena.url + "/")
    live = lobby.locator("#game-liars_dice [data-live]").locator("h3", has_text="Live").locator("..")
    expect(live).to_contain_text("Nothing live.")

    maker = new_page(browser)
    maker.goto(arena.url + "/tables/new/liars_dice/")
    expect(maker.get_by_label("Pace")).to_have_value("0.5")  # watchable unless one picks another
    maker.screenshot(path="/tmp/create-table-time-desktop.png", full_page=True)
    maker.get_by_label("Games in the match").fill("3")
    maker.get_by_label("Seat 1").select_option("builtin:random")
    maker.get_by_label("Seat 2").select_option("builtin:probability")
    maker.get_by_role("button", name="Create table").click()
    match_id = re.search(r"/matches/(\d+)/", maker.url).group(1)
    expect(maker.locator(".config")).to_contain_text("paced: 0.5 s a move")

    # Three games of 2 x 6 dice take at least 36 moves, 18 s at this pace: the lobby, which
    # fetches itself every few seconds, lists the match under Live while it runs.
    entry = live.get_by_role("link", name=f"#{match_id}")
    expect(entry).to_be_visible(timeout=15_000)
    expect(live).to_contain_text("paced: 0.5 s a move")
    lobby.screenshot(path="/tmp/lobby-live-phone.png", full_page=True)
    live.get_by_role("link", name="Watch").first.click()
    expect(lobby.locator("#status")).to_have_text("running")
    expect(lobby.locator("#who-am-i")).to_contain_text("You are watching live")
    lobby.screenshot(path="/tmp/watching-phone.png")
    assert lobby.errors == [] and maker.errors == [], lobby.errors + maker.errors
