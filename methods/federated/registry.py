"""Allocation policies by name: one entry per policy."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from methods.federated.hasfl import HasflPolicy
from methods.federated.policies import (AllocationPolicy, CapPolicy, FjordPolicy, FullPolicy,
                                        RandomBudgetPolicy, UniformPolicy)

if TYPE_CHECKING:
    from methods.federated.config import FederationConfig

PolicyFactory = Callable[["FederationConfig", np.ndarray, int], AllocationPolicy]

POLICIES: dict[str, PolicyFactory] = {
    "full": lambda cfg, caps, seed: FullPolicy(),
    "heterofl": lambda cfg, caps, seed: CapPolicy(caps),
    "uniform": lambda cfg, caps, seed: UniformPolicy(caps, cfg.uniform_width),
    "fjord": lambda cfg, caps, seed: FjordPolicy(caps, cfg.tiers, seed),
    "random_budget": lambda cfg, caps, seed: RandomBudgetPolicy(
        caps, float(cfg.budget), min(cfg.tiers), seed),
    "hasfl": lambda cfg, caps, seed: HasflPolicy(
        caps, p_min=cfg.p_min, gamma=cfg.gamma, beta=cfg.beta, t_warm=cfg.t_warm,
        t_adapt=cfg.t_adapt, t_norm=cfg.t_norm, coverage_guarantee=cfg.coverage_guarantee),
}


def build_policy(cfg: "FederationConfig", caps: np.ndarray, seed: int) -> AllocationPolicy:
    """The policy ``cfg.policy`` for clients with ``caps``."""
    return POLICIES[cfg.policy](cfg, np.asarray(caps, dtype=np.float64), seed)
