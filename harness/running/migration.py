"""Carry records of an earlier format over to their keys under this one (`fedclaims store migrate`).

A format-1 record is never read under a format-2 key (harness.running.store), so after the format bump
every run would be recomputed. A migration carries an old record over instead where the new code
is shown to compute the same bits:

1. The runs the selected claims need are planned with the new code at the profiles the old
   records were made at (or the ones named), giving each its new key; runs whose config refers to
   another run's record wait for it, as in `verify`, and are planned in a later wave.
2. Each new run is matched to the old record of the same experiment, variant and seed made at one
   of the profiles that request its key. Configs are not compared: other changes may have
   reshaped them, and the check below is what vouches for the match. Old records keep the profile
   that first made them, not every profile sharing them, hence "one of the profiles".
3. A matched record is a candidate only if it finished (`ok`), its own fields give its key under
   format 1's definition, and it was made with this key's library versions, device, threads and
   data-set fingerprints, under this machine's numerics (a record made under other numerics is
   never carried: its bits are not this machine's).
4. The candidates are grouped by experiment and the profile they were made at; in every group a
   sample (one run, or `--sample` runs, spread over the variants) is re-run with the new code and
   its record compared with the old one: every metric and per-client quantity the kind declares,
   except metrics declared `varies` (timings), bit for bit (a metric that needs arguments, with
   each set of arguments any claim on the experiment gives it, selected or not), and the fields the
   result holds (an older record lacking one today's runner records is not this code's). A group whose
   every sampled run is identical is carried: each other record is stored under its new key
   (format 2) with its provenance, whose `code` is the new key's code, plus `migrated` (the old
   format, key, code and config, and the re-runs that checked it). A group with a difference is
   left to be recomputed.

The same check carries records of this format made under earlier code (a refactor, a speed-up: any
edit of a module a run executes gives it a new key). Each record of a selected experiment is keyed
afresh from its own fields (kind, config, seed, data sets, device, threads) with the code it would
run today; where that key differs and holds no record yet, the record is a candidate under the
conditions of 3 (its fields give its key under its own code). Candidates are grouped by experiment,
profile and the change of code (the old and the new code's hashes), so a re-run vouches only for
records that ran the same code before and run the same code now; study runs, whose configs no
profile plans, are carried like any other. Within a group the cheapest runs are re-run first.
Records of several earlier versions of a run may all be candidates for its new key: the first
group whose check passes carries it.

The re-runs are stored like any run's record. Old records are never changed nor deleted.
"""
from __future__ import annotations

import hashlib
import math
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from harness.kinds.base import ExperimentKind
from harness.loading.catalog import Catalog, LoadedClaim
from harness.numerics import fingerprint, numerics
from harness.provenance import code_hash, library_versions
from harness.running.execution import execute
from harness.running.fetching import survey_data
from harness.running.planning import RunRequest, dataset_fingerprints, datasets_needed, plan, run_code
from harness.running.result_comparison import claimed_arguments, differences
from harness.running.store import RECORD_FORMAT, ResultStore, content_key, wall_seconds
from harness.settings import Settings

MAX_WAVES = 4
"""Planning waves: a run whose config refers to another run's record is planned once that
record is carried or re-run (as harness.pipeline's dependency waves)."""


def format1_key(record: dict[str, Any]) -> str:
    """The key a format-1 record's fields give under format 1's definition (code: the sha256 of
    "module sha256-of-its-bytes" lines)."""
    provenance = record["provenance"]
    code = "\n".join(f"{name} {digest}" for name, digest in sorted(provenance["code"].items()))
    return content_key({"kind": record["kind"], "config": record["config"], "seed": record["seed"],
                        "code": hashlib.sha256(code.encode()).hexdigest(), "datasets": provenance["datasets"],
                        "libraries": provenance["libraries"], "device": provenance["device"],
                        "threads": provenance["threads"]})


@dataclass(frozen=True)
class Candidate:
    """A new run and the old record it may be carried from."""

    request: RunRequest
    old_key: str
    old: dict[str, Any]
    change: str = ""
    """For a record of this format made under earlier code: "old code hash → new code hash"."""

    @property
    def group(self) -> tuple[str, ...]:
        return (self.request.experiment, self.old["profile"]) + ((self.change,) if self.change else ())

    @property
    def label(self) -> str:
        return f"{self.request.variant}/seed {self.request.seed}"


@dataclass
class Check:
    """One sampled run re-run with the new code and compared with its old record."""

    label: str
    key: str
    differences: list[str]

    @property
    def identical(self) -> bool:
        return not self.differences


