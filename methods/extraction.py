"""Which units a width-p sub-model keeps: nested prefix, rolling window, or random subset."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum

import torch
from torch import Tensor

from methods.models.slicing import UnitSelection


class ExtractionMode(StrEnum):
    """Sub-model coordinate schemes: HeteroFL/FjORD, FedRolex, Federated Dropout.

    ``random`` draws every group's units apart, as the FedRolex reference's Federated Dropout draws
    every conv's output channels; ``random_consistent`` draws one subset per tie of groups
    (`SliceableFamily.ties`), so identity shortcuts add the same global units. The two differ only
    for families with ties (the ResNet).
    """

    PREFIX = "prefix"
    ROLLING = "rolling"
    RANDOM = "random"
    RANDOM_CONSISTENT = "random_consistent"

    @property
    def is_random(self) -> bool:
        return self in (ExtractionMode.RANDOM, ExtractionMode.RANDOM_CONSISTENT)


def kept_units(n: int, width: float) -> int:
    """ceil(width * n) units, immune to float error (0.28 * 25 keeps 7), within [1, n]."""
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    if not 0.0 < width <= 1.0:
        raise ValueError(f"width must lie in (0, 1], got {width}")
    return min(n, max(1, math.ceil(round(width * n, 9))))


def prefix_indices(n: int, width: float) -> Tensor:
    """HeteroFL/FjORD nested sub-model: the leading ceil(width * n) units."""
    return torch.arange(kept_units(n, width))


def rolling_indices(n: int, width: float, round_index: int) -> Tensor:
    """FedRolex: ceil(width * n) consecutive units from offset ``round_index % n``, wrapping.

    Round 0 is the prefix. The official code moves the window backwards
    (``torch.roll(arange(n), t % n)[:k]``); we follow the forward window the FedRolex paper
    draws. Coverage is identical: every unit is kept exactly k times in any n consecutive rounds.
    """
    offset = round_index % n
    return (offset + torch.arange(kept_units(n, width))) % n


def random_indices(n: int, width: float, generator: torch.Generator) -> Tensor:
    """Federated Dropout: a uniformly random ceil(width * n)-subset, sorted."""
    return torch.randperm(n, generator=generator)[: kept_units(n, width)].sort().values


def select_units(groups: Mapping[str, int], width: float, mode: ExtractionMode | str,
                 round_index: int, generator: torch.Generator | None,
                 ties: Sequence[Sequence[str]] = ()) -> UnitSelection:
    """Kept units of every group. RANDOM draws each group from ``generator`` in turn; RANDOM_CONSISTENT
    draws once per tie (at its first group) and gives every group of the tie that draw."""
    mode = ExtractionMode(mode)
    if mode is ExtractionMode.PREFIX:
        return {g: prefix_indices(n, width) for g, n in groups.items()}
    if mode is ExtractionMode.ROLLING:
        return {g: rolling_indices(n, width, round_index) for g, n in groups.items()}
    if generator is None:
        raise ValueError("random extraction needs a torch.Generator")
    if mode is ExtractionMode.RANDOM:
        return {g: random_indices(n, width, generator) for g, n in groups.items()}
    leader = {group: tie[0] for tie in ties for group in tie}
    selection: UnitSelection = {}
    for g, n in groups.items():
        first = leader.get(g, g)
        if first not in selection:
            selection[first] = random_indices(n, width, generator)
        selection[g] = selection[first]
    return selection
