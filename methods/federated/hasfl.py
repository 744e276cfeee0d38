"""HAS-FL's adaptive allocation policy (§3.3, Algorithm 1 lines 20-31)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field
from torch import Tensor

from methods.allocation import EPSILON, allocate, apply_coverage_guarantee
from methods.federated.aggregation import ClientUpdate
from methods.federated.estimator import HeterogeneityEstimator, divergence_estimate
from methods.federated.parts import Settings
from methods.federated.policies import AllocationPolicy, PolicyContext

# fedclaims behaviour version: 1


class HasflPolicy(AllocationPolicy):
    """Warm-up at the caps, then Eq. 6 re-allocation from smoothed divergence estimates.

    Rounds are 0-based; the end of round index t completes t+1 rounds. Clients train at their
    caps for the first ``t_warm`` rounds. After every completed round count c = t+1 with
    c >= t_warm and c % t_adapt == 0 the server updates H̃ of that round's participants and
    re-allocates every client with Eq. 6 (then the coverage guarantee, if enabled); the new
    allocation holds from the next round on. H̃ is rescaled to unit mean after every completed
    round count c >= t_warm with c % t_norm == 0 (after that round's estimate update, before its
    re-allocation, which the rescaling does not change). Each adaptation records H-bar, the mean
    of H̃ after that round's estimate update and before any rescaling (Figure 4's sawtooth).
    """

    class Settings(Settings):
        """The paper's CIFAR-10 values (§4.1) by default."""

        p_min: float = Field(0.4, gt=0.0, le=1.0)
        gamma: float = Field(0.25, ge=0.0)
        beta: float = Field(0.9, ge=0.0, lt=1.0)
        t_norm: int = Field(20, ge=1)
        t_warm: int = Field(10, ge=0)
        t_adapt: int = Field(5, ge=1)
        coverage_guarantee: bool = True

    @classmethod
    def from_context(cls, context: PolicyContext) -> HasflPolicy:
        return cls(context.caps, **context.settings.model_dump())

    def __init__(self, caps: np.ndarray, *, p_min: float, gamma: float, beta: float,
                 t_warm: int, t_adapt: int, t_norm: int, coverage_guarantee: bool,
                 epsilon: float = EPSILON) -> None:
        if t_adapt < 1 or t_norm < 1 or t_warm < 0:
            raise ValueError("t_adapt and t_norm must be >= 1 and t_warm >= 0")
        self.caps = np.asarray(caps, dtype=np.float64)
        self.p_min, self.gamma, self.epsilon = p_min, gamma, epsilon
        self.t_warm, self.t_adapt, self.t_norm = t_warm, t_adapt, t_norm
        self.coverage_guarantee = coverage_guarantee
        self.estimator = HeterogeneityEstimator(len(self.caps), beta)
        self.allocation = self.caps.copy()
        self._adaptations: list[dict[str, Any]] = []

    def widths(self, round_index: int, sampled: Sequence[int]) -> dict[int, float]:
        return {int(i): float(self.allocation[i]) for i in sampled}

    def observe(self, round_index: int, updates: Sequence[ClientUpdate],
                aggregate: Mapping[str, Tensor]) -> None:
        completed = round_index + 1
        if completed < self.t_warm:
            return
        adapt = completed % self.t_adapt == 0
        h_hat: list[float] = []
        if adapt:
            for update in updates:
                h_hat.append(divergence_estimate(update.delta, update.mask, aggregate, self.epsilon))
                self.estimator.observe(update.client, h_hat[-1])
        h_bar = float(self.estimator.h_tilde.mean())  # Figure 4's H-bar, before any rescaling
        rescaled = completed % self.t_norm == 0
        if rescaled:
            self.estimator.rescale()
        if not adapt:
            return
        allocation = allocate(self.estimator.h_tilde, self.caps, self.p_min, self.gamma,
                              self.epsilon)
        if self.coverage_guarantee:
            allocation = apply_coverage_guarantee(allocation, self.caps)
        self.allocation = allocation
        self._adaptations.append({
            "round": round_index,
            "clients": [u.client for u in updates],
            "h_hat": h_hat,
            "rescaled": rescaled,
            "h_bar": h_bar,
            "h_tilde": self.estimator.h_tilde.tolist(),
            "allocation": allocation.tolist(),
        })

    def client_statistics(self) -> dict[str, list[float]]:
        return {"h_tilde": self.estimator.h_tilde.tolist()}

    def adaptations(self) -> list[dict[str, Any]]:
        return self._adaptations
