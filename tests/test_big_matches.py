"""How big a match may get, and what reading one costs.

Bounds on new tables' configurations, the per-minute creation limit, the API's event pages,
replay pages restored from snapshots (the same frames as a replay from the first step, without
needing the steps before the snapshot), the final view read from the match, imported matches
treated alike, and matches every player left ending at once with a clear result.
"""
from __future__ import annotations

import asyncio
import json
import pickle
import random
import urllib.request

import pytest
from django.conf import settings
from django.test import override_settings

from games.arena import registry
from games.arena.models import Event, Match, Snapshot
from games.arena.play import replay, tables
from games.arena.play.arena import ABANDONED
from games.arena.play.eventlog import write_rows
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import Answer, BuiltinSeat, HumanSeat, SeatEndpoint, resolved
from games.arena.web.api import MAX_EVENTS_PAGE
from games.arena.web.exchange import store_imported
from games.jass import bots as jass_bots
from games.jass import rules as jass_rules
from games.liars_dice.bots import probability_bot
from tests.ld_bot import LDBot, simple_move
from tests.serverproc import wait_until


def arena_settings(**changes):
    return override_settings(ARENA={**settings.ARENA, **changes})


class Collect:
    """Stands in for the event writer: keeps the rows the runner appends."""

    def __init__(self):
        self.rows = []

    async def append(self, events):
        self.rows.extend(events)


async def _no_publish(group, message):
    pass


def play(endpoints, config, seed=5, snapshot_every=0, game="liars_dice"):
    """Run a real :class:`MatchRunner` to its end; returns (runner, event rows)."""
    spec = registry.get(game)
    writer = Collect()
    runner = MatchRunner(0, spec, config, seed, endpoints, writer, _no_publish, snapshot_every=snapshot_every)
    asyncio.run(runner.run())
    return runner, writer.rows


def played_match(config, seed=5, snapshot_every=7) -> Match:
    """A Liar's Dice match of probability bots played by the runner and stored as the arena
    stores it: events, snapshots, final view, result."""
    match = tables.create_table("liars_dice", config, [tables.OPEN_BOT] * config["players"], None)
    Match.objects.filter(pk=match.pk).update(seed=seed, status=Match.Status.RUNNING)
    endpoints = [BuiltinSeat("p", probability_bot, seed=i) for i in range(config["players"])]
    runner, rows = play(endpoints, config, seed, snapshot_every)
    write_rows([(match.pk, *row[1:]) for row in rows])
    replay.store_end(match.pk, runner.snapshots, runner.state)
    tables.finish(match.pk, runner.state.result())
    return Match.objects.get(pk=match.pk)


# --- bounds on new tables --------------------------------------------------------------------
@pytest.mark.django_db
def test_a_table_longer_than_the_bound_is_refused_with_the_reason(client):
    with pytest.raises(ValueError, match="at most 10 games"):
        tables.create_table("liars_dice", {"players": 6, "dice": 20, "games": 1000},
                            ["builtin:random"] * 6, None)
    tables.create_table("liars_dice", {"players": 2, "dice": 6, "games": 1000}, ["builtin:random"] * 2, None)
    # The form's bounds hold whatever the request says (the rules alone allow 100,000 points).
    page = client.post("/tables/new/jass/", {"points_to_win": 100000, "max_deals": 0, "nickname": "ann",
                                         **{f"seat{i}": "builtin:random" for i in range(4)}})
    assert page.status_code == 200 and "Points to win must be from 100 to 5000" in page.content.decode()
    assert not Match.objects.filter(game="jass").exists()


@pytest.mark.django_db
def test_one_visitor_creates_at_most_the_per_minute_limit(client):
    form = {"players": 2, "dice": 2, "games": 1, "seat0": "builtin:random", "seat1": "builtin:random"}
    with arena_settings(TABLES_PER_MINUTE=2):
        for _ in range(2):
            assert client.post("/tables/new/liars_dice/", form).status_code == 302
        refused = client.post("/tables/new/liars_dice/", form)
        assert refused.status_code == 200
        assert "You have created 2 tables in the last minute" in refused.content.decode()
        assert Match.objects.filter(creator_key="ip:127.0.0.1").count() == 2
        # Another address is another visitor.
        assert client.post("/tables/new/liars_dice/", form, REMOTE_ADDR="10.1.2.3").status_code == 302


