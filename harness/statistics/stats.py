"""The statistics verdicts rest on: scipy.stats for tests and intervals (power: `harness.statistics.power`)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

POWER = 0.8
"""The power at which detectable effects and the seeds needed to decide are stated."""
CONFIDENCE = 0.95
"""Confidence of the correlation intervals the report prints and the verdicts use."""
ROUNDING_NOISE = 1e-12
"""The relative size below which a standard deviation of float64 values is rounding, not spread."""


@dataclass(frozen=True)
class Summary:
    mean: float
    std: float
    n: int

    @property
    def no_spread(self) -> bool:
        """Fewer than two values, or all equal: no t-test is defined."""
        return self.n < 2 or self.std == 0.0

    def spread_text(self) -> str:
        """The standard deviation as text to 4 significant digits; '0' where it is the rounding noise of equal
        values (below `ROUNDING_NOISE` of the mean's size), which more digits would not make a spread."""
        return "0" if self.std <= ROUNDING_NOISE * max(1.0, abs(self.mean)) else f"{self.std:.4g}"


def summarize(values: Sequence[float]) -> Summary:
    array = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):  # an infinite value has no spread: std is NaN
        std = float(np.std(array, ddof=1)) if array.size > 1 else 0.0
        mean = float(np.mean(array)) if array.size else math.nan
    return Summary(mean, std, int(array.size))


def mean_interval(values: Sequence[float], confidence: float) -> tuple[float, float]:
    """Two-sided t interval of the mean (a point when there is no spread)."""
    array = np.asarray(values, dtype=float)
    if array.size < 2 or np.std(array) == 0.0:
        return float(array.mean()), float(array.mean())
    low, high = stats.t.interval(confidence, df=array.size - 1, loc=array.mean(), scale=stats.sem(array))
    return float(low), float(high)


def upper_tail(value: float, df: float | None) -> float:
    """P(T ≥ value) for a standard normal T (df None) or Student's t on df: the scipy.special ufuncs that
    scipy.stats' norm.sf and t.sf call, bit for bit, without their argument handling (50 times slower, and
    on every comparison of every verdict)."""
    return float(special.ndtr(-value) if df is None else special.stdtr(df, -value))


def upper_quantile(level: float, df: float | None) -> float:
    """The value T exceeds with probability `level` (scipy.stats' norm.isf, or t.isf on df), as `upper_tail`."""
    return float(-special.ndtri(level) if df is None else -special.stdtrit(df, level))


def range_fail_critical(alpha: float, width: float | None, df: float | None) -> float:
    """The critical value c at which one side of a two-sided range fails: a statistic (standard errors
    past that edge, negative outside) at or below −c. With the truth on that edge the far side fails too
    with the statistic beyond −c − width, so c solves P(T ≥ c) + P(T ≥ c + width) = α: the chance of
    FAIL is at most α at every true value inside the range (it is largest at the edges), where each side
    at α alone gives up to 2α on a narrow range. `width` in standard errors (None or inf: one side)."""
    if alpha <= 0.0:
        return math.inf
    if width is None or math.isinf(width) or alpha >= 1.0:
        return upper_quantile(alpha, df)

    def chance(c: float) -> float:
        return upper_tail(c, df) + upper_tail(c + width, df) - alpha

    # a range so wide that the far side adds nothing, and one of width 0
    one_side, both = upper_quantile(alpha, df), upper_quantile(alpha / 2.0, df)
    if chance(one_side) <= 0.0:
        return one_side
    if chance(both) >= 0.0:
        return both
    return float(optimize.brentq(chance, one_side, both))


# --- tests of a mean over seeds ---------------------------------------------------------

@dataclass(frozen=True)
class OneSided:
    """A one-sided t-test of the mean against a bound, in both directions."""

    outcome: str  # 'pass': significant on the claimed side; 'fail': on the other; else 'undecided'
    p_value: float  # of the claimed side
    p_opposite: float


