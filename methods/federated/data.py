"""The federated data a run trains and evaluates on."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class ClientData:
    """Inputs ``x`` and integer labels ``y`` of one client (or of the test set)."""

    x: Tensor
    y: Tensor

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"x has {len(self.x)} rows but y has {len(self.y)}")

    def __len__(self) -> int:
        return len(self.y)

    def to(self, device: torch.device | str) -> ClientData:
        return ClientData(self.x.to(device), self.y.to(device))


@dataclass
class FederatedDataset:
    """Client partitions, the test set, and the inputs that rebuild BN statistics before evaluation.

    ``calibration`` is None for models without batch norm.
    """

    clients: list[ClientData]
    test: ClientData
    calibration: Tensor | None
    num_classes: int

    def to(self, device: torch.device | str) -> FederatedDataset:
        calibration = None if self.calibration is None else self.calibration.to(device)
        return FederatedDataset([c.to(device) for c in self.clients], self.test.to(device),
                                calibration, self.num_classes)
