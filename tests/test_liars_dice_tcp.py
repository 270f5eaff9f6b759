"""Liar's Dice TCP conformance: scripted bots over real sockets against ``manage.py serve``.

Each test checks what a bot author would check from the wire (specs/liars-dice-tcp.seed.md and
its notes, which win), the match as the JSON API records it, and the server log line a bot
author would look for after sending something wrong.  Most tests run with a 0.5 s reply
deadline; one keeps the real 3 s.
"""
from __future__ import annotations

import json
import random
import re
import resource
import signal
import socket
import sqlite3
import threading
import time
import urllib.request
from collections import defaultdict
from contextlib import contextmanager

import pytest

from tests.ld_bot import LDBot, basic_move, simple_move
from tests.serverproc import start_arena, wait_until

DEADLINE = 0.5
WAIT = 20.0  # upper bound for anything that should take a second or two


@contextmanager
def sigint_not_ignored():
    """Started from a shell job without job control, pytest has SIGINT ignored; a server it
    starts would inherit that, and ``ArenaProcess.stop`` (SIGINT) could not stop it."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def serve(arena_factory, players=2, dice=2, games=1, deadline=DEADLINE, **extra):
    """A server whose automatic tables have this configuration."""
    env = {"LIARS_DICE_AUTO_PLAYERS": str(players), "LIARS_DICE_AUTO_DICE": str(dice),
           "LIARS_DICE_AUTO_GAMES": str(games), "LIARS_DICE_BOT_DEADLINE": str(deadline)}
    env.update({k: str(v) for k, v in extra.items()})
    with sigint_not_ignored():
        return arena_factory(env=env)


def wait_for(predicate, timeout=WAIT, what="condition"):
    """Poll ``predicate`` until it is true; fail after ``timeout`` seconds."""
    return wait_until(predicate, timeout, what, interval=0.02)


def wait_log(arena, text, timeout=5.0):
    """The server log mentions ``text`` (soon)."""
    return wait_for(lambda: text in arena.log(), timeout, f"server log line containing {text!r}")


def api(arena, path):
    with urllib.request.urlopen(arena.url + path, timeout=10) as resp:
        return json.load(resp)


def finished_match(arena, timeout=WAIT):
    """The one recorded match of a server, once it is over."""
    listing = wait_for(lambda: api(arena, "/api/matches/?game=liars_dice")["results"], timeout,
                       "a finished match in /api/matches/")
    assert len(listing) == 1
    return api(arena, f"/api/matches/{listing[0]['id']}/")


def on_turn(msg) -> bool:
    return msg["other_hands"][0][0] == 0


def playing(bot, msg):
    """A plausible bot (tests/ld_bot.simple_move) with its own random stream."""
    return simple_move(msg, bot.rng)


def steady(bot, msg):
    """Opens with [3, 1] and challenges the next bid: two moves a round, every one valid."""
    if not on_turn(msg):
        return "pass"
    return [3, 1] if msg["last_bid"] == [0, 0] else "challenge"


class Bot(LDBot):
    """:class:`tests.ld_bot.LDBot` with arrival times and ``decide(bot, msg)``, which may also
    write raw bytes itself (returning None then)."""

    #: Every bot of the running test, closed when it ends.
    made: list["Bot"] = []

    def __init__(self, port, name=None, decide=playing, seed=0):
        Bot.made.append(self)
        self.rng = random.Random(seed)
        self.decide_with_bot = decide
        super().__init__(port, name=name, decide=None)

    def answer(self, msg) -> None:
        if self.decide_with_bot is not None:
            move = self.decide_with_bot(self, msg)
            if move is not None:
                self.reply(msg, move)

    def reply(self, msg, move) -> None:
        try:
            self.send_obj({"message_id": msg["message_id"], "move": move})
        except OSError:
            pass

    def reply_later(self, delay, msg, move) -> None:
        timer = threading.Timer(delay, self.reply, (msg, move))
        timer.daemon = True
        timer.start()

    def stamp_of(self, msg) -> float:
        return self.stamps[next(i for i, m in enumerate(self.received) if m is msg)]

    def my_id(self) -> int:
        """Own absolute id: ``round_over.state`` lists players in seat order, me as 0."""
        state = self.round_overs()[0]["state"]
        return [pid for pid, _ in state].index(0) + 1

    def to_absolute(self, pid: int) -> int:
        return self.my_id() if pid == 0 else pid


@pytest.fixture(autouse=True)
def close_bots():
    yield
    while Bot.made:
        Bot.made.pop().close()


def wait_closed(*bots, timeout=WAIT):
    for bot in bots:
        assert bot.closed.wait(timeout), "the server closes the connection after the last game"


def seat_of(match, name):
    (index,) = [s["index"] for s in match["seats"] if s["name"] == name]
    return index


# --- names, no hello, the end of the match --------------------------------------------------------

def test_names_first_one_counts_no_hello_and_the_connection_closes_after_the_last_game(arena_factory):
    arena = serve(arena_factory, players=3, dice=1)

    def name_with_first_reply(bot, msg):
        if not bot.requests()[:-1]:
            bot.send_raw(b'{"name": "bob"}\n' + json.dumps(
                {"message_id": msg["message_id"], "move": steady(bot, msg)}).encode() + b"\n")
            return None
        return steady(bot, msg)

    alice = Bot(arena.liars_dice_port, decide=steady)
    alice.send_raw(b'{"name": "alice"}\n{"name": "mallory"}\n')
    bob = Bot(arena.liars_dice_port, decide=name_with_first_reply)
    carol = Bot(arena.liars_dice_port, decide=steady)  # never sends a name
    carol_port = carol.sock.getsockname()[1]
    wait_closed(alice, bob, carol)
    for bot in (alice, bob, carol):
        assert bot.received[0]["subject"] == "move_request", "no hello: the first message is a move_request"
        assert bot.received[-1]["subject"] == "round_over" and bot.received[-1]["game_winner"] != -1
        assert bot.sock.recv(1) == b"", "closed by the server"
    match = finished_match(arena)
    assert match["status"] == "finished"
    names = sorted(s["name"] for s in match["seats"])
    assert names == sorted(["alice", "bob", f"bot 127.0.0.1:{carol_port}"])
    assert "mallory" not in json.dumps(api(arena, "/api/matches/"))
    assert sum(s["score"] for s in match["seats"]) == 1


def test_a_name_is_cleaned_and_escaped_on_the_match_page(arena_factory):
    arena = serve(arena_factory, dice=1)
    evil = Bot(arena.liars_dice_port, name="<script>alert(1)</script>\u0007 ", decide=steady)
    other = Bot(arena.liars_dice_port, name="", decide=steady)
    wait_closed(evil, other)
    match = finished_match(arena)
    assert "<script>alert(1)</script>" in [s["name"] for s in match["seats"]]
    wait_log(arena, "name must be a non-empty string")
    with urllib.request.urlopen(arena.url + match["url"], timeout=10) as resp:
        page = resp.read().decode()
    assert "alert(1)" in page, "the name is on the page"
    assert "<script>alert(1)</script>" not in page, "and escaped there"


# --- what every player sees -------------------------------------------------------------------------

@pytest.mark.parametrize("players", [3, 6])
def test_every_player_answers_every_move_and_ids_are_relative(arena_factory, players):
    arena = serve(arena_factory, players=players, dice=2)
    bots = [Bot(arena.liars_dice_port, name=f"p{i}", seed=i) for i in range(players)]
    wait_closed(*bots)
    ids = {bot.my_id(): bot for bot in bots}
    assert sorted(ids) == list(range(1, players + 1)), "ids are 1-based seats"

    def absolute(bot, pairs):
        return [[bot.to_absolute(pid), n] for pid, n in pairs]

    # every round_over goes to every player, eliminated ones included, and says the same thing
    overs = {me: bot.round_overs() for me, bot in ids.items()}
    rounds = len(overs[1])
    assert rounds >= players - 1 and all(len(o) == rounds for o in overs.values())
    for k in range(rounds):
        seen = set()
        for me, bot in ids.items():
            msg = overs[me][k]
            state = msg["state"]
            assert [pid for pid, _ in state] == [0 if i == me else i for i in range(1, players + 1)], \
                "state: every player in seat order, me as 0"
            assert msg["game_winner"] != 0, "game_winner is absolute, never 0"
            seen.add(json.dumps([msg["game_number"], msg["round_number"], absolute(bot, state),
                                 bot.to_absolute(msg["round_loser"]),
                                 -1 if msg["round_challenger"] == -1 else bot.to_absolute(msg["round_challenger"]),
                                 msg["game_winner"]]))
        assert len(seen) == 1, f"round_over {k} differs between players: {seen}"
        assert (overs[1][k]["game_winner"] == -1) == (k < rounds - 1)
    winner = overs[1][-1]["game_winner"]
    assert overs[winner][-1]["game_winner"] == winner, "the winner is told its absolute id, not 0"
    assert [n for pid, n in overs[winner][-1]["state"] if pid == 0] == [overs[1][-1]["state"][winner - 1][1]]
    assert all(n == 0 for pid, n in overs[winner][-1]["state"] if pid != 0)
    eliminated_then_told = [me for me in ids if any(
        o["state"][me - 1][1] == 0 for o in overs[me][:-1])]
    assert eliminated_then_told, "someone was out before the end and still got round_over"

    # every player still in the game gets every move_request, each with its own message_id
    asked = defaultdict(dict)
    for me, bot in ids.items():
        for msg in bot.requests():
            asked[(msg["game_number"], msg["round_number"], msg["move_number"])][me] = msg
    message_ids = [m["message_id"] for per in asked.values() for m in per.values()]
    assert len(set(message_ids)) == len(message_ids)
    after_round = {(o["game_number"], o["round_number"]): dict(zip(range(1, players + 1), (n for _, n in o["state"])))
                   for o in overs[1]}
    for key in sorted(asked):
        game, rnd, move = key
        per = asked[key]
        dice_left = after_round[(game, rnd - 1)] if rnd > 1 else {me: 2 for me in ids}
        alive = {me for me, n in dice_left.items() if n > 0}
        assert set(per) == alive, f"{key}: asked {sorted(per)}, players with dice {sorted(alive)}"
        views = {json.dumps(absolute(ids[me], m["other_hands"])) for me, m in per.items()}
        assert len(views) == 1, "other_hands is the same list for everyone, only ids are relative"
        hands = json.loads(views.pop())
        assert sorted(pid for pid, _ in hands) == sorted(alive)
        assert all(n == dice_left[pid] for pid, n in hands)
        for me, m in per.items():
            assert len(m["your_hand"]) == dice_left[me] and m["your_hand"] == sorted(m["your_hand"])
            assert [pid for pid, _ in m["other_hands"]].count(0) == 1

    # the event log agrees: one answer per player with dice per step
    match = finished_match(arena)
    steps = defaultdict(set)
    for event in match["events"]:
        steps[event["step"]].add(event["seat"])
    assert len(steps) == len(asked)
    for step, key in zip(sorted(steps), sorted(asked)):
        assert steps[step] == {me - 1 for me in asked[key]}
    assert match["result"]["winner"] == winner - 1


def test_simultaneous_challenges_the_one_nearest_the_player_on_turn_counts(arena_factory):
    arena = serve(arena_factory, players=3, dice=3)

    def bid_then_everyone_challenges(bot, msg):
        if on_turn(msg):
            return [2, 1] if msg["last_bid"] == [0, 0] else [2, msg["last_bid"][1] + 1]
        return "pass" if msg["last_bid"] == [0, 0] else "challenge"

    bots = [Bot(arena.liars_dice_port, name=f"c{i}", decide=bid_then_everyone_challenges) for i in range(3)]
    wait_closed(*bots)
    checked = 0
    for bot in bots:
        requests = bot.requests()
        for over in bot.round_overs():
            key = (over["game_number"], over["round_number"])
            mine = [m for m in requests if (m["game_number"], m["round_number"]) == key]
            if not mine:
                continue  # out of the game already
            last = mine[-1]
            assert last["move_number"] == 2 and last["last_bid"] == [2, 1]
            order = [pid for pid, _ in last["other_hands"]]
            assert over["round_challenger"] == order[1], \
                "of the challengers (all but the player on turn), the next in turn order counts"
            # every hand of the round, from each player's own your_hand
            twos = 0
            for other in bots:
                theirs = [m for m in other.requests() if (m["game_number"], m["round_number"]) == key]
                twos += theirs[-1]["your_hand"].count(2) if theirs else 0
            expected = order[1] if twos >= 1 else order[-1]
            assert over["round_loser"] == expected, (key, twos, order)
            checked += 1
    assert checked >= 3 * 3


# --- replies --------------------------------------------------------------------------------------

def test_message_id_must_match_wrong_ones_are_ignored(arena_factory):
    arena = serve(arena_factory, dice=2)

    def wrong_id_first(bot, msg):
        bot.send_raw(json.dumps({"message_id": msg["message_id"] + "x", "move": "pass"}).encode() + b"\n")
        return steady(bot, msg)

    careful = Bot(arena.liars_dice_port, name="careful", decide=wrong_id_first)
    other = Bot(arena.liars_dice_port, name="other", seed=5)
    wait_closed(careful, other)
    for msg in careful.requests():
        if on_turn(msg):  # its bid stood: the wrong-id "pass" before it did not count
            after = careful.received[careful.received.index(msg) + 1]
            if after["subject"] == "move_request":
                assert after["last_bid"] == [3, 1]
    assert all(o["round_challenger"] != -1 for o in careful.round_overs()), \
        "no round was lost by an invalid or missing move"
    match = finished_match(arena)
    assert not any(e["forced"] for e in match["events"])
    wait_log(arena, "(careful): reply to message_id")
    assert re.search(r"\(careful\): reply to message_id '[0-9a-f]+x', expected '[0-9a-f]+'; ignored", arena.log())


# --- bids past the dice on the table ---------------------------------------------------------------

def basic(bot, msg):
    """As the reference's bots/basic.js plays (tests/ld_bot.basic_move), with the bot's own
    random stream."""
    return basic_move(msg, bot.rng)


def test_bots_that_play_as_basic_js_bid_past_the_table_and_a_challenge_decides(arena_factory):
    """basic.js raises the count by one whatever is left; the reference takes such a bid as a
    raise and lets the next challenge decide it.  20 one-die games of two such bots: no round
    is lost by an invalid move, bids past the two dice stand, and a challenge of one costs the
    bidder its die."""
    arena = serve(arena_factory, players=2, dice=1, games=20)
    one = Bot(arena.liars_dice_port, name="basic-1", decide=basic, seed=1)
    two = Bot(arena.liars_dice_port, name="basic-2", decide=basic, seed=2)
    wait_closed(one, two)
    overs = one.round_overs()
    assert len(overs) == 20
    assert all(o["round_challenger"] != -1 for o in overs), "no round lost by an invalid or missing move"
    past = [m for m in one.requests() if m["last_bid"][1] > sum(n for _, n in m["other_hands"])]
    assert len(past) >= 3, "bids past the dice on the table stood"
    judged_past = 0
    for over in overs:
        last_request = [m for m in one.received[:one.received.index(over)] if m["subject"] == "move_request"][-1]
        if last_request["last_bid"][1] > 2:  # a certainly false bid was challenged
            judged_past += 1
            bidder = last_request["other_hands"][-1][0]  # the previous bidder is listed last
            assert over["round_loser"] == bidder, "the bidder loses, whoever challenged (basic.js may challenge its own bid)"
    assert judged_past >= 1
    match = finished_match(arena)
    assert not any(e["forced"] for e in match["events"])
    assert sum(match["result"]["scores"]) == 20


def test_a_finished_match_downloads_as_json_lines_one_per_move(arena_factory):
    """From the match page's link, on the running server: one line per move, every player's
    answer with the late and the malformed one marked as the server recorded them."""
    arena = serve(arena_factory, dice=3)

    def sloppy_then_basic(bot, msg):
        k = len(bot.requests())
        if k == 1:
            bot.reply_later(DEADLINE + 0.3, msg, basic(bot, msg))  # late: the round is lost
            return None
        if k == 2:
            return [3, 2**31]  # a count no 32-bit integer holds: malformed, the round is lost
        return basic(bot, msg)

    sloppy = Bot(arena.liars_dice_port, name="sloppy", decide=sloppy_then_basic, seed=3)
    plain = Bot(arena.liars_dice_port, name="plain", decide=basic, seed=4)
    wait_closed(sloppy, plain)
    match = finished_match(arena)
    page = urllib.request.urlopen(f"{arena.url}/matches/{match['id']}/", timeout=10).read().decode()
    link = re.search(r'<a href="([^"]+)" download>moves as JSON lines', page).group(1)
    with urllib.request.urlopen(arena.url + link, timeout=10) as resp:
        assert resp.headers["Content-Type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in resp.read().decode().splitlines()]
    assert len(lines) == len(sloppy.requests()) == len(plain.requests()), "one line per move"
    assert [line["step"] for line in lines] == list(range(1, len(lines) + 1))
    sloppy_seat, plain_seat = seat_of(match, "sloppy"), seat_of(match, "plain")
    for line, request in zip(lines, plain.requests()):
        assert sorted(a["seat"] for a in line["answers"]) == [0, 1], "every player's answer"
        assert line["last_bid"] == request["last_bid"] and line["move_number"] == request["move_number"]
        assert line["hands"][plain_seat] == request["your_hand"]
    first, second = ({a["seat"]: a for a in line["answers"]}[sloppy_seat] for line in lines[:2])
    assert (first["move"], first["forced"], first["late"], first["reason"]) == (None, True, True, "no reply within 0.5 s")
    assert (second["move"], second["forced"], second["late"], second["reason"]) == (None, True, False, "malformed reply")
    assert "2147483648" in second["detail"]
    assert [line["round_over"]["round_loser"] for line in lines[:2]] == [sloppy_seat, sloppy_seat]
    assert not any(a["forced"] for line in lines[2:] for a in line["answers"])
    assert lines[-1]["round_over"]["game_winner"] == match["result"]["winner"]


BAD_REPLIES = [
    ("no message_id", lambda msg: {"move": "pass"}, "reply without a string message_id"),
    ("numeric message_id", lambda msg: {"message_id": 7, "move": "pass"}, "reply without a string message_id"),
    ("no move", lambda msg: {"message_id": msg["message_id"]}, '"move" must be'),
    ("object move", lambda msg: {"message_id": msg["message_id"], "move": {"face": 3, "count": 1}}, '"move" must be'),
    ("three numbers", lambda msg: {"message_id": msg["message_id"], "move": [3, 1, 1]}, '"move" must be'),
    ("boolean face", lambda msg: {"message_id": msg["message_id"], "move": [True, 1]}, "a bid is [face, count]"),
    ("fraction", lambda msg: {"message_id": msg["message_id"], "move": [2.5, 1]}, "a bid is [face, count]"),
    ("count past 2**31-1", lambda msg: {"message_id": msg["message_id"], "move": [3, 2**31]},
     "a bid is [face, count], two whole numbers up to 2147483647; got [3,2147483648]"),
]


def test_bad_replies_lose_the_round_at_once(arena_factory):
    """Each case: a fresh 2-player, 1-die match where one bot's first reply is malformed."""
    arena = serve(arena_factory, dice=1, deadline=3)
    for number, (label, make, logged) in enumerate(BAD_REPLIES, start=1):
        def bad(bot, msg, make=make):
            bot.send_obj(make(msg))
            return None

        sloppy = Bot(arena.liars_dice_port, name=f"sloppy{number}", decide=bad)
        other = Bot(arena.liars_dice_port, name=f"other{number}", decide=steady)
        wait_closed(sloppy, other)
        (request,) = sloppy.requests()
        (over,) = sloppy.round_overs()
        assert (over["round_loser"], over["round_challenger"]) == (0, -1), label
        assert over["game_winner"] == other.my_id() != 0
        assert sloppy.stamp_of(over) - sloppy.stamp_of(request) < 1.5, f"{label}: lost at once, not at 3 s"
        wait_log(arena, f"(sloppy{number}): {logged}")


