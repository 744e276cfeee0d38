"""Check each claim's observation against its expectation for a profile: the verdict.

How each expectation is decided (α is the expectation's `alpha`, 0.05 unless stated; a verdict on a
profile's seeds tests at 0.7 α, the first look of the plan seeds added until decided go on with, so the
two paths together keep α: `harness.statistics.sequential_rule`; below, "at α" means at that level):

- A test of the mean over seeds (`of: mean`) of a stochastic metric needs a spread: one seed is
  INCONCLUSIVE. Inequalities use one-sided t-tests (PASS if significant on the claimed side,
  FAIL if on the other); `between`, `approx` and `equals` ask whether the mean's (1 − 2α)
  t-interval lies inside the range (PASS), the mean lies beyond an edge by the critical value
  that keeps a FAIL at α over the whole range (FAIL: `stats.range_fail_critical`), or neither.
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

The tests live in `harness.verdicts`, one module a job; each expectation class names the ones that
decide it (`ExpectationBase.decide`). This module screens an observation before its test
(`evaluate`) and assembles the verdict of a claim at a profile (`verify_claim`).
"""
from __future__ import annotations

from collections.abc import Callable

from harness.kinds.evaluations import MissingValue
from harness.loading.catalog import Catalog
from harness.loading.loaded import LoadedClaim
from harness.numerics import fingerprint
from harness.running.planning import variants_needed
from harness.schema.expectations.base import ExpectationBase
from harness.schema.observations.base import Shape
from harness.statistics.evidence import margin_text, margins
from harness.statistics.outcome import ERROR, FAIL, INCONCLUSIVE, PASS, SKIPPED, STATUSES, Decision, fmt
from harness.statistics.series import Observed
from harness.statistics.values import not_a_number
from harness.verdicts import changes
from harness.verdicts.families import apply_families, power_at_levels
from harness.verdicts.observe import observe
from harness.verdicts.spans import span_readings
from harness.verdicts.verdict import Verdict

__all__ = ["ERROR", "FAIL", "INCONCLUSIVE", "PASS", "SKIPPED", "STATUSES", "Decision", "Verdict", "apply_families",
           "evaluate", "mixed_numerics_text", "power_at_levels", "verdict_head", "verify_claim"]


# --- screening: what no test of an expectation decides ---------------------------------------

def _constant_comparison(expectation, obs, observed: Observed) -> str | None:
    """Why a comparison of variants measures nothing (None if it does): a metric not declared
    deterministic that takes one value on every seed of every compared variant (for a paired
    difference: 0 on every seed, the variants agreeing exactly), on at least 2 seeds."""
    if not expectation.claims_a_difference(obs, observed):
        return None
    series = observed.series
    if any(s.deterministic or len(s.values) < 2 for s in series):
        return None
    values = {v for s in series for v in s.values.values()}
    if len(values) != 1:
        return None
    (value,) = values
    seeds = len(series[0].values)
    if obs.shape is Shape.PAIRED:
        if value != 0.0:
            return None
        return (f"{series[0].label} is 0 on every one of {seeds} seeds: the variants agree exactly, so the metric "
                "does not vary between them at this scale")
    labels = ", ".join(s.label for s in series)
    return (f"{labels}: {fmt(value)} on every one of {seeds} seeds of every variant; a metric that varies neither "
            "with the seed nor between the variants measures nothing at this scale")


def evaluate(expectation: ExpectationBase, obs, observed: Observed) -> Decision:
    """The decision of an expectation on an observation: INCONCLUSIVE where a seed's value is not a
    number, SKIPPED where a comparison of variants measures nothing at this scale
    (`_constant_comparison`), else the decision of its own test (`expectation.decide`)."""
    series = observed.series + ([observed.spread] if observed.spread is not None else [])
    for s in series:
        nan = not_a_number(s)
        if nan is not None:
            return nan
    constant = _constant_comparison(expectation, obs, observed)
    if constant is not None:
        return Decision(SKIPPED, f"not measurable at this scale: {constant}")
    return expectation.decide(obs, observed)


# --- verdicts -------------------------------------------------------------------

