"""Jass (Schieber) rules: standard Swiss Schieber as the HSLU server plays it (specs/jass-http.*).

Seats and order (notes, "Seats and order"): seats are the protocol's player numbers, so no
translation happens anywhere: 0 North, 1 East, 2 South, 3 West.  Teams are 0 = {N, S} and
1 = {E, W} (``team = seat & 1``).  Play runs counter-clockwise, the next player after ``p`` is
``(p + 3) % 4`` (N -> W -> S -> E).

A match is a sequence of deals ("games" in the protocol):

1. Deal: 36 cards, nine each, from the state's ``random.Random(seed)``.  The first dealer is
   drawn from the same generator; afterwards the deal passes in play order (the forehand of
   one deal deals the next).
2. Trump: the forehand (the player after the dealer) declares one of six trumps or pushes
   (schieben) to its partner ``(p + 2) % 4``, who must then declare.
3. Play: the forehand leads the first trick whoever declared; each trick's winner leads the
   next.  Legal cards (notes, "Legal cards"; :meth:`JassState.legal_mask`):

   - Obe-Abe / Une-Ufe: follow the led suit if you can, else anything.
   - A trump suit, trump led: follow with a trump, except that the trump Jack (Buur) is never
     forced: holding no trump but the Buur you may play anything.
   - A trump suit, another suit led: follow suit or play a trump; with no card of the led
     suit, anything.  No under-trumping: once a trump is in the trick you may not play a trump
     lower than the best one there, unless you hold nothing but trumps.  With the
     ``hslu_undertrump`` option (the HSLU server's and kit's check, off by default) the bar is
     the trump in the trick that is lowest by *plain* rank (A K Q J 10 9 8 7 6, so a Jack or
     9 counts as low there): a trump that beats that one in trump order may be played even
     when it is lower than the best trump in the trick.  Kit agents play by it (a forced move
     in about 3% of their games under the strict rule), and kit logs contain such plays.
4. Trick winner: the best trump if any was played, else the best card of the led suit
   (trump order J 9 A K Q 10 8 7 6; Obe-Abe and plain suits A K Q J 10 9 8 7 6; Une-Ufe
   6 7 8 9 10 J Q K A).
5. Points (notes, "Points"; table :data:`CARD_POINTS`): every mode totals 152 card points, the
   last trick adds 5 (157 per deal).  A team taking all nine tricks scores a Match: 100 more
   (257) when the ``match_bonus`` option is on (the default; the HSLU kit has no bonus).
   No multipliers, Weis or Stoeck (``SCHIEBER_1000``).
6. End (our choice, after Swisslos's rule for the 1000/2500 point games, which end "as soon as
   a team reaches the target"): points are counted trick by trick, and the match ends right
   after the trick (or the Match bonus) that brings a team's total to ``points_to_win``; that
   team wins.  Only the trick's winners score at that moment, so the winner is never in
   doubt.  The last deal may therefore be cut short.  With ``max_deals`` > 0 the match also
   ends after that many deals; the higher total wins, equal totals have no winner.

Actions (JSON-able; one actor per step):

- trump phase: an ``int`` 0-5, the protocol's trump codes (0 Diamonds, 1 Hearts, 2 Spades,
  3 Clubs, 4 Obe-Abe, 5 Une-Ufe), or the string ``"push"`` (the wire's 10);
- play phase: the card's protocol name, ``"DA"`` ... ``"C6"`` (:data:`CARD_NAMES`).

Cards are numbered 0-35 in the protocol's order (DA DK DQ DJ D10 D9 D8 D7 D6, then H, S, C);
hands are 36-bit masks, bit ``c`` for card ``c``.
"""
from __future__ import annotations

import random
from typing import Iterable, Mapping

from games.base import Action, State

# --- cards ----------------------------------------------------------------------------------
SUITS = "DHSC"
RANKS = ("A", "K", "Q", "J", "10", "9", "8", "7", "6")
CARD_NAMES: tuple[str, ...] = tuple(s + r for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}
SUIT_NAMES = ("Diamonds", "Hearts", "Spades", "Clubs")
SEAT_NAMES = ("North", "East", "South", "West")

DIAMONDS, HEARTS, SPADES, CLUBS, OBE_ABE, UNE_UFE = range(6)
TRUMPS = (DIAMONDS, HEARTS, SPADES, CLUBS, OBE_ABE, UNE_UFE)
TRUMP_NAMES = ("Diamonds", "Hearts", "Spades", "Clubs", "Obe-Abe", "Une-Ufe")
PUSH = "push"

TRICKS_PER_DEAL = 9
LAST_TRICK_BONUS = 5
MATCH_BONUS = 100
DEAL_POINTS = 157

