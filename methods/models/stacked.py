"""Many same-size sub-models of one family evaluated as one network.

Every parameter carries a leading client dimension G (client g's tensor is ``params[name][g]``,
shaped as the family's module holds it) and inputs are [G, B, ...], each client's own batch.
Clients never mix: client g's logits depend only on its parameters and its batch, so the
gradient of the summed per-client losses is, client by client, that client's own gradient.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

from torch import Tensor


class StackedModel(ABC):
    """The stacked form of one sub-model size of a family (``SliceableFamily.stacked``)."""

    @abstractmethod
    def logits(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        """[G, B, classes]: every client's logits on its own batch (training mode)."""


def per_client(params: Mapping[str, Tensor]) -> list[dict[str, Tensor]]:
    """Each client's parameters, as views of the stacked ones (one backward node per tensor)."""
    unbound = {name: p.unbind(0) for name, p in params.items()}
    clients = len(next(iter(params.values())))
    return [{name: p[c] for name, p in unbound.items()} for c in range(clients)]

