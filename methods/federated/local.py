"""What one client's local training takes (settings) and gives back (result)."""
from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from methods.federated.optimizers import ClientOptimizer
from methods.federated.precision import Precision

Params = dict[str, Tensor]


@dataclass(frozen=True)
class LocalSettings:
    """One round's local optimisation: E epochs of mini-batches, the ``optimizer`` (fresh each round;
    `methods.federated.optimizers`), gradient-norm clipping, the forward pass in ``precision``."""

    epochs: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    clip_norm: float | None
    precision: Precision = Precision.FP32
    optimizer: ClientOptimizer = ClientOptimizer.SGD


@dataclass
class LocalResult:
    """What a client's training changed and how it went."""

    update: Params
    """The trained sub-model's parameters minus the start, tensor by tensor."""
    num_samples: int
    steps: int
    mean_loss: float
    nonfinite: bool
    """The mean loss is not finite. (Parameters that are not finite make the update's norm so, which
    the round loop checks: one pass over the update instead of one more over the parameters.)"""
