"""torch.optim.SGD and clip_grad_norm_ for G clients at once, client by client.

Parameters carry a leading client dim. Each client's gradient is clipped to its own norm over
all of its parameters, then SGD with weight decay and momentum steps exactly as
``torch.optim.SGD`` (dampening 0, no Nesterov) would on that client alone. A step may move only
some clients (``active``): the others keep their parameters and momentum buffers untouched.
"""
from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

CLIP_EPS = 1e-6  # clip_grad_norm_'s: coefficient max_norm / (norm + 1e-6)


def clip_per_client_(grads: Mapping[str, Tensor], max_norm: float) -> None:
    """Scale each client's gradients so that their joint 2-norm is at most ``max_norm``."""
    norms = torch.stack([torch.linalg.vector_norm(g.reshape(len(g), -1), 2, dim=1)
                         for g in grads.values()], dim=1)
    coefficient = torch.clamp(max_norm / (torch.linalg.vector_norm(norms, 2, dim=1) + CLIP_EPS),
                              max=1.0)
    for g in grads.values():
        g.mul_(coefficient.view(-1, *([1] * (g.dim() - 1))))


class StackedSGD:
    """One SGD state (momentum buffers) per client, for stacked parameters."""

    def __init__(self, params: Mapping[str, Tensor], lr: float, momentum: float,
                 weight_decay: float) -> None:
        self.names = list(params)
        self.params = [params[n] for n in self.names]
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        # a zero buffer times momentum plus the gradient is torch's first-step clone of it
        self.buffers = [torch.zeros_like(p) for p in self.params] if momentum != 0 else []

    @torch.no_grad()
    def step(self, grads: Mapping[str, Tensor], active: Tensor | None = None) -> None:
        """Move the ``active`` clients (all when None) along their ``grads``."""
        if active is None:
            self._update(self.params, [grads[n] for n in self.names], self.buffers)
            return
        rows = [p.index_select(0, active) for p in self.params]
        buffers = [b.index_select(0, active) for b in self.buffers]
        self._update(rows, [grads[n].index_select(0, active) for n in self.names], buffers)
        for target, value in zip(self.params + self.buffers, rows + buffers):
            target.index_copy_(0, active, value)

    def _update(self, params: list[Tensor], grads: list[Tensor] | tuple[Tensor, ...], buffers: list[Tensor]) -> None:
        if self.weight_decay != 0:
            grads = torch._foreach_add(grads, params, alpha=self.weight_decay)
        if self.momentum != 0:
            torch._foreach_mul_(buffers, self.momentum)
            torch._foreach_add_(buffers, grads)
            grads = buffers
        torch._foreach_add_(params, grads, alpha=-self.lr)
