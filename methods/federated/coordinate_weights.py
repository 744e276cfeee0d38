"""Per-coordinate client weights in aggregation, as the FedRolex (and HeteroFL) reference code's server
computes them in its ``combine``.

Each global coordinate is still averaged over exactly the clients that hold it; what a client weighs
there depends on the tensor:

- a hidden layer's weights (tensors of two or more dims outside the output layer): 1 or the client's
  sample count (``equal``, ``samples``), the client's kept output units of that layer (``size``: the
  tensor's first dim in its sub-model), the coordinate's update count (``update``), or both multiplied
  (``hybrid``);
- with ``count_weighted``, one-dimensional tensors (batch-norm scales and shifts, biases) and the output
  layer weigh by the coordinate's update count whatever the weighting (the reference does so always);
  without it they follow the weighting as the hidden layers do;
- with ``label_split``, a client holds only the output-layer rows (and bias entries) of the labels it
  holds: the others are not among its coordinates.

Update counts start at 1 for every coordinate and grow by one for each client that holds it, in the
order the round's clients are given, so later clients of a round weigh more: three clients sharing a
coordinate in round 0 weigh 1 : 2 : 3. (In the reference the first tensor of the state dict, the
stem's conv weight, reads the counts as they stood at the round's start; its hidden weights weigh
equally by default, so this matters only under ``update`` and ``hybrid`` weighting.)
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from methods.federated.aggregation import ClientUpdate, Params, Weighting
from methods.models.slicing import SliceableFamily


class CoordinateWeights:
    """The weights of every round's clients, and the update counts they carry from round to round."""

    def __init__(self, family: SliceableFamily, global_params: Mapping[str, Tensor], weighting: Weighting | str,
                 count_weighted: bool, label_split: bool) -> None:
        if label_split and not family.output_layer:
            raise ValueError(f"{type(family).__name__} names no output layer, so it cannot split labels")
        self.weighting = Weighting(weighting)
        self.output_layer = set(family.output_layer)
        self.count_weighted = count_weighted
        self.label_split = label_split
        self.counts: Params = {name: torch.ones_like(t) for name, t in global_params.items()}

    def round_weights(self, updates: Sequence[ClientUpdate],
                      classes: Mapping[int, Tensor | None]) -> list[Params]:
        """Global-shaped weights of each update (0 outside its coordinates), in order; the counts grow."""
        return [self._client_weights(update, classes.get(update.client)) for update in updates]

    def _client_weights(self, update: ClientUpdate, classes: Tensor | None) -> Params:
        weights: Params = {}
        for name, counts in self.counts.items():
            held = self._held(update, name, counts, classes)
            weights[name] = torch.where(held, self._rule(update, name, counts), 0.0)
            counts.add_(held.to(counts.dtype))
        return weights

    def _held(self, update: ClientUpdate, name: str, like: Tensor, classes: Tensor | None) -> Tensor:
        held = torch.ones(like.shape, dtype=torch.bool, device=like.device) if update.mask is None \
            else update.mask[name]
        if self.label_split and name in self.output_layer:
            if classes is None:
                raise ValueError(f"client {update.client}: a label split needs the classes it holds")
            held = held & classes.view(-1, *([1] * (like.dim() - 1)))
        return held

    def _rule(self, update: ClientUpdate, name: str, counts: Tensor) -> Tensor | float:
        if self.count_weighted and (counts.dim() == 1 or name in self.output_layer):
            return counts
        if self.weighting is Weighting.SAMPLES:
            return float(update.num_samples)
        if self.weighting is Weighting.EQUAL:
            return 1.0
        kept = float(_kept_rows(update, name, counts))
        if self.weighting is Weighting.SIZE:
            return kept
        return counts if self.weighting is Weighting.UPDATE else kept * counts


def _kept_rows(update: ClientUpdate, name: str, like: Tensor) -> int:
    """How many indices of the tensor's first dim (a layer's output units) the client's sub-model keeps."""
    if update.compact is not None:
        return update.compact[name].shape[0]
    if update.mask is None:
        return like.shape[0]
    return int(update.mask[name].reshape(like.shape[0], -1).any(dim=1).sum())
