"""Content-addressed results store: one JSON record per run, written atomically.

A record is found by its key, a hash of everything that determines its result.
A record that cannot be read, whose checksum does not match its content, or that
sits under the wrong key is corrupt: it is moved aside (never deleted), reported,
and its run is recomputed.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_FORMAT = 1
REUSABLE = ("ok",)


def json_safe(value: Any) -> Any:
    """Plain JSON types only: non-finite floats become None, numpy scalars and arrays plain."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return json_safe(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a JSON record")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def content_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(parts).encode()).hexdigest()


def _checksum(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hashlib.sha256(canonical(body).encode()).hexdigest()


@dataclass
class ResultStore:
    root: Path
    events: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record under `key`, or None if absent or corrupt (then moved aside and reported)."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            problem = self._problem(record, key)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            problem = f"unreadable ({error.__class__.__name__}: {error})"
        if problem is None:
            return record
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9:09d}")
        os.replace(path, aside)
        self.events.append(f"corrupt record {path} ({problem}); moved to {aside.name} and recomputed")
        return None

    @staticmethod
    def _problem(record: Any, key: str) -> str | None:
        if not isinstance(record, dict):
            return "not a JSON object"
        if record.get("format") != RECORD_FORMAT:
            return f"record format {record.get('format')!r}, expected {RECORD_FORMAT}"
        if record.get("key") != key:
            return f"holds key {record.get('key')!r}"
        if record.get("checksum") != _checksum(record):
            return "checksum does not match the content"
        return None

    def put(self, record: dict[str, Any]) -> Path:
        """Write atomically: a reader sees the old file or the whole new one, never a part."""
        record = json_safe({**record, "format": RECORD_FORMAT})
        record["checksum"] = _checksum(record)
        path = self.path(record["key"])
        path.parent.mkdir(parents=True, exist_ok=True)
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

    def reusable(self, key: str) -> dict[str, Any] | None:
        """A finished record to reuse; errors and unavailable data are always retried."""
        record = self.get(key)
        return record if record is not None and record.get("status") in REUSABLE else None


def wall_seconds(record: dict | None) -> float | None:
    """The single-threaded run time a record's provenance measured (None for no record)."""
    return ((record or {}).get("provenance") or {}).get("wall_seconds")
