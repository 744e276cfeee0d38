"""Sample sizes of a fixed-n confirmatory test: a one-sided paired (one-sample) t-test at level α."""
from __future__ import annotations

import math

from harness.statistics.power import smallest_units, t_test_power


def paired_t_power(effect_sd: float, seeds: int, alpha: float) -> float:
    """P(PASS) of a one-sided one-sample t-test on `seeds` values whose true mean is `effect_sd` SDs past the
    bound (the noncentral t; none on one seed)."""
    return t_test_power(effect_sd, seeds, alpha) if seeds >= 2 else 0.0


def paired_t_seeds(effect_sd: float, alpha: float, target: float) -> int | None:
    """The fewest seeds at which that test reaches `target` power (None: none up to PRACTICAL_UNITS, or no
    effect on the claimed side)."""
    if not effect_sd > 0:
        return None
    if math.isinf(effect_sd):
        return 2
    return smallest_units(lambda seeds: paired_t_power(effect_sd, seeds, alpha) >= target)
