"""Contract bridge rules: deal, auction, play and duplicate score of a sequence of boards.

Pure Python, no Django, no I/O (docs/architecture.md, "Layers").  The Laws cited are the Laws
of Duplicate Bridge (2017).

Seats: 0 North, 1 East, 2 South, 3 West; play and the auction go clockwise, the next seat
after ``p`` is ``(p + 1) % 4``.  Sides: 0 North-South, 1 East-West (``side = seat & 1``).

A state plays a sequence of deals ("boards") under one of two scorings (config,
:func:`normalize_config`):

- ``"duplicate"`` (the default): ``boards`` boards numbered from ``board``; the board number
  fixes the dealer and the vulnerability by the standard 16-board cycle (Law 2,
  :func:`board_dealer`, :func:`board_vulnerability`); each board gets its duplicate score.
  With ``replay`` (a team match at one table, "instant replay"), each board is played twice
  under the same number: the Open room as dealt, then the Closed room with the hands
  rotated one seat clockwise (North's cards to East, ...), the dealer one seat on and the
  vulnerability turned with the cards, so each pair, staying in its seats, holds both sides
  of every deal.  After the Closed room the board is scored in IMPs (Law 78B) on the sum of
  North-South's two scores (the pair that sits North-South held North-South's cards in the
  Open room and East-West's in the Closed one).
- ``"rubber"``: one rubber of rubber bridge (:class:`games.bridge.scoring.Rubber`): the deal
  passes clockwise after every deal, passed-out ones included, from ``dealer`` (drawn from
  the seed if not given); a side is vulnerable once it has won a game; honours are counted
  from the hands as dealt; the state ends with the rubber, or after ``boards`` deals with
  the unfinished rubber's bonuses.

1. Deal: 52 cards, 13 each, from the state's ``random.Random(seed)``, or given explicitly
   (``deals``: duplicate replay of the same hands, imported boards, tests).
2. Auction, from the dealer clockwise.  A bid must name more tricks, or as many in a higher
   strain (C < D < H < S < NT), than the last bid (Law 18).  Double: only the last bid, made
   by an opponent, not yet doubled (Law 19A); redouble: only an opponent's double of your
   side's bid (Law 19B); both are void once another bid is made.  Three passes in a row after
   any call close the auction; four passes at the start pass the deal out (Law 22).
3. Declarer: the player of the contracting side who first named the final contract's strain
   (Law 22, definitions).  Dummy is declarer's partner.
4. Play: the player on declarer's left leads (Law 41); dummy's hand is exposed after the
   opening lead (Law 41D) and played by declarer.  Players follow suit if they can (Law 44C);
   a trick is won by the highest trump in it, else by the highest card of the suit led (Law
   44E, 44G); its winner leads the next.  Thirteen tricks.
5. Score: the duplicate score of the contract (games.bridge.scoring, Law 77), or its rubber
   score above and below the line; a passed-out board scores 0.

Turn of dummy's hand (``to_act``): when a card is due from dummy, :meth:`BridgeState.to_act`
names **declarer** (the runner asks the seats in ``to_act``, and it is declarer who chooses
dummy's card; the Blue Chip client that sends it is declarer's).  The seat whose *hand* plays
is given separately as ``player`` in every view, so a codec still reports dummy's card under
dummy's real seat (``South plays 7H``), and the ``card`` happening says ``seat`` = dummy,
``by`` = declarer.  Dummy itself never acts: ``is_legal(dummy, ...)`` is always False.

Actions (JSON-able strings; :func:`parse_call`, :func:`parse_card` accept the looser forms the
wire protocols use and return these):

- calls: bids ``"1C"`` ... ``"7NT"`` (level 1-7 and strain ``C``, ``D``, ``H``, ``S``,
  ``NT``), ``"P"`` (pass), ``"X"`` (double), ``"XX"`` (redouble);
- cards: suit then rank, ``"SA"``, ``"HT"``, ``"C2"`` (suits ``S H D C``, ranks
  ``A K Q J T 9 8 7 6 5 4 3 2``, T for ten).

Cards are numbered 0-51 as ``13 * suit + rank``, suits clubs 0, diamonds 1, hearts 2,
spades 3 (the strain numbers, so a trump strain is a suit number), ranks 0 (two) to 12
(ace), so within a suit a higher number is a higher card.  Hands are 52-bit masks.

Claims are not implemented: a board is played out to the last card.
"""
from __future__ import annotations

import random
from typing import Iterable, Mapping

from games.base import Action, State
from games.bridge import scoring

# --- cards ----------------------------------------------------------------------------------
SUIT_LETTERS = "CDHS"  # by suit number
RANK_LETTERS = "23456789TJQKA"  # by rank number
SEAT_NAMES = ("North", "East", "South", "West")
SEAT_LETTERS = "NESW"
STRAIN_NAMES = scoring.STRAIN_NAMES  # C D H S NT
NOTRUMP = scoring.NOTRUMP

