"""Where things live and how runs execute, from the environment or the command line."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def default_cache_dir() -> Path:
    if os.environ.get("FEDCLAIMS_CACHE"):
        return Path(os.environ["FEDCLAIMS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fedclaims"


def default_workers(device: str) -> int:
    """$FEDCLAIMS_WORKERS, else one single-threaded process per CPU core (one process on a GPU).

    Measured here: two single-thread processes beat one process using two threads inside
    each small convolution (shared/notes/performance-on-this-machine.md).
    """
    if os.environ.get("FEDCLAIMS_WORKERS"):
        return max(1, int(os.environ["FEDCLAIMS_WORKERS"]))
    return 1 if device != "cpu" else max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Settings:
    root: Path
    store_dir: Path
    cache_dir: Path
    data_dir: Path | None
    download: bool = True
    device: str = "cpu"
    workers: int = 1
    threads: int = 1
    """torch (and BLAS) threads inside every run, whatever the executor. It changes the order of
    float reductions, so it is part of every record's key."""
    executor: str = "local"
    ray_address: str | None = None
    """Cluster the `ray` executor joins (None: $RAY_ADDRESS, else a local instance)."""

    @property
    def claims_dir(self) -> Path:
        return self.root / "claims"

    @property
    def specs_dir(self) -> Path:
        return self.root / "specs"

    @classmethod
    def from_env(cls, root: Path, **overrides) -> "Settings":
        cache = default_cache_dir()
        data = os.environ.get("FEDCLAIMS_DATA")
        values = dict(
            root=Path(root),
            store_dir=Path(os.environ.get("FEDCLAIMS_STORE") or cache / "store"),
            cache_dir=cache,
            data_dir=Path(data) if data else None,
            download=os.environ.get("FEDCLAIMS_DOWNLOAD", "1") != "0",
            device=os.environ.get("FEDCLAIMS_DEVICE", "cpu"),
            ray_address=os.environ.get("FEDCLAIMS_RAY_ADDRESS") or None,
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values.get("workers") is None:
            values["workers"] = default_workers(values["device"])
        if values.get("executor") is None:
            values["executor"] = ("ray" if values["ray_address"] else
                                  "processes" if values["workers"] > 1 else "local")
        return cls(**values)


def find_project_root(start: Path | None = None) -> Path:
    """The nearest folder above `start` holding both claims/ and specs/."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "claims").is_dir() and (folder / "specs").is_dir():
            return folder
    raise FileNotFoundError(f"no folder with claims/ and specs/ at or above {here}")
