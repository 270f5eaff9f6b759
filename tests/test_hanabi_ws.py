"""Hanabi bots over real WebSockets on the Hanabi port of a server started as the README
says: whole games for 2 to 5 players, the lobby's order, every error explanation, hidden
information, deadlines, disconnects and bad frames (specs/hanabi-ws.*)."""
from __future__ import annotations

import json
import sqlite3

import pytest
from websockets.sync.client import connect

from tests.hanabi_client import HanabiClient
from tests.serverproc import wait_until

#: Short deadlines so that silent bots do not hold a test for long.
ENV = {"HANABI_BOT_DEADLINE": "1.5", "ARENA_FIRST_MESSAGE_TIMEOUT": "3"}


@pytest.fixture
def hanabi(arena_factory):
    return arena_factory(env=ENV)


def own_cards_hidden(client: HanabiClient) -> None:
    """Every game state ``client`` received shows its own cards' faces only where its
    knowledge says it knows them, and the deck as ids alone."""
    for msg in client.messages:
        state = msg.get("game_state")
        if state is None:
            continue
        assert all(card["color"] is None and card["number"] is None for card in state["deck"])
        me = next(p for p in state["players"] if p["name"] == client.my_name)
        for cih in me["cards"]:
            knows = cih["knowledge"]
            assert (cih["card"]["color"] is not None) == knows["knows_color"], cih
            assert (cih["card"]["number"] is not None) == knows["knows_number"], cih
        for other in state["players"]:
            if other["name"] != client.my_name:
                assert all(c["card"]["color"] and c["card"]["number"] for c in other["cards"])


def run_game(port: int, players: int, path: str = "") -> list[HanabiClient]:
    """A game of ``players`` bots written from the seed: they join in order and the last to
    join (the original's ``next_player``) sends GAME_START_REQUEST once it sees them all."""
    names = [f"bot-{players}-{i}" for i in range(players)]
    clients = []
    for i, name in enumerate(names):
        clients.append(HanabiClient(port, name, path=path, start_when=players if i == players - 1 else None))
        clients[-1].wait_for("CONNECTION_RESPONSE")  # joined, in this order
    for client in clients:
        client.wait_for("GAME_OVER_RESPONSE", timeout=60)
        assert client.done.wait(10) and client.close_code == 1000
    return clients


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_whole_game_between_bots_written_for_the_original(hanabi, players):
    """The joiners get CONNECTION_RESPONSEs in join order (the joiner last; none before their
    own), the last to join starts (at five too: the full table waits for its request) and
    moves first, every action's response reaches everyone, the game ends with
    GAME_OVER_RESPONSE and close 1000, no bot ever gets an ERROR_RESPONSE, and no bot ever
    sees a face of its own unknown cards or of the deck."""
    clients = run_game(hanabi.hanabi_port, players)
    first = clients[0].of_type("CONNECTION_RESPONSE")
    assert [m["names"] for m in first] == [[c.name for c in clients[:k]] for k in range(1, players + 1)]
    for k, client in enumerate(clients):
        assert client.my_name == client.name
        assert client.of_type("CONNECTION_RESPONSE")[0]["names"][-1] == client.name
        assert len(client.of_type("CONNECTION_RESPONSE")) == players - k
    start = clients[0].wait_for("GAME_START_RESPONSE")[0]["game_state"]
    assert [p["name"] for p in start["players"]] == [c.name for c in clients], "join order"
    assert start["next_player"] == clients[-1].name, "the last to join moves first"
    assert all(len(p["cards"]) == (5 if players <= 3 else 4) for p in start["players"])
    assert start["hint_tokens"] == 8 and start["err_tokens"] == 3 and start["turns_left"] is None
    assert len(start["deck"]) == 50 - players * (5 if players <= 3 else 4)
    actions = [m for m in clients[0].messages if m["msg_type"].endswith("_RESPONSE") and "game_state" in m
               and m["msg_type"] != "GAME_START_RESPONSE"]
    for client in clients[1:]:
        theirs = [m for m in client.messages if "game_state" in m and m["msg_type"] != "GAME_START_RESPONSE"]
        assert [m["msg_type"] for m in theirs] == [m["msg_type"] for m in actions], "everyone hears every action"
    score = clients[0].of_type("GAME_OVER_RESPONSE")[0]["score"]
    assert 0 <= score <= 25 and all(c.of_type("GAME_OVER_RESPONSE")[0]["score"] == score for c in clients)
    for client in clients:
        own_cards_hidden(client)
        assert not client.of_type("ERROR_RESPONSE"), client.of_type("ERROR_RESPONSE")
    def finished():
        with sqlite3.connect(hanabi.data_dir / "arena.sqlite3") as db:
            return db.execute("SELECT result FROM arena_match WHERE game='hanabi' AND status='finished'").fetchone()

    result = wait_until(finished, 10, "the match stored as finished")
    assert json.loads(result[0])["score"] == score


