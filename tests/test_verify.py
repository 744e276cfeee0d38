"""Every expectation type on synthetic observations, and the correlation statistics."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from harness import stats
from harness.observe import Observed, Series
from harness.schema import claim as s
from harness.verify import FAIL, INCONCLUSIVE, PASS, describe, evaluate

METRIC = s.MetricObservation(metric="m", of="a")
TWO = s.MetricObservation(metric="m", of=["a", "b"])
DIFF = s.DifferenceObservation(difference="m", of=("a", "b"))
COMPARE = s.CompareObservation(compare="m", of=["a", "b", "c"])


def series(*values: float, label: str = "a") -> Series:
    return Series(label, dict(enumerate(values)))


def one(*values: float) -> Observed:
    return Observed([series(*values)])


def status(expectation, observed: Observed, obs=METRIC) -> str:
    return evaluate(expectation, obs, observed, {})[0]


# --- between / approx / equals: the mean meets it, but no single seed does ----------------

SPLIT = (0.25, 0.75)  # mean exactly 0.5, each seed 0.25 away


@pytest.mark.parametrize("expectation", [
    s.Between(between=(0.4, 0.6)),
    s.Approx(approx=0.5, tolerance=0.1),
    s.Approx(approx=0.5, relative_tolerance=0.2),
    s.Equals(equals=0.5),
    s.Equals(equals=0.5, tolerance=0.01),
], ids=["between", "approx-abs", "approx-rel", "equals-exact", "equals-tol"])
def test_value_tests_of_mean_and_every_seed(expectation) -> None:
    assert status(expectation, one(*SPLIT)) == PASS
    every = expectation.model_copy(update={"of": "every_seed"})
    result, reason = evaluate(every, METRIC, one(*SPLIT), {})
    assert result == FAIL and "2 of 2 seeds miss it" in reason
    assert status(every, one(0.5, 0.5, 0.5)) == PASS
    assert status(expectation, one(0.9, 0.95)) == FAIL
    assert status(every, one(0.5, 0.95)) == FAIL


def test_between_is_inclusive_and_approx_edges() -> None:
    assert status(s.Between(between=(0.25, 0.75), of="every_seed"), one(*SPLIT)) == PASS
    assert status(s.Approx(approx=2.0, relative_tolerance=0.1), one(2.19)) == PASS
    assert status(s.Approx(approx=2.0, relative_tolerance=0.1), one(2.21)) == FAIL
    assert status(s.Equals(equals=0.25), one(0.25 + 1e-15)) == FAIL


def test_several_series_take_the_worst_status() -> None:
    observed = Observed([series(0.5, label="a"), series(0.9, label="b")])
    result, reason = evaluate(s.Between(between=(0.4, 0.6)), TWO, observed, {})
    assert result == FAIL
    assert "a: mean 0.5 meets it" in reason and "b: mean 0.9 misses it" in reason


# --- below / above: one-sided t-tests --------------------------------------------------

LOW = (0.10, 0.12, 0.09, 0.11, 0.10)
HIGH = (0.90, 0.92, 0.88, 0.91, 0.89)
STRADDLE = (0.30, 0.70, 0.45, 0.60, 0.50)


@pytest.mark.parametrize("values, below, above", [
    (LOW, PASS, FAIL),
    (HIGH, FAIL, PASS),
    (STRADDLE, INCONCLUSIVE, INCONCLUSIVE),
], ids=["clearly-low", "clearly-high", "straddling"])
def test_below_and_above(values, below, above) -> None:
    result, reason = evaluate(s.Below(below=0.5), METRIC, one(*values), {})
    assert result == below and "one-sided p" in reason
    assert status(s.Above(above=0.5), one(*values)) == above


def test_one_sided_p_values_and_alpha() -> None:
    outcome, p = stats.one_sided(list(LOW), 0.5, "less", 0.05)
    assert outcome == "pass" and p < 1e-6
    assert p == pytest.approx(scipy_stats.ttest_1samp(LOW, 0.5, alternative="less").pvalue)
    # A marginal sample passes at a loose alpha and is undecided at a strict one.
    marginal = [0.40, 0.55, 0.42, 0.47, 0.44]
    p_marginal = scipy_stats.ttest_1samp(marginal, 0.5, alternative="less").pvalue
    assert 0.01 < p_marginal < 0.2
    assert status(s.Below(below=0.5, alpha=0.25), one(*marginal)) == PASS
    assert status(s.Below(below=0.5, alpha=0.01), one(*marginal)) == INCONCLUSIVE


def test_below_without_spread_compares_directly() -> None:
    assert status(s.Below(below=0.5), one(0.3, 0.3, 0.3)) == PASS
    assert status(s.Below(below=0.5), one(0.5)) == FAIL
    assert status(s.Above(above=0.5), one(0.7)) == PASS
    assert status(s.Below(below=0.5, of="every_seed"), one(0.1, 0.2, 0.6)) == FAIL
    assert status(s.Below(below=0.5, of="every_seed"), one(0.1, 0.2, 0.4)) == PASS


# --- order ---------------------------------------------------------------------------------

def _three(a, b, c) -> Observed:
    return Observed([series(*a, label="a"), series(*b, label="b"), series(*c, label="c")])


def test_order_pass_and_fail() -> None:
    observed = _three((2.0, 2.2), (1.0, 1.1), (3.0, 3.1))
    assert status(s.Order(order=["c", "a", "b"]), observed, COMPARE) == PASS
    result, reason = evaluate(s.Order(order=["a", "c", "b"]), COMPARE, observed, {})
    assert result == FAIL and "a" in reason and "is not above c" in reason


def test_order_every_seed_names_the_seed() -> None:
    observed = _three((2.0, 5.0), (1.0, 1.0), (3.0, 3.0))  # means c 3 < a 3.5, seed 0 has c > a
    assert status(s.Order(order=["a", "c", "b"]), observed, COMPARE) == PASS
    result, reason = evaluate(s.Order(order=["a", "c", "b"], of="every_seed"), COMPARE, observed, {})
    assert result == FAIL and "seeds [0]" in reason


# --- equivalence (TOST) and within_spread ---------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    ((0.01, -0.01, 0.005, -0.004, 0.002), PASS),
    ((1.0, 1.1, 0.9, 1.05), FAIL),
    ((-0.5, 0.5, 0.3, -0.2), INCONCLUSIVE),
    ((0.02,), INCONCLUSIVE),
], ids=["tight", "far", "wide", "one-seed"])
def test_equivalence(values, expected) -> None:
    assert status(s.Equivalent(equivalent_within=0.1), Observed([series(*values)]), DIFF) == expected


def test_within_spread() -> None:
    spread = series(1.0, 1.5, 0.5, label="b")  # std 0.5
    expectation = s.WithinSpread(within_spread_of="b")
    result, reason = evaluate(expectation, DIFF, Observed([series(0.01, -0.02, 0.015)], spread), {})
    assert result == PASS and "< seed std of b 0.5" in reason
    assert status(expectation, Observed([series(1.0, 1.1, 0.9)], spread), DIFF) == FAIL
    assert status(expectation, Observed([series(0.1)], series(1.0, label="b")), DIFF) == INCONCLUSIVE


# --- non-finite values -------------------------------------------------------------------------

@pytest.mark.parametrize("expectation", [
    s.Between(between=(0.0, 1.0)), s.Between(between=(0.0, 1.0), of="every_seed"),
    s.Approx(approx=0.5, tolerance=1.0), s.Equals(equals=0.5, tolerance=1.0),
    s.Below(below=1.0), s.Above(above=0.0), s.Below(below=1.0, of="every_seed"),
], ids=lambda e: describe(e))
def test_nan_is_inconclusive(expectation) -> None:
    result, reason = evaluate(expectation, METRIC, one(0.5, math.nan, 0.5), {})
    assert result == INCONCLUSIVE and "not a number on seeds [1]" in reason


def test_nan_in_a_difference_is_inconclusive_for_equivalence() -> None:
    assert status(s.Equivalent(equivalent_within=1.0), one(math.nan, 0.0, 0.1), DIFF) == INCONCLUSIVE


def test_nan_in_order_is_inconclusive() -> None:
    observed = _three((math.nan, 2.0), (1.0, 1.0), (0.0, 0.0))
    assert status(s.Order(order=["a", "b", "c"]), observed, COMPARE) == INCONCLUSIVE


def test_nan_in_within_spread_is_inconclusive() -> None:
    observed = Observed([series(math.nan, 0.0)], series(1.0, 3.0, label="b"))
    assert status(s.WithinSpread(within_spread_of="b"), observed, DIFF) == INCONCLUSIVE


@pytest.mark.parametrize("expectation", [s.Between(between=(0.0, 10.0)), s.Below(below=10.0)],
                         ids=["between", "below"])
def test_infinite_value_on_a_later_seed_is_not_ignored(expectation) -> None:
    assert status(expectation, one(5.0, math.inf)) != PASS


def test_all_infinite_fails_a_finite_range() -> None:
    assert status(s.Between(between=(0.0, 10.0)), one(math.inf, math.inf)) == FAIL
    assert status(s.Above(above=1.5), one(math.inf)) == PASS


# --- correlation statistics ------------------------------------------------------------------

def _textbook_partial(x, y, z) -> float:
    r = np.corrcoef([x, y, z])
    rxy, rxz, ryz = r[0, 1], r[0, 2], r[1, 2]
    return (rxy - rxz * ryz) / math.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partial_correlation_matches_textbook_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=60)
    x = 0.8 * z + rng.normal(size=60)
    y = -0.5 * z + 0.4 * x + rng.normal(size=60)
    partial = stats.correlation(list(x), list(y), given=list(z))
    assert partial.r == pytest.approx(_textbook_partial(x, y, z), abs=1e-10)
    assert partial.n == 60
    assert partial.low < partial.r < partial.high
    assert -1 <= partial.low and partial.high <= 1
    plain = stats.correlation(list(x), list(y))
    assert plain.r == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    assert plain.low < plain.r < plain.high
    assert plain.p_value == pytest.approx(scipy_stats.pearsonr(x, y).pvalue)
    # Fisher z: half-width 1.96 / sqrt(n - 3) on the z scale.
    assert math.atanh(plain.high) - math.atanh(plain.r) == pytest.approx(1.959964 / math.sqrt(57), rel=1e-5)


def test_spearman_and_non_finite_rows() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = np.exp(x) + 0.1 * rng.normal(size=40)
    spearman = stats.correlation(list(x), list(y), method="spearman")
    assert spearman.r == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=1e-12)
    with_nan = stats.correlation([*x, math.nan], [*y, 1.0], method="spearman")
    assert with_nan.n == 40 and with_nan.r == pytest.approx(spearman.r)


def test_correlation_of_too_few_or_constant_values_is_nan() -> None:
    assert math.isnan(stats.correlation([1.0, 2.0, 3.0], [2.0, 1.0, 3.0]).r)
    assert math.isnan(stats.correlation([1.0] * 10, list(range(10))).r)
    observed = Observed([Series("r", {0: math.nan})])
    assert status(s.Below(below=0.0), observed) == INCONCLUSIVE


def test_not_above_fails_only_when_significantly_above() -> None:
    assert status(s.NotAbove(not_above=0.0), one(-0.9, -2.7, 0.3)) == PASS      # worse, or no better
    assert status(s.NotAbove(not_above=0.0), one(0.5, -0.4, 0.2)) == PASS       # not significant
    assert status(s.NotAbove(not_above=0.0), one(5.0, 5.2, 4.9)) == FAIL        # clearly better
    assert status(s.NotBelow(not_below=0.0), one(-5.0, -5.2, -4.9)) == FAIL
    assert status(s.NotAbove(not_above=1.0), one(1.0)) == PASS                  # deterministic: compared directly
