"""Decidable by design, per test: whether a claim's PASS and FAIL are reachable at all, and the seeds each needs.

Computed before any run, from the design alone: the profile's seeds, the clients per run (for a
correlation), the test the verifier applies (`harness.verdicts.verify`), the width of the expected range
and a planning spread. The rule, per test:

- A value fixed by its config (a metric the kind declares deterministic, for every variant the
  claim reads) is compared directly: always decidable, on one seed; so is one fixed by the
  protocol's structure or exact algebra (a `structural` metric) read on every seed.
- A range (`between`, `approx`, `equals`, `equivalent_within`) tested on the mean over seeds PASSes
  only when the mean's (1 − 2α) t-interval fits inside it, so it needs n seeds with
  2 · t(α, n − 1) · σ / √n ≤ its width (σ the planning spread); FAIL (the mean beyond an edge by
  the range's fail critical value) needs 2 seeds. A range of width 0 on a value that varies with
  the seed can never PASS.
- A correlation range read on every seed (`of: every_seed`) PASSes only when each seed's own
  (1 − 2α) Fisher-z interval, 2 · z(α) / √(n − 3 − controls) wide over n clients, fits inside the
  range in z: that width does not shrink with seeds, so where it is wider the claim can never PASS.
- A correlation range pooled over seeds (`of: mean`: random effects, Hartung-Knapp on S − 1 df)
  needs S seeds with 2 · t(α, S − 1) · √((1/(n − 3 − controls) + τ²) / S) ≤ its width in z
  (one seed: the normal interval of that seed alone).
- A bound (`below`, `above`, `not_above`, `not_below`) on the mean needs 2 seeds either way. On
  every seed of a value that varies with the seed, a bound, a range that is not one exact value and
  an `order` are sign counts: PASS needs all n seeds on the claimed side and 0.5^n ≤ α (5 seeds at
  α = 0.05), FAIL one seed; for 'not beyond' (`not_above`, `not_below`) the other way round. A
  bound on a correlation is decided by Fisher z from one seed (on every seed, its misses Holm-
  corrected across seeds: the FAIL level only).
- An `order` of means needs 2 seeds; `within_spread_of` 2; a ratio of seed spreads
  (`spread`), tested on its log with standard error √(1/(n − 1)), needs n seeds with
  2 · z(α) · √(1/(n − 1)) ≤ the log of its range's ratio (2 for a bound).

Reachability (at some number of seeds) is judged at the most favourable spread: no spread between
seeds (τ = 0) and, for a Spearman correlation, the variance of r = 0. The seeds each verdict
needs are judged at the planning spread: a metric's seed standard deviation (the largest of the
series the claim reads) and a correlation's between-seed τ² (DerSimonian-Laird), from stored
records where they exist (the per-seed numbers of the committed baseline `baselines/<profile>.json`,
which `fedclaims baseline update` records from the results store; the store itself is keyed by the
data sets' fingerprints, which validation does not survey). Otherwise the defaults: for a
correlation the per-seed sampling variance from the clients, 1/(n − 3 − controls), plus
τ = `DEFAULT_TAU` between seeds; for a metric none (its units are the metric's), so a mean range
without stored records is reachable from 2 seeds and its further needs are left to the spread
the runs show. Several variants lower the FAIL level only (Holm over them), which no figure here
depends on; a family's Holm step-down across claims is not modelled (it can only raise the seeds a
member needs).
"""
from __future__ import annotations

import math

from harness.design.seed_counts import (
    fewest_seeds,
    mean_range_seeds,
    pooled_range_seeds,
    range_power_text,
    shift_power_text,
)
from harness.design.spreads import SeriesNumbers, stored_sd, stored_tau_squared
from harness.statistics.correlation_estimates import fisher_z
from harness.statistics.power import PRACTICAL_UNITS
from harness.statistics.stats import POWER, sign_test_seeds, upper_quantile

DEFAULT_TAU = 0.1
"""Between-seed standard deviation of a correlation's Fisher z where no stored records give one:
about what Table 4 of the HAS-FL paper shows over its own three seeds and what 20 clients already
explain (DerSimonian-Laird τ² is 0 for five of its six dataset × column series, 0.011 for CIFAR-10's
r(p, TV | p^max))."""

