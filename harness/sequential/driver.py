"""Verify a profile, then add seeds to the claims it left undecided until each is decided or a
limit is reached (`fedclaims verify --until-decided`).

Every claim gets a sequential test (`harness.statistics.sequential_rule`): look 1 reads the profile's seeds,
each later look one more seed of the claim's experiment, look j at the boundary's level α_j.
Look 1 is the profile's own verdict (its seeds, at α_1 = 0.7 α), so seeds are added only for claims
the profile left INCONCLUSIVE, and a claim the profile decided keeps that verdict. A claim's looks end at its
first PASS or FAIL, or when more seeds cannot help: its test has no finite figure of the seeds
that would decide it, its experiment reached its seed limit, or the budget is spent.
A seed added to an experiment runs, for that seed, only the variants its open claims read (and
the variants those refer to), through planning and execution like any other run.

A claim's looks are those of its own experiment: look j reads its profile's seeds + (j − 1) of
them, the seeds the boundary's level α_j is calibrated on. A family is tested together (Holm) at
every look, at the lowest of its members' levels; a member whose experiment did not get the seed
just added keeps its look and level (its own statistic is unchanged), so each member's chance of
a false verdict stays that of its own experiment's looks.

Where the store already holds the profile's sequential file, the invocation continues the plan it
records (`harness.sequential.recorded`): the same max seeds and levels, the seeds added so far,
the looks stopped for a budget (or interrupted, or not tested) going on from where they stopped;
a `--max-seeds` other than the recorded plan's is refused with an error naming the file and the
plan. Claims new to the plan join it; a claim's first look is on the seeds its experiment has by
then (earlier looks skipped, which only lowers its chance of a false verdict). A claim whose
expectation changed after seeds were run (`changed:`, `harness.schema.changes`) is looked at only on
the seeds run after the change, and its looks count only those. The file is written
after every look (`harness.sequential.results`), so an interrupted invocation loses none, and it
only grows: the claims not selected keep their entries.

`--budget` caps the wall time of the runs this invocation adds: a seed whose runs are all in the
store already costs nothing and always fits. The seeds already in the plan are re-verified like
the profile's (run again only where their records are gone), outside the budget.
"""
from __future__ import annotations

import copy
import statistics
from dataclasses import replace

from rich.console import Console

from harness.loading.loaded import LoadedClaim
from harness.pipeline import MAX_DEPENDENCY_WAVES, Outcome, record_lookup, verify
from harness.running.execution import execute
from harness.running.planning import plan_variants, referenced_variants, variants_needed
from harness.running.store import REUSABLE, wall_seconds
from harness.schema.changes import Change
from harness.sequential import schedule
from harness.sequential.recorded import Recorded, read
from harness.sequential.stops import (
    AT_LIMIT,
    BUDGET,
    DECIDED,
    INTERRUPTED,  # noqa: F401 - re-exported with the stops the driver gives
    NO_FIGURE,
    NOT_EXTENDED,
    NOT_TESTED,
)
from harness.sequential.tracks import Sequential, Track
from harness.settings import Settings
from harness.statistics.sequential_rule import Looks, default_max_seeds, planned_looks
from harness.verdicts.verify import FAIL, INCONCLUSIVE, PASS, Verdict, apply_families, verify_claim


def until_decided(settings: Settings, profile: str, papers=(), pattern: str | None = None,
                  max_seeds: int | None = None, budget_minutes: float | None = None,
                  console: Console | None = None) -> Sequential:
    """Verify the profile (running what the store lacks), then add seeds to undecided claims.

    `max_seeds` caps every experiment's seeds (default twice its profile's); `budget_minutes`
    caps the wall time of the runs this invocation adds (default no cap). Where the store holds the
    profile's sequential file, its plan is continued; a `max_seeds` other than its plan's is
    refused (ValueError naming the file and the recorded plan), as is a corrupt or foreign file.
    The file is written after every look and at the end (`harness.sequential.results.write`).
    """
    recorded = read(settings.store_dir, profile)
    if recorded is not None:
        recorded.check_max_seeds(max_seeds)
    outcome = verify(settings, papers, pattern, [profile], console=console)
    session = _Session(outcome, replace(settings, download=False), profile, max_seeds,
                       None if budget_minutes is None else 60.0 * budget_minutes, console, recorded)
    session.result.selection = {"papers": list(papers) if papers else None, "claim": pattern}
    return session.run()


