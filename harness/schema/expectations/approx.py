"""The `approx` expectation."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.expectations.base import ValueTest, number_text
from harness.statistics.bands import Admitted


class Approx(ValueTest):
    key: ClassVar[str] = "approx"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{approx: VALUE, tolerance: T}` or `relative_tolerance: R` — the range [VALUE − T, VALUE + T] (or ± '
        'R·|VALUE|), decided as `between`.')
    """Its line in docs/claims.md."""

    approx: float
    tolerance: Annotated[float, Field(ge=0.0)] | None = None
    relative_tolerance: Annotated[float, Field(ge=0.0)] | None = None

    @model_validator(mode="after")
    def _one_tolerance(self):
        if (self.tolerance is None) == (self.relative_tolerance is None):
            raise PydanticCustomError("bad_tolerance", "approx needs exactly one of tolerance, relative_tolerance")
        return self

    @property
    def half_width(self) -> float:
        if self.tolerance is not None:
            return self.tolerance
        assert self.relative_tolerance is not None  # _one_tolerance requires one of the two
        return abs(self.approx) * float(self.relative_tolerance)

    def admitted(self) -> Admitted:
        return Admitted(self.approx - self.half_width, self.approx + self.half_width)

    def centre(self) -> float:
        return self.approx

    def _stated(self) -> list[float]:
        return [self.approx]

    def describe(self, obs=None) -> str:
        tolerance = (f"± {number_text(self.tolerance)}" if self.tolerance is not None
                     else f"± {self.relative_tolerance:.0%}")
        return f"≈ {number_text(self.approx)} {tolerance}{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"≈ {number_text(self.approx)} ± {number_text(self.half_width)}{self._every_text()}"