def test_late_replies_are_ignored(arena_factory):
    arena = serve(arena_factory, dice=2)

    def late(bot, msg):
        bot.reply_later(DEADLINE + 0.3, msg, steady(bot, msg))
        return None

    slow = Bot(arena.liars_dice_port, name="slow", decide=late)
    quick = Bot(arena.liars_dice_port, name="quick", decide=steady)
    wait_closed(slow, quick)
    overs = slow.round_overs()
    assert [(o["round_loser"], o["round_challenger"]) for o in overs] == [(0, -1), (0, -1)]
    requests = slow.requests()
    assert len(requests) == 2, "round 2 opened with the slow bot (the loser) and it timed out again"
    assert requests[1]["round_number"] == 2 and requests[1]["other_hands"][0] == [0, 1]
    for request, over in zip(requests, overs):
        waited = slow.stamp_of(over) - slow.stamp_of(request)
        assert DEADLINE - 0.05 <= waited < DEADLINE + 0.25, waited
    match = finished_match(arena)
    slow_seat = seat_of(match, "slow")
    assert [e["reason"] for e in match["events"] if e["seat"] == slow_seat] == ["no reply within 0.5 s"] * 2
    wait_log(arena, "(slow): reply to message_id")
    assert "no reply within 0.5 s" in arena.log()


