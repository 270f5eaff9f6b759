"""Hidden information: over random matches with every kind of seat, no
message the arena sends carries a secret of another seat that is still current.

Each match runs a real :class:`MatchRunner` with a capturing ``publish``: people (driven from
the views they get, sometimes silent), built-in bots, and bots over their real transports:
Liar's Dice bots over TCP (some cheat: they send malformed replies and a late name spelling
out their own dice) and Jass bots over HTTP (legal, illegal, garbage, failing, slow).  Every
view, answer, reason, happening and name published, and every message each bot receives,
is checked against the hands held at that moment.  The API and pages of a running match are
checked too.
"""
from __future__ import annotations

import asyncio
import json
import random
import re

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.conf import settings
from django.test import Client

from games.arena import registry
from games.arena.bots.transport import start_line_server
from games.arena.play import tables
from games.arena.play.arena import Arena
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat, HumanSeat
from games.jass import rules as jass_rules
from games.jass.transport import JassHttpBot
from games.liars_dice import rules as ld_rules
from games.liars_dice.transport import LiarsDiceBot
from tests.jass_bot_service import BotService
from tests.ld_bot import LDBot, simple_move

LD_MATCHES = 12
JASS_MATCHES = 6
CARD = re.compile(r"\b[DHSC](?:10|[6-9AKQJ])\b")


@pytest.fixture(autouse=True)
def fast_people(monkeypatch):
    monkeypatch.setitem(settings.ARENA, "HUMAN_DEADLINE", 0.3)
    monkeypatch.setitem(settings.ARENA, "HUMAN_CHALLENGE_WINDOW", 0.1)
    yield


class NullWriter:
    """The event log, kept in memory (events are checked through the runner's messages)."""

    def __init__(self):
        self.rows = []

    async def append(self, rows):
        self.rows.extend(rows)


class Capture:
    """The runner's ``publish``: records each message with the hands held when it was sent,
    and answers people's requests (a random legal move, or silence) as a browser would."""

    def __init__(self, rng: random.Random, secrets):
        self.rng = rng
        self.secrets = secrets  # state -> {seat: secret} of the hands held now ({} when over)
        self.runner: MatchRunner | None = None
        self.sent: list[tuple[str, dict, dict]] = []  # (group, body, secrets then)

    async def publish(self, group: str, message: dict) -> None:
        body = json.loads(message["text"])
        self.sent.append((group, body, self.secrets(self.runner.state)))
        request = body.get("request")
        if isinstance(body["audience"], int) and request and self.rng.random() < 0.9:
            seat, state = body["audience"], self.runner.state
            action = self.rng.choice(state.legal_actions(seat))
            asyncio.get_running_loop().call_soon(
                lambda: asyncio.ensure_future(self.runner.human_action(seat, request["version"], action)))


def strings_in(obj):
    """Every string in a JSON value, keys included."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings_in(v)


# --- Liar's Dice ------------------------------------------------------------------------------

def ld_secrets(state: ld_rules.LiarsDiceState) -> dict:
    if state.terminal:
        return {}
    return {"round": (state.game_number, state.round_number),
            "hands": {s: list(h) for s, h in enumerate(state.hands) if h}}


def marker(hand) -> str:
    """How a cheating bot spells its dice in what it sends (a name, a malformed reply)."""
    return "dice:" + "".join(map(str, hand))


def ld_leaks(body, audience, secrets) -> list[str]:
    """Where ``body`` (sent to ``audience``: a seat or None for spectators) shows another
    seat's current dice."""
    if not secrets:
        return []
    found = []
    others = {s: h for s, h in secrets["hands"].items() if s != audience}

    def walk(obj, path):
        if isinstance(obj, dict):
            if "hands" in obj and (obj.get("type") != "round_over"
                                   or (obj["game_number"], obj["round_number"]) == secrets["round"]):
                found.append(f"{path}: hands of the round in play")
            if "your_hand" in obj and obj.get("your_seat") != audience:
                found.append(f"{path}: your_hand of seat {obj.get('your_seat')}")
            for k, v in obj.items():
                walk(v, f"{path}.{k}")
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]")

    walk(body, "")
    for text in strings_in(body):
        found += [f"text {text!r} spells seat {s}'s dice" for s, h in others.items() if marker(h) in text]
    return found


