"""Verify a profile, then add seeds to the claims it left undecided until each is decided or a
limit is reached (`fedclaims verify --until-decided`).

Every claim gets a sequential test (`harness.sequential.rule`): look 1 reads the profile's seeds,
each later look one more seed of the claim's experiment, every look at α / L. Seeds are added only
for claims the profile left INCONCLUSIVE (a fixed-n PASS or FAIL that look 1 cannot decide at
α / L keeps its fixed-n verdict and is not extended). A claim's looks end at its first PASS or
FAIL, or when more seeds cannot help: its test has no finite figure of the seeds that would
decide it, its experiment reached its seed limit, or the budget is spent.
A seed added to an experiment runs, for that seed, only the variants its open claims read (and
the variants those refer to), through planning and execution like any other run.
"""
from __future__ import annotations

import copy
import statistics
from dataclasses import dataclass, field, replace

from rich.console import Console

from harness.catalog import LoadedClaim
from harness.execution import ExecutionSummary, execute
from harness.pipeline import MAX_DEPENDENCY_WAVES, Outcome, record_lookup, verify
from harness.planning import plan_variants, referenced_variants, variants_needed
from harness.store import wall_seconds
from harness.sequential import schedule
from harness.sequential.rule import Looks, default_max_seeds, planned_looks
from harness.settings import Settings
from harness.verify import FAIL, INCONCLUSIVE, PASS, Verdict, apply_families, verify_claim

DECIDED = "decided"
NOT_EXTENDED = "decided at fixed n: not extended"
NO_FIGURE = "no finite figure of the seeds that would decide it"
AT_LIMIT = "max seeds reached"
BUDGET = "budget spent"
NOT_TESTED = "not tested"


@dataclass
class Track:
    """One claim's sequential test: where its looks stand, and why they ended."""

    loaded: LoadedClaim
    experiment: str
    experiments: tuple[str, ...]
    """The experiments its test reads: its own, and those of the other claims of its family."""
    looks: Looks
    fixed: Verdict
    """The profile's fixed-n verdict (its seeds, at α)."""
    verdict: Verdict | None = None
    seeds: list[int] = field(default_factory=list)
    look: int = 1
    stopped: str = ""

    @property
    def claim(self) -> str:
        return self.loaded.id

    @property
    def open(self) -> bool:
        return not self.stopped


@dataclass
class Sequential:
    """The sequential verdicts of a profile's claims and what the added seeds cost."""

    profile: str
    outcome: Outcome
    tracks: list[Track]
    profile_seeds: dict[str, list[int]]
    seeds: dict[str, list[int]]
    limits: dict[str, int]
    max_seeds: int | None
    budget_seconds: float | None
    execution: ExecutionSummary = field(default_factory=ExecutionSummary)
    stop: str = ""

    @property
    def compute_seconds(self) -> float:
        return self.execution.seconds


def until_decided(settings: Settings, profile: str, papers=(), pattern: str | None = None,
                  max_seeds: int | None = None, budget_minutes: float | None = None,
                  console: Console | None = None) -> Sequential:
    """Verify the profile (running what the store lacks), then add seeds to undecided claims.

    `max_seeds` caps every experiment's seeds (default twice its profile's); `budget_minutes`
    caps the wall time of the added runs (default no cap).
    """
    outcome = verify(settings, papers, pattern, [profile], console=console)
    return _Session(outcome, replace(settings, download=False), profile, max_seeds,
                    None if budget_minutes is None else 60.0 * budget_minutes, console).run()


def next_seed(seeds: list[int]) -> int:
    return max(seeds, default=-1) + 1


