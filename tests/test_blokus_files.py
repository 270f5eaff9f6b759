"""Blokus replay files as organisers and bot authors move them around: download a
finished match as the Software-Challenge's replay file, upload that file or one in the official
server's format on the import page, and get a match with the same replay, result and names."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from games.arena.models import Match
from games.arena.play import tables
from games.arena.play.eventlog import write_rows
from games.blokus import bots
from games.blokus.rules import new_state

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parent / "data" / "blokus"


def played_match(variant: str, seed: int) -> Match:
    """A finished match of the heuristic bot (team ONE) against the random bot, stored as the
    arena stores one (with a debug hint on the first move, as a bot may send)."""
    match = tables.create_table("blokus", {"variant": variant}, ["builtin:heuristic", "builtin:random"], None)
    Match.objects.filter(pk=match.pk).update(seed=seed, status=Match.Status.RUNNING)
    state, rng, rows = new_state(match.config, seed), random.Random(seed), []
    while not state.is_terminal():
        seat = state.to_act()[0]
        policy = bots.BUILTIN_BOTS["heuristic" if seat == 0 else "random"][1]
        action = policy(state.observation(seat), state.legal_actions(seat), rng)
        rows.append((match.pk, len(rows) + 1, len(rows) + 1, seat, action, False, "", 0.1,
                     'hints: "opening"' if not rows else ""))
        state.apply({seat: action})
    write_rows(rows)
    tables.finish(match.pk, state.result())
    return Match.objects.get(pk=match.pk)


def last_frame(client, match_id: int) -> dict:
    frames = client.get(f"/api/matches/{match_id}/replay/", {"start": 0, "count": 500}).json()["frames"]
    return frames[-1]["view"]


@pytest.mark.parametrize("variant", ["2021", "2027"])
def test_a_downloaded_replay_file_imports_to_the_same_game(client, variant):
    match = played_match(variant, seed=21)
    resp = client.get(f"/matches/{match.pk}/export/xml/")
    assert resp.status_code == 200 and resp["Content-Type"] == "application/xml"
    assert f'blokus-match{match.pk}.xml' in resp["Content-Disposition"]
    text = resp.content.decode()
    assert text.startswith("<protocol>") and text.rstrip().endswith("</protocol>")
    assert text.count('<data class="memento">') == match.events.count() + 1
    assert '<data class="result">' in text

    resp = client.post("/import/blokus/", {"log": SimpleUploadedFile("replay.xml", text.encode())})
    assert resp.status_code == 302, resp.content.decode()[:500]
    imported = Match.objects.get(pk=int(resp.url.rstrip("/").split("/")[-1]))
    assert imported.imported and imported.game == "blokus"
    assert imported.config["variant"] == variant
    assert imported.result["scores"] == match.result["scores"]
    assert imported.result["winner"] == match.result["winner"] == 0
    assert [s.display_name for s in imported.seats.order_by("index")] == ["Heuristic bot", "Random bot"]
    assert last_frame(client, imported.pk)["board"] == last_frame(client, match.pk)["board"]
    page = client.get(resp.url).content.decode()
    assert "Heuristic bot" in page and "Software-Challenge " + variant in page


def test_the_import_page_says_what_it_takes_and_reads_our_synthetic_file_in_the_server_format(client):
    page = client.get("/import/blokus/").content.decode()
    assert "Software-Challenge replay file" in page and 'accept=".xml' in page
    text = (DATA / "synthetic-2021-violation.xml").read_text()
    resp = client.post("/import/blokus/", {"log": SimpleUploadedFile("replay.xml", text.encode())})
    assert resp.status_code == 302
    imported = Match.objects.get(pk=int(resp.url.rstrip("/").split("/")[-1]))
    assert imported.result["causes"] == ["RULE_VIOLATION", "REGULAR"] and imported.result["winner"] == 1
    assert [s.display_name for s in imported.seats.order_by("index")] == ["Bob", "Alice"]


@pytest.mark.parametrize("bad, says", [
    (b"<protocol><room", "Could not read the log"),
    (b'<!DOCTYPE x [<!ENTITY a "aaaa">]><protocol>&a;</protocol>', "Could not read the log"),
    (b"\xff\xfe not text", "not UTF-8"),
])
def test_a_broken_or_hostile_file_gets_a_message_and_no_match(client, bad, says):
    before = Match.objects.count()
    resp = client.post("/import/blokus/", {"log": SimpleUploadedFile("bad.xml", bad)}, follow=True)
    assert says in resp.content.decode()
    assert Match.objects.count() == before
