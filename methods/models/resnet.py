"""HeteroFL / FedRolex pre-activation ResNet-18 ("PreResNet18") as a width-sliceable family.

Follows the official code (HeteroFL src/models/resnet.py, reused by FedRolex): bias-free
3x3 convs, pre-activation basic blocks whose projection shortcut (1x1 conv, stride s) takes
the pre-activated input while the identity shortcut takes the raw input, and a final
BN -> ReLU before global average pooling and the linear classifier.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.models.slicing import Axis, SliceableFamily, default_init_

# fedclaims behaviour version: 2

STRIDES = (1, 2, 2, 2)
BLOCKS_PER_STAGE = 2


def _norm(channels: int) -> nn.BatchNorm2d:
    # cumulative running statistics (buffers), rebuilt by batchnorm.calibrate_batchnorm
    return nn.BatchNorm2d(channels, momentum=None, track_running_stats=True)


class PreActBlock(nn.Module):
    """BN -> ReLU -> conv3x3(stride) -> BN -> ReLU -> conv3x3, plus the shortcut.

    ``projection`` adds a 1x1 conv (stride ``stride``) on the pre-activated input; without it
    the raw input is added (identity), which needs ``in_channels == out_channels`` and stride 1.
    The projection is computed as what it is, a 1x1 conv of every ``stride``-th pixel: the pixels
    are taken first and the conv runs at stride 1. A strided 1x1 conv on channels-last input takes
    oneDNN's reduce-to-unit-stride path, whose weight gradient writes past its workspace when the
    input has fewer channels than the kernel's block (uxlfoundation/oneDNN#6035: a crash or wrong
    gradients on AVX2; the paper profile's width-1/16 FedRolex clients have 4).
    """

    def __init__(self, in_channels: int, inner: int, out_channels: int, stride: int,
                 projection: bool) -> None:
        super().__init__()
        if not projection and (stride != 1 or in_channels != out_channels):
            raise ValueError("an identity shortcut needs stride 1 and equal in/out channels")
        self.bn1 = _norm(in_channels)
        self.conv1 = nn.Conv2d(in_channels, inner, 3, stride=stride, padding=1, bias=False)
        self.bn2 = _norm(inner)
        self.conv2 = nn.Conv2d(inner, out_channels, 3, stride=1, padding=1, bias=False)
        self.shortcut = nn.Conv2d(in_channels, out_channels, 1, bias=False) if projection else None
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.bn1(x))
        shortcut = self.shortcut(out[:, :, ::self.stride, ::self.stride]) if self.shortcut is not None else x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + shortcut


class PreResNet18(nn.Module):
    """conv3x3 stem -> 4 stages x 2 pre-activation blocks -> BN -> ReLU -> avg-pool -> Linear.

    ``stages[i]`` is the residual-stream width of stage i, ``inner[i][j]`` the width of
    block j's first conv there. Block 0 of stages 1..3 (stride 2) has a projection shortcut.
    """

    def __init__(self, in_channels: int, num_classes: int, stages: Sequence[int],
                 inner: Sequence[Sequence[int]]) -> None:
        super().__init__()
        self.stem = nn.Conv2d(in_channels, stages[0], 3, stride=1, padding=1, bias=False)
        layers = []
        previous = stages[0]
        for i, (width, stride) in enumerate(zip(stages, STRIDES)):
            blocks = []
            for j in range(BLOCKS_PER_STAGE):
                first = j == 0
                blocks.append(PreActBlock(previous, inner[i][j], width,
                                          stride=stride if first else 1,
                                          projection=first and i > 0))
                previous = width
            layers.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*layers)
        self.bn = _norm(stages[-1])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(stages[-1], num_classes)

    def forward(self, x: Tensor) -> Tensor:
        # channels-last activations take oneDNN's faster CPU conv / batch-norm kernels
        x = x.contiguous(memory_format=torch.channels_last)
        out = self.stages(self.stem(x))
        out = F.relu(self.bn(out))
        return self.classifier(self.pool(out).flatten(1))


def inner_group(stage: int, block: int) -> str:
    return f"stage{stage}.block{block}.inner"


def output_group(stage: int, block: int) -> str:
    return f"stage{stage}.block{block}.out"


STEM_GROUP = "stage0.stem"


class PreResNet18Family(SliceableFamily):
    """Width-sliceable PreResNet18: one group per conv's output channels.

    Groups: the stem's output ``stage0.stem``, each block's second conv (and projection shortcut) output
    ``stage{i}.block{j}.out``, each block's first conv output ``stage{i}.block{j}.inner``. An identity
    shortcut adds a block's input to its output channel by channel, so the stem and stage 0's block
    outputs, and in each later stage its two block outputs, are tied (``ties``): one width each, and
    a sub-model that selects them alike (prefix, rolling window, `random_consistent`) adds the same global
    unit on both sides of every shortcut, while one that draws each conv's channels apart (`random`,
    as the FedRolex reference's Federated Dropout does) adds different ones.
    The stem sees all input channels; the classifier keeps all class rows and its full
    bias, only its input columns are sliced. Batch norm is affine with cumulative
    running statistics (``momentum=None``) that are buffers, never federated state; rebuild
    them with ``calibrate_batchnorm`` (methods.models.batchnorm) before evaluation.

    HeteroFL's "scaler" (activations times 1/p in training) is omitted: in this network
    every scaler sits directly before a batch norm (n1, n2 of every block and the final
    n4; shortcuts take the unscaled input), and a per-channel constant factor before a
    batch norm cancels both with batch statistics and with statistics calibrated on the
    same activations, except in its eps: a width-p sub-model here normalises with eps 1e-5
    where the reference's is in effect 1e-5 p² (a declared departure: docs/conformance.md).
    """

    output_layer = ("classifier.weight", "classifier.bias")

    def __init__(self, in_channels: int = 3, num_classes: int = 10,
                 hidden: Sequence[int] = (64, 128, 256, 512)) -> None:
        if len(hidden) != len(STRIDES):
            raise ValueError(f"hidden must list {len(STRIDES)} stage widths, got {list(hidden)}")
        if any(int(h) < 1 for h in hidden):
            raise ValueError(f"stage widths must be positive, got {list(hidden)}")
        self.in_channels = in_channels
        self.num_classes = num_classes
        self.hidden = tuple(int(h) for h in hidden)
        self.groups = {}
        ties = []
        # a stage's stream groups before its inner ones: one draw per tie takes the order one
        # group per stream took
        for i, width in enumerate(self.hidden):
            stream = ([STEM_GROUP] if i == 0 else []) + [output_group(i, j) for j in range(BLOCKS_PER_STAGE)]
            for group in stream:
                self.groups[group] = width
            for j in range(BLOCKS_PER_STAGE):
                self.groups[inner_group(i, j)] = width
            ties.append(tuple(stream))
        self.ties = tuple(ties)

    def build(self, sizes: Mapping[str, int] | None = None, *,
              generator: torch.Generator | None = None) -> nn.Module:
        sizes = self.check_sizes(sizes)
        stages = [sizes[output_group(i, 0)] for i in range(len(self.hidden))]
        inner = [[sizes[inner_group(i, j)] for j in range(BLOCKS_PER_STAGE)]
                 for i in range(len(self.hidden))]
        model = PreResNet18(self.in_channels, self.num_classes, stages, inner)
        if generator is not None:
            default_init_(model, generator)
        return model

    def param_axes(self) -> dict[str, tuple[Axis | None, ...]]:
        axes: dict[str, tuple[Axis | None, ...]] = {"stem.weight": (Axis(STEM_GROUP), None, None, None)}
        previous = Axis(STEM_GROUP)
        for i in range(len(self.hidden)):
            for j in range(BLOCKS_PER_STAGE):
                inner = Axis(inner_group(i, j))
                out = Axis(output_group(i, j))
                prefix = f"stages.{i}.{j}"
                axes[f"{prefix}.bn1.weight"] = (previous,)
                axes[f"{prefix}.bn1.bias"] = (previous,)
                axes[f"{prefix}.conv1.weight"] = (inner, previous, None, None)
                axes[f"{prefix}.bn2.weight"] = (inner,)
                axes[f"{prefix}.bn2.bias"] = (inner,)
                axes[f"{prefix}.conv2.weight"] = (out, inner, None, None)
                if j == 0 and i > 0:
                    axes[f"{prefix}.shortcut.weight"] = (out, previous, None, None)
                previous = out
        axes["bn.weight"] = (previous,)
        axes["bn.bias"] = (previous,)
        axes["classifier.weight"] = (None, previous)
        axes["classifier.bias"] = (None,)
        return axes
