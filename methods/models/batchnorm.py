"""HeteroFL's static batch norm: running statistics rebuilt from calibration data before evaluation."""
from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn


def calibrate_batchnorm(model: nn.Module, batches: Iterable[Tensor]) -> nn.Module:
    """HeteroFL's static-BN pass: reset running stats, accumulate them over ``batches``; leave in eval mode.

    Cumulative averaging needs ``momentum=None`` batch norms, as ``ConvFamily`` builds them.
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        if norm.momentum is not None or not norm.track_running_stats:
            raise ValueError("calibrate_batchnorm needs BatchNorm with momentum=None and "
                             "track_running_stats=True")
        norm.reset_running_stats()
    model.train()
    with torch.no_grad():
        for batch in batches:
            model(batch)
    model.eval()
    return model
