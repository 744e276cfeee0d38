"""EMNIST "byclass" (62 classes: digits, upper- and lowercase letters) through torchvision."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .arrays import ImageData
from .errors import DatasetUnavailable
from .hashing import combined_sha256
from .locations import DOWNLOAD_ENV, DataLocations
from .netguard import describe_error, socket_timeout

NAME = "emnist"
SPLIT = "byclass"
DOWNLOAD_URL = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
RAW_FILES = tuple(f"emnist-{SPLIT}-{part}-{kind}-idx{dims}-ubyte"
                  for part in ("train", "test") for kind, dims in (("images", 3), ("labels", 1)))
HINT = ("set FEDCLAIMS_DATA to a folder holding torchvision's EMNIST download "
        f"(EMNIST/raw/{RAW_FILES[0]} and the other {SPLIT} files), or allow downloads "
        f"({DOWNLOAD_ENV} unset or 1; about 560 MB) on a machine with internet access")


def load_emnist(loc: DataLocations) -> ImageData:
    """EMNIST byclass as uint8 [N, 28, 28, 1] in upright orientation, int64 labels."""
    tried: list[str] = []
    for root, download in _roots(loc):
        try:
            return _load_torchvision(root, download, loc.cache_dir)
        except Exception as error:  # torchvision raises RuntimeError, URLError, OSError, ...
            if download:
                tried.append(f"download from {DOWNLOAD_URL} via torchvision into {root} "
                             f"(failed: {describe_error(error)})")
            else:
                tried.append(f"torchvision EMNIST copy {root / 'EMNIST' / 'raw'} "
                             f"(not found or corrupt: {describe_error(error)})")
    if not loc.download:
        tried.append(f"download from {DOWNLOAD_URL} (skipped: {DOWNLOAD_ENV}=0)")
    raise DatasetUnavailable(NAME, tried, HINT)


def emnist_fingerprint(loc: DataLocations) -> str | None:
    """Combined sha256 of the raw byclass files, or None when no copy exists."""
    for root, _ in _roots(loc):
        files = [root / "EMNIST" / "raw" / name for name in RAW_FILES]
        if all(path.is_file() for path in files):
            return combined_sha256(files, loc.cache_dir)
    return None


def upright(raw: np.ndarray) -> np.ndarray:
    """EMNIST's idx files store each image transposed; return [N, H, W, 1] upright."""
    return np.ascontiguousarray(np.swapaxes(raw, 1, 2))[..., None]


def _roots(loc: DataLocations) -> list[tuple[Path, bool]]:
    roots = [] if loc.data_dir is None else [(loc.data_dir, False)]
    return roots + [(loc.cache_dir / "torchvision", loc.download)]


def _load_torchvision(root: Path, download: bool, cache_dir: Path) -> ImageData:
    from torchvision.datasets import EMNIST

    with socket_timeout():
        train = EMNIST(root=str(root), split=SPLIT, train=True, download=download)
    test = EMNIST(root=str(root), split=SPLIT, train=False, download=False)
    files = [root / "EMNIST" / "raw" / name for name in RAW_FILES]
    return ImageData(
        train_x=upright(train.data.numpy().astype(np.uint8, copy=False)),
        train_y=train.targets.numpy().astype(np.int64),
        test_x=upright(test.data.numpy().astype(np.uint8, copy=False)),
        test_y=test.targets.numpy().astype(np.int64),
        classes=tuple(train.classes),
        fingerprint=combined_sha256(files, cache_dir),
    )
