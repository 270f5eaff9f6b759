"""Scaled mode for real: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL), with the web and the
arena in separate processes that meet only through the channel layer and the database."""
from __future__ import annotations

import asyncio
import json
import uuid

import psycopg
import pytest
import websockets

from tests.human_client import Guest
from tests.ld_bot import LDBot
from tests.serverproc import wait_until

pytestmark = pytest.mark.services

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


@pytest.fixture
def scaled_env():
    """A fresh PostgreSQL database and a private Redis key prefix; both removed afterwards."""
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield {"DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
           "REDIS_URL": "redis://127.0.0.1:6379/0", "ARENA_CHANNEL_PREFIX": f"t{uuid.uuid4().hex[:8]}",
           "ARENA_HUMAN_DEADLINE": "20", "ARENA_HUMAN_CHALLENGE_WINDOW": "2", "ARENA_ROUND_PAUSE": "0.1"}
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def choose(view: dict, request: dict):
    """A person's sensible move: open with one die of a face we hold, then challenge."""
    if request["kind"] == "challenge_window":
        return "pass"
    if view["last_bid"] is None:
        return ["bid", view["your_hand"][0], 1]
    return "challenge"


async def play_until_over(guest: Guest, match_id: int) -> tuple[dict, int]:
    """Play through the WebSocket until the match is over; returns (last view, moves made)."""
    moves = 0
    async with guest.websocket(match_id) as ws:
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if msg["type"] == "table.update":
                continue
            assert msg["type"] == "match.view", msg
            await ws.send(json.dumps({"type": "ack", "version": msg["version"]}))  # as the browser does
            view = msg["view"]
            if view["terminal"]:
                return view, moves
            assert msg["audience"] == view["your_seat"] == 0
            if msg.get("request"):
                await ws.send(json.dumps({"type": "act", "version": msg["request"]["version"],
                                          "action": choose(view, msg["request"])}))
                moves += 1



def test_person_on_web_process_plays_bot_whose_runner_is_in_arena_process(arena_factory, scaled_env):
    arena = arena_factory(role="arena", env=scaled_env)
    web = arena_factory(role="web", env=scaled_env)
    guest = Guest(web.url, "carol")
    match_id = guest.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["me", "open_bot"])

    bot = LDBot(arena.liars_dice_port, "remote-bot")
    wait_until(lambda: "running" in guest.get(f"/matches/{match_id}/"), 20)
    view, moves = asyncio.run(play_until_over(guest, match_id))
    assert moves >= 1
    assert sum(view["wins"]) == 1
    assert bot.closed.wait(10), "the arena closes the bot's connection after the match"

    detail = wait_until(lambda: (d := guest.get_json(f"/api/matches/{match_id}/"))["status"] == "finished" and d, 20)
    assert [s["name"] for s in detail["seats"]] == ["carol", "remote-bot"]
    assert detail["result"]["scores"] == view["wins"]
    human_events = [e for e in detail["events"] if e["seat"] == 0]
    assert len(human_events) >= moves
    # The runner lived in the arena process, the person talked to the web process.
    assert f"match {match_id} (liars_dice) started" in arena.log()
    assert "started" not in web.log()
    with psycopg.connect(scaled_env["DATABASE_URL"].replace("postgres://", "postgresql://")) as conn:
        count = conn.execute("SELECT count(*) FROM arena_event WHERE match_id = %s", [match_id]).fetchone()[0]
    assert count == len(detail["events"])


