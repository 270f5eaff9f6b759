"""What a person reads about bids and challenges in the browser: whose bid a challenge judged
and by whom (a bot may challenge its own bid), a bid past the dice on the table, and the
finished match's download.

Real server, bots over real TCP sockets, headless Chromium; screenshots go to /tmp.
"""
from __future__ import annotations

import json
import re
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser_util import PHONE, browser, new_page  # noqa: F401  (fixture)
from tests.ld_bot import LDBot
from tests.serverproc import wait_until

pytestmark = pytest.mark.browser


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def own_bid_challenger(msg: dict):
    """Opens with 2 x one, raises a bid to 2 x two, and challenges its own bid while the other
    player is on turn (the reference lets a player do that)."""
    if msg["other_hands"][0][0] == 0:
        return [1, 2] if msg["last_bid"] == [0, 0] else [msg["last_bid"][0] + 1, msg["last_bid"][1]]
    mine = msg["last_bid"] != [0, 0] and msg["other_hands"][-1][0] == 0  # the last bidder is listed last
    return "challenge" if mine else "pass"


def past_the_table(msg: dict):
    """On turn, bids five threes, more than the two dice on the table (once that stands, it
    challenges); passes otherwise."""
    if msg["other_hands"][0][0] != 0:
        return "pass"
    return [3, 5] if msg["last_bid"][1] < 5 else "challenge"


def finished(arena, match_id: int) -> dict:
    return wait_until(lambda: (m := get_json(f"{arena.url}/api/matches/{match_id}/"))["status"] == "finished" and m,
                      20, "the match ends")


def test_the_replay_says_who_challenged_whose_bid(arena, browser):  # noqa: F811
    """A bot bids 2 x one, then challenges that bid of its own while the other bot, on turn,
    bids 2 x two: the step and the outcome name the challenger and the bidder, and say the
    bid made in the same move was never placed."""
    bots = [LDBot(arena.liars_dice_port, name, own_bid_challenger) for name in ("Bea", "Cal")]
    wait_until(lambda: all(b.closed.is_set() for b in bots), 20, "the match ends")
    (listing,) = get_json(f"{arena.url}/api/matches/?game=liars_dice")["results"]
    match = finished(arena, listing["id"])
    # As the page names them: plain names in its sentences; that the bots connected without a
    # key is said once per name, in the page's head.
    names = {s["index"]: s["name"] for s in match["seats"]}
    over = get_json(f"{arena.url}/api/matches/{match['id']}/replay/")["frames"][2]["happenings"][0]
    challenger, other = names[over["round_challenger"]], names[1 - over["round_challenger"]]
    assert over["bidder"] == over["round_challenger"] == over["round_loser"]

    for viewport, label in ((None, "desktop"), (PHONE, "phone")):
        page = new_page(browser, **({"viewport": viewport} if viewport else {}))
        page.goto(f"{arena.url}/matches/{match['id']}/")
        expect(page.locator("#replay-pos")).to_have_text(re.compile(r"Step \d+ of \d+"))
        page.get_by_role("slider", name="Replay step").fill("2")
        moves = page.get_by_test_id("step-moves")
        expect(moves).to_contain_text(f"{challenger}: challenged {challenger}'s own bid of 2 ×")
        expect(moves).to_contain_text(f"{other}: bid 2 ×")
        expect(moves).to_contain_text(f"(not placed: {challenger}'s challenge ended the round)")
        outcome = page.get_by_test_id("last-round").locator(".outcome")
        expect(outcome).to_contain_text(f"{challenger} challenged {challenger}'s own bid of 2 ×")
        expect(page.get_by_test_id("unverified")).to_contain_text(f"{names[0]}, {names[1]} unverified")
        assert "unverified" not in moves.inner_text() + outcome.inner_text()
        expect(outcome).to_contain_text(f"{challenger} loses a die.")
        assert "their own" not in outcome.text_content()
        page.screenshot(path=f"/tmp/ld-own-bid-{label}.png", full_page=True)
        assert page.errors == [], page.errors
        page.context.close()


def test_a_person_facing_a_bid_past_the_table_is_told_to_challenge_it(arena, browser):  # noqa: F811
    """A bot bids 5 of a face with two dice on the table (a raise, as for the reference): the
    person on turn reads that it is certainly false and can only challenge, and wins the round."""
    page = new_page(browser, viewport=PHONE)
    page.goto(arena.url + "/tables/new/liars_dice/")
    page.get_by_label("Your nickname").fill("Dee")
    page.get_by_label("Dice per player").fill("1")
    page.get_by_label("Seat 1").select_option("me")
    page.get_by_label("Seat 2").select_option("open_bot")
    page.get_by_role("button", name="Create table").click()
    match_id = int(re.search(r"/matches/(\d+)/", page.url).group(1))
    bot = LDBot(arena.liars_dice_port, "Eve", past_the_table)
    page.locator(".board .players").wait_for()
    actions = page.locator("#actions")
    # Whoever starts: the person opens with the lowest bid when on turn, then the bot raises.
    opening = actions.get_by_text("Your turn. Open the round with a bid.")
    facing = actions.get_by_text("That bid is more than the 2 dice on the table: challenge it.")
    expect(opening.or_(facing)).to_be_visible(timeout=15_000)
    if opening.is_visible():
        actions.locator("button.bid").click()
    expect(facing).to_be_visible(timeout=15_000)
    expect(page.locator(".bids .past-table")).to_have_text("More than the 2 dice on the table: certainly false.")
    expect(page.locator(".match-head .config")).to_contain_text("2 players · 1 die each")
    page.screenshot(path="/tmp/ld-past-table-phone.png", full_page=True)
    actions.get_by_role("button", name=re.compile("Challenge")).click()
    expect(page.get_by_test_id("last-round").locator(".outcome")).to_contain_text(
        "the bid was more than the 2 dice on the table")
    page.screenshot(path="/tmp/ld-past-table-outcome-phone.png", full_page=True)
    match = finished(arena, match_id)
    assert match["result"]["winner"] == 0, "the challenger of a certainly false bid wins"
    assert not any(e["forced"] for e in match["events"])
    assert page.errors == [], page.errors
    bot.close()
