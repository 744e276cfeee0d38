"""Check each claim's observation against its expectation for a profile: the verdict.

How each expectation is decided (α is the expectation's `alpha`, 0.05 unless stated):

- A test of the mean over seeds (`of: mean`) of a stochastic metric needs a spread: one seed is
  INCONCLUSIVE. Inequalities use one-sided t-tests (PASS if significant on the claimed side,
  FAIL if on the other); `between`, `approx` and `equals` ask whether the mean's (1 − 2α)
  t-interval lies inside the range (PASS), wholly outside it (FAIL), or straddles a bound.
  A metric its kind declares deterministic (fixed by the config) is compared directly, as are
  seeds that all agree.
- `of: every_seed` reads every seed on its own. For a metric that varies with the seed it is a
  sign count: a seed on the wrong side is a FAIL; all n on the claimed side PASS only if the
  one-sided sign test's p = 0.5^n is at most α, else INCONCLUSIVE with the seeds that would
  decide it (the smallest n with 0.5^n ≤ α). A range is two such counts (one per bound), an
  `order` one per adjacent pair, and 'not above / not below' fails only when the seeds beyond
  the bound are significantly many. Deterministic metrics, seeds that all agree and exact
  values (`equals` without a tolerance) are read directly.
- Correlations are decided by their Fisher-z intervals: per seed for `every_seed`, pooled over
  seeds by random effects for `of: mean`; PASS or FAIL only where the interval lies on one
  side of a bound. Per seed, PASS needs every seed to pass at α (intersection-union) and a
  seed's miss counts only where it survives Holm's step-down across the seeds.
- `order`: paired one-sided t-tests of adjacent pairs over the shared seeds; PASS only if every
  pair is significant in the stated direction, FAIL if a pair is significantly reversed (at
  α divided by the number of pairs), otherwise INCONCLUSIVE.
- A strict difference between variants (an `order`, `above`/`below` on a paired difference, a
  spread ratio or several variants) whose metric, not declared deterministic, takes one value on
  every seed of every compared variant (a difference: 0 on every seed) is SKIPPED as "not
  measurable at this scale", naming the value; ranges, equalities, equivalence and 'not
  above/below' are decided as usual.
- Every INCONCLUSIVE, and every PASS of a "no difference / within spread / not better" claim,
  carries power figures: the smallest effect the data could detect and the seeds (or clients)
  that would decide the claim at the observed effect and spread, or why no number would. A
  family member Holm leaves INCONCLUSIVE carries them at the level it was tested at.
- A record missing an evaluation its metric reads (null where the run evaluated: a diverged or
  broken run) makes the claim ERROR, naming the record, variant, seed and round: no number of
  seeds decides a claim on a run whose metric is undefined (`harness.kinds.evaluations`). A metric
  whose definition treats missing evaluations otherwise decides as usual, and the reason names
  every value it so treated.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from harness.catalog import Catalog, LoadedClaim
from harness.kinds.evaluations import MissingValue
from harness.numerics import fingerprint
from harness.observe import Observed, Series, observe
from harness.planning import variants_needed
from harness.schema import claim as schema
from scipy import stats as scipy_stats

from harness.evidence import (Evidence, combine, decided, holm_levels, holm_rank_levels, holm_rejection_levels,
                               margin_text, margins, nearest)
from harness.stats import (Correlation, Power, equivalence, fisher_power, inclusion_power, sd_bounds, sensitivity,
                           one_sided_units, sign_count_p, sign_power, sign_test, sign_test_seeds, spread_power,
                           summarize, t_power)

PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR = "PASS", "FAIL", "INCONCLUSIVE", "SKIPPED", "ERROR"
STATUSES = (PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR)
_SEVERITY = {PASS: 0, INCONCLUSIVE: 1, FAIL: 2, ERROR: 3}


@dataclass
class Decision:
    """The outcome of one expectation on one observation, and the comparisons it rests on."""

    status: str
    reason: str
    power: Power | None = None
    evidence: list[Evidence] = field(default_factory=list)


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
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """The comparisons the verdict rests on (`harness.evidence.Evidence`), each in its test statistic."""
    margins: dict[str, float] = field(default_factory=dict)
    """How far (in standard errors of its statistics) the verdict is from each other verdict."""
    margin: str = ""
    numerics: list[str] = field(default_factory=list)
    """Numerics fingerprints of the records behind the verdict (more than one: mixed numerics)."""
    family: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _range(expectation) -> tuple[float, float]:
    """The closed range a between/approx/equals expectation accepts."""
    admitted = schema.admitted_range(expectation)
    if admitted is None or isinstance(expectation, schema.Equivalent):
        raise TypeError(type(expectation))
    return admitted


def describe(expectation, obs=None) -> str:
    """A short human reading of an expectation and of the test that decides it."""
    correlation = isinstance(obs, schema.CorrelationObservation)
    every = getattr(expectation, "of", "mean") == "every_seed"
    alpha = getattr(expectation, "alpha", 0.05)
    if correlation:
        test = _correlation_test_text(expectation, alpha)
        how = (f" on every seed (Fisher z per seed, {test})" if every
               else f" (random-effects pool of Fisher z over seeds, {test})")
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
            return (f"|mean paired difference| < seed-to-seed std of {expectation.within_spread_of} (TOST against "
                    f"the spread's {1 - alpha:.0%} lower bound, α = {alpha})")
    raise TypeError(type(expectation))


def _correlation_test_text(expectation, alpha: float) -> str:
    if isinstance(expectation, schema._Inequality):
        return f"one-sided at α = {alpha}"
    return f"{1 - 2 * alpha:.0%} interval"


# --- reading one value against an expectation ---------------------------------------------

def _point_test(expectation) -> Callable[[float], bool]:
    if isinstance(expectation, schema._Inequality):
        bound = expectation.bound
        beyond = (lambda v: v < bound) if expectation.side == "less" else (lambda v: v > bound)
        return (lambda v: not beyond(v)) if expectation.negated else beyond
    low, high = _range(expectation)
    return lambda v: low <= v <= high


def _nearest_bound(expectation, value: float) -> float:
    if isinstance(expectation, schema._Inequality):
        return expectation.bound
    low, high = _range(expectation)
    return low if abs(value - low) <= abs(value - high) else high


def _oriented(expectation, distance: float) -> float:
    """A signed distance from the bound (estimate - bound) oriented so that larger favours the claim."""
    oriented = distance if expectation.side == "greater" else -distance
    return -oriented if expectation.negated else oriented


def _bound_evidence(expectation, label: str, estimate: float, se: float, df: float | None,
                    fail_alpha: float, scale: Callable[[float], float] = float, seeds: int = 0,
                    source: str | None = None) -> list[Evidence]:
    """The comparisons of an estimate with standard error `se` against the expectation's bound(s),
    the bounds read on the estimate's scale (`scale`: Fisher's z for a correlation). The estimate
    averages `seeds` seeds of the series `source` (default `label`)."""
    alpha = expectation.alpha
    origin = dict(se=se if se > 0.0 else None, seeds=seeds, sources=(source or label,), fisher_z=scale is _atanh)

    def statistic(distance: float) -> float:
        if se > 0.0:
            return distance / se
        return math.copysign(math.inf, distance) if distance != 0.0 else -math.inf

    if isinstance(expectation, schema._Inequality):
        bound = scale(expectation.bound)
        value = statistic(_oriented(expectation, estimate - bound))
        if expectation.negated:
            if se == 0.0 and estimate == bound:
                value = math.inf  # exactly on the bound is 'not beyond' it
            return [Evidence(label, value, df, None, fail_alpha, **origin)]
        return [Evidence(label, value, df, alpha, fail_alpha, **origin)]
    low, high = _range(expectation)
    low_scaled, high_scaled = scale(low), scale(high)
    at_low = math.inf if se == 0.0 and estimate == low_scaled else statistic(estimate - low_scaled)
    at_high = math.inf if se == 0.0 and estimate == high_scaled else statistic(high_scaled - estimate)
    return [Evidence(f"{label} ≥ {_fmt(low)}", at_low, df, alpha, fail_alpha, **origin),
            Evidence(f"{label} ≤ {_fmt(high)}", at_high, df, alpha, fail_alpha, **origin)]


# --- tests of one series ---------------------------------------------------------------

def _every_seed(expectation, series: Series) -> Decision:
    """Each seed read on its own: directly where the values are fixed by the config or by the
    protocol's structure or exact algebra (`Series.structural`: each seed is a check, not a draw),
    where two or more seeds all agree (as for a mean) or where the claim is an exact value (an
    invariant: only values tied with it meet it, which a sign test cannot count); else as a sign
    count."""
    exact_value = not isinstance(expectation, schema._Inequality) and _range(expectation)[0] == _range(expectation)[1]
    agreeing = len(series.values) >= 2 and len(set(series.values.values())) == 1
    if series.deterministic or series.structural or agreeing or exact_value:
        return _each_seed_directly(expectation, series)
    if getattr(expectation, "negated", False):
        return _beyond_count(expectation, series)
    return _sign_count(expectation, series)


def _each_seed_directly(expectation, series: Series) -> Decision:
    holds = _point_test(expectation)
    evidence = [decided(f"{series.label} s{seed}", holds(v)) for seed, v in series.values.items()]
    failing = {seed: v for seed, v in series.values.items() if not holds(v)}
    if failing:
        listed = ", ".join(f"s{seed} = {_fmt(v)}" for seed, v in failing.items())
        return Decision(FAIL, f"{series.label}: {len(failing)} of {len(series.values)} seeds miss it ({listed})",
                        evidence=evidence)
    return Decision(PASS, f"{series.label}: all {len(series.values)} seeds meet it", evidence=evidence)


def _sign_evidence(label: str, p_value: float, seeds: int, alpha: float, sources: tuple[str, ...]) -> Evidence:
    """A sign test's p as a comparison that cannot fail: the normal quantile of p against that of α."""
    return Evidence(label, float(scipy_stats.norm.isf(p_value)), None, alpha, None, seeds=seeds, sources=sources,
                    sign_count=True)


