"""Tournaments in the browser and the JSON API (games/arena/web/tournaments.py, api.py): the
form and the API create what schedule.create makes, with its errors shown; the per-minute
limit; the live page, its JSON and CSV after matches finished; who may cancel; and the live
page's WebSocket (standings at connect and after a change, only once acknowledged)."""
from __future__ import annotations

import asyncio
import csv
import io
import re
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from games.arena.models import Match, RegisteredBot, Tournament
from games.arena.play import tables
from games.arena.tournaments import schedule
from tests.test_api_tokens import make_token

LD = {"players": "2", "dice": "2", "games": "1"}


def form(**fields) -> dict:
    """The new-tournament form as a browser posts it: three Liar's Dice entrants (two Random
    bots, one Probability bot), one match per pairing, full speed, rated."""
    data = {"game": "liars_dice", "format": "round_robin", "count_random": "2", "count_probability": "1",
            "per_pairing": "1", "rounds": "0", "at_once": "4", "pace": "0", "wait_s": "60", "rated": "on", **LD}
    data.update(fields)
    return {k: v for k, v in data.items() if v is not None}


@pytest.fixture
def people(django_user_model):
    return (django_user_model.objects.create_user("olga", password="pw-olga-123"),
            django_user_model.objects.create_user("oscar", password="pw-oscar-123"))


def error_of(resp) -> str:
    found = re.search(r'data-testid="form-error">([^<]*)<', resp.content.decode())
    return found.group(1) if found else ""


def play_out(tournament: Tournament, results) -> list[Match]:
    """Let an arena's turn make the tournament's matches, then finish them as the runner does
    (:func:`tables.finish`), each with the next of ``results`` (seat scores)."""
    schedule.step("test-arena", 60.0, 100)
    matches = list(Match.objects.filter(tournament_game__tournament=tournament).order_by("pk"))
    for match, scores in zip(matches, results):
        Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
        tables.finish(match.pk, {"scores": scores, "winner": scores.index(max(scores))})
    return matches


# --- creating in the browser ---------------------------------------------------------------------
@pytest.mark.django_db
def test_a_logged_in_user_creates_a_round_robin_with_the_form(client, people):
    olga, _ = people
    assert client.get("/tournaments/new/").status_code == 302  # log in first
    client.force_login(olga)
    page = client.get("/tournaments/new/?game=liars_dice").content.decode()
    assert 'name="count_probability"' in page and 'name="dice"' in page  # the game's bots and configuration
    resp = client.post("/tournaments/new/", form(name="Dice night", per_pairing="2"))
    tournament = Tournament.objects.get()
    assert resp.status_code == 302 and resp["Location"] == f"/tournaments/{tournament.pk}/"
    assert (tournament.name, tournament.game, tournament.format, tournament.per_pairing) == (
        "Dice night", "liars_dice", "round_robin", 2)
    assert tournament.config == {"players": 2, "dice": 2, "games": 1} and tournament.rated
    assert tournament.created_by == olga and tournament.status == "scheduled"
    assert [e.display_name for e in tournament.entrants.order_by("index")] == [
        "Random bot (1)", "Random bot (2)", "Probability bot"]
    listing = client.get("/tournaments/").content.decode()
    assert 'href="/tournaments/"' in listing  # the nav bar's link
    assert f'href="/tournaments/{tournament.pk}/">Dice night<' in listing


@pytest.mark.django_db
def test_the_form_enters_registered_bots_the_user_may_enter(client, people):
    olga, oscar = people
    mine = RegisteredBot.objects.create(owner=olga, game="liars_dice", name="Dicey")
    shared = RegisteredBot.objects.create(owner=oscar, game="liars_dice", name="Shared", shared=True)
    private = RegisteredBot.objects.create(owner=oscar, game="liars_dice", name="Private")
    client.force_login(olga)
    page = client.get("/tournaments/new/?game=liars_dice").content.decode()
    assert f'value="{mine.pk}"' in page and f'value="{shared.pk}"' in page and f'value="{private.pk}"' not in page
    client.post("/tournaments/new/", {**form(count_random="0", count_probability="0"), "bot": [mine.pk, shared.pk]})
    assert [e.registered_bot for e in Tournament.objects.get().entrants.order_by("index")] == [mine, shared]
    resp = client.post("/tournaments/new/", {**form(), "bot": [private.pk]})  # typed in by hand
    assert resp.status_code == 200 and "Private is not shared by its owner" in error_of(resp)


