"""Where an observation moves along a scale axis: a least-squares line through every seed's
value at every point, the t-interval of its slope, and whether that slope carries the values
toward a target range, away from it, or not detectably at all."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95

TOWARD, AWAY, FLAT, INSIDE = "toward", "away", "flat", "inside"


@dataclass(frozen=True)
class Band:
    """A closed range of values; an end may be infinite (a one-sided statement)."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def text(self) -> str:
        if math.isinf(self.low):
            return f"≤ {self.high:.4g}"
        if math.isinf(self.high):
            return f"≥ {self.low:.4g}"
        return f"[{self.low:.4g}, {self.high:.4g}]"


@dataclass(frozen=True)
class Trend:
    """y = intercept + slope · u, with u = ln(axis value) on a log axis, else the value itself."""

    slope: float
    low: float
    high: float
    intercept: float
    n: int
    log_axis: bool
    residual_std: float
    u_mean: float
    u_spread: float
    """Sum of squared deviations of u from its mean."""
    confidence: float = CONFIDENCE

    def coordinate(self, x: float) -> float:
        return math.log(x) if self.log_axis else x

    def at(self, x: float) -> float:
        return self.intercept + self.slope * self.coordinate(x)

    def interval_at(self, x: float) -> tuple[float, float]:
        """Confidence interval of the fitted line (the mean, not a new seed's value) at x."""
        u = self.coordinate(x)
        half = (stats.t.ppf(0.5 + self.confidence / 2, self.n - 2) * self.residual_std
                * math.sqrt(1 / self.n + (u - self.u_mean) ** 2 / self.u_spread))
        value = self.at(x)
        return value - half, value + half

    @property
    def mean(self) -> float:
        """The fitted value at the observations' centre, which is their mean."""
        return self.intercept + self.slope * self.u_mean

    def slope_text(self) -> str:
        per = "per unit of ln(axis)" if self.log_axis else "per unit of the axis"
        return (f"slope {self.slope:+.3g} {per}, {self.confidence:.0%} interval [{self.low:+.3g}, {self.high:+.3g}] "
                f"(least squares over {self.n} per-seed values)")


def fit_trend(observations: Sequence[tuple[float, float]], log_axis: bool,
              confidence: float = CONFIDENCE) -> Trend | None:
    """The line through (axis value, observed value) pairs; None with fewer than three finite
    values or fewer than two distinct axis values (no interval can be had)."""
    pairs = [(x, y) for x, y in observations if math.isfinite(y)]
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2:
        return None
    u = np.array([math.log(x) if log_axis else x for x, _ in pairs], dtype=np.float64)
    y = np.array([y for _, y in pairs], dtype=np.float64)
    u_mean = float(u.mean())
    spread = float(((u - u_mean) ** 2).sum())
    slope = float(((u - u_mean) * (y - y.mean())).sum() / spread)
    intercept = float(y.mean() - slope * u_mean)
    residuals = y - (intercept + slope * u)
    residual_std = math.sqrt(float((residuals ** 2).sum()) / (len(y) - 2))
    half = stats.t.ppf(0.5 + confidence / 2, len(y) - 2) * residual_std / math.sqrt(spread)
    return Trend(slope, slope - half, slope + half, intercept, len(y), log_axis, residual_std, u_mean, spread,
                 confidence)


def heading(trend: Trend, band: Band) -> str:
    """INSIDE when the observations' mean lies in the band; otherwise TOWARD or AWAY when the
    slope's interval excludes zero on the side that closes or widens the gap, FLAT when it
    includes zero."""
    position = trend.mean
    if band.contains(position):
        return INSIDE
    if trend.low <= 0.0 <= trend.high:
        return FLAT
    rising = trend.low > 0.0
    below = position < band.low
    return TOWARD if rising == below else AWAY


def reading(trend: Trend, band: Band | None) -> str:
    if band is None:
        return f"{trend.slope_text()}; the paper states no range to move toward"
    mean = trend.mean
    match heading(trend, band):
        case "inside":
            moving = ("" if trend.low <= 0.0 <= trend.high
                      else f", and moving {'up' if trend.low > 0 else 'down'} along the axis")
            return f"inside the paper's range {band.text()} on average ({mean:.3g}){moving}: {trend.slope_text()}"
        case "flat":
            return (f"not moving detectably (the slope's interval includes 0), {mean:.3g} on average against the "
                    f"paper's {band.text()}: {trend.slope_text()}")
        case "toward":
            return f"moving toward the paper's range {band.text()} from {mean:.3g} on average: {trend.slope_text()}"
        case _:
            return f"moving away from the paper's range {band.text()} from {mean:.3g} on average: {trend.slope_text()}"
