"""Built-in Hanabi bots: ``policy(observation, legal_actions, rng) -> action``.

They read only the observation of their seat (its own cards' faces are hidden unless hints
told them), as a bot over the protocol would.

- :func:`random_bot`: a uniformly random legal action.
- :func:`convention_bot`: natural meanings only, in this order: play a card whose every
  possible identity is playable; save the next player's chop (the oldest card no hint has
  touched) when it is critical (a 5, or the last copy of a card still needed) and they have
  nothing to play; hint a playable card to the next players, so that it becomes known
  playable (a number when all copies of that number still needed are playable, else what it
  lacks); discard a card known to be useless, else the chop; with every hint token in the box
  and nothing else to do, the hint that tells the most.  "Possible identities" are the
  colour/number pairs the card's knowledge allows, weighted by the copies not seen anywhere
  (played, discarded, in the other hands).
"""
from __future__ import annotations

import random

from games.hanabi.rules import COLORS, NUMBER_COUNTS

TOTAL = {(color, number): NUMBER_COUNTS[number] for color in COLORS for number in NUMBER_COUNTS}


def random_bot(obs: dict, legal: list, rng: random.Random):
    """Any legal action, uniformly."""
    return rng.choice(legal)


class _View:
    """What a seat can work out from its observation: who it is, what is still needed, and
    the possible identities of each card as its holder sees it."""

    def __init__(self, obs: dict):
        self.obs = obs
        self.me = obs["seat"]
        self.n = obs["players"]
        self.fireworks = obs["fireworks"]
        gone = {}
        for card in obs["discards"]:
            key = (card["color"], card["number"])
            gone[key] = gone.get(key, 0) + 1
        self.discarded = gone
        seen = dict(gone)
        for color, top in self.fireworks.items():
            for number in range(1, top + 1):
                seen[(color, number)] = seen.get((color, number), 0) + 1
        for seat, hand in enumerate(obs["hands"]):
            if seat != self.me:
                for card in hand:
                    key = (card["color"], card["number"])
                    seen[key] = seen.get(key, 0) + 1
        self.unseen = {key: TOTAL[key] - seen.get(key, 0) for key in TOTAL}

    def playable(self, color: str, number: int) -> bool:
        return self.fireworks[color] == number - 1

    def useless(self, color: str, number: int) -> bool:
        """Already played, or a lower card of its colour is gone for good."""
        if self.fireworks[color] >= number:
            return True
        return any(self.discarded.get((color, k), 0) == NUMBER_COUNTS[k]
                   for k in range(self.fireworks[color] + 1, number))

    def critical(self, color: str, number: int) -> bool:
        """Still needed, and its last copy."""
        return not self.useless(color, number) and TOTAL[(color, number)] - self.discarded.get((color, number), 0) == 1

    def possible(self, card: dict) -> list[tuple[str, int]]:
        """The identities ``card`` may have as its holder sees it (knowledge only)."""
        k = card["knowledge"]
        colors = [k["color"]] if k["color"] else [c for c in COLORS if c not in k["not_colors"]]
        numbers = [k["number"]] if k["number"] else [n for n in range(1, 6) if n not in k["not_numbers"]]
        return [(c, n) for c in colors for n in numbers]

    def chance_playable(self, card: dict) -> float:
        """How likely my own ``card`` is playable, each possible identity weighed by its
        copies not seen."""
        weights = [(key, self.unseen.get(key, 0)) for key in self.possible(card)]
        total = sum(w for _, w in weights)
        return sum(w for key, w in weights if self.playable(*key)) / total if total else 0.0

    def my_possible(self, card: dict) -> list[tuple[str, int]]:
        """My own card's possible identities, those with no copy left unseen ruled out."""
        options = [key for key in self.possible(card) if self.unseen.get(key, 0) > 0]
        return options or self.possible(card)


def _touched(card: dict) -> bool:
    k = card["knowledge"]
    return k["color"] is not None or k["number"] is not None


def _chop(hand: list[dict]) -> dict | None:
    untouched = [card for card in hand if not _touched(card)]
    return min(untouched, key=lambda c: c["id"]) if untouched else None


