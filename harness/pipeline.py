"""One pass through the data flow: load, select, fetch, plan, execute, verify."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from rich.console import Console

from harness.kinds import held
from harness.loading import design_check
from harness.loading.catalog import Catalog, load_project
from harness.loading.loaded import LoadedClaim
from harness.loading.studies import generated_profiles
from harness.running.bundle import store_for
from harness.running.execution import ExecutionSummary, execute
from harness.running.fetching import DataState, fetch_data, survey_data
from harness.running.planning import (
    DependencyFailed,
    PendingDependency,
    RunRequest,
    datasets_needed,
    plan,
    request_for,
    variants_needed,
)
from harness.running.store import ResultStore
from harness.settings import Settings
from harness.verdicts.archive import Archive
from harness.verdicts.reverification import ArchiveReverification
from harness.verdicts.verify import Verdict, apply_families, verify_claim

DEFAULT_PROFILE = "smoke"
MAX_DEPENDENCY_WAVES = 4


@dataclass
class Outcome:
    catalog: Catalog
    claims: list[LoadedClaim]
    profiles: list[str]
    requests: list[RunRequest]
    verdicts: list[Verdict] = field(default_factory=list)
    execution: ExecutionSummary = field(default_factory=ExecutionSummary)
    store: ResultStore | None = None
    data: DataState = field(default_factory=DataState)
    lookup: Callable[[str, str, int, str], tuple[str, dict | None]] | None = None
    """(experiment, variant, seed, profile) -> (store key, record or None), as the verdicts read them."""
    archived: dict[str, str] = field(default_factory=dict)
    """Profiles re-verified from an archive of observations (`harness.verdicts.archive`), with where from."""
    archived_runs: list[dict] = field(default_factory=list)
    """The runs behind the archived profiles' verdicts, as the archive lists them."""
    notes: list[str] = field(default_factory=list)
    """How planned runs execute other than their configs read (`execution_notes`), each once."""


def execution_notes(catalog: Catalog, requests: list[RunRequest]) -> list[str]:
    """Each experiment's kind's `config_notes` on its planned runs, each note once, with the experiment."""
    notes: dict[str, None] = {}
    read: set[tuple[str, str, str]] = set()
    for request in requests:
        if (request.experiment, request.variant, request.profile) in read:  # seeds share their config
            continue
        read.add((request.experiment, request.variant, request.profile))
        kind = catalog.specs[request.experiment].kind
        for note in held.config_notes(kind, kind.config_model.model_validate(request.config)):
            notes[f"{request.experiment}: {note}"] = None
    return list(notes)


def numerics_of(outcome: Outcome) -> dict[str, dict]:
    """The description of every numerics fingerprint among the records behind the outcome."""
    found: dict[str, dict] = {}
    if outcome.store is None:
        return found
    for request in outcome.requests:
        record = outcome.store.get(request.key)
        description = ((record or {}).get("provenance") or {}).get("numerics")
        if description:
            found.setdefault(description["fingerprint"], description)
    return dict(sorted(found.items()))


def varying_claims(outcome: Outcome) -> set[str]:
    """Claims whose observed metric differs from run to run (timings)."""
    varying = set()
    for loaded in outcome.claims:
        metric = getattr(loaded.claim.observe, "metric", None)
        kind = outcome.catalog.specs[loaded.claim.experiment].kind
        if metric is not None and kind.metrics[metric].varies:
            varying.add(loaded.id)
    return varying


def select(settings: Settings, papers=(), pattern: str | None = None,
           check_design: bool = False) -> tuple[Catalog, list[LoadedClaim]]:
    """The project's catalog and the claims of `papers` matching `pattern`; with `check_design`, the catalog is first
    refused (SpecError) where an expectation is decidable at no number of seeds (`harness.loading.design_check`,
    remembered in the settings' cache folder)."""
    catalog = load_project(settings)
    if check_design:
        design_check.check_design(catalog, settings.cache_dir)
    return catalog, catalog.select(papers, pattern)


