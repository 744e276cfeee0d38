"""The report's Performance section, from the committed full benchmark runs (benchmarks/latest*.json:
one file per run of part of the suite, e.g. the training benchmarks and the end-to-end ones).

Every pytest-benchmark group compares candidates with one reference measured in the same run:
the benchmark whose `extra_info["role"]` is "reference". A candidate's figure is the
reference's mean time over its own (a speed-up: above 1 is faster). Other numbers a
benchmark records in `extra_info` (throughput, GFLOP/s, share of the matmul peak) are shown
beside it.

Groups measured in interleaved pairs (benchmarks/paired.py) are summarised first, one line a
candidate: the candidate's paired speed-up and interval, the control's (the reference paired with
itself, `extra_info["role"]` "control": how far apart the run measured identical code) and the
verdict the benchmark gave.
"""
from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path("benchmarks")
PATTERN = "latest*.json"
HIDDEN = {"role"}


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def performance_section(root: Path) -> list[str]:
    paths = sorted((root / RESULTS).glob(PATTERN))
    lines = ["## Performance", ""]
    if not paths:
        return lines + [f"No full benchmark run is committed ({RESULTS / PATTERN}); `pytest benchmarks --bench-full "
                        f"--benchmark-json={RESULTS / 'latest.json'}` writes one.", ""]
    for path in paths:
        lines += _run_section(path)
    return lines


def _run_section(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    info = data.get("machine_info", {})
    lines = [f"From `{RESULTS / path.name}` ({data.get('datetime', 'undated')}; "
             f"{info.get('cpu', {}).get('brand_raw', 'CPU')}, {info.get('cpu', {}).get('count', '?')} cores, "
             f"Python {info.get('python_version', '?')}). Each group's speed-up is the reference's mean time over "
             "the candidate's, both measured in that run.", ""]
    groups: dict[str, list[dict]] = {}
    for bench in data.get("benchmarks", []):
        groups.setdefault(bench.get("group") or bench["name"], []).append(bench)
    lines += _paired_summary(groups)
    for group, benches in groups.items():
        reference = _with_role(benches, "reference")
        extra_keys = list(dict.fromkeys(k for b in benches for k in b.get("extra_info", {}) if k not in HIDDEN))
        lines += [f"**{group}**", "",
                  "| benchmark | mean (s) | speed-up vs reference | " + " | ".join(extra_keys) + " |",
                  "|---|---|---|" + "---|" * len(extra_keys)]
        for bench in benches:
            mean = bench["stats"]["mean"]
            if reference is None:
                speedup = "—"
            elif bench is reference:
                speedup = "reference"
            else:
                speedup = f"{reference['stats']['mean'] / mean:.2f}×"
            extras = [_format(bench.get("extra_info", {}).get(k, "")) for k in extra_keys]
            lines.append(f"| {bench['name']} | {mean:.4g} | {speedup} | " + " | ".join(extras) + " |")
        lines.append("")
    return lines


def _with_role(benches: list[dict], role: str) -> dict | None:
    return next((b for b in benches if b.get("extra_info", {}).get("role") == role), None)


def _paired(bench: dict) -> str:
    info = bench.get("extra_info", {})
    return f"{info['paired_speedup_median']:.3f}× {info.get('paired_speedup_interval', '')}".rstrip()


def _paired_summary(groups: dict[str, list[dict]]) -> list[str]:
    rows = []
    for benches in groups.values():
        control = _with_role(benches, "control")
        for bench in benches:
            info = bench.get("extra_info", {})
            if "verdict" in info:
                rows.append(f"| {bench['name']} | {_paired(bench)} | "
                            f"{_paired(control) if control else '—'} | {info['verdict']} |")
    if not rows:
        return []
    return ["Measured in interleaved pairs: the median of the pairs' speed-ups with its 95% interval, "
            "beside the control's (the reference paired with itself in the same run). A row is faster "
            "or slower only where its interval lies beyond both 1 and the control's.", "",
            "| candidate | paired speed-up | control | verdict |", "|---|---|---|---|",
            *rows, ""]