def one_sided(values: Sequence[float], bound: float, side: str, alpha: float) -> OneSided:
    """Is the mean below (side='less') or above (side='greater') `bound`? Needs a spread."""
    opposite = "greater" if side == "less" else "less"
    claimed = float(stats.ttest_1samp(values, bound, alternative=side).pvalue)
    other = float(stats.ttest_1samp(values, bound, alternative=opposite).pvalue)
    outcome = "pass" if claimed < alpha else "fail" if other < alpha else "undecided"
    return OneSided(outcome, claimed, other)


def interval_inclusion(values: Sequence[float], low: float, high: float,
                       alpha: float) -> tuple[str, tuple[float, float]]:
    """Does the mean lie in [low, high]? Two one-sided tests, read through the (1 - 2 alpha) interval.

    'pass' if the interval lies inside the range (both one-sided tests reject at alpha), 'fail'
    if the mean lies beyond an edge by the critical value of `range_fail_critical` (at most alpha
    over the whole range), 'undecided' otherwise. Without spread the mean itself decides.
    """
    interval = mean_interval(values, 1.0 - 2.0 * alpha)
    if interval[0] >= low and interval[1] <= high:
        return "pass", interval
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if interval[0] == interval[1]:
        return ("fail" if mean < low or mean > high else "pass"), interval
    se = float(stats.sem(array))
    critical = range_fail_critical(alpha, (high - low) / se, array.size - 1)
    if (low - mean) / se >= critical or (mean - high) / se >= critical:
        return "fail", interval
    return "undecided", interval


def equivalence(values: Sequence[float], bound: float, alpha: float) -> tuple[str, float, tuple[float, float]]:
    """TOST that the mean lies in (-bound, bound): outcome, the TOST p-value and the interval."""
    outcome, interval = interval_inclusion(values, -bound, bound, alpha)
    if summarize(values).no_spread:
        return outcome, (0.0 if outcome == "pass" else 1.0), interval
    p_lower = stats.ttest_1samp(values, -bound, alternative="greater").pvalue
    p_upper = stats.ttest_1samp(values, bound, alternative="less").pvalue
    return outcome, float(max(p_lower, p_upper)), interval


# --- a sign test, for differences some of which are infinite -------------------------------

def sign_test(differences: Sequence[float]) -> tuple[float, float]:
    """One-sided exact binomial p-values (positive side, negative side) of the signs; zeros dropped."""
    positive = sum(1 for d in differences if d > 0)
    negative = sum(1 for d in differences if d < 0)
    n = positive + negative
    if n == 0:
        return 1.0, 1.0
    return (float(stats.binom.sf(positive - 1, n, 0.5)), float(stats.binom.sf(negative - 1, n, 0.5)))


def sign_test_seeds(alpha: float) -> int:
    """Seeds, all of one sign, that a one-sided sign test needs to reach alpha: the smallest n with
    0.5^n ≤ alpha (at least 2)."""
    n = 2
    while 0.5 ** n > alpha:
        n += 1
    return n


def sign_count_p(on_side: int, n: int) -> float:
    """One-sided exact sign-test p-value of `on_side` of `n` seeds on one side of a bound: the chance
    of at least that many if each seed fell on either side with probability 1/2 (the bound at the
    population's median)."""
    return float(stats.binom.sf(on_side - 1, n, 0.5)) if n else 1.0


# --- the spread of a reference, with its uncertainty -----------------------------------------

def sd_bounds(values: Sequence[float], alpha: float) -> tuple[float, float]:
    """One-sided (1 - alpha) lower and upper confidence bounds of a standard deviation (chi-square)."""
    s = summarize(values)
    if s.n < 2:
        return 0.0, math.inf
    df = s.n - 1
    lower = s.std * math.sqrt(df / stats.chi2.isf(alpha, df))
    upper = s.std * math.sqrt(df / stats.chi2.ppf(alpha, df))
    return float(lower), float(upper)
