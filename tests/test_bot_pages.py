"""The bots page as owners and others use it: only the owner sees a bot's
address and what its connection tests answered, only the owner may test it (rate-limited),
and only the owner decides whether others may seat it."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from games.arena.bots import throttle
from games.arena.models import RegisteredBot
from games.arena.play import tables

pytestmark = pytest.mark.django_db

SECRET_ANSWER = "internal-service-banner-4711"


@pytest.fixture
def bot(django_user_model):
    cache.clear()
    owner = django_user_model.objects.create_user("owner", password="pw-owner-123")
    return RegisteredBot.objects.create(
        owner=owner, game="jass", name="mybot", base_url="http://10.9.8.7:1/hidden-path", path_style="kit",
        last_check={"ok": False, "verdict": "not JSON", "answer": SECRET_ANSWER, "status": 200, "request": {}})


def logged_in(django_user_model, name: str) -> Client:
    web = Client()
    web.force_login(django_user_model.objects.get_or_create(username=name)[0])
    return web


def test_only_the_owner_sees_the_address_and_the_test_answer(bot, django_user_model):
    mine = logged_in(django_user_model, "owner").get("/bots/").content.decode()
    assert "hidden-path" in mine and SECRET_ANSWER in mine
    for visitor in (Client(), logged_in(django_user_model, "stranger")):
        page = visitor.get("/bots/").content.decode()
        assert "mybot" in page
        assert "hidden-path" not in page and "10.9.8.7" not in page and SECRET_ANSWER not in page


def test_only_the_owner_may_test_and_tests_are_rate_limited(bot, django_user_model, settings, monkeypatch):
    # One clock minute for the three tests: a minute's turn between them would reset the count.
    monkeypatch.setattr(throttle, "clock", lambda: 1_800_000_000.0)
    anonymous = Client().post(f"/bots/{bot.pk}/test/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert logged_in(django_user_model, "stranger").post(f"/bots/{bot.pk}/test/").status_code == 403
    settings.ARENA = {**settings.ARENA, "BOT_TESTS_PER_MINUTE": 2, "JASS_BOT_DEADLINE": 1.0}
    owner = logged_in(django_user_model, "owner")
    pages = [owner.post(f"/bots/{bot.pk}/test/", follow=True).content.decode() for _ in range(3)]
    assert ["at most 2 connection tests a minute" in p for p in pages] == [False, False, True]
    bot.refresh_from_db()
    assert bot.last_check["answer"] != SECRET_ANSWER, "the test ran and its result replaced the old one"


def test_the_owner_decides_who_may_seat_the_bot(bot, django_user_model):
    seat = [f"registered:{bot.pk}", "builtin:random", "builtin:random", "builtin:random"]
    config = {"points_to_win": 1000}
    stranger = tables.Sitter("s", user_id=django_user_model.objects.create_user("stranger").pk)
    with pytest.raises(ValueError, match="not shared"):
        tables.create_table("jass", config, seat, stranger)
    assert f"registered:{bot.pk}" not in Client().get("/tables/new/jass/").content.decode()
    assert logged_in(django_user_model, "stranger").post(f"/bots/{bot.pk}/shared/", {"shared": "on"}).status_code == 403
    owner = logged_in(django_user_model, "owner")
    assert f"registered:{bot.pk}" in owner.get("/tables/new/jass/").content.decode()
    owner.post(f"/bots/{bot.pk}/shared/", {"shared": "on"})
    bot.refresh_from_db()
    assert bot.shared
    assert f"registered:{bot.pk}" in Client().get("/tables/new/jass/").content.decode()
    assert tables.create_table("jass", config, seat, stranger).seats.count() == 4
