"""Ratings: a finished match updates its identities' openskill ratings in the transaction that
stores its result, exactly as openskill's own Plackett–Luce rates the same teams and ranks;
partners are rated as a team, several players by rank, Blokus by who won; guests, unverified
bots, copies of one bot, imported and cooperative games are not rated; the anchor keeps its
values; recomputing from the finished matches gives exactly the same numbers; the leaderboard
sorts by the conservative estimate and Hanabi shows score statistics."""
from __future__ import annotations

import random

import pytest
from django.core.management import call_command
from openskill.models import PlackettLuce

from games.arena.models import Rating, RatingChange, RegisteredBot
from tests.finished_matches import played

pytestmark = pytest.mark.django_db
MODEL = PlackettLuce(mu=25.0, sigma=25.0 / 3)


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("owner", password="pw-owner-1")


def bot(owner, game: str, name: str) -> RegisteredBot:
    return RegisteredBot.objects.create(owner=owner, game=game, name=name, key_hash=f"h-{game}-{name}")


def values(game: str) -> dict:
    return {r.subject: (r.mu, r.sigma, r.matches, r.wins) for r in Rating.objects.filter(game=game)}


def test_a_multiplayer_match_is_rated_by_rank_as_openskill_rates_it(owner):
    a, b, c = (bot(owner, "liars_dice", n) for n in "abc")
    played("liars_dice", {"players": 3}, [a, b, c], {"scores": [1, 3, 1], "winner": 1})
    expected = MODEL.rate([[MODEL.rating()], [MODEL.rating()], [MODEL.rating()]], ranks=[2, 1, 2])
    got = values("liars_dice")
    for who, team in zip((a, b, c), expected):
        mu, sigma, matches, wins = got[f"bot:{who.pk}"]
        assert (mu, sigma) == pytest.approx((team[0].mu, team[0].sigma), abs=1e-12)
        assert matches == 1
    assert got[f"bot:{b.pk}"][3] == 1 and got[f"bot:{a.pk}"][3] == 0
    assert RatingChange.objects.count() == 3


def test_partners_are_rated_as_a_team(owner):
    north, east, south, west = (bot(owner, "jass", n) for n in ("N", "E", "S", "W"))
    played("jass", {}, [north, east, south, west], {"scores": [1000, 800, 1000, 800], "winner": 0,
                                                     "winners": [0, 2], "team_points": [1000, 800]})
    expected = MODEL.rate([[MODEL.rating(), MODEL.rating()], [MODEL.rating(), MODEL.rating()]], ranks=[1, 2])
    got = values("jass")
    assert got[f"bot:{north.pk}"][:2] == pytest.approx((expected[0][0].mu, expected[0][0].sigma))
    assert got[f"bot:{south.pk}"][:2] == got[f"bot:{north.pk}"][:2]
    assert got[f"bot:{east.pk}"][:2] == pytest.approx((expected[1][0].mu, expected[1][0].sigma))


def test_blokus_is_rated_by_who_won_also_when_a_forfeit_beat_the_points(owner):
    one, two = bot(owner, "blokus", "one"), bot(owner, "blokus", "two")
    played("blokus", {"variant": "2021"}, [one, two],
           {"scores": [80, 20], "win_points": [0, 2], "winner": 1, "causes": ["RULE_VIOLATION", "REGULAR"]})
    got = values("blokus")
    assert got[f"bot:{two.pk}"][0] > 25 > got[f"bot:{one.pk}"][0]


def test_who_is_not_rated_and_the_anchor_that_never_moves(owner, django_user_model):
    a, b = bot(owner, "liars_dice", "a"), bot(owner, "liars_dice", "b")
    person = django_user_model.objects.create_user("pat", password="pw-pat-12")
    result = {"scores": [2, 1], "winner": 0}
    for seats in ([a, "guest"], [a, "unverified"], [a, a]):
        played("liars_dice", {"players": 2}, seats, result)
    played("liars_dice", {"players": 2}, [a, b], result, imported=True)
    played("hanabi", {"players": 2}, [a, b], {"scores": [20.0, 20.0], "winner": None, "score": 20})
    assert not Rating.objects.exists()
    for _ in range(5):
        played("liars_dice", {"players": 2}, [("user", person), ("builtin", "random")], result)
    got = values("liars_dice")
    assert got["builtin:random"][:2] == (25.0, 25.0 / 3), "the anchor keeps its values"
    assert got["builtin:random"][2] == 5 and got[f"user:{person.pk}"][3] == 5
    assert got[f"user:{person.pk}"][0] > 25


