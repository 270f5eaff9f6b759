"""Hanabi rules as the arena plays them (specs/hanabi-ws.*, notes "Rules as the original plays
them", and our choices where the issue makes them).

- 50 cards: each colour has 1,1,1,2,2,3,3,4,4,5; 2-5 players; hands of 5 (2-3 players) or 4.
- 8 hint tokens; a hint costs one and needs one; a played 5 returns one below the maximum;
  a discard returns one below the maximum (discarding with all 8 in the box is legal).
- 3 error tokens counting down; the third misplay ends the game (the seed's rule; the
  original server ends only on a fourth).  A misplayed card goes to the discards.
- A hint names another player (our rule: the original lets a player hint themselves) and a
  colour or a number; one that touches no card is legal (everyone learns a negative fact).
  Touched cards learn the colour/number (and forget the ruled-out set of that kind, as the
  original does); the others of that hand rule it out.
- A card played or discarded is replaced in the same slot by the next card of the deck; once
  the deck is empty the hand shrinks.
- Final round, counted as the original counts it: the first action taken with the deck empty
  sets ``turns_left`` to ``players - 1``, each later one takes one off, and the game ends
  after the action that leaves 0: every player has exactly one more turn after the last card
  is drawn, its drawer included (it plays last).  ``turns_left`` is None until then.
- The game also ends when all 25 cards are played (nothing more can be gained; the original
  plays on to the final round, hanab.live ends there too).
- Score: the sum of the highest number played per colour, kept at a strike-out (the original
  does not zero it; hanab.live shows 0 for a strike-out).

Cards have ids 1..50 in deal order (seat 0's whole hand first, then seat 1's, then the deck
in drawing order), so an id says nothing of a face, and hanab.live's card ``order`` is
``id - 1``.  The original numbers cards before shuffling, which gives every face away.

Actions: ``["play", id]``, ``["discard", id]``, ``["color", seat, "RED"]``,
``["number", seat, 3]``.
"""
from __future__ import annotations

import random
from typing import Mapping

from games.base import Action, State

COLORS = ("RED", "YELLOW", "GREEN", "BLUE", "WHITE")  # hanab.live's suit order, WHITE as Purple
COLOR_INDEX = {c: i for i, c in enumerate(COLORS)}
NUMBER_COUNTS = {1: 3, 2: 2, 3: 2, 4: 2, 5: 1}
MIN_PLAYERS, MAX_PLAYERS = 2, 5
HINT_TOKENS_MAX = 8
ERR_TOKENS = 3
MAX_SCORE = 25
DECK = tuple((color, number) for color in COLORS for number, copies in NUMBER_COUNTS.items()
             for _ in range(copies))


def hand_size(players: int) -> int:
    """Cards in each hand at the deal: 5 for 2-3 players, 4 for 4-5."""
    return 5 if players <= 3 else 4


def normalize_config(config: Mapping | None) -> dict:
    """``{"players": 2..5}`` (default 2) and, for imported games, ``"deck"``: the 50 cards in
    deal order as ``[color, number]`` pairs, exactly the 50-card multiset.  Raises
    ``ValueError`` naming the field."""
    config = dict(config or {})
    players = config.get("players", 2)
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}")
    out = {"players": players}
    if config.get("deck") is not None:
        deck = config["deck"]
        if not isinstance(deck, (list, tuple)) or len(deck) != len(DECK):
            raise ValueError(f"deck must list {len(DECK)} cards")
        cards = []
        for card in deck:
            if (not isinstance(card, (list, tuple)) or len(card) != 2 or card[0] not in COLOR_INDEX
                    or type(card[1]) is not int or card[1] not in NUMBER_COUNTS):
                raise ValueError(f"deck: {card!r} is not a [colour, number] card")
            cards.append((card[0], card[1]))
        if sorted(cards) != sorted(DECK):
            raise ValueError("deck must hold each colour's 1,1,1,2,2,3,3,4,4,5 exactly")
        out["deck"] = [list(card) for card in cards]
    return out


