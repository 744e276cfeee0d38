"""From selected claims to the set of runs they need, each with its content key."""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.behaviour import declared_behaviour, source_behaviour
from harness.datasets.registry import loader_module
from harness.loading.catalog import Catalog, LoadedClaim
from harness.loading.configs import deep_merge
from harness.provenance import code_fingerprint, library_versions, source_fingerprint
from harness.running.store import ResultStore, run_key
from harness.settings import Settings

if TYPE_CHECKING:
    from harness.datasets.locations import DataLocations


class DependencyFailed(Exception):
    """A config refers to another run's record that failed or lacked its data."""

    def __init__(self, request: RunRequest, record: dict):
        super().__init__(f"{request.label}: {record['status']}")
        self.request, self.record = request, record


class PendingDependency(Exception):
    """A config refers to another run's record that does not exist yet."""

    def __init__(self, request: RunRequest):
        super().__init__(request.label)
        self.request = request


@dataclass(frozen=True)
class RunRequest:
    experiment: str
    variant: str
    seed: int
    profile: str
    kind: str
    """The kind as the spec names it (a registered name or a `module:KIND` or file reference)."""
    config: dict[str, Any]
    code: dict[str, str]
    """The content digest of every module the run executes (its provenance; not in its key)."""
    datasets: dict[str, str]
    key: str
    behaviour: dict[str, str] = field(default_factory=dict)
    """The behaviour versions the run's code declares (`run_behaviour`): what its key holds of its code."""

    @property
    def label(self) -> str:
        return f"{self.experiment}/{self.variant}/seed {self.seed} ({self.profile})"


def variants_needed(loaded: LoadedClaim, profile: str) -> list[str]:
    """The variants whose records a claim reads at a profile (none if it skips there)."""
    expectation = loaded.claim.expect.get(profile)
    if expectation is None or expectation.skips:
        return []
    return expectation.variants_read(loaded.claim.observe)


VariantsFor = Callable[[LoadedClaim, str], list[str]]
"""The variants whose records a claim reads at a profile (`variants_needed`, or a study's choice)."""


@functools.cache
def _code(module: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(code_fingerprint(module).items()))


@functools.cache
def _behaviour(module: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(declared_behaviour(module).items()))


def _roots(kind, config_model) -> list[str]:
    """The modules a run of `kind` starts from: its runner and the loader of each data set its config reads
    (`harness.datasets.registry.loader_module`)."""
    return [kind.runner, *(loader_module(name) for name in kind.datasets(config_model))]


def run_code(kind, config_model, reread: bool = False) -> dict[str, str]:
    """The code a run of `kind` executes, by module name: the import closures of its roots (`_roots`)
    and of the user code its config names (a policy module or file). Its record's provenance keeps it
    and a worker checks it against its own source; the key holds `run_behaviour` instead. Planning
    hashes a root once per process; a worker checking its own source (`reread`) hashes them again,
    so an edit during a sweep shows."""
    code: dict[str, str] = {}
    for module in _roots(kind, config_model):
        code.update(code_fingerprint(module) if reread else _code(module))
    for source in kind.code_sources(config_model):
        code.update(source_fingerprint(source))
    return code


def run_behaviour(kind, config_model) -> dict[str, str]:
    """The behaviour versions the code of a run of `kind` declares (harness.provenance.declared_behaviour),
    over the same modules as `run_code`: what its key holds of its code."""
    behaviour: dict[str, str] = {}
    for module in _roots(kind, config_model):
        behaviour.update(_behaviour(module))
    for source in kind.code_sources(config_model):
        behaviour.update(source_behaviour(source))
    return behaviour


def datasets_needed(catalog: Catalog, claims: list[LoadedClaim], profiles: list[str],
                    variants_for: VariantsFor = variants_needed) -> list[str]:
    """The data sets the runs of the claims at the profiles read (what the fetch stage obtains)."""
    names: set[str] = set()
    for loaded in claims:
        spec = catalog.specs[loaded.claim.experiment]
        for profile in profiles:
            if profile not in spec.spec.profiles:
                continue
            for variant in variants_for(loaded, profile):
                names.update(spec.kind.datasets(spec.resolve(variant, profile)))
    return sorted(names)


def data_locations(settings: Settings) -> DataLocations:
    from harness.datasets.locations import DataLocations
    return DataLocations(settings.data_dir, settings.cache_dir / "data", settings.download)


