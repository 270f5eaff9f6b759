"""Tournaments run by the arena (issue 27; docs/architecture.md, *Tournaments*): round robin,
duplicate and Swiss of built-in bots for every game, run to the end by an in-process arena on
the embedded default; every planned game played exactly once; duplicate deals equal across
rotations; a Swiss checked round by round; forfeits of entrants that never connect; the early
stop; unrated tournaments; an arena that dies mid-tournament and another that finishes it with
the standings of a run without the death; cancelling."""
from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.arena import registry
from games.arena.models import Match, RatingChange, RegisteredBot, Tournament, TournamentGame
from games.arena.play import tables
from games.arena.play.arena import Arena
from games.arena.tournaments import schedule, standings

pytestmark = [pytest.mark.django_db(transaction=True)]

#: Small configurations, quick to play out with built-in bots.
CONFIGS = {
    "liars_dice": {"players": 2, "dice": 2, "games": 1},
    "jass": {"points_to_win": 100},
    "blokus": {},
    "hanabi": {"players": 2},
    "bridge": {"boards": 1, "replay": 0},
}


@pytest.fixture(autouse=True)
def fresh_layer():
    channel_layers.backends = {}
    yield


def builtins(game: str, n: int) -> list[str]:
    names = list(registry.get(game).builtin_bots)
    return [f"builtin:{names[i % len(names)]}" for i in range(n)]


async def full_sweep(arena: Arena) -> None:
    """A sweep with the full turn (recovery, the tournaments' slow looks) that otherwise comes
    every SWEEP_S: the test's clock, not the machine's speed, decides when it comes."""
    arena._recovered_at = float("-inf")
    await arena.sweep()


