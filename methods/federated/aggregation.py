"""Coordinate-wise ("selective") aggregation of sub-model updates (HAS-FL Alg. 1; FedRolex A.2)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import torch
from torch import Tensor

Params = dict[str, Tensor]


@dataclass
class ClientUpdate:
    """What the server receives from one client: its update in global coordinates and coverage.

    ``delta`` may hold anything outside ``mask``; it is never read there. ``mask`` None means
    the client trained every coordinate.
    """

    client: int
    width: float
    delta: Params
    mask: Params | None
    num_samples: int
    train_loss: float = math.nan
    """The client's mean training loss over its local steps this round."""


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
    if update.mask is None:
        return sum(t.numel() for t in update.delta.values())
    return int(sum(int(m.sum()) for m in update.mask.values()))


def update_norm(update: ClientUpdate) -> float:
    """L2 norm of the client's update over the coordinates it trained."""
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
    new_params: Params = {}
    mean_update: Params = {}
    for name, old in global_params.items():
        numerator = torch.zeros_like(old)
        denominator = torch.zeros_like(old)
        for group in by_mask.values():
            masks = group[0][0].mask
            mask = None if masks is None else masks[name]
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
