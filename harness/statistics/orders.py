"""An order of variants: paired one-sided tests of adjacent pairs over the shared seeds (a pair
with an infinite difference by a sign test), or every pair in order on every seed."""
from __future__ import annotations

import math

from scipy import stats as scipy_stats

from harness.statistics.comparisons import sign_evidence
from harness.statistics.evidence import Evidence, combine, decided
from harness.statistics.outcome import FAIL, INCONCLUSIVE, PASS, Decision, fmt, most_needed
from harness.statistics.power import Power, sign_power, t_power
from harness.statistics.series import Observed, Series
from harness.statistics.stats import sign_count_p, sign_test, sign_test_seeds, summarize

_OUTCOME = {"pass": "pass", "fail": "reversed", "undecided": "undecided"}
"""A pair's outcome named from its comparison's."""


def order_test(expectation, observed: Observed, obs) -> Decision:
    by_variant = dict(zip(obs.variants, observed.series))
    ranked = [by_variant[v] for v in expectation.order]
    pairs = list(zip(ranked, ranked[1:]))
    if expectation.every_seed:
        return _on_every_seed(expectation, pairs)
    fail_alpha = expectation.alpha / len(pairs)
    results = [_pair_test(higher, lower, expectation.alpha, fail_alpha) for higher, lower in pairs]
    reason = "; ".join(text for _, text, _, _ in results)
    evidence = [e for _, _, _, e in results]
    outcomes = [outcome for outcome, _, _, _ in results]
    if "reversed" in outcomes:
        return Decision(FAIL, reason, evidence=evidence)
    if all(outcome == "pass" for outcome in outcomes):
        return Decision(PASS, reason, evidence=evidence)
    powers = [power for outcome, _, power, _ in results if outcome == "undecided" and power is not None]
    return Decision(INCONCLUSIVE, reason, most_needed(powers), evidence)


def _pair_test(higher: Series, lower: Series, alpha: float, fail_alpha: float
               ) -> tuple[str, str, Power | None, Evidence]:
    """'pass' / 'reversed' / 'undecided' for `higher` above `lower`, paired over their seeds."""
    seeds = [seed for seed in higher.values if seed in lower.values]
    differences = [higher.values[seed] - lower.values[seed] for seed in seeds]
    label = f"{higher.label} − {lower.label}"
    if any(math.isinf(d) for d in differences):
        return _sign_pair(label, seeds, differences, alpha, fail_alpha)
    s = summarize(differences)
    text = f"{label}: mean {fmt(s.mean)}"
    if higher.deterministic and lower.deterministic or (s.n >= 2 and s.std == 0.0):
        evidence = decided(label, s.mean > 0)
        return _OUTCOME[evidence.outcome], f"{text} (no spread: compared directly)", None, evidence
    if s.n < 2:
        return "undecided", f"{text} (one seed)", t_power(differences, 0.0, alpha), \
            Evidence(label, math.nan, None, alpha, fail_alpha)
    evidence = Evidence(label, s.mean / (s.std / math.sqrt(s.n)), s.n - 1, alpha, fail_alpha,
                        se=s.std / math.sqrt(s.n), seeds=s.n, sources=(higher.label, lower.label))
    text = f"{text} ± {s.spread_text()} (n = {s.n}), one-sided p = {evidence.p_claim:.3g}"
    outcome = _OUTCOME[evidence.outcome]
    if outcome == "reversed":
        return outcome, f"{text}, reversed p = {evidence.p_against:.3g} (α = {fail_alpha:.3g})", None, evidence
    if outcome == "pass":
        return outcome, text, None, evidence
    return outcome, text, t_power(differences, s.mean, alpha if s.mean > 0 else fail_alpha), evidence


def _sign_pair(label: str, seeds: list[int], differences: list[float], alpha: float, fail_alpha: float
               ) -> tuple[str, str, Power | None, Evidence]:
    """A pair with an infinite difference on some seed: decided by the signs (exact one-sided sign test)."""
    p_above, p_below = sign_test(differences)
    infinite = [seed for seed, d in zip(seeds, differences) if math.isinf(d)]
    statistic = float(scipy_stats.norm.isf(p_above)) if p_above <= p_below else -float(scipy_stats.norm.isf(p_below))
    evidence = Evidence(label, statistic, None, alpha, fail_alpha, seeds=len(differences), sign_count=True)
    outcome = _OUTCOME[evidence.outcome]
    text = (f"{label}: infinite on seeds {infinite}, so the signs decide (sign test: {sum(d > 0 for d in differences)} "
            f"of {len(differences)} seeds above, p = {p_above:.3g}; below p = {p_below:.3g})")
    power = None
    if outcome == "undecided":
        needed = sign_test_seeds(alpha)
        power = Power("seeds", len(differences), None, needed,
                      f"a sign test needs {needed} seeds all on one side at α = {alpha:.3g}")
    return outcome, text, power, evidence


def _on_every_seed(expectation, pairs: list[tuple[Series, Series]]) -> Decision:
    """Every adjacent pair in order on every seed: a seed out of order is a FAIL; for a metric that
    varies with the seed, each pair's count of seeds in order is a sign test (all n: p = 0.5^n), and
    PASS needs every pair's at α (intersection-union: no correction)."""
    evidence = []
    for higher, lower in pairs:
        bad = [seed for seed in higher.values if not higher.values[seed] > lower.values[seed]]
        evidence += [decided(f"{higher.label} > {lower.label} s{seed}", seed not in bad) for seed in higher.values]
        if bad:
            return Decision(FAIL, f"{higher.label} is not above {lower.label} on seeds {bad}", evidence=evidence)
    order = "observed order " + " > ".join(expectation.order) + " on every seed"
    if all(s.deterministic for pair in pairs for s in pair):
        return Decision(PASS, order, evidence=evidence)
    n, alpha = len(pairs[0][0].values), expectation.alpha
    p_value = sign_count_p(n, n)
    evidence += [sign_evidence(f"{higher.label} > {lower.label}: seeds in order", p_value, n, alpha,
                               (higher.label, lower.label)) for higher, lower in pairs]
    head = f"{order}, sign test p = 0.5^{n} = {p_value:.3g} for each pair"
    if combine(evidence) == PASS:
        return Decision(PASS, f"{head} ≤ α = {alpha:.3g}", evidence=evidence)
    return Decision(INCONCLUSIVE, f"{head} > α = {alpha:.3g}: {n} seeds cannot show the order holds beyond them",
                    sign_power(n, alpha), evidence)
