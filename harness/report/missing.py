"""What a shown profile still lacks: its planned runs without a record, and what they would cost.

A profile shown from stored records only (one run by hand, e.g. `learning`, whose runs take hours)
may be partly run. Its claims without records are SKIPPED; this section says how many runs each
experiment and variant still needs and estimates their compute from the run times measured at
the same profile (`harness.running.run_costs`).
"""
from __future__ import annotations

from collections import defaultdict

from harness.datasets.registry import UNAVAILABLE
from harness.running.planning import RunRequest
from harness.running.run_costs import MeasuredCosts


def missing_runs_section(requests: list[RunRequest], records: dict[str, dict | None], profiles: list[str],
                         workers: int) -> list[str]:
    """Markdown lines (none when every runnable run of the profiles is stored)."""
    rows, totals = [], {}
    for profile in profiles:
        at_profile = [r for r in requests if r.profile == profile
                      and UNAVAILABLE not in r.datasets.values()]
        stored = [r for r in at_profile if records.get(r.key) is not None]
        missing = [r for r in at_profile if records.get(r.key) is None]
        if not missing or not stored:
            continue
        costs = MeasuredCosts(stored, records)
        by_variant = defaultdict(list)
        for request in missing:
            by_variant[(request.experiment, request.variant)].append(request)
        total = 0.0
        for (experiment, variant), requests_of_variant in by_variant.items():
            seeds = [request.seed for request in requests_of_variant]
            estimate = costs.of(requests_of_variant[0])
            each, basis = estimate.seconds, estimate.basis
            cost = "unknown" if each is None else f"{each * len(seeds):,.0f} s"
            total += (each or 0.0) * len(seeds)
            rows.append(f"| {profile} | {experiment} | {variant} | {', '.join(map(str, sorted(seeds)))} | "
                        f"{cost} | {basis} |")
        totals[profile] = (len(missing), total)
    if not rows:
        return []
    summary = "; ".join(f"`{p}`: {n} runs, about {s / 3600:.1f} h of compute, {s / 3600 / workers:.1f} h of wall "
                        f"time on {workers} workers" for p, (n, s) in totals.items())
    return ["## Runs still missing", "",
            "Profiles shown from stored records whose planned runs are not all stored: their claims without records "
            f"are SKIPPED above. To finish them: {summary}. `fedclaims verify --profile P` runs what is missing "
            "(resumable: every finished run is stored).", "",
            "| profile | experiment | variant | seeds missing | compute | measured from |", "|---|---|---|---|---|---|",
            *rows, ""]
