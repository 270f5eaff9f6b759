"""A person's page (/people/<username>/): for the game chosen with ?game= (by default the game of
their latest match), results against each opponent (won/drawn/lost and the mean score difference
with its 95% interval), one pairing's matches, the rating over time (the chart's JSON is the
RatingChange sequence), recent matches and forced moves (details for the person and staff only);
their rating in every game they played, with a tab per game; and the links to it from the
leaderboard, the bot pages' opponent lists and the header."""
from __future__ import annotations

import html as entities
import json
import math
import re
import statistics

import pytest
from django.test import Client

from games.arena.models import Rating, RatingChange, RegisteredBot
from tests.finished_matches import played

pytestmark = pytest.mark.django_db

SECRET_DETAIL = "ria held [2, 5, 5]: she let the clock run out"
SAM = "sam.k+1@home"  # a username with the characters Django allows besides letters and digits


@pytest.fixture
def world(django_user_model):
    """Ria against the bot bravo three times (3:1 won, 1:3 lost, 2:0 won), against Sam once
    (1:3 lost), against a guest once (3:0, unrated), with a forced move whose detail is hers;
    a Hanabi game with Sam, then (her latest) a Blokus game won against the heuristic bot."""
    ria = django_user_model.objects.create_user("ria", password="pw-ria-123")
    sam = django_user_model.objects.create_user(SAM, password="pw-sam-123")
    bob = django_user_model.objects.create_user("bob", password="pw-bob-123")
    bravo = RegisteredBot.objects.create(owner=bob, game="liars_dice", name="bravo", key_hash="h-bravo")
    cfg = {"players": 2}
    played("liars_dice", cfg, [("user", ria), bravo], {"scores": [3, 1], "winner": 0},
           [(0, False, "", "", 300.0), (1, False, "", "", 20.0),
            (0, True, "no move within 60 s", SECRET_DETAIL, None)])
    played("liars_dice", cfg, [bravo, ("user", ria)], {"scores": [3, 1], "winner": 0}, [(1, False, "", "", 500.0)])
    played("liars_dice", cfg, [("user", ria), bravo], {"scores": [2, 0], "winner": 0})
    played("liars_dice", cfg, [("user", ria), ("user", sam)], {"scores": [1, 3], "winner": 1},
           [(1, True, "no move within 60 s", "sam's own secret", None)])
    played("liars_dice", cfg, [("user", ria), "guest"], {"scores": [3, 0], "winner": 0})
    played("hanabi", {"players": 2}, [("user", ria), ("user", sam)], {"scores": [18.0, 18.0], "winner": None, "score": 18})
    played("blokus", {"variant": "2021"}, [("user", ria), ("builtin", "heuristic")],
           {"scores": [60, 40], "win_points": [2, 0], "winner": 0, "causes": ["REGULAR", "REGULAR"]})
    return {"ria": ria, "sam": sam, "bob": bob, "bravo": bravo}


def page(path: str, user=None, status: int = 200) -> str:
    web = Client()
    if user is not None:
        web.force_login(user)
    response = web.get(path)
    assert response.status_code == status
    return response.content.decode()


