"""People as tournament entrants (docs/architecture.md, *Tournaments*): signing up and
withdrawing on the tournament's page and through the API, a seat held for the person at each
of their matches (only they take it; a partner or the other Hanabi players are the game's
stand-in bot), the forfeit of a person who does not come within the wait (and not of one
playing another of their matches), "Your match is ready" on the live page, and entering a bot
from the page's form with its refusals.  A person playing a whole match in the browser is
tests/test_browser_tournament.py."""
from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.utils import timezone

from games.arena import registry
from games.arena.models import Match, Rating, RegisteredBot, Seat, Tournament, TournamentGame
from games.arena.play import tables
from games.arena.tournaments import schedule, standings
from tests.test_api_tokens import make_token

LD = {"players": 2, "dice": 2, "games": 1}


@pytest.fixture
def people(django_user_model):
    return [django_user_model.objects.create_user(name, password=f"pw-{name}-123") for name in ("olga", "pia", "quinn")]


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends = {}
    yield


def scheduled(organiser, entrants=("builtin:random",), game="liars_dice", config=LD, **kwargs) -> Tournament:
    """A tournament starting in an hour, made by ``organiser``."""
    return schedule.create(game=game, config=config, format=kwargs.pop("format", "round_robin"),
                           entrants=list(entrants), starts_at=timezone.now() + timedelta(hours=1),
                           created_by_id=organiser.pk, **kwargs)


