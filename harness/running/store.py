"""Content-addressed results store: one JSON record per run, written atomically.

A record is found by its key, a hash of everything that determines its result (`run_key`), and is
its key: its own fields give it back (`record_key`). A record that cannot be read, whose checksum
does not match its content, that sits under the wrong key, whose fields do not give its key, that
holds a field this code never writes or lacks a field a reader needs is corrupt: it is moved
aside (never deleted), reported, and its run is recomputed. One bad record never
stops a command.

A record of an earlier format (OLD_FORMATS) was written under an earlier definition of the key,
which no key of this format equals (the format is part of every key: `run_key`). It is
never read as a run's record, never moved aside as corrupt and never rewritten: it stays where
it is for `harness.running.migration`, which reads it with `old_records` and may carry it over to its new
key, and for an earlier version of the code sharing the store.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.errors import did_you_mean
from methods.plain import json_safe

RECORD_FORMAT = 3
"""Format 3: the key holds the behaviour versions the run's code declares (harness.provenance), not the
code's content, which provenance.code keeps; provenance.behaviour holds what the key was made of, so
every key is recomputed from its record's own fields when it is read. Format 2 keyed the set of content
digests of the modules that compute the run; format 1 hashed each module's bytes by name."""
OLD_FORMATS = (1, 2)
REUSABLE = ("ok",)
STATUSES = ("ok", "error", "unavailable")
MAX_DEPTH = 64
"""Deepest nesting a record may have; records nest about six levels, so deeper is damage."""
FIELD_TYPES: dict[str, type] = {"experiment": str, "variant": str, "seed": int, "profile": str, "kind": str,
                                "config": dict, "status": str}
"""Fields every record has, with their JSON types (format, key and checksum are checked apart)."""
RECORD_FIELDS = frozenset({*FIELD_TYPES, "format", "key", "checksum", "result", "error", "provenance"})
PROVENANCE_FIELDS = frozenset({"behaviour", "code", "datasets", "libraries", "machine", "device", "threads",
                               "numerics", "started", "wall_seconds", "migrated"})
"""Every field a record (and its provenance) may hold: a record with another is not one this code wrote."""
KEYED_PROVENANCE: dict[str, type] = {"behaviour": dict, "datasets": dict, "libraries": dict, "device": str,
                                     "threads": int}
"""The provenance fields a record's key is made of, besides its kind, config and seed."""


def run_key(*, kind: str, config: dict[str, Any], seed: int, behaviour: dict[str, str], datasets: dict[str, str],
            libraries: dict[str, str], device: str, threads: int) -> str:
    """A run's key: everything that determines its result (harness.running.planning computes it for a
    run; `record_key` recomputes it from a record)."""
    return content_key({"format": RECORD_FORMAT, "kind": kind, "config": config, "seed": seed,
                        "behaviour": behaviour, "datasets": datasets, "libraries": libraries, "device": device,
                        "threads": threads})


def record_key(record: dict[str, Any]) -> str:
    """The key a record's own fields give (a record is its key, as a git object is its hash)."""
    provenance = record["provenance"]
    return run_key(kind=record["kind"], config=record["config"], seed=record["seed"],
                   **{name: provenance[name] for name in KEYED_PROVENANCE})


class CorruptRecord(ValueError):
    """The bytes of a record file are not a valid record; the message says why."""


class OldRecord(Exception):
    """The bytes of a record file are a record of an earlier format (OLD_FORMATS): kept, not read."""


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def content_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(parts).encode()).hexdigest()


