"""The optimiser a client trains its sub-model with, fresh every round (its state never crosses rounds).

`sgd` (the default): SGD with momentum and L2 weight decay, the papers' stated recipe. `adam`: Adam (β 0.9 and
0.999, ε 1e-8) with L2 weight decay added to the gradient, as `torch.optim.Adam(lr, weight_decay)`: the
recipe FedRolex's released code runs (its Ray clients build their optimiser from `config.yml`, `optimizer_name:
Adam`, `weight_decay: 5.0e-4`, at the learning rate the server sends; `utils.make_optimizer`), momentum unused.
"""
from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

import torch
from torch import nn


class ClientOptimizer(StrEnum):
    SGD = "sgd"
    ADAM = "adam"


def client_optimizer(kind: ClientOptimizer | str, params: Iterable[nn.Parameter], lr: float, momentum: float,
                     weight_decay: float) -> torch.optim.Optimizer:
    if ClientOptimizer(kind) is ClientOptimizer.ADAM:
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
