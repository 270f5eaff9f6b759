"""Bridge pair events (docs/architecture.md, *Tournaments*; docs/bridge-protocol.md, JOIN-T):
Mitchell and Howell movements of pairs, run to the end by an in-process arena; equal boards on
equal board sets; matchpoints (Law 78A) and cross-IMPs (Law 78B) across the field, checked by
hand; the refusals of create; and a whole Howell in which two pairs of bots written from the
protocol page join with JOIN-T over real sockets."""
from __future__ import annotations

import io
import itertools
import json
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from games.arena import registry
from games.arena.models import Match, Tournament, TournamentGame
from games.arena.tournaments import formats, schedule, standings
from tests.bridge_text_client import TextClient
from tests.serverproc import wait_until
from tests.test_bridge_tcp import ENV
from tests.test_tournaments import fresh_layer, played, played_out  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]

BRIDGE = {"scoring": "duplicate", "replay": 0}


def pairs_of(n: int) -> list[str]:
    names = ["random", "rules"]
    return [f"builtin:{names[i % 2]}" for i in range(n)]


async def run_event(fmt: str, pairs: int, scoring: str, per_round: int = 1) -> Tournament:
    t = await sync_to_async(schedule.create)(game="bridge", config=BRIDGE, format=fmt, entrants=pairs_of(pairs),
                                             per_pairing=per_round, scoring=scoring, at_once=6)
    return await played_out(t.pk)


@pytest.mark.parametrize("fmt,pairs,scoring", [("howell", 4, "matchpoints"), ("mitchell", 6, "cross_imps")])
async def test_a_movement_of_built_in_pairs_runs_to_the_end_each_table_once_equal_boards_on_equal_sets(
        fmt, pairs, scoring):
    t = await run_event(fmt, pairs, scoring, per_round=2)
    assert t.status == Tournament.Status.FINISHED and t.note == ""

    def read():
        games = list(TournamentGame.objects.filter(tournament=t).order_by("number"))
        matches = played(t)
        return games, {g.pk: matches[g.pk] for g in games}

    games, matches = await sync_to_async(read)()
    plan = schedule.movement_plan(fmt, pairs)
    assert [(g.round, tuple(g.sides), g.deal) for g in games] == [(p.round, p.sides, p.deal) for p in plan]
    by_set = defaultdict(list)
    for g in games:
        assert [m.status for m in matches[g.pk]] == [Match.Status.FINISHED], g  # each table played once
        match = matches[g.pk][0]
        assert match.seed == schedule.deal_seed(t.seed, g.deal)
        boards = [b["board"] for b in match.result["boards"]]
        assert boards == [2 * (g.deal - 1) + 1, 2 * (g.deal - 1) + 2]  # numbered on across the sets
        by_set[g.deal].append(match)
    for deal, same in by_set.items():
        assert len(same) >= 2
        # The hands of every board as dealt, from each finished match's stored last view.
        hands = [m.final_view["board_hands"] for m in same]
        assert len(hands[0]) == 2 and all(h == hands[0] for h in hands), f"set {deal}: the tables got different cards"
    table = await sync_to_async(standings.compute)(t)
    assert table.done == table.planned == len(plan)
    assert table.statistic == ("mean percentage per board" if scoring == "matchpoints" else "mean cross-IMPs per board")
    rows = {r.entrant: r for r in table.rows}
    rounds = len({g.round for g in games})
    assert all(r.games == rounds and r.boards == 2 * rounds for r in table.rows)
    assert all(r.low <= r.stat <= r.high for r in table.rows)
    if scoring == "matchpoints":  # every board's matchpoints are the top's, shared by N-S and E-W
        assert sum(r.points for r in table.rows) == pytest.approx(sum(
            2 * (len(by_set[g.deal]) - 1) * 2 for g in games))
    else:  # cross-IMPs: what N-S gains E-W loses, and the comparisons cancel over the field
        assert sum(r.points for r in table.rows) == pytest.approx(0.0)
    # The match list reads each table's boards as a travelling score slip does.
    from games.arena.web.tournaments import match_rows
    _, shown = await sync_to_async(match_rows)(t)
    by_id = {m.pk: m for same in matches.values() for m in same}
    for row in shown:
        slips = [f"board {b['board']}: " + ("passed out" if b["result"] == "Pass" else f"{b['result']} N–S {b['score']:+d}")
                 for b in by_id[row["id"]].result["boards"]]
        assert row["result"] == "; ".join(slips)
    if fmt == "mitchell":
        assert [r.field for r in table.rows] == ["N-S"] * 3 + ["E-W"] * 3
        assert {rows[e].field for e in range(3)} == {"N-S"}
        data = standings.as_json(table)
        assert [s["rank"] for s in data["standings"]] == [1, 2, 3, 1, 2, 3]
        assert standings.as_csv(table).splitlines()[0] == (
            "rank,field,pair,rounds,boards,IMPs,forfeits,forced,mean cross-IMPs per board,low 95%,high 95%")


