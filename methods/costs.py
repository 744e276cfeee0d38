"""Parameter and multiply-accumulate counts of (sub-)models."""
from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn
from torch.utils.flop_counter import FlopCounterMode

from methods.extraction import kept_units
from methods.models.slicing import SliceableFamily


def parameter_count(module: nn.Module) -> int:
    """Number of parameter scalars (buffers excluded)."""
    return sum(p.numel() for p in module.parameters())


def mac_count(module: nn.Module, example_input: Tensor) -> int:
    """Multiply-accumulates of one forward pass on ``example_input`` (FlopCounterMode flops / 2).

    Counts matmuls and convolutions only. Uses ``module.stepwise_forward`` when present,
    since the counter does not see fused kernels such as nn.LSTM's. Runs in eval mode so
    that buffers are left untouched.
    """
    forward = getattr(module, "stepwise_forward", module)
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            forward(example_input)
    finally:
        module.train(was_training)
    return counter.get_total_flops() // 2


def cost_fractions(family: SliceableFamily, width: float,
                   example_input: Tensor) -> tuple[float, float]:
    """(params, MACs) of the width-``width`` prefix sub-model as fractions of the full model's."""
    return width_cost_table(family, [width], example_input)[width]


def width_cost_table(family: SliceableFamily, widths: Iterable[float],
                     example_input: Tensor) -> dict[float, tuple[float, float]]:
    """{width: (params, MACs) as fractions of the full model's} for each distinct width.

    A width-p sub-model keeps ``kept_units(n, p)`` units of every group whichever units
    (prefix, rolling window, random subset), so its size depends on the width alone;
    widths that keep the same units share one count.
    """
    full = family.build()
    full_params, full_macs = parameter_count(full), mac_count(full, example_input)
    by_units: dict[tuple[tuple[str, int], ...], tuple[float, float]] = {}
    table = {}
    for width in sorted(set(widths)):
        units = tuple(sorted((g, kept_units(n, width)) for g, n in family.groups.items()))
        if units not in by_units:
            sub = family.build(dict(units))
            by_units[units] = (parameter_count(sub) / full_params, mac_count(sub, example_input) / full_macs)
        table[width] = by_units[units]
    return table


def training_flops(module: nn.Module, inputs: Tensor, targets: Tensor) -> int:
    """Floating-point operations of one training step (forward, cross-entropy, backward).

    Counts matmuls and convolutions (FlopCounterMode), through ``module.stepwise_forward``
    when present as ``mac_count`` does. Gradients are cleared afterwards.
    """
    forward = getattr(module, "stepwise_forward", module)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(forward(inputs), targets).backward()
    module.zero_grad(set_to_none=True)
    return counter.get_total_flops()
