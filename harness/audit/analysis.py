"""The HAS-FL paper's two recommended practices, as analyses of run records (§4.7, §5).

1. Capacity-stratified validation of every per-client statistic a policy exposes: its
   correlation with the capacity cap p_max, its partial correlation with the ground-truth
   label skew (TV) given p_max, and its correlation with TV within each capacity tier, each
   pooled over seeds (Fisher z, random effects) with a 95% interval, and read in plain words.
2. Matched-budget parity: the paired per-seed accuracy difference to a random control trained
   at the audited policy's realised mean capacity (TOST at a stated margin), and to HeteroFL
   (interval and power figures).
Plus coverage: coordinates no client ever trained, and coordinates that moved although no
client trained them (Proposition 3 says none can).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from harness.kinds.federated import FEDERATED_TRAINING
from harness.statistics.correlation_estimates import Correlation, PooledCorrelation, correlation, pooled_correlation
from harness.statistics.power import Power, inclusion_power, t_power
from harness.statistics.stats import CONFIDENCE, equivalence, mean_interval, summarize

Result = Mapping[str, Any]


@dataclass
class Association:
    """One correlation pooled over seeds, with the per-seed values behind it."""

    label: str
    pooled: PooledCorrelation | None
    per_seed: dict[int, Correlation]

    @property
    def significant(self) -> int:
        """+1 / -1 when the pooled interval lies above / below 0, else 0 (or undefined)."""
        if self.pooled is None:
            return 0
        return 1 if self.pooled.low > 0 else -1 if self.pooled.high < 0 else 0

    def text(self) -> str:
        if self.pooled is None:
            reasons = {c.undefined for c in self.per_seed.values() if c.undefined}
            return f"undefined ({'; '.join(sorted(reasons)) or 'too few clients'})"
        p = self.pooled
        return f"{p.r:+.2f} [{p.low:+.2f}, {p.high:+.2f}] over {len(self.per_seed)} seeds, {p.n} clients"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "pooled": None if self.pooled is None else asdict(self.pooled),
                "per_seed": {str(s): asdict(c) for s, c in self.per_seed.items()}}


def _pool(label: str, per_seed: dict[int, Correlation]) -> Association:
    defined = {s: c for s, c in per_seed.items() if not c.undefined}
    return Association(label, pooled_correlation(list(defined.values())) if defined else None, per_seed)


@dataclass
class StatisticValidation:
    """Capacity-stratified validation of one per-client statistic."""

    statistic: str
    with_capacity: Association
    with_data_given_capacity: Association
    with_data: Association
    within_tiers: dict[float, Association]
    reading: str

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "reading": self.reading,
                "with_capacity": self.with_capacity.to_dict(),
                "with_data_given_capacity": self.with_data_given_capacity.to_dict(),
                "with_data": self.with_data.to_dict(),
                "within_tiers": {str(t): a.to_dict() for t, a in self.within_tiers.items()}}

    @property
    def confounded(self) -> bool:
        """It tracks capacity and carries no positive data signal once capacity is controlled for."""
        return self.with_capacity.significant != 0 and self.with_data_given_capacity.significant <= 0


def reading(capacity: Association, partial: Association) -> str:
    """A plain-words reading of a statistic's associations with capacity and with data."""
    cap, data = capacity.significant, partial.significant
    if capacity.pooled is None or partial.pooled is None:
        return "cannot be read: the correlations are undefined (see the reasons)"
    if cap and data <= 0:
        opposite = (" and, given capacity, it moves opposite to the label skew a heterogeneity estimate "
                    "should follow" if data < 0 else "")
        return f"this statistic tracks capacity, not data{opposite}: do not read it as data heterogeneity"
    if data > 0 and cap:
        return "this statistic tracks capacity and also carries a data signal beyond it: read it within tiers"
    if data > 0:
        return "this statistic tracks data (label skew) and not capacity: it behaves as a heterogeneity estimate"
    if data < 0:
        return "this statistic moves opposite to the label skew and does not track capacity"
    return "this statistic shows no detectable association with capacity or data at this size"


