"""The planning spread of a claim's design: the stored per-seed numbers of the series it reads.

A series is an experiment and an observation (variants, metric and its arguments), whatever claim reads
it: a new claim on a recorded series is planned from that recording (`baseline_spreads`).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.design.spreads import SeriesNumbers, StoredSeries

if TYPE_CHECKING:
    from harness.loading.catalog import Catalog
    from harness.schema import claim as schema

SpreadSource = Callable[["schema.Claim", str], StoredSeries | None]
"""(claim, profile) -> the stored numbers of the series the claim reads there, or None."""


def series_key(claim: schema.Claim) -> str:
    """The series a claim reads: its experiment and observation (variants, metric and its arguments), not its id
    nor its expectation, so claims testing different things of one series share it."""
    return json.dumps([claim.experiment, claim.observe.model_dump(mode="json")], sort_keys=True)


def _seeds_of(numbers: SeriesNumbers) -> int:
    return min((int(data.get("n") or len(data.get("values") or {})) for data in numbers.values()), default=0)


def baseline_spreads(folder: Path, catalog: Catalog) -> SpreadSource:
    """Stored numbers from the committed baselines in `folder` (`<profile>.json`, each read once), found by
    the series a claim reads: the recording of any claim of the catalog on that series (the one with the
    most seeds), and only where none exists the claim's own recording under its id (its observation has
    changed since)."""
    loaded: dict[str, tuple[dict[str, dict], dict[str, list[str]]]] = {}

    def recorded(profile: str) -> tuple[dict[str, dict], dict[str, list[str]]]:
        if profile not in loaded:
            try:
                claims = json.loads((Path(folder) / f"{profile}.json").read_text(encoding="utf-8")).get("claims", {})
            except (OSError, ValueError, AttributeError):
                claims = {}
            numbers = {}
            for claim_id, entry in claims.items() if isinstance(claims, dict) else ():
                found = {label: data for label, data in ((entry or {}).get("numbers") or {}).items()
                         if not label.startswith("spread reference:")}
                if found:
                    numbers[claim_id] = found
            claims_now = {loaded.id: loaded.claim for loaded in catalog.claims}
            by_series: dict[str, list[str]] = {}
            for claim_id in numbers:
                if claim_id in claims_now:
                    by_series.setdefault(series_key(claims_now[claim_id]), []).append(claim_id)
            loaded[profile] = numbers, by_series
        return loaded[profile]

    def stored(claim: schema.Claim, profile: str) -> StoredSeries | None:
        numbers, by_series = recorded(profile)
        same = by_series.get(series_key(claim), [])
        if same:
            best = max(same, key=lambda claim_id: (_seeds_of(numbers[claim_id]), claim_id == claim.id))
            whose = "this claim's" if best == claim.id else f"{best}'s"
            return StoredSeries(numbers[best], f"the series {', '.join(numbers[best])} as {whose} {profile} baseline "
                                               f"recorded it, {_seeds_of(numbers[best])} seeds")
        if claim.id in numbers:
            return StoredSeries(numbers[claim.id], f"this claim's {profile} baseline, recorded before its observation "
                                                   f"changed ({_seeds_of(numbers[claim.id])} seeds)")
        return None

    return stored


def no_stored_spreads(claim: schema.Claim, profile: str) -> None:
    """The defaults only."""
    return None
