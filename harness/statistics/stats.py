"""The statistics verdicts rest on: scipy.stats for tests and intervals, statsmodels for power."""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.tools import sm_exceptions  # noqa: F401 - imported first: it installs warning filters on import

POWER = 0.8
"""The power at which detectable effects and the seeds needed to decide are stated."""
CONFIDENCE = 0.95
"""Confidence of the correlation intervals the report prints and the verdicts use."""


@dataclass(frozen=True)
class Summary:
    mean: float
    std: float
    n: int

    @property
    def no_spread(self) -> bool:
        """Fewer than two values, or all equal: no t-test is defined."""
        return self.n < 2 or self.std == 0.0


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


def range_fail_critical(alpha: float, width: float | None, df: float | None) -> float:
    """The critical value c at which one side of a two-sided range fails: a statistic (standard errors
    past that edge, negative outside) at or below −c. With the truth on that edge the far side fails too
    with the statistic beyond −c − width, so c solves P(T ≥ c) + P(T ≥ c + width) = α: the chance of
    FAIL is at most α at every true value inside the range (it is largest at the edges), where each side
    at α alone gives up to 2α on a narrow range. `width` in standard errors (None or inf: one side)."""
    def sf(value: float) -> float:
        return float(stats.norm.sf(value) if df is None else stats.t.sf(value, df))

    def isf(level: float) -> float:
        return float(stats.norm.isf(level) if df is None else stats.t.isf(level, df))

    if alpha <= 0.0:
        return math.inf
    if width is None or math.isinf(width) or alpha >= 1.0:
        return isf(alpha)
    return float(optimize.brentq(lambda c: sf(c) + sf(c + width) - alpha, isf(alpha), isf(alpha / 2.0) + 1e-9))


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


# --- correlations -----------------------------------------------------------------------

def fisher_z(r: float) -> float:
    """Fisher's z of a correlation, r clipped just inside (-1, 1) so that ±1 stays finite."""
    return math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))


@dataclass(frozen=True)
class Correlation:
    """A (partial) correlation across n clients with its Fisher-z interval, or why it is undefined.

    The interval stored (`low`, `high`) is the 95% one shown in reports; tests read `z` and
    `weight` at their own level (`interval`).
    """

    r: float
    p_value: float
    low: float
    high: float
    n: int
    controls: int = 0
    undefined: str = ""
    method: str = "pearson"

    @property
    def weight(self) -> float:
        """Inverse variance of Fisher's z: n - 3 - (controlled quantities); for Spearman's rank
        correlation divided by 1 + r²/2 (Bonett and Wright, 2000)."""
        base = float(self.n - 3 - self.controls)
        if self.method == "spearman" and math.isfinite(self.r):
            return base / (1.0 + self.r * self.r / 2.0)
        return base

    @property
    def z(self) -> float:
        return fisher_z(self.r)

    @property
    def se(self) -> float:
        return 1.0 / math.sqrt(self.weight)

    def interval(self, confidence: float) -> tuple[float, float]:
        half = stats.norm.ppf(0.5 + confidence / 2) * self.se
        return math.tanh(self.z - half), math.tanh(self.z + half)


def _residuals(values: np.ndarray, control: np.ndarray) -> tuple[np.ndarray, float]:
    """Residuals of a linear fit on the control, and the share of variance the fit explains."""
    design = np.column_stack([np.ones_like(control), control])
    coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
    residuals = values - design @ coefficients
    total = float(np.sum((values - values.mean()) ** 2))
    explained = 1.0 - float(np.sum(residuals ** 2)) / total if total > 0 else 1.0
    return residuals, explained


EXACTLY_LINEAR = 1.0 - 1e-9
"""A quantity whose linear fit on the control explains this share of its variance is a linear
function of it: its partial correlation is undefined (the residuals are rounding noise)."""


