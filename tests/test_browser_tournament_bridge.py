"""A bridge pair event's pages in the browser, with the real server: the new-tournament form
offers Mitchell and Howell and the scoring across the field for bridge only; a Howell of
built-in pairs created with it runs to the end, and its page shows the pairs' matchpoints,
percentage per board and interval; a Mitchell's page shows its N-S and E-W fields apart.
Screenshots, desktop and a 390 px phone, in /tmp/tournament-shots/."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, log_in, new_page  # noqa: F401  (fixture)
from tests.test_browser_tournament import shoot

pytestmark = pytest.mark.browser

ENV = {"ARENA_BUILTIN_DELAY": "0", "ARENA_ROUND_PAUSE": "0"}


def test_a_howell_made_on_the_form_and_a_mitchell_show_their_movement_standings(arena_factory, browser):  # noqa: F811
    arena = arena_factory(env=ENV)
    arena.shell("from django.contrib.auth.models import User\n"
                "User.objects.create_user('tess', password='pw-tess-123')\n")
    page = new_page(browser, viewport=DESKTOP)
    log_in(page, arena.url, "tess")

    page.goto(arena.url + "/tournaments/new/?game=liars_dice")
    formats = page.get_by_label("Format").locator("option").all_text_contents()
    assert not any("Howell" in f or "Mitchell" in f for f in formats)
    assert page.get_by_label("Scoring across the field (Mitchell, Howell)").count() == 0
    page.goto(arena.url + "/tournaments/new/?game=bridge")
    page.get_by_label("Name").fill("Tuesday pairs")
    page.get_by_label("Random bot").fill("2")
    page.get_by_label("Rule-based bot").fill("2")
    page.get_by_label("Format").select_option(label="Howell movement (bridge pairs)")
    page.get_by_label("Scoring across the field (Mitchell, Howell)").select_option("matchpoints")
    page.get_by_label("Matches per pairing").fill("2")  # boards per round
    page.get_by_label("Pace").select_option(label="Full speed (for testing)")
    page.get_by_test_id("create").click()

    expect(page.get_by_role("heading", name="Tuesday pairs")).to_be_visible()
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=60_000)
    expect(page.locator("#t-progress")).to_contain_text("6 of 6 games done")
    standings = page.get_by_test_id("standings")
    expect(standings.locator("thead")).to_contain_text("% per board")
    expect(standings.locator("tbody tr")).to_have_count(4)
    expect(standings.locator("tbody tr").first.locator("td").nth(6)).to_have_text("6")  # 3 rounds of 2 boards
    expect(page.locator("#t-statistic")).to_contain_text("Law 78A")
    expect(page.locator("#t-cross-hint")).to_contain_text("percentage per board")
    expect(page.locator("#h-chart")).to_have_text("Matchpoints over the games done")
    shoot(page, "howell-desktop")
    phone = new_page(browser, viewport=PHONE)
    phone.goto(page.url)
    expect(phone.get_by_test_id("standings").locator("tbody tr")).to_have_count(4)
    # The page itself does not scroll sideways on a phone: wide tables scroll in their boxes.
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    # The percentage's interval shows beside the pairs, not past the screen's edge.
    interval = phone.get_by_test_id("standings").locator("tbody td.interval").first.bounding_box()
    assert interval["x"] + interval["width"] <= PHONE["width"], interval
    shoot(phone, "howell-phone")

    made = json.loads(arena.shell(
        "import json\nfrom games.arena.tournaments import schedule\n"
        "t = schedule.create(game='bridge', config={'scoring': 'duplicate', 'replay': 0}, format='mitchell', "
        "entrants=['builtin:random', 'builtin:rules'] * 3, scoring='cross_imps')\n"
        "print(json.dumps({'id': t.pk}))").strip().splitlines()[-1])
    page.goto(f"{arena.url}/tournaments/{made['id']}/")
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=60_000)
    rows = page.get_by_test_id("standings").locator("tbody tr.field-head")
    expect(rows).to_have_text(["N-S field", "E-W field"])
    expect(page.get_by_test_id("standings").locator("thead")).to_contain_text("IMPs per board")
    # Entry closed at the start: no empty "Take part" card is left on the page.
    expect(page.get_by_role("heading", name="Take part")).to_be_hidden()
    shoot(page, "mitchell-desktop")
