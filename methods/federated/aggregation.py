"""Coordinate-wise ("selective") aggregation of sub-model updates (HAS-FL Alg. 1; FedRolex A.2)."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

import torch
from torch import Tensor

Params = dict[str, Tensor]


Embedding = Callable[[Mapping[str, Tensor]], Params]
"""Sub-model tensors to global coordinates, zero outside the sub-model (a view's `embed`)."""


class ClientUpdate:
    """What the server receives from one client: its update and the coordinates it trained.

    Given in global coordinates (``delta``; it may hold anything outside ``mask``, which is never
    read there), or as the sub-model's own tensors (``compact``) with the ``embedding`` that places
    them, as the round loop gives it: then ``delta`` is built on first use, and aggregation and the
    statistics work in the sub-model's coordinates, which hold the same values. ``mask`` None means
    the client trained every coordinate.
    """

    def __init__(self, client: int, width: float, delta: Params | None, mask: Params | None, num_samples: int,
                 train_loss: float = math.nan, *, compact: Params | None = None,
                 embedding: Embedding | None = None) -> None:
        if (delta is None) == (compact is None) or (compact is not None and mask is not None and embedding is None):
            raise ValueError("a client update is its delta in global coordinates, or its compact tensors with "
                             "the embedding that places them")
        self.client, self.width, self.mask, self.num_samples = client, width, mask, num_samples
        self.train_loss = train_loss
        """The client's mean training loss over its local steps this round."""
        self.compact, self.embedding = compact, embedding
        self._delta = delta

    @property
    def delta(self) -> Params:
        """The update in global coordinates."""
        if self._delta is None:
            assert self.compact is not None
            self._delta = dict(self.compact) if self.embedding is None else self.embedding(self.compact)
        return self._delta


class Weighting(StrEnum):
    """Client weights: sample counts (HAS-FL), equal (FedRolex/HeteroFL), FedRolex A.3's options."""

    SAMPLES = "samples"
    EQUAL = "equal"
    SIZE = "size"
    UPDATE = "update"
    HYBRID = "hybrid"


def masked(tensor: Tensor, mask: Tensor | None) -> Tensor:
    """``tensor`` with zeros outside ``mask`` (unchanged when mask is None)."""
    return tensor if mask is None else torch.where(mask, tensor, torch.zeros_like(tensor))


def submodel_size(update: ClientUpdate) -> int:
    """Number of global coordinates the client trained."""
    if update.compact is not None:
        return sum(t.numel() for t in update.compact.values())
    if update.mask is None:
        return sum(t.numel() for t in update.delta.values())
    return int(sum(int(m.sum()) for m in update.mask.values()))


def update_norm(update: ClientUpdate) -> float:
    """L2 norm of the client's update over the coordinates it trained (summed in float64)."""
    if update.compact is not None:
        return math.sqrt(sum(float(t.double().pow(2).sum()) for t in update.compact.values()))
    mask = update.mask or {}
    total = sum(float(masked(d, mask.get(n)).double().pow(2).sum()) for n, d in update.delta.items())
    return math.sqrt(total)


def client_weights(scheme: Weighting | str, updates: Sequence[ClientUpdate]) -> list[float]:
    """Unnormalised weight of each client: samples, 1, sub-model size, update norm, or size x norm."""
    scheme = Weighting(scheme)
    if scheme is Weighting.SAMPLES:
        return [float(u.num_samples) for u in updates]
    if scheme is Weighting.EQUAL:
        return [1.0] * len(updates)
    if scheme is Weighting.SIZE:
        return [float(submodel_size(u)) for u in updates]
    if scheme is Weighting.UPDATE:
        return [update_norm(u) for u in updates]
    return [submodel_size(u) * update_norm(u) for u in updates]


@torch.no_grad()
def aggregate(global_params: Mapping[str, Tensor], updates: Sequence[ClientUpdate],
              weights: Sequence[float]) -> tuple[Params, Params]:
    """(new global params, aggregated update Δ̄).

    Each coordinate's Δ̄ is the weighted mean of the updates of exactly the clients whose mask
    holds it; where no client with positive weight holds it, Δ̄ = 0 and the value is kept as is.
    """
    if len(updates) != len(weights):
        raise ValueError(f"{len(updates)} updates but {len(weights)} weights")
    total = sum(weights)
    scale = [w / total if total > 0 else 0.0 for w in weights]
    # updates that share one mask object are summed before it is applied, once
    by_mask: dict[int, list[tuple[ClientUpdate, float]]] = {}
    for update, w in zip(updates, scale):
        by_mask.setdefault(id(update.mask), []).append((update, w))
    sums = [_compact_sum(group) for group in by_mask.values()]
    new_params: Params = {}
    mean_update: Params = {}
    for name, old in global_params.items():
        numerator = torch.zeros_like(old)
        denominator = torch.zeros_like(old)
        for group, compact_sum in zip(by_mask.values(), sums):
            masks = group[0][0].mask
            mask = None if masks is None else masks[name]
            if compact_sum is not None:
                numerator.add_(compact_sum[name])
            else:
                weighted = torch.zeros_like(old)
                for update, w in group:
                    weighted.add_(update.delta[name], alpha=w)
                numerator.add_(masked(weighted, mask))
            weight = sum(w for _, w in group)
            if mask is None:
                denominator.add_(weight)
            else:
                denominator.add_(mask.to(old.dtype), alpha=weight)
        covered = denominator > 0
        safe = torch.where(covered, denominator, torch.ones_like(denominator))
        mean = torch.where(covered, numerator / safe, torch.zeros_like(old))
        mean_update[name] = mean
        new_params[name] = torch.where(covered, old + mean, old)
    return new_params, mean_update


def _compact_sum(group: list[tuple[ClientUpdate, float]]) -> Params | None:
    """The group's weighted sum of updates in global coordinates, zero outside their shared mask,
    summed in the sub-model's coordinates and placed once (None unless every update is compact with
    the same embedding). Each coordinate's sum is the same sequence of additions as in global
    coordinates, so the aggregate is the same bit for bit."""
    first = group[0][0]
    if first.compact is None or any(u.compact is None or u.embedding != first.embedding for u, _ in group):
        return None
    weighted = {name: torch.zeros_like(t) for name, t in first.compact.items()}
    for update, w in group:
        assert update.compact is not None
        for name, total in weighted.items():
            total.add_(update.compact[name], alpha=w)
    return weighted if first.embedding is None else first.embedding(weighted)
