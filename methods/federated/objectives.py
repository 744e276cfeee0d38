"""Local objectives (client): SGD, FedProx's proximal term, SCAFFOLD's control variates.

An objective is built from an `ObjectiveContext` (`from_context`), its hyperparameters in its own
`Settings`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor, nn

from methods.federated.cohort import train_cohort
from methods.federated.data import ClientData
from methods.federated.labels import kept_logits
from methods.federated.local import LocalResult, LocalSettings
from methods.federated.optimizers import client_optimizer
from methods.federated.parts import Part, Settings
from methods.federated.precision import forward_precision
from methods.federated.submodel import Params, SubmodelView, load_params
from methods.models.stacked import StackedModel

# fedclaims behaviour version: 1

GradCorrection = Callable[[dict[str, nn.Parameter]], None]

__all__ = ["FedProxObjective", "LocalObjective", "LocalResult", "LocalSettings", "ObjectiveContext",
           "ScaffoldObjective", "train_local"]


@dataclass(frozen=True)
class ObjectiveContext:
    """What an objective is built from: its settings, the initial global model (server state such
    as control variates lives in its coordinates) and the number of clients."""

    settings: Any
    global_params: Mapping[str, Tensor]
    num_clients: int


def _add_to_grad(parameter: nn.Parameter, value: Tensor) -> None:
    if parameter.grad is None:
        parameter.grad = value.clone()
    else:
        parameter.grad.add_(value)


def train_local(model: nn.Module, start: Mapping[str, Tensor], data: ClientData,
                settings: LocalSettings, generator: torch.Generator,
                correction: GradCorrection | None = None) -> LocalResult:
    """K = E x ceil(n / batch) SGD steps of cross-entropy from ``start`` (over the logits of the
    client's ``classes`` where it has them, on its augmented batches where it augments; the forward
    pass in the settings' precision).

    Every epoch reshuffles with ``generator`` (CPU). ``correction`` edits the gradients after
    backward and before clipping. Losses are summed on the device and checked once at the end.
    """
    load_params(model, start)
    model.train()
    params = dict(model.named_parameters())
    optimizer = client_optimizer(settings.optimizer, params.values(), settings.lr, settings.momentum,
                                 settings.weight_decay)
    n = len(data)
    device = data.x.device
    loss_sum = torch.zeros((), device=device)
    steps = 0
    for _ in range(settings.epochs if n > 0 else 0):  # an empty split is one empty batch
        order = torch.randperm(n, generator=generator).to(device)
        for batch in order.split(settings.batch_size):
            optimizer.zero_grad(set_to_none=True)
            x, y = data.batch(batch, generator)
            with forward_precision(settings.precision, device):
                loss = F.cross_entropy(kept_logits(model(x), data.classes), y)
            loss.backward()
            if correction is not None:
                correction(params)
            if settings.clip_norm is not None:
                nn.utils.clip_grad_norm_(params.values(), settings.clip_norm)
            optimizer.step()
            loss_sum += loss.detach()
            steps += 1
    update = {name: p.detach() - start[name] for name, p in params.items()}
    mean_loss = float(loss_sum) / steps if steps else math.nan
    nonfinite = steps > 0 and not math.isfinite(mean_loss)
    return LocalResult(update, n, steps, mean_loss, nonfinite)


class LocalObjective(Part):
    """Plain SGD (FedAvg and every sub-model method).

    ``train`` trains one client with its module (the sequential reference); ``train_cohort``
    trains clients whose sub-models have the same shapes together through the family's stacked
    form, with the same per-client arithmetic.
    """

    @classmethod
    def from_context(cls, context: ObjectiveContext) -> LocalObjective:
        return cls()

    def settings(self, base: LocalSettings) -> LocalSettings:
        return base

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        return train_local(model, start, data, self.settings(settings), generator)

    def train_cohort(self, clients: Sequence[int], model: StackedModel,
                     views: Sequence[SubmodelView], starts: Sequence[Params],
                     data: Sequence[ClientData], settings: LocalSettings,
                     generators: Sequence[torch.Generator]) -> list[LocalResult]:
        return train_cohort(model, starts, data, self.settings(settings), generators)

    def end_round(self) -> None:
        """Server-side bookkeeping after all clients of a round trained."""

    @classmethod
    def trains_cohorts(cls) -> bool:
        """Whether ``train_cohort`` is this objective's own training: defined no higher in the class
        tree than ``train``. An objective that overrides only ``train`` (the documented minimum)
        trains one client at a time on every execution path."""
        return issubclass(defining_class(cls, "train_cohort"), defining_class(cls, "train"))


def defining_class(part: type, method: str) -> type:
    """The class in ``part``'s tree whose body defines ``method``."""
    return next(cls for cls in part.__mro__ if method in vars(cls))


def _stacked(per_client: Sequence[Mapping[str, Tensor]]) -> Params:
    return {name: torch.stack([p[name] for p in per_client]) for name in per_client[0]}


class FedProxObjective(LocalObjective):
    """Adds (mu/2)||w − w_global||² over the sub-model's coordinates (as its gradient)."""

    class Settings(Settings):
        mu: float = Field(0.01, ge=0.0)

    @classmethod
    def from_context(cls, context: ObjectiveContext) -> FedProxObjective:
        return cls(context.settings.mu)

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        def proximal(params: dict[str, nn.Parameter]) -> None:
            for name, p in params.items():
                _add_to_grad(p, self.mu * (p.detach() - start[name]))

        return train_local(model, start, data, self.settings(settings), generator, proximal)

    def train_cohort(self, clients: Sequence[int], model: StackedModel,
                     views: Sequence[SubmodelView], starts: Sequence[Params],
                     data: Sequence[ClientData], settings: LocalSettings,
                     generators: Sequence[torch.Generator]) -> list[LocalResult]:
        anchor = _stacked(starts)

        def proximal(params: Mapping[str, Tensor], grads: Mapping[str, Tensor]) -> None:
            for name, g in grads.items():
                g.add_(self.mu * (params[name].detach() - anchor[name]))

        return train_cohort(model, starts, data, self.settings(settings), generators, proximal)


class ScaffoldObjective(LocalObjective):
    """SCAFFOLD, option II: c_i+ = c_i − c + (x − y)/(K·lr); server c += (1/N) Σ_{i∈S} Δc_i.

    The local gradient is corrected by (c − c_i) before clipping. By default local steps are
    vanilla SGD (no momentum, no weight decay), the paper's canonical configuration; with
    ``keep_momentum`` the shared optimizer settings are kept. Control variates live in global
    coordinates; a client's sub-model reads and writes only its slice.
    """

    class Settings(Settings):
        keep_momentum: bool = False
        """Keep the shared optimizer's momentum and weight decay in local steps."""

    @classmethod
    def from_context(cls, context: ObjectiveContext) -> ScaffoldObjective:
        return cls(context.global_params, context.num_clients, context.settings.keep_momentum)

    def __init__(self, global_params: Mapping[str, Tensor], num_clients: int,
                 keep_momentum: bool = False) -> None:
        self.num_clients = num_clients
        self.keep_momentum = keep_momentum
        self.server_c: Params = {n: torch.zeros_like(t) for n, t in global_params.items()}
        self.client_c: dict[int, Params] = {}
        self._pending: Params = {n: torch.zeros_like(t) for n, t in global_params.items()}

    def settings(self, base: LocalSettings) -> LocalSettings:
        return base if self.keep_momentum else replace(base, momentum=0.0, weight_decay=0.0)

    def _controls(self, client: int, view: SubmodelView) -> tuple[Params, Params]:
        """(c, c − c_i) on the client's sub-model."""
        if client not in self.client_c:
            self.client_c[client] = {n: torch.zeros_like(t) for n, t in self.server_c.items()}
        c = view.extract(self.server_c)
        c_i = view.extract(self.client_c[client])
        return c, {name: c[name] - c_i[name] for name in c}

    def _update_controls(self, client: int, view: SubmodelView, start: Params, c: Params,
                         result: LocalResult, settings: LocalSettings) -> None:
        if result.steps == 0:
            return
        scale = 1.0 / (result.steps * settings.lr)
        # 0 − update is start − trained, bit for bit (a difference of two floats negates exactly)
        delta_c = view.embed({name: (0.0 - result.update[name]) * scale - c[name] for name in c})
        mask = view.mask
        with torch.no_grad():
            for name, d in delta_c.items():
                if mask is not None:
                    d = torch.where(mask[name], d, torch.zeros_like(d))
                self.client_c[client][name].add_(d)
                self._pending[name].add_(d)

    def train(self, client: int, model: nn.Module, view: SubmodelView, start: Params,
              data: ClientData, settings: LocalSettings, generator: torch.Generator) -> LocalResult:
        settings = self.settings(settings)
        c, shift = self._controls(client, view)

        def control(params: dict[str, nn.Parameter]) -> None:
            for name, p in params.items():
                _add_to_grad(p, shift[name])

        result = train_local(model, start, data, settings, generator, control)
        self._update_controls(client, view, start, c, result, settings)
        return result

    def train_cohort(self, clients: Sequence[int], model: StackedModel,
                     views: Sequence[SubmodelView], starts: Sequence[Params],
                     data: Sequence[ClientData], settings: LocalSettings,
                     generators: Sequence[torch.Generator]) -> list[LocalResult]:
        settings = self.settings(settings)
        controls = [self._controls(i, v) for i, v in zip(clients, views)]
        shift = _stacked([s for _, s in controls])

        def control(params: Mapping[str, Tensor], grads: Mapping[str, Tensor]) -> None:
            for name, g in grads.items():
                g.add_(shift[name])

        results = train_cohort(model, starts, data, settings, generators, control)
        for i, view, start, (c, _), result in zip(clients, views, starts, controls, results):
            self._update_controls(i, view, start, c, result, settings)
        return results

    def end_round(self) -> None:
        with torch.no_grad():
            for name, pending in self._pending.items():
                self.server_c[name].add_(pending, alpha=1.0 / self.num_clients)
                pending.zero_()

