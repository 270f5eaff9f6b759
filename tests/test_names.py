"""Registered names are unique up to look-alikes (UTS #39 skeleton and case folding, through
ICU), at the bot registration form, at signup, in the database and for rows made before the
rule; guests may not take a registered name as their nickname."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from games.arena.bots import names
from games.arena.models import NameKey, RegisteredBot

ALICE = "alice…"
# The issue's four: upper case, a capital I for the l, one more full stop, a Cyrillic а.
LOOK_ALIKES = ["ALICE…", "aIice…", "alice….", "аlice…"]
PASSWORD = "correct horse battery"


def test_the_issues_look_alikes_share_a_key_with_alice_and_other_names_do_not():
    assert "\u0430" in LOOK_ALIKES[3] and "I" in LOOK_ALIKES[1]
    for name in LOOK_ALIKES:
        assert names.name_keys(name) & names.name_keys(ALICE), name
    for other in ["alicia…", "bob", "alice2", "al ice bot", "malice"]:
        assert not names.name_keys(other) & names.name_keys(ALICE), other
    # Symbols-only names keep their symbols: ":-)" and "<3" are two names.
    assert not names.name_keys(":-)") & names.name_keys("<3")


def _user(username: str):
    return get_user_model().objects.create_user(username, password=PASSWORD)


def _signup(client: Client, username: str):
    return client.post("/accounts/signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD})


@pytest.mark.django_db
def test_signup_refuses_each_look_alike_of_a_username_with_a_clear_message():
    assert _signup(Client(), ALICE).status_code == 302
    for name in LOOK_ALIKES:
        page = _signup(Client(), name)
        assert page.status_code == 200, name
        assert "it looks like a username already registered" in page.content.decode(), name
    # (Django keeps usernames in NFKC: alice… is stored as alice...)
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice..."]


@pytest.mark.django_db
def test_the_bot_form_refuses_each_look_alike_of_a_bot_name_in_the_same_game():
    owner, other = _user("owner"), _user("other")
    client = Client()
    client.force_login(owner)
    page = client.post("/bots/", {"game": "liars_dice", "name": ALICE, "base_url": "", "path_style": "kit"})
    assert 'data-testid="bot-key"' in page.content.decode()
    client.force_login(other)
    for name in LOOK_ALIKES:
        page = client.post("/bots/", {"game": "liars_dice", "name": name, "base_url": "", "path_style": "kit"})
        body = page.content.decode()
        assert "it looks like a bot name already registered" in body, name
        assert 'data-testid="bot-key"' not in body
    # The same name in another game is another bot.
    page = client.post("/bots/", {"game": "hanabi", "name": LOOK_ALIKES[3], "base_url": "", "path_style": "kit"})
    assert 'data-testid="bot-key"' in page.content.decode()
    assert sorted(RegisteredBot.objects.values_list("game", "name")) == [("hanabi", LOOK_ALIKES[3]),
                                                                         ("liars_dice", ALICE)]


@pytest.mark.django_db
def test_the_database_refuses_a_look_alike_however_the_row_is_written():
    _user(ALICE)
    with pytest.raises(names.NameTaken):
        _user("aIice…")  # e.g. createsuperuser or the admin: nothing is written
    assert not get_user_model().objects.filter(username="aIice…").exists()
    # A race both requests passed the check for: the unique key is what holds.
    bob = _user("bob")
    with pytest.raises(IntegrityError), transaction.atomic():
        names.write_keys(names.USER_SCOPE, "ALICE…", user=bob)
    # Renaming a user moves its keys; deleting one frees them.
    bob.username = "carol"
    bob.save()
    assert not NameKey.objects.filter(user=bob, key__in=names.name_keys("bob")).exists()
    _user("BOB")
    bob.delete()
    _user("Carol")


@pytest.mark.django_db
def test_a_guest_may_not_take_a_registered_name_as_nickname():
    _user(ALICE)
    client = Client()
    page = client.post("/nickname/", {"nickname": "ALICE…", "next": "/"}, follow=True)
    assert "is a registered name (or looks like one)" in page.content.decode()
    assert "nickname" not in client.session
    client.post("/nickname/", {"nickname": "Zoe", "next": "/"})
    assert client.session["nickname"] == "Zoe"


@pytest.mark.django_db(transaction=True)
def test_the_migration_keys_existing_names_and_renames_later_look_alikes():
    executor = MigrationExecutor(connection)
    executor.migrate([("arena", "0007_api_tokens")])
    old = executor.loader.project_state([("arena", "0007_api_tokens")]).apps
    User, Bot = old.get_model("auth", "User"), old.get_model("arena", "RegisteredBot")
    alice = User.objects.create(username=ALICE)
    twins = [User.objects.create(username=n) for n in LOOK_ALIKES]
    zoe = User.objects.create(username="zoe")
    first = Bot.objects.create(owner=alice, game="hanabi", name="Firework")
    copy = Bot.objects.create(owner=zoe, game="hanabi", name="FIREW0RK")
    elsewhere = Bot.objects.create(owner=zoe, game="blokus", name="Firework")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    users = dict(get_user_model().objects.values_list("pk", "username"))
    assert users[alice.pk] == ALICE and users[zoe.pk] == "zoe", "the first of each name keeps it"
    assert [users[t.pk] for t in twins] == [f"{n}-{t.pk}" for n, t in zip(LOOK_ALIKES, twins)]
    bots = dict(RegisteredBot.objects.values_list("pk", "name"))
    assert (bots[first.pk], bots[copy.pk], bots[elsewhere.pk]) == ("Firework", f"FIREW0RK-{copy.pk}", "Firework")
    # Every name now holds its keys: a new look-alike is refused by the database.
    assert NameKey.objects.filter(user_id=alice.pk).count() >= 1
    with pytest.raises(names.NameTaken):
        _user("Alice…")


@pytest.mark.django_db
def test_the_admin_says_a_username_is_a_look_alike_instead_of_failing():
    _user(ALICE)
    staff = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client = Client()
    client.force_login(staff)
    page = client.post("/admin/auth/user/add/", {"username": "аlice…", "password1": PASSWORD,
                                                 "password2": PASSWORD, "usable_password": "true"})
    assert page.status_code == 200
    assert "it looks like a username already registered" in page.content.decode()
    page = client.post(f"/admin/auth/user/{staff.pk}/change/", {"username": "aIice…", "date_joined_0": "2026-01-01",
                                                                 "date_joined_1": "00:00:00"})
    assert "it looks like a username already registered" in page.content.decode()
