"""Real datasets for the experiments: local copies, checked downloads and caches."""
from __future__ import annotations

from .arrays import ImageData, RoleSamples, TextData
from .cifar10 import load_cifar10
from .emnist import load_emnist
from .errors import DataCheckFailed, DatasetUnavailable
from .locations import DataLocations
from .registry import DATASETS, UNAVAILABLE, dataset_fingerprint, fetch_dataset, load_dataset
from .shakespeare import load_shakespeare

__all__ = [
    "DATASETS", "UNAVAILABLE", "DataCheckFailed", "DataLocations", "DatasetUnavailable", "ImageData",
    "RoleSamples", "TextData", "dataset_fingerprint", "fetch_dataset", "load_cifar10", "load_dataset",
    "load_emnist", "load_shakespeare",
]
