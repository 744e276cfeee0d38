"""Where things live and how runs execute, from the environment or the command line."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.extensions import ALLOW_CODE_PATHS_VARIABLE, CODE_ROOT_VARIABLE

LEGACY_ALLOW_VARIABLE = "FEDCLAIMS_ALLOW_POLICY_PATHS"
"""The earlier name of $FEDCLAIMS_ALLOW_CODE_PATHS, from when only policies could be files; still read."""


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
    committed_records: bool = True
    """Whether the store reads the project's committed records (`records/`) for runs it has none of
    ($FEDCLAIMS_RECORDS=0 or --no-records: it reads only its own, as a hermetic test needs)."""
    allowed_code_paths: tuple[Path, ...] = ()
    """Folders or files outside `root` whose Python files specs may run as kinds, policies,
    objectives, round hooks or metrics ($FEDCLAIMS_ALLOW_CODE_PATHS and --allow-code-path
    together); files under `root` always may."""

    @property
    def claims_dir(self) -> Path:
        return self.root / "claims"

    @property
    def specs_dir(self) -> Path:
        return self.root / "specs"

    @property
    def records_dir(self) -> Path:
        """The records committed with the report (`harness.running.bundle`)."""
        return self.root / "records"

    @classmethod
    def from_env(cls, root: Path, **overrides) -> Settings:
        cache = default_cache_dir()
        data = os.environ.get("FEDCLAIMS_DATA")
        values: dict[str, Any] = dict(
            root=Path(root),
            store_dir=Path(os.environ.get("FEDCLAIMS_STORE") or cache / "store"),
            cache_dir=cache,
            data_dir=Path(data) if data else None,
            download=os.environ.get("FEDCLAIMS_DOWNLOAD", "1") != "0",
            device=os.environ.get("FEDCLAIMS_DEVICE", "cpu"),
            ray_address=os.environ.get("FEDCLAIMS_RAY_ADDRESS") or None,
            committed_records=os.environ.get("FEDCLAIMS_RECORDS", "1") != "0",
        )
        values["allowed_code_paths"] = allowed_code_paths(overrides.pop("allowed_code_paths", None) or ())
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values.get("workers") is None:
            values["workers"] = default_workers(values["device"])
        if values.get("executor") is None:
            values["executor"] = ("ray" if values["ray_address"] else
                                  "processes" if values["workers"] > 1 else "local")
        settings = cls(**values)
        share_code_scope(settings)
        return settings


def allowed_code_paths(extra=()) -> tuple[Path, ...]:
    """$FEDCLAIMS_ALLOW_CODE_PATHS (and its earlier name) and `extra`, as real paths (relative ones
    from here)."""
    listed = [entry for variable in (ALLOW_CODE_PATHS_VARIABLE, LEGACY_ALLOW_VARIABLE)
              for entry in os.environ.get(variable, "").split(os.pathsep) if entry]
    return tuple(dict.fromkeys(Path(entry).resolve() for entry in [*listed, *extra]))


def code_environment(root: Path, allowed: Iterable[Path] = ()) -> dict[str, str]:
    """The variables that give a process this code scope (e.g. a Ray job's `env_vars`)."""
    return {CODE_ROOT_VARIABLE: str(Path(root).resolve()),
            ALLOW_CODE_PATHS_VARIABLE: os.pathsep.join(str(Path(path).resolve()) for path in allowed)}


def share_code_scope(settings: Settings) -> None:
    """Let this process, and the workers it starts later, run the extension files `settings` allow
    and find relative ones in its project folder."""
    os.environ.update(code_environment(settings.root, settings.allowed_code_paths))


@contextmanager
def scoped_code(root: Path, allowed: Iterable[Path] = ()) -> Iterator[None]:
    """Extension files relative to `root`, and those under it or `allowed`, until the block ends."""
    before = {name: os.environ.get(name) for name in (CODE_ROOT_VARIABLE, ALLOW_CODE_PATHS_VARIABLE)}
    os.environ.update(code_environment(root, allowed))
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def scoped_code_of(settings: Settings):
    """`share_code_scope` until the block ends."""
    return scoped_code(settings.root, settings.allowed_code_paths)


def find_project_root(start: Path | None = None) -> Path:
    """The nearest folder above `start` holding both claims/ and specs/."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "claims").is_dir() and (folder / "specs").is_dir():
            return folder
    raise FileNotFoundError(f"no folder with claims/ and specs/ at or above {here}")
