"""Where an observation moves along a scale axis, with the seeds' structure respected.

A study runs the same seeds (the same partitions and capacities) at every point, so its values
are not independent points: each seed gets its own least-squares line (on ln(axis) where every
point is positive), and the trend is the mean of those lines. Its slope, and its value at any
axis value, are the mean over the S seeds that have a line of each seed's own slope or fitted
value, with a t-interval on S − 1 degrees of freedom: a seed's own offset drops out of the
slope, and a seed's own slope is part of the spread the interval measures instead of being
counted once a point as if independent.

A reading compares the value at the paper's scale with the paper's range: the seeds' measured
values there when the paper's scale is a measured point, else the value read off their lines
(labelled interpolated or extrapolated). It is *inside* when that value's whole interval lies in
the range; otherwise, on the side its mean lies, the line moves *toward* the range only when the
slope's whole interval lies on the side that shrinks the distance as the axis grows, *away* when
wholly on the side that widens it, and otherwise it is not moving detectably."""
from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats

CONFIDENCE = 0.95

TOWARD, AWAY, FLAT, INSIDE, EDGE, NOT_ESTIMABLE = "toward", "away", "flat", "inside", "edge", "not estimable"
MEASURED, INTERPOLATED, EXTRAPOLATED = "measured", "interpolated", "extrapolated"

Observations = Mapping[Hashable, Sequence[tuple[float, float]]]
"""Per seed, its (axis value, observed value) pairs."""


@dataclass(frozen=True)
class Band:
    """A closed range of values; an end may be infinite (a one-sided statement)."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def holds(self, interval: tuple[float, float]) -> bool:
        """Whether the whole interval lies in the band."""
        return self.low <= interval[0] and interval[1] <= self.high

    def excludes(self, interval: tuple[float, float]) -> bool:
        """Whether the whole interval lies outside the band, on one side."""
        return interval[1] < self.low or interval[0] > self.high

    def side(self, value: float) -> int:
        """-1 below the band, +1 above it, 0 in it."""
        return -1 if value < self.low else 1 if value > self.high else 0

    def text(self) -> str:
        if math.isinf(self.low):
            return f"≤ {self.high:.4g}"
        if math.isinf(self.high):
            return f"≥ {self.low:.4g}"
        return f"[{self.low:.4g}, {self.high:.4g}]"


@cache
def t_quantile(confidence: float, df: int) -> float:
    """The two-sided `confidence` quantile of Student's t on `df` degrees of freedom."""
    return float(stats.t.ppf(0.5 + confidence / 2, df))


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, tuple[float, float] | None]:
    """The mean of one value per seed and its t-interval on S − 1 df (None with fewer than two seeds)."""
    array = np.asarray(values, dtype=np.float64)
    mean = float(array.mean())
    if len(array) < 2:
        return mean, None
    half = t_quantile(confidence, len(array) - 1) * float(array.std(ddof=1)) / math.sqrt(len(array))
    return mean, (mean - half, mean + half)


def _number(value: float) -> str:
    return f"{value:.3g}"


