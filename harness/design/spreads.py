"""The numbers a planning spread is read from: a series' stored per-seed values, the largest seed standard
deviation among them, or the between-seed τ² of its correlations (which series a claim reads is
`harness.loading.planning_spread`'s business)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.statistics.correlation_estimates import Correlation, pooled_correlation

SeriesNumbers = Mapping[str, Mapping[str, Any]]
"""The stored numbers of a claim's series at a profile: label -> {values, std, n, clients, ...}."""


@dataclass(frozen=True)
class StoredSeries:
    """The stored numbers of the series a claim reads at a profile, and which recording they come from."""

    numbers: SeriesNumbers
    source: str


def stored_sd(numbers: SeriesNumbers | None) -> tuple[float, int] | None:
    """The largest seed standard deviation among the stored series, and their fewest seeds."""
    if not numbers:
        return None
    pairs: list[tuple[Any, int]] = [(data.get("std"), data.get("n") or 0) for data in numbers.values()]
    if not pairs or any(not isinstance(sd, (int, float)) or not math.isfinite(sd) or n < 2 for sd, n in pairs):
        return None
    return max(float(sd) for sd, _ in pairs), min(n for _, n in pairs)


def stored_tau_squared(numbers: SeriesNumbers | None, controls: int) -> tuple[float, int] | None:
    """The largest DerSimonian-Laird τ² among the stored correlation series, and their fewest seeds."""
    if not numbers:
        return None
    found = []
    for data in numbers.values():
        values, clients = data.get("values") or {}, data.get("clients") or {}
        if len(values) < 2 or any(not isinstance(r, (int, float)) or not math.isfinite(r) for r in values.values()):
            return None
        per_seed = [Correlation(float(r), math.nan, math.nan, math.nan, int(clients.get(seed, 0)), controls)
                    for seed, r in values.items()]
        if any(c.weight < 1 for c in per_seed):
            return None
        found.append((pooled_correlation(per_seed).tau_squared, len(per_seed)))
    return (max(t for t, _ in found), min(n for _, n in found)) if found else None
