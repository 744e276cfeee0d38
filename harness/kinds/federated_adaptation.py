"""HAS-FL's adaptation steps in a federated record: Figure 4's H-bar and mean allocation, and
the channels the final allocation leaves to no client.

Each adaptation records `h_bar` (the mean of H~ after that round's estimate update, before any
rescaling), whether it rescaled H~ to unit mean, and the allocation of every client. With
T_norm a multiple of T_adapt (the paper's 20 and 5) every rescaling falls on an adaptation
step, so the steps between two rescalings are one cycle of the sawtooth.
"""
from __future__ import annotations

import math
import statistics

from harness.kinds.base import NotApplicable
from methods.extraction import kept_units


def _adaptations(result) -> list[dict]:
    steps = result["adaptations"]
    if not steps:
        raise NotApplicable("this run made no adaptation step (only HAS-FL re-allocates)")
    if "h_bar" not in steps[0]:
        raise NotApplicable("this record has no h_bar per adaptation (made before it was recorded): re-run it")
    return steps


def _complete_cycles(steps: list[dict]) -> list[list[dict]]:
    """The adaptation steps up to and including each rescaling; steps after the last are left out."""
    cycles, current = [], []
    for step in steps:
        current.append(step)
        if step["rescaled"]:
            cycles.append(current)
            current = []
    return cycles


def h_bar_cycle_peak(result, args) -> float:
    """Mean over complete cycles of the largest H-bar before the cycle's rescaling."""
    cycles = _complete_cycles(_adaptations(result))
    return statistics.fmean(max(step["h_bar"] for step in cycle) for cycle in cycles) if cycles else math.nan


def h_bar_rise_fraction(result, args) -> float:
    """Share of adaptation steps at which H-bar rose from its value after the previous step
    (1 after a rescaling)."""
    steps = _adaptations(result)
    rises = [step["h_bar"] > (1.0 if previous["rescaled"] else previous["h_bar"])
             for previous, step in zip(steps, steps[1:])]
    return statistics.fmean(rises) if rises else math.nan


def _mean_allocations(result) -> list[float]:
    return [statistics.fmean(step["allocation"]) for step in _adaptations(result)]


def allocation_mean_lowest(result, args) -> float:
    return min(_mean_allocations(result))


def allocation_mean_highest(result, args) -> float:
    return max(_mean_allocations(result))


def final_untrained_unit_fraction(result, args) -> float:
    """Mean over the sliced layers of the share of units outside the largest final allocation's
    prefix: the channels no client's final sub-model holds (nested extraction)."""
    steps = result["adaptations"]
    if not steps:
        raise NotApplicable("this run made no adaptation step (only HAS-FL re-allocates)")
    largest = max(steps[-1]["allocation"])
    sizes = [len(counts) for counts in result["unit_update_counts"].values()]
    return statistics.fmean(1.0 - kept_units(n, largest) / n for n in sizes)
