"""Check each claim's observation against its expectation for a profile: the verdict."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.catalog import Catalog, LoadedClaim
from harness.observe import Observed, Series, observe
from harness.planning import variants_needed
from harness.schema import claim as schema
from harness.stats import equivalence, one_sided, summarize

PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR = "PASS", "FAIL", "INCONCLUSIVE", "SKIPPED", "ERROR"
STATUSES = (PASS, FAIL, INCONCLUSIVE, SKIPPED, ERROR)
_SEVERITY = {PASS: 0, INCONCLUSIVE: 1, FAIL: 2, ERROR: 3}


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def describe(expectation, obs=None) -> str:
    """A short human reading of an expectation."""
    where = " on every seed" if getattr(expectation, "of", "mean") == "every_seed" else ""
    stat = "" if where else " (mean over seeds)"
    match expectation:
        case schema.Skip():
            return f"none at this profile ({expectation.skip})"
        case schema.Between(between=(low, high)):
            return f"in [{_fmt(low)}, {_fmt(high)}]{where or stat}"
        case schema.Approx():
            tol = (f"± {_fmt(expectation.tolerance)}" if expectation.tolerance is not None
                   else f"± {expectation.relative_tolerance:.0%}")
            return f"≈ {_fmt(expectation.approx)} {tol}{where or stat}"
        case schema.Equals():
            tol = f" (tolerance {_fmt(expectation.tolerance)})" if expectation.tolerance else " exactly"
            return f"= {_fmt(expectation.equals)}{tol}{where or stat}"
        case schema._Inequality():
            test = "" if where else f" (one-sided t-test, α = {expectation.alpha})"
            return f"{expectation.relation} {_fmt(expectation.bound)}{where}{test}"
        case schema.Order():
            return " > ".join(expectation.order) + (" on every seed" if where else " (means)")
        case schema.Equivalent():
            return f"within ±{_fmt(expectation.equivalent_within)} (TOST, α = {expectation.alpha})"
        case schema.WithinSpread():
            return f"|mean paired difference| < seed-to-seed std of {expectation.within_spread_of}"
    raise TypeError(type(expectation))


# --- value tests ----------------------------------------------------------------

def _point_test(expectation) -> Callable[[float], bool]:
    match expectation:
        case schema.Between(between=(low, high)):
            return lambda v: low <= v <= high
        case schema.Approx():
            return lambda v: abs(v - expectation.approx) <= expectation.half_width
        case schema.Equals():
            return lambda v: abs(v - expectation.equals) <= expectation.tolerance
        case schema._Inequality():
            beyond = (lambda v: v < expectation.bound) if expectation.side == "less" else (lambda v: v > expectation.bound)
            return (lambda v: not beyond(v)) if expectation.negated else beyond
    raise TypeError(type(expectation))


def _value_test(expectation, series: Series) -> tuple[str, str]:
    values = list(series.values.values())
    nan_seeds = [seed for seed, v in series.values.items() if math.isnan(v)]
    if nan_seeds:
        return INCONCLUSIVE, f"{series.label}: not a number on seeds {nan_seeds} (see the run records)"
    holds = _point_test(expectation)
    if expectation.of == "every_seed":
        failing = {seed: v for seed, v in series.values.items() if not holds(v)}
        if failing:
            listed = ", ".join(f"s{seed} = {_fmt(v)}" for seed, v in failing.items())
            return FAIL, f"{series.label}: {len(failing)} of {len(values)} seeds miss it ({listed})"
        return PASS, f"{series.label}: all {len(values)} seeds meet it"
    if isinstance(expectation, schema._Inequality) and all(math.isfinite(v) for v in values):
        return _inequality_test(expectation, series, values)
    mean = float(sum(values) / len(values))
    if holds(mean):
        return PASS, f"{series.label}: mean {_fmt(mean)} meets it"
    return FAIL, f"{series.label}: mean {_fmt(mean)} misses it"


def _inequality_test(expectation: "schema._Inequality", series: Series, values: list[float]) -> tuple[str, str]:
    """One-sided t-test of the mean against the bound (direct comparison without spread)."""
    outcome, p_value = one_sided(values, expectation.bound, expectation.side, expectation.alpha)
    s = summarize(values)
    test = "" if s.deterministic else f", one-sided p = {p_value:.3g}"
    if expectation.negated:
        side = "below" if expectation.side == "less" else "above"
        if outcome == "pass":
            return FAIL, f"{series.label}: mean {_fmt(s.mean)} is significantly {side} {_fmt(expectation.bound)}{test}"
        return PASS, f"{series.label}: mean {_fmt(s.mean)} is not significantly {side} {_fmt(expectation.bound)}{test}"
    status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}[outcome]
    relation = {"pass": "meets", "fail": "contradicts", "undecided": "cannot decide"}[outcome]
    return status, f"{series.label}: mean {_fmt(s.mean)} {relation} the bound {_fmt(expectation.bound)}{test}"


def _order_test(expectation: schema.Order, observed: Observed, labels: Mapping[str, str],
                obs: schema.CompareObservation) -> tuple[str, str]:
    by_variant = dict(zip(obs.variants, observed.series))
    ranked = [by_variant[v] for v in expectation.order]
    for higher_name, lower_name, higher, lower in zip(expectation.order, expectation.order[1:], ranked, ranked[1:]):
        if expectation.of == "every_seed":
            bad = [seed for seed in higher.values if not higher.values[seed] > lower.values[seed]]
            if bad:
                return FAIL, f"{higher_name} is not above {lower_name} on seeds {bad}"
        else:
            a, b = summarize(list(higher.values.values())).mean, summarize(list(lower.values.values())).mean
            if not a > b:
                return FAIL, f"{higher_name} ({_fmt(a)}) is not above {lower_name} ({_fmt(b)})"
    return PASS, "observed order " + " > ".join(expectation.order)


def evaluate(expectation, obs, observed: Observed, labels: Mapping[str, str]) -> tuple[str, str]:
    """(status, reason) of an expectation on an observation."""
    series = observed.series + ([observed.spread] if observed.spread is not None else [])
    for s in series:
        nan_seeds = [seed for seed, v in s.values.items() if math.isnan(v)]
        if nan_seeds:
            return INCONCLUSIVE, f"{s.label}: not a number on seeds {nan_seeds} (see the run records)"
    if isinstance(expectation, schema.Order):
        return _order_test(expectation, observed, labels, obs)
    if isinstance(expectation, schema.Equivalent):
        values = list(observed.series[0].values.values())
        if len(values) < 2:
            return INCONCLUSIVE, f"equivalence needs at least 2 seeds, got {len(values)}"
        outcome, p_value, (low, high) = equivalence(values, expectation.equivalent_within, expectation.alpha)
        status = {"pass": PASS, "fail": FAIL, "undecided": INCONCLUSIVE}[outcome]
        return status, (f"mean difference {_fmt(summarize(values).mean)}, {1 - 2 * expectation.alpha:.0%} interval "
                        f"[{_fmt(low)}, {_fmt(high)}], TOST p = {p_value:.3g}")
    if isinstance(expectation, schema.WithinSpread):
        values = list(observed.series[0].values.values())
        spread = summarize(list(observed.spread.values.values())).std
        if len(values) < 2:
            return INCONCLUSIVE, "a seed-to-seed spread needs at least 2 seeds"
        mean = summarize(values).mean
        status = PASS if abs(mean) < spread else FAIL
        relation = "<" if status == PASS else "≥"
        return status, (f"|mean paired difference| {_fmt(abs(mean))} {relation} seed std of "
                        f"{expectation.within_spread_of} {_fmt(spread)}")
    results = [_value_test(expectation, series) for series in observed.series]
    status = max((s for s, _ in results), key=_SEVERITY.__getitem__)
    return status, "; ".join(reason for _, reason in results)


# --- verdicts -------------------------------------------------------------------

def verify_claim(catalog: Catalog, loaded: LoadedClaim, profile: str,
                 lookup: Callable[[str, str, int, str], tuple[str, dict | None]]) -> Verdict:
    """The verdict of one claim at one profile.

    `lookup(experiment, variant, seed, profile)` gives (store key, record or None).
    """
    claim = loaded.claim
    target = catalog.specs[claim.experiment]
    spec = target.spec
    expectation = claim.expect.get(profile)
    verdict = Verdict(claim.id, loaded.paper, profile, claim.experiment, claim.source, claim.statement.strip(),
                      describe(expectation) if expectation else "none", SKIPPED, "")
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
            if record is None:
                verdict.status, verdict.reason = ERROR, f"no record for {variant} seed {seed} (run not executed)"
                return verdict
            if record["status"] == "unavailable":
                verdict.status, verdict.reason = SKIPPED, f"data unavailable: {record['error']['message'].splitlines()[0]}"
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
    verdict.status, verdict.reason = evaluate(expectation, claim.observe, observed, labels)
    return verdict
