"""HAS-FL's heterogeneity estimate (§3.2): masked normalised update divergence, smoothed."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from torch import Tensor

from methods.allocation import EPSILON
from methods.federated.aggregation import masked


def divergence_estimate(delta: Mapping[str, Tensor], mask: Mapping[str, Tensor] | None,
                        aggregate: Mapping[str, Tensor], epsilon: float = EPSILON) -> float:
    """Ĥ_i = ||m_i ⊙ (Δ_i − Δ̄)||² / (||m_i ⊙ Δ̄||² + ε), summed over all parameters (float64).

    ``delta`` and ``aggregate`` are in global coordinates; ``mask`` None means every coordinate.
    """
    numerator = 0.0
    denominator = 0.0
    for name, mean in aggregate.items():
        m = None if mask is None else mask[name]
        numerator += float(masked(delta[name] - mean, m).double().pow(2).sum())
        denominator += float(masked(mean, m).double().pow(2).sum())
    return numerator / (denominator + epsilon)


class HeterogeneityEstimator:
    """EMA H̃_i ← β H̃_i + (1−β) Ĥ_i from H̃_i = 1, with rescaling of all H̃ to unit mean."""

    def __init__(self, num_clients: int, beta: float) -> None:
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"beta must lie in [0, 1), got {beta}")
        self.beta = beta
        self.h_tilde = np.ones(num_clients, dtype=np.float64)

    def observe(self, client: int, h_hat: float) -> None:
        self.h_tilde[client] = self.beta * self.h_tilde[client] + (1.0 - self.beta) * h_hat

    def rescale(self) -> None:
        """Divide every estimate by their mean (skipped when the mean is not positive and finite)."""
        mean = float(self.h_tilde.mean())
        if np.isfinite(mean) and mean > 0:
            self.h_tilde = self.h_tilde / mean
