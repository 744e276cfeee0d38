"""Apply Eq. 6 and the coverage guarantee to a given federation of estimates and caps."""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.runners.context import RunContext
from methods.allocation import allocate, apply_coverage_guarantee

# fedclaims behaviour version: 1


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    h_tilde: list[float] = Field(min_length=2)
    p_max: list[float] = Field(min_length=2)
    p_min: float = 0.4
    gamma: float = 0.25
    coverage_guarantee: bool = True

    @model_validator(mode="after")
    def _same_length(self):
        if len(self.h_tilde) != len(self.p_max):
            raise ValueError(f"h_tilde has {len(self.h_tilde)} clients but p_max has {len(self.p_max)}")
        return self


def run(config: Config, seed: int, context: RunContext) -> dict:
    p_max = np.asarray(config.p_max)
    rule = allocate(np.asarray(config.h_tilde), p_max, config.p_min, config.gamma)
    final = apply_coverage_guarantee(rule, p_max) if config.coverage_guarantee else rule
    return {"rule_allocation": rule.tolist(), "allocation": final.tolist(), "p_max": p_max.tolist()}
