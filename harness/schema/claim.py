"""Claim files (`claims/*.yaml`): what a paper asserts, what to observe and what to expect per profile.

The vocabulary is fixed and registered (`harness.schema.observations`, `harness.schema.expectations`):
an observation names what to compute from run records, an expectation names the test applied to it.
Nothing in a claim is evaluated as code.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import MAX_LISTED, Identifier, StrictModel
from harness.schema.changes import Change
from harness.schema.expectations import Expectation
from harness.schema.observations import Observation
from harness.statistics.sequential_boundary import profile_level

# --- claims -------------------------------------------------------------------

ClaimId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]


Role = Literal["paper", "diagnostic", "probe", "implementation"]
"""`paper`: the claim checks what the paper states. `implementation`: a check that the implementation
follows the paper, whose outcome is fixed by the code path (no training and no data decide it): it
can fail only by a changed implementation, so it is counted apart and never as a reproduction.
`diagnostic`: a second, labelled measurement that is not the paper's claim (another denominator,
this implementation's message, cached features), kept to explain a paper claim's verdict and
counted apart from the paper's claims.
`probe`: the project's own test of a sentence the paper states but does not test itself (an
attack the paper does not claim to resist); counted with the diagnostics, never as the paper's
failed experiment."""

LABELLED_ROLES = ("diagnostic", "probe")
"""Roles whose claims are not the paper's experiments: they need a note and are counted apart."""

QuoteOrigin = Literal["paper", "authors-readme"]
"""Where `statement` is quoted from: the paper itself, or the authors' repository README."""


Whose = Literal["the paper", "the paper's setting", "the implementation", "the scale"]


class Attribution(StrictModel):
    """Whose a FAIL at a profile is, with the evidence: an input `harness.verdicts.attribution` checks, not
    the report's word. `the paper`: its own numbers or text disagree with the sentence, quoted (`quote`)
    with where (`quote_source`); `the paper's setting`: the claim run as the authors' code ran it
    (`as_run`, another claim) PASSes where this one FAILs; `the implementation`: a departure from the
    paper, named (refuted where conformance fixtures cover every part of the runs the claim reads); `the scale`:
    the models learn too little here to tell (refuted where the same relation FAILs where they learn)."""

    whose: Whose
    evidence: Annotated[str, Field(min_length=20)]
    quote: str = ""
    quote_source: str = ""
    as_run: ClaimId | None = None

    def text(self) -> str:
        return f"{self.whose}, because {self.evidence}"


PAPER_BOUND_LENGTH = (5, 50)
"""The shortest and longest `paper_bound` (characters): figures, short enough for a digest cell."""


