"""Real datasets for the experiments: local copies, caches and downloads."""
from __future__ import annotations

from .arrays import ImageData, RoleSamples, TextData
from .cifar10 import load_cifar10
from .emnist import load_emnist
from .errors import DatasetUnavailable
from .locations import DataLocations
from .registry import DATASETS, dataset_fingerprint, load_dataset
from .shakespeare import load_shakespeare

__all__ = [
    "DATASETS", "DataLocations", "DatasetUnavailable", "ImageData", "RoleSamples", "TextData",
    "dataset_fingerprint", "load_cifar10", "load_dataset", "load_emnist", "load_shakespeare",
]
