"""What a scale study's reading holds: per claim, its verdict and every series' per-seed values at each point
of the axis, each series' trend, and what each point cost; with the markdown and JSON a report writes of it
(`harness.report.studies` reads a study into it)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.loading.studies import PAPER_PROFILE
from harness.report.cells import cell, relative
from harness.statistics.trend import EXTRAPOLATED, MEASURED, Band, Estimate, Trend
from methods.plain import json_safe


@dataclass
class PointCost:
    """What one point of the axis cost: its runs' measured wall time, or an estimate where none ran."""

    value: int | float
    planned: int
    walls: list[float]
    estimate: float | None = None
    """Seconds per run where no run is stored: the nearest measured point's mean scaled by the axis
    ratio (a run's time is nearly all local training, proportional to data or epochs)."""

    def text(self) -> str:
        if self.walls:
            mean = float(np.mean(self.walls))
            return (f"| {self.value} | {len(self.walls)} of {self.planned} | {mean:,.0f} | "
                    f"{sum(self.walls):,.0f} |")
        if self.estimate is not None:
            return (f"| {self.value} | 0 of {self.planned} | about {self.estimate:,.0f} (estimate) | "
                    f"about {self.estimate * self.planned:,.0f} (estimate) |")
        return f"| {self.value} | 0 of {self.planned} | — | — |"


@dataclass
class PointReading:
    """One point of the axis for one claim: its verdict and every series' per-seed values."""

    value: int | float
    profile: str
    status: str
    reason: str
    values: dict[str, dict[int, float]] = field(default_factory=dict)
    pooled: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Per correlation series: the correlation pooled over seeds with its interval."""
    walls: dict[tuple[str, int], float] = field(default_factory=dict)
    """Measured run time of each (variant, seed) record the point read."""
    recorded: int = 0
    """How many of the runs its observation reads have a complete record here."""
    planned: int = 0
    """How many runs its observation reads (every variant it observes at every seed of the point); 0 where the
    claim's expectation skips the study's base profile (its SKIPPED is the claim's, not the records')."""

    @property
    def shown(self) -> str:
        """Its verdict as a report shows it: 'no records here (n of m runs)' where it was not verified for want
        of records (a SKIPPED verdict would read as a limit of the claim), else its status."""
        if self.status == "SKIPPED" and self.recorded < self.planned:
            return f"no records here ({self.recorded} of {self.planned} runs)"
        return self.status

    def summary(self, label: str) -> str:
        values = [v for v in self.values.get(label, {}).values() if math.isfinite(v)]
        if not values:
            return "no observation"
        mean = float(np.mean(values))
        spread = f" ± {np.std(values, ddof=1):.3g}" if len(values) > 1 else ""
        text = f"mean {mean:.3g}{spread} ({len(values)} seeds)"
        if label in self.pooled:
            r, low, high = self.pooled[label]
            text = f"pooled {r:+.3f} [{low:+.3f}, {high:+.3f}]; {text}"
        return text


@dataclass
class SeriesTrend:
    label: str
    trend: Trend | None
    text: str
    at_paper: Estimate | None = None
    """The value at the paper's scale: measured there, or read off the seeds' own lines."""
    heading: str | None = None
    """`harness.statistics.trend.heading` against the paper's band (None without a band or a trend)."""

    def to_dict(self) -> dict[str, Any]:
        fit = self.trend
        found: dict[str, Any] = {"series": self.label, "heading": self.heading, "reading": self.text}
        if fit is None:
            return {**found, "estimator": None, "seeds": 0, "df": None, "slope": None, "slope_interval": None,
                    "at_paper_scale": None}
        interval = fit.interval
        return {**found, "estimator": "the mean of each seed's own least-squares line; t-intervals on seeds − 1 df",
                "log_axis": fit.log_axis, "confidence": fit.confidence, "seeds": fit.seeds,
                "df": fit.df if fit.estimable else None, "slope": fit.slope,
                "slope_interval": None if interval is None else list(interval),
                "seed_lines": {str(line.seed): {"intercept": line.intercept, "slope": line.slope, "points": line.points}
                               for line in fit.lines},
                "at_paper_scale": None if self.at_paper is None else self.at_paper.to_dict()}


