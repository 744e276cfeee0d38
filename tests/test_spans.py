"""A range that is the span of the paper's own k runs, read as such a span reads: a run of the same method
falls outside it with probability 2/(k + 1), and the count of our seeds outside is beta-binomial, all of
them meeting the same k runs (`harness.statistics.spans`)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.schema.expectations.between import Between
from harness.statistics.series import Observed, Series
from harness.statistics.spans import fewest_seeds_to_contradict, more_outside_p, outside_probability, span_reading
from harness.verdicts.spans import span_readings

SIMULATIONS = 40_000


def _outside_counts(runs: int, seeds: int, rng: np.random.Generator) -> np.ndarray:
    """Of `seeds` further draws, how many fall outside the span of `runs` draws, all from one distribution."""
    paper = rng.normal(size=(SIMULATIONS, runs))
    ours = rng.normal(size=(SIMULATIONS, seeds))
    low, high = paper.min(axis=1, keepdims=True), paper.max(axis=1, keepdims=True)
    return ((ours < low) | (ours > high)).sum(axis=1)


def test_one_more_run_falls_outside_the_span_with_probability_two_over_k_plus_one() -> None:
    counts = _outside_counts(3, 1, np.random.default_rng(1))
    assert counts.mean() == pytest.approx(outside_probability(3), abs=4 * math.sqrt(0.25 / SIMULATIONS))
    # The chance that all m further runs fall inside: k(k − 1)/((k + m)(k + m − 1)), 0.14 for 4 against 3.
    assert 1 - more_outside_p(1, 4, 3) == pytest.approx(3 * 2 / (7 * 6))


@pytest.mark.parametrize(("runs", "seeds", "alpha"), [(3, 7, 0.035), (6, 10, 0.035), (3, 4, 0.05), (6, 5, 0.00309)])
def test_a_faithful_reproduction_is_read_as_contradicting_the_span_at_most_alpha_of_the_time(runs, seeds,
                                                                                             alpha) -> None:
    counts = _outside_counts(runs, seeds, np.random.default_rng(runs * 100 + seeds))
    p = np.array([more_outside_p(int(c), seeds, runs) for c in range(seeds + 1)])[counts]
    margin = stats.norm.isf(0.005) * math.sqrt(alpha * (1 - alpha) / SIMULATIONS)
    assert (p <= alpha).mean() <= alpha + margin


def test_a_binomial_test_of_the_share_outside_would_not_keep_its_level() -> None:
    """Why the count is read as beta-binomial: with 3 paper runs and 7 of ours, a binomial test at 0.035
    rejects a faithful reproduction about twice as often as 0.035 (0.068)."""
    runs, seeds, alpha = 3, 7, 0.035
    counts = _outside_counts(runs, seeds, np.random.default_rng(5))
    binomial = stats.binom.sf(counts - 1, seeds, outside_probability(runs))
    assert (binomial <= alpha).mean() > 1.5 * alpha


def test_the_reading_names_the_seeds_outside_and_what_the_span_predicts() -> None:
    values = {0: 0.59, 1: 0.5588, 2: 0.604, 3: 0.581, 4: 0.536, 5: 0.6925, 6: 0.628}
    reading = span_reading(values, 0.575, 0.695, 3, 0.035)
    assert sorted(reading.outside) == [1, 4] and reading.p == pytest.approx(more_outside_p(2, 7, 3))
    assert not reading.contradicts and "2 of 7 seeds outside (s1 = 0.5588, s4 = 0.536)" in reading.text()
    assert "2/(k + 1) = 0.5" in reading.text()
    # Three runs span a range no 7 seeds can contradict at 0.035: all 7 outside has p = 6/(9·10) = 0.067.
    assert "that takes 11 seeds all outside" in reading.text() and fewest_seeds_to_contradict(3, 0.035) == 11
    assert more_outside_p(7, 7, 3) == pytest.approx(6 / 90) and more_outside_p(11, 11, 3) <= 0.035
    far = span_reading({seed: 0.9 for seed in range(11)}, 0.575, 0.695, 3, 0.035)
    assert far.contradicts and "more of ours outside than the paper's runs predict" in far.text()


def test_a_range_states_the_runs_it_spans_and_its_verdict_carries_the_reading() -> None:
    with pytest.raises(ValueError, match="span_of_runs"):
        Between.model_validate({"between": [0.5, 0.7], "span_of_runs": 1})
    expectation = Between.model_validate({"between": [0.575, 0.695], "span_of_runs": 3}).at_level(0.035)
    observed = Observed([Series("max", {0: 0.59, 1: 0.5588, 2: 0.604, 3: 0.581})])
    (reading,) = span_readings(expectation, observed)
    assert (reading["kind"], reading["runs"], reading["outside"], reading["status"]) == (
        "span-of-runs", 3, [1], "INCONCLUSIVE")
    assert span_readings(Between.model_validate({"between": [0.575, 0.695]}), observed) == []
