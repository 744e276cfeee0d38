"""What the server sees of each client's update: its L2 norm and its size in coordinates.

Read-only: called on updates after they are formed and aggregated, it allocates its own
tensors and never writes to the updates, so recording it changes no trained value.
"""
from __future__ import annotations

from collections.abc import Sequence

from methods.federated.aggregation import ClientUpdate, submodel_size, update_norm


def update_statistics(updates: Sequence[ClientUpdate]) -> tuple[list[float], list[int]]:
    """(L2 norm over the coordinates each client trained, number of those coordinates), per update."""
    return [update_norm(u) for u in updates], [submodel_size(u) for u in updates]
