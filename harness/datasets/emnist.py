"""EMNIST's loader: reads the fetched "byclass" files (62 classes: digits, upper- and lowercase
letters) with torchvision and turns the images upright (`emnist_source` finds and fetches them).

This module is part of the code identity of every run that reads EMNIST (harness.running.planning.run_code),
so it imports nothing that finds, fetches or downloads files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .arrays import ImageData

# fedclaims behaviour version: 1

SPLIT = "byclass"


def load_torchvision(root: Path, fingerprint: str) -> ImageData:
    """EMNIST byclass from torchvision's ``root``/EMNIST/raw/ files, as uint8 [N, 28, 28, 1] upright
    images and int64 labels."""
    from torchvision.datasets import EMNIST

    train = EMNIST(root=str(root), split=SPLIT, train=True, download=False)
    test = EMNIST(root=str(root), split=SPLIT, train=False, download=False)
    return ImageData(
        train_x=upright(train.data.numpy().astype(np.uint8, copy=False)),
        train_y=train.targets.numpy().astype(np.int64),
        test_x=upright(test.data.numpy().astype(np.uint8, copy=False)),
        test_y=test.targets.numpy().astype(np.int64),
        classes=tuple(train.classes),
        fingerprint=fingerprint,
    )


def upright(raw: np.ndarray) -> np.ndarray:
    """EMNIST's idx files store each image transposed; return [N, H, W, 1] upright."""
    return np.ascontiguousarray(np.swapaxes(raw, 1, 2))[..., None]
