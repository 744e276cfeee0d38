"""What a report shows of a scale study, per claim: a figure of the observed quantity against the
axis (every seed with its own fitted line, seed spread, the mean trend, the paper's range as a
band), the verdict at each point, and per series a trend read at the paper's scale (measured
there, or read off the seeds' lines and labelled so). `read_study` returns it as a structure a
renderer prints (`markdown`, `figures`, `to_dict`; `study_dicts` for REPORT.json); its figures are
`study_figures`', its costs `study_costs`'."""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.loading.catalog import Catalog, LoadedClaim
from harness.loading.studies import PAPER_PROFILE, LoadedStudy, StudyPoint, observed_variants
from harness.report.cells import cell, relative
from harness.report.study_costs import PointCost, study_costs
from harness.report.study_figures import draw_claim
from harness.running.store import wall_seconds
from harness.schema.expectations.base import ExpectationBase
from harness.statistics.trend import EXTRAPOLATED, MEASURED, Band, Estimate, Trend, fit_trend, heading, reading
from harness.verdicts.observe import observe
from methods.plain import json_safe

Lookup = Callable[[str, str, int, str], tuple[str, "dict | None"]]
"""(experiment, variant, seed, profile) -> (store key, record or None): `Outcome.lookup`."""


def paper_band(expectation: ExpectationBase | None) -> Band | None:
    """The values the paper's statement admits, as a range (None where it is not a range of the
    observed quantity: an order, a spread comparison, no expectation)."""
    admitted = expectation.admitted() if expectation is not None else None
    return Band(admitted.low, admitted.high) if admitted is not None else None


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
        """The verdict at each point, e.g. '192: FAIL, 576: FAIL, 1600: INCONCLUSIVE'."""
        return ", ".join(f"{p.value}: {p.status}" for p in self.points)

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
                lines += [f"| {p.value} | {p.summary(label)} | {p.status} |" for p in claim.points]
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


def _point(catalog: Catalog, study: LoadedStudy, loaded: LoadedClaim, point: StudyPoint, verdict,
           lookup: Lookup) -> PointReading:
    spec = catalog.specs[study.experiment]
    seeds = spec.spec.profiles[point.profile].seeds
    reading = PointReading(point.value, point.profile, verdict.status if verdict else "not verified",
                           verdict.reason if verdict else "")
    records, complete = {}, True
    for variant in observed_variants(loaded.claim, study.base):
        for seed in seeds:
            _, record = lookup(study.experiment, variant, seed, point.profile)
            if (wall := wall_seconds(record)) is not None:
                reading.walls[(variant, seed)] = wall
            if record is None or record["status"] != "ok":
                complete = False
            else:
                records[(variant, seed)] = record
    if not complete:
        return reading
    spread = loaded.claim.expect[study.base].spread_reference
    labels = {name: v.label for name, v in spec.spec.variants.items()}
    observed = observe(spec.kind, loaded.claim.observe, labels, seeds, records, spread)
    for series in observed.series:
        reading.values[series.label] = dict(series.values)
        pooled = series.pooled if series.correlations else None
        if pooled is not None:
            reading.pooled[series.label] = (pooled.r, pooled.low, pooled.high)
    return reading


def _log_coordinates(values: list[float]) -> bool:
    """The trend reads ln(axis) whenever every point is positive."""
    return all(v > 0 for v in values)


def _per_seed(label: str, points: list[PointReading]) -> dict[Hashable, list[tuple[float, float]]]:
    """Each seed's (axis value, observed value) pairs of one series."""
    observations: dict[Hashable, list[tuple[float, float]]] = {}
    for point in points:
        for seed, value in point.values.get(label, {}).items():
            observations.setdefault(seed, []).append((float(point.value), value))
    return observations


def series_trend(label: str, points: list[PointReading], band: Band | None, paper_value: float, axis: str
                 ) -> SeriesTrend:
    """One series' trend over the points, read against the band at the paper's scale."""
    log_axis = _log_coordinates([float(p.value) for p in points])
    fit = fit_trend(_per_seed(label, points), log_axis)
    if fit is None:
        return SeriesTrend(label, None, "too few values for a trend (needs a seed with values at two or more points)")
    x = float(paper_value)
    return SeriesTrend(label, fit, reading(fit, band, x, axis), fit.at_scale(x),
                       None if band is None else heading(fit, band, x))