def stored_profiles(settings: Settings, papers=(), pattern: str | None = None) -> list[str]:
    """Profiles of the selected claims with at least one of their runs in the store (by scale);
    the points of scale studies are not among them (`fedclaims study` shows those)."""
    catalog, claims = select(settings, papers, pattern)
    store = store_for(settings)
    points = generated_profiles(catalog.studies.values())
    found = []
    for profile in catalog.by_scale(p for p in catalog.profiles() if p not in points):
        requests, _ = plan(catalog, claims, [profile], settings, store)
        if any(store.has(request.key) for request in requests):
            found.append(profile)
    return found


def lacking_trained_runs(settings: Settings, profiles, papers=(), pattern: str | None = None) -> list[str]:
    """The profiles of which the store lacks a record of some run that trains (an empirical kind's):
    the store alone cannot verify them (their analytic records may be shared with other profiles)."""
    catalog, claims = select(settings, papers, pattern)
    store = store_for(settings)
    lacking = []
    for profile in profiles:
        requests, waiting = plan(catalog, claims, [profile], settings, store)
        trained = [r for r in requests if catalog.specs[r.experiment].kind.evidence == "empirical"]
        if waiting or any(not store.has(r.key) for r in trained):
            lacking.append(profile)
    return lacking


def verify(settings: Settings, papers=(), pattern: str | None = None, profiles=(DEFAULT_PROFILE,),
           run: bool = True, console: Console | None = None, claim_ids: list[str] | None = None,
           render_only: tuple[str, ...] = (), study: str | None = None, points=(),
           archive: Archive | None = None, archived: tuple[str, ...] = ()) -> Outcome:
    """Verify the selected claims at the profiles, running what the store lacks if `run`.

    With a `study`, the claims are that study's (narrowed by the other selections) and the
    profiles its points (all, or those whose axis value is in `points`); at those points every
    variant a claim observes runs, even where its base expectation skips it. Without `run`, the
    points are read from stored records only (as `render_only`).

    With `run`, the data sets the runs read are fetched first; planning, the runs (which never
    download) and the verifier's look-ups all key records by the fingerprints fetched then.
    Profiles in `render_only` are verified from the records already stored, never run; a claim
    whose records are missing there is SKIPPED as not run at that profile. Profiles in `archived`
    are re-verified from the observations `archive` recorded (`harness.verdicts.archive`), not from records.
    """
    catalog, claims = select(settings, papers, pattern)
    if study is None:
        catalog.check_profiles([*profiles, *render_only])
    variants_for = variants_needed
    if study is not None:
        chosen = catalog.study(study).select(points)
        claim_ids = [c for c in chosen.claim_ids if claim_ids is None or c in claim_ids]
        variants_for = chosen.variants_for
        profiles, render_only = (chosen.profiles, ()) if run else ((), tuple(chosen.profiles))
    if claim_ids is not None:
        wanted = set(claim_ids)
        claims = [c for c in claims if c.id in wanted]
    profiles = list(profiles)
    store = (store_for(settings) if archive is None
             else store_for(settings, archive.record_digests, archive.path.name))
    extra = [p for p in render_only if p not in profiles]
    needed = datasets_needed(catalog, claims, profiles + extra, variants_for)
    data = fetch_data(needed, settings, console) if run else survey_data(needed, settings)
    settings = replace(settings, download=False)  # runs read only what was fetched above
    fingerprints = data.fingerprints
    requests, waiting = plan(catalog, claims, profiles, settings, store, fingerprints, variants_for)
    outcome = Outcome(catalog, claims, profiles + extra, requests, store=store, data=data)
    outcome.notes = execution_notes(catalog, requests)
    if outcome.notes:
        console = console or Console(stderr=True)
        for note in outcome.notes:
            console.print(f"note: {note}", highlight=False, soft_wrap=not console.is_terminal)
    if run:
        every_request = {r.key: r for r in requests}
        outcome.execution = execute(requests, store, settings, console)
        for _ in range(MAX_DEPENDENCY_WAVES):
            if not waiting:
                break
            requests, waiting = plan(catalog, claims, profiles, settings, store, fingerprints, variants_for)
            execute(requests, store, settings, console, outcome.execution)
            every_request.update((r.key, r) for r in requests)
        outcome.requests = list(every_request.values())

    lookup = record_lookup(catalog, settings, store, fingerprints, outcome.requests)
    outcome.lookup = lookup
    outcome.verdicts = [verify_claim(catalog, claim, profile, lookup) for claim in claims for profile in profiles]
    if extra:
        stored, _ = plan(catalog, claims, extra, settings, store, fingerprints, variants_for)
        lookup.know(stored)
        outcome.requests = list({r.key: r for r in [*outcome.requests, *stored]}.values())
        outcome.verdicts += [verify_claim(catalog, claim, profile, lookup, missing_is_error=False)
                             for claim in claims for profile in extra]
    if archive is not None:
        outcome.profiles += [p for p in archived if p not in outcome.profiles]
        reverified = ArchiveReverification(catalog, archive, lookup, store, settings, fingerprints)
        reverified.run(claims, archived)
        outcome.verdicts += reverified.verdicts
        outcome.archived, outcome.archived_runs = reverified.provenance, reverified.runs
    outcome.profiles = catalog.by_scale(outcome.profiles)  # the digest reads the last as the largest
    apply_families(outcome.verdicts, lambda v: profile_level_of(catalog, v))
    outcome.execution.events = list(store.events)
    return outcome


