"""Liar's Dice rules as the reference simulator plays them (specs/liars-dice-tcp.*).

A match is ``games`` games with the same players; each game shuffles the play order and gives
everyone ``dice`` dice.  Every move asks *every* player still in the game at once; the answers
are settled in turn order (notes, "One move"):

1. a missing answer (``None``) loses the round, ``round_challenger`` none;
2. else the first ``"challenge"`` in turn order (player on turn first, previous bidder last) is
   resolved: the dice showing exactly the bid face (ones are not wild) are counted over all
   hands; if there are at least as many as bid the challenger loses a die, else the bidder.
   A challenge before any bid always fails;
3. else the player on turn must have made a valid raising bid, or loses the round.  Any count
   that raises is valid, as for the reference, also one larger than the dice on the table (a
   certainly false bid, which anyone may challenge): bots written for the reference raise the
   count by one whatever is left.  Counts stop at :data:`MAX_COUNT` (the codec's bound);
4. else the bid stands and the turn passes on.

Actions, per seat: ``["bid", face, count]``, ``"challenge"``, ``"pass"`` or ``None``.  Seats are
0-based here; the wire's 1-based relative ids are the codec's business.
"""
from __future__ import annotations

import random
from typing import Mapping

from games.base import Action, State

CHALLENGE = "challenge"
PASS = "pass"
BID = "bid"

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MAX_DICE = 20
MAX_GAMES = 1000
#: Largest count a bid may have (2**31 - 1, what a 32-bit integer holds).  The reference sets
#: none; the codec treats a larger number as a malformed reply, so the rules never hold one.
MAX_COUNT = 2**31 - 1
#: Bids of the round kept in the state and its views, the latest last (``bids_made`` counts
#: them all): with counts unbounded by the table a round may run on, and a view must not grow
#: with it.
RECENT_BIDS = 50

DEFAULT_CONFIG = {"players": 2, "dice": 6, "games": 1}


def normalize_config(config: Mapping | None) -> dict:
    """Validate and complete a match configuration.

    Keys: ``players`` (2-6), ``dice`` per player (1-20), ``games`` per match (1-1000).
    Raises ``ValueError`` naming the bad key.
    """
    merged = dict(DEFAULT_CONFIG)
    merged.update(config or {})
    out = {}
    for key, low, high in (("players", MIN_PLAYERS, MAX_PLAYERS), ("dice", 1, MAX_DICE), ("games", 1, MAX_GAMES)):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{key} must be a whole number from {low} to {high}, got {value!r}")
        out[key] = value
    return out


def bid_raises(old_face: int, old_count: int, face: int, count: int) -> bool:
    """The reference's raise rule: at least as many dice, and more dice or a higher face."""
    return count >= old_count and (count > old_count or face > old_face)


def is_valid_bid(action: Action, last_bid: tuple[int, int]) -> bool:
    """Whether ``action`` is ``["bid", face, count]`` with face 1-6 and count from 1 to
    :data:`MAX_COUNT`, raising ``last_bid`` (``(0, 0)`` before the round's first bid) by
    :func:`bid_raises`: the reference's rule, whatever the dice on the table (notes, "Bids and
    challenges")."""
    if not (isinstance(action, list) and len(action) == 3 and action[0] == BID):
        return False
    face, count = action[1], action[2]
    if type(face) is not int or type(count) is not int:  # bools and floats are not dice
        return False
    return (1 <= face <= 6 and 1 <= count <= MAX_COUNT
            and bid_raises(last_bid[0], last_bid[1], face, count))


