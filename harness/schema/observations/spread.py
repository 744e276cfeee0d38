"""The `spread` observation."""
from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import Identifier
from harness.schema.observations.base import ObservationBase, Shape


class SpreadObservation(ObservationBase):
    """The ratio of two variants' seed-to-seed standard deviations of a metric (first over second)."""

    key: ClassVar[str] = "spread"
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str] = (
        "`{spread: METRIC, of: [A, B]}` — the ratio of A's seed-to-seed standard deviation of the metric to "
        "B's (for 'the spread doubles'); a bound or range on it is tested on log(ratio), whose standard error "
        'is √(1/(2(n_A − 1)) + 1/(2(n_B − 1))) (normal approximation of log sample variances).')
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape] = Shape.SPREAD

    spread: str
    of: tuple[Identifier, Identifier]
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _two_variants(self):
        if self.of[0] == self.of[1]:
            raise PydanticCustomError("self_spread", "the spread of '{variant}' over itself is 1 on every run: it "
                                      "cannot fail", {"variant": self.of[0]})
        return self

    @property
    def metric(self) -> str:
        return self.spread

    @property
    def variants(self) -> list[str]:
        return list(self.of)
