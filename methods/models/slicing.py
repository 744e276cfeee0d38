"""Width slicing: which tensor dims follow which unit group, and sub-model extract/embed.

A family's models are built at any width; the federated state of a model is the
``{name: tensor}`` of its parameters (``named_parameters``), never its buffers.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

if TYPE_CHECKING:
    from methods.models.stacked import StackedModel


@dataclass(frozen=True)
class Axis:
    """A tensor dim sliced by the units of ``group``.

    ``blocks`` > 1 means the dim holds that many consecutive copies of the group
    (an LSTM's four gate blocks), each sliced with the same unit indices.
    """

    group: str
    blocks: int = 1


UnitSelection = dict[str, Tensor]
"""group -> 1-D int64 tensor of kept unit indices in global numbering; its order is the sub-model's."""


class SliceableFamily(ABC):
    """A model architecture whose hidden widths can be sliced unit group by unit group.

    ``ties``: sets of groups whose units an identity shortcut adds one to one, so a sub-model whose
    selections of them differ adds different global units (the groups of a tie have one size).
    ``output_layer``: the parameters whose first dim is the classes (for a label split).
    """

    groups: dict[str, int]
    ties: tuple[tuple[str, ...], ...] = ()
    output_layer: tuple[str, ...] = ()

    @abstractmethod
    def build(self, sizes: Mapping[str, int] | None = None, *,
              generator: torch.Generator | None = None) -> nn.Module:
        """The model with ``sizes[group]`` units per group (None: full width).

        With a generator the parameters get PyTorch's default initial distributions
        drawn from it; without one, torch's global RNG is used.
        """

    @abstractmethod
    def param_axes(self) -> dict[str, tuple[Axis | None, ...]]:
        """For every parameter name of ``build()``: one entry per tensor dim (None = not sliced)."""

    def stacked(self, sizes: Mapping[str, int]) -> StackedModel | None:
        """The form that trains many sub-models of ``sizes`` at once, if the family offers one."""
        return None

    def check_sizes(self, sizes: Mapping[str, int] | None) -> dict[str, int]:
        """Sizes for every group (full width when None), validated."""
        if sizes is None:
            return dict(self.groups)
        if set(sizes) != set(self.groups):
            raise ValueError(f"sizes must name exactly the groups {sorted(self.groups)}, "
                             f"got {sorted(sizes)}")
        for group, size in sizes.items():
            if not 1 <= size <= self.groups[group]:
                raise ValueError(f"group {group!r}: size {size} outside [1, {self.groups[group]}]")
        for tie in self.ties:
            if len({sizes[group] for group in tie}) > 1:
                raise ValueError(f"groups {', '.join(tie)} are tied by identity shortcuts but have sizes "
                                 f"{[sizes[group] for group in tie]}")
        return {group: int(sizes[group]) for group in self.groups}

    def sizes_of(self, selection: Mapping[str, Tensor]) -> dict[str, int]:
        """Units per group of a (validated) selection."""
        check_selection(self, selection)
        return {group: int(selection[group].numel()) for group in self.groups}

    def build_for(self, selection: Mapping[str, Tensor], *,
                  generator: torch.Generator | None = None) -> nn.Module:
        """The sub-model that holds ``selection``'s units."""
        return self.build(self.sizes_of(selection), generator=generator)


def check_selection(family: SliceableFamily, selection: Mapping[str, Tensor]) -> None:
    """Raise ValueError unless ``selection`` names every group with distinct in-range indices."""
    if set(selection) != set(family.groups):
        raise ValueError(f"selection must name exactly the groups {sorted(family.groups)}, "
                         f"got {sorted(selection)}")
    for group, indices in selection.items():
        n = family.groups[group]
        if indices.dim() != 1 or indices.dtype != torch.int64 or indices.numel() == 0:
            raise ValueError(f"group {group!r}: indices must be a non-empty 1-D int64 tensor")
        if int(indices.min()) < 0 or int(indices.max()) >= n:
            raise ValueError(f"group {group!r}: indices outside [0, {n})")
        if indices.unique().numel() != indices.numel():
            raise ValueError(f"group {group!r}: indices repeat")


def full_selection(family: SliceableFamily) -> UnitSelection:
    """Every unit of every group, in order."""
    return {group: torch.arange(n) for group, n in family.groups.items()}


def axis_indices(indices: Tensor, axis: Axis, n: int) -> Tensor:
    """Tensor-dim indices of ``indices`` units; block b occupies [b*n, (b+1)*n)."""
    if axis.blocks == 1:
        return indices
    return torch.cat([b * n + indices for b in range(axis.blocks)])


def _dim_indices(family: SliceableFamily, selection: Mapping[str, Tensor], name: str,
                 shape: torch.Size) -> list[Tensor | None]:
    """Per dim of parameter ``name``: kept indices, or None for an unsliced dim."""
    axes = family.param_axes()
    if name not in axes:
        raise KeyError(f"parameter {name!r} has no slicing axes in {type(family).__name__}")
    if len(axes[name]) != len(shape):
        raise ValueError(f"parameter {name!r}: {len(axes[name])} axes for shape {tuple(shape)}")
    result: list[Tensor | None] = []
    for dim, axis in enumerate(axes[name]):
        if axis is None:
            result.append(None)
            continue
        n = family.groups[axis.group]
        if shape[dim] != axis.blocks * n:
            raise ValueError(f"parameter {name!r} dim {dim}: size {shape[dim]} is not "
                             f"{axis.blocks} x {n} units of {axis.group!r}")
        result.append(axis_indices(selection[axis.group], axis, n))
    return result


def extract(global_params: Mapping[str, Tensor], family: SliceableFamily,
            selection: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Sub-model tensors (copies): each sliced dim index-selected by its group's units."""
    check_selection(family, selection)
    sub: dict[str, Tensor] = {}
    for name, tensor in global_params.items():
        out = tensor.detach()
        for dim, idx in enumerate(_dim_indices(family, selection, name, tensor.shape)):
            if idx is not None:
                out = out.index_select(dim, idx.to(out.device))
        sub[name] = out.clone()
    return sub


def coverage_masks(global_params: Mapping[str, Tensor], family: SliceableFamily,
                   selection: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Global-shape boolean masks of the coordinates the sub-model holds."""
    check_selection(family, selection)
    masks: dict[str, Tensor] = {}
    for name, tensor in global_params.items():
        mask = torch.ones(tensor.shape, dtype=torch.bool, device=tensor.device)
        for dim, idx in enumerate(_dim_indices(family, selection, name, tensor.shape)):
            if idx is None:
                continue
            keep = torch.zeros(tensor.shape[dim], dtype=torch.bool, device=tensor.device)
            keep[idx.to(tensor.device)] = True
            view = [1] * tensor.dim()
            view[dim] = -1
            mask = mask & keep.view(view)
        masks[name] = mask
    return masks


def embed(sub_params: Mapping[str, Tensor], family: SliceableFamily,
          selection: Mapping[str, Tensor], global_params: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Sub-model tensors written into zeros of the global shapes (global values are not used)."""
    check_selection(family, selection)
    if set(sub_params) != set(global_params):
        raise ValueError("sub_params and global_params must name the same parameters")
    out: dict[str, Tensor] = {}
    for name, reference in global_params.items():
        sub = sub_params[name].detach()
        dims = _dim_indices(family, selection, name, reference.shape)
        index = [torch.arange(size) if idx is None else idx
                 for size, idx in zip(reference.shape, dims)]
        expected = tuple(len(i) for i in index)
        if tuple(sub.shape) != expected:
            raise ValueError(f"parameter {name!r}: sub-model shape {tuple(sub.shape)}, "
                             f"selection implies {expected}")
        full = sub.to(reference.device)
        for dim, idx in enumerate(dims):  # widen one sliced dim at a time
            if idx is not None:
                shape = list(full.shape)
                shape[dim] = reference.shape[dim]
                full = full.new_zeros(shape).index_copy_(dim, idx.to(full.device), full)
        out[name] = full if full is not sub else full.clone()
    return out


Index = tuple[slice | Tensor, ...]
"""Coordinates of a tensor: a slice per dim (a box), or an index tensor per dim, broadcastable together."""


def coordinates(family: SliceableFamily, selection: Mapping[str, Tensor], name: str, shape: torch.Size) -> Index:
    """The coordinates of global parameter ``name`` the sub-model holds: ``tensor[coordinates(...)]``
    has the sub-model's shape. Slices where every sliced dim keeps a contiguous run of indices
    (prefix sub-models), else index tensors."""
    dims = _dim_indices(family, selection, name, shape)
    runs = [slice(0, size) if idx is None else _run(idx) for size, idx in zip(shape, dims)]
    if all(run is not None for run in runs):
        return tuple(run for run in runs if run is not None)
    index: list[slice | Tensor] = []
    for dim, (size, idx) in enumerate(zip(shape, dims)):
        view = [1] * len(shape)
        view[dim] = -1
        index.append((torch.arange(size) if idx is None else idx).view(view))
    return tuple(index)


def _run(indices: Tensor) -> slice | None:
    """The slice of ``indices`` if they are consecutive and ascending, else None."""
    if len(indices) == 0:
        return None
    first, last = int(indices[0]), int(indices[-1])
    if last - first + 1 != len(indices) or not bool((indices.diff() == 1).all()):
        return None
    return slice(first, last + 1)


def default_init_(module: nn.Module, generator: torch.Generator) -> None:
    """Re-draw ``module``'s parameters from PyTorch's default initial distributions using ``generator``."""
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, (nn.Linear, nn.Conv2d)):
                nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                if layer.bias is not None:
                    fan_in, _ = nn.init._calculate_fan_in_and_fan_out(layer.weight)
                    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
            elif isinstance(layer, nn.Embedding):
                nn.init.normal_(layer.weight, generator=generator)
            elif isinstance(layer, nn.LSTM):
                bound = 1 / math.sqrt(layer.hidden_size)
                for weight in layer.parameters():
                    nn.init.uniform_(weight, -bound, bound, generator=generator)
            elif isinstance(layer, nn.modules.batchnorm._BatchNorm) and layer.affine:
                nn.init.ones_(layer.weight)
                nn.init.zeros_(layer.bias)
