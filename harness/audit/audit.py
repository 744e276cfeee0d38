"""`fedclaims audit POLICY`: run a policy on the HAS-FL federations beside its controls, and analyse.

For each federation the HAS-FL experiment's spec (partition, caps, model, schedule, seeds of the
chosen profile) is reused with four variants: the audited policy, HeteroFL, FjORD, and a random
control whose budget is the audited run's realised mean capacity in the same seed (a reference
to its record, resolved in a second wave). Runs go through the same planning, keys, store and
executors as claims, so a re-audit reuses every record whose code, config and data are unchanged,
and editing the policy's source re-runs its records.

The policy is the user's own choice: a file named on the command line (relative to the working
directory, as any path typed there) may run wherever it lies, and is checked, by loading it,
before any data set is fetched. Its runs name it by its path from the project folder, so their
keys hold no absolute path of this machine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.audit import analysis
from harness.extensions import file_reference
from harness.loading.catalog import Catalog, load_project
from harness.loading.loaded import LoadedSpec
from harness.provenance import git_commit
from harness.runners.parts import POLICIES
from harness.running.execution import execute
from harness.running.fetching import fetch_data
from harness.running.planning import plan_variants
from harness.running.store import ResultStore
from harness.schema.spec import Variant
from harness.settings import Settings, scoped_code, scoped_code_of

FEDERATIONS = {"cifar10": "hasfl-cifar10", "emnist": "hasfl-emnist", "shakespeare": "hasfl-shakespeare"}
DEFAULT_FEDERATIONS = ("cifar10", "emnist")
"""Table 4's federations. Shakespeare is audited on request: at the standard size its LSTM stays at
the unigram plateau, where accuracies differ by nothing."""
AUDITED = "audited"
CONTROLS = {
    "heterofl": {"policy": "heterofl"},
    "fjord": {"policy": "fjord"},
    "random-budget": {"policy": {"name": "random_budget", "budget": {"match": AUDITED, "metric": "mean_capacity"}}},
}
DEFAULT_MARGIN = 2.0
"""Accuracy points within which the audited policy and its matched random control count as equivalent."""
MAX_WAVES = 3


@dataclass
class FederationAudit:
    federation: str
    experiment: str
    seeds: list[int]
    results: dict[str, dict[int, dict]] = field(default_factory=dict)
    validations: list[analysis.StatisticValidation] = field(default_factory=list)
    comparisons: list[analysis.Comparison] = field(default_factory=list)
    coverage: analysis.Coverage | None = None
    capacity: dict[str, str] = field(default_factory=dict)
    unavailable: str = ""

    def findings(self) -> list[str]:
        if self.unavailable:
            return []
        found = [f"{self.federation}: `{v.statistic}` {v.reading.split(':')[0]} "
                 f"(r(stat, p_max) {v.with_capacity.text()}; r(stat, TV | p_max) "
                 f"{v.with_data_given_capacity.text()})" for v in self.validations if v.confounded]
        control = next((c for c in self.comparisons if c.against == "random-budget"), None)
        if control is not None and not control.interval[0] > 0:
            found.append(f"{self.federation}: not better than the matched-budget random control ({control.reading})")
        assert self.coverage is not None  # set by the analysis of an available federation
        found += [f"{self.federation}: {w}" for w in self.coverage.warnings]
        return found

    def to_dict(self) -> dict[str, Any]:
        return {"federation": self.federation, "experiment": self.experiment, "seeds": self.seeds,
                "unavailable": self.unavailable, "capacity": self.capacity,
                "validations": [v.to_dict() for v in self.validations],
                "comparisons": [c.to_dict() for c in self.comparisons],
                "coverage": None if self.coverage is None else self.coverage.to_dict(),
                "findings": self.findings()}


@dataclass
class Audit:
    policy: str
    profile: str
    commit: str
    margin: float
    federations: list[FederationAudit]

    @property
    def findings(self) -> list[str]:
        return [f for federation in self.federations for f in federation.findings()]

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "profile": self.profile, "commit": self.commit, "margin": self.margin,
                "findings": self.findings, "exit_code": 1 if self.findings else 0,
                "federations": [f.to_dict() for f in self.federations]}


def audit_spec(base: LoadedSpec, policy: str, label: str | None = None) -> LoadedSpec:
    """The HAS-FL experiment of one federation with the audited policy and its three controls."""
    variants = {AUDITED: Variant(label=label or policy, config={"federation": {"policy": policy}})}
    variants |= {name: Variant(label=name, config={"federation": settings}) for name, settings in CONTROLS.items()}
    spec = base.spec.model_copy(update={"experiment": f"audit-{base.spec.experiment}", "variants": variants,
                                        "figures": []})
    return LoadedSpec(spec, base.doc, base.kind)


def _run(catalog: Catalog, experiment: str, profile: str, settings: Settings, store: ResultStore,
         fingerprints: dict[str, str], console: Console) -> dict[str, dict[int, dict]]:
    variants = list(catalog.specs[experiment].spec.variants)
    requests, waiting = plan_variants(catalog, experiment, variants, profile, settings, store, fingerprints)
    summary = execute(requests, store, settings, console)
    for _ in range(MAX_WAVES - 1):
        if not waiting:
            break
        requests, waiting = plan_variants(catalog, experiment, variants, profile, settings, store, fingerprints)
        execute(requests, store, settings, console, summary)
    records: dict[str, dict[int, dict]] = {}
    for request in requests:
        record = store.get(request.key)
        if record is not None:
            records.setdefault(request.variant, {})[request.seed] = record
    return records


def _analyse(federation: FederationAudit, records: dict[str, dict[int, dict]], margin: float) -> None:
    failed = [f"{variant} seed {seed}: {record['error']['message'].splitlines()[0]}"
              for variant, by_seed in records.items() for seed, record in by_seed.items() if record["status"] != "ok"]
    missing = [v for v in [AUDITED, *CONTROLS] if len(records.get(v, {})) != len(federation.seeds)]
    if failed or missing:
        federation.unavailable = "; ".join(failed) or f"no records for {missing}"
        return
    federation.results = {v: {s: r["result"] for s, r in by_seed.items()} for v, by_seed in records.items()}
    audited = federation.results[AUDITED]
    federation.validations = [analysis.validate_statistic(name, audited)
                              for name in analysis.statistic_names(list(audited.values()))]
    accuracy = {v: analysis.end_accuracies(results) for v, results in federation.results.items()}
    federation.comparisons = [
        analysis.compare_accuracy("random-budget", accuracy[AUDITED], accuracy["random-budget"], margin),
        analysis.compare_accuracy("heterofl", accuracy[AUDITED], accuracy["heterofl"], None),
        analysis.compare_accuracy("fjord", accuracy[AUDITED], accuracy["fjord"], None),
    ]
    federation.coverage = analysis.coverage(audited)
    for variant, results in federation.results.items():
        means = [sum(r["mean_width"] for r in result["history"]) / len(result["history"])
                 for result in results.values()]
        federation.capacity[variant] = f"{sum(means) / len(means):.3f}"


def check_command_line_policy(policy: str) -> None:
    """Load `policy` as typed (a file: relative to the working directory, allowed wherever it
    lies); raise UnknownExtension if it cannot be."""
    named = file_reference(policy)
    with scoped_code(Path.cwd(), [Path(named[0])] if named else []):
        POLICIES.load(policy)


def as_project_policy(policy: str, settings: Settings) -> tuple[str, Settings]:
    """The policy as the project's specs would name it, and settings that allow it: a policy
    file given on the command line is named by its path from the project folder."""
    named = file_reference(policy)
    if named is None:
        return policy, settings
    file = Path(named[0]).resolve()
    relative = Path(os.path.relpath(file, settings.root.resolve())).as_posix()
    return f"{relative}:{named[1]}", replace(settings, allowed_code_paths=(*settings.allowed_code_paths, file))


def run_audit(settings: Settings, policy: str, profile: str, federations: list[str], margin: float = DEFAULT_MARGIN,
              console: Console | None = None) -> Audit:
    """Audit `policy` (raises UnknownExtension, before fetching anything, if it cannot be loaded)."""
    check_command_line_policy(policy)
    audited, settings = as_project_policy(policy, settings)
    with scoped_code_of(settings):
        return _audit(settings, audited, policy, profile, federations, margin, console or Console(stderr=True))


def _audit(settings: Settings, policy: str, label: str, profile: str, federations: list[str], margin: float,
           console: Console) -> Audit:
    shipped = load_project(settings)
    catalog = Catalog()
    for name in federations:
        base = shipped.specs[FEDERATIONS[name]]
        if profile not in base.spec.profiles:
            raise ValueError(f"experiment {base.spec.experiment} has no profile {profile!r}; "
                             f"profiles: {', '.join(base.spec.profiles)}")
        loaded = audit_spec(base, policy, label)
        catalog.specs[loaded.spec.experiment] = loaded
    store = ResultStore(settings.store_dir)
    needed = {name: loaded.kind.datasets(loaded.resolve("heterofl", profile)) for name, loaded in catalog.specs.items()}
    data = fetch_data(sorted({d for names in needed.values() for d in names}), settings, console)
    settings = replace(settings, download=False)  # runs read only what was fetched above
    audit = Audit(label, profile, git_commit(settings.root), margin, [])
    for name in federations:
        experiment = f"audit-{FEDERATIONS[name]}"
        federation = FederationAudit(name, experiment, list(catalog.specs[experiment].spec.profiles[profile].seeds))
        lacking = [d for d in needed[experiment] if d in data.problems]
        if lacking:
            federation.unavailable = "; ".join(data.problems[d].splitlines()[0] for d in lacking)
        else:
            _analyse(federation, _run(catalog, experiment, profile, settings, store, data.fingerprints, console),
                     margin)
        audit.federations.append(federation)
    return audit
