"""Every run of a profile shrunk to one round on a handful of samples (each kind's `trial`): proof, in
minutes and on any machine, that the profile's configurations build their models, train and make valid
records, before anyone spends the hours a full run of it costs.

A trial keeps each run's model, method and federation and cuts only its data and rounds, so a paper
profile meant for a GPU is tried on a CPU. Trial records live in a store of their own: their keys
differ from the full runs' (their configs do), and they must not make a profile look measured.
"""
from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from harness.loading.catalog import Catalog
from harness.running.execution import execute
from harness.running.fetching import fetch_data
from harness.running.planning import DependencyFailed, PendingDependency, RunRequest, request_for
from harness.running.store import ResultStore
from harness.settings import Settings


@dataclass(frozen=True)
class TrialOutcome:
    """One variant's trial: its record's status ('ok', 'error', 'unavailable'), or that of the run it
    refers to when that one failed."""

    experiment: str
    variant: str
    status: str
    seconds: float | None
    detail: str
    record: dict | None

    @property
    def label(self) -> str:
        return f"{self.experiment}/{self.variant}"


def _first_seed(catalog: Catalog, experiment: str, profile: str) -> int:
    return catalog.specs[experiment].spec.profiles[profile].seeds[0]


def trial_variants(catalog: Catalog, profile: str, experiments: list[str] | None = None) -> list[tuple[str, str]]:
    """(experiment, variant) of every variant of every experiment that has the profile."""
    chosen = sorted(catalog.specs) if experiments is None else experiments
    return [(experiment, variant) for experiment in chosen
            if profile in catalog.specs[experiment].spec.profiles
            for variant in catalog.specs[experiment].spec.variants]


def _request(catalog: Catalog, experiment: str, variant: str, profile: str, settings: Settings,
             store: ResultStore, data: Mapping[str, str]) -> RunRequest:
    seed = _first_seed(catalog, experiment, profile)
    return request_for(catalog, experiment, variant, seed, profile, settings, store, data, trial=True)


def run_trials(catalog: Catalog, profile: str, settings: Settings, store: ResultStore,
               experiments: list[str] | None = None, console: Console | None = None) -> list[TrialOutcome]:
    """Run the trial of every variant at `profile` (on the first seed), the runs others refer to
    first. The data sets they read are fetched as `verify` fetches them; one that cannot be had makes
    its runs 'unavailable', naming what was tried."""
    variants = trial_variants(catalog, profile, experiments)
    needed = sorted({name for experiment, variant in variants
                     for name in catalog.specs[experiment].kind.datasets(
                         catalog.specs[experiment].resolve(variant, profile))})
    data = fetch_data(needed, settings, console).fingerprints
    settings = replace(settings, download=False)
    for _ in range(len(variants) + 1):  # each wave runs at least one run another was waiting for
        runnable: list[RunRequest] = []
        waiting = 0
        for experiment, variant in variants:
            try:
                runnable.append(_request(catalog, experiment, variant, profile, settings, store, data))
            except PendingDependency as pending:
                runnable.append(pending.request)
                waiting += 1
            except DependencyFailed:
                continue
        execute(runnable, store, settings, console)
        if waiting == 0:
            break
    return [_outcome(catalog, experiment, variant, profile, settings, store, data) for experiment, variant in variants]


def _outcome(catalog: Catalog, experiment: str, variant: str, profile: str, settings: Settings,
             store: ResultStore, data: Mapping[str, str]) -> TrialOutcome:
    try:
        request = _request(catalog, experiment, variant, profile, settings, store, data)
    except DependencyFailed as failed:
        return TrialOutcome(experiment, variant, failed.record["status"], None,
                            f"the run it refers to ({failed.request.variant}) failed: {_error(failed.record)}", None)
    record = store.get(request.key)
    assert record is not None, f"{request.label}: the trial ran but left no record"
    seconds = record["provenance"].get("wall_seconds")
    return TrialOutcome(experiment, variant, record["status"], seconds, _error(record), record)


