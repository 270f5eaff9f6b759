"""A table's pace (``Match.pace_s``): the least time from one move's requests to the next, so a
match of bots can be watched.  The runner's clock is controlled here (no wall-clock timing);
over a real server, the views a spectator gets are measured against the configured minimum."""
from __future__ import annotations

import asyncio
import json
import re
import threading

import pytest

from games.arena import registry
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat
from tests.human_client import Guest
from tests.serverproc import wait_until

CONFIG = {"players": 2, "dice": 2, "games": 1}


class NullWriter:
    async def append(self, rows):
        pass


class FakeTime:
    """The runner's clock: time passes only when the runner naps or a bot thinks."""

    def __init__(self):
        self.now = 0.0
        self.naps: list[float] = []


class TimedRunner(MatchRunner):
    """A runner on :class:`FakeTime` (its clock and its nap are the only time it knows)."""

    def __init__(self, *args, fake: FakeTime, **kwargs):
        super().__init__(*args, **kwargs)
        self.fake = fake

    def clock(self) -> float:
        return self.fake.now

    async def _nap(self, seconds: float) -> None:
        self.fake.naps.append(seconds)
        self.fake.now += seconds
        await asyncio.sleep(0)


class ThinkingBot(BuiltinSeat):
    """A built-in bot that takes ``think_s`` of the fake clock per answer and notes when it
    was asked."""

    def __init__(self, name, policy, seed, fake: FakeTime, think_s: float, asked: list):
        super().__init__(name, policy, seed)
        self.fake, self.think_s, self.asked = fake, think_s, asked

    def ask(self, state, seat, version):
        self.asked.append((version, self.fake.now))
        self.fake.now += self.think_s
        return super().ask(state, seat, version)


async def play(pace_s: float, think_s: float):
    spec = registry.get("liars_dice")
    fake, asked = FakeTime(), []
    policy = spec.builtin_bots["random"][1]
    seats = [ThinkingBot(f"bot{i}", policy, i, fake, think_s / 2, asked) for i in range(2)]  # two per step

    async def publish(group, message):
        pass

    runner = TimedRunner(1, spec, CONFIG, 7, seats, NullWriter(), publish, pace_s=pace_s, fake=fake)
    await runner.run()
    assert runner.state.is_terminal()
    steps = sorted({version: at for version, at in asked}.items())  # the first ask of each step
    return fake, [at for _, at in steps]


async def test_a_paced_table_asks_for_each_move_no_sooner_than_its_pace_after_the_last():
    fake, times = await play(pace_s=0.5, think_s=0.1)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) >= 3
    assert all(gap == pytest.approx(0.5) for gap in gaps), gaps
    # The runner waits only what the bots' own time left of the pace.
    assert all(nap == pytest.approx(0.4) for nap in fake.naps), fake.naps


async def test_bots_slower_than_the_pace_are_not_slowed_further():
    fake, times = await play(pace_s=0.5, think_s=0.8)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(gap == pytest.approx(0.8) for gap in gaps), gaps
    assert fake.naps == []


async def test_full_speed_never_waits():
    fake, times = await play(pace_s=0.0, think_s=0.0)
    assert fake.naps == [] and set(times) == {0.0}


async def test_an_interruption_cuts_the_wait_short():
    """A bot that leaves (Blokus: LEFT) ends the match at once, not after the pace."""
    spec = registry.get("liars_dice")
    policy = spec.builtin_bots["random"][1]
    seats = [BuiltinSeat(f"bot{i}", policy, i) for i in range(2)]

    async def publish(group, message):
        pass

    async def turns(n: int) -> None:  # the bots answer at once: the match moves in loop turns
        for _ in range(n):
            await asyncio.sleep(0)

    runner = MatchRunner(1, spec, CONFIG, 7, seats, NullWriter(), publish, pace_s=600.0)
    task = asyncio.ensure_future(runner.run())
    await turns(200)
    assert not task.done() and runner.step == 1, "it waits out its 600 s pace after the first move"
    runner.pause(True)  # a pause wakes the wait, which then goes on waiting out the pace
    await turns(200)
    assert not task.done() and runner.step == 1
    runner._abandon()
    await asyncio.wait_for(task, 5)
    assert runner.abandoned and runner.step == 1


# --- over a real server --------------------------------------------------------------------

def test_a_watchable_table_of_built_in_bots_is_listed_live_and_shows_a_move_no_faster_than_its_pace(arena):
    ann = Guest(arena.url, "Ann")
    form = ann.get("/tables/new/liars_dice/")
    # The form offers the paces, "Watchable" chosen.
    assert re.search(r'<option value="0.5" selected>Watchable', form), form
    url = ann.post_form("/tables/new/liars_dice/", {
        "nickname": "Ann", "players": "2", "dice": "3", "games": "2", "pace": "0.5",
        "seat0": "builtin:random", "seat1": "builtin:probability"})
    match_id = int(re.search(r"/matches/(\d+)/", url).group(1))
    # Two games of 2 x 3 dice take at least 10 moves: 5 s at this pace, so the lobby shows it.
    lobby = wait_until(lambda: (page := ann.get("/")) and f'/matches/{match_id}/' in live_list(page, "liars_dice")
                       and page, 10, "the match under Live")
    assert "paced: 0.5 s a move" in live_list(lobby, "liars_dice")
    assert "paced: 0.5 s a move" in ann.get(f"/matches/{match_id}/")

    async def watch():
        stamps = []
        async with ann.websocket(match_id) as ws:
            while True:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if msg.get("type") == "match.view":
                    stamps.append((msg["version"], msg["ts"]))
                if msg.get("type") == "match.over" or len(stamps) >= 6:
                    return stamps

    stamps = asyncio.run(watch())
    assert len(stamps) >= 4, stamps
    # The server's own time stamps of consecutive views: each a move, at least the pace apart
    # (a busy machine makes them later, never sooner).
    consecutive = [(b[1] - a[1]) for a, b in zip(stamps, stamps[1:]) if b[0] == a[0] + 1]
    assert len(consecutive) >= 3, stamps
    assert min(consecutive) >= 0.5 - 0.01, consecutive


