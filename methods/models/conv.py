"""HeteroFL's "Conv" model as a width-sliceable family (official code, src/models/conv.py)."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn

from methods.models.conv_stacked import StackedConvNet
from methods.models.slicing import Axis, SliceableFamily, default_init_

# fedclaims behaviour version: 1

BATCHNORM_EPS = 1e-5


class ConvNet(nn.Module):
    """Conv3x3 -> BN -> ReLU -> MaxPool2d(2) blocks (no pool after the last), then avg-pool and Linear.

    Each block applies the pooling before the ReLU, which gives the same values and gradients.
    """

    def __init__(self, in_channels: int, num_classes: int, hidden: Sequence[int],
                 batchnorm_eps: Sequence[float] | None = None) -> None:
        super().__init__()
        blocks = []
        widths = [in_channels, *hidden]
        eps = list(batchnorm_eps) if batchnorm_eps is not None else [BATCHNORM_EPS] * len(hidden)
        for i, (c_in, c_out) in enumerate(zip(widths[:-1], widths[1:])):
            layers: OrderedDict[str, nn.Module] = OrderedDict(
                conv=nn.Conv2d(c_in, c_out, kernel_size=3, stride=1, padding=1),
                bn=nn.BatchNorm2d(c_out, eps=eps[i], momentum=None,
                                  track_running_stats=True),
            )
            # pooling before the ReLU: the same values and gradients (ReLU is monotone), and
            # the ReLU touches a quarter of the elements
            if i < len(hidden) - 1:
                layers["pool"] = nn.MaxPool2d(2)
            layers["relu"] = nn.ReLU()
            blocks.append(nn.Sequential(layers))
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(hidden[-1], num_classes)

    def forward(self, x: Tensor) -> Tensor:
        # channels-last activations take oneDNN's fast CPU kernels (max-pool about 7x faster here)
        x = x.contiguous(memory_format=torch.channels_last)
        return self.classifier(self.pool(self.blocks(x)).flatten(1))


class ConvFamily(SliceableFamily):
    """Width-sliceable HeteroFL Conv; groups "block0".."blockK-1" are the blocks' channels.

    The first conv sees all input channels; the classifier keeps all class rows and its
    full bias, only its input columns are sliced. Batch norm is affine with cumulative
    running statistics (``momentum=None``) that are buffers, never federated state; rebuild
    them with ``calibrate_batchnorm`` (methods.models.batchnorm) before evaluation. HeteroFL's "scaler" (activations
    times 1/p in training) is omitted: batch norm directly after every conv cancels it except in its eps, so a
    width-p sub-model here normalises with eps 1e-5 where the reference's is in effect 1e-5 p² (a declared
    departure, measured by tests/test_fedrolex_client_conformance.py: docs/conformance.md).
    ``batchnorm_eps_exponent`` 2 gives the reference's: each block's eps is 1e-5 times the sub-model's share of
    that block's width to this power (the authors' model rate where the widths divide exactly, as in every
    shipped profile); at 0, the default, every block's eps is 1e-5.
    """

    output_layer = ("classifier.weight", "classifier.bias")

    def __init__(self, in_channels: int, num_classes: int, hidden: Sequence[int],
                 batchnorm_eps_exponent: float = 0.0) -> None:
        if not hidden:
            raise ValueError("hidden must list at least one block width")
        self.in_channels = in_channels
        self.num_classes = num_classes
        self.hidden = tuple(int(h) for h in hidden)
        self.groups = {f"block{i}": h for i, h in enumerate(self.hidden)}
        self.batchnorm_eps_exponent = batchnorm_eps_exponent

    def build(self, sizes: Mapping[str, int] | None = None, *,
              generator: torch.Generator | None = None) -> nn.Module:
        sizes = self.check_sizes(sizes)
        model = ConvNet(self.in_channels, self.num_classes, [sizes[g] for g in self.groups],
                        self.batchnorm_eps(sizes))
        if generator is not None:
            default_init_(model, generator)
        return model

    def stacked(self, sizes: Mapping[str, int]) -> StackedConvNet:
        sizes = self.check_sizes(sizes)
        return StackedConvNet([sizes[g] for g in self.groups], self.batchnorm_eps(sizes))

    def batchnorm_eps(self, sizes: Mapping[str, int]) -> list[float]:
        """Each block's batch-norm eps in the sub-model of these sizes."""
        if not self.batchnorm_eps_exponent:
            return [BATCHNORM_EPS] * len(self.groups)
        return [BATCHNORM_EPS * (sizes[g] / full) ** self.batchnorm_eps_exponent for g, full in self.groups.items()]

    def param_axes(self) -> dict[str, tuple[Axis | None, ...]]:
        axes: dict[str, tuple[Axis | None, ...]] = {}
        for i in range(len(self.hidden)):
            out_axis = Axis(f"block{i}")
            in_axis = Axis(f"block{i - 1}") if i > 0 else None
            axes[f"blocks.{i}.conv.weight"] = (out_axis, in_axis, None, None)
            axes[f"blocks.{i}.conv.bias"] = (out_axis,)
            axes[f"blocks.{i}.bn.weight"] = (out_axis,)
            axes[f"blocks.{i}.bn.bias"] = (out_axis,)
        axes["classifier.weight"] = (None, Axis(f"block{len(self.hidden) - 1}"))
        axes["classifier.bias"] = (None,)
        return axes
