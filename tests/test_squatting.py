"""A bot without its key never plays under a registered bot's name (nor a look-alike), and a
registered bot is never refused because of one, at every door, over the real protocols:
Liar's Dice (TCP lines: it plays on under a bot's default name), Hanabi (WebSocket: the
original's PLAYER_ALREADY_EXISTS, automatic and web-made tables), Blokus (XML: a prepared
slot's name).  And a right key passes after wrong ones from the same address, while past
the limit each wrong key costs its connection."""
from __future__ import annotations

import re

import pytest

from tests.blokus_client import Player, XmlClient
from tests.hanabi_client import HanabiClient
from tests.ld_bot import LDBot, simple_move
from tests.serverproc import wait_until
from tests.test_bot_identities import KeyedHanabi, Owner, api_seats, finished_match, fresh_minute

ENV = {"ARENA_HUMAN_DEADLINE": "20", "ARENA_ROUND_PAUSE": "0", "ARENA_BUILTIN_DELAY": "0",
       "HANABI_BOT_DEADLINE": "5", "ARENA_BOT_KEY_FAILURES_PER_MINUTE": "3", "ARENA_ADMISSION_EXEMPT": "",
       "BLOKUS_SOFT_TIMEOUT": "2", "BLOKUS_HARD_TIMEOUT": "5"}
BLOKUS_ADMIN_PASSWORD = "examplepassword"


@pytest.fixture
def server(arena_factory):
    return arena_factory(env=ENV)


@pytest.fixture(autouse=True)
def close_xml_clients():
    yield
    while XmlClient.made:
        XmlClient.made.pop().close()


def test_a_keyless_liars_dice_bot_under_a_registered_name_plays_under_a_default_name(server):
    owner = Owner(server.url, "ada")
    key = owner.register("liars_dice", "Deep Doubt")
    # The squatter comes first, with a look-alike (upper case, Cyrillic е); it is seated as a
    # bot that sent no name, and the registered bot joins the same automatic table.
    squatter = LDBot(server.liars_dice_port, "DEEP DOUBT")
    cyrillic = LDBot(server.liars_dice_port, "Dееp Doubt")
    keyed = LDBot(server.liars_dice_port, name=None)
    keyed.send_obj({"name": "anything", "key": key})
    keyed2 = LDBot(server.liars_dice_port, name=None)
    keyed2.send_obj({"name": "anything", "key": key})
    for bot in (squatter, cyrillic, keyed, keyed2):
        assert bot.closed.wait(90), "every match is played to its end"
    assert not any(m.get("subject") == "error" for bot in (squatter, cyrillic) for m in bot.received), \
        "the keyless bots are not refused: the reference refuses no name"
    results = wait_until(lambda: (r := owner.get_json("/api/matches/?game=liars_dice")["results"])
                         and len(r) == 2 and r, 60, "both matches")
    seats = [s for m in results for s in api_seats(owner, m["id"])]
    keyless = [s for s in seats if not s["verified"]]
    assert len(keyless) == 2 and all(re.fullmatch(r"bot 127\.0\.0\.1:\d+", s["name"]) for s in keyless), keyless
    assert sorted(s["name"] for s in seats if s["verified"]) in (["Deep Doubt", "Deep Doubt"],
                                                                  ["Deep Doubt (1)", "Deep Doubt (2)"])
    assert "is a registered bot's name and came without its key" in server.log()


def test_a_registered_name_sent_late_by_a_keyless_liars_dice_bot_is_not_shown_either(server):
    owner = Owner(server.url, "fay")
    owner.register("liars_dice", "Deep Doubt")
    # One sends the name once seated (shown at once, as the seed lets a name come any time)...
    early = LDBot(server.liars_dice_port, name=None)
    wait_until(lambda: "liars_dice bot bot 127.0.0.1" in server.log(), 20, "the nameless bot seated")
    early.send_obj({"name": "Deep Doubt"})
    sent = []

    def name_with_the_first_answer(msg):  # ...the other after its first request (held to the end)
        if not sent:
            sent.append(True)
            late.send_obj({"name": "DEEP DOUBT"})
        return simple_move(msg)

    late = LDBot(server.liars_dice_port, name=None, decide=name_with_the_first_answer)
    assert early.closed.wait(90) and late.closed.wait(90)
    match = finished_match(owner, "liars_dice")
    names = [s["name"] for s in api_seats(owner, match["id"])]
    assert all(re.fullmatch(r"bot 127\.0\.0\.1:\d+", n) for n in names), names
    assert server.log().count("is a registered bot's name and came without its key") == 2
    assert sent


def test_a_keyless_hanabi_bot_gets_player_already_exists_and_the_keyed_one_joins(server):
    owner = Owner(server.url, "bea")
    key = owner.register("hanabi", "Firework")
    # The automatic table: the squatter asks for the name first and is refused, as the
    # original refuses a taken name; it may ask again under another name.
    squatter = HanabiClient(server.hanabi_port, "FIREW0RK", start_when=2)
    (error,) = squatter.wait_for("ERROR_RESPONSE")
    assert error["explanation"] == "A Player with the chosen name already exists."
    assert "registered bot" in error["err_details"]
    squatter.send({"msg_type": "CONNECTION_REQUEST", "name": "plain"})
    keyed = KeyedHanabi(server.hanabi_port, "ignored", key)
    assert keyed.wait_for("CONNECTION_RESPONSE", count=1)[-1]["names"] == ["plain", "Firework"]
    assert not [m for m in keyed.messages if m["msg_type"] == "ERROR_RESPONSE"], "the keyed bot is not refused"
    keyed.wait_for("GAME_OVER_RESPONSE", timeout=60)
    squatter.wait_for("GAME_OVER_RESPONSE", timeout=60)
    match = finished_match(owner, "hanabi")
    assert sorted((s["name"], s["verified"]) for s in api_seats(owner, match["id"])) == [
        ("Firework", True), ("plain", False)]


