"""An estimate compared with what an expectation admits, as comparisons of test statistics
(`harness.statistics.evidence.Evidence`): one against a bound, one against each end of a range."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scipy import stats as scipy_stats

from harness.statistics.bands import Admitted
from harness.statistics.correlation_estimates import fisher_z
from harness.statistics.evidence import Evidence
from harness.statistics.outcome import fmt


def oriented(admitted: Admitted, distance: float) -> float:
    """A signed distance from a bound (estimate − bound) oriented so that larger favours the claim."""
    toward = distance if admitted.side == "greater" else -distance
    return -toward if admitted.negated else toward


def bound_evidence(admitted: Admitted, alpha: float, label: str, estimate: float, se: float, df: float | None,
                   fail_alpha: float, scale: Callable[[float], float] = float, seeds: int = 0,
                   source: str | None = None) -> list[Evidence]:
    """The comparisons of an estimate with standard error `se` against what is admitted, its bound or
    ends read on the estimate's scale (`scale`: Fisher's z for a correlation), a claim tested at
    `alpha` and a contradiction at `fail_alpha`. The estimate averages `seeds` seeds of the series
    `source` (default `label`)."""
    origin: dict[str, Any] = dict(se=se if se > 0.0 else None, seeds=seeds, sources=(source or label,),
                                  fisher_z=scale is fisher_z)

    def statistic(distance: float) -> float:
        if se > 0.0:
            return distance / se
        return math.copysign(math.inf, distance) if distance != 0.0 else -math.inf

    if admitted.one_sided:
        bound = scale(admitted.bound)
        value = statistic(oriented(admitted, estimate - bound))
        if admitted.negated:
            if se == 0.0 and estimate == bound:
                value = math.inf  # exactly on the bound is 'not beyond' it
            return [Evidence(label, value, df, None, fail_alpha, **origin)]
        return [Evidence(label, value, df, alpha, fail_alpha, **origin)]
    low_scaled, high_scaled = scale(admitted.low), scale(admitted.high)
    at_low = math.inf if se == 0.0 and estimate == low_scaled else statistic(estimate - low_scaled)
    at_high = math.inf if se == 0.0 and estimate == high_scaled else statistic(high_scaled - estimate)
    origin["range_width"] = (high_scaled - low_scaled) / se if se > 0.0 else None
    return [Evidence(f"{label} ≥ {fmt(admitted.low)}", at_low, df, alpha, fail_alpha, **origin),
            Evidence(f"{label} ≤ {fmt(admitted.high)}", at_high, df, alpha, fail_alpha, **origin)]


def sign_evidence(label: str, p_value: float, seeds: int, alpha: float, sources: tuple[str, ...]) -> Evidence:
    """A sign test's p as a comparison that cannot fail: the normal quantile of p against that of α."""
    return Evidence(label, float(scipy_stats.norm.isf(p_value)), None, alpha, None, seeds=seeds, sources=sources,
                    sign_count=True)
