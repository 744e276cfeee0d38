"""Write, run and read the confirmatory plans of `harness.sequential.confirmatory` against the project's records."""
from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from harness.loading.catalog import Catalog
from harness.loading.loaded import LoadedClaim
from harness.pipeline import MAX_DEPENDENCY_WAVES, record_lookup, select
from harness.running.bundle import RecordBundle, store_for
from harness.running.execution import execute
from harness.running.fetching import fetch_data, survey_data
from harness.running.planning import datasets_needed, plan_variants, referenced_variants, variants_needed
from harness.running.store import REUSABLE, ResultStore, wall_seconds
from harness.sequential import confirmatory_history
from harness.sequential.confirmatory import (
    Plan,
    PlanError,
    Status,
    budget_for,
    check_hypothesis,
    confirmatory_verdict,
    path_for,
    plan_body,
    plan_paths,
    read_plan,
    write_plan,
)
from harness.sequential.results import load as load_sequential
from harness.settings import Settings
from harness.verdicts.levels import Level, accuracies_at_seeds, level_reader
from harness.verdicts.verify import Verdict, verify_claim

FIRST_SEED = 100
"""Confirmatory seeds start here, far from the profiles' seeds (0–9) and those `--until-decided` adds after them."""


@dataclass
class Reading:
    """A plan and where it stands: its verdict, or why it has none, and any problem with its evidence."""

    path: Path
    plan: Plan
    status: Status
    reason: str
    verdict: Verdict | None = None
    level: Level | None = None
    """The verdict's evidence level, read from the plan's own seeds (as a profile verdict's is from its seeds)."""
    problems: list[str] = field(default_factory=list)

    @property
    def decided_where_learning(self) -> bool:
        """PASS or FAIL with every variant it reads at the level LEARNED or above: counted as a decided claim."""
        return self.status in ("PASS", "FAIL") and self.level is not None and self.level.group == "learned"

    def to_dict(self) -> dict:
        return {"claim": self.plan.claim, "profile": self.plan.profile, "file": self.path.name,
                "status": self.status, "reason": self.reason, "hypothesis": self.plan.hypothesis,
                "seeds": self.plan.seeds, "alpha": self.plan.alpha, "power": self.plan.power.model_dump(),
                "budget": self.plan.budget.model_dump(), "undecidable": self.plan.undecidable,
                "numbers": self.verdict.numbers if self.verdict is not None else {},
                "runs": self.verdict.runs if self.verdict is not None else [],
                "level": self.level.to_dict() if self.level is not None else None, "problems": self.problems}


class _Context:
    """The catalog, the store (reading the committed records) and the look-up of one claim's runs."""

    def __init__(self, settings: Settings, loaded: LoadedClaim, profile: str, catalog: Catalog, fetch: bool = False,
                 console: Console | None = None):
        self.settings, self.loaded, self.profile, self.catalog = settings, loaded, profile, catalog
        self.experiment = loaded.claim.experiment
        names = datasets_needed(catalog, [loaded], [profile])
        data = fetch_data(names, settings, console) if fetch else survey_data(names, settings)
        self.fingerprints = data.fingerprints
        self.store: ResultStore = store_for(settings)
        self.lookup = record_lookup(catalog, settings, self.store, self.fingerprints)
        read = variants_needed(loaded, profile)
        every = set(read).union(*(referenced_variants(catalog, self.experiment, v, profile) for v in read))
        self.variants = sorted(every)

    def record(self, variant: str, seed: int) -> tuple[str, dict | None]:
        return self.lookup(self.experiment, variant, seed, self.profile)

    def level(self, verdict: Verdict, seeds: list[int]) -> Level:
        measured = accuracies_at_seeds(self.catalog, self.lookup, self.experiment, self.variants, self.profile, seeds)
        return level_reader(self.catalog, measured).level(verdict)

    def has_seed(self, seed: int) -> bool:
        return all((self.record(v, seed)[1] or {}).get("status") in REUSABLE for v in self.variants)

    def verify(self, seeds: list[int], alpha: float) -> Verdict:
        return verify_claim(self.catalog, self.loaded, self.profile, self.lookup, seeds=seeds, level=alpha)

    def exploratory_seeds(self) -> list[int]:
        """The seeds the profile and its `--until-decided` plan ran for the experiment."""
        for folder in (self.settings.store_dir, self.settings.records_dir):
            data = load_sequential(folder, self.profile)
            if data is not None and self.experiment in data["experiments"]:
                return list(data["experiments"][self.experiment]["seeds"])
        return list(self.catalog.specs[self.experiment].spec.profiles[self.profile].seeds)

    def seconds_per_seed(self, seeds: list[int]) -> tuple[float, str]:
        walls = {v: [w for s in seeds if (w := wall_seconds(self.record(v, s)[1])) is not None] for v in self.variants}
        if any(not w for w in walls.values()):
            unmeasured = sorted(v for v, w in walls.items() if not w)
            raise PlanError(f"{self.experiment}: no measured wall time of {unmeasured} at {self.profile!r}; run the "
                            "profile first")
        total = sum(statistics.fmean(w) for w in walls.values())
        text = ", ".join(f"{v} {statistics.fmean(w):.0f} s (mean of {len(w)})" for v, w in walls.items())
        return total, f"one thread's wall time per run, from the records' provenance: {text}"


def _loaded(settings: Settings, claim: str) -> tuple[Catalog, LoadedClaim]:
    catalog, _ = select(settings)
    try:
        return catalog, catalog.claim(claim)
    except KeyError:
        raise PlanError(f"no claim {claim!r} in claims/") from None