def study_outcomes(settings: Settings, catalog: Catalog) -> dict[str, Outcome]:
    """Each scale study's outcome, read from stored records only (nothing runs): what the report's
    studies section draws."""
    return {name: verify(settings, study=name, run=False) for name in catalog.studies}


class RecordLookup:
    """`verify_claim`'s look-up: the store key and record of a run (a failed dependency's error as its record).

    A run's key is read from the map of the plan's runs to their keys; only a run the plan does not list (one
    that waits for a dependency's record or lost it, one whose key another run of the plan shares, one read
    after the plan) is planned again at its look-up."""

    def __init__(self, catalog: Catalog, settings: Settings, store: ResultStore, fingerprints: dict[str, str],
                 requests: Iterable[RunRequest] = ()) -> None:
        self.catalog, self.settings, self.store, self.fingerprints = catalog, settings, store, fingerprints
        self.keys: dict[tuple[str, str, int, str], str] = {}
        self.know(requests)

    def know(self, requests: Iterable[RunRequest]) -> None:
        """Take the keys of planned runs (a later plan's key of a run replaces an earlier one's)."""
        self.keys.update(((r.experiment, r.variant, r.seed, r.profile), r.key) for r in requests)

    def __call__(self, experiment: str, variant: str, seed: int, profile: str) -> tuple[str, dict | None]:
        key = self.keys.get((experiment, variant, seed, profile))
        if key is None:
            try:
                key = request_for(self.catalog, experiment, variant, seed, profile, self.settings, self.store,
                                  self.fingerprints).key
            except PendingDependency as pending:
                return f"(waits for {pending.request.label})", None
            except DependencyFailed as failed:
                error = failed.record["error"]
                return failed.request.key, {"status": failed.record["status"],
                                            "error": {**error, "message": f"its budget comes from "
                                                                          f"{failed.request.label}, "
                                                                          f"which failed: {error['message']}"}}
        record = self.store.get(key)
        if record is None and key in self.store.refused:
            return key, {"status": "error", "error": {"type": "RefusedRecord", "message": self.store.refused[key]}}
        return key, record


def record_lookup(catalog: Catalog, settings: Settings, store: ResultStore, fingerprints: dict[str, str],
                  requests: Iterable[RunRequest] = ()) -> RecordLookup:
    """`verify_claim`'s look-up (`RecordLookup`), knowing the keys of the planned `requests`."""
    return RecordLookup(catalog, settings, store, fingerprints, requests)


def profile_level_of(catalog: Catalog, verdict: Verdict) -> float:
    """The level a verdict on its profile's seeds was tested at (its family's Holm runs at it)."""
    return catalog.claim(verdict.claim).claim.level_at(verdict.profile)
