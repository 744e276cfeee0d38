"""Check each claim's observation against its expectation for a profile: the verdict.

How each expectation is decided (α is the expectation's `alpha`, 0.05 unless stated):

- A test of the mean over seeds (`of: mean`) of a stochastic metric needs a spread: one seed is
  INCONCLUSIVE. Inequalities use one-sided t-tests (PASS if significant on the claimed side,
  FAIL if on the other); `between`, `approx` and `equals` ask whether the mean's (1 − 2α)
  t-interval lies inside the range (PASS), wholly outside it (FAIL), or straddles a bound.
  A metric its kind declares deterministic (fixed by the config) is compared directly, as are
  seeds that all agree.
- `of: every_seed` reads every seed on its own.
- Correlations are decided by their Fisher-z intervals: per seed for `every_seed`, pooled over
  seeds by inverse variance for `of: mean`; PASS or FAIL only where the interval lies on one
  side of a bound.
- `order`: paired one-sided t-tests of adjacent pairs over the shared seeds; PASS only if every
  pair is significant in the stated direction, FAIL if a pair is significantly reversed (at
  α divided by the number of pairs), otherwise INCONCLUSIVE.
- Every INCONCLUSIVE, and every PASS of a "no difference / within spread / not better" claim,
  carries power figures: the smallest effect the data could detect and the seeds (or clients)
  that would decide the claim at the observed effect and spread.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.catalog import Catalog, LoadedClaim
from harness.observe import Observed, Series, observe
from harness.planning import variants_needed
from harness.schema import claim as schema
from harness.stats import (CONFIDENCE, Correlation, Power, equivalence, fisher_power, interval_inclusion,
                           one_sided, summarize, t_power)

PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR = "PASS", "FAIL", "INCONCLUSIVE", "SKIPPED", "ERROR"
STATUSES = (PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR)
_SEVERITY = {PASS: 0, INCONCLUSIVE: 1, FAIL: 2, ERROR: 3}


@dataclass
class Decision:
    """The outcome of one expectation on one observation."""

    status: str
    reason: str
    power: Power | None = None


@dataclass
class Verdict:
    claim: str
    paper: str
    profile: str
    experiment: str
    source: str
    statement: str
    expectation: str
    status: str
    reason: str
    observed: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    power: dict[str, Any] | None = None
    data_unavailable: bool = False
    """SKIPPED because a data set the claim needs is not on this machine (not a verdict on the claim)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _range(expectation) -> tuple[float, float]:
    """The closed range a between/approx/equals expectation accepts."""
    match expectation:
        case schema.Between(between=(low, high)):
            return low, high
        case schema.Approx():
            return expectation.approx - expectation.half_width, expectation.approx + expectation.half_width
        case schema.Equals():
            return expectation.equals - expectation.tolerance, expectation.equals + expectation.tolerance
    raise TypeError(type(expectation))


def describe(expectation, obs=None) -> str:
    """A short human reading of an expectation and of the test that decides it."""
    correlation = isinstance(obs, schema.CorrelationObservation)
    every = getattr(expectation, "of", "mean") == "every_seed"
    alpha = getattr(expectation, "alpha", 0.05)
    if correlation:
        how = (f" on every seed ({CONFIDENCE:.0%} Fisher-z interval per seed)" if every
               else f" (pooled over seeds, {CONFIDENCE:.0%} Fisher-z interval)")
    elif every:
        how = " on every seed"
    else:
        how = ""
    match expectation:
        case schema.Skip():
            return f"none at this profile ({expectation.skip})"
        case schema.Between(between=(low, high)):
            test = "" if how else f" (mean's {1 - 2 * alpha:.0%} t-interval inside it)"
            return f"in [{_fmt(low)}, {_fmt(high)}]{how or test}"
        case schema.Approx():
            tol = (f"± {_fmt(expectation.tolerance)}" if expectation.tolerance is not None
                   else f"± {expectation.relative_tolerance:.0%}")
            test = "" if how else f" (mean's {1 - 2 * alpha:.0%} t-interval inside it)"
            return f"≈ {_fmt(expectation.approx)} {tol}{how or test}"
        case schema.Equals():
            tol = f" (tolerance {_fmt(expectation.tolerance)})" if expectation.tolerance else " exactly"
            return f"= {_fmt(expectation.equals)}{tol}{how}"
        case schema._Inequality():
            test = "" if how else f" (one-sided t-test of the mean, α = {alpha})"
            return f"{expectation.relation} {_fmt(expectation.bound)}{how or test}"
        case schema.Order():
            if every:
                return " > ".join(expectation.order) + " on every seed"
            return " > ".join(expectation.order) + f" (paired one-sided t-tests of adjacent pairs, α = {alpha})"
        case schema.Equivalent():
            return f"within ±{_fmt(expectation.equivalent_within)} (TOST, α = {alpha})"
        case schema.WithinSpread():
            return f"|mean paired difference| < seed-to-seed std of {expectation.within_spread_of}"
    raise TypeError(type(expectation))


