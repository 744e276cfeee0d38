"""Re-verify a profile from the observations an earlier report recorded, when its run records are
not in this store.

REPORT.json keeps, for every verdict, the per-seed values of each series it tested (and, for a
correlation, each seed's interval and number of clients): everything `verify.evaluate` reads.
So a profile whose records live on another machine (a long `learning` sweep, a GPU cluster's
`paper` runs) can be decided again under the current rules and expectations without training
anything: the observation is rebuilt from those numbers, the expectation is today's, and the
verdict says where its observation came from. A profile is read either from records or from an
archive, never from both (`pipeline.verify` uses an archive only for profiles of which the store
holds no record).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.loading.catalog import Catalog
from harness.loading.loaded import LoadedClaim, LoadedSpec
from harness.schema.observations.base import Shape
from harness.statistics.correlation_estimates import Correlation
from harness.statistics.series import Observed, Series
from harness.verdicts import changes
from harness.verdicts.spans import span_readings
from harness.verdicts.verify import Verdict, _record_decision, evaluate, verdict_head, verify_claim

if TYPE_CHECKING:
    from harness.running.planning import RunRequest
    from harness.running.store import ResultStore

SPREAD_PREFIX = "spread reference: "
FROM_RECORDS_NOTE = "; here "
"""How a report's provenance of an archived profile begins its note of the claims it verified from records."""
ARCHIVE_FORMAT = 1
"""The version of REPORT.json's layout that `load_archive` reads."""


def config_id(experiment: str, variant: str, profile: str) -> str:
    return f"{experiment}/{variant}/{profile}"


def run_entry(request: RunRequest, store: ResultStore | None, profile: str | None = None) -> dict:
    """A run as REPORT.json lists it: its identity, its key, and the content digest (checksum) of the record
    its values were read from, None where there is none here (nor for a record that is retried every time,
    such as one whose data was unavailable)."""
    record = store.reusable(request.key) if store is not None else None
    return {"experiment": request.experiment, "variant": request.variant, "seed": request.seed,
            "profile": profile or request.profile, "key": request.key, "record": (record or {}).get("checksum")}


def listed_once(runs: list[dict]) -> list[dict]:
    """The runs in their first order, each listed once: an archive's own list already names the runs its
    report verified from records, which this report adds again where it does the same."""
    return list({(r.get("experiment"), r.get("variant"), r.get("seed"), r.get("profile"), r.get("key")): r
                 for r in runs}.values())



def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()).hexdigest()


def sealed(payload: dict[str, Any]) -> dict[str, Any]:
    """REPORT.json's content with its format and a checksum over everything else: `load_archive` refuses
    a file whose numbers were edited or damaged since the report wrote it. (A checksum is not a signature:
    whoever edits the numbers and recomputes it is not stopped; the committed records, content-addressed
    and verified on load, are what a profile is decided from wherever they exist.)"""
    body = {key: value for key, value in payload.items() if key not in ("format", "checksum")}
    body["format"] = ARCHIVE_FORMAT
    return {**body, "checksum": _digest(body)}


