"""What each point of a study's axis cost: its runs' measured wall time, or an estimate where none ran."""
from __future__ import annotations

import math

import numpy as np

from harness.loading.catalog import Catalog
from harness.loading.studies import LoadedStudy, StudyPoint, observed_variants
from harness.report.study_reading import ClaimReading, PointCost


def point_costs(values: list[int | float], walls: dict[int | float, list[float]], planned: int) -> list[PointCost]:
    """Each point's measured cost; points without runs estimated from the nearest measured point, where both
    values are positive (an axis through 0, such as an exponent, does not scale a run's work)."""
    costs = [PointCost(value, planned, walls.get(value, [])) for value in values]
    measured = [c for c in costs if c.walls and c.value > 0]
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
