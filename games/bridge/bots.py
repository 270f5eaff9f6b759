"""Built-in contract bridge bots.  They see only their own seat's observation, like any other seat.

Policies have the arena's signature ``policy(observation, legal_actions, rng) -> action``
(:class:`games.arena.play.seats.BuiltinSeat`): ``observation`` is
:meth:`games.bridge.rules.BridgeState.observation` for the bot's seat (its own ``hand``, the
``calls``, the ``tricks`` and the current ``trick``, ``dummy_hand`` once the opening lead is
made, ``player``: the hand that plays next), ``legal_actions`` the legal call or card names.
When a card is due from dummy the rules ask declarer, and ``legal_actions`` are dummy's
cards: the bot then plays dummy's hand, seeing its own hand and dummy's as declarer does.
The answer is always one of ``legal_actions``.

- :func:`random_bot`: any legal call or card, uniformly.
- :func:`rule_bot`: natural bidding on high-card points (HCP: A 4, K 3, Q 2, J 1) and suit
  length, and sensible card play.  Deterministic: the same observation gives the same answer.

The rule bot's bidding system (a natural subset of Standard American; no conventions: no
Stayman, no transfers, no Blackwood, no takeout doubles, no strong 2C):

- Openings: 1NT 15-17 balanced (4-3-3-3, 4-4-3-2, 5-3-3-2); 2NT 20-21 balanced; one of a
  suit with 12+ HCP (or 10-11 HCP when HCP plus the two longest suits' lengths reach 20, the
  rule of 20): the longest suit, the higher of two equally long five-card suits, without a
  five-card suit the longer minor (1D with 4-4, 1C with 3-3); weak two (2D, 2H, 2S) with a
  six-card suit and 6-10 HCP; a three-level preempt with a seven-card suit and 6-10 HCP.
- Responses to one of a suit: pass with 0-5; raise a major with three trumps (a minor with
  four) by dummy points (HCP plus 3 for a void, 2 a singleton, 1 a doubleton): 6-9 to two,
  10-12 to three, more to game or slam (below); a new four-card suit at the one level (a
  major first, the longer one, else diamonds); a new suit at the two level with 10+ HCP and
  four cards (five for 2H over 1S); 1NT 6-10, 2NT 11-12 and 3NT 13-15 when nothing above
  fits.
- Responses to 1NT: with 0-7 a five-card suit is bid at the two level to play, else pass;
  with 10-15 a five-card major is shown at the three level (opener raises with three) and a
  six-card major goes to game; otherwise no-trump by the points (below).
- Overcalls: 1NT 15-18 balanced over a one-level opening; a five-card suit at the one level
  with 8+ HCP, at the two level with 11+, a six-card suit at the three level with 13+.
- Every later call "places the contract": each call of the auction is read into a picture of
  the caller (an HCP range and the suit lengths shown; for a bid after the first round, its
  level tells the combined strength the bidder placed the side at: a part score below 23
  HCP, an invitation 23-24, game 25-32, a small slam 33-36, a grand slam 37+).  The bot adds
  its HCP to the middle of partner's range, chooses the strain (an eight-card major fit,
  else no-trump with a balanced hand on either side, else a minor fit, else its own six-card
  suit or partner's suit; 3NT with game values and no fit) and bids game (3NT, 4 of a
  major, 5 of a minor: 28+) with 25+ (support points added with a fit: a void 3, a
  singleton 2, a doubleton 1), slam with 33+ and 37+ (directly: no ace-asking), invites one
  level below game with 23-24, and otherwise competes for a part score no higher than the
  Law of Total Tricks allows (as many tricks as the side's trumps) and passes once its side
  holds an acceptable part score.  Opener bids again over a new suit from an unpassed
  responder (forcing for one round).  A new suit below game after the first round only
  looks for a fit: it is read for its length, not its strength.
- Doubles are for penalty: the bot doubles the opponents' contract when its side's
  estimated defensive tricks (combined HCP / 3, plus half a trick per trump beyond three)
  exceed the tricks needed to beat it by 1.5 (by 2 up to the four level, and a suit
  contract up to the three level only with four trumps, at the four level with three); it
  never rescues a doubled contract and never redoubles.

Card play: the opening lead is partner's bid suit, else top of a sequence (AK, KQ, QJ, JT),
a singleton in a suit contract, else fourth best from the longest suit (against no-trump)
or low from a suit not headed by the ace (against a suit); later, defenders cash winners
and return partner's suit.  Second hand plays low but covers an honour with an honour;
third hand plays high (the lowest of equal top cards; declarer its cheapest sure winner if
it has one), or low when partner's card already holds the trick; fourth hand wins as
cheaply as it can.  A player void in the suit led ruffs with its lowest sufficient trump
unless partner's card holds the trick, and otherwise discards from its weakest suit (no
trumps, winners, guards of honours or long suits at no-trump).  Declarer draws trumps while
the opponents hold any and its side has more, cashes winners (from the short hand first),
crosses to partner's winners, ruffs losers in the hand short of the suit, and otherwise
leads low from its side's longest suit.  Defenders later cash winners that should not be
ruffed, return partner's suit, continue their own, or lead through dummy's strength (dummy
on their left) or up to its weakness (dummy last), not away from an ace in a suit contract.

The bot knows where a card is only from what the observation shows: its own hand, dummy's
once exposed, the cards played, and the suits a player has shown out of.  Measured with
``benchmarks/bridge_bots.py``: against the random pair with instant replay, +23.9 IMPs a
board (most random auctions end in doubled slams); against a pair that bids as it does but
plays random cards, +8.6; against a pair that always passes and plays as it does, +3.7.
"""
from __future__ import annotations