def _checked(data: Any) -> None:
    """Refuse, naming the file and the entry, what the report never writes."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("format") != ARCHIVE_FORMAT:
        raise ValueError(f"format {data.get('format')!r}; this version reads format {ARCHIVE_FORMAT} (a REPORT.json "
                         "written by `fedclaims report` of this version)")
    body = {key: value for key, value in data.items() if key != "checksum"}
    if data.get("checksum") != _digest(body):
        raise ValueError("its checksum does not match its content: edited or damaged since the report wrote it")
    seen: set[tuple[str, str]] = set()
    for verdict in data["verdicts"]:
        where = (verdict["claim"], verdict["profile"])
        if where in seen:
            raise ValueError(f"two verdicts of claim {where[0]} at profile {where[1]}")
        seen.add(where)
        for label, numbers in (verdict.get("numbers") or {}).items():
            for seed, value in numbers["values"].items():
                if not seed.lstrip("-").isdigit() or not (value is None or isinstance(value, (int, float))):
                    raise ValueError(f"claim {where[0]} at {where[1]}, series {label!r}: seed {seed!r} has value "
                                     f"{value!r}; a seed is an integer and a value a number or null")
    runs: dict[str, tuple] = {}
    for run in data.get("runs", []):
        identity = (run["experiment"], run["variant"], run["seed"])
        if runs.setdefault(run["key"], identity) != identity:
            raise ValueError(f"run key {run['key']} listed as {'/'.join(map(str, runs[run['key']]))} and as "
                             f"{'/'.join(map(str, identity))}")
        digest = run.get("record")
        if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
            raise ValueError(f"run {'/'.join(map(str, identity))} (key {run['key']}): record digest {digest!r} is "
                             "not a SHA-256 hex digest")


@dataclass(frozen=True)
class Archive:
    """The verdicts of an earlier REPORT.json, by (claim, profile)."""

    path: Path
    commit: str
    verdicts: dict[tuple[str, str], dict[str, Any]]
    run_list: tuple[dict[str, Any], ...] = ()
    origins: tuple[tuple[str, str], ...] = ()
    """(profile, provenance) of profiles the archive had itself re-verified from an earlier one."""
    configs: dict[str, str] = field(default_factory=dict)
    """The digest of the config the spec gave each shown (experiment, variant, profile), by `config_id`
    (none in archives written before they were recorded)."""

    def profiles(self) -> list[str]:
        return list(dict.fromkeys(profile for _, profile in self.verdicts))

    def holds(self, profile: str) -> bool:
        """Whether some verdict at the profile carries an observation to re-verify."""
        return any(p == profile and v.get("numbers") for (_, p), v in self.verdicts.items())

    def entry(self, catalog: Catalog, loaded: LoadedClaim, profile: str) -> dict | None:
        """The archived verdict a claim is re-verified from at the profile: its own, else one of
        another claim that observed the same series (`_same_observation`)."""
        return self.verdicts.get((loaded.id, profile)) or _same_observation(catalog, loaded, profile, self)

    def holds_observation(self, catalog: Catalog, loaded: LoadedClaim, profile: str) -> bool:
        """Whether the archive has numbers for the claim at the profile, or recorded that its data
        was unavailable there."""
        archived = self.entry(catalog, loaded, profile)
        return bool(archived and (archived.get("numbers") or archived.get("data_unavailable")))

    @cached_property
    def record_digests(self) -> dict[str, str]:
        """Each listed run's record digest by run key (runs listed without one are absent)."""
        return {run["key"]: run["record"] for run in self.run_list if run.get("record")}

    def runs(self, profiles) -> list[dict[str, Any]]:
        """The archive's list of runs (experiment, variant, seed, profile, key) at the profiles."""
        return [run for run in self.run_list if run.get("profile") in profiles]

    def provenance(self, profile: str) -> str:
        """Where the profile's observations were recorded (the first report that held them), without what the
        archive's own report added about its claims verified from records (this report says its own)."""
        origin = dict(self.origins).get(profile)
        if origin is None:
            return f"re-verified from the observations recorded in {self.path.name} at commit `{self.commit}`"
        return origin.split(FROM_RECORDS_NOTE, 1)[0]


def baseline_archive(path: Path, baseline: dict[str, Any]) -> Archive:
    """A regression baseline's recorded observations as an archive (its entries hold the same
    numbers as a report's verdicts; data-unavailable entries hold none)."""
    profile = baseline["profile"]
    verdicts = {(claim, profile): entry for claim, entry in baseline["claims"].items()}
    return Archive(Path(path), f"baseline {Path(path).name}", verdicts)