class Claim(StrictModel):
    id: ClaimId
    statement: Annotated[str, Field(min_length=10)]
    source: str
    experiment: Identifier
    observe: Observation
    expect: dict[Identifier, Expectation] = Field(min_length=1)
    note: str = ""
    family: Identifier | None = None
    """Claims of one file naming the same family test one relation several ways: their
    rejections are corrected together (Holm across the family)."""
    role: Role = "paper"
    quote_from: QuoteOrigin = "paper"
    attribution: dict[Identifier, Attribution] = Field(default_factory=dict)
    """Per profile, whose the FAIL there is (read only where the verdict there is a FAIL; it comes
    before the learning level's general reading)."""
    changed: list[Change] = Field(default_factory=list)
    """Its expectation's changes after seeds were run against it, oldest first (`harness.schema.changes`)."""
    repeats: ClaimId | None = None
    """The claim of its file whose observation and test this one repeats (another sentence of the paper read
    as the same relation): its verdicts are shown, and counted once, under the claim it repeats."""
    as_run_of: ClaimId | None = None
    """The claim of its file whose relation this one tests in the setting the authors' public code ran (its
    variants carry that setting, with their sources in the spec): where that claim FAILs at a profile and this
    one's last word there is PASS, the FAIL is the paper's setting's (`harness.verdicts.attribution`)."""

    def change_at(self, profile: str) -> Change | None:
        """The latest change of its expectation at `profile` after seeds had been run there (None: none)."""
        return next((c for c in reversed(self.changed) if c.seen.get(profile)), None)

    def seen_at(self, profile: str) -> set[int]:
        """The seeds run at `profile` before its expectation there last changed: they cannot test it."""
        return {seed for change in self.changed for seed in change.seen.get(profile, ())}

    def fresh_seeds(self, profile: str, seeds: list[int]) -> list[int]:
        """Of `seeds`, those its expectation at `profile` can be tested on: those not run before it changed."""
        seen = self.seen_at(profile)
        return [seed for seed in seeds if seed not in seen]

    def before(self, change: Change) -> Claim:
        """The claim as it stood before `change`: the expectations it replaced, and the changes before it."""
        index = self.changed.index(change)
        return self.model_copy(update={"expect": {**self.expect, **change.expect}, "changed": self.changed[:index]})

    paper_bound: str | None = None
    """The paper's own bound, in its figures ('ends 45 points lower, 40.4% against 85.7%'), where every
    expectation the claim states, its `paper:` one included, tests a weaker one ('> 0' for 'collapses'):
    the report reads each PASS of the claim as against the weaker bound, never as a reproduction."""

    @field_validator("paper_bound")
    @classmethod
    def _paper_bound_fits(cls, value: str | None) -> str | None:
        low, high = PAPER_BOUND_LENGTH
        if value is not None and not low <= len(value.strip()) <= high:
            raise PydanticCustomError("paper_bound_length", "paper_bound states the paper's own bound, stronger than "
                                      "every expectation tested, in its figures and in {low} to {high} characters "
                                      "(the digest shows it beside each PASS), not '{given}' ({length})",
                                      {"low": low, "high": high, "given": value, "length": len(value.strip())})
        return value

    def alpha_at(self, profile: str) -> float:
        """The significance level of its test at `profile` (the default 0.05 where it states no test there)."""
        expectation = self.expect.get(profile)
        return 0.05 if expectation is None or expectation.skips else float(getattr(expectation, "alpha", 0.05))

    def fails_on_two_sides_at(self, profile: str) -> bool:
        """Whether its test at `profile` FAILs on either side of a range (its sequential levels count both)."""
        expectation = self.expect.get(profile)
        return expectation is not None and not expectation.skips and expectation.fails_on_two_sides

    def level_at(self, profile: str) -> float:
        """The level its verdict on `profile`'s seeds tests at: its plan's first look, a share of α."""
        return profile_level(self.alpha_at(profile))

    @model_validator(mode="after")
    def _labelled(self):
        if self.role == "diagnostic" and not self.note.strip():
            raise PydanticCustomError("diagnostic_without_note", "a diagnostic claim needs a note saying what it "
                                      "measures instead of the paper's claim, and which claim is the paper's")
        if self.role == "probe" and not self.note.strip():
            raise PydanticCustomError("probe_without_note", "a probe needs a note saying what the project tests "
                                      "that the paper does not, and why")
        stray = sorted(set(self.attribution) - set(self.expect))
        if stray:
            raise PydanticCustomError("attribution_without_expectation", "attribution at {profiles}, where the claim "
                                      "states no expectation", {"profiles": ", ".join(stray)})
        self._changes_in_order()
        if self.quote_from == "authors-readme" and "readme" not in self.source.lower():
            raise PydanticCustomError("readme_quote_without_source", "a statement quoted from the authors' README "
                                      "needs a source naming that README, not '{source}'", {"source": self.source})
        return self


    def _changes_in_order(self) -> None:
        dates = [change.date for change in self.changed]
        if dates != sorted(dates):
            raise PydanticCustomError("changes_out_of_order", "changed: its entries are not in date order")
        for profile in {p for change in self.changed for p in change.expect}:
            last = next(c for c in reversed(self.changed) if profile in c.expect)
            if last.expect[profile] == self.expect.get(profile):
                raise PydanticCustomError("change_without_change", "changed: the change of {commit} records at "
                                          "{profile} the expectation the claim states now",
                                          {"commit": last.commit[:7], "profile": profile})


class Unchecked(StrictModel):
    """An assertion of the paper that no claim encodes, with the reason it cannot be checked here."""

    statement: Annotated[str, Field(min_length=10)]
    source: str
    reason: Annotated[str, Field(min_length=20)]


class ClaimFile(StrictModel):
    paper: Identifier
    title: str
    reference: str
    central: list[ClaimId] = Field(default_factory=list)
    """The claims of the paper's abstract and conclusion: REPORT.md's digest opens with them."""
    claims: list[Claim] = Field(min_length=1, max_length=10 * MAX_LISTED)
    unchecked: list[Unchecked] = Field(default_factory=list)
    """The paper's checkable-looking assertions no claim encodes, each with its reason: reports list them."""

    @model_validator(mode="after")
    def _central_claims_exist(self):
        ids = {claim.id for claim in self.claims}
        missing = [claim_id for claim_id in self.central if claim_id not in ids]
        if missing:
            raise PydanticCustomError("unknown_central_claim", "central names claims this file does not hold: "
                                      "{missing}", {"missing": ", ".join(missing)})
        return self
