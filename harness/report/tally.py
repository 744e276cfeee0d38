"""The counts REPORT.md's first screen shows, from one function: each verdict counts once, by its last word
(the sequential verdict where seeds were added until decided at its profile, else the one on the profile's
seeds) and its evidence group (`harness.verdicts.levels`). The digest's central line, its per-profile lines
and the findings' counts all read `tally`, so they count the same verdicts; REPORT.json records each
verdict's last word, so a reader can recount them."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.report.sequential import extended
from harness.verdicts.levels import Level

Sequential = Mapping[tuple[str, str], Mapping[str, Any]]
"""Per (claim, profile), what `--until-decided` recorded there (`harness.report.sequential.sequential_entries`)."""


def last_word(verdict, sequential: Sequential | None) -> str:
    """The verdict's status, or the sequential one where seeds were added to it (or it changed)."""
    entry = (sequential or {}).get((verdict.claim, verdict.profile))
    return str(entry["status"]) if entry is not None and extended(entry) else verdict.status


@dataclass
class Tally:
    """Verdicts counted by evidence group and last word; SKIPPED ones apart, by why."""

    groups: dict[str, Counter] = field(default_factory=dict)
    unavailable: int = 0
    not_tested: int = 0

    def of(self, group: str) -> Counter:
        return self.groups.get(group, Counter())


def tally(verdicts: Iterable, levels: Mapping[tuple[str, str], Level], sequential: Sequential | None = None) -> Tally:
    """The verdicts counted by group and last word."""
    counted = Tally()
    for verdict in verdicts:
        if verdict.status == "SKIPPED":
            counted.unavailable += bool(verdict.data_unavailable)
            counted.not_tested += not verdict.data_unavailable
            continue
        group = levels[(verdict.claim, verdict.profile)].group
        counted.groups.setdefault(group, Counter())[last_word(verdict, sequential)] += 1
    return counted


def counted_decision(claim: str, by_profile: Mapping[str, Any], levels: Mapping[tuple[str, str], Level],
                           profiles: list[str], sequential: Sequential | None = None) -> tuple[str, str] | None:
    """(last word, profile) of the largest profile whose last word on the claim is PASS or FAIL with its
    models at the level LEARNED or above, or None: the one verdict the central line counts the claim by."""
    found = None
    for profile in profiles:
        verdict = by_profile.get(profile)
        level = levels.get((claim, profile))
        if verdict is None or level is None or level.group != "learned":
            continue
        said = last_word(verdict, sequential)
        if said in ("PASS", "FAIL"):
            found = (said, profile)
    return found