def new_state(config: Mapping, seed: int) -> "HanabiState":
    """A new game: the deck shuffled with ``random.Random(seed)`` (or the config's ``deck``),
    dealt seat by seat (module docstring)."""
    config = normalize_config(config)
    if "deck" in config:
        faces = [tuple(card) for card in config["deck"]]
    else:
        faces = list(DECK)
        random.Random(seed).shuffle(faces)
    return HanabiState(config["players"], faces)


class HanabiState(State):
    """One game.  Card ``id`` has face ``faces[id - 1]``; per card the knowledge its holder
    has: the colour index known (-1: not), the number known (0: not), and bit masks of the
    colours (bit = colour index) and numbers (bit = number) ruled out."""

    __slots__ = ("num_seats", "faces", "hands", "deck", "discards", "fireworks_list", "hint_tokens",
                 "err_tokens", "on_turn", "turns_left", "history", "_known_color", "_known_number",
                 "_not_colors", "_not_numbers", "last", "_over")

    HINT_TOKENS_MAX = HINT_TOKENS_MAX

    def __init__(self, players: int, faces: list):
        self.num_seats = players
        self.faces = faces
        size = hand_size(players)
        self.hands = [list(range(seat * size + 1, seat * size + size + 1)) for seat in range(players)]
        self.deck = list(range(players * size + 1, len(faces) + 1))
        self.discards: list[int] = []
        self.fireworks_list = [0] * len(COLORS)
        self.hint_tokens = HINT_TOKENS_MAX
        self.err_tokens = ERR_TOKENS
        self.on_turn = 0
        self.turns_left: int | None = None
        self.history: list = []
        n = len(faces) + 1
        self._known_color = [-1] * n
        self._known_number = [0] * n
        self._not_colors = [0] * n
        self._not_numbers = [0] * n
        self.last: dict | None = None
        self._over: str | None = None  # why the game ended

    # --- reading -----------------------------------------------------------------------------
    @property
    def fireworks(self) -> dict[str, int]:
        """Colour -> highest number played (0: none), in :data:`COLORS` order."""
        return dict(zip(COLORS, self.fireworks_list))

    def score(self) -> int:
        """The sum of the highest number played per colour."""
        return sum(self.fireworks_list)

    def knowledge(self, card_id: int) -> dict:
        """What the holder of ``card_id`` knows of it: ``{"color": str|None, "number": int|None,
        "not_colors": [colours ruled out, COLORS order], "not_numbers": [ascending]}``."""
        known = self._known_color[card_id]
        not_colors, not_numbers = self._not_colors[card_id], self._not_numbers[card_id]
        return {"color": COLORS[known] if known >= 0 else None, "number": self._known_number[card_id] or None,
                "not_colors": [c for i, c in enumerate(COLORS) if not_colors >> i & 1],
                "not_numbers": [n for n in range(1, 6) if not_numbers >> n & 1]}

    def knowledge_key(self, card_id: int) -> tuple[int, int, int, int]:
        """:meth:`knowledge` as a small hashable key, cheap to read: two cards' knowledge is
        equal when their keys are (what the wire caches each card's encoding by)."""
        return (self._known_color[card_id], self._known_number[card_id], self._not_colors[card_id],
                self._not_numbers[card_id])

    def to_act(self) -> tuple[int, ...]:
        return () if self._over else (self.on_turn,)

    def is_terminal(self) -> bool:
        return self._over is not None

    def is_legal(self, seat: int, action: Action) -> bool:
        if self._over or seat != self.on_turn or type(action) is not list or not action:
            return False
        kind = action[0]
        if kind == "play" or kind == "discard":
            return len(action) == 2 and type(action[1]) is int and action[1] in self.hands[seat]
        if kind != "color" and kind != "number":
            return False
        if len(action) != 3 or self.hint_tokens <= 0:
            return False
        target, value = action[1], action[2]
        if type(target) is not int or not 0 <= target < self.num_seats or target == seat:
            return False
        if kind == "color":
            return value in COLOR_INDEX
        return type(value) is int and 1 <= value <= 5

    def legal_actions(self, seat: int) -> list[Action]:
        if self._over or seat != self.on_turn:
            return []
        hand = self.hands[seat]
        actions: list[Action] = [["play", cid] for cid in hand] + [["discard", cid] for cid in hand]
        if self.hint_tokens > 0:
            for target in range(self.num_seats):
                if target != seat:
                    actions += [["color", target, color] for color in COLORS]
                    actions += [["number", target, number] for number in range(1, 6)]
        return actions

    def random_action(self, rng: random.Random) -> Action:
        """A uniformly random legal action of the player on turn, without listing them all
        (the benchmark's sampler)."""
        seat = self.on_turn
        hand = self.hands[seat]
        cards = 2 * len(hand)
        hints = 10 * (self.num_seats - 1) if self.hint_tokens > 0 else 0
        k = rng.randrange(cards + hints)
        if k < cards:
            return ["play" if k < len(hand) else "discard", hand[k % len(hand)]]
        k -= cards
        target = k // 10
        if target >= seat:
            target += 1
        k %= 10
        return ["color", target, COLORS[k]] if k < 5 else ["number", target, k - 4]

    # --- playing -------------------------------------------------------------------------------
    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Apply the action of the player on turn; returns its happening (and a
        ``game_over`` one when it ends the game).  Raises ``ValueError`` for an illegal one."""
        seat = self.on_turn
        if self._over or set(actions) != {seat}:
            raise ValueError(f"seat {seat} must act, and only it")
        action = actions[seat]
        if not self.is_legal(seat, action):
            raise ValueError(f"illegal action {action!r} for seat {seat}")
        if not self.deck:  # the final round, as the original counts it
            self.turns_left = self.num_seats - 1 if self.turns_left is None else self.turns_left - 1
        self.history.append(action)
        kind = action[0]
        if kind == "play" or kind == "discard":
            happening = self._play(seat, action[1]) if kind == "play" else self._discard(seat, action[1])
        else:
            happening = self._hint(seat, action)
        self.last = happening
        out = [happening]
        if self.err_tokens == 0:
            self._over = "the third misplay"
        elif self.score() == MAX_SCORE:
            self._over = "all 25 cards played"
        elif self.turns_left == 0:
            self._over = "the final round is over"
        if self._over:
            out.append({"type": "game_over", "score": self.score(), "reason": self._over})
        else:
            self.on_turn = (seat + 1) % self.num_seats
        return out

    def _face(self, card_id: int) -> dict:
        color, number = self.faces[card_id - 1]
        return {"id": card_id, "color": color, "number": number}

    def _replace(self, seat: int, card_id: int) -> int | None:
        """Take ``card_id`` out of the hand; the next card of the deck takes its slot."""
        hand = self.hands[seat]
        slot = hand.index(card_id)
        if self.deck:
            hand[slot] = drawn = self.deck.pop(0)
            return drawn
        del hand[slot]
        return None

    def _play(self, seat: int, card_id: int) -> dict:
        color, number = self.faces[card_id - 1]
        c = COLOR_INDEX[color]
        drawn = self._replace(seat, card_id)
        success = self.fireworks_list[c] == number - 1
        if success:
            self.fireworks_list[c] = number
            if number == 5 and self.hint_tokens < HINT_TOKENS_MAX:
                self.hint_tokens += 1
        else:
            self.err_tokens -= 1
            self.discards.append(card_id)
        return {"type": "play", "seat": seat, "card": self._face(card_id), "success": success, "drawn": drawn}

    def _discard(self, seat: int, card_id: int) -> dict:
        drawn = self._replace(seat, card_id)
        self.discards.append(card_id)
        if self.hint_tokens < HINT_TOKENS_MAX:
            self.hint_tokens += 1
        return {"type": "discard", "seat": seat, "card": self._face(card_id), "drawn": drawn}

    def _hint(self, seat: int, action: list) -> dict:
        kind, target, value = action
        self.hint_tokens -= 1
        touched = []
        faces = self.faces
        if kind == "color":
            c = COLOR_INDEX[value]
            for cid in self.hands[target]:
                if faces[cid - 1][0] == value:
                    touched.append(cid)
                    self._known_color[cid] = c
                    self._not_colors[cid] = 0
                else:
                    self._not_colors[cid] |= 1 << c
            return {"type": "hint", "seat": seat, "target": target, "color": value, "touched": touched}
        for cid in self.hands[target]:
            if faces[cid - 1][1] == value:
                touched.append(cid)
                self._known_number[cid] = value
                self._not_numbers[cid] = 0
            else:
                self._not_numbers[cid] |= 1 << value
        return {"type": "hint", "seat": seat, "target": target, "number": value, "touched": touched}

    # --- views ---------------------------------------------------------------------------------
    def _card_view(self, cid: int, shown: bool) -> dict:
        knowledge = self.knowledge(cid)
        color, number = self.faces[cid - 1]
        return {"id": cid, "color": color if shown else knowledge["color"],
                "number": number if shown else knowledge["number"], "knowledge": knowledge}

    def _view(self, viewer: int | None, everything: bool) -> dict:
        """``viewer``: the seat whose own cards are hidden (None: every hand hidden as its
        owner sees it, unless ``everything``)."""
        hands = [[self._card_view(cid, everything or (viewer is not None and seat != viewer)) for cid in hand]
                 for seat, hand in enumerate(self.hands)]
        view = {"players": self.num_seats, "hand_size": hand_size(self.num_seats),
                "seat": viewer, "on_turn": None if self._over else self.on_turn, "turns_left": self.turns_left,
                "hint_tokens": self.hint_tokens, "hint_tokens_max": HINT_TOKENS_MAX, "err_tokens": self.err_tokens,
                "score": self.score(), "fireworks": self.fireworks, "hands": hands,
                "deck": list(self.deck), "deck_count": len(self.deck),
                "discards": [self._face(cid) for cid in self.discards],
                "last": self.last, "moves": len(self.history),
                "terminal": self._over is not None, "end_reason": self._over}
        if everything:
            view["deck_faces"] = [self._face(cid) for cid in self.deck]
        return view

    def observation(self, seat: int) -> dict:
        """What ``seat`` may know: every other hand's faces, its own only where hints told it."""
        return self._view(seat, False)

    def public_observation(self) -> dict:
        """What every player may see: each hand as its owner sees it."""
        return self._view(None, False)

    def full_observation(self) -> dict:
        """Everything, the deck's faces included (finished games and replays)."""
        return self._view(None, True)

    def result(self) -> dict:
        """Cooperative: every seat scores the team's score."""
        score = self.score()
        return {"scores": [float(score)] * self.num_seats, "winner": None, "score": score, "reason": self._over}

    def clone(self) -> "HanabiState":
        other = HanabiState.__new__(HanabiState)
        other.num_seats = self.num_seats
        other.faces = self.faces
        other.hands = [list(hand) for hand in self.hands]
        other.deck = list(self.deck)
        other.discards = list(self.discards)
        other.fireworks_list = list(self.fireworks_list)
        other.hint_tokens, other.err_tokens = self.hint_tokens, self.err_tokens
        other.on_turn, other.turns_left = self.on_turn, self.turns_left
        other.history = list(self.history)
        other._known_color = list(self._known_color)
        other._known_number = list(self._known_number)
        other._not_colors = list(self._not_colors)
        other._not_numbers = list(self._not_numbers)
        other.last, other._over = self.last, self._over
        return other
