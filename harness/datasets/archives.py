"""Reading archive members with size limits, so a crafted archive cannot fill memory or disk.

A member's declared size is checked before it is read, and the bytes actually produced are
counted while reading, since a header can lie about what its compressed data expands to.
"""
from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .errors import DataCheckFailed

_CHUNK = 1 << 20


def read_limited(stream: BinaryIO, max_bytes: int, what: str) -> bytes:
    """All of ``stream``, or DataCheckFailed once more than ``max_bytes`` come out of it."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DataCheckFailed(f"{what} expands to more than the limit of {max_bytes} bytes")
    return data


def read_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, max_bytes: int, where: Path) -> bytes:
    """One zip member's bytes, refused if its declared or actual size is above ``max_bytes``."""
    what = f"{where}: member {info.filename}"
    if info.file_size > max_bytes:
        raise DataCheckFailed(f"{what} declares {info.file_size} bytes, above the limit of {max_bytes}")
    with archive.open(info) as stream:
        return read_limited(stream, max_bytes, what)


def read_tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, max_bytes: int, where: Path) -> bytes | None:
    """One regular tar member's bytes (None for other kinds), refused above ``max_bytes``."""
    if member.size > max_bytes:
        raise DataCheckFailed(f"{where}: member {member.name} has {member.size} bytes, "
                              f"above the limit of {max_bytes}")
    handle = tar.extractfile(member)
    return None if handle is None else read_limited(handle, max_bytes, f"{where}: member {member.name}")


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


def gunzip_limited(compressed: BinaryIO, target: Path, max_bytes: int, what: str) -> None:
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
