"""Parameter and multiply-accumulate fractions of width-p prefix sub-models (HAS-FL §3.4)."""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.runners.context import RunContext
from harness.runners.model_config import ModelConfig, build_model_family, example_input
from methods.costs import cost_fractions, mac_count, parameter_count

# fedclaims behaviour version: 1


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: ModelConfig
    widths: list[float] = Field(default=[0.25, 0.5, 0.75, 1.0], min_length=2)


def _power_law_exponent(widths: list[float], fractions: list[float]) -> float:
    """Least-squares slope of log(fraction) against log(width)."""
    slope, _ = np.polyfit(np.log(widths), np.log(fractions), 1)
    return float(slope)


def run(config: Config, seed: int, context: RunContext) -> dict:
    family = build_model_family(config.model)
    sample = example_input(config.model)
    full = family.build()
    rows = []
    for width in config.widths:
        params, macs = cost_fractions(family, width, sample)
        rows.append({"width": width, "param_fraction": params, "mac_fraction": macs})
    widths = [row["width"] for row in rows]
    return {
        "full_parameters": parameter_count(full),
        "full_macs": mac_count(full, sample),
        "widths": rows,
        "param_exponent": _power_law_exponent(widths, [r["param_fraction"] for r in rows]),
        "mac_exponent": _power_law_exponent(widths, [r["mac_fraction"] for r in rows]),
    }
