"""The golden guard: an edit that moves a number must bump a behaviour version (harness.provenance).

A record's key holds the behaviour versions its code declares, not the code itself, so an edit that
is meant to change no number keeps every key. The guard checks that promise. The golden set is one
smoke seed (seed 0) of every experiment and variant, whose records are committed in `records/`;
`baselines/golden.json` lists each golden run's key and the fingerprint of the code that made it
(`code_hash` of its provenance's module digests), and the fingerprints the guard has vouched for.

`check` plans every golden run with today's code:
- its code fingerprint is the recorded one, or one vouched for: nothing to do;
- its key differs: a version was bumped (or its config or data changed), so its numbers are meant
  to change: the golden set is re-recorded (`fedclaims golden record`) in the same change;
- otherwise the run is re-run and compared with its golden record in everything its kind declares
  (`harness.running.result_comparison.differences`): bit for bit where this machine's numerics are
  the record's; under other numerics only the numerics-invariant metrics are compared, and the rest
  is said to be unchecked here. A difference fails with "bump the version or revert".
`record` does the same and then writes the file: the new fingerprints vouched for where nothing
moved, and, for runs whose key changed, their new records bundled and their entries replaced.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.datasets.registry import UNAVAILABLE
from harness.loading.catalog import Catalog
from harness.numerics import fingerprint, numerics
from harness.provenance import code_hash
from harness.running.bundle import RecordBundle
from harness.running.execution import execute
from harness.running.fetching import survey_data
from harness.running.planning import DependencyFailed, PendingDependency, RunRequest, request_for
from harness.running.result_comparison import claimed_arguments, differences
from harness.running.store import ResultStore
from harness.settings import Settings

GOLDEN_FILE = Path("baselines") / "golden.json"
PROFILE, SEED = "smoke", 0
FORMAT = 1


def golden_path(root: Path) -> Path:
    return root / GOLDEN_FILE


def read_golden(root: Path) -> dict[str, Any]:
    """The golden file (an empty one where the project has none); ValueError naming the field if damaged."""
    path = golden_path(root)
    if not path.is_file():
        return {"format": FORMAT, "profile": PROFILE, "seed": SEED, "runs": {}, "vouched": []}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a golden file of format {FORMAT}")
    runs, vouched = data.get("runs"), data.get("vouched")
    if not isinstance(runs, dict) or not all(isinstance(v, dict) and isinstance(v.get("key"), str)
                                             and isinstance(v.get("code"), str) for v in runs.values()):
        raise ValueError(f"{path}: field 'runs' must map 'experiment/variant' to {{key, code}}")
    if not isinstance(vouched, list) or not all(isinstance(v, str) for v in vouched):
        raise ValueError(f"{path}: field 'vouched' must be a list of code fingerprints")
    return data


def vouched_code(root: Path) -> frozenset[str]:
    """Every code fingerprint the golden guard has recorded or shown to give the golden numbers."""
    return _vouched(read_golden(root))


def _vouched(data: dict[str, Any]) -> frozenset[str]:
    return frozenset(data["vouched"]) | {entry["code"] for entry in data["runs"].values()}


@dataclass
class Outcome:
    """One golden run's check."""

    run: str
    request: RunRequest
    state: str
    """'unchanged', 'same numbers', 'rekeyed', 'moved', 'not run', 'no data' (its data set is not here) or
    'nothing to compare' (its kind declares no metric a seed fixes: `harness.running.sample` only)."""
    details: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.state in ("moved", "rekeyed", "not run")

    def text(self) -> str:
        head = {"unchanged": "code as recorded", "same numbers": "code changed, numbers the same",
                "rekeyed": "key changed (a version bumped, or its config or data): numbers are meant to change; "
                           "re-record the golden set with `fedclaims golden record`",
                "moved": "code changed and a number moved: bump the version or revert",
                "not run": "could not be re-run",
                "no data": "not checked: its data set is not on this machine",
                "nothing to compare": "not compared: its kind declares no metric a seed fixes"}[self.state]
        return "\n".join([f"{self.run}: {head}", *(f"  {line}" for line in self.details[:8])])


def golden_requests(catalog: Catalog, settings: Settings, store: ResultStore,
                    experiments: list[str] | None = None) -> dict[str, RunRequest]:
    """Seed 0 of every variant at the smoke profile, of every experiment (or those named), keyed
    'experiment/variant'; a variant whose config refers to a run not stored yet, or one that failed (its
    data missing), is left out."""
    chosen = [name for name in catalog.specs if experiments is None or name in experiments]
    names = sorted({d for name in chosen for v in catalog.specs[name].spec.variants
                    for d in catalog.specs[name].kind.datasets(catalog.specs[name].resolve(v, PROFILE))})
    data = survey_data(names, settings).fingerprints
    requests = {}
    for name in chosen:
        spec = catalog.specs[name].spec
        if PROFILE not in spec.profiles:
            continue
        for variant in spec.variants:
            try:
                requests[f"{name}/{variant}"] = request_for(catalog, name, variant, SEED, PROFILE, settings, store,
                                                            data)
            except (PendingDependency, DependencyFailed):
                continue
    return requests


