"""One client's slice of the global parameters, and a cache of the modules that train slices."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from methods.extraction import ExtractionMode, select_units
from methods.models.slicing import Index, SliceableFamily, UnitSelection, coordinates, coverage_masks, embed, extract

Params = dict[str, Tensor]


class SubmodelView:
    """Extract/embed/mask for one selection; at full width (``selection=None``) no slicing happens."""

    def __init__(self, family: SliceableFamily, global_params: Mapping[str, Tensor],
                 selection: UnitSelection | None) -> None:
        self.family = family
        self.global_params = global_params
        self.selection = selection
        self._mask: Params | None = None
        self._coordinates: dict[str, Index] = {}

    @classmethod
    def for_width(cls, family: SliceableFamily, global_params: Mapping[str, Tensor], width: float,
                  mode: ExtractionMode | str, round_index: int,
                  generator: torch.Generator | None) -> SubmodelView:
        """The view of a width-``width`` sub-model; any width >= 1 is the whole model."""
        if width >= 1.0:
            return cls(family, global_params, None)
        return cls(family, global_params,
                   select_units(family.groups, width, mode, round_index, generator, family.ties))

    @property
    def is_full(self) -> bool:
        return self.selection is None

    @property
    def sizes(self) -> dict[str, int]:
        """Units per group of the sub-model."""
        if self.selection is None:
            return dict(self.family.groups)
        return self.family.sizes_of(self.selection)

    def units(self, group: str) -> Tensor:
        """Global indices of the kept units of ``group``."""
        if self.selection is None:
            return torch.arange(self.family.groups[group])
        return self.selection[group]

    def extract(self, tensors: Mapping[str, Tensor]) -> Params:
        """Sub-model copies of global-shaped ``tensors``."""
        if self.selection is None:
            return {name: t.detach().clone() for name, t in tensors.items()}
        return extract(tensors, self.family, self.selection)

    def embed(self, sub: Mapping[str, Tensor]) -> Params:
        """Sub-model tensors in global coordinates, zero outside the slice."""
        if self.selection is None:
            return dict(sub)
        return embed(sub, self.family, self.selection, self.global_params)

    def coordinates(self, name: str) -> Index:
        """Where the sub-model's tensor ``name`` lies in the global one (`methods.models.slicing.coordinates`)."""
        if name not in self._coordinates:
            shape = self.global_params[name].shape
            if self.selection is None:
                self._coordinates[name] = tuple(slice(0, size) for size in shape)
            else:
                device = self.global_params[name].device
                index = coordinates(self.family, self.selection, name, shape)
                self._coordinates[name] = tuple(i if isinstance(i, slice) else i.to(device) for i in index)
        return self._coordinates[name]

    @property
    def mask(self) -> Params | None:
        """Global-shaped boolean masks of the slice; None means every coordinate."""
        if self.selection is None:
            return None
        if self._mask is None:
            self._mask = coverage_masks(self.global_params, self.family, self.selection)
        return self._mask


class ModuleCache:
    """Reuses one built module per sub-model size (least recently used dropped beyond ``capacity``).

    Modules are built from a fixed private generator so the global torch RNG is never touched;
    their parameters are always overwritten before use.
    """

    def __init__(self, family: SliceableFamily, device: torch.device, capacity: int = 16) -> None:
        self.family = family
        self.device = device
        self.capacity = capacity
        self._modules: OrderedDict[tuple[int, ...], nn.Module] = OrderedDict()

    def get(self, sizes: Mapping[str, int]) -> nn.Module:
        key = self._key(sizes)
        if key in self._modules:
            self._modules.move_to_end(key)
            return self._modules[key]
        generator = torch.Generator()
        generator.manual_seed(0)
        return self.put(sizes, self.family.build(dict(sizes), generator=generator).to(self.device))

    def put(self, sizes: Mapping[str, int], module: nn.Module) -> nn.Module:
        """Keep ``module`` (built by the family at ``sizes``, buffers as built) for later ``get``s."""
        self._modules[self._key(sizes)] = module
        if len(self._modules) > self.capacity:
            self._modules.popitem(last=False)
        return module

    def _key(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(int(sizes[g]) for g in self.family.groups)


def load_params(module: nn.Module, params: Mapping[str, Tensor]) -> None:
    """Copy ``params`` into ``module``'s parameters (buffers untouched)."""
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            parameter.copy_(params[name])
