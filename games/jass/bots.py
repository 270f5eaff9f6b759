"""Built-in Jass (Schieber) bots.  They see only their own observation, like any other seat.

Policies have the arena's signature ``policy(observation, legal_actions, rng) -> action``
(:class:`games.arena.play.seats.BuiltinSeat`): ``observation`` is
:meth:`games.jass.rules.JassState.observation` for the bot's seat (its own ``hand``, the
public ``tricks`` in wire form, ``trump``, ``seat``, ``declarer``, ...), ``legal_actions`` is
:meth:`~games.jass.rules.JassState.legal_actions` (trump codes 0-5 and ``"push"`` in the trump
phase, card names in the play phase).  The answer is always one of ``legal_actions``.

- :func:`random_bot`: any legal action, uniformly (pushing included when it is legal).
- :func:`rule_bot`: estimates, from its hand, the point margin each of the six modes would
  bring (Buur, Nell, other trumps and their number, side Aces/Kings, short suits; for
  Obe-Abe/Une-Ufe the sure tricks at the top of each suit and the long suits they head;
  weights fitted by simulation) and declares the best, or pushes when the forehand's best
  estimate is below what pushing brings on average.  In play it counts the cards still out
  and the suits each seat has shown it lacks, smears points on a trick its partner will
  hold, wins tricks with the cheapest card that will hold (trumping only for points), pulls
  trumps with the top trump when its side declared, cashes sure winners, and otherwise gives
  away its cheapest card.  It thinks only with its observation and the rules engine's
  tables (no other hand), in well under a millisecond per decision
  (``benchmarks/jass_bots.py`` measures it and its margin over the random bot).
"""
from __future__ import annotations

import random

from games.jass.rules import (
    ALL_CARDS, BIT, CARD_INDEX, CARD_NAMES, CARD_POINTS, NEXT, OBE_ABE, PARTNER, POWER, PUSH,
    SUIT_MASK, SUIT_OF, TRICKS_PER_DEAL, TRUMPS, UNE_UFE,
)


def random_bot(obs: dict, legal: list, rng: random.Random):
    """Any legal action, uniformly: a trump code or ``"push"`` (when legal) in the trump
    phase, a legal card name in the play phase."""
    return rng.choice(legal)


# --- tables ---------------------------------------------------------------------------------
# Rank offsets within a suit: 0 A, 1 K, 2 Q, 3 J, 4 10, 5 9, 6 8, 7 7, 8 6.
_A, _K, _Q, _J, _10, _9, _8, _7, _6 = range(9)

#: ``_RANK_POWER[mode][c]``: strength of card ``c`` within its own suit (trump order for the
#: trump suit, which also gets +100): POWER when its own suit is led.
_RANK_POWER = tuple(tuple(POWER[m][SUIT_OF[c]][c] for c in range(36)) for m in TRUMPS)

#: ``_BEATERS[mode][lead][c]``: the cards that beat ``c`` in a trick led in suit ``lead``.
_BEATERS = tuple(
    tuple(
        tuple(
            sum(BIT[d] for d in range(36) if POWER[m][lead][d] > POWER[m][lead][c])
            for c in range(36)
        )
        for lead in range(4)
    )
    for m in TRUMPS
)

#: ``_SUIT_ORDER[mode][suit]``: the suit's cards from strongest to weakest under ``mode``.
_SUIT_ORDER = tuple(
    tuple(
        tuple(sorted(range(9 * s, 9 * s + 9), key=lambda c, m=m: -_RANK_POWER[m][c]))
        for s in range(4)
    )
    for m in TRUMPS
)

