"""What a runner may know about where it runs (never part of a record's key)."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RunContext:
    data_dir: Path | None
    cache_dir: Path
    download: bool = True
    device: str = "cpu"
    progress: Callable[[float, str], None] = field(default=lambda fraction, text: None)


def derive_seed(seed: int, *stream: object) -> int:
    """A 63-bit seed for one named random stream of a run, e.g. (seed, 'sampling')."""
    text = "/".join([str(seed), *map(str, stream)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
