"""One series of values against what a bound or range admits: the mean over seeds (a t-test, or
read directly where the values do not vary), each seed on its own (directly, or as a sign count),
and several variants' series together (each must meet it; a contradiction is Holm-corrected)."""
from __future__ import annotations

import math

from scipy import stats as scipy_stats

from harness.statistics.bands import Admitted
from harness.statistics.comparisons import bound_evidence, oriented, sign_evidence
from harness.statistics.correlations import correlation_test
from harness.statistics.evidence import Evidence, combine, decided
from harness.statistics.outcome import ERROR, FAIL, INCONCLUSIVE, PASS, SEVERITY, Decision, fmt, level_text, most_needed
from harness.statistics.power import Power, inclusion_power, sensitivity, sign_power, t_power
from harness.statistics.series import Series
from harness.statistics.stats import sign_count_p, sign_test_seeds, summarize, upper_quantile


def not_a_number(series: Series) -> Decision | None:
    """INCONCLUSIVE where a seed's value is NaN (other than an undefined correlation's)."""
    nan_seeds = [seed for seed, v in series.values.items() if math.isnan(v) and seed not in series.undefined]
    if not nan_seeds:
        return None
    return Decision(INCONCLUSIVE, f"{series.label}: not a number on seeds {nan_seeds} (see the run records)",
                    Power("seeds", len(series.values), None, None,
                          "no number of seeds decides it while a seed's value is not a number: what would is "
                          "those seeds' runs giving a number"))


def each_series(expectation, series: list[Series]) -> Decision:
    """Several series (one per variant) must each meet it: PASS needs every one to pass at α (an
    intersection-union test needs no correction); a contradiction of any one is tested with Holm's
    correction over the variants (for 'any', its first step: α / number of variants)."""
    fail_alpha = expectation.alpha / len(series)
    decisions = [value_test(expectation, s, fail_alpha) for s in series]
    status = max((d.status for d in decisions), key=SEVERITY.__getitem__)
    power = most_needed([d.power for d in decisions if d.status == status and d.power is not None])
    evidence = [e for d in decisions for e in d.evidence]
    return Decision(status, "; ".join(d.reason for d in decisions), power, evidence)


def value_test(expectation, series: Series, fail_alpha: float) -> Decision:
    nan = not_a_number(series)
    if nan is not None:
        return nan
    if series.correlations:
        return correlation_test(expectation, series, fail_alpha)
    if expectation.every_seed:
        return _every_seed(expectation, series)
    return _mean_test(expectation, series, fail_alpha)


# --- each seed on its own ------------------------------------------------------------------

def _every_seed(expectation, series: Series) -> Decision:
    """Each seed read on its own: directly where the values are fixed by the config or by the
    protocol's structure or exact algebra (`Series.structural`: each seed is a check, not a draw),
    where two or more seeds all agree (as for a mean) or where the claim is an exact value (an
    invariant: only values tied with it meet it, which a sign test cannot count); else as a sign
    count."""
    admitted = expectation.admitted()
    agreeing = len(series.values) >= 2 and len(set(series.values.values())) == 1
    if series.deterministic or series.structural or agreeing or admitted.exact:
        return _each_seed_directly(expectation, series)
    if admitted.negated:
        return _beyond_count(expectation, series)
    return _sign_count(expectation, series)


def _each_seed_directly(expectation, series: Series) -> Decision:
    holds = expectation.admitted().holds
    evidence = [decided(f"{series.label} s{seed}", holds(v)) for seed, v in series.values.items()]
    failing = {seed: v for seed, v in series.values.items() if not holds(v)}
    if failing:
        listed = ", ".join(f"s{seed} = {fmt(v)}" for seed, v in failing.items())
        return Decision(FAIL, f"{series.label}: {len(failing)} of {len(series.values)} seeds miss it ({listed})",
                        evidence=evidence)
    return Decision(PASS, f"{series.label}: all {len(series.values)} seeds meet it", evidence=evidence)


