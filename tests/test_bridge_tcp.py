"""Contract bridge's text protocol over real sockets (docs/bridge-protocol.md): scripted clients
written from the page alone (tests/bridge_text_client.py) against a server started as the
README says, with short deadlines."""
from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.request

import pytest

from tests.bridge_text_client import SEATS, TextClient
from tests.serverproc import wait_until
from tests.test_liars_dice_tcp import sigint_not_ignored

#: One board played twice (instant replay) at automatic tables; a silent seat waits 1 s.
ENV = {"BRIDGE_AUTO_BOARDS": "1", "BRIDGE_BOT_DEADLINE": "1", "ARENA_ROUND_PAUSE": "0",
       "ARENA_BUILTIN_DELAY": "0", "ARENA_HUMAN_DEADLINE": "5", "ARENA_MESSAGE_TIMEOUT": "2",
       "ARENA_FIRST_MESSAGE_TIMEOUT": "2"}


@pytest.fixture
def arena(arena_factory):
    return arena_factory(env=ENV)


def api(arena, path: str):
    with urllib.request.urlopen(arena.url + path, timeout=10) as resp:
        return json.loads(resp.read())


def match_of(arena, match_id) -> dict:
    return api(arena, f"/api/matches/{match_id}/")


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


def answer(client: TextClient, line: str, prefix: str) -> str:
    """Send ``line``; the first line after it that starts with ``prefix``."""
    at = len(client.lines)
    client.send(line)
    return client.wait_for(lambda l: l.startswith(prefix), start=at)


def hands_of(client: TextClient) -> list[list[str]]:
    """The hands dealt to ``client``, board by board."""
    return [line.split()[1:] for line in client.lines if line.startswith("HAND")]


def joined_lines(client: TextClient) -> list[str]:
    return [line for line in client.lines if line.startswith("JOINED")]


def test_join_a_new_game_then_that_game_and_seat_joined_as_the_page_says(arena):
    ann = TextClient(arena.bridge_port, "Ann", seed=1)
    assert ann.wait_for(lambda line: line.startswith("GAMES")) == "GAMES"
    ann.send("JOIN-M NEW N")
    first = ann.wait_for(lambda line: line.startswith("JOINED"))
    game = first.split()[1]
    assert first == f"JOINED {game} N Ann"
    ben = TextClient(arena.bridge_port, "Ben", seed=2)
    assert game in ben.wait_for(lambda line: line.startswith("GAMES")).split()[1:]
    ben.send(f"JOIN-M {game}")
    ben.wait_for(lambda line: line.endswith("Ben") and line.startswith("JOINED"))
    cat = TextClient(arena.bridge_port, "Cat", seed=3)
    cat.wait_for(lambda line: line.startswith("GAMES"))
    cat.send("JOIN-M ANY S")
    cat.wait_for(lambda line: line.endswith("Cat") and line.startswith("JOINED"))
    dan = TextClient(arena.bridge_port, "Dan", seed=4)
    dan.wait_for(lambda line: line.startswith("GAMES"))
    dan.send(f"JOIN-M {game} W")
    for c in (ann, ben, cat, dan):
        c.wait_closed()
    assert joined_lines(ann) == [f"JOINED {game} N Ann", f"JOINED {game} E Ben", f"JOINED {game} S Cat",
                                 f"JOINED {game} W Dan"]
    assert joined_lines(ben) == [f"JOINED {game} N Ann", f"JOINED {game} E Ben", f"JOINED {game} S Cat",
                                 f"JOINED {game} W Dan"]
    assert joined_lines(dan) == [f"JOINED {game} N Ann", f"JOINED {game} E Ben", f"JOINED {game} S Cat",
                                 f"JOINED {game} W Dan"]
    assert dan.lines.index(f"JOINED {game} W Dan") < next(i for i, l in enumerate(dan.lines) if l.startswith("HAND"))
    assert match_of(arena, game)["status"] == "finished"
    assert not any(c.naks() for c in (ann, ben, cat, dan))


