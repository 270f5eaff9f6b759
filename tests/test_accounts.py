"""Accounts as their owners use them: change the password, reset a forgotten one by mail,
save an email, delete the account (its matches stay under an anonymous name).  Guessing and
mail sending are bounded: wrong current passwords count as failed logins, reset requests per
address and per email an hour.  The throttle's clock is patched, so nothing here waits."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.test import Client

from games.arena.bots import api_tokens, throttle
from games.arena.models import ApiToken, Event, Match, Rating, RegisteredBot, Seat
from games.arena.web import accounts
from tests.finished_matches import played

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-42"
LD = {"players": 2, "dice": 2, "games": 1}


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    cache.clear()
    now = [1_800_000_000.0]  # the start of a minute and of an hour
    monkeypatch.setattr(throttle, "clock", lambda: now[0])
    yield now
    cache.clear()


@pytest.fixture
def ann():
    return User.objects.create_user("ann", email="ann@example.org", password=PASSWORD)


def logged_in(user) -> Client:
    web = Client()
    assert web.login(username=user.username, password=PASSWORD)
    return web


def test_a_person_changes_their_password_and_logs_in_with_the_new_one(ann):
    web = logged_in(ann)
    page = web.post("/accounts/password/", {"old_password": "wrong", "new_password1": "new-horse-77",
                                            "new_password2": "new-horse-77"})
    assert page.status_code == 200 and "incorrect" in page.content.decode()
    done = web.post("/accounts/password/", {"old_password": PASSWORD, "new_password1": "new-horse-77",
                                            "new_password2": "new-horse-77"}, follow=True)
    assert "Password changed" in done.content.decode()
    assert web.get("/accounts/").status_code == 200  # still logged in here
    assert Client().login(username="ann", password="new-horse-77")
    assert not Client().login(username="ann", password=PASSWORD)


def test_wrong_current_passwords_count_as_failed_logins(ann, settings):
    web = logged_in(ann)
    limit = settings.ARENA["LOGIN_FAILURES_PER_MINUTE"]
    for _ in range(limit):
        assert web.post("/accounts/password/", {"old_password": "guess", "new_password1": "n-horse-77",
                                                "new_password2": "n-horse-77"}).status_code == 200
    refused = web.post("/accounts/password/", {"old_password": PASSWORD, "new_password1": "n-horse-77",
                                               "new_password2": "n-horse-77"})
    assert refused.status_code == 429 and "Too many wrong passwords; try again in" in refused.content.decode()
    assert Client().login(username="ann", password=PASSWORD)  # unchanged
    refused = web.post("/accounts/delete/", {"delete-password": PASSWORD})
    assert refused.status_code == 429 and User.objects.filter(username="ann").exists()


def test_a_forgotten_password_is_reset_through_the_mailed_link(ann):
    web = Client()
    sent = web.post("/accounts/password/reset/", {"email": "ANN@example.org"}, follow=True)
    assert "Check your mail" in sent.content.decode()
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["ann@example.org"]
    body = mail.outbox[0].body
    assert '"ann"' in body and PASSWORD not in body
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/\S+/)", body).group(1)
    form = web.get(link, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = web.post(form.redirect_chain[-1][0], {"new_password1": "reset-horse-5", "new_password2": "reset-horse-5"},
                    follow=True)
    assert "Password set" in done.content.decode()
    assert Client().login(username="ann", password="reset-horse-5")
    again = Client().get(link, follow=True)  # a link works once
    assert "This link does not work" in again.content.decode()


def test_a_reset_for_an_unknown_email_says_the_same_and_sends_nothing(ann):
    page = Client().post("/accounts/password/reset/", {"email": "nobody@example.org"}, follow=True)
    assert "Check your mail" in page.content.decode()
    assert mail.outbox == []


def test_reset_requests_are_limited_per_address_and_per_email(ann, settings, clock):
    limit = settings.ARENA["PASSWORD_RESETS_PER_HOUR"]
    web = Client()
    for _ in range(limit):
        assert web.post("/accounts/password/reset/", {"email": "ann@example.org"}).status_code == 302
    assert len(mail.outbox) == limit
    refused = web.post("/accounts/password/reset/", {"email": "ann@example.org"})
    assert refused.status_code == 429 and "Too many reset requests; try again in" in refused.content.decode()
    # Nor may that address ask for other mailboxes...
    assert web.post("/accounts/password/reset/", {"email": "bob@example.org"}).status_code == 429
    # ...and another address may not flood the same mailbox either...
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert other.post("/accounts/password/reset/", {"email": "ann@example.org"}).status_code == 429
    # ...but may ask for another one.
    assert other.post("/accounts/password/reset/", {"email": "bob@example.org"}).status_code == 302
    assert len(mail.outbox) == limit
    clock[0] += 3600  # the next hour
    assert web.post("/accounts/password/reset/", {"email": "ann@example.org"}).status_code == 302
    assert len(mail.outbox) == limit + 1


def test_the_email_is_saved_with_the_password_only(ann):
    web = logged_in(ann)
    wrong = web.post("/accounts/", {"email": "evil@example.org", "password": "guess"})
    assert "That is not your password." in wrong.content.decode()
    assert User.objects.get(pk=ann.pk).email == "ann@example.org"
    web.post("/accounts/", {"email": "ann@new.example.org", "password": PASSWORD})
    assert User.objects.get(pk=ann.pk).email == "ann@new.example.org"


def test_a_deleted_account_leaves_its_matches_under_an_anonymous_name(ann):
    bob = User.objects.create_user("bob", password=PASSWORD)
    dicebot = RegisteredBot.objects.create(owner=ann, game="liars_dice", name="ann-dice", key_hash="a" * 64)
    jassbot = RegisteredBot.objects.create(owner=ann, game="jass", name="ann-jass", base_url="http://10.1.2.3:9/x")
    api_tokens.make_token(ann)
    person_match = played("liars_dice", LD, [("user", ann), ("user", bob)], {"scores": [0, 1], "winner": 1},
                          events=[(0, True, "no answer", "ann's own detail", 5), (1, True, "no answer", "bob's detail", 5)])
    bot_match = played("liars_dice", LD, [dicebot, ("user", bob)], {"scores": [1, 0], "winner": 0},
                       events=[(0, True, "illegal bid", "http://10.1.2.3:9/x said no", 5)])
    assert Rating.objects.filter(user=ann).exists() and Rating.objects.filter(registered_bot=dicebot).exists()

    web = logged_in(ann)
    wrong = web.post("/accounts/delete/", {"delete-password": "guess"})
    assert "That is not your password." in wrong.content.decode() and User.objects.filter(pk=ann.pk).exists()
    gone = web.post("/accounts/delete/", {"delete-password": PASSWORD}, follow=True)
    assert "Your account was deleted" in gone.content.decode()
    assert not gone.context["user"].is_authenticated

    assert not User.objects.filter(pk=ann.pk).exists()
    assert not RegisteredBot.objects.filter(pk__in=[dicebot.pk, jassbot.pk]).exists()  # names free, keys dead
    assert not ApiToken.objects.exists() and not Rating.objects.filter(name__startswith="ann").exists()
    # The matches stay, with the other player as they were.
    assert [s.display_name for s in Seat.objects.filter(match=person_match)] == [accounts.DELETED_PLAYER, "bob"]
    assert [s.display_name for s in Seat.objects.filter(match=bot_match)] == [accounts.DELETED_BOT, "bob"]
    assert Match.objects.get(pk=person_match.pk).status == "finished"
    # Nothing on their pages or in the API names her; details at her seats are gone.
    assert Event.objects.get(match=person_match, seat=1).detail == "bob's detail"
    assert Event.objects.get(match=person_match, seat=0).detail == ""
    assert Event.objects.get(match=bot_match, seat=0).detail == ""
    for url in (f"/matches/{person_match.pk}/", f"/api/matches/{person_match.pk}/", f"/api/matches/{bot_match.pk}/",
                "/history/", "/people/bob/", "/leaderboard/liars_dice/"):
        text = Client().get(url).content.decode()
        assert "ann" not in text.replace("Jann", ""), url
        assert "10.1.2.3" not in text, url
    assert Client().get("/people/ann/").status_code == 404


def test_an_account_with_a_seat_at_a_live_table_is_not_deleted(ann):
    match = Match.objects.create(game="liars_dice", config=LD, seed=1, status=Match.Status.RUNNING)
    Seat.objects.create(match=match, index=0, kind="human", user=ann, occupied=True, display_name="ann")
    web = logged_in(ann)
    refused = web.post("/accounts/delete/", {"delete-password": PASSWORD})
    assert refused.status_code == 409
    assert f"/matches/{match.pk}/" in refused.content.decode()
    assert User.objects.filter(pk=ann.pk).exists()