# --- reading one value against an expectation ---------------------------------------------

def _point_test(expectation) -> Callable[[float], bool]:
    if isinstance(expectation, schema._Inequality):
        bound = expectation.bound
        beyond = (lambda v: v < bound) if expectation.side == "less" else (lambda v: v > bound)
        return (lambda v: not beyond(v)) if expectation.negated else beyond
    low, high = _range(expectation)
    return lambda v: low <= v <= high


def _interval_test(expectation, low: float, high: float) -> str:
    """'pass' / 'fail' / 'undecided' of an expectation on an interval [low, high] of the quantity."""
    if isinstance(expectation, schema._Inequality):
        bound = expectation.bound
        on_side = high < bound if expectation.side == "less" else low > bound
        off_side = low > bound if expectation.side == "less" else high < bound
        if expectation.negated:
            return "fail" if on_side else "pass"
        return "pass" if on_side else "fail" if off_side else "undecided"
    range_low, range_high = _range(expectation)
    if low >= range_low and high <= range_high:
        return "pass"
    if high < range_low or low > range_high:
        return "fail"
    return "undecided"


def _nearest_bound(expectation, value: float) -> float:
    if isinstance(expectation, schema._Inequality):
        return expectation.bound
    low, high = _range(expectation)
    return low if abs(value - low) <= abs(value - high) else high


# --- tests of one series ---------------------------------------------------------------

def _every_seed(expectation, series: Series) -> Decision:
    holds = _point_test(expectation)
    failing = {seed: v for seed, v in series.values.items() if not holds(v)}
    if failing:
        listed = ", ".join(f"s{seed} = {_fmt(v)}" for seed, v in failing.items())
        return Decision(FAIL, f"{series.label}: {len(failing)} of {len(series.values)} seeds miss it ({listed})")
    return Decision(PASS, f"{series.label}: all {len(series.values)} seeds meet it")


def _direct(expectation, series: Series, why: str) -> Decision:
    mean = summarize(list(series.values.values())).mean
    if _point_test(expectation)(mean):
        return Decision(PASS, f"{series.label}: {_fmt(mean)} meets it ({why})")
    return Decision(FAIL, f"{series.label}: {_fmt(mean)} misses it ({why})")


def _mean_test(expectation, series: Series) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    if series.deterministic:
        return _direct(expectation, series, "the metric is fixed by the config: one seed decides")
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        if math.isnan(s.mean):
            return Decision(INCONCLUSIVE, f"{series.label}: +inf and -inf on seeds {infinite}")
        return _direct(expectation, series, f"infinite on seeds {infinite}: no spread brings the mean back")
    if s.n < 2:
        power = t_power(values, 0.0, expectation.alpha)
        return Decision(INCONCLUSIVE, f"{series.label}: one seed ({_fmt(s.mean)}) of a metric that varies with the "
                                      "seed cannot decide a test of the mean", power)
    if s.std == 0.0:
        return _direct(expectation, series, f"all {s.n} seeds equal")
    alpha = expectation.alpha
    if isinstance(expectation, schema._Inequality):
        bound = expectation.bound
        test = one_sided(values, bound, expectation.side, alpha)
        head = f"{series.label}: mean {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n})"
        if expectation.negated:
            side = "below" if expectation.side == "less" else "above"
            if test.outcome == "pass":
                return Decision(FAIL, f"{head} is significantly {side} {_fmt(bound)}, one-sided p = {test.p_value:.3g}")
            return Decision(PASS, f"{head} is not significantly {side} {_fmt(bound)}, one-sided p = {test.p_value:.3g}",
                            t_power(values, s.mean - bound, alpha))
        relation = {"pass": "meets", "fail": "contradicts", "undecided": "cannot decide"}[test.outcome]
        status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}[test.outcome]
        power = t_power(values, s.mean - bound, alpha) if status == INCONCLUSIVE else None
        return Decision(status, f"{head} {relation} the bound {_fmt(bound)}, one-sided p = {test.p_value:.3g}"
                                f" (other side p = {test.p_opposite:.3g})", power)
    low, high = _range(expectation)
    outcome, (ci_low, ci_high) = interval_inclusion(values, low, high, alpha)
    where = {"pass": "lies inside", "fail": "lies outside", "undecided": "straddles a bound of"}[outcome]
    status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}[outcome]
    power = (t_power(values, s.mean - _nearest_bound(expectation, s.mean), alpha)
             if status == INCONCLUSIVE else None)
    return Decision(status, f"{series.label}: mean {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n}), "
                            f"{1 - 2 * alpha:.0%} interval [{_fmt(ci_low)}, {_fmt(ci_high)}] {where} "
                            f"[{_fmt(low)}, {_fmt(high)}]", power)


