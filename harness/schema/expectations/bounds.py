"""The `below`, `above`, `not_above`, `not_below` expectations."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar, Literal

from harness.schema.expectations.base import ValueTest, number_text
from harness.schema.observations.base import Shape, shape_of
from harness.statistics.bands import Admitted


class Inequality(ValueTest):
    """A one-sided comparison with a bound: `side` is the alternative of its t-test.

    Plain inequalities claim the side (PASS if significant); negated ones claim the
    absence of a significant difference on that side (FAIL only if significant).
    """

    side: ClassVar[Literal["less", "greater"]]
    negated: ClassVar[bool] = False
    relation: ClassVar[str]
    short_relation: ClassVar[str]
    bound_field: ClassVar[str]

    @property
    def bound(self) -> float:
        return getattr(self, self.bound_field)

    def admitted(self) -> Admitted:
        return Admitted.beyond(self.bound, self.side, self.negated)

    def claims_a_difference(self, obs, observed) -> bool:
        if self.negated or shape_of(obs) is Shape.CORRELATION:
            return False
        return shape_of(obs) is Shape.PAIRED or observed.spread_ratio or len(observed.series) > 1

    def claimed_excess(self, value: float) -> float | None:
        if self.negated or self.every_seed:
            return None
        return value - self.bound if self.side == "greater" else self.bound - value

    def effect(self, means: Mapping[str, float], label: Callable[[str], str]) -> float | None:
        if self.negated or not means:
            return None
        return min(abs(mean - self.bound) for mean in means.values())

    def _stated(self) -> list[float]:
        return [self.bound]

    def _correlation_test_text(self) -> str:
        return f"one-sided at α = {self.alpha}"

    def _mean_test_text(self) -> str:
        return f" (one-sided t-test of the mean, α = {self.alpha})"

    def describe(self, obs=None) -> str:
        return f"{self.relation} {number_text(self.bound)}{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"{self.short_relation} {number_text(self.bound)}{self._every_text()}"


class Below(Inequality):
    key: ClassVar[str] = "below"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{below: B, of: mean|every_seed, alpha: 0.05}` — with `of: mean`, a one-sided one-sample t-test over '
        'seeds: PASS if significant, FAIL if the opposite side is significant, else INCONCLUSIVE. With `of: '
        'every_seed`, a sign count (below).')
    """Its line in docs/claims.md."""

    below: float
    side, relation, short_relation, bound_field = "less", "<", "<", "below"


class Above(Inequality):
    key: ClassVar[str] = "above"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{above: B, ...}` — as `below`, the other side.')
    """Its line in docs/claims.md."""

    above: float
    side, relation, short_relation, bound_field = "greater", ">", ">", "above"


class NotAbove(Inequality):
    """Not significantly above the bound: FAIL only if a one-sided t-test shows it is above."""

    key: ClassVar[str] = "not_above"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        "`{not_above: B, of: mean|every_seed, alpha: 0.05}` — for 'not significantly better/above' "
        'statements: FAIL only if a one-sided t-test shows the mean above B; a PASS states the smallest '
        'effect the test could have detected.')
    """Its line in docs/claims.md."""

    not_above: float
    side, negated, relation, short_relation, bound_field = (
        "greater", True, "not significantly above", "not >", "not_above")


class NotBelow(Inequality):
    """Not significantly below the bound: FAIL only if a one-sided t-test shows it is below."""

    key: ClassVar[str] = "not_below"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{not_below: B, ...}` — as `not_above`, the other side.')
    """Its line in docs/claims.md."""

    not_below: float
    side, negated, relation, short_relation, bound_field = (
        "less", True, "not significantly below", "not <", "not_below")