def text(fragment: str) -> str:
    return re.sub(r"\s+", " ", entities.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def cells(html: str, row_attribute: str) -> list[str]:
    row = re.search(rf'<tr {re.escape(row_attribute)}[^>]*>(.*?)</tr>', html, re.S)
    assert row, f"no row {row_attribute}"
    return [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def by_testid(html: str, name: str) -> str:
    found = re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>(.*?)</\1>', html, re.S)
    assert found, f"no {name}"
    return found.group(2)


def test_results_against_each_opponent(world):
    html = page("/people/ria/?game=liars_dice")
    bravo = cells(html, f'data-opponent="bot:{world["bravo"].pk}"')
    diffs = [2, -2, 2]
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(3)
    assert bravo[0].startswith("bravo") and bravo[1:5] == ["3", "2", "0", "1"]
    assert bravo[5] == f"{statistics.fmean(diffs):.2f} ± {half:.2f}"
    assert cells(html, f'data-opponent="user:{world["sam"].pk}"')[1:6] == ["1", "0", "0", "1", "-2.00 ± –"]
    assert cells(html, 'data-opponent="guest:Guest Gina"')[1:6] == ["1", "1", "0", "0", "3.00 ± –"]
    assert "Over their 5 finished matches" in html
    # the opponents' own pages: the bot's and the other person's
    assert f'href="/bots/{world["bravo"].pk}/"' in html and 'href="/people/sam.k+1@home/"' in html
    # her own answers only: 300 and 500 ms (20 ms was bravo's)
    assert "Think time <b>400 ms</b>" in html and re.search(r'data-testid="timeouts">1<', html)


def test_one_pairing_history(world):
    bravo = world["bravo"]
    html = page(f"/people/ria/?game=liars_dice&opponent=bot%3A{bravo.pk}")
    pairing = by_testid(html, "pairing-matches")
    rows = [[text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr>(.*?)</tr>", pairing.split("</thead>")[1], re.S)]
    # newest first: 2:0 won, 1:3 lost (she sat second), 3:1 won
    assert [r[1:4] for r in rows] == [["won rated", "2 : 0", "2"], ["lost rated", "1 : 3", "-2"],
                                      ["won rated", "3 : 1", "2"]]
    assert "Against bravo" in text(html)
    # the distribution of the differences, for the chart: -2 once, +2 twice (the range between kept)
    bars = json.loads(re.search(r'<script id="pairing-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert bars == [{"label": f"{d:+d}" if d else "0", "count": {-2: 1, 2: 2}.get(d, 0)} for d in range(-2, 3)]
    # the head-to-head counts link to it, keeping the game
    assert f'href="?game=liars_dice&amp;opponent=bot%3A{bravo.pk}#pairing"' in html
    assert "No finished match against this opponent" in page("/people/ria/?game=liars_dice&opponent=bot%3A999")


def test_game_tabs_default_to_the_latest_game(world):
    html = page("/people/ria/")
    tabs = by_testid(html, "game-tabs")
    assert re.findall(r'href="\?game=([\w-]+)"', tabs) == ["liars_dice", "blokus", "hanabi"]  # registry order
    assert re.search(r'href="\?game=blokus" aria-current="page"', tabs), "her latest match was Blokus"
    assert text(by_testid(html, "game-title")) == "Blokus"
    assert "heuristic" in by_testid(html, "head-to-head")
    chosen = page("/people/ria/?game=liars_dice")
    assert re.search(r'href="\?game=liars_dice" aria-current="page"', by_testid(chosen, "game-tabs"))
    assert text(by_testid(chosen, "game-title")) == "Liar's Dice"
    hanabi = page("/people/ria/?game=hanabi")
    assert "Hanabi is cooperative: nobody is rated" in hanabi and "rating-data" not in hanabi
    assert "Results with each partner" in hanabi
    assert cells(hanabi, f'data-opponent="user:{world["sam"].pk}"')[1:6] == ["1", "0", "1", "0", "0.00 ± –"]
    assert "chart.umd.js" not in hanabi
    # a game she has not played, and one that does not exist: said, and her latest game shown
    for asked, said in (("jass", "has not played Jass"), ("chess", "has not played “chess”")):
        html = page(f"/people/ria/?game={asked}")
        assert said in text(by_testid(html, "notice")) and text(by_testid(html, "game-title")) == "Blokus"


def test_rating_in_every_game(world):
    html = page("/people/ria/")
    table = by_testid(html, "person-ratings")
    ria = world["ria"]
    for game, title in (("liars_dice", "Liar's Dice"), ("blokus", "Blokus")):
        rating = Rating.objects.get(game=game, subject=f"user:{ria.pk}")
        row = cells(table, f'data-game="{game}"')
        assert row[0] == f"{title} leaderboard"
        assert row[1:] == [f"{rating.mu:.2f} ± {rating.sigma:.2f}", f"{rating.mu - 3 * rating.sigma:.2f}",
                           str(rating.matches), f"{round(100 * rating.wins / rating.matches)}%"]
        assert f'href="/leaderboard/{game}/"' in table
    assert cells(table, 'data-game="liars_dice"')[3:] == ["4", "50%"]  # the match with the guest is not rated
    assert cells(table, 'data-game="hanabi"')[1].startswith("Cooperative: nobody is rated (1 match played)")
    assert 'href="/leaderboard/hanabi/"' not in table


def test_the_chart_data_is_her_rating_change_sequence(world):
    html = page("/people/ria/?game=liars_dice")
    data = json.loads(re.search(r'<script id="rating-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    changes = list(RatingChange.objects.filter(rating__game="liars_dice", rating__subject=f"user:{world['ria'].pk}")
                   .order_by("match__finished_at", "match_id"))
    assert len(changes) == 4
    assert [p["match"] for p in data] == [c.match_id for c in changes]
    assert [p["ordinal"] for p in data] == pytest.approx([c.mu_after - 3 * c.sigma_after for c in changes], abs=1e-4)
    assert "/static/vendor/chartjs/chart.umd.js" in html and "/static/arena/rating_chart.js" in html


def test_forced_move_details_for_the_person_and_staff_only(world, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    for who in (world["ria"], staff):
        html = page("/people/ria/?game=liars_dice", who)
        assert SECRET_DETAIL in html and "no move within 60 s" in html
        assert "sam&#x27;s own secret" not in html and "sam's own secret" not in html  # Sam's, at his seat
    for who in (None, world["sam"], world["bob"]):
        html = page("/people/ria/?game=liars_dice", who)
        assert "no move within 60 s" in html and SECRET_DETAIL not in html and 'data-testid="forced-detail"' not in html
        assert "Only ria sees the full details." in html


def test_a_persons_page_speaks_of_moves_made_for_them_not_of_forced_moves(world, django_user_model):
    mine = text(page("/people/ria/?game=liars_dice", world["ria"]))
    assert "Moves made for you 1" in mine and "when your time runs out" in mine
    assert "mean over the 2 moves you made" in mine
    theirs = text(page("/people/ria/?game=liars_dice"))
    assert "Moves made for them 1" in theirs and "mean over the 2 moves they made" in theirs
    for words in (mine, theirs):
        assert "forced" not in words.lower() and "answer it could not accept" not in words
    punctual = django_user_model.objects.create_user("punctual", password="pw-punct-1")
    played("liars_dice", {"players": 2}, [("user", punctual), ("builtin", "random")], {"scores": [2, 0], "winner": 0},
           [(0, False, "", "", 100.0)])
    assert "No move was made for them: they always moved in time." in text(page("/people/punctual/"))


def test_unknown_people_and_people_who_never_played(world, django_user_model):
    page("/people/nobody/", status=404)
    page("/people/ria/extra/", status=404)
    newcomer = django_user_model.objects.create_user("newcomer", password="pw-new-123")
    html = page("/people/newcomer/")
    assert "newcomer has not played a match yet" in text(html)
    assert 'data-testid="head-to-head"' not in html and "rating-data" not in html
    assert "You have not played a match yet" in text(page("/people/newcomer/", newcomer))


def test_the_leaderboard_links_people_to_their_page_and_the_api_is_unchanged(world):
    for who in ("", "?who=people"):
        html = page(f"/leaderboard/liars_dice/{who}")
        assert 'href="/people/ria/"' in html and 'href="/people/sam.k+1@home/"' in html
    assert f'href="/bots/{world["bravo"].pk}/"' in page("/leaderboard/liars_dice/")
    body = Client().get("/api/leaderboard/liars_dice/").json()
    row = next(r for r in body["results"] if r["name"] == "ria")
    assert set(row) == {"name", "kind", "mu", "sigma", "ordinal", "matches", "win_rate", "last_seen", "bot_id"}
    assert row["kind"] == "person"


def test_bot_pages_and_the_header_link_to_a_persons_page(world):
    html = page(f"/bots/{world['bravo'].pk}/")
    assert cells(html, f'data-opponent="user:{world["ria"].pk}"')[1:5] == ["3", "1", "0", "2"]
    assert html.count('href="/people/ria/"') >= 1 + 3  # head-to-head, and each recent match
    mine = page("/", world["ria"])
    assert re.search(r'<a href="/people/ria/"[^>]*>My page</a>', mine)
    assert "My page" not in page("/")
    # a bot's owner is a person too: their page names their bots, the bot's page links to it
    assert 'href="/people/bob/"' in html
    assert f'<a href="/bots/{world["bravo"].pk}/">bravo</a>' in by_testid(page("/people/bob/"), "their-bots")
    # the other person's page, reached from Ria's opponent list, lists her with a link back
    sams = page("/people/sam.k+1@home/?game=liars_dice")
    assert cells(sams, f'data-opponent="user:{world["ria"].pk}"')[1:5] == ["1", "1", "0", "0"]
    assert 'href="/people/ria/"' in sams
