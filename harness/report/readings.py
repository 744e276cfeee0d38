"""The readings beside a claim's verdicts in its REPORT detail (`Verdict.readings`): the verdict of an
expectation the claim replaced, with the date and commit of the change, and what the span of the paper's
own runs predicts; and where seeds added until decided were recorded before its expectation changed."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.report.cells import cell
from harness.schema.claim import Claim


def reading_lines(per_profile: Mapping[str, Any], profiles: list[str]) -> list[str]:
    """One line per reading per profile: '- `learning`, before the change of 2026-12-04 (commit 8507a06):
    in [0.575, 0.695] on every seed: **FAIL** on seeds 0, 1, 2, 3 — 1 of 4 seeds miss it …'."""
    lines = []
    for profile in profiles:
        verdict = per_profile.get(profile)
        for reading in (verdict.readings if verdict is not None else []):
            on = f" on seeds {', '.join(map(str, reading['seeds']))}" if reading.get("seeds") else ""
            lines.append(f"- `{profile}`, {cell(reading['label'])}: **{reading['status']}**{on} — "
                         f"{cell(reading['text'].split(' — power:')[0])}")
    return ["", "Beside the verdicts:", *lines] if lines else []


def recorded_before_change(claim: Claim, profile: str, entry: Mapping[str, Any]) -> str | None:
    """Why a sequential entry is no verdict of the claim's expectation now: its looks do not record the
    expectation's change, so they read seeds run before it (None: it is one)."""
    change = claim.change_at(profile)
    if change is None or (entry.get("changed") or {}).get("commit") == change.commit:
        return None
    return (f"Seeds added until decided at `{profile}`: the recorded looks do not record its expectation's change of "
            f"{change.text()}, so they read seeds run before it and are no verdict of the expectation now; the next "
            f"`fedclaims verify --profile {profile} --until-decided` plans it anew on the seeds run after the change.")
