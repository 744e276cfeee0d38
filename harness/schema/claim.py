"""Claim files (`claims/*.yaml`): what a paper asserts and what to expect per profile.

The vocabulary is fixed: an observation names what to compute from run records,
an expectation names the test applied to it. Nothing in a claim is evaluated as
code.
"""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError

from harness.schema.base import Identifier, StrictModel

Aggregate = Literal["mean", "every_seed"]
Alpha = Annotated[float, Field(gt=0.0, lt=0.5)]


# --- observations -----------------------------------------------------------

def _distinct(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise PydanticCustomError("repeated_name", "{what} names {names} more than once",
                                  {"what": what, "names": ", ".join(repeated)})


class MetricObservation(StrictModel):
    """A metric of one or more variants, one value per seed."""

    metric: str
    of: Identifier | list[Identifier]
    args: dict[str, Any] = Field(default_factory=dict)

    @property
    def variants(self) -> list[str]:
        return [self.of] if isinstance(self.of, str) else list(self.of)

    @model_validator(mode="after")
    def _distinct_variants(self):
        _distinct(self.variants, "the observation")
        return self


class DifferenceObservation(StrictModel):
    """Paired per-seed difference of a metric: first variant minus second."""

    difference: str
    of: tuple[Identifier, Identifier]
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _two_variants(self):
        if self.of[0] == self.of[1]:
            raise PydanticCustomError("self_difference", "a difference of '{variant}' with itself is 0 on every "
                                      "seed: it cannot fail", {"variant": self.of[0]})
        return self

    @property
    def metric(self) -> str:
        return self.difference

    @property
    def variants(self) -> list[str]:
        return list(self.of)


class CorrelationObservation(StrictModel):
    """Correlation across clients of two per-client quantities, one value per seed.

    With `given`, the partial correlation controlling linearly for that quantity.
    """

    correlation: tuple[str, str]
    given: str | None = None
    of: Identifier | list[Identifier]
    method: Literal["pearson", "spearman"] = "pearson"

    @model_validator(mode="after")
    def _distinct_quantities(self):
        _distinct([*self.correlation, *([self.given] if self.given else [])], "the correlation")
        _distinct(self.variants, "the observation")
        return self

    @property
    def variants(self) -> list[str]:
        return [self.of] if isinstance(self.of, str) else list(self.of)


class CompareObservation(StrictModel):
    """A metric of several variants side by side (for an ordering)."""

    compare: str
    of: list[Identifier] = Field(min_length=2)
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _distinct_variants(self):
        _distinct(self.of, "the comparison")
        return self

    @property
    def metric(self) -> str:
        return self.compare

    @property
    def variants(self) -> list[str]:
        return list(self.of)


class SpreadObservation(StrictModel):
    """The ratio of two variants' seed-to-seed standard deviations of a metric (first over second)."""

    spread: str
    of: tuple[Identifier, Identifier]
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _two_variants(self):
        if self.of[0] == self.of[1]:
            raise PydanticCustomError("self_spread", "the spread of '{variant}' over itself is 1 on every run: it "
                                      "cannot fail", {"variant": self.of[0]})
        return self

    @property
    def metric(self) -> str:
        return self.spread

    @property
    def variants(self) -> list[str]:
        return list(self.of)


OBSERVATION_KEYS = ("metric", "difference", "correlation", "compare", "spread")


def _first_key(keys: tuple[str, ...]):
    def tag(value: Any) -> str | None:
        if isinstance(value, dict):
            return next((k for k in keys if k in value), None)
        return next((k for k in keys if hasattr(value, k) and k in type(value).model_fields), None)
    return tag


Observation = Annotated[
    Union[
        Annotated[MetricObservation, Tag("metric")],
        Annotated[DifferenceObservation, Tag("difference")],
        Annotated[CorrelationObservation, Tag("correlation")],
        Annotated[CompareObservation, Tag("compare")],
        Annotated[SpreadObservation, Tag("spread")],
    ],
    Discriminator(_first_key(OBSERVATION_KEYS), custom_error_type="observation_kind",
                  custom_error_message="an observation needs exactly one of the keys "
                                       + ", ".join(OBSERVATION_KEYS)),
]


# --- expectations -----------------------------------------------------------

class _ValueTest(StrictModel):
    """`of: mean` tests the mean over seeds (significance level `alpha`); `of: every_seed` reads each seed."""

    of: Aggregate = "mean"
    alpha: Alpha = 0.05


class Between(_ValueTest):
    between: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self):
        low, high = self.between
        if low > high:
            raise PydanticCustomError("bad_range", "range [{low}, {high}] has its lower bound above its upper bound",
                                      {"low": low, "high": high})
        return self


class Approx(_ValueTest):
    approx: float
    tolerance: Annotated[float, Field(ge=0.0)] | None = None
    relative_tolerance: Annotated[float, Field(ge=0.0)] | None = None

    @model_validator(mode="after")
    def _one_tolerance(self):
        if (self.tolerance is None) == (self.relative_tolerance is None):
            raise PydanticCustomError("bad_tolerance", "approx needs exactly one of tolerance, relative_tolerance")
        return self

    @property
    def half_width(self) -> float:
        if self.tolerance is not None:
            return self.tolerance
        return abs(self.approx) * float(self.relative_tolerance)


class Equals(_ValueTest):
    equals: float
    tolerance: Annotated[float, Field(ge=0.0)] = 0.0


