"""What a federated run records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

from methods.plain import json_safe


@dataclass
class RoundRecord:
    """One round: who trained at which width, training loss, each update's norm and size, and the
    evaluation if there was one."""

    round: int
    clients: list[int]
    widths: list[float]
    mean_width: float
    lr: float
    train_loss: float
    test_accuracy: float | None = None
    test_loss: float | None = None
    update_norms: list[float] = field(default_factory=list)
    """Each client's update L2 norm over the coordinates it trained, in the order of `clients`."""
    update_sizes: list[int] = field(default_factory=list)
    """Each client's update size: the number of global coordinates it trained (its upload)."""
    sampled: list[int] | None = None
    """With a round hook: every client sampled this round, ``clients`` being those that took part."""
    local_epochs: list[int] | None = None
    """With a round hook: the local epochs each client of ``clients`` ran."""


OPTIONAL_ROUND_FIELDS = ("sampled", "local_epochs")
"""Round fields a run without a round hook leaves out of its record."""


@dataclass
class FederationResult:
    """Everything a run records. ``final_params`` and ``covered`` stay out of ``to_dict``."""

    seed: int
    config: dict[str, Any]
    caps: list[float]
    history: list[RoundRecord]
    client_widths: list[list[tuple[int, float]]]
    adaptations: list[dict[str, Any]]
    client_statistics: dict[str, list[float]]
    unit_update_counts: dict[str, list[int]]
    total_coordinates: int
    never_covered_coordinates: int
    changed_outside_union: int
    diverged: bool
    diverged_round: int | None
    rounds_completed: int
    final_accuracy: float | None
    final_loss: float | None
    wall_time_s: float
    final_params: dict[str, Tensor] = field(default_factory=dict, repr=False)
    covered: dict[str, Tensor] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe plain types (non-finite floats become None)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__
                if name not in ("final_params", "covered", "history")}
        data["history"] = [{name: value for name, value in vars(record).items() if value is not None
                            or name not in OPTIONAL_ROUND_FIELDS} for record in self.history]
        return json_safe(data)
