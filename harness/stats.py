"""The statistics verdicts rest on, all through scipy.stats."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Summary:
    mean: float
    std: float
    n: int

    @property
    def deterministic(self) -> bool:
        return self.n < 2 or self.std == 0.0


def summarize(values: list[float]) -> Summary:
    array = np.asarray(values, dtype=float)
    std = float(np.std(array, ddof=1)) if array.size > 1 else 0.0
    return Summary(float(np.mean(array)) if array.size else math.nan, std, int(array.size))


def mean_interval(values: list[float], confidence: float) -> tuple[float, float]:
    """Two-sided t interval of the mean."""
    array = np.asarray(values, dtype=float)
    if array.size < 2 or np.std(array) == 0.0:
        return float(array.mean()), float(array.mean())
    low, high = stats.t.interval(confidence, df=array.size - 1, loc=array.mean(), scale=stats.sem(array))
    return float(low), float(high)


def one_sided(values: list[float], bound: float, side: str, alpha: float) -> tuple[str, float]:
    """Is the mean below (side='less') or above (side='greater') `bound`?

    Returns ('pass' | 'fail' | 'undecided', p-value of the claimed side). A single value or
    values without spread are compared directly (p = 0 or 1).
    """
    summary = summarize(values)
    if summary.deterministic:
        holds = summary.mean < bound if side == "less" else summary.mean > bound
        return ("pass" if holds else "fail"), (0.0 if holds else 1.0)
    claimed = stats.ttest_1samp(values, bound, alternative=side).pvalue
    opposite = stats.ttest_1samp(values, bound, alternative="greater" if side == "less" else "less").pvalue
    if claimed < alpha:
        return "pass", float(claimed)
    if opposite < alpha:
        return "fail", float(claimed)
    return "undecided", float(claimed)


def equivalence(values: list[float], bound: float, alpha: float) -> tuple[str, float, tuple[float, float]]:
    """Two one-sided tests that the mean lies in (-bound, bound).

    'pass' if both tests reject at alpha; 'fail' if the (1 - 2 alpha) interval lies
    wholly outside the bounds; otherwise 'undecided'. Returns the TOST p-value and interval.
    """
    summary = summarize(values)
    interval = mean_interval(values, 1.0 - 2.0 * alpha)
    if summary.deterministic:
        inside = abs(summary.mean) < bound
        return ("pass" if inside else "fail"), (0.0 if inside else 1.0), interval
    p_lower = stats.ttest_1samp(values, -bound, alternative="greater").pvalue
    p_upper = stats.ttest_1samp(values, bound, alternative="less").pvalue
    p_value = float(max(p_lower, p_upper))
    if p_value < alpha:
        return "pass", p_value, interval
    if interval[0] >= bound or interval[1] <= -bound:
        return "fail", p_value, interval
    return "undecided", p_value, interval


@dataclass(frozen=True)
class Correlation:
    r: float
    p_value: float
    low: float
    high: float
    n: int


def _residuals(values: np.ndarray, control: np.ndarray) -> np.ndarray:
    design = np.column_stack([np.ones_like(control), control])
    coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
    return values - design @ coefficients


def correlation(x: list[float], y: list[float], given: list[float] | None = None,
                method: str = "pearson", confidence: float = 0.95) -> Correlation:
    """Pearson or Spearman correlation, partial on `given` if set, with a Fisher-z interval.

    A partial correlation is the correlation of the residuals of x and y after a linear
    fit on the control; its interval uses n - 3 - 1 degrees of freedom.
    """
    columns = [np.asarray(x, float), np.asarray(y, float)] + ([np.asarray(given, float)] if given is not None else [])
    keep = np.all([np.isfinite(c) for c in columns], axis=0)
    columns = [c[keep] for c in columns]
    if method == "spearman":
        columns = [stats.rankdata(c) for c in columns]
    a, b = columns[0], columns[1]
    controls = 0
    if given is not None:
        a, b = _residuals(a, columns[2]), _residuals(b, columns[2])
        controls = 1
    n = int(a.size)
    if n - 3 - controls < 1 or np.std(a) == 0.0 or np.std(b) == 0.0:
        return Correlation(math.nan, math.nan, math.nan, math.nan, n)
    result = stats.pearsonr(a, b)
    r = float(result.statistic)
    z = math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))
    half = stats.norm.ppf(0.5 + confidence / 2) / math.sqrt(n - 3 - controls)
    p_value = float(result.pvalue)
    if controls:
        t = r * math.sqrt((n - 2 - controls) / max(1e-300, 1 - r * r))
        p_value = float(2 * stats.t.sf(abs(t), n - 2 - controls))
    return Correlation(r, p_value, math.tanh(z - half), math.tanh(z + half), n)
