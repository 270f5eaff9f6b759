"""Several arena processes on one database, for real: two arenas and two web processes on
PostgreSQL and Redis, as a deployment that outgrew one core runs them (docs/architecture.md,
*Several arenas*).  Bots connect to either arena, people play through either web process,
every match runs exactly once, and a dead arena's work is recovered without touching the
live one's."""
from __future__ import annotations

import asyncio
import json
import time

import psycopg
import pytest

from games.arena import registry
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat
from tests.blokus_client import Player
from tests.bridge_text_client import TextClient
from tests.hanabi_client import HanabiClient
from tests.human_client import Guest
from tests.ld_bot import LDBot
from tests.serverproc import wait_until
from tests.test_scaled import play_until_over, scaled_env  # noqa: F401 (a fixture)

pytestmark = pytest.mark.services

#: Short leases, so a dead arena's matches are recovered within seconds.
LEASE_S = 3.0


@pytest.fixture
def shared_env(scaled_env):
    """The scaled tests' fresh PostgreSQL database and Redis prefix, shared by every process
    of the test, with short leases and room for the test's tables."""
    return {**scaled_env, "ARENA_LEASE": str(LEASE_S), "ARENA_TABLES_PER_MINUTE": "100"}


def start_arena(arena_factory, env: dict, name: str, **extra):
    """An arena process called ``name`` on the shared database."""
    return arena_factory(role="arena", env={**env, "ARENA_NAME": name, **extra})


def sql(env: dict, query: str, params=()) -> list[tuple]:
    with psycopg.connect(env["DATABASE_URL"].replace("postgres://", "postgresql://")) as conn:
        return conn.execute(query, params).fetchall()


def matches(env: dict) -> dict[int, tuple[str, str, str, int]]:
    """Every match: id -> (game, status, owner, attempt)."""
    return {pk: (game, status, owner, attempt) for pk, game, status, owner, attempt in
            sql(env, "SELECT id, game, status, owner, attempt FROM arena_match")}


def starts(arenas: dict, match_id: int) -> list[str]:
    """The names of the arenas whose log says they started ``match_id`` (once per start)."""
    return [name for name, arena in arenas.items() for line in arena.log().splitlines()
            if f"match {match_id} (" in line and ") started: " in line]


def events(env: dict, match_id: int) -> list[tuple[int, object]]:
    """``(seat, action)`` of every event of ``match_id``, in order."""
    return [(seat, action if not isinstance(action, str) or not action.startswith(("[", "{", '"'))
             else json.loads(action))
            for seat, action in sql(env, "SELECT seat, action FROM arena_event WHERE match_id = %s ORDER BY seq",
                                    [match_id])]


class KeptWriter:
    """The event log, in memory."""

    def __init__(self):
        self.rows = []

    async def append(self, rows):
        self.rows.extend(rows)


def one_arena_run(game: str, config: dict, seed: int, bots: list[str]) -> list[tuple[int, object]]:
    """``(seat, action)`` of a match of built-in ``bots`` with ``config`` and ``seed`` run in
    this process, as one arena runs it (each bot's seed is the match's plus its seat)."""
    spec = registry.get(game)
    writer = KeptWriter()

    async def publish(group, message):
        pass

    endpoints = [BuiltinSeat(spec.builtin_bots[bot][0], spec.builtin_bots[bot][1], seed + index)
                 for index, bot in enumerate(bots)]
    runner = MatchRunner(0, spec, config, seed, endpoints, writer, publish)
    asyncio.run(runner.run())
    return [(row.seat, json.loads(json.dumps(row.action))) for row in writer.rows]


BUILTIN_TABLES = [
    ("liars_dice", {"players": 2, "dice": 2, "games": 2}, ["random", "probability"]),
    ("jass", {"points_to_win": 1000, "max_deals": 1}, ["random", "rules", "random", "rules"]),
    ("blokus", {"variant": "2021"}, ["random", "heuristic"]),
    ("hanabi", {"players": 2}, ["random", "convention"]),
    ("bridge", {"scoring": "duplicate", "boards": 1}, ["random", "rules", "random", "rules"]),
]


