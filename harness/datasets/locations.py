"""Where datasets come from: a local copies folder, a cache folder, and whether to download."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

DATA_ENV = "FEDCLAIMS_DATA"
CACHE_ENV = "FEDCLAIMS_CACHE"
DOWNLOAD_ENV = "FEDCLAIMS_DOWNLOAD"
_FALSE_WORDS = {"0", "false", "no", "off"}


class Folders(Protocol):
    """Where a data set's files may be: a DataLocations, or a run's RunContext (which names the
    same three without the data sets' code, so a runner passes it along unread)."""

    @property
    def data_dir(self) -> Path | None: ...
    @property
    def cache_dir(self) -> Path: ...
    @property
    def download(self) -> bool: ...


@dataclass(frozen=True)
class DataLocations:
    """data_dir: optional folder of local copies; cache_dir: decoded arrays and downloads."""

    data_dir: Path | None
    cache_dir: Path
    download: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DataLocations:
        """Read FEDCLAIMS_DATA, FEDCLAIMS_CACHE and FEDCLAIMS_DOWNLOAD ("0" disables)."""
        env = os.environ if environ is None else environ
        data = env.get(DATA_ENV, "").strip()
        cache = env.get(CACHE_ENV, "").strip()
        download = env.get(DOWNLOAD_ENV, "1").strip().lower() not in _FALSE_WORDS
        return cls(
            data_dir=Path(data).expanduser() if data else None,
            cache_dir=Path(cache).expanduser() if cache else default_cache_dir(env),
            download=download,
        )

    @classmethod
    def of(cls, where: Folders | None) -> DataLocations:
        """``where`` as DataLocations; None: the environment's (from_env)."""
        if where is None:
            return cls.from_env()
        if isinstance(where, DataLocations):
            return where
        return cls(where.data_dir, where.cache_dir, where.download)

    def local_file(self, name: str) -> Path | None:
        """The path of ``name`` inside data_dir, or None when no data_dir is configured."""
        return None if self.data_dir is None else self.data_dir / name

    def describe_local(self, name: str) -> str:
        """How a local file is named in messages: its path, or why there is none."""
        path = self.local_file(name)
        return f"{DATA_ENV}/{name} ({DATA_ENV} not set)" if path is None else str(path)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$XDG_CACHE_HOME/fedclaims, else ~/.cache/fedclaims."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "fedclaims"


def download_skipped(url: str) -> str:
    """How a loader lists the download it did not attempt because downloading is off."""
    return (f"download from {url} (skipped: downloading is off: {DOWNLOAD_ENV}=0, or inside a run, "
            "which reads only what the fetch stage before the runs obtained)")