def _sign_count(expectation, series: Series) -> Decision:
    """'On every seed' of a metric that varies with the seed: a seed on the wrong side contradicts it
    (FAIL); all n on the claimed side decide it only if a one-sided sign test rejects at α, p = 0.5^n."""
    direct = _each_seed_directly(expectation, series)
    if direct.status == FAIL:
        return direct
    n, alpha = len(series.values), expectation.alpha
    p_value = sign_count_p(n, n)
    evidence = direct.evidence + [_sign_evidence(f"{series.label}: seeds on the claimed side", p_value, n, alpha,
                                                 (series.label,))]
    head = f"{series.label}: all {n} seeds meet it, sign test p = 0.5^{n} = {p_value:.3g}"
    if combine(evidence) == PASS:
        return Decision(PASS, f"{head} ≤ α = {alpha:.3g}", evidence=evidence)
    return Decision(INCONCLUSIVE, f"{head} > α = {alpha:.3g}: {n} seeds cannot show it holds beyond them",
                    sign_power(n, alpha), evidence)


def _beyond_count(expectation, series: Series) -> Decision:
    """'Not significantly beyond the bound' on every seed of a metric that varies with the seed: FAIL
    only if the seeds beyond the bound are significantly many (one-sided sign test at α)."""
    holds = _point_test(expectation)
    n, alpha = len(series.values), expectation.alpha
    beyond = [seed for seed, v in series.values.items() if not holds(v)]
    p_value = sign_count_p(len(beyond), n) if beyond else 1.0
    statistic = -float(scipy_stats.norm.isf(p_value))
    evidence = [Evidence(f"{series.label}: seeds beyond {_fmt(expectation.bound)}", statistic, None, None, alpha,
                         seeds=n, sources=(series.label,), sign_count=True)]
    status = combine(evidence)
    listed = f" ({', '.join(f's{seed}' for seed in beyond)})" if beyond else ""
    reason = (f"{series.label}: {len(beyond)} of {n} seeds beyond {_fmt(expectation.bound)}{listed}, sign test "
              f"p = {p_value:.3g} against α = {alpha:.3g}")
    if status == FAIL:
        return Decision(FAIL, reason, evidence=evidence)
    smallest = sign_test_seeds(alpha)
    could = (f"a sign test over {n} seeds cannot show it beyond the bound (it needs {smallest} seeds, all beyond)"
             if n < smallest else f"a sign test over {n} seeds shows it beyond the bound only if "
                                  f"{_fewest_beyond(n, alpha)} or more of them are")
    return Decision(PASS, reason, Power("seeds", n, None, None, could), evidence)


def _fewest_beyond(n: int, alpha: float) -> int:
    """The fewest of n seeds beyond a bound that a one-sided sign test finds significant at α."""
    return next(k for k in range(1, n + 1) if sign_count_p(k, n) <= alpha)