def read_study(catalog: Catalog, study: LoadedStudy, points: list[StudyPoint], verdicts, lookup: Lookup,
               figures_dir: Path, claims: list[str] | None = None) -> StudyReading:
    """The reading of a study's claims (all, or those named) at `points` from their verdicts and
    the records `lookup` finds; figures go to `figures_dir`, one per claim."""
    figures_dir.mkdir(parents=True, exist_ok=True)
    by_key = {(v.claim, v.profile): v for v in verdicts}
    spec = catalog.specs[study.experiment].spec
    seeds = spec.profiles[points[0].profile].seeds if points else []
    result = StudyReading(study.name, study.experiment, study.study.title, study.study.description,
                          study.study.axis, study.base, list(seeds), study.study.paper_scale.value,
                          study.study.paper_scale.note, [])
    for claim_id in [c for c in study.study.claims if claims is None or c in claims]:
        loaded = catalog.claim(claim_id)
        paper = loaded.claim.expect.get(PAPER_PROFILE)
        readings = [_point(catalog, study, loaded, p, by_key.get((claim_id, p.profile)), lookup) for p in points]
        tested = loaded.claim.expect.get(study.base)
        differences = add_tested_differences(readings, tested or paper, loaded.claim.observe.variants)
        labels = list(dict.fromkeys(label for r in readings for label in r.values))
        band = paper_band(paper)
        trends = [series_trend(label, readings, differences.get(label, band), study.study.paper_scale.value,
                               study.study.axis) for label in labels]
        claim = ClaimReading(claim_id, loaded.claim.statement, labels, band, _paper_text(paper), readings, trends,
                             tested=tested.describe(loaded.claim.observe) if tested is not None else "none",
                             statistic=list(differences))
        if labels:
            claim.figure = draw_claim(claim, result, figures_dir / f"study-{study.name}-{claim_id}.png")
        result.claims.append(claim)
    result.costs = study_costs(catalog, study, points, result.claims)
    return result


POSITIVE = Band(0.0, math.inf)
"""Where a tested difference (higher − lower variant) lies when the claim's order holds."""


def add_tested_differences(readings: list[PointReading], expectation, variants: list[str]) -> dict[str, Band]:
    """Add to every point the paired per-seed differences the expectation tests (an order's adjacent
    pairs: the statistic its verdict decides on, which the variants' own series do not show); returns
    each difference series' band, (0, ∞): the order holds. `variants`: the observation's, in the order
    of its series."""
    pairs = expectation.tested_differences() if expectation is not None else []
    series = list(dict.fromkeys(label for point in readings for label in point.values))
    if not pairs or len(series) != len(variants):
        return {}
    of_variant = dict(zip(variants, series))
    bands: dict[str, Band] = {}
    for higher, lower in pairs:
        first, second = of_variant[higher], of_variant[lower]
        label = f"{first} − {second}, paired per seed"
        for point in readings:
            a, b = point.values.get(first, {}), point.values.get(second, {})
            paired = {seed: a[seed] - b[seed] for seed in a if seed in b}
            if paired:
                point.values[label] = paired
        bands[label] = POSITIVE
    return bands


def _paper_text(expectation) -> str:
    if expectation is None:
        return f"no `{PAPER_PROFILE}` expectation"
    band = paper_band(expectation)
    if band is None:
        return f"`{expectation.as_written()}` (not a range of the observed value: no band)"
    return band.text() + (" on every seed run (a sign test of the median seed)" if expectation.every_seed else "")


def read_outcome(outcome, name: str, figures_dir: Path) -> StudyReading:
    """`read_study` of a `harness.pipeline.verify(..., study=name)` outcome, at the points it verified."""
    study = outcome.catalog.study(name)
    points = [p for p in study.points if p.profile in outcome.profiles]
    return read_study(outcome.catalog, study, points, outcome.verdicts, outcome.lookup, figures_dir,
                      [c.id for c in outcome.claims])


def study_dicts(readings: list[StudyReading], base: Path) -> list[dict[str, Any]]:
    """The studies' readings as plain JSON, for REPORT.json's "studies" (figure paths relative to `base`)."""
    return [reading.to_dict(base) for reading in readings]


def central_along_studies(catalog: Catalog, readings: list[StudyReading]) -> dict[str, list[str]]:
    """Per paper, one digest line for each of its central claims a study read: the verdict at each
    point and whose a FAIL is."""
    found: dict[str, list[str]] = {}
    for study in readings:
        for claim in study.claims:
            paper = catalog.claim(claim.claim).paper
            if claim.claim not in catalog.papers[paper].central:
                continue
            reading = claim.fail_reading()
            found.setdefault(paper, []).append(
                f"- along `{study.axis}` toward the paper's {study.paper_value} ([study `{study.name}`]"
                f"(report/study-{study.name}.md)), `{claim.claim}`: {claim.verdicts}"
                + (f" ({reading})" if reading else ""))
    return found


def study_findings(catalog: Catalog, readings: list[StudyReading]) -> dict[str, list[str]]:
    """Per paper, the findings lines of its claims' scale studies: the value at every point of the
    axis beside the paper's statement, and the trend's reading."""
    found: dict[str, list[str]] = {}
    for study in readings:
        for claim in study.claims:
            paper = catalog.claim(claim.claim).paper
            if (fail := claim.whose_fail()) is not None:
                found.setdefault(paper, []).append(
                    f"- [`{claim.claim}`](report/study-{study.name}.md) along `{study.axis}`: {fail} (each point "
                    f"tested: {claim.tested}).")
            for trend in [t for t in claim.trends if t.label in claim.statistic] or claim.trends:
                at_points = "; ".join(f"{point.value}: {point.summary(trend.label)}" for point in claim.points
                                      if point.summary(trend.label) != "no observation")
                found.setdefault(paper, []).append(
                    f"- [`{claim.claim}`](report/study-{study.name}.md) along `{study.axis}` (the paper's scale "
                    f"{study.paper_value}), {trend.label}: {at_points or 'no observation yet'} (each point tested: "
                    f"{claim.tested}; the paper: {claim.paper}, the trend's band, not tested at these points). "
                    f"Trend: {trend.text}.")
    return found