# Trump selection: a linear estimate of the declaring team's point margin in the deal (its
# points minus the opponents', Match bonus included) for each mode, from features of the hand.
# The weights were fitted by least squares on 10,000 deals played out in every mode by this
# bot against itself (R^2 0.28 for the suits, 0.17 for Obe-Abe/Une-Ufe: the partner's hand
# decides much of it), then rounded.
_SUIT_BASE = -70
#: A trump suit: each trump card by rank offset (A K Q J 10 9 8 7 6).
_TRUMP_CARD_VALUE = (27, 21, 20, 55, 18, 36, 15, 15, 15)
_FOURTH_TRUMP = 10      # the fourth trump ...
_LONG_TRUMP = 7         # ... and each one beyond it
_SIDE_ACE = 8           # an Ace of another suit
_SIDE_KING = 7          # a King of another suit with its Ace or at least one more card
_SHORT_SUIT = (2, 1)    # a void / singleton side suit, times the number of trumps (up to 4)
#: Obe-Abe / Une-Ufe: a card of the unbroken top sequence of its suit (a sure trick once led),
#: each further card of a suit headed by such a sequence, a guarded second-best card, a third
#: best with two guards, and a penalty per suit with a top sequence.
_TOPDOWN_BASE = -55
_MASTER_VALUE = 28
_LENGTH_VALUE = 5
_SECOND_GUARDED = 14
_THIRD_GUARDED = 5
_HEADED_SUIT = -4
#: The forehand pushes when no mode promises at least this margin: about what pushing to the
#: partner (who must then declare from its own hand) brings on average in the same play-outs.
PUSH_BELOW = 45


def _mask_of(names) -> int:
    mask = 0
    for n in names:
        mask |= BIT[CARD_INDEX[n]]
    return mask


def _mode_scores(hand: int) -> list[int]:
    """The estimated point margin of the declaring team (points per deal) for ``hand``
    (36-bit mask) in each of the six trump modes (0-5): suits by Buur, Nell and the other
    trumps, their number, side Aces and Kings and short side suits; Obe-Abe and Une-Ufe by
    sure tricks (top sequences), the long suits they head and guarded second/third cards."""
    counts = [(hand & SUIT_MASK[s]).bit_count() for s in range(4)]
    scores = []
    for t in range(4):
        n = counts[t]
        score = _SUIT_BASE
        base = 9 * t
        for r in range(9):
            if hand & BIT[base + r]:
                score += _TRUMP_CARD_VALUE[r]
        if n > 3:
            score += _FOURTH_TRUMP + (n - 4) * _LONG_TRUMP
        for s in range(4):
            if s == t:
                continue
            b = 9 * s
            if hand & BIT[b + _A]:
                score += _SIDE_ACE
                if hand & BIT[b + _K]:
                    score += _SIDE_KING
            elif hand & BIT[b + _K] and counts[s] >= 2:
                score += _SIDE_KING
            if counts[s] < 2:
                score += _SHORT_SUIT[counts[s]] * min(n, 4)
        scores.append(score)
    for mode in (OBE_ABE, UNE_UFE):
        score = _TOPDOWN_BASE
        for s in range(4):
            order = _SUIT_ORDER[mode][s]
            top = 0
            while top < 9 and hand & BIT[order[top]]:
                top += 1
            if top:
                score += top * _MASTER_VALUE + (counts[s] - top) * _LENGTH_VALUE + _HEADED_SUIT
            elif hand & BIT[order[1]]:
                if counts[s] >= 2:
                    score += _SECOND_GUARDED
            elif hand & BIT[order[2]] and counts[s] >= 3:
                score += _THIRD_GUARDED
        scores.append(score)
    return scores


def choose_trump(hand: int, may_push: bool) -> int | str:
    """The best-scoring mode for ``hand``, or ``"push"`` if pushing is allowed and no mode
    reaches :data:`PUSH_BELOW`."""
    scores = _mode_scores(hand)
    best = max(range(6), key=scores.__getitem__)
    if may_push and scores[best] < PUSH_BELOW:
        return PUSH
    return best


# --- card play ------------------------------------------------------------------------------
def _lowest(cards: int, mode: int, keep: int = 0) -> int:
    """The card of ``cards`` that is cheapest to give away: few points, not a trump, not a
    sure winner (``keep``), weak."""
    pts = CARD_POINTS[mode]
    power = _RANK_POWER[mode]
    best, best_cost = -1, 1 << 30
    m = cards
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        cost = pts[c] * 16 + power[c]
        if mode < 4 and SUIT_OF[c] == mode:
            cost += 400
        if keep & low:
            cost += 200
        if cost < best_cost:
            best, best_cost = c, cost
    return best


