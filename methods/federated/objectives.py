"""Local objectives (client): SGD, FedProx's proximal term, SCAFFOLD's control variates."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from methods.federated.data import ClientData
from methods.federated.submodel import Params, SubmodelView, load_params

GradCorrection = Callable[[dict[str, nn.Parameter]], None]


class ObjectiveName(StrEnum):
    SGD = "sgd"
    FEDPROX = "fedprox"
    SCAFFOLD = "scaffold"


@dataclass(frozen=True)
class LocalSettings:
    """One round's local optimisation: E epochs of mini-batches, SGD, gradient-norm clipping."""

    epochs: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    clip_norm: float | None


@dataclass
class LocalResult:
    """Trained sub-model parameters and how training went."""

    params: Params
    num_samples: int
    steps: int
    mean_loss: float
    nonfinite: bool


def _add_to_grad(parameter: nn.Parameter, value: Tensor) -> None:
    if parameter.grad is None:
        parameter.grad = value.clone()
    else:
        parameter.grad.add_(value)


def train_local(model: nn.Module, start: Mapping[str, Tensor], data: ClientData,
                settings: LocalSettings, generator: torch.Generator,
                correction: GradCorrection | None = None) -> LocalResult:
    """K = E x ceil(n / batch) SGD steps of cross-entropy from ``start``.

    Every epoch reshuffles with ``generator`` (CPU). ``correction`` edits the gradients after
    backward and before clipping. Losses are summed on the device and checked once at the end.
    """
    load_params(model, start)
    model.train()
    params = dict(model.named_parameters())
    optimizer = torch.optim.SGD(params.values(), lr=settings.lr, momentum=settings.momentum,
                                weight_decay=settings.weight_decay)
    n = len(data)
    device = data.x.device
    loss_sum = torch.zeros((), device=device)
    steps = 0
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=generator).to(device)
        for batch in order.split(settings.batch_size):
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(data.x[batch]), data.y[batch])
            loss.backward()
            if correction is not None:
                correction(params)
            if settings.clip_norm is not None:
                nn.utils.clip_grad_norm_(params.values(), settings.clip_norm)
            optimizer.step()
            loss_sum += loss.detach()
            steps += 1
    trained = {name: p.detach().clone() for name, p in params.items()}
    mean_loss = float(loss_sum) / steps if steps else math.nan
    nonfinite = (steps > 0 and not math.isfinite(mean_loss)) or not all(
        bool(torch.isfinite(t).all()) for t in trained.values())
    return LocalResult(trained, n, steps, mean_loss, nonfinite)


class LocalObjective:
    """Plain SGD (FedAvg and every sub-model method)."""

    def settings(self, base: LocalSettings) -> LocalSettings:
        return base

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        return train_local(model, start, data, self.settings(settings), generator)

    def end_round(self) -> None:
        """Server-side bookkeeping after all clients of a round trained."""


class FedProxObjective(LocalObjective):
    """Adds (mu/2)||w − w_global||² over the sub-model's coordinates (as its gradient)."""

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        def proximal(params: dict[str, nn.Parameter]) -> None:
            for name, p in params.items():
                _add_to_grad(p, self.mu * (p.detach() - start[name]))

        return train_local(model, start, data, self.settings(settings), generator, proximal)


class ScaffoldObjective(LocalObjective):
    """SCAFFOLD, option II: c_i+ = c_i − c + (x − y)/(K·lr); server c += (1/N) Σ_{i∈S} Δc_i.

    The local gradient is corrected by (c − c_i) before clipping. By default local steps are
    vanilla SGD (no momentum, no weight decay), the paper's canonical configuration; with
    ``keep_momentum`` the shared optimizer settings are kept. Control variates live in global
    coordinates; a client's sub-model reads and writes only its slice.
    """

    def __init__(self, global_params: Mapping[str, Tensor], num_clients: int,
                 keep_momentum: bool = False) -> None:
        self.num_clients = num_clients
        self.keep_momentum = keep_momentum
        self.server_c: Params = {n: torch.zeros_like(t) for n, t in global_params.items()}
        self.client_c: dict[int, Params] = {}
        self._pending: Params = {n: torch.zeros_like(t) for n, t in global_params.items()}

    def settings(self, base: LocalSettings) -> LocalSettings:
        return base if self.keep_momentum else replace(base, momentum=0.0, weight_decay=0.0)

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        settings = self.settings(settings)
        if client not in self.client_c:
            self.client_c[client] = {n: torch.zeros_like(t) for n, t in self.server_c.items()}
        c = view.extract(self.server_c)
        c_i = view.extract(self.client_c[client])
        shift = {name: c[name] - c_i[name] for name in c}

        def control(params: dict[str, nn.Parameter]) -> None:
            for name, p in params.items():
                _add_to_grad(p, shift[name])

        result = train_local(model, start, data, settings, generator, control)
        if result.steps == 0:
            return result
        scale = 1.0 / (result.steps * settings.lr)
        delta_c = view.embed({name: (start[name] - result.params[name]) * scale - c[name]
                              for name in c})
        mask = view.mask
        with torch.no_grad():
            for name, d in delta_c.items():
                if mask is not None:
                    d = torch.where(mask[name], d, torch.zeros_like(d))
                self.client_c[client][name].add_(d)
                self._pending[name].add_(d)
        return result

    def end_round(self) -> None:
        with torch.no_grad():
            for name, pending in self._pending.items():
                self.server_c[name].add_(pending, alpha=1.0 / self.num_clients)
                pending.zero_()


def build_objective(name: ObjectiveName | str, global_params: Mapping[str, Tensor],
                    num_clients: int, prox_mu: float, scaffold_momentum: bool) -> LocalObjective:
    """The objective named ``name`` with its settings."""
    name = ObjectiveName(name)
    if name is ObjectiveName.SGD:
        return LocalObjective()
    if name is ObjectiveName.FEDPROX:
        return FedProxObjective(prox_mu)
    return ScaffoldObjective(global_params, num_clients, scaffold_momentum)
