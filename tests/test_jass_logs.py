"""Jass log files as users move them around: export a finished match in the seed's log
format and as kit JSON lines, import either (or a kit file) and get the same replay."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from games.arena.models import Match
from games.arena.play import tables
from games.arena.play.eventlog import write_rows
from games.jass import bots, protocol
from games.jass.logs import import_match
from games.jass.rules import new_state

pytestmark = pytest.mark.django_db

import random  # noqa: E402


def played_match(config=None, seed=5) -> Match:
    """A finished Jass match between built-in bots, stored as the arena stores one."""
    config = config or {"points_to_win": 1000, "match_bonus": True, "max_deals": 3}
    match = tables.create_table("jass", config, ["builtin:rules", "builtin:random", "builtin:rules", "builtin:random"], None)
    Match.objects.filter(pk=match.pk).update(seed=seed, status=Match.Status.RUNNING)
    state, rng, rows, seq = new_state(match.config, seed), random.Random(seed), [], 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        policy = bots.rule_bot if seat % 2 == 0 else bots.random_bot
        action = policy(state.observation(seat), state.legal_actions(seat), rng)
        seq += 1
        rows.append((match.pk, seq, seq, seat, action, False, "", 0.1, ""))
        state.apply({seat: action})
    write_rows(rows)
    tables.finish(match.pk, state.result())
    return Match.objects.get(pk=match.pk)


def replay_end(client, match_id):
    frames = client.get(f"/api/matches/{match_id}/replay/", {"start": 0, "count": 500}).json()["frames"]
    return frames[-1]["view"]


def test_export_seed_format_has_every_hand_and_reimports_to_the_same_replay(client):
    match = played_match()
    one = client.get(f"/matches/{match.pk}/export/log/", {"deal": 2})
    assert one["Content-Disposition"].endswith('game2.json"')
    game = json.loads(one.content)
    assert game["version"] == "V0.2" and len(game["tricks"]) == 9
    assert all(len(p["hand"]) == 9 for p in game["player"])  # all four hands filled
    everything = json.loads(client.get(f"/matches/{match.pk}/export/log/").content)
    assert len(everything) == 3 and everything[1] == game
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("m.json", json.dumps(everything).encode())})
    assert resp.status_code == 302
    imported = Match.objects.get(imported=True)
    original, again = replay_end(client, match.pk), replay_end(client, imported.pk)
    assert again["match_points"] == original["match_points"]
    assert again["last_deal"] == original["last_deal"]


def test_kit_json_lines_round_trip_keeps_names_and_date(client):
    match = played_match()
    text = client.get(f"/matches/{match.pk}/export/jsonl/").content.decode()
    lines = text.strip().splitlines()
    assert len(lines) == 3
    entry = json.loads(lines[0])
    assert entry["player_ids"] == [0, 1, 2, 3]  # integers, as the kit writes them
    # Same-named bots are told apart by seat, here as everywhere.
    assert entry["player_names"] == ["Rule-based bot (N)", "Random bot (E)", "Rule-based bot (S)", "Random bot (W)"]
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("m.jsonl", text.encode())})
    imported = Match.objects.get(pk=int(resp.url.strip("/").split("/")[-1]))
    assert [s.display_name for s in imported.seats.order_by("index")] == entry["player_names"]
    assert imported.finished_at.strftime("%d.%m.%y %H:%M:%S") == entry["date"]
    page = client.get(resp.url).content.decode()
    assert "Jass" in page


def test_both_downloads_write_an_unfinished_last_game_as_the_kits_server_does(client):
    """A match that ends at the target mid-game: its last game reads the same in the seed
    log and in the kit's JSON lines (the hands aside: as dealt, as held), as the kit's
    ``GameState.to_json`` writes a game in progress: the next trick's leader on turn and as
    the ``first`` of a last, empty trick.  The kit reads both as that game in progress."""
    from jass.game.game_state import GameState

    match = played_match({"points_to_win": 1000, "match_bonus": True, "max_deals": 0}, seed=2)
    seed_games = json.loads(client.get(f"/matches/{match.pk}/export/log/").content)
    kit_games = [json.loads(line)["game"]
                 for line in client.get(f"/matches/{match.pk}/export/jsonl/").content.decode().splitlines()]
    assert len(seed_games) == len(kit_games) >= 2
    for seed_game, kit_game in zip(seed_games, kit_games):
        assert {k: v for k, v in seed_game.items() if k != "player"} == \
               {k: v for k, v in kit_game.items() if k != "player"}
    for game in seed_games[:-1]:
        assert game["currentPlayer"] == -1 and len(game["tricks"]) == 9
    last = seed_games[-1]
    leader = last["tricks"][-2]["win"]
    assert last["currentPlayer"] == leader and last["tricks"][-1] == {"first": leader}
    assert len(last["tricks"]) - 1 < 9, "the last game was cut short"
    for game in (last, kit_games[-1]):
        state = GameState.from_json(game)
        assert state.player == leader and state.nr_tricks == len(last["tricks"]) - 1
        assert state.nr_played_cards == 4 * state.nr_tricks < 36
    # Imported again (the seed log carries no target: the points, not the result, are compared)
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("m.json", json.dumps(seed_games).encode())})
    imported = int(resp.url.strip("/").split("/")[-1])
    assert replay_end(client, imported)["match_points"] == replay_end(client, match.pk)["match_points"]


def test_kit_style_log_with_empty_hands_imports():
    state = new_state({"max_deals": 1}, 3)
    rng = random.Random(1)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply({seat: bots.rule_bot(state.observation(seat), state.legal_actions(seat), rng)})
    record = state.deal_records()[0]
    game = protocol.game_log(record)
    for player in game["player"]:
        player["hand"] = []  # the kit writes a finished game with empty hands
    game["tricks"].append({"first": game["tricks"][-1]["win"]})  # and the next leader
    line = json.dumps({"game": game, "date": "01.02.23 10:11:12", "player_ids": [1, 2, 3, 4]})
    parsed = import_match(line)
    assert parsed["names"] == ["North (player 1)", "East (player 2)", "South (player 3)", "West (player 4)"]
    assert len(parsed["steps"]) == 36 + (2 if record["forehand"] == 0 else 1)


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("not json", "line 1"),
    ('{"game": {"dealer": 9}, "date": "01.01.23 00:00:00", "player_ids": [1,2,3,4]}', "dealer"),
    ("[1, 2]", "game 1"),
])
def test_bad_logs_are_refused_with_a_reason(client, text, message):
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("bad.json", text.encode())}, follow=True)
    page = resp.content.decode()
    assert "Could not read the log" in page and message in page
    assert not Match.objects.filter(imported=True).exists()


def test_unfinished_matches_cannot_be_exported(client):
    match = tables.create_table("jass", {}, ["builtin:random"] * 4, None)
    assert client.get(f"/matches/{match.pk}/export/log/").status_code == 404


def test_results_are_shown_by_team_with_both_partners_as_winners(client):
    import html
    import re

    match = played_match()
    team = match.result["winner_team"]
    a, b = match.result["team_points"]
    for url in ("/", "/history/", f"/matches/{match.pk}/"):
        page = client.get(url).content.decode()
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
        line = f"N–S Rule-based bot (N) & Rule-based bot (S) {a} " + ("winners " if team == 0 else "") + \
            f": E–W Random bot (E) & Random bot (W) {b}" + (" winners" if team == 1 else "")
        assert line in text, (url, text[text.find("N–S"):][:200])


def test_match_headers_say_the_settings_in_words_not_form_labels(client):
    import re

    match = played_match({"points_to_win": 1000, "match_bonus": True, "max_deals": 4})
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert "1000 points to win · Match bonus 257 · at most 4 games" in page
    assert "(0: no limit)" not in page and "Stop after" not in page
    line = client.get(f"/matches/{match.pk}/export/jsonl/").content.decode().splitlines()[0]
    game = json.loads(line)["game"]
    kit_line = json.dumps({"game": game, "date": "01.02.23 10:11:12", "player_ids": [1, 2, 3, 4]})
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("kit.txt", kit_line.encode())})
    header = re.search(r'<p class="hint config">(.*?)</p>', client.get(resp.url).content.decode()).group(1)
    assert header == "no Match bonus · at most 1 game · under-trumping as the HSLU server"  # no target
