"""A tournament's live page in the browser, with the real server (``manage.py serve``): a
person logs in, creates a small Liar's Dice round robin of built-in bots at a watchable pace
with the form, and watches its page: the progress bar advances and the cross-table fills in
without a reload, until it is finished; a phone shows the same page, its wide tables
scrolling inside their boxes.  Screenshots, desktop and phone, in /tmp/tournament-shots/."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, log_in, new_page  # noqa: F401  (fixture)

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
    log_in(page, arena.url, "tess")

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
    # The score rate's interval shows beside the names, not past the screen's edge.
    interval = phone.get_by_test_id("standings").locator("tbody td.interval").first.bounding_box()
    assert interval["x"] + interval["width"] <= PHONE["width"], interval
    shoot(phone, "phone-finished")
    assert page.errors == [] and phone.errors == []


SETUP = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from games.arena.models import RegisteredBot
from games.arena.tournaments import schedule
olga = User.objects.create_user('olga', password='pw-olga-123')
pia = User.objects.create_user('pia', password='pw-pia-123')
RegisteredBot.objects.create(owner=pia, game='liars_dice', name='pia-bot', key_hash='x' * 64)
t = schedule.create(game='liars_dice', config={'players': 2, 'dice': 2, 'games': 1}, format='round_robin',
                    entrants=['builtin:probability'], name="Olga's open table", wait_s=600,
                    starts_at=timezone.now() + timedelta(hours=1), created_by_id=olga.pk)
print(t.pk)
"""


def play_liars_dice_to_the_end(page) -> int:
    """Click through a Liar's Dice match: challenge a standing bid, else bid what the picker
    offers; let the window's bids stand.  Returns the moves made."""
    moves = 0
    while True:
        page.wait_for_selector("#actions .controls[data-kind], .status-line.done", timeout=60_000)
        if page.locator(".status-line.done").count():
            return moves
        controls = page.locator("#actions .controls[data-kind]")
        if controls.get_attribute("data-kind") == "challenge_window":
            controls.get_by_role("button", name="Let it stand").click()
        elif controls.locator("button.challenge").count():
            controls.locator("button.challenge").click()
        else:
            controls.locator("button.bid").click()
        moves += 1
        page.wait_for_function("""() => {
            const actions = document.querySelector('#actions');
            return !actions || !actions.children.length
                || actions.querySelector('.controls.sent, .controls[data-kind]') !== null;
        }""", timeout=10_000)


def test_a_person_signs_up_plays_their_match_from_the_page_and_the_standings_count_it(arena_factory,  # noqa: F811
                                                                                        browser):
    arena = arena_factory(env={"ARENA_BUILTIN_DELAY": "0.05", "ARENA_ROUND_PAUSE": "0.2",
                               "ARENA_HUMAN_DEADLINE": "30", "ARENA_HUMAN_CHALLENGE_WINDOW": "5"})
    tid = int(arena.shell(SETUP).split()[-1])
    page = new_page(browser, viewport=DESKTOP)
    page.goto(f"{arena.url}/tournaments/{tid}/")
    expect(page.get_by_test_id("login-to-enter")).to_be_visible()  # a visitor is asked to log in first
    log_in(page, arena.url, "pia")
    page.goto(f"{arena.url}/tournaments/{tid}/")
    expect(page.get_by_test_id("bot-choice")).to_contain_text("pia-bot")
    shoot(page, "desktop-signup")
    phone = new_page(browser, viewport=PHONE)
    log_in(phone, arena.url, "pia")
    phone.goto(f"{arena.url}/tournaments/{tid}/")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shoot(phone, "phone-signup")

    page.get_by_test_id("signup").click()
    expect(page.locator("#t-entry")).to_contain_text("You are entrant pia")
    expect(page.get_by_test_id("standings")).to_contain_text("pia")
    expect(page.get_by_test_id("withdraw")).to_be_visible()
    phone.reload()

    # The start: the arena makes the match and holds pia's seat; her page says so, live.
    arena.shell(f"from django.utils import timezone\nfrom games.arena.models import Tournament\n"
                f"Tournament.objects.filter(pk={tid}).update(starts_at=timezone.now())\n")
    ready = page.get_by_test_id("your-match")
    expect(ready).to_contain_text("Your match is ready", timeout=30_000)
    expect(page.locator("#t-entry-forms")).to_be_hidden()  # started: no more entries
    expect(phone.get_by_test_id("your-match")).to_contain_text("Your match is ready", timeout=30_000)
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shoot(page, "desktop-ready")
    shoot(phone, "phone-ready")
    phone.close()

    ready.get_by_role("link", name="Play").click()
    expect(page.get_by_test_id("tournament-link")).to_contain_text("Olga's open table")
    shoot(page, "desktop-held-seat")
    page.get_by_test_id("take-held-seat").click()
    page.locator(".board .players").wait_for(timeout=30_000)  # every seat taken: it starts
    assert play_liars_dice_to_the_end(page) >= 1

    page.get_by_test_id("back-to-tournament").click(timeout=30_000)
    expect(page.get_by_test_id("status")).to_have_text("finished", timeout=30_000)
    expect(page.locator("#t-progress")).to_contain_text("1 of 1 games done")
    rows = page.get_by_test_id("standings").locator("tbody tr")
    expect(rows).to_have_count(2)
    games = {rows.nth(i).locator("td.name").text_content(): rows.nth(i).locator("td").nth(5).text_content()
             for i in range(2)}
    assert games == {"pia": "1", "Probability bot": "1"}
    expect(page.get_by_test_id("your-match")).to_be_hidden()
    shoot(page, "desktop-after")
    assert page.errors == []
