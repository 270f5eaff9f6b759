"""Hanabi bots that leave mid-game, and people who join a web table, over real sockets
against a server started as the README says.

A bot that has left has its turns played at once (a discard, forced, with the reason
"disconnected") as a Liar's Dice or Blokus bot that hung up has, at a web table and at an
automatic one, on Hanabi's port and on the web port's ``/ws/bots/hanabi/``; when every bot has
left, the match ends as abandoned.

How the bots leave: Daphne refuses to send on a socket between the moment it began closing
and the moment the connection is dropped ("Attempt to send on a closed protocol"); the bot's
consumer died of that refusal, so its disconnect never reached the arena and its seat waited
out every deadline.  A bot's own close opens that window for one turn of the loop only, which a
test cannot aim at.  A bot the server cuts off (more than ``MAX_QUEUED_FRAMES`` frames read at
once) keeps it open for ``FLOODER_LINGER_S`` (1 s), and the answers to the frames it sent go
into it: that is how these bots leave, then they hang up.  The deadline is long (60 s), so a
seat that waited out a single turn makes the game last longer than the tests wait.
"""
from __future__ import annotations

import json
import sqlite3

from games.arena.management.commands.serve import MAX_QUEUED_FRAMES
from tests.hanabi_client import HanabiClient
from tests.human_client import Guest
from tests.serverproc import wait_until

DEADLINE = 60
#: Well under one deadline: the rest of a game of bots that answer at once takes about a second.
QUICKLY = 30
#: The bot sockets' own rate bound lifted, so that the server's queue bound is what cuts a
#: flooding bot off (the consumer then does not know its socket is closing).
ENV = {"HANABI_BOT_DEADLINE": str(DEADLINE), "ARENA_WS_BURST": "1000", "ARENA_WS_MESSAGES_PER_S": "1000"}


def leave(bot: HanabiClient) -> None:
    """``bot`` sends more frames than the server queues at once, is cut off and hangs up."""
    bot.flood({"msg_type": "GAME_START_REQUEST"}, MAX_QUEUED_FRAMES + 6)
    assert bot.done.wait(10), "the server closed it"
    bot.close()


def rows(server, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(server.data_dir / "arena.sqlite3") as db:
        return db.execute(sql, args).fetchall()


def forced(server, name: str) -> list[tuple[str, float]]:
    """``(reason, think_ms)`` of each forced answer of the seat ``name`` played at."""
    return rows(server, "SELECT e.reason, e.think_ms FROM arena_event e JOIN arena_seat s "
                        "ON s.match_id = e.match_id AND s.\"index\" = e.seat "
                        "WHERE e.forced AND s.display_name = ? ORDER BY e.seq", name)


def played_at_once_after_leaving(server, name: str) -> None:
    """The seat of ``name`` had its turns played for it with the reason "disconnected", each at
    once but the one in hand when it left, if any."""
    answers = forced(server, name)
    assert len(answers) >= 2 and {reason for reason, _ in answers} == {"disconnected"}
    assert sum(think_ms > 0 for _, think_ms in answers) <= 1, answers


def no_send_on_a_closed_socket(server) -> None:
    log = server.log()
    assert "closed protocol" not in log and "Exception inside application" not in log


def test_a_bot_that_leaves_a_web_table_mid_game_has_its_turns_played_at_once(arena_factory):
    server = arena_factory(env=ENV)
    server.shell("from games.arena.play import tables\n"
                 "tables.create_table('hanabi', {'players': 3}, ['open_bot', 'builtin:convention', 'open_bot'], None)\n")
    stays = HanabiClient(server.hanabi_port, "stays")
    stays.wait_for("CONNECTION_RESPONSE")
    leaves = HanabiClient(server.hanabi_port, "leaves", play=False)
    leaves.wait_for("GAME_START_RESPONSE")
    leave(leaves)
    stays.wait_for("GAME_OVER_RESPONSE", timeout=QUICKLY)
    assert [m["discarding_player"] for m in stays.of_type("DISCARD_CARD_RESPONSE")].count("leaves") >= 2
    played_at_once_after_leaving(server, "leaves")
    assert rows(server, "SELECT status FROM arena_match") == [("finished",)]
    no_send_on_a_closed_socket(server)
    stays.close()


def test_a_bot_that_leaves_an_automatic_table_on_the_web_port_has_its_turns_played_at_once(arena_factory):
    server = arena_factory(env=ENV)
    port, path = server.http_port, "/ws/bots/hanabi/"
    stays = HanabiClient(port, "stays", path=path)
    stays.wait_for("CONNECTION_RESPONSE")
    leaves = HanabiClient(port, "leaves", path=path, start_when=2, play=False)
    assert leaves.wait_for("GAME_START_RESPONSE")[0]["game_state"]["next_player"] == "leaves"
    leave(leaves)
    stays.wait_for("GAME_OVER_RESPONSE", timeout=QUICKLY)
    played_at_once_after_leaving(server, "leaves")
    assert forced(server, "stays") == []
    no_send_on_a_closed_socket(server)
    stays.close()


def test_when_every_bot_has_left_the_match_ends_as_abandoned(arena_factory):
    server = arena_factory(env=ENV)
    first = HanabiClient(server.hanabi_port, "first", play=False)
    first.wait_for("CONNECTION_RESPONSE")
    second = HanabiClient(server.hanabi_port, "second", start_when=2, play=False)
    first.wait_for("GAME_START_RESPONSE")
    second.wait_for("GAME_START_RESPONSE")
    leave(second)  # on turn first: its turn is played for it, then the other waits for "first"
    leave(first)
    ended = wait_until(lambda: rows(server, "SELECT status, result FROM arena_match WHERE status != 'running'"),
                       QUICKLY, "the match's end")
    assert [(status, json.loads(result)) for status, result in ended] == [
        ("aborted", {"aborted": "abandoned: every player left"})]
    no_send_on_a_closed_socket(server)


def test_bots_at_a_web_table_hear_of_a_person_who_joins_before_the_game_starts(arena_factory):
    """The original announces every join to everyone connected: a person who takes the last
    seat through the web is named, last, in a CONNECTION_RESPONSE to each bot there, before
    the GAME_START_RESPONSE."""
    server = arena_factory(env=ENV)
    match_id = int(server.shell(
        "from games.arena.play import tables\n"
        "print(tables.create_table('hanabi', {'players': 3}, ['open_bot', 'open_human', 'open_bot'], None).pk)\n").split()[-1])
    x = HanabiClient(server.hanabi_port, "x", play=False)
    x.wait_for("CONNECTION_RESPONSE")
    y = HanabiClient(server.hanabi_port, "y", play=False)
    y.wait_for("CONNECTION_RESPONSE")
    Guest(server.url, "ann").join(match_id, 1)
    for bot in (x, y):
        bot.wait_for("GAME_START_RESPONSE")
        kinds = [(m["msg_type"], m.get("names")) for m in bot.messages[:bot.messages.index(
            bot.of_type("GAME_START_RESPONSE")[0])]]
        assert kinds[-1] == ("CONNECTION_RESPONSE", ["x", "y", "ann"]), kinds
    assert [m["names"] for m in x.of_type("CONNECTION_RESPONSE")] == [["x"], ["x", "y"], ["x", "y", "ann"]]
    assert [m["names"] for m in y.of_type("CONNECTION_RESPONSE")] == [["x", "y"], ["x", "y", "ann"]]
    x.close(), y.close()
