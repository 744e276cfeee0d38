"""CIFAR-10: a local JPEG ImageFolder archive (decoded once, cached as .npy) or torchvision's copy.

Sources, first existing wins: FEDCLAIMS_DATA's cifar10-jpeg.tar.gz, an extracted torchvision
cifar-10-batches-py/ in FEDCLAIMS_DATA, then the one in the cache, which the fetch downloads
(checked against its pinned sha256) and extracts for torchvision to read with download=False.
"""
from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
from pathlib import Path, PurePosixPath

import numpy as np
from PIL import Image

from harness.provenance import producer_identity

from .archives import extract_tar_folder, read_tar_member
from .arraycache import load_arrays, save_arrays
from .arrays import ImageData
from .downloads import SOURCES, download_checked
from .errors import DataCheckFailed, DatasetUnavailable
from .hashing import cached_sha256, combined_sha256
from .locations import DOWNLOAD_ENV, DataLocations, download_skipped
from .netguard import describe_error

NAME = "cifar10"
ARCHIVE_NAME = "cifar10-jpeg.tar.gz"
TORCHVISION_FOLDER = "cifar-10-batches-py"
TORCHVISION_FILES = ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                     "data_batch_5", "test_batch", "batches.meta")
IMAGE_SIZE = (32, 32)
MAX_IMAGE_BYTES = 256 << 10  # one 32x32 image file; CIFAR's JPEGs are 1-2 KB
MAX_BATCH_BYTES = 64 << 20  # one pickled batch of the official tarball is about 30 MB
# The libraries whose decoding shapes the cached arrays; with this module's code they key the cache.
DECODING_LIBRARIES = ("Pillow", "numpy")
HINT = (f"set FEDCLAIMS_DATA to a folder holding {ARCHIVE_NAME} (ImageFolder tree "
        "cifar10-jpeg/{train,test}/<class>/<NNNN>.jpg) or an extracted torchvision "
        f"{TORCHVISION_FOLDER}/, or allow downloads ({DOWNLOAD_ENV} unset or 1) "
        "on a machine with internet access")
_SPLITS = ("train", "test")


def load_cifar10(loc: DataLocations) -> ImageData:
    """CIFAR-10 from the source cifar10_fingerprint names, fetched first if none exists."""
    kind, path = fetch_cifar10(loc)
    try:
        if kind == "jpeg":
            return load_jpeg_archive(path, loc.cache_dir)
        return _load_torchvision(path, loc.cache_dir)
    except Exception as error:  # torchvision raises RuntimeError, pickle and OS errors, ...
        where = path if kind == "jpeg" else path / TORCHVISION_FOLDER
        raise DatasetUnavailable(NAME, [f"{where} (failed: {describe_error(error)})"], HINT) from error


def fetch_cifar10(loc: DataLocations) -> tuple[str, Path]:
    """("jpeg", archive) or ("torchvision", root): a local copy, an earlier download, or one now."""
    existing = _source(loc)
    if existing is not None:
        return existing
    tried = [f"{loc.describe_local(ARCHIVE_NAME)} (not found)"]
    tried += [f"{root / TORCHVISION_FOLDER} (not found)" for root in _torchvision_roots(loc)]
    source = SOURCES[NAME]
    if not loc.download:
        raise DatasetUnavailable(NAME, tried + [download_skipped(source.url)], HINT)
    root = _download_root(loc)
    try:
        archive = download_checked(source, root)
        try:
            folder = extract_tar_folder(archive, TORCHVISION_FOLDER, root, MAX_BATCH_BYTES)
        finally:
            archive.unlink(missing_ok=True)
        missing = [path.name for path in _torchvision_files(root) if not path.is_file()]
        if missing:
            shutil.rmtree(folder, ignore_errors=True)
            raise DataCheckFailed(f"{source.url} holds no {', '.join(missing)} under {TORCHVISION_FOLDER}/")
    except (OSError, DataCheckFailed, tarfile.TarError) as error:  # URLError, HTTPError are OSErrors
        tried.append(f"download from {source.url} into {root} (failed: {describe_error(error)})")
        raise DatasetUnavailable(NAME, tried, HINT) from error
    return "torchvision", root


def cifar10_fingerprint(loc: DataLocations) -> str | None:
    """sha256 of the source load_cifar10 would use, without decoding; None if none exists."""
    existing = _source(loc)
    if existing is None:
        return None
    kind, path = existing
    if kind == "jpeg":
        return cached_sha256(path, loc.cache_dir)
    return combined_sha256(_torchvision_files(path), loc.cache_dir)


