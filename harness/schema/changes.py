"""A claim's changed expectations (`changed:` in a claim file): an expectation changed after seeds were run
against it is a new hypothesis, and the seeds already run cannot test it.

An entry records what the claim expected before the change, at each profile it changed (`expect`), when
and in which commit it changed (`date`, `commit`: the commit whose claim file first holds the new
expectation, found with `git log -S`), and per profile the seeds that had been run there by then (`seen`).
The claim's expectation now is tested only on its other seeds (`Claim.fresh_seeds`); the old one is
still read on the seeds it was written for, so a report shows both verdicts."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import MAX_SEEDS, Identifier, StrictModel
from harness.schema.expectations import Expectation

Commit = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]


class Change(StrictModel):
    """One change of a claim's expectation, after seeds had been run against the old one."""

    date: datetime
    """When the change was committed (ISO 8601 with its UTC offset: the commit's date)."""
    commit: Commit
    """The commit whose claim file first holds the new expectation (all 40 hex digits)."""
    expect: dict[Identifier, Expectation] = Field(min_length=1)
    """The expectation before the change, at each profile the change touched."""
    seen: dict[Identifier, Annotated[list[int], Field(max_length=MAX_SEEDS)]] = Field(default_factory=dict)
    """Per profile, the seeds that had been run there when the expectation changed (a profile never run
    by then is absent)."""
    why: Annotated[str, Field(min_length=20)]

    @field_validator("date")
    @classmethod
    def _with_offset(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise PydanticCustomError("date_without_offset", "a change's date needs its UTC offset (as `git log "
                                      "--date=iso-strict` prints it), not {value}", {"value": value.isoformat()})
        return value

    @model_validator(mode="after")
    def _seen_where_changed(self):
        stray = sorted(set(self.seen) - set(self.expect))
        if stray:
            raise PydanticCustomError("seen_without_change", "seeds seen at {profiles}, where this change states no "
                                      "earlier expectation", {"profiles": ", ".join(stray)})
        return self

    def text(self) -> str:
        """'2026-12-04 (commit 8507a06)'."""
        return f"{self.date.date().isoformat()} (commit {self.commit[:7]})"
