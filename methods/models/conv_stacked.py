"""HeteroFL's Conv for G same-size clients at once.

Two exact ways, chosen by the size of one client's first activation (measured on a 2-core CPU):

- grouped (small activations, where per-call overhead dominates): client g's channels occupy
  the g-th block of every activation's channel dim ([B, G*C, H, W], channels-last), so a
  convolution with ``groups=G`` applies each client's kernels to its own channels only, and
  batch norm's per-channel batch statistics are each client's statistics over exactly its own
  batch, as ``nn.BatchNorm2d`` computes them in training mode; per-client heads are one
  batched matrix product. Clients go in chunks small enough for the activations to stay in
  cache.
- per client (large activations, where oneDNN's grouped kernels are slower than G separate
  ones): each client's batch goes through the very kernels of ``ConvNet``.

Max-pooling comes before the ReLU in both, as in ``ConvNet``. The global average pool's gradient
is laid out channels-last like the activation it flows into (``spatial_mean``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from methods.models.stacked import StackedModel

GROUPED_UP_TO = 1 << 17
"""Grouped convolutions when one client's first activation (a whole batch) has at most this
many elements."""
CHUNK_ELEMENTS = 1 << 20
"""Clients per grouped call: their first activations together stay within this many elements."""


class _SpatialMean(torch.autograd.Function):
    """``F.adaptive_avg_pool2d(x, 1).flatten(1)`` whose gradient has the memory layout of ``x``.

    Autograd's gradient of the mean is ``grad / (H·W)`` broadcast over H and W in the default
    layout; the ReLU backward that reads it against the channels-last activation then takes
    a mixed-layout path about ten times slower than its own (5-8% of a training step of the
    16-32-64 CNN at width 1 on one CPU thread). Same forward op, same per-element division.
    """

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        ctx.shape = x.shape
        ctx.layout = (torch.channels_last if x.is_contiguous(memory_format=torch.channels_last)
                      else torch.contiguous_format)
        return F.adaptive_avg_pool2d(x, 1).flatten(1)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        batch, channels, height, width = ctx.shape
        spread = grad.reshape(batch, channels, 1, 1).expand(ctx.shape) / (height * width)
        return spread.contiguous(memory_format=ctx.layout)


def spatial_mean(x: Tensor) -> Tensor:
    """[B, C, H, W] -> [B, C]: the mean over H and W."""
    return _SpatialMean.apply(x)


class StackedConvNet(StackedModel):
    """``ConvNet``'s training-mode forward for parameters with a leading client dim."""

    def __init__(self, hidden: Sequence[int], batchnorm_eps: Sequence[float]) -> None:
        self.hidden = tuple(int(h) for h in hidden)
        self.batchnorm_eps = tuple(batchnorm_eps)

    def groups_clients(self, sample_shape: torch.Size, batch_size: int) -> bool:
        _, height, width = sample_shape
        return batch_size * self.hidden[0] * height * width <= GROUPED_UP_TO

    def grouped_logits(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        _, batch, _, height, width = inputs.shape
        size = max(1, CHUNK_ELEMENTS // (batch * self.hidden[0] * height * width))
        chunks = {name: p.split(size) for name, p in params.items()}
        return torch.cat([self._grouped({name: p[k] for name, p in chunks.items()}, x)
                          for k, x in enumerate(inputs.split(size))])

    def client_logits(self, params: Mapping[str, Tensor], x: Tensor) -> Tensor:
        x = x.contiguous(memory_format=torch.channels_last)
        for i in range(len(self.hidden)):
            x = F.conv2d(x, params[f"blocks.{i}.conv.weight"], params[f"blocks.{i}.conv.bias"],
                         padding=1)
            x = self._norm_pool_relu(x, params[f"blocks.{i}.bn.weight"],
                                     params[f"blocks.{i}.bn.bias"], i)
        return F.linear(spatial_mean(x), params["classifier.weight"], params["classifier.bias"])

    def _grouped(self, params: Mapping[str, Tensor], inputs: Tensor) -> Tensor:
        clients, batch, channels, height, width = inputs.shape
        # [G, B, C, H, W] -> [B, G*C, H, W] laid out channels-last (memory [B, H, W, G, C])
        x = inputs.permute(1, 3, 4, 0, 2).reshape(batch, height, width, clients * channels)
        x = x.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
        for i in range(len(self.hidden)):
            weight = params[f"blocks.{i}.conv.weight"]
            x = F.conv2d(x, weight.reshape(-1, *weight.shape[2:]),
                         params[f"blocks.{i}.conv.bias"].reshape(-1), padding=1, groups=clients)
            x = self._norm_pool_relu(x, params[f"blocks.{i}.bn.weight"].reshape(-1),
                                     params[f"blocks.{i}.bn.bias"].reshape(-1), i)
        features = spatial_mean(x).view(batch, clients, -1).transpose(0, 1)
        return torch.baddbmm(params["classifier.bias"].unsqueeze(1), features,
                             params["classifier.weight"].transpose(1, 2))

    def _norm_pool_relu(self, x: Tensor, weight: Tensor, bias: Tensor, block: int) -> Tensor:
        """Training-mode batch norm (batch statistics, as nn.BatchNorm2d), then pool and ReLU."""
        x = F.batch_norm(x, None, None, weight, bias, training=True, eps=self.batchnorm_eps[block])
        if block < len(self.hidden) - 1:
            x = F.max_pool2d(x, 2)
        return F.relu(x)