def test_join_t_two_pairs_play_a_team_match_scored_in_imps(arena):
    ann, bea = TextClient(arena.bridge_port, "Ann", seed=11), TextClient(arena.bridge_port, "Bea", seed=12)
    for c in (ann, bea):
        c.wait_for(lambda line: line.startswith("GAMES"))
    ann.send("JOIN-T Bea")
    bea.send("JOIN-T Ann")
    cid = TextClient(arena.bridge_port, "Cid", seed=13)
    cid.wait_for(lambda line: line.startswith("GAMES"))
    wait_until(lambda: answer(cid, "TOURNAMENTS", "TOURNAMENTS") == "TOURNAMENTS T1", 10,
               "the waiting pair's team match listed")
    dee = TextClient(arena.bridge_port, "Dee", seed=14)
    dee.wait_for(lambda line: line.startswith("GAMES"))
    cid.send("JOIN-T T1 Dee")
    dee.send("JOIN-T Cid")
    for c in (ann, bea, cid, dee):
        c.wait_closed()
    assert [(c.name, SEATS[c.seat]) for c in (ann, cid, bea, dee)] == [("Ann", "N"), ("Cid", "E"), ("Bea", "S"),
                                                                        ("Dee", "W")]
    match = match_of(arena, ann.game)
    assert match["status"] == "finished"
    assert match["config"]["replay"] is True
    imps = match["result"]["imps"]
    assert imps is not None and match["result"]["scores"] == [imps[0], imps[1], imps[0], imps[1]]
    assert not any(c.naks() for c in (ann, bea, cid, dee))


def test_every_nak_of_the_page(arena):
    """Each refusal the page shows, said by the server over the wire, and the forced call's NAK."""
    early = TextClient(arena.bridge_port)
    early.send("GAMES")
    assert early.wait_for(lambda l: l.startswith("NAK")) == "NAK send HELLO <your name> first"
    clients = [TextClient(arena.bridge_port, n, play=False) for n in ("Ann", "Ben", "Cat", "Dan")]
    n, e, s, w = clients
    n.wait_for(lambda l: l.startswith("GAMES"))
    n.send("JOIN-M NEW N")
    game = n.wait_for(lambda l: l.startswith("JOINED")).split()[1]
    for c, seat in ((e, "E"), (s, "S"), (w, "W")):
        c.wait_for(lambda l: l.startswith("GAMES"))
        c.send(f"JOIN-M {game} {seat}")
    n.wait_for(lambda l: l.startswith("AUCOPEN N"))

    def nak(client, line):
        return answer(client, line, "NAK")

    assert nak(e, "HELO") == ("NAK unknown message 'HELO': a client sends HELLO, GAMES, TOURNAMENTS, JOIN-M, "
                              "JOIN-T, BID, PLAY")
    assert nak(e, "BID 1C 1D") == "NAK BID takes one argument, got 2: BID <bid>, e.g. BID 1NT, BID PASS, BID DOUBLE"
    assert nak(e, "BID 1N") == ("NAK '1N' is not a bid: 1C ... 7NT (level 1-7, strain C D H S NT), PASS, DOUBLE "
                                "or REDOUBLE")
    assert nak(e, "PLAY HA") == "NAK 'HA' is not a card: rank then suit, e.g. 10H, AS, 2C"
    assert nak(e, "BID PASS") == "NAK it is North's turn, not East's"
    assert nak(e, "JOIN-M NEW") == f"NAK you are seated at game {game} already"
    at = len(e.lines)
    e.send_raw(b"BID " + b"x" * 600 + b"\n")
    assert e.wait_for(lambda l: l.startswith("NAK"), start=at) == \
        "NAK line too long: more than 512 bytes, at most 512; skipped"
    n.send("BID 1C")
    e.wait_for(lambda l: l == "AUCOPEN E 1C")
    assert nak(e, "BID 1C") == "NAK insufficient bid: 1C does not beat 1C"
    for c in (e, s, w):
        c.wait_for(lambda l: l.startswith("AUCOPEN " + SEATS[clients.index(c)]))
        c.send("BID PASS")
    n.wait_for(lambda l: l == "AUCCLOSE C 1C UNDOUBLED NS N")
    assert nak(s, "PLAY 2C") == "NAK South is dummy: declarer (North) plays dummy's cards"
    assert nak(e, "BID PASS") == "NAK the auction is over: send PLAY <card>, e.g. PLAY 10H"
    # East leads a suit dummy (South) holds; declarer then offers dummy's card of another suit.
    east_hand = e.wait_for(lambda l: l.startswith("HAND")).split()[1:]
    south_hand = s.wait_for(lambda l: l.startswith("HAND")).split()[1:]
    lead = next(c for c in east_hand if any(d[-1] == c[-1] for d in south_hand)
                and any(d[-1] != c[-1] for d in south_hand))
    e.send(f"PLAY {lead}")
    n.wait_for(lambda l: l.startswith("TRICK S"))
    dummy = n.wait_for(lambda l: l.startswith("DUMMY")).split()[1:]
    assert dummy == [c for c in south_hand if c != lead]
    off = next(d for d in dummy if d[-1] != lead[-1])
    assert nak(n, f"PLAY {off}") == f"NAK follow suit: {lead[-1]} was led and dummy holds {lead[-1]}"
    # Nobody answers for dummy now: at the deadline the server plays dummy's lowest legal card
    # and tells declarer.
    forced = n.wait_for(lambda l: l.startswith("NAK deadline passed"))
    assert forced.startswith("NAK deadline passed: the server played ") and forced.endswith(" for you")
    for c in clients:
        c.close()