def _direct(expectation, series: Series, why: str, fail_alpha: float) -> Decision:
    mean = summarize(list(series.values.values())).mean
    evidence = _bound_evidence(expectation, series.label, mean, 0.0, None, fail_alpha)
    status = combine(evidence)
    verb = {PASS: "meets", FAIL: "misses", INCONCLUSIVE: "cannot decide"}[status]
    return Decision(status, f"{series.label}: {_fmt(mean)} {verb} it ({why})", evidence=evidence)


def _disagreeing(series: Series) -> bool:
    """Seeds of a deterministic metric further apart than its declared agreement."""
    values = list(series.values.values())
    tolerance = max(series.agreement, 1e-12)
    return any(v != values[0] and not math.isclose(v, values[0], rel_tol=tolerance) for v in values)


def _mean_test(expectation, series: Series, fail_alpha: float) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    if series.deterministic:
        if _disagreeing(series):
            listed = ", ".join(f"s{seed} = {_fmt(v)}" for seed, v in series.values.items())
            return Decision(ERROR, f"{series.label}: declared fixed by the config, yet its seeds disagree ({listed}); "
                                   "the metric's `deterministic` declaration is wrong or the run is not reproducible")
        return _direct(expectation, series, "the metric is fixed by the config: one seed decides", fail_alpha)
    alpha = expectation.alpha
    if s.n < 2:
        power = t_power(values, 0.0, alpha)
        return Decision(INCONCLUSIVE, f"{series.label}: one seed ({_fmt(s.mean)}) of a metric that varies with the "
                                      "seed cannot decide a test of the mean", power)
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        if math.isnan(s.mean):
            return Decision(INCONCLUSIVE, f"{series.label}: +inf and -inf on seeds {infinite}",
                            Power("seeds", s.n, None, None, "a mean of +inf and -inf is undefined: no number of seeds "
                                                            "decides it (an `order` or a per-seed reading would)"))
        return _direct(expectation, series, f"infinite on seeds {infinite}: no spread brings the mean back",
                       fail_alpha)
    if s.std == 0.0:
        return _direct(expectation, series, f"all {s.n} seeds equal", fail_alpha)
    se = s.std / math.sqrt(s.n)
    evidence = _bound_evidence(expectation, series.label, s.mean, se, s.n - 1, fail_alpha, seeds=s.n)
    status = combine(evidence)
    head = f"{series.label}: mean {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n})"
    if isinstance(expectation, schema._Inequality):
        bound = expectation.bound
        p_claim, p_other = evidence[0].p_claim, evidence[0].p_against
        if expectation.negated:
            side = "below" if expectation.side == "less" else "above"
            if status == FAIL:
                return Decision(FAIL, f"{head} is significantly {side} {_fmt(bound)}, one-sided p = {p_other:.3g}"
                                      f"{_level(fail_alpha, alpha)}", evidence=evidence)
            return Decision(PASS, f"{head} is not significantly {side} {_fmt(bound)}, one-sided p = {p_other:.3g}",
                            sensitivity(t_power(values, s.mean - bound, fail_alpha)), evidence)
        relation = {PASS: "meets", FAIL: "contradicts", INCONCLUSIVE: "cannot decide"}[status]
        power = None
        if status == INCONCLUSIVE:
            toward_pass = _oriented(expectation, s.mean - bound) >= 0
            power = t_power(values, s.mean - bound, alpha if toward_pass else fail_alpha)
        return Decision(status, f"{head} {relation} the bound {_fmt(bound)}, one-sided p = {p_claim:.3g}"
                                f" (other side p = {p_other:.3g}{_level(fail_alpha, alpha)})", power, evidence)
    low, high = _range(expectation)
    t_critical = float(scipy_stats.t.isf(alpha, s.n - 1))
    ci_low, ci_high = s.mean - t_critical * se, s.mean + t_critical * se
    where = {PASS: "lies inside", FAIL: "lies outside", INCONCLUSIVE: "straddles a bound of"}[status]
    power = inclusion_power(s.mean, s.std, low, high, s.n, alpha) if status == INCONCLUSIVE else None
    return Decision(status, f"{series.label}: mean {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n}), "
                            f"{1 - 2 * alpha:.0%} interval [{_fmt(ci_low)}, {_fmt(ci_high)}] {where} "
                            f"[{_fmt(low)}, {_fmt(high)}]{_level(fail_alpha, alpha)}", power, evidence)


def _level(fail_alpha: float, alpha: float) -> str:
    """Where a contradiction is tested below α (several variants, Holm), say so."""
    return f"; a contradiction is tested at α = {fail_alpha:.3g} (Holm over the variants)" if fail_alpha < alpha else ""


def _correlation_test(expectation, series: Series, fail_alpha: float) -> Decision:
    undefined = series.undefined
    if undefined:
        listed = "; ".join(f"s{seed}: {reason}" for seed, reason in undefined.items())
        return Decision(INCONCLUSIVE, f"{series.label}: the correlation is undefined ({listed})",
                        Power("seeds", len(series.values), None, None,
                              "no number of seeds decides an undefined correlation: what would is runs in which it "
                              "is defined (the reason says what is missing: clients, or quantities that vary "
                              "across clients beyond the control)"))
    alpha = expectation.alpha
    if expectation.of == "every_seed":
        return _correlation_on_every_seed(expectation, series, fail_alpha)
    pooled = series.pooled
    evidence = _bound_evidence(expectation, series.label, pooled.z, pooled.se, pooled.df, fail_alpha, _atanh,
                               seeds=pooled.seeds)
    status = combine(evidence)
    low, high = pooled.interval(1 - 2 * alpha)
    power = None
    if status == INCONCLUSIVE:
        power = _pooled_power(expectation, series)
    elif getattr(expectation, "negated", False) and status == PASS:
        power = sensitivity(_pooled_power(expectation, series))
    return Decision(status, f"{series.label}: pooled r = {_fmt(pooled.r)}, {1 - 2 * alpha:.0%} interval "
                            f"[{_fmt(low)}, {_fmt(high)}] over {len(series.correlations)} seeds (random effects: "
                            f"{pooled.heterogeneity_text()}){_level(fail_alpha, alpha)}", power, evidence)


