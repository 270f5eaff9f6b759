"""A table's own thinking time per move (``Match.think_s``, the create-table form) replaces the
game's default bot deadline for that match: a person on HanabiFX (a bot-protocol client) needs
minutes, where ``HANABI_BOT_DEADLINE`` gives 10 s.  Tried over the real bot ports."""
from __future__ import annotations

import re
import sqlite3
import time

from tests.blokus_client import Player, random_move
from tests.hanabi_client import HanabiClient
from tests.human_client import Guest
from tests.jass_bot_service import BotService
from tests.ld_bot import LDBot, simple_move
from tests.serverproc import wait_until

#: The games' defaults, short: an answer after them would be forced without the table's time.
ENV = {"HANABI_BOT_DEADLINE": "0.5", "LIARS_DICE_BOT_DEADLINE": "0.5", "JASS_BOT_DEADLINE": "0.5",
       "BLOKUS_NO_TIMEOUT_HARD": "0.5"}
#: The table's thinking time, and how late the slow bot answers: well past the game's default,
#: well within the table's (the server stamps an answer when it reads it).
THINK_S, SLOW_S = 6, 1.5


def make_table(arena, game: str, fields: dict) -> int:
    ann = Guest(arena.url, "Ann")
    url = ann.post_form(f"/tables/new/{game}/", {"nickname": "Ann", "pace": "0", "think_s": str(THINK_S), **fields})
    match_id = int(re.search(r"/matches/(\d+)/", url).group(1))
    # The table says its thinking time, on its page and in the lobby.
    assert f"bots have {THINK_S} s to move" in ann.get(f"/matches/{match_id}/")
    assert f"bots have {THINK_S} s to move" in ann.get("/")
    return match_id


def seat_events(arena, match_id: int, seat: int, count: int) -> list[dict]:
    """The first ``count`` events of ``seat`` in the server's event log (read from its database,
    as they are written while the match runs)."""
    def read():
        with sqlite3.connect(arena.data_dir / "arena.sqlite3") as db:
            db.row_factory = sqlite3.Row
            rows = db.execute("SELECT forced, reason, think_ms FROM arena_event WHERE match_id = ? AND seat = ? "
                              "ORDER BY seq", (match_id, seat)).fetchall()
        return [dict(r) for r in rows] if len(rows) >= count else None

    return wait_until(read, 20, f"{count} events of seat {seat}")[:count]


def test_hanabi_a_slow_action_within_the_tables_time_counts_and_silence_past_it_is_forced(arena_factory):
    arena = arena_factory(env=ENV)
    match_id = make_table(arena, "hanabi", {"players": "2", "seat0": "open_bot", "seat1": "builtin:convention"})
    person = HanabiClient(arena.hanabi_port, "person-on-hanabifx", play=False)
    try:
        def my_turns():
            return [m for m in list(person.messages) if "game_state" in m
                    and m["game_state"]["next_player"] == person.name]

        first = wait_until(lambda: my_turns()[:1], 20, "the person's first turn")[0]
        time.sleep(SLOW_S)  # thinks longer than HANABI_BOT_DEADLINE, well within the table's time
        person.my_name = person.name
        person.send(person.choose(first["game_state"]))
        wait_until(lambda: len(my_turns()) >= 2, 20, "the person's second turn")
        seen = len(person.messages)
        # Says nothing: a card is discarded for them when the table's time is up.
        wait_until(lambda: any(m.get("msg_type") == "DISCARD_CARD_RESPONSE" for m in person.messages[seen:]),
                   THINK_S + 20, "the forced discard")
        mine = seat_events(arena, match_id, 0, 2)
    finally:
        person.close()
    assert not mine[0]["forced"] and mine[0]["think_ms"] >= SLOW_S * 1000, mine[0]
    assert mine[1]["forced"] and mine[1]["reason"] == f"no action within {THINK_S} s", mine[1]
    assert mine[1]["think_ms"] >= (THINK_S - 0.1) * 1000, mine[1]


