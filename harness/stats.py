"""The statistics verdicts rest on: scipy.stats for tests and intervals, statsmodels for power."""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
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
    if it lies wholly outside, 'undecided' otherwise. Without spread the mean itself decides.
    """
    interval = mean_interval(values, 1.0 - 2.0 * alpha)
    if interval[0] >= low and interval[1] <= high:
        return "pass", interval
    if interval[1] < low or interval[0] > high:
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

@dataclass(frozen=True)
class Correlation:
    """A (partial) correlation across n clients with its Fisher-z interval, or why it is undefined."""

    r: float
    p_value: float
    low: float
    high: float
    n: int
    controls: int = 0
    undefined: str = ""

    @property
    def weight(self) -> int:
        """Inverse variance of Fisher's z: n - 3 - (number of controlled quantities)."""
        return self.n - 3 - self.controls

    @property
    def z(self) -> float:
        return math.atanh(max(min(self.r, 1 - 1e-12), -1 + 1e-12))


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


def correlation(x: Sequence[float], y: Sequence[float], given: Sequence[float] | None = None,
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
        return Correlation(math.nan, math.nan, math.nan, math.nan, n, controls, reason)

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
    measured = Correlation(r, p_value, math.nan, math.nan, n, controls)
    half = stats.norm.ppf(0.5 + confidence / 2) / math.sqrt(measured.weight)
    return Correlation(r, p_value, math.tanh(measured.z - half), math.tanh(measured.z + half), n, controls)


def pooled_correlation(per_seed: Sequence[Correlation], confidence: float = CONFIDENCE) -> Correlation:
    """Inverse-variance pooling of Fisher's z over seeds (a fixed-effect meta-analysis)."""
    weights = np.array([c.weight for c in per_seed], dtype=float)
    zs = np.array([c.z for c in per_seed])
    z = float(np.sum(weights * zs) / np.sum(weights))
    half = stats.norm.ppf(0.5 + confidence / 2) / math.sqrt(float(np.sum(weights)))
    p_value = float(2 * stats.norm.sf(abs(z) * math.sqrt(float(np.sum(weights)))))
    n = sum(c.n for c in per_seed)
    controls = per_seed[0].controls
    return Correlation(math.tanh(z), p_value, math.tanh(z - half), math.tanh(z + half), n, controls)


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
    solver = TTestPower()
    detectable = _solve(solver, nobs=s.n, alpha=alpha, power=POWER, alternative="larger") * s.std
    effect = abs(distance) / s.std
    if effect < 1e-6:
        return Power(unit, s.n, detectable, None, "the observed effect is nil: no number of seeds decides it")
    if solver.power(effect_size=effect, nobs=2, alpha=alpha, alternative="larger") >= POWER:
        return Power(unit, s.n, detectable, 2)
    needed = _ceil_units(_solve(solver, effect_size=effect, alpha=alpha, power=POWER, alternative="larger"))
    note = "" if needed is not None else f"the observed effect is too small for {PRACTICAL_UNITS} {unit}"
    return Power(unit, s.n, detectable, needed, note)


def fisher_power(correlation: Correlation, bound: float, units: int, weight_per_unit: float,
                 unit: str, alpha: float = 1 - CONFIDENCE) -> Power:
    """Power figures of deciding a correlation against `bound` with a two-sided Fisher-z interval.

    `units` independent units (seeds pooled, or clients of one run) each add `weight_per_unit`
    to the inverse variance of z; `needed` counts the units that put the interval on one side
    of the bound at the observed z, `detectable` is the smallest |r - bound| the units detect.
    """
    solver = NormalIndPower()
    z_bound = math.atanh(max(min(bound, 1 - 1e-12), -1 + 1e-12))
    per_unit_sd = 1.0 / math.sqrt(weight_per_unit)
    effect_detectable = _solve(solver, nobs1=max(units, 1), alpha=alpha, power=POWER, ratio=0.0,
                               alternative="two-sided") * per_unit_sd
    detectable = abs(math.tanh(z_bound + math.copysign(effect_detectable, correlation.z - z_bound)) - bound)
    effect = abs(correlation.z - z_bound) / per_unit_sd
    if effect < 1e-6:
        return Power(unit, units, detectable, None, "the observed correlation sits on the bound")
    needed = _ceil_units(_solve(solver, effect_size=effect, alpha=alpha, power=POWER, ratio=0.0,
                                alternative="two-sided"))
    note = "" if needed is not None else f"the observed effect is too small for {PRACTICAL_UNITS} {unit}"
    return Power(unit, units, detectable, needed, note)