RULES = [
    "`fedclaims validate` checks, before any run and from the design alone (the profile's seeds, the clients per "
    "run, the test, the width of the range and a planning spread), that each claim's PASS and FAIL are reachable "
    "at some number of seeds under its test (`harness.design.readings`). It refuses a claim where one is not "
    "(file, line and field, with the reason and what would make it decidable) and lists, without failing, the "
    "claims whose profile has fewer seeds than they need; `fedclaims design` prints every claim's figures.",
    "A range on the mean over seeds needs n seeds with 2 · t(α, n − 1) · σ / √n ≤ its width (σ the planning "
    "spread), and cannot PASS at width 0 on a value that varies with the seed. A correlation range on every seed "
    "needs each seed's own (1 − 2α) Fisher-z interval, 2 · z(α) / √(n − 3 − controls) wide over n clients, to fit "
    "inside the range in z: no number of seeds narrows it, so where it is wider the claim is refused (pool it over "
    "seeds with `of: mean`). Pooled (random effects, Hartung-Knapp) it needs S seeds with "
    "2 · t(α, S − 1) · √((1/(n − 3 − controls) + τ²) / S) ≤ the range's width in z. A ratio of seed spreads needs "
    "n seeds of each with 2 · z(α) · √(1/(n − 1)) ≤ the log of its range's ratio.",
    "On every seed of a value that varies with the seed, a bound, a range that is not one exact value and an "
    "`order` are sign counts: PASS needs all n seeds and 0.5^n ≤ α (5 seeds at α = 0.05), FAIL one seed (for "
    "`not_above` and `not_below` the other way round). Tests of the mean need 2 seeds; a correlation bound is "
    "decided from one seed; a value fixed by its config (every variant's metric declared deterministic) is "
    "always decidable on one seed, as is a metric fixed by the protocol's structure or exact algebra (declared "
    "`structural`) read on every seed.",
    "Reachability is judged at the most favourable spread (none between seeds); the seeds needed at the planning "
    "spread: from the per-seed numbers of the committed baseline (`baselines/<profile>.json`, recorded from the "
    "results store) where it holds the claim, otherwise for a correlation its per-seed sampling variance "
    f"1/(n − 3 − controls) plus τ = {DEFAULT_TAU} in z between seeds, and for a metric no default (its units are "
    "its own): a range of its mean without stored numbers is reachable from 2 seeds.",
]


Reading = tuple[bool, bool, int | None, int | None, str, str] | tuple[bool, bool, int | None, int | None, str, str, str]
"""(PASS reachable, FAIL reachable, seeds PASS needs, seeds FAIL needs, reason, planning spread[, power]): the
optional power says at how many seeds a PASS comes with 80% chance, and under which assumed effect."""



def _fmt(value: float) -> str:
    return f"{value:.3g}"


def correlation_design(controls: int, expectation, clients: int | None, numbers: SeriesNumbers | None) -> Reading:
    """A correlation over the clients of a run, `controls` quantities partialled out."""
    if clients is None:
        return True, True, 1, 1, "clients per run unknown: judged reachable", ""
    weight = clients - 3 - controls
    if weight < 1:
        reason = f"{clients} clients per run leave no Fisher-z interval (it needs at least {4 + controls})"
        return False, False, None, None, reason, ""
    if expectation.admitted().one_sided:
        return True, True, 1, 1, f"a bound on Fisher z over {clients} clients, decided from one seed", ""
    if expectation.every_seed:
        return _per_seed_range_design(expectation, clients, controls)
    return _pooled_range_design(expectation, clients, controls, numbers)


def _per_seed_range_design(expectation, clients: int, controls: int) -> Reading:
    """A correlation range on every seed: each seed's own interval must fit, whatever the seeds."""
    admitted = expectation.admitted()
    low, high = admitted.low, admitted.high
    alpha, weight = expectation.alpha, clients - 3 - controls
    width_z = fisher_z(high) - fisher_z(low)
    fail_seeds = 1 if low > -1.0 or high < 1.0 else None
    interval = 2 * upper_quantile(alpha, None) / math.sqrt(weight)
    if interval <= width_z:
        return True, fail_seeds is not None, 1, fail_seeds, (f"each seed's {1 - 2 * alpha:.0%} Fisher-z interval "
                                                             f"over {clients} clients is {_fmt(interval)} wide in z, "
                                                             f"within the range's {_fmt(width_z)}"), ""
    clients_needed = math.ceil((2 * upper_quantile(alpha, None) / width_z) ** 2 - 1e-9) + 3 + controls
    se_text = f"√(1/{weight})" + (", partial on one quantity" if controls else "")
    reason = (f"each seed's {1 - 2 * alpha:.0%} Fisher-z interval over {clients} clients (se {se_text}) is "
              f"{_fmt(interval)} wide in z, the range [{low:g}, {high:g}] only {_fmt(width_z)}, and more seeds do "
              f"not narrow it: a seed's interval fits only with {clients_needed} clients per run; read the "
              "correlation pooled over seeds (`of: mean`)")
    return False, fail_seeds is not None, None, fail_seeds, reason, ""