def load_archive(path: Path) -> Archive:
    """The archive of a REPORT.json; a file that is not one is a ValueError naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        _checked(data)
        verdicts = {(v["claim"], v["profile"]): v for v in data["verdicts"]}
        commit = str(data.get("commit", "unknown"))
        runs = tuple(dict(run) for run in data.get("runs", []))
        origins = tuple((str(p), str(text)) for p, text in (data.get("archived") or {}).items())
        configs = {str(k): str(v) for k, v in (data.get("configs") or {}).items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a REPORT.json to re-verify from ({type(error).__name__}: {error})") from error
    return Archive(Path(path), commit, verdicts, runs, origins, configs)


def _correlation(r: float, interval: list[float | None] | None, clients: int, obs) -> Correlation:
    controls = 1 if obs.given else 0
    if not math.isfinite(r):
        return Correlation(math.nan, math.nan, math.nan, math.nan, clients, controls,
                           "undefined in the archived observation", obs.method)
    low, high = (math.nan if v is None else float(v) for v in (interval or (None, None)))
    return Correlation(r, math.nan, low, high, clients, controls, "", obs.method)


def _series(label: str, numbers: dict[str, Any], deterministic: bool, agreement: float, structural: bool,
            obs) -> Series:
    values = {int(seed): math.nan if v is None else float(v) for seed, v in numbers["values"].items()}
    correlations = {}
    if obs.shape is Shape.CORRELATION:
        intervals, clients = numbers.get("intervals") or {}, numbers.get("clients") or {}
        correlations = {seed: _correlation(value, intervals.get(str(seed)), int(clients.get(str(seed), 0)), obs)
                        for seed, value in values.items()}
    return Series(label, values, deterministic, correlations, bool(numbers.get("numerics_invariant")), agreement,
                  str(numbers.get("quantity", "")), structural)


def _metric_traits(target: LoadedSpec, metric: str, variants: list[str], profile: str) -> tuple[bool, float, bool]:
    """(deterministic, agreement, structural) of a metric over the variants' configs at the
    profile, as `observe.metric_series` reads them from records."""
    spec = target.kind.metrics[metric]
    configs = [target.resolve(variant, profile).model_dump(mode="json") for variant in variants]
    return all(spec.is_deterministic(config) for config in configs), spec.agreement, spec.structural


def observed_from_numbers(target: LoadedSpec, obs, profile: str, numbers: dict[str, dict],
                          spread_of: str | None = None) -> Observed:
    """The observation a verdict's `numbers` describe, with the traits its metric declares
    (`spread_of`: the reference variant of a within_spread_of expectation)."""
    spread = None
    series = []
    for label, data in numbers.items():
        if label.startswith(SPREAD_PREFIX):
            traits = _metric_traits(target, obs.metric, [spread_of], profile) if spread_of else (False, 0.0, False)
            spread = _series(label[len(SPREAD_PREFIX):], data, *traits, obs)
            continue
        if obs.shape is Shape.CORRELATION:
            traits = (False, 0.0, False)
        else:
            traits = _metric_traits(target, obs.metric, list(obs.variants), profile)
        series.append(_series(label, data, *traits, obs))
    return Observed(series, spread, obs.shape is Shape.SPREAD)


def _observation_of(loaded: LoadedClaim, profile: str) -> tuple:
    """What a claim observes at a profile: its experiment, observation and spread reference."""
    expectation = loaded.claim.expect.get(profile)
    return (loaded.claim.experiment, loaded.claim.observe.model_dump_json(),
            expectation.spread_reference if expectation is not None else None)


def _same_observation(catalog: Catalog, loaded: LoadedClaim, profile: str, archive: Archive) -> dict | None:
    """For a claim the archive does not hold (added after it was written): the archived verdict of
    another claim that observed the same series at the profile, else one recording that the
    experiment's data was unavailable there."""
    wanted = _observation_of(loaded, profile)
    unavailable = None
    for other in catalog.claims:
        archived = archive.verdicts.get((other.id, profile))
        if other.id == loaded.id or archived is None:
            continue
        if archived.get("numbers") and _observation_of(other, profile) == wanted:
            return archived
        if archived.get("data_unavailable") and other.claim.experiment == loaded.claim.experiment:
            unavailable = unavailable or archived
    return unavailable