def test_a_bot_that_says_nothing_loses_every_round_by_timeout(arena_factory):
    arena = serve(arena_factory, dice=2)
    mute = Bot(arena.liars_dice_port, name=None, decide=None)
    talker = Bot(arena.liars_dice_port, name="talker", decide=steady)
    wait_closed(mute, talker)
    overs = mute.round_overs()
    assert [(o["round_loser"], o["round_challenger"]) for o in overs] == [(0, -1), (0, -1)]
    assert overs[-1]["game_winner"] == talker.my_id()
    for request, over in zip(mute.requests(), overs):
        waited = mute.stamp_of(over) - mute.stamp_of(request)
        assert DEADLINE - 0.05 <= waited < DEADLINE + 0.25, waited
    match = finished_match(arena)
    assert match["result"]["winner"] == seat_of(match, "talker")
    wait_log(arena, "forced: no reply within 0.5 s")


# --- framing and garbage ----------------------------------------------------------------------------

def test_garbage_and_overlong_lines_lose_the_round_and_the_connection_goes_on(arena_factory):
    arena = serve(arena_factory, dice=5)
    limit = 64 * 1024

    def padded(msg, size):
        """A valid reply padded to exactly ``size`` bytes before its newline."""
        body = {"message_id": msg["message_id"], "move": steady(None, msg), "pad": ""}
        body["pad"] = "x" * (size - len(json.dumps(body, separators=(",", ":"))))
        data = json.dumps(body, separators=(",", ":")).encode()
        assert len(data) == size
        return data + b"\n"

    script = [
        lambda msg: b'{"message_id": "' + msg["message_id"].encode() + b'", "move": [3,\n',
        lambda msg: b"\x00\xff\xfe\x80 garbage \xc3\x28\x9f\n",
        lambda msg: json.dumps(["challenge", msg["message_id"]]).encode() + b"\n",
        lambda msg: padded(msg, limit + 1),
        lambda msg: padded(msg, limit),  # exactly the limit: a valid reply
    ]

    def scripted(bot, msg):
        k = len(bot.requests()) - 1
        if k < len(script):
            data = script[k](msg)
            if k == len(script) - 1:  # let the server hold all 64 KiB before the newline comes
                bot.send_raw(data[:-1])
                time.sleep(0.05)
                data = data[-1:]
            bot.send_raw(data)
            return None
        return steady(bot, msg)

    rude = Bot(arena.liars_dice_port, name="rude", decide=scripted)
    fine = Bot(arena.liars_dice_port, name="fine", decide=steady)
    wait_closed(rude, fine)
    requests, overs = rude.requests(), rude.round_overs()
    for k in range(4):
        assert requests[k]["round_number"] == k + 1 and requests[k]["move_number"] == 1
        assert (overs[k]["round_number"], overs[k]["round_loser"], overs[k]["round_challenger"]) == (k + 1, 0, -1)
        assert rude.stamp_of(overs[k]) - rude.stamp_of(requests[k]) < DEADLINE - 0.1, "lost at once"
    assert [n for pid, n in overs[3]["state"] if pid == 0] == [1]
    fifth = requests[4]
    after = rude.received[rude.received.index(fifth) + 1]
    assert after["subject"] == "move_request" and after["round_number"] == 5, \
        "the reply of exactly 64 KiB counted"
    if on_turn(fifth):
        assert after["last_bid"] == [3, 1]
    match = finished_match(arena)
    assert match["status"] == "finished"
    for text in ("(rude): not JSON (JSONDecodeError)", "(rude): not JSON (UnicodeDecodeError)",
                 "(rude): expected a JSON object, got list", f"(rude): line longer than {limit} bytes"):
        wait_log(arena, text)


