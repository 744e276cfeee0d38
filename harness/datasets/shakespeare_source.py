"""Where Shakespeare's text is, how it is fetched, and loading it through its loader (`shakespeare`).

Sources, first existing wins: FEDCLAIMS_DATA's tinyshakespeare.txt (the ROLE: format of
karpathy/char-rnn's corpus; its digest the pinned one, else its size and twenty long roles:
`local_copies`; refused by name otherwise), FEDCLAIMS_DATA's 1994-01-100.zip (Project Gutenberg's complete
works, LEAF's source), and the same tiny corpus downloaded and checked against its pinned sha256
(Project Gutenberg publishes no digest of the zip, so it is never downloaded).
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from . import shakespeare
from .arrays import TextData
from .downloads import SOURCES, download_checked
from .errors import DataCheckFailed, DatasetUnavailable
from .hashing import cached_sha256
from .local_copies import check_local_copy
from .locations import DOWNLOAD_ENV, DataLocations, Folders, download_skipped
from .netguard import describe_error

NAME = "shakespeare"
TINY_NAME = "tinyshakespeare.txt"
GUTENBERG_NAME = "1994-01-100.zip"
HINT = (f"set FEDCLAIMS_DATA to a folder holding {TINY_NAME} (ROLE: header lines, each "
        f"followed by that role's speech, blank line between speeches) or {GUTENBERG_NAME} "
        f"(Project Gutenberg's complete works as used by LEAF), or allow downloads "
        f"({DOWNLOAD_ENV} unset or 1) on a machine with internet access")


def load(where: Folders | None = None, **options: int) -> TextData:
    """The federation from the source `fingerprint` names, fetched first if none exists; ``options``
    (num_roles, seq_len) go to the loader, whose defaults are what a run reads."""
    loc = DataLocations.of(where)
    path = _fetch(loc)
    try:
        return shakespeare.load(path, cached_sha256(path, loc.cache_dir), **options)
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        raise DatasetUnavailable(NAME, [f"{path} (failed: {describe_error(error)})"], HINT) from error


def fetch(where: Folders | None = None) -> Path:
    """The source file: a local copy, an earlier download, or a checked download made now."""
    return _fetch(DataLocations.of(where))


def fingerprint(where: Folders | None = None) -> str | None:
    """sha256 of the source file `load` would use, or None when none exists."""
    loc = DataLocations.of(where)
    path = _source(loc)
    return None if path is None else cached_sha256(path, loc.cache_dir)


def _fetch(loc: DataLocations) -> Path:
    existing = _source(loc)
    if existing is not None:
        return existing
    tried = [f"{loc.describe_local(name)} (not found)" for name in (TINY_NAME, GUTENBERG_NAME)]
    source = SOURCES[NAME]
    tried.append(f"{_download_folder(loc) / source.name} (not downloaded yet)")
    if not loc.download:
        raise DatasetUnavailable(NAME, tried + [download_skipped(source.url)], HINT)
    try:
        return download_checked(source, _download_folder(loc))
    except (OSError, DataCheckFailed) as error:  # urllib's URLError and HTTPError are OSErrors
        tried.append(f"download from {source.url} (failed: {describe_error(error)})")
        raise DatasetUnavailable(NAME, tried, HINT) from error


def _source(loc: DataLocations) -> Path | None:
    """The first existing of: local ROLE: text, local Gutenberg zip, the downloaded ROLE: text."""
    local = [loc.local_file(name) for name in (TINY_NAME, GUTENBERG_NAME)]
    candidates = [path for path in local if path is not None]
    candidates.append(_download_folder(loc) / SOURCES[NAME].name)
    found = next((path for path in candidates if path.is_file()), None)
    if found is not None and found == loc.local_file(TINY_NAME):
        check_local_copy(found, cached_sha256(found, loc.cache_dir), loc.cache_dir)
    return found


def _download_folder(loc: DataLocations) -> Path:
    return loc.cache_dir / NAME
