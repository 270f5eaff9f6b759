"""A registered bot's page (/bots/<id>/): results against each opponent (won/drawn/lost and the
mean score difference with its 95% interval), its rating over time (the chart's JSON is the
RatingChange sequence; Chart.js comes from our own /static/), forced-move details for its
owner only, and, in a real browser against the real server, the chart drawn."""
from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import pytest
from django.test import Client

from games.arena.models import Rating, RatingChange, RegisteredBot
from tests.finished_matches import played
from tests.browser_util import browser, new_page  # noqa: F401  (browser: the fixture)

ROOT = Path(__file__).resolve().parent.parent
SECRET_DETAIL = "your dice were [4, 4, 6]: the bid 9x6 is impossible"


@pytest.fixture
def world(db, django_user_model):
    """Bot ``a`` (owned by "owner") against bot ``b`` three times (3:1, 1:3, 2:0), the random
    bot once (2:2) and a guest once (0:3, unrated); a forced move with a secret detail."""
    owner = django_user_model.objects.create_user("owner", password="pw-owner-1")
    other = django_user_model.objects.create_user("other", password="pw-other-1")
    a = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="alpha", key_hash="h-a")
    b = RegisteredBot.objects.create(owner=other, game="liars_dice", name="bravo", key_hash="h-b")
    cfg = {"players": 2}
    played("liars_dice", cfg, [a, b], {"scores": [3, 1], "winner": 0},
           [(0, False, "", "", 120.0), (1, False, "", "", 50.0),
            (0, True, "no reply within 5 s", SECRET_DETAIL, None)])
    played("liars_dice", cfg, [b, a], {"scores": [3, 1], "winner": 0}, [(1, False, "", "", 80.0)])
    played("liars_dice", cfg, [a, b], {"scores": [2, 0], "winner": 0},
           [(0, True, "not a legal bid: 0x7", "the bid 0x7 has no dice", None)])
    played("liars_dice", cfg, [("builtin", "random"), a], {"scores": [2, 2], "winner": None})
    played("liars_dice", cfg, [a, "guest"], {"scores": [0, 3], "winner": 1})
    return {"a": a, "b": b, "owner": owner, "other": other}


