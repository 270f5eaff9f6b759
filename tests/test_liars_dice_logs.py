"""Liar's Dice match logs as bot authors use them: a finished match downloads from its page as
JSON lines, one line per move with every player's answer, and the lines replay to the match."""
from __future__ import annotations

import json
import random
import re

import pytest

from games.arena.models import Match
from games.arena.play import tables
from games.arena.play.eventlog import write_rows
from games.liars_dice import bots, protocol
from games.liars_dice.rules import new_state

pytestmark = pytest.mark.django_db

NAMES = ["Probability bot (1)", "Random bot", "Probability bot (3)"]  # same-named seats get a tag


def played_match(seed=11) -> tuple[Match, dict]:
    """A finished three-player match stored as the arena stores one, where seat 1 sends nothing
    on its first turn (a forced, late answer), seat 2 sends a malformed reply on its first
    turn, and seat 0 lets its first challenge window run out as a person would.  Returns the
    match and ``{step: {seat: (forced, reason)}}`` for those answers."""
    match = tables.create_table("liars_dice", {"players": 3, "dice": 2, "games": 2},
                                ["builtin:probability", "builtin:random", "builtin:probability"], None)
    Match.objects.filter(pk=match.pk).update(seed=seed, status=Match.Status.RUNNING)
    state, rng, rows, marked = new_state(match.config, seed), random.Random(seed), [], {}
    policies = [bots.probability_bot, bots.random_bot, bots.probability_bot]
    step = 0
    while not state.is_terminal():
        step += 1
        for seat in state.to_act():
            action = policies[seat](state.observation(seat), state.legal_actions(seat), rng)
            forced, reason, detail = False, "", ""
            if seat == state.on_turn and seat in (1, 2) and not any(seat in m for m in marked.values()):
                action, forced = None, True
                reason, detail = (("no reply within 3 s", "") if seat == 1 else
                                  ("malformed reply", 'malformed reply: a bid is [face, count]; got [3,2.5]'))
                marked.setdefault(step, {})[seat] = (True, reason)
            elif seat == 0 and seat != state.on_turn and not any(0 in m for m in marked.values()):
                action, reason = "pass", "let the bid stand"
                marked.setdefault(step, {})[seat] = (False, reason)
            rows.append((match.pk, len(rows) + 1, step, seat, action, forced, reason, 1.25, detail))
        state.apply({r[3]: r[4] for r in rows if r[2] == step})
    write_rows(rows)
    tables.finish(match.pk, state.result())
    return Match.objects.get(pk=match.pk), marked


def test_a_finished_match_downloads_as_one_json_line_per_move_with_every_answer(client):
    match, marked = played_match()
    steps = match.events.order_by("-step").values_list("step", flat=True).first()
    # Built-in seats belong to no one: their details are in everyone's download.  (A person's
    # or a registered bot's are their owner's: tests/test_api_tokens.py.)

    page = client.get(f"/matches/{match.pk}/").content.decode()
    link = re.search(r'<a href="([^"]+)" download>moves as JSON lines \(every answer\)</a>', page)
    assert link and link.group(1) == f"/matches/{match.pk}/export/jsonl/"

    resp = client.get(link.group(1))
    assert resp.status_code == 200 and resp["Content-Type"] == "application/x-ndjson"
    assert f'liars-dice-match{match.pk}.jsonl' in resp["Content-Disposition"]
    lines = [json.loads(line) for line in resp.content.decode().splitlines()]
    assert [line["step"] for line in lines] == list(range(1, steps + 1)), "one line per move"

    replay = new_state(match.config, match.seed)
    for line in lines:
        assert line["match"] == match.pk
        assert [a["seat"] for a in line["answers"]] == list(replay.to_act()), "every player asked, in turn order"
        assert line["on_turn"] == replay.on_turn == line["answers"][0]["seat"]
        assert line["hands"] == replay.hands and line["dice_on_table"] == sum(replay.counts)
        assert (line["game_number"], line["round_number"], line["move_number"]) == \
            (replay.game_number, replay.round_number, replay.move_number)
        assert line["last_bid"] == list(replay.last_bid)
        for a in line["answers"]:
            assert a["name"] == NAMES[a["seat"]] and a["think_ms"] == 1.2
            forced, reason = marked.get(line["step"], {}).get(a["seat"], (False, ""))
            assert (a["forced"], a["reason"]) == (forced, reason)
            assert a["late"] is (reason in ("no reply within 3 s", "let the bid stand"))
            assert ("detail" in a) is (reason == "malformed reply")
        actions = {a["seat"]: None if a["move"] is None else protocol.move_to_action(a["move"])
                   for a in line["answers"]}
        happenings = replay.apply(actions)
        if happenings:
            over = line["round_over"]
            assert over["round_loser"] == happenings[0]["round_loser"]
            assert over["dice_left"] == replay.counts or over["game_winner"] is not None
        else:
            assert line["round_over"] is None
    assert replay.is_terminal() and replay.result() == match.result
    late = [(line["step"], a["seat"]) for line in lines for a in line["answers"] if a["late"]]
    assert len(late) == 2 and all(a["move"] is None or a["move"] == "pass"
                                  for line in lines for a in line["answers"] if a["late"])
    assert any(line["round_over"] and line["round_over"]["reason"] == "no_answer" for line in lines)


def test_an_unfinished_match_has_no_download(client):
    match = tables.create_table("liars_dice", {}, ["builtin:random", "builtin:random"], None)
    assert client.get(f"/matches/{match.pk}/export/jsonl/").status_code == 404
    assert "export/jsonl" not in client.get(f"/matches/{match.pk}/").content.decode()
