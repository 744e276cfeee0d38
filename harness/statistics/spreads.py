"""A bound or range on the ratio of two variants' seed-to-seed standard deviations, tested on the
log of the ratio (normal approximation: var(log s²) ≈ 2 / (n − 1))."""
from __future__ import annotations

import math

from scipy import stats as scipy_stats

from harness.statistics.comparisons import bound_evidence
from harness.statistics.evidence import combine
from harness.statistics.outcome import INCONCLUSIVE, Decision, fmt
from harness.statistics.power import Power
from harness.statistics.series import Series
from harness.statistics.stats import summarize


def spread_ratio_test(expectation, first: Series, second: Series) -> Decision:
    """sd(first) / sd(second) against what the expectation admits; the log ratio of standard deviations
    has variance 1/(2(n₁−1)) + 1/(2(n₂−1))."""
    a, b = summarize(list(first.values.values())), summarize(list(second.values.values()))
    label = f"sd({first.label}) / sd({second.label})"
    admitted, alpha = expectation.admitted(), expectation.alpha
    if a.n < 2 or b.n < 2:
        return Decision(INCONCLUSIVE, f"{label}: a seed-to-seed spread needs at least 2 seeds of each",
                        Power("seeds of each variant", min(a.n, b.n), None, None,
                              "at least 2 seeds of each variant (3 for a useful test) are needed before any number "
                              "of seeds can be estimated"))
    if a.std == 0.0 or b.std == 0.0:
        ratio = math.inf if b.std == 0.0 and a.std > 0.0 else (0.0 if a.std == 0.0 and b.std > 0.0 else 1.0)
        evidence = bound_evidence(admitted, alpha, label, ratio, 0.0, None, alpha)
        return Decision(combine(evidence), f"{label} = {fmt(ratio)} (a spread of 0: compared directly)",
                        evidence=evidence)
    estimate = math.log(a.std / b.std)
    se = math.sqrt(1.0 / (2 * (a.n - 1)) + 1.0 / (2 * (b.n - 1)))
    evidence = bound_evidence(admitted, alpha, label, estimate, se, None, alpha, math.log, seeds=1)
    status = combine(evidence)
    z = float(scipy_stats.norm.isf(alpha))
    low, high = math.exp(estimate - z * se), math.exp(estimate + z * se)
    power = None
    if status == INCONCLUSIVE:
        power = Power("seeds of each variant", min(a.n, b.n), None, None,
                      "a ratio of seed spreads needs many seeds: its log has a standard error of about "
                      f"√(1/(n − 1)) ({se:.2f} here)")
    return Decision(status, f"{label} = {fmt(a.std)} / {fmt(b.std)} = {fmt(a.std / b.std)} (n = {a.n}, {b.n}), "
                            f"one-sided {1 - alpha:.0%} bounds [{fmt(low)}, {fmt(high)}]", power, evidence)