def _pooled_range_design(expectation, clients: int, controls: int, numbers: SeriesNumbers | None) -> Reading:
    """A correlation range pooled over seeds by random effects: its interval narrows with the seeds."""
    admitted = expectation.admitted()
    low, high = admitted.low, admitted.high
    alpha, weight = expectation.alpha, clients - 3 - controls
    width_z = fisher_z(high) - fisher_z(low)
    fail_seeds = 1 if low > -1.0 or high < 1.0 else None
    stored = stored_tau_squared(numbers, controls)
    tau_squared, between = ((stored[0], f"τ² = {_fmt(stored[0])} from {stored[1]} stored seeds") if stored else
                            (DEFAULT_TAU ** 2, f"τ = {DEFAULT_TAU} between seeds (default)"))
    spread = f"per-seed sampling variance 1/{weight} over {clients} clients, {between}"
    if width_z <= 0.0:
        return False, fail_seeds is not None, None, fail_seeds, "a range of width 0 is never a pooled interval", spread
    seeds = pooled_range_seeds(width_z, weight, tau_squared, alpha)
    reason = (f"the pooled {1 - 2 * alpha:.0%} Hartung-Knapp interval of Fisher z fits the range's {_fmt(width_z)} "
              f"in z from {seeds} seeds" if seeds is not None else
              f"the pooled interval fits the range's {_fmt(width_z)} in z only beyond {PRACTICAL_UNITS} seeds")
    power = "" if seeds is None else range_power_text(
        width_z, math.sqrt(1 / weight + tau_squared), alpha, seeds, "the true correlation at the range's centre in z")
    return True, fail_seeds is not None, seeds, fail_seeds, reason, spread, power


def value_design(expectation, numbers: SeriesNumbers | None) -> Reading:
    """A bound or range (an equivalence is a range) on a metric or a paired difference."""
    alpha = expectation.alpha
    if expectation.every_seed:
        return _every_seed_design(expectation)
    admitted = expectation.admitted()
    if admitted.one_sided:
        return True, True, 2, 2, "a one-sided t-test of the mean needs 2 seeds", "", shift_power_text(alpha)
    width = admitted.high - admitted.low
    if width <= 0.0:
        return False, True, None, 2, ("a range of width 0 on the mean of a value that varies with the seed: a "
                                      "t-interval is never a single point"), ""
    stored = stored_sd(numbers)
    if stored is None:
        return True, True, 2, 2, f"the mean's {1 - 2 * alpha:.0%} t-interval must fit a range {_fmt(width)} wide " \
                                 "(no stored spread: from 2 seeds if the spread allows)", "none stored"
    sd, n = stored
    seeds = mean_range_seeds(width, sd, alpha)
    reason = (f"the mean's {1 - 2 * alpha:.0%} t-interval fits the range's {_fmt(width)} from {seeds} seeds"
              if seeds is not None else
              f"the mean's t-interval fits the range's {_fmt(width)} only beyond {PRACTICAL_UNITS} seeds")
    power = "" if seeds is None else range_power_text(width, sd, alpha, seeds,
                                                       f"the true mean at the range's centre, seed sd {_fmt(sd)}")
    return True, True, seeds, 2, reason, f"seed sd {_fmt(sd)} from {n} stored seeds", power


def _every_seed_design(expectation) -> Reading:
    """Every seed of a value that varies with the seed: a sign count, except for an exact value."""
    alpha = expectation.alpha
    needed = sign_test_seeds(alpha)
    admitted = expectation.admitted()
    if admitted.exact:
        return True, True, 1, 1, "an exact value read on every seed", ""
    if admitted.negated:
        return True, True, 1, needed, (f"'not beyond' on every seed is a sign count: FAIL needs the seeds beyond "
                                       f"the bound significant, all n of them with 0.5^n ≤ α = {alpha:g}"), ""
    share = POWER ** (1 / needed)
    return True, True, needed, 1, (f"every seed of a value that varies with the seed is a sign count: PASS needs "
                                   f"all n seeds and 0.5^n ≤ α = {alpha:g}"), "", (
        f"{POWER:.0%} power at {needed} seeds only where at least {share:.0%} of all seeds fall on the claimed side "
        f"(effect assumed: that share)")


def spread_design(expectation) -> Reading:
    admitted = expectation.admitted()
    if admitted.one_sided:
        return True, True, 2, 2, "a bound on the log ratio of seed spreads needs 2 seeds of each", ""
    width = math.log(admitted.high / admitted.low)
    if width <= 0.0:
        return False, True, None, 2, "a range of width 0 on a ratio of seed spreads is never an interval", ""
    z = upper_quantile(expectation.alpha, None)
    seeds = fewest_seeds(lambda n: 2 * z * math.sqrt(1 / (n - 1)) <= width, 2)
    return True, True, seeds, 2, (f"the log ratio's interval (se √(1/(n − 1))) fits the range's {_fmt(width)} "
                                  f"from {seeds} seeds of each"), ""


def order_design(expectation) -> Reading:
    """An order of variants: paired t-tests of adjacent pairs, or a sign count per pair on every seed."""
    if expectation.every_seed:
        return (True, True, sign_test_seeds(expectation.alpha), 1,
                f"every pair in order on every seed is a sign count per pair: PASS needs all n seeds and "
                f"0.5^n ≤ α = {expectation.alpha:g}", "")
    return True, True, 2, 2, "paired t-tests of adjacent pairs need 2 seeds", "", shift_power_text(expectation.alpha)


def within_spread_design(expectation) -> Reading:
    return True, True, 2, 2, "equivalence within a seed spread needs 2 seeds (more as the spreads demand)", ""
