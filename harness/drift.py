"""How far observed quantities move when only the numerics change, and the test that uses it.

The same code, config and seed run on another CPU (or under other kernel pins) gives other last
bits, and training grows them: a trained quantity moves by an amount that depends on what is
observed and how long the run trains. That amount is measured, per *drift group*: an experiment
and the quantity observed in it (a metric, a paired difference of a metric, a correlation), so a
group holds one run length. A measurement pairs the same seeds' values computed under two
numerics by the same code; the group's drift scale is the root mean square of those per-seed
differences over every series and pair measured (each (experiment, series, seed) counted once per
pair of numerics).

The regression check then compares a series observed under other numerics with its recorded
values seed by seed: with d_s the per-seed differences over n seeds and τ the group's drift
scale (estimated from `count` differences), Σ d_s² / (n τ²) follows an F(n, count) distribution
when only the numerics changed. Its p-values over every series of a check are corrected by Holm
(family-wise false-alarm rate `ALPHA`). A group never measured falls back on the series' own
seed spread: τ = √2 · (recorded seed-to-seed sd), as if each seed were redrawn (F(n, n − 1)).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scipy import stats

ALPHA = 0.01
"""Family-wise false-alarm rate of one regression check across its drift-tested series."""

FLOOR_FRACTION = 0.05
"""A drift scale is never taken below this fraction of the series' recorded seed spread: a move
smaller than a twentieth of the seed-to-seed spread is not a change any verdict can show."""


NEAR_DRIFTS = 3.0
"""A verdict is *near* its boundary toward another verdict when the statistics must move less than
this many times the amount the measured drift of the numerics moves them (or less than
MIN_NEAR_MARGIN standard errors)."""

MIN_NEAR_MARGIN = 1.0


def group_key(experiment: str, series: Mapping[str, Any]) -> str:
    return f"{experiment} / {series.get('quantity') or '?'}"


@dataclass(frozen=True)
class Scale:
    rms: float
    count: int
    measured: bool

    def text(self) -> str:
        how = f"measured over {self.count} per-seed differences" if self.measured else \
            f"not measured: √2 × the recorded seed sd ({self.count} df)"
        return f"drift scale {self.rms:.3g} ({how})"


def recording(data: Mapping[str, Any], profile: str, name: str) -> dict[str, dict[str, Any]]:
    """The claims of a recording at a profile: a baseline file (`claims`) or a REPORT.json (`verdicts`),
    each entry with its experiment, numbers, the identity of its records and its numerics."""
    if "claims" in data:
        if data.get("profile") != profile:
            raise ValueError(f"{name}: recorded for profile {data.get('profile')!r}, not {profile!r}")
        return {claim: entry for claim, entry in data["claims"].items() if "numbers" in entry}
    if "verdicts" not in data:
        raise ValueError(f"{name}: neither a baseline (`claims`) nor a report (`verdicts`)")
    from harness.baseline import runs_identity
    return {v["claim"]: {"experiment": v["experiment"], "numbers": v["numbers"], "runs": runs_identity(v["runs"]),
                         "numerics": v.get("numerics") or [f"not recorded ({name})"], "status": v["status"]}
            for v in data["verdicts"] if v["profile"] == profile and v.get("numbers")}


def measured_differences(reference: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, list[float]]:
    """Per drift group, the per-seed differences between two recordings of the same claims made by
    the same records (equal `runs`: code, configs, seeds, data) under different numerics. Invariant
    series are left out; a series shared by several claims counts once."""
    found: dict[str, list[float]] = {}
    seen: set[tuple[str, str, str]] = set()
    for claim, entry in reference.items():
        twin = other.get(claim)
        if not twin or "numbers" not in entry or "numbers" not in twin or "verdict" in (entry.get("compare"),
                                                                                         twin.get("compare")):
            continue
        if entry.get("runs") != twin.get("runs") or entry.get("numerics") == twin.get("numerics"):
            continue
        experiment = entry.get("experiment", claim)
        for label, series in entry["numbers"].items():
            again = twin["numbers"].get(label)
            if again is None or series.get("numerics_invariant") or again.get("numerics_invariant"):
                continue
            for seed, value in series.get("values", {}).items():
                key = (experiment, label, seed)
                moved = again.get("values", {}).get(seed)
                if key in seen or value is None or moved is None or not math.isfinite(moved - value):
                    continue
                seen.add(key)
                named = series if series.get("quantity") else again
                found.setdefault(group_key(experiment, named), []).append(moved - value)
    return found


def measure(recordings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The drift section of a baseline from named recordings: every pair of them, per claim where
    both were made from the same records under different numerics."""
    names = list(recordings)
    differences, pairs = [], []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            found = measured_differences(recordings[first], recordings[second])
            if found:
                differences.append(found)
                pairs.append(f"{first} × {second}: {sum(len(v) for v in found.values())} differences")
    return {"rule": "per (experiment, quantity): root mean square of the per-seed differences between recordings "
                    "of the same records under different numerics (see harness/drift.py)",
            "pairs": pairs, "groups": table(differences)}


