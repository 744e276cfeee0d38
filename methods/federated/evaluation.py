"""Test accuracy and loss of the full-width global model."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.federated.data import ClientData
from methods.models.batchnorm import calibrate_batchnorm


@torch.no_grad()
def evaluate(model: nn.Module, test: ClientData, calibration: Tensor | None,
             batch_size: int) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) on ``test``; BN statistics are first rebuilt on ``calibration``.

    With ``calibration`` None the model is evaluated with whatever buffers it holds.
    """
    if calibration is not None:
        calibrate_batchnorm(model, calibration.split(batch_size))
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=test.y.device)
    loss_sum = torch.zeros((), dtype=torch.float64, device=test.y.device)
    for x, y in zip(test.x.split(batch_size), test.y.split(batch_size)):
        logits = model(x)
        loss_sum += F.cross_entropy(logits, y, reduction="sum").double()
        correct += (logits.argmax(dim=1) == y).sum()
    n = max(len(test), 1)
    return int(correct) / n, float(loss_sum) / n