def test_errors_go_to_the_offender_only_with_the_originals_explanations(hanabi):
    port = hanabi.hanabi_port
    a = HanabiClient(port, "ann", play=False)
    a.wait_for("CONNECTION_RESPONSE")
    raw = connect(f"ws://127.0.0.1:{port}/any/path", open_timeout=10, legacy=True)

    def ask(frame) -> dict:
        raw.send(frame if isinstance(frame, str) else json.dumps(frame))
        return json.loads(raw.recv(timeout=10))

    assert ask({"msg_type": "GAME_START_REQUEST"})["explanation"] == "The Player is not yet connected."
    assert ask("not json")["explanation"] == "The type of the message could not be read."
    assert ask({"msg_type": "NO_SUCH_REQUEST"})["explanation"] == "The type of the message could not be read."
    bad = ask({"msg_type": "CONNECTION_REQUEST"})
    assert bad == {"msg_type": "ERROR_RESPONSE", "err_details": "name must be a string",
                   "explanation": "The payload of the received message could not be deserialized."}
    assert ask({"msg_type": "CONNECTION_REQUEST", "name": "ann"})["explanation"] == \
        "A Player with the chosen name already exists."
    raw.send(json.dumps({"msg_type": "CONNECTION_REQUEST", "name": "ben", "extra": [1, 2]}))  # unknown fields ignored
    assert json.loads(raw.recv(timeout=10)) == {"msg_type": "CONNECTION_RESPONSE", "names": ["ann", "ben"]}
    assert ask({"msg_type": "CONNECTION_REQUEST", "name": "ben"})["explanation"] == "The Player is already connected."
    assert ask({"msg_type": "PLAY_CARD_REQUEST", "played_card_id": 1})["explanation"] == \
        "Tried to send a request when it was someone else's turn."
    a.send({"msg_type": "GAME_START_REQUEST"})
    start = json.loads(raw.recv(timeout=10))
    assert start["msg_type"] == "GAME_START_RESPONSE" and start["game_state"]["next_player"] == "ben"
    mine = [c["card"]["id"] for c in start["game_state"]["players"][1]["cards"]]
    theirs = [c["card"]["id"] for c in start["game_state"]["players"][0]["cards"]]
    assert ask({"msg_type": "PLAY_CARD_REQUEST", "played_card_id": theirs[0]})["explanation"] == \
        "The given Card cannot be found on the Player's hand."
    assert ask({"msg_type": "HINT_COLOR_REQUEST", "target_player": "nobody", "color": "RED"})["explanation"] == \
        "The given Player could not be found."
    assert ask({"msg_type": "HINT_COLOR_REQUEST", "target_player": "ben", "color": "RED"})["explanation"] == \
        "The given Player could not be found.", "no hint to oneself (our rule)"
    assert ask({"msg_type": "HINT_NUMBER_REQUEST", "target_player": "ann", "number": "SIX"})["explanation"] == \
        "The payload of the received message could not be deserialized."
    assert ask({"msg_type": "CONNECTION_REQUEST", "name": "cid"})["explanation"] == "The Player is already connected."
    done = ask({"msg_type": "DISCARD_CARD_REQUEST", "discarded_card_id": mine[0]})
    assert done["msg_type"] == "DISCARD_CARD_RESPONSE" and done["discarding_player"] == "ben"
    assert done["drawn_card"]["color"] is None, "the drawer does not see the card it drew"
    # Not on turn, but a start request for a game under way hears "already started" (the
    # original would check the turn first): a bot must not take it for a turn error.
    assert ask({"msg_type": "GAME_START_REQUEST"})["explanation"] == \
        "The game cannot be started because it's started already."
    wait_until(lambda: len(a.of_type("DISCARD_CARD_RESPONSE")) == 1, 10, "ann heard the discard")
    seen_by_ann = a.of_type("DISCARD_CARD_RESPONSE")[0]
    assert seen_by_ann["drawn_card"]["color"] is not None, "the others see the drawn card"
    assert not a.of_type("ERROR_RESPONSE"), "errors go to the offender only"
    late = HanabiClient(port, "late", play=False)
    assert late.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["late"], "a new automatic table gathers"
    raw.close(), a.close(), late.close()