def _correlation_on_every_seed(expectation, series: Series, fail_alpha: float) -> Decision:
    """Each seed's Fisher-z interval: PASS needs every seed to pass at α (intersection-union); a seed's
    miss counts only where it survives Holm's step-down across the seeds at `fail_alpha`."""
    per_seed = {seed: _bound_evidence(expectation, f"{series.label} s{seed}", c.z, c.se, None, fail_alpha, _atanh,
                                      seeds=1, source=series.label)
                for seed, c in series.correlations.items()}
    p_against = [min(e.p_against for e in comparisons) for comparisons in per_seed.values()]
    levels = dict(zip(per_seed, holm_rejection_levels(p_against, fail_alpha)))
    per_seed = {seed: [replace(e, fail_alpha=levels[seed]) for e in comparisons]
                for seed, comparisons in per_seed.items()}
    evidence = [e for comparisons in per_seed.values() for e in comparisons]
    by = {o: [seed for seed, comparisons in per_seed.items() if combine(comparisons) == o]
          for o in (PASS, FAIL, INCONCLUSIVE)}
    holm = (f"; a seed's miss is tested by Holm's step-down over the {len(per_seed)} seeds at α = {fail_alpha:.3g} "
            f"(" + ", ".join(f"s{seed} p = {p:.3g} against {levels[seed]:.3g}"
                             for seed, p in zip(per_seed, p_against)) + ")")
    head = (f"{series.label}: {len(by[PASS])} of {len(per_seed)} seeds' intervals meet it, "
            f"{len(by[FAIL])} miss it, {len(by[INCONCLUSIVE])} straddle it")
    if by[FAIL]:
        return Decision(FAIL, f"{head} (missing: {', '.join(f's{seed}' for seed in by[FAIL])}){holm}",
                        evidence=evidence)
    if by[INCONCLUSIVE]:
        powers = [_clients_power(expectation, series.correlations[seed],
                                 expectation.alpha if min(e.statistic for e in per_seed[seed]) >= 0 else levels[seed])
                  for seed in by[INCONCLUSIVE]]
        needed = [p for p in powers if p.needed is not None]
        power = max(needed, key=lambda p: p.needed) if needed else powers[0]
        return Decision(INCONCLUSIVE, f"{head}{holm}", power, evidence)
    return Decision(PASS, head, evidence=evidence)


def _atanh(r: float) -> float:
    return math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))


def _pooled_power(expectation, series: Series) -> Power:
    """Seeds that would decide a pooled correlation, each seed as heavy as the observed ones on average
    (its sampling variance plus the between-seed variance)."""
    per_seed = list(series.correlations.values())
    pooled = series.pooled
    variance = sum(1.0 / c.weight for c in per_seed) / len(per_seed) + pooled.tau_squared
    if isinstance(expectation, schema._Inequality):
        return fisher_power(pooled.z, expectation.bound, len(per_seed), variance, "seeds", expectation.alpha)
    low, high = (_atanh(b) for b in _range(expectation))
    return inclusion_power(pooled.z, math.sqrt(variance), low, high, len(per_seed), expectation.alpha,
                           t_based=False)


def _clients_power(expectation, c: Correlation, alpha: float | None = None) -> Power:
    """Clients per run that would decide one seed's correlation at `alpha` (default: the expectation's;
    each client adds 1 to z's weight)."""
    alpha = expectation.alpha if alpha is None else alpha
    if isinstance(expectation, schema._Inequality):
        power = fisher_power(c.z, expectation.bound, int(c.weight), 1.0, "clients per run", alpha)
    else:
        low, high = (_atanh(b) for b in _range(expectation))
        power = inclusion_power(c.z, 1.0, low, high, int(c.weight), alpha, "clients per run", t_based=False)
    offset = c.n - int(c.weight)
    return Power(power.unit, c.n, power.detectable, None if power.needed is None else power.needed + offset,
                 power.note)


def _not_a_number(series: Series) -> Decision | None:
    """INCONCLUSIVE where a seed's value is NaN (other than an undefined correlation's)."""
    nan_seeds = [seed for seed, v in series.values.items() if math.isnan(v) and seed not in series.undefined]
    if not nan_seeds:
        return None
    return Decision(INCONCLUSIVE, f"{series.label}: not a number on seeds {nan_seeds} (see the run records)",
                    Power("seeds", len(series.values), None, None,
                          "no number of seeds decides it while a seed's value is not a number: what would is "
                          "those seeds' runs giving a number"))


def _value_test(expectation, series: Series, fail_alpha: float) -> Decision:
    nan = _not_a_number(series)
    if nan is not None:
        return nan
    if series.correlations:
        return _correlation_test(expectation, series, fail_alpha)
    if expectation.of == "every_seed":
        return _every_seed(expectation, series)
    return _mean_test(expectation, series, fail_alpha)


# --- tests across series ---------------------------------------------------------------

def _pair_test(higher: Series, lower: Series, alpha: float, fail_alpha: float
               ) -> tuple[str, str, Power | None, Evidence]:
    """'pass' / 'reversed' / 'undecided' for `higher` above `lower`, paired over their seeds."""
    seeds = [seed for seed in higher.values if seed in lower.values]
    differences = [higher.values[seed] - lower.values[seed] for seed in seeds]
    label = f"{higher.label} − {lower.label}"
    outcome_of = {"pass": "pass", "fail": "reversed", "undecided": "undecided"}
    if any(math.isinf(d) for d in differences):
        return _sign_pair(label, seeds, differences, alpha, fail_alpha)
    s = summarize(differences)
    text = f"{label}: mean {_fmt(s.mean)}"
    if higher.deterministic and lower.deterministic or (s.n >= 2 and s.std == 0.0):
        evidence = decided(label, s.mean > 0)
        return outcome_of[evidence.outcome], f"{text} (no spread: compared directly)", None, evidence
    if s.n < 2:
        return "undecided", f"{text} (one seed)", t_power(differences, 0.0, alpha), \
            Evidence(label, math.nan, None, alpha, fail_alpha)
    evidence = Evidence(label, s.mean / (s.std / math.sqrt(s.n)), s.n - 1, alpha, fail_alpha,
                        se=s.std / math.sqrt(s.n), seeds=s.n, sources=(higher.label, lower.label))
    text = f"{text} ± {_fmt(s.std)} (n = {s.n}), one-sided p = {evidence.p_claim:.3g}"
    outcome = outcome_of[evidence.outcome]
    if outcome == "reversed":
        return outcome, f"{text}, reversed p = {evidence.p_against:.3g} (α = {fail_alpha:.3g})", None, evidence
    if outcome == "pass":
        return outcome, text, None, evidence
    return outcome, text, t_power(differences, s.mean, alpha if s.mean > 0 else fail_alpha), evidence