ALL_CARDS = (1 << 36) - 1
BIT = tuple(1 << c for c in range(36))
SUIT_OF = tuple(c // 9 for c in range(36))
SUIT_MASK = tuple(0x1FF << (9 * s) for s in range(4))
NOT_SUIT_MASK = tuple(ALL_CARDS ^ m for m in SUIT_MASK)
BUUR = tuple(BIT[9 * s + 3] for s in range(4))  # the trump Jack of each suit

NEXT = (3, 0, 1, 2)  # counter-clockwise: the player after p is (p + 3) % 4
PARTNER = (2, 3, 0, 1)
_ACTOR = ((0,), (1,), (2,), (3,))

# Points by rank offset (A K Q J 10 9 8 7 6) (notes, "Points").
_PTS_TRUMP = (11, 4, 3, 20, 10, 14, 0, 0, 0)
_PTS_PLAIN = (11, 4, 3, 2, 10, 0, 0, 0, 0)
_PTS_OBE = (11, 4, 3, 2, 10, 0, 8, 0, 0)
_PTS_UNE = (0, 4, 3, 2, 10, 0, 8, 0, 11)
#: ``CARD_POINTS[mode][card]``: the card's points when ``mode`` (0-5) is trump.
CARD_POINTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        (_PTS_OBE if mode == OBE_ABE else _PTS_UNE if mode == UNE_UFE
         else _PTS_TRUMP if SUIT_OF[c] == mode else _PTS_PLAIN)[c % 9]
        for c in range(36)
    )
    for mode in TRUMPS
)

# Strength within a suit by rank offset, higher wins.
_TRUMP_STRENGTH = (6, 5, 4, 8, 3, 7, 2, 1, 0)  # J 9 A K Q 10 8 7 6
_NATURAL_STRENGTH = (8, 7, 6, 5, 4, 3, 2, 1, 0)  # A K Q J 10 9 8 7 6
_UNE_STRENGTH = (0, 1, 2, 3, 4, 5, 6, 7, 8)  # 6 7 8 9 10 J Q K A


def _power(mode: int, lead: int, c: int) -> int:
    """How strongly card ``c`` bids for a trick led in suit ``lead``: trumps above the led
    suit, other suits never win (-1)."""
    suit, rank = SUIT_OF[c], c % 9
    if mode < 4 and suit == mode:
        return 100 + _TRUMP_STRENGTH[rank]
    if suit != lead:
        return -1
    return (_UNE_STRENGTH if mode == UNE_UFE else _NATURAL_STRENGTH)[rank]


#: ``POWER[mode][lead_suit][card]``: the trick goes to the highest power (see :func:`_power`).
POWER = tuple(tuple(tuple(_power(m, lead, c) for c in range(36)) for lead in range(4)) for m in TRUMPS)

#: ``HIGHER_TRUMP[card]``: the cards of its suit that beat it when that suit is trump.
HIGHER_TRUMP = tuple(
    sum(BIT[d] for d in range(9 * SUIT_OF[c], 9 * SUIT_OF[c] + 9)
        if _TRUMP_STRENGTH[d % 9] > _TRUMP_STRENGTH[c % 9])
    for c in range(36)
)

# Card names of every 9-bit pattern of each suit, so a mask becomes a list in four lookups.
_SUIT_NAMES = tuple(
    tuple(tuple(CARD_NAMES[9 * s + i] for i in range(9) if pattern >> i & 1) for pattern in range(512))
    for s in range(4)
)


def mask_to_names(mask: int) -> list[str]:
    """The card names in ``mask`` (36-bit), in protocol order (DA first, C6 last)."""
    d, h, s, c = _SUIT_NAMES
    return [*d[mask & 511], *h[mask >> 9 & 511], *s[mask >> 18 & 511], *c[mask >> 27 & 511]]


def names_to_mask(names: Iterable[str]) -> int:
    """The 36-bit mask of card names; raises ``ValueError`` for an unknown or repeated name."""
    mask = 0
    for name in names:
        c = CARD_INDEX.get(name) if isinstance(name, str) else None
        if c is None:
            raise ValueError(f"{name!r} is not a card name (DA, DK, ..., D10, ..., C6)")
        if mask & BIT[c]:
            raise ValueError(f"card {name} appears twice")
        mask |= BIT[c]
    return mask


def trick_winner(cards: list[int] | tuple[int, ...], first: int, trump: int) -> int:
    """The seat that wins a complete trick of card numbers played from ``first`` on (rule 4)."""
    power = POWER[trump][SUIT_OF[cards[0]]]
    best, seat, winner = -2, first, first
    for c in cards:
        p = power[c]
        if p > best:
            best, winner = p, seat
        seat = NEXT[seat]
    return winner


def trick_points(cards: Iterable[int], trump: int, last: bool) -> int:
    """Card points of a trick under ``trump``, plus 5 for the deal's last trick (rule 5)."""
    pts = CARD_POINTS[trump]
    return sum(pts[c] for c in cards) + (LAST_TRICK_BONUS if last else 0)


