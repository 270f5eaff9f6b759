"""A tournament's entrant that connects (issue 27): a registered Liar's Dice bot over real TCP
against ``manage.py serve``.  It connects with its key once per match (the server closes a
Liar's Dice connection after its match, as the reference does); two connections at once play
two matches at once when the tournament allows it, and a connection whose next match is not
made yet waits for it, connected, rather than being seated at an automatic table."""
from __future__ import annotations

import json
import threading
import time

from tests.ld_bot import LDBot, simple_move
from tests.serverproc import wait_until

SETUP = """
from django.contrib.auth import get_user_model
from games.arena.bots import bot_keys
from games.arena.models import RegisteredBot
from games.arena.tournaments import schedule
user = get_user_model().objects.create(username="author")
key, key_hash = bot_keys.new_key()
bot = RegisteredBot.objects.create(owner=user, game="liars_dice", name="my-ld", key_hash=key_hash)
t = schedule.create(game="liars_dice", config={"players": 2, "dice": 2, "games": 1}, format="round_robin",
                    entrants=[f"registered:{bot.pk}", "builtin:probability"], per_pairing=4, at_once=AT_ONCE,
                    wait_s=30, created_by_id=user.pk)
print(json.dumps({"key": key, "tournament": t.pk}))
"""

STATE = """
from games.arena.models import Match, Tournament
from games.arena.tournaments import standings
from django.db.models import Max
t = Tournament.objects.get(pk=TID)
until = Match.objects.filter(tournament_game__tournament=t).aggregate(m=Max("created_at"))["m"]
table = standings.compute(t)
print(json.dumps({"status": t.status, "auto": Match.objects.filter(auto=True, created_at__lt=until).count(),
                  "rows": {r.name: [r.games, r.forfeits] for r in table.rows}}))
"""


def keyed_connections(port: int, key: str, stop: threading.Event, played: list) -> None:
    """Connect with the key, play one match, connect again: until ``stop``."""
    while not stop.is_set():
        bot = LDBot(port, name=None, decide=simple_move)
        bot.send_obj({"name": "my-ld", "key": key})
        if not bot.closed.wait(60):
            bot.close()
            raise AssertionError("a match of the tournament did not end within 60 s")
        if any(m.get("subject") == "move_request" for m in bot.received):
            played.append(len(bot.received))
        time.sleep(0.05)


def test_a_connecting_entrant_plays_each_match_on_a_connection_of_its_own_and_waits_for_the_next(arena_factory):
    arena = arena_factory(env={"LIARS_DICE_BOT_DEADLINE": "2"})
    setup = json.loads(arena.shell("import json\n" + SETUP.replace("AT_ONCE", "2")).strip().splitlines()[-1])
    stop = threading.Event()
    played: list = []
    # Three connections at once: two play (at_once 2), the third waits for a match to be made.
    threads = [threading.Thread(target=keyed_connections, args=(arena.liars_dice_port, setup["key"], stop, played),
                                daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()

    def state() -> dict:
        return json.loads(arena.shell("import json\n" + STATE.replace("TID", str(setup["tournament"])))
                          .strip().splitlines()[-1])

    try:
        wait_until(lambda: state()["status"] == "finished", 90, "the tournament's end", interval=0.5)
    finally:
        stop.set()
    final = state()
    assert final["rows"]["my-ld"] == [4, 0]  # four matches played, none forfeited
    # No connection was seated at an automatic table while the tournament had matches still
    # to make for it (once the last one is made, a spare connection is seated as any bot
    # without a tournament match is).
    assert final["auto"] == 0
    assert len(played) >= 4
