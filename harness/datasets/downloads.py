"""Downloads of official data-set archives, each checked against a pinned sha256 and size.

``SOURCES`` is the declared table of everything the loaders may download. A response larger
than the limit is cut off, one whose digest differs from the pin is discarded; either way the
partial file is removed and DataCheckFailed names the URL, what was expected and what arrived.
A file only takes its final name once it has passed both checks.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .errors import DataCheckFailed
from .netguard import DOWNLOAD_TIMEOUT_S

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Source:
    """One downloadable file: where it is, its sha256, and the most bytes it may have."""

    name: str
    url: str
    sha256: str
    max_bytes: int


# Digests and sizes as published by independent users of the same official files (the sizes
# are the files' exact lengths, so any longer response is rejected before its digest is known):
# - CIFAR-10: Keras (keras/datasets/cifar10.py, get_file file_hash) and torchvision's prototype
#   datasets (Cifar10._SHA256); torchvision's CIFAR10 pins md5 c58f30108f718f92721af3b95e74349a
#   of the same tarball and checks every extracted batch's md5 when it reads them.
# - EMNIST: JuliaML's MLDatasets (DataDeps registration of gzip.zip) and others; torchvision's
#   EMNIST pins md5 58c8d27c78d21e728a6bc7b3cc06412e of the same archive.
# - Shakespeare: karpathy/char-rnn's tinyshakespeare/input.txt at a fixed commit (1,115,394
#   bytes), the corpus of FEDCLAIMS_DATA/tinyshakespeare.txt. Project Gutenberg publishes no
#   digest of LEAF's 1994-01-100.zip, so it is read from a local copy only.
SOURCES: dict[str, Source] = {
    "cifar10": Source(
        name="cifar-10-python.tar.gz",
        url="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
        sha256="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
        max_bytes=170_498_071,
    ),
    "emnist": Source(
        name="gzip.zip",
        url="https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip",
        sha256="fb9bb67e33772a9cc0b895e4ecf36d2cf35be8b709693c3564cea2a019fcda8e",
        max_bytes=561_753_746,
    ),
    "shakespeare": Source(
        name="tinyshakespeare.txt",
        url="https://raw.githubusercontent.com/karpathy/char-rnn/"
            "6f9487a6fe5b420b7ca9afb0d7c078e37c1d1b4e/data/tinyshakespeare/input.txt",
        sha256="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        max_bytes=1_115_394,
    ),
}


def download_checked(source: Source, folder: Path) -> Path:
    """Download ``source`` into ``folder``/``source.name`` and return that path.

    Raises DataCheckFailed for an oversized response or a digest mismatch, and whatever
    urllib raises for network and HTTP errors; nothing is left behind in either case.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    handle, partial = tempfile.mkstemp(dir=folder, prefix=f".{source.name}-", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            size, digest = _stream(source, out)
        if digest != source.sha256:
            raise DataCheckFailed(f"{source.url}: sha256 {digest} ({size} bytes) is not the pinned "
                                  f"{source.sha256}; the download was discarded")
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return target


def _stream(source: Source, out) -> tuple[int, str]:
    """Copy the response to ``out`` while hashing it; stop at the size limit."""
    digest = hashlib.sha256()
    size = 0
    with urllib.request.urlopen(source.url, timeout=DOWNLOAD_TIMEOUT_S) as response:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > source.max_bytes:
            raise DataCheckFailed(f"{source.url}: Content-Length {int(declared)} bytes exceeds the limit of "
                                  f"{source.max_bytes} bytes; nothing was kept")
        while chunk := response.read(_CHUNK):
            size += len(chunk)
            if size > source.max_bytes:
                raise DataCheckFailed(f"{source.url}: more than the limit of {source.max_bytes} bytes arrived "
                                      f"({size} so far); the download was discarded")
            digest.update(chunk)
            out.write(chunk)
    return size, digest.hexdigest()