class _Inequality(_ValueTest):
    """A one-sided comparison with a bound: `side` is the alternative of its t-test.

    Plain inequalities claim the side (PASS if significant); negated ones claim the
    absence of a significant difference on that side (FAIL only if significant).
    """

    side: ClassVar[str]
    negated: ClassVar[bool] = False
    relation: ClassVar[str]
    bound_field: ClassVar[str]

    @property
    def bound(self) -> float:
        return getattr(self, self.bound_field)


class Below(_Inequality):
    below: float
    side, relation, bound_field = "less", "<", "below"


class Above(_Inequality):
    above: float
    side, relation, bound_field = "greater", ">", "above"


class NotAbove(_Inequality):
    """Not significantly above the bound: FAIL only if a one-sided t-test shows it is above."""

    not_above: float
    side, negated, relation, bound_field = "greater", True, "not significantly above", "not_above"


class NotBelow(_Inequality):
    """Not significantly below the bound: FAIL only if a one-sided t-test shows it is below."""

    not_below: float
    side, negated, relation, bound_field = "less", True, "not significantly below", "not_below"


class Order(StrictModel):
    """Variants from highest to lowest metric: paired one-sided tests of adjacent pairs over the seeds."""

    order: list[Identifier] = Field(min_length=2)
    of: Aggregate = "mean"
    alpha: Alpha = 0.05

    @model_validator(mode="after")
    def _distinct_variants(self):
        _distinct(self.order, "the order")
        return self


class Equivalent(StrictModel):
    """Two one-sided tests: the mean lies within ±bound."""

    equivalent_within: Annotated[float, Field(gt=0.0)]
    alpha: Alpha = 0.05


class WithinSpread(StrictModel):
    """|mean paired difference| below the seed-to-seed standard deviation of a variant (equivalence
    against the spread's lower confidence bound)."""

    within_spread_of: Identifier
    alpha: Alpha = 0.05


class Skip(StrictModel):
    """No expectation at this profile; the verdict is SKIPPED with this reason."""

    skip: Annotated[str, Field(min_length=3)]


def admitted_range(expectation) -> tuple[float, float] | None:
    """The closed range a range expectation admits (`between`, `approx`, `equals`, and
    `equivalent_within` as ±bound); None for a bound or another test."""
    if isinstance(expectation, Between):
        return expectation.between[0], expectation.between[1]
    if isinstance(expectation, Approx):
        return expectation.approx - expectation.half_width, expectation.approx + expectation.half_width
    if isinstance(expectation, Equals):
        return expectation.equals - expectation.tolerance, expectation.equals + expectation.tolerance
    if isinstance(expectation, Equivalent):
        return -expectation.equivalent_within, expectation.equivalent_within
    return None


EXPECTATION_KEYS = ("between", "approx", "equals", "below", "above", "not_above", "not_below", "order",
                    "equivalent_within", "within_spread_of", "skip")

Expectation = Annotated[
    Union[
        Annotated[Between, Tag("between")],
        Annotated[Approx, Tag("approx")],
        Annotated[Equals, Tag("equals")],
        Annotated[Below, Tag("below")],
        Annotated[Above, Tag("above")],
        Annotated[NotAbove, Tag("not_above")],
        Annotated[NotBelow, Tag("not_below")],
        Annotated[Order, Tag("order")],
        Annotated[Equivalent, Tag("equivalent_within")],
        Annotated[WithinSpread, Tag("within_spread_of")],
        Annotated[Skip, Tag("skip")],
    ],
    Discriminator(_first_key(EXPECTATION_KEYS), custom_error_type="expectation_kind",
                  custom_error_message="an expectation needs exactly one of the keys "
                                       + ", ".join(EXPECTATION_KEYS)),
]


# --- claims -------------------------------------------------------------------

ClaimId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]


Role = Literal["paper", "diagnostic", "probe"]
"""`paper`: the claim checks what the paper states. `diagnostic`: a second, labelled measurement
that is not the paper's claim (another denominator, this implementation's message, cached
features), kept to explain a paper claim's verdict and counted apart from the paper's claims.
`probe`: the project's own test of a sentence the paper states but does not test itself (an
attack the paper does not claim to resist); counted with the diagnostics, never as the paper's
failed experiment."""

LABELLED_ROLES = ("diagnostic", "probe")
"""Roles whose claims are not the paper's experiments: they need a note and are counted apart."""

QuoteOrigin = Literal["paper", "authors-readme"]
"""Where `statement` is quoted from: the paper itself, or the authors' repository README."""


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

    @model_validator(mode="after")
    def _labelled(self):
        if self.role == "diagnostic" and not self.note.strip():
            raise PydanticCustomError("diagnostic_without_note", "a diagnostic claim needs a note saying what it "
                                      "measures instead of the paper's claim, and which claim is the paper's")
        if self.role == "probe" and not self.note.strip():
            raise PydanticCustomError("probe_without_note", "a probe needs a note saying what the project tests "
                                      "that the paper does not, and why")
        if self.quote_from == "authors-readme" and "readme" not in self.source.lower():
            raise PydanticCustomError("readme_quote_without_source", "a statement quoted from the authors' README "
                                      "needs a source naming that README, not '{source}'", {"source": self.source})
        return self


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
    claims: list[Claim] = Field(min_length=1)
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