def correlation(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                given: Sequence[float] | np.ndarray | None = None,
                method: str = "pearson", confidence: float = CONFIDENCE,
                names: tuple[str, str, str] = ("x", "y", "given")) -> Correlation:
    """Pearson or Spearman correlation, partial on `given` if set, with a Fisher-z interval.

    A partial correlation is the correlation of the residuals of x and y after a linear fit on
    the control; its interval uses n - 3 - 1 degrees of freedom.
    """
    columns = [np.asarray(x, float), np.asarray(y, float)] + ([np.asarray(given, float)] if given is not None else [])
    keep = np.all([np.isfinite(c) for c in columns], axis=0)
    columns = [c[keep] for c in columns]
    if method == "spearman":
        columns = [stats.rankdata(c) for c in columns]
    a, b = columns[0], columns[1]
    n = int(a.size)
    controls = 0 if given is None else 1

    def undefined(reason: str) -> Correlation:
        return Correlation(math.nan, math.nan, math.nan, math.nan, n, controls, reason, method)

    if n - 3 - controls < 1:
        return undefined(f"{n} clients with finite values; a correlation interval needs at least {4 + controls}")
    for name, column in zip(names, columns):
        if np.ptp(column) == 0.0:
            return undefined(f"{name} takes one value on every client")
    if given is not None:
        a, a_explained = _residuals(a, columns[2])
        b, b_explained = _residuals(b, columns[2])
        for name, explained in ((names[0], a_explained), (names[1], b_explained)):
            if explained >= EXACTLY_LINEAR:
                return undefined(f"{name} is a linear function of {names[2]} (R² = {explained:.12g}): "
                                 "nothing is left to correlate once it is controlled for")
    result = stats.pearsonr(a, b)
    r = float(result.statistic)
    p_value = float(result.pvalue)
    if controls:
        t = r * math.sqrt((n - 2 - controls) / max(1e-300, 1 - r * r))
        p_value = float(2 * stats.t.sf(abs(t), n - 2 - controls))
    measured = Correlation(r, p_value, math.nan, math.nan, n, controls, method=method)
    low, high = measured.interval(confidence)
    return Correlation(r, p_value, low, high, n, controls, method=method)


@dataclass(frozen=True)
class PooledCorrelation:
    """A random-effects pool of per-seed Fisher z values: the mean correlation over runs.

    Seeds are separate runs (their own partitions, caps and training), so their correlations
    may differ by more than sampling error: the between-seed variance tau² is estimated by
    DerSimonian and Laird, and the mean's interval uses the Hartung-Knapp variance with
    k - 1 degrees of freedom (never narrower than the fixed-effect one), which keeps its level
    with few seeds. Cochran's Q and I² say how much the seeds disagree.
    """

    r: float
    z: float
    se: float
    df: int | None
    """degrees of freedom of the t reference of the interval (None for one seed: normal)"""
    seeds: int
    q: float
    i_squared: float
    tau_squared: float
    n: int

    def critical(self, one_sided_alpha: float) -> float:
        return float(stats.norm.isf(one_sided_alpha) if self.df is None else stats.t.isf(one_sided_alpha, self.df))

    def interval(self, confidence: float) -> tuple[float, float]:
        half = self.critical((1 - confidence) / 2) * self.se
        return math.tanh(self.z - half), math.tanh(self.z + half)

    @property
    def low(self) -> float:
        return self.interval(CONFIDENCE)[0]

    @property
    def high(self) -> float:
        return self.interval(CONFIDENCE)[1]

    @property
    def q_p_value(self) -> float:
        return float(stats.chi2.sf(self.q, self.seeds - 1)) if self.seeds > 1 else math.nan

    def heterogeneity_text(self) -> str:
        if self.seeds < 2:
            return "one seed"
        return (f"Cochran's Q = {self.q:.3g} (p = {self.q_p_value:.2g}), I² = {self.i_squared:.0%}, "
                f"τ² = {self.tau_squared:.3g}; Hartung-Knapp interval on {self.df} df")


def pooled_correlation(per_seed: Sequence[Correlation]) -> PooledCorrelation:
    """Random-effects pooling of Fisher's z over seeds (DerSimonian-Laird tau², Hartung-Knapp interval)."""
    weights = np.array([c.weight for c in per_seed], dtype=float)
    zs = np.array([c.z for c in per_seed])
    k = len(per_seed)
    n = sum(c.n for c in per_seed)
    fixed = float(np.sum(weights * zs) / np.sum(weights))
    if k == 1:
        return PooledCorrelation(math.tanh(fixed), fixed, 1.0 / math.sqrt(weights[0]), None, 1, 0.0, 0.0, 0.0, n)
    q = float(np.sum(weights * (zs - fixed) ** 2))
    scale = float(np.sum(weights) - np.sum(weights ** 2) / np.sum(weights))
    tau_squared = max(0.0, (q - (k - 1)) / scale) if scale > 0 else 0.0
    i_squared = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    random_weights = 1.0 / (1.0 / weights + tau_squared)
    z = float(np.sum(random_weights * zs) / np.sum(random_weights))
    spread = float(np.sum(random_weights * (zs - z) ** 2)) / (k - 1)
    se = math.sqrt(max(spread, 1.0) / float(np.sum(random_weights)))
    return PooledCorrelation(math.tanh(z), z, se, k - 1, k, q, i_squared, tau_squared, n)


