"""The committed regression baseline: verdicts and observed numbers of one profile.

A check fails on any changed verdict, and on any observed number that drifted
beyond the tolerance the baseline states (per claim, else the file's default).
A FAIL is kept in the baseline with its numbers: it documents a claim that does
not reproduce, and the check then expects exactly that failure.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.store import json_safe
from harness.verify import Verdict

DEFAULT_TOLERANCE = {"absolute": 1e-9, "relative": 1e-6}


@dataclass(frozen=True)
class Difference:
    claim: str
    message: str

    def __str__(self) -> str:
        return f"{self.claim}: {self.message}"


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read the baseline ({error})") from error
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ValueError(f"{path}: a baseline is a JSON object with a 'claims' mapping")
    return data


def _close(current: float | None, recorded: float | None, tolerance: dict[str, float]) -> bool:
    if current is None or recorded is None:
        return current is recorded
    if math.isinf(current) or math.isinf(recorded):
        return current == recorded
    return abs(current - recorded) <= tolerance["absolute"] + tolerance["relative"] * abs(recorded)


def _number_drift(current: dict, recorded: dict, tolerance: dict[str, float]) -> list[str]:
    drifts = []
    for label, numbers in recorded.items():
        now = current.get(label)
        if now is None:
            drifts.append(f"series {label!r} is no longer observed")
            continue
        for seed, value in numbers.get("values", {}).items():
            if not _close(json_safe(now["values"].get(seed)), value, tolerance):
                drifts.append(f"{label} seed {seed}: {now['values'].get(seed)} vs baseline {value}")
    return drifts


def compare_one(verdict: Verdict, entry: dict[str, Any] | None, default: dict[str, float]) -> list[str]:
    """What differs between one verdict and its baseline entry (empty: unchanged)."""
    if entry is None:
        return ["not in the baseline (run `fedclaims baseline update` to record it)"]
    if verdict.status != entry["status"]:
        return [f"verdict changed from {entry['status']} to {verdict.status} ({verdict.reason})"]
    if entry.get("compare") == "verdict":
        return []
    tolerance = {**default, **entry.get("tolerance", {})}
    return [f"drift beyond tolerance {tolerance}: {d}" for d in _number_drift(json_safe(verdict.numbers),
                                                                              entry.get("numbers", {}), tolerance)]


def compare(verdicts: list[Verdict], baseline: dict[str, Any], complete: bool = True) -> list[Difference]:
    default = {**DEFAULT_TOLERANCE, **baseline.get("tolerance", {})}
    entries = baseline["claims"]
    differences = [Difference(v.claim, message) for v in verdicts
                   for message in compare_one(v, entries.get(v.claim), default)]
    if complete:
        seen = {v.claim for v in verdicts}
        differences += [Difference(claim, "in the baseline but no longer verified") for claim in entries
                        if claim not in seen]
    return differences


def updated(verdicts: list[Verdict], profile: str, previous: dict[str, Any] | None,
            varying: set[str] = frozenset()) -> dict[str, Any]:
    """A new baseline from the verdicts, keeping the tolerances stated in the previous one.

    Claims in `varying` observe measurements that differ between runs (timings); their
    entries compare the verdict only.
    """
    previous = previous or {}
    old = previous.get("claims", {})
    claims = {}
    for v in verdicts:
        if v.profile != profile:
            continue
        entry = {"status": v.status, "reason": v.reason, "observed": v.observed, "numbers": json_safe(v.numbers)}
        if "tolerance" in old.get(v.claim, {}):
            entry["tolerance"] = old[v.claim]["tolerance"]
        if v.claim in varying:
            entry["compare"] = "verdict"
        claims[v.claim] = entry
    return {"profile": profile, "tolerance": previous.get("tolerance", DEFAULT_TOLERANCE),
            "note": previous.get("note", "Rewritten only by `fedclaims baseline update`; review its diff like code."),
            "claims": dict(sorted(claims.items()))}


def write(path: Path, data: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n", encoding="utf-8")