def test_hanabi_bots_on_the_arena_port_and_through_the_web_port_play_one_game(arena_factory, scaled_env):
    """Hanabi in the scaled deployment: one bot connects to the arena process's own Hanabi port
    (4444's setting), the other to ``/ws/bots/hanabi/`` on the web process's port (a deployment
    behind one proxy), whose consumer forwards its frames to the arena through Redis.  They
    gather at the automatic table, the last to join starts it and moves first, the whole game
    is played, both get GAME_OVER_RESPONSE and close 1000, and PostgreSQL keeps the match."""
    from tests.hanabi_client import HanabiClient

    arena = arena_factory(role="arena", env=scaled_env)
    web = arena_factory(role="web", env=scaled_env)
    first = HanabiClient(arena.hanabi_port, "on-4444")
    first.wait_for("CONNECTION_RESPONSE")
    second = HanabiClient(web.http_port, "via-web", path="/ws/bots/hanabi/", start_when=2)
    try:
        assert second.wait_for("CONNECTION_RESPONSE")[0]["names"] == ["on-4444", "via-web"]
        start = first.wait_for("GAME_START_RESPONSE")[0]["game_state"]
        assert start["next_player"] == "via-web", "the last to join moves first"
        scores = [c.wait_for("GAME_OVER_RESPONSE", timeout=60)[0]["score"] for c in (first, second)]
        assert scores[0] == scores[1]
        assert first.done.wait(10) and second.done.wait(10)
        assert (first.close_code, second.close_code) == (1000, 1000)
        assert not first.of_type("ERROR_RESPONSE") and not second.of_type("ERROR_RESPONSE")
    finally:
        first.close(), second.close()
    guest = Guest(web.url, "dora")
    listed = wait_until(lambda: guest.get_json("/api/matches/?game=hanabi")["results"], 20,
                        "the match stored as finished")
    detail = guest.get_json(f"/api/matches/{listed[0]['id']}/")
    assert [s["name"] for s in detail["seats"]] == ["via-web", "on-4444"]
    assert detail["result"]["score"] == scores[0]
    assert "(hanabi) started" in arena.log() and "(hanabi) started" not in web.log()


def test_spectators_on_two_web_processes_share_one_subscription_each_through_redis(arena_factory, scaled_env):
    """Six spectators, three on each of two web processes, watch a bots-only match whose
    runner is in the arena process: each web process is in the match's public group once
    (games/arena/web/consumers.py's ``Audience``), every spectator gets public views in order, and
    the views reach all six."""
    import random

    import redis

    from tests.ld_bot import slow_simple_move

    env = dict(scaled_env, LIARS_DICE_AUTO_GAMES="20")
    arena = arena_factory(role="arena", env=env)
    webs = [arena_factory(role="web", env=env) for _ in range(2)]
    bots = [LDBot(arena.liars_dice_port, f"watched{k}", decide=slow_simple_move(0.02, random.Random(k)))
            for k in range(2)]
    try:
        with psycopg.connect(scaled_env["DATABASE_URL"].replace("postgres://", "postgresql://")) as conn:
            match_id = wait_until(lambda: (conn.execute(
                "SELECT id FROM arena_match WHERE status = 'running'").fetchone() or [None])[0], 20, "the match")

        watching = []  # spectators that have had their first views

        async def watch(web, seen: list) -> None:
            async with websockets.connect(f"ws://127.0.0.1:{web.http_port}/ws/matches/{match_id}/",
                                          origin=web.url) as ws:
                while len(seen) < 60:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if msg["type"] != "match.view":
                        continue
                    await ws.send(json.dumps({"type": "ack", "version": msg["version"]}))
                    assert msg["audience"] == "public"
                    assert msg["view"]["terminal"] or ("hands" not in msg["view"] and "your_hand" not in msg["view"])
                    seen.append(msg["version"])
                    if len(seen) == 3:
                        watching.append(seen)

        async def group_members() -> list:
            while len(watching) < 6:
                await asyncio.sleep(0.01)
            return redis.Redis.from_url(scaled_env["REDIS_URL"]).zrange(
                f"{scaled_env['ARENA_CHANNEL_PREFIX']}:group:m{match_id}.public", 0, -1)

        async def all_of_them() -> tuple[list[list[int]], list]:
            seen = [[] for _ in range(6)]
            *_, members = await asyncio.gather(*(watch(webs[k % 2], seen[k]) for k in range(6)), group_members())
            return seen, members

        seen, members = asyncio.run(all_of_them())
    finally:
        for bot in bots:
            bot.close()
    assert len(members) == 2, members  # one channel per web process, not one per spectator
    for versions in seen:
        assert versions == sorted(versions)
    assert set.intersection(*(set(v) for v in seen)), "a view that reached all six"