def _sign_pair(label: str, seeds: list[int], differences: list[float], alpha: float, fail_alpha: float
               ) -> tuple[str, str, Power | None, Evidence]:
    """A pair with an infinite difference on some seed: decided by the signs (exact one-sided sign test)."""
    p_above, p_below = sign_test(differences)
    infinite = [seed for seed, d in zip(seeds, differences) if math.isinf(d)]
    statistic = float(scipy_stats.norm.isf(p_above)) if p_above <= p_below else -float(scipy_stats.norm.isf(p_below))
    evidence = Evidence(label, statistic, None, alpha, fail_alpha, seeds=len(differences), sign_count=True)
    outcome = {"pass": "pass", "fail": "reversed", "undecided": "undecided"}[evidence.outcome]
    text = (f"{label}: infinite on seeds {infinite}, so the signs decide (sign test: {sum(d > 0 for d in differences)} "
            f"of {len(differences)} seeds above, p = {p_above:.3g}; below p = {p_below:.3g})")
    power = None
    if outcome == "undecided":
        needed = sign_test_seeds(alpha)
        power = Power("seeds", len(differences), None, needed,
                      f"a sign test needs {needed} seeds all on one side at α = {alpha:.3g}")
    return outcome, text, power, evidence


def _order_test(expectation: schema.Order, observed: Observed, obs: schema.CompareObservation) -> Decision:
    by_variant = dict(zip(obs.variants, observed.series))
    ranked = [by_variant[v] for v in expectation.order]
    pairs = list(zip(ranked, ranked[1:]))
    if expectation.of == "every_seed":
        return _order_on_every_seed(expectation, pairs)
    fail_alpha = expectation.alpha / len(pairs)
    results = [_pair_test(higher, lower, expectation.alpha, fail_alpha) for higher, lower in pairs]
    reason = "; ".join(text for _, text, _, _ in results)
    evidence = [e for _, _, _, e in results]
    outcomes = [outcome for outcome, _, _, _ in results]
    if "reversed" in outcomes:
        return Decision(FAIL, reason, evidence=evidence)
    if all(outcome == "pass" for outcome in outcomes):
        return Decision(PASS, reason, evidence=evidence)
    powers = [power for outcome, _, power, _ in results if outcome == "undecided" and power is not None]
    decided_powers = [p for p in powers if p.needed is not None]
    return Decision(INCONCLUSIVE, reason, max(decided_powers, key=lambda p: p.needed) if decided_powers else
                    (powers[0] if powers else None), evidence)


def _order_on_every_seed(expectation: schema.Order, pairs: list[tuple[Series, Series]]) -> Decision:
    """Every adjacent pair in order on every seed: a seed out of order is a FAIL; for a metric that
    varies with the seed, each pair's count of seeds in order is a sign test (all n: p = 0.5^n), and
    PASS needs every pair's at α (intersection-union: no correction)."""
    evidence = []
    for higher, lower in pairs:
        bad = [seed for seed in higher.values if not higher.values[seed] > lower.values[seed]]
        evidence += [decided(f"{higher.label} > {lower.label} s{seed}", seed not in bad) for seed in higher.values]
        if bad:
            return Decision(FAIL, f"{higher.label} is not above {lower.label} on seeds {bad}", evidence=evidence)
    order = "observed order " + " > ".join(expectation.order) + " on every seed"
    if all(s.deterministic for pair in pairs for s in pair):
        return Decision(PASS, order, evidence=evidence)
    n, alpha = len(pairs[0][0].values), expectation.alpha
    p_value = sign_count_p(n, n)
    evidence += [_sign_evidence(f"{higher.label} > {lower.label}: seeds in order", p_value, n, alpha,
                                (higher.label, lower.label)) for higher, lower in pairs]
    head = f"{order}, sign test p = 0.5^{n} = {p_value:.3g} for each pair"
    if combine(evidence) == PASS:
        return Decision(PASS, f"{head} ≤ α = {alpha:.3g}", evidence=evidence)
    return Decision(INCONCLUSIVE, f"{head} > α = {alpha:.3g}: {n} seeds cannot show the order holds beyond them",
                    sign_power(n, alpha), evidence)


def _equivalence_test(expectation: schema.Equivalent, series: Series) -> Decision:
    values = list(series.values.values())
    s = summarize(values)
    bound, alpha = expectation.equivalent_within, expectation.alpha
    within = schema.Between(between=(-bound, bound), alpha=alpha)
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        return Decision(FAIL, f"{series.label}: infinite on seeds {infinite}: an unbounded difference lies outside "
                              f"±{_fmt(bound)}", evidence=[decided(series.label, False, alpha)])
    if series.deterministic or (s.n >= 2 and s.std == 0.0):
        evidence = _bound_evidence(within, series.label, s.mean, 0.0, None, alpha)
        return Decision(combine(evidence), f"difference {_fmt(s.mean)} with no spread between seeds, compared "
                                           "directly", evidence=evidence)
    if s.n < 2:
        return Decision(INCONCLUSIVE, f"equivalence needs at least 2 seeds, got {s.n}", t_power(values, 0.0, alpha))
    outcome, p_value, (low, high) = equivalence(values, bound, alpha)
    evidence = _bound_evidence(within, series.label, s.mean, s.std / math.sqrt(s.n), s.n - 1, alpha, seeds=s.n)
    status = combine(evidence)
    power = None
    if status == INCONCLUSIVE:
        power = inclusion_power(s.mean, s.std, -bound, bound, s.n, alpha)
    elif status == PASS:
        power = sensitivity(inclusion_power(s.mean, s.std, -bound, bound, s.n, alpha))
    return Decision(status, f"mean difference {_fmt(s.mean)} ± {_fmt(s.std)} (n = {s.n}), {1 - 2 * alpha:.0%} "
                            f"interval [{_fmt(low)}, {_fmt(high)}], TOST p = {p_value:.3g}", power, evidence)


