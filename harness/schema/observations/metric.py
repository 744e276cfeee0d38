"""The `metric` observation."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from harness.schema.base import MAX_LISTED, Identifier
from harness.schema.observations.base import ObservationBase, Shape, distinct_names


class MetricObservation(ObservationBase):
    """A metric of one or more variants, one value per seed."""

    key: ClassVar[str] = "metric"
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str] = (
        '`{metric: NAME, of: VARIANT or [VARIANTS], args: {...}}` — one value per seed of each variant; with '
        'several variants the expectation must hold for each.')
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape] = Shape.VALUES

    metric: str
    of: Identifier | Annotated[list[Identifier], Field(max_length=MAX_LISTED)]
    args: dict[str, Any] = Field(default_factory=dict)

    @property
    def variants(self) -> list[str]:
        return [self.of] if isinstance(self.of, str) else list(self.of)

    @model_validator(mode="after")
    def _distinct_variants(self):
        distinct_names(self.variants, "the observation")
        return self