def verdict_head(catalog: Catalog, loaded: LoadedClaim, profile: str, level: float | None = None
                 ) -> tuple[Verdict, ExpectationBase | None]:
    """A SKIPPED verdict naming the claim and its tested expectation, and the expectation to test
    (None, with the reason in the verdict, where the profile has nothing to test) at `level`: by
    default the first look of its sequential plan, on the profile's seeds (`ExpectationBase.at_level`)."""
    claim = loaded.claim
    spec = catalog.specs[claim.experiment].spec
    stated = claim.expect.get(profile)
    expectation = stated.at_level(level) if stated is not None else None  # a `skip` has no level: as it is
    verdict = Verdict(claim.id, loaded.paper, profile, claim.experiment, claim.source, claim.statement.strip(),
                      expectation.describe(claim.observe) if expectation else "none", SKIPPED, "")
    if profile not in spec.profiles:
        verdict.reason = f"experiment {spec.experiment} has no profile {profile!r}"
    elif expectation is None:
        verdict.reason = f"the claim states no expectation at profile {profile!r}"
    elif expectation.skips:
        verdict.reason = expectation.decide(claim.observe, None).reason
    else:
        return verdict, expectation
    return verdict, None



def verify_claim(catalog: Catalog, loaded: LoadedClaim, profile: str,
                 lookup: Callable[[str, str, int, str], tuple[str, dict | None]],
                 missing_is_error: bool = True, seeds: list[int] | None = None,
                 level: float | None = None) -> Verdict:
    """The verdict of one claim at one profile, on the profile's seeds or on `seeds`, tested at the
    profile's level or at `level` (a later look's).

    `lookup(experiment, variant, seed, profile)` gives (store key, record or None). A missing
    record is an ERROR after execution, and SKIPPED (not run) when only stored records are read.
    """
    verdict, expectation = verdict_head(catalog, loaded, profile, level)
    if expectation is None:
        return verdict
    claim = loaded.claim
    target = catalog.specs[claim.experiment]
    spec = target.spec
    seeds = spec.profiles[profile].seeds if seeds is None else list(seeds)
    change = claim.change_at(profile)
    if change is not None:
        seen = [seed for seed in seeds if seed in claim.seen_at(profile)]
        verdict.readings.append(changes.earlier_reading(
            lambda before, **kw: verify_claim(catalog, before, profile, lookup, missing_is_error, **kw),
            loaded, profile, change, seen, level=level))
        verdict.readings += changes.span_on_every_seed(
            lambda now, **kw: verify_claim(catalog, now, profile, lookup, missing_is_error, **kw),
            loaded, expectation, seeds, level=level)
        seeds = claim.fresh_seeds(profile, seeds)
        if not seeds:
            return changes.without_fresh_seeds(verdict, change, profile, seen)
    records: dict[tuple[str, int], dict] = {}
    for variant in variants_needed(loaded, profile):
        for seed in seeds:
            key, record = lookup(spec.experiment, variant, seed, profile)
            verdict.runs.append(key)
            if record is None and not missing_is_error:
                verdict.status, verdict.reason = SKIPPED, (f"not run at profile {profile!r} (no record for {variant} "
                                                           f"seed {seed}); `fedclaims report --profile {profile}` "
                                                           "runs it")
                return verdict
            if record is None:
                verdict.status, verdict.reason = ERROR, f"no record for {variant} seed {seed} (run not executed)"
                return verdict
            if record["status"] == "unavailable":
                verdict.status, verdict.reason = SKIPPED, ("data unavailable: "
                                                           f"{record['error']['message'].splitlines()[0]}")
                verdict.data_unavailable = True
                return verdict
            if record["status"] != "ok":
                error = record["error"]
                verdict.status, verdict.reason = ERROR, (f"{variant} seed {seed} raised {error['type']}: "
                                                         f"{error['message']}")
                return verdict
            records[(variant, seed)] = record
    verdict.numerics = sorted({fingerprint(record) for record in records.values()})
    labels = {name: v.label for name, v in spec.variants.items()}
    try:
        observed = observe(target.kind, claim.observe, labels, seeds, records, expectation.spread_reference)
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
    if change is None:  # where it changed, the span is read on every seed (changes.span_on_every_seed)
        verdict.readings += span_readings(expectation, observed)
    if observed.notes:
        verdict.reason += f" [missing values treated as the metric defines: {'; '.join(observed.notes)}]"
    if len(verdict.numerics) > 1:
        verdict.reason = f"{mixed_numerics_text(records)} {verdict.reason}"
    if change is not None:
        verdict.reason += changes.fresh_note(change, seeds, seen)
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
