"""Coordinate-wise ("selective") aggregation of sub-model updates (HAS-FL Alg. 1; FedRolex A.2)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol

import torch
from torch import Tensor

from methods.models.slicing import Index

Params = dict[str, Tensor]


class Placement(Protocol):
    """Where a sub-model's tensors lie in global coordinates (a round's `SubmodelView`)."""

    @property
    def mask(self) -> Params | None:
        """Global-shaped boolean masks of the sub-model's coordinates."""

    def embed(self, sub: Mapping[str, Tensor]) -> Params:
        """Sub-model tensors in global coordinates, zero outside the sub-model."""

    def coordinates(self, name: str) -> Index:
        """Where the sub-model's tensor ``name`` lies in the global one."""


class ClientUpdate:
    """What the server receives from one client: its update and the coordinates it trained.

    Given in global coordinates (``delta``; it may hold anything outside ``mask``, which is never
    read there), or as the sub-model's own tensors (``compact``) with the ``placement`` that puts
    them in global coordinates, as the round loop gives it: then ``delta`` and ``mask`` (the
    placement's) are built on first use, and aggregation and the statistics work in the sub-model's
    coordinates, which hold the same values. ``mask`` None (and no placement) means the client
    trained every coordinate.
    """

    def __init__(self, client: int, width: float, delta: Params | None, mask: Params | None, num_samples: int,
                 train_loss: float = math.nan, *, compact: Params | None = None,
                 placement: Placement | None = None) -> None:
        if (delta is None) == (compact is None) or (compact is not None and mask is not None and placement is None):
            raise ValueError("a client update is its delta in global coordinates, or its compact tensors with "
                             "the placement that puts them there")
        self.client, self.width, self.num_samples = client, width, num_samples
        self._mask = mask
        self.train_loss = train_loss
        """The client's mean training loss over its local steps this round."""
        self.compact, self.placement = compact, placement
        self._delta = delta

    @property
    def mask(self) -> Params | None:
        """Global-shaped boolean masks of the coordinates the client trained (None: all of them)."""
        return self.placement.mask if self._mask is None and self.placement is not None else self._mask

    @property
    def shared(self) -> int:
        """Identity of what the update shares with the round's other clients of its sub-model: its
        placement, else its mask object (None: the whole model)."""
        return id(self.placement) if self.placement is not None else id(self._mask)

    @property
    def delta(self) -> Params:
        """The update in global coordinates."""
        if self._delta is None:
            assert self.compact is not None
            self._delta = dict(self.compact) if self.placement is None else self.placement.embed(self.compact)
        return self._delta


class Weighting(StrEnum):
    """How clients are weighted in a coordinate's mean.

    One weight per client: sample counts (HAS-FL), equal (FedRolex's and HeteroFL's default). Weights per
    coordinate, FedRolex A.3's options as its reference code computes them (`methods.federated.coordinate_weights`):
    ``size`` (the client's kept output units of the layer), ``update`` (how often the coordinate has been
    updated), ``hybrid`` (both multiplied).
    """

    SAMPLES = "samples"
    EQUAL = "equal"
    SIZE = "size"
    UPDATE = "update"
    HYBRID = "hybrid"

    @property
    def per_coordinate(self) -> bool:
        return self in (Weighting.SIZE, Weighting.UPDATE, Weighting.HYBRID)


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
        return math.sqrt(sum(float(_squared(t).sum()) for t in update.compact.values()))
    mask = update.mask or {}
    total = sum(float(_squared(masked(d, mask.get(n))).sum()) for n, d in update.delta.items())
    return math.sqrt(total)


def _squared(tensor: Tensor) -> Tensor:
    """The elements squared in float64 (one new tensor)."""
    wide = tensor.double()
    return wide.mul_(wide) if wide is not tensor else wide * wide


def client_weights(scheme: Weighting | str, updates: Sequence[ClientUpdate]) -> list[float]:
    """Unnormalised weight of each client: its samples, or 1 (per-coordinate schemes have no such weight)."""
    scheme = Weighting(scheme)
    if scheme.per_coordinate:
        raise ValueError(f"weighting {scheme.value!r} weighs each coordinate: methods.federated.coordinate_weights")
    if scheme is Weighting.SAMPLES:
        return [float(u.num_samples) for u in updates]
    return [1.0] * len(updates)


@torch.no_grad()
def aggregate_per_coordinate(global_params: Mapping[str, Tensor], updates: Sequence[ClientUpdate],
                             weights: Sequence[Mapping[str, Tensor]]) -> tuple[Params, Params]:
    """`aggregate` with a weight for every client and coordinate (global-shaped, 0 where the client does
    not contribute): Δ̄ = Σ w·Δ / Σ w where Σ w > 0, else 0 and the value kept."""
    if len(updates) != len(weights):
        raise ValueError(f"{len(updates)} updates but {len(weights)} weight sets")
    new_params: Params = {}
    mean_update: Params = {}
    for name, old in global_params.items():
        numerator = torch.zeros_like(old)
        denominator = torch.zeros_like(old)
        for update, weight in zip(updates, weights):
            mask = None if update.mask is None else update.mask[name]
            numerator.addcmul_(masked(update.delta[name], mask), weight[name])
            denominator.add_(weight[name])
        new_params[name], mean_update[name] = _mean_step(old, numerator, denominator)
    return new_params, mean_update


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
    # updates that share one placement (or mask object) are summed before it is applied, once
    by_share: dict[int, list[tuple[ClientUpdate, float]]] = {}
    for update, w in zip(updates, scale):
        by_share.setdefault(update.shared, []).append((update, w))
    groups = list(by_share.values())
    sums = [_compact_sum(group) for group in groups]
    new_params: Params = {}
    mean_update: Params = {}
    compact = all(compact_sum is not None for compact_sum in sums)
    for name, old in global_params.items():
        if compact:
            new_params[name], mean_update[name] = _aggregate_compact(name, old, groups, sums)
            continue
        numerator = torch.zeros_like(old)
        denominator = torch.zeros_like(old)
        for group in groups:
            mask = None if group[0][0].mask is None else group[0][0].mask[name]
            weighted = torch.zeros_like(old)
            for update, w in group:
                weighted.add_(update.delta[name], alpha=w)
            numerator.add_(masked(weighted, mask))
            weight = sum(w for _, w in group)
            if mask is None:
                denominator.add_(weight)
            else:
                denominator.add_(mask, alpha=weight)
        new_params[name], mean_update[name] = _mean_step(old, numerator, denominator)
    return new_params, mean_update