def _pooled_power(expectation, series: Series) -> Power:
    """Seeds that would decide a pooled correlation, each seed as heavy as the observed ones on average."""
    per_seed = list(series.correlations.values())
    mean_weight = sum(c.weight for c in per_seed) / len(per_seed)
    return fisher_power(series.pooled, _nearest_bound(expectation, series.pooled.r), len(per_seed), mean_weight,
                        "seeds")


def _clients_power(expectation, c: Correlation) -> Power:
    """Clients per run that would decide one seed's correlation (each client adds 1 to z's weight)."""
    power = fisher_power(c, _nearest_bound(expectation, c.r), c.weight, 1.0, "clients per run")
    offset = c.n - c.weight
    return Power(power.unit, c.n, power.detectable, None if power.needed is None else power.needed + offset,
                 power.note)


def _correlation_test(expectation, series: Series) -> Decision:
    undefined = series.undefined
    if undefined:
        listed = "; ".join(f"s{seed}: {reason}" for seed, reason in undefined.items())
        return Decision(INCONCLUSIVE, f"{series.label}: the correlation is undefined ({listed})")
    status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}
    if expectation.of == "every_seed":
        outcomes = {seed: _interval_test(expectation, c.low, c.high) for seed, c in series.correlations.items()}
        by = {o: [seed for seed, x in outcomes.items() if x == o] for o in ("pass", "fail", "undecided")}
        head = (f"{series.label}: {len(by['pass'])} of {len(outcomes)} seeds' intervals meet it, "
                f"{len(by['fail'])} miss it, {len(by['undecided'])} straddle it")
        if by["fail"]:
            return Decision(FAIL, f"{head} (missing: {', '.join(f's{seed}' for seed in by['fail'])})")
        if by["undecided"]:
            powers = [_clients_power(expectation, series.correlations[seed]) for seed in by["undecided"]]
            needed = [p for p in powers if p.needed is not None]
            power = max(needed, key=lambda p: p.needed) if needed else powers[0]
            return Decision(INCONCLUSIVE, head, power)
        return Decision(PASS, head)
    pooled = series.pooled
    outcome = _interval_test(expectation, pooled.low, pooled.high)
    power = (_pooled_power(expectation, series)
             if outcome == "undecided" or getattr(expectation, "negated", False) else None)
    return Decision(status[outcome], f"{series.label}: pooled r = {_fmt(pooled.r)}, {CONFIDENCE:.0%} interval "
                                     f"[{_fmt(pooled.low)}, {_fmt(pooled.high)}] over {len(series.correlations)} seeds",
                    power)


def _value_test(expectation, series: Series) -> Decision:
    nan_seeds = [seed for seed, v in series.values.items() if math.isnan(v) and seed not in series.undefined]
    if nan_seeds:
        return Decision(INCONCLUSIVE, f"{series.label}: not a number on seeds {nan_seeds} (see the run records)")
    if series.correlations:
        return _correlation_test(expectation, series)
    if expectation.of == "every_seed":
        return _every_seed(expectation, series)
    return _mean_test(expectation, series)


# --- tests across series ---------------------------------------------------------------

