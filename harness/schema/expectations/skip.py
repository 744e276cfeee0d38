"""The `skip` expectation."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Annotated, ClassVar

from pydantic import Field

from harness.schema.expectations.base import ExpectationBase
from harness.statistics import outcome
from harness.statistics.outcome import Decision


class Skip(ExpectationBase):
    """No expectation at this profile; the verdict is SKIPPED with this reason."""

    key: ClassVar[str] = "skip"
    """The key that names this expectation in a claim file."""
    doc: ClassVar[str] = (
        '`{skip: REASON}` — no expectation at this profile; the verdict is SKIPPED with the reason.')
    """Its line in docs/claims.md."""

    skip: Annotated[str, Field(min_length=3)]

    @property
    def skips(self) -> bool:
        return True

    def describe(self, obs=None) -> str:
        return f"none at this profile ({self.skip})"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return "not tested"

    def fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        return []

    def decide(self, obs, observed) -> Decision:
        return outcome.Decision(outcome.SKIPPED, self.skip)