def test_hostile_numbers_neither_drop_the_connection_nor_the_event_log(arena_factory):
    """NaN, 1e400, deep nesting and a 500-digit count: bad replies, never a crash."""
    arena = serve(arena_factory, dice=5)
    huge = int("9" * 500)

    def raw(template):
        return lambda msg: template.replace(b"ID", msg["message_id"].encode()) + b"\n"

    script = [
        raw(b'{"message_id": "ID", "move": [NaN, 1]}'),
        raw(b'{"message_id": "ID", "move": [3, -Infinity]}'),
        raw(b'{"message_id": "ID", "move": [1e400, 1]}'),
        raw(b'{"message_id": "ID", "move": ' + b"[" * 30000 + b"]" * 30000 + b"}"),
        raw(b'{"message_id": "ID", "move": [3, ' + str(huge).encode() + b"]}"),
    ]

    def scripted(bot, msg):
        k = len(bot.requests()) - 1
        if k < len(script):
            bot.send_raw(script[k](msg))
            return None
        return steady(bot, msg)

    odd = Bot(arena.liars_dice_port, name="odd", decide=scripted)
    plain = Bot(arena.liars_dice_port, name="plain", decide=steady)
    wait_closed(odd, plain)
    overs = odd.round_overs()
    # A 500-digit count is no 32-bit integer: a malformed reply, on turn or not.
    assert [(o["round_loser"], o["round_challenger"]) for o in overs[:5]] == [(0, -1)] * 5
    assert overs[-1]["game_winner"] != -1, "the game was played to its end on the same connection"
    assert not any(m.get("last_bid") == [3, huge] for m in plain.requests()), "a malformed bid never stands"
    match = finished_match(arena)
    steps = defaultdict(set)
    for event in match["events"]:
        steps[event["step"]].add(event["seat"])
    assert sorted(steps) == list(range(1, len(odd.requests()) + 1)), "no event lost"
    assert all(seats == {0, 1} for seats in steps.values())
    replay = api(arena, f"/api/matches/{match['id']}/replay/")
    assert replay["complete"] and replay["total"] == len(steps) + 1
    for text in ("(odd): not JSON: NaN is not a JSON value", "(odd): not JSON: -Infinity is not a JSON value",
                 "(odd): not JSON: number 1e400 is out of range", "(odd): not JSON (RecursionError)",
                 "(odd): a bid is [face, count], two whole numbers up to 2147483647; got [3,999"):
        wait_log(arena, text)
    assert "Traceback" not in arena.log()


