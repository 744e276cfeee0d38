"""Which units and coordinates the clients of a run trained (evenness, coverage, Proposition 3)."""
from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import Tensor

from methods.federated.submodel import Params, SubmodelView
from methods.models.slicing import SliceableFamily


class CoverageTracker:
    """Per-unit update counts per group and the union of all trained coordinate masks."""

    def __init__(self, family: SliceableFamily, global_params: Mapping[str, Tensor]) -> None:
        self.unit_counts = {g: torch.zeros(n, dtype=torch.int64) for g, n in family.groups.items()}
        self.union: Params = {name: torch.zeros(t.shape, dtype=torch.bool, device=t.device)
                              for name, t in global_params.items()}

    def record(self, view: SubmodelView, clients: int = 1) -> None:
        """Count ``clients`` client-rounds training ``view``."""
        for group, counts in self.unit_counts.items():
            counts[view.units(group)] += clients
        for name, union in self.union.items():
            union[view.coordinates(name)] = True

    def never_covered(self) -> int:
        """Global coordinates outside the union of all trained masks."""
        return sum(u.numel() - int(u.sum()) for u in self.union.values())

    def changed_outside_union(self, initial: Mapping[str, Tensor],
                              final: Mapping[str, Tensor]) -> int:
        """How many never-covered coordinates differ from their initial value (Prop. 3: 0)."""
        return sum(int(final[n].ne(initial[n]).logical_and_(u.logical_not()).sum())
                   for n, u in self.union.items() if not bool(u.all()))