class LiarsDiceState(State):
    """One Liar's Dice match.  Build with :func:`new_state`."""

    __slots__ = (
        "num_seats", "dice_per_player", "games", "rng", "game_number", "round_number",
        "move_number", "order", "counts", "hands", "on_turn", "last_bid", "last_bidder",
        "bids", "bids_made", "wins", "last_round", "terminal", "_to_act",
    )

    def __init__(self, config: Mapping, seed: int):
        cfg = normalize_config(config)
        self.num_seats = cfg["players"]
        self.dice_per_player = cfg["dice"]
        self.games = cfg["games"]
        self.rng = random.Random(seed)
        self.wins = [0] * self.num_seats
        self.game_number = 0
        self.last_round: dict | None = None
        self.terminal = False
        self._start_game()

    # --- chance -----------------------------------------------------------------------------
    def _start_game(self) -> None:
        self.game_number += 1
        self.round_number = 0
        self.order = list(range(self.num_seats))
        self.rng.shuffle(self.order)
        self.counts = [self.dice_per_player] * self.num_seats
        self._start_round(self.order[0])

    def _start_round(self, starter: int) -> None:
        self.round_number += 1
        self.move_number = 1
        rng = self.rng
        self.hands = [sorted(rng.randint(1, 6) for _ in range(n)) for n in self.counts]
        self.on_turn = starter
        self.last_bid = (0, 0)
        self.last_bidder: int | None = None
        self.bids: list[list[int]] = []  # [seat, face, count], the last RECENT_BIDS of the round
        self.bids_made = 0
        self._to_act = self._alive_from(starter)

    def _alive_from(self, seat: int) -> tuple[int, ...]:
        """Players with dice, in play order, starting at ``seat`` (which must have dice)."""
        order = self.order
        i = order.index(seat)
        rotated = order[i:] + order[:i]
        return tuple(s for s in rotated if self.counts[s] > 0)

    def _next_alive_after(self, seat: int) -> int:
        order, n = self.order, len(self.order)
        i = order.index(seat)
        for k in range(1, n + 1):
            s = order[(i + k) % n]
            if self.counts[s] > 0:
                return s
        raise AssertionError("no player has dice")

    # --- State API --------------------------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        """Every player still in the game, player on turn first, previous bidder last."""
        return () if self.terminal else self._to_act

    def is_legal(self, seat: int, action: Action) -> bool:
        """Any answer is acceptable from a player asked (bad ones lose the round by rule)."""
        return seat in self.to_act()

    def legal_actions(self, seat: int) -> list[Action]:
        """Sensible answers: challenge (once there is a bid) and every raising bid up to all
        dice on the table, for the player on turn (higher counts are valid too, but certainly
        false: only challenge is left after one); ``"pass"`` and challenge otherwise."""
        if seat not in self.to_act():
            return []
        challenge = [CHALLENGE] if self.last_bid != (0, 0) else []
        if seat != self.on_turn:
            return [PASS] + challenge
        total = sum(self.counts)
        old_face, old_count = self.last_bid
        bids = [
            [BID, face, count]
            for count in range(max(old_count, 1), total + 1)
            for face in range(1, 7)
            if bid_raises(old_face, old_count, face, count)
        ]
        return challenge + bids

    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Settle one move (module docstring, steps 1-4).  ``actions`` needs every seat of
        ``to_act()``; raises ``ValueError`` otherwise.  Returns ``[round_over]`` when the
        round ended, else ``[]``."""
        actors = self.to_act()
        if not actors:
            raise ValueError("the match is over")
        missing = [s for s in actors if s not in actions]
        if missing:
            raise ValueError(f"no action for seats {missing}")
        for seat in actors:  # 1. no valid answer
            if actions[seat] is None:
                return self._end_round(loser=seat, challenger=None, reason="no_answer")
        for seat in actors:  # 2. first challenge in turn order
            if actions[seat] == CHALLENGE:
                face, count = self.last_bid
                if count == 0:
                    return self._end_round(loser=seat, challenger=seat, reason="challenge")
                shown = sum(hand.count(face) for hand in self.hands)
                loser = seat if shown >= count else self.last_bidder
                return self._end_round(loser=loser, challenger=seat, reason="challenge", shown=shown)
        bid = actions[self.on_turn]  # 3. the player on turn must raise
        if not is_valid_bid(bid, self.last_bid):
            return self._end_round(loser=self.on_turn, challenger=None, reason="invalid_move")
        self.last_bid = (bid[1], bid[2])  # 4. the bid stands
        self.last_bidder = self.on_turn
        self.bids.append([self.on_turn, bid[1], bid[2]])
        self.bids_made += 1
        if len(self.bids) > RECENT_BIDS:
            del self.bids[0]
        self.on_turn = self._next_alive_after(self.on_turn)
        self.move_number += 1
        self._to_act = self._alive_from(self.on_turn)
        return []

    def _end_round(self, loser: int, challenger: int | None, reason: str, shown: int | None = None) -> list[dict]:
        """Take a die from ``loser``; start the next round, game, or end the match."""
        hands = [list(h) for h in self.hands]
        self.counts[loser] -= 1
        alive = [s for s in range(self.num_seats) if self.counts[s] > 0]
        winner = alive[0] if len(alive) == 1 else None
        happening = {
            "type": "round_over",
            "game_number": self.game_number,
            "round_number": self.round_number,
            "state": [[s, self.counts[s]] for s in range(self.num_seats)],
            "round_loser": loser,
            "round_challenger": challenger,
            "game_winner": winner,
            "reason": reason,
            "bid": list(self.last_bid) if self.last_bidder is not None else None,
            "bidder": self.last_bidder,
            "shown": shown,
            "hands": hands,
        }
        self.last_round = happening
        if winner is None:
            self._start_round(loser if self.counts[loser] > 0 else self._next_alive_after(loser))
        else:
            self.wins[winner] += 1
            if self.game_number < self.games:
                self._start_game()
            else:
                self.terminal = True
                self.on_turn = None
                self._to_act = ()
        return [happening]

    def _common(self) -> dict:
        return {
            "game_number": self.game_number,
            "games": self.games,
            "round_number": self.round_number,
            "move_number": self.move_number,
            "order": list(self.order),
            "dice_counts": list(self.counts),
            "on_turn": self.on_turn,
            "to_act": list(self.to_act()),
            "last_bid": list(self.last_bid) if self.last_bidder is not None else None,
            "last_bidder": self.last_bidder,
            "bids": [list(b) for b in self.bids],
            "bids_made": self.bids_made,
            "wins": list(self.wins),
            "last_round": self.last_round,
            "terminal": self.terminal,
        }

    def observation(self, seat: int) -> dict:
        """Public facts plus ``your_seat`` and ``your_hand`` (sorted, empty when out)."""
        obs = self._common()
        obs["your_seat"] = seat
        obs["your_hand"] = list(self.hands[seat]) if not self.terminal else []
        return obs

    def public_observation(self) -> dict:
        """Dice counts, bids and past rounds (whose hands were shown); no current hand.  It
        already reveals the round just over (``last_round.hands``), so it is also this game's
        :meth:`revealed_observation`."""
        return self._common()

    def full_observation(self) -> dict:
        """Public facts plus every current hand."""
        obs = self._common()
        obs["hands"] = [list(h) for h in self.hands] if not self.terminal else []
        return obs

    def is_terminal(self) -> bool:
        return self.terminal

    def result(self) -> dict:
        """``scores`` are games won per seat; ``winner`` the seat with most wins, or None on a tie."""
        best = max(self.wins)
        leaders = [s for s, w in enumerate(self.wins) if w == best]
        return {"scores": list(self.wins), "winner": leaders[0] if len(leaders) == 1 else None}

    def __setstate__(self, state) -> None:
        """Unpickling (replay snapshots): a snapshot written before ``bids_made`` existed kept
        every bid of its round, so their number is its length."""
        _, slots = state
        for name, value in slots.items():
            setattr(self, name, value)
        if "bids_made" not in slots:
            self.bids_made = len(self.bids)

    def clone(self) -> "LiarsDiceState":
        other = object.__new__(LiarsDiceState)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.order = list(self.order)
        other.counts = list(self.counts)
        other.hands = [list(h) for h in self.hands]
        other.bids = [list(b) for b in self.bids]
        other.wins = list(self.wins)
        return other


def new_state(config: Mapping | None, seed: int) -> LiarsDiceState:
    """A fresh match from a configuration (see :func:`normalize_config`) and an integer seed."""
    return LiarsDiceState(config or {}, seed)
