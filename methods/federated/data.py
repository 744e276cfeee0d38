"""The federated data a run trains and evaluates on."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import Tensor

Augmentation = Callable[[Tensor, torch.Generator], Tensor]
"""A training-time transform of one mini-batch of inputs, drawing from the generator it is given."""


@dataclass
class ClientData:
    """Inputs ``x`` and integer labels ``y`` of one client (or of the test set).

    ``classes``: a boolean mask over the classes whose logits the client's training loss keeps
    (HeteroFL's and FedRolex's label split: the others are set to 0); None keeps every logit.
    ``augment``: applied to every training mini-batch of ``x``, with the generator that orders the
    client's batches; None trains on ``x`` as it is.
    """

    x: Tensor
    y: Tensor
    classes: Tensor | None = None
    augment: Augmentation | None = None

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"x has {len(self.x)} rows but y has {len(self.y)}")

    def __len__(self) -> int:
        return len(self.y)

    def batch(self, index: Tensor, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """(inputs, labels) of the training mini-batch at ``index``, augmented (from ``generator``) where
        the client augments."""
        x = self.x[index]
        return (x if self.augment is None else self.augment(x, generator)), self.y[index]

    def to(self, device: torch.device | str) -> ClientData:
        classes = None if self.classes is None else self.classes.to(device)
        return ClientData(self.x.to(device), self.y.to(device), classes, self.augment)

    def holding_own_labels(self, num_classes: int) -> ClientData:
        """This client with ``classes`` the labels it holds."""
        held = torch.bincount(self.y, minlength=num_classes) > 0
        return replace(self, classes=held)

    def augmented(self, augment: Augmentation) -> ClientData:
        return replace(self, augment=augment)


@dataclass
class FederatedDataset:
    """Client partitions, the test set, and the inputs that rebuild BN statistics before evaluation.

    ``calibration`` is None for models without batch norm. ``blank``: for images, the value per
    channel of a black pixel after normalisation, what padding an image adds (None for text).
    """

    clients: list[ClientData]
    test: ClientData
    calibration: Tensor | None
    num_classes: int
    blank: Tensor | None = None

    def to(self, device: torch.device | str) -> FederatedDataset:
        calibration = None if self.calibration is None else self.calibration.to(device)
        blank = None if self.blank is None else self.blank.to(device)
        return FederatedDataset([c.to(device) for c in self.clients], self.test.to(device),
                                calibration, self.num_classes, blank)