def test_bad_huge_and_endless_lines(arena):
    bad = TextClient(arena.bridge_port, "Eve")
    bad.wait_for(lambda l: l.startswith("GAMES"))
    bad.send_raw(b"\xff\xfe\n")
    assert bad.wait_for(lambda l: l.startswith("NAK")) == "NAK the line is not UTF-8"
    bad.send_raw(b"HELLO\tEve\n")
    assert "control character" in bad.wait_for(lambda l: l.startswith("NAK control"))
    bad.send_raw(b"JOIN-M " + b"9" * 513 + b"\n")
    bad.wait_for(lambda l: l.startswith("NAK line too long"))
    bad.send("HELLO Eve")
    assert bad.wait_for(lambda l: l.startswith("NAK you said")) == "NAK you said HELLO already, as Eve"
    # A line that never ends: the connection is closed when the message deadline passes,
    # however many bytes keep coming.
    endless = TextClient(arena.bridge_port, "Flo")
    endless.wait_for(lambda l: l.startswith("GAMES"))
    try:
        for _ in range(50):
            endless.send_raw(b"x" * 1000)
            if endless.closed:
                break
            time.sleep(0.1)
    except OSError:
        pass
    endless.wait_closed(timeout=30)
    assert "NAK line too long: more than 512 bytes, at most 512; skipped" in endless.lines
    # A client that says nothing valid is closed by the first-message deadline.
    silent = TextClient(arena.bridge_port)
    silent.wait_closed(timeout=30)
    assert silent.lines == []
    # Past MAX_REFUSALS refused lines the connection is closed.
    spam = TextClient(arena.bridge_port, "Gus")
    spam.wait_for(lambda l: l.startswith("GAMES"))
    spam.send_raw(b"BID 1C\n" * 100)
    spam.wait_closed(timeout=30)
    assert spam.lines[-1] == "NAK 100 refused lines: disconnected"