def _within_spread_test(expectation: schema.WithinSpread, series: Series, spread: Series) -> Decision:
    """Equivalence of the paired difference within the reference's seed spread, that spread's own
    uncertainty counted against the claim: PASS if the difference's (1 − 2α) interval lies within
    ± the (1 − α) lower confidence bound of the reference's standard deviation, FAIL if it lies
    wholly outside ± its upper confidence bound."""
    values, reference = list(series.values.values()), list(spread.values.values())
    alpha = expectation.alpha
    name = expectation.within_spread_of
    infinite = [seed for seed, v in series.values.items() if math.isinf(v)]
    if infinite:
        return Decision(FAIL, f"{series.label}: infinite on seeds {infinite}: outside any seed spread",
                        evidence=[decided(series.label, False, alpha)])
    d = summarize(values)
    r = summarize(reference)
    no_spread_reference = spread.deterministic or (r.n >= 2 and r.std == 0.0)
    if r.n < 2 and not no_spread_reference:
        return Decision(INCONCLUSIVE, f"a seed-to-seed spread of {name} needs at least 2 seeds",
                        t_power(values, 0.0, alpha))
    low_sd, high_sd = (r.std, r.std) if no_spread_reference else sd_bounds(reference, alpha)
    no_spread_difference = series.deterministic or (d.n >= 2 and d.std == 0.0)
    if d.n < 2 and not no_spread_difference:
        return Decision(INCONCLUSIVE, "the paired difference needs at least 2 seeds", t_power(values, 0.0, alpha))
    se = 0.0 if no_spread_difference else d.std / math.sqrt(d.n)
    df = None if no_spread_difference else d.n - 1
    size = abs(d.mean)

    def against(bound: float, passes: bool) -> Evidence:
        distance = bound - size
        if se > 0.0:
            value = distance / se
        else:
            value = math.inf if distance >= 0.0 else -math.inf
        origin = dict(se=se or None, seeds=d.n, sources=(series.label,))
        return (Evidence(f"|difference| within {_fmt(bound)}", value, df, alpha, None, **origin) if passes else
                Evidence(f"|difference| beyond {_fmt(bound)}", value, df, 1.0, alpha, **origin))

    evidence = [against(low_sd, True), against(high_sd, False)]
    status = combine(evidence)
    spread_text = (f"seed std of {name} {_fmt(r.std)}" if no_spread_reference else
                   f"seed std of {name} {_fmt(r.std)}, {1 - alpha:.0%} bounds [{_fmt(low_sd)}, {_fmt(high_sd)}] "
                   f"(n = {r.n})")
    if se > 0.0:
        t_critical = float(scipy_stats.t.isf(alpha, d.n - 1))
        head = (f"mean paired difference {_fmt(d.mean)} ± {_fmt(d.std)} (n = {d.n}), {1 - 2 * alpha:.0%} "
                f"interval [{_fmt(d.mean - t_critical * se)}, {_fmt(d.mean + t_critical * se)}]")
    else:
        head = f"paired difference {_fmt(d.mean)} on every seed"
    verb = {PASS: "lies within ±", FAIL: "lies beyond ±", INCONCLUSIVE: "cannot be placed against ±"}[status]
    bound_text = _fmt(low_sd) if status != FAIL else _fmt(high_sd)
    power = None
    if status == INCONCLUSIVE and se > 0.0 and low_sd > 0.0:
        power = inclusion_power(d.mean, d.std, -low_sd, low_sd, d.n, alpha)
    elif status == INCONCLUSIVE:
        power = Power("seeds", d.n, None, None, "the reference's spread bounds are 0, or the difference has no spread: "
                                                "no number of seeds decides it at these values")
    elif status == PASS and se > 0.0:
        power = sensitivity(inclusion_power(d.mean, d.std, -low_sd, low_sd, d.n, alpha))
    return Decision(status, f"{head} {verb}{bound_text} ({spread_text})", power, evidence)


def _spread_ratio_test(expectation, first: Series, second: Series) -> Decision:
    """A bound or range on sd(first) / sd(second), tested on the log of the ratio (normal approximation:
    var(log s²) ≈ 2 / (n − 1), so the log ratio of standard deviations has variance 1/(2(n₁−1)) + 1/(2(n₂−1)))."""
    a, b = summarize(list(first.values.values())), summarize(list(second.values.values()))
    label = f"sd({first.label}) / sd({second.label})"
    if a.n < 2 or b.n < 2:
        return Decision(INCONCLUSIVE, f"{label}: a seed-to-seed spread needs at least 2 seeds of each",
                        Power("seeds of each variant", min(a.n, b.n), None, None,
                              "at least 2 seeds of each variant (3 for a useful test) are needed before any number "
                              "of seeds can be estimated"))
    if a.std == 0.0 or b.std == 0.0:
        ratio = math.inf if b.std == 0.0 and a.std > 0.0 else (0.0 if a.std == 0.0 and b.std > 0.0 else 1.0)
        evidence = _bound_evidence(expectation, label, ratio, 0.0, None, expectation.alpha)
        return Decision(combine(evidence), f"{label} = {_fmt(ratio)} (a spread of 0: compared directly)",
                        evidence=evidence)
    estimate = math.log(a.std / b.std)
    se = math.sqrt(1.0 / (2 * (a.n - 1)) + 1.0 / (2 * (b.n - 1)))
    evidence = _bound_evidence(expectation, label, estimate, se, None, expectation.alpha, math.log, seeds=1)
    status = combine(evidence)
    z = float(scipy_stats.norm.isf(expectation.alpha))
    low, high = math.exp(estimate - z * se), math.exp(estimate + z * se)
    power = None
    if status == INCONCLUSIVE:
        power = Power("seeds of each variant", min(a.n, b.n), None, None,
                      "a ratio of seed spreads needs many seeds: its log has a standard error of about "
                      f"√(1/(n − 1)) ({se:.2f} here)")
    return Decision(status, f"{label} = {_fmt(a.std)} / {_fmt(b.std)} = {_fmt(a.std / b.std)} (n = {a.n}, {b.n}), "
                            f"one-sided {1 - expectation.alpha:.0%} bounds [{_fmt(low)}, {_fmt(high)}]", power, evidence)


def _claims_a_difference(expectation, obs, observed: Observed) -> bool:
    """The expectation claims a strict difference between variants: an order, or a plain (not
    negated) inequality on a paired difference, on a ratio of two variants' spreads, or on each of
    several variants. Ranges, equalities, equivalence and 'not above / not below' claim no difference,
    which a quantity that does not vary can meet."""
    if isinstance(expectation, schema.Order):
        return True
    if not isinstance(expectation, schema._Inequality) or expectation.negated:
        return False
    if isinstance(obs, schema.CorrelationObservation):
        return False
    return isinstance(obs, schema.DifferenceObservation) or observed.spread_ratio or len(observed.series) > 1


def _constant_comparison(expectation, obs, observed: Observed) -> str | None:
    """Why a comparison of variants measures nothing (None if it does): a metric not declared
    deterministic that takes one value on every seed of every compared variant (for a paired
    difference: 0 on every seed, the variants agreeing exactly), on at least 2 seeds."""
    if not _claims_a_difference(expectation, obs, observed):
        return None
    series = observed.series
    if any(s.deterministic or len(s.values) < 2 for s in series):
        return None
    values = {v for s in series for v in s.values.values()}
    if len(values) != 1:
        return None
    (value,) = values
    seeds = len(series[0].values)
    if isinstance(obs, schema.DifferenceObservation):
        if value != 0.0:
            return None
        return (f"{series[0].label} is 0 on every one of {seeds} seeds: the variants agree exactly, so the metric "
                "does not vary between them at this scale")
    labels = ", ".join(s.label for s in series)
    return (f"{labels}: {_fmt(value)} on every one of {seeds} seeds of every variant; a metric that varies neither "
            "with the seed nor between the variants measures nothing at this scale")


