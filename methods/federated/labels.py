"""HeteroFL's and FedRolex's label split on the client: the logits of the classes a client does not
hold are set to 0 in its training loss (their reference code's ``masked_fill(label_mask == 0, 0)``),
so they still count in the softmax's denominator but take no gradient."""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def kept_logits(logits: Tensor, classes: Tensor | None) -> Tensor:
    """[B, C] logits with those outside ``classes`` (a boolean mask over C) set to 0; None keeps all."""
    return logits if classes is None else logits.masked_fill(~classes, 0.0)


def kept_logits_stacked(logits: Tensor, classes: Sequence[Tensor | None]) -> Tensor:
    """[G, B, C] logits, client g's with its own ``classes[g]`` applied."""
    if all(c is None for c in classes):
        return logits
    full = torch.ones(logits.shape[-1], dtype=torch.bool, device=logits.device)
    mask = torch.stack([full if c is None else c for c in classes])
    return logits.masked_fill(~mask[:, None, :], 0.0)
