"""The committed regression baseline: verdicts and observed numbers of one profile.

A check fails on any changed verdict; on any observed number that drifted beyond the
tolerance the baseline states (per claim, else the file's default); on a series or seed
the baseline has not recorded; on any ERROR (an error is never an accepted outcome); and on
a baseline recorded for another profile. A FAIL is kept in the baseline with its numbers: it
documents a claim that does not reproduce, and the check then expects exactly that failure.
A claim whose data was unavailable on the recording machine is stored as "unavailable here"
rather than as a verdict; where the data exists, it is checked against its own expectation.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.store import json_safe
from harness.verify import ERROR, FAIL, Verdict

DEFAULT_TOLERANCE = {"absolute": 1e-9, "relative": 1e-6}
UNAVAILABLE = "unavailable here"


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
    for label in current.keys() - recorded.keys():
        drifts.append(f"series {label!r} is not in the baseline (record it with `fedclaims baseline update`)")
    for label, numbers in recorded.items():
        now = current.get(label)
        if now is None:
            drifts.append(f"series {label!r} is no longer observed")
            continue
        recorded_values = numbers.get("values", {})
        for seed in now["values"].keys() - recorded_values.keys():
            drifts.append(f"{label} seed {seed} is not in the baseline (record it with `fedclaims baseline update`)")
        for seed, value in recorded_values.items():
            if seed not in now["values"]:
                drifts.append(f"{label} seed {seed} is no longer observed")
            elif not _close(now["values"][seed], value, tolerance):
                drifts.append(f"drift beyond tolerance {tolerance}: {label} seed {seed}: "
                              f"{now['values'][seed]} vs baseline {value}")
    return drifts


def compare_one(verdict: Verdict, entry: dict[str, Any] | None, default: dict[str, float]) -> list[str]:
    """What differs between one verdict and its baseline entry (empty: unchanged)."""
    if verdict.status == ERROR:
        return [f"ERROR ({verdict.reason}); an error is never an accepted baseline outcome"]
    if entry is None:
        return ["not in the baseline (run `fedclaims baseline update` to record it)"]
    if entry["status"] == UNAVAILABLE:
        if verdict.data_unavailable or verdict.status != FAIL:
            return []
        return [f"its data was unavailable where the baseline was recorded; here it FAILs its expectation "
                f"({verdict.reason})"]
    if verdict.data_unavailable:
        return [f"the baseline records {entry['status']}, but the data is unavailable here ({verdict.reason})"]
    if verdict.status != entry["status"]:
        return [f"verdict changed from {entry['status']} to {verdict.status} ({verdict.reason})"]
    if entry.get("compare") == "verdict":
        return []
    tolerance = {**default, **entry.get("tolerance", {})}
    return _number_drift(json_safe(verdict.numbers), entry.get("numbers", {}), tolerance)


def compare(verdicts: list[Verdict], baseline: dict[str, Any], complete: bool = True) -> list[Difference]:
    """Differences of the verdicts from the baseline; `complete`: the verdicts cover every claim."""
    profile = baseline.get("profile")
    wrong = sorted({v.profile for v in verdicts if v.profile != profile})
    if wrong:
        return [Difference("<baseline>", f"recorded for profile {profile!r}, compared with verdicts of {wrong}")]
    default = {**DEFAULT_TOLERANCE, **baseline.get("tolerance", {})}
    entries = baseline["claims"]
    differences = [Difference(v.claim, message) for v in verdicts
                   for message in compare_one(v, entries.get(v.claim), default)]
    if complete:
        seen = {v.claim for v in verdicts}
        differences += [Difference(claim, "in the baseline but no longer verified") for claim in entries
                        if claim not in seen]
    return differences


def _entry(verdict: Verdict, old: dict[str, Any], varying: set[str]) -> dict[str, Any]:
    if verdict.data_unavailable:
        return {"status": UNAVAILABLE, "reason": verdict.reason}
    entry = {"status": verdict.status, "reason": verdict.reason, "observed": verdict.observed,
             "numbers": json_safe(verdict.numbers)}
    if "tolerance" in old:
        entry["tolerance"] = old["tolerance"]
    if verdict.claim in varying:
        entry["compare"] = "verdict"
    return entry


def updated(verdicts: list[Verdict], profile: str, previous: dict[str, Any] | None,
            varying: set[str] = frozenset(), complete: bool = True) -> dict[str, Any]:
    """A new baseline from the verdicts, keeping the tolerances stated in the previous one.

    Claims in `varying` observe measurements that differ between runs (timings); their
    entries compare the verdict only. With `complete` False (a selection was verified),
    the previous entries of claims not among the verdicts are kept.
    """
    previous = previous or {}
    old = previous.get("claims", {})
    claims = {} if complete else dict(old)
    for v in verdicts:
        if v.profile == profile:
            claims[v.claim] = _entry(v, old.get(v.claim, {}), varying)
    return {"profile": profile, "tolerance": previous.get("tolerance", DEFAULT_TOLERANCE),
            "note": previous.get("note", "Rewritten only by `fedclaims baseline update`; review its diff like code."),
            "claims": dict(sorted(claims.items()))}


def write(path: Path, data: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n", encoding="utf-8")
