"""Confirmatory tests: one claim, its hypothesis as it stands, fresh seeds, a sample size from a stated power
calculation, and α, fixed in a plan committed before the first of its runs (`<records>/confirmatory/<claim>.json`,
`fedclaims confirm plan|run|verify`).

Its verdict is one look at the plan's seeds only, at the plan's α, by the project's own test of the expectation
(`harness.verdicts.verify.verify_claim`): the exploratory looks (the profile's seeds and those `--until-decided`
added) are neither read nor counted, and the report shows it on a line of its own. A plan whose stated power
needs more seeds than its budget buys says so ("undecidable at this budget") and is never run.

A plan is read only whole: its digest covers every field, so an edit shows; the claim's expectation must still
be the plan's hypothesis; and, where git history is at hand, the plan was committed before every record of its
seeds and not changed after the first of them (`harness.sequential.confirmatory_history`).
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from harness.design.readings import DEFAULT_TAU
from harness.loading.loaded import LoadedClaim
from harness.schema.base import StrictModel
from harness.schema.observations.base import Shape
from harness.sequential.confirmatory_correlation import MAX_SIMULATED, TRIALS, decided_chance, seeds_for
from harness.statistics.confirmatory_power import paired_t_power, paired_t_seeds
from harness.statistics.correlation_estimates import Correlation, pooled_correlation
from harness.statistics.power import PRACTICAL_UNITS
from harness.verdicts.verify import Verdict

FOLDER = "confirmatory"
FORMAT = 1
TARGET_POWER = 0.8
THREAD_HOURS = 20.0
"""The compute a plan may spend: 20 hours of one thread (issue 56), the runs' measured wall time."""

Lookup = Callable[[str, str, int, str], "tuple[str, dict | None]"]


class PowerCalculation(StrictModel):
    test: str
    effect: float
    """The effect the sample size is computed for, in the observation's units."""
    sd: float
    """The spread of one seed's statistic assumed with it."""
    source: str
    """Where the effect and spread come from, and why they are the ones stated."""
    target: float
    seeds_needed: int | None
    """The fewest seeds that reach `target` power (None: beyond any practical number)."""


class Budget(StrictModel):
    seconds_per_seed: float
    measured_on: str
    thread_hours: float
    affordable_seeds: int


class Plan(StrictModel):
    format: Literal[1]
    claim: str
    profile: str
    experiment: str
    hypothesis: str
    """The expectation's text at `profile` when the plan was written."""
    expectation: dict
    """The expectation as the claim file states it (compared whole with the file's at every read)."""
    variants: list[str]
    seeds: list[int]
    alpha: float
    analysis: str
    power: PowerCalculation
    budget: Budget
    decidable: bool
    undecidable: str = ""
    """Why the plan is not run: 'undecidable at this budget: n seeds needed, m affordable'."""
    registered: str
    digest: str

    def body(self) -> dict:
        return self.model_dump(exclude={"digest"})

    def sealed_digest(self) -> str:
        return body_digest(self.body())


def body_digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def path_for(records_dir: Path, claim: str) -> Path:
    return records_dir / FOLDER / f"{claim}.json"


def plan_paths(records_dir: Path) -> list[Path]:
    return sorted((records_dir / FOLDER).glob("*.json"))


class PlanError(ValueError):
    """A plan that cannot be used: the message names the file and what is wrong."""


def read_plan(path: Path) -> Plan:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PlanError(f"{path}: not a readable confirmatory plan ({error})") from error
    try:
        plan = Plan.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PlanError(f"{path}: {f'field {where}: ' if where else ''}{first['msg']}") from error
    if plan.sealed_digest() != plan.digest:
        raise PlanError(f"{path}: its digest does not match its content: the plan was edited after it was written "
                        "(a confirmatory plan is fixed before its runs; write a new one for a new claim)")
    return plan


def expectation_of(loaded: LoadedClaim, profile: str) -> dict:
    expectation = loaded.claim.expect.get(profile)
    if expectation is None or expectation.skips:
        raise PlanError(f"{_where(loaded, profile)}: claim {loaded.id} states no test at profile {profile!r}")
    return expectation.hypothesis()


def _where(loaded: LoadedClaim, profile: str) -> str:
    """'claims/x.yaml:LINE', the line of the claim's expectation at `profile` (or of the claim)."""
    line = loaded.doc.line_of((*loaded.path, "expect", profile))
    return f"{loaded.doc.file}:{line}" if line is not None else str(loaded.doc.file)


