"""Bot identities over the real protocols: a user registers a bot on the Bots page and gets its
key once; a bot presenting it plays under the registered name (verified), on Liar's Dice
(TCP lines), Blokus (TCP XML) and Hanabi (WebSocket); a wrong key is refused on each
protocol's own error path with a clear message while other matches play on; repeated wrong
keys from one address cost each its connection; a bot without a key plays as before, marked
unverified; a table for verified bots only turns unverified bots away; a bot's owner holds a
seat for it by name; the key never shows in a page, the API or the server's log."""
from __future__ import annotations

import re
import time
import urllib.parse
import urllib.request

import pytest

from tests.blokus_client import Player
from tests.hanabi_client import HanabiClient
from tests.human_client import Guest
from tests.ld_bot import LDBot
from tests.serverproc import wait_until

ENV = {"ARENA_HUMAN_DEADLINE": "20", "ARENA_ROUND_PAUSE": "0", "ARENA_BUILTIN_DELAY": "0",
       "HANABI_BOT_DEADLINE": "5", "ARENA_BOT_KEY_FAILURES_PER_MINUTE": "3", "ARENA_ADMISSION_EXEMPT": ""}
PASSWORD = "correct horse battery"


class Owner(Guest):
    """A user with an account: signs up, registers bots and reads their keys."""

    def __init__(self, base_url: str, username: str):
        super().__init__(base_url, username)
        self.post_form("/accounts/signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD})

    def post_page(self, path: str, fields: dict, form_page: str = "/bots/") -> str:
        """POST ``fields`` to ``path`` (CSRF token from ``form_page``); returns the answer's body."""
        page = self.get(form_page)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
        req = urllib.request.Request(self.base + path, data=data, headers={"Referer": self.base + form_page})
        with self.opener.open(req, timeout=10) as resp:
            return resp.read().decode()

    def register(self, game: str, name: str) -> str:
        """Register a bot of ``game`` called ``name``; returns the key the page shows once."""
        page = self.post_page("/bots/", {"game": game, "name": name, "base_url": "", "path_style": "kit"})
        return re.search(r'data-testid="bot-key">([^<]+)<', page).group(1)

    def bot_id(self, name: str) -> int:
        page = self.get("/bots/")
        return int(re.search(rf'<li id="bot-(\d+)"[^>]*>\s*<div class="bot-head"><b class="name">{re.escape(name)}<',
                             page).group(1))


@pytest.fixture
def server(arena_factory):
    return arena_factory(env=ENV)


def api_seats(guest: Guest, match_id: int) -> list[dict]:
    return guest.get_json(f"/api/matches/{match_id}/")["seats"]


def finished_match(guest: Guest, game: str) -> dict:
    return wait_until(lambda: (r := guest.get_json(f"/api/matches/?game={game}")["results"]) and r[0], 60,
                      f"a finished {game} match")


def test_the_key_is_shown_once_and_a_liars_dice_bot_plays_verified_beside_an_unverified_one(server):
    owner = Owner(server.url, "ada")
    key = owner.register("liars_dice", "Deep Doubt")
    assert key.startswith("arena-key-") and len(key) > 30
    assert key not in owner.get("/bots/"), "shown once, in the answer to the registration only"
    verified = LDBot(server.liars_dice_port, name=None)
    verified.send_obj({"name": "whatever I say", "key": key})
    stranger = LDBot(server.liars_dice_port, "stranger")
    assert verified.closed.wait(60) and stranger.closed.wait(60), "the match is played to its end"
    match = finished_match(owner, "liars_dice")
    seats = sorted(api_seats(owner, match["id"]), key=lambda s: s["name"])
    assert [s["name"] for s in seats] == ["Deep Doubt", "stranger"], "the registered name, not the one sent"
    page = owner.get(f"/matches/{match['id']}/")
    assert re.search(r'stranger(</b>)? <span class="tag unverified"', page), "the keyless bot is marked"
    assert not re.search(r'Deep Doubt(</b>)? <span class="tag unverified"', page)
    assert '"unverified": true' in page and '"unverified": false' in page  # the live table's names
    assert "unverified" in owner.get("/history/?game=liars_dice")
    for text in (page, owner.get("/history/"), owner.get(f"/api/matches/{match['id']}/"), server.log()):
        assert key not in text


def fresh_minute(margin: float = 20.0) -> None:
    """Wrong keys count per clock minute: start where the minute has ``margin`` seconds left
    at least, so that the count cannot reset half-way (server and test share the clock)."""
    left = 60 - time.time() % 60
    if left < margin:
        time.sleep(left + 0.5)


def test_wrong_keys_are_refused_on_each_protocols_error_path_and_guessing_is_slowed(server):
    owner = Owner(server.url, "bea")
    owner.register("liars_dice", "Real")
    fresh_minute()
    # Liar's Dice: an error line, then the connection is closed; nothing seated.
    wrong = LDBot(server.liars_dice_port, name=None)
    wrong.send_obj({"name": "Real", "key": "arena-key-not-this-one"})
    assert wrong.closed.wait(10)
    assert wrong.received == [{"subject": "error", "message": "bot key refused: unknown bot key: make one on the "
                                                               "Bots page, or connect without a key to play unverified"}]
    # Blokus: an errorpacket naming the reason, then the end of the stream.
    blokus = Player(server.blokus_port, join=False)
    blokus.send(b'<protocol>\n  <join gameType="swc_2021_blokus" key="arena-key-nope"/>')
    packet = blokus.wait_message("errorpacket")
    assert "bot key refused: unknown bot key" in packet.get("message")
    # Hanabi: ERROR_RESPONSE to the offender; the connection stays and may try again.
    hanabi = KeyedHanabi(server.hanabi_port, "ghost", "arena-key-nope")
    errors = hanabi.wait_for("ERROR_RESPONSE")
    assert errors[0]["explanation"] == "The bot key was refused."
    assert errors[0]["err_details"].startswith("unknown bot key")
    # That was the fourth wrong key this minute from 127.0.0.1 (the limit is 3): the refusal
    # says that each wrong key now closes its connection (a right one still passes:
    # tests/test_squatting.py).
    late = LDBot(server.liars_dice_port, name=None)
    late.send_obj({"name": "Real", "key": "arena-key-another-guess"})
    assert late.closed.wait(10)
    assert late.received[0]["message"].startswith("bot key refused: unknown bot key")
    assert "too many wrong bot keys from your address" in late.received[0]["message"]
    assert "arena-key-nope" not in server.log() and "arena-key-not-this-one" not in server.log()
    # Meanwhile bots without keys play as before.
    a, b = LDBot(server.liars_dice_port, "a"), LDBot(server.liars_dice_port, "b")
    assert a.closed.wait(60) and b.closed.wait(60)
    assert any(m.get("subject") == "round_over" for m in a.received)
    hanabi.close()


def test_a_table_for_verified_bots_and_a_seat_held_for_a_bot_by_its_owner(server):
    owner = Owner(server.url, "cyd")
    key = owner.register("liars_dice", "Holder")
    bot_id = owner.bot_id("Holder")
    fields = {"players": "2", "dice": "2", "games": "1", "verified_only": "on", "seat0": f"registered:{bot_id}",
              "seat1": "open_bot"}
    owner.post_page("/tables/new/liars_dice/", fields, form_page="/tables/new/liars_dice/")
    # A keyless bot is not seated at this table (it goes to an automatic table instead)...
    keyless = LDBot(server.liars_dice_port, "keyless", decide=None)
    time.sleep(0.5)
    # ...a second connection of the registered bot takes the open seat, the first the held one.
    first = LDBot(server.liars_dice_port, name=None)
    first.send_obj({"name": "x", "key": key})
    second = LDBot(server.liars_dice_port, name=None)
    second.send_obj({"name": "y", "key": key})
    assert first.closed.wait(60) and second.closed.wait(60)
    match = finished_match(owner, "liars_dice")
    assert [s["name"] for s in api_seats(owner, match["id"])] == ["Holder (1)", "Holder (2)"], "told apart by seat"
    assert not keyless.closed.is_set(), "the keyless bot still waits at an automatic table"
    keyless.sock.close()


def test_a_hanabi_bot_with_its_key_joins_under_its_registered_name(server):
    owner = Owner(server.url, "dee")
    key = owner.register("hanabi", "Firework")
    keyed = KeyedHanabi(server.hanabi_port, "ignored", key)
    other = HanabiClient(server.hanabi_port, "plain", start_when=2)
    names = keyed.wait_for("CONNECTION_RESPONSE", count=2)[-1]["names"]
    assert names == ["Firework", "plain"], "the registered name on the wire too"
    assert keyed.my_name == "Firework"
    keyed.wait_for("GAME_OVER_RESPONSE", timeout=60)
    other.wait_for("GAME_OVER_RESPONSE", timeout=60)
    match = finished_match(owner, "hanabi")
    seats = {s["name"] for s in api_seats(owner, match["id"])}
    assert seats == {"Firework", "plain"}
    assert key not in server.log()


class KeyedHanabi(HanabiClient):
    """A Hanabi bot whose CONNECTION_REQUEST carries its key."""

    def __init__(self, port: int, name: str, key: str):
        self.key = key
        super().__init__(port, name)

    def send(self, msg):
        if isinstance(msg, dict) and msg.get("msg_type") == "CONNECTION_REQUEST":
            msg = {**msg, "key": self.key}
        super().send(msg)