# --- reading a big match ---------------------------------------------------------------------
@pytest.mark.django_db
def test_the_api_pages_events_with_next_links(client):
    match = played_match({"players": 3, "dice": 3, "games": 2})
    everything = list(Event.objects.filter(match=match).order_by("seq").values_list("seq", flat=True))
    first = client.get(f"/api/matches/{match.pk}/", {"limit": 40}).json()
    assert len(first["events"]) == 40 and first["steps"] == replay.total_steps(match.pk) > 0
    seen, page = [e["seq"] for e in first["events"]], first
    while page["events_next"]:
        page = client.get(page["events_next"]).json()
        seen += [e["seq"] for e in page["events"]]
    assert seen == everything
    assert len(client.get(f"/api/matches/{match.pk}/", {"limit": MAX_EVENTS_PAGE}).json()["events"]) == min(
        len(everything), MAX_EVENTS_PAGE)
    too_many = client.get(f"/api/matches/{match.pk}/", {"limit": 10**9})
    assert too_many.status_code == 400 and f"limit must be a whole number from 1 to {MAX_EVENTS_PAGE}" in \
        too_many.json()["error"]


@pytest.mark.django_db
def test_replay_pages_start_from_snapshots_and_match_a_replay_from_the_start(client):
    match = played_match({"players": 3, "dice": 4, "games": 2}, snapshot_every=7)
    saved = list(Snapshot.objects.filter(match=match).order_by("step").values_list("step", "state"))
    assert saved and all(step % 7 == 0 for step, _ in saved)
    last = saved[-1][0]
    total = replay.total_steps(match.pk) + 1
    starts = [0, 1, 6, 7, 8, 15, total // 2, last + 1, total - 3, total - 1]
    with_snapshots = {s: replay.frames(match, s, 3) for s in starts}
    Snapshot.objects.filter(match=match).delete()
    from_the_start = {s: replay.frames(match, s, 3) for s in starts}
    assert with_snapshots == from_the_start
    assert all(page["total"] == total and page["frames"] for page in with_snapshots.values())
    # A page after the last snapshot needs none of the events before it.
    Snapshot.objects.bulk_create([Snapshot(match=match, step=step, state=blob) for step, blob in saved])
    Event.objects.filter(match=match, seq__lte=pickle.loads(bytes(saved[-1][1]))["seq"]).delete()
    assert replay.frames(match, last + 1, 3) == from_the_start[last + 1]
    end = client.get(f"/api/matches/{match.pk}/replay/", {"start": total - 1, "count": 5}).json()
    assert end["frames"] == from_the_start[total - 1]["frames"]


@pytest.mark.django_db
def test_the_final_view_is_read_from_the_match_not_replayed():
    match = played_match({"players": 2, "dice": 3, "games": 2})
    stored = Match.objects.get(pk=match.pk).final_view
    assert stored == replay.final_state(match).full_observation() and stored["terminal"]
    Match.objects.filter(pk=match.pk).update(final_view={"marker": True})
    assert replay.final_view(match.pk)["view"] == {"marker": True}
    Match.objects.filter(pk=match.pk).update(final_view=None)  # e.g. the server was killed
    assert replay.final_view(match.pk)["view"] == stored
    assert Match.objects.get(pk=match.pk).final_view == stored, "computed once, then kept"


@pytest.mark.django_db
def test_an_imported_match_gets_snapshots_and_its_final_view():
    config = jass_rules.normalize_config({"points_to_win": 500})
    state, rng, steps = jass_rules.new_state(config, 0), random.Random(3), []
    while not state.is_terminal():
        seat = state.to_act()[0]
        action = jass_bots.random_bot(state.observation(seat), state.legal_actions(seat), rng)
        steps.append((seat, action))
        state.apply({seat: action})
    with arena_settings(SNAPSHOT_EVERY=40):
        match = store_imported("jass", {"config": config, "steps": steps, "names": ["a", "b", "c", "d"]})
    assert Snapshot.objects.filter(match=match).count() == len(steps) // 40
    assert match.final_view == state.full_observation()
    pages = replay.frames(match, len(steps) - 2, 5)
    Snapshot.objects.filter(match=match).delete()
    assert pages == replay.frames(match, len(steps) - 2, 5)


# --- abandoned matches -----------------------------------------------------------------------
class Leaver(SeatEndpoint):
    """A connected bot that answers ``answers`` requests, then hangs up."""

    kind = "protocol"

    def __init__(self, answers: int):
        self.left = answers

    def ask(self, state, seat, version):
        if self.left <= 0:
            self.gone = True
            return resolved(Answer(None, True, "disconnected"))
        self.left -= 1
        return resolved(Answer(random.choice(state.legal_actions(seat))))


def test_a_match_every_player_left_stops_at_once():
    config = {"players": 3, "dice": 6, "games": 1000}
    endpoints = [Leaver(5), BuiltinSeat("b", probability_bot, seed=1), Leaver(12)]
    runner, rows = play(endpoints, config)
    assert runner.abandoned and not runner.state.is_terminal()
    assert len({row[2] for row in rows}) <= 13, "no step after both bots had gone"
    # One bot still there: the match goes on (the leaver forfeits its rounds).
    runner, _ = play([Leaver(5), Leaver(10**6)], {"players": 2, "dice": 2, "games": 3})
    assert not runner.abandoned and runner.state.is_terminal()


def test_a_person_who_lets_requests_run_out_is_away_until_they_take_the_seat_back():
    async def scenario():
        spec = registry.get("jass")
        seat = HumanSeat("ann", spec)
        state = jass_rules.new_state({}, 1)
        me = state.to_act()[0]
        with arena_settings(HUMAN_DEADLINE=0.01, HUMAN_ABSENT_AFTER=2):
            seat.absent_after = 2
            for expected in (False, True):
                answer = await seat.ask(state, me, 1)
                assert answer.forced and seat.gone is expected
            stand_in = await seat.ask(state, me, 2)  # away: answered at once, for them
            assert stand_in.forced and stand_in.reason == "away: played by Rule-based bot"
            assert seat.open_request is None
            seat.come_back()  # "Take my seat back"
            seat.ask(state, me, 3)
            assert seat.act(state, me, 3, state.legal_actions(me)[0]) is None
            assert not seat.gone

    asyncio.run(scenario())


def test_a_tcp_match_both_bots_leave_is_aborted_as_abandoned(arena_factory):
    arena = arena_factory(env={"LIARS_DICE_AUTO_PLAYERS": "2", "LIARS_DICE_AUTO_DICE": "6",
                               "LIARS_DICE_AUTO_GAMES": "1000"})

    def three_moves_then_silence():
        # The bots answer three requests, then say nothing: how many steps the match plays
        # before the hang-ups is then the test's business, not the machine's speed (at full
        # speed a few hundred fit in the time it takes to notice the start).
        answered = []

        def decide(msg):
            if len(answered) < 3:
                answered.append(msg)
                return simple_move(msg)
            return None
        return decide

    bots = [LDBot(arena.liars_dice_port, name=f"bot{i}", decide=three_moves_then_silence()) for i in range(2)]
    wait_until(lambda: all(len(b.requests()) >= 4 for b in bots), 10, "the match to start")
    for b in bots:
        b.close()

    def listing():
        with urllib.request.urlopen(arena.url + "/api/matches/?game=liars_dice", timeout=10) as resp:
            return json.load(resp)["results"]

    done = wait_until(listing, 15, "the match to end")
    assert done[0]["status"] == "aborted" and done[0]["result"] == {"aborted": ABANDONED}
    with urllib.request.urlopen(arena.url + f"/api/matches/{done[0]['id']}/", timeout=10) as resp:
        detail = json.load(resp)
    assert detail["steps"] < 200, "the remaining games were not forfeited one by one"