def _error(record: dict) -> str:
    error = record.get("error")
    if not error:
        return ""
    first_line = error["message"].splitlines()[0] if error["message"] else ""
    return f"{error['type']}: {first_line}"


def summary_line(outcomes: list[TrialOutcome]) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    seconds = sum(o.seconds for o in outcomes if o.seconds is not None and math.isfinite(o.seconds))
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(outcomes)} trial runs: {parts}; {seconds:.1f} s of runs"


def trial_summary(outcomes: list[TrialOutcome], profile: str, settings: Settings, commit: str) -> dict:
    """What `fedclaims trial` keeps (report/trial-<profile>.json) and the report reads: where and when
    the profile was tried, and each run's outcome."""
    from harness.numerics import numerics
    cpu = numerics(settings.device, settings.threads).get("cpu", {}).get("model", "unknown CPU")
    return {"profile": profile, "commit": commit, "date": time.strftime("%Y-%m-%d"), "device": settings.device,
            "cpu": cpu, "runs": [{"experiment": o.experiment, "variant": o.variant, "status": o.status,
                                  "seconds": o.seconds, "detail": o.detail} for o in outcomes]}


def trial_sentence(summary: dict) -> str:
    """One sentence for the report: what the trial covered and what it could not."""
    runs = summary["runs"]
    ok = [r for r in runs if r["status"] == "ok"]
    lacking = sorted({missing_name(r["detail"]) for r in runs if r["status"] == "unavailable"})
    failed = [f"{r['experiment']}/{r['variant']}" for r in runs if r["status"] not in ("ok", "unavailable")]
    experiments = sorted({r["experiment"] for r in ok})
    text = (f"`{summary['profile']}` is tried, not measured: `fedclaims trial --profile {summary['profile']}` built "
            f"each of its {len(runs)} run configurations and trained it for one round on a handful of samples "
            f"({'on the CPU only' if summary['device'] == 'cpu' else 'on ' + summary['device']}, {summary['cpu']}, "
            f"{summary['date']}, commit `{summary['commit'][:12]}`): "
            f"{len(ok)} ran ({', '.join(experiments)})")
    if lacking:
        text += f"; {len(runs) - len(ok) - len(failed)} lack what is not on that machine ({'; '.join(lacking)})"
    if failed:
        text += f"; {len(failed)} FAILED ({', '.join(failed)})"
    return text + ". No run of it trained beyond that round here."


def missing_name(detail: str) -> str:
    """The data set (or weights) a DatasetUnavailable message names."""
    named = re.search(r"dataset '([^']+)' is unavailable", detail)
    return named.group(1) if named else detail


def write_trial(summary: dict, folder: Path) -> Path:
    """report/trial-<profile>.json (read by the report) and .md (a table of every run)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"trial-{summary['profile']}.json"
    path.write_text(json.dumps(summary, indent=1) + "\n")
    rows = [f"| `{r['experiment']}` | `{r['variant']}` | {r['status']} | "
            f"{'' if r['seconds'] is None else format(r['seconds'], '.1f')} | {r['detail'].replace('|', '/')} |"
            for r in summary["runs"]]
    (folder / f"trial-{summary['profile']}.md").write_text("\n".join([
        f"# One-round trial of the `{summary['profile']}` profile", "", trial_sentence(summary), "",
        "Each run keeps its profile's model, method and federation; its kind's `trial` cuts its data to a handful "
        "of samples and its training to one round (`harness.running.trial`). Seconds are the run's wall time.", "",
        "| experiment | variant | status | seconds | detail |", "|---|---|---|---|---|", *rows, ""]))
    return path


def read_trial(folder: Path, profile: str) -> dict | None:
    path = folder / f"trial-{profile}.json"
    return json.loads(path.read_text()) if path.is_file() else None