def _same_value(archived: Any, recorded: Any) -> bool:
    if archived is None or recorded is None:
        return archived is None and (recorded is None or (isinstance(recorded, float) and math.isnan(recorded)))
    return float(archived) == float(recorded) or math.isclose(float(archived), float(recorded), rel_tol=1e-12)


def _same_recordings(archive: Archive, archived: dict[str, Any], from_records: Verdict,
                     digest_of: Callable[[str], str | None]) -> bool:
    """Whether an archived observation must equal what the records at hand give: it was read from the very
    records (each run's record digest, where the archive lists them all), or from records of the same runs
    under the same numerics (a run's key fixes its inputs and code, its numerics its last bits; a re-run
    here is another record with the same bits)."""
    listed = archive.record_digests
    keys = archived.get("runs") or []
    if keys and all(key in listed and listed[key] == digest_of(key) for key in keys):
        return True
    return sorted(archived.get("numerics") or []) == sorted(from_records.numerics)


def check_against_records(catalog: Catalog, loaded: LoadedClaim, profile: str, archive: Archive,
                          from_records: Verdict, digest_of: Callable[[str], str | None]) -> None:
    """Refuse an archive whose observation of a claim differs from what the same records give: where the
    archived verdict lists exactly the runs the claim was just verified from, recorded as the records here
    (`_same_recordings`; `digest_of`: a run key's record digest here), each archived per-seed value must be
    its record's. A value edited with the checksum recomputed is caught here wherever the records are at hand."""
    archived = archive.entry(catalog, loaded, profile)
    if not archived or not archived.get("numbers") or not from_records.runs:
        return
    if sorted(archived.get("runs") or []) != sorted(from_records.runs):
        return
    if not _same_recordings(archive, archived, from_records, digest_of):
        return  # the same runs recorded elsewhere (another machine's numerics): other last bits
    for label, numbers in archived["numbers"].items():
        recorded = (from_records.numbers.get(label) or {}).get("values")
        if recorded is None:
            raise ValueError(f"{archive.path}: claim {loaded.id} at {profile}: series {label!r} is not what its "
                             "records observe (the same runs)")
        for seed, value in numbers["values"].items():
            if seed not in recorded or not _same_value(value, recorded[seed]):
                raise ValueError(f"{archive.path}: claim {loaded.id} at {profile}, series {label!r}, seed {seed}: "
                                 f"archived value {value!r} differs from its record's {recorded.get(seed)!r} (the "
                                 "same runs): the archive was edited")
        if set(recorded) != set(numbers["values"]):
            raise ValueError(f"{archive.path}: claim {loaded.id} at {profile}, series {label!r}: archived seeds "
                             f"{sorted(numbers['values'])} are not its records' {sorted(recorded)}")


def check_against_partial_records(catalog: Catalog, loaded: LoadedClaim, profile: str, archive: Archive,
                                  lookup: Callable[[str, str, int, str], tuple[str, dict | None]]) -> None:
    """Refuse an archive whose observation of a claim, about to be re-verified because some of its runs'
    records are missing here, differs from the records that are here: every seed whose runs all have here
    the very record the archive lists (by digest) must hold the archived values. An archive edited and
    resealed cannot decide a claim by a missing record while the records at hand contradict it."""
    archived = archive.entry(catalog, loaded, profile)
    if not archived or not archived.get("numbers"):
        return
    spec = catalog.specs[loaded.claim.experiment].spec
    listed = archive.record_digests

    def listed_record(variant: str, seed: int) -> bool:
        key, record = lookup(spec.experiment, variant, seed, profile)
        return record is not None and record.get("checksum") is not None and listed.get(key) == record["checksum"]

    variants = loaded.claim.expect[profile].variants_read(loaded.claim.observe)
    seeds = [s for s in spec.profiles[profile].seeds if all(listed_record(v, s) for v in variants)]
    if not seeds:
        return
    at_hand = verify_claim(catalog, loaded, profile, lookup, missing_is_error=False, seeds=seeds)
    for label, numbers in archived["numbers"].items():
        recorded = (at_hand.numbers.get(label) or {}).get("values") or {}
        for seed in map(str, seeds):
            if seed in numbers["values"] and not _same_value(numbers["values"][seed], recorded.get(seed)):
                raise ValueError(f"{archive.path}: claim {loaded.id} at {profile}, series {label!r}, seed {seed}: "
                                 f"archived value {numbers['values'][seed]!r} differs from its record's "
                                 f"{recorded.get(seed)!r}, here as the archive lists it: the archive was edited")


