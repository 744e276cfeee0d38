"""Compute a claim's observation from run records: one value per seed per series.

A metric that refuses a record for a missing evaluation raises `MissingValue`; it leaves here with
the record's key, experiment, variant and seed named, for `harness.verdicts.verify` to make the claim ERROR.
A metric whose definition tolerates missing evaluations (`Metric.tolerates`) gives a value, and the
series notes every evaluation so treated (`Series.notes`), which the verdict's reason repeats.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.kinds.base import ExperimentKind, Metric
from harness.kinds.evaluations import MissingValue, record_id
from harness.schema import claim as schema
from harness.verdicts.stats import Correlation, PooledCorrelation, correlation, pooled_correlation, summarize

Records = Mapping[tuple[str, int], Mapping[str, Any]]


def _fmt(v: float) -> str:
    return f"{v:.4g}"


@dataclass
class Series:
    """Per-seed values of one variant (or of a paired difference, or a correlation across clients).

    `deterministic`: every value is fixed by its run's config (one seed decides a mean), up to a
    relative `agreement`. `correlations`: for a correlation observation, the per-seed statistic
    with its interval. `invariant`: the values do not depend on the CPU's floating-point kernels.
    `quantity` names what is observed (a metric, a paired difference, a correlation) for the
    regression check's drift measurements. `structural`: the metric is fixed by the protocol's
    structure or exact algebra (`Metric.structural`): each seed is a check of its own, not a draw.
    """

    label: str
    values: dict[int, float]
    deterministic: bool = False
    correlations: dict[int, Correlation] = field(default_factory=dict)
    invariant: bool = False
    agreement: float = 0.0
    quantity: str = ""
    structural: bool = False
    notes: list[str] = field(default_factory=list)
    """Missing evaluations the metric's definition treated (skipped), each naming its record and round."""

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values.values() if math.isfinite(v)]

    @property
    def undefined(self) -> dict[int, str]:
        """Seeds whose correlation is undefined, with the reason."""
        return {seed: c.undefined for seed, c in self.correlations.items() if c.undefined}

    @property
    def pooled(self) -> PooledCorrelation | None:
        """Inverse-variance pooled correlation over the seeds (None unless every seed is defined)."""
        if not self.correlations or self.undefined:
            return None
        return pooled_correlation(list(self.correlations.values()))

    def _seed_text(self, seed: int, value: float) -> str:
        c = self.correlations.get(seed)
        if c is None:
            return f"s{seed}: {_fmt(value)}"
        if c.undefined:
            return f"s{seed}: undefined ({c.undefined})"
        return f"s{seed}: {_fmt(value)} [{_fmt(c.low)}, {_fmt(c.high)}] (n = {c.n} clients)"

    def text(self) -> str:
        values = list(self.values.values())
        per_seed = ", ".join(self._seed_text(seed, v) for seed, v in self.values.items())
        if self.correlations:
            pooled = self.pooled
            pooled_text = (f"pooled {_fmt(pooled.r)} [{_fmt(pooled.low)}, {_fmt(pooled.high)}]; "
                           if pooled is not None and len(values) > 1 else "")
            return f"{self.label}: {pooled_text}{per_seed}"
        if len(values) == 1:
            return f"{self.label}: {_fmt(values[0])}"
        s = summarize(values)
        return f"{self.label}: {_fmt(s.mean)} ± {_fmt(s.std)} (n={s.n}; {per_seed})"

    def numbers(self) -> dict[str, Any]:
        s = summarize(list(self.values.values()))
        data: dict[str, Any] = {"mean": s.mean, "std": s.std, "n": s.n,
                                "values": {str(k): v for k, v in self.values.items()},
                                "quantity": self.quantity, "numerics_invariant": self.invariant}
        if self.correlations:
            data["intervals"] = {str(k): [c.low, c.high] for k, c in self.correlations.items()}
            data["clients"] = {str(k): c.n for k, c in self.correlations.items()}
            pooled = self.pooled
            if pooled is not None:
                data["pooled"] = {"r": pooled.r, "low": pooled.low, "high": pooled.high}
        return data


@dataclass
class Observed:
    series: list[Series]
    spread: Series | None = None
    spread_ratio: bool = False
    """The observation is the ratio of the two series' seed-to-seed standard deviations."""

    @property
    def notes(self) -> list[str]:
        """The missing evaluations every series' metric treated as its definition says."""
        spread = [self.spread] if self.spread is not None else []
        return list(dict.fromkeys(note for s in [*self.series, *spread] for note in s.notes))

    def text(self) -> str:
        text = "; ".join(s.text() for s in self.series)
        if self.spread_ratio:
            first, second = (summarize(list(s.values.values())).std for s in self.series)
            ratio = first / second if second > 0 else math.inf
            text += f"; ratio of their seed standard deviations {_fmt(ratio)}"
        return text