def check_hypothesis(plan: Plan, path: Path, loaded: LoadedClaim) -> None:
    """The claim's expectation is still the one the plan tests."""
    if expectation_of(loaded, plan.profile) != plan.expectation:
        raise PlanError(f"{path}: the expectation of {plan.claim} at {plan.profile!r} changed after the plan was "
                        f"written ({_where(loaded, plan.profile)}): the plan tested {plan.hypothesis!r}; a changed "
                        "expectation is a new claim and needs a new plan on new seeds")


def write_plan(records_dir: Path, body: dict) -> Path:
    path = path_for(records_dir, body["claim"])
    plan = Plan.model_validate({**body, "digest": body_digest(body)})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan.model_dump(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


# --- planning -----------------------------------------------------------------------------------------


def paired_differences(loaded: LoadedClaim, profile: str, verdict: Verdict) -> list[float]:
    """Per seed, the claimed difference: from an order verdict of two variants, the first's value minus the
    second's; from a per-seed difference of two variants tested against a bound by its mean (`above`, `below`),
    its distance from the bound on the claimed side."""
    series = [n["values"] for n in verdict.numbers.values() if isinstance(n, dict) and "values" in n]
    if len(series) == 2:
        higher, lower = series
        return [higher[s] - lower[s] for s in higher if s in lower]
    if len(series) == 1 and loaded.claim.observe.shape is Shape.PAIRED:
        excess = [loaded.claim.expect[profile].claimed_excess(value) for value in series[0].values()]
        if all(e is not None for e in excess):
            return [float(e) for e in excess if e is not None]
    raise PlanError(f"{_where(loaded, profile)}: claim {loaded.id}: a confirmatory plan is written for a "
                    "comparison of two variants, a per-seed difference of two tested by its mean against a bound, "
                    f"or a correlation (this verdict reads {len(series)} series)")


def paired_power(differences: list[float], alpha: float, seeds_read: list[int]) -> PowerCalculation:
    """The seeds a paired one-sided t-test needs for TARGET_POWER at the exploratory effect and spread."""
    n = len(differences)
    mean = math.fsum(differences) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in differences) / (n - 1))
    source = (f"the exploratory estimate on seeds {seeds_read[0]}–{seeds_read[-1]} ({n} paired seeds of the "
              f"profile and of --until-decided): mean difference {mean:.3g}, SD {sd:.3g} (effect {mean / sd:.2f} SD). "
              f"{_NOT_THE_PAPERS}")
    return PowerCalculation(test="paired one-sided t-test of the per-seed differences", effect=mean, sd=sd,
                            source=source, target=TARGET_POWER,
                            seeds_needed=paired_t_seeds(mean / sd if sd > 0 else math.inf, alpha, TARGET_POWER))


_NOT_THE_PAPERS = ("The paper's own figure is not used: it was measured at the paper's scale, not this profile's, "
                   "and the exploratory estimate is the one this scale has shown")


def correlation_power(loaded: LoadedClaim, profile: str, exploratory: Verdict, seeds_read: list[int]
                      ) -> tuple[PowerCalculation, Callable[[int], float]]:
    """The seeds a pooled correlation's range test needs, simulated at the exploratory pooled r and τ."""
    numbers = next(n for n in exploratory.numbers.values() if isinstance(n, dict) and "clients" in n)
    obs, expectation = loaded.claim.observe, loaded.claim.expect[profile]
    controls = 1 if getattr(obs, "given", None) else 0
    clients = min(int(c) for c in numbers["clients"].values())
    pooled = pooled_correlation([Correlation(float(numbers["values"][s]), math.nan, math.nan, math.nan,
                                             int(numbers["clients"][s]), controls) for s in numbers["values"]])
    tau = max(math.sqrt(pooled.tau_squared), DEFAULT_TAU)
    admitted = expectation.admitted()
    if admitted is None:
        raise PlanError(f"{_where(loaded, profile)}: {loaded.id}'s expectation admits no range to power a test of")
    wanted = "PASS" if admitted.holds(pooled.r) else "FAIL"
    source = (f"the exploratory estimate on seeds {seeds_read[0]}–{seeds_read[-1]} ({pooled.seeds} runs of "
              f"{clients} clients): pooled r {pooled.r:.3f}; between seeds τ = {tau:.3g} in Fisher z, the larger of "
              f"the runs' DerSimonian-Laird estimate ({math.sqrt(pooled.tau_squared):.3g}, which few seeds truncate "
              f"at 0) and the design's planning τ ({DEFAULT_TAU}); the power is "
              f"the chance of a {wanted} there, simulated ({TRIALS} tests per size) with the verdict's own test. "
              f"{_NOT_THE_PAPERS}")
    needed = seeds_for(expectation, obs, pooled.r, tau, clients, controls, TARGET_POWER)
    calculation = PowerCalculation(test="random-effects pool of the runs' bias-corrected Fisher z",
                                   effect=pooled.r, sd=tau, source=source, target=TARGET_POWER, seeds_needed=needed)
    return calculation, lambda seeds: decided_chance(expectation, obs, pooled.r, tau, clients, controls, seeds)


