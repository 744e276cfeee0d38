"""One pass through the data flow: load, select, plan, execute, verify."""
from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console

from harness.catalog import Catalog, LoadedClaim, load_catalog
from harness.execution import ExecutionSummary, execute
from harness.planning import RunRequest, plan, request_for
from harness.settings import Settings
from harness.store import ResultStore
from harness.verify import Verdict, verify_claim

DEFAULT_PROFILE = "smoke"


@dataclass
class Outcome:
    catalog: Catalog
    claims: list[LoadedClaim]
    profiles: list[str]
    requests: list[RunRequest]
    verdicts: list[Verdict] = field(default_factory=list)
    execution: ExecutionSummary = field(default_factory=ExecutionSummary)
    store: ResultStore | None = None


def select(settings: Settings, papers=(), pattern: str | None = None) -> tuple[Catalog, list[LoadedClaim]]:
    catalog = load_catalog(settings.claims_dir, settings.specs_dir, settings.root)
    return catalog, catalog.select(papers, pattern)


def verify(settings: Settings, papers=(), pattern: str | None = None, profiles=(DEFAULT_PROFILE,),
           run: bool = True, console: Console | None = None, claim_ids: list[str] | None = None) -> Outcome:
    """Verify the selected claims at the profiles, running what the store lacks if `run`."""
    catalog, claims = select(settings, papers, pattern)
    if claim_ids is not None:
        wanted = set(claim_ids)
        claims = [c for c in claims if c.id in wanted]
    profiles = list(profiles)
    requests = plan(catalog, claims, profiles, settings)
    store = ResultStore(settings.store_dir)
    outcome = Outcome(catalog, claims, profiles, requests, store=store)
    if run:
        outcome.execution = execute(requests, store, settings, console)
    keys: dict[tuple, str] = {}

    def lookup(experiment: str, variant: str, seed: int, profile: str):
        index = (experiment, variant, seed, profile)
        if index not in keys:
            keys[index] = request_for(catalog, experiment, variant, seed, profile, settings).key
        return keys[index], store.get(keys[index])

    outcome.verdicts = [verify_claim(catalog, claim, profile, lookup) for claim in claims for profile in profiles]
    outcome.execution.events = list(store.events)
    return outcome
