"""Several arenas on one host sharing the bot ports (issue 26): with ``ARENA_REUSE_PORT=1`` every
arena binds each bot port (TCP, and Hanabi's WebSocket port) with ``SO_REUSEPORT``, so two
arena processes listen on the same ports, the kernel gives each connection to one of them,
and each bot plays at the arena that accepted it."""
from __future__ import annotations

import re

import pytest

from tests.ld_bot import LDBot
from tests.serverproc import free_port, wait_until
from tests.test_scaled import scaled_env  # noqa: F401 (a fixture)

#: Bots connecting: all of them reaching one arena of two has a chance of 2 ** -23.
BOTS = 24


def seatings(log: str) -> dict[str, str]:
    """Bot name -> the table (match id) an arena's log says it seated that bot at."""
    return dict(re.findall(r"liars_dice bot (shared\d+) took seat \d+ of match (\d+)", log))


def played(log: str) -> list[list[str]]:
    """The players of each Liar's Dice match an arena's log says it started."""
    return [names.split(", ") for names in re.findall(r"\(liars_dice\) started: (.*)", log)]


def two_arenas_on_shared_ports(arena_factory, env: dict) -> tuple[list, int]:
    """Two ``--role arena`` processes with ``env`` and ``ARENA_REUSE_PORT=1`` on the same
    bot ports, both listening on every one; returns them and the Liar's Dice port."""
    ports = {"LIARS_DICE_PORT": free_port(), "BLOKUS_PORT": free_port(), "HANABI_PORT": free_port(),
             "BRIDGE_PORT": free_port(), "BRIDGE_TABLE_MANAGER_PORT": free_port()}
    env = dict(env, ARENA_REUSE_PORT="1", **{k: str(v) for k, v in ports.items()})
    same = {"liars_dice_port": ports["LIARS_DICE_PORT"], "blokus_port": ports["BLOKUS_PORT"],
            "hanabi_port": ports["HANABI_PORT"]}
    arenas = [arena_factory(role="arena", env=env, **same) for _ in range(2)]
    # The second's start checked ports that the first answers already: wait for its own.
    for arena in arenas:
        wait_until(lambda: arena.log().count("(shared: SO_REUSEPORT)") == 4
                   and "any path; shared: SO_REUSEPORT" in arena.log(), 60,
                   "every bot port listened on, shared", clock=arena.clock())
    return arenas, ports["LIARS_DICE_PORT"]


def bots_play_at_the_arena_that_accepted_them(arenas: list, port: int, one_database: bool) -> None:
    bots = [LDBot(port, f"shared{k}") for k in range(BOTS)]
    try:
        wait_until(lambda: sum(len(seatings(arena.log())) for arena in arenas) == BOTS, 60,
                   "every bot seated", clock=arenas[0].clock())
        took = [seatings(arena.log()) for arena in arenas]
        assert not took[0].keys() & took[1].keys(), "each bot seated once"
        assert took[0] and took[1], "the kernel gave connections to both arenas"
        if one_database:  # (else each counts its tables from 1)
            assert not set(took[0].values()) & set(took[1].values()), "no table has bots of both arenas"
        # Every bot but one left waiting per arena (an odd number there) plays, at its arena.
        wait_until(lambda: sum(len(match) for arena in arenas for match in played(arena.log()))
                   == sum(len(names) // 2 * 2 for names in took), 60, "the matches", clock=arenas[0].clock())
        for arena, names in zip(arenas, took):
            for match in played(arena.log()):
                assert set(match) <= names.keys(), "a match of the bots this arena accepted"
        players = {name for arena in arenas for match in played(arena.log()) for name in match}
        for k, bot in enumerate(bots):
            if f"shared{k}" in players:
                assert bot.closed.wait(60), "the match ended and its arena hung up"
                assert bot.round_overs(), "it played rounds at the arena that accepted it"
    finally:
        for bot in bots:
            bot.close()


def test_two_arenas_share_every_bot_port_with_reuse_port(arena_factory):
    """Each arena on a database of its own: the sharing of the ports alone."""
    arenas, port = two_arenas_on_shared_ports(arena_factory, {})
    bots_play_at_the_arena_that_accepted_them(arenas, port, one_database=False)


@pytest.mark.services
def test_two_arenas_on_one_database_share_the_bot_ports_and_seat_each_bot_where_it_connected(
        arena_factory, scaled_env):  # noqa: F811
    arenas, port = two_arenas_on_shared_ports(arena_factory, scaled_env)
    bots_play_at_the_arena_that_accepted_them(arenas, port, one_database=True)
