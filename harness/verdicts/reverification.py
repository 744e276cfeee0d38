"""Re-verifying the profiles an earlier report archived (`harness.verdicts.archive`): a pass of its own after
the verdicts of the profiles run or read from records.

At an archived profile a claim whose every record this store holds is verified from them (they are this
code's, the archive's observation an earlier one's; a claim added after the archive was written is decided so
at a profile whose other records live elsewhere); any other claim from the archive's observation, unless the
profile's config of it changed since the archive recorded it."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.loading.catalog import Catalog
from harness.loading.loaded import LoadedClaim
from harness.running.planning import plan
from harness.running.store import ResultStore
from harness.settings import Settings
from harness.statistics.outcome import SKIPPED
from harness.verdicts.archive import (
    FROM_RECORDS_NOTE,
    Archive,
    check_against_partial_records,
    check_against_records,
    config_id,
    listed_once,
    reverify,
    run_entry,
)
from harness.verdicts.verdict import Verdict
from harness.verdicts.verify import verify_claim

Lookup = Callable[[str, str, int, str], tuple[str, "dict | None"]]
"""(experiment, variant, seed, profile) -> (store key, record or None), as `verify_claim` reads a run."""


@dataclass
class ArchiveReverification:
    """The archived profiles' verdicts, where each profile's observations came from, and the runs behind them."""

    catalog: Catalog
    archive: Archive
    lookup: Lookup
    store: ResultStore
    settings: Settings
    fingerprints: Mapping[str, str]
    """The data sets' fingerprints the fetch recorded: the verification from records plans its runs by them."""
    verdicts: list[Verdict] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    """Per archived profile, where its verdicts came from (`Outcome.archived`)."""
    runs: list[dict] = field(default_factory=list)
    """The runs behind the archived profiles' verdicts, as REPORT.json lists them (`Outcome.archived_runs`)."""

    def run(self, claims: list[LoadedClaim], profiles: tuple[str, ...]) -> None:
        """Re-verify the claims at every archived profile."""
        self.provenance = {profile: self.archive.provenance(profile) for profile in profiles}
        self.runs = self.archive.runs(profiles)
        for profile in profiles:
            self._profile(claims, profile)
        self.runs = listed_once(self.runs)

    def _profile(self, claims: list[LoadedClaim], profile: str) -> None:
        from_records, unavailable, new = [], [], 0
        for claim in claims:
            held = self.archive.holds_observation(self.catalog, claim, profile)
            verdict = verify_claim(self.catalog, claim, profile, self.lookup, missing_is_error=False)
            if not verdict.data_unavailable and (verdict.status != SKIPPED or verdict.numbers):
                if held:
                    check_against_records(self.catalog, claim, profile, self.archive, verdict, self._record_digest)
                from_records.append(claim)
                new += not held
            elif verdict.data_unavailable and not held:
                unavailable.append(claim)
            else:
                verdict = self._from_archive(claim, profile, verdict)
            self.verdicts.append(verdict)
        if not from_records + unavailable:
            return
        requests, _ = plan(self.catalog, from_records + unavailable, [profile], self.settings, self.store,
                           self.fingerprints)
        self.runs += [run_entry(r, self.store, profile) for r in requests]
        if from_records:
            self._note_from_records(from_records, new, profile)

    def _from_archive(self, claim: LoadedClaim, profile: str, stored: Verdict) -> Verdict:
        """A claim some of whose records are missing here: the archive's observation, or its "not run" verdict,
        says so, unless the profile's config of it changed since (then the stored verdict says why)."""
        changed = archived_config_changed(self.catalog, claim, profile, self.archive, self.store)
        if changed is not None:
            return replace(stored, reason=f"{changed}; {stored.reason}")
        check_against_partial_records(self.catalog, claim, profile, self.archive, self.lookup)
        return reverify(self.catalog, claim, profile, self.archive)

    def _record_digest(self, key: str) -> str | None:
        return (self.store.reusable(key) or {}).get("checksum")  # as `run_entry` lists it

    def _note_from_records(self, from_records: list[LoadedClaim], new: int, profile: str) -> None:
        ids = {c.id for c in from_records}
        numerics = sorted({n for v in self.verdicts if v.profile == profile and v.claim in ids for n in v.numerics})
        self.provenance[profile] += (f"{FROM_RECORDS_NOTE}{len(from_records)} claim(s) are verified from this "
                                     "store's records instead, which hold every run they read "
                                     f"({new} of them the archive held no observation of; "
                                     f"numerics {', '.join(numerics) or 'none'})")


def _runs_config(spec: Any, recorded: Any) -> bool:
    """Whether a record ran the config the spec gives: equal, where a value the spec takes from another run's
    record (`{match: variant, metric: name}`) is the number that record gave."""
    if isinstance(spec, dict) and set(spec) == {"match", "metric"}:
        return isinstance(recorded, (int, float)) and not isinstance(recorded, bool)
    if isinstance(spec, dict) and isinstance(recorded, dict):
        return set(spec) == set(recorded) and all(_runs_config(spec[k], recorded[k]) for k in spec)
    if isinstance(spec, list) and isinstance(recorded, list):
        return len(spec) == len(recorded) and all(map(_runs_config, spec, recorded))
    return spec == recorded


def archived_config_changed(catalog: Catalog, claim: LoadedClaim, profile: str, archive: Archive, store: ResultStore
                            ) -> str | None:
    """Why the archive's observation of a claim no longer describes the profile (the profile's scale changed
    since): the archive recorded another config digest for one of its variants than the spec now gives, or a
    record behind it is at hand (in the store or the committed bundle) and ran another config. That
    observation is not re-verified as this profile's."""
    entry = archive.entry(catalog, claim, profile) or {}
    spec = catalog.specs[claim.claim.experiment]
    for variant in claim.claim.observe.variants:
        recorded = archive.configs.get(config_id(claim.claim.experiment, variant, profile))
        if recorded is not None and variant in spec.spec.variants and recorded != spec.config_digest(variant, profile):
            return (f"the archived observation ran another config of {variant} at {profile} than the spec now gives "
                    f"(the config digest {archive.path.name} recorded), so it is not re-verified as this profile's")
    for key in entry.get("runs") or []:
        record = store.reusable(key)
        if record is None or record.get("variant") not in spec.spec.variants:
            continue
        now = spec.resolve(record["variant"], profile).model_dump(mode="json", exclude_none=False)
        if not _runs_config(now, record.get("config")):
            return (f"the archived observation ran another config of {record['variant']} at {profile} than the spec "
                    f"now gives (its record {key[:16]}), so it is not re-verified as this profile's")
    return None