def evaluate(expectation, obs, observed: Observed) -> Decision:
    """The decision of an expectation on an observation (SKIPPED where a comparison of variants
    measures nothing at this scale: `_constant_comparison`).

    Several series (one per variant) must each meet it: PASS needs every one to pass at α (an
    intersection-union test needs no correction); a contradiction of any one is tested with
    Holm's correction over the variants (for 'any', its first step: α / number of variants).
    """
    series = observed.series + ([observed.spread] if observed.spread is not None else [])
    for s in series:
        nan = _not_a_number(s)
        if nan is not None:
            return nan
    constant = _constant_comparison(expectation, obs, observed)
    if constant is not None:
        return Decision(SKIPPED, f"not measurable at this scale: {constant}")
    if isinstance(expectation, schema.Order):
        return _order_test(expectation, observed, obs)
    if isinstance(expectation, schema.Equivalent):
        return _equivalence_test(expectation, observed.series[0])
    if isinstance(expectation, schema.WithinSpread):
        return _within_spread_test(expectation, observed.series[0], observed.spread)
    if observed.spread_ratio:
        return _spread_ratio_test(expectation, *observed.series)
    fail_alpha = expectation.alpha / len(observed.series)
    decisions = [_value_test(expectation, s, fail_alpha) for s in observed.series]
    status = max((d.status for d in decisions), key=_SEVERITY.__getitem__)
    powers = [d.power for d in decisions if d.status == status and d.power is not None]
    decided_powers = [p for p in powers if p.needed is not None]
    power = max(decided_powers, key=lambda p: p.needed) if decided_powers else (powers[0] if powers else None)
    evidence = [e for d in decisions for e in d.evidence]
    return Decision(status, "; ".join(d.reason for d in decisions), power, evidence)


# --- verdicts -------------------------------------------------------------------

def verdict_head(catalog: Catalog, loaded: LoadedClaim, profile: str) -> tuple[Verdict, Any]:
    """A SKIPPED verdict naming the claim and its tested expectation, and the expectation to test
    (None, with the reason in the verdict, where the profile has nothing to test)."""
    claim = loaded.claim
    spec = catalog.specs[claim.experiment].spec
    expectation = claim.expect.get(profile)
    verdict = Verdict(claim.id, loaded.paper, profile, claim.experiment, claim.source, claim.statement.strip(),
                      describe(expectation, claim.observe) if expectation else "none", SKIPPED, "")
    if profile not in spec.profiles:
        verdict.reason = f"experiment {spec.experiment} has no profile {profile!r}"
    elif expectation is None:
        verdict.reason = f"the claim states no expectation at profile {profile!r}"
    elif isinstance(expectation, schema.Skip):
        verdict.reason = expectation.skip
    else:
        return verdict, expectation
    return verdict, None


def verify_claim(catalog: Catalog, loaded: LoadedClaim, profile: str,
                 lookup: Callable[[str, str, int, str], tuple[str, dict | None]],
                 missing_is_error: bool = True, seeds: list[int] | None = None) -> Verdict:
    """The verdict of one claim at one profile, on the profile's seeds or on `seeds`.

    `lookup(experiment, variant, seed, profile)` gives (store key, record or None). A missing
    record is an ERROR after execution, and SKIPPED (not run) when only stored records are read.
    """
    verdict, expectation = verdict_head(catalog, loaded, profile)
    if expectation is None:
        return verdict
    claim = loaded.claim
    target = catalog.specs[claim.experiment]
    spec = target.spec
    seeds = spec.profiles[profile].seeds if seeds is None else list(seeds)
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
    verdict.numerics = sorted({fingerprint(record) for record in records.values()})
    labels = {name: v.label for name, v in spec.variants.items()}
    spread = expectation.within_spread_of if isinstance(expectation, schema.WithinSpread) else None
    try:
        observed = observe(target.kind, claim.observe, labels, seeds, records, spread)
    except MissingValue as missing:
        verdict.status, verdict.reason = ERROR, f"a value the metric reads is missing: {missing}"
        return verdict
    except Exception as error:  # noqa: BLE001 - a metric that cannot be read is this claim's ERROR
        verdict.status, verdict.reason = ERROR, f"could not compute the observation: {type(error).__name__}: {error}"
        return verdict
    verdict.observed = observed.text()
    verdict.numbers = {s.label: s.numbers() for s in observed.series}
    if observed.spread is not None:
        verdict.numbers[f"spread reference: {observed.spread.label}"] = observed.spread.numbers()
    decision = evaluate(expectation, claim.observe, observed)
    verdict.family = claim.family or ""
    _record_decision(verdict, decision)
    if observed.notes:
        verdict.reason += f" [missing values treated as the metric defines: {'; '.join(observed.notes)}]"
    if len(verdict.numerics) > 1:
        verdict.reason = f"{mixed_numerics_text(records)} {verdict.reason}"
    return verdict


def _record_decision(verdict: Verdict, decision: Decision) -> None:
    verdict.status, verdict.reason = decision.status, decision.reason
    verdict.evidence = [e.to_dict() for e in decision.evidence]
    verdict.margins = margins(decision.evidence) if decision.status in (PASS, FAIL, INCONCLUSIVE) else {}
    verdict.margin = margin_text(decision.evidence) if verdict.margins else ""
    if decision.power is not None:
        verdict.power = decision.power.to_dict()
        verdict.reason += f" — power: {decision.power.text()}"


def mixed_numerics_text(records: dict[tuple[str, int], dict]) -> str:
    """Which records were computed under which numerics, when they differ."""
    groups: dict[str, list[str]] = {}
    for (variant, seed), record in sorted(records.items()):
        groups.setdefault(fingerprint(record), []).append(f"{variant} s{seed}")
    listed = "; ".join(f"`{fp}`: {', '.join(runs)}" for fp, runs in sorted(groups.items()))
    return f"[records of {len(groups)} different numerics, compared as one series: {listed}]"


# --- families: claims that test one relation several ways -----------------------------------

