"""A tournament's live page in the browser, with the real server (``manage.py serve``): a
person logs in, creates a small Liar's Dice round robin of built-in bots at a watchable pace
with the form, and watches its page: the progress bar advances and the cross-table fills in
without a reload, until it is finished; a phone shows the same page, its wide tables
scrolling inside their boxes.  Screenshots, desktop and phone, in /tmp/tournament-shots/."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/tournament-shots")


def shoot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def done(page) -> int:
    return int(page.locator("#t-bar").get_attribute("data-done") or 0)


def cross_cells(page) -> int:
    """Cells of the cross-table with games in them."""
    return page.locator("[data-testid=cross-table] td[data-games]").count()


def test_a_round_robin_fills_its_live_page_without_a_reload(arena_factory, browser):  # noqa: F811
    arena = arena_factory(env={"ARENA_BUILTIN_DELAY": "0.05", "ARENA_ROUND_PAUSE": "0.2"})
    arena.shell("from django.contrib.auth.models import User\n"
                "User.objects.create_user('tess', password='pw-tess-123')\n")
    page = new_page(browser, viewport=DESKTOP)
    page.goto(arena.url + "/accounts/login/")
    page.get_by_label("Username").fill("tess")
    page.get_by_label("Password").fill("pw-tess-123")
    page.get_by_role("button", name="Log in").click()

    page.get_by_role("link", name="Tournaments").click()
    page.get_by_test_id("new-tournament").click()
    expect(page.get_by_label("Game", exact=True)).to_have_value("liars_dice")
    page.get_by_label("Name").fill("Tess's dice night")
    page.get_by_label("Random bot").fill("2")
    page.get_by_label("Probability bot").fill("1")
    page.get_by_label("Dice per player").fill("2")
    page.get_by_label("Matches at once").fill("1")  # one after another: the page moves step by step
    page.get_by_label("Pace").select_option(label="Watchable: 0.5 s a move")
    page.get_by_test_id("create").click()

    expect(page.get_by_role("heading", name="Tess's dice night")).to_be_visible()
    page.evaluate("window.__samePage = true")  # gone if the page reloads
    phone = new_page(browser, viewport=PHONE)
    phone.goto(page.url)

    # Three matches, one at a time: the bar and the cross-table move on as each one ends.
    seen = [done(page)]
    expect(page.get_by_test_id("status")).to_have_text("running", timeout=30_000)
    shoot(page, "desktop-running")
    while seen[-1] < 3:
        page.wait_for_function(f"Number(document.getElementById('t-bar').dataset.done) > {seen[-1]}",
                               timeout=60_000)
        seen.append(done(page))
        # Drawn from the same standings: each pair meets once, and fills two cells (one per side).
        assert cross_cells(page) == 2 * seen[-1]
    assert seen[0] < seen[-1] == 3
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=30_000)
    assert page.evaluate("window.__samePage") is True
    assert cross_cells(page) == 6  # every pairing met once: 3 pairs, two cells each
    expect(page.locator("#t-progress")).to_contain_text("3 of 3 games done")
    expect(page.get_by_test_id("standings").locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("matches").locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("matches").locator("tbody tr").first).to_contain_text("won")
    expect(page.locator("#t-chart")).to_be_visible()
    assert not page.get_by_test_id("cancel").is_visible()  # over: nothing to cancel
    shoot(page, "desktop-finished")

    expect(phone.get_by_test_id("status")).to_have_text("finished", timeout=30_000)
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # tables scroll in their boxes
    shoot(phone, "phone-finished")
    assert page.errors == [] and phone.errors == []