def next_seed(seeds: list[int]) -> int:
    return max(seeds, default=-1) + 1


class _Session:
    def __init__(self, outcome: Outcome, settings: Settings, profile: str, max_seeds: int | None,
                 budget_seconds: float | None, console: Console | None, recorded: Recorded | None = None):
        if outcome.store is None:
            raise ValueError("adding seeds needs the store the profile's runs were verified from")
        self.catalog, self.store = outcome.catalog, outcome.store
        self.settings, self.profile, self.console = settings, profile, console
        self.fingerprints = outcome.data.fingerprints
        self.lookup = record_lookup(self.catalog, settings, self.store, self.fingerprints)
        experiments = {c.claim.experiment for c in outcome.claims}
        profile_seeds = {e: list(self.catalog.specs[e].spec.profiles[profile].seeds) for e in sorted(experiments)
                         if profile in self.catalog.specs[e].spec.profiles}
        fixed = {v.claim: v for v in outcome.verdicts if v.profile == profile}
        if recorded is not None:
            recorded.check_profile_seeds(profile_seeds)
            recorded.check_alphas({c.id: c.claim.alpha_at(profile) for c in outcome.claims})
        limits = {e: _limit(e, s, max_seeds, recorded) for e, s in profile_seeds.items()}
        seeds = {e: list(recorded.seeds[e] if recorded and e in recorded.seeds else s)
                 for e, s in profile_seeds.items()}
        self._raw: dict[tuple[str, tuple[int, ...], float], Verdict] = {}
        self._recorded_claims = set(recorded.claims) if recorded is not None else set()
        self._replanned = {c.id for c in outcome.claims if recorded is not None and c.id in recorded.claims
                           and (recorded.claims[c.id].fixed_status != fixed[c.id].status
                                or recorded.claims[c.id].change_commit != _change_commit(c, profile))}
        """Recorded claims whose verdict on the profile's seeds changed since (their expectation or the
        rules did), or whose expectation changed after the looks recorded (`harness.schema.changes`): the
        recorded looks tested another hypothesis, so they join the plan anew."""
        tracks = [self._track(loaded, outcome.claims, fixed[loaded.id], profile_seeds, limits, recorded)
                  for loaded in outcome.claims]
        self.result = Sequential(profile, outcome, tracks, profile_seeds, seeds, limits,
                                 max_seeds if recorded is None else recorded.max_seeds, budget_seconds,
                                 recorded=recorded)
        self._wall: dict[tuple[str, str, int], float | None] = {}
        self._profile_only = {t.claim for t in tracks if recorded is not None and self._new_to_plan(t.claim)
                              and fixed[t.claim].status != INCONCLUSIVE}
        """Claims new to the plan that the profile decided: they never take seeds, so their one look is
        on the profile's seeds, whatever seeds the plan added to their experiment."""
        if recorded is not None and console is not None:
            console.print(_continuing_text(recorded, tracks, self._replanned))

    def _new_to_plan(self, claim: str) -> bool:
        return claim in self._replanned or claim not in self._recorded_claims

    def _track(self, loaded: LoadedClaim, claims: list[LoadedClaim], fixed: Verdict,
               profile_seeds: dict[str, list[int]], limits: dict[str, int], recorded: Recorded | None) -> Track:
        """The claim's track: as the recorded plan left it, else a new plan whose look 1 is on the profile's
        seeds, or, where its expectation changed after seeds were run, on those of them run after the
        change (at least two, the fewest a spread needs: its looks count only such seeds, and until that
        many are run it waits at look 1; `harness.schema.changes`)."""
        family = loaded.claim.family
        members = [c for c in claims if family and c.claim.family == family and c.paper == loaded.paper] or [loaded]
        experiments = tuple(sorted({m.claim.experiment for m in members} & set(profile_seeds)))
        if recorded is not None and not self._new_to_plan(loaded.id):
            return self._recorded_track(loaded, experiments, fixed, recorded)
        claim = loaded.claim
        own = claim.experiment
        change = claim.change_at(self.profile)
        seen = tuple(sorted(claim.seen_at(self.profile))) if change is not None else ()
        fresh = len(claim.fresh_seeds(self.profile, profile_seeds.get(own, [])))
        first = (fresh or 1) if change is None else max(fresh, SPREAD_SEEDS)
        added = [limits[own] - len(seen) - first] if own in profile_seeds else []
        looks = Looks.plan(claim.alpha_at(self.profile), first, planned_looks(added),
                           claim.fails_on_two_sides_at(self.profile))
        return Track(loaded, own, experiments, looks, fixed, seen=seen,
                     change=None if change is None else _change_entry(change, seen, fixed))

    def _recorded_track(self, loaded: LoadedClaim, experiments: tuple[str, ...], fixed: Verdict,
                        recorded: Recorded) -> Track:
        """The claim's track as the recorded plan left it: open where its looks go on (they stopped
        for a budget, an interruption or a look not tested), else stopped with its recorded verdict."""
        entry = recorded.claims[loaded.id]
        track = Track(loaded, loaded.claim.experiment, experiments, entry.looks, fixed, seeds=list(entry.seeds),
                      look=entry.look, stopped="" if entry.continues else entry.stopped, seen=entry.seen,
                      change=recorded.entries[loaded.id].get("changed"))
        if not entry.continues:
            claim = loaded.claim
            track.verdict = Verdict(claim.id, loaded.paper, self.profile, claim.experiment, claim.source,
                                    claim.statement, entry.expectation, entry.status, entry.reason, power=entry.power,
                                    family=claim.family or "",
                                    numbers=dict(entry.numbers) or self._numbers(track, entry.status))
        return track

    def _numbers(self, track: Track, status: str) -> dict:
        """The statistics of a stopped claim's last look, from its seeds' records, for a plan recorded
        before they were: only where they give its recorded verdict again (else none)."""
        verdict = self._verdict(track, track.level, track.seeds)
        return verdict.numbers if verdict.status == status else {}

    # --- looks ---------------------------------------------------------------------------

    def run(self) -> Sequential:
        result = self.result
        if result.recorded is not None:
            self._restore_added_seeds()
        while True:
            self._look()
            self._record()
            choice = self._choose([self._candidate(t) for t in result.tracks if t.open])
            if choice.experiment is None:
                for track in result.tracks:
                    if track.open:
                        track.stopped = BUDGET
                result.stop = choice.stop
                self._record()
                return result
            self._add_seed(choice.experiment)

    def _choose(self, candidates: list[schedule.Candidate]) -> schedule.Choice:
        """The schedule's choice, a next seed costing only its runs that are not stored yet."""
        missing = {e: self._next_seed_missing(e) for e in sorted({c.experiment for c in candidates})}
        seconds = {e: sum(self._variant_seconds(e, v) for v in variants) for e, variants in missing.items()}
        return schedule.choose(candidates, seconds, self.result.compute_seconds, self.result.budget_seconds,
                               stored={e for e, variants in missing.items() if not variants})

    def _record(self) -> None:
        """Write where the looks stand to the sequential file (the open ones as interrupted, should
        the invocation end here)."""
        from harness.sequential import results
        results.write(self.result, self.settings.store_dir, self.result.selection)

    def _look(self) -> None:
        """Every claim's verdict on the seeds its experiment has now, at its per-look level, with
        families corrected together; the open claims that are decided, or that more seeds cannot
        decide, stop here."""
        tracks = self.result.tracks
        looks = {t.claim: self._look_now(t) for t in tracks}
        levels = {t.claim: t.looks.level_at(looks[t.claim]) for t in tracks}
        verdicts = {t.claim: copy.deepcopy(self._verdict(t, levels[t.claim])) for t in tracks}
        apply_families(list(verdicts.values()), lambda v: levels[v.claim])
        for track in tracks:
            if not track.open:
                continue
            track.verdict = verdicts[track.claim]
            track.seeds = list(self._seeds_now(track) or [])
            track.look = looks[track.claim]
            track.stopped = self._stop_reason(track)

    def _look_now(self, track: Track) -> int:
        """The look the claim stands at: 1 on the profile's seeds, one more per seed added to its experiment."""
        experiment = track.experiment
        if experiment not in self.result.profile_seeds:
            return 1
        seeds = self._seeds_now(track)
        assert seeds is not None  # the experiment has seeds at the profile
        return max(1, 1 + len(seeds) - track.looks.seeds[0])

    def _seeds_now(self, track: Track) -> list[int] | None:
        """The seeds the claim is looked at on (None: its experiment has no seeds at the profile): its
        experiment's, less those run before its expectation changed."""
        seeds = (self.result.profile_seeds if track.claim in self._profile_only else self.result.seeds).get(
            track.experiment)
        return None if seeds is None else [seed for seed in seeds if seed not in track.seen]

    def _stop_reason(self, track: Track) -> str:
        verdict = track.verdict
        assert verdict is not None  # set by the look that asks
        if verdict.status in (PASS, FAIL):
            return DECIDED
        if verdict.status != INCONCLUSIVE:
            return NOT_TESTED
        if track.fixed.status != INCONCLUSIVE:
            return NOT_EXTENDED
        power = verdict.power or {}
        if power.get("unit") != "seeds" or (power.get("needed") is None and not _short_of_spread(track)):
            return NO_FIGURE
        if len(self.result.seeds[track.experiment]) >= self.result.limits[track.experiment]:
            return AT_LIMIT
        return ""

    def _verdict(self, track: Track, level: float, seeds: list[int] | None = None) -> Verdict:
        """The claim's verdict at its look's level on `seeds`, by default its experiment's seeds now
        (before families)."""
        seeds = self._seeds_now(track) if seeds is None else seeds
        key = (track.claim, tuple(seeds or ()), level)
        if key not in self._raw:
            self._raw[key] = verify_claim(self.catalog, track.loaded, self.profile, self.lookup, seeds=seeds,
                                          level=level)
        return self._raw[key]

    # --- costs ---------------------------------------------------------------------------

    def _candidate(self, track: Track) -> schedule.Candidate:
        seeds = self.result.seeds[track.experiment]
        variants = variants_needed(track.loaded, self.profile)
        power = track.verdict.power if track.verdict is not None else None
        assert power is not None  # an open track has a verdict with a figure of the seeds needed (_stop_reason)
        fresh = len(track.seeds)
        needed = track.looks.seeds[0] if _short_of_spread(track) else power["needed"]
        return schedule.Candidate(track.claim, track.experiment, len(seeds) - fresh + needed, len(seeds),
                                  self._seconds(track.experiment, variants))

    def _seconds(self, experiment: str, variants) -> float:
        """Measured wall seconds of one seed of the variants and of the variants they refer to."""
        return sum(self._variant_seconds(experiment, v) for v in self._with_references(experiment, variants))

    def _with_references(self, experiment: str, variants) -> list[str]:
        every = set(variants)
        for variant in variants:
            every |= referenced_variants(self.catalog, experiment, variant, self.profile)
        return sorted(every)

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

    def _next_seed_missing(self, experiment: str) -> list[str]:
        """The variants the experiment's next seed runs (and those they refer to) whose records are
        not in the store."""
        seed = next_seed(self.result.seeds[experiment])
        variants = self._with_references(experiment, self._variants_for_seed(experiment))
        return [v for v in variants if not self._stored(experiment, v, seed)]

    def _stored(self, experiment: str, variant: str, seed: int) -> bool:
        _, record = self.lookup(experiment, variant, seed, self.profile)
        return record is not None and record.get("status") in REUSABLE

    # --- adding a seed -------------------------------------------------------------------

    def _variants_for_seed(self, experiment: str) -> list[str]:
        """The variants the experiment's open claims read, and those of the other claims of their
        families (a family is tested together at every look)."""
        feeding = [t for t in self.result.tracks
                   if t.open and t.experiment == experiment and t.claim not in self._profile_only]
        families = {(t.loaded.paper, t.loaded.claim.family) for t in feeding if t.loaded.claim.family}
        readers = feeding + [t for t in self.result.tracks if t.experiment == experiment and t not in feeding
                             and (t.loaded.paper, t.loaded.claim.family) in families]
        return list(dict.fromkeys(v for t in readers for v in variants_needed(t.loaded, self.profile)))

    def _add_seed(self, experiment: str) -> None:
        seeds = self.result.seeds[experiment]
        seed = next_seed(seeds)
        self._run_seed(experiment, seed)
        seeds.append(seed)

    def _run_seed(self, experiment: str, seed: int) -> None:
        variants = self._variants_for_seed(experiment)
        for _ in range(MAX_DEPENDENCY_WAVES + 1):
            requests, waiting = plan_variants(self.catalog, experiment, variants, self.profile, self.settings,
                                              self.store, self.fingerprints, seeds=[seed])
            execute(requests, self.store, self.settings, self.console, self.result.execution)
            if not waiting:
                break

    def _restore_added_seeds(self) -> None:
        """The seeds an earlier invocation added, for the variants the open claims read: reused from
        the store (run again only where their records are gone)."""
        for experiment, seeds in self.result.seeds.items():
            if any(t.open and t.experiment == experiment for t in self.result.tracks):
                for seed in seeds[len(self.result.profile_seeds[experiment]):]:
                    self._run_seed(experiment, seed)


