"""How near a verdict is to its boundary under the drift of the numerics alone: how far the measured drift
moves each comparison's statistic (simulated from its recorded seeds where it is a t statistic, to first
order otherwise), which a report calls fragile and a regression check reads before calling a moved
verdict a change of method."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from harness.regression.drift import difference_group, group_key, scale
from harness.verdicts.verify import FAIL, INCONCLUSIVE, PASS, Verdict
from methods.plain import json_safe

NEAR_QUANTILE = 0.99
"""A verdict is *near* its boundary toward another verdict when its statistic must move less than
this quantile of the moves the measured drift of the numerics makes it (simulated from its
recorded seeds: `statistic_reach`), or less than MIN_NEAR_MARGIN standard errors: what a report
calls fragile. A regression check reads the quantile 1 − (ALPHA / 2) / (claims it compares under
other numerics), so that a move of drift alone fails on at most ALPHA / 2 of machines."""

REACH_DRAWS = 2000

NEAR_DRIFTS = 3.0
"""Where no reach can be simulated (a correlation's Fisher z, a sign count, no recorded seeds): near
is this many times the first-order move of the statistic (drift / standard error)."""

MIN_NEAR_MARGIN = 1.0


def _sd(series: Mapping[str, Any]) -> float:
    sd = series.get("std")
    return float(sd) if sd is not None and math.isfinite(sd) else math.nan


def _paired_tau(first: Mapping[str, Any], second: Mapping[str, Any], experiment: str,
                measured: Mapping[str, Any]) -> float:
    """The drift of the per-seed difference of two series: the measured drift of the difference
    of their quantity; else, both series' groups measured, their drifts added as independent;
    else √2 × the seed sd of the per-seed differences (the pairing kept)."""
    quantity = first.get("quantity") or second.get("quantity") or "?"
    groups = measured.get("groups") or {}
    paired = difference_group(experiment, quantity)
    own = [scale(measured, group_key(experiment, s), _sd(s), int(s.get("n") or 2))
           for s in (first, second)]
    if paired not in groups and all(s.measured for s in own):
        return math.sqrt(sum(s.rms ** 2 for s in own))
    a, b = first.get("values") or {}, second.get("values") or {}
    differences = [a[s] - b[s] for s in a if s in b and a[s] is not None and b[s] is not None
                   and math.isfinite(a[s] - b[s])]
    sd = float(stats.tstd(differences)) if len(differences) >= 2 else math.nan
    return scale(measured, paired, sd, len(differences)).rms


def _source_drift(item: Mapping[str, Any], numbers: Mapping[str, Any], experiment: str,
                  measured: Mapping[str, Any]) -> tuple[list[float], float] | None:
    """The per-seed values a t-based comparison averages (one series, or the paired differences of
    two) and the measured drift of one of them; None when they are not recorded or their drift was
    never measured."""
    labels = list(item.get("sources") or ())
    series = [s for s in (numbers.get(label) for label in labels) if s is not None]
    if not labels or len(series) < len(labels) or any(s.get("numerics_invariant") for s in series):
        return None
    values = [s.get("values") or {} for s in series]
    seeds = [seed for seed in values[0] if all(v.get(seed) is not None and math.isfinite(v[seed]) for v in values)]
    groups = measured.get("groups") or {}
    if len(labels) == 1 and group_key(experiment, series[0]) in groups:
        own = scale(measured, group_key(experiment, series[0]), _sd(series[0]), len(seeds), labels[0])
        return ([values[0][seed] for seed in seeds], own.rms) if own.measured else None
    quantity = series[0].get("quantity") or "?"
    if len(labels) == 2 and (difference_group(experiment, quantity) in groups
                             or all(group_key(experiment, s) in groups for s in series)):
        return [values[0][seed] - values[1][seed] for seed in seeds], _paired_tau(series[0], series[1], experiment,
                                                                               measured)
    return None  # a drift never measured: no reach is simulated from a guess


def statistic_reach(item: Mapping[str, Any], numbers: Mapping[str, Any], experiment: str,
                    measured: Mapping[str, Any], quantile: float = NEAR_QUANTILE) -> float | None:
    """The `quantile` quantile of how far the drift of the numerics moves a t statistic, in its
    standard errors: every recorded seed moved by a normal draw of the drift scale, the mean and
    the seed spread computed again (at least `REACH_DRAWS` draws, twenty beyond the quantile, from a
    fixed generator). On a few seeds the spread moves the statistic as much as the mean: a linear
    reading (drift / SE) misses that. None where the comparison is not a t statistic of recorded
    values."""
    if item.get("df") is None or item.get("sign_count") or item.get("fisher_z"):
        return None
    found = _source_drift(item, numbers, experiment, measured)
    if found is None or len(found[0]) < 2:
        return None
    values, tau = found
    x = np.asarray(values, dtype=float)
    n = len(x)
    sd = float(np.std(x, ddof=1))
    if sd == 0.0 or tau == 0.0:
        return 0.0 if tau == 0.0 else None
    draws = max(REACH_DRAWS, math.ceil(20.0 / (1.0 - quantile)))
    moved = x + tau * np.random.default_rng(0).standard_normal((draws, n))
    statistic = float(item.get("statistic") or 0.0)
    if not math.isfinite(statistic):
        return None
    se = sd / math.sqrt(n)
    reach = 0.0
    for orientation in (1.0, -1.0):  # the bound, from the recorded statistic: mean − bound = ± statistic · se
        bound = float(np.mean(x)) - orientation * statistic * se
        after = orientation * (moved.mean(axis=1) - bound) / (np.maximum(moved.std(axis=1, ddof=1), 1e-300)
                                                              / math.sqrt(n))
        reach = max(reach, float(np.quantile(np.abs(after - statistic), quantile)))
    return reach


def statistic_drift(evidence: Iterable[Mapping[str, Any]], numbers: Mapping[str, Any], experiment: str,
                    measured: Mapping[str, Any]) -> float:
    """How far, in its own standard errors, the measured drift of the numerics moves a verdict's
    statistics to first order (the largest over its comparisons): each comparison's estimate
    averages `seeds` seeds of its source series, each moved by its drift scale; a paired
    difference of two series by the drift of their difference; on Fisher's z for a correlation,
    dz = dr / (1 - r²)."""
    worst = 0.0
    for item in evidence:
        se, seeds = item.get("se"), item.get("seeds") or 0
        if not se or not seeds:
            continue
        sources = [numbers[label] for label in item.get("sources") or () if label in numbers]
        trained = [series for series in sources if not series.get("numerics_invariant")]
        if len(sources) == 2 and len(trained) == 2 and not item.get("fisher_z"):
            variance = _paired_tau(trained[0], trained[1], experiment, measured) ** 2
        else:
            variance = 0.0
            for series in trained:
                tau = scale(measured, group_key(experiment, series), _sd(series),
                            int(series.get("n") or seeds)).rms
                if item.get("fisher_z"):
                    r = series.get("mean") or 0.0
                    tau /= max(1e-6, 1.0 - r * r)
                variance += tau * tau
        worst = max(worst, math.sqrt(variance / seeds) / se)
    return worst


def near_margin(evidence: Iterable[Mapping[str, Any]], numbers: Mapping[str, Any], experiment: str,
                measured: Mapping[str, Any], quantile: float = NEAR_QUANTILE) -> float:
    """The margin (in standard errors) under which a verdict counts as near its boundary: the
    largest over its comparisons of the simulated reach of the drift at `quantile`
    (`statistic_reach`), or of `NEAR_DRIFTS` times its first-order drift where no reach can be
    simulated; at least `MIN_NEAR_MARGIN`."""
    worst = MIN_NEAR_MARGIN
    for item in evidence:
        reach = statistic_reach(item, numbers, experiment, measured, quantile)
        worst = max(worst, NEAR_DRIFTS * statistic_drift([item], numbers, experiment, measured)
                    if reach is None else reach)
    return worst


@dataclass(frozen=True)
class Fragility:
    """A verdict's nearest other verdict, the margin to it and the margin the measured drift explains."""

    nearest: str
    margin: float
    near: float

    @property
    def fragile(self) -> bool:
        return self.margin < self.near

    def text(self) -> str:
        return (f"{self.margin:.2f} SE from {self.nearest} (the measured drift of the numerics moves its statistics "
                f"up to {self.near:.2f} SE)")


def fragility(verdict: Verdict, measured: dict[str, Any]) -> Fragility | None:
    """How near a decided verdict is to another one, against the drift measured across numerics
    (None when it was decided without a spread or not decided by a test)."""
    if verdict.status not in (PASS, FAIL, INCONCLUSIVE) or not verdict.margins:
        return None
    nearest = min(verdict.margins, key=verdict.margins.__getitem__)
    margin = verdict.margins[nearest]
    if not math.isfinite(margin):
        return None
    near = near_margin(verdict.evidence, json_safe(verdict.numbers), verdict.experiment, measured)
    return Fragility(nearest, margin, near)
