"""The arithmetic a client's training forward pass runs in: fp32, or bf16 autocast.

Under ``bf16`` the forward pass and the loss run under ``torch.autocast`` with bfloat16 (matrix
products and convolutions in bf16, reductions and the loss in fp32); parameters, gradients, the
optimiser and evaluation stay fp32. It is offered only where bf16 has hardware behind it: a GPU
that supports it, or a CPU with AMX or AVX512-BF16. Elsewhere the kernels would emulate bf16,
slower than fp32, so a run asking for it is refused rather than quietly made slow.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum

import torch


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"


def bf16_hardware(device: torch.device) -> str | None:
    """What runs bf16 natively on ``device`` ('AMX', 'AVX512-BF16', the GPU's name), or None."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device) if torch.cuda.is_bf16_supported() else None
    if device.type != "cpu":
        return None
    if getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)():
        return "AMX"
    if getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)():
        return "AVX512-BF16"
    return None


def check_supported(precision: Precision | str, device: torch.device) -> None:
    """Raise where ``precision`` asks for bf16 on a device without bf16 hardware."""
    if Precision(precision) is Precision.BF16 and bf16_hardware(device) is None:
        raise ValueError(f"precision bf16 needs a GPU with bf16 or a CPU with AMX or AVX512-BF16; "
                         f"this {device.type} has neither: set federation.precision to fp32")


@contextlib.contextmanager
def forward_precision(precision: Precision | str, device: torch.device) -> Iterator[None]:
    """The context a training forward pass and its loss run in."""
    if Precision(precision) is Precision.FP32:
        yield
        return
    with torch.autocast(device.type, dtype=torch.bfloat16):
        yield