@dataclass
class ClaimReading:
    claim: str
    statement: str
    labels: list[str]
    band: Band | None
    paper: str
    points: list[PointReading]
    trends: list[SeriesTrend]
    figure: Path | None = None
    tested: str = ""
    """The bound each point's verdict tested (the base profile's expectation)."""
    statistic: list[str] = field(default_factory=list)
    """The series of the statistic the verdict tests where it is not a variant's own value (an order's
    paired differences)."""

    @property
    def verdicts(self) -> str:
        """The verdict at each point, e.g. '192: FAIL, 576: INCONCLUSIVE, no records here at 1600 (0 of 15 runs)'."""
        unrecorded = [p for p in self.points if p.shown != p.status]
        shown = [f"{p.value}: {p.status}" for p in self.points if p not in unrecorded]
        if len({(p.recorded, p.planned) for p in unrecorded}) == 1:  # one phrase for the points not run here
            first = unrecorded[0]
            shown.append(f"no records here at {', '.join(str(p.value) for p in unrecorded)} ({first.recorded} of "
                         f"{first.planned} runs{' each' if len(unrecorded) > 1 else ''})")
        else:
            shown += [f"{p.value}: {p.shown}" for p in unrecorded]
        return ", ".join(shown)

    def whose_fail(self) -> str | None:
        """Whether a FAIL along the axis is the small scale's or stands as the axis grows toward the
        paper's scale: the course of the verdicts, then its reading (None where no point FAILED)."""
        reading = self.fail_reading()
        return None if reading is None else f"{self._fail_course()}: {reading}"

    def _measured(self) -> list[PointReading]:
        return [p for p in self.points if p.status in ("PASS", "FAIL", "INCONCLUSIVE")]

    def _fail_course(self) -> str:
        measured = self._measured()
        at, last = ", ".join(str(p.value) for p in measured if p.status == "FAIL"), measured[-1]
        if last.status == "FAIL":
            return f"FAIL at {at}, the largest point measured included"
        return f"FAIL at {at} but {last.status} at the largest point measured ({last.value})"

    def fail_reading(self) -> str | None:
        """What the verdicts along the axis say of a FAIL (None without a FAIL, or with fewer than two
        points measured: no course to read)."""
        measured = self._measured()
        if len(measured) < 2 or not any(p.status == "FAIL" for p in measured):
            return None
        last = measured[-1]
        if last.status == "FAIL":
            return "the FAIL stands as the axis grows, so as far as this axis reaches it is not the smaller scale's"
        if last.status == "PASS":
            return "the FAIL is gone at the largest point, where the claim holds: it is the smaller scales'"
        return "the largest point shows neither the FAIL nor the claim: whose the FAIL is stays open"


