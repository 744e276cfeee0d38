"""Dataset names -> how to fetch, fingerprint and load each."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .arrays import ImageData, TextData
from .cifar10 import cifar10_fingerprint, fetch_cifar10, load_cifar10
from .emnist import emnist_fingerprint, fetch_emnist, load_emnist
from .locations import DataLocations
from .shakespeare import fetch_shakespeare, load_shakespeare, shakespeare_fingerprint

UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class DatasetEntry:
    """How to load a dataset, fingerprint its source without loading it, and obtain that source.

    ``fetch`` makes a source exist (downloading where allowed) or raises DatasetUnavailable;
    ``fingerprint`` and ``load`` both use the first source that exists, so they agree.
    """

    load: Callable[[DataLocations], ImageData | TextData]
    fingerprint: Callable[[DataLocations], str | None]
    fetch: Callable[[DataLocations], object]


DATASETS: dict[str, DatasetEntry] = {
    "cifar10": DatasetEntry(load_cifar10, cifar10_fingerprint, fetch_cifar10),
    "emnist": DatasetEntry(load_emnist, emnist_fingerprint, fetch_emnist),
    "shakespeare": DatasetEntry(load_shakespeare, shakespeare_fingerprint, fetch_shakespeare),
}


def _entry(name: str) -> DatasetEntry:
    try:
        return DATASETS[name]
    except KeyError:
        valid = ", ".join(sorted(DATASETS))
        raise ValueError(f"unknown dataset {name!r}; valid names: {valid}") from None


def load_dataset(name: str, loc: DataLocations | None = None) -> ImageData | TextData:
    """Load ``name`` with its default settings; ``loc`` defaults to DataLocations.from_env()."""
    return _entry(name).load(loc if loc is not None else DataLocations.from_env())


def dataset_fingerprint(name: str, loc: DataLocations | None = None) -> str:
    """sha256 of the source ``name`` would load from, else "unavailable"; never downloads.

    Each file is hashed once and remembered by path, size and mtime in cache_dir.
    """
    entry = _entry(name)
    digest = entry.fingerprint(loc if loc is not None else DataLocations.from_env())
    return UNAVAILABLE if digest is None else digest


def fetch_dataset(name: str, loc: DataLocations | None = None) -> str:
    """Obtain ``name``'s source (downloading, checked, where ``loc`` allows) and return its
    fingerprint; DatasetUnavailable when no source can be had."""
    loc = loc if loc is not None else DataLocations.from_env()
    _entry(name).fetch(loc)
    return dataset_fingerprint(name, loc)
