"""The seeds a confirmatory test of a pooled correlation's range needs: simulated with the project's own test.

Each simulated run measures its correlation as a run does, over its clients (a partial correlation on c controls
over n clients as a plain one over n − c), drawn bivariate normal with the run's true correlation
tanh(atanh(ρ) + τ·N(0, 1)); the seeds are pooled and decided by `harness.verdicts.verify.evaluate`, so the bias
correction, the random-effects pool and the Hartung-Knapp interval are the verdict's own. The chance counted is
that of the verdict the stated ρ implies: PASS for a ρ inside the range, FAIL for one outside it."""
from __future__ import annotations

import math

import numpy as np

from harness.design.seed_counts import fewest_seeds
from harness.statistics.correlation_estimates import Correlation
from harness.statistics.outcome import FAIL, PASS
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import evaluate

TRIALS = 2000
"""Simulated tests per number of seeds: the chance's standard error is at most 0.011 (0.009 at 0.8)."""
MAX_SIMULATED = 200
"""Beyond this many seeds the search stops (it would cost hours of simulation for figures no budget buys)."""


def _runs(rng: np.random.Generator, rho: float, tau: float, samples: int, seeds: int) -> np.ndarray:
    truth = np.tanh(math.atanh(rho) + tau * rng.standard_normal((TRIALS, seeds)))[..., None]
    x = rng.standard_normal((TRIALS, seeds, samples))
    y = truth * x + np.sqrt(1.0 - truth ** 2) * rng.standard_normal((TRIALS, seeds, samples))
    x, y = x - x.mean(axis=-1, keepdims=True), y - y.mean(axis=-1, keepdims=True)
    return np.sum(x * y, axis=-1) / np.sqrt(np.sum(x * x, axis=-1) * np.sum(y * y, axis=-1))


def decided_chance(expectation, obs, rho: float, tau: float, clients: int, controls: int, seeds: int,
                   rng_seed: int = 0) -> float:
    """P(the verdict ρ implies) of the expectation's test over `seeds` runs of `clients` clients."""
    admitted = expectation.admitted()
    wanted = PASS if admitted is not None and admitted.holds(rho) else FAIL
    rs = _runs(np.random.default_rng(rng_seed + seeds), rho, tau, clients - controls, seeds)
    hits = 0
    for trial in rs:
        per_seed = {i: Correlation(float(r), math.nan, math.nan, math.nan, clients, controls)
                    for i, r in enumerate(trial)}
        observed = Observed([Series("r", {i: c.r for i, c in per_seed.items()}, correlations=per_seed)])
        hits += evaluate(expectation, obs, observed).status == wanted
    return hits / TRIALS


def seeds_for(expectation, obs, rho: float, tau: float, clients: int, controls: int, target: float) -> int | None:
    """The fewest seeds (≤ MAX_SIMULATED) at which `decided_chance` reaches `target`, by bisection (the chance
    grows with seeds); None where MAX_SIMULATED do not reach it."""
    return fewest_seeds(lambda seeds: decided_chance(expectation, obs, rho, tau, clients, controls, seeds) >= target,
                        2, MAX_SIMULATED)
