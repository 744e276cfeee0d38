"""The group-sequential boundary: each planned look's nominal level α_j, the profile's own verdict
being look 1, calibrated on the looks' t statistics.

One α per claim, whatever the path. The verdict at a profile's seeds (n_1, the fixed-n verdict every
report shows) is the first look of the plan that `--until-decided` continues: it tests at
α_1 = `PROFILE_SHARE` · α, and the seeds added later spend the rest, α − α_1, by an O'Brien-Fleming-type
(Lan-DeMets) function of the added seeds' information fraction e_j = (n_j − n_1) / (n_max − n_1):

    α(look j) = α_1 + s(e_j),   s(e) = 2 − 2 Φ(z_{1−(α−α_1)/2} / √e),   s(1) = α − α_1,

the α allowed to be spent by look j. So the chance of a false PASS (or a false FAIL) of "run the profile,
then add seeds until decided" is α, and a claim decided on the profile's seeds keeps that verdict: look 1's
level does not depend on how many seeds a later invocation may add. The share is a design choice, made
from the power of a one-sided t-test at a 0.5-SD effect (simulated, α = 0.05, 5 → 10 seeds): a fixed-n
look at 0.035 keeps 0.18 of the 0.24 a fixed-n test at α has, and the plan reaches 0.34 by 10 seeds;
O'Brien-Fleming over all the looks (the fixed-n look at 0.0056) reaches 0.39 but leaves the profile's
own verdict 0.04; and 0.7 α ≥ 0.5^5 keeps a 5-seed sign count decidable at the profile (`plan_power`
computes these figures for any plan).

What is calibrated, and how. The looks are those of a one-sided one-sample t-test whose data
grow one seed per look: look j reads n_j = n_1 + (j − 1) seeds and its statistic is
T_j = mean / (sd / √n_j) with n_j − 1 degrees of freedom. The nominal level of look j is the
α_j with critical value c_j = t⁻¹(1 − α_j; n_j − 1) such that, with the true mean exactly on the
bound, P(T_1 > c_1 or … or T_j > c_j) = α(look j). Look 1 is exact (α_1); the later critical values
come from a deterministic simulation (`SIMULATIONS` paths of standard normal seeds, numpy's default
generator at `RNG_SEED`): c_j is set so that the paths first crossing at look j make up
α(look j) − α(look j − 1) of all paths. The Monte-Carlo error of the cumulative level is about
√(α / SIMULATIONS) ≈ 0.0005 at α = 0.05. Levels are cached per plan. A look on one seed has no t
statistic: it is given its increment outright (a union bound for that look) and the later looks are
calibrated on what is left. Each side of a test (PASS on one side, FAIL on the other) is its own
one-sided test at α_j, so a false PASS and a false FAIL are each kept at α.

What is an approximation. The verifier's tests are not all one-sample t-tests; the boundary's
levels are applied to each test as its α:
- a paired t-test (`order`, paired differences) is a one-sample t-test of the differences:
  calibrated as such;
- a range (`between`, `approx`, an interval inside a range) and an equivalence (TOST) PASS by two
  one-sided t-tests, each at α_j, and FAIL beyond either end (`stats.range_fail_critical` at α_j: a
  two-sided test at α_j where the range is narrow). Its looks' levels are the lower, look by look, of
  the one-sided calibration's and a two-sided one's (`sides` = 2: |T| crossing t⁻¹(1 − α_j / 2) by
  look j with chance α(look j)), so that neither the near side's crossings nor both sides' together
  exceed α(look j). Calibrated per side alone, a range a twentieth of a standard error wide with the
  truth on an edge was falsely FAILed 0.053 of the time (α = 0.05; 3 → 6, 4 → 8, 5 → 10 seeds): each
  side at α_j / 2 crosses, over the looks, more than half of what one side at α_j does. The two-sided
  calibration spends its first added looks at 0 (the one-sided one's levels there only make up for
  the simulation's shortfall at look 1) and its later ones lower: a wide range's false PASS and FAIL
  read 0.041-0.047 instead of 0.044-0.050 (4 standard errors wide), the price of levels that hold at
  every width;
- a sign count over the seeds (`every_seed`) PASSes only when every seed lies on its side, an
  event each later look narrows: its false PASS is at most α_j of the first look where the count
  can PASS (0.5^n ≤ α_j), within α (a seed on the wrong side FAILs it at any level);
- Fisher-z tests of correlations (per seed, over clients, or pooled by random effects) and the
  reversed-pair test of an `order` at α_j / pairs take the levels as their α: their statistics
  across looks are correlated otherwise than a t-test's, so their cumulative level is α(look j)
  only approximately (each look's test keeps its nominal level);
- a family (Holm across claims at every look) runs its step-down at the lowest of its members'
  α_j; Holm's levels at a look are no higher than α_j, so a member's own chance of a false
  verdict stays within its boundary, while the family-wise rate over the looks is not
  calibrated as a whole;
- a claim whose family spans several experiments counts the looks of its own experiment (look j
  on its profile seeds + j − 1, the seeds its α_j is calibrated on): a seed added to another of
  the family's experiments leaves its statistic, look and level unchanged. (Counting the looks of
  all the experiments, L in all, and calibrating look j as on profile seeds + j − 1 would test a
  statistic that did not change again at rising levels: simulated, a claim whose experiment got
  its seeds last was falsely decided at 0.055 (two experiments of 3 → 6 seeds) to 0.059 (three)
  at α = 0.05.)
The simulation in tests/test_sequential.py measures the false PASS and FAIL rates through the
verifier itself for a one-sided test, a range and a narrow range; tests/test_error_rates.py measures
them for a pooled correlation's range on runs of 20 simulated clients (5 → 10 seeds; 10 → 20 marked
slow).
"""
from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy import stats as scipy_stats

