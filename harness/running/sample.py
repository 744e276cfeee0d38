"""The retrained sample: what the claims suite re-runs of the records it otherwise reads from `records/`.

One golden run of every experiment whose data are on this machine (seed 0 at smoke, `harness.running.golden`):
of its variants whose golden record is committed under today's key, the one that took least wall time.
`retrain` runs each into the store's own folder (where the store holds no record of its own for it), so the
claims verified afterwards read it there instead of its committed record, and compares it with that record:
bit for bit where this machine's numerics are the record's, the numerics-invariant metrics only otherwise
(the trained ones then meet the baseline's measured drift through the claims that read them). A run whose key
changed is not sampled: its committed record misses, so the claims suite retrains it, every seed, anyway.
"""
from __future__ import annotations

from dataclasses import replace

from rich.console import Console

from harness.datasets.registry import UNAVAILABLE
from harness.loading.catalog import Catalog
from harness.running import golden
from harness.running.execution import execute
from harness.running.planning import RunRequest
from harness.running.result_comparison import NOTHING_TO_COMPARE, claimed_arguments
from harness.running.store import ResultStore, wall_seconds
from harness.settings import Settings


def sample_requests(catalog: Catalog, settings: Settings, store: ResultStore,
                    experiments: list[str] | None = None) -> list[RunRequest]:
    """One golden run per experiment (of every one, or of those named), the cheapest by its committed record,
    whose key is today's (see the module); none where `store` reads no committed records."""
    recorded = golden.read_golden(settings.root)["runs"]
    bundle = store.bundle
    if bundle is None:
        return []
    cheapest: dict[str, tuple[float, RunRequest]] = {}
    for run, request in golden.golden_requests(catalog, settings, store, experiments).items():
        entry = recorded.get(run)
        if UNAVAILABLE in request.datasets.values():
            continue
        seconds = wall_seconds(bundle.get(request.key, [], {})) if entry and entry["key"] == request.key else None
        if seconds is None:
            continue
        if request.experiment not in cheapest or seconds < cheapest[request.experiment][0]:
            cheapest[request.experiment] = (seconds, request)
    return [request for _, request in sorted(cheapest.values(), key=lambda pair: pair[1].experiment)]


def retrain(catalog: Catalog, settings: Settings, store: ResultStore, console: Console | None = None,
            experiments: list[str] | None = None) -> tuple[list[golden.Outcome], int]:
    """Run the sample into the store's own folder (where it has no record of its own there) and compare each run
    with its committed record (`store` reads both: its own first); the outcomes, and how many ran now."""
    requests = sample_requests(catalog, settings, store, experiments)
    own = ResultStore(store.root)
    todo = [request for request in requests if own.get(request.key) is None]
    execute(todo, own, settings, console)
    bundle = store.bundle
    arguments = {request.experiment: claimed_arguments(catalog.select(), request.experiment)
                 for request in requests}
    outcomes = []
    for request in requests:
        committed = bundle.get(request.key, [], {}) if bundle is not None else None
        outcome = golden.compared(f"{request.experiment}/{request.variant}", request, committed, own.get(request.key),
                                  catalog, arguments[request.experiment], settings)
        outcomes.append(_nothing_compared(outcome))
    return outcomes, len(todo)


def _nothing_compared(outcome: golden.Outcome) -> golden.Outcome:
    """The golden guard fails a changed run it cannot compare; a sample run of unchanged code passes it, said so."""
    if outcome.state == "moved" and outcome.details and outcome.details[0].startswith(NOTHING_TO_COMPARE):
        return replace(outcome, state="nothing to compare")
    return outcome