def table(differences: Iterable[Mapping[str, list[float]]]) -> dict[str, dict[str, float]]:
    """The drift table stored in a baseline: per group, rms and count over all measurements."""
    pooled: dict[str, list[float]] = {}
    for measurement in differences:
        for group, values in measurement.items():
            pooled.setdefault(group, []).extend(values)
    return {group: {"rms": math.sqrt(sum(v * v for v in values) / len(values)), "count": len(values)}
            for group, values in sorted(pooled.items()) if values}


def scale(drift: Mapping[str, Any], group: str, recorded_sd: float, n: int) -> Scale:
    entry = (drift.get("groups") or {}).get(group)
    floor = FLOOR_FRACTION * recorded_sd if math.isfinite(recorded_sd) else 0.0
    if entry is not None and entry.get("count", 0) > 0:
        return Scale(max(float(entry["rms"]), floor), int(entry["count"]), True)
    return Scale(math.sqrt(2.0) * recorded_sd if math.isfinite(recorded_sd) else 0.0, max(1, n - 1), False)


@dataclass(frozen=True)
class DriftTest:
    """The per-seed differences of one series, tested against its group's drift scale."""

    claim: str
    label: str
    group: str
    differences: dict[str, float]
    scale: Scale
    p_value: float

    def text(self) -> str:
        moved = ", ".join(f"s{seed} {d:+.4g}" for seed, d in self.differences.items())
        return (f"{self.label} moved {moved} against the cross-numerics {self.scale.text()} of `{self.group}` "
                f"(F test p = {self.p_value:.3g})")


def drift_test(claim: str, label: str, group: str, current: Mapping[str, Any], recorded: Mapping[str, Any],
               drift: Mapping[str, Any]) -> DriftTest | None:
    """None when the series has no finite seeds in common with its record."""
    now, then = current.get("values", {}), recorded.get("values", {})
    differences = {seed: now[seed] - then[seed] for seed in then
                   if seed in now and now[seed] is not None and then[seed] is not None
                   and math.isfinite(now[seed]) and math.isfinite(then[seed])}
    if not differences:
        return None
    sd = recorded.get("std")
    sd = float(sd) if sd is not None and math.isfinite(sd) else math.nan
    measured = scale(drift, group, sd, len(differences))
    n = len(differences)
    squares = sum(d * d for d in differences.values())
    if measured.rms <= 0.0:
        p_value = 1.0 if squares == 0.0 else 0.0
    else:
        p_value = float(stats.f.sf(squares / (n * measured.rms ** 2), n, measured.count))
    return DriftTest(claim, label, group, differences, measured, p_value)


def holm_rejected(tests: list[DriftTest], alpha: float = ALPHA) -> list[DriftTest]:
    """The tests Holm's step-down rejects at family-wise level alpha."""
    rejected = []
    for rank, test in enumerate(sorted(tests, key=lambda t: t.p_value)):
        if test.p_value < alpha / (len(tests) - rank):
            rejected.append(test)
        else:
            break
    return rejected


def statistic_drift(evidence: Iterable[Mapping[str, Any]], numbers: Mapping[str, Any], experiment: str,
                    measured: Mapping[str, Any]) -> float:
    """How far, in its own standard errors, the measured drift of the numerics moves a verdict's
    statistics (the largest over its comparisons): each comparison's estimate averages `seeds`
    seeds of its source series, each moved by its group's drift scale (on Fisher's z for a
    correlation: dz = dr / (1 - r²))."""
    worst = 0.0
    for item in evidence:
        se, seeds = item.get("se"), item.get("seeds") or 0
        if not se or not seeds:
            continue
        variance = 0.0
        for label in item.get("sources") or ():
            series = numbers.get(label)
            if series is None or series.get("numerics_invariant"):
                continue
            sd = series.get("std")
            sd = float(sd) if sd is not None and math.isfinite(sd) else math.nan
            tau = scale(measured, group_key(experiment, series), sd, int(series.get("n") or seeds)).rms
            if item.get("fisher_z"):
                r = series.get("mean") or 0.0
                tau /= max(1e-6, 1.0 - r * r)
            variance += tau * tau
        worst = max(worst, math.sqrt(variance / seeds) / se)
    return worst


def near_margin(evidence: Iterable[Mapping[str, Any]], numbers: Mapping[str, Any], experiment: str,
                measured: Mapping[str, Any]) -> float:
    """The margin (in standard errors) under which a verdict counts as near its boundary."""
    return max(MIN_NEAR_MARGIN, NEAR_DRIFTS * statistic_drift(evidence, numbers, experiment, measured))