async def run_to_end(arena: Arena, tournament_id: int, seconds: float = 120.0) -> Tournament:
    """Sweep ``arena`` until the tournament is over (its own sweep loop runs too)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        await full_sweep(arena)
        t = await sync_to_async(Tournament.objects.get)(pk=tournament_id)
        if t.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            return t
        await asyncio.sleep(0.05)
    raise AssertionError(f"tournament {tournament_id} still {t.status} after {seconds} s")


async def played_out(tournament_id: int, seconds: float = 120.0) -> Tournament:
    """Start an arena in this process, :func:`run_to_end` the tournament, stop the arena."""
    arena = await started_arena()
    try:
        return await run_to_end(arena, tournament_id, seconds)
    finally:
        await arena.stop()


def played(tournament: Tournament) -> dict[int, list[Match]]:
    """Planned game id -> its matches that are not aborted."""
    out = defaultdict(list)
    for m in Match.objects.filter(tournament_game__tournament=tournament).exclude(status=Match.Status.ABORTED):
        out[m.tournament_game_id].append(m)
    return out


async def started_arena() -> Arena:
    arena = Arena(listen=False)
    await arena.start()
    return arena


FORMATS = [(game, fmt) for game in CONFIGS for fmt in ("round_robin", "duplicate", "swiss")
           if not (game == "hanabi" and fmt == "swiss")]  # Swiss pairs two sides; Hanabi has one


@pytest.mark.parametrize("game,fmt", FORMATS)
async def test_every_format_of_every_game_runs_to_the_end_each_planned_game_once(game, fmt):
    entrants = builtins(game, 3 if fmt != "swiss" else 4)
    t = await sync_to_async(schedule.create)(game=game, config=CONFIGS[game], format=fmt, entrants=entrants,
                                             per_pairing=1, rounds=2, at_once=3)
    t = await played_out(t.pk)
    assert t.status == Tournament.Status.FINISHED and t.note == ""
    games = await sync_to_async(lambda: list(TournamentGame.objects.filter(tournament=t)))()
    matches = await sync_to_async(played)(t)
    spec = registry.get(game)
    k = len(schedule.sides_of(spec, t.config))
    for g in games:
        if g.forfeit is not None:
            assert g.forfeit.get("bye")  # nobody forfeits among built-in bots
            continue
        assert [m.status for m in matches[g.pk]] == [Match.Status.FINISHED], g
        assert matches[g.pk][0].seed == schedule.deal_seed(t.seed, g.deal)
    table = await sync_to_async(standings.compute)(t)
    assert table.done == len(games) == table.planned
    assert table.running == 0
    if k == 2:  # every match hands out one point between its two sides; a bye one point
        byes = sum(1 for g in games if g.forfeit)
        assert sum(r.points for r in table.rows) == pytest.approx(len(games))
        assert sum(r.games for r in table.rows) == 2 * (len(games) - byes)
    if fmt == "round_robin" and k == 2:  # three entrants, once per pairing: each plays two
        assert sorted(r.games for r in table.rows) == [2, 2, 2]
        assert all(r.low <= r.stat <= r.high for r in table.rows)
    if fmt == "duplicate" and k == 2:  # each pairing's deal both ways round: one difference a pairing
        assert all(len(table.diffs[r.entrant]) == 2 for r in table.rows)
        assert sum(sum(d) for d in table.diffs.values()) == pytest.approx(0.0)
    if spec.cooperative:
        assert all(r.stat is not None for r in table.rows)  # the mean score on the shared deals


async def test_a_duplicate_deal_is_the_same_cards_with_the_teams_turned():
    """Jass: the same deal is played twice, the teams one seat on; the hands at each seat are
    equal, the entrants holding them swapped (trump choice follows the hand)."""
    t = await sync_to_async(schedule.create)(game="jass", config=CONFIGS["jass"], format="duplicate",
                                             entrants=["builtin:random", "builtin:rules"], per_pairing=2, at_once=4)
    t = await played_out(t.pk)

    def deals():
        by_deal = defaultdict(list)
        for g in TournamentGame.objects.filter(tournament=t):
            match = Match.objects.get(tournament_game=g, status=Match.Status.FINISHED)
            first = registry.get("jass").new_state(match.config, match.seed)  # the state it started from
            hands = [sorted(first.observation(seat)["hand"]) for seat in range(4)]
            names = [s.builtin_bot for s in match.seats.order_by("index")]
            by_deal[g.deal].append((tuple(g.sides), hands, names))
        return by_deal

    by_deal = await sync_to_async(deals)()
    assert len(by_deal) == 2
    for plays in by_deal.values():
        (sides_a, hands_a, names_a), (sides_b, hands_b, names_b) = plays
        assert sides_a == tuple(reversed(sides_b))
        assert hands_a == hands_b
        assert names_a[0] == names_b[1] and names_a[1] == names_b[0]


async def test_a_swiss_pairs_by_score_without_repeats_and_gives_each_bye_to_a_different_entrant():
    entrants = builtins("liars_dice", 5)
    t = await sync_to_async(schedule.create)(game="liars_dice", config=CONFIGS["liars_dice"], format="swiss",
                                             entrants=entrants, rounds=4, at_once=2)
    t = await played_out(t.pk)
    games = await sync_to_async(lambda: list(TournamentGame.objects.filter(tournament=t).order_by("number")))()
    assert t.round == 4 and {g.round for g in games} == {1, 2, 3, 4}
    pairs = [frozenset(g.sides) for g in games if not g.forfeit]
    assert len(pairs) == len(set(pairs)) == 4 * 2  # two matches a round, never the same two again
    byes = [g.sides[0] for g in games if g.forfeit]
    assert len(byes) == 4 and len(set(byes)) == 4
    for r in range(1, 5):
        in_round = [e for g in games if g.round == r for e in g.sides]
        assert sorted(in_round) == [0, 1, 2, 3, 4]  # everyone plays or has the bye, once


async def test_an_entrant_that_never_connects_forfeits_after_the_wait():
    user = await sync_to_async(get_user_model().objects.create)(username="author")
    bot = await sync_to_async(RegisteredBot.objects.create)(owner=user, game="liars_dice", name="absent bot",
                                                           key_hash="x" * 64)
    t = await sync_to_async(schedule.create)(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                                             entrants=["builtin:random", f"registered:{bot.pk}"], per_pairing=2,
                                             wait_s=0.3, created_by_id=user.pk)
    t = await played_out(t.pk, seconds=30)
    table = await sync_to_async(standings.compute)(t)
    rows = {r.name: r for r in table.rows}
    assert rows["absent bot"].forfeits == 2 and rows["absent bot"].points == 0
    assert rows["Random bot"].points == 2
    forfeits = await sync_to_async(lambda: list(TournamentGame.objects.filter(tournament=t).values_list(
        "forfeit", flat=True)))()
    assert all(f["absent"] == [1] and "absent bot did not connect within 0.3 s" in f["reason"] for f in forfeits)


async def test_the_early_stop_ends_a_one_sided_match_up_with_its_finding(monkeypatch):
    # Every turn after a match's end looks (on a live server at most every EARLY_LOOK_S and ten
    # times a look's cost): the stop comes within the matches running at once of the finding.
    monkeypatch.setattr(schedule, "EARLY_LOOK_S", 0.0)
    monkeypatch.setattr(schedule, "EARLY_LOOK_COST", 0.0)
    t = await sync_to_async(schedule.create)(game="liars_dice", config={"players": 2, "dice": 3, "games": 1},
                                             format="round_robin", entrants=["builtin:random", "builtin:probability"],
                                             per_pairing=400, early_stop=True, at_once=8)
    arena = await started_arena()
    try:
        t = await run_to_end(arena, t.pk)

        def live():
            return list(Match.objects.filter(tournament_game__tournament=t, status__in=schedule.LIVE)
                        .values_list("pk", "status"))

        for _ in range(100):  # the full turns after the finding stop what still runs
            if not await sync_to_async(live)():
                break
            await full_sweep(arena)
            await asyncio.sleep(0.05)
        assert await sync_to_async(live)() == []
    finally:
        await arena.stop()
    table = await sync_to_async(standings.compute)(t)
    assert t.note.startswith("Probability bot is better with 95% confidence after ")
    after = int(t.note.split(" after ")[1].split()[0])
    # 400 looks planned: p at most 0.05 / 400 one-sided, 14 to 19 games in four runs here.
    assert after < 80 and table.done <= after + 8


async def test_an_unrated_tournament_leaves_the_ratings_alone_and_a_rated_one_feeds_them():
    counts = {}
    for rated in (False, True):
        t = await sync_to_async(schedule.create)(game="jass", config=CONFIGS["jass"], format="round_robin",
                                                 entrants=["builtin:random", "builtin:rules"], per_pairing=2,
                                                 rated=rated)
        arena = await started_arena()
        try:
            await run_to_end(arena, t.pk)
        finally:
            await arena.stop()
        counts[rated] = await sync_to_async(RatingChange.objects.filter(match__tournament_game__tournament=t).count)()
    # Jass partners are one identity each side: rated once per team, two changes a match.
    assert counts == {False: 0, True: 2 * 2}


async def test_an_arena_that_dies_mid_tournament_leaves_the_rest_to_another_with_the_same_standings():
    """Arena one runs part of a tournament and dies (its running matches' lease expires);
    arena two aborts those, plays them again from their seeds and finishes the rest.  The
    standings equal those of the same tournament (same seed) run by one arena throughout."""
    entrants = builtins("liars_dice", 4)
    config = {"players": 2, "dice": 3, "games": 2}

    async def make():
        t = await sync_to_async(schedule.create)(game="liars_dice", config=config, format="round_robin",
                                                 entrants=entrants, per_pairing=3, at_once=4, pace_s=0.002)
        return t

    calm = await make()
    arena = await started_arena()
    try:
        calm = await run_to_end(arena, calm.pk)
    finally:
        await arena.stop()

    crashed = await make()
    await sync_to_async(Tournament.objects.filter(pk=crashed.pk).update)(seed=calm.seed)
    one = await started_arena()
    # Let it finish some matches and have some running, then stop it as kill -9 would: its
    # runners gone, nothing recorded, its rows left running with their lease.
    for _ in range(400):
        await one.sweep()
        done = await sync_to_async(Match.objects.filter(tournament_game__tournament=crashed,
                                                        status=Match.Status.FINISHED).count)()
        if done >= 6 and one.tasks:
            break
        await asyncio.sleep(0.01)
    running = list(one.tasks)
    assert running, "arena one had no match running when it died"
    # Its stop records those matches as aborted, which a kill -9 never does: put their rows
    # back as the dead arena left them, running under a lease that has expired.
    await one.stop()
    await sync_to_async(lambda: Match.objects.filter(pk__in=running).update(
        status=Match.Status.RUNNING, lease_until=timezone.now() - timedelta(seconds=1), result=None,
        finished_at=None))()

    two = await started_arena()
    try:
        crashed = await run_to_end(two, crashed.pk)
    finally:
        await two.stop()
    aborted = await sync_to_async(lambda: list(Match.objects.filter(pk__in=running).values_list("status", "result")))()
    assert all(status == Match.Status.ABORTED and "lease expired" in result["aborted"] for status, result in aborted)
    per_game = await sync_to_async(played)(crashed)
    assert all([m.status for m in ms] == [Match.Status.FINISHED] for ms in per_game.values())
    assert len(per_game) == await sync_to_async(TournamentGame.objects.filter(tournament=crashed).count)()

    def summary(t):
        table = standings.compute(t)
        return sorted((r.name, r.points, r.wins, r.losses) for r in table.rows)

    assert await sync_to_async(summary)(crashed) == await sync_to_async(summary)(calm)


def test_a_game_undone_again_below_the_search_hint_is_played_not_skipped():
    """A quick turn searches for the next games from the last one it made (schedule's hint); a
    match aborted below it (a dead arena's, one cancelled) is made again, and the tournament
    does not end with that game unplayed."""
    t = schedule.create(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                        entrants=builtins("liars_dice", 3), per_pairing=1, at_once=4)
    schedule.step("a", 30, 10, full=True)  # starts it and makes its three matches
    made = list(Match.objects.filter(tournament_game__tournament=t).order_by("tournament_game__number"))
    assert len(made) == 3
    Match.objects.filter(pk=made[0].pk).update(status=Match.Status.ABORTED)
    Match.objects.filter(pk__in=[m.pk for m in made[1:]]).update(status=Match.Status.FINISHED)
    work = schedule.step("a", 30, 10, full=False)
    again = Match.objects.filter(tournament_game=made[0].tournament_game, status=Match.Status.OPEN).get()
    assert work.start == [again.pk]
    assert Tournament.objects.get(pk=t.pk).status == Tournament.Status.RUNNING


def test_a_bot_connecting_for_a_game_undone_again_below_the_search_hint_is_held_for_it():
    """A registered entrant that connects while its only game left lies below the hint (its
    match aborted) waits for the tournament's seat, not an automatic table."""
    user = get_user_model().objects.create(username="author")
    bot = RegisteredBot.objects.create(owner=user, game="liars_dice", name="entrant", key_hash="x" * 64)
    t = schedule.create(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                        entrants=["builtin:random", f"registered:{bot.pk}"], per_pairing=2, at_once=4,
                        created_by_id=user.pk)
    schedule.step("a", 30, 10, full=True)  # starts it and makes both matches
    made = list(Match.objects.filter(tournament_game__tournament=t).order_by("tournament_game__number"))
    assert len(made) == 2
    Match.objects.filter(pk=made[0].pk).update(status=Match.Status.ABORTED)
    Match.objects.filter(pk=made[1].pk).update(status=Match.Status.FINISHED)
    assert schedule.entrant_waits("liars_dice", bot.pk)
    Match.objects.filter(pk=made[0].pk).update(status=Match.Status.FINISHED)
    assert not schedule.entrant_waits("liars_dice", bot.pk)  # nothing left to make


async def test_cancelling_stops_its_live_matches_and_keeps_the_finished_ones():
    t = await sync_to_async(schedule.create)(game="liars_dice", config={"players": 2, "dice": 5, "games": 9},
                                             format="round_robin", entrants=builtins("liars_dice", 2),
                                             per_pairing=50, at_once=2, pace_s=0.01)
    arena = await started_arena()
    try:
        for _ in range(300):
            await arena.sweep()
            if await sync_to_async(Match.objects.filter(tournament_game__tournament=t,
                                                        status=Match.Status.FINISHED).count)() >= 1 and arena.tasks:
                break
            await asyncio.sleep(0.02)
        live = await sync_to_async(schedule.cancel)(t.pk, "cancelled by its organiser")
        assert live
        made = await sync_to_async(Match.objects.filter(tournament_game__tournament=t).count)()
        await full_sweep(arena)  # the arena's next full turn (within SWEEP_S) stops them
        for _ in range(400):
            if not arena.tasks:
                break
            await asyncio.sleep(0.025)
        await arena.sweep()  # nothing more is made
        ends = await sync_to_async(lambda: list(Match.objects.filter(tournament_game__tournament=t).values_list(
            "pk", "status", "result")))()
    finally:
        await arena.stop()
    assert len(ends) == made
    statuses = Counter(status for _, status, _ in ends)
    assert statuses[Match.Status.FINISHED] >= 1
    assert set(statuses) <= {Match.Status.FINISHED, Match.Status.ABORTED}
    # A live match stopped (one may have finished before the stop reached it: it keeps its result).
    stopped = [(pk, result) for pk, status, result in ends if status == Match.Status.ABORTED]
    assert stopped and all(pk in live and result == {"aborted": "cancelled by its organiser"} for pk, result in stopped)
    t = await sync_to_async(Tournament.objects.get)(pk=t.pk)
    assert (t.status, t.note) == (Tournament.Status.CANCELLED, "cancelled by its organiser")


async def test_entrants_join_before_the_start_and_late_into_a_swiss_until_half_its_rounds():
    later = timezone.now() + timedelta(hours=1)
    rr = await sync_to_async(schedule.create)(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                                              entrants=builtins("liars_dice", 2), starts_at=later)
    joined = await sync_to_async(schedule.join)(rr.pk, "builtin:random", None)
    assert (joined.index, joined.display_name, joined.joined_round) == (2, "Random bot (3)", 1)
    swiss = await sync_to_async(schedule.create)(game="liars_dice", config=CONFIGS["liars_dice"], format="swiss",
                                                 entrants=builtins("liars_dice", 4), rounds=4, late_join=True,
                                                 at_once=2)
    arena = await started_arena()
    try:
        await arena.sweep()  # the Swiss starts: round 1 paired and being played
        late = await sync_to_async(schedule.join)(swiss.pk, "builtin:probability", None)
        assert late.joined_round == 2
        with pytest.raises(ValueError, match="before the start"):  # a round robin's plan is fixed
            await sync_to_async(Tournament.objects.filter(pk=rr.pk).update)(status=Tournament.Status.RUNNING)
            await sync_to_async(schedule.join)(rr.pk, "builtin:probability", None)
        swiss = await run_to_end(arena, swiss.pk)
        with pytest.raises(ValueError, match="half its rounds"):
            await sync_to_async(schedule.join)(swiss.pk, "builtin:random", None)
    finally:
        await arena.stop()
    games = await sync_to_async(lambda: list(TournamentGame.objects.filter(tournament=swiss)))()
    assert all(late.index not in g.sides for g in games if g.round == 1)
    assert sum(1 for g in games if late.index in g.sides) == 3  # rounds 2-4: a match or the bye
    table = await sync_to_async(standings.compute)(swiss)
    row = next(r for r in table.rows if r.entrant == late.index)
    byes = sum(1 for g in games if g.forfeit and g.sides == [late.index])
    assert row.points == pytest.approx(0.5 + row.wins + byes + 0.5 * row.draws)


def test_a_match_up_with_the_early_stop_takes_no_third_entrant():
    """The early stop tests one entrant against the other: its two are all it takes, and its
    page offers no entry once it has them."""
    later = timezone.now() + timedelta(hours=1)
    t = schedule.create(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                        entrants=builtins("liars_dice", 2), early_stop=True, starts_at=later)
    assert not schedule.entry_open(t)
    with pytest.raises(ValueError, match="early stop is for a match-up of two entrants"):
        schedule.join(t.pk, "builtin:random", None)
    assert t.entrants.count() == 2
    plain = schedule.create(game="liars_dice", config=CONFIGS["liars_dice"], format="round_robin",
                            entrants=builtins("liars_dice", 2), starts_at=later)
    assert schedule.entry_open(plain)


async def test_a_bot_the_server_calls_over_http_plays_its_tournament_matches(settings):
    """Jass: a registered bot service is called as at any table, in every match of its entrant."""
    from games.arena.bots import http_bots
    from tests.jass_bot_service import BotService

    http_bots._clients.clear()  # a client of another test's loop is not this one's
    settings.ARENA = {**settings.ARENA, "JASS_BOT_DEADLINE": 2.0, "ROUND_PAUSE": 0.0}
    service = BotService()
    try:
        user = await sync_to_async(get_user_model().objects.create)(username="kit-author")
        bot = await sync_to_async(RegisteredBot.objects.create)(owner=user, game="jass", name="good",
                                                               base_url=service.url("good"), path_style="kit")
        t = await sync_to_async(schedule.create)(game="jass", config=CONFIGS["jass"], format="duplicate",
                                                 entrants=[f"registered:{bot.pk}", "builtin:random"], per_pairing=1,
                                                 created_by_id=user.pk)
        t = await played_out(t.pk)
    finally:
        service.close()
    table = await sync_to_async(standings.compute)(t)
    rows = {r.name: r for r in table.rows}
    assert rows["good"].games == 2 and rows["good"].forced == 0
    assert {path for path, _ in service.calls} >= {"/good/action_play_card", "/good/game_info"}
