"""The records committed with the report (`records/` in the project): one gzip file per run record,
`records/<key[:2]>/<key>.json.gz`, named by the run's key, read-only to every command but `fedclaims
records add`.

A bundled record is verified when it is read, as the store verifies its own (`parse_record`: format,
key, checksum over the content, the fields readers need); one that fails is refused by name (its file
and why) and read as absent. Adding records merges: a record already bundled under its key with the
same content is left as it is, and one with different content (the same run under other numerics, or
an earlier bundle's) is never replaced: the conflict is reported. Files are written with a fixed gzip
header, so the same record always has the same bytes.
"""
from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.running.store import CorruptRecord, OldRecord, ResultStore, canonical, parse_record
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

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def keys(self) -> list[str]:
        return sorted(p.name[:-len(SUFFIX)] for p in self.root.glob(f"*/*{SUFFIX}"))

    def read(self, key: str) -> dict[str, Any]:
        """The bundled record of `key`, verified; BundleError naming the file if it is not one."""
        path = self.path(key)
        try:
            with gzip.open(path, "rb") as handle:
                data = handle.read()
        except (OSError, EOFError) as error:
            raise BundleError(f"{path}: not a readable gzip file ({error})") from None
        try:
            return parse_record(data, key)
        except (CorruptRecord, OldRecord) as problem:
            raise BundleError(f"{path}: {problem}") from None

    def get(self, key: str, events: list[str]) -> dict[str, Any] | None:
        """The bundled record of `key`, or None if there is none or it is refused (said in `events`)."""
        if not self.has(key):
            return None
        try:
            return self.read(key)
        except BundleError as refused:
            events.append(f"bundled record refused: {refused}")
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


def store_for(settings: Settings) -> ResultStore:
    """The results store, reading the project's committed records where it has none of its own
    (unless `settings.committed_records` is off)."""
    bundle = settings.records_dir
    reads_bundle = settings.committed_records and bundle.is_dir()
    return ResultStore(settings.store_dir, bundle=RecordBundle(bundle) if reads_bundle else None)