def _sign_count(expectation, series: Series) -> Decision:
    """'On every seed' of a metric that varies with the seed: a seed on the wrong side contradicts it
    (FAIL); all n on the claimed side decide it only if a one-sided sign test rejects at α, p = 0.5^n."""
    direct = _each_seed_directly(expectation, series)
    if direct.status == FAIL:
        return direct
    n, alpha = len(series.values), expectation.alpha
    p_value = sign_count_p(n, n)
    evidence = direct.evidence + [sign_evidence(f"{series.label}: seeds on the claimed side", p_value, n, alpha,
                                                (series.label,))]
    head = f"{series.label}: all {n} seeds meet it, sign test p = 0.5^{n} = {p_value:.3g}"
    if combine(evidence) == PASS:
        return Decision(PASS, f"{head} ≤ α = {alpha:.3g}", evidence=evidence)
    return Decision(INCONCLUSIVE, f"{head} > α = {alpha:.3g}: {n} seeds cannot show it holds beyond them",
                    sign_power(n, alpha), evidence)


def _beyond_count(expectation, series: Series) -> Decision:
    """'Not significantly beyond the bound' on every seed of a metric that varies with the seed: FAIL
    only if the seeds beyond the bound are significantly many (one-sided sign test at α)."""
    admitted = expectation.admitted()
    n, alpha = len(series.values), expectation.alpha
    beyond = [seed for seed, v in series.values.items() if not admitted.holds(v)]
    p_value = sign_count_p(len(beyond), n) if beyond else 1.0
    statistic = -float(scipy_stats.norm.isf(p_value))
    evidence = [Evidence(f"{series.label}: seeds beyond {fmt(admitted.bound)}", statistic, None, None, alpha,
                         seeds=n, sources=(series.label,), sign_count=True)]
    status = combine(evidence)
    listed = f" ({', '.join(f's{seed}' for seed in beyond)})" if beyond else ""
    reason = (f"{series.label}: {len(beyond)} of {n} seeds beyond {fmt(admitted.bound)}{listed}, sign test "
              f"p = {p_value:.3g} against α = {alpha:.3g}")
    if status == FAIL:
        return Decision(FAIL, reason, evidence=evidence)
    smallest = sign_test_seeds(alpha)
    could = (f"a sign test over {n} seeds cannot show it beyond the bound (it needs {smallest} seeds, all beyond)"
             if n < smallest else f"a sign test over {n} seeds shows it beyond the bound only if "
                                  f"{_fewest_beyond(n, alpha)} or more of them are")
    return Decision(PASS, reason, Power("seeds", n, None, None, could), evidence)


def _fewest_beyond(n: int, alpha: float) -> int:
    """The fewest of n seeds beyond a bound that a one-sided sign test finds significant at α."""
    return next(k for k in range(1, n + 1) if sign_count_p(k, n) <= alpha)


# --- the mean over seeds -------------------------------------------------------------------

def _direct(expectation, series: Series, why: str, fail_alpha: float) -> Decision:
    mean = summarize(list(series.values.values())).mean
    evidence = bound_evidence(expectation.admitted(), expectation.alpha, series.label, mean, 0.0, None, fail_alpha)
    status = combine(evidence)
    verb = {PASS: "meets", FAIL: "misses", INCONCLUSIVE: "cannot decide"}[status]
    return Decision(status, f"{series.label}: {fmt(mean)} {verb} it ({why})", evidence=evidence)


def _disagreeing(series: Series) -> bool:
    """Seeds of a deterministic metric further apart than its declared agreement."""
    values = list(series.values.values())
    tolerance = max(series.agreement, 1e-12)
    return any(v != values[0] and not math.isclose(v, values[0], rel_tol=tolerance) for v in values)