def by_pair(results) -> dict[tuple[int, int], tuple[float | None, float]]:
    return {(r.entrant, r.board): (r.value, r.points) for r in results}


def test_matchpoints_across_the_field_by_hand():
    """Law 78A on a small field.  Board 1 at three tables, N-S scores 420, 420, -50: the top
    is 4; each 420 beats -50 (2) and equals the other (1): 3 (75%), E-W 1 (25%); -50 beats
    nothing: 0, E-W 4 (100%).  Board 2 at two tables, 110 and 140: top 2, 0 and 2.  Board 3:
    played at two tables (top 2), forfeited at a third by its E-W pair: N-S 60% of the top,
    1.2, E-W 40%, 0.8 (Law 12C2's average-plus and average-minus)."""
    played = [(1, 1, 0, 10, 420), (2, 1, 1, 11, 420), (3, 1, 2, 12, -50),
              (1, 2, 0, 10, 110), (2, 2, 1, 11, 140),
              (1, 3, 0, 10, 600), (2, 3, 1, 11, 100)]
    results = by_pair(standings.score_boards(played, [(3, 3, 2, 12, {12})], "matchpoints"))
    assert results[(0, 1)] == (75.0, 3.0) and results[(1, 1)] == (75.0, 3.0) and results[(2, 1)] == (0.0, 0.0)
    assert results[(10, 1)] == (25.0, 1.0) and results[(12, 1)] == (100.0, 4.0)
    assert results[(0, 2)] == (0.0, 0.0) and results[(1, 2)] == (100.0, 2.0)
    assert results[(10, 2)] == (100.0, 2.0) and results[(11, 2)] == (0.0, 0.0)
    assert results[(0, 3)] == (100.0, 2.0) and results[(11, 3)] == (100.0, 2.0)
    assert results[(2, 3)] == (60.0, pytest.approx(1.2)) and results[(12, 3)] == (40.0, pytest.approx(0.8))


def test_cross_imps_across_the_field_by_hand():
    """Law 78B, each N-S score against every other table's, averaged per comparison.  Board 1:
    420, 420, -50: a 420 gets 0 against the other 420 and 10 IMPs (a 470 difference: 430-490)
    against -50, 5 a comparison; -50 gets -10 twice, -10; E-W the negation.  Board 2 played
    at one table only: nothing to compare (no value, 0 IMPs).  A forfeit: +3 to the pair that
    came, -3 to the absent one."""
    played = [(1, 1, 0, 10, 420), (2, 1, 1, 11, 420), (3, 1, 2, 12, -50), (1, 2, 0, 10, -100)]
    results = by_pair(standings.score_boards(played, [(2, 2, 1, 11, {1})], "cross_imps"))
    assert results[(0, 1)] == (5.0, 5.0) and results[(1, 1)] == (5.0, 5.0) and results[(2, 1)] == (-10.0, -10.0)
    assert results[(10, 1)] == (-5.0, -5.0) and results[(12, 1)] == (10.0, 10.0)
    assert results[(0, 2)] == (None, 0.0) and results[(10, 2)] == (None, 0.0)
    assert results[(1, 2)] == (-3.0, -3.0) and results[(11, 2)] == (3.0, 3.0)


