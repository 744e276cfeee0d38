"""How far observed quantities move when only the numerics change, and the test that uses it.

The same code, config and seed run on another CPU (or under other kernel pins) gives other last
bits, and training grows them: a trained quantity moves by an amount that depends on what is
observed and how long the run trains. That amount is measured per *drift group*: an experiment
and the quantity observed in it (a metric, a paired difference of a metric, a correlation), so a
group holds one run length, and within it per series.

**Measuring.** Recordings are baselines (or REPORT.json files) of the same records under other
numerics. Recordings of one numerics fingerprint (the same machine and pins, say, under two codes
whose histories are bit-identical) are one numerics: they count once (`distinct_numerics`). For
every (experiment, series, seed) the k distinct numerics' values give k − 1 degrees of freedom
and a sum of squared deviations SS about their mean; the drift scale τ of a group is the
standard deviation of a *difference* between two numerics, τ² = 2 · ΣSS / Σ(k − 1), with `count`
= Σ(k − 1) degrees of freedom. The same is kept per series, and Bartlett's test says whether the
series of a group drift alike (`heterogeneity_p`).

**Testing.** A series observed under other numerics is compared with its recorded values seed by
seed: with d_s the per-seed differences over n seeds, Σ d_s² / (n τ²) follows F(n, count) when
only the numerics changed. In a group whose series drift differently (Bartlett p below
`HETEROGENEITY_ALPHA`), a series is tested against its own drift where that exceeds the group's,
and a series the measurement did not reach against the group's largest; otherwise against the
group's. The p-values of a check are corrected by Holm (family-wise false-alarm rate `ALPHA`).
A group never measured falls back on the series' own seed spread, τ = √2 · (recorded sd) with
n − 1 degrees of freedom, and the test says so. So does a series the measurement did not reach in a
group where only one other series was measured: nothing shows that it drifts alike (at standard,
HAS-FL's guarantee-off ablation, never recorded under other numerics, moved 5.7e-5 in mean capacity on
one seed between two numerics, 19 times the drift measured on HAS-FL's own series). The check names
such series (`NOT MEASURED`); `fedclaims baseline drift` measures them from a recording.

**What it can see.** `detectable_shift` is the constant per-seed shift the test detects with
probability `POWER` at a given level (the noncentral F of n seeds against τ with `count` df).
"""
from __future__ import annotations

import functools
import hashlib
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import optimize, stats

from harness.regression import baseline_file

ALPHA = 0.01
"""Family-wise false-alarm rate of one regression check across its drift-tested series."""

HETEROGENEITY_ALPHA = 0.05
"""Below this Bartlett p, the series of a drift group are taken to drift by different amounts."""

POWER = 0.8
"""The detection probability at which a check states the smallest change it can see."""

MEASURED, OWN, LARGEST, FALLBACK = "group", "series", "largest series", "fallback"
UNRECORDED = "unrecorded numerics"


def group_key(experiment: str, series: Mapping[str, Any]) -> str:
    return f"{experiment} / {series.get('quantity') or '?'}"


def difference_group(experiment: str, quantity: str) -> str:
    """The group of the paired difference of two series of one quantity (drift of a difference)."""
    return f"{experiment} / difference of {quantity}"


@dataclass(frozen=True)
class Scale:
    rms: float
    count: int
    """Degrees of freedom of the estimate."""
    source: str
    """MEASURED (the group's pooled drift), OWN (the series' own), LARGEST (the group's largest
    series), FALLBACK (never measured: √2 × the recorded seed sd)."""

    @property
    def measured(self) -> bool:
        return self.source != FALLBACK

    def text(self) -> str:
        how = {MEASURED: f"measured, {self.count} df",
               OWN: f"this series' own measured drift, {self.count} df: its group's series drift differently",
               LARGEST: f"its group's largest series drift, {self.count} df: the group's series drift differently "
                        "and this one was not measured",
               FALLBACK: f"NOT MEASURED: √2 × the recorded seed sd, {self.count} df",
               UNRECORDED: f"these numerics are in no recording, and √2 × the recorded seed sd ({self.count} df) "
                           "exceeds the drift measured between the recorded ones"}[self.source]
        return f"drift scale {self.rms:.3g} ({how})"