def _pair_test(higher: Series, lower: Series, alpha: float, pairs: int) -> tuple[str, str, Power | None]:
    """'pass' / 'reversed' / 'undecided' for `higher` above `lower`, paired over their seeds."""
    seeds = [seed for seed in higher.values if seed in lower.values]
    differences = [higher.values[seed] - lower.values[seed] for seed in seeds]
    s = summarize(differences)
    text = f"{higher.label} − {lower.label}: mean {_fmt(s.mean)}"
    if higher.deterministic and lower.deterministic or (s.n >= 2 and s.std == 0.0):
        return ("pass" if s.mean > 0 else "reversed"), f"{text} (no spread: compared directly)", None
    if s.n < 2:
        return "undecided", f"{text} (one seed)", t_power(differences, 0.0, alpha)
    test = one_sided(differences, 0.0, "greater", alpha)
    text = f"{text} ± {_fmt(s.std)} (n = {s.n}), one-sided p = {test.p_value:.3g}"
    if test.p_value < alpha:
        return "pass", text, None
    if test.p_opposite < alpha / pairs:
        return "reversed", f"{text}, reversed p = {test.p_opposite:.3g}", None
    return "undecided", text, t_power(differences, s.mean, alpha)


def _order_test(expectation: schema.Order, observed: Observed, obs: schema.CompareObservation) -> Decision:
    by_variant = dict(zip(obs.variants, observed.series))
    ranked = [by_variant[v] for v in expectation.order]
    pairs = list(zip(ranked, ranked[1:]))
    if expectation.of == "every_seed":
        for higher, lower in pairs:
            bad = [seed for seed in higher.values if not higher.values[seed] > lower.values[seed]]
            if bad:
                return Decision(FAIL, f"{higher.label} is not above {lower.label} on seeds {bad}")
        return Decision(PASS, "observed order " + " > ".join(expectation.order) + " on every seed")
    results = [_pair_test(higher, lower, expectation.alpha, len(pairs)) for higher, lower in pairs]
    reason = "; ".join(text for _, text, _ in results)
    outcomes = [outcome for outcome, _, _ in results]
    if "reversed" in outcomes:
        return Decision(FAIL, reason)
    if all(outcome == "pass" for outcome in outcomes):
        return Decision(PASS, reason)
    powers = [power for outcome, _, power in results if outcome == "undecided" and power is not None]
    decided = [p for p in powers if p.needed is not None]
    return Decision(INCONCLUSIVE, reason, max(decided, key=lambda p: p.needed) if decided else
                    (powers[0] if powers else None))


def _equivalence_test(expectation: schema.Equivalent, series: Series) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    bound, alpha = expectation.equivalent_within, expectation.alpha
    if series.deterministic or (s.n >= 2 and s.std == 0.0):
        status = PASS if abs(s.mean) < bound else FAIL
        return Decision(status, f"difference {_fmt(s.mean)} with no spread between seeds, compared directly")
    if s.n < 2:
        return Decision(INCONCLUSIVE, f"equivalence needs at least 2 seeds, got {s.n}", t_power(values, 0.0, alpha))
    outcome, p_value, (low, high) = equivalence(values, bound, alpha)
    status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}[outcome]
    power = t_power(values, bound - abs(s.mean), alpha) if status != FAIL else None
    return Decision(status, f"mean difference {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n}), {1 - 2 * alpha:.0%} "
                            f"interval [{_fmt(low)}, {_fmt(high)}], TOST p = {p_value:.3g}", power)


def _within_spread_test(expectation: schema.WithinSpread, series: Series, spread: Series) -> Decision:
    values = list(series.values.values())
    if len(values) < 2:
        return Decision(INCONCLUSIVE, "a seed-to-seed spread needs at least 2 seeds", t_power(values, 0.0, 0.05))
    mean = summarize(values).mean
    reference = summarize(list(spread.values.values())).std
    status = PASS if abs(mean) < reference else FAIL
    relation = "<" if status == PASS else "≥"
    power = t_power(values, mean, 0.05) if status == PASS else None
    return Decision(status, f"|mean paired difference| {_fmt(abs(mean))} {relation} seed std of "
                            f"{expectation.within_spread_of} {_fmt(reference)} (n = {len(values)})", power)