def check(catalog: Catalog, settings: Settings, store: ResultStore, console: Console | None = None,
          experiments: list[str] | None = None) -> list[Outcome]:
    """Every golden run of the selection, checked against its golden record (see the module)."""
    golden = read_golden(settings.root)
    vouched = _vouched(golden)
    requests = golden_requests(catalog, settings, store, experiments)
    outcomes, rerun = [], []
    for run, request in requests.items():
        entry = golden["runs"].get(run)
        if entry is None:
            continue
        if UNAVAILABLE in request.datasets.values():
            outcomes.append(Outcome(run, request, "no data"))
        elif code_hash(request.code) in vouched and request.key == entry["key"]:
            outcomes.append(Outcome(run, request, "unchanged"))
        elif request.key != entry["key"]:
            outcomes.append(Outcome(run, request, "rekeyed", [f"recorded key {entry['key'][:16]}, "
                                                              f"today's {request.key[:16]}"]))
        else:
            rerun.append((run, request))
    if rerun:
        scratch = ResultStore(settings.cache_dir / "golden-reruns")
        for _, request in rerun:
            scratch.path(request.key).unlink(missing_ok=True)
        execute([request for _, request in rerun], scratch, settings, console)
        arguments = {name: claimed_arguments(catalog.select(), name) for name in catalog.specs}
        for run, request in rerun:
            outcomes.append(compared(run, request, store.get(request.key), scratch.get(request.key),
                                      catalog, arguments[request.experiment], settings))
    return outcomes


def compared(run: str, request: RunRequest, golden: dict[str, Any] | None, new: dict[str, Any] | None,
              catalog: Catalog, arguments: dict[str, list[dict]], settings: Settings) -> Outcome:
    """A re-run (`new`) against its golden record: bit for bit where this machine's numerics are the record's,
    its numerics-invariant metrics only otherwise."""
    if golden is None:
        return Outcome(run, request, "not run", ["no golden record under its key in records/"])
    if new is None or new["status"] != "ok":
        why = "no record" if new is None else (new.get("error") or {}).get("message", new["status"])
        return Outcome(run, request, "not run", [str(why)])
    kind = catalog.specs[request.experiment].kind
    here = numerics(settings.device, settings.threads)["fingerprint"]
    unseeded = [name for name, metric in kind.metrics.items() if metric.is_unseeded(request.config)]
    notes = [f"not compared, drawn by randomness no seed reaches: {', '.join(unseeded)}"] if unseeded else []
    if fingerprint(golden) == here:
        found = differences(kind, arguments, golden["result"], new["result"], request.config)
        return Outcome(run, request, "moved" if found else "same numbers", [*found, *notes])
    invariant = {name for name, metric in kind.metrics.items() if metric.is_numerics_invariant(request.config)}
    only = replace(kind, metrics={n: m for n, m in kind.metrics.items() if n in invariant}, client_quantities={})
    found = differences(only, arguments, golden["result"], new["result"], request.config) if invariant else []
    notes.append(f"made under numerics {fingerprint(golden)}, here {here}: compared {len(invariant)} "
                 f"numerics-invariant metric(s) bit for bit; {len(kind.metrics) - len(invariant)} trained one(s) "
                 "unchecked on this machine")
    return Outcome(run, request, "moved" if found else "same numbers", [*found, *notes])


def record(catalog: Catalog, settings: Settings, store: ResultStore, console: Console | None = None) -> list[Outcome]:
    """Check every golden run, then write the golden file: vouch for changed code that gave the same
    numbers, and for a run whose key changed, run it, bundle its record and record its new entry. A run
    whose numbers moved under its old key is left failing (bump its version or revert first)."""
    outcomes = check(catalog, settings, store, console)
    golden = read_golden(settings.root)
    rekeyed = [o.request for o in outcomes if o.state == "rekeyed"]
    missing = [r for run, r in golden_requests(catalog, settings, store).items() if run not in golden["runs"]]
    execute([*rekeyed, *missing], store, settings, console)
    bundle = RecordBundle(settings.records_dir)
    bundle.add(r for r in (store.reusable(request.key) for request in [*rekeyed, *missing]) if r is not None)
    vouched = set(golden["vouched"])
    for outcome in outcomes:
        if outcome.state == "same numbers":
            vouched.add(code_hash(outcome.request.code))
    for request in [*rekeyed, *missing]:
        if bundle.has(request.key):
            golden["runs"][f"{request.experiment}/{request.variant}"] = {"key": request.key,
                                                                         "code": code_hash(request.code)}
    golden["vouched"] = sorted(vouched)
    golden["runs"] = dict(sorted(golden["runs"].items()))
    golden_path(settings.root).write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [o for o in outcomes if o.state != "rekeyed"]