def _mean_step(old: Tensor, numerator: Tensor, denominator: Tensor) -> tuple[Tensor, Tensor]:
    """(old + Δ̄, Δ̄), Δ̄ = numerator / denominator where the denominator is positive, else 0 and
    the value kept (``numerator`` and ``denominator`` are overwritten)."""
    covered = denominator > 0
    mean = torch.where(covered, numerator.div_(denominator.masked_fill_(~covered, 1.0)), 0.0)
    return torch.where(covered, old + mean, old), mean


def _aggregate_compact(name: str, old: Tensor, groups: list[list[tuple[ClientUpdate, float]]],
                       sums: list[Params | None]) -> tuple[Tensor, Tensor]:
    """`aggregate` of one tensor when every group's sum is compact: numerator and denominator are
    built in the smallest box holding every group's coordinates, the only place Δ̄ can be non-zero.
    Inside it each coordinate gets the additions and division it would in global coordinates;
    outside it Δ̄ = 0 and the value is kept. The result is the same bit for bit."""
    indices = [_coordinates(group[0][0].placement, name, old.shape) for group in groups]
    weights = [sum(w for _, w in group) for group in groups]
    if len(groups) == 1 and weights[0] > 0:
        return _one_submodel(old, indices[0], sums[0], name, weights[0])
    box = _box(indices, old.shape)
    shape = [s.stop - s.start for s in box]
    numerator = old.new_zeros(shape)
    denominator = old.new_zeros(shape)
    for compact_sum, weight, index in zip(sums, weights, indices):
        assert compact_sum is not None
        within = _within(index, box)
        _add_at(numerator, within, compact_sum[name])
        _add_at(denominator, within, weight)
    new, mean = _mean_step(old[box], numerator, denominator)
    if list(old.shape) == shape:
        return new, mean
    full_new, full_mean = old.clone(), torch.zeros_like(old)
    full_new[box], full_mean[box] = new, mean
    return full_new, full_mean


def _one_submodel(old: Tensor, index: Index, compact_sum: Params | None, name: str,
                  weight: float) -> tuple[Tensor, Tensor]:
    """`_aggregate_compact` when one sub-model with positive weight is aggregated: its coordinates
    are covered once and no other is. A sum that started at +0 is never −0, so it equals the
    numerator 0 + itself, and Δ̄ is it over the weight there, 0 elsewhere."""
    assert compact_sum is not None
    mean = compact_sum[name].div_(weight)
    if _is_box(index) and all(s.start == 0 and s.stop == size for s, size in zip(index, old.shape)):  # type: ignore[union-attr]
        return old + mean, mean
    new, full_mean = old.clone(), torch.zeros_like(old)
    new[index] = old[index] + mean
    full_mean[index] = mean
    return new, full_mean


def _coordinates(placement: Placement | None, name: str, shape: torch.Size) -> Index:
    return tuple(slice(0, size) for size in shape) if placement is None else placement.coordinates(name)


def _box(indices: Sequence[Index], shape: torch.Size) -> tuple[slice, ...]:
    """The smallest box (a slice per dim) that holds every index's coordinates."""
    low, high = list(shape), [0] * len(shape)
    for index in indices:
        for dim, i in enumerate(index):
            if isinstance(i, Tensor) and i.numel() == 0:
                continue
            start, stop = (i.start, i.stop) if isinstance(i, slice) else (int(i.min()), int(i.max()) + 1)
            low[dim], high[dim] = min(low[dim], start), max(high[dim], stop)
    return tuple(slice(a, max(a, b)) for a, b in zip(low, high))


def _within(index: Index, box: tuple[slice, ...]) -> Index:
    """``index`` relative to the box's corner."""
    return tuple(slice(i.start - b.start, i.stop - b.start) if isinstance(i, slice) else i - b.start
                 for i, b in zip(index, box))


def _is_box(index: Index) -> bool:
    return all(isinstance(i, slice) for i in index)


def _add_at(target: Tensor, index: Index, value: Tensor | float) -> None:
    """``target`` + ``value`` on ``index``'s coordinates (each coordinate once)."""
    if _is_box(index):
        target[index].add_(value)
    else:
        tensors = tuple(i for i in index if isinstance(i, Tensor))
        target.index_put_(tensors, target[tensors] + value)


def _compact_sum(group: list[tuple[ClientUpdate, float]]) -> Params | None:
    """The group's weighted sum of updates in the sub-model's coordinates (None unless every update
    is compact with the same placement). Each coordinate's sum is the same sequence of additions
    as in global coordinates, so placing it gives the aggregate bit for bit."""
    first = group[0][0]
    if first.compact is None or any(u.compact is None or u.placement is not first.placement for u, _ in group):
        return None
    weighted = {name: torch.zeros_like(t) for name, t in first.compact.items()}
    for update, w in group:
        assert update.compact is not None
        for name, total in weighted.items():
            total.add_(update.compact[name], alpha=w)
    return weighted
