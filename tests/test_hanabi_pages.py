"""Hanabi's pages: the moves of a running match come with its page (so its move list survives
a reload), numbered in play order, public facts only; "Play a bot now" words the cooperative
table as a team."""
from __future__ import annotations

import json
import random
import re

import pytest
from django.test import Client

from games.arena import registry
from games.arena.models import Event, Match
from games.arena.play import tables
from games.arena.web.views import play_bot_line
from games.hanabi import rules


def test_play_a_bot_now_words_hanabi_as_one_team_and_other_games_as_opponents():
    assert play_bot_line(registry.get("hanabi")) == "you and two Convention bots, as one team"
    assert play_bot_line(registry.get("liars_dice")) == "you against the Probability bot"


@pytest.mark.django_db
def test_a_running_matchs_page_carries_its_moves_so_far_in_play_order_and_nothing_secret():
    sitter = tables.Sitter(name="hana", session_key="h" * 32)
    match = tables.create_table("hanabi", {"players": 3}, ["me", "builtin:convention", "builtin:random"], sitter)
    assert tables.try_start(match.pk) is not None
    state = rules.new_state(match.config, match.seed)
    rng = random.Random(5)
    happenings, reasons = [], []
    for step in range(1, 16):
        seat = state.on_turn
        action = state.random_action(rng)
        forced = step % 4 == 0
        Event.objects.create(match=match, seq=step, step=step, seat=seat, action=action, forced=forced,
                             reason="no move within 60 s" if forced else "", detail="your hand: secret")
        happenings += state.apply({seat: action})
        reasons.append(["no move within 60 s"] if forced else [])
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    data = json.loads(re.search(r'<script id="match-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    moves = data["moves"]
    assert [m["n"] for m in moves] == list(range(1, 16)), "numbered in play order"
    assert [m["happening"] for m in moves] == happenings
    assert [m["forced"] for m in moves] == reasons
    assert "secret" not in json.dumps(moves), "a forced move's detail is its seat's alone"
    shown = {c["id"] for m in moves for c in [m["happening"].get("card")] if c}
    in_hands_or_deck = {cid for hand in state.hands for cid in hand} | set(state.deck)
    assert not shown & in_hands_or_deck, "no face of a card still held or in the deck"


@pytest.mark.django_db
def test_play_a_bot_now_under_the_bots_own_name_is_refused_with_a_message():
    client = Client()
    response = client.post("/play/hanabi/", {"nickname": "Convention bot"}, follow=True)
    assert response.status_code == 200
    assert "tells its players apart by name: choose another nickname" in response.content.decode()
    assert not Match.objects.filter(game="hanabi").exists()
