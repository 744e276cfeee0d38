"""In-memory dataset containers: images as uint8 arrays, text as per-role character windows."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ImageData:
    """train_x/test_x: uint8 [N, H, W, C]; train_y/test_y: int64 [N].

    ``fingerprint`` is the sha256 of the source bytes the arrays were built from.
    """

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    classes: tuple[str, ...]
    fingerprint: str

    @property
    def num_classes(self) -> int:
        return len(self.classes)


@dataclass(frozen=True, eq=False)
class RoleSamples:
    """One speaking role's next-character samples.

    Inputs are int64 [n, seq_len] (read-only sliding-window views; index them to
    get a writable copy), targets int64 [n].
    """

    name: str
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


@dataclass(frozen=True, eq=False)
class TextData:
    """A role-per-client next-character federation over a fixed vocabulary."""

    roles: tuple[RoleSamples, ...]
    vocab: str
    seq_len: int
    fingerprint: str

    @property
    def role_names(self) -> tuple[str, ...]:
        return tuple(role.name for role in self.roles)
