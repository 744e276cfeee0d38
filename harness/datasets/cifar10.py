"""CIFAR-10: a local JPEG ImageFolder archive (decoded once, cached as .npy) or torchvision."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from .arraycache import load_arrays, save_arrays
from .arrays import ImageData
from .errors import DatasetUnavailable
from .hashing import cached_sha256, combined_sha256
from .locations import DOWNLOAD_ENV, DataLocations
from .netguard import describe_error, socket_timeout

NAME = "cifar10"
ARCHIVE_NAME = "cifar10-jpeg.tar.gz"
DOWNLOAD_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
TORCHVISION_FOLDER = "cifar-10-batches-py"
TORCHVISION_FILES = ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                     "data_batch_5", "test_batch", "batches.meta")
HINT = (f"set FEDCLAIMS_DATA to a folder holding {ARCHIVE_NAME} (ImageFolder tree "
        "cifar10-jpeg/{train,test}/<class>/<NNNN>.jpg) or an extracted torchvision "
        f"{TORCHVISION_FOLDER}/, or allow downloads ({DOWNLOAD_ENV} unset or 1) "
        "on a machine with internet access")
_SPLITS = ("train", "test")


def load_cifar10(loc: DataLocations) -> ImageData:
    """CIFAR-10 from the first source that works: local JPEG archive, then torchvision."""
    tried: list[str] = []
    archive = loc.local_file(ARCHIVE_NAME)
    if archive is None or not archive.is_file():
        tried.append(f"{loc.describe_local(ARCHIVE_NAME)} (not found)")
    else:
        try:
            return load_jpeg_archive(archive, loc.cache_dir)
        except (OSError, ValueError, tarfile.TarError) as error:
            tried.append(f"{archive} (failed: {describe_error(error)})")
    for root, download in _torchvision_roots(loc):
        try:
            return _load_torchvision(root, download, loc.cache_dir)
        except Exception as error:  # torchvision raises RuntimeError, URLError, OSError, ...
            tried.append(_describe_torchvision_failure(root, download, error))
    if not loc.download:
        tried.append(f"download from {DOWNLOAD_URL} (skipped: {DOWNLOAD_ENV}=0)")
    raise DatasetUnavailable(NAME, tried, HINT)


def cifar10_fingerprint(loc: DataLocations) -> str | None:
    """sha256 of the source load_cifar10 would use, without decoding; None if none exists."""
    archive = loc.local_file(ARCHIVE_NAME)
    if archive is not None and archive.is_file():
        return cached_sha256(archive, loc.cache_dir)
    for root, _ in _torchvision_roots(loc):
        files = [root / TORCHVISION_FOLDER / name for name in TORCHVISION_FILES]
        if all(path.is_file() for path in files):
            return combined_sha256(files, loc.cache_dir)
    return None


def load_jpeg_archive(archive: Path, cache_dir: Path) -> ImageData:
    """Decode the archive once; later calls load the .npy cache keyed by its sha256."""
    digest = cached_sha256(archive, cache_dir)
    folder = cache_dir / NAME / f"jpeg-{digest}"
    cached = load_arrays(folder)
    if cached is not None:
        arrays, meta = cached
        return ImageData(**arrays, classes=tuple(meta["classes"]), fingerprint=digest)
    arrays, classes = decode_jpeg_archive(archive)
    save_arrays(folder, arrays, {"classes": list(classes), "source": ARCHIVE_NAME})
    return ImageData(**arrays, classes=classes, fingerprint=digest)


def decode_jpeg_archive(archive: Path) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Stream a ``<root>/{train,test}/<class>/<file>.jpg`` tar and decode every image.

    Classes are the sorted folder names; within a class, files are sorted by name.
    """
    images: dict[tuple[str, str, str], np.ndarray] = {}
    with tarfile.open(archive, mode="r|*") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 3 or parts[-3] not in _SPLITS:
                continue
            if not parts[-1].lower().endswith((".jpg", ".jpeg", ".png")):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            with Image.open(io.BytesIO(handle.read())) as image:
                images[(parts[-3], parts[-2], parts[-1])] = np.asarray(image.convert("RGB"))
    return _stack_splits(images)


def _stack_splits(images: dict[tuple[str, str, str], np.ndarray]
                  ) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    classes = {split: sorted({c for s, c, _ in images if s == split}) for split in _SPLITS}
    if not classes["train"] or classes["train"] != classes["test"]:
        raise ValueError(f"train classes {classes['train']} and test classes "
                         f"{classes['test']} must be the same non-empty set")
    index = {name: i for i, name in enumerate(classes["train"])}
    arrays: dict[str, np.ndarray] = {}
    for split in _SPLITS:
        keys = sorted((index[c], f, c) for s, c, f in images if s == split)
        shapes = {images[(split, c, f)].shape for _, f, c in keys}
        if len(shapes) != 1:
            raise ValueError(f"{split} images have differing shapes {sorted(shapes)}")
        arrays[f"{split}_x"] = np.stack([images[(split, c, f)] for _, f, c in keys])
        arrays[f"{split}_y"] = np.array([label for label, _, _ in keys], dtype=np.int64)
    return arrays, tuple(classes["train"])


def _torchvision_roots(loc: DataLocations) -> list[tuple[Path, bool]]:
    """(root, download) pairs: an extracted copy in data_dir, then the cache (may download)."""
    roots = [] if loc.data_dir is None else [(loc.data_dir, False)]
    return roots + [(loc.cache_dir / "torchvision", loc.download)]


def _load_torchvision(root: Path, download: bool, cache_dir: Path) -> ImageData:
    from torchvision.datasets import CIFAR10

    with socket_timeout():
        train = CIFAR10(root=str(root), train=True, download=download)
    test = CIFAR10(root=str(root), train=False, download=False)
    files = [root / TORCHVISION_FOLDER / name for name in TORCHVISION_FILES]
    return ImageData(
        train_x=np.asarray(train.data, dtype=np.uint8),
        train_y=np.asarray(train.targets, dtype=np.int64),
        test_x=np.asarray(test.data, dtype=np.uint8),
        test_y=np.asarray(test.targets, dtype=np.int64),
        classes=tuple(train.classes),
        fingerprint=combined_sha256(files, cache_dir),
    )


def _describe_torchvision_failure(root: Path, download: bool, error: Exception) -> str:
    reason = describe_error(error)
    if download:
        return f"download from {DOWNLOAD_URL} via torchvision into {root} (failed: {reason})"
    return f"torchvision CIFAR10 copy {root / TORCHVISION_FOLDER} (not found or corrupt: {reason})"
