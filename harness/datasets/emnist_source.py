"""Where EMNIST's files are, how they are fetched, and loading them through its loader (`emnist`).

Sources, first existing wins: torchvision's raw byclass files under FEDCLAIMS_DATA/EMNIST/raw/,
then those under the cache, which the fetch makes from the official gzip.zip: downloaded and
checked against its pinned sha256, its four byclass members decompressed with a size limit,
the archive removed; torchvision then reads them with download=False.
"""
from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from . import emnist
from .arrays import ImageData
from .downloads import SOURCES, download_checked
from .errors import DataCheckFailed, DatasetUnavailable
from .hashing import combined_sha256
from .locations import DOWNLOAD_ENV, DataLocations, Folders, download_skipped
from .netguard import describe_error
from .unpacking import gunzip_limited

NAME = "emnist"
RAW_FILES = tuple(f"emnist-{emnist.SPLIT}-{part}-{kind}-idx{dims}-ubyte"
                  for part in ("train", "test") for kind, dims in (("images", 3), ("labels", 1)))
MAX_RAW_BYTES = 600 << 20  # the largest, the training images, is 547,178,704 bytes
HINT = ("set FEDCLAIMS_DATA to a folder holding torchvision's EMNIST download "
        f"(EMNIST/raw/{RAW_FILES[0]} and the other {emnist.SPLIT} files), or allow downloads "
        f"({DOWNLOAD_ENV} unset or 1; about 560 MB) on a machine with internet access")


def load(where: Folders | None = None) -> ImageData:
    """EMNIST byclass from the source `fingerprint` names, fetched first if none exists."""
    loc = DataLocations.of(where)
    root = _fetch(loc)
    try:
        return emnist.load_torchvision(root, combined_sha256(_raw_files(root), loc.cache_dir))
    except Exception as error:  # torchvision raises RuntimeError, ValueError, OSError, ...
        raise DatasetUnavailable(NAME, [f"{_raw_folder(root)} (failed: {describe_error(error)})"],
                                 HINT) from error


def fetch(where: Folders | None = None) -> Path:
    """The torchvision root holding the raw byclass files: local, downloaded before, or now."""
    return _fetch(DataLocations.of(where))


def fingerprint(where: Folders | None = None) -> str | None:
    """Combined sha256 of the raw byclass files, or None when no copy exists."""
    loc = DataLocations.of(where)
    root = _source(loc)
    return None if root is None else combined_sha256(_raw_files(root), loc.cache_dir)


def _fetch(loc: DataLocations) -> Path:
    existing = _source(loc)
    if existing is not None:
        return existing
    tried = [f"{_raw_folder(root)} (not found)" for root in _roots(loc)]
    if loc.data_dir is None:
        tried.insert(0, f"{loc.describe_local('EMNIST/raw')} (not found)")
    source = SOURCES[NAME]
    if not loc.download:
        raise DatasetUnavailable(NAME, tried + [download_skipped(source.url)], HINT)
    root = _download_root(loc)
    try:
        archive = download_checked(source, _raw_folder(root))
        try:
            _extract_raw_files(archive)
        finally:
            archive.unlink(missing_ok=True)
    except (OSError, DataCheckFailed, zipfile.BadZipFile, EOFError, zlib.error) as error:  # URLError: OSError
        tried.append(f"download from {source.url} into {_raw_folder(root)} (failed: {describe_error(error)})")
        raise DatasetUnavailable(NAME, tried, HINT) from error
    return root


def _extract_raw_files(archive: Path) -> None:
    """Decompress gzip.zip's ``gzip/<raw file>.gz`` members of the byclass split beside it."""
    with zipfile.ZipFile(archive) as bundle:
        for name in RAW_FILES:
            member = f"gzip/{name}.gz"
            try:
                info = bundle.getinfo(member)
            except KeyError:
                raise DataCheckFailed(f"{archive} has no member {member}") from None
            what = f"{archive}: member {member}"
            if info.file_size > MAX_RAW_BYTES:
                raise DataCheckFailed(f"{what} declares {info.file_size} bytes, above the limit of {MAX_RAW_BYTES}")
            with bundle.open(info) as compressed:
                gunzip_limited(compressed, archive.parent / name, MAX_RAW_BYTES, what)


def _source(loc: DataLocations) -> Path | None:
    return next((root for root in _roots(loc) if all(path.is_file() for path in _raw_files(root))), None)


def _roots(loc: DataLocations) -> list[Path]:
    return ([] if loc.data_dir is None else [loc.data_dir]) + [_download_root(loc)]


def _download_root(loc: DataLocations) -> Path:
    return loc.cache_dir / "torchvision"


def _raw_folder(root: Path) -> Path:
    return root / "EMNIST" / "raw"


def _raw_files(root: Path) -> list[Path]:
    return [_raw_folder(root) / name for name in RAW_FILES]
