"""A Liar's Dice bot that watches its own match from the web to see hidden dice.

``CheatingBot`` plays over TCP and keeps the spectator WebSocket of its own match open; when
the newest spectator view holds the dice of the round being played (``view["hands"]``), it
plays perfectly (challenges a false bid, bids only what is on the table), otherwise it plays
as the honest bot (``tests.ld_bot.simple_move``).  Before the fix it had its opponent's dice
before 451 of 451 answers and won 20 of 20.

Run: ``.venv/bin/python benchmarks/cheating_bot.py [--matches 20]``.  It starts a server
(``manage.py serve``), plays that many bots-only matches (2 players, 6 dice, 1 game, tables
created with the "every hand" option on, the strongest case) of the cheating bot against the
built-in probability bot, then as many of the honest bot, and prints both win rates and how
many answers the cheating bot gave knowing the dice in play.  Bar: the cheating bot wins no
more often than the honest one (within chance) and never knows the dice in play.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.ld_bot import LDBot, simple_move  # noqa: E402


def perfect_move(msg: dict, hands: list[list[int]]):
    """The move of a player who sees every die: challenge a bid the table does not hold,
    else (on turn) bid the largest true raise; pass when not on turn."""
    shown = {face: sum(hand.count(face) for hand in hands) for face in range(1, 7)}
    face, count = msg["last_bid"]
    if count and shown[face] < count:
        return "challenge"
    if msg["other_hands"][0][0] != 0:
        return "pass"
    true_raises = [(n, f) for f in range(1, 7) for n in range(max(count, 1), shown[f] + 1)
                   if n > count or f > face]
    if not true_raises:
        return [face + 1, count] if face < 6 else [1, count + 1]  # every raise is false: the smallest
    n, f = max(true_raises)
    return [f, n]


class Spectator:
    """The spectator WebSocket of one match, read on a thread; ``view`` is the newest view."""

    def __init__(self, base_url: str, match_id: int):
        from websockets.sync.client import connect

        self.view: dict | None = None
        self.ws = connect(base_url.replace("http://", "ws://") + f"/ws/matches/{match_id}/",
                          additional_headers={"Origin": base_url}, max_size=2**22)
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            with self.ws:
                for text in self.ws:
                    msg = json.loads(text)
                    if msg.get("type") in ("match.view", "match.final"):
                        self.view = msg["view"]
                    if msg.get("type") == "match.view":  # acknowledged, so views keep coming
                        self.ws.send(json.dumps({"type": "ack", "version": msg["version"]}))
        except Exception:  # noqa: BLE001  (closed: the match is over)
            pass

    def close(self) -> None:
        self.ws.close()


class CheatingBot(LDBot):
    """An LD bot that peeks at its match's spectator view (see the module docstring).

    ``peeks`` counts answers given while the view showed the dice in play, ``answers`` all."""

    def __init__(self, port: int, base_url: str, match_id, name: str = "cheater", seed: int = 0):
        """``match_id``: its match, or a callable that finds it once the match runs."""
        self.base_url, self.match_id = base_url, match_id
        self.spectator: Spectator | None = None  # opened at the first request: the match runs then
        self.rng = random.Random(seed)
        self.peeks = self.answers = 0
        super().__init__(port, name=name, decide=self.cheat)

    def dice_in_play(self, msg: dict) -> list[list[int]] | None:
        """Every hand of the round ``msg`` asks about, if the spectator view shows it."""
        view = self.spectator.view if self.spectator else None
        if not view or view.get("terminal") or not view.get("hands"):
            return None
        if (view.get("game_number"), view.get("round_number")) != (msg["game_number"], msg["round_number"]):
            return None
        return view["hands"]

    def cheat(self, msg: dict):
        self.answers += 1
        if self.spectator is None:
            mid = self.match_id() if callable(self.match_id) else self.match_id
            self.spectator, self.spectator_match = Spectator(self.base_url, mid), mid
        time.sleep(0.02)  # let the view of this very move arrive, as a patient cheater would
        hands = self.dice_in_play(msg)
        if hands is None:
            return simple_move(msg, self.rng)
        self.peeks += 1
        return perfect_move(msg, hands)


def play(arena, guest, make_bot) -> tuple[bool, LDBot]:
    """One bots-only match against the probability bot; returns (bot won, bot)."""
    match_id = guest.create_table("liars_dice", {"players": 2, "dice": 6, "games": 1, "omniscient": "on"},
                                  ["open_bot", "builtin:probability"])
    bot = make_bot(match_id)
    if not bot.closed.wait(120):
        raise RuntimeError(f"match {match_id} did not end")
    if getattr(bot, "spectator", None):
        bot.spectator.close()
    for _ in range(100):
        match = guest.get_json(f"/api/matches/{match_id}/")
        if match["status"] == "finished":
            break
        time.sleep(0.05)
    seat = next(s for s in match["seats"] if s["kind"] == "protocol")
    return match["result"]["winner"] == seat["index"], bot


def main() -> None:
    from tests.human_client import Guest
    from tests.serverproc import start_arena

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20)
    args = parser.parse_args()
    arena = start_arena(env={"ARENA_TABLES_PER_MINUTE": "100000"})
    try:
        guest = Guest(arena.url, "bench")
        cheat_wins = peeks = answers = 0
        for i in range(args.matches):
            won, bot = play(arena, guest, lambda mid, i=i: CheatingBot(arena.liars_dice_port, arena.url, mid, seed=i))
            cheat_wins += won
            peeks += bot.peeks
            answers += bot.answers
        honest_wins = 0
        for i in range(args.matches):
            rng = random.Random(i)
            won, _ = play(arena, guest, lambda mid: LDBot(arena.liars_dice_port, "honest",
                                                           decide=lambda msg: simple_move(msg, rng)))
            honest_wins += won
        n = args.matches
        print(f"cheating bot vs probability bot: won {cheat_wins} of {n} ({cheat_wins / n:.0%}); "
              f"knew the dice in play before {peeks} of {answers} answers")
        print(f"honest bot   vs probability bot: won {honest_wins} of {n} ({honest_wins / n:.0%})")
    finally:
        arena.stop()


if __name__ == "__main__":
    main()
