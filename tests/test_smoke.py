"""The README's server starts, serves the lobby and plays a bots-only match over TCP."""
import json
import urllib.request

from tests.ld_bot import LDBot


def test_two_bots_play_a_match_and_it_is_in_the_history(arena):
    alice, bob = LDBot(arena.liars_dice_port, "alice"), LDBot(arena.liars_dice_port, "bob")
    assert alice.closed.wait(30) and bob.closed.wait(30), "the server closes the connections after the match"
    with urllib.request.urlopen(arena.url + "/api/matches/?game=liars_dice") as resp:
        listing = json.load(resp)
    assert listing["count"] == 1
    match = listing["results"][0]
    assert sorted(s["name"] for s in match["seats"]) == ["alice", "bob"]
    assert match["status"] == "finished"
    overs = alice.round_overs()
    assert overs[-1]["game_winner"] in (1, 2)
    with urllib.request.urlopen(arena.url + "/") as resp:
        assert b"Liar" in resp.read()
