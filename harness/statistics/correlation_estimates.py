"""Correlations over the clients of a run (Pearson, Spearman, partial on a control), their Fisher-z intervals, and
their random-effects pooling over seeds (DerSimonian-Laird, Hartung-Knapp) with the bias of Fisher's z removed."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from harness.statistics.stats import CONFIDENCE, upper_quantile


def fisher_z(r: float) -> float:
    """Fisher's z of a correlation, r clipped just inside (-1, 1) so that ±1 stays finite."""
    return math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))


def fisher_z_bias(rho: float, df: int) -> float:
    """E[atanh r] − atanh ρ for a Pearson r over df + 1 bivariate normal pairs (Hotelling, 1953, to the third
    order in 1/df): ρ/(2 df) · (1 + (5 + ρ²)/(4 df) + (11 + 2ρ² + 3ρ⁴)/(8 df²)). Fisher's z is biased away from 0:
    by −0.022 at ρ = −0.8 over 20 clients, a tenth of one run's standard error."""
    rho2 = rho * rho
    return rho / (2 * df) * (1 + (5 + rho2) / (4 * df) + (11 + 2 * rho2 + 3 * rho2 * rho2) / (8 * df * df))


def bias_corrected_z(r: float, df: int) -> float:
    """The ζ whose Fisher z is expected at atanh(r): the root of ζ + bias(tanh ζ) = atanh(r) (`fisher_z_bias`),
    found by fixed-point iteration (bias' ≤ 1/df, so each step shrinks the error by that factor).

    Inverting the expansion, rather than subtracting r/(2 df) with r for ρ, also removes the bias of that
    plug-in: simulated over 20 clients (2·10⁶ runs), the mean of atanh(r) misses atanh(ρ) by −0.024 at
    ρ = −0.845 and −0.020 at −0.715, atanh(r) − r/(2 df) by −0.0016 and −0.0019, and this by −0.00004 and −0.0007.
    """
    if df < 1:
        raise ValueError(f"a correlation's bias needs at least 2 pairs beyond its controls, not {df + 1}")
    z = fisher_z(r)
    corrected = z
    for _ in range(100):
        updated = z - fisher_z_bias(math.tanh(corrected), df)
        if abs(updated - corrected) < 1e-13:
            return updated
        corrected = updated
    return corrected


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
    def bias_corrected_z(self) -> float:
        """Fisher's z with its bias removed (`bias_corrected_z`): what seeds are pooled on. A partial
        correlation on one control over n clients is distributed as a plain one over n − 1. A Spearman
        correlation keeps its z: the Pearson expansion does not fit it (simulated over 20 bivariate normal
        clients, atanh(r_s) misses atanh(ρ_s) by +0.029 at ρ_s = −0.83 and by under 0.001 at −0.48 and 0.29,
        and the Pearson correction would make these +0.051, +0.011 and −0.008)."""
        if self.method == "spearman":
            return self.z
        return bias_corrected_z(self.r, self.n - 1 - self.controls)

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

    Each seed enters with the bias of its Fisher z removed (`Correlation.bias_corrected_z`). Uncorrected,
    the bias (about ρ/(2(n − 1)) per run: −0.022 at ρ = −0.8 over 20 clients) is the same on every seed while
    the pooled standard error shrinks as seeds are added, so a test of the pool lost its α without limit: a
    true ρ = −0.845 on the edge of Between(−0.845, −0.715) was falsely FAILed 0.090 of the time at 20 seeds
    and 0.140 at 40 (α = 0.05, runs of 20 simulated clients whose true z varies by τ = 0.1 between seeds;
    tests/test_error_rates.py); corrected, 0.040 and 0.046.

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
        return upper_quantile(one_sided_alpha, self.df)

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
        return float(special.chdtrc(self.seeds - 1, self.q)) if self.seeds > 1 else math.nan  # stats.chi2.sf

    def heterogeneity_text(self) -> str:
        if self.seeds < 2:
            return "one seed"
        return (f"Cochran's Q = {self.q:.3g} (p = {self.q_p_value:.2g}), I² = {self.i_squared:.0%}, "
                f"τ² = {self.tau_squared:.3g}; Hartung-Knapp interval on {self.df} df")


def pooled_correlation(per_seed: Sequence[Correlation]) -> PooledCorrelation:
    """Random-effects pooling of the seeds' bias-corrected Fisher z (DerSimonian-Laird tau², Hartung-Knapp
    interval)."""
    weights = np.array([c.weight for c in per_seed], dtype=float)
    zs = np.array([c.bias_corrected_z for c in per_seed])
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
