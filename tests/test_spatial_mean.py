"""The stacked conv form's global average pool: the same numbers as adaptive_avg_pool2d, forward
and backward, with the gradient in the activation's memory layout."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from methods.models.conv_stacked import spatial_mean


@pytest.mark.parametrize("layout", [torch.channels_last, torch.contiguous_format])
def test_spatial_mean_is_adaptive_avg_pool_bit_for_bit(layout) -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 24, 8, 8, generator=generator).contiguous(memory_format=layout)
    upstream = torch.randn(32, 24, generator=generator)
    ours, reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = spatial_mean(F.relu(ours))
    expected = F.adaptive_avg_pool2d(F.relu(reference), 1).flatten(1)
    assert torch.equal(out, expected)
    out.backward(upstream)
    expected.backward(upstream)
    assert torch.equal(ours.grad, reference.grad)


def test_spatial_mean_gradient_keeps_channels_last() -> None:
    x = torch.randn(4, 8, 5, 5).contiguous(memory_format=torch.channels_last).requires_grad_()
    captured = {}
    x.register_hook(lambda grad: captured.setdefault("grad", grad))
    spatial_mean(x).sum().backward()
    assert captured["grad"].is_contiguous(memory_format=torch.channels_last)
