"""Reading archive members with size limits, so a crafted archive cannot fill memory or disk.

A member's declared size is checked before it is read, and the bytes actually produced are
counted while reading, since a header can lie about what its compressed data expands to.
"""
from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path
from typing import IO

from .errors import DataCheckFailed


def read_limited(stream: IO[bytes], max_bytes: int, what: str) -> bytes:
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