def _cards(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def rule_bot(obs: dict, legal: list, rng: random.Random):
    """A rule-based player (module docstring).  Deterministic given the observation; ``rng``
    is unused but kept for the policy signature."""
    if len(legal) == 1:
        return legal[0]
    hand = _mask_of(obs["hand"])
    if obs["phase"] == "trump":
        return choose_trump(hand, PUSH in legal)
    return CARD_NAMES[_play(obs, hand, _mask_of(legal))]


def _play(obs: dict, hand: int, legal: int) -> int:
    """The card number to play from ``legal`` (a non-empty mask of ``hand``).

    Reads the finished tricks and the current one from ``obs["tricks"]`` (wire form): the
    cards still out (neither played nor ours) and, from each failure to follow suit, the
    suits a seat lacks.  Following: if partner's card will hold the trick, smear (the most
    valuable plain card but the top card of a suit we control); else win with the cheapest
    card that will hold (a trump only for 10 points or more, or the last trick); with 10
    points at stake and no sure win, contest with the strongest winning card; otherwise give
    away the cheapest card (few points, no trump, no sure winner).
    """
    mode = obs["trump"]
    seat = obs["seat"]
    partner = PARTNER[seat]
    power = POWER[mode]
    pts = CARD_POINTS[mode]
    rank_power = _RANK_POWER[mode]
    trump_mask = SUIT_MASK[mode] if mode < 4 else 0
    buur = BIT[9 * mode + _J] if mode < 4 else 0

    # What has been played, and which suits each seat has shown it lacks.
    played = 0
    void = [0, 0, 0, 0]  # per seat: bit s set = holds no card of suit s (trump: maybe the Buur)
    trick: list[int] = []
    first = seat
    finished = 0
    for t in obs["tricks"]:
        names = t["cards"]
        if not names:
            first = t["first"]
            continue
        cards = [CARD_INDEX[n] for n in names]
        lead = SUIT_OF[cards[0]]
        p = t["first"]
        for c in cards:
            played |= BIT[c]
            s = SUIT_OF[c]
            if s != lead and not (s == mode and lead != mode):
                void[p] |= 1 << lead
            p = NEXT[p]
        if "win" in t:
            finished += 1
        else:
            trick, first = cards, t["first"]
    out = ALL_CARDS ^ played ^ hand  # cards in the other three hands
    trumps_out = out & trump_mask
    pos = len(trick)
    last_trick = finished == TRICKS_PER_DEAL - 1

    def sure_winner(c: int, lead: int, after: tuple) -> bool:
        """Whether ``c``, if it leads the trick, should hold against the opponents ``after``
        (seats still to play): no outstanding card beats it, or only opponents known to lack
        the suit could hold one, or only a ruff beats it and the led suit is not yet short."""
        if not after:
            return True
        beat = _BEATERS[mode][lead][c] & out
        if not beat:
            return True
        if SUIT_OF[c] == lead:
            higher = beat & SUIT_MASK[lead]
            if higher and any(not void[p] >> lead & 1 or (lead == mode and higher & buur)
                              for p in after):
                return False
            if lead == mode or not beat & trump_mask:
                return True
        # Only a ruff or an over-ruff beats it: that needs an opponent out of the led suit.
        ruffers = [p for p in after if not void[p] >> mode & 1 or beat & buur]
        if not ruffers:
            return True
        if any(void[p] >> lead & 1 for p in ruffers):
            return False
        return (out & SUIT_MASK[lead]).bit_count() >= 2 * len(ruffers) + 1

    def masters(cards: int) -> int:
        """The cards of ``cards`` that no outstanding card of their suit beats."""
        m = 0
        for c in _cards(cards):
            if not _BEATERS[mode][SUIT_OF[c]][c] & out & SUIT_MASK[SUIT_OF[c]]:
                m |= BIT[c]
        return m

    my_masters = masters(hand)

    if pos == 0:
        return _lead(obs, seat, partner, mode, hand, out, trumps_out, my_masters, sure_winner)

    lead = SUIT_OF[trick[0]]
    lead_power = power[lead]
    best_i = max(range(pos), key=lambda i: lead_power[trick[i]])
    best = trick[best_i]
    best_seat = first
    for _ in range(best_i):
        best_seat = NEXT[best_seat]
    after = []
    p = NEXT[seat]
    for _ in range(3 - pos):
        if p != partner:
            after.append(p)
        p = NEXT[p]
    after = tuple(after)
    value = sum(pts[c] for c in trick) + (5 if last_trick else 0)

    if best_seat == partner and sure_winner(best, lead, after):
        # Smear: give partner's trick the most points we can spare (no trump, and not the
        # top card of a suit we control).
        keep = 0
        for s in range(4):
            top = my_masters & SUIT_MASK[s]
            if top:
                keep |= BIT[max(_cards(top), key=rank_power.__getitem__)]
        spare = legal & ~trump_mask & ~keep
        if spare:
            c = max(_cards(spare), key=lambda c: pts[c] * 16 - rank_power[c])
            if pts[c] > 0:
                return c
        return _lowest(legal, mode, my_masters)

    best_power = lead_power[best]
    winners = [c for c in _cards(legal) if lead_power[c] > best_power]
    safe = [c for c in winners if sure_winner(c, lead, after)]
    if safe:
        def cost(c: int) -> int:
            if mode < 4 and SUIT_OF[c] == mode:
                return 1000 + rank_power[c] * 10 - pts[c]
            return rank_power[c] * 10 - pts[c]
        c = min(safe, key=cost)
        if not (mode < 4 and SUIT_OF[c] == mode and lead != mode) or value + pts[c] >= 10 or last_trick:
            return c
    if winners and value >= 10 and best_seat != partner:
        # Points at stake and no sure win: contest them with our strongest card.
        return max(winners, key=lead_power.__getitem__)
    # Leave the trick (to partner or to the opponents): give away as little as possible.
    return _lowest(legal, mode, my_masters)


def _lead(obs, seat, partner, mode, hand, out, trumps_out, my_masters, sure_winner) -> int:
    """The card to lead (:func:`_play` with an empty trick): pull trumps with the top trump
    when our side declared; cash a sure winner, most points first; as the declaring side with
    three trumps or more, lead a small trump; else the cheapest card of a plain suit."""
    trump_mask = SUIT_MASK[mode] if mode < 4 else 0
    pts = CARD_POINTS[mode]
    after = (NEXT[seat], NEXT[NEXT[NEXT[seat]]])
    my_trumps = hand & trump_mask
    declarer = obs["declarer"]
    our_trump = declarer == seat or declarer == partner
    # Pull trumps with the top trump when our side declared.
    if my_trumps and trumps_out and our_trump:
        top = max(_cards(my_trumps), key=_RANK_POWER[mode].__getitem__)
        if my_masters & BIT[top]:
            return top
    # Cash a sure winner of a side suit (any suit in Obe-Abe / Une-Ufe), most points first.
    cands = [c for c in _cards(my_masters & ~trump_mask) if sure_winner(c, SUIT_OF[c], after)]
    if cands:
        return max(cands, key=lambda c: pts[c] * 16 + _RANK_POWER[mode][c])
    if my_trumps and our_trump and trumps_out and my_trumps.bit_count() >= 3:
        return min(_cards(my_trumps), key=_RANK_POWER[mode].__getitem__)
    non_trump = hand & ~trump_mask
    if non_trump:
        return _lowest(non_trump, mode, my_masters)
    return _lowest(hand, mode)


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "rules": ("Rule-based bot", rule_bot),
}

__all__ = ["BUILTIN_BOTS", "random_bot", "rule_bot", "choose_trump"]