def _checksum(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hashlib.sha256(canonical(body).encode()).hexdigest()


def sealed(record: dict[str, Any]) -> dict[str, Any]:
    """A record as it is written: this format, and the checksum over its content."""
    record = json_safe({**record, "format": RECORD_FORMAT})
    record["checksum"] = _checksum(record)
    return record


def _reject_constant(name: str) -> float:
    raise CorruptRecord(f"unreadable (non-finite number {name})")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise CorruptRecord(f"unreadable (number {text[:40]} is beyond a float's range)")
    return value


def _loaded(data: bytes) -> Any:
    """The JSON value in a record file's bytes: finite numbers only (json.loads takes NaN, Infinity, 1e999)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorruptRecord(f"unreadable (not UTF-8 text: {error})") from None
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise CorruptRecord("unreadable (nested too deeply to parse)") from None
    except CorruptRecord:
        raise
    except ValueError as error:
        raise CorruptRecord(f"unreadable ({error.__class__.__name__}: {error})") from None


def _depth(value: Any) -> int:
    """Levels of nesting, a scalar counting as one; only containers are walked (a record's
    thousands of numbers are looked at once, as a container's children)."""
    if not isinstance(value, (dict, list)):
        return 1
    deepest, stack = 1, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if children:
            deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _is(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _field_problem(record: dict[str, Any]) -> str | None:
    """What a reader of this record's fields would trip over, if anything."""
    unknown = sorted(set(record) - RECORD_FIELDS)
    if unknown:
        return f"unknown field {unknown[0]!r}"
    for name, kind in FIELD_TYPES.items():
        if name not in record:
            return f"no {name!r} field"
        if not _is(record[name], kind):
            return f"field {name!r} is a {type(record[name]).__name__}, not a {kind.__name__}"
    status = record["status"]
    if status not in STATUSES:
        return f"status {status!r} is none of {', '.join(STATUSES)}"
    return _outcome_problem(status, record.get("result"), record.get("error")) or _provenance_problem(
        record.get("provenance", {}))


def _outcome_problem(status: str, result: Any, error: Any) -> str | None:
    if status == "ok" and not _is(result, dict) or result is not None and not _is(result, dict):
        return f"the result of a record with status {status!r} is a {type(result).__name__}"
    has_message = _is(error, dict) and _is(error.get("message"), str)
    if not has_message and (status == "error" or error is not None):
        return f"the error of a record with status {status!r} is not an object with a message"
    return None


def _provenance_problem(provenance: Any) -> str | None:
    if not _is(provenance, dict):
        return f"its provenance is a {type(provenance).__name__}, not an object"
    unknown = sorted(set(provenance) - PROVENANCE_FIELDS)
    if unknown:
        return f"unknown provenance field {unknown[0]!r}"
    if not (provenance.get("numerics") is None or _is(provenance["numerics"], dict)):
        return "its provenance's numerics is not an object"
    seconds = provenance.get("wall_seconds")
    if seconds is not None and not (_is(seconds, int) or _is(seconds, float)):
        return f"its provenance's wall_seconds is a {type(seconds).__name__}, not a number"
    return None


def _problem(record: Any, key: str | None, record_format: int = RECORD_FORMAT) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
    if _depth(record) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if not _is(record.get("format"), int) or record["format"] != record_format:
        return f"record format {record.get('format')!r}, expected {record_format}"
    if not _is(record.get("key"), str) or record["key"] != key:
        return f"holds key {record.get('key')!r}"
    if record.get("checksum") != _checksum(record):
        return "checksum does not match the content"
    return _field_problem(record) or (_key_problem(record) if record_format == RECORD_FORMAT else None)


def _key_problem(record: dict[str, Any]) -> str | None:
    """Whether the record's own fields give its key (they are what the key is made of)."""
    provenance = record["provenance"]
    for name, kind in KEYED_PROVENANCE.items():
        if not _is(provenance.get(name), kind):
            return f"its provenance's {name} is missing or not a {kind.__name__}"
    if record_key(record) != record["key"]:
        return "its fields (kind, config, seed, behaviour, data, libraries, device, threads) do not give its key"
    return None


def _is_old(record: Any) -> bool:
    return isinstance(record, dict) and _is(record.get("format"), int) and record["format"] in OLD_FORMATS


def parse_record(data: bytes, key: str) -> dict[str, Any]:
    """The record of `key` in a record file's bytes; OldRecord if they are a record of an earlier
    format, CorruptRecord if they are not a record."""
    record = _loaded(data)
    if _is_old(record):
        raise OldRecord(f"a record of format {record['format']}")
    problem = _problem(record, key)
    if problem is not None:
        raise CorruptRecord(problem)
    return record


def parse_old_record(data: bytes, key: str) -> dict[str, Any]:
    """The record of `key` of an earlier format in a record file's bytes, checked as that format
    was (key, checksum, fields); CorruptRecord if they are not one."""
    record = _loaded(data)
    if not _is_old(record):
        raise CorruptRecord(f"record format {record.get('format') if isinstance(record, dict) else None!r} "
                            f"is none of the earlier formats {OLD_FORMATS}")
    problem = _problem(record, key, record["format"])
    if problem is not None:
        raise CorruptRecord(problem)
    return record


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


MAX_RECORD_BYTES = 256 << 20
"""The most bytes a record may hold once read (decompressed): the largest record here holds about
2 MB, so more is damage, or a gzip bomb, and is refused before it fills the memory."""


class OutsideFolder(CorruptRecord):
    """A record file that is not a regular file inside the folder it is read from (a link, a FIFO, a folder)."""


def checked_path(path: Path, root: Path) -> Path:
    """`path` if it is a regular file whose real path lies inside `root`, no link on the way; else
    OutsideFolder saying what it is (FileNotFoundError where nothing is there)."""
    relative = path.relative_to(root)
    for part in [root.joinpath(*relative.parts[:i]) for i in range(1, len(relative.parts) + 1)]:
        if part.is_symlink():
            raise OutsideFolder(f"{part} is a symbolic link (to {os.readlink(part)}); records are never read "
                                "through a link")
    status = os.lstat(path)
    if not stat.S_ISREG(status.st_mode):
        raise OutsideFolder(f"{path} is not a regular file")
    if not path.resolve().is_relative_to(root.resolve()):
        raise OutsideFolder(f"{path} lies outside {root}")
    return path


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def read_capped(handle: Readable, where: Path) -> bytes:
    """At most MAX_RECORD_BYTES from `handle`; CorruptRecord naming `where` if there are more."""
    data = handle.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise CorruptRecord(f"{where} holds more than {MAX_RECORD_BYTES >> 20} MB; no record is that large")
    return data


def _read(path: Path, root: Path) -> tuple[bytes, tuple[int, int]]:
    """A record file's bytes and the identity of the file they were read from."""
    with open(checked_path(path, root), "rb") as handle:
        return read_capped(handle, path), _identity(os.fstat(handle.fileno()))


def _replaced_since(path: Path, identity: tuple[int, int] | None) -> bool:
    """Whether the file read (of this identity) is no longer at path: moved aside, or replaced by a new record."""
    try:
        return identity is not None and _identity(os.stat(path)) != identity
    except FileNotFoundError:
        return True


def _renamed(path: Path, target: Path) -> bool:
    """Rename path to target; False if path is gone (another process renamed it first)."""
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return False
    return True


def _nearest_existing(path: Path) -> Path:
    return next(p for p in (path, *path.parents) if p.exists() or p.is_symlink())


class Bundle(Protocol):
    """Records read where the store has none of its own (`harness.running.bundle.RecordBundle`)."""

    def has(self, key: str) -> bool: ...

    def get(self, key: str, events: list[str], refused: dict[str, str]) -> dict[str, Any] | None: ...


@dataclass
class ResultStore:
    """The records of runs under `root`; with a `bundle`, a run the store has no record of is read from it
    (the records committed with the report), never written there."""

    root: Path
    bundle: Bundle | None = None
    events: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    """Keys whose committed record was refused, with why: evidence that is damaged, not absent."""

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def lock_path(self, key: str) -> Path:
        """The file whose flock an invocation holds while it computes this key's run (harness.running.runlocks)."""
        return self.root / "locks" / key[:2] / f"{key}.lock"

    def read_only(self) -> bool:
        """A folder whose records can be read but not added to (a verified store copied from a release)."""
        return self.root.is_dir() and not os.access(self.root, os.W_OK | os.X_OK)

    def check(self) -> None:
        """Raise ValueError, saying why, if records cannot be written under root; creates nothing.

        Call it before any run starts: a store that cannot be written would lose every result."""
        root = self.root
        if root.is_dir():
            if not os.access(root, os.W_OK | os.X_OK):
                raise ValueError(f"results store {root} is not writable; pass a folder you can write with --store")
            return
        if root.is_symlink() and not root.exists():
            raise ValueError(f"results store {root} is a link to {os.readlink(root)}, which does not exist; "
                             "pass a folder with --store")
        if root.exists():
            raise ValueError(f"results store {root} is a file, not a folder; pass a folder with --store")
        ancestor = _nearest_existing(root.parent)
        if not ancestor.is_dir():
            raise ValueError(f"results store {root} cannot be created: {ancestor} is a file, not a folder; "
                             "pass a folder with --store")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise ValueError(f"results store {root} cannot be created: {ancestor} is not writable; "
                             "pass a folder with --store")

    def check_readable(self) -> None:
        """Raise ValueError, with the nearest folder, unless root is a folder: a store to read that
        does not exist is a typo, not an empty store."""
        root = self.root
        if root.is_dir():
            return
        if root.exists():
            raise ValueError(f"results store {root} is a file, not a folder")
        siblings = [p.name for p in root.parent.iterdir() if p.is_dir()] if root.parent.is_dir() else []
        hint = did_you_mean(root.name, siblings) if siblings else ""
        raise ValueError(f"results store {root} does not exist"
                         + (hint if hint.startswith(";") else f" (no such folder in {root.parent})"))

    def has(self, key: str) -> bool:
        """Whether a record of `key` is here, in the store or its bundle (not yet read or verified)."""
        return os.path.lexists(self.path(key)) or (self.bundle is not None and self.bundle.has(key))

    def get(self, key: str) -> dict[str, Any] | None:
        """The record under `key` (the bundle's where the store has no file), or None if absent, of an
        earlier format (left in place) or corrupt (then moved aside, or refused if bundled, and reported)."""
        path = self.path(key)
        try:
            data, identity = _read(path, self.root)
        except (FileNotFoundError, NotADirectoryError):
            return None if self.bundle is None else self.bundle.get(key, self.events, self.refused)
        except CorruptRecord as problem:
            self._move_aside(path, str(problem), None)
            return None
        except OSError as error:
            self._move_aside(path, f"unreadable ({error.__class__.__name__}: {error})", None)
            return None
        try:
            return parse_record(data, key)
        except OldRecord:
            return None
        except CorruptRecord as problem:
            self._move_aside(path, str(problem), identity)
            return None

    def records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, record) of every record of this format in the store (`get`'s reading: a corrupt one
        is moved aside and reported, one of an earlier format skipped)."""
        for path in sorted(self.root.glob("*/*.json")):
            record = self.get(path.stem)
            if record is not None:
                yield path.stem, record

    def old_records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, record) of every record of an earlier format in the store, each checked as its
        format was; one that fails is reported in `events` and left where it is."""
        for path in sorted(self.root.glob("*/*.json")):
            try:
                data = _read(path, self.root)[0]
                record = _loaded(data)
            except (OSError, CorruptRecord):
                continue  # no record of any format: `get` moves it aside when its key is looked up
            if not _is_old(record):
                continue
            try:
                old = parse_old_record(data, path.stem)
            except CorruptRecord as problem:
                self.events.append(f"old record {path} not read ({problem}); left in place")
                continue
            yield path.stem, old

    def _move_aside(self, path: Path, problem: str, identity: tuple[int, int] | None) -> None:
        """Rename a corrupt file to a .corrupt- name beside it, unless another invocation already did."""
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9:09d}")
        if _replaced_since(path, identity) or not _renamed(path, aside):
            self.events.append(f"corrupt record {path} ({problem}); another invocation moved it aside first; "
                               "recomputed")
            return
        self.events.append(f"corrupt record {path} ({problem}); moved to {aside.name} and recomputed")

    def put(self, record: dict[str, Any]) -> Path:
        """Write atomically: a reader sees the old file or the whole new one, never a part.

        A record the store would read back as corrupt is refused (ValueError), as is a store
        that is not a folder."""
        record = sealed(record)
        problem = _problem(record, record.get("key"))
        if problem is not None:
            raise ValueError(f"refusing to store a record of {record.get('key')!r} that would read as corrupt: "
                             f"{problem}")
        path = self.path(record["key"])
        self._make_folder(path.parent)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(record, out, sort_keys=True, allow_nan=False)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path

    def _make_folder(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            self.check()
            raise ValueError(f"cannot store a record in {folder}: it or a folder above it is a file") from None

    def reusable(self, key: str) -> dict[str, Any] | None:
        """A finished record to reuse; errors and unavailable data are always retried."""
        record = self.get(key)
        return record if record is not None and record.get("status") in REUSABLE else None


def wall_seconds(record: dict | None) -> float | None:
    """The single-threaded run time a record's provenance measured (None for no record)."""
    return ((record or {}).get("provenance") or {}).get("wall_seconds")
