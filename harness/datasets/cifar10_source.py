"""Where CIFAR-10's files are, how they are fetched, and loading them through its loader (`cifar10`).

Sources, first existing wins: FEDCLAIMS_DATA's cifar10-jpeg.tar.gz (its digest the pinned one, else
CIFAR-10's classes and image counts: `local_copies`; refused by name otherwise), an extracted torchvision
cifar-10-batches-py/ in FEDCLAIMS_DATA, then the one in the cache, which the fetch downloads
(checked against its pinned sha256) and extracts for torchvision to read with download=False.
Nothing here decides a number a run computes: which source was read is in the data set's
fingerprint, and decoding is the loader's.
"""
from __future__ import annotations

import hashlib
import shutil
import tarfile
from pathlib import Path

from harness.provenance import producer_identity

from . import cifar10
from .arrays import ImageData
from .downloads import SOURCES, download_checked
from .errors import DataCheckFailed, DatasetUnavailable
from .hashing import cached_sha256, combined_sha256
from .local_copies import check_local_copy
from .locations import DOWNLOAD_ENV, DataLocations, Folders, download_skipped
from .netguard import describe_error
from .unpacking import extract_tar_folder

NAME = "cifar10"
ARCHIVE_NAME = "cifar10-jpeg.tar.gz"
MAX_BATCH_BYTES = 64 << 20  # one pickled batch of the official tarball is about 30 MB
HINT = (f"set FEDCLAIMS_DATA to a folder holding {ARCHIVE_NAME} (ImageFolder tree "
        "cifar10-jpeg/{train,test}/<class>/<NNNN>.jpg) or an extracted torchvision "
        f"{cifar10.TORCHVISION_FOLDER}/, or allow downloads ({DOWNLOAD_ENV} unset or 1) "
        "on a machine with internet access")


def load(where: Folders | None = None) -> ImageData:
    """CIFAR-10 from the source `fingerprint` names, fetched first if none exists."""
    loc = DataLocations.of(where)
    kind, path = _fetch(loc)
    digest = _digest(kind, path, loc)
    try:
        if kind == "jpeg":
            return cifar10.load_jpeg_archive(path, digest, decoded_cache_folder(digest, loc.cache_dir))
        return cifar10.load_torchvision(path, digest)
    except Exception as error:  # torchvision raises RuntimeError, pickle and OS errors, ...
        source = path if kind == "jpeg" else path / cifar10.TORCHVISION_FOLDER
        raise DatasetUnavailable(NAME, [f"{source} (failed: {describe_error(error)})"], HINT) from error


def fetch(where: Folders | None = None) -> tuple[str, Path]:
    """("jpeg", archive) or ("torchvision", root): a local copy, an earlier download, or one now."""
    return _fetch(DataLocations.of(where))


def fingerprint(where: Folders | None = None) -> str | None:
    """sha256 of the source `load` would use, without decoding; None if none exists."""
    loc = DataLocations.of(where)
    existing = _source(loc)
    return None if existing is None else _digest(*existing, loc)


def decoded_cache_folder(archive_sha256: str, cache_dir: Path) -> Path:
    """Where the decoded arrays of an archive live: keyed by its bytes and by their producer."""
    producer = producer_identity(cifar10.__name__, cifar10.DECODING_LIBRARIES)
    key = hashlib.sha256(f"{archive_sha256}\n{producer}".encode()).hexdigest()
    return cache_dir / NAME / f"jpeg-{key}"


def _fetch(loc: DataLocations) -> tuple[str, Path]:
    existing = _source(loc)
    if existing is not None:
        return existing
    tried = [f"{loc.describe_local(ARCHIVE_NAME)} (not found)"]
    tried += [f"{root / cifar10.TORCHVISION_FOLDER} (not found)" for root in _torchvision_roots(loc)]
    source = SOURCES[NAME]
    if not loc.download:
        raise DatasetUnavailable(NAME, tried + [download_skipped(source.url)], HINT)
    root = _download_root(loc)
    try:
        archive = download_checked(source, root)
        try:
            folder = extract_tar_folder(archive, cifar10.TORCHVISION_FOLDER, root, MAX_BATCH_BYTES)
        finally:
            archive.unlink(missing_ok=True)
        missing = [path.name for path in _torchvision_files(root) if not path.is_file()]
        if missing:
            shutil.rmtree(folder, ignore_errors=True)
            raise DataCheckFailed(f"{source.url} holds no {', '.join(missing)} under {cifar10.TORCHVISION_FOLDER}/")
    except (OSError, DataCheckFailed, tarfile.TarError) as error:  # URLError, HTTPError are OSErrors
        tried.append(f"download from {source.url} into {root} (failed: {describe_error(error)})")
        raise DatasetUnavailable(NAME, tried, HINT) from error
    return "torchvision", root


def _digest(kind: str, path: Path, loc: DataLocations) -> str:
    if kind == "jpeg":
        return cached_sha256(path, loc.cache_dir)
    return combined_sha256(_torchvision_files(path), loc.cache_dir)


def _source(loc: DataLocations) -> tuple[str, Path] | None:
    archive = loc.local_file(ARCHIVE_NAME)
    if archive is not None and archive.is_file():
        check_local_copy(archive, cached_sha256(archive, loc.cache_dir), loc.cache_dir)
        return "jpeg", archive
    for root in _torchvision_roots(loc):
        if all(path.is_file() for path in _torchvision_files(root)):
            return "torchvision", root
    return None


def _torchvision_roots(loc: DataLocations) -> list[Path]:
    """Folders holding an extracted cifar-10-batches-py/: data_dir, then the download cache."""
    return ([] if loc.data_dir is None else [loc.data_dir]) + [_download_root(loc)]


def _torchvision_files(root: Path) -> list[Path]:
    return [root / cifar10.TORCHVISION_FOLDER / name for name in cifar10.TORCHVISION_FILES]


def _download_root(loc: DataLocations) -> Path:
    return loc.cache_dir / "torchvision"