def _axis_value(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Estimate:
    """A value at one axis value: one per seed, their mean, and its t-interval on S − 1 df.

    `source` says where the seeds' values come from: MEASURED at that point, or read off each
    seed's own line (INTERPOLATED within the measured points, EXTRAPOLATED beyond them)."""

    x: float
    source: str
    values: Mapping[Hashable, float]
    mean: float
    interval: tuple[float, float] | None
    confidence: float = CONFIDENCE

    @classmethod
    def of(cls, x: float, source: str, values: Mapping[Hashable, float],
           confidence: float = CONFIDENCE) -> Estimate:
        mean, interval = mean_interval(list(values.values()), confidence)
        return cls(x, source, dict(values), mean, interval, confidence)

    @property
    def seeds(self) -> int:
        return len(self.values)

    @property
    def df(self) -> int:
        return self.seeds - 1

    def text(self) -> str:
        if self.interval is None:
            return f"{_number(self.mean)} (one seed: no interval)"
        low, high = self.interval
        return (f"{_number(self.mean)} [{_number(low)}, {_number(high)}] ({self.confidence:.0%} t-interval over "
                f"{self.seeds} seeds, {self.df} df)")

    def to_dict(self) -> dict:
        return {"value": self.x, "source": self.source, "mean": self.mean,
                "interval": None if self.interval is None else list(self.interval), "seeds": self.seeds,
                "df": self.df, "confidence": self.confidence, "values": {str(k): v for k, v in self.values.items()}}


@dataclass(frozen=True)
class SeedLine:
    """One seed's own least-squares line, y = intercept + slope · u."""

    seed: Hashable
    intercept: float
    slope: float
    points: int

    def at(self, u: float) -> float:
        return self.intercept + self.slope * u


@dataclass(frozen=True)
class Trend:
    """The mean of the seeds' own lines, with u = ln(axis value) on a log axis, else the value itself.

    `measured`: every seed's finite value at every axis value it was observed at (a seed with
    too few points for a line still counts there)."""

    lines: tuple[SeedLine, ...]
    measured: Mapping[float, Mapping[Hashable, float]]
    log_axis: bool
    confidence: float = CONFIDENCE

    @property
    def seeds(self) -> int:
        return len(self.lines)

    @property
    def df(self) -> int:
        return self.seeds - 1

    @property
    def estimable(self) -> bool:
        """Whether the slope has an interval: two seeds or more with a line."""
        return self.seeds >= 2

    @property
    def slope(self) -> float:
        return float(np.mean([line.slope for line in self.lines]))

    @property
    def intercept(self) -> float:
        return float(np.mean([line.intercept for line in self.lines]))

    @property
    def interval(self) -> tuple[float, float] | None:
        """The slope's t-interval on S − 1 df over the seeds' own slopes (None with one seed)."""
        return mean_interval([line.slope for line in self.lines], self.confidence)[1]

    def coordinate(self, x: float) -> float:
        return math.log(x) if self.log_axis else x

    def at(self, x: float) -> float:
        """The mean line at x: the mean of the seeds' fitted values there."""
        return self.intercept + self.slope * self.coordinate(x)

    def fitted_at(self, x: float) -> Estimate:
        """Each seed's own line read at x, and their mean with its interval on S − 1 df."""
        u = self.coordinate(x)
        inside = min(self.measured) <= x <= max(self.measured)
        return Estimate.of(x, INTERPOLATED if inside else EXTRAPOLATED,
                           {line.seed: line.at(u) for line in self.lines}, self.confidence)

    def at_scale(self, x: float) -> Estimate | None:
        """The seeds' measured values at x where it is a measured point, else their lines read
        there; None where x has no coordinate (a non-positive value on a log axis)."""
        if self.measured.get(x):
            return Estimate.of(x, MEASURED, self.measured[x], self.confidence)
        if self.log_axis and x <= 0:
            return None
        return self.fitted_at(x)

    def slope_text(self) -> str:
        per = "per unit of ln(axis)" if self.log_axis else "per unit of the axis"
        interval = self.interval
        if interval is None:
            return (f"slope {self.slope:+.3g} {per} from one seed's own line (no interval: the trend is not "
                    "estimable with fewer than two seeds)")
        return (f"slope {self.slope:+.3g} {per}, {self.confidence:.0%} interval [{interval[0]:+.3g}, "
                f"{interval[1]:+.3g}] (the mean of {self.seeds} seeds' own least-squares slopes, t on {self.df} df)")


def _seed_line(seed: Hashable, pairs: Sequence[tuple[float, float]], log_axis: bool) -> SeedLine | None:
    """The seed's least-squares line; None with fewer than two distinct axis values."""
    if len({x for x, _ in pairs}) < 2:
        return None
    u = np.array([math.log(x) if log_axis else x for x, _ in pairs], dtype=np.float64)
    y = np.array([y for _, y in pairs], dtype=np.float64)
    centred = u - u.mean()
    slope = float((centred * (y - y.mean())).sum() / (centred ** 2).sum())
    return SeedLine(seed, float(y.mean() - slope * u.mean()), slope, len(pairs))


def _measured(finite: Mapping[Hashable, list[tuple[float, float]]]) -> dict[float, dict[Hashable, float]]:
    """Per axis value, each seed's value there (the mean of its values should a seed repeat a point)."""
    grouped: dict[float, dict[Hashable, list[float]]] = {}
    for seed, pairs in finite.items():
        for x, y in pairs:
            grouped.setdefault(x, {}).setdefault(seed, []).append(y)
    return {x: {seed: float(np.mean(ys)) for seed, ys in by_seed.items()} for x, by_seed in sorted(grouped.items())}


def fit_trend(observations: Observations, log_axis: bool, confidence: float = CONFIDENCE) -> Trend | None:
    """Each seed's own line through its (axis value, observed value) pairs, and their mean; None
    when no seed has finite values at two distinct axis values. Seeds with fewer are left out of
    the lines (their values still count where measured)."""
    finite = {seed: [(float(x), float(y)) for x, y in pairs if math.isfinite(y)]
              for seed, pairs in observations.items()}
    lines = tuple(line for seed, pairs in finite.items() if (line := _seed_line(seed, pairs, log_axis)) is not None)
    if not lines:
        return None
    return Trend(lines, _measured(finite), log_axis, confidence)


def heading(trend: Trend, band: Band, x: float) -> str:
    """The trend against the band at axis value x (the paper's scale):

    NOT_ESTIMABLE without an interval at x, or, outside the band, without the slope's interval;
    INSIDE when the interval at x lies in the band; EDGE when its mean does but the interval does
    not; otherwise TOWARD or AWAY when the slope's whole interval is on the side that shrinks or
    widens the distance to the band as the axis grows, FLAT when it includes 0."""
    at = trend.at_scale(x)
    if at is None or at.interval is None:
        return NOT_ESTIMABLE
    if band.holds(at.interval):
        return INSIDE
    side = band.side(at.mean)
    if side == 0:
        return EDGE
    interval = trend.interval
    if interval is None:
        return NOT_ESTIMABLE
    low, high = interval
    if low <= 0.0 <= high:
        return FLAT
    rising = low > 0.0
    return TOWARD if rising == (side < 0) else AWAY


def _where(at: Estimate, axis: str) -> str:
    label = at.source if at.source == MEASURED else f"{at.source} from the seeds' own lines, not measured"
    return f"at {axis} = {_axis_value(at.x)} ({label})"


def reading(trend: Trend, band: Band | None, x: float, axis: str = "the axis") -> str:
    """The trend's reading in words: what was tested, at which axis value, on how many seeds."""
    slope = trend.slope_text()
    at = trend.at_scale(x)
    if at is None:
        return f"no value at {axis} = {_axis_value(x)} (not on the log axis); {slope}"
    where = f"{_where(at, axis)} the value is {at.text()}"
    if band is None:
        return f"{where}; the paper states no range to move toward; {slope}"
    paper = f"the paper's range {band.text()}"
    found = heading(trend, band, x)
    if found == INSIDE:
        return f"inside {paper}: {where}, within it; {slope}"
    if found == EDGE:
        return f"at the edge of {paper}: {where}, its mean inside the range but its interval not within it; {slope}"
    if found == NOT_ESTIMABLE:
        if at.interval is None:
            return f"not estimable against {paper}: {where}, with no interval; {slope}"
        return f"not inside {paper}, direction not estimable: {where}; {slope}"
    interval, slope_interval = at.interval, trend.interval
    assert interval is not None and slope_interval is not None  # heading() is NOT_ESTIMABLE without them
    side = "below" if band.side(at.mean) < 0 else "above"
    outside = "outside" if band.excludes(interval) else "not shown inside"
    if found == FLAT:
        return (f"{outside} {paper} and not moving detectably as {axis} grows: {where}, {side} the range; the "
                f"slope's interval includes 0: {slope}")
    rising = "above" if slope_interval[0] > 0 else "below"
    movement = "toward it" if found == TOWARD else "away from it"
    return (f"{outside} {paper} and moving {movement} as {axis} grows: {where}, {side} the range, and the slope's "
            f"whole interval lies {rising} 0: {slope}")