def test_max_line_bytes_is_configurable(arena_factory):
    arena = serve(arena_factory, dice=1, ARENA_MAX_LINE_BYTES=200)

    def long_reply(bot, msg):
        bot.send_obj({"message_id": msg["message_id"], "move": steady(bot, msg), "pad": "y" * 300})

    wordy = Bot(arena.liars_dice_port, name="wordy", decide=long_reply)
    terse = Bot(arena.liars_dice_port, name="terse", decide=steady)
    wait_closed(wordy, terse)
    (over,) = wordy.round_overs()
    assert (over["round_loser"], over["round_challenger"]) == (0, -1)
    wait_log(arena, "(wordy): line longer than 200 bytes")


def test_messages_split_byte_by_byte_and_merged_in_one_write(arena_factory):
    arena = serve(arena_factory, dice=3, games=2)

    class Trickle(Bot):
        def send_raw(self, data):
            with self.lock:
                for i in range(len(data)):
                    self.sock.sendall(data[i:i + 1])

    def merged(bot, msg):
        reply = json.dumps({"message_id": msg["message_id"], "move": playing(bot, msg)}).encode() + b"\n"
        if len(bot.requests()) == 1:
            bot.send_raw(b'{"name": "merged"}\n{"name": "again"}\n' + reply)
        else:
            bot.send_raw(b'{"message_id": "not-yours", "move": "challenge"}\n' + reply)
        return None

    trickle = Trickle(arena.liars_dice_port, name="trickle", seed=1)
    lump = Bot(arena.liars_dice_port, decide=merged, seed=2)
    wait_closed(trickle, lump)
    assert len(trickle.requests()) >= 4 and trickle.round_overs()[-1]["game_number"] == 2
    for bot in (trickle, lump):
        assert all(o["round_challenger"] != -1 for o in bot.round_overs()), "every reply was understood"
    match = finished_match(arena)
    assert sorted(s["name"] for s in match["seats"]) == ["merged", "trickle"]
    assert not any(e["forced"] for e in match["events"])
    assert sum(s["score"] for s in match["seats"]) == 2