def legal_cards(hand: int, trick: list[int] | tuple[int, ...], trump: int) -> int:
    """The legal cards (a mask) for ``hand`` when ``trick`` (card numbers, lead first) is on
    the table under ``trump`` 0-5 (rule 3).  Never empty for a non-empty hand."""
    if not trick:
        return hand
    lead = SUIT_OF[trick[0]]
    if trump >= 4:
        follow = hand & SUIT_MASK[lead]
        return follow or hand
    if lead == trump:
        trumps = hand & SUIT_MASK[trump]
        return trumps if trumps and trumps != BUUR[trump] else hand
    power = POWER[trump][lead]
    best = max(trick, key=power.__getitem__)
    return _legal_off_lead(hand, lead, trump, best)


def _legal_off_lead(hand: int, lead: int, trump: int, best: int) -> int:
    """Rule 3 when a suit other than trump was led and ``best`` leads the trick so far."""
    follow = hand & SUIT_MASK[lead]
    if SUIT_OF[best] == trump:
        others = hand & NOT_SUIT_MASK[trump]
        if not others:  # nothing but trumps: any of them, under-trumps included
            return hand
        return (follow or others) | (hand & HIGHER_TRUMP[best])
    if follow:
        return follow | (hand & SUIT_MASK[trump])
    return hand


# --- configuration --------------------------------------------------------------------------
DEFAULT_CONFIG = {"points_to_win": 1000, "match_bonus": True, "max_deals": 0, "hslu_undertrump": False}
MAX_POINTS_TO_WIN = 100_000
MAX_DEALS = 1000


def normalize_config(config: Mapping | None) -> dict:
    """Validate and complete a match configuration.

    Keys: ``points_to_win`` (1-100000, default 1000), ``match_bonus`` (bool or 0/1, default
    on: 100 extra points for taking all nine tricks), ``max_deals`` (0-1000, default 0 = no
    limit), ``hslu_undertrump`` (bool or 0/1, default off: the under-trumping bar of rule 3),
    and optionally ``deals``: preset deals played before any shuffled one, each
    ``{"dealer": 0-3, "hands": [[9 card names] x 4]}`` (imported logs replay through this).
    Unknown keys are ignored.  Raises ``ValueError`` naming the bad key.
    """
    merged = dict(DEFAULT_CONFIG)
    merged.update(config or {})
    out = {}
    for key, low, high in (("points_to_win", 1, MAX_POINTS_TO_WIN), ("max_deals", 0, MAX_DEALS)):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{key} must be a whole number from {low} to {high}, got {value!r}")
        out[key] = value
    bonus = merged["match_bonus"]
    if bonus not in (True, False, 0, 1) or isinstance(bonus, float):
        raise ValueError(f"match_bonus must be true/false (or 1/0), got {bonus!r}")
    out["match_bonus"] = bool(bonus)
    undertrump = merged["hslu_undertrump"]
    if undertrump not in (True, False, 0, 1) or isinstance(undertrump, float):
        raise ValueError(f"hslu_undertrump must be true/false (or 1/0), got {undertrump!r}")
    out["hslu_undertrump"] = bool(undertrump)
    if merged.get("deals"):
        out["deals"] = _normalize_deals(merged["deals"])
    return out


def _normalize_deals(deals) -> list[dict]:
    if not isinstance(deals, list) or len(deals) > MAX_DEALS:
        raise ValueError(f"deals must be a list of at most {MAX_DEALS} deals")
    out = []
    for i, deal in enumerate(deals):
        if not isinstance(deal, Mapping) or type(deal.get("dealer")) is not int or not 0 <= deal["dealer"] <= 3:
            raise ValueError(f"deal {i + 1}: needs a dealer 0-3")
        hands = deal.get("hands")
        if not isinstance(hands, list) or len(hands) != 4 or any(not isinstance(h, list) or len(h) != 9 for h in hands):
            raise ValueError(f"deal {i + 1}: needs four hands of nine cards")
        masks = [names_to_mask(h) for h in hands]
        if masks[0] | masks[1] | masks[2] | masks[3] != ALL_CARDS:
            raise ValueError(f"deal {i + 1}: the hands must hold each of the 36 cards once")
        out.append({"dealer": deal["dealer"], "hands": [mask_to_names(m) for m in masks]})
    return out


_TRUMP_PHASE, _PLAY_PHASE, _OVER = 0, 1, 2
_PHASE_NAMES = ("trump", "play", "over")


def _hand_sizes(done: int, first: int, played: int) -> list[int]:
    """The four hand sizes after ``done`` finished tricks and ``played`` cards of the current
    trick, led by ``first``: every hand is dealt nine cards and gives one to each trick."""
    sizes = [TRICKS_PER_DEAL - done] * 4
    seat = first
    for _ in range(played):
        sizes[seat] -= 1
        seat = NEXT[seat]
    return sizes


