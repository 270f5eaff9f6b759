"""Built-in Liar's Dice bots.  They see only their own observation, like any other seat.

Policies have the signature ``policy(observation, legal_actions, rng) -> action``.
"""
from __future__ import annotations

import random
from functools import lru_cache
from math import comb

from games.liars_dice.rules import BID, CHALLENGE, PASS


def random_bot(obs: dict, legal: list, rng: random.Random):
    """On turn: any legal action, uniformly (challenge or any raising bid).  Not on turn:
    never challenges, so it is a fair baseline rather than a constant challenger."""
    if obs["on_turn"] != obs["your_seat"]:
        return PASS
    return rng.choice(legal)


#: Entries kept by :func:`at_least`'s cache: ``(k, n)`` pairs with ``k <= n`` are at most
#: (dice on the table)^2, 120 x 120 at the largest table, so this holds every pair of a match.
AT_LEAST_CACHE = 16_384


@lru_cache(maxsize=AT_LEAST_CACHE)
def at_least(k: int, n: int) -> float:
    """P(at least ``k`` of ``n`` unseen dice show one given face), each with probability 1/6.

    Cached, boundedly: a standing bid may have any count up to 2**31 - 1, and the cache must
    not grow with whatever it is asked."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(comb(n, i) * (1 / 6) ** i * (5 / 6) ** (n - i) for i in range(k, n + 1))


def bid_probability(face: int, count: int, hand: list[int], total_dice: int) -> float:
    """P(the table shows at least ``count`` dice of ``face``), given our ``hand``."""
    if count > total_dice:  # past the table: certainly false (and not worth a cache entry)
        return 0.0
    return at_least(count - hand.count(face), total_dice - len(hand))


def probability_bot(obs: dict, legal: list, rng: random.Random):
    """Plays the odds.  On turn: challenge when the standing bid is less likely true than
    the best raise; otherwise make the most likely raise (ties: the lowest count, then a face
    we hold most of).  Not on turn: challenge another player's bid that is very likely false;
    never its own (whoever is right, the challenger and the bidder both lose the die: it could
    only lose, and its own best raise may well look unlikely in the window after it)."""
    hand = obs["your_hand"]
    total = sum(obs["dice_counts"])
    last = obs["last_bid"]
    p_last = bid_probability(last[0], last[1], hand, total) if last else 1.0
    if obs["on_turn"] != obs["your_seat"]:
        mine = obs["last_bidder"] == obs["your_seat"]
        return CHALLENGE if last and not mine and p_last < 0.2 else PASS
    best, best_p = None, -1.0
    for action in legal:
        if action == CHALLENGE:
            continue
        _, face, count = action
        p = bid_probability(face, count, hand, total)
        key = p + hand.count(face) * 1e-6 - count * 1e-9 + rng.random() * 1e-12
        if key > best_p:
            best, best_p = action, key
    if last and (best is None or 1.0 - p_last > best_p):
        return CHALLENGE
    return best if best is not None else CHALLENGE


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "probability": ("Probability bot", probability_bot),
}

__all__ = ["BUILTIN_BOTS", "random_bot", "probability_bot", "BID"]
