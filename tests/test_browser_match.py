"""The match page in the browser, whatever the game: how a match that ends reaches every open
page (without a reload), what "Leave the match" says before it acts, the replay's address that
follows the step, and Play's speeds.  Against the real server (``manage.py serve``)."""
from __future__ import annotations

import json
import re
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (fixture)
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser

#: Set in each page before the end comes: still there afterwards means the page did not reload.
MARK = "window.__stillHere = true"


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def create_liars_dice(page, base: str, seats: list[str], nickname: str | None = None, dice: int = 3,
                      pace: str | None = None) -> int:
    """Fill the create-table form (``seats``: one choice per seat; ``pace``: the Pace choice's
    value, else the form's) and return the match id."""
    page.goto(base + "/tables/new/liars_dice/")
    if nickname:
        page.get_by_label("Your nickname").fill(nickname)
    page.get_by_label("Players").fill(str(len(seats)))
    page.get_by_label("Dice per player").fill(str(dice))
    for i, choice in enumerate(seats, 1):
        page.get_by_label(f"Seat {i}").select_option(choice)
    if pace is not None:
        page.get_by_label("Pace").select_option(pace)
    page.get_by_role("button", name="Create table").click()
    return int(re.search(r"/matches/(\d+)/", page.url).group(1))


def leave(page) -> str:
    """Press "Leave the match", accept its dialog; returns what the dialog said."""
    said = []

    def answer(dialog):
        said.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    page.locator("#leave-match").click()
    wait_until(lambda: said, 5, "the dialog")
    return said[0]


def assert_nothing_waits(page) -> None:
    """No line on the page still waits for a move or names someone to move."""
    table = page.locator("#board").inner_text() + page.locator("#actions").inner_text()
    for stale in ("Waiting", "to bid", "to play", "to move", "Your turn", "choos", " s\n"):
        assert stale not in table, f"{stale!r} still on the page: {table!r}"


def test_the_last_person_leaving_ends_the_match_on_every_open_page_at_once(arena, browser):  # noqa: F811
    ann, bob, watcher = new_page(browser), new_page(browser, viewport=PHONE), new_page(browser, viewport=PHONE)
    match_id = create_liars_dice(ann, arena.url, ["me", "open_human", "builtin:random"], nickname="Ann")
    bob.goto(ann.url)
    bob.get_by_placeholder("your nickname").fill("Bob")
    bob.get_by_role("button", name="Take this seat").click()
    watcher.goto(ann.url)
    for page in (ann, bob):
        page.locator("#leave-match").wait_for()
    expect(watcher.locator("#board [data-testid=status]")).to_be_visible()

    # Bob is still here: Ann's seat is handed over, and the dialog says so.
    said = leave(ann)
    assert said.startswith("Leave the match? Your seat is played as a silent bot's") and "take it back" in said
    expect(ann.locator("#away-banner")).to_be_visible()
    expect(watcher.locator("#board")).to_contain_text("Ann (away)")
    # Now Bob is the only one who plays: leaving ends the match, and the dialog says that.
    for page in (ann, bob, watcher):
        page.evaluate(MARK)
    said = leave(bob)
    assert said.startswith("You are the only player here: leaving ends the match"), said
    for page in (ann, bob, watcher):
        status = page.locator("#board [data-testid=status]")
        expect(status).to_contain_text("The match was aborted: every player left.")
        expect(page.locator("#status")).to_have_text("aborted")
        assert page.evaluate("window.__stillHere === true"), "the page reloaded"
        assert_nothing_waits(page)
        expect(page.locator("#leave-match")).to_be_hidden()
        expect(page.locator("#away-banner")).to_have_count(0 if page is watcher else 1)
        if page is not watcher:
            expect(page.locator("#away-banner")).to_be_hidden()
    assert get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "aborted"
    ann.screenshot(path="/tmp/match-aborted-ann.png")
    watcher.screenshot(path="/tmp/match-aborted-watcher-phone.png")
    # The notice's link opens the replay of what was played.
    bob.get_by_role("link", name="See the replay").click()
    expect(bob.locator("#replay-pos")).to_contain_text("Step")
    for page in (ann, bob, watcher):
        assert page.errors == [], page.errors


