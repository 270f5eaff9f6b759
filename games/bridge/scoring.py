"""Contract bridge scoring: duplicate (Law 77), rubber bridge, IMPs (Law 78B), matchpoints (Law 78A).

Pure Python, no I/O.  Computed here because no library we use has IMPs, matchpoints or rubber
scoring (specs/bridge-tournaments.notes.md, "Not in endplay").

Vocabulary and units: a contract is ``level`` 1-7 and ``strain`` 0-4 (clubs, diamonds,
hearts, spades, no-trump: :data:`STRAIN_NAMES`); ``doubled`` is 0 (undoubled), 1 (doubled) or
2 (redoubled); ``tricks`` is the number of tricks 0-13 the declaring side took.  Scores are
points for the declaring side: positive when the contract is made, negative when it fails
(the defenders score the undertricks).  Sides are 0 (North-South) and 1 (East-West).
"""
from __future__ import annotations

from typing import Iterable, Sequence

STRAIN_NAMES = ("C", "D", "H", "S", "NT")
CLUBS, DIAMONDS, HEARTS, SPADES, NOTRUMP = range(5)
UNDOUBLED, DOUBLED, REDOUBLED = 0, 1, 2

GAME = 100  # trick points below the line that make a game (Law 77)


def _check(level: int, strain: int, doubled: int, tricks: int) -> None:
    if type(level) is not int or not 1 <= level <= 7:
        raise ValueError(f"level must be 1-7, got {level!r}")
    if type(strain) is not int or not 0 <= strain <= 4:
        raise ValueError(f"strain must be 0-4 (C D H S NT), got {strain!r}")
    if doubled not in (0, 1, 2) or type(doubled) is not int:
        raise ValueError(f"doubled must be 0, 1 or 2, got {doubled!r}")
    if type(tricks) is not int or not 0 <= tricks <= 13:
        raise ValueError(f"tricks must be 0-13, got {tricks!r}")


def trick_points(level: int, strain: int, doubled: int = UNDOUBLED) -> int:
    """Points for the odd tricks bid and made (Law 77, "contract points"): 20 a trick in clubs
    and diamonds, 30 in hearts and spades, 40 for the first and 30 for each later trick in
    no-trump; twice that doubled, four times redoubled.  These are the points that count
    towards game (written below the line in rubber bridge)."""
    _check(level, strain, doubled, 6 + level)
    if strain == NOTRUMP:
        points = 40 + 30 * (level - 1)
    else:
        points = (20 if strain < HEARTS else 30) * level
    return points << doubled  # x1, x2, x4


def overtrick_points(strain: int, doubled: int, vulnerable: bool, overtricks: int) -> int:
    """Points for ``overtricks`` tricks beyond the contract (Law 77): the trick value
    undoubled (20 or 30; a no-trump overtrick is 30), 100 each doubled (200 vulnerable),
    200 each redoubled (400 vulnerable)."""
    if doubled == UNDOUBLED:
        return (20 if strain < HEARTS else 30) * overtricks
    return (100 if not vulnerable else 200) * doubled * overtricks


def undertrick_points(doubled: int, vulnerable: bool, undertricks: int) -> int:
    """Points the defenders score for ``undertricks`` 1-13 (Law 77), as a positive number.

    Undoubled: 50 each (100 vulnerable).  Doubled, not vulnerable: 100 for the first, 200 for
    each of the second and third, 300 for each after; doubled, vulnerable: 200 for the first,
    300 for each after.  Redoubled: twice the doubled figures."""
    if not 1 <= undertricks <= 13:
        raise ValueError(f"undertricks must be 1-13, got {undertricks!r}")
    if doubled == UNDOUBLED:
        return (100 if vulnerable else 50) * undertricks
    if vulnerable:
        points = 200 + 300 * (undertricks - 1)
    else:
        points = 100 + 200 * min(undertricks - 1, 2) + 300 * max(undertricks - 3, 0)
    return points * doubled  # redoubled (2) is twice doubled (1)


def slam_bonus(level: int, vulnerable: bool) -> int:
    """Bonus for a slam bid and made (Law 77): small slam (level 6) 500, vulnerable 750; grand
    slam (level 7) 1000, vulnerable 1500; 0 below level 6."""
    if level == 6:
        return 750 if vulnerable else 500
    if level == 7:
        return 1500 if vulnerable else 1000
    return 0