@dataclass
class Group:
    """What happened to the old records of one experiment made at one profile."""

    experiment: str
    profile: str
    change: str = ""
    """Empty for records of an earlier format; else the change of code ("old hash → new hash")."""
    carried: list[str] = field(default_factory=list)
    recomputed: dict[str, str] = field(default_factory=dict)
    """Label -> why it was not carried."""
    checks: list[Check] = field(default_factory=list)

    def text(self) -> str:
        total = len(self.carried) + len(self.recomputed) + len(self.checks)
        reran = ", ".join(f"{c.label} ({'identical' if c.identical else 'differs'})" for c in self.checks)
        code = f" (code {self.change})" if self.change else ""
        lines = [f"{self.experiment} @ {self.profile}{code}: carried {len(self.carried)} of {total}"
                 + (f"; re-run to check: {reran}" if reran else "; nothing re-run")]
        for check in self.checks:
            lines += [f"  {check.label}: {difference}" for difference in check.differences[:5]]
            if len(check.differences) > 5:
                lines.append(f"  {check.label}: and {len(check.differences) - 5} more differences")
        lines += [f"  recomputed {label}: {why}" for label, why in sorted(self.recomputed.items())]
        return "\n".join(lines)


@dataclass
class Migration:
    groups: dict[tuple[str, ...], Group] = field(default_factory=dict)
    already: int = 0
    """New runs already stored under their new key (nothing to carry)."""
    unmatched: int = 0
    """New runs with no old record to carry (they run at the next verify)."""
    unused: int = 0
    """Old records no planned run matched (other claims, variants or profiles); left in place."""
    events: list[str] = field(default_factory=list)

    def group(self, experiment: str, profile: str, change: str = "") -> Group:
        key = (experiment, profile) + ((change,) if change else ())
        return self.groups.setdefault(key, Group(experiment, profile, change))

    def text(self) -> str:
        carried = sum(len(g.carried) for g in self.groups.values())
        recomputed = sum(len(g.recomputed) for g in self.groups.values())
        checks = sum(len(g.checks) for g in self.groups.values())
        return (f"carried {carried} records, left {recomputed} to be recomputed, re-ran {checks}; "
                f"{self.already} already under their new key, {self.unmatched} planned runs without an old record, "
                f"{self.unused} old records no planned run matched; old records are left in place")