# --- disconnects, many players, many games ---------------------------------------------------------

def test_a_disconnected_bot_loses_every_later_round_at_once(arena_factory):
    arena = serve(arena_factory, dice=4, deadline=3)

    def leave_after_three(bot, msg):
        if len(bot.requests()) > 3:
            bot.sock.shutdown(socket.SHUT_RDWR)
            return None
        return steady(bot, msg)

    leaver = Bot(arena.liars_dice_port, name="leaver", decide=leave_after_three)
    stayer = Bot(arena.liars_dice_port, name="stayer", decide=steady)
    wait_closed(stayer, leaver)
    leaver_id = next(pid for pid, _ in stayer.requests()[0]["other_hands"] if pid != 0)
    assert len(leaver.requests()) == 4
    gone_at = leaver.stamp_of(leaver.requests()[3])
    after = [(m, t) for m, t in zip(stayer.received, stayer.stamps) if t >= gone_at and m["subject"] == "round_over"]
    assert after, "rounds were played after the disconnect"
    dice = [n for pid, n in after[0][0]["state"] if pid == leaver_id][0] + 1
    for msg, _ in after:
        assert (msg["round_loser"], msg["round_challenger"]) == (leaver_id, -1)
        dice -= 1
        assert [n for pid, n in msg["state"] if pid == leaver_id] == [dice]
    assert dice == 0 and after[-1][0]["game_winner"] == stayer.my_id()
    assert after[-1][1] - gone_at < 1.5, "no deadline is waited for a player who is gone"
    assert len(leaver.round_overs()) < len(stayer.round_overs()), "a disconnected player receives nothing more"
    match = finished_match(arena)
    assert match["status"] == "finished" and match["result"]["winner"] == seat_of(match, "stayer")
    assert any(e["reason"] == "disconnected" for e in match["events"])
    wait_log(arena, "(leaver) disconnected")