def test_every_game_plays_at_either_arena_and_each_match_runs_once(arena_factory, shared_env):
    """Bots of every game connect to either arena, people play through either web process,
    built-in tables are taken by one arena or the other: every match runs exactly once, at the
    arena its row names, and the built-in matches' events equal one arena's run of their seeds."""
    arenas = {"a1": start_arena(arena_factory, shared_env, "a1"), "a2": start_arena(arena_factory, shared_env, "a2")}
    webs = [arena_factory(role="web", env=shared_env) for _ in range(2)]
    a1, a2 = arenas["a1"], arenas["a2"]
    clients = []
    try:
        # Built-in tables made through either web process: any arena may take them.
        organisers = [Guest(web.url, f"organiser{i}") for i, web in enumerate(webs)]
        builtin = {}
        for i, (game, config, bots) in enumerate(BUILTIN_TABLES * 2):
            match_id = organisers[i % 2].create_table(game, config, [f"builtin:{b}" for b in bots])
            builtin[match_id] = (game, bots)

        # Bots over each protocol, at each arena: they play where they connected.
        clients += [LDBot(a1.liars_dice_port, f"ld-a1-{i}") for i in range(2)]
        clients += [LDBot(a2.liars_dice_port, f"ld-a2-{i}") for i in range(2)]
        clients += [Player(a2.blokus_port, seed=i) for i in range(2)]
        clients += [HanabiClient(a1.hanabi_port, "hb-a1"), HanabiClient(a1.hanabi_port, "hb-a1-2", start_when=2)]
        # A Hanabi bot through a web process's /ws/bots/hanabi/: one arena seats it.
        via_web = [HanabiClient(webs[1].http_port, "hb-web", path="/ws/bots/hanabi/"),
                   HanabiClient(webs[1].http_port, "hb-web-2", path="/ws/bots/hanabi/", start_when=2)]
        clients += via_web
        bridge = [TextClient(a2.bridge_port, f"br{i}", seed=i) for i in range(4)]
        for client in bridge:
            client.send("JOIN-M ANY")
        clients += bridge

        # A person on web 2 at a table whose bot connected to arena 1: the runner is arena 1's.
        person = Guest(webs[1].url, "carol")
        personal = person.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["me", "open_bot"])
        clients.append(LDBot(a1.liars_dice_port, "carols-opponent"))
        wait_until(lambda: matches(shared_env)[personal][1] == "running", 30, "the person's match running")
        assert matches(shared_env)[personal][2] == "a1"
        view, moves = asyncio.run(play_until_over(person, personal))
        assert moves >= 1 and view["terminal"]
        # A person on web 1 against a built-in bot: whichever arena took it.
        other = Guest(webs[0].url, "dora")
        theirs = other.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["me", "builtin:random"])
        view, _ = asyncio.run(play_until_over(other, theirs))
        assert view["terminal"]

        def all_over():
            rows = matches(shared_env)
            return len(rows) >= len(builtin) + 2 + 6 and all(s == "finished" for _, s, _, _ in rows.values()) and rows
        try:
            rows = wait_until(all_over, 300, "every match finished")
        except AssertionError:
            raise AssertionError(f"not every match finished: {matches(shared_env)}") from None
    finally:
        for client in clients:
            client.close()

    for match_id, (game, status, owner, attempt) in rows.items():
        assert status == "finished" and owner in arenas and attempt == 1, (match_id, game, status, owner, attempt)
        assert starts(arenas, match_id) == [owner], f"match {match_id} ({game}) started by {starts(arenas, match_id)}"
    games_at = {name: {rows[m][0] for m in rows if rows[m][2] == name} for name in arenas}
    assert {"liars_dice", "hanabi"} <= games_at["a1"] and {"liars_dice", "blokus", "bridge"} <= games_at["a2"]
    # Only one of the arenas made a handler for the web's Hanabi bots: they played one match.
    hanabi_web = [m for m in rows if rows[m][0] == "hanabi" and m not in builtin
                  and "hb-web" in json.dumps(sql(shared_env, "SELECT display_name FROM arena_seat WHERE match_id = %s", [m]))]
    assert len(hanabi_web) == 1
    # The built-in matches: the same events as one arena running the same seeds.
    for match_id, (game, bots) in builtin.items():
        (config, seed), = sql(shared_env, "SELECT config, seed FROM arena_match WHERE id = %s", [match_id])
        config = config if isinstance(config, dict) else json.loads(config)
        assert events(shared_env, match_id) == one_arena_run(game, config, seed, bots), (match_id, game)


#: The bots' automatic tables: 20 paced games (about 30 s), so that both arenas' matches run
#: together whatever the machine's load.
LONG_AUTO_TABLES = {"ARENA_AUTO_TABLE_PACE": "0.05", "LIARS_DICE_AUTO_GAMES": "20"}


