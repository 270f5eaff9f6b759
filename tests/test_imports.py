"""Rows without a bound: every door that creates a table or a match (the create-table form,
"Play a bot now", a log import) shares ``ARENA_TABLES_PER_MINUTE`` per address and per user,
so fresh accounts from one address share one budget; imports are also held to
``ARENA_IMPORTS_PER_MINUTE`` attempts a minute per address and per user (refused files count:
reading them is the cost) and to ``ARENA_IMPORTS_IN_FLIGHT`` files read at once; a hostile
replay file is refused with its reason and leaves no row.  The throttle's clock is patched,
so nothing here waits."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from games.arena.bots import throttle
from games.arena.models import Event, Match
from games.arena.web import exchange
from games.blokus import protocol
from games.jass import logs

pytestmark = pytest.mark.django_db

REPLAY = (Path(__file__).parent / "data" / "blokus" / "synthetic-2021-violation.xml").read_bytes()
FORM = {"players": "2", "dice": "1", "games": "1", "seat0": "builtin:random", "seat1": "builtin:random"}


@pytest.fixture
def limits(settings, monkeypatch):
    """``limits(**ARENA settings)``; the throttle's clock stands still at a minute's start."""
    monkeypatch.setattr(throttle, "clock", lambda: 1_800_000_000.0)

    def apply(**values):
        settings.ARENA = {**settings.ARENA, **values}
    return apply


def upload(client, data: bytes = REPLAY, address: str = "127.0.0.1", follow: bool = False):
    return client.post("/import/blokus/", {"log": SimpleUploadedFile("replay.xml", data)},
                       REMOTE_ADDR=address, follow=follow)


def test_a_guest_imports_a_few_files_a_minute_and_refused_files_count(client, limits):
    limits(IMPORTS_PER_MINUTE=3)
    assert upload(client).status_code == 302
    for _ in range(2):
        assert "Could not read the log" in upload(client, b"<protocol><room", follow=True).content.decode()
    refused = upload(client)
    assert refused.status_code == 429
    assert "Too many imports; try again in 60 s." in refused.content.decode()
    assert Match.objects.count() == 1
    assert upload(client, address="10.9.8.7").status_code == 302  # another address is another visitor


def test_a_user_is_held_to_the_import_limit_from_every_address(client, limits, django_user_model):
    limits(IMPORTS_PER_MINUTE=2)
    client.force_login(django_user_model.objects.create_user("ann", password="right-horse-42"))
    assert upload(client, address="10.0.0.1").status_code == 302
    assert upload(client, address="10.0.0.2").status_code == 302
    assert upload(client, address="10.0.0.3").status_code == 429
    assert Match.objects.filter(created_by__username="ann").count() == 2


def test_imports_share_the_table_limit_with_the_form_and_play_a_bot_now(client, limits):
    limits(TABLES_PER_MINUTE=3, IMPORTS_PER_MINUTE=10)
    client.post("/nickname/", {"nickname": "ann"})
    assert client.post("/tables/new/liars_dice/", FORM).status_code == 302
    assert upload(client).status_code == 302
    assert client.post("/play/liars_dice/").status_code == 302
    refused = upload(client)
    assert refused.status_code == 429
    assert "You have created 3 tables in the last minute" in refused.content.decode()
    assert "You have created 3 tables" in client.post("/tables/new/liars_dice/", FORM).content.decode()
    assert Match.objects.count() == 3


def test_fresh_accounts_from_one_address_share_its_table_budget(client, limits):
    limits(TABLES_PER_MINUTE=3, SIGNUPS_PER_HOUR=10)
    made = []
    for name in ("ann", "ben", "cid"):
        client.post("/accounts/logout/")
        assert client.post("/accounts/signup/", {"username": name, "password1": "right-horse-42",
                                                 "password2": "right-horse-42"}).status_code == 302
        for door in ("/play/liars_dice/", "/tables/new/liars_dice/"):
            response = client.post(door, FORM)  # a refused "Play a bot now" goes back to the lobby
            made.append((name, response.status_code == 302 and response.url.startswith("/matches/")))
    assert made == [("ann", True), ("ann", True), ("ben", True), ("ben", False), ("cid", False), ("cid", False)]
    assert Match.objects.count() == 3
    # The budget is the address's: a guest there is refused too, a guest elsewhere is not.
    client.post("/accounts/logout/")
    client.post("/nickname/", {"nickname": "dee"})
    assert client.post("/tables/new/liars_dice/", FORM).status_code == 200
    assert client.post("/tables/new/liars_dice/", FORM, REMOTE_ADDR="10.1.2.3").status_code == 302


def test_a_users_table_budget_follows_them_to_another_address(client, limits, django_user_model):
    limits(TABLES_PER_MINUTE=2)
    client.force_login(django_user_model.objects.create_user("ann", password="right-horse-42"))
    for address in ("10.0.0.1", "10.0.0.2"):
        assert client.post("/tables/new/liars_dice/", FORM, REMOTE_ADDR=address).status_code == 302
    page = client.post("/tables/new/liars_dice/", FORM, REMOTE_ADDR="10.0.0.3").content.decode()
    assert "You have created 2 tables in the last minute" in page
    assert Match.objects.count() == 2


def test_past_the_imports_in_flight_the_page_says_busy_and_the_attempt_is_not_counted(client, limits):
    limits(IMPORTS_IN_FLIGHT=1, IMPORT_WAIT=0, IMPORTS_PER_MINUTE=1)
    assert exchange.READING.enter()  # another import is being read
    try:
        busy = upload(client)
    finally:
        exchange.READING.leave()
    assert busy.status_code == 503
    assert "The server is busy reading other files: try again in a moment." in busy.content.decode()
    assert not Match.objects.exists()
    assert upload(client).status_code == 302  # the busy answer did not use up the one import


@pytest.mark.parametrize("hostile, reason", [
    ("<protocol>" + "<room/>" * 600_000 + "</protocol>", "<room> has no <data>"),
    ('<protocol><room><data class="memento"><state>' + "<a/>" * 600_000 + "</state></data></room></protocol>",
     f"message 1 has more than {protocol.MAX_ROOM_ELEMENTS} elements"),
    ("<protocol>" + '<room><data class="error"/></room>' * 100_000 + "</protocol>",
     f"the file has more than {protocol.MAX_REPLAY_MESSAGES} messages"),
])
def test_a_hostile_replay_is_refused_with_its_reason_and_no_rows(client, limits, hostile, reason):
    """600,000 elements in 4.2 MB (as the probe sent), in one message, or many skipped ones."""
    limits(IMPORTS_PER_MINUTE=10)
    page = upload(client, hostile.encode(), follow=True)
    assert page.status_code == 200
    assert f"Could not read the log: {reason}" in page.content.decode().replace("&lt;", "<").replace("&gt;", ">")
    assert not Match.objects.exists() and not Event.objects.exists()


#: A billion laughs: ten levels of entities, each ten of the one below.
ENTITY_BOMB = ('<?xml version="1.0"?>\n<!-- a replay -->\n<!DOCTYPE protocol [<!ENTITY l0 "lol">'
               + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
               + "]>\n<protocol>&l9;</protocol>")


@pytest.mark.parametrize("hostile, reason", [
    (ENTITY_BOMB, "the file has a DOCTYPE (XML entity or DTD declarations); a replay file has none"),
    ("<protocol>" + "<a>" * 1000, "elements are nested deeper than 16 levels"),
])
def test_an_entity_bomb_or_deep_nesting_is_refused_in_the_uploaders_terms_not_libxml2s(client, limits, hostile, reason):
    """libxml2 refuses both itself ("Maximum entity amplification factor exceeded, see
    xmlCtxtSetMaxAmplification", "Excessive depth in document: 256, use XML_PARSE_HUGE
    option"); the uploader reads what is wrong with their file instead."""
    limits(IMPORTS_PER_MINUTE=10)
    page = upload(client, hostile.encode(), follow=True).content.decode().replace("&lt;", "<").replace("&gt;", ">")
    assert f"Could not read the log: {reason}" in page
    assert "xmlCtxt" not in page and "XML_PARSE" not in page
    assert not Match.objects.exists()


def test_a_jass_file_of_millions_of_json_lists_is_refused_before_parsing(client, limits):
    """5 MB of ``[],`` would parse to 1.7 million lists; a 1,000-game log has about 33,000."""
    limits(IMPORTS_PER_MINUTE=10)
    hostile = ("[" + "[]," * 1_500_000 + "[]]").encode()
    page = client.post("/import/jass/", {"log": SimpleUploadedFile("m.json", hostile)}, follow=True)
    assert (f"Could not read the log: the file has more than {logs.MAX_CONTAINERS} JSON arrays and objects"
            in page.content.decode())
    assert not Match.objects.exists()


def test_parallel_requests_that_all_pass_the_database_count_are_still_held_to_the_limit(limits, rf):
    """Requests that arrive together all see the database's count before any of them has
    written its row: the atomic counter beside it lets only the limit through, and a creation
    that failed gives its place back."""
    from django.contrib.auth.models import AnonymousUser

    from games.arena.web.views import creation_failed, creation_refused

    limits(TABLES_PER_MINUTE=3)
    requests = []
    for _ in range(5):
        request = rf.post("/tables/new/liars_dice/", REMOTE_ADDR="198.51.100.7")
        request.user = AnonymousUser()
        requests.append(request)
    answers = [creation_refused(request) for request in requests]  # no row written in between
    assert answers[:3] == [None] * 3
    assert answers[3:] == ["Too many tables created at once: wait 60 s before creating another."] * 2
    creation_failed(requests[0])
    assert creation_refused(requests[3]) is None
    assert Match.objects.count() == 0
