"""Committed outputs hold no path of the machine that wrote them: paths are relative to the project."""
from __future__ import annotations

import gzip
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"""(?:^|[\s"'(\[=])(/(?:[A-Za-z0-9._-]+/)+[A-Za-z0-9._-]*|~/[A-Za-z0-9._/-]+)""")
OUTPUTS = ("REPORT.json", "REPORT.md", "report/*.md", "report/*.json", "records/sequential/*.json",
           "studies/*/*.json", "studies/*/*.md", "baselines/*.json",
           "baselines/numerics/*.json", "docs/audit-*/*.json", "docs/audit-*/*.md", "benchmarks/*.json")


SYSTEM = ("/sys/", "/proc/", "/dev/")
"""The kernel's interfaces (a RAPL counter's file) are the same on every Linux machine, not this one's paths."""


def absolute_paths(text: str) -> list[str]:
    return [m.group(1) for m in ABSOLUTE.finditer(text) if not m.group(1).startswith(SYSTEM)]


def test_no_committed_output_holds_an_absolute_path() -> None:
    found = {}
    for pattern in OUTPUTS:
        for path in sorted(ROOT.glob(pattern)):
            paths = absolute_paths(path.read_text(encoding="utf-8"))
            if paths:
                found[str(path.relative_to(ROOT))] = paths[:3]
    assert found == {}


def test_no_committed_record_holds_an_absolute_path() -> None:
    """The records committed with the report (`records/`, gzip JSON) are outputs too."""
    found = {}
    for path in sorted(ROOT.glob("records/*/*.json.gz")):
        paths = absolute_paths(gzip.decompress(path.read_bytes()).decode("utf-8"))
        if paths:
            found[str(path.relative_to(ROOT))] = paths[:3]
    assert found == {}


def test_the_check_sees_a_path_of_this_machine() -> None:
    assert absolute_paths('{"figure": "/work/main/figures/a.png"}') == ["/work/main/figures/a.png"]
    assert absolute_paths("see ~/.cache/fedclaims/store") == ["~/.cache/fedclaims/store"]
    assert absolute_paths('{"figure": "figures/a.png", "ratio": "3/4", "url": "https://x.org/a/b"}') == []
    assert absolute_paths("RAPL counters (/sys/class/powercap) not readable") == []
