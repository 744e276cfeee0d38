"""Helpers shared by the model tests: copy parameters out of and into a module."""
from __future__ import annotations

from torch import Tensor, nn

from methods.federated.submodel import load_params


def params_of(model: nn.Module) -> dict[str, Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def load(model: nn.Module, params: dict[str, Tensor]) -> nn.Module:
    assert set(params) == {name for name, _ in model.named_parameters()}
    load_params(model, params)
    return model