def live_list(page: str, game: str) -> str:
    """The "Live" column of ``game``'s section of the lobby page."""
    section = page.split(f'id="game-{game}"', 1)[1].split("</section>", 1)[0]
    return section.split("<h3>Live</h3>", 1)[1].split("</ul>", 1)[0]


# --- the create-table form ----------------------------------------------------------------

FORM = {"nickname": "ann", "players": "2", "seat0": "me", "seat1": "builtin:convention"}


@pytest.mark.django_db
def test_the_form_keeps_pace_and_thinking_time_within_bounds_and_says_why(client):
    from games.arena.models import Match

    for field, bad, said in [("pace", "0.25", "Pace: choose one of Full speed"), ("pace", "nan", "Pace: choose"),
                             ("pace", "1e999", "Pace: choose"),
                             ("think_s", "0", "from 1 to 600"), ("think_s", "601", "from 1 to 600"),
                             ("think_s", "2.5", "from 1 to 600"), ("think_s", "ten", "from 1 to 600"),
                             ("think_s", "-3", "from 1 to 600"), ("think_s", "9" * 40, "from 1 to 600")]:
        page = client.post("/tables/new/hanabi/", {**FORM, field: bad})
        assert page.status_code == 200 and said in page.content.decode(), (field, bad)
        if field == "think_s":  # the form shows what was typed, to be corrected
            assert f'name="think_s" min="1" max="600" step="1" value="{bad[:12]}"' in page.content.decode()
    assert not Match.objects.exists()
    form = client.get("/tables/new/hanabi/").content.decode()
    assert 'placeholder="10"' in form and "empty: the game's 10 s." in form  # HANABI_BOT_DEADLINE
    assert client.post("/tables/new/hanabi/", {**FORM, "pace": "1.0", "think_s": "600"}).status_code == 302
    match = Match.objects.get()
    assert (match.pace_s, match.think_s) == (1.0, 600)
    # "Play again" keeps them.
    again = client.get(f"/tables/new/hanabi/?again={match.pk}").content.decode()
    assert '<option value="1.0" selected>' in again and 'name="think_s" min="1" max="600" step="1" value="600"' in again


@pytest.mark.django_db
def test_a_post_without_the_new_fields_plays_at_full_speed_and_the_games_deadline(client):
    """Scripts that post the form as before the fields existed get the tables they got then."""
    from games.arena.models import Match

    assert client.post("/tables/new/hanabi/", FORM).status_code == 302
    assert Match.objects.values_list("pace_s", "think_s").get() == (0.0, None)


@pytest.mark.django_db
def test_automatic_tables_take_their_pace_from_the_setting(settings):
    """ARENA_AUTO_TABLE_PACE, held to 0 .. 10 s."""
    from games.arena.play.arena import auto_pace

    settings.ARENA = {**settings.ARENA, "AUTO_TABLE_PACE": 0.75}
    assert auto_pace() == 0.75
    settings.ARENA = {**settings.ARENA, "AUTO_TABLE_PACE": 99}
    assert auto_pace() == 10.0


def test_the_automatic_table_plays_at_the_pace_the_setting_gives(arena_factory):
    """Bots that connect and find no open seat gather at an automatic table, paced by
    ARENA_AUTO_TABLE_PACE; its views a move apart no sooner than that."""
    import sqlite3

    from tests.ld_bot import LDBot, simple_move

    # The bots hold their first answers until the watcher is in: on a busy machine a paced
    # match could otherwise end before the watcher's login and socket are done.
    watching = threading.Event()

    def when_watched(msg):
        watching.wait(60)
        return simple_move(msg)

    arena = arena_factory(env={"ARENA_AUTO_TABLE_PACE": "0.5"})
    bots = [LDBot(arena.liars_dice_port, name, decide=when_watched) for name in ("auto-a", "auto-b")]
    try:
        def paces():
            with sqlite3.connect(arena.data_dir / "arena.sqlite3") as db:
                return db.execute("SELECT id, auto, pace_s FROM arena_match").fetchall()

        (match_id, auto, pace), = wait_until(paces, 10, "the automatic table")
        assert auto and pace == 0.5
        watcher = Guest(arena.url, "watcher")

        async def watch():
            stamps = []
            async with watcher.websocket(match_id) as ws:
                while len(stamps) < 4:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    watching.set()
                    if msg.get("type") == "match.view":
                        stamps.append((msg["version"], msg["ts"]))
                    elif msg.get("type") == "match.over":
                        break
            return stamps

        stamps = asyncio.run(watch())
        gaps = [b[1] - a[1] for a, b in zip(stamps, stamps[1:]) if b[0] == a[0] + 1]
        assert gaps and min(gaps) >= 0.5 - 0.01, stamps
    finally:
        watching.set()
        for bot in bots:
            bot.close()
