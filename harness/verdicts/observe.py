"""Compute a claim's observation from run records: one value per seed per series.

A metric that refuses a record for a missing evaluation raises `MissingValue`; it leaves here with
the record's key, experiment, variant and seed named, for `harness.verdicts.verify` to make the claim ERROR.
A metric whose definition tolerates missing evaluations (`Metric.tolerates`) gives a value, and the
series notes every evaluation so treated (`Series.notes`), which the verdict's reason repeats.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from harness.kinds.base import ExperimentKind, Metric
from harness.kinds.evaluations import MissingValue, record_id
from harness.schema.observations import Shape
from harness.schema.observations.correlation import CorrelationObservation
from harness.statistics.correlation_estimates import correlation
from harness.statistics.series import Observed, Series

Records = Mapping[tuple[str, int], Mapping[str, Any]]


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


def _correlation_series(kind: ExperimentKind, obs: CorrelationObservation, variant: str, label: str,
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


def _values(kind: ExperimentKind, obs, label: Callable[[str], str], seeds: list[int], records: Records,
            spread_variant: str | None) -> Observed:
    return Observed([metric_series(kind, obs.metric, obs.args, v, f"{label(v)} ({obs.metric})", seeds, records)
                     for v in obs.variants])


def _spread(kind: ExperimentKind, obs, label: Callable[[str], str], seeds: list[int], records: Records,
            spread_variant: str | None) -> Observed:
    return replace(_values(kind, obs, label, seeds, records, spread_variant), spread_ratio=True)


def _paired(kind: ExperimentKind, obs, label: Callable[[str], str], seeds: list[int], records: Records,
            spread_variant: str | None) -> Observed:
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


def _correlations(kind: ExperimentKind, obs, label: Callable[[str], str], seeds: list[int], records: Records,
                  spread_variant: str | None) -> Observed:
    names = f"r({obs.correlation[0]}, {obs.correlation[1]}" + (f" | {obs.given})" if obs.given else ")")
    return Observed([_correlation_series(kind, obs, v, f"{label(v)} {names}", seeds, records) for v in obs.variants])


OBSERVERS: dict[Shape, Callable[..., Observed]] = {
    Shape.VALUES: _values, Shape.SPREAD: _spread, Shape.PAIRED: _paired, Shape.CORRELATION: _correlations}
"""How the series of each shape of observation are read from records (every shape has one: a test checks)."""


def observe(kind: ExperimentKind, obs, variant_labels: Mapping[str, str], seeds: list[int],
            records: Records, spread_variant: str | None = None) -> Observed:
    """The observation's series; `spread_variant` adds a reference series for within_spread_of."""
    def label(variant: str) -> str:
        return variant_labels.get(variant) or variant

    return OBSERVERS[obs.shape](kind, obs, label, seeds, records, spread_variant)
