"""What REPORT.md says about numerics: under which numerics its records were computed, how near
each verdict is to another one against the drift measured across numerics, and the claims whose
verdict differs between recordings of the same code under other numerics."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.numerics import summary
from harness.regression import baseline as baseline_io
from harness.regression import drift, nearness
from harness.verdicts.verify import Verdict


def committed_baseline(root: Path, profile: str) -> dict[str, Any]:
    path = root / "baselines" / f"{profile}.json"
    try:
        return baseline_io.load(path) if path.exists() else {}
    except ValueError:
        return {}


def fragility(verdict: Verdict, baselines: dict[str, dict[str, Any]]) -> nearness.Fragility | None:
    return nearness.fragility(verdict, baselines.get(verdict.profile, {}).get("drift") or {})


def margin_cell(verdict: Verdict, baselines: dict[str, dict[str, Any]]) -> str:
    """The margin of a verdict in its test's own terms, and whether it is fragile."""
    found = fragility(verdict, baselines)
    if found is None:
        return verdict.margin or "—"
    mark = "**fragile**: " if found.fragile else ""
    return f"{mark}{found.text()}; {verdict.margin}"


def numerics_lines(descriptions: dict[str, dict[str, Any]], counts: dict[str, int]) -> list[str]:
    lines = ["### Numerics of the records", "",
             "Each record stores the numerics it was computed under (library builds, the kernels they selected "
             "for the CPU, pins, device, threads); records with one fingerprint are expected to be bit-identical. "
             "A claim whose records come from more than one says so in its reason.", ""]
    for fingerprint, count in sorted(counts.items(), key=lambda item: -item[1]):
        lines.append(f"- {count} records: "
                     f"{summary(descriptions.get(fingerprint)) if fingerprint in descriptions else f'`{fingerprint}`'}")
    return lines + [""]


def recordings(root: Path, profile: str) -> dict[str, dict[str, Any]]:
    """The baseline and the recordings beside it of one profile, each as {claim: entry}."""
    found = {}
    data = committed_baseline(root, profile)
    if data:
        found[f"baselines/{profile}.json"] = data["claims"]
    for file in sorted((root / "baselines" / "numerics").glob(f"{profile}-*.json")):
        try:
            found[f"baselines/numerics/{file.name}"] = drift.recording(json.loads(file.read_text(encoding="utf-8")),
                                                                       profile, file.name)
        except (ValueError, json.JSONDecodeError):
            continue
    return found


def across_numerics_lines(root: Path, profiles: list[str]) -> list[str]:
    """Claims whose verdict differs between recordings of the same records under other numerics."""
    lines = ["## Verdicts across numerics", "",
             "The same code, configs and seeds recorded under other numerics (another CPU, or this one with its "
             "kernels pinned to another instruction set; `baselines/numerics/`). A claim is listed where the "
             "verdicts differ; a move between INCONCLUSIVE and a decision is what a fragile verdict does.", ""]
    rows = []
    for profile in profiles:
        recorded = recordings(root, profile)
        if len(recorded) < 2:
            continue
        lines.append(f"- `{profile}`: " + ", ".join(f"`{name}`" for name in recorded))
        claims = sorted({claim for entries in recorded.values() for claim in entries})
        for claim in claims:
            by_records: dict[str, dict[str, str]] = {}
            for name, entries in recorded.items():
                entry = entries.get(claim)
                if entry and "status" in entry and entry.get("runs"):
                    by_records.setdefault(entry["runs"], {})[name] = entry["status"]
            for statuses in by_records.values():
                if len(set(statuses.values())) > 1:
                    rows.append(f"| `{claim}` | {profile} | "
                                + "; ".join(f"{name}: {status}" for name, status in statuses.items()) + " |")
    if not rows:
        return lines + ["", "No claim's verdict differs between the recordings.", ""]
    return lines + ["", "| claim | profile | verdicts |", "|---|---|---|", *rows, ""]