def cheating_move(bot: LDBot, msg: dict):
    """A TCP bot that tries to get its own dice shown to others: a late name and malformed
    replies that quote them; otherwise it plays (and is sometimes silent)."""
    mark = marker(msg["your_hand"])
    if len(bot.requests()) == 1:
        bot.send_obj({"name": mark})
    roll = bot.rng.random()
    if roll < 0.3:
        return {"dice": mark}  # not a move: a malformed reply that quotes the dice
    if roll < 0.35:
        return None
    return simple_move(msg, bot.rng)


class TcpSeats:
    """Liar's Dice bots over real TCP: a listener whose bots are handed to the test."""

    def __init__(self):
        self.endpoints: list[LiarsDiceBot] = []
        self.next_id = 0

    async def seat_bot(self, game, endpoint):
        self.next_id += 1
        self.endpoints.append(endpoint)
        return self.next_id

    async def claims_bot_name(self, game, name):
        return False  # no registered bots here: every name is free

    async def bot_named(self, seat_id, name):
        pass

    async def bot_left(self, seat_id):
        pass


async def ld_match(seed: int) -> tuple[Capture, list, list[LDBot]]:
    rng = random.Random(seed)
    players = rng.randint(2, 4)
    kinds = [rng.choice(["human", "builtin", "tcp", "cheat"]) for _ in range(players)]
    spec = registry.get("liars_dice")
    seats = TcpSeats()
    server = await start_line_server(lambda conn: LiarsDiceBot(conn, seats, 0.3), "127.0.0.1", 0, 65536, 100, "t")
    clients = []
    endpoints = []
    try:
        for seat, kind in enumerate(kinds):
            if kind == "human":
                endpoints.append(HumanSeat(f"person {seat}", spec))
            elif kind == "builtin":
                label, policy = spec.builtin_bots[rng.choice(["random", "probability"])]
                endpoints.append(BuiltinSeat(label, policy, seed + seat))
            else:
                # A cheat sends no name at first: its first one, spelling its dice, comes later.
                bot = await asyncio.to_thread(LDBot, server.port, None if kind == "cheat" else f"tcp {seat}", None)
                bot.rng = random.Random(seed * 10 + seat)
                if kind == "tcp":
                    bot.decide = lambda msg, b=bot: simple_move(msg, b.rng)
                else:
                    bot.decide = lambda msg, b=bot: cheating_move(b, msg)
                clients.append(bot)
                async def seated():
                    while len(seats.endpoints) < len(clients):
                        await asyncio.sleep(0.01)
                await asyncio.wait_for(seated(), 30)  # a transport that fails to seat must not hang
                endpoints.append(seats.endpoints[-1])
        capture = Capture(rng, ld_secrets)
        capture.runner = MatchRunner(seed, spec, {"players": players, "dice": rng.randint(1, 3), "games": 2},
                                     seed, endpoints, NullWriter(), capture.publish,
                                     omniscient=rng.random() < 0.5)
        await asyncio.wait_for(capture.runner.run(), 120)
        for ep in endpoints:
            ep.close(capture.runner.state.result())
        return capture, kinds, clients
    finally:
        server.close()


@pytest.mark.parametrize("seed", range(LD_MATCHES))
async def test_liars_dice_no_message_shows_another_seats_current_dice(seed):
    capture, kinds, clients = await ld_match(seed)
    assert capture.sent and capture.sent[-1][1]["view"]["terminal"]
    for group, body, secrets in capture.sent:
        audience = body["audience"] if isinstance(body["audience"], int) else None
        assert not ld_leaks(body, audience, secrets), (group, ld_leaks(body, audience, secrets))
    forced = [a for _, b, _ in capture.sent for a in b["answers"] or [] if a["forced"]]
    assert all(a["reason"] in ("malformed reply", "no reply within 0.3 s", "no move within 0.3 s", "disconnected")
               for a in forced), {a["reason"] for a in forced}
    # What each TCP bot got: its own dice and everyone's counts, nothing else of a hand.
    for bot in clients:
        for msg in bot.requests():
            assert set(msg) == {"subject", "message_id", "game_number", "round_number", "move_number",
                                "your_hand", "other_hands", "last_bid"}
            assert all(len(pair) == 2 for pair in msg["other_hands"])
        assert all("hand" not in json.dumps(m) for m in bot.round_overs())


async def test_a_cheating_bots_late_name_shows_only_after_the_match():
    for seed in range(LD_MATCHES):
        capture, kinds, clients = await ld_match(seed)
        if "cheat" in kinds:
            break
    cheat = kinds.index("cheat")
    running = {b["names"][cheat] for _, b, _ in capture.sent if not b["view"]["terminal"]}
    assert len(running) == 1 and running.pop().startswith("bot 127.0.0.1:"), \
        "no name while the match runs: the one it sent came after its dice"
    assert capture.sent[-1][1]["names"][cheat].startswith("dice:"), "the late name is shown once the match is over"