def validate_statistic(name: str, results: Mapping[int, Result]) -> StatisticValidation:
    """Correlate one exposed statistic with p_max and TV over the clients of each seed's run."""
    with_capacity, partial, plain = {}, {}, {}
    tiers: dict[float, dict[int, Correlation]] = {}
    for seed, result in results.items():
        stat = np.asarray(result["client_statistics"][name], dtype=float)
        caps = np.asarray(result["caps"], dtype=float)
        tv = np.asarray(result["tv_distance"], dtype=float)
        with_capacity[seed] = correlation(stat, caps, names=(name, "p_max", ""))
        partial[seed] = correlation(stat, tv, caps, names=(name, "tv", "p_max"))
        plain[seed] = correlation(stat, tv, names=(name, "tv", ""))
        for tier in np.unique(caps):
            members = np.isclose(caps, tier)
            tiers.setdefault(float(tier), {})[seed] = correlation(stat[members], tv[members], names=(name, "tv", ""))
    capacity = _pool(f"r({name}, p_max)", with_capacity)
    given = _pool(f"r({name}, TV | p_max)", partial)
    return StatisticValidation(name, capacity, given, _pool(f"r({name}, TV)", plain),
                               {t: _pool(f"r({name}, TV) within p_max = {t:g}", per)
                                for t, per in sorted(tiers.items())},
                               reading(capacity, given))


@dataclass
class Comparison:
    """The paired per-seed accuracy difference of the audited policy against one other variant."""

    against: str
    differences: dict[int, float]
    interval: tuple[float, float]
    margin: float | None = None
    tost: str | None = None
    tost_p: float | None = None
    power: Power | None = None
    reading: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["power"] = None if self.power is None else self.power.to_dict()
        return data


def compare_accuracy(against: str, audited: Mapping[int, float], other: Mapping[int, float],
                     margin: float | None, alpha: float = 0.05) -> Comparison:
    """Audited minus other, paired over the shared seeds; with a margin, TOST for parity."""
    seeds = sorted(set(audited) & set(other))
    differences = {s: audited[s] - other[s] for s in seeds}
    values = list(differences.values())
    s = summarize(values)
    interval = mean_interval(values, CONFIDENCE)
    power = (t_power(values, s.mean, alpha) if margin is None else
             inclusion_power(s.mean, s.std, -margin, margin, s.n, alpha))
    comparison = Comparison(against, differences, interval, power=power)
    where = f"{s.mean:+.2f} points, {CONFIDENCE:.0%} interval [{interval[0]:+.2f}, {interval[1]:+.2f}] (n = {s.n})"
    if margin is None:
        side = ("above" if interval[0] > 0 else "below" if interval[1] < 0 else "not distinguishable from")
        comparison.reading = f"{where}: {side} {against}"
        return comparison
    outcome, p_value, _ = equivalence(values, margin, alpha) if s.n >= 2 else ("undecided", math.nan, interval)
    comparison.margin, comparison.tost, comparison.tost_p = margin, outcome, p_value
    comparison.reading = {
        "pass": f"{where}: equivalent to {against} within ±{margin:g} points (TOST p = {p_value:.3g}): at this "
                "budget the adaptive allocation adds nothing a random one does not",
        "fail": f"{where}: outside ±{margin:g} points of {against}",
        "undecided": f"{where}: parity within ±{margin:g} points can neither be shown nor ruled out "
                     f"(TOST p = {p_value:.3g})",
    }[outcome]
    return comparison


@dataclass
class Coverage:
    never_covered_fraction: dict[int, float]
    changed_outside_union: dict[int, int]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def coverage(results: Mapping[int, Result]) -> Coverage:
    never = {s: r["never_covered_coordinates"] / r["total_coordinates"] for s, r in results.items()}
    changed = {s: int(r["changed_outside_union"]) for s, r in results.items()}
    found = Coverage(never, changed)
    untrained = {s: f for s, f in never.items() if f > 0}
    if untrained:
        found.warnings.append("coordinates no client ever trained (they stay at their random initialisation yet "
                              "take part in every prediction): "
                              + ", ".join(f"seed {s}: {f:.1%}" for s, f in untrained.items()))
    moved = {s: c for s, c in changed.items() if c}
    if moved:
        found.warnings.append("coordinates changed although no client trained them (Proposition 3 says none can): "
                              + ", ".join(f"seed {s}: {c}" for s, c in moved.items()))
    return found


def end_accuracies(results: Mapping[int, Result]) -> dict[int, float]:
    """Test accuracy (%) at the end of each run, as the claims read it (`end_accuracy`: the mean of
    the evaluations in the last 10% of rounds, which averages out round-to-round swings)."""
    return {seed: FEDERATED_TRAINING.metrics["end_accuracy"].compute(result, {}) for seed, result in results.items()}


def statistic_names(results: Sequence[Result]) -> list[str]:
    """The per-client statistics every run of the audited policy exposes."""
    names = [set((r.get("client_statistics") or {}).keys()) for r in results]
    return sorted(set.intersection(*names)) if names else []
