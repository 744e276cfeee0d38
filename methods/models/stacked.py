"""Many same-size sub-models of one family trained together.

Every parameter carries a leading client dimension G (client g's tensor is ``params[name][g]``,
shaped as the family's module holds it) and inputs are [G, B, ...], each client's own batch.
Clients never mix: client g's logits depend only on its parameters and its batch, so the
gradient of the summed per-client losses is, client by client, that client's own gradient.

A step runs either all clients in one graph (``grouped_logits``, where per-call overhead
dominates) or one client at a time (``client_logits``, where one client's activations are
large enough that G of them at once would fall out of the caches); either way the clients
then share one optimizer step.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import torch
from torch import Tensor


class StackedModel(ABC):
    """The stacked form of one sub-model size of a family (``SliceableFamily.stacked``)."""

    @abstractmethod
    def client_logits(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        """[B, classes]: one client's logits on its batch (its own, unstacked parameters)."""

    def groups_clients(self, sample_shape: torch.Size, batch_size: int) -> bool:
        """Whether batches of ``batch_size`` samples of ``sample_shape`` go through
        ``grouped_logits`` (else ``client_logits``)."""
        return False

    def grouped_logits(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        """[G, B, classes]: every client's logits on its own batch, in one graph."""
        raise NotImplementedError(f"{type(self).__name__} has no grouped form")