def test_several_games_shuffle_the_play_order_on_the_same_connections(arena_factory):
    games = 4
    arena = serve(arena_factory, players=6, dice=1, games=games)
    bots = [Bot(arena.liars_dice_port, name=f"g{i}", seed=i) for i in range(6)]
    wait_closed(*bots)
    bot = bots[0]
    first_moves = [m for m in bot.requests() if m["round_number"] == 1 and m["move_number"] == 1]
    assert [m["game_number"] for m in first_moves] == list(range(1, games + 1)), \
        "everyone plays (and is asked at) the start of every game"
    cycles = set()
    for m in first_moves:
        assert all(n == 1 for _, n in m["other_hands"]) and len(m["other_hands"]) == 6
        ids = [pid for pid, _ in m["other_hands"]]
        cycles.add(tuple(ids[ids.index(0):] + ids[:ids.index(0)]))
    assert len(cycles) > 1, "the play order is shuffled for each game"
    finals = [o for o in bot.round_overs() if o["game_winner"] != -1]
    assert [o["game_number"] for o in finals] == list(range(1, games + 1))
    rounds = defaultdict(list)
    for o in bot.round_overs():
        rounds[o["game_number"]].append(o["round_number"])
    assert all(r == [1, 2, 3, 4, 5] for r in rounds.values()), "round_number restarts; one die lost per round"
    for b in bots:
        assert b.received[-1] is b.round_overs()[-1] and b.received[-1]["game_number"] == games
    match = finished_match(arena)
    assert sum(s["score"] for s in match["seats"]) == games and match["config"]["games"] == games
    wins = defaultdict(int)
    for o in finals:
        wins[o["game_winner"]] += 1
    assert {s["index"] + 1: s["score"] for s in match["seats"] if s["score"]} == dict(wins)


# --- the default 3 s deadline ----------------------------------------------------------------------

def test_default_deadline_a_reply_at_2_5_s_counts_silence_loses_at_3_s(arena_factory):
    arena = serve(arena_factory, dice=1, deadline="")  # empty: the setting's default, 3 s

    def thinks(bot, msg):
        bot.reply_later(2.5, msg, steady(bot, msg))
        return None

    thinker = Bot(arena.liars_dice_port, name="thinker", decide=thinks)
    mute = Bot(arena.liars_dice_port, name="mute", decide=None)
    wait_closed(thinker, mute)
    (request,) = mute.requests()
    (over,) = mute.round_overs()
    assert (over["round_loser"], over["round_challenger"]) == (0, -1)
    assert over["game_winner"] == thinker.my_id()
    waited = mute.stamp_of(over) - mute.stamp_of(request)
    assert 2.95 <= waited < 3.6, waited
    match = finished_match(arena)
    by_seat = {e["seat"]: e for e in match["events"]}
    thought = by_seat[seat_of(match, "thinker")]
    assert not thought["forced"] and 2400 <= thought["think_ms"] < 3000
    assert by_seat[seat_of(match, "mute")]["reason"] == "no reply within 3 s"


# --- load and shutdown -----------------------------------------------------------------------------

