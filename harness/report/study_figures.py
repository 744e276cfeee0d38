"""A study's figure per claim: the observed quantity against the axis, every seed with its own fitted line,
the seed spread, the mean trend carried to the paper's scale, and the paper's range as a band (matplotlib, Agg)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.statistics.trend import EXTRAPOLATED, MEASURED

if TYPE_CHECKING:
    from harness.report.study_reading import ClaimReading, SeriesTrend, StudyReading

LOG_AXIS_SPAN = 10.0
"""Figures put the axis on a log scale when its points and the paper's scale span a decade or more."""


def _grid(start: float, end: float, log_axis: bool, count: int = 50) -> np.ndarray:
    return np.geomspace(start, end, count) if log_axis else np.linspace(start, end, count)


def _draw_trend(ax, trend: SeriesTrend, log_axis: bool, colour: str) -> list[float]:
    """Each seed's own line (thin) and their mean (dashed) over the measured points, the mean
    dotted on to the paper's scale where it is read off the lines, and the value there with its
    interval; returns the values drawn."""
    fit = trend.trend
    assert fit is not None  # only fitted trends are drawn
    span = (min(fit.measured), max(fit.measured))
    grid = _grid(*span, log_axis)
    coordinates = [fit.coordinate(g) for g in grid]
    for number, line in enumerate(fit.lines):
        ax.plot(grid, [line.at(u) for u in coordinates], "-", color=colour, linewidth=0.6, alpha=0.45,
                label="each seed's own line" if number == 0 else None)
    ax.plot(grid, [fit.at(g) for g in grid], "--", color=colour, linewidth=1.4,
            label="trend (mean of the seeds' lines)")
    at = trend.at_paper
    if at is None:
        return []
    if at.source == EXTRAPOLATED:
        beyond = _grid(span[1] if at.x > span[1] else span[0], at.x, log_axis, 20)
        ax.plot(beyond, [fit.at(g) for g in beyond], ":", color=colour, linewidth=1)
    low, high = at.interval or (at.mean, at.mean)
    source = "measured" if at.source == MEASURED else f"{at.source}, not measured"
    ax.errorbar([at.x], [at.mean], yerr=[[at.mean - low], [high - at.mean]], color=colour,
                marker="D" if at.source == MEASURED else "x", capsize=4, linestyle="none",
                label=f"at the paper's scale ({source}; {at.confidence:.0%} interval)")
    return [low, high]


def draw_claim(claim: ClaimReading, study: StudyReading, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    xs = [float(p.value) for p in claim.points] + [float(study.paper_value)]
    log_axis = all(x > 0 for x in xs) and max(xs) / min(xs) >= LOG_AXIS_SPAN
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn: list[float] = []
    for index, label in enumerate(claim.labels):
        colour = colours[index % len(colours)]
        seeds_x, seeds_y, mean_x, mean_y, std_y = [], [], [], [], []
        for point in claim.points:
            values = [v for v in point.values.get(label, {}).values() if math.isfinite(v)]
            seeds_x += [float(point.value)] * len(values)
            seeds_y += values
            if values:
                mean_x.append(float(point.value))
                mean_y.append(float(np.mean(values)))
                std_y.append(float(np.std(values, ddof=1)) if len(values) > 1 else 0.0)
        drawn += seeds_y
        ax.scatter(seeds_x, seeds_y, s=14, alpha=0.5, color=colour)
        ax.errorbar(mean_x, mean_y, yerr=std_y, color=colour, marker="o", capsize=3, label=f"{label} (mean ± sd)")
        trend = claim.trends[index] if index < len(claim.trends) else None
        if trend is not None and trend.trend is not None:
            drawn += _draw_trend(ax, trend, log_axis, colour)
    if claim.band is not None:
        finite = [b for b in (claim.band.low, claim.band.high) if math.isfinite(b)]
        top, bottom = max(drawn + finite, default=1.0), min(drawn + finite, default=0.0)
        margin = 0.1 * (top - bottom or 1.0)
        low = claim.band.low if math.isfinite(claim.band.low) else bottom - margin
        high = claim.band.high if math.isfinite(claim.band.high) else top + margin
        ax.axhspan(low, high, color="tab:green", alpha=0.15, label=f"paper: {claim.band.text()}")
        ax.set_ylim(bottom - margin, top + margin)
    ax.axvline(float(study.paper_value), color="grey", linestyle=":", linewidth=1, label="paper's scale")
    if log_axis:
        ax.set_xscale("log")
    ax.set_xlabel(study.axis)
    ax.set_ylabel(claim.labels[0] if len(claim.labels) == 1 else "observed")
    ax.set_title(claim.claim, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