@pytest.mark.django_db
@pytest.mark.parametrize("fields, message", [
    ({"count_random": "0", "count_probability": "1"}, "at least 2 entrants"),
    ({"per_pairing": "abc"}, "Matches per pairing: a whole number from 1 to"),
    ({"dice": "99"}, "dice must be a whole number from 1 to 20, got 99"),
    ({"format": "swiss", "count_random": "3"}, ""),  # fine: Swiss of four
    ({"early_stop": "on"}, "The early stop is for a match-up of two entrants."),
    ({"starts_at": "tomorrow"}, "Start time: a date and time"),
    ({"starts_at": "2999-01-01T10:00"}, "at most 30 days ahead"),
    ({"format": "knockout"}, "Unknown format"),
])
def test_the_form_shows_what_is_wrong_and_keeps_what_was_typed(client, people, fields, message):
    client.force_login(people[0])
    resp = client.post("/tournaments/new/", form(**fields))
    if not message:
        assert resp.status_code == 302
        return
    assert resp.status_code == 200 and message in error_of(resp)
    assert not Tournament.objects.exists()
    page = resp.content.decode()
    assert re.search(r'name="count_random"[^>]*value="{}"'.format(re.escape(fields.get("count_random", "2"))), page)


@pytest.mark.django_db
def test_a_user_creates_a_few_tournaments_a_minute(client, people, settings):
    settings.ARENA = {**settings.ARENA, "TOURNAMENTS_PER_MINUTE": 2}
    client.force_login(people[0])
    assert client.post("/tournaments/new/", form(count_random="0", count_probability="1")).status_code == 200
    assert client.post("/tournaments/new/", form()).status_code == 302  # a refused form did not count
    assert client.post("/tournaments/new/", form()).status_code == 302
    resp = client.post("/tournaments/new/", form())
    assert "You may create 2 tournaments a minute" in error_of(resp)
    assert Tournament.objects.count() == 2
    client.force_login(people[1])  # per user
    assert client.post("/tournaments/new/", form()).status_code == 302


# --- the API -------------------------------------------------------------------------------------
API_BODY = {"game": "liars_dice", "format": "round_robin", "entrants": ["builtin:random", "builtin:probability"],
            "config": {"players": 2, "dice": 2, "games": 1}, "per_pairing": 3, "pace_s": 0.5, "rated": False}