# --- power ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Power:
    """What a test of this size could detect, and how much data would decide it.

    `detectable`: the smallest distance from the bound that the test detects with probability
    POWER at the data's size and spread (in the observation's units). `needed`: how many
    units (seeds, or clients per run) would decide the claim at the observed effect and spread,
    None when no finite number would (no observed effect, or no spread to judge it by).
    """

    unit: str
    have: int
    detectable: float | None
    needed: int | None
    note: str = ""

    def text(self) -> str:
        parts = []
        if self.detectable is not None:
            parts.append(f"at n = {self.have} {self.unit} the test detects (power {POWER:.0%}) only effects "
                         f"≥ {self.detectable:.3g}")
        if self.needed is not None:
            parts.append(f"about {self.needed} {self.unit} would decide it at the observed effect and spread")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {"unit": self.unit, "have": self.have, "detectable": self.detectable, "needed": self.needed,
                "note": self.note}


def sensitivity(power: Power) -> Power:
    """What a decided test could have detected, without a number of seeds 'that would decide it'."""
    return Power(power.unit, power.have, power.detectable, None, power.note if power.needed is None else "")


def _solve(solver, **arguments) -> float:
    """statsmodels' solve_power; NaN where its root finder does not converge (an effect too small)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(solver.solve_power(**arguments))
        except (ValueError, RuntimeError, ArithmeticError):
            return math.nan


PRACTICAL_UNITS = 1000
"""Beyond this many seeds (or clients) the figure is reported as 'no practical number'."""


def _ceil_units(solution: float) -> int | None:
    if not math.isfinite(solution) or solution > PRACTICAL_UNITS:
        return None
    return max(2, math.ceil(solution - 1e-9))


def t_power(values: Sequence[float], distance: float, alpha: float, unit: str = "seeds") -> Power:
    """Power figures of a one-sided one-sample (or paired) t-test at level alpha.

    `distance` is the observed distance from the mean to the bound the test decides against.
    """
    s = summarize(values)
    if s.n < 2:
        return Power(unit, s.n, None, None, "one value carries no spread: at least 2 seeds (3 for a useful "
                                            "test) are needed before any number of seeds can be estimated")
    if s.std == 0.0:
        return Power(unit, s.n, 0.0, s.n, "no spread between seeds")
    return spread_power(s.std, s.n, distance, alpha, unit)


def t_test_power(effect_sd: float, n: int, alpha: float) -> float:
    """Power of a one-sided one-sample t-test at level `alpha` on n units for an effect of `effect_sd` SDs."""
    return float(TTestPower().power(effect_size=effect_sd, nobs=n, alpha=alpha, alternative="larger"))


def spread_power(sd: float, n: int, distance: float, alpha: float, unit: str = "seeds") -> Power:
    """`t_power` from a spread `sd` of n units (n ≥ 2, sd > 0) instead of the values themselves."""
    solver = TTestPower()
    detectable = _solve(solver, nobs=n, alpha=alpha, power=POWER, alternative="larger") * sd
    effect = abs(distance) / sd
    if effect < 1e-6:
        return Power(unit, n, detectable, None, "the observed effect is nil: no number of seeds decides it")
    if solver.power(effect_size=effect, nobs=2, alpha=alpha, alternative="larger") >= POWER:
        return Power(unit, n, detectable, 2)
    needed = _ceil_units(_solve(solver, effect_size=effect, alpha=alpha, power=POWER, alternative="larger"))
    note = "" if needed is not None else f"the observed effect is too small for {PRACTICAL_UNITS} {unit}"
    return Power(unit, n, detectable, needed, note)


def fisher_power(z: float, bound: float, units: int, variance_per_unit: float, unit: str,
                 alpha: float) -> Power:
    """Power figures of a one-sided test at level alpha of a Fisher z against `bound`.

    `units` independent units (seeds pooled, or clients of one run) each add 1/variance_per_unit
    to the inverse variance of z; `needed` counts the units that decide the bound at the observed
    z, `detectable` is the smallest |r - bound| the units detect.
    """
    solver = NormalIndPower()
    z_bound = fisher_z(bound)
    per_unit_sd = math.sqrt(variance_per_unit)
    effect_detectable = _solve(solver, nobs1=max(units, 1), alpha=alpha, power=POWER, ratio=0.0,
                               alternative="larger") * per_unit_sd
    detectable = abs(math.tanh(z_bound + math.copysign(effect_detectable, z - z_bound)) - bound)
    effect = abs(z - z_bound) / per_unit_sd
    if effect < 1e-6:
        return Power(unit, units, detectable, None, "the observed correlation sits on the bound")
    needed = _ceil_units(_solve(solver, effect_size=effect, alpha=alpha, power=POWER, ratio=0.0,
                                alternative="larger"))
    note = "" if needed is not None else f"the observed effect is too small for {PRACTICAL_UNITS} {unit}"
    return Power(unit, units, detectable, needed, note)


# --- power of a range: both one-sided comparisons must pass --------------------------------

def _inclusion_probability(low_distance: float, high_distance: float, sd: float, n: int | np.ndarray,
                           alpha: float, t_based: bool) -> np.ndarray:
    """P(both one-sided comparisons pass) with the estimate at the given distances inside each bound.

    A lower bound of the exact probability (P(A and B) >= P(A) + P(B) - 1), so a number of units
    chosen from it reaches at least the stated power.
    """
    n = np.asarray(n, dtype=float)
    scale = sd / np.sqrt(n)
    if t_based:
        critical = special.stdtrit(n - 1, 1.0 - alpha)
        each = [1.0 - special.nctdtr(n - 1, d / scale, critical) for d in (low_distance, high_distance)]
    else:
        critical = special.ndtri(1.0 - alpha)
        each = [special.ndtr(d / scale - critical) for d in (low_distance, high_distance)]
    return np.maximum(0.0, each[0] + each[1] - 1.0)


def _smallest_units(enough) -> int | None:
    """The smallest number of units in [2, PRACTICAL_UNITS] for which `enough` holds (monotone in it)."""
    if not enough(PRACTICAL_UNITS):
        return None
    low, high = 1, PRACTICAL_UNITS
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return max(2, high)


def _one_sided_needed(effect: float, alpha: float, t_based: bool) -> int | None:
    """Units a one-sided test at alpha needs to detect a standardized effect with power POWER."""
    if effect < 1e-6:
        return None
    if t_based:
        solver = TTestPower()
        if solver.power(effect_size=effect, nobs=2, alpha=alpha, alternative="larger") >= POWER:
            return 2
        return _ceil_units(_solve(solver, effect_size=effect, alpha=alpha, power=POWER, alternative="larger"))
    return _ceil_units(_solve(NormalIndPower(), effect_size=effect, alpha=alpha, power=POWER, ratio=0.0,
                              alternative="larger"))


def one_sided_units(effect: float, alpha: float, t_based: bool = True) -> int | None:
    """Units a one-sided test at alpha needs to detect a standardized effect with power POWER (a t-test
    of a mean over them, or a z-test when `t_based` is false); None when no practical number does."""
    return _one_sided_needed(effect, alpha, t_based)


def inclusion_power(estimate: float, sd: float, low: float, high: float, have: int, alpha: float,
                    unit: str = "seeds", t_based: bool = True) -> Power:
    """Power figures of a range decided by two one-sided tests (between, approx, equivalence).

    `sd` is the spread of one unit (a seed's value, or the per-unit sd of a Fisher z): `needed`
    is the smallest number of units at which both comparisons pass with probability POWER at the
    observed estimate and spread; `detectable` the smallest distance inside the nearest bound at
    which the units at hand reach that power.
    """
    if have < 2 and t_based:
        return Power(unit, have, None, None, "one value carries no spread: at least 2 seeds (3 for a useful "
                                             "test) are needed before any number of seeds can be estimated")
    if sd == 0.0:
        return Power(unit, have, 0.0, have, "no spread between seeds")
    width = high - low
    units_now = max(have, 2)

    def reaches(distance: float) -> bool:
        return bool(_inclusion_probability(distance, width - distance, sd, units_now, alpha, t_based) >= POWER)

    detectable = None
    if reaches(width / 2):  # the probability grows as the estimate moves from a bound to the centre
        inside, outside = width / 2, 0.0
        for _ in range(24):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if reaches(middle) else (inside, middle)
        detectable = float(inside)
    if not low < estimate < high:
        distance = low - estimate if estimate <= low else estimate - high
        needed = _one_sided_needed(distance / sd, alpha, t_based)
        note = "the estimate lies outside the range: the number is of units that would show it outside"
        if needed is None:
            note += f"; the observed effect is too small for {PRACTICAL_UNITS} {unit}"
        return Power(unit, have, detectable, needed, note)
    needed = _smallest_units(lambda units: _inclusion_probability(estimate - low, high - estimate, sd, units, alpha,
                                                                  t_based) >= POWER)
    note = "" if needed is not None else f"the observed effect is too small for {PRACTICAL_UNITS} {unit}"
    if detectable is None:
        note = "; ".join(n for n in (note, f"the range is too narrow for {have} {unit} at this spread") if n)
    return Power(unit, have, detectable, needed, note)


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


def sign_power(have: int, alpha: float) -> Power:
    """The seeds a sign count needs: all on the claimed side, 0.5^n ≤ alpha (its 'seeds that would
    decide it', counted whatever the values, since a sign test reads only their sides)."""
    needed = sign_test_seeds(alpha)
    return Power("seeds", have, None, needed,
                 f"a sign test needs {needed} seeds, all on the claimed side, at α = {alpha:.3g} (0.5^n ≤ α)")


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
