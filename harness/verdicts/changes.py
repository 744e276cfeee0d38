"""A claim whose expectation changed after seeds were run against it (`harness.schema.changes`), at
verification: the expectation now is tested only on the seeds run after the change, and the one it
replaced is read on the seeds it was written for, a reading beside the verdict.

Why fresh seeds and not a share of α: splitting α between the old and the new hypothesis keeps the
chance of a false verdict only where both were fixed before the data; a hypothesis written after
its data was seen was chosen by that data, and no level corrects for the choice. Seeds run after the
change did not shape it, so they alone test it."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from harness.loading.loaded import LoadedClaim
from harness.schema.changes import Change
from harness.schema.expectations.base import ExpectationBase
from harness.statistics.outcome import INCONCLUSIVE
from harness.statistics.power import Power
from harness.verdicts.verdict import Verdict

SEEDS_KEYED = ("values", "intervals", "clients")
"""The fields of a verdict's per-series numbers that are keyed by seed."""


def seeds_text(seeds: list[int]) -> str:
    return ", ".join(str(seed) for seed in sorted(seeds)) or "none"


def fresh_note(change: Change, fresh: list[int], seen: list[int]) -> str:
    """The note a verdict on fresh seeds carries."""
    return (f" [expectation changed on {change.text()}: tested only on the seeds run after the change "
            f"({seeds_text(fresh)}), not on seeds {seeds_text(seen)}, run before it]")


def without_fresh_seeds(verdict: Verdict, change: Change, profile: str, seen: list[int]) -> Verdict:
    """The verdict of a claim none of whose seeds at hand was run after its expectation changed."""
    verdict.status = INCONCLUSIVE
    verdict.reason = (f"its expectation changed on {change.text()} after seeds {seeds_text(seen)} had been run at "
                      f"profile {profile!r}: the new expectation is tested only on seeds run after the change, and "
                      "none of these is; seeds added until decided test it")
    verdict.power = Power("seeds", 0, None, None, "no seed run after the expectation changed").to_dict()
    return verdict


def earlier_reading(verify: Callable[..., Verdict], loaded: LoadedClaim, profile: str, change: Change,
                    seen: list[int], **kwargs: Any) -> dict[str, Any]:
    """The verdict of the expectation `change` replaced, on the seeds run before it (`verify`: the
    verification applied to the claim as it stood then, with `kwargs`), as a labelled reading."""
    before = replace(loaded, claim=loaded.claim.before(change))
    old = verify(before, seeds=seen, **kwargs) if seen else None
    expectation = before.claim.expect[profile].at_level(kwargs.get("level")).describe(loaded.claim.observe)
    return {"kind": "before-change", "label": f"before the change of {change.text()}: {expectation}",
            "date": change.date.isoformat(), "commit": change.commit, "expectation": expectation,
            "seeds": sorted(seen), "status": old.status if old else INCONCLUSIVE,
            "text": old.reason if old else "no seed of the profile was run before the change"}


def span_on_every_seed(verify: Callable[..., Verdict], loaded: LoadedClaim, expectation: ExpectationBase,
                       seeds: list[int], **kwargs: Any) -> list[dict[str, Any]]:
    """The span-of-runs readings of `expectation`, the claim's as it stands now, on every seed at hand, those
    run before the change included ([] without verifying anything where its range is no span). Such a reading
    can only contradict the paper's span (FAIL) or leave it standing (INCONCLUSIVE), never PASS the claim, so
    seeds that shaped the change cannot make it win."""
    if expectation.paper_span() is None:
        return []
    unchanged = replace(loaded, claim=loaded.claim.model_copy(update={"changed": []}))
    readings = [reading for reading in verify(unchanged, seeds=seeds, **kwargs).readings
                if reading["kind"] == "span-of-runs"]
    for reading in readings:
        reading["label"] += (", on every seed, those run before the change included (it can only "
                             "contradict the span, never PASS the claim)")
    return readings


def numbers_on(numbers: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """A verdict's per-series numbers kept to `seeds` (an archived observation read on fresh seeds)."""
    kept = {str(seed) for seed in seeds}
    return {label: {key: ({s: v for s, v in value.items() if s in kept} if key in SEEDS_KEYED
                          and isinstance(value, dict) else value) for key, value in series.items()}
            for label, series in numbers.items()}
