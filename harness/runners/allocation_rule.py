"""Sweep HAS-FL's allocation rule (Eq. 6) for one capacity tier.

A federation of `federation_size` clients has mean estimate exactly 1; client 0's
relative estimate H~/H-bar sweeps [0, ratio_max] on a grid (the range of allocations
and the curve), and bisection on the same rule locates where the allocation first
reaches the cap to within `threshold_resolution`.
"""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.runners.context import RunContext
from methods.allocation import allocate

# fedclaims behaviour version: 1


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    p_max: float = Field(gt=0.0, le=1.0)
    p_min: float = Field(0.4, gt=0.0, le=1.0)
    gamma: float = Field(0.25, ge=0.0, description="0 gives every estimate the same width (§3.3)")
    federation_size: int = Field(20, ge=2)
    ratio_max: float = Field(5.0, gt=0.0)
    ratio_step: float = Field(0.001, gt=0.0)
    threshold_resolution: float = Field(1e-9, gt=0.0)


def _allocation(ratio: float, config: Config) -> float:
    n = config.federation_size
    h_tilde = np.concatenate([[ratio], np.full(n - 1, (n - ratio) / (n - 1))])
    p_max = np.full(n, 1.0)
    p_max[0] = config.p_max
    return float(allocate(h_tilde, p_max, config.p_min, config.gamma)[0])


def _cap_threshold(config: Config) -> float | None:
    """Smallest ratio whose allocation reaches the cap, by bisection on the monotone rule."""
    def at_cap(ratio: float) -> bool:
        return _allocation(ratio, config) >= config.p_max - 1e-12
    low, high = 0.0, config.ratio_max
    if at_cap(low):
        return 0.0
    if not at_cap(high):
        return None
    while high - low > config.threshold_resolution:
        middle = (low + high) / 2
        low, high = (low, middle) if at_cap(middle) else (middle, high)
    return high


def run(config: Config, seed: int, context: RunContext) -> dict:
    ratios = np.round(np.arange(0.0, config.ratio_max + config.ratio_step / 2, config.ratio_step), 12)
    allocations = np.array([_allocation(ratio, config) for ratio in ratios])
    stride = max(1, len(ratios) // 200)
    return {
        "threshold_resolution": config.threshold_resolution,
        "cap_reached_at": _cap_threshold(config),
        "min_allocation": float(allocations.min()),
        "max_allocation": float(allocations.max()),
        "curve": {"ratio": ratios[::stride].tolist(), "allocation": allocations[::stride].tolist()},
    }