def insult_bonus(doubled: int) -> int:
    """Bonus for making a doubled contract (50) or a redoubled one (100), "the insult" (Law 77)."""
    return 50 * doubled


def duplicate_score(level: int, strain: int, doubled: int, vulnerable: bool, tricks: int) -> int:
    """The duplicate score of one contract for the declaring side (Law 77).

    Made: trick points + overtricks + the insult + slam bonus + game bonus (300, vulnerable
    500) when the trick points reach 100, otherwise the part-score bonus 50.  Failed: minus
    the undertricks.  ``tricks`` are the declaring side's tricks, 0-13.  Raises
    ``ValueError`` for an impossible contract or trick count.

    >>> duplicate_score(4, SPADES, UNDOUBLED, False, 10)
    420
    """
    _check(level, strain, doubled, tricks)
    needed = 6 + level
    if tricks < needed:
        return -undertrick_points(doubled, vulnerable, needed - tricks)
    below = trick_points(level, strain, doubled)
    score = below + overtrick_points(strain, doubled, vulnerable, tricks - needed)
    score += insult_bonus(doubled) + slam_bonus(level, vulnerable)
    if below >= GAME:
        score += 500 if vulnerable else 300
    else:
        score += 50
    return score


# --- honours (rubber bridge) -----------------------------------------------------------------
def honours_bonus(hand_cards: Iterable[str], strain: int) -> int:
    """Honours held in one hand (Laws of rubber bridge, Law 77): in a suit contract four of
    the five trump honours (A K Q J T) score 100, all five 150; at no-trump the four aces
    score 150; otherwise 0.  ``hand_cards`` are one player's card names as dealt ("SA",
    "HT", ...); the bonus goes to that player's side whatever the contract's outcome."""
    cards = set(hand_cards)
    if strain == NOTRUMP:
        return 150 if {"SA", "HA", "DA", "CA"} <= cards else 0
    suit = STRAIN_NAMES[strain]
    held = sum(suit + rank in cards for rank in "AKQJT")
    return 150 if held == 5 else 100 if held == 4 else 0