def test_a_client_gone_mid_board_gets_forced_actions_and_is_resynced_on_hello(arena):
    clients = play_four(arena, ["JOIN-M ANY"] * 4, seed=20)
    ann, ben, cat, dan = clients
    cat.wait_for(lambda line: line.startswith("HAND"))
    cat.close()  # gone: its calls and cards are forced at each deadline (1 s)
    # Back once the play of a board has begun (a card on the table).
    ann.wait_for(lambda line: line.startswith("TRICK") and len(line.split()) > 2, timeout=120)
    back = TextClient(arena.bridge_port, "Cat", seed=23)
    game = ann.game
    back.wait_for(lambda line: line.startswith("TRICK"))
    board = sum(line.startswith("HAND") for line in ann.lines)  # the board in play, counted from 1
    me = SEATS[back.seat]
    head, resync = back.lines[:4], back.lines[4:]
    assert sorted(head) == sorted(f"JOINED {game} {SEATS[c.seat]} {c.name}" for c in clients)
    assert head[-1] == f"JOINED {game} {me} Cat"
    kinds = [line.split()[0] for line in resync]
    assert kinds[:4] == ["SCORE-M", "HAND", "AUCOPEN", "AUCCLOSE"]
    assert kinds[kinds.index("TRICKSWON") + 1] == "TRICK"
    # The auction is the board's (as the others saw it close), and its hand is what is left
    # of its own: no card any other seat was dealt for this board.
    final_auctions = [line.split()[2:] for line in ann.lines if line.startswith("AUCOPEN 0")]
    assert resync[2].split()[2:] == final_auctions[board - 1]
    others_now = set().union(*[set(hands_of(c)[board - 1]) for c in (ann, ben, dan)])
    hand_now = set(resync[1].split()[1:])
    assert hand_now and not hand_now & others_now
    for c in (ann, ben, dan, back):
        c.wait_closed()
    # Nothing the returning client was told showed another seat's unplayed card: others'
    # cards only once played (PLAY, TRICK) or dummy's (DUMMY, dummy's hand as dealt).
    played = {line.split()[2] for c in (ann, ben, dan) for line in c.lines if line.startswith("PLAY ")}
    dealt = [set(h) for c in (ann, ben, dan) for h in hands_of(c)]
    for n, hand in enumerate(hands_of(back)):
        others = set().union(*[set(hands_of(c)[board - 1 + n]) for c in (ann, ben, dan)])
        assert len(hand) <= 13 and not set(hand) & others, hand
    for line in back.lines:
        name, *args = line.split()
        if name == "DUMMY":
            assert any(set(args) <= set(hand) for hand in dealt + hands_of(cat) + hands_of(back)), line
        if name == "TRICK":
            assert set(args[1:]) <= played, line
    match = match_of(arena, game)
    assert match["status"] == "finished"
    seat = next(i for i, s in enumerate(match["seats"]) if s["name"] == "Cat")
    events = api(arena, f"/api/matches/{game}/?limit=1000")["events"]
    gone = [e for e in events if e["seat"] == seat and e["forced"]]
    assert gone and all(e["reason"].startswith(("disconnected: ", "no call within 1 s", "no card within 1 s"))
                        for e in gone)
    assert any(e["reason"] in ("disconnected: pass", "disconnected: lowest legal card") for e in gone)
    assert not back.naks() or all(n.startswith("NAK deadline passed") for n in back.naks())


def test_the_newer_connection_with_the_name_wins(arena):
    old = TextClient(arena.bridge_port, "Ann")
    old.wait_for(lambda line: line.startswith("GAMES"))
    new = TextClient(arena.bridge_port, "Ann")
    new.wait_for(lambda line: line.startswith("GAMES"))
    old.wait_closed(timeout=10)
    assert old.lines[-1] == "NAK another connection said HELLO with your name: this one is closed"


