"""The `equals` expectation."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

from pydantic import Field

from harness.schema.expectations.base import ValueTest, number_text
from harness.statistics.bands import Admitted


class Equals(ValueTest):
    key: ClassVar[str] = "equals"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{equals: VALUE, tolerance: T}` — structural equality, exact unless a float tolerance is stated; '
        'decided as `between` on [VALUE − T, VALUE + T].')
    """Its line in docs/claims.md."""

    equals: float
    tolerance: Annotated[float, Field(ge=0.0)] = 0.0

    @property
    def exact_equality_of_the_mean(self) -> bool:
        return self.tolerance == 0.0 and self.of == "mean"

    def admitted(self) -> Admitted:
        return Admitted(self.equals - self.tolerance, self.equals + self.tolerance)

    def centre(self) -> float:
        return self.equals

    def _stated(self) -> list[float]:
        return [self.equals]

    def describe(self, obs=None) -> str:
        tolerance = f" (tolerance {number_text(self.tolerance)})" if self.tolerance else " exactly"
        return f"= {number_text(self.equals)}{tolerance}{self._reading(obs)}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        tolerance = f" ± {number_text(self.tolerance)}" if self.tolerance else ""
        return f"= {number_text(self.equals)}{tolerance}{self._every_text()}"