def test_silent_and_departed_bots_have_a_card_discarded_for_them_and_the_game_goes_on(hanabi):
    """A bot that never acts on its turn has its oldest untouched card discarded after the
    deadline (forced, with the reason); one that disconnects, at once; the other plays on to
    the end."""
    port = hanabi.hanabi_port
    silent = HanabiClient(port, "silent", play=False)
    silent.wait_for("CONNECTION_RESPONSE")
    player = HanabiClient(port, "player", start_when=2)
    start = player.wait_for("GAME_START_RESPONSE")[0]["game_state"]
    assert start["next_player"] == "player"
    forced = silent.wait_for("DISCARD_CARD_RESPONSE", timeout=20)[0]
    assert forced["discarding_player"] == "silent"
    before = silent.messages[silent.messages.index(forced) - 1]["game_state"]
    hand = next(p["cards"] for p in before["players"] if p["name"] == "silent")
    untouched = [c["card"]["id"] for c in hand if not c["knowledge"]["knows_color"] and not c["knowledge"]["knows_number"]]
    assert forced["discarded_card"]["id"] == min(untouched or [c["card"]["id"] for c in hand]), \
        "the oldest card no hint touched"
    silent.close()
    player.wait_for("GAME_OVER_RESPONSE", timeout=120)
    with sqlite3.connect(hanabi.data_dir / "arena.sqlite3") as db:
        reasons = [r for (r,) in db.execute("SELECT reason FROM arena_event WHERE forced ORDER BY seq")]
    assert reasons[0] == "no action within 1.5 s" and "disconnected" in reasons
    assert set(reasons) == {"no action within 1.5 s", "disconnected"}


def test_bad_frames_close_or_answer_and_a_silent_connection_is_closed(hanabi):
    port = hanabi.hanabi_port
    big = connect(f"ws://127.0.0.1:{port}", open_timeout=10, max_size=2**20, legacy=True)
    big.send("x" * (17 * 1024))
    with pytest.raises(Exception):
        big.recv(timeout=10)
    assert big.close_code == 4013
    flood = connect(f"ws://127.0.0.1:{port}", open_timeout=10, legacy=True)
    for _ in range(200):
        try:
            flood.send("{}")
        except Exception:
            break
    wait_until(lambda: flood.close_code is not None or _drain(flood), 20, "the flooder closed")
    assert flood.close_code == 4008
    silent = connect(f"ws://127.0.0.1:{port}", open_timeout=10, legacy=True)
    with pytest.raises(Exception):
        silent.recv(timeout=15)
    assert silent.close_code == 4000, "no valid message within ARENA_FIRST_MESSAGE_TIMEOUT"
    on_main_port = HanabiClient(hanabi.http_port, "via-main-port", path="/ws/bots/hanabi/", play=False)
    assert on_main_port.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["via-main-port"]
    on_main_port.close()


def _drain(ws) -> bool:
    try:
        ws.recv(timeout=0.1)
    except Exception:
        pass
    return ws.close_code is not None