def load_jpeg_archive(archive: Path, cache_dir: Path) -> ImageData:
    """Decode the archive once; later calls load the .npy cache.

    The cache is keyed by the archive's sha256 and by the identity of the code and libraries
    that decode it, so an edit of the decoder or a new Pillow decodes again.
    """
    digest = cached_sha256(archive, cache_dir)
    folder = decoded_cache_folder(digest, cache_dir)
    cached = load_arrays(folder)
    if cached is not None:
        arrays, meta = cached
        return ImageData(**arrays, classes=tuple(meta["classes"]), fingerprint=digest)
    arrays, classes = decode_jpeg_archive(archive)
    save_arrays(folder, arrays, {"classes": list(classes), "source": ARCHIVE_NAME})
    return ImageData(**arrays, classes=classes, fingerprint=digest)


def decoded_cache_folder(archive_sha256: str, cache_dir: Path) -> Path:
    """Where the decoded arrays of an archive live: keyed by its bytes and by their producer."""
    producer = producer_identity(__name__, DECODING_LIBRARIES)
    key = hashlib.sha256(f"{archive_sha256}\n{producer}".encode()).hexdigest()
    return cache_dir / NAME / f"jpeg-{key}"


def decode_jpeg_archive(archive: Path) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Stream a ``<root>/{train,test}/<class>/<file>.jpg`` tar and decode every image.

    Classes are the sorted folder names; within a class, files are sorted by name. A member
    above MAX_IMAGE_BYTES, an image whose header is not 32x32 and a decompression bomb are
    refused before decoding, as DataCheckFailed naming the member.
    """
    images: dict[tuple[str, str, str], np.ndarray] = {}
    with tarfile.open(archive, mode="r|*") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 3 or parts[-3] not in _SPLITS:
                continue
            if not parts[-1].lower().endswith((".jpg", ".jpeg", ".png")):
                continue
            data = read_tar_member(tar, member, MAX_IMAGE_BYTES, archive)
            if data is not None:
                images[(parts[-3], parts[-2], parts[-1])] = decode_image(data, f"{archive}: member {member.name}")
    return _stack_splits(images)


def decode_image(data: bytes, what: str) -> np.ndarray:
    """One 32x32 image as uint8 RGB; its header size is checked before any pixel is decoded."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.size != IMAGE_SIZE:
                raise DataCheckFailed(f"{what} is {image.size[0]}x{image.size[1]} pixels, "
                                      f"not CIFAR-10's {IMAGE_SIZE[0]}x{IMAGE_SIZE[1]}")
            return np.asarray(image.convert("RGB"))
    except Image.DecompressionBombError as error:
        raise DataCheckFailed(f"{what} is a decompression bomb: {error}") from error


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


def _source(loc: DataLocations) -> tuple[str, Path] | None:
    archive = loc.local_file(ARCHIVE_NAME)
    if archive is not None and archive.is_file():
        return "jpeg", archive
    for root in _torchvision_roots(loc):
        if all(path.is_file() for path in _torchvision_files(root)):
            return "torchvision", root
    return None


def _torchvision_roots(loc: DataLocations) -> list[Path]:
    """Folders holding an extracted cifar-10-batches-py/: data_dir, then the download cache."""
    return ([] if loc.data_dir is None else [loc.data_dir]) + [_download_root(loc)]


def _torchvision_files(root: Path) -> list[Path]:
    return [root / TORCHVISION_FOLDER / name for name in TORCHVISION_FILES]


def _download_root(loc: DataLocations) -> Path:
    return loc.cache_dir / "torchvision"


def _load_torchvision(root: Path, cache_dir: Path) -> ImageData:
    """Read an extracted copy; torchvision checks each batch's md5 before it unpickles it."""
    from torchvision.datasets import CIFAR10

    train = CIFAR10(root=str(root), train=True, download=False)
    test = CIFAR10(root=str(root), train=False, download=False)
    return ImageData(
        train_x=np.asarray(train.data, dtype=np.uint8),
        train_y=np.asarray(train.targets, dtype=np.int64),
        test_x=np.asarray(test.data, dtype=np.uint8),
        test_y=np.asarray(test.targets, dtype=np.int64),
        classes=tuple(train.classes),
        fingerprint=combined_sha256(_torchvision_files(root), cache_dir),
    )
