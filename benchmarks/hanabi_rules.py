"""The Hanabi rules engine: random games a second.

Plays seeded games of 2 to 5 players (the player count drawn at random each game) to their
end, each move drawn uniformly from the legal ones, in two ways:

- the fast sampler ``HanabiState.random_action`` (no list built), the engine alone;
- ``random.choice(legal_actions())`` plus one ``observation()`` per move, what a runner and
  a built-in bot cost per move.

Prints games/s, moves/s and the mean score of each, with the load average.

    .venv/bin/python benchmarks/hanabi_rules.py [SECONDS]
"""
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.hanabi import rules  # noqa: E402


def run(seconds: float, with_views: bool) -> tuple[int, int, float, float]:
    rng = random.Random(1)
    games = moves = score = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        state = rules.new_state({"players": rng.randint(2, 5)}, rng.randrange(2**32))
        while not state.is_terminal():
            seat = state.on_turn
            if with_views:
                state.observation(seat)
                action = rng.choice(state.legal_actions(seat))
            else:
                action = state.random_action(rng)
            state.apply({seat: action})
            moves += 1
        games += 1
        score += state.score()
    return games, moves, score / max(games, 1), time.perf_counter() - started


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} (1 min)")
    for label, with_views in (("engine (random_action)", False), ("with a view and the legal list per move", True)):
        games, moves, mean, elapsed = run(seconds, with_views)
        print(f"{label:42s} {games / elapsed:8.0f} games/s {moves / elapsed:9.0f} moves/s  mean score {mean:.2f}")


if __name__ == "__main__":
    main()
