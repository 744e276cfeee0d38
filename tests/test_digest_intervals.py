"""The digest's intervals say their level: a pooled correlation's interval is shown at the level its
test reads it (beside the recorded, descriptive 95% one), or labelled descriptive where the test reads
each seed on its own."""
from __future__ import annotations

import re

import numpy as np
import pytest

from harness.report.digest import pooled_text
from harness.statistics.correlation_estimates import correlation, pooled_correlation


def _pool(seeds: int):
    rng = np.random.default_rng(7)
    runs = []
    for _ in range(seeds):
        x = rng.normal(size=20)
        runs.append(correlation(x, -0.8 * x + 0.6 * rng.normal(size=20)))
    return pooled_correlation(runs)


@pytest.mark.parametrize("alpha", [0.035, 0.00309])
def test_the_tested_interval_is_the_pools_interval_at_the_tests_level(alpha: float) -> None:
    pool = _pool(7)
    recorded = {"r": pool.r, "low": pool.low, "high": pool.high}  # as Series.numbers records it
    text = pooled_text(recorded, 7, alpha)
    low, high = pool.interval(1 - 2 * alpha)
    assert f"{1 - 2 * alpha:.1%} [{low:+.2f}, {high:+.2f}] as tested" in text
    assert f"(95% [{pool.low:+.2f}, {pool.high:+.2f}])" in text
    wider = 1 - 2 * alpha > 0.95
    assert (low < pool.low, high > pool.high) == (wider, wider)  # 93% narrower than 95%, 99.4% wider


def test_an_interval_no_test_reads_is_labelled_descriptive() -> None:
    pool = _pool(4)
    text = pooled_text({"r": pool.r, "low": pool.low, "high": pool.high}, 4, None)
    assert re.fullmatch(r"pooled r [+-]\d\.\d\d, descriptive 95% \[[+-]\d\.\d\d, [+-]\d\.\d\d\]", text)