def page_of(bot, user=None) -> str:
    web = Client()
    if user is not None:
        web.force_login(user)
    response = web.get(f"/bots/{bot.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def cells(html: str, opponent_key: str) -> list[str]:
    row = re.search(rf'<tr data-opponent="{re.escape(opponent_key)}">(.*?)</tr>', html, re.S)
    assert row, f"no row for {opponent_key}"
    return [re.sub(r"<[^>]+>|\s+", " ", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_results_against_each_opponent(world):
    html = page_of(world["a"])
    diffs = [2, -2, 2]
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(3)
    bravo = cells(html, f"bot:{world['b'].pk}")
    assert bravo[0].startswith("bravo") and bravo[1:5] == ["3", "2", "0", "1"]
    assert bravo[5] == f"{statistics.fmean(diffs):.2f} ± {half:.2f}"
    assert cells(html, "builtin:random")[1:6] == ["1", "0", "1", "0", "0.00 ± –"]
    # unrated (a guest sat there): decided by the result
    assert cells(html, "guest:Guest Gina")[1:6] == ["1", "0", "0", "1", "-3.00 ± –"]
    assert f'href="/bots/{world["b"].pk}/"' in html
    assert "Over its 5 finished matches" in html


def test_the_owner_sees_forced_move_details_and_others_do_not(world, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    for who in (world["owner"], staff):
        html = page_of(world["a"], who)
        assert SECRET_DETAIL in html and "no reply within 5 s" in html
    for who in (None, world["other"]):
        html = page_of(world["a"], who)
        assert "no reply within 5 s" in html and "not a legal bid: 0x7" in html
        assert SECRET_DETAIL not in html and "has no dice" not in html
    html = page_of(world["a"])
    assert re.search(r'data-testid="timeouts">1<', html)  # the "no reply", not the illegal bid
    # its own non-forced answers only: 120 and 80 ms (50 ms was bravo's)
    assert "Think time <b>100 ms</b>" in html


def test_the_chart_data_is_the_rating_change_sequence(world):
    html = page_of(world["a"])
    data = json.loads(re.search(r'<script id="rating-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    rating = Rating.objects.get(game="liars_dice", subject=f"bot:{world['a'].pk}")
    changes = list(RatingChange.objects.filter(rating=rating).order_by("match__finished_at", "match_id"))
    assert len(changes) == 4  # the match with the guest is not rated
    assert [p["match"] for p in data] == [c.match_id for c in changes]
    assert [p["mu"] for p in data] == pytest.approx([c.mu_after for c in changes], abs=1e-4)
    assert [p["sigma"] for p in data] == pytest.approx([c.sigma_after for c in changes], abs=1e-4)
    assert [p["ordinal"] for p in data] == pytest.approx([c.mu_after - 3 * c.sigma_after for c in changes], abs=1e-4)
    assert f"{rating.mu:.2f} ± {rating.sigma:.2f}" in html
    # the numbers are in a table too
    assert html.count('<td class="num">') >= 3 * len(changes)


def test_chart_js_comes_from_our_static_files(world):
    html = page_of(world["a"])
    sources = re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)
    assert "/static/vendor/chartjs/chart.umd.js" in sources and "/static/arena/rating_chart.js" in sources
    assert not [s for s in sources if re.match(r"(https?:)?//", s)]
    assert (ROOT / "node_modules" / "chart.js" / "dist" / "chart.umd.js").exists(), "run scripts/setup.sh (npm ci)"
    from django.contrib.staticfiles import finders
    assert finders.find("vendor/chartjs/chart.umd.js")


def test_a_bot_without_rated_matches_says_so(db, django_user_model):
    owner = django_user_model.objects.create_user("lonely", password="pw-lonely-1")
    bot = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="newbie", key_hash="h-n")
    html = page_of(bot)
    assert 'data-testid="no-rating-chart"' in html and "rating-data" not in html and "chart.umd.js" not in html
    assert "Not rated yet" in html and "It has not played yet" in html
    assert Client().get("/bots/999999/").status_code == 404


def test_leaderboard_and_bots_page_link_to_the_bot_page(world):
    bot = world["a"]
    assert f'href="/bots/{bot.pk}/"' in Client().get("/leaderboard/liars_dice/").content.decode()
    assert f'href="/bots/{bot.pk}/"' in Client().get("/bots/").content.decode()


# ---- In a real browser, against the real server ------------------------------------------

SETUP_SCRIPT = """
from django.contrib.auth import get_user_model
from games.arena.models import RegisteredBot
from tests.finished_matches import played
owner = get_user_model().objects.create_user("charter", password="pw-charter-1")
bot = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="charted", key_hash="h-charted")
for scores in [[3, 1], [1, 3], [3, 0], [3, 2], [2, 3], [3, 1]]:
    played("liars_dice", {"players": 2}, [bot, ("builtin", "random")],
           {"scores": scores, "winner": 0 if scores[0] > scores[1] else 1})
rival = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="a-rival-with-a-rather-long-name", key_hash="h-rival")
for scores in [[2, 3], [3, 1], [3, 2]]:
    played("liars_dice", {"players": 2}, [bot, rival], {"scores": scores, "winner": 0 if scores[0] > scores[1] else 1},
           [(0, False, "", "", 35.5),
            (0, True, "no reply within 5 s", "no reply within 5 s: the bot's connection was open but it sent nothing", None)])
print("BOT", bot.pk)
"""


@pytest.mark.browser
def test_the_chart_is_drawn_in_a_browser(arena_factory, browser, tmp_path):
    arena = arena_factory()
    printed = arena.shell(SETUP_SCRIPT)
    bot_id = int(re.search(r"BOT (\d+)", printed).group(1))
    shots = tmp_path  # screenshots to look at, never in the repository
    for width, height in ((1280, 800), (390, 844)):
        page = new_page(browser, viewport={"width": width, "height": height})
        page.goto(f"{arena.url}/bots/{bot_id}/")
        page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('rating-chart'))")
        drawn = page.evaluate("""() => {
            const chart = Chart.getChart(document.getElementById('rating-chart'));
            const canvas = chart.canvas;
            const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            let inked = 0;
            for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) inked++;
            return {points: chart.data.datasets.map(d => d.data.length), mu: chart.data.datasets[0].data,
                    width: canvas.clientWidth, inked};
        }""")
        assert drawn["points"] == [9, 9]
        assert drawn["inked"] > 1000 and 0 < drawn["width"] <= width
        page.screenshot(path=str(shots / f"bot-page-{width}.png"), full_page=True)
        assert page.errors == []
        page.context.close()


def test_a_rating_reads_the_same_on_the_bot_page_the_leaderboard_and_the_owners_page(world):
    """22.3649 is 22.36 everywhere (rounding it to 22.365 first, as the leaderboard's row did,
    made the leaderboard say 22.37)."""
    bot, owner = world["a"], world["owner"]
    Rating.objects.filter(registered_bot=bot).update(mu=22.3649, sigma=1.2349)
    RatingChange.objects.filter(rating__registered_bot=bot).update(mu_after=22.3649, sigma_after=1.2349)
    played("liars_dice", {"players": 2}, [("user", owner), ("builtin", "random")], {"scores": [2, 0], "winner": 0})
    Rating.objects.filter(user=owner).update(mu=22.3649, sigma=1.2349)
    ordinal = f"{22.3649 - 3 * 1.2349:.2f}"  # 18.66 (18.6602)
    for url, name in ((f"/bots/{bot.pk}/", "bot page"), ("/leaderboard/liars_dice/", "leaderboard"),
                      ("/people/owner/", "person page")):
        text = re.sub(r"<[^>]+>|\s+", " ", Client().get(url).content.decode())
        assert "22.36 ± 1.23" in text and "22.37" not in text and "1.24" not in text, name
        assert ordinal in text, name
