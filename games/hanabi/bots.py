"""Built-in Hanabi bots: ``policy(observation, legal_actions, rng) -> action``.

They read only the observation of their seat (its own cards' faces are hidden unless hints
told them), as a bot over the protocol would, and remember nothing between turns: each turn
is worked out afresh from the observation (each card's hint knowledge, the fireworks, the
discards, the other hands, the last action).

- :func:`random_bot`: a uniformly random legal action.
- :func:`convention_bot`: natural meanings, no finesse.  Every player reads a hand the same
  way, from what everyone sees (each card's hint knowledge, the fireworks, the discards):
  a card's identities are the colour/number pairs its knowledge allows with a copy left; the
  *chop* is the oldest card no hint has touched; a card is *surely playable* when all its
  identities are playable; a touched card is *marked* (to be played) when one of its
  identities is playable and it cannot be a saved card: it is newer than the chop (a save
  touches the chop, so saved cards sit behind it), or none of its identities is a critical
  card (the last copy of a card still needed) that is not playable.  A hint is given only if
  every card it leaves marked is really playable.  On its turn, in this order, it:

  1. repairs the next player's hand when they would play a wrongly marked card (a later play
     or a discard can spoil a mark), or, before the last round, saves their chop when it is
     critical and they have nothing to play (a hint touching it);
  2. plays a surely playable card (private counts of the copies it sees included; the lowest
     number first), else a marked one, preferring a play that would not leave the next
     player a wrong mark (if it likely would, repairs their hand first);
  3. gives the hint that makes the most cards newly playable (sure or marked), nearest
     player first; a duplicate of a card someone else will play counts against it;
  4. in the last round, tries its likeliest card;
  5. discards a card known useless, else its chop, except right after a hint touched its
     chop (the new chop may be critical too: a neighbour looks again first) and, with five
     cards or fewer left in the deck, while another player has a card to play (stalling);
  6. with every token in the box or every card of its own touched: the most useful hint
     that marks nothing wrongly (saving a critical card, completing a card's identity), else
     one that touches no card;
  7. else discards the touched card least likely to be critical.
"""
from __future__ import annotations

import random

from games.hanabi.rules import COLORS, NUMBER_COUNTS

_CI = {c: i for i, c in enumerate(COLORS)}
# An identity is colour index * 5 + number - 1; a set of identities is a 25-bit mask.
_TOTAL = [NUMBER_COUNTS[n] for _ in COLORS for n in range(1, 6)]
_NUMBER_BITS = [0] + [sum(1 << (5 * c + n - 1) for c in range(5)) for n in range(1, 6)]
_CMASK = [0] * 32  # allowed colours (bit = colour index) -> identities
_NMASK = [0] * 32  # allowed numbers (bit = number - 1) -> identities
for _b in range(32):
    for _i in range(5):
        if _b >> _i & 1:
            _CMASK[_b] |= 0b11111 << (5 * _i)
            _NMASK[_b] |= _NUMBER_BITS[_i + 1]
_ALL_HINTS = [(0, v) for v in range(5)] + [(1, v) for v in range(1, 6)]  # (0, colour index) / (1, number)

# Weights of a hint's side effects (a new playable card counts 1, saving a critical chop 1).
_W_CRITICAL = 0.4  # touching a critical card that is not the chop
_W_USELESS = 0.5  # touching a useless card (minus)
_W_WAITING = 0.15  # touching a card that is neither playable nor critical (minus)
_W_NEW_CHOP = 0.5  # leaving a critical card as the new chop of a hand with nothing to play (minus)
_W_IDENTIFIED = 0.3  # making a touched card's identity fully known
_RISK = 0.6  # repair first when a play would leave the next player a wrong mark this likely
_STALL_DECK = 5  # stall rather than discard with this many cards left in the deck


