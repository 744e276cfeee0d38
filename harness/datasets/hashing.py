"""sha256 of source files, remembered in a small JSON file keyed by path, size and mtime."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

HASH_CACHE_NAME = "file-hashes.json"
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cached_sha256(path: Path, cache_dir: Path) -> str:
    """sha256 of ``path``, computed once per (path, size, mtime) and remembered in cache_dir."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    store = cache_dir / HASH_CACHE_NAME
    known = _read_store(store)
    if key in known:
        return known[key]
    digest = sha256_file(path)
    known[key] = digest
    _write_store(store, known)
    return digest


def combined_sha256(files: Iterable[Path], cache_dir: Path) -> str:
    """One digest for several files: sha256 over "name sha256" lines, in the given order."""
    lines = [f"{path.name} {cached_sha256(path, cache_dir)}\n" for path in files]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _read_store(store: Path) -> dict[str, str]:
    try:
        data = json.loads(store.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_store(store: Path, known: dict[str, str]) -> None:
    """Atomic replace; an unwritable cache only costs re-hashing next time."""
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=store.parent, prefix=".hashes-", suffix=".json")
        with os.fdopen(fd, "w") as handle:
            json.dump(known, handle, indent=0, sort_keys=True)
        os.replace(tmp, store)
    except OSError:
        pass
