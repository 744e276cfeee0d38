"""The `between` expectation."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import MAX_SEEDS
from harness.schema.expectations.base import ValueTest, number_text
from harness.statistics.bands import Admitted


class Between(ValueTest):
    key: ClassVar[str] = "between"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{between: [LOW, HIGH], of: mean|every_seed, alpha: 0.05}` — inclusive range. With `of: mean`, PASS '
        "if the mean's (1 − 2α) t-interval over seeds lies inside it, FAIL if the mean lies beyond an edge by "
        'the critical value that keeps a FAIL at α for every true value inside the range, however narrow (the '
        "far edge's chance counted; `harness.statistics.stats.range_fail_critical`), else INCONCLUSIVE. "
        "`span_of_runs: K` says the range is the span of the paper's own K runs: beside the verdict, the report "
        "reads what such a span predicts, that a run of the same method falls outside it with probability "
        "2/(K + 1) (`harness.statistics.spans`).")
    """Its line in docs/claims.md."""

    readings: ClassVar[frozenset[str]] = frozenset({"span_of_runs"})
    between: tuple[float, float]
    span_of_runs: int | None = Field(default=None, ge=2, le=MAX_SEEDS)
    """Where the range is the span of the paper's own runs: how many runs it spans."""

    @model_validator(mode="after")
    def _ordered(self):
        low, high = self.between
        if low > high:
            raise PydanticCustomError("bad_range", "range [{low}, {high}] has its lower bound above its upper bound",
                                      {"low": low, "high": high})
        return self

    def paper_span(self) -> tuple[float, float, int] | None:
        return None if self.span_of_runs is None else (self.between[0], self.between[1], self.span_of_runs)

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