def _limit(experiment: str, profile_seeds: list[int], max_seeds: int | None, recorded: Recorded | None) -> int:
    """The experiment's max seeds: the recorded plan's; for an experiment new to it `max_seeds`, else
    the plan's max seeds, else the default."""
    if recorded is not None and experiment in recorded.limits:
        return recorded.limits[experiment]
    if max_seeds is None and recorded is not None:
        max_seeds = recorded.max_seeds
    return default_max_seeds(len(profile_seeds)) if max_seeds is None else max_seeds


SPREAD_SEEDS = 2
"""Seeds a test of the mean needs before it has a spread, and so a figure of the seeds that would decide it."""


def _short_of_spread(track: Track) -> bool:
    """A claim whose expectation changed after seeds were run, waiting for the seeds run after the change
    that its first look is on (at least the two a spread needs): more seeds give it a look."""
    return bool(track.seen) and len(track.seeds) < track.looks.seeds[0]


def _change_commit(loaded: LoadedClaim, profile: str) -> str:
    change = loaded.claim.change_at(profile)
    return "" if change is None else change.commit


def _change_entry(change: Change, seen: tuple[int, ...], fixed: Verdict) -> dict:
    """The change as the sequential file records it, with the verdict of the expectation it replaced."""
    before = next((r for r in fixed.readings if r.get("kind") == "before-change"), None)
    return {"date": change.date.isoformat(), "commit": change.commit, "seen": list(seen),
            "before": None if before is None else {k: before[k] for k in ("expectation", "status", "seeds", "text")}}


def _continuing_text(recorded: Recorded, tracks: list[Track], replanned: set[str]) -> str:
    going_on = sum(t.open and t.claim in recorded.claims and t.claim not in replanned for t in tracks)
    new = sum(t.claim not in recorded.claims for t in tracks)
    kept = len(set(recorded.claims) - {t.claim for t in tracks})
    again = ("; planned anew, their verdict on the profile's seeds having changed since: "
             f"{', '.join(sorted(replanned))}"
             if replanned else "")
    return (f"continuing the sequential plan recorded in {recorded.path} ({recorded.plan_text()}): "
            f"recorded claims going on from their recorded look: {going_on}; new to the plan: {new}{again}; the "
            f"other recorded claims keep their verdicts ({kept} of them not selected now)")