def runs_identity(keys: list[str]) -> str:
    """One hash of the record keys behind a verdict: equal when the same code, configs, seeds and data
    made them (the keys leave the numerics out), so two recordings with it differ only by numerics."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]


def recording(data: Mapping[str, Any], profile: str, name: str) -> dict[str, dict[str, Any]]:
    """The claims of a recording at a profile: a baseline file (`claims`) or a REPORT.json (`verdicts`),
    each entry with its experiment, numbers, the identity of its records and its numerics."""
    if "claims" in data:
        wrong = baseline_file.problems(data, Path(name))
        if wrong:
            raise ValueError("the recording cannot be read:\n" + "\n".join(wrong))
        if data.get("profile") != profile:
            raise ValueError(f"{name}: recorded for profile {data.get('profile')!r}, not {profile!r}")
        return {claim: entry for claim, entry in data["claims"].items() if "numbers" in entry}
    if "verdicts" not in data:
        raise ValueError(f"{name}: neither a baseline (`claims`) nor a report (`verdicts`)")
    return {v["claim"]: {"experiment": v["experiment"], "numbers": v["numbers"], "runs": runs_identity(v["runs"]),
                         "numerics": v.get("numerics") or [f"not recorded ({Path(name).name})"], "status": v["status"]}
            for v in data["verdicts"] if v["profile"] == profile and v.get("numbers")}


@dataclass(frozen=True)
class _Value:
    recording: str
    runs: str
    numerics: tuple[str, ...]
    value: float
    quantity: str


def _trained_values(recordings: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str, str], list[_Value]]:
    """Per (experiment, series, seed), every recording's finite value of each trained (not
    numerics-invariant) series, once per set of records (claim's runs) it was read from: a series
    shared by several claims is one (experiment, series, seed), measured once (`distinct_numerics`)."""
    found: dict[tuple[str, str, str], list[_Value]] = defaultdict(list)
    for name, claims in recordings.items():
        seen: set[tuple[str, str, str, str]] = set()
        for claim, entry in claims.items():
            if entry.get("compare") == "verdict" or "numbers" not in entry:
                continue
            experiment = entry.get("experiment", claim)
            numerics = tuple(sorted(fp if fp != "unrecorded" and not fp.startswith("not recorded") else
                                    f"not recorded ({name})" for fp in entry.get("numerics") or ["unrecorded"]))
            for label, series in entry["numbers"].items():
                if series.get("numerics_invariant"):
                    continue
                for seed, value in (series.get("values") or {}).items():
                    key = (experiment, label, seed)
                    if (*key, str(entry.get("runs"))) in seen or value is None or not math.isfinite(value):
                        continue
                    seen.add((*key, str(entry.get("runs"))))
                    found[key].append(_Value(name, str(entry.get("runs")), numerics, float(value),
                                             str(series.get("quantity") or "?")))
    return found


def distinct_numerics(found: list[_Value]) -> dict[tuple[str, ...], float]:
    """One (experiment, series, seed)'s value under each distinct numerics. Recordings of one
    numerics count once. Records of different code (other keys) are comparable only where they
    are bridged: some numerics gave both codes the bit-identical value, so the code change did not
    move it. Of the bridged sets, the one spanning the most numerics."""
    by_runs: dict[str, dict[tuple[str, ...], float]] = defaultdict(dict)
    for value in found:
        by_runs[value.runs].setdefault(value.numerics, value.value)
    merged: list[dict[tuple[str, ...], float]] = []
    for values in by_runs.values():
        joined = dict(values)
        for other in [m for m in merged if any(other_value == joined.get(numerics)
                                              for numerics, other_value in m.items())]:
            merged.remove(other)
            joined = {**other, **joined}
        merged.append(joined)
    return max(merged, key=len)


def _unrecorded(numerics: tuple[str, ...]) -> bool:
    return any(fp.startswith("not recorded") for fp in numerics)


def _identified(values: dict[tuple[str, str, str], list[_Value]]) -> dict[tuple[str, str, str], list[_Value]]:
    """The values with each recording that did not record its numerics given those of a recording it
    is bit-identical to (the same machine under another code, say): on every value they share
    where some recording differs, and there is at least one such. One identical to none keeps
    numerics of its own. A recording that holds values of several numerics (a baseline whose later
    claims were recorded on another machine) is compared one numerics at a time."""
    telling = {key: found for key, found in values.items() if len({v.value for v in found}) > 1}
    unknown = sorted({v.recording for found in values.values() for v in found if _unrecorded(v.numerics)})
    known = sorted({(v.recording, v.numerics) for found in values.values() for v in found
                    if not _unrecorded(v.numerics)})
    same: dict[str, tuple[str, ...]] = {}
    for name in unknown:
        for other, numerics in known:
            pairs = [(mine.value, theirs.value) for found in telling.values() for mine in found
                     if mine.recording == name for theirs in found
                     if theirs.recording == other and theirs.numerics == numerics]
            if pairs and all(a == b for a, b in pairs):
                same[name] = numerics
                break
    return {key: [_Value(v.recording, v.runs, same.get(v.recording, v.numerics), v.value, v.quantity) for v in found]
            for key, found in values.items()}


def measure(recordings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The drift section of a baseline from named recordings (see the module docstring)."""
    values = _identified(_trained_values(recordings))
    squares: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    seen: dict[str, set[str]] = defaultdict(set)
    for (experiment, label, _), found in values.items():
        distinct = distinct_numerics(found)
        seen[experiment] |= {fingerprint for numerics in distinct for fingerprint in numerics}
        if len(distinct) < 2:
            continue
        mean = sum(distinct.values()) / len(distinct)
        cell = squares[f"{experiment} / {found[0].quantity}"][label]
        cell[0] += sum((v - mean) ** 2 for v in distinct.values())
        cell[1] += len(distinct) - 1
    return {"rule": "per (experiment, quantity) and per series: τ² = 2 · ΣSS / df over the values of distinct "
                    "numerics (recordings of one numerics count once), Bartlett's test of the series' drifts "
                    "(see harness/regression/drift.py)",
            "recordings": sorted(recordings),
            "numerics": {experiment: sorted(found) for experiment, found in sorted(seen.items())},
            "groups": {group: group_entry(series) for group, series in sorted(squares.items())}}


def group_entry(series: Mapping[str, list[float]]) -> dict[str, Any]:
    """A group's pooled drift, its series' own, and whether they drift alike, from each series'
    [sum of squared deviations, degrees of freedom]."""
    total = sum(ss for ss, _ in series.values())
    df = sum(d for _, d in series.values())
    own = {label: {"rms": math.sqrt(2.0 * ss / d), "count": d} for label, (ss, d) in sorted(series.items())}
    return {"rms": math.sqrt(2.0 * total / df), "count": df, "heterogeneity_p": bartlett_p(series), "series": own}


def bartlett_p(series: Mapping[str, list[float]]) -> float:
    """Bartlett's test that the series' variances are equal (1.0 with fewer than two series)."""
    cells = [(ss / d, d) for ss, d in series.values() if d > 0]
    if len(cells) < 2:
        return 1.0
    df = sum(d for _, d in cells)
    pooled = sum(v * d for v, d in cells) / df
    if pooled == 0.0:
        return 1.0
    if any(v == 0.0 for v, _ in cells):
        return 0.0  # one series bit-identical across numerics while another moves
    k = len(cells)
    statistic = (df * math.log(pooled) - sum(d * math.log(v) for v, d in cells)) / (
        1.0 + (sum(1.0 / d for _, d in cells) - 1.0 / df) / (3.0 * (k - 1)))
    return float(stats.chi2.sf(statistic, k - 1))


def scale(drift: Mapping[str, Any], group: str, recorded_sd: float, n: int, label: str | None = None,
          recorded_numerics: bool = True) -> Scale:
    """The drift scale a series of `group` is tested against (see the module docstring), for values made
    under numerics some recording holds (`recorded_numerics`), or not, where the caller widens for them
    (the claims suite: `baseline.check(widen_unrecorded=True)`). Recorded: the measured drift of its
    metric between numerics, with the degrees of freedom it was measured on; it is not floored by a
    fraction of the seed spread, since a metric that barely drifts between machines (a mean capacity)
    would hide a changed method behind such a floor, hundreds of times its drift. Unrecorded (a CPU family
    no recording holds: an Intel Xeon against AMD-only recordings moved FedRolex's Dropout by 3 points
    where they drift 0.56 apart): the drift between recorded machines does not bound it, so the larger of
    that and the fallback √2 × the recorded seed sd; the check's reach says how far that leaves it."""
    measured = _measured_scale(drift, group, recorded_sd, n, label)
    fallback = math.sqrt(2.0) * recorded_sd if math.isfinite(recorded_sd) else 0.0
    if recorded_numerics or measured.source == FALLBACK or fallback <= measured.rms:
        return measured
    return Scale(fallback, max(1, n - 1), UNRECORDED)


def recorded(drift: Mapping[str, Any], experiment: str, numerics: list[str]) -> bool:
    """Whether every numerics of a verdict's records is among those the drift of its experiment was measured on
    (True where the drift does not say which those were)."""
    measured_on = (drift.get("numerics") or {}).get(experiment)
    return measured_on is None or set(numerics) <= set(measured_on)


def _measured_scale(drift: Mapping[str, Any], group: str, recorded_sd: float, n: int, label: str | None) -> Scale:
    entry = (drift.get("groups") or {}).get(group)
    series = (entry or {}).get("series") or {}
    unreached = label is not None and label not in series and len(series) == 1
    if entry is None or entry.get("count", 0) <= 0 or unreached:
        return Scale(math.sqrt(2.0) * recorded_sd if math.isfinite(recorded_sd) else 0.0, max(1, n - 1), FALLBACK)
    pooled = Scale(float(entry["rms"]), int(entry["count"]), MEASURED)
    if entry.get("heterogeneity_p", 1.0) >= HETEROGENEITY_ALPHA or not series:
        return pooled
    own = series.get(label) if label is not None else None
    if own is None:
        largest = max(series.values(), key=lambda s: s["rms"])
        if largest["rms"] > pooled.rms:
            return Scale(float(largest["rms"]), int(largest["count"]), LARGEST)
        return pooled
    if own["rms"] > pooled.rms and own["count"] > 0:
        return Scale(float(own["rms"]), int(own["count"]), OWN)
    return pooled


@functools.lru_cache(maxsize=4096)
def detectable_shift(scale_used: Scale, n: int, level: float, power: float = POWER) -> float:
    """The constant per-seed shift that the F test of n seeds against `scale_used` rejects at
    `level` with probability `power` (noncentral F with noncentrality n · shift² / τ²)."""
    if n < 1 or scale_used.rms <= 0.0:
        return 0.0
    critical = stats.f.isf(level, n, scale_used.count)

    def short(noncentrality: float) -> float:
        return float(stats.ncf.sf(critical, n, scale_used.count, noncentrality)) - power
    upper = 1.0
    while short(upper) < 0.0:
        upper *= 2.0
        if upper > 1e8:
            return math.inf
    noncentrality = optimize.brentq(short, 1e-9, upper, xtol=1e-6)
    return scale_used.rms * math.sqrt(noncentrality / n)


@dataclass(frozen=True)
class DriftTest:
    """The per-seed differences of one series, tested against its group's drift scale."""

    claim: str
    label: str
    group: str
    differences: dict[str, float]
    scale: Scale
    p_value: float
    recorded_sd: float = math.nan

    def text(self) -> str:
        moved = ", ".join(f"s{seed} {d:+.4g}" for seed, d in self.differences.items())
        return (f"{self.label} moved {moved} against the cross-numerics {self.scale.text()} of `{self.group}` "
                f"(F test p = {self.p_value:.3g})")

    def detectable(self, level: float) -> float:
        return detectable_shift(self.scale, len(self.differences), level)


def drift_test(claim: str, label: str, group: str, current: Mapping[str, Any], recorded: Mapping[str, Any],
               drift: Mapping[str, Any], recorded_numerics: bool = True) -> DriftTest | None:
    """None when the series has no finite seeds in common with its record (`recorded_numerics`: see `scale`)."""
    now, then = current.get("values", {}), recorded.get("values", {})
    differences = {seed: now[seed] - then[seed] for seed in then
                   if seed in now and now[seed] is not None and then[seed] is not None
                   and math.isfinite(now[seed]) and math.isfinite(then[seed])}
    if not differences:
        return None
    sd = recorded.get("std")
    sd = float(sd) if sd is not None and math.isfinite(sd) else math.nan
    measured = scale(drift, group, sd, len(differences), label, recorded_numerics)
    n = len(differences)
    squares = sum(d * d for d in differences.values())
    if measured.rms <= 0.0:
        p_value = 1.0 if squares == 0.0 else 0.0
    else:
        p_value = float(stats.f.sf(squares / (n * measured.rms ** 2), n, measured.count))
    return DriftTest(claim, label, group, differences, measured, p_value, sd)


def holm_rejected(tests: list[DriftTest], alpha: float = ALPHA) -> list[DriftTest]:
    """The tests Holm's step-down rejects at family-wise level alpha."""
    rejected = []
    for rank, test in enumerate(sorted(tests, key=lambda t: t.p_value)):
        if test.p_value < alpha / (len(tests) - rank):
            rejected.append(test)
        else:
            break
    return rejected