def test_liars_dice_a_slow_answer_within_the_tables_time_counts_and_one_past_it_is_forced(arena_factory):
    arena = arena_factory(env=ENV)
    asked = []

    def decide(msg):
        asked.append(msg)
        if len(asked) == 1:
            time.sleep(SLOW_S)  # past LIARS_DICE_BOT_DEADLINE, within the table's time
            return simple_move(msg)
        return None  # then silence: the table's time runs out

    match_id = make_table(arena, "liars_dice", {"players": "2", "dice": "2", "games": "1",
                                                "seat0": "open_bot", "seat1": "builtin:random"})
    bot = LDBot(arena.liars_dice_port, "slow-bot", decide)
    try:
        wait_until(lambda: len(asked) >= 2, 30, "the second request")
        mine = seat_events(arena, match_id, 0, 2)
    finally:
        bot.close()
    assert not mine[0]["forced"] and mine[0]["think_ms"] >= SLOW_S * 1000, mine[0]
    assert mine[1]["forced"] and mine[1]["reason"] == f"no reply within {THINK_S} s", mine[1]
    assert mine[1]["think_ms"] >= (THINK_S - 0.1) * 1000, mine[1]


def test_blokus_a_slow_move_within_the_tables_time_counts_and_silence_past_it_loses_by_hard_timeout(arena_factory):
    arena = arena_factory(env=ENV)
    moves = []

    def decide(player, state, legal):
        moves.append(state)
        if len(moves) == 1:
            time.sleep(SLOW_S)  # past BLOKUS_NO_TIMEOUT_HARD, within the table's time
            return random_move(player, state, legal)
        return None  # then silence

    match_id = make_table(arena, "blokus", {"variant": "2021", "seat0": "open_bot", "seat1": "builtin:heuristic"})
    player = Player(arena.blokus_port, game_type="swc_2021_blokus", decide=decide)
    try:
        mine = seat_events(arena, match_id, 0, 2)
    finally:
        player.close()
    assert not mine[0]["forced"] and mine[0]["think_ms"] >= SLOW_S * 1000, mine[0]
    assert mine[1]["forced"] and f"innerhalb von {THINK_S} Sekunden" in mine[1]["reason"], mine[1]
    assert mine[1]["think_ms"] >= (THINK_S - 0.1) * 1000, mine[1]


def test_jass_a_slow_service_within_the_tables_time_counts_and_one_past_it_is_forced(arena_factory):
    arena = arena_factory(env=ENV)
    service = BotService(slow_s=THINK_S + 3)
    try:
        # North answers its first call after 1.5 s, then at once; East always after 9 s.
        ids = arena.shell(
            "from django.contrib.auth.models import User; from games.arena.models import RegisteredBot\n"
            "owner = User.objects.create_user('owner')\n"
            f"late = RegisteredBot.objects.create(owner=owner, game='jass', name='late', shared=True, "
            f"base_url='{service.url('late1500')}', path_style='kit')\n"
            f"slow = RegisteredBot.objects.create(owner=owner, game='jass', name='slow', shared=True, "
            f"base_url='{service.url('slow')}', path_style='kit')\n"
            "print(late.pk, slow.pk)").split()[-2:]
        match_id = make_table(arena, "jass", {"points_to_win": "1000", "seat0": f"registered:{ids[0]}",
                                              "seat1": f"registered:{ids[1]}", "seat2": "builtin:random",
                                              "seat3": "builtin:random"})
        north, east = seat_events(arena, match_id, 0, 1), seat_events(arena, match_id, 1, 1)
    finally:
        service.close()
    assert not north[0]["forced"] and north[0]["think_ms"] >= 1500, north[0]
    assert east[0]["forced"] and east[0]["reason"] == f"no answer within {THINK_S} s", east[0]
    assert east[0]["think_ms"] >= (THINK_S - 0.1) * 1000, east[0]