# --- Jass -------------------------------------------------------------------------------------

def jass_secrets(state: jass_rules.JassState) -> dict:
    """What is secret, and what is no longer, while a deal is in play: each seat's ``hands``
    (cards held now), the cards ``played`` in the deal in play, the ``finished`` deals' whole
    hands as dealt and whole tricks, and (until the new deal's first card) the last trick of
    the deal ``just_over``.  Empty when the match is over."""
    if state.is_terminal():
        return {}
    played = {c for trick in state.observation(0)["tricks"] for c in trick["cards"]}
    records = state.deal_records()
    finished = {frozenset(group) for r in records for group in [*r["hands"], *(t["cards"] for t in r["tricks"])]}
    return {"deal": state.deal_number,
            "hands": {s: set(jass_rules.mask_to_names(h)) for s, h in enumerate(state.hands)},
            "played": played, "finished": finished,
            "just_over": set(records[-1]["tricks"][-1]["cards"]) if records and not played else set()}


def jass_leaks(body, audience, secrets) -> list[str]:
    """Where ``body`` (sent to ``audience``: a seat or None for spectators) names a card
    another seat holds now.  Every key and value is read, nested, none exempt: each list of
    cards (a hand, a trick) and each string (a card, a reason, a name) is a group of cards,
    and a group that names a card held by another seat is a leak unless it is a whole hand
    as dealt or a whole trick of a deal already over, or the last card of the deal just over
    (the same 36 cards are dealt again: those name no current hand)."""
    if not secrets:
        return []
    held = set().union(*(h for s, h in secrets["hands"].items() if s != audience))
    found = []

    def check(cards: set, path: str):
        if cards & held and frozenset(cards) not in secrets["finished"] and not cards <= secrets["just_over"]:
            found.append(f"{path}: {sorted(cards & held)} held by another seat")

    def walk(obj, path):
        if isinstance(obj, dict):
            for k, v in obj.items():
                check(set(CARD.findall(k)), f"{path} key {k!r}")
                walk(v, f"{path}.{k}")
        elif isinstance(obj, list):
            if obj and all(isinstance(v, str) and CARD.fullmatch(v) for v in obj):
                check(set(obj), path)
            else:
                for i, v in enumerate(obj):
                    walk(v, f"{path}[{i}]")
        elif isinstance(obj, str):
            check(set(CARD.findall(obj)), path)

    walk(body, "")
    return found


@pytest.fixture
def service():
    svc = BotService(slow_s=0.5)
    yield svc
    svc.close()


@pytest.mark.parametrize("seed", range(JASS_MATCHES))
async def test_jass_no_message_shows_another_seats_current_hand(seed, service):
    channel_layers.backends = {}
    rng = random.Random(seed)
    spec = registry.get("jass")
    endpoints = []
    # Half the tables are bots only: only those may show spectators the finished deals' hands.
    kinds = ["builtin", "http", "http"] + (["human"] if seed % 2 else [])
    for seat in range(4):
        kind = rng.choice(kinds)
        if kind == "human":
            endpoints.append(HumanSeat(f"person {seat}", spec))
        elif kind == "builtin":
            label, policy = spec.builtin_bots[rng.choice(["random", "rules"])]
            endpoints.append(BuiltinSeat(label, policy, seed + seat))
        else:
            name = rng.choice(["good", "illegal", "garbage", "error", "slow", "wrongkey"])
            endpoints.append(JassHttpBot(name, service.url(name), "kit", deadline_s=0.3))
    capture = Capture(rng, jass_secrets)
    capture.runner = MatchRunner(seed, spec, {"points_to_win": 5000, "max_deals": 2}, seed, endpoints,
                                 NullWriter(), capture.publish, omniscient=True)
    await asyncio.wait_for(capture.runner.run(), 120)
    assert capture.sent[-1][1]["view"]["terminal"]
    for group, body, secrets in capture.sent:
        audience = body["audience"] if isinstance(body["audience"], int) else None
        assert not jass_leaks(body, audience, secrets), (group, jass_leaks(body, audience, secrets))
    if not capture.runner.humans:  # the opted-in view showed the first deal's hands during the second
        assert any(b["view"].get("last_deal_hands") for _, b, _ in capture.sent[:-1])
    forced = [a for _, b, _ in capture.sent for a in b["answers"] or [] if a["forced"]]
    public = {"illegal card", "illegal trump", "answer is not a valid card reply", "answer is not a valid trump reply",
              "no valid answer",
              "HTTP status 500", "no answer within 0.3 s", "no move within 0.3 s: random valid move"}
    assert all(a["reason"] in public for a in forced), {a["reason"] for a in forced} - public
    # What each HTTP bot got: no card but its own hand and the cards played.
    for path, body in service.calls:
        played = {c for t in body["tricks"] for c in t["cards"]}
        own = set(body["player"][body["playerView"]]["hand"])
        assert set(CARD.findall(json.dumps(body))) <= own | played, path


