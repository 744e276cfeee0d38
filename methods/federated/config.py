"""The settings of one federated run: the round loop's, and the method's parts."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from methods.extraction import ExtractionMode
from methods.federated.aggregation import Weighting
from methods.federated.augmentation import AugmentationMode
from methods.federated.objectives import LocalObjective
from methods.federated.optimizers import ClientOptimizer
from methods.federated.parts import Choice
from methods.federated.policies import AllocationPolicy, CapPolicy
from methods.federated.precision import Precision
from methods.federated.rounds import RoundHook


class ClientExecution(StrEnum):
    """How a round's clients train: same-shape sub-models together, or one after another."""

    BATCHED = "batched"
    SEQUENTIAL = "sequential"


@dataclass(frozen=True)
class FederationConfig:
    """Defaults are the HAS-FL paper's CIFAR-10 protocol (§4.1).

    ``policy``, ``objective`` and ``round_hook`` are the method's parts, each with its own
    settings (`methods.federated.parts`). ``label_split``: a client's loss keeps only the logits of
    the labels it holds, and it contributes only their output-layer rows (`methods.federated.labels`,
    `methods.federated.coordinate_weights`); ``count_weighted``: one-dimensional tensors and the
    output layer are averaged with weights that count each coordinate's updates (the FedRolex
    reference's server); ``augmentation``: what a client does to each training mini-batch
    (`methods.federated.augmentation`). ``client_execution`` "batched" trains a round's
    same-shape sub-models together where the model family offers a stacked form; "sequential"
    trains one client after another (the reference). Both follow the same per-client
    arithmetic; numbers agree up to float reduction order, so the choice is part of the run's key.
    ``precision``: the arithmetic of the clients' forward passes (`methods.federated.precision`).
    ``optimizer``: the clients' optimiser (`methods.federated.optimizers`; Adam ignores ``momentum``).
    """

    num_clients: int = 20
    clients_per_round: int = 10
    rounds: int = 200
    local_epochs: int = 5
    batch_size: int = 32
    lr: float = 0.01
    lr_decay: float = 0.995
    momentum: float = 0.9
    weight_decay: float = 1e-4
    clip_norm: float | None = 10.0
    extraction: str = "prefix"
    weighting: str = "samples"
    label_split: bool = False
    count_weighted: bool = False
    augmentation: str = "none"
    eval_every: int = 1
    eval_batch_size: int = 256
    client_execution: str = "batched"
    precision: str = "fp32"
    optimizer: str = "sgd"
    policy: Choice[AllocationPolicy] = field(default_factory=lambda: Choice.of(CapPolicy))
    objective: Choice[LocalObjective] = field(default_factory=lambda: Choice.of(LocalObjective))
    round_hook: Choice[RoundHook] | None = None

    def __post_init__(self) -> None:
        ExtractionMode(self.extraction)
        Weighting(self.weighting)
        AugmentationMode(self.augmentation)
        ClientExecution(self.client_execution)
        Precision(self.precision)
        ClientOptimizer(self.optimizer)
        for role, base in (("policy", AllocationPolicy), ("objective", LocalObjective), ("round_hook", RoundHook)):
            choice = getattr(self, role)
            if choice is not None and not issubclass(choice.part, base):
                raise TypeError(f"{role} must be a {base.__name__}, got {choice.part.__name__}")
        if not 1 <= self.clients_per_round <= self.num_clients:
            raise ValueError("clients_per_round must lie in [1, num_clients]")
        for name in ("rounds", "local_epochs", "batch_size", "eval_every", "eval_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")

    def to_dict(self) -> dict[str, Any]:
        """Plain values; each part as its class and settings."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for role in ("policy", "objective", "round_hook"):
            data[role] = None if data[role] is None else data[role].describe()
        return data

    @property
    def weighs_per_coordinate(self) -> bool:
        """Whether a client's weight in aggregation differs from coordinate to coordinate."""
        return Weighting(self.weighting).per_coordinate or self.count_weighted or self.label_split
