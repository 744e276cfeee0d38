"""Writing a baseline: a new one from verified claims (`updated`), the recorded observations decided again
under today's rules (`redecided`), and the file written so that its diff shows only what changed (`write`)."""
from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from harness.regression import drift as drift_io
from harness.regression import jsonedit
from harness.regression.baseline import DEFAULT_TOLERANCE, UNAVAILABLE
from harness.verdicts.verify import Verdict
from methods.plain import json_safe


def _entry(verdict: Verdict, old: dict[str, Any], varying: Collection[str]) -> dict[str, Any]:
    if verdict.data_unavailable:
        return {"status": UNAVAILABLE, "reason": verdict.reason}
    entry = {"status": verdict.status, "reason": verdict.reason, "observed": verdict.observed,
             "experiment": verdict.experiment, "runs": drift_io.runs_identity(verdict.runs),
             "numerics": verdict.numerics, "margins": json_safe(verdict.margins),
             "evidence": json_safe(verdict.evidence), "numbers": json_safe(verdict.numbers)}
    if "tolerance" in old:
        entry["tolerance"] = old["tolerance"]
    if verdict.claim in varying:
        entry["compare"] = "verdict"
    return entry


def updated(verdicts: list[Verdict], profile: str, previous: dict[str, Any] | None,
            varying: Collection[str] = frozenset(), complete: bool = True,
            numerics: dict[str, Any] | None = None) -> dict[str, Any]:
    """A new baseline from the verdicts, keeping the tolerances and the drift measurement stated
    in the previous one.

    Claims in `varying` observe measurements that differ between runs (timings); their entries
    compare the verdict only. With `complete` False (a selection was verified), the previous
    entries of claims not among the verdicts are kept, and so is every numerics description the
    previous one recorded. `numerics`: the description of every numerics fingerprint of the
    records behind the verdicts. Sections the update does not own (a note of one's own) are kept.
    """
    previous = previous or {}
    old = previous.get("claims", {})
    claims = {} if complete else dict(old)
    for v in verdicts:
        if v.profile == profile:
            claims[v.claim] = _entry(v, old.get(v.claim, {}), varying)
    used = {fp for entry in claims.values() for fp in entry.get("numerics", [])}
    recorded, measured = previous.get("numerics", {}), numerics or {}
    known = {**recorded, **measured} if complete else {**measured, **recorded}
    data = {"profile": profile, "tolerance": previous.get("tolerance", DEFAULT_TOLERANCE),
            "note": previous.get("note", "Rewritten only by `fedclaims baseline update`; review its diff like code."),
            "numerics": {fp: known[fp] for fp in sorted(used) if fp in known}}
    if "drift" in previous:
        data["drift"] = previous["drift"]
    data["claims"] = dict(sorted(claims.items()))
    return {**previous, **data}


def redecided(catalog, baseline: dict[str, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """The baseline with every recorded observation decided again under the current rules and
    expectations (`harness.verdicts.archive.reverify`): numbers, numerics and run identities stay as they
    were recorded; verdicts, reasons, margins and evidence are rewritten. For a change of the
    verification rules, not of methods (which needs new records: `update`). A claim added since
    the recording gets the entry of the claim that recorded the same observation; one with no
    recorded observation is left out. Returns the baseline and a line per verdict that moved."""
    from harness.verdicts.archive import baseline_archive, reverify
    from harness.verdicts.verify import apply_families
    profile = baseline["profile"]
    archive = baseline_archive(path, baseline)
    old = baseline["claims"]
    claims, verdicts = {}, []
    for loaded in catalog.claims:
        entry = old.get(loaded.id)
        if entry is not None and not entry.get("numbers"):
            claims[loaded.id] = entry  # data unavailable where it was recorded: nothing to decide again
            continue
        verdict = reverify(catalog, loaded, profile, archive)
        if verdict.numbers:
            verdicts.append(verdict)
        elif entry is None and (lacking := _unavailable_in(catalog, old, loaded.claim.experiment)) is not None:
            claims[loaded.id] = lacking  # a new claim on an experiment whose data was unavailable there
    apply_families(verdicts, lambda v: catalog.claim(v.claim).claim.level_at(v.profile))
    moved = []
    for verdict in verdicts:
        source = old.get(verdict.claim) or next(e for e in old.values() if e.get("numbers") is verdict.numbers)
        varying = {verdict.claim} if source.get("compare") == "verdict" else set()
        entry = {**_entry(verdict, old.get(verdict.claim, {}), varying), "runs": source["runs"]}
        claims[verdict.claim] = entry
        before = old.get(verdict.claim, {}).get("status", "not recorded")
        if before != verdict.status:
            moved.append(f"{verdict.claim}: {before} → {verdict.status}")
    return {**baseline, "claims": dict(sorted(claims.items()))}, moved


def _unavailable_in(catalog, entries: dict[str, Any], experiment: str) -> dict[str, Any] | None:
    """An entry recording that an experiment's data was unavailable where the baseline was made."""
    return next((entry for claim, entry in entries.items() if entry.get("status") == UNAVAILABLE
                 and claim in {c.id for c in catalog.claims} and catalog.claim(claim).claim.experiment == experiment),
                None)


def write(path: Path, data: dict[str, Any]) -> None:
    """Write the baseline; over an earlier file, everything whose content is unchanged keeps the
    earlier file's text (`harness.regression.jsonedit`), so that the diff shows only what changed."""
    path = Path(path)
    text = json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n"
    if path.is_file():
        text = jsonedit.edited(path.read_text(encoding="utf-8"), text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