@pytest.mark.parametrize("fmt,pairs", [("howell", 4), ("howell", 6), ("howell", 8), ("mitchell", 6),
                                       ("mitchell", 8), ("mitchell", 10)])
def test_the_plan_is_the_movement_every_meeting_once_no_set_twice(fmt, pairs):
    """The plan a tournament writes, read back as pairs and sets: a Howell's pairs meet every
    other pair exactly once; a Mitchell's N-S pairs (entrants 0..T-1) stay N-S and meet each
    E-W pair at most once; nobody plays a board set twice; one table per pair per round.
    (Published cards are checked in tests/test_tournament_formats.py: pjms.nl's 8-pair Howell,
    the ACBL's 2-table Howell and the 7-table Mitchell of the tbb director notes.)"""
    plan = schedule.movement_plan(fmt, pairs)
    met = Counter(frozenset(g.sides) for g in plan)
    if fmt == "howell":
        assert set(met) == {frozenset(p) for p in itertools.combinations(range(pairs), 2)}
    else:
        tables = pairs // 2
        assert all(g.sides[0] < tables <= g.sides[1] for g in plan)
    assert set(met.values()) == {1}
    sets = defaultdict(list)
    for g in plan:
        for e in g.sides:
            sets[e].append(g.deal)
    assert all(len(s) == len(set(s)) for s in sets.values())
    for r in {g.round for g in plan}:
        seated = [e for g in plan if g.round == r for e in g.sides]
        assert sorted(seated) == list(range(pairs))


def test_create_refuses_what_a_movement_cannot_be():
    def refused(**kwargs) -> str:
        args = {"game": "bridge", "config": BRIDGE, "format": "howell", "entrants": pairs_of(4),
                "scoring": "matchpoints", **kwargs}
        with pytest.raises(ValueError) as exc:
            schedule.create(**args)
        return str(exc.value)

    assert "for contract bridge pairs" in refused(game="jass", config={})
    assert "choose duplicate scoring" in refused(config={"scoring": "rubber", "boards": 4})
    assert "without the team match's replay" in refused(config={"scoring": "duplicate", "replay": 1})
    assert "matchpoints or cross_imps" in refused(scoring="")
    assert "Boards per round" in refused(per_pairing=40)
    assert "A Howell takes 4, 6 or 8 pairs (2, 3 or 4 tables), not 5" in refused(entrants=pairs_of(5))
    assert "not 4; 4 pairs play a Howell" in refused(format="mitchell", entrants=pairs_of(4))
    assert "A Mitchell takes an even number" in refused(format="mitchell", entrants=pairs_of(7))
    assert "is for Mitchell and Howell" in refused(format="round_robin", scoring="matchpoints")
    later = timezone.now() + timedelta(hours=1)
    assert "not 10" in refused(entrants=pairs_of(10), starts_at=later)  # past a Howell's capacity
    t = schedule.create(game="bridge", config=BRIDGE, format="howell", entrants=pairs_of(2), scoring="matchpoints",
                        starts_at=later)  # pairs join until the start
    assert t.scoring == "matchpoints" and t.entrants.count() == 2


async def test_a_pair_event_whose_pairs_are_too_few_at_the_start_is_cancelled_saying_why():
    t = await sync_to_async(schedule.create)(game="bridge", config=BRIDGE, format="howell", entrants=pairs_of(3),
                                             scoring="matchpoints", starts_at=timezone.now() + timedelta(hours=1))
    await sync_to_async(Tournament.objects.filter(pk=t.pk).update)(starts_at=timezone.now())
    t = await played_out(t.pk)
    assert t.status == Tournament.Status.CANCELLED
    assert t.note == "not started: A Howell takes 4, 6 or 8 pairs (2, 3 or 4 tables), not 3."