def post(client, url, body=None, token=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    resp = client.post(url, body or {}, content_type="application/json", **headers)
    return resp.status_code, resp.json()


@pytest.mark.django_db
def test_the_api_creates_a_tournament_with_a_personal_token(client, people):
    token = make_token(client, people[0])
    status, body = post(client, "/api/tournaments/", API_BODY, token)
    assert status == 201, body
    tournament = Tournament.objects.get()
    assert body["id"] == tournament.pk and body["url"] == f"/tournaments/{tournament.pk}/"
    assert (body["created_by"], body["status"], body["rated"]) == ("olga", "scheduled", False)
    assert (tournament.per_pairing, tournament.pace_s) == (3, 0.5)
    listing = client.get("/api/tournaments/").json()
    assert listing["count"] == 1 and listing["results"][0]["name"] == "Liar's Dice round robin"


@pytest.mark.django_db
def test_the_api_enters_a_bot_before_the_start_and_refuses_once_it_runs(client, people):
    token = make_token(client, people[0])
    later = (timezone.now() + timedelta(hours=1)).isoformat()
    status, body = post(client, "/api/tournaments/", {**API_BODY, "starts_at": later}, token)
    assert status == 201, body
    url = f"/api/tournaments/{body['id']}/entrants"
    assert post(client, url, {"entrant": "builtin:random"}) == (
        401, {"error": "this needs your API token (Authorization: Bearer <token>; make one on the Bots page)"})
    assert post(client, url, {"entrant": "builtin:random"}, token) == (
        201, {"tournament": body["id"], "entrant": 2, "name": "Random bot (3)", "first_round": 1})
    assert post(client, url, {"entrant": "builtin:nobody"}, token) == (
        400, {"error": "Liar's Dice has no built-in bot 'nobody'."})
    Tournament.objects.filter(pk=body["id"]).update(status=Tournament.Status.RUNNING)
    status, refused = post(client, url, {"entrant": "builtin:probability"}, token)
    assert status == 400 and "before the start" in refused["error"]
    assert post(client, "/api/tournaments/999/entrants", {"entrant": "builtin:random"}, token)[0] == 404
    assert Tournament.objects.get(pk=body["id"]).entrants.count() == 3


@pytest.mark.django_db
def test_the_api_refuses_with_the_reason(client, people, settings):
    client.force_login(people[0])  # a session is not enough to change anything (another site could use it)
    assert post(client, "/api/tournaments/", API_BODY) == (
        401, {"error": "this needs your API token (Authorization: Bearer <token>; make one on the Bots page)"})
    client.logout()
    token = make_token(client, people[0])
    cases = [({**API_BODY, "entrants": ["builtin:random"]}, "at least 2 entrants"),
             ({**API_BODY, "entrants": ["builtin:random", "builtin:nobody"]}, "has no built-in bot 'nobody'"),
             ({**API_BODY, "config": {"deals": []}}, "config: unknown setting 'deals'"),
             ({**API_BODY, "game": "chess"}, "there is no game 'chess'"),
             ({**API_BODY, "at_once": 10_000}, "Matches at once: 1 to 200."),
             ({**API_BODY, "entrants": ["builtin:random"] * 65}, "entrants"),
             ({**API_BODY, "surprise": 1}, "surprise")]
    for body, message in cases:
        status, answer = post(client, "/api/tournaments/", body, token)
        assert status == 400 and message in answer["error"], (body, answer)
    settings.ARENA = {**settings.ARENA, "TOURNAMENTS_PER_MINUTE": 1}
    assert post(client, "/api/tournaments/", API_BODY, token)[0] == 201
    status, answer = post(client, "/api/tournaments/", API_BODY, token)
    assert status == 429 and "1 tournament a minute" in answer["error"]


@pytest.mark.django_db
def test_standings_as_json_and_csv_after_the_matches(client, people):
    olga, _ = people
    tournament = schedule.create(game="liars_dice", config={"players": 2, "dice": 2, "games": 1},
                                 format="round_robin", entrants=["builtin:random", "builtin:probability"],
                                 per_pairing=3, created_by_id=olga.pk)
    # Three matches, sides swapped between them: the Probability bot wins all three.
    matches = play_out(tournament, [[0, 1], [1, 0], [0, 1]])
    sides = [m.tournament_game.sides for m in matches]
    assert sides == [[0, 1], [1, 0], [0, 1]]
    data = client.get(f"/api/tournaments/{tournament.pk}").json()
    assert data["progress"] == {"done": 3, "running": 0, "left": 0, "planned": 3, "eta_s": None}
    assert data["statistic"] == "score rate"
    first, second = data["standings"]
    assert (first["name"], first["games"], first["points"], first["wins"], first["losses"]) == (
        "Probability bot", 3, 3.0, 3, 0)
    assert first["stat"] == 1.0 and 0 < first["low"] < 1.0 == first["high"]
    assert (second["name"], second["points"], second["stat"]) == ("Random bot", 0.0, 0.0)
    assert data["cross"][1]["against"]["0"] == {"points": 3.0, "games": 3}
    assert [h["done"] for h in data["history"]] == [1, 2, 3] and data["history"][-1]["points"] == {"0": 0.0, "1": 3.0}
    assert data["matches_count"] == 3
    assert [m["id"] for m in data["matches"]] == [m.pk for m in reversed(matches)]  # newest first
    assert data["matches"][0]["result"] == "Probability bot won (0–1)"
    assert data["matches"][1]["entrants"] == ["Probability bot", "Random bot"]
    resp = client.get(f"/api/tournaments/{tournament.pk}/standings.csv")
    assert resp["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(resp.content.decode())))
    assert rows[0][:4] == ["rank", "entrant", "games", "points"] and rows[0][9] == "score rate"
    assert rows[1][:4] == ["1", "Probability bot", "3", "3"]
    assert client.get("/api/tournaments/999/standings.csv").status_code == 404
    assert client.get("/api/tournaments/999").json() == {"error": "there is no tournament 999"}
    listing = client.get("/api/tournaments/").json()["results"][0]
    assert (listing["done"], listing["planned"], listing["status"]) == (3, 3, "running")
    page = client.get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'id="tournament-data"' in page and "Probability bot won" in page
    assert 'data-testid="cancel"' not in page  # not logged in


@pytest.mark.django_db
def test_the_creator_or_staff_cancel_nobody_else(client, people, django_user_model):
    olga, oscar = people
    tournament = schedule.create(game="liars_dice", config={"players": 2}, format="round_robin",
                                 entrants=["builtin:random", "builtin:probability"], per_pairing=5,
                                 created_by_id=olga.pk)
    client.force_login(oscar)
    assert 'data-testid="cancel"' not in client.get(f"/tournaments/{tournament.pk}/").content.decode()
    assert client.post(f"/tournaments/{tournament.pk}/cancel/").status_code == 403
    client.force_login(olga)
    assert 'data-testid="cancel"' in client.get(f"/tournaments/{tournament.pk}/").content.decode()
    assert client.post(f"/tournaments/{tournament.pk}/cancel/").status_code == 302
    tournament.refresh_from_db()
    assert (tournament.status, tournament.note) == ("cancelled", "the tournament was cancelled by olga")
    assert "the tournament was cancelled by olga" in client.get(f"/tournaments/{tournament.pk}/").content.decode()
    # The API: the creator's token or staff's, once.
    second = schedule.create(game="liars_dice", config={"players": 2}, format="round_robin",
                             entrants=["builtin:random", "builtin:probability"], created_by_id=olga.pk)
    client.logout()
    oscar_token = make_token(client, oscar)
    assert post(client, f"/api/tournaments/{second.pk}/cancel", token=oscar_token)[0] == 403
    assert post(client, f"/api/tournaments/{second.pk}/cancel")[0] == 401
    staff = django_user_model.objects.create_user("sam", password="pw-sam-123", is_staff=True)
    status, body = post(client, f"/api/tournaments/{second.pk}/cancel", token=make_token(client, staff))
    assert status == 200 and body == {"id": second.pk, "status": "cancelled", "live_matches": 0}
    assert post(client, f"/api/tournaments/{second.pk}/cancel", token=make_token(client, olga))[0] == 409


@pytest.mark.django_db
def test_the_api_documents_the_tournament_endpoints(client):
    paths = client.get("/api/openapi.json").json()["paths"]
    assert set(paths["/api/tournaments/"]) == {"get", "post"}
    assert "TournamentDetail" in str(paths["/api/tournaments/{tournament_id}"]["get"]["responses"]["200"])
    assert "text/csv" in paths["/api/tournaments/{tournament_id}/standings.csv"]["get"]["responses"]["200"]["content"]
    assert set(paths["/api/tournaments/{tournament_id}/cancel"]["post"]["responses"]) >= {"200", "403", "409"}


# --- the live page's WebSocket -------------------------------------------------------------------
@pytest.fixture
def fresh_layer():
    channel_layers.backends = {}
    yield


def socket(tournament_id: int) -> WebsocketCommunicator:
    from webapp.asgi import application

    return WebsocketCommunicator(application, f"/ws/tournaments/{tournament_id}/",
                                 headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")])


@pytest.mark.django_db(transaction=True)
def test_the_live_page_gets_standings_at_connect_and_after_changes_once_acknowledged(fresh_layer, people):
    async def scenario():
        tournament = await sync_to_async(schedule.create)(
            game="liars_dice", config={"players": 2}, format="round_robin",
            entrants=["builtin:random", "builtin:probability"], per_pairing=2, created_by_id=people[0].pk)
        comm = socket(tournament.pk)
        assert (await comm.connect())[0]
        first = await comm.receive_json_from(5)
        assert first["type"] == "tournament.standings" and first["tournament"]["status"] == "scheduled"
        await sync_to_async(play_out)(tournament, [[1, 0]])
        await comm.send_json_to({"type": "ack"})
        layer = channel_layers["default"]
        await layer.group_send(schedule.group(tournament.pk), {"type": "tournament.changed"})
        second = await comm.receive_json_from(5)  # within a second of the first
        assert second["tournament"]["progress"]["done"] == 1 and second["tournament"]["status"] == "running"
        # Not acknowledged: a change waits, nothing more is sent ...
        await layer.group_send(schedule.group(tournament.pk), {"type": "tournament.changed"})
        assert await comm.receive_nothing(1.5)
        # ... until the ack, then the waiting change comes.
        await comm.send_json_to({"type": "ack"})
        assert (await comm.receive_json_from(5))["type"] == "tournament.standings"
        # Anything but an ack of what was sent closes the socket.
        await comm.send_json_to({"type": "ack"})
        await comm.send_json_to({"type": "ack"})  # nothing outstanding
        assert (await comm.receive_output(5))["code"] == 4003
        junk = socket(tournament.pk)
        await junk.connect()
        await junk.receive_json_from(5)
        await junk.send_to(text_data="x" * 10_000)
        assert (await junk.receive_output(5))["code"] == 4003
        missing = socket(99_999)
        assert (await missing.connect())[1] == 4404

    asyncio.run(scenario())
