"""The `order` expectation."""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import ClassVar

from pydantic import Field, model_validator

from harness.design.readings import Reading, order_design
from harness.design.spreads import SeriesNumbers
from harness.schema.base import MAX_LISTED, Identifier
from harness.schema.expectations.base import Aggregate, Alpha, ExpectationBase
from harness.schema.observations.base import distinct_names, ranked
from harness.statistics.orders import order_test
from harness.statistics.outcome import Decision


class Order(ExpectationBase):
    """Variants from highest to lowest metric: paired one-sided tests of adjacent pairs over the seeds."""

    key: ClassVar[str] = "order"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{order: [BEST, ..., WORST], of: mean|every_seed, alpha: 0.05}` — for `compare` observations: paired '
        'one-sided t-tests of adjacent pairs over the shared seeds; PASS if every pair is significant in the '
        'stated direction, FAIL if a pair is significantly reversed (at α / pairs), else INCONCLUSIVE. '
        '`every_seed`: every pair in order on every seed, a sign count per pair (below).')
    """Its line in docs/claims.md."""

    order: list[Identifier] = Field(min_length=2, max_length=MAX_LISTED)
    of: Aggregate = "mean"
    alpha: Alpha = 0.05

    @model_validator(mode="after")
    def _distinct_variants(self):
        distinct_names(self.order, "the order")
        return self

    @property
    def every_seed(self) -> bool:
        return self.of == "every_seed"

    def claims_a_difference(self, obs, observed) -> bool:
        return True

    def tested_differences(self) -> list[tuple[str, str]]:
        return list(zip(self.order, self.order[1:]))

    def effect(self, means: Mapping[str, float], label: Callable[[str], str]) -> float | None:
        ordered = [means[label(variant)] for variant in self.order if label(variant) in means]
        if len(ordered) < len(self.order):
            return None
        return min(abs(high - low) for high, low in zip(ordered, ordered[1:]))

    def describe(self, obs=None) -> str:
        if self.every_seed:
            return " > ".join(self.order) + " on every seed"
        return " > ".join(self.order) + f" (paired one-sided t-tests of adjacent pairs, α = {self.alpha})"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return " > ".join((labels or {}).get(v, v) for v in self.order) + self._every_text()

    def fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        if not ranked(obs):
            return ["'order' needs a 'compare' observation"]
        unknown = [v for v in self.order if v not in obs.variants]
        if unknown:
            return [f"order names {unknown} which the observation does not compare ({obs.variants})"]
        if sorted(self.order) != sorted(obs.variants):
            return [f"order must rank exactly the compared variants {obs.variants}"]
        return []

    def decide(self, obs, observed) -> Decision:
        return order_test(self, observed, obs)

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        return order_design(self)
