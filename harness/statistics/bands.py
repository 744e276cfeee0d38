"""What an expectation admits: a closed range or a half-line of the observed quantity (`Admitted`).

Its own module so that the tests deciding an expectation (`harness.verdicts`) read it without
importing the claim schema, which names those tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Admitted:
    """The values of the observed quantity an expectation admits.

    A range admits [low, high], both ends included. A bound admits a half-line: `side` is the
    alternative of its one-sided test ("less": below the bound, "greater": above it), the bound
    itself excluded; a negated bound ('not significantly beyond') admits the bound and the other
    side. `low` and `high` are the ends of what it admits (one of them infinite for a bound).
    """

    low: float
    high: float
    side: Literal["less", "greater"] | None = None
    negated: bool = False

    @classmethod
    def beyond(cls, bound: float, side: Literal["less", "greater"], negated: bool) -> Admitted:
        at_most = (side == "less") != negated  # 'not below' admits the upper side
        return cls(-math.inf, bound, side, negated) if at_most else cls(bound, math.inf, side, negated)

    @property
    def one_sided(self) -> bool:
        return self.side is not None

    @property
    def bound(self) -> float:
        """A bound's value (the finite end of its half-line)."""
        return self.high if math.isinf(self.low) else self.low

    @property
    def exact(self) -> bool:
        """One exact value: a range of width 0."""
        return self.side is None and self.low == self.high

    def holds(self, value: float) -> bool:
        """Whether one value, read on its own, meets it."""
        if self.side is None:
            return self.low <= value <= self.high
        beyond = value < self.bound if self.side == "less" else value > self.bound
        return not beyond if self.negated else beyond

    def covers(self, low: float, high: float) -> bool:
        """Whether it admits every value in [low, high] (so nothing there can contradict it)."""
        return self.low <= low and high <= self.high