def write(settings: Settings, claim: str, profile: str, first_seed: int = FIRST_SEED) -> Path:
    """Write the plan of `claim` at `profile`: the exploratory seeds' effect and spread give its size. A plan that
    exists is never replaced (a new hypothesis is a new claim)."""
    catalog, loaded = _loaded(settings, claim)
    catalog.check_profiles([profile])
    path = path_for(settings.records_dir, claim)
    if path.exists():
        raise PlanError(f"{path}: a confirmatory plan of {claim} exists; a plan is written once, before its runs")
    context = _Context(settings, loaded, profile, catalog)
    seeds = context.exploratory_seeds()
    exploratory = context.verify(seeds, loaded.claim.alpha_at(profile))
    seconds, measured_on = context.seconds_per_seed(seeds)
    body = plan_body(loaded, profile, context.variants, exploratory, first_seed, budget_for(seconds, measured_on))
    ran = [s for s in body["seeds"] for v in context.variants if context.record(v, s)[1] is not None]
    if ran:
        raise PlanError(f"{claim}: seed {ran[0]} already has records at {profile!r}; confirmatory seeds must be new "
                        "(give another --first-seed)")
    return write_plan(settings.records_dir, body)


def read(settings: Settings, catalog: Catalog | None = None, history: bool = True) -> tuple[list[Reading], list[str]]:
    """Every committed plan with its verdict (or why it has none) and the problems of its evidence; and the plans
    refused whole (damaged, edited, their claim gone or its expectation changed), one line each."""
    readings, refused = [], []
    for path in plan_paths(settings.records_dir):
        if catalog is None:
            catalog, _ = select(settings)
        try:
            readings.append(_reading(settings, catalog, path, history))
        except PlanError as problem:
            refused.append(str(problem))
    return readings, refused


def _reading(settings: Settings, catalog: Catalog, path: Path, history: bool) -> Reading:
    plan = read_plan(path)
    try:
        loaded = catalog.claim(plan.claim)
    except KeyError:
        raise PlanError(f"{path}: names claim {plan.claim!r}, which claims/ no longer holds") from None
    check_hypothesis(plan, path, loaded)
    context = _Context(settings, loaded, plan.profile, catalog)
    status, reason, verdict = confirmatory_verdict(plan, loaded, context.verify, context.has_seed)
    reading = Reading(path, plan, status, reason, verdict,
                      level=context.level(verdict, plan.seeds) if verdict is not None else None)
    if history:
        reading.problems = confirmatory_history.problems(settings.root, path, _record_paths(settings, context, plan))
    return reading


def _record_paths(settings: Settings, context: _Context, plan: Plan) -> list[Path]:
    bundle = RecordBundle(settings.records_dir)
    keys = [context.record(v, s)[0] for s in plan.seeds for v in context.variants]
    return [bundle.path(k) for k in keys if bundle.has(k)]


def run(settings: Settings, claims: list[str] | None, console: Console,
        on_seed: Callable[[str, int], None] | None = None) -> int:
    """Run the missing seeds of the decidable plans (all, or those of `claims`), each seed's records added to the
    committed records as its batch completes; returns the number of seeds run. Seeds run side by side, as many as
    give each worker a run (`seeds_at_once`). A plan that is not committed unchanged in git is refused: the plan
    must be on record before its first run."""
    done = 0
    catalog, _ = select(settings)
    for path in plan_paths(settings.records_dir):
        plan = read_plan(path)
        if claims and plan.claim not in claims or not plan.decidable:
            continue
        confirmatory_history.require_committed(settings.root, path)
        loaded = catalog.claim(plan.claim)
        check_hypothesis(plan, path, loaded)
        context = _Context(settings, loaded, plan.profile, catalog, fetch=True, console=console)
        missing = [seed for seed in plan.seeds if not context.has_seed(seed)]
        batch = seeds_at_once(settings.workers, len(context.variants))
        for start in range(0, len(missing), batch):
            added, unfinished = _run_seeds(context, missing[start:start + batch], console)
            for seed in added:
                done += 1
                if on_seed is not None:
                    on_seed(plan.claim, seed)
            if unfinished:
                raise PlanError(f"{plan.claim}: seed(s) {unfinished} did not finish every run (see the store's error "
                                "records)")
    return done


def seeds_at_once(workers: int, variants: int) -> int:
    """How many of a plan's seeds run side by side: enough that each worker has a run (every seed runs each of
    the plan's variants), and at least one."""
    return max(1, workers // max(1, variants))


def _run_seeds(context: _Context, seeds: list[int], console: Console) -> tuple[list[int], list[int]]:
    """Run every variant at `seeds` in one batch and add each complete seed's records to the committed ones:
    (the seeds added, the seeds with a run that did not finish)."""
    for _ in range(MAX_DEPENDENCY_WAVES + 1):
        requests, waiting = plan_variants(context.catalog, context.experiment, context.variants, context.profile,
                                          context.settings, context.store, context.fingerprints, seeds=seeds)
        execute(requests, context.store, context.settings, console)
        if not waiting:
            break
    bundle = RecordBundle(context.settings.records_dir)
    added, unfinished = [], []
    for seed in seeds:
        records = [context.store.reusable(r.key) for r in requests if r.seed == seed]
        if any(r is None for r in records):
            unfinished.append(seed)
            continue
        bundle.add(r for r in records if r is not None)
        added.append(seed)
    return added, unfinished