def _metric_value(spec: Metric, metric: str, args, record: Mapping[str, Any], variant: str, seed: int) -> float:
    """The metric of one record; a refusal (`MissingValue`) names the record."""
    try:
        return float(spec.compute(record["result"], args))
    except MissingValue as missing:
        raise missing.in_record(metric, record_id(record, variant, seed)) from None


def _treated(spec: Metric, metric: str, record: Mapping[str, Any], variant: str, seed: int) -> list[str]:
    """The missing evaluations of one record that the metric's definition treated, each named."""
    if spec.tolerates is None:
        return []
    named = record_id(record, variant, seed).text()
    return [f"{named}: {missing.where()} is null ({missing.cause}); {metric} {spec.tolerates.treatment}"
            for missing in spec.tolerates.missing(record["result"])]


def metric_series(kind: ExperimentKind, metric: str, args: dict, variant: str, label: str,
                  seeds: list[int], records: Records) -> Series:
    spec = kind.metrics[metric]
    parsed = spec.args.model_validate(args)
    values = {seed: _metric_value(spec, metric, parsed, records[(variant, seed)], variant, seed) for seed in seeds}
    notes = [note for seed in seeds for note in _treated(spec, metric, records[(variant, seed)], variant, seed)]
    configs = [records[(variant, seed)]["config"] for seed in seeds]
    return Series(label, values, all(spec.is_deterministic(c) for c in configs),
                  invariant=all(spec.is_numerics_invariant(c) for c in configs), agreement=spec.agreement,
                  quantity=metric, structural=spec.structural, notes=notes)


def _correlation_series(kind: ExperimentKind, obs: schema.CorrelationObservation, variant: str, label: str,
                        seeds: list[int], records: Records) -> Series:
    names = (*obs.correlation, obs.given or "")
    quantities = [kind.client_quantities[name] for name in names if name]
    invariant = all(q.is_numerics_invariant(records[(variant, seed)]["config"]) for q in quantities for seed in seeds)
    per_seed = {}
    for seed in seeds:
        result = records[(variant, seed)]["result"]
        x, y = (kind.client_quantities[name].compute(result) for name in obs.correlation)
        given = kind.client_quantities[obs.given].compute(result) if obs.given else None
        per_seed[seed] = correlation(x, y, given, obs.method, names=names)
    quantity = f"r({obs.correlation[0]}, {obs.correlation[1]}" + (f" | {obs.given})" if obs.given else ")")
    return Series(label, {seed: c.r for seed, c in per_seed.items()}, correlations=per_seed, invariant=invariant,
                  quantity=f"{obs.method} {quantity}")


def observe(kind: ExperimentKind, obs, variant_labels: Mapping[str, str], seeds: list[int],
            records: Records, spread_variant: str | None = None) -> Observed:
    """The observation's series; `spread_variant` adds a reference series for within_spread_of."""
    def label(variant: str) -> str:
        return variant_labels.get(variant) or variant

    if isinstance(obs, schema.CorrelationObservation):
        names = f"r({obs.correlation[0]}, {obs.correlation[1]}" + (f" | {obs.given})" if obs.given else ")")
        series = [_correlation_series(kind, obs, v, f"{label(v)} {names}", seeds, records) for v in obs.variants]
        return Observed(series)
    if isinstance(obs, schema.DifferenceObservation):
        first, second = (metric_series(kind, obs.metric, obs.args, v, label(v), seeds, records) for v in obs.of)
        difference = Series(f"{label(obs.of[0])} − {label(obs.of[1])} ({obs.metric})",
                            {seed: first.values[seed] - second.values[seed] for seed in seeds},
                            first.deterministic and second.deterministic,
                            invariant=first.invariant and second.invariant,
                            agreement=max(first.agreement, second.agreement), quantity=f"difference of {obs.metric}",
                            structural=first.structural and second.structural, notes=first.notes + second.notes)
        spread = None
        if spread_variant is not None:
            spread = metric_series(kind, obs.metric, obs.args, spread_variant, label(spread_variant), seeds, records)
        return Observed([difference], spread)
    series = [metric_series(kind, obs.metric, obs.args, v, f"{label(v)} ({obs.metric})", seeds, records)
              for v in obs.variants]
    if isinstance(obs, schema.SpreadObservation):
        return Observed(series, spread_ratio=True)
    return Observed(series)