def test_a_full_table_waits_for_a_start_request_then_starts_by_itself_and_a_late_request_hears_already_started(
        arena_factory):
    """Five bots that never ask to start: the full table starts by itself after
    ``HANABI_FULL_TABLE_WAIT``; a sixth bot meanwhile gathers at a new table; a start request
    once the game runs gets the original's "already started", from a bot on turn or not."""
    server = arena_factory(env={**ENV, "HANABI_FULL_TABLE_WAIT": "1"})
    port = server.hanabi_port
    five = []
    for i in range(5):
        five.append(HanabiClient(port, f"waiting-{i}", play=False))
        five[-1].wait_for("CONNECTION_RESPONSE")
    sixth = HanabiClient(port, "sixth", play=False)
    assert sixth.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["sixth"], "a full table takes nobody more"
    start = five[0].wait_for("GAME_START_RESPONSE", timeout=30)[0]["game_state"]
    assert start["next_player"] == "waiting-4" and len(start["players"]) == 5
    for client in five:
        client.wait_for("GAME_START_RESPONSE")
        client.send({"msg_type": "GAME_START_REQUEST"})
    for client in five:
        errors = client.wait_for("ERROR_RESPONSE")
        assert [e["explanation"] for e in errors] == ["The game cannot be started because it's started already."]
    assert not sixth.of_type("GAME_START_RESPONSE")
    for client in [*five, sixth]:
        client.close()


def test_every_bot_of_a_full_table_may_ask_to_start_and_one_game_starts(hanabi):
    """Bots that each send GAME_START_REQUEST once they see five names: one game starts, each
    bot gets one GAME_START_RESPONSE, and no bot gets a turn error for its request."""
    port = hanabi.hanabi_port
    clients = []
    for i in range(5):
        clients.append(HanabiClient(port, f"eager-{i}", start_when=5, play=False))
        clients[-1].wait_for("CONNECTION_RESPONSE")
    for client in clients:
        client.wait_for("GAME_START_RESPONSE")
    late = HanabiClient(port, "late-eager", play=False)
    assert late.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["late-eager"]
    for client in clients:
        assert len(client.of_type("GAME_START_RESPONSE")) == 1
        assert {e["explanation"] for e in client.of_type("ERROR_RESPONSE")} <= \
            {"The game cannot be started because it's started already."}
    for client in [*clients, late]:
        client.close()


def test_the_bot_that_fills_a_web_table_hears_its_connection_response_first_and_names_are_unique(hanabi):
    """A web table of two open bot seats around a built-in bot.  A second bot under a name
    already at the table is refused with PLAYER_ALREADY_EXISTS (as the original and the
    automatic table refuse it) and may connect again under another; the bot that takes the
    last seat gets its CONNECTION_RESPONSE first, naming every player at the table and
    itself last, then the game; its start request is answered by that GAME_START_RESPONSE
    (no error), and the game plays to its end."""
    hanabi.shell("from games.arena.play import tables\n"
                 "tables.create_table('hanabi', {'players': 3}, ['open_bot', 'builtin:convention', 'open_bot'], None)\n")
    port = hanabi.hanabi_port
    first = HanabiClient(port, "web-a")
    assert first.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["Convention bot", "web-a"]
    for taken in ("web-a", "Convention bot"):
        twin = HanabiClient(port, taken, play=False)
        assert twin.wait_for("ERROR_RESPONSE")[0]["explanation"] == "A Player with the chosen name already exists."
        twin.close()
    last = connect(f"ws://127.0.0.1:{port}", open_timeout=10, legacy=True)
    last.send(json.dumps({"msg_type": "CONNECTION_REQUEST", "name": "web-a"}))
    assert json.loads(last.recv(timeout=10))["explanation"] == "A Player with the chosen name already exists."
    last.send(json.dumps({"msg_type": "CONNECTION_REQUEST", "name": "web-b"}))
    last.send(json.dumps({"msg_type": "GAME_START_REQUEST"}))  # as the original's last joiner does
    frames = [json.loads(last.recv(timeout=10)) for _ in range(2)]
    assert frames[0] == {"msg_type": "CONNECTION_RESPONSE", "names": ["web-a", "Convention bot", "web-b"]}
    assert frames[1]["msg_type"] == "GAME_START_RESPONSE"
    assert [p["name"] for p in frames[1]["game_state"]["players"]] == ["Convention bot", "web-b", "web-a"]
    assert first.wait_for("CONNECTION_RESPONSE", count=2)[1]["names"] == ["web-a", "Convention bot", "web-b"]
    last.close()  # it leaves: its cards are discarded for it, the others play on
    first.wait_for("GAME_OVER_RESPONSE", timeout=120)
    assert not first.of_type("ERROR_RESPONSE")
    first.close()
