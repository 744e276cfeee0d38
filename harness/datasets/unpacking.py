"""Unpacking a downloaded archive into the files a loader reads, with size limits (fetch side only).

A member's declared size is checked before it is read, and the bytes actually produced are
counted while decompressing, since a header can lie about what its compressed data expands to.
"""
from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import IO

from .archives import read_tar_member
from .errors import DataCheckFailed

_CHUNK = 1 << 20


def extract_tar_folder(archive: Path, folder: str, destination: Path, max_member_bytes: int) -> Path:
    """Extract the regular files under ``folder``/ of a tar into ``destination``/``folder``.

    Nothing else is written: other members, links, absolute or parent-relative names are
    skipped, and a member above the limit stops the extraction. The folder appears in one
    rename, so a reader never sees half of it.
    """
    final = destination / folder
    destination.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=destination, prefix=f".{folder}-"))
    try:
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:
                parts = PurePosixPath(member.name).parts
                if (not member.isfile() or len(parts) != 2 or parts[0] != folder
                        or parts[1] in ("", ".", "..")):
                    continue
                data = read_tar_member(tar, member, max_member_bytes, archive)
                if data is not None:
                    (staging / parts[1]).write_bytes(data)
        shutil.rmtree(final, ignore_errors=True)
        try:
            os.replace(staging, final)
        except OSError:
            if not final.is_dir():  # else another process extracted the same archive first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def gunzip_limited(compressed: IO[bytes], target: Path, max_bytes: int, what: str) -> None:
    """Decompress a gzip stream into ``target`` (atomically), refused above ``max_bytes``."""
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-", suffix=".part")
    try:
        written = 0
        with os.fdopen(handle, "wb") as out, gzip.GzipFile(fileobj=compressed) as stream:
            while chunk := stream.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise DataCheckFailed(f"{what} expands to more than the limit of {max_bytes} bytes")
                out.write(chunk)
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