import random

from games.bridge.rules import (
    ALL_CARDS, BIT, CALL_INDEX, CALL_NAMES, CARD_INDEX, CARD_NAMES, DOUBLE, NOTRUMP, PARTNER,
    PASS, POWER, STRAIN_NAMES, SUIT_MASK, SUIT_OF, board_dealer, board_vulnerability,
)


def random_bot(obs: dict, legal: list, rng: random.Random):
    """Any legal call or card, uniformly."""
    return rng.choice(legal)


# --- hands ----------------------------------------------------------------------------------
#: High-card points of each card number (A 4, K 3, Q 2, J 1).
HCP = tuple((0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4)[c % 13] for c in range(52))
#: ``HIGHER[c]``: the cards of ``c``'s suit that outrank it.
HIGHER = tuple(SUIT_MASK[SUIT_OF[c]] & ~((BIT[c] << 1) - 1) for c in range(52))
_BALANCED = ([3, 3, 3, 4], [2, 3, 4, 4], [2, 3, 3, 5])
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
MAJORS = (HEARTS, SPADES)


def _mask(names) -> int:
    mask = 0
    for n in names:
        mask |= BIT[CARD_INDEX[n]]
    return mask


def _cards(mask: int):
    """The card numbers in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _highest(mask: int) -> int:
    return mask.bit_length() - 1


def hand_points(mask: int) -> int:
    """High-card points of a hand (a 52-bit mask)."""
    return sum(HCP[c] for c in _cards(mask))


def suit_lengths(mask: int) -> list[int]:
    """Cards per suit, clubs, diamonds, hearts, spades."""
    return [(mask & SUIT_MASK[s]).bit_count() for s in range(4)]


def is_balanced(lengths: list[int]) -> bool:
    """4-3-3-3, 4-4-3-2 or 5-3-3-2: no void, no singleton, at most one doubleton."""
    return sorted(lengths) in _BALANCED


def _shortness(lengths: list[int], trump: int) -> int:
    """Support points for short side suits once a trump fit is found: a void 3, a singleton
    2, a doubleton 1 (they ruff the opponents' winners)."""
    return sum((3, 2, 1)[n] for s, n in enumerate(lengths) if s != trump and n < 3)


# --- the auction as pictures ----------------------------------------------------------------
def _bid_number(level: int, strain: int) -> int:
    return 5 * (level - 1) + strain


def _cheapest(strain: int, last_bid: int) -> int:
    """The lowest level at which ``strain`` may be bid over ``last_bid`` (8 if none)."""
    for level in range(1, 8):
        if _bid_number(level, strain) > last_bid:
            return level
    return 8


def _game_level(strain: int) -> int:
    return 3 if strain == NOTRUMP else 4 if strain in MAJORS else 5


class Picture:
    """What a player's calls have shown: an HCP range ``lo``-``hi``, the least length of
    each suit, whether balanced, and whether anything was shown at all (``known``)."""

    __slots__ = ("lo", "hi", "lengths", "balanced", "known")

    def __init__(self):
        self.lo, self.hi = 0.0, 12.0  # nothing said: assume about a quarter of the deck
        self.lengths = [0, 0, 0, 0]
        self.balanced = False
        self.known = False

    def mid(self) -> float:
        """The HCP to expect: a third of the way up the range, since hands near the bottom
        of a range are the more common ones."""
        return self.lo + (self.hi - self.lo) / 3

    def show(self, lo: float, hi: float) -> None:
        """Narrow the range (the first thing shown replaces the prior; a contradiction keeps
        the newer bound, since the caller's own judgement moved it)."""
        if not self.known:
            self.lo, self.hi, self.known = lo, hi, True
            return
        self.lo, self.hi = max(self.lo, lo), min(self.hi, hi)
        if self.lo > self.hi:
            self.lo, self.hi = (lo, lo) if lo > self.hi else (hi, hi)

    def suit(self, strain: int, length: int) -> None:
        if strain < NOTRUMP:
            self.lengths[strain] = max(self.lengths[strain], length)


# Combined HCP at which the side belongs in: an invitation, game, small slam, grand slam.
INVITE, GAME, SLAM, GRAND = 23, 25, 33, 37


class Auction:
    """The auction read from one seat's observation: the calls by seat, the last bid, and a
    :class:`Picture` of each player, built by reading every call as this bot would have
    meant it (module docstring)."""

    def __init__(self, calls: list[str], dealer: int):
        self.pictures = [Picture() for _ in range(4)]
        self.last_bid = self.last_bidder = -1
        self.doubled = 0
        self.doubler = -1
        self.bids: list[tuple[int, int]] = []  # (seat, bid number)
        self.opener = -1
        self.calls: list[tuple[int, int]] = []
        for i, name in enumerate(calls):
            seat = (dealer + i) % 4
            call = CALL_INDEX[name]
            self._read(seat, call)
            self.calls.append((seat, call))
            if call < PASS:
                if self.opener < 0:
                    self.opener = seat
                self.bids.append((seat, call))
                self.last_bid, self.last_bidder, self.doubled = call, seat, 0
            elif call != PASS:
                self.doubled, self.doubler = call - PASS, seat

    def bids_of(self, seat: int) -> list[int]:
        return [b for s, b in self.bids if s == seat]

    def side_bid(self, seat: int) -> bool:
        return any(s & 1 == seat & 1 for s, _ in self.bids)

    def _read(self, seat: int, call: int) -> None:
        p, partner = self.pictures[seat], self.pictures[PARTNER[seat]]
        mine = self.bids_of(seat)
        partners = self.bids_of(PARTNER[seat])
        if call == PASS:
            if self.last_bid < 0:
                p.show(0, 11)  # no opening
            elif (not mine and self.opener == PARTNER[seat] and len(self.bids) == 1
                  and self.calls[-1][1] == PASS and self.last_bid < 5 and self.last_bid % 5 != NOTRUMP):
                p.show(0, 5)  # no response to one of a suit
            elif not mine and self.opener == PARTNER[seat] and len(self.bids) == 1 and self.last_bid == 4:
                p.show(0, 7)  # no response to 1NT
            elif self.last_bidder & 1 == seat & 1 and p.known and partner.known and mine:
                p.show(0, GAME - 1 - partner.mid())  # content with a part score
            return
        if call > PASS:
            p.show(max(p.lo, 8), max(p.hi, 14))  # a penalty double shows defence
            return
        level, strain = call // 5 + 1, call % 5
        jump = level > _cheapest(strain, self.last_bid)
        if self.last_bid < 0:  # an opening
            if strain == NOTRUMP:
                p.show(*((15, 17) if level == 1 else (20, 21) if level == 2 else (25, 27)))
                p.balanced = True
                for s in range(4):
                    p.suit(s, 2)
            elif level == 1:
                p.show(12, 21)
                p.suit(strain, 5 if strain in MAJORS else 3)
            else:
                p.show(6, 10)
                p.suit(strain, 6 if level == 2 else 7)
        elif not self.side_bid(seat):  # an overcall
            if strain == NOTRUMP and level == 1:
                p.show(15, 18)
                p.balanced = True
            else:
                p.show(8, 16)
                p.suit(strain, 5)
        elif not mine and self.opener == PARTNER[seat] and len(partners) == 1:
            self._read_response(p, partner, partners[0], level, strain, jump)
        else:
            side_suits = {b % 5 for s, b in self.bids if s & 1 == seat & 1}
            if strain == NOTRUMP or strain in side_suits or jump or level >= _game_level(strain):
                self._read_placement(p, partner, level, strain, jump)
            # (a new suit below game looks for a fit: it says nothing of the strength)
            if strain < NOTRUMP:
                if partner.lengths[strain] >= 3:
                    p.suit(strain, 8 - partner.lengths[strain])  # support
                elif any(b % 5 == strain for b in mine):
                    p.suit(strain, p.lengths[strain] + 1)  # a rebid suit is longer
                else:
                    p.suit(strain, 4)

    @staticmethod
    def _read_response(p: Picture, opener: Picture, opening: int, level: int, strain: int,
                       jump: bool) -> None:
        """Partner opened ``opening``; this is the first bid of its partner."""
        o_level, o_strain = opening // 5 + 1, opening % 5
        if o_strain == NOTRUMP and o_level == 1:
            if strain == NOTRUMP:
                p.show(*{2: (8, 9), 3: (10, 15), 4: (16, 17), 5: (16, 17), 6: (18, 21)}.get(level, (22, 30)))
            elif level == 2:
                p.show(0, 7)
                p.suit(strain, 5)
            elif level == 3:
                p.show(10, 15)
                p.suit(strain, 5)
            else:
                p.show(10, 15)
                p.suit(strain, 6)
            return
        if o_level == 1 and strain == o_strain:  # a raise
            p.show(*{2: (6, 9), 3: (10, 12)}.get(level, (13, 20)))
            p.suit(strain, 3 if strain in MAJORS else 4)
            return
        if o_level == 1 and strain == NOTRUMP:
            p.show(*{1: (6, 10), 2: (11, 12)}.get(level, (13, 15)))
            p.balanced = True
            return
        if o_level == 1 and not jump:
            p.show(*((6, 12) if level == 1 else (10, 15)))
            p.suit(strain, 4)
            return
        Auction._read_placement(p, opener, level, strain, jump)
        p.suit(strain, 4)

    @staticmethod
    def _read_placement(p: Picture, partner: Picture, level: int, strain: int, jump: bool) -> None:
        """A later bid: its level says where the bidder placed the side's combined HCP."""
        game = _game_level(strain)
        if level >= 7:
            lo, hi = GRAND, 40
        elif level == 6:
            lo, hi = SLAM, GRAND - 1
        elif strain == NOTRUMP and level in (4, 5):
            lo, hi = SLAM - 2, SLAM - 1  # a quantitative slam invitation
        elif level >= game:
            lo, hi = GAME, SLAM - 1
        elif jump or level == game - 1:
            lo, hi = INVITE, GAME - 1
        else:
            lo, hi = 0, GAME - 1
        base = partner.mid()
        p.show(max(lo - base, 0), max(hi - base, 0))


# --- bidding ---------------------------------------------------------------------------------
def _opening(hcp: int, lengths: list[int]) -> int:
    """The opening call (module docstring)."""
    balanced = is_balanced(lengths)
    if balanced and 15 <= hcp <= 17:
        return _bid_number(1, NOTRUMP)
    if balanced and 20 <= hcp <= 21:
        return _bid_number(2, NOTRUMP)
    two_longest = sum(sorted(lengths)[2:])
    if hcp >= 12 or (hcp >= 10 and hcp + two_longest >= 20):
        longest = max(lengths)
        if longest >= 5:
            return _bid_number(1, max(s for s in range(4) if lengths[s] == longest))
        if lengths[DIAMONDS] >= 4 and lengths[DIAMONDS] >= lengths[CLUBS]:
            return _bid_number(1, DIAMONDS)
        return _bid_number(1, CLUBS if lengths[CLUBS] >= lengths[DIAMONDS] else DIAMONDS)
    if 6 <= hcp <= 10:
        # Preempts take the opponents' bidding room when we are short of values.
        for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
            if lengths[s] >= 7:
                return _bid_number(3, s)
            if lengths[s] == 6 and s != CLUBS:
                return _bid_number(2, s)
    return PASS


def _response_to_suit(hcp: int, lengths: list[int], opening: int, last_bid: int) -> int | None:
    """The first response to partner's one of a suit (None: leave it to the placement)."""
    suit = opening % 5
    support = lengths[suit]
    if hcp < 6:
        return PASS
    if (suit in MAJORS and support >= 3) or (suit not in MAJORS and support >= 5):
        points = hcp + _shortness(lengths, suit)
        if points <= 12:
            level = 2 if points <= 9 else 3
            return _bid_number(level, suit) if _bid_number(level, suit) > last_bid else None
        return None  # game or slam values: placed on the combined points
    # A new suit at the one level: the longer major, else diamonds (four cards suffice).
    ones = [s for s in (SPADES, HEARTS, DIAMONDS) if s > suit and lengths[s] >= 4]
    if ones and hcp <= 17:
        best = max(ones, key=lambda s: (lengths[s] >= 5, s in MAJORS, lengths[s], -s if lengths[s] == 4 else s))
        bid = _bid_number(1, best)
        if bid > last_bid:
            return bid
    if suit not in MAJORS and support >= 4 and hcp <= 10:
        bid = _bid_number(2, suit)
        return bid if bid > last_bid else None
    if hcp >= 10:
        twos = [s for s in range(4) if s < suit and lengths[s] >= (5 if s == HEARTS else 4)]
        if twos:
            best = max(twos, key=lambda s: (lengths[s], s))
            bid = _bid_number(2, best)
            if bid > last_bid:
                return bid
    level = 1 if hcp <= 10 else 2 if hcp <= 12 else 3
    bid = _bid_number(level, NOTRUMP)
    return bid if bid > last_bid and hcp <= 15 else None


def _response_to_1nt(hcp: int, lengths: list[int], last_bid: int) -> int | None:
    """The first response to partner's 1NT (None: leave it to the placement)."""
    longest = max(range(4), key=lambda s: (lengths[s], s))
    if hcp <= 7:
        if lengths[longest] >= 5 and last_bid < _bid_number(2, longest):
            return _bid_number(2, longest)  # to play: safer than 1NT with a long suit
        return PASS
    if 10 <= hcp <= 15:
        for major in (SPADES, HEARTS):
            if lengths[major] == 5 and lengths[major] >= max(lengths):
                bid = _bid_number(3, major)  # forcing: opener chooses 4M or 3NT
                return bid if bid > last_bid else None
    return None


def _overcall(hcp: int, lengths: list[int], last_bid: int) -> int:
    """The first call of our side after the opponents opened."""
    if last_bid < 5 and is_balanced(lengths) and 15 <= hcp <= 18:
        return _bid_number(1, NOTRUMP)
    longest = max(range(4), key=lambda s: (lengths[s], s))
    level = _cheapest(longest, last_bid)
    if hcp >= 17 and longest in MAJORS and lengths[longest] >= 6 and level <= 4:
        return _bid_number(4, longest)  # too strong for a simple overcall: bid the game
    if lengths[longest] >= 5 and ((level == 1 and hcp >= 8) or (level == 2 and hcp >= 11)
                                  or (level == 3 and hcp >= 13 and lengths[longest] >= 6)):
        return _bid_number(level, longest)
    return PASS


def _should_double(auction: Auction, seat: int, hcp: int, lengths: list[int]) -> bool:
    """Penalty double: our side's defensive tricks beat the contract by a margin."""
    if auction.last_bid < 0 or auction.last_bidder & 1 == seat & 1 or auction.doubled:
        return False
    level, strain = auction.last_bid // 5 + 1, auction.last_bid % 5
    partner = auction.pictures[PARTNER[seat]]
    if partner.known:
        partner_hcp = partner.mid()
    else:  # partner said nothing: share out what the opponents have not shown
        shown = sum(auction.pictures[s].lo for s in range(4) if s & 1 != seat & 1)
        partner_hcp = min(12.0, max(0.0, (40 - hcp - shown) / 2))
    if strain < NOTRUMP and lengths[strain] < (4 if level <= 3 else 3 if level == 4 else 0):
        return False  # a low suit contract is doubled only with length in its trumps
    tricks = (hcp + partner_hcp) / 3
    if strain < NOTRUMP:
        tricks += max(0, lengths[strain] - 3) / 2  # trump length hurts declarer
    return tricks >= (8 - level) + (2 if level <= 4 else 1.5)


def _place(auction: Auction, seat: int, hcp: int, lengths: list[int], forced: bool = False) -> int:
    """Place the contract on the combined values (module docstring).  ``forced``: partner's
    last bid was forcing, so the bot bids on even when it would have passed."""
    partner = auction.pictures[PARTNER[seat]]
    combined = hcp + partner.mid()
    fits = [s for s in range(4) if lengths[s] + partner.lengths[s] >= 8]
    major_fits = [s for s in fits if s in MAJORS]
    # No-trump shape: balanced, or semi-balanced (5-4-2-2, no suit longer than five).
    notrump_shape = is_balanced(lengths) or (max(lengths) <= 5 and min(lengths) >= 2)
    if major_fits:
        strain = max(major_fits, key=lambda s: (lengths[s] + partner.lengths[s], s))
    elif notrump_shape or partner.balanced:
        strain = NOTRUMP
    elif fits:
        strain = max(fits, key=lambda s: (lengths[s] + partner.lengths[s], s))
        if combined >= GAME and combined < GAME + 3 and min(lengths) >= 2:
            strain = NOTRUMP  # 3NT needs fewer tricks than five of a minor
    elif combined >= GAME and min(lengths) >= 1 and max(lengths) <= 6:
        strain = NOTRUMP  # game values and no fit: 3NT, not a guess at a suit game
    else:
        own = max(range(4), key=lambda s: (lengths[s], s))
        theirs = max(range(4), key=lambda s: (partner.lengths[s], s))
        if lengths[own] >= 6 or partner.lengths[theirs] < 4:
            strain = own
        elif (lengths[theirs] >= 2 and partner.lengths[theirs] >= 5) or lengths[theirs] >= 3:
            strain = theirs  # a seven-card fit in partner's suit
        else:
            strain = own if lengths[own] >= 5 else NOTRUMP
    points = combined
    trumps = lengths[strain] + partner.lengths[strain] if strain < NOTRUMP else 0
    if trumps >= 8:
        points += _shortness(lengths, strain) if lengths[strain] >= 3 else 0
    game = _game_level(strain)
    if points >= GRAND:
        target = 7
    elif points >= SLAM:
        target = 6
    elif points >= GAME + (3 if strain in (CLUBS, DIAMONDS) else 0):
        target = game
    elif points >= INVITE:
        target = game - 1
    else:
        # A part score: compete as high as the Law of Total Tricks allows.
        target = max(2, trumps - 6) if strain < NOTRUMP else 1 + (combined >= 22)
        target = min(target, game - 1)
    ours = auction.last_bid >= 0 and auction.last_bidder & 1 == seat & 1
    if forced:
        level = _cheapest(strain, auction.last_bid)
        if level > max(target, 3):
            return PASS
        return _bid_number(max(level, target) if target >= game else level, strain)
    if ours:
        level, held = auction.last_bid // 5 + 1, auction.last_bid % 5
        if held == strain and level >= target:
            return PASS
        if target < game and auction.last_bidder == PARTNER[seat]:
            # Partner's part score stands if it is in a fit, no-trump, or partner's long suit.
            if held == NOTRUMP and strain == NOTRUMP:
                return PASS
            if held < NOTRUMP and (lengths[held] + partner.lengths[held] >= 7
                                   or (lengths[held] >= 2 and partner.lengths[held] >= 5)):
                return PASS
        if level >= _game_level(held) and target < 6:
            return PASS  # game is reached and no slam in view
    level = _cheapest(strain, auction.last_bid)
    if level > target:
        return PASS
    if target >= game:
        level = target  # jump straight to game or slam
    return _bid_number(level, strain)


def _new_suit_response(auction: Auction, seat: int) -> bool:
    """Whether partner, not a passed hand, has just answered our one of a suit with a new
    suit and nobody else has bid: that is forcing for one round."""
    mine, partners = auction.bids_of(seat), auction.bids_of(PARTNER[seat])
    if auction.opener != seat or len(auction.bids) != 2 or len(partners) != 1:
        return False
    opening, response = mine[0], partners[0]
    return (opening < 5 and opening % 5 != NOTRUMP and response % 5 not in (opening % 5, NOTRUMP)
            and auction.calls[-1][1] == PASS
            and all(c != PASS for s, c in auction.calls if s == PARTNER[seat]))


def _call(obs: dict) -> int:
    """The call number to make (module docstring, bidding)."""
    seat = obs["seat"]
    hand = _mask(obs["hand"])
    hcp, lengths = hand_points(hand), suit_lengths(hand)
    auction = Auction(obs["calls"], obs["dealer"])
    if auction.last_bid < 0:
        return _opening(hcp, lengths)
    if auction.doubled and auction.doubler & 1 == seat & 1:
        return PASS  # our side's penalty double stands
    if _should_double(auction, seat, hcp, lengths):
        return DOUBLE
    mine = auction.bids_of(seat)
    partners = auction.bids_of(PARTNER[seat])
    if not auction.side_bid(seat):
        return _overcall(hcp, lengths, auction.last_bid)
    if not mine and auction.opener == PARTNER[seat] and len(partners) == 1:
        opening = partners[0]
        answer = None
        if opening == _bid_number(1, NOTRUMP):
            answer = _response_to_1nt(hcp, lengths, auction.last_bid)
        elif opening < 5:
            answer = _response_to_suit(hcp, lengths, opening, auction.last_bid)
        if answer is not None:
            return answer
    if mine and not partners and auction.last_bidder == seat:
        return PASS  # partner has said nothing to bid on
    forced = _new_suit_response(auction, seat)
    return _place(auction, seat, hcp, lengths, forced)


# --- card play ------------------------------------------------------------------------------
class Table:
    """The play as one seat sees it: the cards played, the suits each seat has shown out of,
    the cards still unseen (in the hidden hands), and the trick in progress."""

    def __init__(self, obs: dict):
        self.seat = obs["seat"]
        self.player = obs["player"]
        self.declarer, self.dummy = obs["declarer"], obs["dummy"]
        contract = obs["contract"].rstrip("X")
        self.strain = STRAIN_NAMES.index(contract[1:])
        self.trumps = SUIT_MASK[self.strain] if self.strain < NOTRUMP else 0
        self.own = own = _mask(obs["hand"])
        self.dummy_hand = _mask(obs["dummy_hand"]) if obs["dummy_hand"] else 0
        self.hand = own if self.player == self.seat else self.dummy_hand
        self.played = 0
        self.void = [0, 0, 0, 0]  # per seat: bit s set = has shown out of suit s
        self.partner_leads: list[int] = []  # suits the playing hand's partner led
        self.own_leads: list[int] = []
        partner = PARTNER[self.player]
        for trick in obs["tricks"] + [obs["trick"]]:
            cards = [CARD_INDEX[n] for n in trick["cards"]]
            if not cards:
                continue
            lead = SUIT_OF[cards[0]]
            if trick["first"] == partner:
                self.partner_leads.append(lead)
            elif trick["first"] == self.player:
                self.own_leads.append(lead)
            p = trick["first"]
            for c in cards:
                self.played |= BIT[c]
                if SUIT_OF[c] != lead:
                    self.void[p] |= 1 << lead
                p = (p + 1) % 4
        self.trick = [CARD_INDEX[n] for n in obs["trick"]["cards"]]
        self.first = obs["trick"]["first"] if self.trick else self.player
        self.unseen = ALL_CARDS & ~self.played & ~own & ~self.dummy_hand
        self.declaring = self.player & 1 == self.declarer & 1
        self.opening_lead = not obs["tricks"] and not self.trick

    def possible(self, p: int, suit: int) -> int:
        """The cards of ``suit`` that seat ``p`` may hold."""
        known = self.known_hand(p)
        if known is not None:
            return known & SUIT_MASK[suit]
        if self.void[p] >> suit & 1:
            return 0
        return self.unseen & SUIT_MASK[suit]

    def known_hand(self, p: int) -> int | None:
        """Seat ``p``'s remaining cards when this seat sees them: its own, dummy's once
        exposed (and, for declarer playing dummy, its own hand too)."""
        if p == self.seat:
            return self.own
        if p == self.dummy and self.dummy_hand:
            return self.dummy_hand
        return None

    def may_be_void(self, p: int, suit: int) -> bool:
        """Whether seat ``p`` may hold no card of ``suit`` (few of it are unseen)."""
        known = self.known_hand(p)
        if known is not None:
            return not known & SUIT_MASK[suit]
        return bool(self.void[p] >> suit & 1) or (self.unseen & SUIT_MASK[suit]).bit_count() <= 2

    def holds(self, best: int, lead: int, after: list[int]) -> bool:
        """Whether card ``best`` (winning the trick so far) holds against the opponents
        still to play (``after``): none may follow with a higher card or ruff it."""
        power = POWER[self.strain][lead]
        for p in after:
            if any(power[c] > power[best] for c in _cards(self.possible(p, lead))):
                return False
            if self.trumps and lead != self.strain and self.may_be_void(p, lead):
                trumps = self.possible(p, self.strain)
                if any(power[c] > power[best] for c in _cards(trumps)):
                    return False
        return True

    def master(self, c: int) -> bool:
        """No card that an opponent of the playing hand may hold outranks ``c`` in its suit."""
        opponents = self.unseen
        if not self.declaring:
            opponents |= self.dummy_hand
        return not HIGHER[c] & opponents


def _equal_top(table: Table, cards: int, c: int) -> int:
    """The lowest card of ``cards`` equal to ``c``: no unplayed card of another hand lies
    between them (third hand high plays the lowest of touching top cards)."""
    best = c
    d = c - 1
    while d >= 0 and SUIT_OF[d] == SUIT_OF[c]:
        if cards & BIT[d]:
            best = d
        elif not table.played & BIT[d]:
            break
        d -= 1
    return best


def _discard(table: Table, legal: int) -> int:
    """A card to throw away: the lowest of the weakest suit, keeping trumps, winners,
    guards of honours and (at no-trump) long suits."""
    plain = legal & ~table.trumps or legal
    best, best_worth = -1, None
    for s in range(4):
        cards = plain & SUIT_MASK[s]
        if not cards:
            continue
        n = cards.bit_count()
        worth = sum(HCP[c] for c in _cards(cards)) * 2
        worth += 3 * sum(table.master(c) for c in _cards(cards))
        top = _highest(cards)
        if HCP[top] and n <= 4 - HCP[top] + 1:
            worth += 4  # the last small card guards an honour (Kx, Qxx)
        if table.strain == NOTRUMP and n >= 4:
            worth += 3  # long cards may take tricks at no-trump
        worth = (worth, -n)
        if best_worth is None or worth < best_worth:
            best, best_worth = _lowest(cards), worth
    return best


def _opening_lead(obs: dict, table: Table, auction: Auction) -> int:
    """The opening lead (module docstring)."""
    hand, strain = table.hand, table.strain
    lengths = suit_lengths(hand)
    partner = PARTNER[table.player]
    partner_suits = [b % 5 for s, b in auction.bids if s == partner and b % 5 < NOTRUMP and b % 5 != strain]
    for s in reversed(partner_suits):  # partner's last named suit first
        cards = hand & SUIT_MASK[s]
        if cards:
            if cards.bit_count() <= 2 or _sequence_top(cards) is not None:
                return _highest(cards)  # top of a doubleton, top of a sequence
            return _lowest(cards)
    side = [s for s in range(4) if s != strain and hand & SUIT_MASK[s]]
    if not side:
        return _lowest(hand)
    opponents_suits = {b % 5 for s, b in auction.bids if s & 1 == table.declarer & 1}
    tops = [t for t in (_sequence_top(hand & SUIT_MASK[s]) for s in side) if t is not None]
    if tops:
        return max(tops, key=lambda c: c % 13)  # the strongest sequence (KQ before JT)
    if strain < NOTRUMP and hand & table.trumps:
        singles = [s for s in side if lengths[s] == 1 and not HCP[_highest(hand & SUIT_MASK[s])]]
        if singles:
            return _highest(hand & SUIT_MASK[singles[0]])  # partner may give a ruff
    if strain == NOTRUMP:
        s = max(side, key=lambda s: (lengths[s], s not in opponents_suits,
                                     sum(HCP[c] for c in _cards(hand & SUIT_MASK[s]))))
        return _fourth_best(hand & SUIT_MASK[s])
    # Against a suit: not away from an ace, not the opponents' suit, the longest.
    s = max(side, key=lambda s: (not hand & BIT[13 * s + 12], s not in opponents_suits, lengths[s]))
    cards = hand & SUIT_MASK[s]
    if not sum(HCP[c] for c in _cards(cards)):
        return _highest(cards)  # top of nothing
    return _fourth_best(cards)


def _sequence_top(cards: int) -> int | None:
    """The top card when ``cards`` are headed by two touching honours (AK, KQ, QJ, JT)."""
    if cards.bit_count() < 2:
        return None
    top = _highest(cards)
    if top % 13 >= 8 and cards & BIT[top - 1] and SUIT_OF[top - 1] == SUIT_OF[top]:
        return top
    return None


def _fourth_best(cards: int) -> int:
    ordered = sorted(_cards(cards), reverse=True)
    return ordered[3] if len(ordered) >= 4 else ordered[-1]


def _defender_lead(table: Table) -> int:
    """A lead by a defender after the first trick: cash winners (side suits that should not
    be ruffed first), return partner's suit, continue our own, else lead through dummy's
    strength or up to its weakness, never a trump unless nothing else is left."""
    hand = table.hand
    side = hand & ~table.trumps or hand
    trumps_out = table.unseen & table.trumps or table.dummy_hand & table.trumps
    for c in sorted(_cards(side), key=lambda c: -c % 13):
        s = SUIT_OF[c]
        if table.master(c) and (not table.trumps or not trumps_out or
                                (table.unseen & SUIT_MASK[s]).bit_count() >= 3
                                and table.dummy_hand & SUIT_MASK[s]):
            return c
    for s in reversed(table.partner_leads):
        cards = hand & SUIT_MASK[s]
        if cards and s != table.strain:
            return _highest(cards) if cards.bit_count() <= 2 else _lowest(cards)
    for s in reversed(table.own_leads):
        cards = hand & SUIT_MASK[s]
        if cards and s != table.strain and cards.bit_count() >= 2:
            return _lowest(cards)
    dummy_next = (table.player + 1) % 4 == table.dummy
    candidates = [s for s in range(4) if side & SUIT_MASK[s]]

    def score(s: int):
        dummy_strength = sum(HCP[c] for c in _cards(table.dummy_hand & SUIT_MASK[s]))
        underlead = bool(table.trumps) and bool(hand & BIT[13 * s + 12])
        # With dummy on our left lead through its honours; with dummy last lead its weakness.
        return (not underlead, dummy_strength if dummy_next else -dummy_strength, (hand & SUIT_MASK[s]).bit_count())
    s = max(candidates, key=score)
    cards = hand & SUIT_MASK[s]
    top = _sequence_top(cards)
    return top if top is not None else _lowest(cards)


def _declarer_lead(table: Table, other: int) -> int:
    """A lead by declarer from ``table.hand``; ``other`` is the partner hand (dummy's or
    declarer's own)."""
    hand, trumps = table.hand, table.trumps
    out = table.unseen  # the defenders' cards
    ours_trumps = (hand | other) & trumps
    out_trumps = out & trumps
    if trumps and out_trumps and hand & trumps and ours_trumps.bit_count() > out_trumps.bit_count():
        top = _highest(hand & trumps)
        # Draw trumps from the top; without the top trump, lead a low one (toward
        # partner's top trump, or to knock out the defenders' one).
        return top if table.master(top) else _lowest(hand & trumps)
    # Cash winners of side suits, the short hand's first so the long hand's are not blocked.
    cash = [c for c in _cards(hand & ~trumps) if table.master(c)]
    if cash:
        def order(c: int):
            s = SUIT_MASK[SUIT_OF[c]]
            return ((hand & s).bit_count() <= (other & s).bit_count(), c % 13)
        return max(cash, key=order)
    # Reach partner's winners with a low card.
    for s in range(4):
        if s == table.strain and out_trumps:
            continue
        if hand & SUIT_MASK[s] and any(table.master(c) for c in _cards(other & SUIT_MASK[s] & ~trumps)):
            return _lowest(hand & SUIT_MASK[s])
    # Ruff a loser in the other hand, which is void in the suit and holds trumps.
    if trumps and other & trumps:
        for s in range(4):
            if s != table.strain and hand & SUIT_MASK[s] and not other & SUIT_MASK[s]:
                return _lowest(hand & SUIT_MASK[s])
    plain = hand & ~trumps or hand
    s = max((s for s in range(4) if plain & SUIT_MASK[s]),
            key=lambda s: ((hand | other) & SUIT_MASK[s]).bit_count() * 4
            + sum(HCP[c] for c in _cards(other & SUIT_MASK[s])))
    return _lowest(hand & SUIT_MASK[s])


def _follow(table: Table, legal: int, other: int | None) -> int:
    """A card when the trick has been led (module docstring).  ``other``: the partner hand's
    remaining cards when they are seen (declarer's side), else None."""
    trick, strain = table.trick, table.strain
    lead = SUIT_OF[trick[0]]
    power = POWER[strain][lead]
    pos = len(trick)
    best_i = max(range(pos), key=lambda i: power[trick[i]])
    best = trick[best_i]
    best_seat = (table.first + best_i) % 4
    partner = PARTNER[table.player]
    after = [(table.player + k) % 4 for k in range(1, 4 - pos)]
    opponents_after = [p for p in after if p & 1 != table.player & 1]
    partner_holds = best_seat == partner and table.holds(best, lead, opponents_after)
    follow = legal & SUIT_MASK[lead]
    if follow:
        beaters = [c for c in _cards(follow) if power[c] > power[best]]
        if pos == 1:  # second hand
            if best_seat != partner and beaters and trick[0] % 13 >= 9 and best == trick[0]:
                # Cover an honour with an honour, unless partner (seen, last to play) wins anyway.
                if other is not None and any(power[c] > power[best] and table.master(c)
                                             for c in _cards(other & SUIT_MASK[lead])):
                    return _lowest(follow)
                return beaters[0]
            return _lowest(follow)
        if pos == 2:  # third hand
            if partner_holds or not beaters:
                return _lowest(follow)
            fourth = after[0]
            seen = table.known_hand(fourth)
            if seen is not None:
                their = seen & SUIT_MASK[lead]
                if their:
                    top = max(power[c] for c in _cards(their))
                    over = [c for c in beaters if power[c] > top]
                    return over[0] if over else _lowest(follow)
                if table.trumps and lead != strain and seen & table.trumps:
                    return _lowest(follow)  # the last hand will ruff
                return beaters[0]
            if table.declaring:
                masters = [c for c in beaters if table.master(c)]
                if masters:
                    return masters[0]  # win as cheaply as is sure
            return _equal_top(table, follow, beaters[-1])  # third hand high
        # Fourth hand: win as cheaply as possible, or play low.
        if best_seat == partner or not beaters:
            return _lowest(follow)
        return beaters[0]
    # Void in the suit led: ruff if it helps, else discard.
    trumps = legal & table.trumps
    if trumps and not partner_holds and lead != strain:
        over = [c for c in _cards(trumps) if power[c] > power[best]]
        if over and not (pos == 1 and other is not None and best_seat != partner and any(
                power[c] > power[best] and table.master(c) for c in _cards(other & SUIT_MASK[lead]))):
            return over[0]
    return _discard(table, legal)


def _card(obs: dict, legal: int) -> int:
    """The card number to play (module docstring, card play)."""
    table = Table(obs)
    own = table.own
    # The partner hand's remaining cards, when seen: dummy's for declarer, declarer's own
    # when it plays dummy; a defender sees none.
    if table.player == table.declarer:
        other = table.dummy_hand
    elif table.player == table.dummy:
        other = own
    else:
        other = None
    if table.trick:
        return _follow(table, legal, other)
    if table.declaring:
        return _declarer_lead(table, other or 0)
    if table.opening_lead:
        return _opening_lead(obs, table, Auction(obs["calls"], obs["dealer"]))
    return _defender_lead(table)


def rule_bot(obs: dict, legal: list, rng: random.Random):
    """A rule-based player (module docstring).  Deterministic given the observation; ``rng``
    is unused but kept for the policy signature."""
    if len(legal) == 1:
        return legal[0]
    if obs["phase"] == "auction":
        call = _call(obs)
        name = CALL_NAMES[call]
        return name if name in legal else "P"
    return CARD_NAMES[_card(obs, _mask(legal))]


# --- instant replay -------------------------------------------------------------------------
_SWAPPED = {"None": "None", "Both": "Both", "NS": "EW", "EW": "NS"}


def replay_deal(hands: list[list[str]], board: int) -> tuple[list[list[str]], int]:
    """The Closed room's deal of an instant replay: ``hands`` (N, E, S, W) rotated one seat
    clockwise (North's cards go to East, ...), and the board number (1-16) whose dealer is
    the next seat and whose vulnerability is swapped, so that the same cards deal and are
    vulnerable as in the Open room: the pair that held North-South's cards now holds them in
    East-West's seats.  With its pairs staying in their seats, a team then scores IMPs on
    the sum of the two North-South scores (:func:`games.bridge.scoring.imps`)."""
    dealer = (board_dealer(board) + 1) % 4
    vulnerability = _SWAPPED[board_vulnerability(board)]
    closed = next(b for b in range(1, 17)
                  if board_dealer(b) == dealer and board_vulnerability(b) == vulnerability)
    return [hands[3], hands[0], hands[1], hands[2]], closed


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "rules": ("Rule-based bot", rule_bot),
}

__all__ = ["BUILTIN_BOTS", "random_bot", "rule_bot", "hand_points", "suit_lengths", "is_balanced", "replay_deal"]