SIMULATIONS = 200_000
POWER_PATHS = 40_000
RNG_SEED = 20240615
DIGITS = 3
PROFILE_SHARE = 0.7
"""The share of α the profile's own seeds spend: look 1, the fixed-n verdict."""


def profile_level(alpha: float) -> float:
    """α_1: the level of a claim's test on its profile's seeds (the first look of every plan)."""
    return _down(PROFILE_SHARE * alpha)


def spent(fraction: float, alpha: float) -> float:
    """The α an O'Brien-Fleming-type spending function of total `alpha` allows by information fraction t."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"an information fraction lies in (0, 1], not {fraction}")
    if fraction == 1.0:
        return alpha
    return float(2.0 * scipy_stats.norm.sf(scipy_stats.norm.isf(alpha / 2.0) / math.sqrt(fraction)))


def spent_by_look(first: int, last: int, alpha: float) -> tuple[float, ...]:
    """α(look j) of the looks on `first`, `first` + 1, …, `last` seeds: α_1 at the profile's seeds,
    then the rest spent over the added seeds' fraction; α by the last look of a plan that adds seeds."""
    if first < 1 or last < first:
        raise ValueError(f"looks run from at least one seed up to no fewer: not {first} to {last}")
    at_profile = profile_level(alpha)
    return (at_profile,) + tuple(at_profile + spent((n - first) / (last - first), alpha - at_profile)
                                 for n in range(first + 1, last + 1))


def boundary_alone(first: int, last: int, alpha: float) -> tuple[float, ...]:
    """α(t_j) of O'Brien-Fleming-type spending over every look, t_j = n_j / n_max, the profile's look
    included as one of them (what the plan would spend were the profile's verdict not its first look)."""
    return tuple(spent(n / last, alpha) for n in range(first, last + 1))


