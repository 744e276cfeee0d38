"""Dataset names -> loaders and cheap source fingerprints."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .arrays import ImageData, TextData
from .cifar10 import cifar10_fingerprint, load_cifar10
from .emnist import emnist_fingerprint, load_emnist
from .locations import DataLocations
from .shakespeare import load_shakespeare, shakespeare_fingerprint

UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class DatasetEntry:
    """How to load a dataset and how to fingerprint its source without loading it."""

    load: Callable[[DataLocations], ImageData | TextData]
    fingerprint: Callable[[DataLocations], str | None]


DATASETS: dict[str, DatasetEntry] = {
    "cifar10": DatasetEntry(load_cifar10, cifar10_fingerprint),
    "emnist": DatasetEntry(load_emnist, emnist_fingerprint),
    "shakespeare": DatasetEntry(load_shakespeare, shakespeare_fingerprint),
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
    """sha256 of the source ``name`` would load from, else "unavailable".

    Each file is hashed once and remembered by path, size and mtime in cache_dir.
    """
    entry = _entry(name)
    digest = entry.fingerprint(loc if loc is not None else DataLocations.from_env())
    return UNAVAILABLE if digest is None else digest
