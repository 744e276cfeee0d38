"""Model configuration shared by every runner that builds a width-sliceable model."""
from __future__ import annotations

from typing import Annotated, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from methods.models.registry import build_family, family_module
from methods.models.slicing import SliceableFamily


class WidthScaled(BaseModel):
    """An image model whose ``width_scale`` multiplies every hidden width (rounded, at least 1), so that a study
    can move the model's width along one numeric axis (`model.width_scale`); at its default, 1, it is left out
    of a run's config, so no key changes."""

    model_config = ConfigDict(extra="forbid")
    hidden: list[int] = Field(min_length=1)
    width_scale: float = Field(1.0, gt=0, exclude_if=lambda value: value == 1.0)

    @property
    def widths(self) -> list[int]:
        """The hidden widths the model is built with."""
        return [max(1, round(width * self.width_scale)) for width in self.hidden]


class ConvModel(WidthScaled):
    """HeteroFL's "Conv" family: 3x3 conv, BN, ReLU, 2x2 max-pool per hidden width."""

    arch: Literal["conv"]
    in_channels: int = Field(ge=1)
    num_classes: int = Field(ge=2)
    image_size: int = Field(ge=8)
    batchnorm_eps_exponent: float = Field(0.0, ge=0, exclude_if=lambda value: value == 0)
    """Each block's batch-norm eps is 1e-5 times the sub-model's share of its width to this power: 0 (the default,
    left out of a run's config, so no key changes) the project's eps at every width; 2 the authors' Scaler as their
    code ran it (it divides a width-p sub-model's activations by p before batch norm, which then normalises with
    eps 1e-5 p²: `methods.models.conv.ConvFamily`, docs/conformance.md)."""


class PreResNet18Model(WidthScaled):
    """Pre-activation ResNet-18 (HeteroFL's and FedRolex's CIFAR model); stage widths sliced."""

    arch: Literal["preresnet18"]
    hidden: list[int] = Field(default=[64, 128, 256, 512], min_length=4, max_length=4)
    in_channels: int = Field(3, ge=1)
    num_classes: int = Field(10, ge=2)
    image_size: int = Field(32, ge=8)


class CharLSTMModel(BaseModel):
    """Two-layer character LSTM; hidden units sliced inside each gate block."""

    model_config = ConfigDict(extra="forbid")
    arch: Literal["char_lstm"]
    hidden: int = Field(256, ge=1)
    embed_dim: int = Field(8, ge=1)
    vocab_size: int = Field(95, ge=2)
    num_layers: int = Field(2, ge=1)
    seq_len: int = Field(80, ge=1)


ImageModel = (ConvModel, PreResNet18Model)
ModelConfig = Annotated[ConvModel | PreResNet18Model | CharLSTMModel, Field(discriminator="arch")]


def model_sources(config: ModelConfig) -> list[str]:
    """The module of the model family a config builds (imported by name, so a run's key names it)."""
    return [family_module(config.arch)]


def build_model_family(config: ConvModel | PreResNet18Model | CharLSTMModel) -> SliceableFamily:
    if isinstance(config, ConvModel) and config.batchnorm_eps_exponent:
        return build_family(config.arch, in_channels=config.in_channels, num_classes=config.num_classes,
                            hidden=config.widths, batchnorm_eps_exponent=config.batchnorm_eps_exponent)
    if isinstance(config, WidthScaled):
        return build_family(config.arch, in_channels=config.in_channels,
                            num_classes=config.num_classes, hidden=config.widths)
    return build_family("char_lstm", in_channels=None, num_classes=config.vocab_size,
                        embed_dim=config.embed_dim, hidden=config.hidden, num_layers=config.num_layers)


def example_input(config: ConvModel | PreResNet18Model | CharLSTMModel) -> torch.Tensor:
    """One input sample, as the model's forward pass takes it."""
    if isinstance(config, ImageModel):
        return torch.zeros(1, config.in_channels, config.image_size, config.image_size)
    return torch.zeros(1, config.seq_len, dtype=torch.long)