def test_a_thousand_idle_connections_do_not_hold_up_a_match(arena_factory):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2500:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 2500:
        pytest.skip("not enough file descriptors for 1000 connections")
    arena = serve(arena_factory, dice=6, deadline=60)  # idle tables wait; nothing times out
    idle = []
    try:
        idle = [socket.create_connection(("127.0.0.1", arena.liars_dice_port)) for _ in range(1000)]
        ports = {s.getsockname()[1] for s in idle}

        def seated():
            found = {int(port) for port in re.findall(r"127\.0\.0\.1:(\d+) took seat", arena.log())}
            return len(found & ports) == 1000

        wait_for(seated, 60, "1000 idle connections seated")
        started = time.monotonic()
        a = Bot(arena.liars_dice_port, name="busy-a", seed=1)
        b = Bot(arena.liars_dice_port, name="busy-b", seed=2)
        wait_closed(a, b, timeout=15)
        assert time.monotonic() - started < 10
        listing = wait_for(lambda: api(arena, "/api/matches/?player=busy-a")["results"], 10, "the match listed")
        assert listing[0]["status"] == "finished"
        assert sorted(s["name"] for s in listing[0]["seats"]) == ["busy-a", "busy-b"]
        for s in idle[::50]:  # the idle ones are still connected (their matches wait)
            s.setblocking(False)
            try:
                assert s.recv(1, socket.MSG_PEEK) != b""
            except BlockingIOError:
                pass
        assert "refusing another" not in arena.log()
    finally:
        for s in idle:
            s.close()


def test_stopping_the_server_keeps_finished_matches_and_aborts_the_running_one(arena_factory):
    arena = serve(arena_factory, dice=6, games=3)

    def hopeless(bot, msg):  # a reply without message_id: every round is lost at once
        bot.send_raw(b'{"move": "pass"}\n')

    first = [Bot(arena.liars_dice_port, name=f"early{i}", decide=hopeless) for i in range(2)]
    wait_closed(*first)
    wait_for(lambda: api(arena, "/api/matches/?game=liars_dice")["results"], what="the first match finished")

    def unhurried(bot, msg):
        bot.reply_later(0.05, msg, playing(bot, msg))
        return None

    second = [Bot(arena.liars_dice_port, name=f"late{i}", decide=unhurried, seed=i) for i in range(2)]
    wait_for(lambda: len(second[0].requests()) >= 20, what="20 moves of the second match")
    assert arena.stop() == 0, arena.log()[-3000:]
    wait_closed(*second, timeout=5)
    asked = len(second[0].requests())
    db = sqlite3.connect(arena.data_dir / "arena.sqlite3")
    try:
        rows = db.execute("SELECT id, status, result FROM arena_match ORDER BY id").fetchall()
        by_status = defaultdict(list)
        for mid, status, result in rows:
            by_status[status].append((mid, json.loads(result) if result else None))
        (finished,) = by_status["finished"]
        (aborted,) = by_status["aborted"]
        assert sorted(by_status) in (["aborted", "finished"], ["aborted", "finished", "open"])
        assert finished[1]["scores"] and aborted[1] == {"aborted": "the server stopped during the match"}
        events = db.execute("SELECT step, seat FROM arena_event WHERE match_id = ? ORDER BY seq",
                            (aborted[0],)).fetchall()
    finally:
        db.close()
    steps = defaultdict(set)
    for step, seat in events:
        steps[step].add(seat)
    assert sorted(steps) == list(range(1, asked)), "every move answered before the stop is kept"
    assert all(seats == {0, 1} for seats in steps.values())
    # a new server on the same data shows the same thing
    env = {k: v for k, v in arena.env.items() if not k.endswith("_PORT")}
    with sigint_not_ignored():
        again = start_arena(env=env, data_dir=arena.data_dir)
    try:
        detail = api(again, f"/api/matches/{aborted[0]}/")
        assert detail["status"] == "aborted" and len(detail["events"]) == len(events)
        assert api(again, f"/api/matches/{finished[0]}/")["status"] == "finished"
        assert "left running by a previous server" not in again.log()
    finally:
        again.stop()


def test_two_bots_that_never_challenge_are_stopped_at_the_step_bound(arena_factory):
    """Counts may raise up to 2**31 - 1 as on the reference, so two bots that only ever raise
    could play one round for ever; the arena stops such a match at ``ARENA_MAX_STEPS`` and
    records it as aborted with its events kept, and both bots are let go."""
    def always_raise(bot, msg):
        last = msg["last_bid"]
        return [last[0] or 1, last[1] + 1] if on_turn(msg) else "pass"

    arena = serve(arena_factory, dice=2, ARENA_MAX_STEPS=40)
    one = Bot(arena.liars_dice_port, name="raiser-1", decide=always_raise)
    two = Bot(arena.liars_dice_port, name="raiser-2", decide=always_raise)
    wait_closed(one, two)
    match = finished_match(arena)
    assert match["status"] == "aborted"
    assert "stopped after 40 steps" in match["result"]["aborted"], match["result"]
    assert max(e["step"] for e in match["events"]) == 40, "every step played is kept"
    last = [e["action"] for e in match["events"] if e["step"] == 40 and isinstance(e["action"], list)]
    assert last == [["bid", 1, 40]], "the count ran far past the 4 dice on the table"