async def resync_answered(guest: Guest, match_id: int) -> None:
    """Once the person is asked to move (the runner then waits for them and publishes
    nothing), a resync is answered with that same view: the request reached the arena that
    runs the match, through the web process."""
    async with guest.websocket(match_id) as ws:
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if msg["type"] != "match.view":
                continue
            await ws.send(json.dumps({"type": "ack", "version": msg["version"]}))
            if (msg.get("request") or {}).get("kind") == "turn":
                break
        await ws.send(json.dumps({"type": "resync"}))
        while True:
            again = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if again["type"] == "match.view":
                break
        assert again["version"] == msg["version"] and again["request"] == msg["request"]


def test_two_arenas_behind_one_web_process_each_get_the_moves_of_their_own_matches(arena_factory, scaled_env):
    """Two arena processes and one web process on one PostgreSQL database and one Redis: a
    person on the web process plays a match run by each arena (its bot connected to that
    arena's port), their moves and resyncs reaching that arena's own channel; a Hanabi bot on
    the web process's ``/ws/bots/hanabi/`` is seated and played by exactly one arena."""
    from tests.hanabi_client import HanabiClient

    names = ["arena-a", "arena-b"]
    arenas = [arena_factory(role="arena", env=dict(scaled_env, ARENA_NAME=name)) for name in names]
    web = arena_factory(role="web", env=scaled_env)
    db_url = scaled_env["DATABASE_URL"].replace("postgres://", "postgresql://")
    bots = []
    try:
        for arena, name in zip(arenas, names):
            guest = Guest(web.url, f"p-{name}")
            match_id = guest.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["me", "open_bot"])
            bots.append(LDBot(arena.liars_dice_port, f"bot-{name}"))
            wait_until(lambda: "running" in guest.get(f"/matches/{match_id}/"), 20)
            with psycopg.connect(db_url, autocommit=True) as conn:
                # Ownership comes with the start (tables.try_start) once matches have leases;
                # until then the test names the arena whose bot made it start.
                conn.execute("UPDATE arena_match SET owner = %s WHERE id = %s AND owner = ''", [name, match_id])
                assert conn.execute("SELECT owner FROM arena_match WHERE id = %s", [match_id]).fetchone()[0] == name
            asyncio.run(resync_answered(guest, match_id))
            view, moves = asyncio.run(play_until_over(guest, match_id))
            assert moves >= 1 and sum(view["wins"]) == 1
            wait_until(lambda: guest.get_json(f"/api/matches/{match_id}/")["status"] == "finished", 20)
            started = f"match {match_id} (liars_dice) started"
            assert [started in a.log() for a in arenas] == [a is arena for a in arenas]

        with psycopg.connect(db_url, autocommit=True) as conn:
            table = int(web.shell("from games.arena.play import tables\n"
                                  "print(tables.create_table('hanabi', {'players': 2}, "
                                  "['open_bot', 'builtin:random'], None).pk)\n").split()[-1])
            hanabi = HanabiClient(web.http_port, "via-web", path="/ws/bots/hanabi/")
            try:
                over = hanabi.wait_for("GAME_OVER_RESPONSE", timeout=60)
                assert hanabi.done.wait(10) and hanabi.close_code == 1000
            finally:
                hanabi.close()
            assert over and len(hanabi.of_type("CONNECTION_RESPONSE")) == 1, "one arena made its handler"
            assert not hanabi.of_type("ERROR_RESPONSE")
            assert conn.execute("SELECT count(*) FROM arena_match WHERE game = 'hanabi'").fetchone()[0] == 1
        started = f"match {table} (hanabi) started"
        assert sum(started in a.log() for a in arenas) == 1
    finally:
        for bot in bots:
            bot.close()
