"""A paired difference with no difference claimed: equivalence within ±a bound (two one-sided
tests), or within a reference variant's seed-to-seed spread, that spread's own uncertainty counted
against the claim."""
from __future__ import annotations

import math
from typing import Any

from scipy import stats as scipy_stats

from harness.statistics.comparisons import bound_evidence
from harness.statistics.evidence import Evidence, combine, decided
from harness.statistics.outcome import FAIL, INCONCLUSIVE, PASS, Decision, fmt
from harness.statistics.power import Power, inclusion_power, sensitivity, t_power
from harness.statistics.series import Series
from harness.statistics.stats import equivalence, sd_bounds, summarize


def equivalence_test(expectation, series: Series) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    bound, alpha = expectation.equivalent_within, expectation.alpha
    within = expectation.admitted()
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        return Decision(FAIL, f"{series.label}: infinite on seeds {infinite}: an unbounded difference lies outside "
                              f"±{fmt(bound)}", evidence=[decided(series.label, False, alpha)])
    if series.deterministic or (s.n >= 2 and s.std == 0.0):
        evidence = bound_evidence(within, alpha, series.label, s.mean, 0.0, None, alpha)
        return Decision(combine(evidence), f"difference {fmt(s.mean)} with no spread between seeds, compared "
                                           "directly", evidence=evidence)
    if s.n < 2:
        return Decision(INCONCLUSIVE, f"equivalence needs at least 2 seeds, got {s.n}", t_power(values, 0.0, alpha))
    _, p_value, (low, high) = equivalence(values, bound, alpha)
    evidence = bound_evidence(within, alpha, series.label, s.mean, s.std / math.sqrt(s.n), s.n - 1, alpha, seeds=s.n)
    status = combine(evidence)
    power = None
    if status == INCONCLUSIVE:
        power = inclusion_power(s.mean, s.std, -bound, bound, s.n, alpha)
    elif status == PASS:
        power = sensitivity(inclusion_power(s.mean, s.std, -bound, bound, s.n, alpha))
    return Decision(status, f"mean difference {fmt(s.mean)} ± {s.spread_text()} (n = {s.n}), {1 - 2 * alpha:.0%} "
                            f"interval [{fmt(low)}, {fmt(high)}], TOST p = {p_value:.3g}", power, evidence)


def within_spread_test(expectation, series: Series, spread: Series) -> Decision:
    """Equivalence of the paired difference within the reference's seed spread, that spread's own
    uncertainty counted against the claim: PASS if the difference's (1 − 2α) interval lies within
    ± the (1 − α) lower confidence bound of the reference's standard deviation, FAIL if it lies
    wholly outside ± its upper confidence bound."""
    values, reference = list(series.values.values()), list(spread.values.values())
    alpha = expectation.alpha
    name = expectation.within_spread_of
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        return Decision(FAIL, f"{series.label}: infinite on seeds {infinite}: outside any seed spread",
                        evidence=[decided(series.label, False, alpha)])
    d = summarize(values)
    r = summarize(reference)
    no_spread_reference = spread.deterministic or (r.n >= 2 and r.std == 0.0)
    if r.n < 2 and not no_spread_reference:
        return Decision(INCONCLUSIVE, f"a seed-to-seed spread of {name} needs at least 2 seeds",
                        t_power(values, 0.0, alpha))
    low_sd, high_sd = (r.std, r.std) if no_spread_reference else sd_bounds(reference, alpha)
    no_spread_difference = series.deterministic or (d.n >= 2 and d.std == 0.0)
    if d.n < 2 and not no_spread_difference:
        return Decision(INCONCLUSIVE, "the paired difference needs at least 2 seeds", t_power(values, 0.0, alpha))
    se = 0.0 if no_spread_difference else d.std / math.sqrt(d.n)
    df = None if no_spread_difference else d.n - 1
    size = abs(d.mean)

    def against(bound: float, passes: bool) -> Evidence:
        distance = bound - size
        if se > 0.0:
            value = distance / se
        else:
            value = math.inf if distance >= 0.0 else -math.inf
        origin: dict[str, Any] = dict(se=se or None, seeds=d.n, sources=(series.label,))
        return (Evidence(f"|difference| within {fmt(bound)}", value, df, alpha, None, **origin) if passes else
                Evidence(f"|difference| beyond {fmt(bound)}", value, df, 1.0, alpha, **origin))

    evidence = [against(low_sd, True), against(high_sd, False)]
    status = combine(evidence)
    spread_text = (f"seed std of {name} {fmt(r.std)}" if no_spread_reference else
                   f"seed std of {name} {fmt(r.std)}, {1 - alpha:.0%} bounds [{fmt(low_sd)}, {fmt(high_sd)}] "
                   f"(n = {r.n})")
    if se > 0.0:
        t_critical = float(scipy_stats.t.isf(alpha, d.n - 1))
        head = (f"mean paired difference {fmt(d.mean)} ± {fmt(d.std)} (n = {d.n}), {1 - 2 * alpha:.0%} "
                f"interval [{fmt(d.mean - t_critical * se)}, {fmt(d.mean + t_critical * se)}]")
    else:
        head = f"paired difference {fmt(d.mean)} on every seed"
    verb = {PASS: "lies within ±", FAIL: "lies beyond ±", INCONCLUSIVE: "cannot be placed against ±"}[status]
    bound_text = fmt(low_sd) if status != FAIL else fmt(high_sd)
    power = None
    if status == INCONCLUSIVE and se > 0.0 and low_sd > 0.0:
        power = inclusion_power(d.mean, d.std, -low_sd, low_sd, d.n, alpha)
    elif status == INCONCLUSIVE:
        power = Power("seeds", d.n, None, None, "the reference's spread bounds are 0, or the difference has no spread: "
                                                "no number of seeds decides it at these values")
    elif status == PASS and se > 0.0:
        power = sensitivity(inclusion_power(d.mean, d.std, -low_sd, low_sd, d.n, alpha))
    return Decision(status, f"{head} {verb}{bound_text} ({spread_text})", power, evidence)
