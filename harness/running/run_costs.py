"""What planned runs cost, from the run times stored records measured.

A run is costed at the mean `wall_seconds` of the stored runs of its experiment and variant at its
profile (its other seeds); without one, at the mean of the experiment's stored runs at that profile
(labelled an estimate: an experiment's variants share its scale, not always its cost); without
either, it is not costed. Profiles are not scaled into one another: they change several settings
at once, and no one ratio of them is known to give a run's time.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.running.planning import RunRequest
from harness.running.store import wall_seconds

NO_MEASUREMENT = "no run of the experiment measured"


@dataclass(frozen=True)
class RunCost:
    seconds: float | None
    """Single-threaded wall seconds of one run, as measured where the records were made (None: unknown)."""
    basis: str
    """What the figure rests on: "its 2 stored run(s)", an estimate from the experiment's, or NO_MEASUREMENT."""


class MeasuredCosts:
    """The run times of the stored records among some requests, by experiment, variant and profile."""

    def __init__(self, requests: Iterable[RunRequest], records: Mapping[str, dict | None]):
        self._walls: dict[tuple[str, str | None, str], list[float]] = defaultdict(list)
        for request in requests:
            if (wall := wall_seconds(records.get(request.key))) is not None:
                self._walls[(request.experiment, request.variant, request.profile)].append(wall)
                self._walls[(request.experiment, None, request.profile)].append(wall)

    def of(self, request: RunRequest) -> RunCost:
        own = self._walls.get((request.experiment, request.variant, request.profile))
        if own:
            return RunCost(statistics.fmean(own), f"its {len(own)} stored run(s)")
        experiment = self._walls.get((request.experiment, None, request.profile))
        if experiment:
            return RunCost(statistics.fmean(experiment), "the experiment's stored runs (estimate)")
        return RunCost(None, NO_MEASUREMENT)


def duration(seconds: float) -> str:
    """'0.4 s', '45 s', '12 min', '3.4 h'."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


def total_text(costs: list[RunCost], workers: int) -> str:
    """The compute of runs to be run, with how many of them it covers and what `workers` make of it."""
    if not costs:
        return "nothing to run"
    known = [c.seconds for c in costs if c.seconds is not None]
    if not known:
        return f"no estimate: none of the {len(costs)} runs to run has a measurement"
    compute = sum(known)
    unknown = len(costs) - len(known)
    covered = ("for the one run to run" if len(costs) == 1 else f"for all {len(costs)} runs to run" if not unknown
               else f"for {len(known)} of the {len(costs)} runs to run; {unknown} "
                    f"{'has' if unknown == 1 else 'have'} no measurement")
    wall = (f"about {duration(max(compute / workers, max(known)))} of wall time on {workers} workers running "
            "them side by side" if workers > 1 else "one worker runs them one after another (--workers divides it)")
    return f"about {duration(compute)} of compute {covered}; {wall}"