def test_kill_9_of_one_arena_leaves_the_other_untouched_and_its_work_is_recovered(arena_factory, shared_env):
    """kill -9 of arena 1 in the middle: arena 2's match goes on without a missed move or a
    freed seat; arena 1's running match is aborted once its lease expires; the table its bot
    waited at is freed, and that bot, connecting again, is seated at arena 2, where the match
    is played; nothing finished is lost."""
    a1 = start_arena(arena_factory, shared_env, "a1", **LONG_AUTO_TABLES)
    a2 = start_arena(arena_factory, shared_env, "a2", **LONG_AUTO_TABLES)
    web = arena_factory(role="web", env=shared_env)
    guest = Guest(web.url, "organiser")
    clients = []
    try:
        # Something finished first.
        quick = [guest.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1},
                                    ["builtin:random", "builtin:random"]) for _ in range(2)]
        finished_before = wait_until(lambda: all(matches(shared_env)[m][1] == "finished" for m in quick) and quick,
                                     60, "the quick matches finished")
        # Long paced matches at both arenas (bots over TCP: they play where they connected).
        survivors = [LDBot(a2.liars_dice_port, f"a2-bot-{i}") for i in range(2)]
        victims = [LDBot(a1.liars_dice_port, f"a1-bot-{i}") for i in range(2)]
        clients += survivors + victims
        wait_until(lambda: {r[2] for r in matches(shared_env).values() if r[1] == "running"} == {"a1", "a2"}, 30,
                   "a running match at each arena")
        # An open table of arena 1: one of its two bot seats taken by a bot that waits there.
        table = guest.create_table("liars_dice", {"players": 2, "dice": 2, "games": 1}, ["open_bot", "open_bot"])
        waiting = LDBot(a1.liars_dice_port, "waiter")
        clients.append(waiting)
        wait_until(lambda: matches(shared_env)[table][2] == "a1", 20, "the waiting bot's table held by a1")
        running_a1 = [m for m, r in matches(shared_env).items() if r[1] == "running" and r[2] == "a1"]
        running_a2 = [m for m, r in matches(shared_env).items() if r[1] == "running" and r[2] == "a2"]
        requests_before = [len(bot.received) for bot in survivors]

        a1.proc.kill()  # kill -9: no goodbye, its rows say it owns what it owned
        a1.proc.wait()
        killed_at = time.monotonic()

        # Arena 2's match went on all along.
        wait_until(lambda: all(len(bot.received) > n + 20 for bot, n in zip(survivors, requests_before)), 30,
                   "arena 2's bots still asked")
        # Arena 1's match is aborted once its lease expires (lease + a sweep, with room).
        aborted = wait_until(lambda: all(matches(shared_env)[m][1] == "aborted" for m in running_a1), LEASE_S * 5 + 10,
                             "arena 1's running match aborted")
        assert aborted and time.monotonic() - killed_at >= LEASE_S * 0.5
        for m in running_a1:
            (result,), = sql(shared_env, "SELECT result FROM arena_match WHERE id = %s", [m])
            assert "lease" in json.dumps(result), result
        for m in running_a2:
            assert matches(shared_env)[m][1:3] == ("running", "a2") or matches(shared_env)[m][1] == "finished"
        # The table arena 1 held is free again; its bot, connecting again, is seated at arena 2.
        wait_until(lambda: matches(shared_env)[table][2] == "", LEASE_S * 5 + 10, "the dead arena's table freed")
        back = [LDBot(a2.liars_dice_port, "waiter"), LDBot(a2.liars_dice_port, "second")]
        clients += back
        wait_until(lambda: matches(shared_env)[table][1:3] == ("finished", "a2"), 60,
                   "the table played at arena 2")
        # Arena 2's long match ends as it would have: every move answered, none forced.
        wait_until(lambda: all(matches(shared_env)[m][1] == "finished" for m in running_a2), 180, "arena 2's match over")
        for m in running_a2:
            forced = sql(shared_env, "SELECT count(*) FROM arena_event WHERE match_id = %s AND forced", [m])[0][0]
            assert forced == 0
        for m in finished_before:
            assert matches(shared_env)[m][1] == "finished"
    finally:
        for client in clients:
            client.close()
    assert "Traceback" not in a2.log()


def test_a_restart_of_one_arena_leaves_the_other_untouched(arena_factory, shared_env):
    """Arena 1 stopped and started again (same ports) while arena 2 plays: arena 2's match is
    untouched; arena 1's match ends aborted by its own stop; the new arena 1 plays again."""
    a1 = start_arena(arena_factory, shared_env, "a1", **LONG_AUTO_TABLES)
    a2 = start_arena(arena_factory, shared_env, "a2", **LONG_AUTO_TABLES)
    clients = []
    try:
        survivors = [LDBot(a2.liars_dice_port, f"a2-bot-{i}") for i in range(2)]
        victims = [LDBot(a1.liars_dice_port, f"a1-bot-{i}") for i in range(2)]
        clients += survivors + victims
        wait_until(lambda: {r[2] for r in matches(shared_env).values() if r[1] == "running"} == {"a1", "a2"}, 30,
                   "a running match at each arena")
        running_a1 = [m for m, r in matches(shared_env).items() if r[1] == "running" and r[2] == "a1"]
        running_a2 = [m for m, r in matches(shared_env).items() if r[1] == "running" and r[2] == "a2"]
        assert a1.stop() == 0
        for m in running_a1:
            assert matches(shared_env)[m][1] == "aborted"
        assert all(matches(shared_env)[m][1:3] == ("running", "a2") for m in running_a2)
        again = arena_factory(role="arena", env=a1.env, http_port=a1.http_port, liars_dice_port=a1.liars_dice_port,
                              blokus_port=a1.blokus_port, hanabi_port=a1.hanabi_port)
        n = len(matches(shared_env))
        clients += [LDBot(again.liars_dice_port, f"again-{i}") for i in range(2)]
        wait_until(lambda: any(r[2] == "a1" and r[1] in ("running", "finished") and m not in running_a1
                               for m, r in matches(shared_env).items()), 30, "the restarted arena plays")
        assert len(matches(shared_env)) > n
        assert all(matches(shared_env)[m][1] in ("running", "finished") and matches(shared_env)[m][2] == "a2"
                   for m in running_a2)
    finally:
        for client in clients:
            client.close()