def _mean_test(expectation, series: Series, fail_alpha: float) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    if series.deterministic:
        if _disagreeing(series):
            listed = ", ".join(f"s{seed} = {fmt(v)}" for seed, v in series.values.items())
            return Decision(ERROR, f"{series.label}: declared fixed by the config, yet its seeds disagree ({listed}); "
                                   "the metric's `deterministic` declaration is wrong or the run is not reproducible")
        return _direct(expectation, series, "the metric is fixed by the config: one seed decides", fail_alpha)
    alpha = expectation.alpha
    if s.n < 2:
        power: Power | None = t_power(values, 0.0, alpha)
        return Decision(INCONCLUSIVE, f"{series.label}: one seed ({fmt(s.mean)}) of a metric that varies with the "
                                      "seed cannot decide a test of the mean", power)
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        if math.isnan(s.mean):
            return Decision(INCONCLUSIVE, f"{series.label}: +inf and -inf on seeds {infinite}",
                            Power("seeds", s.n, None, None, "a mean of +inf and -inf is undefined: no number of seeds "
                                                            "decides it (an `order` or a per-seed reading would)"))
        return _direct(expectation, series, f"infinite on seeds {infinite}: no spread brings the mean back",
                       fail_alpha)
    if s.std == 0.0:
        return _direct(expectation, series, f"all {s.n} seeds equal", fail_alpha)
    se = s.std / math.sqrt(s.n)
    admitted = expectation.admitted()
    evidence = bound_evidence(admitted, alpha, series.label, s.mean, se, s.n - 1, fail_alpha, seeds=s.n)
    status = combine(evidence)
    head = f"{series.label}: mean {fmt(s.mean)} ± {s.spread_text()} (n = {s.n})"
    if admitted.one_sided:
        return _bound_test(admitted, alpha, values, s.mean, head, status, evidence, fail_alpha)
    low, high = admitted.low, admitted.high
    t_critical = upper_quantile(alpha, s.n - 1)
    ci_low, ci_high = s.mean - t_critical * se, s.mean + t_critical * se
    where = {PASS: "lies inside", FAIL: "lies outside", INCONCLUSIVE: "straddles a bound of"}[status]
    power = inclusion_power(s.mean, s.std, low, high, s.n, alpha) if status == INCONCLUSIVE else None
    return Decision(status, f"{series.label}: mean {fmt(s.mean)} ± {s.spread_text()} (n = {s.n}), "
                            f"{1 - 2 * alpha:.0%} interval [{fmt(ci_low)}, {fmt(ci_high)}] {where} "
                            f"[{fmt(low)}, {fmt(high)}]{level_text(fail_alpha, alpha)}", power, evidence)


def _bound_test(admitted: Admitted, alpha: float, values: list[float], mean: float, head: str, status: str,
                evidence: list[Evidence], fail_alpha: float) -> Decision:
    """The one-sided t-test of the mean of `values` against a bound, its comparison made (`evidence`)."""
    bound = admitted.bound
    p_claim, p_other = evidence[0].p_claim, evidence[0].p_against
    if admitted.negated:
        side = "below" if admitted.side == "less" else "above"
        if status == FAIL:
            return Decision(FAIL, f"{head} is significantly {side} {fmt(bound)}, one-sided p = {p_other:.3g}"
                                  f"{level_text(fail_alpha, alpha)}", evidence=evidence)
        return Decision(PASS, f"{head} is not significantly {side} {fmt(bound)}, one-sided p = {p_other:.3g}",
                        sensitivity(t_power(values, mean - bound, fail_alpha)), evidence)
    relation = {PASS: "meets", FAIL: "contradicts", INCONCLUSIVE: "cannot decide"}[status]
    power = None
    if status == INCONCLUSIVE:
        toward_pass = oriented(admitted, mean - bound) >= 0
        power = t_power(values, mean - bound, alpha if toward_pass else fail_alpha)
    return Decision(status, f"{head} {relation} the bound {fmt(bound)}, one-sided p = {p_claim:.3g}"
                            f" (other side p = {p_other:.3g}{level_text(fail_alpha, alpha)})", power, evidence)