async def test_jass_forced_move_detail_goes_to_that_seat_only(service):
    """A person's own view gets ``detail``; others get the public reason only."""
    spec = registry.get("jass")
    capture = Capture(random.Random(1), jass_secrets)
    # A deadline no busy machine reaches: the bot answers at once, every answer is illegal.
    endpoints = [JassHttpBot("illegal", service.url("illegal"), "kit", deadline_s=60), HumanSeat("p", spec),
                 BuiltinSeat("r", spec.builtin_bots["random"][1], 2), BuiltinSeat("r", spec.builtin_bots["random"][1], 3)]
    capture.runner = MatchRunner(1, spec, {"max_deals": 1}, 1, endpoints, NullWriter(), capture.publish)
    # The person (seat 1) sees the bot's reason only; details are the bot's, not theirs.
    await asyncio.wait_for(capture.runner.run(), 60)
    answers = [a for _, b, _ in capture.sent for a in b["answers"] or [] if a["seat"] == 0 and a["forced"]]
    assert answers and all(a["reason"] == "illegal card" and "detail" not in a for a in answers)
    assert "your hand" not in json.dumps([b for _, b, _ in capture.sent])


async def test_a_persons_own_detail_reaches_their_view_only():
    """The runner adds ``detail`` to the seat's own answer in the seat's own message."""
    spec = registry.get("liars_dice")
    sent = []

    async def publish(group, message):
        sent.append(json.loads(message["text"]))

    runner = MatchRunner(1, spec, {"players": 2, "dice": 1, "games": 1}, 1,
                         [HumanSeat("p", spec), BuiltinSeat("b", spec.builtin_bots["random"][1], 1)],
                         NullWriter(), publish)
    await runner._publish_views([], [{"seat": 0, "action": None, "forced": True, "reason": "r"}], {0: "secret why"})
    public, own = sent
    assert public["audience"] == "public" and "secret why" not in json.dumps(public)
    assert own["audience"] == 0 and own["answers"][0]["detail"] == "secret why"


# --- the API and pages of a running match -----------------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game, config, seats", [
    ("liars_dice", {"players": 3, "dice": 5, "games": 1}, ["me", "builtin:random", "builtin:probability"]),
    ("jass", {"max_deals": 1}, ["builtin:random", "me", "builtin:rules", "builtin:random"]),
])
async def test_api_and_pages_of_a_running_match_show_no_hand(game, config, seats, monkeypatch):
    monkeypatch.setitem(settings.ARENA, "HUMAN_DEADLINE", 30)
    monkeypatch.setitem(settings.ARENA, "BUILTIN_DELAY", 0.0)
    channel_layers.backends = {}
    arena = Arena(listen=False)
    await arena.start()
    try:
        sitter = tables.Sitter(name="gus", session_key="k" * 32)
        match = await sync_to_async(tables.create_table)(game, config, seats, sitter, omniscient=True)
        await arena.maybe_start(match.pk)
        runner = arena.runners[match.pk]
        for _ in range(200):  # until the person is asked (bots before them have played)
            if runner.endpoints[seats.index("me")].open_request:
                break
            await asyncio.sleep(0.01)
        state = runner.state
        client = Client()
        texts = [await sync_to_async(lambda u=u: client.get(u).content.decode())(u) for u in (
            f"/api/matches/{match.pk}/", f"/api/matches/{match.pk}/replay/", f"/matches/{match.pk}/", "/",
            "/api/matches/")]
        assert not state.is_terminal()
        for text in texts:
            assert '"hands"' not in text and '"your_hand"' not in text and '"dealt"' not in text
            if game == "jass":
                held = set(CARD.findall(text)) & set().union(*jass_secrets(state)["hands"].values())
                assert not held, held
        assert json.loads(texts[0])["events"] is None
    finally:
        await arena.stop()


# --- over real sockets: a bot that watches its own match -------------------------------------

