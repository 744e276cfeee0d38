"""The `correlation` observation."""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from harness.schema.base import MAX_LISTED, Identifier
from harness.schema.observations.base import ObservationBase, Shape, distinct_names


class CorrelationObservation(ObservationBase):
    """Correlation across clients of two per-client quantities, one value per seed.

    With `given`, the partial correlation controlling linearly for that quantity.
    """

    key: ClassVar[str] = "correlation"
    """The key that names this kind of observation in a claim file."""
    doc: ClassVar[str] = (
        '`{correlation: [X, Y], given: Z, of: VARIANT, method: pearson|spearman}` — correlation across '
        'clients of two per-client quantities, one value per seed (partial on Z if given), with a Fisher-z '
        "interval (Spearman's with the Bonett-Wright variance (1 + r²/2) / (n − 3)).")
    """Its line in docs/claims.md."""
    shape: ClassVar[Shape] = Shape.CORRELATION

    correlation: tuple[str, str]
    given: str | None = None
    of: Identifier | Annotated[list[Identifier], Field(max_length=MAX_LISTED)]
    method: Literal["pearson", "spearman"] = "pearson"

    @model_validator(mode="after")
    def _distinct_quantities(self):
        distinct_names([*self.correlation, *([self.given] if self.given else [])], "the correlation")
        distinct_names(self.variants, "the observation")
        return self

    @property
    def variants(self) -> list[str]:
        return [self.of] if isinstance(self.of, str) else list(self.of)