def stated_power(loaded: LoadedClaim, profile: str, exploratory: Verdict, seeds_read: list[int]
                 ) -> tuple[PowerCalculation, Callable[[int], float], int]:
    """The power calculation of the claim's test at the exploratory effect, its power at n seeds, and the most
    seeds its search tries."""
    alpha = loaded.claim.alpha_at(profile)
    if loaded.claim.observe.shape is Shape.CORRELATION:
        return (*correlation_power(loaded, profile, exploratory, seeds_read), MAX_SIMULATED)
    power = paired_power(paired_differences(loaded, profile, exploratory), alpha, seeds_read)
    return power, lambda seeds: paired_t_power(power.effect / power.sd, seeds, alpha), PRACTICAL_UNITS


def budget_for(seconds_per_seed: float, measured_on: str) -> Budget:
    return Budget(seconds_per_seed=round(seconds_per_seed, 1), measured_on=measured_on, thread_hours=THREAD_HOURS,
                  affordable_seeds=int(THREAD_HOURS * 3600 // seconds_per_seed))


def plan_body(loaded: LoadedClaim, profile: str, variants: list[str], exploratory: Verdict, first_seed: int,
              budget: Budget) -> dict:
    """The content of a plan for `loaded` at `profile` (everything but its digest)."""
    alpha = loaded.claim.alpha_at(profile)
    seeds_read = sorted(int(s) for s in next(iter(exploratory.numbers.values()))["values"])
    power, power_at, limit = stated_power(loaded, profile, exploratory, seeds_read)
    needed = power.seeds_needed
    decidable = needed is not None and needed <= budget.affordable_seeds
    seeds = list(range(first_seed, first_seed + (needed if decidable and needed else 0)))
    undecidable = "" if decidable else (
        f"undecidable at this budget: {needed if needed is not None else f'more than {limit}'} seeds needed for "
        f"{TARGET_POWER:.0%} power at the stated effect, {budget.affordable_seeds} affordable in {THREAD_HOURS:g} "
        "hours of one thread")
    achieved = power_at(len(seeds)) if seeds else 0.0
    expectation = loaded.claim.expect[profile]
    return {
        "format": FORMAT, "claim": loaded.id, "profile": profile, "experiment": loaded.claim.experiment,
        "hypothesis": expectation.brief(), "expectation": expectation_of(loaded, profile),
        "variants": variants, "seeds": seeds, "alpha": alpha,
        "analysis": f"none: not run ({undecidable})" if not decidable else (
                     f"one look at the {len(seeds)} seeds listed, none of them read before, by the project's test "
                     f"of the expectation ({power.test}: {expectation.describe(loaded.claim.observe)}) at α = "
                     f"{alpha:g}, PASS or FAIL as that test rules, else INCONCLUSIVE; no seed is added after it and "
                     f"no other claim is corrected with it; power {achieved:.2f} at the stated effect"),
        "power": power.model_dump(), "budget": budget.model_dump(), "decidable": decidable,
        "undecidable": undecidable, "registered": datetime.now(UTC).strftime("%Y-%m-%d"),
    }


# --- the verdict -------------------------------------------------------------------------------------

Status = Literal["PASS", "FAIL", "INCONCLUSIVE", "ERROR", "PENDING", "UNDECIDABLE"]


def confirmatory_verdict(plan: Plan, loaded: LoadedClaim, verify: Callable[[list[int], float], Verdict],
                         have: Callable[[int], bool]) -> tuple[Status, str, Verdict | None]:
    """(status, reason, verdict): UNDECIDABLE for a plan not run, PENDING until every seed of it has its records,
    else the one look's verdict on the plan's seeds at its α."""
    if not plan.decidable:
        return "UNDECIDABLE", plan.undecidable, None
    done = [s for s in plan.seeds if have(s)]
    if len(done) < len(plan.seeds):
        return "PENDING", f"{len(done)} of {len(plan.seeds)} seeds run", None
    verdict = verify(plan.seeds, plan.alpha)
    decided: dict[str, Status] = {"PASS": "PASS", "FAIL": "FAIL", "INCONCLUSIVE": "INCONCLUSIVE"}
    return decided.get(verdict.status, "ERROR"), verdict.reason, verdict