# --- JOIN-T E<n>: bots written from the protocol page join an arena event over real sockets ------------
EVENT_SETUP = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from games.arena.bots import bot_keys
from games.arena.models import RegisteredBot
from games.arena.tournaments import schedule
keys = {}
for n, name in enumerate(["Ann", "Bea", "Cid", "Dee", "Eve"]):
    owner = get_user_model().objects.create(username=f"owner{n}")  # four owners: nobody shares anything
    key, key_hash = bot_keys.new_key()
    RegisteredBot.objects.create(owner=owner, game="bridge", name=name, key_hash=key_hash)
    keys[name] = key
later = timezone.now() + timedelta(hours=1)
howell = schedule.create(game="bridge", config={"scoring": "duplicate", "replay": 0}, format="howell",
                         entrants=["builtin:rules", "builtin:random"], per_pairing=BOARDS, scoring="matchpoints",
                         at_once=4, wait_s=60, starts_at=later)
full = schedule.create(game="bridge", config={"scoring": "duplicate", "replay": 0}, format="howell",
                       entrants=["builtin:random"] * 8, scoring="cross_imps", starts_at=later)
other = schedule.create(game="bridge", config={"scoring": "duplicate", "replay": 0, "boards": 1},
                        format="round_robin", entrants=["builtin:random"] * 2, starts_at=later)
print(json.dumps({"keys": keys, "howell": howell.pk, "full": full.pk, "other": other.pk}))
"""

EVENT_STATE = """
import json
from games.arena.models import Match, Tournament
from games.arena.tournaments import standings
t = Tournament.objects.get(pk=TID)
table = standings.compute(t)
print(json.dumps({"status": t.status, "note": t.note, "entrants": t.entrants.count(),
                  "matches": sorted(Match.objects.filter(tournament_game__tournament=t).values_list("status", flat=True)),
                  "rows": {r.name: [r.games, r.boards, r.forfeits, r.stat] for r in table.rows}}))
