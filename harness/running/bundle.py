"""The records committed with the report (`records/` in the project): one gzip file per run record,
`records/<key[:2]>/<key>.json.gz`, named by the run's key, read-only to every command but `fedclaims
records add`.

A bundled record is verified when it is read, as git verifies an object: a regular file inside the
bundle (no link on the way), at most `MAX_RECORD_BYTES` once decompressed, of this format, its checksum
over the content, no field this code never writes, the fields readers need, its key recomputed from its
own fields equal to its file's name, and finished (`ok`: a bundle holds evidence, not failures). One that
fails is refused by name (its file and why) and read as absent; anything at a record's name counts as
a record there, so a folder or a FIFO in its place is refused, not taken for no record. Where the report
being re-verified lists a record digest for the run (REPORT.json's `runs[].record`), the bundled record
must be that very record. A refused record is evidence damaged, not absent: the claims reading it are
ERROR with the reason (harness.pipeline.record_lookup). Adding records merges: a record already bundled
under its key with the same content is left as it is, and one with different content (the same run
under other numerics, or an earlier bundle's) is never replaced: the conflict is reported. Files are
written with a fixed gzip header, so the same record always has the same bytes.
"""
from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.running.store import (
    CorruptRecord,
    OldRecord,
    ResultStore,
    canonical,
    checked_path,
    parse_old_record,
    parse_record,
    read_capped,
)
from harness.settings import Settings

SUFFIX = ".json.gz"


class BundleError(ValueError):
    """A bundled record that cannot be read as its run's record."""


def _compressed(record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as out:
        out.write(canonical(record).encode("utf-8"))
    return buffer.getvalue()


@dataclass
class Merge:
    """What adding records to a bundle did."""

    added: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """Keys already bundled with different content: kept as bundled."""

    def text(self) -> str:
        return (f"{len(self.added)} record(s) added, {len(self.identical)} already bundled as they are, "
                f"{len(self.conflicts)} conflict(s) (bundled with other content, kept)")


@dataclass
class RecordBundle:
    root: Path
    listed: Mapping[str, str] = field(default_factory=dict)
    """The record digest (checksum) a report lists for each run key it read (REPORT.json's `runs[].record`):
    a bundled record of a listed run must be that very record."""
    listed_in: str = ""
    """Where `listed` comes from, for messages."""

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def has(self, key: str) -> bool:
        return os.path.lexists(self.path(key))

    def keys(self) -> list[str]:
        return sorted(p.name[:-len(SUFFIX)] for p in self.root.glob(f"*/*{SUFFIX}") if len(p.parent.name) == 2)

    def _bytes(self, key: str) -> bytes:
        path = self.path(key)
        try:
            with gzip.open(checked_path(path, self.root), "rb") as handle:
                return read_capped(handle, path)
        except CorruptRecord as problem:
            raise BundleError(f"{path}: {problem}") from None
        except (OSError, EOFError) as error:
            raise BundleError(f"{path}: not a readable gzip file ({error})") from None

    def read(self, key: str) -> dict[str, Any]:
        """The bundled record of `key`, verified; BundleError naming the file if it is not one."""
        path = self.path(key)
        try:
            record = parse_record(self._bytes(key), key)
        except (CorruptRecord, OldRecord) as problem:
            raise BundleError(f"{path}: {problem}") from None
        if record["status"] != "ok":
            raise BundleError(f"{path}: its status is {record['status']!r}; a bundle holds finished runs only")
        expected = self.listed.get(key)
        if expected is not None and record["checksum"] != expected:
            raise BundleError(f"{path}: its content (digest {record['checksum'][:16]}) is not the record "
                              f"{self.listed_in} lists for this run (digest {expected[:16]}): a committed record is "
                              "never replaced")
        return record

    def read_old(self, key: str) -> dict[str, Any] | None:
        """The bundled record of `key` if it is of an earlier format, checked as that format was (None
        where it is of this format); BundleError naming the file if it is not a record."""
        data = self._bytes(key)
        try:
            parse_record(data, key)
            return None
        except OldRecord:
            pass
        except CorruptRecord as problem:
            raise BundleError(f"{self.path(key)}: {problem}") from None
        try:
            return parse_old_record(data, key)
        except CorruptRecord as problem:
            raise BundleError(f"{self.path(key)}: {problem}") from None

    def get(self, key: str, events: list[str], refused: dict[str, str]) -> dict[str, Any] | None:
        """The bundled record of `key`, or None if there is none or it is refused (said in `events`,
        and why in `refused` by key)."""
        if not self.has(key):
            return None
        try:
            return self.read(key)
        except BundleError as problem:
            events.append(f"bundled record refused: {problem}")
            refused[key] = str(problem)
            return None

    def add(self, records: Iterable[dict[str, Any]]) -> Merge:
        """Bundle `records` (each verified as a store record); never replaces a bundled one."""
        merge = Merge()
        for record in records:
            key = record["key"]
            parse_record(canonical(record).encode("utf-8"), key)  # refuses a damaged one before it is written
            data = _compressed(record)
            path = self.path(key)
            if path.is_file():
                same = self.read(key) == record
                (merge.identical if same else merge.conflicts).append(key)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".tmp-{path.name}")
            temporary.write_bytes(data)
            temporary.replace(path)
            merge.added.append(key)
        return merge

    def records(self) -> Iterator[dict[str, Any]]:
        """Every bundled record, verified (BundleError on the first that is not)."""
        for key in self.keys():
            yield self.read(key)


def store_for(settings: Settings, listed: Mapping[str, str] | None = None, listed_in: str = "") -> ResultStore:
    """The results store, reading the project's committed records where it has none of its own
    (unless `settings.committed_records` is off), each one a run `listed` names the very record listed."""
    bundle = settings.records_dir
    reads_bundle = settings.committed_records and bundle.is_dir()
    return ResultStore(settings.store_dir,
                       bundle=RecordBundle(bundle, dict(listed or {}), listed_in) if reads_bundle else None)
