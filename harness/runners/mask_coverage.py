"""Rounds until every index group is covered m times, for a mask generator (FedRolex A.1).

The appendix's model: a layer of I index groups and one group kept per round
(width 1/I), drawn by the real extraction functions training uses. Each trial
counts rounds until every group has been kept at least m times, up to a horizon.
With `cycles`, a trial instead runs exactly `cycles` full cycles of the rolling
window (I rounds each) at the given width and records how evenly the groups were
kept at every cycle boundary. The groups kept in the first trial's first I rounds are recorded
too (FedRolex's worked example of the rolling window).
"""
from __future__ import annotations

import math

import torch
from pydantic import BaseModel, ConfigDict, Field

from harness.runners.context import RunContext
from methods.extraction import ExtractionMode, select_units
from methods.seeding import setup_seed

# fedclaims behaviour version: 1


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extraction: ExtractionMode
    index_groups: int = Field(ge=2)
    coverage: int = Field(1, ge=1)
    width: float | None = Field(None, gt=0.0, le=1.0)
    trials: int = Field(200, ge=1)
    horizon_factor: float = Field(20.0, gt=1.0)
    cycles: int | None = Field(None, ge=1)


def coupon_collector_rounds(groups: int, coverage: int) -> float:
    """The appendix's asymptotic expectation: I log I + I (m - 1) log log I."""
    return groups * math.log(groups) + groups * (coverage - 1) * math.log(math.log(groups))


def run(config: Config, seed: int, context: RunContext) -> dict:
    groups, m = config.index_groups, config.coverage
    width = config.width if config.width is not None else 1.0 / groups
    horizon = config.cycles * groups if config.cycles else int(config.horizon_factor * m * groups)
    layer = {"layer": groups}
    rounds, uncovered, boundaries, first_trial_windows = [], [], [], []
    for trial in range(config.trials):
        generator = torch.Generator().manual_seed(setup_seed(seed, "trial", trial))
        counts = torch.zeros(groups, dtype=torch.long)
        covered_at = None
        for t in range(horizon):
            kept = select_units(layer, width, config.extraction, t, generator)["layer"]
            counts[kept] += 1
            if trial == 0 and t < groups:
                first_trial_windows.append(sorted(int(g) for g in kept))
            if covered_at is None and int(counts.min()) >= m:
                covered_at = t + 1
                if not config.cycles:
                    break
            if config.cycles and (t + 1) % groups == 0:
                as_float = counts.double()
                boundaries.append({"trial": trial, "round": t + 1, "min": int(counts.min()), "max": int(counts.max()),
                                   "cv": float(as_float.std(unbiased=False) / as_float.mean())})
        rounds.append(covered_at)
        uncovered.append(float((counts < m).float().mean()))
        context.progress((trial + 1) / config.trials, f"trial {trial + 1}/{config.trials}")
    finished = [r for r in rounds if r is not None]
    return {
        "index_groups": groups, "coverage": m, "width": width, "horizon": horizon,
        "rounds_to_cover": rounds,
        "trials_never_covered": len(rounds) - len(finished),
        "uncovered_fraction_at_end": uncovered,
        "m_times_groups": m * groups,
        "formula_rounds": coupon_collector_rounds(groups, m),
        "cycle_boundaries": boundaries,
        "first_trial_windows": first_trial_windows,
    }