# Lists the play phase's views share (class docstring): ``to_act`` by player, and
# ``hand_sizes`` by [finished tricks][first seat of the trick][cards played in it].
_TO_ACT_LISTS = ([0], [1], [2], [3])
_HAND_SIZES = tuple(
    tuple(tuple(_hand_sizes(done, first, played) for played in range(4)) for first in range(4))
    for done in range(TRICKS_PER_DEAL)
)


# What the scoreboard shows of each finished game: public once the game is over.
_SCOREBOARD_KEYS = ("deal", "dealer", "declarer", "forehand", "trump", "points", "match", "complete")


def _scoreboard_entry(record: dict) -> dict:
    """A deal record's entry in the views' ``games``: its :data:`_SCOREBOARD_KEYS`."""
    return {k: record[k] for k in _SCOREBOARD_KEYS}


class JassState(State):
    """One Schieber match.  Build with :func:`new_state` or :func:`new_state_from_deal`.

    Besides the :class:`games.base.State` API it offers, for the codec and for speed:
    :meth:`legal_mask` and :meth:`play_card_index` (bit-mask fast path), :meth:`why_illegal`
    (a message for a bot author), :meth:`deal_records` (finished deals, for logs and export).

    Views are built for the arena's runner, which asks for one or two per decision (the seat
    on turn's :meth:`observation`; the spectators' :meth:`public_observation`).  What changes
    only at a trump decision or a trick's end is kept ready: ``bases`` (the view's dict with
    those values, built once per deal and updated in place, since it is never handed out),
    ``wire_done`` (the deal's finished tricks in wire form) and ``games`` (the scoreboard); a
    view copies its base and adds what a card changes.  Each call returns a new dict, but the
    lists and dicts inside may be shared with other views (and with happenings and deal
    records; in the play phase ``to_act`` and ``hand_sizes`` are lists of the module, shared
    by every match): callers read them and never change them (tests/test_jass_views.py checks
    the built-in bots and the HTTP request body).  The state never changes a list or dict once
    a view holds it: views hold copies of the lists it appends to (``wire_done``,
    ``trick_names``), and it replaces ``games``, ``last_deal`` and the points lists rather
    than changing them.  The legal mask is computed once per move (``legal_cache``).  These
    derived fields are not pickled; loading rebuilds them (:meth:`__setstate__`).
    """

    num_seats = 4

    __slots__ = (
        "points_to_win", "match_bonus", "max_deals", "hslu_undertrump", "rng", "deal_number", "dealer",
        "forehand_player", "phase", "pushed", "trump", "declarer", "hands", "dealt", "player",
        "trick", "trick_first", "best_card", "best_power", "best_seat", "trick_pts", "power",
        "points_table", "tricks", "deal_points", "match_points", "tricks_won", "winner_team",
        "records", "last_deal", "preset",
        # derived (class docstring), rebuilt by __setstate__: the current trick's card names,
        # the finished tricks in wire form, the scoreboard, the legal mask (-1: not computed
        # this move), the views' bases (None: to build)
        "trick_names", "wire_done", "games", "legal_cache", "bases",
    )
    _DERIVED = ("trick_names", "wire_done", "games", "legal_cache", "bases")

    def __init__(self, config: Mapping | None, seed: int, hands: list[int] | None = None,
                 dealer: int | None = None):
        cfg = normalize_config(config)
        self.points_to_win = cfg["points_to_win"]
        self.match_bonus = cfg["match_bonus"]
        self.max_deals = cfg["max_deals"]
        self.hslu_undertrump = cfg["hslu_undertrump"]
        self.rng = random.Random(seed)
        self.deal_number = 0
        self.match_points = [0, 0]
        self.winner_team: int | None = None
        self.records: list[dict] = []
        self.games: list[dict] = []
        self.last_deal: dict | None = None
        self.preset = cfg.get("deals", [])
        if dealer is None:
            dealer = self.preset[0]["dealer"] if self.preset else self.rng.randrange(4)
        self._start_deal(dealer, hands)

    # --- chance -----------------------------------------------------------------------------
    def _start_deal(self, dealer: int, hands: list[int] | None = None) -> None:
        if hands is None and self.deal_number < len(self.preset):
            preset = self.preset[self.deal_number]
            dealer, hands = preset["dealer"], [names_to_mask(h) for h in preset["hands"]]
        if hands is None:
            # The cards' bits, shuffled as the card numbers 0-35 would be (the same draws, so a
            # seed deals the same hands as ever: replays depend on it), then summed per hand.
            deck = list(BIT)
            self.rng.shuffle(deck)
            hands = [sum(deck[0:9]), sum(deck[9:18]), sum(deck[18:27]), sum(deck[27:36])]
        self.deal_number += 1
        self.dealer = dealer
        self.forehand_player = NEXT[dealer]
        self.player = self.forehand_player
        self.phase = _TRUMP_PHASE
        self.pushed = False
        self.trump = -1
        self.declarer: int | None = None
        self.hands = list(hands)
        self.dealt = tuple(hands)
        self.trick: list[int] = []
        self.trick_names: list[str] = []
        self.wire_done: list[dict] = []
        self.trick_first = -1
        self.best_card = self.best_power = self.best_seat = -1
        self.trick_pts = 0
        self.power = self.points_table = None
        self.tricks: list[tuple[tuple[int, ...], int, int, int]] = []  # (cards, first, win, points)
        self.deal_points = [0, 0]
        self.tricks_won = [0, 0]
        self.legal_cache = -1
        self.bases = None

    # --- fast path --------------------------------------------------------------------------
    def legal_mask(self) -> int:
        """Legal cards of the player on turn as a 36-bit mask (0 outside the play phase);
        computed once per move (the runner asks for the legal actions, then apply checks)."""
        legal = self.legal_cache
        if legal >= 0:
            return legal
        hand = self.hands[self.player]
        trick = self.trick
        trump = self.trump
        if self.phase != _PLAY_PHASE:
            legal = 0
        elif not trick:
            legal = hand
        elif trump >= 4:
            legal = (hand & SUIT_MASK[SUIT_OF[trick[0]]]) or hand
        elif SUIT_OF[trick[0]] == trump:
            trumps = hand & SUIT_MASK[trump]
            legal = trumps if trumps and trumps != BUUR[trump] else hand
        else:
            legal = _legal_off_lead(hand, SUIT_OF[trick[0]], trump, self._undertrump_bar())
        self.legal_cache = legal
        return legal

    def _undertrump_bar(self) -> int:
        """The card a trump must beat (rule 3): the best in the trick, or with
        ``hslu_undertrump`` the trump there that is lowest in *plain* rank (the highest card
        number), exactly as the kit's ``RuleSchieber`` picks it (tests/test_jass_kit.py)."""
        best = self.best_card
        if not self.hslu_undertrump or SUIT_OF[best] != self.trump:
            return best
        return max(c for c in self.trick if SUIT_OF[c] == self.trump)

    def play_card_index(self, c: int) -> list[dict]:
        """Play card number ``c`` for the player on turn, unchecked (callers use
        :meth:`legal_mask`).  Returns the happenings as :meth:`apply` does."""
        seat = self.player
        self.hands[seat] ^= BIT[c]
        trick = self.trick
        if not trick:
            self.power = power = POWER[self.trump][SUIT_OF[c]]
            self.trick_first = seat
            self.best_card, self.best_power, self.best_seat = c, power[c], seat
        else:
            p = self.power[c]
            if p > self.best_power:
                self.best_card, self.best_power, self.best_seat = c, p, seat
        trick.append(c)
        self.trick_names.append(CARD_NAMES[c])
        self.trick_pts += self.points_table[c]
        self.legal_cache = -1
        if len(trick) == 4:
            return self._end_trick()
        self.player = NEXT[seat]
        return []

    def _end_trick(self) -> list[dict]:
        winner = self.best_seat
        team = winner & 1
        number = len(self.tricks) + 1
        last = number == TRICKS_PER_DEAL
        pts = self.trick_pts + (LAST_TRICK_BONUS if last else 0)
        names = self.trick_names
        self.tricks.append((tuple(self.trick), self.trick_first, winner, pts))
        self.wire_done.append({"cards": names, "points": pts, "win": winner, "first": self.trick_first})
        self.tricks_won[team] += 1
        self.deal_points[team] += pts
        self.match_points[team] += pts
        deal_points = list(self.deal_points)
        happenings = [{
            "type": "trick_over", "deal": self.deal_number, "trick": number,
            "cards": list(names), "first": self.trick_first, "win": winner,
            "points": pts, "deal_points": deal_points,
        }]
        match = None
        if last and self.tricks_won[team] == TRICKS_PER_DEAL:
            match = team
            if self.match_bonus:
                self.deal_points[team] += MATCH_BONUS
                self.match_points[team] += MATCH_BONUS
        self.trick = []
        self.trick_names = []
        self.trick_pts = 0
        self.best_card = self.best_power = -1
        if self.match_points[team] >= self.points_to_win:
            self.winner_team = team
        elif last and self.max_deals and self.deal_number >= self.max_deals:
            a, b = self.match_points
            self.winner_team = None if a == b else (0 if a > b else 1)
        elif not last:
            # The winner leads the next trick: the empty current trick's ``first`` is theirs
            # from now on (the kit's bots read the playing order from it).
            self.player = self.trick_first = winner
            self._rebase({"deal_points": deal_points, "match_points": list(self.match_points)})
            return happenings
        else:
            happenings.append(self._close_deal(match, complete=True))
            self._start_deal(NEXT[self.dealer])
            return happenings
        # the match is over
        happenings.append(self._close_deal(match, complete=last))
        self.phase = _OVER
        self.player = -1
        self.bases = None
        happenings.append({"type": "match_over", "winner_team": self.winner_team,
                           "match_points": list(self.match_points)})
        return happenings

    def _close_deal(self, match: int | None, complete: bool) -> dict:
        """Keep the finished deal's record; return its public ``deal_over`` happening."""
        record = {
            "deal": self.deal_number, "dealer": self.dealer, "forehand": 0 if self.pushed else 1,
            "declarer": self.declarer, "trump": self.trump, "tricks": self.wire_done,
            "points": list(self.deal_points), "match": match, "complete": complete,
        }
        self.last_deal = {"deal": record["deal"], "dealer": record["dealer"], "declarer": record["declarer"],
                          "trump": record["trump"], "points": record["points"], "match": match, "complete": complete}
        happening = {"type": "deal_over", **record, "match_points": list(self.match_points)}
        record["hands"] = [mask_to_names(h) for h in self.dealt]
        self.records.append(record)
        self.games = self.games + [_scoreboard_entry(record)]  # a new list: views hold the old one
        return happening

    # --- State API --------------------------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        """The one seat to act (trump declarer or card player); empty when terminal."""
        return () if self.phase == _OVER else _ACTOR[self.player]

    def is_legal(self, seat: int, action: Action) -> bool:
        """Whether ``action`` is legal for ``seat`` now (module docstring, "Actions")."""
        if seat != self.player or self.phase == _OVER:
            return False
        if self.phase == _PLAY_PHASE:
            c = CARD_INDEX.get(action) if type(action) is str else None
            return c is not None and bool(self.legal_mask() & BIT[c])
        if type(action) is int:  # bool is not a trump
            return 0 <= action <= 5
        return action == PUSH and not self.pushed

    def legal_actions(self, seat: int) -> list[Action]:
        """Trump codes 0-5 (and ``"push"`` for the forehand), or the legal card names in
        protocol order; empty for a seat not on turn."""
        if seat != self.player:
            return []
        if self.phase == _PLAY_PHASE:
            return mask_to_names(self.legal_mask())
        if self.phase == _OVER:
            return []
        return [0, 1, 2, 3, 4, 5] if self.pushed else [0, 1, 2, 3, 4, 5, PUSH]

    def why_illegal(self, seat: int, action: Action) -> str | None:
        """None if legal, else a sentence for the bot's author saying which rule refused it."""
        if self.phase == _OVER:
            return "the match is over"
        if seat != self.player:
            return f"it is {SEAT_NAMES[self.player]}'s turn, not {SEAT_NAMES[seat]}'s"
        if self.is_legal(seat, action):
            return None
        if self.phase == _TRUMP_PHASE:
            if action == PUSH:
                return "your partner pushed to you: declare a trump (0-5), you may not push back"
            return f"{action!r} is not a trump: use 0-3 (suits), 4 (Obe-Abe), 5 (Une-Ufe) or push"
        c = CARD_INDEX.get(action) if type(action) is str else None
        if c is None:
            return f"{action!r} is not a card name (DA, DK, DQ, DJ, D10, ... C6)"
        if not self.hands[seat] & BIT[c]:
            return f"you do not hold {action}; your hand: {' '.join(mask_to_names(self.hands[seat]))}"
        lead = SUIT_OF[self.trick[0]]
        if self.trump >= 4 or lead != self.trump and SUIT_OF[c] != self.trump:
            return f"{SUIT_NAMES[lead]} was led and you hold {SUIT_NAMES[lead]}: follow suit"
        if lead == self.trump:
            return f"trump ({SUIT_NAMES[lead]}) was led: play a trump (only the Jack is never forced)"
        return (f"no under-trumping: {action} is lower than the {CARD_NAMES[self._undertrump_bar()]} "
                "in the trick and you hold other cards")

    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Apply the answer of the seat on turn.  Raises ``ValueError`` if it is missing or
        illegal (the protocol's random replacement move is the runner's business).

        Returns the public happenings: ``trick_over`` after each trick, ``deal_over`` after
        each deal (also one cut short by the end of the match), ``match_over`` at the end.
        """
        phase = self.phase
        if phase == _OVER:
            raise ValueError("the match is over")
        seat = self.player
        try:
            action = actions[seat]
        except KeyError:
            raise ValueError(f"no action for seat {seat}") from None
        if phase == _PLAY_PHASE:
            c = CARD_INDEX.get(action) if type(action) is str else None
            legal = self.legal_cache  # usually computed already, for legal_actions
            if legal < 0:
                legal = self.legal_mask()
            if c is None or not legal & BIT[c]:
                raise ValueError(self.why_illegal(seat, action))
            return self.play_card_index(c)
        if not self.is_legal(seat, action):
            raise ValueError(self.why_illegal(seat, action))
        self.legal_cache = -1
        if action == PUSH:
            self.pushed = True
            self.player = PARTNER[seat]
        else:
            self.trump = action
            self.declarer = seat
            self.points_table = CARD_POINTS[action]
            self.phase = _PLAY_PHASE
            self.player = self.trick_first = self.forehand_player
        self._rebase({"forehand": self.forehand, "trump": self.trump, "declarer": self.declarer,
                      "phase": _PHASE_NAMES[self.phase]})
        return []

    # --- observations -----------------------------------------------------------------------
    @property
    def forehand(self) -> int:
        """The protocol's V0.2 ``forehand`` flag: -1 before the first trump decision, 1 if the
        forehand declared, 0 if it pushed."""
        if self.pushed:
            return 0
        return -1 if self.trump < 0 else 1

    def _bases(self) -> tuple[dict, dict]:
        """The views' values that change only at a trick's end or a trump decision, with
        placeholders (in their place in the key order) for those a card changes: the public
        view's 21 keys, and the same plus ``seat`` and ``hand`` for a seat's own (so that
        filling it in never grows the dict).  Built once per deal (and when the match ends);
        :meth:`_rebase` keeps them up to date in between."""
        public = {
            "deal_number": self.deal_number,
            "dealer": self.dealer,
            "forehand_player": self.forehand_player,
            "forehand": self.forehand,
            "trump": self.trump,
            "declarer": self.declarer,
            "phase": _PHASE_NAMES[self.phase],
            "current_player": None,  # per card
            "to_act": None,  # per card
            "tricks": None,  # per card
            "hand_sizes": None,  # per card
            "deal_points": list(self.deal_points),
            "match_points": list(self.match_points),
            "points_to_win": self.points_to_win,
            "match_bonus": self.match_bonus,
            "max_deals": self.max_deals,
            "hslu_undertrump": self.hslu_undertrump,
            "last_deal": self.last_deal,
            "games": self.games,
            "terminal": self.phase == _OVER,
            "winner_team": self.winner_team,
        }
        return public, {**public, "seat": None, "hand": None}

    def _rebase(self, changes: dict) -> None:
        """Put ``changes`` (what a trump decision or a trick's end changed) into the views'
        bases if they are built: cheaper than building them again, and safe, since they are
        never handed out."""
        if self.bases is not None:
            for base in self.bases:
                base.update(changes)

    def _view(self, own: int) -> dict:
        """A new view from the public base (``own`` 0) or the seat's (1), with what a card
        changes filled in: whose turn it is, the tricks in wire form (finished ones with
        ``points`` and ``win``, then in the play phase the current one, possibly
        ``"cards": []``) and the hand sizes (in the play phase from :data:`_HAND_SIZES`, which
        counts the cards played: no bit counts, no new list)."""
        bases = self.bases
        if bases is None:
            bases = self.bases = self._bases()
        view = bases[own].copy()  # keeps the key order; cheaper than building 21 keys
        player = self.player
        view["current_player"] = player
        if self.phase == _PLAY_PHASE:
            view["to_act"] = _TO_ACT_LISTS[player]
            view["tricks"] = self.wire_done + [{"cards": self.trick_names[:], "first": self.trick_first}]
            view["hand_sizes"] = _HAND_SIZES[len(self.tricks)][self.trick_first][len(self.trick)]
        else:
            view["to_act"] = [] if self.phase == _OVER else [player]
            view["tricks"] = self.wire_done[:]
            n, e, s, w = self.hands
            view["hand_sizes"] = [n.bit_count(), e.bit_count(), s.bit_count(), w.bit_count()]
        return view

    def observation(self, seat: int) -> dict:
        """Public facts plus ``seat`` and its own ``hand`` (names in protocol order).

        Shape: ``deal_number, dealer, forehand_player, forehand (-1/1/0), trump (-1..5),
        declarer, phase ("trump"/"play"/"over"), current_player (-1 when over), to_act,
        tricks (wire form), hand_sizes, deal_points [N-S, E-W], match_points, points_to_win,
        match_bonus, max_deals, last_deal, games, terminal, winner_team``.  ``games`` is the
        scoreboard: one entry per finished game, oldest first, ``deal, dealer, declarer,
        forehand (1 declared / 0 pushed), trump, points [N-S, E-W] incl. Match bonus, match
        (team or None), complete`` (False for a game cut short by the end of the match).
        """
        obs = self._view(1)
        obs["seat"] = seat
        obs["hand"] = mask_to_names(self.hands[seat])
        return obs

    def public_observation(self) -> dict:
        """What every seat may know: no hand at all."""
        return self._view(0)

    def revealed_observation(self) -> dict:
        """Public facts plus ``last_deal_hands``: the four hands as dealt of the last finished
        deal (None before the first one ends).  Cards of the deal in play stay hidden."""
        obs = self._view(0)
        obs["last_deal_hands"] = [list(h) for h in self.records[-1]["hands"]] if self.records else None
        return obs

    def full_observation(self) -> dict:
        """Public facts plus every current hand (``hands``) and the deal as dealt (``dealt``);
        for finished matches and replays only."""
        obs = self._view(0)
        obs["hands"] = [mask_to_names(h) for h in self.hands]
        obs["dealt"] = [mask_to_names(h) for h in self.dealt]
        return obs

    def is_terminal(self) -> bool:
        return self.phase == _OVER

    def result(self) -> dict:
        """``scores``: each seat's team total; ``winner``: the lower seat of the winning team
        (0 for N-S, 1 for E-W) or None; also ``winner_team``, ``winners`` (both seats),
        ``team_points`` [N-S, E-W] and ``deals`` played."""
        a, b = self.match_points
        team = self.winner_team
        return {
            "scores": [a, b, a, b],
            "winner": team,
            "winner_team": team,
            "winners": [] if team is None else [team, team + 2],
            "team_points": [a, b],
            "deals": self.deal_number,
        }

    def deal_records(self) -> list[dict]:
        """Every finished deal (cut short included): ``deal, dealer, forehand (1/0), declarer,
        trump, tricks (wire form), points [N-S, E-W] incl. Match bonus, match (team or None),
        complete, hands`` (as dealt).  The input of :func:`games.jass.protocol.game_log`."""
        return [dict(r) for r in self.records]

    def clone(self) -> "JassState":
        other = object.__new__(JassState)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.hands = list(self.hands)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.deal_points = list(self.deal_points)
        other.match_points = list(self.match_points)
        other.tricks_won = list(self.tricks_won)
        other.records = list(self.records)
        other.trick_names = list(self.trick_names)
        other.wire_done = list(self.wire_done)
        # nothing computed is carried over: a clone's fields may be changed directly (a test
        # turns hslu_undertrump off on one)
        other.legal_cache = -1
        other.bases = None
        return other

    def __getstate__(self) -> dict:
        """Pickled (replay snapshots): every field but the derived ones."""
        return {name: getattr(self, name) for name in self.__slots__ if name not in self._DERIVED}

    def __setstate__(self, state) -> None:
        """Load a pickle of :meth:`__getstate__`, or an older one without it (``(None,
        slots)``, written before the derived fields existed), and rebuild the derived fields."""
        if isinstance(state, tuple):
            state = state[1]
        for name, value in state.items():
            if name not in self._DERIVED:
                setattr(self, name, value)
        self.trick_names = [CARD_NAMES[c] for c in self.trick]
        self.wire_done = [{"cards": [CARD_NAMES[c] for c in cards], "points": pts, "win": win, "first": first}
                          for cards, first, win, pts in self.tricks]
        self.games = [_scoreboard_entry(r) for r in self.records]
        self.legal_cache = -1
        self.bases = None


def new_state(config: Mapping | None, seed: int) -> JassState:
    """A fresh match from a configuration (see :func:`normalize_config`) and an integer seed;
    the seed decides the first dealer and every deal."""
    return JassState(config or {}, seed)


def new_state_from_deal(config: Mapping | None, hands: list[list[str]], dealer: int,
                        seed: int = 0) -> JassState:
    """A match whose first deal is given: ``hands`` are four lists of nine card names (seat
    order N, E, S, W), ``dealer`` a seat 0-3; later deals come from ``seed``.  For tests,
    imported logs and replays.  Raises ``ValueError`` if the hands are not a deal."""
    if type(dealer) is not int or not 0 <= dealer <= 3:
        raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
    if len(hands) != 4:
        raise ValueError(f"need four hands, got {len(hands)}")
    masks = []
    for seat, hand in enumerate(hands):
        if len(hand) != 9:
            raise ValueError(f"{SEAT_NAMES[seat]} must hold 9 cards, got {len(hand)}")
        masks.append(names_to_mask(hand))
    if masks[0] | masks[1] | masks[2] | masks[3] != ALL_CARDS:
        raise ValueError("the four hands must hold each of the 36 cards once")
    return JassState(config or {}, seed, hands=masks, dealer=dealer)


def deal_actions(record: Mapping) -> list[tuple[int, Action]]:
    """The steps of one deal as ``(seat, action)`` pairs, trump decision(s) first, from a deal
    record (:meth:`JassState.deal_records` or :func:`games.jass.protocol.read_game_log`).
    Replaying them on :func:`new_state_from_deal` re-plays the deal."""
    forehand_player = NEXT[record["dealer"]]
    steps: list[tuple[int, Action]] = []
    if record["forehand"] == 0:
        steps.append((forehand_player, PUSH))
        steps.append((PARTNER[forehand_player], record["trump"]))
    else:
        steps.append((forehand_player, record["trump"]))
    for trick in record["tricks"]:
        seat = trick["first"]
        for card in trick["cards"]:
            steps.append((seat, card))
            seat = NEXT[seat]
    return steps