def test_a_tcp_bot_watching_its_own_automatic_match_never_sees_the_dice_in_play(arena_factory):
    """A bot on the automatic table opens the anonymous spectator WebSocket of its own match
    (the probe had the opponent's dice before 451 of 451 answers): it gets views, none with
    the dice in play."""
    from benchmarks.cheating_bot import CheatingBot
    from tests.human_client import Guest

    arena = arena_factory(env={"LIARS_DICE_AUTO_GAMES": "3"})
    guest = Guest(arena.url, "watcher")

    def live_match() -> int:  # the lobby lists it, as anyone can see
        return int(re.search(r'href="/matches/(\d+)/"', guest.get("/")).group(1))

    cheater = CheatingBot(arena.liars_dice_port, arena.url, live_match, seed=1)
    honest = LDBot(arena.liars_dice_port, "honest")
    assert cheater.closed.wait(120) and honest.closed.wait(10)
    match = guest.get_json(f"/api/matches/{cheater.spectator_match}/")
    assert sorted(s["name"] for s in match["seats"]) == ["cheater", "honest"]
    assert cheater.answers >= 6 and cheater.spectator.view is not None, "it watched the match"
    assert cheater.peeks == 0, f"knew the dice in play before {cheater.peeks} of {cheater.answers} answers"


# --- every page message, at the moment it is sent --------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game, config, seats, secrets, leaks", [
    ("liars_dice", {"players": 4, "dice": 2, "games": 2}, ["me", "builtin:probability", "open_human", "builtin:random"],
     ld_secrets, ld_leaks),
    ("jass", {"max_deals": 1}, ["me", "builtin:rules", "open_human", "builtin:random"], jass_secrets, jass_leaks),
])
async def test_every_page_message_shows_only_what_its_recipient_may_know_then(game, config, seats, secrets, leaks,
                                                                               monkeypatch):
    """Two people (one reloads mid-match), built-in bots and two spectators (one asks for
    seat 0 in its resyncs and moves): every frame each page gets (views, resync answers,
    errors, table updates, the end) is recorded where the consumer sends it, with the hands
    held at that moment, and must show no other seat's current secret.  (Blokus has no hidden
    information; Hanabi's own test is tests/test_hanabi_hidden.py.)"""

    from tests.page_recorder import OVER, SPECTATOR, Recorder, guest_session, person_or_spectator, random_legal

    channel_layers.backends = {}
    for key, value in {"HUMAN_DEADLINE": 1.0, "HUMAN_CHALLENGE_WINDOW": 0.3, "ROUND_PAUSE": 0.0,
                       "BUILTIN_DELAY": 0.0}.items():
        monkeypatch.setitem(settings.ARENA, key, value)

    ann, bea = await sync_to_async(guest_session)("ann"), await sync_to_async(guest_session)("bea")
    arena = Arena(listen=False)
    await arena.start()
    recorder = Recorder(arena, secrets)
    recorder.install(monkeypatch, {ann: 0, bea: 2})
    comms = []
    try:
        match = await sync_to_async(tables.create_table)(game, config, seats, tables.Sitter(name="ann", session_key=ann))
        recorder.match_id = match.pk
        assert await sync_to_async(tables.join_seat)(match.pk, 2, tables.Sitter(name="bea", session_key=bea)) is None
        await arena.maybe_start(match.pk)
        runner_of = lambda: arena.runners.get(match.pk) or recorder.runner  # noqa: E731
        recorder.moment()
        await asyncio.wait_for(asyncio.gather(
            person_or_spectator(match.pk, ann, 0, 1, runner_of, random_legal, comms, reload_after=5),
            person_or_spectator(match.pk, bea, 2, 11, runner_of, random_legal, comms),
            person_or_spectator(match.pk, None, None, 21, runner_of, random_legal, comms),
            person_or_spectator(match.pk, None, None, 31, runner_of, random_legal, comms, hostile=True)), 180)
    finally:
        for comm in comms:
            try:
                await comm.disconnect()
            except BaseException:  # closed by the server already
                pass
        await arena.stop()

    assert recorder.runner.state.is_terminal()
    for who, message, moment in recorder.frames:
        if moment == OVER:
            continue
        audience = who[1] if who[0] == "seat" else None
        assert not leaks(message, audience, moment), (who, message.get("type"), leaks(message, audience, moment))
    kinds = recorder.kinds()
    assert kinds["seat"] >= {"match.view", "match.error", "match.over", "match.final"}, kinds
    assert kinds[SPECTATOR] >= {"match.view", "match.error", "match.over", "match.final"}, kinds
