"""How sure a tournament's standings are: confidence intervals and one-sided tests (scipy).

scipy is imported inside the functions: importing it costs the arena's start-up a few hundred
milliseconds that only a tournament page or an early stop needs.

On testing again and again: the tests below are fixed-sample tests.  Testing after every game
and stopping at the first "better" (as the Software-Challenge test client does) makes a false
"better" far more likely than ``alpha`` over a long match-up.  We keep the same test and let
the caller say how many times it will look (``looks``): each look then tests at
``alpha / looks`` (Bonferroni), which keeps the chance of any false "better" over all the looks
at most ``alpha``.  ``looks=1`` is the plain test, for one look at the end.
"""
from __future__ import annotations

import math
from collections.abc import Sequence


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence is between 0 and 1, not {confidence}")


def _check_alpha(alpha: float, looks: int) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha is between 0 and 1, not {alpha}")
    if looks < 1:
        raise ValueError(f"looks must be at least 1, not {looks}")


def wilson(points: float, games: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of a win rate: ``points`` won in ``games``
    games, a draw counting half a point (so ``points`` may be fractional).

    With ``p = points / games`` and ``z`` the standard normal quantile of
    ``1 - (1 - confidence) / 2``: centre ``(p + z²/2n) / (1 + z²/n)``, half-width
    ``z / (1 + z²/n) * sqrt(p(1 - p)/n + z²/4n²)``.  Example: 8 of 10 at 95% is
    (0.490, 0.943).  ``(0.0, 1.0)`` for no games.  Raises ValueError for ``points`` outside
    ``0..games``, negative ``games`` or a confidence outside (0, 1).
    """
    from scipy.stats import norm

    _check_confidence(confidence)
    if games < 0 or not 0 <= points <= games:
        raise ValueError(f"{points} points in {games} games is not a result")
    if games == 0:
        return 0.0, 1.0
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    p, z2 = points / games, z * z
    shrink = 1 + z2 / games
    centre = (p + z2 / (2 * games)) / shrink
    half = z / shrink * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float],
                  confidence: float = 0.95) -> tuple[float, float, float] | None:
    """``(mean, low, high)``: the mean of ``values`` and its Student-t confidence interval
    (``mean ± t(n-1) * s / sqrt(n)``, ``s`` the sample standard deviation).  Example: the
    values 1, 2, 3 at 95% give (2.0, -0.484, 4.484).  None for fewer than two values, which
    have no spread to measure (a page shows such a mean without an interval).  Raises
    ValueError for a confidence outside (0, 1).
    """
    from scipy.stats import t

    _check_confidence(confidence)
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(t.ppf(1 - (1 - confidence) / 2, n - 1)) * spread / math.sqrt(n)
    return mean, mean - half, mean + half


def better_than(wins_a: int, wins_b: int, alpha: float = 0.05, looks: int = 1) -> str | None:
    """``"a"`` or ``"b"`` when that entrant is the better one with confidence ``1 - alpha``,
    else None: the one-sided exact binomial test on the decisive games (draws left out), as the
    Software-Challenge test client decides a match-up.

    ``"a"`` when, were both equally strong (each decisive game a fair coin), ``wins_a`` or more
    wins of ``wins_a + wins_b`` would have chance at most ``alpha / looks``
    (``scipy.stats.binomtest(..., alternative="greater")``); ``"b"`` the same way round.
    Example: 10 wins to 0 has p = 0.5**10 = 0.00098, so ``"a"``; 8 to 2 has p = 0.055, so
    None at alpha = 0.05.  See the module's docstring for ``looks``.  Raises ValueError for
    negative wins or alpha outside (0, 1).
    """
    from scipy.stats import binomtest

    _check_alpha(alpha, looks)
    if wins_a < 0 or wins_b < 0:
        raise ValueError(f"wins cannot be negative: {wins_a}, {wins_b}")
    decisive = wins_a + wins_b
    if decisive == 0:
        return None
    level = alpha / looks
    if binomtest(wins_a, decisive, 0.5, alternative="greater").pvalue <= level:
        return "a"
    if binomtest(wins_b, decisive, 0.5, alternative="greater").pvalue <= level:
        return "b"
    return None


def paired_better(diffs: Sequence[float], alpha: float = 0.05, looks: int = 1) -> str | None:
    """``"a"`` or ``"b"`` when that entrant is the better one with confidence ``1 - alpha``,
    else None, from duplicate play: ``diffs`` holds A's result minus B's per deal (each deal
    played both ways round).  One-sided one-sample t-test of the mean difference against 0
    (``scipy.stats.ttest_1samp``): ``"a"`` when the mean is above 0 with p at most
    ``alpha / looks``, ``"b"`` when below.  Example: differences 1, 2, 3 give t = 3.46 with 2
    degrees of freedom, p = 0.037, so ``"a"``.

    None for fewer than two deals.  Differences all equal have no spread: the t statistic is
    infinite, so any mean other than 0 decides (B's side for a negative one).  See the module's
    docstring for ``looks``.  Raises ValueError for alpha outside (0, 1).
    """
    from scipy.stats import ttest_1samp

    _check_alpha(alpha, looks)
    if len(diffs) < 2:
        return None
    mean = math.fsum(diffs) / len(diffs)
    if all(d == diffs[0] for d in diffs):
        return None if mean == 0 else ("a" if mean > 0 else "b")
    level = alpha / looks
    if ttest_1samp(diffs, 0.0, alternative="greater").pvalue <= level:
        return "a"
    if ttest_1samp(diffs, 0.0, alternative="less").pvalue <= level:
        return "b"
    return None
