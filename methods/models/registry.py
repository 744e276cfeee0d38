"""Model families by architecture name, each imported only when a run builds it.

The families are named by module (not imported here), so that the code a run's key covers is the
family it builds (`family_module`), not every architecture.
"""
from __future__ import annotations

import importlib
from typing import Any

from methods.models.slicing import SliceableFamily

FAMILIES = {"conv": (".conv", "ConvFamily"), "char_lstm": (".lstm", "CharLSTMFamily"),
            "preresnet18": (".resnet", "PreResNet18Family")}
ARCHITECTURES = tuple(FAMILIES)
IMAGE_ARCHITECTURES = ("conv", "preresnet18")


def family_module(arch: str) -> str:
    """The module that holds the family of `arch`."""
    if arch not in FAMILIES:
        raise ValueError(f"unknown arch {arch!r}; valid: {', '.join(ARCHITECTURES)}")
    return importlib.util.resolve_name(FAMILIES[arch][0], __package__)


def build_family(arch: str, *, in_channels: int | None, num_classes: int,
                 **arch_kwargs: Any) -> SliceableFamily:
    """The family for ``arch``; ``arch_kwargs`` go to its constructor (e.g. ``hidden``).

    "preresnet18" takes ``hidden``: its four stage widths (default 64, 128, 256, 512).

    For "char_lstm" the classes are the vocabulary and there are no input channels.
    """
    family = getattr(importlib.import_module(family_module(arch)), FAMILIES[arch][1])
    if arch in IMAGE_ARCHITECTURES:
        if in_channels is None:
            raise ValueError(f"arch {arch!r} needs in_channels")
        return family(in_channels, num_classes, **arch_kwargs)
    if in_channels is not None:
        raise ValueError(f"arch {arch!r} takes no in_channels (pass None)")
    return family(vocab_size=num_classes, **arch_kwargs)
