"""Many same-size sub-models of one family evaluated as one network.

Every parameter carries a leading client dimension G (client g's tensor is ``params[name][g]``,
shaped as the family's module holds it) and inputs are [G, B, ...], each client's own batch.
Clients never mix: client g's logits depend only on its parameters and its batch, so the
gradient of the summed per-client losses is, client by client, that client's own gradient.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import torch
from torch import Tensor, nn
from torch.func import functional_call


class StackedModel(ABC):
    """The stacked form of one sub-model size of a family (``SliceableFamily.stacked``)."""

    @abstractmethod
    def logits(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        """[G, B, classes]: every client's logits on its own batch (training mode)."""



def per_client_logits(module: nn.Module, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
    """Each client's batch through ``module`` with that client's parameters, logits stacked.

    The clients share one autograd graph (and later one optimizer step) but run the very
    kernels a module of their own would run.
    """
    per_client = {name: p.unbind(0) for name, p in params.items()}
    return torch.stack([
        functional_call(module, {name: p[c] for name, p in per_client.items()}, (inputs[c],))
        for c in range(len(inputs))])