def _check_seeds(archive: Archive, loaded: LoadedClaim, profile: str, numbers: dict[str, Any],
                 seeds: list[int]) -> None:
    """Refuse archived per-seed values of seeds the profile does not run (its verdicts read only those)."""
    for label, series in numbers.items():
        foreign = sorted({int(seed) for seed in series["values"]} - set(seeds))
        if foreign:
            raise ValueError(f"{archive.path}: claim {loaded.id} at {profile}, series {label!r}: seeds {foreign} are "
                             f"not among the profile's {sorted(seeds)}")


def reverify(catalog: Catalog, loaded: LoadedClaim, profile: str, archive: Archive,
             seeds: list[int] | None = None) -> Verdict:
    """The claim's verdict at the profile from the archived observation, under today's expectation (on
    `seeds` of it where given: the seeds an expectation it replaced was read on)."""
    verdict, expectation = verdict_head(catalog, loaded, profile)
    if expectation is None:
        return verdict
    claim = loaded.claim
    target = catalog.specs[claim.experiment]
    archived = archive.entry(catalog, loaded, profile)
    if archived is not None and archived.get("data_unavailable"):
        verdict.reason, verdict.data_unavailable = archived["reason"], True
        return verdict
    if archived is None or not archived.get("numbers"):
        verdict.reason = (f"not run at profile {profile!r} (the archived observations hold none of it); "
                          f"`fedclaims report --profile {profile}` runs it")
        return verdict
    profile_seeds = list(target.spec.profiles[profile].seeds)
    _check_seeds(archive, loaded, profile, archived["numbers"], profile_seeds)
    seeds = profile_seeds if seeds is None else list(seeds)
    change = claim.change_at(profile)
    if change is not None:
        seen = [seed for seed in seeds if seed in claim.seen_at(profile)]
        verdict.readings.append(changes.earlier_reading(
            lambda before, seeds: reverify(catalog, before, profile, archive, seeds), loaded, profile, change, seen))
        verdict.readings += changes.span_on_every_seed(
            lambda now, seeds: reverify(catalog, now, profile, archive, seeds), loaded, expectation, seeds)
        seeds = claim.fresh_seeds(profile, seeds)
        if not seeds:
            return changes.without_fresh_seeds(verdict, change, profile, seen)
    whole = seeds == profile_seeds
    numbers = archived["numbers"] if whole else changes.numbers_on(archived["numbers"], seeds)
    observed = observed_from_numbers(target, claim.observe, profile, numbers, expectation.spread_reference)
    verdict.observed = observed.text()
    verdict.numbers = numbers if whole else {s.label: s.numbers() for s in observed.series}
    runs = archived.get("runs") or []
    verdict.runs = list(runs) if isinstance(runs, list) else []  # a baseline keeps one hash of them instead
    verdict.numerics = list(archived.get("numerics") or [])
    verdict.family = claim.family or ""
    _record_decision(verdict, evaluate(expectation, claim.observe, observed))
    if change is None:  # where it changed, the span is read on every seed (changes.span_on_every_seed)
        verdict.readings += span_readings(expectation, observed)
    if change is not None:
        verdict.reason += changes.fresh_note(change, seeds, seen)
    return verdict