def dataset_fingerprints(names: list[str], settings: Settings,
                         fetched: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each data set's fingerprint: as the fetch stage recorded it (``fetched``), else that of
    what is on disk now ('unavailable' when nothing is). Never downloads."""
    fetched = fetched or {}
    missing = [name for name in names if name not in fetched]
    if missing:
        from harness.datasets.registry import dataset_fingerprint
        locations = data_locations(settings)
        fetched = {**fetched, **{name: dataset_fingerprint(name, locations) for name in missing}}
    return {name: fetched[name] for name in names}


def _resolve_references(value: Any, resolve) -> Any:
    """Replace every `{match: variant, metric: name}` mapping by the number it refers to."""
    if isinstance(value, dict):
        if set(value) == {"match", "metric"}:
            return resolve(value["match"], value["metric"])
        return {k: _resolve_references(v, resolve) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_references(v, resolve) for v in value]
    return value


def referenced_variants(catalog: Catalog, experiment: str, variant: str, profile: str) -> set[str]:
    """The variants whose records the variant's config refers to (same seed and profile), transitively."""
    found: set[str] = set()
    todo = [variant]
    while todo:
        config = catalog.specs[experiment].resolve(todo.pop(), profile).model_dump(mode="json", exclude_none=False)
        referenced: set[str] = set()
        _resolve_references(config, lambda other, metric: referenced.add(other))  # noqa: B023 - called at once
        todo += sorted(referenced - found)
        found |= referenced
    return found


def request_for(catalog: Catalog, experiment: str, variant: str, seed: int, profile: str,
                settings: Settings, store: ResultStore | None = None,
                data: Mapping[str, str] | None = None, trial: bool = False,
                overrides: Mapping[str, Any] | None = None) -> RunRequest:
    """The run of one variant and seed at one profile (its config changed by ``overrides`` where given,
    e.g. another precision: a run no claim plans, with a key of its own).

    Config values that refer to another variant's record (same seed and profile) are
    replaced by that record's metric; if it is not stored yet, PendingDependency names it.
    ``data`` holds the fingerprints the fetch stage recorded (see dataset_fingerprints).
    A ``trial`` run is the same run shrunk by its kind's `trial` overrides (and so are the runs
    it refers to); its key differs from the full run's, since its config does.
    """
    loaded = catalog.specs[experiment]
    config_model = loaded.resolve(variant, profile)
    config = config_model.model_dump(mode="json", exclude_none=False)
    if trial and loaded.kind.trial is not None:
        config = deep_merge(config, dict(loaded.kind.trial(config)))
    if overrides:
        config = deep_merge(config, dict(overrides))

    def resolve(other: str, metric: str) -> float:
        dependency = request_for(catalog, experiment, other, seed, profile, settings, store, data, trial, overrides)
        record = store.get(dependency.key) if store is not None else None
        if record is not None and record["status"] != "ok":
            raise DependencyFailed(dependency, record)
        if record is None:
            raise PendingDependency(dependency)
        return float(loaded.kind.metrics[metric].compute(record["result"], loaded.kind.metrics[metric].args()))

    config = _resolve_references(config, resolve)
    config_model = loaded.kind.config_model.model_validate(config)
    code = run_code(loaded.kind, config_model)
    behaviour = run_behaviour(loaded.kind, config_model)
    datasets = dataset_fingerprints(loaded.kind.datasets(config_model), settings, data)
    key = run_key(kind=loaded.spec.kind, config=config, seed=seed, behaviour=behaviour, datasets=datasets,
                  libraries=library_versions(), device=settings.device, threads=settings.threads)
    return RunRequest(experiment, variant, seed, profile, loaded.spec.kind, config, code, datasets, key, behaviour)


def plan_variants(catalog: Catalog, experiment: str, variants, profile: str, settings: Settings,
                  store: ResultStore | None = None, data: Mapping[str, str] | None = None,
                  seeds: list[int] | None = None) -> tuple[list[RunRequest], int]:
    """The runs of `variants` of one experiment at one profile, every seed (the profile's, or
    `seeds`), with the runs whose records their configs refer to listed first: (runnable requests,
    number waiting for a dependency's record); a run that waits is listed with its unresolved key.
    A dependency is listed even where its record is stored, so that whatever takes these runs' records
    (a bundle, a migration) takes the records their keys were computed from."""
    requests, waiting = [], 0
    dependencies = sorted(set().union(*(referenced_variants(catalog, experiment, v, profile) for v in variants)))
    for variant in [*(d for d in dependencies if d not in variants), *variants]:
        for seed in catalog.specs[experiment].spec.profiles[profile].seeds if seeds is None else seeds:
            try:
                requests.append(request_for(catalog, experiment, variant, seed, profile, settings, store, data))
            except PendingDependency as pending:
                waiting += 1
                requests.append(pending.request)
            except DependencyFailed:
                continue
    return requests, waiting


def plan(catalog: Catalog, claims: list[LoadedClaim], profiles: list[str], settings: Settings,
         store: ResultStore | None = None, data: Mapping[str, str] | None = None,
         variants_for: VariantsFor = variants_needed) -> tuple[list[RunRequest], int]:
    """Every run the claims need at the profiles, once each, in a stable order (a verdict's learning level
    reads the variants its claim reads: `harness.verdicts.levels`).

    Returns (runnable requests, number of runs waiting for a dependency's record); the
    dependencies themselves are among the runnable requests.
    """
    requests: dict[str, RunRequest] = {}
    waiting = 0
    for loaded in claims:
        spec = catalog.specs[loaded.claim.experiment].spec
        for profile in profiles:
            if profile not in spec.profiles:
                continue
            variants = variants_for(loaded, profile)  # a verdict's level reads these (harness.verdicts.levels)
            runnable, pending = plan_variants(catalog, spec.experiment, variants, profile,
                                              settings, store, data)
            waiting += pending
            for request in runnable:
                requests.setdefault(request.key, request)
    return list(requests.values()), waiting