def convention_bot(obs: dict, legal: list, rng: random.Random):
    """The convention bot (module docstring)."""
    view = _View(obs)
    me, n = view.me, view.n
    hand = obs["hands"][me]
    tokens = obs["hint_tokens"]
    legal_set = {tuple(a) for a in legal}

    # 1. Play what is surely playable (the lowest number first: it opens the most).
    sure = [card for card in hand if all(view.playable(*key) for key in view.my_possible(card))]
    if sure:
        return ["play", min(sure, key=lambda c: (min(num for _, num in view.my_possible(c)), c["id"]))["id"]]

    # 1b. Play a touched card that is very likely playable (copies unseen weighed), while a
    # misplay would not end the game.
    if obs["err_tokens"] > 1:
        for card in sorted(hand, key=lambda c: c["id"], reverse=True):
            if _touched(card) and view.chance_playable(card) >= 0.6:
                return ["play", card["id"]]

    if tokens > 0:
        # 2. Save the next player's critical chop when they have nothing to play.
        nxt = (me + 1) % n
        their = obs["hands"][nxt]
        chop = _chop(their)
        knows_play = any(all(view.playable(*key) for key in view.possible(c)) for c in their)
        if chop is not None and not knows_play and view.critical(chop["color"], chop["number"]) \
                and not view.playable(chop["color"], chop["number"]):
            action = ["number", nxt, chop["number"]]
            if tuple(action) in legal_set:
                return action
        # 3. Make a playable card known playable, the nearest player first.
        for step in range(1, n):
            target = (me + step) % n
            hint = _play_hint(view, obs["hands"][target], target)
            if hint is not None and tuple(hint) in legal_set:
                return hint
        # 3b. Else tell a playable card half of what it needs, while tokens are plenty.
        if tokens >= 1:
            for step in range(1, n):
                target = (me + step) % n
                hint = _play_hint(view, obs["hands"][target], target, complete=False)
                if hint is not None and tuple(hint) in legal_set:
                    return hint

    # 4. Discard: a card known useless, else the chop, else the oldest card.
    if tokens < obs["hint_tokens_max"]:
        dead = [card for card in hand if all(view.useless(*key) for key in view.my_possible(card))]
        if dead:
            return ["discard", dead[0]["id"]]
        chop = _chop(hand)
        if chop is not None:
            return ["discard", chop["id"]]
        safe = [card for card in hand if not any(view.critical(*key) for key in view.my_possible(card))]
        return ["discard", min(safe or hand, key=lambda c: c["id"])["id"]]

    # 5. Every token in the box: the hint that tells the most (touches the most cards).
    best, touched = None, -1
    for action in legal:
        if action[0] in ("color", "number"):
            cards = obs["hands"][action[1]]
            count = sum(1 for c in cards if (c["color"] if action[0] == "color" else c["number"]) == action[2]
                        and not c["knowledge"][action[0]])
            if count > touched:
                best, touched = action, count
    return best if best is not None else rng.choice(legal)


def _play_hint(view: _View, hand: list[dict], target: int, complete: bool = True) -> list | None:
    """A hint after which a playable card of ``hand`` is known playable to its holder (with
    ``complete=False``: one that tells a playable card something it did not know, to be
    completed later), and no other card of the hand would look surely playable wrongly; None
    if there is none."""
    for card in sorted(hand, key=lambda c: (c["number"], c["id"])):
        color, number = card["color"], card["number"]
        if not view.playable(color, number) or all(view.playable(*key) for key in view.possible(card)):
            continue
        for kind, value in (("number", number), ("color", color)):
            if card["knowledge"][kind] is None and _after_hint_safe(view, hand, card, kind, value, complete):
                return [kind, target, value]
    return None


def _after_hint_safe(view: _View, hand: list[dict], card: dict, kind: str, value, complete: bool = True) -> bool:
    """Whether after hinting ``kind``/``value`` the target sees ``card`` as surely playable
    (unless not ``complete``) and sees no other card as surely playable that is not."""
    for other in hand:
        k = dict(other["knowledge"])
        matches = other[kind] == value
        if kind == "color":
            k = {**k, "color": value} if matches else {**k, "not_colors": k["not_colors"] + [value]}
        else:
            k = {**k, "number": value} if matches else {**k, "not_numbers": k["not_numbers"] + [value]}
        options = view.possible({"knowledge": k})
        sure = bool(options) and all(view.playable(*key) for key in options)
        if other is card and complete and not sure:
            return False
        if other is not card and sure and not view.playable(other["color"], other["number"]):
            return False
    return True


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "convention": ("Convention bot", convention_bot),
}

__all__ = ["BUILTIN_BOTS", "random_bot", "convention_bot"]
