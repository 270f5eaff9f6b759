"""The leaderboard and a person's page in a real browser against the real server, on a desktop
and on a 390 px wide phone: rows in the order of μ − 3σ, the people/bots filter, a person's
name followed to their page with the rating chart drawn, and their own page reached from the
header's "My page" after logging in; nothing wider than the screen.  Screenshots go to the
test's temporary directory (and, when ``ARENA_SHOTS`` names a directory, there too)."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.browser_util import DESKTOP, PHONE, browser, new_page  # noqa: F401  (browser: the fixture)

LONG_NAME = "a-person-with-a-rather-long-username-2026"
PASSWORD = "pw-player-1234"

#: Liar's Dice matches between two people, two registered bots and the built-in bots, each
#: finished (and rated) as a real one: ria plays well, the long-named person badly.
SETUP_SCRIPT = f"""
from django.contrib.auth import get_user_model
from games.arena.models import RegisteredBot
from tests.finished_matches import played
User = get_user_model()
ria = User.objects.create_user("ria", password="{PASSWORD}")
long = User.objects.create_user("{LONG_NAME}", password="{PASSWORD}")
owner = User.objects.create_user("owner", password="{PASSWORD}")
alpha = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="alpha", key_hash="h-alpha")
beta = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="beta-with-a-long-bot-name", key_hash="h-beta")
def game(a, b, scores, events=()):
    played("liars_dice", {{"players": 2}}, [a, b], {{"scores": scores, "winner": 0 if scores[0] > scores[1] else 1}}, events)
for scores in ([3, 1], [3, 0], [1, 3], [3, 2]):
    game(("user", ria), alpha, scores, [(0, False, "", "", 900.0),
         (0, True, "no move within 60 s", "ria's dice were [1, 1, 6]: nobody answered for her", None)])
for scores in ([3, 1], [3, 2], [2, 3]):
    game(("user", ria), ("builtin", "random"), scores)
for scores in ([0, 3], [1, 3], [3, 2]):
    game(("user", long), beta, scores)
for scores in ([3, 0], [3, 1]):
    game(alpha, ("builtin", "probability"), scores)
    game(("user", ria), ("user", long), scores)
"""


def rows_of(page) -> list[dict]:
    """The leaderboard's rows as shown: name, kind, μ − 3σ, and the link on the name."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid=leaderboard] tbody tr')]
        .filter(tr => tr.cells.length > 1).map(tr => ({
            name: tr.querySelector('.name').textContent.trim(),
            kind: tr.querySelector('.tag').textContent.trim(),
            ordinal: parseFloat(tr.cells[2].querySelector('b').textContent),
            href: tr.querySelector('a') ? tr.querySelector('a').getAttribute('href') : null}))""")


def fits(page) -> bool:
    """Nothing makes the page wider than the window (no sideways scrolling)."""
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def chart_ink(page, canvas_id="rating-chart") -> dict:
    """The Chart.js chart on canvas ``canvas_id``: points per dataset, the first dataset's
    values, its width on screen and how many of its pixels are drawn."""
    page.wait_for_function(f"() => window.Chart && Chart.getChart(document.getElementById('{canvas_id}'))")
    return page.evaluate("""(id) => {
        const chart = Chart.getChart(document.getElementById(id));
        const canvas = chart.canvas;
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let inked = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) inked++;
        return {points: chart.data.datasets.map(d => d.data.length), values: chart.data.datasets[0].data,
                labels: chart.data.labels, width: canvas.clientWidth, inked};
    }""", canvas_id)


@pytest.mark.browser
def test_the_leaderboard_and_a_persons_page_in_a_browser(arena_factory, browser, tmp_path):
    arena = arena_factory()
    printed = arena.shell(SETUP_SCRIPT)
    shots = tmp_path  # screenshots to look at, never in the repository
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = new_page(browser, viewport=viewport)
        page.goto(f"{arena.url}/leaderboard/liars_dice/")
        everyone = rows_of(page)
        api = json.loads(page.context.request.get(f"{arena.url}/api/leaderboard/liars_dice/").text())["results"]
        assert [r["name"] for r in everyone] == [r["name"] for r in api]
        ordinals = [r["ordinal"] for r in everyone]
        assert ordinals == sorted(ordinals, reverse=True) and len(everyone) == 6
        assert {r["kind"] for r in everyone} == {"person", "bot", "built-in bot"}
        for row in everyone:  # people and registered bots link to their pages, built-in bots to none
            expected = {"person": f"/people/{row['name']}/", "bot": "/bots/"}.get(row["kind"])
            assert (row["href"] or "").startswith(expected) if expected else row["href"] is None
        assert fits(page), "the leaderboard is wider than the screen"
        page.screenshot(path=str(shots / f"leaderboard-{label}.png"), full_page=True)

        page.select_option("select[name=who]", "people")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url(re.compile(r"who=people"))
        people = rows_of(page)
        assert [r["name"] for r in people] == [r["name"] for r in everyone if r["kind"] == "person"] == ["ria", LONG_NAME]
        page.screenshot(path=str(shots / f"leaderboard-people-{label}.png"), full_page=True)
        page.select_option("select[name=who]", "bots")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url(re.compile(r"who=bots"))
        assert [r["name"] for r in rows_of(page)] == [r["name"] for r in everyone if r["kind"] != "person"]

        # A person's name, followed to their page: the chart drawn, nothing wider than the screen.
        page.goto(f"{arena.url}/leaderboard/liars_dice/?who=people")
        page.get_by_role("link", name=LONG_NAME).click()
        page.wait_for_url(f"{arena.url}/people/{LONG_NAME}/")
        drawn = chart_ink(page)
        assert drawn["points"] == [5, 5] and drawn["inked"] > 1000 and 0 < drawn["width"] <= viewport["width"]
        assert page.get_by_test_id("game-tabs").get_by_role("link").all_text_contents() == ["Liar's Dice 5"]
        assert fits(page), "the person's page is wider than the screen"
        page.screenshot(path=str(shots / f"person-{label}.png"), full_page=True)
        # the pairing with ria, from the head-to-head table
        page.locator("[data-testid=head-to-head] tr", has_text="ria").get_by_role("link", name="2").click()
        assert page.get_by_test_id("pairing-matches").locator("tbody tr").count() == 2
        bars = chart_ink(page, "pairing-chart")  # how often each score difference came up: -3 once, -2 once
        assert (bars["labels"], bars["values"]) == (["-3", "-2"], [1, 1]) and bars["inked"] > 500
        assert fits(page)
        page.get_by_test_id("pairing").screenshot(path=str(shots / f"person-pairing-{label}.png"))

        # Ria logs in and opens her own page from the header: the forced move's detail is hers to see.
        page.goto(f"{arena.url}/accounts/login/")
        page.fill("input[name=username]", "ria")
        page.fill("input[name=password]", PASSWORD)
        page.locator("main").get_by_role("button", name="Log in").click()
        page.get_by_test_id("my-page").click()
        page.wait_for_url(f"{arena.url}/people/ria/")
        assert chart_ink(page)["points"] == [9, 9]
        assert "nobody answered for her" in page.get_by_test_id("forced-moves").inner_text()
        assert fits(page), "ria's own page is wider than the screen"
        page.screenshot(path=str(shots / f"person-own-{label}.png"), full_page=True)
        assert page.errors == []
        page.context.close()
    wanted = os.environ.get("ARENA_SHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        for shot in shots.glob("*.png"):
            shutil.copy(shot, Path(wanted) / shot.name)