def test_the_replay_address_follows_the_step_and_play_has_speeds(arena, browser):  # noqa: F811
    page = new_page(browser)
    match_id = create_liars_dice(page, arena.url, ["builtin:random", "builtin:random"], dice=4, pace="0.0")
    wait_until(lambda: get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "finished", 20, "the match ends")
    total = get_json(f"{arena.url}/api/matches/{match_id}/replay/")["total"] - 1
    assert total >= 8

    # A link with a step opens the replay at that step (in a page of its own: the table's page
    # reloads itself into the replay when the match ends, which would race this navigation)...
    page = new_page(browser)
    page.clock.install()  # Play's timer runs on this clock: the test moves it, nothing sleeps
    page.goto(f"{arena.url}/matches/{match_id}/?step=3")
    pos = page.locator("#replay-pos")
    expect(pos).to_have_text(f"Step 3 of {total}")
    # ...and the address follows the buttons, the keys and the slider.
    page.get_by_role("button", name="Next ›").click()
    expect(pos).to_have_text(f"Step 4 of {total}")
    page.clock.run_for(1000)  # past the address's own pace (a few writes a second)
    expect(page).to_have_url(re.compile(r"\?step=4$"))
    page.keyboard.press("Home")
    page.clock.run_for(1000)
    expect(page).to_have_url(re.compile(r"\?step=0$"))
    # A step past the end shows the last one.
    page.goto(f"{arena.url}/matches/{match_id}/?step=99999")
    expect(pos).to_have_text(f"Step {total} of {total}")

    # Play: one step every 0.9 s at 1x, four at 4x.
    page.goto(f"{arena.url}/matches/{match_id}/?step=0")
    expect(pos).to_have_text(f"Step 0 of {total}")
    page.get_by_role("button", name="Play").click()
    page.clock.run_for(1800)
    expect(pos).to_have_text(f"Step 2 of {total}")
    page.get_by_label("Speed").select_option("4")
    page.clock.run_for(900)
    expect(pos).to_have_text(f"Step 6 of {total}")
    page.get_by_role("button", name="Pause").click()
    page.clock.run_for(5000)
    expect(pos).to_have_text(f"Step 6 of {total}")
    expect(page).to_have_url(re.compile(r"\?step=6$"))
    # The speed is remembered for the next replay.
    page.reload()
    expect(page.get_by_label("Speed")).to_have_value("4")
    page.screenshot(path="/tmp/replay-desktop.png")
    phone = new_page(browser, viewport=PHONE)
    phone.goto(f"{arena.url}/matches/{match_id}/?step=5")
    expect(phone.locator("#replay-pos")).to_have_text(f"Step 5 of {total}")
    phone.screenshot(path="/tmp/replay-phone.png")
    assert page.errors == [] and phone.errors == [], page.errors + phone.errors


@pytest.mark.parametrize("touch, word", [(False, "click"), (True, "tap")])
def test_jass_says_click_with_a_mouse_and_tap_on_a_touch_screen(arena, browser, touch, word):  # noqa: F811
    context = browser.new_context(viewport=PHONE if touch else DESKTOP, has_touch=touch, is_mobile=touch)
    page = context.new_page()
    page.goto(arena.url + "/tables/new/jass/")
    page.get_by_label("Your nickname").fill("Ann")
    for seat in ("North", "East", "West"):  # South: "Me", the form's choice
        page.get_by_label(re.compile(rf"^{seat}")).select_option("builtin:random")
    page.get_by_role("button", name="Create table").click()
    # Choose trump if asked first, then the first card is asked for.
    prompt = page.locator("#actions .prompt", has_text=re.compile("a card|trump"))
    prompt.wait_for(timeout=20_000)
    if "trump" in prompt.inner_text():
        page.locator("[data-trump]").first.click()
    card = page.locator("#actions .prompt", has_text="a card")
    expect(card).to_contain_text(f"Your turn: {word} a card", timeout=20_000)
    page.screenshot(path=f"/tmp/jass-{word}.png")
    context.close()


def test_a_person_away_and_nobody_else_playing_is_told_when_the_match_ends_then_it_ends(arena_factory,
                                                                                      browser):  # noqa: F811
    """Away (requests ran out), not gone on purpose: the stand-in plays on for the grace
    (ARENA_AWAY_GRACE, tiny here), her page says the match will end, then it ends on it."""
    arena = arena_factory(env={"ARENA_HUMAN_DEADLINE": "1", "ARENA_HUMAN_ABSENT_AFTER": "1",
                               "ARENA_AWAY_GRACE": "0.05", "ARENA_ROUND_PAUSE": "0.2", "ARENA_BUILTIN_DELAY": "0.3"})
    page = new_page(browser, viewport=PHONE)
    page.goto(arena.url + "/tables/new/jass/")
    page.get_by_label("Your nickname").fill("Ann")
    for seat in ("North", "East", "West"):  # South: "Me", the form's choice
        page.get_by_label(re.compile(rf"^{seat}")).select_option("builtin:random")
    page.get_by_role("button", name="Create table").click()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    banner = page.locator("#away-banner")
    expect(banner).to_contain_text("Nobody else plays here: the match ends in 1 min unless you take your seat back")
    page.screenshot(path="/tmp/away-banner-phone.png")
    page.evaluate(MARK)
    expect(page.locator("#board [data-testid=status]")).to_contain_text("The match was aborted: every player left.",
                                                                       timeout=20_000)
    assert page.evaluate("window.__stillHere === true"), "the page reloaded"
    expect(banner).to_be_hidden()
    page.wait_for_timeout(2000)  # Jass paces the views it had: none of them brings a turn back
    assert_nothing_waits(page)
    page.screenshot(path="/tmp/away-aborted-phone.png")
    assert get_json(f"{arena.url}/api/matches/{match_id}/")["status"] == "aborted"
    assert page.errors == [], page.errors
