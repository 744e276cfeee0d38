"""What a runner may know about where it runs (never part of a record's key)."""
from __future__ import annotations

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