def evaluate(expectation, obs, observed: Observed) -> Decision:
    """The decision of an expectation on an observation."""
    series = observed.series + ([observed.spread] if observed.spread is not None else [])
    for s in series:
        nan_seeds = [seed for seed, v in s.values.items() if math.isnan(v) and seed not in s.undefined]
        if nan_seeds:
            return Decision(INCONCLUSIVE, f"{s.label}: not a number on seeds {nan_seeds} (see the run records)")
    if isinstance(expectation, schema.Order):
        return _order_test(expectation, observed, obs)
    if isinstance(expectation, schema.Equivalent):
        return _equivalence_test(expectation, observed.series[0])
    if isinstance(expectation, schema.WithinSpread):
        return _within_spread_test(expectation, observed.series[0], observed.spread)
    decisions = [_value_test(expectation, s) for s in observed.series]
    status = max((d.status for d in decisions), key=_SEVERITY.__getitem__)
    powers = [d.power for d in decisions if d.status == status and d.power is not None]
    decided = [p for p in powers if p.needed is not None]
    power = max(decided, key=lambda p: p.needed) if decided else (powers[0] if powers else None)
    return Decision(status, "; ".join(d.reason for d in decisions), power)


# --- verdicts -------------------------------------------------------------------

def verify_claim(catalog: Catalog, loaded: LoadedClaim, profile: str,
                 lookup: Callable[[str, str, int, str], tuple[str, dict | None]],
                 missing_is_error: bool = True) -> Verdict:
    """The verdict of one claim at one profile.

    `lookup(experiment, variant, seed, profile)` gives (store key, record or None). A missing
    record is an ERROR after execution, and SKIPPED (not run) when only stored records are read.
    """
    claim = loaded.claim
    target = catalog.specs[claim.experiment]
    spec = target.spec
    expectation = claim.expect.get(profile)
    verdict = Verdict(claim.id, loaded.paper, profile, claim.experiment, claim.source, claim.statement.strip(),
                      describe(expectation, claim.observe) if expectation else "none", SKIPPED, "")
    if profile not in spec.profiles:
        verdict.reason = f"experiment {spec.experiment} has no profile {profile!r}"
        return verdict
    if expectation is None:
        verdict.reason = f"the claim states no expectation at profile {profile!r}"
        return verdict
    if isinstance(expectation, schema.Skip):
        verdict.reason = expectation.skip
        return verdict
    seeds = spec.profiles[profile].seeds
    records: dict[tuple[str, int], dict] = {}
    for variant in variants_needed(loaded, profile):
        for seed in seeds:
            key, record = lookup(spec.experiment, variant, seed, profile)
            verdict.runs.append(key)
            if record is None and not missing_is_error:
                verdict.status, verdict.reason = SKIPPED, (f"not run at profile {profile!r} (no record for {variant} "
                                                           f"seed {seed}); `fedclaims report --profile {profile}` runs it")
                return verdict
            if record is None:
                verdict.status, verdict.reason = ERROR, f"no record for {variant} seed {seed} (run not executed)"
                return verdict
            if record["status"] == "unavailable":
                verdict.status, verdict.reason = SKIPPED, f"data unavailable: {record['error']['message'].splitlines()[0]}"
                verdict.data_unavailable = True
                return verdict
            if record["status"] != "ok":
                error = record["error"]
                verdict.status, verdict.reason = ERROR, f"{variant} seed {seed} raised {error['type']}: {error['message']}"
                return verdict
            records[(variant, seed)] = record
    labels = {name: v.label for name, v in spec.variants.items()}
    spread = expectation.within_spread_of if isinstance(expectation, schema.WithinSpread) else None
    try:
        observed = observe(target.kind, claim.observe, labels, seeds, records, spread)
    except Exception as error:  # noqa: BLE001 - a metric that cannot be read is this claim's ERROR
        verdict.status, verdict.reason = ERROR, f"could not compute the observation: {type(error).__name__}: {error}"
        return verdict
    verdict.observed = observed.text()
    verdict.numbers = {s.label: s.numbers() for s in observed.series}
    if observed.spread is not None:
        verdict.numbers[f"spread reference: {observed.spread.label}"] = observed.spread.numbers()
    decision = evaluate(expectation, claim.observe, observed)
    verdict.status, verdict.reason = decision.status, decision.reason
    if decision.power is not None:
        verdict.power = decision.power.to_dict()
        verdict.reason += f" — power: {decision.power.text()}"
    return verdict