"""


def test_two_pairs_of_protocol_bots_join_a_howell_with_join_t_and_play_every_round_on_one_connection(
        arena_factory):
    """A 2-table Howell of 4 pairs, 3 rounds of one board: two built-in pairs and two pairs of
    registered bots (four owners) written from docs/bridge-protocol.md, each bot on one TCP
    connection: JOIN-T E<n> naming its partner before the start, then JOINED at a new table
    each round until its last SCORE-M, after which the server closes the connection.  The
    refusals: no key, a full event, a tournament that is no pair event, an unknown one, a
    finished one."""
    arena = arena_factory(env=ENV)
    setup = json.loads(arena.shell(EVENT_SETUP.replace("BOARDS", "1")).strip().splitlines()[-1])
    keys, event = setup["keys"], setup["howell"]

    def state(tid: int) -> dict:
        return json.loads(arena.shell("import json\n" + EVENT_STATE.replace("TID", str(tid))).strip().splitlines()[-1])

    def connect(name: str, seed: int, key: str | None = None) -> TextClient:
        c = TextClient(arena.bridge_port, name, key=key if key is not None else keys[name], seed=seed)
        c.wait_for(lambda line: line.startswith("GAMES"))
        return c

    ann, bea, cid, dee = (connect(name, seed) for seed, name in enumerate(["Ann", "Bea", "Cid", "Dee"], 21))
    at = len(ann.lines)
    ann.send("TOURNAMENTS")
    listed = ann.wait_for(lambda l: l.startswith("TOURNAMENTS"), start=at).split()[1:]
    assert f"E{event}" in listed and f"E{setup['full']}" not in listed  # open events only
    ann.send(f"JOIN-T E{event} Bea")
    bea.send(f"JOIN-T E{event} Ann")
    cid.send(f"JOIN-T E{event} Dee")
    dee.send(f"JOIN-T E{event} Cid")
    wait_until(lambda: state(event)["entrants"] == 4, 20, "both pairs entered", interval=0.3)

    # The refusals, on a fifth connection and a keyless one.
    eve = connect("Eve", 30)
    guest = connect("Gus", 31, key="")

    def nak(client: TextClient, line: str) -> str:
        at = len(client.lines)
        client.send(line)
        return client.wait_for(lambda l: l.startswith("NAK"), start=at, timeout=20)

    assert "is for registered bots: say HELLO with your bot's name and key" in nak(guest, f"JOIN-T E{event} Eve")
    assert "The event is full: a Howell movement (bridge pairs) takes at most 8 pairs" in nak(
        eve, f"JOIN-T E{setup['full']} Gus")
    assert f"there is no bridge pair event {setup['other']}" in nak(eve, f"JOIN-T E{setup['other']} Gus")
    assert "there is no bridge pair event 999999" in nak(eve, "JOIN-T E999999 Gus")
    assert "there is no bridge pair event 9999999999999999999999" in nak(eve, "JOIN-T E9999999999999999999999 Gus")

    arena.shell(f"from django.utils import timezone\nfrom games.arena.models import Tournament\n"
                f"Tournament.objects.filter(pk={event}).update(starts_at=timezone.now())")
    for c in (ann, bea, cid, dee):
        c.wait_closed(timeout=120)
    assert f"event {event} is finished: pairs join before its start" in nak(eve, f"JOIN-T E{event} Gus")
    final = state(event)
    assert final["status"] == "finished" and final["matches"] == ["finished"] * 6
    assert final["rows"]["Ann & Bea"][:3] == [3, 3, 0] and final["rows"]["Cid & Dee"][:3] == [3, 3, 0]
    for c in (ann, bea, cid, dee):
        assert not c.naks(), (c.name, c.naks())
        own = [l for l in c.lines if l.startswith("JOINED") and l.endswith(" " + c.name)]
        games = [l.split()[1] for l in own]
        assert len(set(games)) == 3, own  # a table each round, on the one connection
        assert len([l for l in c.lines if l.startswith("SCORE-M")]) == 3  # one board a round
    # The first to ask of a pair sits North or East, its partner South or West.
    seats = {c.name: {l.split()[2] for l in c.lines if l.startswith("JOINED") and l.endswith(" " + c.name)}
             for c in (ann, bea, cid, dee)}
    assert seats["Ann"] <= {"N", "E"} and seats["Bea"] <= {"S", "W"}
    assert seats["Cid"] <= {"N", "E"} and seats["Dee"] <= {"S", "W"}


def test_a_pair_bot_that_drops_between_tables_comes_back_with_join_t_and_its_pair_plays_on(arena_factory):
    """A bot of a JOIN-T pair loses its connection after its first table (a crash, a restart).
    It connects again with its key and sends JOIN-T for the event again: it is taken back at
    once and seated at its next table (held for it, never forfeited within the wait), and the
    pair plays every round."""
    arena = arena_factory(env=ENV)
    setup = json.loads(arena.shell(EVENT_SETUP.replace("BOARDS", "1")).strip().splitlines()[-1])
    keys, event = setup["keys"], setup["howell"]

    def connect(name: str, seed: int) -> TextClient:
        # Ann plays one board, then hangs until the test closes it: the tables come faster
        # than a test can act between them.
        c = TextClient(arena.bridge_port, name, key=keys[name], seed=seed, boards=1 if name == "Ann" else None)
        c.wait_for(lambda line: line.startswith("GAMES"))
        return c

    ann, bea, cid, dee = (connect(name, seed) for seed, name in enumerate(["Ann", "Bea", "Cid", "Dee"], 41))
    for c, partner in ((ann, "Bea"), (bea, "Ann"), (cid, "Dee"), (dee, "Cid")):
        c.send(f"JOIN-T E{event} {partner}")
    state = "import json\n" + EVENT_STATE.replace("TID", str(event))
    wait_until(lambda: json.loads(arena.shell(state).strip().splitlines()[-1])["entrants"] == 4, 20,
               "both pairs entered", interval=0.3)
    arena.shell(f"from django.utils import timezone\nfrom games.arena.models import Tournament\n"
                f"Tournament.objects.filter(pk={event}).update(starts_at=timezone.now())")
    ann.wait_for(lambda line: line.startswith("SCORE-M"), timeout=120)
    ann.close()  # between its first and second tables
    # As a bot written from the protocol page comes back: HELLO, then JOIN-T as before.  If its
    # next table had seated the old connection already, the HELLO takes that seat over (the
    # door's reconnect, with the table's state) and the JOIN-T is answered "seated already".
    again = TextClient(arena.bridge_port, "Ann", key=keys["Ann"], seed=50)
    again.send(f"JOIN-T E{event} Bea")
    again.wait_for(lambda line: line.startswith(("JOINED", "HAND")), timeout=60)
    for c in (again, bea, cid, dee):
        c.wait_closed(timeout=120)
    final = json.loads(arena.shell(state).strip().splitlines()[-1])
    assert final["status"] == "finished" and final["matches"].count("finished") == 6
    assert final["rows"]["Ann & Bea"][:3] == [3, 3, 0]  # three tables, three boards, no forfeit
    assert all("you are seated at game" in nak for nak in again.naks()), again.naks()
    # Ann sat at a table a round over its two connections (a HELLO that takes a seat over is
    # sent that table again, so a game id may come twice), and the new one played to the end.
    games = {line.split()[1] for c in (ann, again) for line in c.lines
             if line.startswith("JOINED") and line.endswith(" Ann")}
    assert len(games) == 3, games
    assert any(line.startswith("SCORE-M") for line in again.lines)


def test_a_join_t_flood_is_refused_line_by_line_then_closed_while_pairs_enter(arena_factory):
    """A keyed bot sends 120 JOIN-T lines in one write for events that cannot take it: each
    line is refused with a reason (past the 16 it may send ahead of an answer, that one), the
    connection is closed at the 100th refusal, and meanwhile a pair that names each other
    enters the event; nothing logged a traceback and no line to the flooder carries a key."""
    arena = arena_factory(env=ENV)
    setup = json.loads(arena.shell(EVENT_SETUP.replace("BOARDS", "1")).strip().splitlines()[-1])
    keys, event = setup["keys"], setup["howell"]
    flooder = TextClient(arena.bridge_port, "Eve", key=keys["Eve"], seed=1)
    flooder.wait_for(lambda line: line.startswith("GAMES"))
    bad = [f"E{setup['full']}", f"E{setup['other']}", "E999999", "E" + "9" * 31]
    flooder.send_raw(b"".join(f"JOIN-T {bad[n % 4]} Gus\n".encode() for n in range(120)))
    ann, bea = (TextClient(arena.bridge_port, name, key=keys[name], seed=n) for n, name in enumerate(["Ann", "Bea"]))
    for c, partner in ((ann, "Bea"), (bea, "Ann")):
        c.wait_for(lambda line: line.startswith("GAMES"))
        c.send(f"JOIN-T E{event} {partner}")
    flooder.wait_closed(timeout=60)
    naks = flooder.naks()
    assert naks[-1] == "NAK 100 refused lines: disconnected"
    assert len(naks) == 101  # the 100 refusals, then the farewell; the rest never read
    # Lines past the 16 a connection may send ahead of an answer are refused at once, unread;
    # those held may be answered with their own reason before the 100th refusal.
    ahead = "NAK more than 16 lines sent before the answer to your HELLO or JOIN"
    assert naks.count(ahead) >= 100 - 16
    assert all(nak == ahead or "takes at most 8 pairs" in nak or "there is no bridge pair event" in nak
               for nak in naks[:-1]), set(naks)
    state = "import json\n" + EVENT_STATE.replace("TID", str(event))
    wait_until(lambda: json.loads(arena.shell(state).strip().splitlines()[-1])["entrants"] == 3, 20,
               "the pair entered beside the two built-in pairs", interval=0.3)
    assert not any(key in line for line in flooder.lines for key in keys.values())
    assert "Traceback" not in arena.log()
    for c in (ann, bea):
        assert not c.naks(), c.naks()
        c.close()


def test_the_api_and_the_command_line_create_pair_events(client, django_user_model):
    from django.core.management import CommandError, call_command

    from games.arena.models import RegisteredBot
    from tests.test_tournament_pages import make_token, post

    olga = django_user_model.objects.create_user("olga", password="pw-olga-123")
    a, b = (RegisteredBot.objects.create(owner=olga, game="bridge", name=n, key_hash=n * 32) for n in ("ab", "cd"))
    token = make_token(client, olga)
    body = {"game": "bridge", "format": "howell", "scoring": "matchpoints", "per_pairing": 2,
            "entrants": ["builtin:rules", "builtin:random", f"registered:{a.pk}+{b.pk}", "builtin:rules"],
            "config": {"scoring": "duplicate"}}
    status, made = post(client, "/api/tournaments/", body, token)
    assert status == 201, made
    t = Tournament.objects.get(pk=made["id"])
    assert (t.format, t.scoring, t.per_pairing) == ("howell", "matchpoints", 2)
    pair = t.entrants.get(index=2)
    assert (pair.registered_bot_id, pair.partner_bot_id, pair.display_name) == (a.pk, b.pk, "ab & cd")
    status, refused = post(client, "/api/tournaments/", {**body, "scoring": "butler"}, token)
    assert status == 400 and "matchpoints or cross_imps" in refused["error"]
    status, refused = post(client, "/api/tournaments/", {**body, "entrants": body["entrants"][:3]}, token)
    assert status == 400 and refused["error"] == "A Howell takes 4, 6 or 8 pairs (2, 3 or 4 tables), not 3."
    detail = client.get(f"/api/tournaments/{t.pk}").json()
    assert detail["scoring"] == "matchpoints" and detail["boards_per_round"] == 2

    out = io.StringIO()
    call_command("tournament", "create", "--game", "bridge", "--format", "mitchell", "--scoring", "cross_imps",
                 "--per-pairing", "2", *[f"--entrant=builtin:{n}" for n in ["rules", "random"] * 3], "--no-migrate",
                 stdout=out)
    assert "created" in out.getvalue() and "(6 entrants)" in out.getvalue()
    assert Tournament.objects.filter(format="mitchell", scoring="cross_imps").count() == 1
    with pytest.raises(CommandError, match="A Mitchell takes an even number of pairs from 6"):
        call_command("tournament", "create", "--game", "bridge", "--format", "mitchell", "--scoring", "cross_imps",
                     *["--entrant=builtin:rules"] * 4, "--no-migrate")


async def test_a_pair_that_never_comes_forfeits_each_table_at_average_minus(django_user_model):
    """A pair of two registered bots that never connect: each of its three tables is forfeited
    after the wait; it gets 40% of every board, its opponents 60% on those boards."""
    from games.arena.models import RegisteredBot

    def setup():
        owner = django_user_model.objects.create_user("absent", password="pw-absent-123")
        a, b = (RegisteredBot.objects.create(owner=owner, game="bridge", name=n, key_hash=n * 32) for n in ("xy", "zw"))
        return schedule.create(game="bridge", config=BRIDGE, format="howell", scoring="matchpoints", wait_s=0.3,
                               entrants=[*pairs_of(3), f"registered:{a.pk}+{b.pk}"], created_by_id=owner.pk)

    t = await sync_to_async(setup)()
    t = await played_out(t.pk, seconds=60)
    table = await sync_to_async(standings.compute)(t)
    rows = {r.entrant: r for r in table.rows}
    absent = rows[3]
    assert (absent.forfeits, absent.boards, absent.stat, absent.low, absent.high) == (3, 3, 40.0, 40.0, 40.0)
    assert all(table.cross[e][3] == (60.0, 1) for e in range(3))  # each opponent: 60% on its one board
    results = await sync_to_async(lambda: [g.forfeit for g in TournamentGame.objects.filter(tournament=t)
                                           if g.forfeit])()
    assert len(results) == 3 and all(f["absent"] == [3] and "xy & zw did not connect" in f["reason"] for f in results)
    assert table.rows[-1].entrant == 3
