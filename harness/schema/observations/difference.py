"""The `difference` observation."""
from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import Identifier
from harness.schema.observations.base import ObservationBase, Shape


class DifferenceObservation(ObservationBase):
    """Paired per-seed difference of a metric: first variant minus second."""

    key: ClassVar[str] = "difference"
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str] = (
        '`{difference: METRIC, of: [A, B]}` — paired per-seed difference A − B.')
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape] = Shape.PAIRED

    difference: str
    of: tuple[Identifier, Identifier]
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _two_variants(self):
        if self.of[0] == self.of[1]:
            raise PydanticCustomError("self_difference", "a difference of '{variant}' with itself is 0 on every "
                                      "seed: it cannot fail", {"variant": self.of[0]})
        return self

    @property
    def metric(self) -> str:
        return self.difference

    @property
    def variants(self) -> list[str]:
        return list(self.of)
