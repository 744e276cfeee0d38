"""The `compare` observation."""
from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from harness.schema.base import MAX_LISTED, Identifier
from harness.schema.observations.base import ObservationBase, Shape, distinct_names


class CompareObservation(ObservationBase):
    """A metric of several variants side by side (for an ordering)."""

    key: ClassVar[str] = "compare"
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str] = (
        '`{compare: METRIC, of: [A, B, ...]}` — the metric of several variants, for an `order`.')
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape] = Shape.VALUES
    ranked: ClassVar[bool] = True

    compare: str
    of: list[Identifier] = Field(min_length=2, max_length=MAX_LISTED)
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _distinct_variants(self):
        distinct_names(self.of, "the comparison")
        return self

    @property
    def metric(self) -> str:
        return self.compare

    @property
    def variants(self) -> list[str]:
        return list(self.of)