def migrate(settings: Settings, catalog: Catalog, claims: list[LoadedClaim], profiles: Iterable[str] = (),
            sample: int = 1, console: Console | None = None) -> Migration:
    """Carry the store's old records over to the new keys of the runs `claims` need (see the module)."""
    if sample < 1:
        raise ValueError(f"--sample is the number of runs re-run per group; it must be at least 1, not {sample}")
    store = ResultStore(settings.store_dir)
    store.check_readable()
    store.check()
    old = dict(store.old_records())
    by_run: dict[tuple[str, str, int], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for key, record in old.items():
        by_run[record["experiment"], record["variant"], record["seed"]].append((key, record))
    named = list(profiles)
    profiles = _profiles(catalog, claims, named, old.values())
    data = survey_data(datasets_needed(catalog, claims, profiles), settings).fingerprints
    migration, matched, handled = Migration(), set[str](), set[str]()
    for _ in range(MAX_WAVES):
        candidates = _match(catalog, claims, profiles, settings, store, data, by_run, handled, matched, migration)
        if not candidates:
            break
        _check_and_carry(catalog, candidates, sample, settings, store, migration, console)
    migration.unused = len(set(old) - matched)
    stale = _code_candidates(catalog, claims, named or _known_profiles(catalog, claims), settings, store, data,
                             migration)
    if stale:
        _check_and_carry(catalog, stale, sample, settings, store, migration, console)
    migration.events = list(store.events)
    return migration


def _code_candidates(catalog: Catalog, claims: list[LoadedClaim], profiles: list[str], settings: Settings,
                     store: ResultStore, data: dict[str, str], migration: Migration) -> list[Candidate]:
    """The selected experiments' records of this format made under earlier code, each with the run
    its fields give today, where that run has no record yet (see the module)."""
    experiments = {loaded.claim.experiment for loaded in claims}
    candidates: list[Candidate] = []
    for key, record in list(store.records()):
        if record["experiment"] not in experiments or record["profile"] not in profiles or record["status"] != "ok":
            continue  # a record that did not finish is never reused, so never carried
        loaded = catalog.specs[record["experiment"]]
        label = f"{record['variant']}/seed {record['seed']}"
        provenance = record["provenance"]
        try:
            config_model = loaded.kind.config_model.model_validate(record["config"])
        except ValidationError as error:
            migration.group(record["experiment"], record["profile"], "config no longer valid").recomputed[label] = (
                f"its config does not validate under this code ({error.error_count()} problems)")
            continue
        code = run_code(loaded.kind, config_model)
        fields = {"format": RECORD_FORMAT, "kind": loaded.kind.name, "config": record["config"],
                  "seed": record["seed"], "datasets": provenance["datasets"], "device": provenance["device"],
                  "threads": provenance["threads"]}
        new_key = content_key({**fields, "code": code_hash(code), "libraries": library_versions()})
        if new_key == key:
            continue
        if store.reusable(new_key) is not None:
            migration.already += 1
            continue
        change = f"{code_hash(provenance['code'])[:12]} → {code_hash(code)[:12]}"
        datasets = dataset_fingerprints(sorted(provenance["datasets"]), settings, data)
        problem = _stale_problem(key, record, {**fields, "code": code_hash(provenance["code"]),
                                               "libraries": provenance["libraries"]}, datasets, settings)
        if problem:
            migration.group(record["experiment"], record["profile"], change).recomputed[label] = problem
            continue
        request = RunRequest(record["experiment"], record["variant"], record["seed"], record["profile"],
                             loaded.spec.kind, record["config"], code, provenance["datasets"], new_key)
        candidates.append(Candidate(request, key, record, change))
    return candidates


def _stale_problem(key: str, record: dict[str, Any], own_fields: dict[str, Any], datasets: dict[str, str],
                   settings: Settings) -> str | None:
    """Why a record made under earlier code cannot be carried whatever the check says, if it cannot."""
    if content_key(own_fields) != key:
        return "the old record's fields do not give its key"
    return _made_elsewhere(record, datasets, settings)


def _known_profiles(catalog: Catalog, claims: list[LoadedClaim]) -> list[str]:
    return list(dict.fromkeys(p for loaded in claims for p in catalog.specs[loaded.claim.experiment].spec.profiles))


def _profiles(catalog: Catalog, claims: list[LoadedClaim], named: list[str], old: Iterable[dict]) -> list[str]:
    known = _known_profiles(catalog, claims)
    unknown = [p for p in named if p not in known]
    if unknown:
        raise ValueError(f"no selected claim's experiment has profile {', '.join(map(repr, unknown))}; "
                         f"profiles: {', '.join(known)}")
    present = {record["profile"] for record in old}
    return named or [p for p in known if p in present]


def _match(catalog, claims, profiles, settings, store, data, by_run, handled, matched, migration) -> list[Candidate]:
    """This wave's new runs not handled yet, each matched to its old record and checked as a candidate."""
    profiles_of: dict[str, list[str]] = defaultdict(list)
    requests: dict[str, RunRequest] = {}
    for profile in profiles:
        for request in plan(catalog, claims, [profile], settings, store, data)[0]:
            if request.key not in handled:
                requests.setdefault(request.key, request)
                profiles_of[request.key].append(profile)
    candidates = []
    for key, request in requests.items():
        handled.add(key)
        olds = {old_key: record for old_key, record in by_run[request.experiment, request.variant, request.seed]
                if record["profile"] in profiles_of[key]}
        matched.update(olds)
        if store.reusable(key) is not None:
            migration.already += 1
            continue
        if not olds:
            migration.unmatched += 1
            continue
        (old_key, record), *others = sorted(olds.items())
        group = migration.group(request.experiment, record["profile"])
        label = f"{request.variant}/seed {request.seed}"
        problem = (f"{len(olds)} old records match it ({', '.join(k[:12] for k in sorted(olds))})" if others
                   else _ineligible(request, old_key, record, settings))
        if problem:
            group.recomputed[label] = problem
        else:
            candidates.append(Candidate(request, old_key, record))
    return candidates


def _ineligible(request: RunRequest, old_key: str, record: dict[str, Any], settings: Settings) -> str | None:
    """Why an old record cannot be carried to `request`'s key whatever the check says, if it cannot."""
    if record["status"] != "ok":
        return f"the old record's status is {record['status']}"
    try:
        reproduced = format1_key(record)
    except (KeyError, TypeError, ValueError) as error:
        return f"the old record lacks what its key was made of ({type(error).__name__}: {error})"
    if reproduced != old_key:
        return "the old record's fields do not give its key"
    return _made_elsewhere(record, request.datasets, settings)


def _made_elsewhere(record: dict[str, Any], datasets: dict[str, str], settings: Settings) -> str | None:
    """How the record's making differs from a run here (library versions, device and threads, data,
    numerics), if it does: its bits are then not this machine's to check."""
    provenance = record.get("provenance") or {}
    if provenance.get("libraries") != library_versions():
        changed = sorted(name for name in library_versions()
                         if (provenance.get("libraries") or {}).get(name) != library_versions()[name])
        return "made with other library versions: " + ", ".join(
            f"{name} {(provenance.get('libraries') or {}).get(name)} (here {library_versions()[name]})"
            for name in changed)
    if (provenance.get("device"), provenance.get("threads")) != (settings.device, settings.threads):
        return (f"made on {provenance.get('device')} with {provenance.get('threads')} threads, not "
                f"{settings.device} with {settings.threads}")
    if provenance.get("datasets") != datasets:
        return f"made from data {provenance.get('datasets')}, here {datasets}"
    here = numerics(settings.device, settings.threads)["fingerprint"]
    if fingerprint(record) != here:
        return f"made under numerics {fingerprint(record)}, not this machine's {here}"
    return None


def _sampled(candidates: list[Candidate], sample: int) -> list[Candidate]:
    """Up to `sample` candidates, the variants in turn (within one, the cheapest runs first)."""
    by_variant: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in sorted(candidates, key=lambda c: (c.request.variant, wall_seconds(c.old) or math.inf,
                                                       c.request.seed)):
        by_variant[candidate.request.variant].append(candidate)
    rounds = [[runs[i] for runs in by_variant.values() if i < len(runs)]
              for i in range(max(map(len, by_variant.values())))]
    return [candidate for round_ in rounds for candidate in round_][:sample]


def _check_and_carry(catalog, candidates, sample, settings, store, migration, console) -> None:
    groups: dict[tuple[str, ...], list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        groups[candidate.group].append(candidate)
    sampled = {group: _sampled(members, sample) for group, members in groups.items()}
    execute([c.request for chosen in sampled.values() for c in chosen], store, settings, console)
    for key, members in groups.items():
        group = migration.group(*key)
        kind = catalog.specs[group.experiment].kind
        arguments = claimed_arguments(catalog.select(), group.experiment)
        checks = [_check(kind, arguments, candidate, store) for candidate in sampled[key]]
        group.checks += checks
        chosen = {id(candidate) for candidate in sampled[key]}
        rest = [candidate for candidate in members if id(candidate) not in chosen]
        if all(check.identical for check in checks):
            for candidate in rest:
                if store.reusable(candidate.request.key) is not None:  # another group's record carried it
                    migration.already += 1
                    continue
                store.put(_carried(candidate, checks))
                group.carried.append(candidate.label)
        else:
            reason = "the group's check found a difference"
            group.recomputed.update({candidate.label: reason for candidate in rest})


def _check(kind: ExperimentKind, arguments: dict[str, list[dict]], candidate: Candidate, store: ResultStore) -> Check:
    record = store.get(candidate.request.key)
    if record is None or record["status"] != "ok":
        why = "no record" if record is None else f"{record['status']}: {(record.get('error') or {}).get('message')}"
        return Check(candidate.label, candidate.request.key, [f"the re-run did not finish ({why})"])
    return Check(candidate.label, candidate.request.key, differences(kind, arguments, candidate.old["result"],
                                                                     record["result"]))


def _carried(candidate: Candidate, checks: list[Check]) -> dict[str, Any]:
    """The old record under its new key, its provenance noting where it came from and what checked it."""
    request, old = candidate.request, candidate.old
    provenance = dict(old["provenance"])
    migrated = {"from_format": old["format"], "old_key": candidate.old_key, "old_code": provenance["code"],
                "checked_by": [{"run": check.label, "key": check.key} for check in checks],
                "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if old["config"] != request.config:
        migrated["old_config"] = old["config"]
    provenance.update(code=request.code, migrated=migrated)
    return {"key": request.key, "experiment": request.experiment, "variant": request.variant, "seed": request.seed,
            "profile": old["profile"], "kind": request.kind, "config": request.config, "status": "ok",
            "result": old["result"], "error": None, "provenance": provenance}


def print_migration(migration: Migration, console: Console) -> None:
    for event in migration.events:
        console.print(f"[yellow]store:[/yellow] {escape(event)}", soft_wrap=True)
    for group in migration.groups.values():
        console.print(escape(group.text()), soft_wrap=True)
    console.print(migration.text(), soft_wrap=True)
