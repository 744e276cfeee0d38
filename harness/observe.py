"""Compute a claim's observation from run records: one value per seed per series."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.kinds.base import ExperimentKind
from harness.schema import claim as schema
from harness.stats import Correlation, correlation, summarize

Records = Mapping[tuple[str, int], Mapping[str, Any]]


@dataclass
class Series:
    """Per-seed values of one variant (or of a paired difference)."""

    label: str
    values: dict[int, float]
    intervals: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values.values() if math.isfinite(v)]

    def text(self, digits: int = 4) -> str:
        def fmt(v: float) -> str:
            return f"{v:.{digits}g}"
        values = list(self.values.values())
        per_seed = ", ".join(f"s{seed}: {fmt(v)}" + (f" [{fmt(self.intervals[seed][0])}, {fmt(self.intervals[seed][1])}]"
                                                       if seed in self.intervals else "")
                             for seed, v in self.values.items())
        if len(values) == 1:
            return f"{self.label}: {fmt(values[0])}" + (f" ({per_seed})" if self.intervals else "")
        s = summarize(values)
        return f"{self.label}: {fmt(s.mean)} ± {fmt(s.std)} (n={s.n}; {per_seed})"

    def numbers(self) -> dict[str, Any]:
        s = summarize(list(self.values.values()))
        data: dict[str, Any] = {"mean": s.mean, "std": s.std, "n": s.n,
                                "values": {str(k): v for k, v in self.values.items()}}
        if self.intervals:
            data["intervals"] = {str(k): list(v) for k, v in self.intervals.items()}
        return data


@dataclass
class Observed:
    series: list[Series]
    spread: Series | None = None

    def text(self) -> str:
        return "; ".join(s.text() for s in self.series)


def metric_series(kind: ExperimentKind, metric: str, args: dict, variant: str, label: str,
                  seeds: list[int], records: Records) -> Series:
    spec = kind.metrics[metric]
    parsed = spec.args.model_validate(args)
    return Series(label, {seed: float(spec.compute(records[(variant, seed)]["result"], parsed)) for seed in seeds})


def _correlation_series(kind: ExperimentKind, obs: schema.CorrelationObservation, variant: str, label: str,
                        seeds: list[int], records: Records) -> Series:
    values, intervals = {}, {}
    for seed in seeds:
        result = records[(variant, seed)]["result"]
        x, y = (kind.client_quantities[name].compute(result) for name in obs.correlation)
        given = kind.client_quantities[obs.given].compute(result) if obs.given else None
        measured: Correlation = correlation(x, y, given, obs.method)
        values[seed] = measured.r
        intervals[seed] = (measured.low, measured.high)
    return Series(label, values, intervals)


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
                            {seed: first.values[seed] - second.values[seed] for seed in seeds})
        spread = None
        if spread_variant is not None:
            spread = metric_series(kind, obs.metric, obs.args, spread_variant, label(spread_variant), seeds, records)
        return Observed([difference], spread)
    series = [metric_series(kind, obs.metric, obs.args, v, f"{label(v)} ({obs.metric})", seeds, records)
              for v in obs.variants]
    return Observed(series)
