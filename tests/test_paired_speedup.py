"""The training benchmark's paired speed-up: its interval and when it calls a row faster or slower."""
from __future__ import annotations

import math

import pytest

from benchmarks.paired import PairedSpeedup, speed_verdict


def _pairs(ratios: list[float]) -> PairedSpeedup:
    return PairedSpeedup.of([r * 2.0 for r in ratios], [2.0] * len(ratios))


def test_the_interval_is_the_medians_order_statistics() -> None:
    ratios = [0.90 + 0.01 * k for k in range(15)]
    speedup = _pairs(ratios[::-1])
    assert speedup.median == pytest.approx(0.97)
    # n = 15: the 4th and 12th smallest ratios hold the median with 96.5% probability.
    assert (speedup.low, speedup.high) == (pytest.approx(ratios[3]), pytest.approx(ratios[11]))
    assert speedup.pairs == 15


def test_one_pair_has_no_interval() -> None:
    speedup = _pairs([1.2])
    assert math.isnan(speedup.low) and not speedup.resolved
    assert speed_verdict(speedup, _pairs([1.0] * 15)).startswith("not resolved")


def test_unequal_rounds_are_refused() -> None:
    with pytest.raises(ValueError, match="as many reference rounds"):
        PairedSpeedup.of([1.0, 1.0], [1.0])


def test_a_row_is_slower_only_below_one_and_below_its_control() -> None:
    control = _pairs([0.99 + 0.002 * k for k in range(15)])      # identical code: about 1.00
    assert speed_verdict(_pairs([0.95 + 0.001 * k for k in range(15)]), control) == "slower"
    assert speed_verdict(_pairs([1.05 + 0.001 * k for k in range(15)]), control) == "faster"


def test_a_gap_that_identical_code_also_shows_is_not_resolved() -> None:
    control = _pairs([0.96 + 0.002 * k for k in range(15)])      # the session splits identical code by 3%
    verdict = speed_verdict(_pairs([0.97 + 0.001 * k for k in range(15)]), control)
    assert verdict.startswith("no difference resolved: identical code measured 0.974 [0.966, 0.982]")
    assert verdict.endswith("slower needs the interval below 0.966, faster above 1.000")


def test_without_a_control_nothing_is_called() -> None:
    assert speed_verdict(_pairs([0.9] * 15), None) == "not resolved: no control measured in this session"
