"""Verdicts read from their comparisons: status, margins to the other verdicts, deciding p-values."""
from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from harness.schema.expectations.bounds import Below
from harness.schema.observations.metric import MetricObservation
from harness.statistics.evidence import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Evidence,
    combine,
    decided,
    deciding_p,
    holm_levels,
    margins,
)
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import evaluate

METRIC = MetricObservation(metric="m", of="a")


def test_one_sided_comparison_status_and_margins() -> None:
    critical = scipy_stats.t.isf(0.05, 4)
    passing = Evidence("a", critical + 1.5, 4, 0.05, 0.05)
    assert combine([passing]) == PASS
    assert margins([passing]) == pytest.approx({INCONCLUSIVE: 1.5, FAIL: 2 * critical + 1.5})
    undecided = Evidence("a", 0.5, 4, 0.05, 0.05)
    assert combine([undecided]) == INCONCLUSIVE
    assert margins([undecided]) == pytest.approx({PASS: critical - 0.5, FAIL: critical + 0.5})
    failing = Evidence("a", -critical - 0.25, 4, 0.05, 0.05)
    assert combine([failing]) == FAIL and margins([failing])[INCONCLUSIVE] == pytest.approx(0.25)


def test_not_above_has_no_middle_verdict() -> None:
    critical = scipy_stats.t.isf(0.05, 4)
    evidence = Evidence("a", -critical + 0.4, 4, None, 0.05)  # not significantly above, 0.4 SE from it
    assert combine([evidence]) == PASS and margins([evidence]) == pytest.approx({FAIL: 0.4})


def test_every_comparison_must_pass_and_any_may_fail() -> None:
    a, b = Evidence("a", 5.0, None, 0.05, 0.05), Evidence("b", 1.0, None, 0.05, 0.05)
    assert combine([a, b]) == INCONCLUSIVE
    assert margins([a, b])[PASS] == pytest.approx(scipy_stats.norm.isf(0.05) - 1.0)
    assert combine([a, Evidence("c", -3.0, None, 0.05, 0.05)]) == FAIL


def test_decided_without_spread_cannot_be_moved() -> None:
    assert set(margins([decided("a", True)]).values()) == {math.inf}
    assert deciding_p([decided("a", True)]) is None


def test_deciding_p_value_is_the_weakest_pass() -> None:
    evidence = [Evidence("a", 4.0, None, 0.05, 0.05), Evidence("b", 2.0, None, 0.05, 0.05)]
    text, p = deciding_p(evidence)
    assert p == pytest.approx(scipy_stats.norm.sf(2.0)) and "α = 0.05" in text


def test_holm_levels_stop_at_the_first_non_rejection() -> None:
    assert holm_levels([0.001, 0.04, 0.02], 0.05) == pytest.approx([0.05 / 3, 0.05, 0.05 / 2])
    assert holm_levels([0.03, 0.2, 0.5], 0.05) == pytest.approx([0.05 / 3, 0.0, 0.0])


def test_margins_match_the_decision_of_a_mean_test() -> None:
    """The statistics a decision records reproduce its verdict, and their margin is in SE units."""
    values = (0.10, 0.12, 0.09, 0.11, 0.10)
    decision = evaluate(Below(below=0.5), METRIC, Observed([Series("a", dict(enumerate(values)))]))
    assert decision.status == combine(decision.evidence) == PASS
    t = scipy_stats.ttest_1samp(values, 0.5).statistic
    (evidence,) = decision.evidence
    assert evidence.statistic == pytest.approx(-t)
    assert margins(decision.evidence)[INCONCLUSIVE] == pytest.approx(-t - scipy_stats.t.isf(0.05, 4))
