"""The `between` expectation."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from harness.schema.expectations.base import ValueTest, number_text
from harness.statistics.bands import Admitted


class Between(ValueTest):
    key: ClassVar[str] = "between"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{between: [LOW, HIGH], of: mean|every_seed, alpha: 0.05}` — inclusive range. With `of: mean`, PASS '
        "if the mean's (1 − 2α) t-interval over seeds lies inside it, FAIL if the mean lies beyond an edge by "
        'the critical value that keeps a FAIL at α for every true value inside the range, however narrow (the '
        "far edge's chance counted; `harness.statistics.stats.range_fail_critical`), else INCONCLUSIVE.")
    """Its line in docs/claims.md."""

    between: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self):
        low, high = self.between
        if low > high:
            raise PydanticCustomError("bad_range", "range [{low}, {high}] has its lower bound above its upper bound",
                                      {"low": low, "high": high})
        return self

    def admitted(self) -> Admitted:
        return Admitted(self.between[0], self.between[1])

    def centre(self) -> float:
        return sum(self.between) / 2

    def _stated(self) -> list[float]:
        return list(self.between)

    def describe(self, obs=None) -> str:
        low, high = self.between
        return f"in [{number_text(low)}, {number_text(high)}]{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        low, high = self.between
        return f"in [{number_text(low)}, {number_text(high)}]{self._every_text()}"