def test_a_hanabi_name_registered_while_a_keyless_bot_holds_it_goes_to_the_registered_bot(server):
    early = HanabiClient(server.hanabi_port, "Nova")
    assert early.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["Nova"]
    owner = Owner(server.url, "gus")
    key = owner.register("hanabi", "Nova")  # registered while the keyless "Nova" waits
    keyed = KeyedHanabi(server.hanabi_port, "ignored", key)
    assert keyed.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["Nova"], "the keyed bot is not refused"
    (error,) = early.wait_for("ERROR_RESPONSE")
    assert error["explanation"] == "A Player with the chosen name already exists."
    assert early.done.wait(10), "the keyless one is disconnected, not left waiting"
    other = HanabiClient(server.hanabi_port, "plain", start_when=2)
    keyed.wait_for("GAME_OVER_RESPONSE", timeout=60)
    other.wait_for("GAME_OVER_RESPONSE", timeout=60)
    match = finished_match(owner, "hanabi")
    assert sorted((s["name"], s["verified"]) for s in api_seats(owner, match["id"])) == [
        ("Nova", True), ("plain", False)]


def test_a_keyless_hanabi_bot_is_refused_a_registered_name_at_a_web_table_too(server):
    owner = Owner(server.url, "cyd")
    key = owner.register("hanabi", "Firework")
    owner.post_page("/tables/new/hanabi/", {"players": "2", "seat0": "open_bot", "seat1": "open_bot"},
                    form_page="/tables/new/hanabi/")
    squatter = HanabiClient(server.hanabi_port, "firework")
    (error,) = squatter.wait_for("ERROR_RESPONSE")
    assert error["explanation"] == "A Player with the chosen name already exists."
    squatter.send({"msg_type": "CONNECTION_REQUEST", "name": "plain"})
    keyed = KeyedHanabi(server.hanabi_port, "ignored", key)
    keyed.wait_for("GAME_OVER_RESPONSE", timeout=60)
    match = finished_match(owner, "hanabi")
    assert sorted((s["name"], s["verified"]) for s in api_seats(owner, match["id"])) == [
        ("Firework", True), ("plain", False)]


def test_a_prepared_blokus_slot_under_a_registered_name_plays_as_player_n(server):
    owner = Owner(server.url, "dee")
    owner.register("blokus", "Tetris King")
    admin = XmlClient(server.blokus_port)
    admin.send(f'<protocol><authenticate password="{BLOKUS_ADMIN_PASSWORD}"/><prepare gameType="swc_2021_blokus" '
               f'pause="false"><slot displayName="TETRIS KING"/><slot displayName="bob"/></prepare>'.encode())
    prepared = admin.wait_message("prepared")
    codes = [r.text for r in prepared.element.findall("reservation")]
    first, second = (Player(server.blokus_port, code=c, seed=i) for i, c in enumerate(codes))
    memento = first.wait_message("room", "memento").data.find("state")
    assert [memento.find(tag).get("displayName") for tag in ("first", "second")] == ["Player 1", "bob"]
    assert second.wait_message("room", "memento") is not None
    assert "is a registered bot's name; it plays as 'Player 1'" in server.log()


def test_a_right_key_passes_after_a_guessers_wrong_keys_from_the_same_address(server):
    owner = Owner(server.url, "eve")
    key = owner.register("liars_dice", "Shared NAT")
    hanabi_key = owner.register("hanabi", "Behind NAT")
    fresh_minute()
    # A guesser behind the same address spends the limit (3) and more.
    for i in range(4):
        guess = LDBot(server.liars_dice_port, name=None)
        guess.send_obj({"name": "x", "key": f"arena-key-guess-{i}"})
        assert guess.closed.wait(10)
    assert "too many wrong bot keys from your address" in guess.received[0]["message"]
    # Past the limit a wrong key costs a Hanabi socket its connection too (4029)...
    hanabi = KeyedHanabi(server.hanabi_port, "x", "arena-key-guess-hanabi")
    (error,) = hanabi.wait_for("ERROR_RESPONSE")
    assert "too many wrong bot keys" in error["err_details"]
    assert hanabi.done.wait(10) and hanabi.close_code == 4029
    # ...but the right keys from that address pass, and their bots play as themselves.
    right = KeyedHanabi(server.hanabi_port, "x", hanabi_key)
    assert right.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["Behind NAT"]
    right.ws.close()
    bots = [LDBot(server.liars_dice_port, name=None), LDBot(server.liars_dice_port, "stranger")]
    bots[0].send_obj({"name": "x", "key": key})
    assert bots[0].closed.wait(60) and bots[1].closed.wait(60)
    assert not any(m.get("subject") == "error" for m in bots[0].received)
    match = finished_match(owner, "liars_dice")
    assert sorted((s["name"], s["verified"]) for s in api_seats(owner, match["id"])) == [
        ("Shared NAT", True), ("stranger", False)]
