"""An undecided verdict's power figures (`harness.statistics.power`) against statsmodels' solver, which computed
them before (a reference run in the same session; statsmodels is a test dependency).

Each round computes the figures of a t-test (`spread_power`) and of a Fisher z over clients (`fisher_power`) for
a grid of observed effects at n = 5, as every undecided mean, paired difference or correlation does.
`extra_info.ratio_to_statsmodels` is fedclaims' time over the reference's; the test also checks that both
give the same seeds needed and the same detectable effect (to 1e-5: statsmodels' root finder stops within
about 3e-6 of the closed form), where statsmodels' solver converges.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower, TTestPower

from harness.statistics.power import POWER, fisher_power, spread_power

pytestmark = pytest.mark.benchmarks

SEEDS, ALPHA, CLIENTS = 5, 0.05, 20


def _ceil(solution: float) -> int | None:
    return None if not math.isfinite(solution) or solution > 1000 else max(2, math.ceil(solution - 1e-9))


def _solve(solver, **arguments) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(solver.solve_power(**arguments))
        except (ValueError, RuntimeError, ArithmeticError):
            return math.nan


def _statsmodels_t(effect: float) -> tuple[float, int | None]:
    solver = TTestPower()
    detectable = _solve(solver, nobs=SEEDS, alpha=ALPHA, power=POWER, alternative="larger")
    if solver.power(effect_size=effect, nobs=2, alpha=ALPHA, alternative="larger") >= POWER:
        return detectable, 2
    return detectable, _ceil(_solve(solver, effect_size=effect, alpha=ALPHA, power=POWER, alternative="larger"))


def _statsmodels_z(effect: float) -> tuple[float, int | None]:
    solver = NormalIndPower()
    detectable = _solve(solver, nobs1=CLIENTS, alpha=ALPHA, power=POWER, ratio=0.0, alternative="larger")
    return detectable, _ceil(_solve(solver, effect_size=effect, alpha=ALPHA, power=POWER, ratio=0.0,
                                    alternative="larger"))


def _fedclaims_t(effect: float) -> tuple[float, int | None]:
    power = spread_power(1.0, SEEDS, effect, ALPHA)
    return power.detectable, power.needed


def _fedclaims_z(effect: float) -> tuple[float, int | None]:
    power = fisher_power(effect, 0.0, CLIENTS, 1.0, "clients", ALPHA)  # a z of `effect` against r = 0, unit variance
    return math.atanh(power.detectable), power.needed


@pytest.fixture(scope="module")
def effects(bench_scale) -> np.ndarray:
    return np.geomspace(0.05, 1.5, bench_scale.pick(20, 200))


@pytest.fixture(scope="module")
def reference_seconds() -> dict[str, float]:
    return {}


CASES = {"t-test": (_statsmodels_t, _fedclaims_t), "Fisher z": (_statsmodels_z, _fedclaims_z)}


@pytest.mark.parametrize("implementation", ["statsmodels", "fedclaims"])
@pytest.mark.parametrize("case", list(CASES))
def test_power_figures(benchmark, bench_scale, effects, reference_seconds, case: str, implementation: str) -> None:
    benchmark.group = f"power figures of an undecided verdict: {case}"
    figures = CASES[case][implementation == "fedclaims"]
    results = bench_scale.run(benchmark, lambda: [figures(float(effect)) for effect in effects])
    seconds = benchmark.stats.stats.min
    if implementation == "statsmodels":
        reference_seconds[case] = seconds
        benchmark.extra_info["role"] = "reference"
        return
    benchmark.extra_info["ratio_to_statsmodels"] = round(seconds / reference_seconds[case], 4)
    expected = [CASES[case][0](float(effect)) for effect in effects]
    for effect, (detectable, needed), (reference_detectable, reference_needed) in zip(effects, results, expected):
        assert detectable == pytest.approx(reference_detectable, rel=1e-5), effect  # statsmodels solves to ~1e-6
        if reference_needed is not None or needed != 2:  # statsmodels' z solver fails below 2.5 units: NaN
            assert needed == reference_needed, (effect, needed, reference_needed)