# --- rubber bridge ---------------------------------------------------------------------------
class Rubber:
    """The score sheet of one rubber, recorded deal after deal (Laws of rubber bridge, Law 77).

    Per side (0 North-South, 1 East-West) it keeps ``above`` (the points above the line:
    overtricks, undertricks, the insult, slam, honours and rubber bonuses), ``below`` (all
    trick points bid and made, below the line), ``part`` (the trick points of the game in
    progress: reset for both sides when one wins a game, as the line drawn under a game
    does) and ``games`` won.  A side that has won a game is vulnerable.  The rubber ends when
    a side wins two games: it scores 700 if the other side has none, else 500.

    :meth:`finish` settles a rubber ended early (the rubber bridge laws' "unfinished
    rubber"): 300 to a side that has won a game, and ``part_score_bonus`` (50 by default,
    the figure of the 1993 laws; some later editions give 100 to the only side with a
    part-score) to each side with a part-score in the unfinished game.
    """

    def __init__(self, part_score_bonus: int = 50):
        self.above = [0, 0]
        self.below = [0, 0]
        self.part = [0, 0]
        self.games = [0, 0]
        self.part_score_bonus = part_score_bonus
        self.winner: int | None = None
        self.finished = False

    def vulnerable(self, side: int) -> bool:
        """Whether ``side`` is vulnerable: it has won a game of this rubber."""
        return self.games[side] > 0

    def record(self, side: int, level: int, strain: int, doubled: int, tricks: int,
               honours: tuple[int, int] | None = None) -> dict:
        """Score one deal played in a contract by ``side`` that took ``tricks`` tricks.

        ``honours`` is ``(side, points)`` (points 100 or 150, see :func:`honours_bonus`) for
        the side whose player held honours, or None.  Returns what the deal scored:
        ``{"above": [NS, EW], "below": [NS, EW], "game": side or None, "rubber": side or None}``.
        Raises ``ValueError`` once the rubber is over or for an impossible contract."""
        if self.finished:
            raise ValueError("the rubber is over")
        _check(level, strain, doubled, tricks)
        if side not in (0, 1):
            raise ValueError(f"side must be 0 (N-S) or 1 (E-W), got {side!r}")
        above, below = [0, 0], [0, 0]
        vulnerable = self.vulnerable(side)
        needed = 6 + level
        if tricks >= needed:
            below[side] = trick_points(level, strain, doubled)
            above[side] = (overtrick_points(strain, doubled, vulnerable, tricks - needed)
                           + insult_bonus(doubled) + slam_bonus(level, vulnerable))
        else:
            above[1 - side] = undertrick_points(doubled, vulnerable, needed - tricks)
        if honours is not None:
            holder, points = honours
            if holder not in (0, 1) or points not in (100, 150):
                raise ValueError(f"honours must be (side 0/1, 100 or 150), got {honours!r}")
            above[holder] += points
        return self._add(above, below)

    def record_pass_out(self) -> dict:
        """A deal passed out: nothing is scored (the rubber goes on)."""
        if self.finished:
            raise ValueError("the rubber is over")
        return self._add([0, 0], [0, 0])

    def _add(self, above: list[int], below: list[int]) -> dict:
        game = rubber = None
        for s in (0, 1):
            self.above[s] += above[s]
            self.below[s] += below[s]
            self.part[s] += below[s]
        for s in (0, 1):
            if self.part[s] >= GAME:
                game = s
                self.games[s] += 1
                self.part = [0, 0]
                if self.games[s] == 2:
                    bonus = 700 if self.games[1 - s] == 0 else 500
                    self.above[s] += bonus
                    above[s] += bonus
                    self.winner = rubber = s
                    self.finished = True
                break
        return {"above": above, "below": below, "game": game, "rubber": rubber}

    def finish(self) -> list[int]:
        """End the rubber here (a no-op if it is over): the unfinished rubber's bonuses (class
        docstring) go above the line.  Returns the bonuses given, ``[NS, EW]``."""
        bonus = [0, 0]
        if not self.finished:
            for s in (0, 1):
                if self.games[s]:
                    bonus[s] += 300
                if self.part[s]:
                    bonus[s] += self.part_score_bonus
                self.above[s] += bonus[s]
            self.finished = True
        return bonus

    def sheet(self) -> dict:
        """The score sheet as JSON: ``above, below, part, games`` (each [NS, EW]), ``winner``
        (side or None) and ``finished``."""
        return {"above": list(self.above), "below": list(self.below), "part": list(self.part),
                "games": list(self.games), "winner": self.winner, "finished": self.finished}

    def copy(self) -> "Rubber":
        """An independent copy."""
        other = Rubber(self.part_score_bonus)
        other.above, other.below = list(self.above), list(self.below)
        other.part, other.games = list(self.part), list(self.games)
        other.winner, other.finished = self.winner, self.finished
        return other

    def totals(self) -> list[int]:
        """Each side's total, above plus below the line, ``[NS, EW]``."""
        return [self.above[0] + self.below[0], self.above[1] + self.below[1]]


# --- IMPs and matchpoints ---------------------------------------------------------------------
#: The upper bound of each IMP band of Law 78B: a difference up to ``IMP_BOUNDS[i]`` gives i
#: IMPs; 4000 or more gives 24.
IMP_BOUNDS = (10, 40, 80, 120, 160, 210, 260, 310, 360, 420, 490, 590, 740, 890, 1090, 1290, 1490,
              1740, 1990, 2240, 2490, 2990, 3490, 3990)


def imps(difference: int) -> int:
    """International Match Points for a difference of scores (Law 78B), with its sign: 0-10
    gives 0, 20-40 gives 1, ..., 3500-3990 gives 23, 4000 or more 24.  Scores are multiples
    of 10, so a difference between two bands (say 15) counts in the lower one."""
    size = abs(difference)
    for i, bound in enumerate(IMP_BOUNDS):
        if size < bound + 10:
            return i if difference >= 0 else -i
    return 24 if difference >= 0 else -24


def matchpoints(scores: Sequence[int]) -> list[int]:
    """Matchpoints of each score against the others on one board (Law 78A): 2 for each score
    it beats, 1 for each equal score, so a field of N scores gives a top of 2(N-1).  Scores
    are from the same side's view (e.g. all North-South).  Returns one figure per score, in
    the same order."""
    return [sum(2 if s > t else 1 if s == t else 0 for t in scores) - 1 for s in scores]