CARD_NAMES: tuple[str, ...] = tuple(SUIT_LETTERS[c // 13] + RANK_LETTERS[c % 13] for c in range(52))
CARD_INDEX: dict[str, int] = {name: c for c, name in enumerate(CARD_NAMES)}
ALL_CARDS = (1 << 52) - 1
BIT = tuple(1 << c for c in range(52))
SUIT_OF = tuple(c // 13 for c in range(52))
SUIT_MASK = tuple(0x1FFF << (13 * s) for s in range(4))

NEXT = (1, 2, 3, 0)
PARTNER = (2, 3, 0, 1)
TRICKS = 13

# ``POWER[strain][led suit][card]``: the trick goes to the card of highest power (Law 44E/G):
# trumps 100+rank, the suit led its rank, other cards -1.
POWER = tuple(
    tuple(
        tuple(100 + c % 13 if SUIT_OF[c] == strain else c % 13 if SUIT_OF[c] == led else -1
              for c in range(52))
        for led in range(4))
    for strain in range(5))

# Card names of every 13-bit pattern of a suit, highest first, so that a hand becomes a list
# in four lookups (the order hands are shown in: spades, hearts, diamonds, clubs).
_SUIT_PATTERN_NAMES = tuple(
    tuple(tuple(CARD_NAMES[13 * s + r] for r in range(12, -1, -1) if pattern >> r & 1) for pattern in range(8192))
    for s in range(4))


def mask_to_names(mask: int) -> list[str]:
    """The card names in ``mask`` (52-bit), spades first, each suit from the ace down."""
    c, d, h, s = _SUIT_PATTERN_NAMES
    return [*s[mask >> 39 & 8191], *h[mask >> 26 & 8191], *d[mask >> 13 & 8191], *c[mask & 8191]]


def names_to_mask(names: Iterable[str]) -> int:
    """The 52-bit mask of canonical card names; raises ``ValueError`` for an unknown or
    repeated name."""
    mask = 0
    for name in names:
        c = CARD_INDEX.get(name) if isinstance(name, str) else None
        if c is None:
            raise ValueError(f"{name!r} is not a card name (SA, HT, C2, ...: suit then rank, T for ten)")
        if mask & BIT[c]:
            raise ValueError(f"card {name} appears twice")
        mask |= BIT[c]
    return mask


def parse_card(text: str) -> str:
    """A card in any usual written form to its canonical name: suit and rank in either order
    (``"SA"``, ``"AS"``, Blue Chip's ``"KH"``), any case, ``T`` or ``10`` for ten.  Raises
    ``ValueError`` naming the text if it is no card."""
    t = text.strip().upper() if isinstance(text, str) else ""
    if len(t) == 3 and "10" in t:
        t = t.replace("10", "T")
    if len(t) == 2:
        if t[0] in SUIT_LETTERS and t[1] in RANK_LETTERS:
            return t
        if t[1] in SUIT_LETTERS and t[0] in RANK_LETTERS:
            return t[1] + t[0]
    raise ValueError(f"{text!r} is not a card (suit and rank, e.g. SA, HT, C2)")


# --- calls ----------------------------------------------------------------------------------
# Calls are numbered: bids 0-34 as 5 * (level - 1) + strain, so a higher number is a higher
# bid (Law 18); then pass, double, redouble.
PASS, DOUBLE, REDOUBLE = 35, 36, 37
CALL_NAMES: tuple[str, ...] = tuple(f"{b // 5 + 1}{STRAIN_NAMES[b % 5]}" for b in range(35)) + ("P", "X", "XX")
CALL_INDEX: dict[str, int] = {name: i for i, name in enumerate(CALL_NAMES)}

_CALL_WORDS = {"P": "P", "PASS": "P", "PASSES": "P", "X": "X", "D": "X", "DBL": "X", "DOUBLE": "X",
               "DOUBLES": "X", "XX": "XX", "R": "XX", "RDBL": "XX", "REDOUBLE": "XX", "REDOUBLES": "XX"}


def parse_call(text: str) -> str:
    """A call in any usual written form to its canonical name: any case; ``PASS``/``P``,
    ``DOUBLE``/``X``/``DBL``, ``REDOUBLE``/``XX``/``RDBL`` (and the Blue Chip verbs
    ``passes``, ``doubles``, ``redoubles``); bids as ``1NT``, ``1N``, ``3S``.  Raises
    ``ValueError`` naming the text if it is no call."""
    t = text.strip().upper() if isinstance(text, str) else ""
    if t in _CALL_WORDS:
        return _CALL_WORDS[t]
    if t.endswith("N"):
        t += "T"
    if t in CALL_INDEX:
        return t
    raise ValueError(f"{text!r} is not a call (1C ... 7NT, P, X, XX)")


def contract_name(level: int, strain: int, doubled: int) -> str:
    """A contract as text: ``"4S"``, ``"3NTX"``, ``"7NTXX"``."""
    return f"{level}{STRAIN_NAMES[strain]}{('', 'X', 'XX')[doubled]}"


# --- boards (Law 2) -------------------------------------------------------------------------
VULNERABILITY_NAMES = ("None", "NS", "EW", "Both")
# Vulnerability of boards 1-16 (Law 2), as an index into VULNERABILITY_NAMES.
_CYCLE = (0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2)


def board_dealer(board: int) -> int:
    """The dealer of a duplicate board (Law 2): North deals board 1, East 2, South 3, West 4,
    and so on round the table."""
    return (board - 1) % 4


def board_vulnerability(board: int) -> str:
    """The vulnerability of a duplicate board (Law 2): one of ``"None"``, ``"NS"``, ``"EW"``,
    ``"Both"``, repeating every 16 boards (1 None, 2 NS, 3 EW, 4 Both, 5 NS, 6 EW, 7 Both,
    8 None, 9 EW, 10 Both, 11 None, 12 NS, 13 Both, 14 None, 15 NS, 16 EW)."""
    return VULNERABILITY_NAMES[_CYCLE[(board - 1) % 16]]


def side_vulnerable(vulnerability: str, side: int) -> bool:
    """Whether ``side`` (0 N-S, 1 E-W) is vulnerable under a vulnerability name."""
    return vulnerability == "Both" or vulnerability == ("NS", "EW")[side]


# --- configuration --------------------------------------------------------------------------
MAX_BOARDS = 1000
DEFAULT_CONFIG = {"board": 1, "scoring": "duplicate"}
SCORINGS = ("duplicate", "rubber")


def normalize_config(config: Mapping | None) -> dict:
    """Validate and complete a configuration.

    Keys: ``scoring`` (``"duplicate"``, the default, or ``"rubber"``: module docstring),
    ``board`` (the first board's number, 1-100000, default 1; duplicate only), ``boards``
    (how many boards the state plays at most, 1-1000; default 1 for duplicate, 1000 for a
    rubber, which usually ends first), ``replay`` (duplicate only, default False: each
    board twice, module docstring; ``boards`` counts deals, so the state plays twice as
    many boards, and ``deals`` gives the Open rooms' deals), ``dealer`` (rubber only: the first dealer 0-3, default
    drawn from the seed), and optionally ``deals``: given deals played before any shuffled
    one, each ``{"hands": [[13 card names] x 4]}`` (seat order N, E, S, W) with an optional
    ``"board"`` number (default: the board's place in the sequence), so the same board may be
    played twice with rotated hands (instant replay), and, for duplicate, an optional
    ``"dealer"`` (0-3) and ``"vulnerability"`` (``"None"``, ``"NS"``, ``"EW"``, ``"Both"``)
    that replace what Law 2 gives the board number: a replay room that keeps the board's
    number while the hands turn (BEN's board N "Open" then "Closed"), or an imported board
    whose file says otherwise.  Unknown keys are ignored.  Raises ``ValueError`` naming the
    bad key.
    """
    merged = dict(DEFAULT_CONFIG)
    merged.update(config or {})
    out = {"scoring": merged["scoring"]}
    if out["scoring"] not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {out['scoring']!r}")
    merged.setdefault("boards", MAX_BOARDS if out["scoring"] == "rubber" else 1)
    dealer = merged.get("dealer")
    if dealer is not None and (type(dealer) is not int or not 0 <= dealer <= 3):
        raise ValueError(f"dealer must be a seat 0-3, got {dealer!r}")
    out["dealer"] = dealer
    replay = merged.get("replay", False)
    if replay not in (0, 1) or replay and out["scoring"] != "duplicate":  # True and False included
        raise ValueError("replay (a team match) must be on or off, and on only with duplicate scoring")
    out["replay"] = bool(replay)
    for key, high in (("board", 100_000), ("boards", MAX_BOARDS)):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise ValueError(f"{key} must be a whole number from 1 to {high}, got {value!r}")
        out[key] = value
    deals = merged.get("deals") or []
    if not isinstance(deals, list) or len(deals) > out["boards"]:
        raise ValueError("deals must be a list of at most `boards` deals")
    out["deals"] = []
    for i, deal in enumerate(deals):
        if not isinstance(deal, Mapping):
            raise ValueError(f"deal {i + 1}: must be an object with hands")
        board = deal.get("board", out["board"] + i)
        if isinstance(board, bool) or not isinstance(board, int) or not 1 <= board <= 100_000:
            raise ValueError(f"deal {i + 1}: board must be a whole number from 1 to 100000")
        masks = hands_to_masks(deal.get("hands"))
        entry = {"board": board, "hands": [mask_to_names(m) for m in masks]}
        if deal.get("dealer") is not None:
            if type(deal["dealer"]) is not int or not 0 <= deal["dealer"] <= 3:
                raise ValueError(f"deal {i + 1}: dealer must be a seat 0-3, got {deal['dealer']!r}")
            entry["dealer"] = deal["dealer"]
        if deal.get("vulnerability") is not None:
            if deal["vulnerability"] not in VULNERABILITY_NAMES:
                raise ValueError(f"deal {i + 1}: vulnerability must be one of {', '.join(VULNERABILITY_NAMES)}")
            entry["vulnerability"] = deal["vulnerability"]
        out["deals"].append(entry)
    return out


def hands_to_masks(hands) -> list[int]:
    """Four hands of 13 card names (N, E, S, W) as masks; raises ``ValueError`` unless they
    are a deal (each of the 52 cards once)."""
    if not isinstance(hands, (list, tuple)) or len(hands) != 4:
        raise ValueError("a deal needs four hands (North, East, South, West)")
    masks = []
    for seat, hand in enumerate(hands):
        if not isinstance(hand, (list, tuple)) or len(hand) != 13:
            raise ValueError(f"{SEAT_NAMES[seat]} must hold 13 cards")
        masks.append(names_to_mask(hand))
    if masks[0] | masks[1] | masks[2] | masks[3] != ALL_CARDS or sum(m.bit_count() for m in masks) != 52:
        raise ValueError("the four hands must hold each of the 52 cards once")
    return masks


_AUCTION, _PLAY, _OVER = 0, 1, 2
#: Vulnerability turned with the cards one seat on (instant replay's Closed room).
_TURNED = {"None": "None", "Both": "Both", "NS": "EW", "EW": "NS"}
#: The keys of a finished board in the views (``results``).
_RESULT_KEYS = ("board", "contract", "declarer", "result", "score", "room", "imps")
_PHASE_NAMES = ("auction", "play", "over")


class BridgeState(State):
    """A sequence of boards, duplicate or a rubber (module docstring).  Build with
    :func:`new_state`.

    Besides the :class:`games.base.State` API: :meth:`legal_calls` / :meth:`legal_cards`
    (the fast path: call numbers and card masks), :meth:`why_illegal` (a sentence for a bot
    author), :meth:`board_records` (finished boards), and the public fields ``board``,
    ``dealer``, ``vulnerability``, ``phase`` (0 auction, 1 play, 2 over), ``calls`` (call
    numbers), ``declarer``, ``dummy``, ``player`` (the seat whose hand plays next),
    ``tricks_won`` [N-S, E-W].
    """

    num_seats = 4

    __slots__ = (
        "first_board", "boards", "presets", "rng", "played", "board", "dealer", "vulnerability",
        "dealt", "hands", "phase", "calls", "last_bid", "last_bidder", "doubled", "passes",
        "first_namer", "level", "strain", "declarer", "dummy", "player", "trick", "trick_first",
        "best_power", "best_seat", "power", "tricks", "tricks_won", "records", "totals",
        # the views' forms of ``calls`` and ``tricks``, kept up to date rather than rebuilt
        # for every view (public_observation)
        "call_names", "trick_views", "results",
        # rubber scoring: the score sheet (None for duplicate) and the first dealer
        "rubber", "first_dealer",
        # instant replay: whether boards are played twice, and the IMPs so far [N-S, E-W]
        "replay", "imps",
    )

    def __init__(self, config: Mapping | None, seed: int):
        cfg = normalize_config(config)
        self.first_board = cfg["board"]
        self.replay = cfg["replay"]
        self.boards = cfg["boards"] * (2 if self.replay else 1)  # boards played
        self.presets = cfg["deals"]
        self.imps = [0, 0]
        self.rng = random.Random(seed)
        self.played = 0  # boards finished
        self.records: list[dict] = []
        self.results: list[dict] = []  # the public part of each record, for the views
        self.totals = [0, 0]  # points per side
        self.rubber = scoring.Rubber() if cfg["scoring"] == "rubber" else None
        self.first_dealer = cfg["dealer"] if cfg["dealer"] is not None else self.rng.randrange(4)
        self._start_board()

    # --- chance -----------------------------------------------------------------------------
    def _start_board(self) -> None:
        i = self.played
        if self.replay and i % 2:  # the Closed room: the Open room's cards, one seat on
            open_room = self.records[-1]
            hands = [names_to_mask(h) for h in open_room["hands"]]
            self._deal(open_room["board"], [hands[3], hands[0], hands[1], hands[2]], {
                "dealer": NEXT[open_room["dealer"]],
                "vulnerability": _TURNED[open_room["vulnerability"]]})
            return
        if self.replay:
            i //= 2
        preset = self.presets[i] if i < len(self.presets) else {}
        if preset:
            board, hands = preset["board"], [names_to_mask(h) for h in preset["hands"]]
        else:
            board = self.first_board + i
            deck = list(BIT)
            self.rng.shuffle(deck)
            hands = [sum(deck[0:13]), sum(deck[13:26]), sum(deck[26:39]), sum(deck[39:52])]
        self._deal(board, hands, preset)

    def _deal(self, board: int, hands: list[int], preset: Mapping) -> None:
        """Start board number ``board`` with these hands (masks, N E S W); ``preset`` may
        give its dealer and vulnerability (duplicate)."""
        i = self.played
        self.board = board
        if self.rubber is None:  # Law 2 by the board's number, unless the deal says otherwise
            self.dealer = preset.get("dealer", board_dealer(board))
            self.vulnerability = preset.get("vulnerability", board_vulnerability(board))
        else:  # the deal passes clockwise; vulnerability is by the games won
            self.board = i + 1
            self.dealer = (self.first_dealer + i) % 4
            self.vulnerability = VULNERABILITY_NAMES[self.rubber.vulnerable(0) + 2 * self.rubber.vulnerable(1)]
        self.dealt = tuple(hands)
        self.hands = list(hands)
        self.phase = _AUCTION
        self.calls: list[int] = []
        self.call_names: list[str] = []
        self.last_bid = -1
        self.last_bidder = -1
        self.doubled = 0
        self.passes = 0
        self.first_namer = [[-1] * 5, [-1] * 5]  # [side][strain]: the first seat to bid it
        self.level = self.strain = -1
        self.declarer = self.dummy = -1
        self.player = self.dealer
        self.trick: list[int] = []
        self.trick_first = -1
        self.best_power = self.best_seat = -1
        self.power = None
        self.tricks: list[tuple[int, tuple[int, ...], int]] = []  # (first seat, cards, winner)
        self.tricks_won = [0, 0]
        self.trick_views: list[dict] = []

    # --- fast path --------------------------------------------------------------------------
    def legal_calls(self) -> list[int]:
        """The call numbers the seat on turn may make (auction only, else empty): pass, every
        higher bid, double and redouble when allowed (Laws 18, 19)."""
        if self.phase != _AUCTION:
            return []
        calls = [PASS]
        calls.extend(range(self.last_bid + 1, 35))
        if self.last_bid >= 0:
            opponents_bid = (self.last_bidder ^ self.player) & 1
            if self.doubled == 0 and opponents_bid:
                calls.append(DOUBLE)
            elif self.doubled == 1 and not opponents_bid:
                calls.append(REDOUBLE)
        return calls

    def _call_is_legal(self, call: int) -> bool:
        if call == PASS:
            return True
        if call < 35:
            return call > self.last_bid
        if self.last_bid < 0:
            return False
        opponents_bid = (self.last_bidder ^ self.player) & 1
        if call == DOUBLE:
            return self.doubled == 0 and bool(opponents_bid)
        return self.doubled == 1 and not opponents_bid

    def legal_cards(self) -> int:
        """The legal cards (a mask) of the hand to play (dummy's on dummy's turn): any card
        to lead, else the suit led if the hand holds it (Law 44C); 0 outside the play."""
        if self.phase != _PLAY:
            return 0
        hand = self.hands[self.player]
        if not self.trick:
            return hand
        return hand & SUIT_MASK[SUIT_OF[self.trick[0]]] or hand

    def make_call(self, call: int) -> list[dict]:
        """Make call number ``call`` for the seat on turn, unchecked (callers use
        :meth:`legal_calls`).  Returns the happenings as :meth:`apply` does."""
        seat = self.player
        self.calls.append(call)
        self.call_names.append(CALL_NAMES[call])
        if call == PASS:
            self.passes += 1
            if self.passes == 3 and self.last_bid >= 0:
                return self._close_auction()
            if self.passes == 4:
                return self._end_board(passed_out=True)
        else:
            self.passes = 0
            if call < 35:
                self.last_bid, self.last_bidder, self.doubled = call, seat, 0
                namer = self.first_namer[seat & 1]
                if namer[call % 5] < 0:
                    namer[call % 5] = seat
            else:
                self.doubled = call - PASS  # 1 double, 2 redouble
        self.player = NEXT[seat]
        return []

    def _close_auction(self) -> list[dict]:
        self.level, self.strain = self.last_bid // 5 + 1, self.last_bid % 5
        self.declarer = self.first_namer[self.last_bidder & 1][self.strain]
        self.dummy = PARTNER[self.declarer]
        self.phase = _PLAY
        self.player = NEXT[self.declarer]  # the opening lead (Law 41)
        return [{"type": "auction_closed", "board": self.board, "contract": self.contract(),
                 "level": self.level, "strain": STRAIN_NAMES[self.strain], "doubled": self.doubled,
                 "declarer": self.declarer, "dummy": self.dummy, "leader": self.player}]

    def play_card_index(self, c: int) -> list[dict]:
        """Play card number ``c`` from the hand on turn, unchecked (callers use
        :meth:`legal_cards`).  Returns the happenings as :meth:`apply` does."""
        seat = self.player
        self.hands[seat] ^= BIT[c]
        trick = self.trick
        happenings = [{"type": "card", "seat": seat, "by": self.declarer if seat == self.dummy else seat,
                       "card": CARD_NAMES[c]}]
        if not trick:
            self.power = power = POWER[self.strain][SUIT_OF[c]]
            self.trick_first = self.best_seat = seat
            self.best_power = power[c]
            if not self.tricks:  # the opening lead: dummy goes down (Law 41D)
                happenings.append({"type": "dummy", "seat": self.dummy,
                                   "cards": mask_to_names(self.hands[self.dummy])})
        elif self.power[c] > self.best_power:
            self.best_power, self.best_seat = self.power[c], seat
        trick.append(c)
        if len(trick) < 4:
            self.player = NEXT[seat]
            return happenings
        winner = self.best_seat
        self.tricks.append((self.trick_first, tuple(trick), winner))
        self.tricks_won[winner & 1] += 1
        names = [CARD_NAMES[x] for x in trick]
        self.trick_views.append({"first": self.trick_first, "cards": names, "winner": winner})
        happenings.append({"type": "trick_over", "board": self.board, "trick": len(self.tricks),
                           "first": self.trick_first, "cards": list(names),
                           "winner": winner, "tricks_won": list(self.tricks_won)})
        self.trick = []
        self.player = winner
        if len(self.tricks) == TRICKS:
            happenings += self._end_board(passed_out=False)
        return happenings

    def _end_board(self, passed_out: bool) -> list[dict]:
        declarer_tricks = None if passed_out else self.tricks_won[self.declarer & 1]
        if self.rubber is not None:
            rubber_score = self._score_rubber(declarer_tricks)
            above, below = rubber_score["above"], rubber_score["below"]
            score = above[0] + below[0] - above[1] - below[1]  # North-South's net points
        elif passed_out:
            score = 0
        else:
            side = self.declarer & 1
            score = scoring.duplicate_score(self.level, self.strain, self.doubled,
                                            side_vulnerable(self.vulnerability, side), declarer_tricks)
            if side:
                score = -score
            # ``score`` is North-South's; the side with a positive score is credited with it
            self.totals[0 if score > 0 else 1] += abs(score)
        imps = None
        if self.replay and self.played % 2:  # the Closed room: the board's IMPs (Law 78B)
            imps = scoring.imps(self.records[-1]["score"] + score)
            self.imps[0 if imps > 0 else 1] += abs(imps)
        record = {
            "board": self.board, "dealer": self.dealer, "vulnerability": self.vulnerability,
            "calls": self.call_names, "contract": self.contract(),
            "declarer": None if passed_out else self.declarer, "tricks": declarer_tricks,
            "result": self.result_text(), "score": score,
            "play": self.trick_views,
        }
        if self.rubber is not None:
            record["rubber"] = rubber_score
        if self.replay:
            record["room"] = "Closed" if self.played % 2 else "Open"
            record["imps"] = imps  # N-S's, on the Closed room's record; None on the Open one's
        happening = {"type": "board_over", **{k: v for k, v in record.items() if k != "play"},
                     "totals": list(self.totals)}
        if self.replay:
            happening["imps_total"] = list(self.imps)
        record["hands"] = [mask_to_names(h) for h in self.dealt]
        self.records.append(record)
        # a new list, never changed: views hand out the old one
        self.results = self.results + [{k: record[k] for k in _RESULT_KEYS if k in record}]
        self.played += 1
        if self.played < self.boards and not (self.rubber is not None and self.rubber.finished):
            self._start_board()
            return [happening]
        over = {"type": "match_over", "totals": None, "winner": None}
        if self.rubber is not None:
            over["unfinished_rubber_bonus"] = self.rubber.finish()  # [0, 0] if it was won
            self.totals = self.rubber.totals()
        if self.replay:
            over["imps"] = list(self.imps)
        over["totals"], over["winner"] = list(self.totals), self._winner()
        self.phase = _OVER
        self.player = -1
        return [happening, over]

    def _score_rubber(self, declarer_tricks: int | None) -> dict:
        """Record the deal on the rubber's score sheet; returns what it scored
        (:meth:`games.bridge.scoring.Rubber.record`) and updates ``totals``."""
        if declarer_tricks is None:
            out = self.rubber.record_pass_out()
        else:
            honours = None
            for seat in range(4):
                bonus = scoring.honours_bonus(mask_to_names(self.dealt[seat]), self.strain)
                if bonus:  # at most one hand holds four of the five honours, or the four aces
                    honours = (seat & 1, bonus)
            out = self.rubber.record(self.declarer & 1, self.level, self.strain, self.doubled,
                                     declarer_tricks, honours)
        self.totals = self.rubber.totals()
        return out

    # --- descriptions -----------------------------------------------------------------------
    def contract(self) -> str | None:
        """The contract of the board in play as text (``"4SX"``), ``"Pass"`` once four passes
        have passed it out, None while the auction is open."""
        if self.level < 0:
            return "Pass" if self.passes == 4 else None
        return contract_name(self.level, self.strain, self.doubled)

    def result_text(self) -> str | None:
        """The board's result as bridge players write it, e.g. ``"4SN="``, ``"3NTXS+1"``,
        ``"4HXE-3"``; ``"Pass"`` for a pass-out; None before the contract is known."""
        contract = self.contract()
        if contract is None or contract == "Pass":
            return contract
        made = self.tricks_won[self.declarer & 1] - 6 - self.level
        return f"{contract}{SEAT_LETTERS[self.declarer]}{'=' if made == 0 else f'{made:+d}'}"

    def _winner(self) -> int | None:
        a, b = self.imps if self.replay else self.totals
        return None if a == b else (0 if a > b else 1)

    # --- State API --------------------------------------------------------------------------
    def to_act(self) -> tuple[int, ...]:
        """The one seat to answer: the caller in the auction, the player of the next card,
        **declarer** when the card is due from dummy (module docstring); empty when over."""
        if self.phase == _OVER:
            return ()
        return (self.declarer,) if self.player == self.dummy and self.phase == _PLAY else (self.player,)

    def is_legal(self, seat: int, action: Action) -> bool:
        """Whether ``action`` (a canonical call or card name) is legal for ``seat`` now."""
        if self.phase == _OVER or (seat,) != self.to_act() or type(action) is not str:
            return False
        if self.phase == _AUCTION:
            call = CALL_INDEX.get(action)
            return call is not None and self._call_is_legal(call)
        c = CARD_INDEX.get(action)
        return c is not None and bool(self.legal_cards() & BIT[c])

    def legal_actions(self, seat: int) -> list[Action]:
        """The legal call names (``"P"``, then bids upwards, then ``"X"`` or ``"XX"``) or card
        names (spades first, high to low) for ``seat``; empty if it is not to act."""
        if self.phase == _OVER or (seat,) != self.to_act():
            return []
        if self.phase == _AUCTION:
            return [CALL_NAMES[c] for c in self.legal_calls()]
        return mask_to_names(self.legal_cards())

    def why_illegal(self, seat: int, action: Action) -> str | None:
        """None if legal, else a sentence for the bot's author naming the rule it breaks."""
        if self.phase == _OVER:
            return "the match is over"
        actor = self.to_act()[0]
        if seat != actor:
            if seat == self.dummy and self.phase == _PLAY:
                return f"{SEAT_NAMES[seat]} is dummy: declarer ({SEAT_NAMES[self.declarer]}) plays dummy's cards"
            return f"it is {SEAT_NAMES[actor]}'s turn, not {SEAT_NAMES[seat]}'s"
        if self.is_legal(seat, action):
            return None
        if self.phase == _AUCTION:
            call = CALL_INDEX.get(action) if type(action) is str else None
            if call is None:
                return f"{action!r} is not a call: use 1C ... 7NT, P, X or XX"
            if call < 35:
                return f"insufficient bid: {action} does not beat {CALL_NAMES[self.last_bid]}"
            if call == DOUBLE:
                if self.last_bid < 0:
                    return "nothing to double: no bid has been made"
                if self.doubled:
                    return f"{CALL_NAMES[self.last_bid]} is already doubled"
                return "you may only double a bid of the opponents, not your side's"
            if self.doubled != 1:
                return "you may only redouble an opponents' double"
            return "you may only redouble a double of your side's bid"
        c = CARD_INDEX.get(action) if type(action) is str else None
        if c is None:
            return f"{action!r} is not a card: suit then rank, e.g. SA, HT, C2"
        hand = self.hands[self.player]
        owner = "dummy" if self.player == self.dummy else "you"
        if not hand & BIT[c]:
            return f"{owner} do{'es' if owner == 'dummy' else ''} not hold {action}: {' '.join(mask_to_names(hand))}"
        led = SUIT_LETTERS[SUIT_OF[self.trick[0]]]
        return f"follow suit: {led} was led and {owner} hold{'s' if owner == 'dummy' else ''} {led}"

    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Apply the answer of the seat in ``to_act()`` (a call, or a card from its hand or
        dummy's).  Raises ``ValueError`` if it is missing or illegal.

        Returns the public happenings: ``auction_closed`` (contract, declarer, dummy, leader);
        ``card`` for every card (``seat``: the hand it came from, ``by``: who chose it);
        ``dummy`` (dummy's 12 remaining cards) right after the opening lead; ``trick_over``;
        ``board_over`` (result, North-South score, totals per side) after trick 13 or a
        pass-out; ``match_over`` after the last board.  Calls produce no happening of their
        own (the runner forwards every action)."""
        if self.phase == _OVER:
            raise ValueError("the match is over")
        seat = self.to_act()[0]
        try:
            action = actions[seat]
        except KeyError:
            raise ValueError(f"no action for seat {seat}") from None
        if not self.is_legal(seat, action):
            raise ValueError(self.why_illegal(seat, action))
        if self.phase == _AUCTION:
            return self.make_call(CALL_INDEX[action])
        return self.play_card_index(CARD_INDEX[action])

    # --- observations -----------------------------------------------------------------------
    def dummy_exposed(self) -> bool:
        """Whether dummy's hand is on the table: from the opening lead until the board ends."""
        return self.phase == _PLAY and bool(self.tricks or self.trick)

    def public_observation(self) -> dict:
        """What everyone may know: no unplayed card but dummy's once it is exposed.

        Shape: ``board, boards (count), dealer, vulnerability ("None"/"NS"/"EW"/"Both"),
        phase ("auction"/"play"/"over"), to_act [seat], player (the seat whose hand acts:
        dummy's on dummy's turn; -1 when over), calls (names, the dealer's first),
        contract ("4SX"; None during the auction; "Pass" when the last board was passed out),
        declarer, dummy (-1 before the auction closes),
        tricks (finished ones: ``{"first", "cards", "winner"}``), trick (the current one:
        ``{"first", "cards"}``), tricks_won [N-S, E-W], hand_sizes, dummy_hand (names or
        None), results (finished boards: ``board, contract, declarer, result, score``),
        totals [N-S, E-W], scoring ("duplicate"/"rubber"), rubber (the score sheet,
        ``above, below, part, games`` each [N-S, E-W], or None), replay (instant replay),
        room ("Open"/"Closed" of the board in play or last played, None without replay),
        imps (IMPs so far [N-S, E-W], None without replay), terminal``.

        Each call returns a new dict and new lists at its top level, but the dicts of
        finished tricks inside ``tricks`` are shared with other views and the board records:
        callers read views and never change them."""
        to_act = self.to_act()
        return {
            "board": self.board,
            "boards": self.boards,
            "dealer": self.dealer,
            "vulnerability": self.vulnerability,
            "phase": _PHASE_NAMES[self.phase],
            "to_act": list(to_act),
            "player": self.player,
            "calls": self.call_names[:],
            "contract": self.contract(),
            "declarer": self.declarer,
            "dummy": self.dummy,
            "tricks": self.trick_views[:],
            "trick": {"first": self.trick_first if self.trick else self.player if self.phase == _PLAY else -1,
                      "cards": [CARD_NAMES[c] for c in self.trick]},
            "tricks_won": list(self.tricks_won),
            "hand_sizes": [h.bit_count() for h in self.hands],
            "dummy_hand": mask_to_names(self.hands[self.dummy]) if self.dummy_exposed() else None,
            "results": self.results,
            "totals": list(self.totals),
            "scoring": "duplicate" if self.rubber is None else "rubber",
            "rubber": None if self.rubber is None else self.rubber.sheet(),
            "replay": self.replay,
            "room": ("Closed" if self.played % 2 else "Open") if self.replay else None,
            "imps": list(self.imps) if self.replay else None,
            "terminal": self.phase == _OVER,
        }

    def observation(self, seat: int) -> dict:
        """The public view plus ``seat`` and its own ``hand`` (names, spades first).  Dummy
        sees nothing more: not declarer's hand."""
        obs = self.public_observation()
        obs["seat"] = seat
        obs["hand"] = mask_to_names(self.hands[seat])
        return obs

    def revealed_observation(self) -> dict:
        """The public view plus ``board_hands``: the hands as dealt of each finished board,
        oldest first, or None for a board whose deal is still to be played again in this
        state (instant replay), so no card a seat still holds is shown.  Nothing more about
        the board in play."""
        pending = {frozenset(self.dealt)} if self.phase != _OVER else set()
        pending |= {frozenset(names_to_mask(h) for h in p["hands"]) for p in self.presets[self.played + 1:]}
        obs = self.public_observation()
        obs["board_hands"] = [
            None if frozenset(names_to_mask(h) for h in r["hands"]) in pending else [list(h) for h in r["hands"]]
            for r in self.records]
        return obs

    def full_observation(self) -> dict:
        """Everything: the public view plus the current ``hands`` and the board's hands as
        dealt (``dealt``), and ``board_hands`` of every finished board; for finished matches
        and replays only."""
        obs = self.public_observation()
        obs["hands"] = [mask_to_names(h) for h in self.hands]
        obs["dealt"] = [mask_to_names(h) for h in self.dealt]
        obs["board_hands"] = [[list(h) for h in r["hands"]] for r in self.records]
        return obs

    def is_terminal(self) -> bool:
        return self.phase == _OVER

    def result(self) -> dict:
        """``scores``: each seat's side total (duplicate: the points of the boards its side
        scored; with instant replay its IMPs; rubber: above plus below the line, bonuses
        included); ``winner``: 0
        (North-South) or 1 (East-West) for the side with more points, None on equal totals;
        also ``winners`` (both seats), ``totals`` [N-S, E-W] and ``boards`` (each finished
        board's ``board, contract, declarer, result, score``, the score North-South's)."""
        a, b = self.imps if self.replay else self.totals
        winner = self._winner()
        return {
            "scores": [a, b, a, b],
            "winner": winner,
            "winners": [] if winner is None else [winner, winner + 2],
            "totals": list(self.totals),
            "imps": list(self.imps) if self.replay else None,
            "boards": [dict(r) for r in self.results],
        }

    def board_records(self) -> list[dict]:
        """Every finished board: ``board, dealer, vulnerability, calls, contract, declarer,
        tricks`` (declarer's side's, None when passed out), ``result, score`` (North-South's;
        in a rubber their net points of the deal), ``play`` (the tricks), ``hands`` (as
        dealt), and in a rubber ``rubber``: what the deal scored
        (:meth:`games.bridge.scoring.Rubber.record`).  What PBN and LIN exports need."""
        return [dict(r) for r in self.records]

    def clone(self) -> "BridgeState":
        other = object.__new__(BridgeState)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.hands = list(self.hands)
        other.calls = list(self.calls)
        other.call_names = list(self.call_names)
        other.trick_views = list(self.trick_views)
        other.first_namer = [list(self.first_namer[0]), list(self.first_namer[1])]
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.tricks_won = list(self.tricks_won)
        other.records = list(self.records)
        other.totals = list(self.totals)
        other.imps = list(self.imps)
        other.rubber = None if self.rubber is None else self.rubber.copy()
        return other


def new_state(config: Mapping | None, seed: int) -> BridgeState:
    """A fresh state from a configuration (see :func:`normalize_config`) and an integer seed;
    the seed decides every deal not given in the configuration."""
    return BridgeState(config or {}, seed)


def new_state_from_deal(hands: list[list[str]], board: int = 1, seed: int = 0) -> BridgeState:
    """One board with the given ``hands`` (four lists of 13 card names, N, E, S, W); the
    board number sets dealer and vulnerability.  Raises ``ValueError`` if the hands are not a
    deal."""
    return BridgeState({"board": board, "boards": 1, "deals": [{"board": board, "hands": hands}]}, seed)