async def play_as_person(guest, match_id: int) -> int:
    """A person through the match WebSocket: passes in the auction, then a legal card (of the
    suit led when it can) from its hand or from dummy's when the request is for dummy's."""
    moves = 0
    async with guest.websocket(match_id) as ws:
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if msg["type"] != "match.view":
                continue
            await ws.send(json.dumps({"type": "ack", "version": msg["version"]}))
            view = msg["view"]
            if view["terminal"]:
                return moves
            request = msg.get("request")
            if not request:
                continue
            if view["phase"] == "auction":
                action = "P"
            else:
                cards = view["dummy_hand"] if view["player"] != view["seat"] else view["hand"]
                led = view["trick"]["cards"][0][0] if view["trick"]["cards"] else None
                action = next((c for c in cards if c[0] == led), cards[0])
            await ws.send(json.dumps({"type": "act", "version": request["version"], "action": action}))
            moves += 1


def test_text_bots_a_built_in_bot_and_a_person_at_one_table(arena):
    from tests.human_client import Guest

    person = Guest(arena.url, "Pat")
    match_id = person.create_table("bridge", {"scoring": "duplicate", "boards": 1},
                                   ["open_bot", "builtin:random", "me", "open_bot"])
    north = TextClient(arena.bridge_port, "Ann", seed=31)
    north.wait_for(lambda line: line.startswith("GAMES"))
    north.send(f"JOIN-M {match_id} N")
    north.wait_for(lambda line: line == f"JOINED {match_id} N Ann")
    west = TextClient(arena.bridge_port, "Dan", seed=32)
    west.wait_for(lambda line: line.startswith("GAMES"))
    west.send(f"JOIN-M {match_id}")
    # The page of a table that has not started reloads when it starts (static/arena/match.js);
    # this person opens its socket once the match runs, as the reloaded page would.
    wait_until(lambda: match_of(arena, match_id)["status"] == "running", what="the match running")
    moves = asyncio.run(play_as_person(person, match_id))
    for c in (north, west):
        c.wait_closed()
    assert joined_lines(west) == [f"JOINED {match_id} N Ann", f"JOINED {match_id} E Random bot",
                                  f"JOINED {match_id} S Pat", f"JOINED {match_id} W Dan"]
    assert moves >= 1
    match = match_of(arena, match_id)
    assert match["status"] == "finished"
    assert [s["name"] for s in match["seats"]] == ["Ann", "Random bot", "Pat", "Dan"]


def test_the_protocol_page_is_served_in_the_sites_layout(arena):
    with urllib.request.urlopen(arena.url + "/protocols/bridge/", timeout=10) as resp:
        page = resp.read().decode()
    assert "<h1>Contract bridge: the text protocol</h1>" in page
    assert "<table>" in page and "<code>JOIN-T [&lt;tournamentid&gt;] &lt;partner's name&gt;</code>" in page
    assert "&lt;!--" not in page and "<!-- example" not in page
    assert 'href="/rules/bridge/"' in page
    with urllib.request.urlopen(arena.url + "/rules/bridge/", timeout=10) as resp:
        assert 'href="/protocols/bridge/"' in resp.read().decode()


def test_kill_9_mid_board_then_the_match_is_aborted_and_a_new_connection_plays(arena_factory):
    """The killed arena's lease on the match (ARENA_LEASE, 1 s here) runs out, then the next
    arena's sweep aborts it (docs/architecture.md, *Several arenas*)."""
    from tests.test_crash import restart

    with sigint_not_ignored():
        arena = arena_factory(env={**ENV, "ARENA_LEASE": "1"})
    clients = play_four(arena, ["JOIN-M ANY"] * 4, seed=40)
    clients[0].wait_for(lambda line: line.startswith("BID") or line.startswith("PLAY"))
    game = clients[0].game
    arena.proc.send_signal(signal.SIGKILL)
    arena.proc.wait()
    for c in clients:
        c.wait_closed(timeout=10)
    again = restart(arena)
    try:
        wait_until(lambda: match_of(again, game)["status"] == "aborted", 20, "the killed arena's match aborted")
        newcomer = TextClient(again.bridge_port, "Ann")
        assert newcomer.wait_for(lambda line: line.startswith("GAMES")) == "GAMES"
        newcomer.send("JOIN-M NEW")
        assert newcomer.wait_for(lambda line: line.startswith("JOINED")).endswith(" N Ann")
    finally:
        again.stop()


