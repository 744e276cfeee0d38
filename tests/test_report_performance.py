"""REPORT.md's Performance section, from committed pytest-benchmark JSON."""
from __future__ import annotations

import json
from pathlib import Path

from harness.report.performance import performance_section


def _bench(name: str, group: str, mean: float, **info) -> dict:
    return {"name": name, "group": group, "stats": {"mean": mean}, "extra_info": info}


def _write(root: Path, benchmarks: list[dict]) -> None:
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "latest.json").write_text(json.dumps({
        "datetime": "2026-12-02T10:00:00", "benchmarks": benchmarks,
        "machine_info": {"cpu": {"brand_raw": "Test CPU", "count": 2}, "python_version": "3.11"}}))


def test_paired_groups_are_summarised_with_their_control_and_verdict(tmp_path: Path) -> None:
    group = "one round: LSTM, width 1.0"
    _write(tmp_path, [
        _bench("test_round[plain]", group, 3.2),
        _bench("test_round[control]", group, 3.2, role="control", paired_speedup_median=1.012,
               paired_speedup_interval="[0.990, 1.030]"),
        _bench("test_round[fedclaims]", group, 3.25, paired_speedup_median=0.988,
               paired_speedup_interval="[0.970, 1.005]", verdict="no difference resolved"),
        _bench("test_merge[10]", "server merge", 2.0, role="reference"),
        _bench("test_merge[100]", "server merge", 2.5),
    ])
    lines = performance_section(tmp_path)
    header = lines.index("| candidate | paired speed-up | control | verdict |")
    summary = lines[header + 2:lines.index("", header)]
    assert summary == ["| test_round[fedclaims] | 0.988× [0.970, 1.005] | 1.012× [0.990, 1.030] | "
                       "no difference resolved |"]
    assert any(line.startswith("| test_merge[100] | 2.5 | 0.80× |") for line in lines)


def test_a_run_without_paired_rows_has_no_summary(tmp_path: Path) -> None:
    _write(tmp_path, [_bench("test_merge[10]", "server merge", 2.0, role="reference")])
    assert not any("interleaved pairs" in line for line in performance_section(tmp_path))
