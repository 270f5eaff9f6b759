"""A bot's owner reads their bot's matches and forced-move details with a personal API token;
everyone else reads the same API without the details, and the seats say who is verified."""
from __future__ import annotations

import hashlib
import re

import pytest

from games.arena.models import ApiToken, RegisteredBot
from tests.finished_matches import played

pytestmark = pytest.mark.django_db

LD = {"players": 2, "dice": 2, "games": 1}
SECRET = "malformed reply: got {\"bid\": [7, 2]} (my debug: hand 3 3)"


@pytest.fixture
def people(django_user_model):
    owner = django_user_model.objects.create_user("olga", password="pw-olga-123")
    other = django_user_model.objects.create_user("oscar", password="pw-oscar-123")
    return owner, other


def make_token(client, user) -> str:
    """Log ``user`` in, make their token on the Bots page and read it off the answer."""
    client.force_login(user)
    resp = client.post("/bots/api-token/")
    assert resp.status_code == 200 and resp["Cache-Control"] == "no-store"
    token = re.search(r'data-testid="api-token">([^<]+)<', resp.content.decode()).group(1)
    client.logout()
    return token


def api(client, url, token=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    resp = client.get(url, **headers)
    assert resp["Content-Type"].startswith("application/json"), url
    return resp.status_code, resp.json()


@pytest.fixture
def matches(people):
    """Olga's bot Dicey played two finished matches: one against Oscar's bot (Dicey forced
    once with a secret detail, Oscar's bot once with its own), one against an unverified bot."""
    owner, other = people
    dicey = RegisteredBot.objects.create(owner=owner, game="liars_dice", name="Dicey", key_hash="a" * 64)
    rival = RegisteredBot.objects.create(owner=other, game="liars_dice", name="Rival", key_hash="b" * 64)
    first = played("liars_dice", LD, [dicey, rival], {"scores": [1, 0], "winner": 0},
                   events=[(1, False, "", "", 12.0), (0, True, "malformed reply", SECRET, None),
                           (1, True, "no reply within 3 s", "rival's own detail", None)])
    second = played("liars_dice", LD, ["unverified", dicey], {"scores": [1, 0], "winner": 0},
                    events=[(1, False, "", "", 20.0), (0, True, "malformed reply", "anon's own line", None)])
    return dicey, rival, first, second


def test_the_token_is_shown_once_and_only_its_hash_is_kept(client, people):
    owner, _ = people
    token = make_token(client, owner)
    assert token.startswith("arena-token-") and len(token) == 44
    row = ApiToken.objects.get(user=owner)
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    client.force_login(owner)
    page = client.get("/bots/").content.decode()
    assert token not in page and "You have a token, made" in page and "not used yet" in page
    assert api(client, "/api/me/", token)[0] == 200
    assert "last used" in client.get("/bots/").content.decode()
    # Replacing it makes the old one useless; revoking it ends the new one.
    second = make_token(client, owner)
    assert second != token and api(client, "/api/me/", token)[0] == 401
    client.force_login(owner)
    client.post("/bots/api-token/", {"action": "revoke"})
    status, body = api(client, "/api/me/", second)
    assert status == 401 and "refused" in body["error"] and not ApiToken.objects.filter(user=owner).exists()


def test_me_names_the_tokens_owner_and_their_bots(client, people, matches):
    owner, _ = people
    token = make_token(client, owner)
    status, body = api(client, "/api/me/", token)
    assert status == 200 and body == {"username": "olga", "bots": [
        {"id": matches[0].pk, "name": "Dicey", "game": "liars_dice", "api": f"/api/bots/{matches[0].pk}/"}]}
    status, body = api(client, "/api/me/")
    assert status == 401 and "API token" in body["error"]


def test_forced_move_details_are_the_owners_only(client, people, matches, settings):
    owner, other = people
    dicey, rival, first, _ = matches
    mine, theirs = make_token(client, owner), make_token(client, other)
    url = f"/api/bots/{dicey.pk}/forced/"

    status, body = api(client, url)
    assert status == 200 and body["detail_shown"] is False and body["count"] == 1
    assert body["results"] == [{"match": first.pk, "seq": 1, "step": 1, "seat": 0, "reason": "malformed reply",
                                "detail": ""}]
    assert api(client, url, theirs)[1]["results"][0]["detail"] == "", "another user's token shows nothing more"
    status, body = api(client, url, mine)
    assert body["detail_shown"] is True and body["results"][0]["detail"] == SECRET

    # The match's own events: each asker sees the details of their own seats only.
    events = {t: api(client, f"/api/matches/{first.pk}/", t)[1]["events"] for t in (None, mine, theirs)}
    assert [e["detail"] for e in events[None]] == ["", ""]  # seq 1 and 2 (the API lists seq > 0)
    assert [e["detail"] for e in events[mine]] == [SECRET, ""]
    assert [e["detail"] for e in events[theirs]] == ["", "rival's own detail"]
    # A seat of no identity (a bot without its key) is nobody's: its detail is everyone's.
    assert [e["detail"] for e in api(client, f"/api/matches/{matches[3].pk}/")[1]["events"]] == ["anon's own line"]
    # The logged-in session counts as the token does (the pages' own fetches).
    client.force_login(owner)
    assert api(client, url)[1]["results"][0]["detail"] == SECRET
    client.logout()
    # Nothing of the token shows in what anyone reads.
    for page in (f"/bots/{dicey.pk}/", "/bots/", f"/matches/{first.pk}/", "/leaderboard/liars_dice/"):
        assert mine not in client.get(page).content.decode()


def test_a_wrong_token_is_refused_and_guessing_is_slowed(client, people, settings):
    settings.ARENA = {**settings.ARENA, "API_TOKEN_FAILURES_PER_MINUTE": 2}
    owner, _ = people
    token = make_token(client, owner)
    for wrong in ("arena-token-nope", "x" * 500):
        status, body = api(client, "/api/matches/", wrong)
        assert status == 401 and body == {"error": "the API token was refused" + (
            ": make a new one on the Bots page" if len(wrong) < 100 else "")}
    status, body = api(client, "/api/matches/", token)
    assert status == 401 and body["error"].startswith("too many wrong API tokens from your address")
    resp = client.get("/api/matches/", HTTP_AUTHORIZATION=f"Basic {token}")
    assert resp.status_code == 401 and resp.json() == {"error": "Authorization must be 'Bearer <your API token>'"}
    assert client.get("/api/matches/").status_code == 200, "without a token the API answers as to anyone"


def test_a_bots_facts_matches_and_verified_seats(client, people, matches):
    dicey, rival, first, second = matches
    status, body = api(client, f"/api/bots/{dicey.pk}/")
    assert status == 200
    assert (body["name"], body["game"], body["owner"], body["connects"]) == ("Dicey", "liars_dice", "olga", True)
    assert body["rating"]["matches"] == 1 and body["rating"]["bot_id"] == dicey.pk, "rated: only the first match"
    assert (body["forced_moves"], body["timeouts"], body["think_ms"]) == (1, 0, 20.0)
    opponents = {o["name"]: o for o in body["head_to_head"]}
    assert (opponents["Rival"]["wins"], opponents["Rival"]["kind"], opponents["Rival"]["bot_id"]) == (1, "bot", rival.pk)
    assert (opponents["anon"]["losses"], opponents["anon"]["kind"]) == (1, "unverified")
    assert body["matches_url"] == f"/api/bots/{dicey.pk}/matches/"

    status, body = api(client, body["matches_url"])
    assert status == 200 and [m["id"] for m in body["results"]] == [second.pk, first.pk]
    seats = body["results"][0]["seats"]
    assert [(s["name"], s["verified"], s["bot_id"]) for s in seats] == [("anon", False, None), ("Dicey", True, dicey.pk)]
    assert api(client, "/api/bots/999999/") == (404, {"error": "there is no registered bot 999999"})
    assert api(client, f"/api/bots/{dicey.pk}/matches/?page=2")[0] == 400


def test_in_a_game_that_hides_nothing_the_details_are_everyones(client, people):
    """Blokus: the live table shows every forced move's detail (a bot's debug hints, its
    refused move) to all, so the API and the bot's page do too."""
    owner, _ = people
    blue = RegisteredBot.objects.create(owner=owner, game="blokus", name="Blue", key_hash="c" * 64)
    match = played("blokus", {"variant": "2021"}, [blue, ("builtin", "random")],
                   {"scores": [0, 2], "winner": 1, "win_points": [0, 2]},
                   events=[(1, False, "", "", 5.0), (0, True, "rule violation", 'hints: "sure?"', None)])
    assert [e["detail"] for e in api(client, f"/api/matches/{match.pk}/")[1]["events"]] == ['hints: "sure?"']
    body = api(client, f"/api/bots/{blue.pk}/forced/")[1]
    assert body["detail_shown"] is True and body["results"][0]["detail"] == 'hints: "sure?"'
    page = client.get(f"/bots/{blue.pk}/").content.decode()
    assert "hints: &quot;sure?&quot;" in page and "the details are everyone's" in page