def _rejection_p(evidence: list[Evidence], alpha: float) -> float:
    """The p-value with which a claim rejects its null, on the scale of its own α: the weakest
    pass (every comparison must pass) or the strongest fail, Bonferroni-adjusted within the claim."""
    claimed = [e for e in evidence if e.pass_alpha is not None and e.pass_alpha < 1.0]
    p_pass = max((e.p_claim * alpha / e.pass_alpha for e in claimed), default=math.inf)
    against = [e for e in evidence if e.fail_alpha is not None]
    p_fail = min((e.p_against * alpha / e.fail_alpha for e in against), default=math.inf)
    status = combine(evidence)
    if status == PASS and claimed:
        return p_pass
    if status == FAIL:
        return p_fail
    return min(p_pass, p_fail)


def apply_families(verdicts: list[Verdict], alpha_of: Callable[[Verdict], float]) -> None:
    """Holm's step-down across each family of claims (per paper and profile).

    Each member's rejection p-value (what decided a PASS by significance or a FAIL) is tested
    at Holm's level for its rank; a member whose rejection does not survive is decided again
    with its comparisons at that level (a PASS or FAIL becomes INCONCLUSIVE, or a 'not above'
    FAIL a PASS). A member left INCONCLUSIVE carries the seeds that would decide it at that
    level (`power_at_levels`). `alpha_of` gives a verdict's α (its expectation's).
    """
    groups: dict[tuple[str, str, str], list[Verdict]] = {}
    for verdict in verdicts:
        if verdict.family and verdict.evidence and verdict.status in (PASS, FAIL, INCONCLUSIVE):
            groups.setdefault((verdict.paper, verdict.family, verdict.profile), []).append(verdict)
    for (_, family, _), members in groups.items():
        if len(members) < 2:
            continue
        alpha = min(alpha_of(v) for v in members)
        evidence = {v.claim: [Evidence(**e) for e in v.evidence] for v in members}
        p_values = [_rejection_p(evidence[v.claim], alpha) for v in members]
        levels = holm_levels(p_values, alpha)
        rank_levels = holm_rank_levels(p_values, alpha)
        for verdict, p_value, level, rank_level in zip(members, p_values, levels, rank_levels):
            adjusted = [e.scaled(level / alpha) for e in evidence[verdict.claim]]
            status = combine(adjusted)
            verdict.evidence = [e.to_dict() for e in adjusted]
            verdict.margins = margins(adjusted)
            verdict.margin = margin_text(adjusted)
            if level == 0:
                verdict.margins, verdict.margin = _unreached_margins(status, evidence[verdict.claim], alpha,
                                                                     rank_level)
            tested = f"tested at α = {level:.3g}" if level > 0 else "not tested: a claim ranked before it was not rejected"
            note = (f" — family `{family}` ({len(members)} claims, Holm across them): p = {p_value:.3g}, {tested}")
            if status != verdict.status:
                note += f"; {verdict.status} → {status}"
                verdict.status = status
            if status == INCONCLUSIVE:
                note += _family_power(verdict, evidence[verdict.claim], alpha, level, rank_level)
            verdict.reason += note


def _unreached_margins(status: str, evidence: list[Evidence], alpha: float, rank_level: float
                       ) -> tuple[dict[str, float], str]:
    """The margins of a family member the step-down did not reach (tested at level 0, where no
    statistic moves it): read at its rank's level, the level it is tested at once the claims ranked
    before it are rejected. A verdict it would already have there is at distance 0."""
    at_rank = [e.scaled(rank_level / alpha) for e in evidence]
    there = combine(at_rank)
    reach = margins(at_rank)
    found = {there: 0.0} if there != status else {}
    found.update({other: distance for other, distance in reach.items() if other != status and other not in found})
    closest = nearest(found)
    text = ("not reached by Holm's step-down" + (f"; at its rank's level {closest[1]:.2f} SE from {closest[0]}"
                                                  if closest and math.isfinite(closest[1]) else ""))
    return found, text


def _family_power(verdict: Verdict, evidence: list[Evidence], alpha: float, level: float, rank_level: float) -> str:
    """Give a family member left INCONCLUSIVE the power figure of the level it is tested at (its rank's
    level where the step-down did not reach it), in place of the one at α; the text to append."""
    tested_at = level if level > 0 else rank_level
    power = power_at_levels([e.scaled(tested_at / alpha) for e in evidence])
    if verdict.power is not None:
        verdict.reason = verdict.reason.replace(f" — power: {Power(**verdict.power).text()}", "")
    verdict.power = power.to_dict()
    where = "" if level > 0 else " (its rank's level, once the claims ranked before it are rejected)"
    return f"; power at α = {tested_at:.3g}{where}: {power.text()}"


def power_at_levels(evidence: list[Evidence]) -> Power:
    """What would decide an INCONCLUSIVE, read from its comparisons at the levels they carry: the
    largest figure over the undecided comparisons, each a one-sided test toward the verdict it leans
    to (for a range, the larger of its two one-sided figures: a lower bound of their joint one)."""
    powers = [_comparison_power(e) for e in evidence if e.outcome == "undecided"]
    decided_powers = [p for p in powers if p.needed is not None]
    if decided_powers:
        return max(decided_powers, key=lambda p: p.needed)
    return powers[0] if powers else Power("seeds", 0, None, None, "no comparison is undecided")


def _comparison_power(e: Evidence) -> Power:
    """The units that would decide one undecided comparison at its own level, from its statistic,
    standard error and seeds."""
    toward_pass = e.fail_alpha is None or (e.pass_alpha is not None and e.statistic >= 0)
    level = e.pass_alpha if toward_pass else e.fail_alpha
    if math.isnan(e.statistic) or e.seeds < 1:
        return Power("seeds", e.seeds, None, None, "the comparison has no statistic (one seed, or no spread): at "
                                                   "least 2 seeds are needed before any number can be estimated")
    if level is None or level <= 0.0:
        return Power("seeds", e.seeds, None, None, "the comparison is not tested at this level")
    if e.sign_count:
        return sign_power(e.seeds, level)
    if e.se is None:
        return Power("seeds", e.seeds, None, None, "decided without a spread: no number of seeds moves it")
    if e.df is not None and e.seeds >= 2:
        sd = e.se * math.sqrt(e.seeds)
        return spread_power(sd, e.seeds, e.statistic * e.se, level)
    if e.fisher_z:
        weight = one_sided_units(abs(e.statistic) * e.se, level, t_based=False)
        return Power("clients per run", round(1.0 / e.se ** 2) + 3, None, None if weight is None else weight + 3,
                     "Fisher z of one seed: each client adds 1 to its weight (n − 3, one less per controlled "
                     "quantity)" if weight is not None else
                     "Fisher z of one seed: the observed effect is too small for a practical number of clients")
    return Power("seeds of each variant", e.seeds, None, None,
                 "a ratio of seed spreads: its comparison carries no figure of the seeds that would decide it")