def test_recomputing_from_the_finished_matches_gives_exactly_the_same_numbers(owner, django_user_model):
    rng = random.Random(7)
    bots = [bot(owner, "liars_dice", f"b{i}") for i in range(6)]
    people = [django_user_model.objects.create_user(f"p{i}", password="pw-12345") for i in range(2)]
    pool = bots + [("user", p) for p in people] + [("builtin", "random"), ("builtin", "probability")]
    for _ in range(60):
        seats = rng.sample(pool, rng.randint(2, 4))
        scores = [rng.randint(0, 3) for _ in seats]
        played("liars_dice", {"players": len(seats)}, seats, {"scores": scores, "winner": None})
    incremental = values("liars_dice")
    changes = RatingChange.objects.count()
    call_command("recompute_ratings", "--game", "liars_dice")
    assert values("liars_dice") == incremental, "exactly, not approximately"
    assert RatingChange.objects.count() == changes


def test_the_leaderboard_sorts_by_the_conservative_estimate_and_hanabi_shows_scores(owner, client):
    strong, weak = bot(owner, "liars_dice", "Strong"), bot(owner, "liars_dice", "Weak")
    for _ in range(4):
        played("liars_dice", {"players": 2}, [strong, weak], {"scores": [3, 0], "winner": 0})
    page = client.get("/leaderboard/liars_dice/").content.decode()
    assert page.index("Strong") < page.index("Weak")
    assert "Nobody rated yet" in client.get("/leaderboard/liars_dice/?who=people").content.decode()
    for score in (18, 22):
        played("hanabi", {"players": 3}, ["guest", "guest", "guest"], {"scores": [score] * 3, "score": score})
    hanabi = client.get("/leaderboard/hanabi/").content.decode()
    assert "<td>3</td><td>2</td><td>20.0</td>" in hanabi.replace("\n", "").replace("        ", "")


def test_the_leaderboard_api_pages_and_filters_as_the_page_does(owner, client, django_user_model):
    a, b = bot(owner, "liars_dice", "A"), bot(owner, "liars_dice", "B")
    person = django_user_model.objects.create_user("ria", password="pw-ria-123")
    played("liars_dice", {"players": 3}, [a, b, ("user", person)], {"scores": [2, 1, 0], "winner": 0})
    body = client.get("/api/leaderboard/liars_dice/").json()
    assert body["count"] == 3 and [r["name"] for r in body["results"]] == ["A", "B", "ria"]
    top = body["results"][0]
    assert top["kind"] == "bot" and top["bot_id"] == a.pk and top["matches"] == 1 and top["win_rate"] == 1.0
    assert top["ordinal"] == pytest.approx(top["mu"] - 3 * top["sigma"], abs=1e-2)
    assert [r["name"] for r in client.get("/api/leaderboard/liars_dice/?who=people").json()["results"]] == ["ria"]
    assert client.get("/api/leaderboard/liars_dice/?who=cats").status_code == 400
    assert client.get("/api/leaderboard/chess/").status_code == 404
    assert client.get("/api/leaderboard/liars_dice/?page=9").status_code == 400
    assert "/leaderboard/{game}/" in client.get("/api/openapi.json").content.decode()


def test_a_rated_match_finishes_after_the_last_match_of_its_identities_even_on_a_clock_that_is_behind(
        owner, monkeypatch):
    """The finish time is taken under the ratings' lock, and never before the last rated match
    of one of its identities (an arena on another host may have its clock behind), so the
    order ``recompute_ratings`` replays is the order they were rated in."""
    from datetime import timedelta

    from django.utils import timezone

    a, b = bot(owner, "liars_dice", "a"), bot(owner, "liars_dice", "b")
    first = played("liars_dice", {"players": 2}, [a, b], {"scores": [2, 0], "winner": 0})
    first.refresh_from_db()
    behind = first.finished_at - timedelta(hours=1)
    monkeypatch.setattr(timezone, "now", lambda: behind)
    second = played("liars_dice", {"players": 2}, [b, a], {"scores": [2, 0], "winner": 0})
    unrated = played("liars_dice", {"players": 2}, [a, "guest"], {"scores": [2, 0], "winner": 0})
    second.refresh_from_db(), unrated.refresh_from_db()
    assert second.finished_at == first.finished_at + timedelta(microseconds=1)
    assert unrated.finished_at == behind, "an unrated match keeps its time"
    assert Rating.objects.get(subject=f"bot:{a.pk}").last_seen == second.finished_at
    incremental = values("liars_dice")
    call_command("recompute_ratings", "--game", "liars_dice")
    assert values("liars_dice") == incremental
