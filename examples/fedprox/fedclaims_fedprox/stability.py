"""How stable a run's convergence is: the test loss's mean change between consecutive evaluations
over the second half of training (0 for a loss that has settled; large for one that oscillates).
A run that diverged is infinitely unstable."""
from __future__ import annotations

import math

import numpy as np

from fedclaims import ExtensionMetric, Metric, evaluations


def loss_oscillation(result, args) -> float:
    if result["diverged"]:
        return math.inf
    losses = [loss for round_index, loss in evaluations(result, "test_loss")
              if round_index >= result["rounds_completed"] / 2]
    return float(np.mean(np.abs(np.diff(losses)))) if len(losses) > 1 else math.nan


LOSS_OSCILLATION = ExtensionMetric(
    name="loss_oscillation",
    kinds=("federated_training", "fedprox_synthetic"),
    metric=Metric("mean |change| of the test loss between consecutive evaluations over the second half of the "
                  "rounds (inf if the run diverged): lower is more stable", loss_oscillation, unit="nats",
                  smallest_effect=0.001),
)