def start_now(tournament: Tournament, now=None) -> schedule.Work:
    """Make it due and let an arena's turn start it and make its matches."""
    Tournament.objects.filter(pk=tournament.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    return schedule.step("test-arena", 60.0, 100, now=now)


def entry_error(resp) -> str:
    found = re.search(r'data-testid="entry-error">([^<]*)<', resp.content.decode())
    return found.group(1).replace("&#x27;", "'") if found else ""


def names(tournament: Tournament) -> list[str]:
    return [e.display_name for e in tournament.entrants.order_by("index")]


# --- signing up ----------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_person_signs_up_on_the_page_once_and_withdraws_before_the_start(client, people):
    olga, pia, quinn = people
    t = scheduled(olga, entrants=["builtin:random", "builtin:probability"])
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert 'data-testid="login-to-enter"' in page and 'data-testid="signup"' not in page
    assert client.post(f"/tournaments/{t.pk}/signup/")["Location"].startswith("/accounts/login/")
    assert names(t) == ["Random bot", "Probability bot"]

    client.force_login(pia)
    assert client.post(f"/tournaments/{t.pk}/signup/")["Location"] == f"/tournaments/{t.pk}/"
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert "You are entrant <b class=\"name\">pia</b>" in page and 'data-testid="withdraw"' in page
    assert 'data-testid="signup"' not in page
    # The standings name the new entrant before any game.
    assert "pia" in [row.name for row in standings.compute(t).rows]
    resp = client.post(f"/tournaments/{t.pk}/signup/")
    assert resp.status_code == 400 and entry_error(resp) == (
        "You have signed up already: a person is one entrant of a tournament.")
    client.force_login(quinn)
    client.post(f"/tournaments/{t.pk}/signup/")
    assert names(t) == ["Random bot", "Probability bot", "pia", "quinn"]

    client.force_login(pia)
    assert client.post(f"/tournaments/{t.pk}/withdraw/").status_code == 302
    # The later entrants move up: the plan, written at the start, names entrants by index.
    assert [(e.index, e.display_name) for e in t.entrants.order_by("index")] == [
        (0, "Random bot"), (1, "Probability bot"), (2, "quinn")]
    resp = client.post(f"/tournaments/{t.pk}/withdraw/")
    assert resp.status_code == 400 and entry_error(resp) == "You have not signed up to this tournament."

    client.force_login(quinn)
    start_now(t)
    resp = client.post(f"/tournaments/{t.pk}/withdraw/")
    assert resp.status_code == 400 and entry_error(resp) == "You may withdraw only before the tournament starts."
    client.force_login(pia)
    resp = client.post(f"/tournaments/{t.pk}/signup/")
    assert resp.status_code == 400 and "before the start" in entry_error(resp)
    assert names(Tournament.objects.get(pk=t.pk)) == ["Random bot", "Probability bot", "quinn"]
    page = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert 'id="t-entry"' not in page  # running, not a late-entry Swiss, not an entrant: nothing to join


@pytest.mark.django_db
def test_the_organiser_enters_themselves_with_the_create_form(client, people):
    client.force_login(people[0])
    form = {"game": "liars_dice", "format": "round_robin", "count_random": "1", "per_pairing": "1", "rounds": "0",
            "at_once": "4", "pace": "0", "wait_s": "60", "rated": "on", "me": "on",
            **{k: str(v) for k, v in LD.items()}}
    assert client.post("/tournaments/new/", form).status_code == 302
    t = Tournament.objects.get()
    assert [(e.display_name, e.user_id) for e in t.entrants.order_by("index")] == [("Random bot", None),
                                                                                   ("olga", people[0].pk)]


@pytest.mark.django_db
def test_the_api_signs_up_me_and_withdraws(client, people):
    olga, pia, _ = people
    t = scheduled(olga)
    token = make_token(client, pia)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    url = f"/api/tournaments/{t.pk}/entrants"
    resp = client.post(url, {"entrant": "me"}, content_type="application/json", **headers)
    assert (resp.status_code, resp.json()) == (201, {"tournament": t.pk, "entrant": 1, "name": "pia",
                                                     "first_round": 1})
    assert t.entrants.get(index=1).user == pia
    resp = client.post(url, {"entrant": "me"}, content_type="application/json", **headers)
    assert resp.status_code == 400 and "signed up already" in resp.json()["error"]
    # Built-in bots are the organiser's to enter.
    resp = client.post(url, {"entrant": "builtin:probability"}, content_type="application/json", **headers)
    assert (resp.status_code, resp.json()) == (400, {"error": "Only the tournament's organiser enters built-in bots."})
    assert client.delete(f"{url}/me").status_code == 401
    resp = client.delete(f"{url}/me", **headers)
    assert (resp.status_code, resp.json()) == (200, {"tournament": t.pk, "name": "pia"})
    assert names(t) == ["Random bot"]
    assert client.delete(f"{url}/me", **headers).status_code == 400


@pytest.mark.django_db
def test_a_tournament_left_with_too_few_entrants_is_cancelled_at_its_start(client, people):
    olga, pia, _ = people
    t = scheduled(olga)
    schedule.join(t.pk, schedule.ME, pia.pk)
    schedule.withdraw(t.pk, pia.pk)
    start_now(t)
    t.refresh_from_db()
    assert (t.status, t.note) == ("cancelled", "too few entrants at the start: 1, a match needs 2")


# --- the seat held for the person ----------------------------------------------------------------
@pytest.mark.django_db
def test_a_persons_seat_waits_for_them_only_and_the_match_starts_when_they_sit(client, people):
    olga, pia, _ = people
    t = scheduled(olga)
    schedule.join(t.pk, schedule.ME, pia.pk)
    work = start_now(t)
    assert work.start == []  # a seat waits: no arena starts it yet
    match = Match.objects.get(tournament_game__tournament=t)
    seats = {s.index: s for s in match.seats.all()}
    assert (seats[0].kind, seats[0].occupied, seats[0].builtin_bot) == ("builtin", True, "random")
    assert (seats[1].kind, seats[1].reserved, seats[1].occupied, seats[1].user_id, seats[1].display_name) == (
        "human", True, False, pia.pk, "pia")
    assert match.owner == ""

    # The table page: held for pia; others (or guests) cannot take it.
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert "held for <b class=\"name\">pia</b>: only they take it" in page
    assert f'/tournaments/{t.pk}/' in page  # the way back to the tournament
    assert tables.join_seat(match.pk, 1, tables.Sitter(name="olga", user_id=olga.pk)) == (
        "That seat is held for pia: only they may take it.")
    assert tables.join_seat(match.pk, 1, tables.Sitter(name="guest", session_key="abc")) == (
        "That seat is held for pia: only they may take it.")

    client.force_login(pia)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert 'data-testid="take-held-seat"' in page
    assert client.post(f"/matches/{match.pk}/join/1/").status_code == 302
    seat = Seat.objects.get(pk=seats[1].pk)
    assert (seat.occupied, seat.user_id, seat.display_name) == (True, pia.pk, "pia")
    # Left before the start, the seat stays held for her.
    assert client.post(f"/matches/{match.pk}/leave/").status_code == 302
    seat.refresh_from_db()
    assert (seat.occupied, seat.reserved, seat.user_id) == (False, True, pia.pk)
    client.post(f"/matches/{match.pk}/join/1/")
    # Every seat taken: any arena starts it (no bot that connects holds it).
    assert tables.claim_tables_to_start("another-arena", 60.0, limit=10) == [match.pk]


@pytest.mark.parametrize("game, config, held", [
    ("jass", {"points_to_win": 100}, {0: 2, 1: 1}),        # South, else the side's first (East)
    ("bridge", {"boards": 1, "replay": 0}, {0: 2, 1: 1}),  # South; East
    ("hanabi", {"players": 3}, {0: 0}),                     # cooperative: the person and two stand-ins
])
@pytest.mark.django_db
def test_in_a_partnership_or_hanabi_the_person_holds_one_seat_and_the_stand_in_the_others(people, game, config,
                                                                                          held):
    olga, pia, _ = people
    spec_standin = {"jass": "rules", "bridge": "rules", "hanabi": "convention"}[game]
    entrants = ["builtin:random"] if game != "hanabi" else []
    t = scheduled(olga, entrants=entrants + ["me"], game=game, config=config,
                  per_pairing=2 if game != "hanabi" else 1)
    start_now(t)
    sides = schedule.sides_of(registry.get(game), t.config)
    for match in Match.objects.filter(tournament_game__tournament=t).select_related("tournament_game"):
        person_side = match.tournament_game.sides.index(1 if game != "hanabi" else 0)
        seats = {s.index: s for s in match.seats.all()}
        mine = held[person_side]
        assert (seats[mine].kind, seats[mine].user_id, seats[mine].reserved) == ("human", olga.pk, True)
        partners = [i for i in sides[person_side] if i != mine]
        assert partners and all(seats[i].builtin_bot == spec_standin for i in partners)


# --- coming late, or not at all ------------------------------------------------------------------
@pytest.mark.django_db
def test_a_person_who_does_not_come_forfeits_after_the_wait_unless_playing_another_match(people):
    olga, pia, _ = people
    t = scheduled(olga, entrants=["builtin:random", "builtin:probability"], wait_s=60, at_once=4)
    schedule.join(t.pk, schedule.ME, pia.pk)
    start = timezone.now()
    start_now(t, now=start)
    theirs = list(Match.objects.filter(tournament_game__tournament=t, seats__user=pia).order_by("pk"))
    assert len(theirs) == 2  # both of her games, made ahead (a seat that waits)

    # Within the wait: nobody is overdue.
    schedule._overdue_looked.clear()
    assert schedule.step("test-arena", 60.0, 100, now=start + timedelta(seconds=30)).forfeits == []
    # She plays her first match: the second waits for her however long that takes.
    tables.join_seat(theirs[0].pk, Seat.objects.get(match=theirs[0], user=pia).index,
                     tables.Sitter(name="pia", user_id=pia.pk))
    Match.objects.filter(pk=theirs[0].pk).update(status=Match.Status.RUNNING, started_at=timezone.now())
    schedule._overdue_looked.clear()
    assert schedule.step("test-arena", 60.0, 100, now=start + timedelta(seconds=600)).forfeits == []

    # It ends long ago, and she never comes to the second: forfeit, with the reason.
    Match.objects.filter(pk=theirs[0].pk).update(status=Match.Status.ABORTED)
    schedule._overdue_looked.clear()
    work = schedule.step("test-arena", 60.0, 100, now=start + timedelta(seconds=600))
    assert [(m, reason) for m, reason, _ in work.forfeits] == [
        (theirs[1].pk, "pia did not come to the table within 60 s: forfeit")]
    match_id, reason, absent = work.forfeits[0]
    tables.abort(match_id, reason)
    assert schedule.record_forfeit(match_id, absent, reason)
    game = TournamentGame.objects.get(matches=match_id)
    assert game.forfeit == {"absent": [2], "reason": "pia did not come to the table within 60 s: forfeit"}
    rows = {r.name: r for r in standings.compute(t).rows}
    assert rows["pia"].forfeits == 1


@pytest.mark.django_db
def test_a_persons_finished_match_counts_in_the_standings_and_rates_them_as_a_person(people):
    olga, pia, _ = people
    t = scheduled(olga)
    schedule.join(t.pk, schedule.ME, pia.pk)
    start_now(t)
    match = Match.objects.get(tournament_game__tournament=t)
    tables.join_seat(match.pk, 1, tables.Sitter(name="pia", user_id=pia.pk))
    assert tables.try_start(match.pk) is not None
    assert tables.finish(match.pk, {"scores": [0, 1], "winner": 1})
    rows = {r.name: r for r in standings.compute(t).rows}
    assert (rows["pia"].wins, rows["pia"].points, rows["Random bot"].losses) == (1, 1.0, 1)
    assert Rating.objects.filter(game="liars_dice", subject=f"user:{pia.pk}").exists()


@pytest.mark.django_db
def test_the_live_page_tells_the_person_their_match_is_ready(client, people):
    olga, pia, _ = people
    t = scheduled(olga, wait_s=90)
    schedule.join(t.pk, schedule.ME, pia.pk)
    start_now(t)
    match = Match.objects.get(tournament_game__tournament=t)
    client.force_login(pia)
    data = client.get(f"/tournaments/{t.pk}/").context["data"]
    assert [(y["id"], y["url"], y["waiting"]) for y in data["you"]] == [(match.pk, f"/matches/{match.pk}/", True)]
    assert data["you"][0]["forfeit_at"] == (match.created_at + timedelta(seconds=90)).isoformat()
    assert 'data-testid="ready"' in client.get("/tournaments/").content.decode()  # the list says so too
    client.force_login(olga)  # the organiser, not an entrant: nothing of theirs
    assert client.get(f"/tournaments/{t.pk}/").context["data"]["you"] == []
    assert 'data-testid="ready"' not in client.get("/tournaments/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_live_pages_socket_sends_each_person_their_own_tables(client, people):
    from webapp.asgi import application

    olga, pia, _ = people
    t = scheduled(olga)
    schedule.join(t.pk, schedule.ME, pia.pk)
    start_now(t)
    match = Match.objects.get(tournament_game__tournament=t)
    client.force_login(pia)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()

    async def scenario(headers):
        socket = WebsocketCommunicator(application, f"/ws/tournaments/{t.pk}/",
                                       headers=[(b"origin", b"http://testserver"), (b"host", b"testserver"), *headers])
        assert (await socket.connect())[0]
        message = await socket.receive_json_from(timeout=10)
        await socket.disconnect()
        return message["you"]

    yours = asyncio.run(scenario([(b"cookie", cookie)]))
    assert [(y["id"], y["waiting"]) for y in yours] == [(match.pk, True)]
    assert asyncio.run(scenario([])) == []  # a visitor: nothing of theirs


# --- entering a bot from the page ----------------------------------------------------------------
@pytest.mark.django_db
def test_the_page_enters_ones_own_or_a_shared_bot_and_refuses_the_rest_inline(client, people):
    olga, pia, quinn = people
    mine = RegisteredBot.objects.create(owner=pia, game="liars_dice", name="pia's bot", key_hash="a" * 64)
    shared = RegisteredBot.objects.create(owner=quinn, game="liars_dice", name="open bot", key_hash="b" * 64,
                                          shared=True)
    private = RegisteredBot.objects.create(owner=quinn, game="liars_dice", name="quinn's secret", key_hash="c" * 64)
    RegisteredBot.objects.create(owner=pia, game="jass", name="pia's jass bot", key_hash="d" * 64)
    t = scheduled(olga)

    client.force_login(pia)
    offered = client.get(f"/tournaments/{t.pk}/").context["bot_choices"]
    # Her own and the shared bot of this game; no built-in bots (she does not organise it).
    assert offered == [(f"registered:{shared.pk}", "open bot (shared by quinn)"),
                       (f"registered:{mine.pk}", "pia's bot")]
    assert client.post(f"/tournaments/{t.pk}/enter/", {"entrant": f"registered:{mine.pk}"}).status_code == 302
    assert names(t) == ["Random bot", "pia's bot"]
    page = client.get(f"/tournaments/{t.pk}/")
    assert f"registered:{mine.pk}" not in dict(page.context["bot_choices"])  # entered already
    refusals = [({"entrant": f"registered:{private.pk}"}, "quinn's secret is not shared by its owner: only they "
                                                          "may enter it."),
                ({"entrant": f"registered:{mine.pk}"}, "pia's bot has entered already."),
                ({"entrant": "builtin:probability"}, "Only the tournament's organiser enters built-in bots."),
                ({"entrant": "me"}, "Choose a bot to enter."),
                ({}, "Choose a bot to enter.")]
    for form, message in refusals:
        resp = client.post(f"/tournaments/{t.pk}/enter/", form)
        assert (resp.status_code, entry_error(resp)) == (400, message), form
    client.force_login(olga)  # the organiser is offered the built-in bots too
    offered = dict(client.get(f"/tournaments/{t.pk}/").context["bot_choices"])
    assert offered["builtin:probability"] == "Probability bot (built-in)"
    assert client.post(f"/tournaments/{t.pk}/enter/", {"entrant": "builtin:probability"}).status_code == 302
    assert names(t) == ["Random bot", "pia's bot", "Probability bot"]

    client.logout()
    assert client.post(f"/tournaments/{t.pk}/enter/", {"entrant": f"registered:{shared.pk}"})[
        "Location"].startswith("/accounts/login/")
    client.force_login(pia)
    start_now(t)
    # Her unshared bot, entered by her, is seated at the tournament's tables (olga's).
    assert Seat.objects.filter(registered_bot=mine, reserved=True, match__tournament_game__tournament=t).count() == 2
    resp = client.post(f"/tournaments/{t.pk}/enter/", {"entrant": f"registered:{shared.pk}"})
    assert resp.status_code == 400 and "before the start" in entry_error(resp)
    assert names(Tournament.objects.get(pk=t.pk)) == ["Random bot", "pia's bot", "Probability bot"]
    assert client.get("/tournaments/999/enter/").status_code == 405


@pytest.mark.django_db
def test_a_late_entry_swiss_takes_people_and_bots_until_half_its_rounds(client, people):
    olga, pia, _ = people
    t = scheduled(olga, entrants=["builtin:random", "builtin:probability", "builtin:random"], format="swiss",
                  rounds=4, late_join=True)
    start_now(t)
    client.force_login(pia)
    page = client.get(f"/tournaments/{t.pk}/")
    assert page.context["entry_open"] and 'data-testid="signup"' in page.content.decode()
    assert client.post(f"/tournaments/{t.pk}/signup/").status_code == 302
    assert t.entrants.get(user=pia).joined_round == 2
    Tournament.objects.filter(pk=t.pk).update(round=2)
    page = client.get(f"/tournaments/{t.pk}/")
    assert not page.context["entry_open"]


@pytest.mark.django_db(transaction=True)
def test_an_arena_forfeits_a_person_who_never_comes(people):
    """A real arena's sweeps: the person's two matches wait the (tiny) wait, then are forfeited;
    the built-in bots' match between them is played."""
    from tests.test_tournaments import played_out

    olga, pia, _ = people
    t = schedule.create(game="liars_dice", config=LD, format="round_robin",
                        entrants=["builtin:random", "builtin:probability", "me"], wait_s=0.3,
                        created_by_id=pia.pk)

    async def run():
        return await played_out(t.pk, seconds=60)

    assert asyncio.run(run()).status == "finished"
    rows = {r.name: r for r in standings.compute(t).rows}
    assert (rows["pia"].forfeits, rows["pia"].points) == (2, 0)
    assert rows["Random bot"].games == rows["Probability bot"].games == 2
    reasons = set(TournamentGame.objects.filter(tournament=t, forfeit__isnull=False).values_list("forfeit__reason",
                                                                                                flat=True))
    assert reasons == {"pia did not come to the table within 0.3 s: forfeit"}
