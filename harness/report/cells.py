"""Text as Markdown tables and links take it: one table cell, one relative link."""
from __future__ import annotations

import os
from pathlib import Path

DETAIL_DIR = "report"
"""The folder beside REPORT.md holding its detail files (one per paper, the runs, each scale study)."""


def cell(text) -> str:
    """`text` on one line with its pipes escaped, as one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def relative(path: Path, base: Path) -> str:
    """The link to `path` from a file in the folder `base`."""
    return os.path.relpath(path, base).replace(os.sep, "/")
