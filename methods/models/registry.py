"""Model families by architecture name."""
from __future__ import annotations

from typing import Any

from methods.models.conv import ConvFamily
from methods.models.lstm import CharLSTMFamily
from methods.models.resnet import PreResNet18Family
from methods.models.slicing import SliceableFamily

ARCHITECTURES = ("conv", "char_lstm", "preresnet18")


def build_family(arch: str, *, in_channels: int | None, num_classes: int,
                 **arch_kwargs: Any) -> SliceableFamily:
    """The family for ``arch``; ``arch_kwargs`` go to its constructor (e.g. ``hidden``).

    "preresnet18" takes ``hidden``: its four stage widths (default 64, 128, 256, 512).

    For "char_lstm" the classes are the vocabulary and there are no input channels.
    """
    if arch == "conv":
        if in_channels is None:
            raise ValueError("arch 'conv' needs in_channels")
        return ConvFamily(in_channels, num_classes, **arch_kwargs)
    if arch == "char_lstm":
        if in_channels is not None:
            raise ValueError("arch 'char_lstm' takes no in_channels (pass None)")
        return CharLSTMFamily(vocab_size=num_classes, **arch_kwargs)
    if arch == "preresnet18":
        if in_channels is None:
            raise ValueError("arch 'preresnet18' needs in_channels")
        return PreResNet18Family(in_channels, num_classes, **arch_kwargs)
    raise ValueError(f"unknown arch {arch!r}; valid: {', '.join(ARCHITECTURES)}")
