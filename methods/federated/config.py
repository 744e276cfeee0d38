"""The settings of one federated run."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from methods.extraction import ExtractionMode
from methods.federated.aggregation import Weighting
from methods.federated.capacity import DEFAULT_TIERS
from methods.federated.objectives import ObjectiveName
from methods.federated.registry import resolve_policy


class ClientExecution(StrEnum):
    """How a round's clients train: same-shape sub-models together, or one after another."""

    BATCHED = "batched"
    SEQUENTIAL = "sequential"


@dataclass(frozen=True)
class FederationConfig:
    """Defaults are the HAS-FL paper's CIFAR-10 protocol (§4.1); ``budget`` is for random_budget.

    ``client_execution`` "batched" trains a round's same-shape sub-models together where the
    model family offers a stacked form; "sequential" trains one client after another (the
    reference). Both follow the same per-client arithmetic; numbers agree up to float
    reduction order, so the choice is part of the run's key.
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
    objective: str = "sgd"
    prox_mu: float = 0.01
    scaffold_momentum: bool = False
    policy: str = "heterofl"
    extraction: str = "prefix"
    weighting: str = "samples"
    p_min: float = 0.4
    gamma: float = 0.25
    beta: float = 0.9
    t_norm: int = 20
    t_warm: int = 10
    t_adapt: int = 5
    coverage_guarantee: bool = True
    uniform_width: float = 0.5
    tiers: tuple[float, ...] = DEFAULT_TIERS
    budget: float | None = None
    eval_every: int = 1
    eval_batch_size: int = 256
    client_execution: str = "batched"

    def __post_init__(self) -> None:
        resolve_policy(self.policy)
        ExtractionMode(self.extraction)
        Weighting(self.weighting)
        ObjectiveName(self.objective)
        ClientExecution(self.client_execution)
        if not 1 <= self.clients_per_round <= self.num_clients:
            raise ValueError("clients_per_round must lie in [1, num_clients]")
        for name in ("rounds", "local_epochs", "batch_size", "eval_every", "eval_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.policy == "random_budget" and self.budget is None:
            raise ValueError("policy 'random_budget' needs a budget")
        if not 0.0 < self.uniform_width <= 1.0:
            raise ValueError("uniform_width must lie in (0, 1]")
        object.__setattr__(self, "tiers", tuple(float(t) for t in self.tiers))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tiers"] = list(self.tiers)
        return data