def nominal_levels(first: int, last: int, alpha: float, two_sided: bool = False) -> tuple[float, ...]:
    """α_j of the plan's looks on `first`, `first` + 1, …, `last` seeds (at least one look); with
    `two_sided` (a test that FAILs on either side of a range), each look's level is the lower of the
    one-sided and the two-sided calibration's, so that both cross by look j with chance at most α(look j)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"α lies in (0, 1), not {alpha}")
    targets = spent_by_look(first, last, alpha)
    one_sided = calibrated(first, targets)
    if not two_sided:
        return one_sided
    return tuple(map(min, one_sided, calibrated(first, targets, sides=2)))


@cache
def calibrated(first: int, targets: tuple[float, ...], sides: int = 1) -> tuple[float, ...]:
    """α_j of looks on `first`, `first` + 1, … seeds such that a one-sided t-test (`sides` = 1: T above
    t⁻¹(1 − α_j)) or a two-sided one (`sides` = 2: |T| above t⁻¹(1 − α_j / 2)) crosses by look j with
    chance targets[j] (the true mean on the bound)."""
    if sides not in (1, 2):
        raise ValueError(f"a test has one side or two, not {sides}")
    last = first + len(targets) - 1
    rng = np.random.default_rng(RNG_SEED)
    total = np.zeros(SIMULATIONS)
    squares = np.zeros(SIMULATIONS)
    alive = np.ones(SIMULATIONS, dtype=bool)
    crossed, reserved, before, drawn = 0, 0.0, 0.0, 0
    first_statistic = True
    levels: list[float] = []
    for n, target in zip(range(first, last + 1), targets):
        increment = max(0.0, target - before)
        before = target
        while drawn < n:
            x = rng.standard_normal(SIMULATIONS)
            total += x
            squares += x * x
            drawn += 1
        if n < 2:  # no t statistic on one seed: this look gets its increment outright
            levels.append(_down(increment))
            reserved += levels[-1]
            continue
        statistic = _t_statistics(total, squares, n)
        if sides == 2:
            statistic = np.abs(statistic)
        if first_statistic:  # the first look with a t statistic: exact
            first_statistic = False
            level = _down(max(0.0, target - reserved))
        else:
            critical = _critical(statistic[alive], round((target - reserved) * SIMULATIONS) - crossed)
            level = _down(sides * float(scipy_stats.t.sf(critical, n - 1))) if math.isfinite(critical) else 0.0
        critical = float(scipy_stats.t.isf(level / sides, n - 1)) if level > 0 else math.inf
        crossing = alive & (statistic > critical)
        crossed += int(crossing.sum())
        alive &= ~crossing
        levels.append(level)
    return tuple(levels)


@cache
def plan_power(first: int, levels: tuple[float, ...], effect_sd: float = 0.5) -> tuple[float, ...]:
    """P(PASS by look j) of a one-sided t-test at the looks' levels, the true mean `effect_sd` seed
    standard deviations beyond the bound (simulated: `POWER_PATHS` paths, a fixed generator)."""
    last = first + len(levels) - 1
    x = np.random.default_rng(RNG_SEED + 1).standard_normal((POWER_PATHS, last)) + effect_sd
    total, squares = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    passed = np.zeros(POWER_PATHS, dtype=bool)
    by_look = []
    for n, level in zip(range(first, last + 1), levels):
        if n >= 2 and level > 0:
            passed |= _t_statistics(total[:, n - 1], squares[:, n - 1], n) > scipy_stats.t.isf(level, n - 1)
        by_look.append(round(float(passed.mean()), 3))
    return tuple(by_look)


def _t_statistics(total: np.ndarray, squares: np.ndarray, n: int) -> np.ndarray:
    mean = total / n
    sd = np.sqrt(np.maximum(squares - n * mean * mean, 0.0) / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, mean / (sd / math.sqrt(n)), 0.0)


def _down(level: float) -> float:
    """The level rounded down to `DIGITS` significant digits (what the plan records and the looks
    test at; the simulation goes on from the rounded level's critical value)."""
    if level <= 0.0:
        return 0.0
    scale = 10.0 ** (DIGITS - 1 - math.floor(math.log10(level)))
    return math.floor(level * scale * (1 + 1e-12)) / scale


def _critical(statistics: np.ndarray, count: int) -> float:
    """A value that exactly `count` of the statistics exceed (midway between the count-th largest
    and the next); +inf where none may."""
    if count <= 0 or statistics.size == 0:
        return math.inf
    if count >= statistics.size:
        return float(np.min(statistics)) - 1.0
    top = np.partition(statistics, statistics.size - count - 1)[statistics.size - count - 1:]
    return float((top[0] + np.min(top[1:])) / 2.0)