@dataclass
class StudyReading:
    name: str
    experiment: str
    title: str
    description: str
    axis: str
    base: str
    seeds: list[int]
    paper_value: int | float
    paper_note: str
    claims: list[ClaimReading]
    costs: list[PointCost] = field(default_factory=list)

    @property
    def figures(self) -> list[Path]:
        return [c.figure for c in self.claims if c.figure is not None]

    def markdown(self, base: Path, heading: str = "##") -> list[str]:
        """Markdown lines; figure links relative to `base` (the folder of the file they go in)."""
        points = ", ".join(str(p.value) for p in self.claims[0].points) if self.claims else ""
        lines = [f"{heading} Scale study `{self.name}`: {self.title}", ""]
        if self.description:
            lines += [" ".join(self.description.split()), ""]
        lines += [f"Axis `{self.axis}` on profile `{self.base}` of `{self.experiment}` (seeds "
                  f"{', '.join(map(str, self.seeds))}), at {points}. The paper's scale: {self.paper_value}"
                  + (f" ({self.paper_note})" if self.paper_note else "") + ". At every point a claim is verified "
                  f"against its expectation at `{self.base}`; the band is the paper's own statement (its "
                  f"`{PAPER_PROFILE}` expectation). Trend: each seed's own least-squares line on ln(axis) (the seeds "
                  "are the same at every point), their mean slope and their mean value at the paper's scale (the "
                  "seeds' measured values where it is a measured point, else read off their lines) with 95% "
                  "t-intervals on seeds − 1 df; inside when the interval at the paper's scale lies in the band, "
                  "toward / away only when the slope's whole interval lies on the side that closes / widens the "
                  "distance to the band as the axis grows, otherwise no detectable movement.", ""]
        for claim in self.claims:
            lines += [f"{heading}# `{claim.claim}`", "", f"> {' '.join(claim.statement.split())}", "",
                      f"Each point's verdict tested `{self.base}`'s expectation: {claim.tested}. The band of the "
                      f"trend is the paper's statement, not tested at these points: {claim.paper}.", ""]
            if claim.figure is not None:
                lines += [f"![{claim.claim} against {self.axis}]({relative(claim.figure, base)})", ""]
            if (fail := claim.whose_fail()) is not None:
                lines += [f"**Verdicts along the axis:** {fail}.", ""]
            for label in claim.labels:
                lines += [f"| {self.axis} | {cell(label)} | verdict |", "|---|---|---|"]
                lines += [f"| {p.value} | {p.summary(label)} | {p.shown} |" for p in claim.points]
                lines.append("")
            for trend in claim.trends:
                lines.append(f"- Trend of {trend.label}: {trend.text}.")
                at = trend.at_paper
                if at is not None and at.source != MEASURED:
                    kind = "Extrapolation" if at.source == EXTRAPOLATED else "Interpolation"
                    lines.append(f"- **{kind}, not a measurement**: the seeds' own lines read at the paper's scale "
                                 f"({self.axis} = {self.paper_value}) give {at.text()}.")
            lines.append("")
        if self.costs:
            lines += [f"{heading}# Cost per point", "",
                      "Single-threaded wall time of the study's runs (every variant its claims observe, every seed) "
                      "as stored; a point not run yet is estimated from the nearest measured point in proportion "
                      "to the axis.", "", f"| {self.axis} | runs stored | seconds a run | compute (s) |",
                      "|---|---|---|---|", *[c.text() for c in self.costs], ""]
        return lines

    def to_dict(self, base: Path) -> dict[str, Any]:
        """Plain JSON (no NaN or infinity: None; a band's missing end is None), per claim its verdict
        and per-seed values at every point and its trends' readings; figure paths relative to `base`
        (the folder of the file it goes in), so no path of this machine is written."""
        def point(p: PointReading) -> dict[str, Any]:
            return {"value": p.value, "profile": p.profile, "verdict": p.status, "reason": p.reason,
                    "runs_recorded": p.recorded, "runs_planned": p.planned,
                    "values": {label: {str(seed): v for seed, v in values.items()}
                               for label, values in p.values.items()},
                    "pooled": {label: {"r": r, "interval": [low, high]} for label, (r, low, high) in p.pooled.items()}}

        return json_safe({
            "study": self.name, "experiment": self.experiment, "title": self.title, "axis": self.axis,
            "base_profile": self.base, "seeds": self.seeds,
            "paper_scale": {"value": self.paper_value, "note": self.paper_note},
            "claims": [{"claim": c.claim, "paper": c.paper,
                        "band": None if c.band is None else [c.band.low, c.band.high],
                        "figure": None if c.figure is None else relative(c.figure, base),
                        "points": [point(p) for p in c.points],
                        "trends": [t.to_dict() for t in c.trends]} for c in self.claims],
            "costs": [{"value": c.value, "planned_runs": c.planned, "wall_seconds": c.walls,
                       "estimated_seconds_a_run": c.estimate} for c in self.costs]})