class _Session:
    def __init__(self, outcome: Outcome, settings: Settings, profile: str, max_seeds: int | None,
                 budget_seconds: float | None, console: Console | None):
        self.catalog, self.store = outcome.catalog, outcome.store
        self.settings, self.profile, self.console = settings, profile, console
        self.fingerprints = outcome.data.fingerprints
        self.lookup = record_lookup(self.catalog, settings, self.store, self.fingerprints)
        experiments = {c.claim.experiment for c in outcome.claims}
        profile_seeds = {e: list(self.catalog.specs[e].spec.profiles[profile].seeds) for e in sorted(experiments)
                         if profile in self.catalog.specs[e].spec.profiles}
        limits = {e: default_max_seeds(len(s)) if max_seeds is None else max_seeds for e, s in profile_seeds.items()}
        fixed = {v.claim: v for v in outcome.verdicts if v.profile == profile}
        tracks = [self._track(loaded, outcome.claims, fixed[loaded.id], profile_seeds, limits)
                  for loaded in outcome.claims]
        self.result = Sequential(profile, outcome, tracks, profile_seeds, {e: list(s) for e, s in profile_seeds.items()},
                                 limits, max_seeds, budget_seconds)
        self._raw: dict[tuple[str, tuple[int, ...]], Verdict] = {}
        self._wall: dict[tuple[str, str, int], float | None] = {}

    def _track(self, loaded: LoadedClaim, claims: list[LoadedClaim], fixed: Verdict,
               profile_seeds: dict[str, list[int]], limits: dict[str, int]) -> Track:
        family = loaded.claim.family
        members = [c for c in claims if family and c.claim.family == family and c.paper == loaded.paper] or [loaded]
        experiments = tuple(sorted({m.claim.experiment for m in members} & set(profile_seeds)))
        alpha = getattr(loaded.claim.expect.get(self.profile), "alpha", 0.05)
        looks = Looks(alpha, planned_looks(limits[e] - len(profile_seeds[e]) for e in experiments))
        return Track(loaded, loaded.claim.experiment, experiments, looks, fixed)

    # --- looks ---------------------------------------------------------------------------

    def run(self) -> Sequential:
        result = self.result
        while True:
            self._look()
            candidates = [self._candidate(t) for t in result.tracks if t.open]
            choice = schedule.choose(candidates, {e: self._seed_seconds(e) for e in {c.experiment for c in candidates}},
                                     result.compute_seconds, result.budget_seconds)
            if choice.experiment is None:
                for track in result.tracks:
                    if track.open:
                        track.stopped = BUDGET
                result.stop = choice.stop
                return result
            self._add_seed(choice.experiment)

    def _look(self) -> None:
        """Every claim's verdict on the seeds its experiment has now, at its per-look level, with
        families corrected together; the open claims that are decided, or that more seeds cannot
        decide, stop here."""
        tracks = self.result.tracks
        verdicts = {t.claim: copy.deepcopy(self._verdict(t)) for t in tracks}
        levels = {t.claim: t.looks.level for t in tracks}
        apply_families(list(verdicts.values()), lambda v: levels[v.claim])
        for track in tracks:
            if not track.open:
                continue
            track.verdict = verdicts[track.claim]
            track.seeds = list(self.result.seeds.get(track.experiment, []))
            track.look = 1 + sum(len(self.result.seeds[e]) - len(self.result.profile_seeds[e])
                                 for e in track.experiments)
            track.stopped = self._stop_reason(track)

    def _stop_reason(self, track: Track) -> str:
        verdict = track.verdict
        if verdict.status in (PASS, FAIL):
            return DECIDED
        if verdict.status != INCONCLUSIVE:
            return NOT_TESTED
        if track.fixed.status != INCONCLUSIVE:
            return NOT_EXTENDED
        power = verdict.power or {}
        if power.get("unit") != "seeds" or power.get("needed") is None:
            return NO_FIGURE
        if len(self.result.seeds[track.experiment]) >= self.result.limits[track.experiment]:
            return AT_LIMIT
        return ""

    def _verdict(self, track: Track) -> Verdict:
        """The claim's verdict at its per-look level on its experiment's seeds now (before families)."""
        seeds = self.result.seeds.get(track.experiment)
        key = (track.claim, tuple(seeds or ()))
        if key not in self._raw:
            self._raw[key] = verify_claim(self.catalog, _at_level(track.loaded, self.profile, track.looks.level),
                                          self.profile, self.lookup, seeds=seeds)
        return self._raw[key]

    # --- costs ---------------------------------------------------------------------------

    def _candidate(self, track: Track) -> schedule.Candidate:
        seeds = self.result.seeds[track.experiment]
        variants = variants_needed(track.loaded, self.profile)
        return schedule.Candidate(track.claim, track.experiment, track.verdict.power["needed"], len(seeds),
                                  self._seconds(track.experiment, variants))

    def _seconds(self, experiment: str, variants) -> float:
        """Measured wall seconds of one seed of the variants and of the variants they refer to."""
        every = set(variants)
        for variant in variants:
            every |= referenced_variants(self.catalog, experiment, variant, self.profile)
        return sum(self._variant_seconds(experiment, v) for v in sorted(every))

    def _variant_seconds(self, experiment: str, variant: str) -> float:
        """The mean `wall_seconds` of the variant's stored records over the experiment's seeds."""
        walls = [self._wall_seconds(experiment, variant, seed) for seed in self.result.seeds[experiment]]
        measured = [w for w in walls if w is not None]
        return statistics.fmean(measured) if measured else 0.0

    def _wall_seconds(self, experiment: str, variant: str, seed: int) -> float | None:
        key = (experiment, variant, seed)
        if key not in self._wall:
            _, record = self.lookup(experiment, variant, seed, self.profile)
            self._wall[key] = wall_seconds(record)
        return self._wall[key]

    def _seed_seconds(self, experiment: str) -> float:
        return self._seconds(experiment, self._variants_for_seed(experiment))

    # --- adding a seed -------------------------------------------------------------------

    def _variants_for_seed(self, experiment: str) -> list[str]:
        """The variants the experiment's open claims read, and those of the other claims of their
        families (a family is tested together at every look)."""
        feeding = [t for t in self.result.tracks if t.open and t.experiment == experiment]
        families = {(t.loaded.paper, t.loaded.claim.family) for t in feeding if t.loaded.claim.family}
        readers = feeding + [t for t in self.result.tracks if t.experiment == experiment and t not in feeding
                             and (t.loaded.paper, t.loaded.claim.family) in families]
        return list(dict.fromkeys(v for t in readers for v in variants_needed(t.loaded, self.profile)))

    def _add_seed(self, experiment: str) -> None:
        seeds = self.result.seeds[experiment]
        seed = next_seed(seeds)
        variants = self._variants_for_seed(experiment)
        for _ in range(MAX_DEPENDENCY_WAVES + 1):
            requests, waiting = plan_variants(self.catalog, experiment, variants, self.profile, self.settings,
                                              self.store, self.fingerprints, seeds=[seed])
            execute(requests, self.store, self.settings, self.console, self.result.execution)
            if not waiting:
                break
        seeds.append(seed)


def _at_level(loaded: LoadedClaim, profile: str, alpha: float) -> LoadedClaim:
    """The claim with its expectation at `profile` tested at `alpha`."""
    expectation = loaded.claim.expect.get(profile)
    if expectation is None or not hasattr(expectation, "alpha"):
        return loaded
    expect = {**loaded.claim.expect, profile: expectation.model_copy(update={"alpha": alpha})}
    return replace(loaded, claim=loaded.claim.model_copy(update={"expect": expect}))
