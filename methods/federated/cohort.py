"""Local training of a cohort: G clients whose sub-models have the same shapes, trained together.

Each client follows ``objectives.train_local`` exactly: E epochs, each reshuffled with the
client's own generator, mini-batches of ``batch_size`` with a ragged last one (augmented where
the client augments), cross-entropy over the client's kept logits averaged over its batch, the
gradient correction, clipping to the client's own norm, then SGD with the client's own momentum
buffers. Clients with fewer samples take fewer steps:
once finished, a client neither moves nor decays its momentum. Grouped steps put the active
clients in one graph, one per batch size among them (batch norm statistics stay per client
over exactly its batch); otherwise clients go forward and backward one at a time. Either way
the clients share one clipping and optimizer step.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from methods.federated.data import ClientData
from methods.federated.labels import kept_logits, kept_logits_stacked
from methods.federated.local import LocalResult, LocalSettings
from methods.federated.precision import Precision, forward_precision
from methods.federated.stacked_sgd import StackedSGD, clip_per_client_
from methods.models.stacked import StackedModel

StackedCorrection = Callable[[Mapping[str, Tensor], Mapping[str, Tensor]], None]
"""Adds a per-client term to the stacked gradients (second argument), given the parameters."""


class _ClientBatches:
    """One client's mini-batches, epoch after epoch, drawn from its generator as train_local
    draws them."""

    def __init__(self, data: ClientData, batch_size: int, epochs: int,
                 generator: torch.Generator) -> None:
        self.data = data
        self.batch_size = batch_size
        self.generator = generator
        self.per_epoch = math.ceil(len(data) / batch_size)
        self.steps = epochs * self.per_epoch
        self._batches: tuple[Tensor, ...] = ()

    def at(self, step: int) -> Tensor:
        """Sample indices of the client's ``step``-th mini-batch (steps come in order)."""
        within = step % self.per_epoch
        if within == 0:
            order = torch.randperm(len(self.data), generator=self.generator)
            self._batches = order.to(self.data.x.device).split(self.batch_size)
        return self._batches[within]


def train_cohort(model: StackedModel, starts: Sequence[Mapping[str, Tensor]],
                 data: Sequence[ClientData], settings: LocalSettings,
                 generators: Sequence[torch.Generator],
                 correction: StackedCorrection | None = None) -> list[LocalResult]:
    """``train_local`` for every client of the cohort; results in the order of ``starts``."""
    clients = len(starts)
    device = data[0].x.device
    grouped = model.groups_clients(data[0].x.shape[1:], settings.batch_size)
    params = {name: torch.stack([s[name] for s in starts]).requires_grad_(grouped)
              for name in starts[0]}
    # one client at a time: each client's leaves share storage with its row of ``params``
    leaves = [] if grouped else [{name: p[c].detach().requires_grad_(True)
                                  for name, p in params.items()} for c in range(clients)]
    optimizer = StackedSGD(params, settings.lr, settings.momentum, settings.weight_decay)
    batches = [_ClientBatches(d, settings.batch_size, settings.epochs, g)
               for d, g in zip(data, generators)]
    loss_sums = torch.zeros(clients, device=device)
    for step in range(max((b.steps for b in batches), default=0)):
        active = [c for c in range(clients) if step < batches[c].steps]
        chosen = {c: batches[c].at(step) for c in active}
        if grouped:
            grads = _grouped_gradients(model, params, data, chosen, generators, loss_sums, settings.precision)
        else:
            grads = _client_gradients(model, leaves, params, data, chosen, generators, loss_sums,
                                      settings.precision)
        with torch.no_grad():
            if correction is not None:
                correction(params, grads)
            if settings.clip_norm is not None:
                clip_per_client_(grads, settings.clip_norm)
        optimizer.step(grads, None if len(active) == clients
                       else torch.tensor(active, device=device))
    return [_result(params, starts[c], c, len(data[c]), batches[c].steps, loss_sums[c])
            for c in range(clients)]


def _gradient(parameter: Tensor) -> Tensor:
    """The gradient the last backward() left on `parameter`."""
    if parameter.grad is None:
        raise RuntimeError("backward() left no gradient on a parameter of the cohort")
    return parameter.grad


def _grouped_gradients(model: StackedModel, params: dict[str, Tensor],
                       data: Sequence[ClientData], chosen: dict[int, Tensor],
                       generators: Sequence[torch.Generator], loss_sums: Tensor,
                       precision: Precision) -> dict[str, Tensor]:
    """One graph per batch size among the active clients (batch norm stays per client)."""
    clients = len(loss_sums)
    by_size: dict[int, list[int]] = {}
    for c, batch in chosen.items():
        by_size.setdefault(len(batch), []).append(c)
    for p in params.values():
        p.grad = None
    for members in by_size.values():
        index = None if len(members) == clients else torch.tensor(members, device=loss_sums.device)
        view = params if index is None else {n: p.index_select(0, index) for n, p in params.items()}
        inputs, labels = zip(*(data[c].batch(chosen[c], generators[c]) for c in members))
        x, y = torch.stack(inputs), torch.stack(labels)
        with forward_precision(precision, x.device):
            logits = kept_logits_stacked(model.grouped_logits(view, x), [data[c].classes for c in members])
            losses = F.cross_entropy(logits.flatten(0, 1), y.flatten(),
                                     reduction="none").view(len(members), -1).mean(dim=1)
        losses.sum().backward()
        with torch.no_grad():
            loss_sums.index_add_(0, torch.tensor(members, device=loss_sums.device),
                                 losses.detach())
    return {name: _gradient(p) for name, p in params.items()}


def _client_gradients(model: StackedModel, leaves: list[dict[str, Tensor]],
                      params: dict[str, Tensor], data: Sequence[ClientData],
                      chosen: dict[int, Tensor], generators: Sequence[torch.Generator],
                      loss_sums: Tensor, precision: Precision) -> dict[str, Tensor]:
    """Forward and backward one active client after another; stacked gradients (zero rows for
    the clients that have finished)."""
    for c, batch in chosen.items():
        for leaf in leaves[c].values():
            leaf.grad = None
        x, y = data[c].batch(batch, generators[c])
        with forward_precision(precision, x.device):
            loss = F.cross_entropy(kept_logits(model.client_logits(leaves[c], x), data[c].classes), y)
        loss.backward()
        loss_sums[c] += loss.detach()
    return {name: torch.stack([_gradient(leaves[c][name]) if c in chosen else torch.zeros_like(p[c])
                               for c in range(len(leaves))]) for name, p in params.items()}


def _result(params: Mapping[str, Tensor], start: Mapping[str, Tensor], client: int, num_samples: int, steps: int,
            loss_sum: Tensor) -> LocalResult:
    update = {name: p.detach()[client] - start[name] for name, p in params.items()}
    mean_loss = float(loss_sum) / steps if steps else math.nan
    nonfinite = steps > 0 and not math.isfinite(mean_loss)
    return LocalResult(update, num_samples, steps, mean_loss, nonfinite)
