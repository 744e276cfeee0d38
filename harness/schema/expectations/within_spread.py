"""The `within_spread_of` expectation."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from harness.design.readings import Reading, within_spread_design
from harness.design.spreads import SeriesNumbers
from harness.errors import did_you_mean
from harness.schema.base import Identifier
from harness.schema.expectations.base import Alpha
from harness.schema.expectations.equivalent import PairedDifferenceTest
from harness.statistics.equivalence import within_spread_test
from harness.statistics.outcome import Decision


class WithinSpread(PairedDifferenceTest):
    """|mean paired difference| below the seed-to-seed standard deviation of a variant (equivalence
    against the spread's lower confidence bound)."""

    key: ClassVar[str] = "within_spread_of"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        "`{within_spread_of: VARIANT, alpha: 0.05}` — the paper's 'within seed-to-seed variation': "
        "equivalence of the mean paired difference within ± that variant's seed standard deviation, the "
        "spread's own uncertainty counted against the claim. PASS if the difference's (1 − 2α) interval lies "
        "within ± the spread's (1 − α) lower confidence bound (chi-square), FAIL if it lies wholly beyond ± "
        'its upper bound, else INCONCLUSIVE; a difference of exactly 0 against a reference without spread '
        'passes.')
    """Its line in docs/claims.md."""

    within_spread_of: Identifier
    alpha: Alpha = 0.05

    @property
    def spread_reference(self) -> str:
        return self.within_spread_of

    def describe(self, obs=None) -> str:
        return (f"|mean paired difference| < seed-to-seed std of {self.within_spread_of} (TOST against the "
                f"spread's {1 - self.alpha:.0%} lower bound, α = {self.alpha})")

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"within the seed spread of {(labels or {}).get(self.within_spread_of, self.within_spread_of)}"

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        problems = super()._fit_problems(obs, variants)
        if self.within_spread_of not in variants:
            problems.append(f"unknown variant {self.within_spread_of!r}{did_you_mean(self.within_spread_of, variants)}")
        return problems

    def decide(self, obs, observed) -> Decision:
        return within_spread_test(self, observed.series[0], observed.spread)

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        return within_spread_design(self)
