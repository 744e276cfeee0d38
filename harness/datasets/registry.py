"""Data set names -> the module that decodes each one's files (its loader) and the module that
finds, fingerprints and fetches those files (its sources).

The modules are named here and imported when a data set is used, not by `import` statements: a
run's code identity holds the loader of each data set its config reads (harness.running.planning.run_code
adds `loader_module(name)`'s closure), and neither another data set's code nor any fetching code
(where files are, URLs and pinned digests, downloads) may enter the import closure of a runner that
calls `load_dataset`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .arrays import ImageData, TextData
    from .locations import Folders

UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class DataSet:
    """A data set's two modules. ``sources`` has `load(where)`, `fingerprint(where)` and
    `fetch(where)`: `fetch` makes a source exist (downloading where allowed) or raises
    DatasetUnavailable; `fingerprint` and `load` both use the first source that exists, so they
    agree, and `load` decodes it with ``loader``."""

    loader: str
    sources: str


DATASETS: dict[str, DataSet] = {
    "cifar10": DataSet(f"{__package__}.cifar10", f"{__package__}.cifar10_source"),
    "emnist": DataSet(f"{__package__}.emnist", f"{__package__}.emnist_source"),
    "shakespeare": DataSet(f"{__package__}.shakespeare", f"{__package__}.shakespeare_source"),
}


def _entry(name: str) -> DataSet:
    try:
        return DATASETS[name]
    except KeyError:
        valid = ", ".join(sorted(DATASETS))
        raise ValueError(f"unknown dataset {name!r}; valid names: {valid}") from None


def _sources(name: str) -> ModuleType:
    return importlib.import_module(_entry(name).sources)


def loader_module(name: str) -> str:
    """The module that decodes data set ``name``'s files: what of it a run's key covers."""
    return _entry(name).loader


def load_dataset(name: str, where: Folders | None = None) -> ImageData | TextData:
    """Load ``name`` with its loader's default settings from ``where`` (a DataLocations, or a run's
    RunContext; None: DataLocations.from_env())."""
    return _sources(name).load(where)


def dataset_fingerprint(name: str, where: Folders | None = None) -> str:
    """sha256 of the source ``name`` would load from, else "unavailable"; never downloads.

    Each file is hashed once and remembered by path, size and mtime in cache_dir.
    """
    entry = _sources(name)
    digest = entry.fingerprint(where)
    return UNAVAILABLE if digest is None else digest


def fetch_dataset(name: str, where: Folders | None = None) -> str:
    """Obtain ``name``'s source (downloading, checked, where ``where`` allows) and return its
    fingerprint; DatasetUnavailable when no source can be had."""
    _sources(name).fetch(where)
    return dataset_fingerprint(name, where)