def random_bot(obs: dict, legal: list, rng: random.Random):
    """Any legal action, uniformly."""
    return rng.choice(legal)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _min_number(mask: int) -> int:
    for n in range(1, 6):
        if mask & _NUMBER_BITS[n]:
            return n
    return 6


class _Card:
    """A card as the seat sees it: its identity (-1 when hidden) and what its holder knows:
    the colours (``cb``) and numbers (``nb``) still allowed, and whether a hint touched it."""

    __slots__ = ("id", "ident", "cb", "nb", "touched")

    def __init__(self, card: dict):
        k = card["knowledge"]
        self.id = card["id"]
        color, number = card["color"], card["number"]
        self.ident = _CI[color] * 5 + number - 1 if color is not None and number is not None else -1
        if k["color"] is not None:
            self.cb = 1 << _CI[k["color"]]
        else:
            self.cb = 31 & ~sum(1 << _CI[c] for c in k["not_colors"])
        if k["number"] is not None:
            self.nb = 1 << (k["number"] - 1)
        else:
            self.nb = 31 & ~sum(1 << (n - 1) for n in k["not_numbers"])
        self.touched = k["color"] is not None or k["number"] is not None


class _Table:
    """What the seat sees, and the common knowledge every player reads hands with."""

    def __init__(self, obs: dict):
        self.me = obs["seat"]
        self.n = obs["players"]
        self.fw = [obs["fireworks"][c] for c in COLORS]
        self.disc = [0] * 25
        for card in obs["discards"]:
            self.disc[_CI[card["color"]] * 5 + card["number"] - 1] += 1
        self._masks()
        self.hands = [[_Card(card) for card in hand] for hand in obs["hands"]]
        unseen = list(self.remaining)
        for seat, hand in enumerate(self.hands):
            if seat != self.me:
                for card in hand:
                    unseen[card.ident] -= 1
        self.unseen = unseen  # copies I cannot see (in my hand or the deck)
        self.hidden_left = sum(1 << i for i in range(25) if unseen[i] > 0)
        self._analyses: dict = {}

    def _masks(self):
        """Copies left per identity, and the masks: left at all, playable, useless, critical."""
        remaining = [0] * 25
        left_any = playable = useless = critical = 0
        for c in range(5):
            dead = False  # a lower card of the colour is gone for good
            for n in range(1, 6):
                i = c * 5 + n - 1
                left = _TOTAL[i] - self.disc[i]
                if n <= self.fw[c]:
                    useless |= 1 << i
                    left -= 1
                elif dead:
                    useless |= 1 << i
                else:
                    if n == self.fw[c] + 1:
                        playable |= 1 << i
                    if left == 1:
                        critical |= 1 << i
                    dead = left == 0
                remaining[i] = left
                if left > 0:
                    left_any |= 1 << i
        self.remaining = remaining
        self.left_any, self.playable, self.useless, self.critical = left_any, playable, useless, critical

    def after_play(self, ident: int) -> "_Table":
        """The same table once the playable ``ident`` is played."""
        other = _Table.__new__(_Table)
        other.__dict__.update(self.__dict__)
        other.fw = list(self.fw)
        other.fw[ident // 5] += 1
        other._masks()
        other._analyses = {}
        return other

    def identities(self, cb: int, nb: int) -> int:
        """The identities allowed by a card's knowledge that have a copy left."""
        m = _CMASK[cb] & _NMASK[nb]
        return (m & self.left_any) or m

    def analyze(self, cards, cbs=None, nbs=None, touched=None):
        """A hand as every player reads it (knowledge given, or the cards' own): (chop id or
        None, [identities], [flag]) with flag 1 surely playable, 2 marked, else 0."""
        if cbs is None:
            cbs = [c.cb for c in cards]
            nbs = [c.nb for c in cards]
            touched = [c.touched for c in cards]
        chop = None
        for card, t in zip(cards, touched):
            if not t and (chop is None or card.id < chop):
                chop = card.id
        playable = self.playable
        saved_kind = self.critical & ~playable
        poss, flag = [], []
        for k, card in enumerate(cards):
            p = self.identities(cbs[k], nbs[k])
            poss.append(p)
            if p and not p & ~playable:
                flag.append(1)
            elif touched[k] and p & playable and ((chop is not None and card.id > chop) or not p & saved_kind):
                flag.append(2)
            else:
                flag.append(0)
        return chop, poss, flag

    def seat_analysis(self, seat: int):
        """:meth:`analyze` of a seat's hand as it stands (cached)."""
        got = self._analyses.get(seat)
        if got is None:
            got = self._analyses[seat] = self.analyze(self.hands[seat])
        return got

    def first_play(self, cards, poss, flag):
        """The index of the card its holder plays first (sure before marked, the lowest
        number, the newest), or None."""
        best, key = None, None
        for k, f in enumerate(flag):
            if f:
                kk = (f, _min_number(poss[k] & self.playable), -cards[k].id)
                if key is None or kk < key:
                    best, key = k, kk
        return best

    def will_misplay(self, seat: int) -> bool:
        """Whether another seat's first play is a card that is not playable."""
        cards = self.hands[seat]
        _, poss, flag = self.seat_analysis(seat)
        first = self.first_play(cards, poss, flag)
        return first is not None and not (1 << cards[first].ident) & self.playable

    def claimed(self, skip: int) -> int:
        """Playable identities that a player other than ``skip`` and me holds sure or marked."""
        out = 0
        for seat in range(self.n):
            if seat != self.me and seat != skip:
                cards = self.hands[seat]
                for k, f in enumerate(self.seat_analysis(seat)[2]):
                    if f and (1 << cards[k].ident) & self.playable:
                        out |= 1 << cards[k].ident
        return out


def _after_hint(cards, kind, value):
    """Each card's knowledge after a hint: (cbs, nbs, touched, hit)."""
    cbs, nbs, touched, hit = [], [], [], []
    for card in cards:
        if kind == 0:
            m = card.ident // 5 == value
            cbs.append(1 << value if m else card.cb & ~(1 << value))
            nbs.append(card.nb)
        else:
            m = card.ident % 5 == value - 1
            cbs.append(card.cb)
            nbs.append(1 << (value - 1) if m else card.nb & ~(1 << (value - 1)))
        touched.append(card.touched or m)
        hit.append(m)
    return cbs, nbs, touched, hit


def _evaluate(table: _Table, seat: int, kind: int, value: int, claimed: int):
    """A hint to ``seat``: (wrong marks it leaves, cards it makes newly playable, gain)."""
    cards = table.hands[seat]
    old_chop, old_poss, old_flag = table.seat_analysis(seat)
    cbs, nbs, touched, hit = _after_hint(cards, kind, value)
    chop, poss, flag = table.analyze(cards, cbs, nbs, touched)
    playable, critical, useless = table.playable, table.critical, table.useless
    wrong = plays = 0
    gain = 0.0
    taken = claimed
    for k, card in enumerate(cards):
        bit = 1 << card.ident
        if flag[k]:
            if not bit & playable:
                wrong += 1
                continue
            if bit & taken:
                gain -= 1.0
                continue
            taken |= bit
            if not old_flag[k]:
                plays += 1
                gain += 1.0
                continue
        p = poss[k]
        if touched[k] and not bit & useless and not p & (p - 1) and old_poss[k] & (old_poss[k] - 1):
            gain += _W_IDENTIFIED
        if hit[k] and not card.touched:
            if bit & critical:
                gain += 1.0 if card.id == old_chop else _W_CRITICAL
            elif bit & useless:
                gain -= _W_USELESS
            else:
                gain -= _W_WAITING
    if chop is not None and chop != old_chop and not any(flag):
        if (1 << next(c for c in cards if c.id == chop).ident) & critical:
            gain -= _W_NEW_CHOP
    return wrong, plays, gain


def _hint(seat: int, kind: int, value: int) -> list:
    return ["color", seat, COLORS[value]] if kind == 0 else ["number", seat, value]


def _repair(table: _Table, seat: int, tables: list, chop: int | None = None):
    """The hint to ``seat`` leaving the fewest wrong marks over ``tables`` (then the best
    gain on ``table``), touching the card ``chop`` if given: (wrong marks, hint) or None."""
    claimed = table.claimed(seat)
    chop_card = next(c for c in table.hands[seat] if c.id == chop) if chop is not None else None
    best, best_key = None, None
    for kind, value in _ALL_HINTS:
        if chop_card is not None and (chop_card.ident // 5 if kind == 0 else chop_card.ident % 5 + 1) != value:
            continue
        wrong, gain = 0, 0.0
        for t in tables:
            w, _, g = _evaluate(t, seat, kind, value, claimed)
            wrong += w
            if t is table:
                gain = g
        if best_key is None or (-wrong, gain) > best_key:
            best, best_key = (kind, value), (-wrong, gain)
    return None if best is None else (-best_key[0], _hint(seat, *best))


def _chop_just_touched(obs: dict, mine: list) -> bool:
    """Whether the last action was a hint to me that touched my chop of the time."""
    last = obs.get("last")
    if not last or last.get("type") != "hint" or last.get("target") != obs["seat"] or not last["touched"]:
        return False
    other = "number" if "color" in last else "color"
    hit = set(last["touched"])
    before = [c.id for c in mine if not c.touched]
    before += [c["id"] for c in obs["hands"][obs["seat"]] if c["id"] in hit and c["knowledge"][other] is None]
    return bool(before) and min(before) in hit


def _chances(table: _Table, poss: int, good: int) -> float:
    """The share of the copies I cannot see, among ``poss``, that are in ``good``."""
    total = hits = 0
    for i in _bits(poss):
        w = max(table.unseen[i], 0)
        total += w
        if (1 << i) & good:
            hits += w
    return hits / total if total else 0.0


def convention_bot(obs: dict, legal: list, rng: random.Random):
    """The convention bot: natural meanings, in the order of the module docstring."""
    table = _Table(obs)
    me, n = table.me, table.n
    mine = table.hands[me]
    tokens = obs["hint_tokens"]
    playable = table.playable
    final = obs["deck_count"] == 0
    # players still to act after me (everyone before the last round)
    turns_after = (n - 1 if obs["turns_left"] is None else obs["turns_left"] - 1) if final else n
    nxt = (me + 1) % n

    # My cards: their identities with the copies I see elsewhere (and my known cards) removed.
    chop, ck_poss, flag = table.seat_analysis(me)
    my_poss = [(p & table.hidden_left) or p for p in ck_poss]
    known = [p if p and not p & (p - 1) else 0 for p in my_poss]
    for k, p in enumerate(my_poss):
        if not known[k]:
            for q in set(known) - {0}:
                if table.unseen[q.bit_length() - 1] <= known.count(q):
                    p &= ~q
            my_poss[k] = p or my_poss[k]
    plays = []
    for k, card in enumerate(mine):
        p = my_poss[k]
        if p and not p & ~playable:
            plays.append(((0, _min_number(p), -card.id), card, p))
        elif flag[k] == 2 and p & playable:
            plays.append(((1, _min_number(p & playable), -card.id), card, p & playable))
    plays.sort(key=lambda x: x[0])

    # 1. The next player would play a wrongly marked card, or discard a critical chop.
    if tokens > 0 and turns_after >= 1:
        if table.will_misplay(nxt):
            fix = _repair(table, nxt, [table])
            if fix is not None:
                return fix[1]
        nchop, _, nflag = table.seat_analysis(nxt)
        if not final and nchop is not None and not any(nflag):
            if (1 << next(c for c in table.hands[nxt] if c.id == nchop).ident) & table.critical:
                save = _repair(table, nxt, [table], chop=nchop)
                if save is not None and save[0] == 0:
                    return save[1]

    # 2. Play, preferring a card whose play leaves the next player no wrong mark.
    if plays:
        best, best_risk = None, None
        for _, card, p in plays:
            total = bad = 0
            for i in _bits(p):
                w = max(table.unseen[i], 0)
                total += w
                if w and table.after_play(i).will_misplay(nxt):
                    bad += w
            risk = bad / total if total else 0.0
            if best_risk is None or risk < best_risk - 1e-9:
                best, best_risk = (card, p), risk
            if risk == 0:
                break
        if best_risk > _RISK and tokens > 0 and turns_after >= 1:
            fix = _repair(table, nxt, [table] + [table.after_play(i) for i in _bits(best[1])])
            if fix is not None and fix[0] == 0:
                return fix[1]
        return ["play", best[0].id]

    # 3. The hint that makes the most cards newly playable, to a player who will still act.
    if tokens > 0:
        best, best_key = None, None
        for step in range(1, min(n, turns_after + 1)):
            seat = (me + step) % n
            claimed = table.claimed(seat)
            options = set()
            for card in table.hands[seat]:
                if (1 << card.ident) & playable:
                    options.add((0, card.ident // 5))
                    options.add((1, card.ident % 5 + 1))
            for kind, value in options:
                wrong, new_plays, gain = _evaluate(table, seat, kind, value, claimed)
                if not wrong and new_plays and (best_key is None or (gain, -step) > best_key):
                    best, best_key = _hint(seat, kind, value), (gain, -step)
        if best is not None:
            return best

    # 4. The last round: try the likeliest card (a misplay costs nothing more unless it is
    # the third and others would still act).
    if final:
        card, chance = None, 0.0
        for k, c in enumerate(mine):
            p = _chances(table, my_poss[k], playable)
            if p > chance:
                card, chance = c, p
        if card is not None and (obs["err_tokens"] > 1 or turns_after == 0 or chance > 0.5):
            return ["play", card.id]

    # 5. Discard a card known useless, else the chop (unless waiting is better).
    if tokens < obs["hint_tokens_max"]:
        for k, card in enumerate(mine):
            if my_poss[k] and not my_poss[k] & ~table.useless:
                return ["discard", card.id]
        stall = tokens > 0 and (_chop_just_touched(obs, mine) or (
            obs["deck_count"] <= _STALL_DECK and any(any(table.seat_analysis(s)[2]) for s in range(n) if s != me)))
        if chop is not None and not stall:
            return ["discard", chop]

    # 6. A harmless hint: the most useful one, else one touching no card.
    if tokens > 0:
        best, best_key = None, None
        for step in range(1, n):
            seat = (me + step) % n
            claimed = table.claimed(seat)
            for kind, value in _ALL_HINTS:
                wrong, _, gain = _evaluate(table, seat, kind, value, claimed)
                if not wrong and gain > 0 and (best_key is None or (gain, -step) > best_key):
                    best, best_key = _hint(seat, kind, value), (gain, -step)
        if best is not None:
            return best
        for step in range(1, n):
            seat = (me + step) % n
            for kind, value in _ALL_HINTS:
                if all((c.ident // 5 if kind == 0 else c.ident % 5 + 1) != value for c in table.hands[seat]):
                    return _hint(seat, kind, value)

    # 7. Discard the card least likely to be critical (the likeliest useless first).
    if tokens < obs["hint_tokens_max"]:
        def risk(k: int):
            return (_chances(table, my_poss[k], table.critical) - 0.5 * _chances(table, my_poss[k], table.useless),
                    mine[k].id)
        return ["discard", mine[min(range(len(mine)), key=risk)].id]
    return _repair(table, nxt, [table])[1]


BUILTIN_BOTS = {
    "random": ("Random bot", random_bot),
    "convention": ("Convention bot", convention_bot),
}

__all__ = ["BUILTIN_BOTS", "random_bot", "convention_bot"]