def test_team_pairing_is_bounded_in_count_and_time():
    """JOIN-T's bookkeeping on a controlled clock: pairs of players who named each other,
    two pairs make a match (the waiting pair first), requests dropped after ``wait_s``, and
    no more than ``max_entries`` kept."""
    from games.bridge.transport import TeamPairing

    now = [0.0]
    pairing = TeamPairing(max_entries=3, wait_s=10, clock=lambda: now[0])
    a, b, c, d, e = "abcde"
    assert pairing.ask(a, "Ann", "Bea", None) == ("wait", None)
    assert pairing.ask(b, "Bea", "Ann", None) == ("wait", None) and pairing.ids() == ["T1"]
    assert pairing.ask(c, "Cid", "Cid", None)[0] == "refuse"
    assert pairing.ask(c, "Cid", "Dee", "T9") == ("refuse", "no team match T9 is waiting for a pair "
                                                             "(TOURNAMENTS lists them)")
    assert pairing.ask(c, "Cid", "Dee", "T1") == ("wait", None)
    assert pairing.ask(e, "Eve", "Fay", None) == ("wait", None)
    assert pairing.ask(d, "Gus", "Hal", None)[0] == "refuse"  # three kept already
    assert pairing.ask(d, "Dee", "Cid", None) == ("start", ((a, b), (c, d)))
    assert pairing.ids() == []
    now[0] = 11.0
    assert pairing.expired() == [e] and not pairing.requests
    assert pairing.ask(a, "Ann", "Bea", None) == ("wait", None)
    assert pairing.drop(a) is None and not pairing.requests


def test_a_registered_bot_plays_under_its_key_and_its_name_alone_is_refused(arena):
    """HELLO with a registered bot's key seats it as that bot (verified, linked to it); its name
    without the key, or a look-alike of it, is refused with a NAK (docs: HELLO); a wrong key too."""
    key = "arena-key-" + "k" * 32
    bot_id = int(arena.shell(
        "from django.contrib.auth.models import User\n"
        "from games.arena.models import RegisteredBot\n"
        "from games.arena.bots.bot_keys import hash_key\n"
        "owner = User.objects.create_user('owner', password='a-long-password-1')\n"
        f"print(RegisteredBot.objects.create(owner=owner, game='bridge', name='Ben Robot', key_hash=hash_key({key!r})).pk)\n"
    ).split()[-1])
    for name in ("Ben Robot", "BEN  R0BOT"):
        squatter = TextClient(arena.bridge_port, name)
        refusal = squatter.wait_for(lambda l: l.startswith("NAK"))
        assert "is a registered bot's name" in refusal and "send its key" in refusal
        squatter.close()
    wrong = TextClient(arena.bridge_port, "Ben Robot", key="arena-key-" + "w" * 32)
    assert wrong.wait_for(lambda l: l.startswith("NAK")).startswith("NAK bot key refused: unknown bot key")
    wrong.close()
    clients = play_four(arena, ["JOIN-M ANY"] * 4, names=("Ann", "Cat", "Dan", "Eve"))
    ben = TextClient(arena.bridge_port, "Ben Robot", key=key)
    ben.wait_for(lambda l: l.startswith("GAMES"))
    ben.send("JOIN-M ANY")
    ben.wait_for(lambda l: l.startswith("JOINED") and l.endswith(" Ben Robot"))
    for c in clients:
        c.close()
    match = match_of(arena, ben.game)
    seat = next(s for s in match["seats"] if s["name"] == "Ben Robot")
    assert seat["verified"] is True and seat["bot_id"] == bot_id
    ben.close()
