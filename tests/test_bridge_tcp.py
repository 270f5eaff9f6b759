"""Contract bridge's text protocol over real sockets (docs/bridge-protocol.md): scripted clients
written from the page alone (tests/bridge_text_client.py) against a server started as the
README says, with short deadlines."""
from __future__ import annotations

import json
import signal
import socket
import time
import urllib.request

import pytest

from tests.bridge_text_client import SEATS, TextClient
from tests.serverproc import wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored

#: One board played twice (instant replay) at automatic tables; a silent seat waits 1 s.
ENV = {"BRIDGE_AUTO_BOARDS": "1", "BRIDGE_BOT_DEADLINE": "1", "ARENA_ROUND_PAUSE": "0",
       "ARENA_BUILTIN_DELAY": "0", "ARENA_HUMAN_DEADLINE": "5"}


@pytest.fixture
def arena(arena_factory):
    return arena_factory(env=ENV)


def api(arena, path: str):
    with urllib.request.urlopen(arena.url + path, timeout=10) as resp:
        return json.loads(resp.read())


def match_of(arena, match_id) -> dict:
    return api(arena, f"/api/matches/{match_id}/")


def others_cards_never_shown(client: TextClient, hands: dict[int, set[str]]) -> None:
    """No line to ``client`` names a card of another seat's hand as dealt before that card is
    played, but dummy's after the opening lead (DUMMY lines are checked to be dummy's)."""
    for line in client.lines:
        name, *args = line.split(" ")
        if name == "HAND":
            for seat, cards in hands.items():
                if seat != client.seat:
                    assert not set(args) & cards or set(args) == cards and False, line


def play_four(arena, joins: list[str], names=("Ann", "Ben", "Cat", "Dan"), seed=0) -> list[TextClient]:
    clients = []
    for i, (name, join) in enumerate(zip(names, joins)):
        c = TextClient(arena.bridge_port, name, seed=seed + i)
        c.wait_for(lambda line: line.startswith("GAMES"))
        c.send(join)
        c.wait_for(lambda line, n=name: line.startswith("JOINED") and line.endswith(" " + n))
        clients.append(c)
    return clients


def test_four_clients_join_any_and_play_the_match_to_the_end(arena):
    clients = play_four(arena, ["JOIN-M ANY"] * 4)
    for c in clients:
        c.wait_closed()
    games = {c.game for c in clients}
    assert len(games) == 1
    assert sorted(c.seat for c in clients) == [0, 1, 2, 3]
    match = match_of(arena, games.pop())
    assert match["status"] == "finished"
    for c in clients:
        assert not c.naks(), c.naks()
        scores = [line for line in c.lines if line.startswith("SCORE-M")]
        assert len(scores) == 2  # one board, played twice
        hands = [line for line in c.lines if line.startswith("HAND")]
        assert len(hands) == 2 and all(len(h.split()) == 14 for h in hands)
