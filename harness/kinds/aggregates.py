"""Metrics that summarise a per-client quantity over the clients of a run.

Every kind that declares per-client quantities also offers `clients_max`, `clients_min`,
`clients_mean` and `clients_quantile`, each with `args: {quantity: <name>}`, optionally
`tier: <cap>` (only the clients whose capacity cap p_max equals it) and, for the quantile,
`q` in [0, 1]; kinds with capacity caps also `clients_tier_ratio` (`args: {quantity, high, low}`:
the quantity's mean over tier `high` divided by its mean over tier `low`). "The largest allocation
in the federation" is then `{metric: clients_max, args: {quantity: final_allocation}}`.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import Field, create_model

from harness.kinds.base import ExperimentKind, Metric
from harness.schema.base import StrictModel

TIER_QUANTITY = "p_max"
REDUCERS: dict[str, tuple[str, Callable[[np.ndarray, float], float]]] = {
    "clients_max": ("largest", lambda values, q: float(values.max())),
    "clients_min": ("smallest", lambda values, q: float(values.min())),
    "clients_mean": ("mean", lambda values, q: float(values.mean())),
    "clients_quantile": ("q-quantile (linear interpolation)", lambda values, q: float(np.quantile(values, q))),
}


def _args_model(kind: ExperimentKind, quantile: bool) -> type[StrictModel]:
    names = tuple(kind.client_quantities)
    fields: dict[str, Any] = {"quantity": (Literal[names], ...)}
    if TIER_QUANTITY in kind.client_quantities:
        fields["tier"] = (float | None, Field(None, gt=0.0, le=1.0,
                                              description="only clients whose capacity cap p_max equals this"))
    if quantile:
        fields["q"] = (float, Field(ge=0.0, le=1.0))
    return create_model(f"{kind.name}_clients{'_quantile' if quantile else ''}_args", __base__=StrictModel, **fields)


def _compute(kind: ExperimentKind, reduce: Callable[[np.ndarray, float], float]):
    def compute(result, args) -> float:
        values = np.asarray(kind.client_quantities[args.quantity].compute(result), dtype=float)
        if getattr(args, "tier", None) is not None:
            caps = np.asarray(kind.client_quantities[TIER_QUANTITY].compute(result), dtype=float)
            values = values[np.isclose(caps, args.tier)]
            if values.size == 0:
                return math.nan  # no client of that tier in this run: the claim is INCONCLUSIVE there
        values = values[np.isfinite(values)]
        return reduce(values, getattr(args, "q", 0.5)) if values.size else math.nan
    return compute


def _tier_ratio_args(kind: ExperimentKind) -> type[StrictModel]:
    names = tuple(kind.client_quantities)
    tier = (float, Field(gt=0.0, le=1.0))
    # A Literal of names known at runtime only, which mypy cannot read as a type.
    return create_model(f"{kind.name}_clients_tier_ratio_args", __base__=StrictModel,
                        quantity=(Literal[names], ...), high=tier, low=tier)  # type: ignore[arg-type]


def _tier_ratio(kind: ExperimentKind):
    def compute(result, args) -> float:
        values = np.asarray(kind.client_quantities[args.quantity].compute(result), dtype=float)
        caps = np.asarray(kind.client_quantities[TIER_QUANTITY].compute(result), dtype=float)
        means = []
        for tier in (args.high, args.low):
            in_tier = values[np.isclose(caps, tier) & np.isfinite(values)]
            if in_tier.size == 0:
                return math.nan  # no client of that tier in this run: the claim is INCONCLUSIVE there
            means.append(float(in_tier.mean()))
        return means[0] / means[1] if means[1] != 0 else math.nan
    return compute


def with_client_aggregates(kind: ExperimentKind) -> ExperimentKind:
    """The kind with the aggregate metrics added (unchanged if it has no per-client quantities)."""
    if not kind.client_quantities:
        return kind
    tier = ", optional tier" if TIER_QUANTITY in kind.client_quantities else ""
    example = {"quantity": next(iter(kind.client_quantities))}
    added = {}
    for name, (what, reduce) in REDUCERS.items():
        q = ", q" if name == "clients_quantile" else ""
        added[name] = Metric(f"{what} of a per-client quantity over the clients (args: quantity{tier}{q})",
                             _compute(kind, reduce), args=_args_model(kind, name == "clients_quantile"),
                             example_args={**example, "q": 0.5} if q else example)
    if TIER_QUANTITY in kind.client_quantities:
        added["clients_tier_ratio"] = Metric("mean of a per-client quantity over the clients of capacity tier `high` "
                                             "divided by its mean over tier `low` (args: quantity, high, low)",
                                             _tier_ratio(kind), args=_tier_ratio_args(kind),
                                             example_args={**example, "high": 1.0, "low": 0.25})
    return dataclasses.replace(kind, metrics={**kind.metrics, **added})

