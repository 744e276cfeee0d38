"""How many seeds a test needs: the first number at which it can decide, and the number at which a PASS
comes with 80% chance under a stated effect (`harness.loading.design` reads them)."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import integrate, special

from harness.statistics.power import PRACTICAL_UNITS, t_test_power
from harness.statistics.stats import POWER, upper_quantile


def _chi2_pdf(x: float, df: int) -> float:
    """scipy.stats.chi2.pdf(x, df), its own formula on the ufuncs it calls: the integrand of `range_pass_chance`
    calls it a hundred times an integral, where scipy.stats' argument handling took 90% of `fedclaims validate`."""
    return float(np.exp(special.xlogy(df / 2.0 - 1, x) - x / 2.0 - special.gammaln(df / 2.0) - (np.log(2) * df) / 2.0))


def fewest_seeds(fits: Callable[[int], bool], start: int, limit: int = PRACTICAL_UNITS) -> int | None:
    """The smallest n in [start, limit] at which `fits` holds (monotone in n)."""
    if not fits(limit):
        return None
    low, high = start - 1, limit
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def mean_range_seeds(width: float, sd: float, alpha: float) -> int | None:
    """Seeds at which the mean's (1 − 2α) t-interval, at seed spread `sd`, fits a range of `width`."""
    if sd == 0.0:
        return 2
    return fewest_seeds(lambda n: 2 * upper_quantile(alpha, n - 1) * sd / math.sqrt(n) <= width, 2)


def range_pass_chance(width: float, sd: float, seeds: int, alpha: float) -> float:
    """P(PASS) of a range on a mean over `seeds` seeds with the truth at the range's centre: the (1 − 2α)
    t-interval inside the range, the sample sd random (integrated over its χ distribution)."""
    df = seeds - 1
    critical = upper_quantile(alpha, df)
    scale = sd / math.sqrt(seeds)

    def inside(chi_squared: float) -> float:
        half = width / 2 - critical * scale * math.sqrt(chi_squared / df)
        covered = max(0.0, 2 * float(special.ndtr(half / scale)) - 1)  # scipy.stats.norm.cdf
        return covered * _chi2_pdf(chi_squared, df)

    top = float(special.chdtri(df, 1e-9))  # scipy.stats.chi2.isf(1e-9, df)
    return float(integrate.quad(inside, 0.0, min(top, df * (width / (2 * critical * scale)) ** 2), limit=200)[0])


def range_power_text(width: float, sd: float, alpha: float, start: int, assumed: str) -> str:
    """'80% power at n seeds (effect assumed: …)' for a range whose PASS is possible from `start` seeds."""
    if sd == 0.0:
        return ""
    seeds = fewest_seeds(lambda n: range_pass_chance(width, sd, n, alpha) >= POWER, max(start, 2))
    where = f"at {seeds} seeds" if seeds is not None else f"beyond {PRACTICAL_UNITS} seeds"
    return f"{POWER:.0%} power {where} (effect assumed: {assumed})"


def shift_power_text(alpha: float, effect_sd: float = 0.5) -> str:
    """'80% power at n seeds' of a one-sided t-test for an effect of `effect_sd` seed standard deviations."""
    seeds = fewest_seeds(lambda n: t_test_power(effect_sd, n, alpha) >= POWER, 2)
    where = f"at {seeds} seeds" if seeds is not None else f"beyond {PRACTICAL_UNITS} seeds"
    return f"{POWER:.0%} power {where} (effect assumed: {effect_sd:g} seed SD beyond the bound)"


def pooled_range_seeds(width_z: float, weight: float, tau_squared: float, alpha: float) -> int | None:
    """Seeds at which a random-effects pool of Fisher z (per-seed weight n − 3 − controls, between-seed
    variance τ²) has a (1 − 2α) Hartung-Knapp interval that fits a range `width_z` wide in z."""
    def fits(seeds: int) -> bool:
        if seeds == 1:
            return 2 * upper_quantile(alpha, None) / math.sqrt(weight) <= width_z
        return 2 * upper_quantile(alpha, seeds - 1) * math.sqrt((1 / weight + tau_squared) / seeds) <= width_z

    return fewest_seeds(fits, 1)
