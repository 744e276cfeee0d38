"""The edge cases of the verdict statistics: multiplicity, heterogeneous seeds, the expectation's α
for correlations, infinite values, within_spread_of as a test, power figures that match the
deciding test, deterministic declarations, Spearman intervals. Each test failed before its fix."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.power import TTestPower

from harness.schema.expectations.approx import Approx
from harness.schema.expectations.between import Between
from harness.schema.expectations.bounds import Above, Below, NotAbove
from harness.schema.expectations.equals import Equals
from harness.schema.expectations.equivalent import Equivalent
from harness.schema.expectations.order import Order
from harness.schema.expectations.within_spread import WithinSpread
from harness.schema.observations.compare import CompareObservation
from harness.schema.observations.correlation import CorrelationObservation
from harness.schema.observations.difference import DifferenceObservation
from harness.schema.observations.metric import MetricObservation
from harness.schema.observations.spread import SpreadObservation
from harness.statistics import correlation_estimates, power
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import (
    ERROR,
    FAIL,
    INCONCLUSIVE,
    PASS,
    SKIPPED,
    Verdict,
    _record_decision,
    apply_families,
    evaluate,
)

METRIC = MetricObservation(metric="m", of="a")
DIFF = DifferenceObservation(difference="m", of=("a", "b"))
CORRELATION = CorrelationObservation(correlation=("x", "y"), of="a")


def series(*values: float, label: str = "a", deterministic: bool = False) -> Series:
    return Series(label, dict(enumerate(values)), deterministic)


def correlations(*per_seed: correlation_estimates.Correlation) -> Observed:
    return Observed([Series("r", {i: c.r for i, c in enumerate(per_seed)}, correlations=dict(enumerate(per_seed)))])


# --- 1. multiplicity ---------------------------------------------------------------------------

def test_a_claim_over_five_variants_keeps_its_false_fail_rate() -> None:
    """approx 1.0 ± 25% over five variants whose true means sit at 0.75 (the claim holds): the
    chance of a FAIL stays at about α (it was 22% with each variant tested at α)."""
    rng = np.random.default_rng(0)
    expectation = Approx(approx=1.0, relative_tolerance=0.25)
    obs = MetricObservation(metric="m", of=["a", "b", "c", "d", "e"])
    trials, fails = 1000, 0
    for _ in range(trials):
        observed = Observed([series(*rng.normal(0.75, 0.1, size=5), label=v) for v in obs.variants])
        fails += evaluate(expectation, obs, observed).status == FAIL
    assert fails / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


def _verdict(claim: str, values: tuple[float, ...], family: str) -> Verdict:
    decision = evaluate(NotAbove(not_above=0.0), DIFF, Observed([series(*values)]))
    verdict = Verdict(claim, "p", "standard", "e", "§", "a statement", "not above 0", decision.status, "")
    verdict.family = family
    _record_decision(verdict, decision)
    return verdict


def test_a_family_of_claims_is_corrected_together_by_holm() -> None:
    """Three 'not better' claims testing one relation: a FAIL at p ≈ 0.03 does not survive α / 3."""
    weak = (0.1, 0.8, 0.5, 0.0, 0.5)  # one-sided p against 'not above 0' about 0.03
    p_weak = scipy_stats.ttest_1samp(weak, 0.0, alternative="greater").pvalue
    assert 0.05 / 3 < p_weak < 0.05
    members = [_verdict("w.update", weak, "weighting"), _verdict("w.size", (0.3, -0.5, 0.1, -0.2, 0.0), "weighting"),
               _verdict("w.hybrid", (-0.1, 0.2, -0.3, 0.1, 0.0), "weighting")]
    assert members[0].status == FAIL
    apply_families(members, lambda v: 0.05)
    assert members[0].status == PASS and "Holm" in members[0].reason and "FAIL → PASS" in members[0].reason
    strong = [_verdict("x.one", (5.0, 5.2, 4.9, 5.1, 5.0), "x"), _verdict("x.two", weak, "x")]
    apply_families(strong, lambda v: 0.05)
    assert strong[0].status == FAIL  # p far below α / 2: rejected at Holm's first step
    assert strong[1].status == FAIL  # then tested at α / 1, where p ≈ 0.03 is rejected


# --- 2. heterogeneous seeds ------------------------------------------------------------------------

def test_seeds_that_disagree_widen_the_pooled_interval() -> None:
    """r = −0.60, −0.90, −0.65, −0.88, −0.70 on 60 clients each: Q = 29.4 on their bias-corrected z (29.6 on
    atanh(r)); a fixed-effect pool gave a PASS for [−0.84, −0.72]; the random-effects interval straddles it."""
    per_seed = [correlation_estimates.Correlation(r, 0.0, math.nan, math.nan, 60)
                for r in (-0.60, -0.90, -0.65, -0.88, -0.70)]
    decision = evaluate(Between(between=(-0.84, -0.72)), CORRELATION, correlations(*per_seed))
    assert decision.status == INCONCLUSIVE
    assert "Cochran's Q = 29.4" in decision.reason and "I² = 86%" in decision.reason
    pooled = correlation_estimates.pooled_correlation(per_seed)
    low, high = pooled.interval(0.95)
    assert low < -0.875 and high > -0.617  # at least as wide as DerSimonian-Laird's [−0.875, −0.617]


# --- 3. correlations at the expectation's α -------------------------------------------------------

def _correlation_with_z_statistic(target: float, n: int = 40) -> correlation_estimates.Correlation:
    """A correlation whose Fisher z is `target` standard errors above 0."""
    r = math.tanh(target / math.sqrt(n - 3))
    return correlation_estimates.Correlation(r, 0.0, math.nan, math.nan, n)


def test_a_correlation_bound_is_tested_at_the_expectation_alpha() -> None:
    one = _correlation_with_z_statistic(1.8)  # between 1.645 (one-sided 0.05) and 1.96 (two-sided 0.05)
    assert evaluate(Above(above=0.0, of="every_seed"), CORRELATION, correlations(one)).status == PASS
    assert evaluate(Above(above=0.0, of="every_seed", alpha=0.01), CORRELATION, correlations(one)).status \
        == INCONCLUSIVE


# --- 4. infinite values ----------------------------------------------------------------------------

def test_an_order_with_infinite_differences_is_decided_by_the_signs() -> None:
    obs = CompareObservation(compare="m", of=["slow", "fast"])
    five = Observed([series(math.inf, math.inf, 40.0, math.inf, math.inf, label="slow"),
                     series(12.0, 12.0, 12.0, 12.0, 12.0, label="fast")])
    assert evaluate(Order(order=["slow", "fast"]), obs, five).status == PASS  # 5 of 5 above: p = 1/32
    three = Observed([series(math.inf, math.inf, 40.0, label="slow"), series(12.0, 12.0, 12.0, label="fast")])
    decision = evaluate(Order(order=["slow", "fast"]), obs, three)
    assert decision.status == INCONCLUSIVE and "sign test" in decision.reason
    assert decision.power.needed == 5  # more seeds can decide it
    reversed_ = evaluate(Order(order=["fast", "slow"]), obs, five)
    assert reversed_.status == FAIL


def test_an_infinite_difference_is_not_equivalent() -> None:
    decision = evaluate(Equivalent(equivalent_within=1.0), DIFF, Observed([series(0.1, math.inf, 0.2)]))
    assert decision.status == FAIL and "infinite" in decision.reason


def test_one_infinite_seed_of_a_stochastic_metric_decides_no_mean() -> None:
    assert evaluate(Above(above=1.0), METRIC, Observed([series(math.inf)])).status == INCONCLUSIVE


# --- 5. within_spread_of is a test ---------------------------------------------------------------

WITHIN = WithinSpread(within_spread_of="b")


def test_no_difference_against_a_reference_without_spread_passes() -> None:
    observed = Observed([series(0.0, 0.0, 0.0)], series(0.3, 0.3, 0.3, label="b"))
    assert evaluate(WITHIN, DIFF, observed).status == PASS


def test_a_precise_difference_is_not_within_spread_because_the_reference_is_noisy() -> None:
    """3.0 ± 0.1 (paired t p ≈ 0.0004) against a reference sd of 5 on three seeds: not a PASS."""
    difference = series(2.9, 3.0, 3.1)
    assert scipy_stats.ttest_1samp([2.9, 3.0, 3.1], 0.0).pvalue < 0.001
    reference = series(20.0, 25.0, 30.0, label="b")  # sd 5
    assert evaluate(WITHIN, DIFF, Observed([difference], reference)).status != PASS


def test_a_noisier_reference_does_not_make_a_pass_easier() -> None:
    difference = series(1.95, 2.0, 2.05)
    tight = evaluate(WITHIN, DIFF, Observed([difference], series(20.0, 21.0, 22.0, label="b")))  # sd 1
    noisy = evaluate(WITHIN, DIFF, Observed([difference], series(20.0, 23.0, 26.0, label="b")))  # sd 3
    assert tight.status != PASS and noisy.status != PASS  # a point comparison passed the noisy one


# --- 6. power that matches the deciding test ---------------------------------------------------

def test_a_not_above_pass_states_what_it_could_detect_not_seeds_to_decide() -> None:
    decision = evaluate(NotAbove(not_above=0.0), DIFF, Observed([series(0.6, -1.4, 2.0)]))
    assert decision.status == PASS and decision.power.needed is None and decision.power.detectable > 0


def test_a_reversal_is_powered_at_its_own_level() -> None:
    obs = CompareObservation(compare="m", of=["a", "b", "c"])
    observed = Observed([series(1.0, 1.6, 0.9, 1.4, label="a"), series(1.2, 1.5, 1.3, 1.5, label="b"),
                         series(0.0, 0.1, 0.0, 0.05, label="c")])
    decision = evaluate(Order(order=["a", "b", "c"]), obs, observed)
    assert decision.status == INCONCLUSIVE
    differences = np.array([1.0, 1.6, 0.9, 1.4]) - np.array([1.2, 1.5, 1.3, 1.5])
    effect = abs(differences.mean()) / differences.std(ddof=1)
    expected = math.ceil(TTestPower().solve_power(effect_size=effect, alpha=0.05 / 2, power=0.8,
                                                  alternative="larger"))
    assert decision.power.needed == max(2, expected)


def test_a_range_is_powered_as_two_one_sided_tests() -> None:
    """At the printed number of seeds a simulated range test passes with probability ≥ 80%."""
    decision = evaluate(Between(between=(0.4, 0.6)), METRIC, Observed([series(0.42, 0.50, 0.58)]))
    assert decision.status == INCONCLUSIVE
    n = decision.power.needed
    rng = np.random.default_rng(1)
    mean, sd = np.mean([0.42, 0.50, 0.58]), np.std([0.42, 0.50, 0.58], ddof=1)
    draws = rng.normal(mean, sd, size=(4000, n))
    centre = draws.mean(axis=1)
    half = scipy_stats.t.isf(0.05, n - 1) * draws.std(axis=1, ddof=1) / math.sqrt(n)
    assert np.mean((centre - half >= 0.4) & (centre + half <= 0.6)) >= 0.78


# --- 7. deterministic declarations are checked -------------------------------------------------

def test_declared_deterministic_values_that_disagree_are_an_error() -> None:
    observed = Observed([Series("a (m)", {0: 0.2, 1: 0.8}, deterministic=True)])
    decision = evaluate(Below(below=0.6), METRIC, observed)
    assert decision.status == ERROR and "a (m)" in decision.reason and "disagree" in decision.reason
    agreeing = Observed([Series("a (m)", {0: 1000.0, 1: 1000.3}, deterministic=True, agreement=1e-3)])
    assert evaluate(Below(below=2000.0), METRIC, agreeing).status == PASS


# --- 8. Spearman intervals -------------------------------------------------------------------------

def test_spearman_interval_uses_the_bonett_wright_variance() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    spearman = correlation_estimates.correlation(list(x), list(y), method="spearman")
    half = math.atanh(spearman.high) - math.atanh(spearman.r)
    assert half == pytest.approx(1.959964 * math.sqrt((1 + spearman.r ** 2 / 2) / 37), rel=1e-5)
    pearson = correlation_estimates.correlation(list(x), list(y))
    assert math.atanh(pearson.high) - math.atanh(pearson.r) == pytest.approx(1.959964 / math.sqrt(37), rel=1e-5)


# --- a ratio of seed spreads -----------------------------------------------------------------

SPREAD = SpreadObservation(spread="m", of=("off", "on"))


def test_a_ratio_of_seed_spreads_is_tested_on_its_log() -> None:
    wide = series(*[10.0 * (i % 2) - 5.0 + 0.1 * i for i in range(40)], label="off")
    narrow = series(*[1.0 * (i % 2) - 0.5 + 0.01 * i for i in range(40)], label="on")
    decision = evaluate(Above(above=1.0), SPREAD, Observed([wide, narrow], spread_ratio=True))
    assert decision.status == PASS and "sd(off) / sd(on)" in decision.reason
    few = Observed([series(1.0, 5.0, 3.0, label="off"), series(2.0, 4.0, 3.5, label="on")], spread_ratio=True)
    undecided = evaluate(Between(between=(1.5, 2.5)), SPREAD, few)
    assert undecided.status == INCONCLUSIVE
    se = math.sqrt(1 / 4 + 1 / 4)
    ratio = np.std([1.0, 5.0, 3.0], ddof=1) / np.std([2.0, 4.0, 3.5], ddof=1)
    (low, _) = undecided.evidence
    assert low.statistic == pytest.approx((math.log(ratio) - math.log(1.5)) / se)


# --- 9. a comparison of variants that measures nothing ---------------------------------------------

COMPARE_TWO = CompareObservation(compare="m", of=["a", "b"])


def test_a_metric_constant_across_the_compared_variants_is_not_measurable() -> None:
    """hasfl.table6.shakespeare.only-hasfl-degrades at smoke: drops of 0 against 0 on every seed were a FAIL."""
    flat = Observed([series(0.0, 0.0, 0.0, label="a"), series(0.0, 0.0, 0.0, label="b")])
    decision = evaluate(Order(order=["a", "b"]), COMPARE_TWO, flat)
    assert decision.status == SKIPPED
    assert decision.reason.startswith("not measurable at this scale: ")
    assert "0 on every one of 3 seeds" in decision.reason
    agreeing = evaluate(Above(above=0.0), DIFF, Observed([series(0.0, 0.0, 0.0)]))
    assert agreeing.status == SKIPPED and "variants agree exactly" in agreeing.reason
    both = evaluate(Above(above=0.5), MetricObservation(metric="m", of=["a", "b"]), flat)
    assert both.status == SKIPPED


def test_a_constant_that_is_the_claim_or_is_fixed_by_the_config_is_still_a_verdict() -> None:
    zeros = Observed([series(0.0, 0.0, 0.0)])
    assert evaluate(Equals(equals=0.0, of="every_seed"), DIFF, zeros).status == PASS  # 'equals 0' holds
    assert evaluate(NotAbove(not_above=0.0), DIFF, zeros).status == PASS  # so does 'not above'
    fixed = Observed([series(0.0, 0.0, label="a", deterministic=True), series(0.0, 0.0, label="b", deterministic=True)])
    assert evaluate(Order(order=["a", "b"]), COMPARE_TWO, fixed).status == FAIL
    assert evaluate(Below(below=1.0), METRIC, Observed([series(0.0, 0.0, 0.0)])).status == PASS  # no comparison
    varying = Observed([series(0.0, 0.0, 0.0, label="a"), series(0.0, 0.1, 0.0, label="b")])
    assert evaluate(Order(order=["a", "b"]), COMPARE_TWO, varying).status != SKIPPED


# --- 10. 'on every seed' of a metric that varies with the seed is a sign count ----------------------

def test_every_seed_on_the_claimed_side_is_a_sign_test() -> None:
    """'Guarantee off loses on every seed' on 4 of 4 seeds was a PASS; a sign test gives p = 0.0625."""
    every = Above(above=0.0, of="every_seed")
    four = evaluate(every, DIFF, Observed([series(2.0, 11.0, 7.5, 23.0)]))
    assert four.status == INCONCLUSIVE and "p = 0.5^4 = 0.0625" in four.reason
    assert four.power.needed == 5 and four.power.unit == "seeds"
    assert evaluate(every, DIFF, Observed([series(2.0, 11.0, 7.5, 23.0, 0.4)])).status == PASS  # p = 1/32
    assert evaluate(every, DIFF, Observed([series(2.0, 11.0, -0.1, 23.0, 0.4)])).status == FAIL
    assert evaluate(every.model_copy(update={"alpha": 0.01}), DIFF,
                    Observed([series(2.0, 11.0, 7.5, 23.0, 0.4)])).power.needed == 7
    assert evaluate(every, DIFF, Observed([series(2.0, 11.0, 7.5, deterministic=True)])).status == PASS


def test_every_seed_of_a_range_is_two_sign_counts_and_an_exact_value_is_read_directly() -> None:
    inside = Between(between=(0.0, 1.0), of="every_seed")
    assert evaluate(inside, METRIC, Observed([series(0.2, 0.5, 0.7)])).status == INCONCLUSIVE
    assert evaluate(inside, METRIC, Observed([series(0.2, 0.5, 0.7, 0.4, 0.9)])).status == PASS
    assert evaluate(Equals(equals=0.0, of="every_seed"), METRIC, Observed([series(0.0)])).status == PASS


def test_an_order_on_every_seed_is_a_sign_count_per_pair() -> None:
    expectation = Order(order=["a", "b"], of="every_seed")
    three = Observed([series(2.0, 3.0, 2.5, label="a"), series(1.0, 1.5, 2.0, label="b")])
    decision = evaluate(expectation, COMPARE_TWO, three)
    assert decision.status == INCONCLUSIVE and decision.power.needed == 5
    five = Observed([series(2.0, 3.0, 2.5, 4.0, 5.0, label="a"), series(1.0, 1.5, 2.0, 3.0, 4.0, label="b")])
    assert evaluate(expectation, COMPARE_TWO, five).status == PASS


def test_not_above_on_every_seed_fails_only_when_the_seeds_beyond_are_significant() -> None:
    expectation = NotAbove(not_above=0.0, of="every_seed")
    one_above = evaluate(expectation, DIFF, Observed([series(-1.0, 0.3, -0.5, -0.2, -0.8)]))
    assert one_above.status == PASS and one_above.power.needed is None
    assert evaluate(expectation, DIFF, Observed([series(1.0, 0.3, 0.5, 0.2, 0.8)])).status == FAIL


# --- 11. every_seed correlations: Holm across the seeds for a miss ---------------------------------

def _correlation_against(p_above: float, n: int = 40) -> correlation_estimates.Correlation:
    """A correlation whose one-sided p of lying above 0 is `p_above`."""
    return _correlation_with_z_statistic(float(scipy_stats.norm.isf(p_above)), n)


def test_one_seed_missing_at_p_004_of_five_is_not_a_fail() -> None:
    below = Below(below=0.0, of="every_seed")
    clear = [_correlation_against(0.99999) for _ in range(4)]  # each far below 0
    decision = evaluate(below, CORRELATION, correlations(*clear, _correlation_against(0.04)))
    assert decision.status == INCONCLUSIVE and "Holm's step-down over the 5 seeds" in decision.reason
    assert "p = 0.04 against 0.01" in decision.reason
    assert evaluate(below, CORRELATION, correlations(*clear, _correlation_against(0.001))).status == FAIL


def test_every_seed_correlations_keep_their_false_fail_rate() -> None:
    """r at the bound on every one of 5 seeds: with each seed's miss tested at α, a FAIL came 1 − 0.95⁵ = 23%
    of the time; Holm across the seeds keeps it at about α."""
    rng = np.random.default_rng(5)
    below = Below(below=0.0, of="every_seed")
    trials, fails = 300, 0
    for _ in range(trials):
        per_seed = [_correlation_with_z_statistic(z) for z in rng.normal(0.0, 1.0, size=5)]
        fails += evaluate(below, CORRELATION, correlations(*per_seed)).status == FAIL
    assert fails / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


# --- 12. every INCONCLUSIVE says what would decide it ----------------------------------------------

def _above_verdict(claim: str, values: tuple[float, ...]) -> Verdict:
    decision = evaluate(Above(above=0.0), DIFF, Observed([series(*values)]))
    verdict = Verdict(claim, "p", "standard", "e", "§", "a statement", "above 0", decision.status, "")
    verdict.family = "f"
    _record_decision(verdict, decision)
    return verdict


def test_a_family_member_left_inconclusive_gets_seeds_at_holms_level() -> None:
    """fedrolex.participation.10pct at standard: a PASS that Holm made INCONCLUSIVE had no power figure."""
    marginal = (0.9, 0.0, 0.6, 1.2, 0.0)  # one-sided p ≈ 0.044: a PASS at α, not at Holm's α / 2 for its rank
    p_marginal = scipy_stats.ttest_1samp(marginal, 0.0, alternative="greater").pvalue
    assert 0.05 / 2 < p_marginal < 0.05
    members = [_above_verdict("f.strong", (5.0, 5.2, 4.9, 5.1, 5.0)), _above_verdict("f.marginal", marginal),
               _above_verdict("f.weak", (0.5, -0.4, 0.2, -0.1, 0.3))]
    assert [m.status for m in members] == [PASS, PASS, INCONCLUSIVE]
    apply_families(members, lambda v: 0.05)
    made, left = members[1], members[2]
    assert made.status == INCONCLUSIVE and "PASS → INCONCLUSIVE" in made.reason
    expected = power.t_power(list(marginal), float(np.mean(marginal)), 0.025)
    assert made.power["needed"] == expected.needed and "power at α = 0.025" in made.reason
    assert left.status == INCONCLUSIVE and left.power["needed"] is not None
    weak = (0.5, -0.4, 0.2, -0.1, 0.3)
    assert left.power["needed"] == power.t_power(list(weak), float(np.mean(weak)), 0.05).needed
    assert "its rank's level" in left.reason and left.reason.count(" — power: ") == 0


def test_a_family_member_the_step_down_does_not_reach_has_finite_margins() -> None:
    """A member tested at level 0 (a claim ranked before it was not rejected) is moved by no
    statistic at that level; its margins are read at its rank's level, so a regression check can
    tell a move of it near its boundary from a far one (before: infinite, 'decided without a spread')."""
    members = [_above_verdict("f.marginal", (0.9, 0.0, 0.6, 1.2, 0.0)),
               _above_verdict("f.weak", (0.5, -0.4, 0.2, -0.1, 0.3))]
    apply_families(members, lambda v: 0.05)
    unreached = members[1]
    assert "not tested: a claim ranked before it was not rejected" in unreached.reason
    assert unreached.margins and all(math.isfinite(d) for d in unreached.margins.values())
    assert "rank's level" in unreached.margin and "without a spread" not in unreached.margin


def test_inconclusives_without_a_test_say_what_would_decide_them() -> None:
    nan = evaluate(Above(above=0.0), METRIC, Observed([series(1.0, math.nan, 2.0)]))
    assert nan.status == INCONCLUSIVE and nan.power is not None and "not a number" in nan.power.note
    undefined = correlation_estimates.Correlation(math.nan, math.nan, math.nan, math.nan, 3, undefined="3 clients")
    decision = evaluate(Below(below=0.0), CORRELATION, correlations(undefined))
    assert decision.status == INCONCLUSIVE and decision.power is not None and decision.power.needed is None
    both_infinite = evaluate(Above(above=0.0), METRIC, Observed([series(math.inf, -math.inf)]))
    assert both_infinite.status == INCONCLUSIVE and both_infinite.power is not None
