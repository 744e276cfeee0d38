"""What a report shows of a scale study, per claim: a figure of the observed quantity against the
axis (every seed with its own fitted line, seed spread, the mean trend, the paper's range as a
band), the verdict at each point, and per series a trend read at the paper's scale (measured
there, or read off the seeds' lines and labelled so). `read_study` returns it as a structure a
renderer prints (`harness.report.study_reading`: `markdown`, `figures`, `to_dict`; `study_dicts` for
REPORT.json); its figures are `study_figures`', its costs `study_costs`'."""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from harness.loading.catalog import Catalog
from harness.loading.loaded import LoadedClaim
from harness.loading.studies import PAPER_PROFILE, LoadedStudy, StudyPoint, observed_variants
from harness.report.study_costs import study_costs
from harness.report.study_figures import draw_claim
from harness.report.study_reading import ClaimReading, PointReading, SeriesTrend, StudyReading
from harness.running.store import wall_seconds
from harness.schema.expectations.base import ExpectationBase
from harness.statistics.trend import Band, fit_trend, heading, reading
from harness.verdicts.observe import observe

Lookup = Callable[[str, str, int, str], tuple[str, "dict | None"]]
"""(experiment, variant, seed, profile) -> (store key, record or None): `Outcome.lookup`."""


def paper_band(expectation: ExpectationBase | None) -> Band | None:
    """The values the paper's statement admits, as a range (None where it is not a range of the
    observed quantity: an order, a spread comparison, no expectation)."""
    admitted = expectation.admitted() if expectation is not None else None
    return Band(admitted.low, admitted.high) if admitted is not None else None


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
    expectation = loaded.claim.expect.get(study.base)
    if expectation is not None and not expectation.skips:  # else SKIPPED is the claim's, records or not
        reading.recorded, reading.planned = len(records), len(seeds) * len(observed_variants(loaded.claim, study.base))
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
                             tested=tested.at_level().describe(loaded.claim.observe) if tested is not None else "none",
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
