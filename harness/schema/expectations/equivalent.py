"""The `equivalent_within` expectation."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Annotated, ClassVar

from pydantic import Field

from harness.design.readings import Reading, value_design
from harness.design.spreads import SeriesNumbers
from harness.schema.expectations.base import Alpha, ExpectationBase, number_text
from harness.schema.observations.base import Shape, shape_of
from harness.statistics.bands import Admitted
from harness.statistics.equivalence import equivalence_test
from harness.statistics.outcome import Decision


class PairedDifferenceTest(ExpectationBase):
    """A test of a paired 'difference' observation (equivalence, within a seed spread)."""

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        if shape_of(obs) is not Shape.PAIRED:
            return [f"{type(self).__name__.lower()} tests a paired 'difference' observation"]
        return []


class Equivalent(PairedDifferenceTest):
    """Two one-sided tests: the mean lies within ±bound."""

    key: ClassVar[str] = "equivalent_within"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{equivalent_within: BOUND, alpha: 0.05}` — two one-sided tests that the mean (of a paired '
        'difference) lies within ±BOUND; FAIL as `between` fails.')
    """Its line in docs/claims.md."""

    equivalent_within: Annotated[float, Field(gt=0.0)]
    alpha: Alpha = 0.05

    def admitted(self) -> Admitted:
        return Admitted(-self.equivalent_within, self.equivalent_within)

    def centre(self) -> float:
        return 0.0

    def describe(self, obs=None) -> str:
        return f"within ±{number_text(self.equivalent_within)} (TOST, α = {self.alpha})"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"within ±{number_text(self.equivalent_within)}"

    def decide(self, obs, observed) -> Decision:
        return equivalence_test(self, observed.series[0])

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        return value_design(self, numbers)
