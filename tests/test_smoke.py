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


TAG = '<span class="tag">automatic</span>'


def test_a_bot_that_hangs_up_before_its_table_starts_leaves_no_table_behind(arena):
    import socket
    import time

    with socket.create_connection(("127.0.0.1", arena.liars_dice_port)):
        deadline = time.monotonic() + 5
        while TAG not in urllib.request.urlopen(arena.url + "/").read().decode():
            assert time.monotonic() < deadline, "the waiting bot's automatic table is shown"
            time.sleep(0.05)
    deadline = time.monotonic() + 5
    while TAG in urllib.request.urlopen(arena.url + "/").read().decode():
        assert time.monotonic() < deadline, "the empty automatic table is removed"
        time.sleep(0.05)
