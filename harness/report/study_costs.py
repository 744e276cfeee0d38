"""What each point of a study's axis cost: its runs' measured wall time, or an estimate where none ran."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.loading.catalog import Catalog
from harness.loading.studies import LoadedStudy, StudyPoint, observed_variants

if TYPE_CHECKING:
    from harness.report.studies import ClaimReading


@dataclass
class PointCost:
    """What one point of the axis cost: its runs' measured wall time, or an estimate where none ran."""

    value: int | float
    planned: int
    walls: list[float]
    estimate: float | None = None
    """Seconds per run where no run is stored: the nearest measured point's mean scaled by the axis
    ratio (a run's time is nearly all local training, proportional to data or epochs)."""

    def text(self) -> str:
        if self.walls:
            mean = float(np.mean(self.walls))
            return (f"| {self.value} | {len(self.walls)} of {self.planned} | {mean:,.0f} | "
                    f"{sum(self.walls):,.0f} |")
        if self.estimate is not None:
            return (f"| {self.value} | 0 of {self.planned} | about {self.estimate:,.0f} (estimate) | "
                    f"about {self.estimate * self.planned:,.0f} (estimate) |")
        return f"| {self.value} | 0 of {self.planned} | — | — |"


def point_costs(values: list[int | float], walls: dict[int | float, list[float]], planned: int) -> list[PointCost]:
    """Each point's measured cost; points without runs estimated from the nearest measured point."""
    costs = [PointCost(value, planned, walls.get(value, [])) for value in values]
    measured = [c for c in costs if c.walls]
    for cost in costs:
        if not cost.walls and measured and isinstance(cost.value, (int, float)) and cost.value > 0:
            nearest = min(measured, key=lambda c: abs(math.log(cost.value / c.value)))
            cost.estimate = float(np.mean(nearest.walls)) * cost.value / nearest.value
    return costs


def study_costs(catalog: Catalog, study: LoadedStudy, points: list[StudyPoint], claims: list[ClaimReading]
           ) -> list[PointCost]:
    """Each point's cost from the run times its claims' readings measured (runs shared by several
    claims counted once)."""
    variants = {v for c in claims for v in observed_variants(catalog.claim(c.claim).claim, study.base)}
    seeds = catalog.specs[study.experiment].spec.profiles[points[0].profile].seeds if points else []
    walls: dict[int | float, dict[tuple[str, int], float]] = {}
    for claim in claims:
        for point in claim.points:
            walls.setdefault(point.value, {}).update(point.walls)
    planned = len(seeds) * len(variants)
    return point_costs([p.value for p in points], {v: list(w.values()) for v, w in walls.items()}, planned)
