"""Claim files (`claims/*.yaml`): what a paper asserts and what to expect per profile.

The vocabulary is fixed: an observation names what to compute from run records,
an expectation names the test applied to it. Nothing in a claim is evaluated as
code. Each expectation class is the one place that says what it admits, how it
reads, which observations it fits and which tests (`harness.statistics`) decide it.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError

from harness.design.readings import Reading, order_design, value_design, within_spread_design
from harness.design.spreads import SeriesNumbers
from harness.errors import did_you_mean
from harness.schema.base import MAX_LISTED, Identifier, StrictModel
from harness.statistics import outcome, spreads, values
from harness.statistics.bands import Admitted
from harness.statistics.equivalence import equivalence_test, within_spread_test
from harness.statistics.orders import order_test
from harness.statistics.outcome import Decision

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

    key: ClassVar[str] = "metric"
    """The key that names this kind of observation in a claim file."""

    metric: str
    of: Identifier | Annotated[list[Identifier], Field(max_length=MAX_LISTED)]
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

    key: ClassVar[str] = "difference"
    """The key that names this kind of observation in a claim file."""

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

    key: ClassVar[str] = "correlation"
    """The key that names this kind of observation in a claim file."""

    correlation: tuple[str, str]
    given: str | None = None
    of: Identifier | Annotated[list[Identifier], Field(max_length=MAX_LISTED)]
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

    key: ClassVar[str] = "compare"
    """The key that names this kind of observation in a claim file."""

    compare: str
    of: list[Identifier] = Field(min_length=2, max_length=MAX_LISTED)
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

    key: ClassVar[str] = "spread"
    """The key that names this kind of observation in a claim file."""

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
    Annotated[MetricObservation, Tag("metric")]
    | Annotated[DifferenceObservation, Tag("difference")]
    | Annotated[CorrelationObservation, Tag("correlation")]
    | Annotated[CompareObservation, Tag("compare")]
    | Annotated[SpreadObservation, Tag("spread")],
    Discriminator(_first_key(OBSERVATION_KEYS), custom_error_type="observation_kind",
                  custom_error_message="an observation needs exactly one of the keys "
                                       + ", ".join(OBSERVATION_KEYS)),
]


# --- expectations -----------------------------------------------------------

def _fmt(value: float) -> str:
    return f"{value:.4g}"


class ExpectationBase(StrictModel):
    """What an expectation admits, how it reads, which observations it fits, which variants it
    reads, and how it is decided. The statistical tests themselves are `harness.verdicts`; each
    expectation names the ones that decide it."""

    @property
    def skips(self) -> bool:
        """No test at this profile (`skip`): the verdict is SKIPPED with its reason."""
        return False

    @property
    def every_seed(self) -> bool:
        """Each seed read on its own (`of: every_seed`) rather than the mean over seeds."""
        return False

    @property
    def spread_reference(self) -> str | None:
        """The variant whose seed-to-seed spread it is tested against (`within_spread_of`), if any."""
        return None

    def admitted(self) -> Admitted | None:
        """The values of the observed quantity it admits; None where it is not a set of values of that
        quantity (an order of variants, a difference within a variant's spread, a skip)."""
        return None

    @property
    def exact_equality_of_the_mean(self) -> bool:
        """An `equals` without a tolerance, tested on the mean over seeds."""
        return False

    def centre(self) -> float | None:
        """The value a range is centred on (a between's midpoint, an approx's or equality's value); None
        for a bound or a test across variants."""
        return None

    def variants_read(self, obs) -> list[str]:
        """The variants whose records deciding it on `obs` reads: the observation's, then its spread
        reference."""
        variants = list(obs.variants)
        reference = self.spread_reference
        if reference is not None and reference not in variants:
            variants.append(reference)
        return variants

    def tested_differences(self) -> list[tuple[str, str]]:
        """The paired per-seed differences (higher variant, lower variant) whose sign it tests: an
        order's adjacent pairs; none for the others (a scale study trends these as the claim's own
        statistic, beside each variant's values)."""
        return []

    def claims_a_difference(self, obs, observed) -> bool:
        """It claims a strict difference between variants: an order, or a plain (not negated)
        inequality on a paired difference, on a ratio of two variants' spreads, or on each of several
        variants (`observed`: the observation as read). Ranges, equalities, equivalence and 'not
        above / not below' claim no difference, which a quantity that does not vary can meet."""
        return False

    def effect(self, means: Mapping[str, float], label: Callable[[str], str]) -> float | None:
        """The size of the effect a verdict on it rests on, from the means of the series it read (keyed
        by label; `label(variant)` is a variant's series): a plain bound's smallest distance from the
        bound, an order's smallest gap between adjacent variants; None where it claims no effect."""
        return None

    def as_written(self) -> str:
        """Its key and value as a claim file states them ('between: (0.1, 0.3)')."""
        key = next(k for k in EXPECTATION_KEYS if k in type(self).model_fields)
        return f"{key}: {getattr(self, key)}"

    def describe(self, obs=None) -> str:
        """A short human reading of it and of the test that decides it on the observation `obs`."""
        raise NotImplementedError

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        """A short form of what it admits ('> 0', 'in [0.63, 0.77]', 'A > B > C'; `labels`: variant names)."""
        raise NotImplementedError

    def _every_text(self) -> str:
        return " on every seed" if self.every_seed else ""

    def fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        """Why it cannot test the observation `obs` of an experiment with `variants` (none: it fits)."""
        if isinstance(obs, CompareObservation):
            return [f"a 'compare' observation needs an 'order' expectation, not {type(self).__name__.lower()}"]
        return self._fit_problems(obs, variants)

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        return []

    def decide(self, obs, observed) -> Decision:
        """The decision of its test on `observed`, the observation `obs` read from the records (values
        `harness.verdicts.verify.evaluate` screened: no seed is NaN, and a comparison of variants
        measures something)."""
        raise NotImplementedError

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        """What its test can decide on a metric, difference or comparison before any run, and the seeds
        each verdict needs (`harness.loading.design`; `numbers`: the stored series for the planning spread)."""
        raise NotImplementedError


class _ValueTest(ExpectationBase):
    """`of: mean` tests the mean over seeds (significance level `alpha`); `of: every_seed` reads each seed."""

    of: Aggregate = "mean"
    alpha: Alpha = 0.05

    @property
    def every_seed(self) -> bool:
        return self.of == "every_seed"

    def _stated(self) -> list[float]:
        """The numbers the claim file states (a range's ends, a value, a bound)."""
        raise NotImplementedError

    def _reading(self, obs) -> str:
        """How the value is read where it is not the mean's own test: on every seed, or as a correlation's
        Fisher z (per seed or pooled); '' for the mean of a metric."""
        if isinstance(obs, CorrelationObservation):
            test = self._correlation_test_text()
            return (f" on every seed (Fisher z per seed, {test})" if self.every_seed
                    else f" (random-effects pool of Fisher z over seeds, {test})")
        return self._every_text()

    def _correlation_test_text(self) -> str:
        return f"{1 - 2 * self.alpha:.0%} interval"

    def _mean_test_text(self) -> str:
        return f" (mean's {1 - 2 * self.alpha:.0%} t-interval inside it)"

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        if isinstance(obs, SpreadObservation):
            if self.of != "mean":
                return ["a 'spread' observation (one ratio per profile) takes a bound or a range, of the mean"]
            if any(b <= 0 for b in self._stated()):
                return [f"a ratio of standard deviations is positive; bound {self._stated()} cannot be met or "
                        "missed meaningfully"]
        if isinstance(obs, CorrelationObservation):
            if any(not -1.0 <= b <= 1.0 for b in self._stated()):
                return [f"a correlation lies in [-1, 1]; bound {self._stated()} cannot be met or missed meaningfully"]
            admitted = self.admitted()
            if admitted is not None and admitted.covers(-1.0, 1.0):
                return [f"{self.as_written()} holds for every correlation in [-1, 1]: it cannot fail"]
        return []

    def decide(self, obs, observed) -> Decision:
        """A bound or range on the ratio of two variants' seed spreads, else on each series' values."""
        if observed.spread_ratio:
            return spreads.spread_ratio_test(self, *observed.series)
        return values.each_series(self, observed.series)

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        return value_design(self, numbers)


class Between(_ValueTest):
    between: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self):
        low, high = self.between
        if low > high:
            raise PydanticCustomError("bad_range", "range [{low}, {high}] has its lower bound above its upper bound",
                                      {"low": low, "high": high})
        return self

    def admitted(self) -> Admitted:
        return Admitted(self.between[0], self.between[1])

    def centre(self) -> float:
        return sum(self.between) / 2

    def _stated(self) -> list[float]:
        return list(self.between)

    def describe(self, obs=None) -> str:
        low, high = self.between
        return f"in [{_fmt(low)}, {_fmt(high)}]{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        low, high = self.between
        return f"in [{_fmt(low)}, {_fmt(high)}]{self._every_text()}"


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
        assert self.relative_tolerance is not None  # _one_tolerance requires one of the two
        return abs(self.approx) * float(self.relative_tolerance)

    def admitted(self) -> Admitted:
        return Admitted(self.approx - self.half_width, self.approx + self.half_width)

    def centre(self) -> float:
        return self.approx

    def _stated(self) -> list[float]:
        return [self.approx]

    def describe(self, obs=None) -> str:
        tolerance = (f"± {_fmt(self.tolerance)}" if self.tolerance is not None
                     else f"± {self.relative_tolerance:.0%}")
        return f"≈ {_fmt(self.approx)} {tolerance}{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"≈ {_fmt(self.approx)} ± {_fmt(self.half_width)}{self._every_text()}"


class Equals(_ValueTest):
    equals: float
    tolerance: Annotated[float, Field(ge=0.0)] = 0.0

    @property
    def exact_equality_of_the_mean(self) -> bool:
        return self.tolerance == 0.0 and self.of == "mean"

    def admitted(self) -> Admitted:
        return Admitted(self.equals - self.tolerance, self.equals + self.tolerance)

    def centre(self) -> float:
        return self.equals

    def _stated(self) -> list[float]:
        return [self.equals]

    def describe(self, obs=None) -> str:
        tolerance = f" (tolerance {_fmt(self.tolerance)})" if self.tolerance else " exactly"
        return f"= {_fmt(self.equals)}{tolerance}{self._reading(obs)}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        tolerance = f" ± {_fmt(self.tolerance)}" if self.tolerance else ""
        return f"= {_fmt(self.equals)}{tolerance}{self._every_text()}"


class _Inequality(_ValueTest):
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
        if self.negated or isinstance(obs, CorrelationObservation):
            return False
        return isinstance(obs, DifferenceObservation) or observed.spread_ratio or len(observed.series) > 1

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
        return f"{self.relation} {_fmt(self.bound)}{self._reading(obs) or self._mean_test_text()}"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"{self.short_relation} {_fmt(self.bound)}{self._every_text()}"


class Below(_Inequality):
    below: float
    side, relation, short_relation, bound_field = "less", "<", "<", "below"


class Above(_Inequality):
    above: float
    side, relation, short_relation, bound_field = "greater", ">", ">", "above"


class NotAbove(_Inequality):
    """Not significantly above the bound: FAIL only if a one-sided t-test shows it is above."""

    not_above: float
    side, negated, relation, short_relation, bound_field = (
        "greater", True, "not significantly above", "not >", "not_above")


class NotBelow(_Inequality):
    """Not significantly below the bound: FAIL only if a one-sided t-test shows it is below."""

    not_below: float
    side, negated, relation, short_relation, bound_field = (
        "less", True, "not significantly below", "not <", "not_below")


class Order(ExpectationBase):
    """Variants from highest to lowest metric: paired one-sided tests of adjacent pairs over the seeds."""

    order: list[Identifier] = Field(min_length=2, max_length=MAX_LISTED)
    of: Aggregate = "mean"
    alpha: Alpha = 0.05

    @model_validator(mode="after")
    def _distinct_variants(self):
        _distinct(self.order, "the order")
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
        if not isinstance(obs, CompareObservation):
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


class _PairedDifferenceTest(ExpectationBase):
    """A test of a paired 'difference' observation (equivalence, within a seed spread)."""

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        if not isinstance(obs, DifferenceObservation):
            return [f"{type(self).__name__.lower()} tests a paired 'difference' observation"]
        return []


class Equivalent(_PairedDifferenceTest):
    """Two one-sided tests: the mean lies within ±bound."""

    equivalent_within: Annotated[float, Field(gt=0.0)]
    alpha: Alpha = 0.05

    def admitted(self) -> Admitted:
        return Admitted(-self.equivalent_within, self.equivalent_within)

    def centre(self) -> float:
        return 0.0

    def describe(self, obs=None) -> str:
        return f"within ±{_fmt(self.equivalent_within)} (TOST, α = {self.alpha})"

    def brief(self, labels: Mapping[str, str] | None = None) -> str:
        return f"within ±{_fmt(self.equivalent_within)}"

    def decide(self, obs, observed) -> Decision:
        return equivalence_test(self, observed.series[0])

    def design(self, numbers: SeriesNumbers | None) -> Reading:
        return value_design(self, numbers)


class WithinSpread(_PairedDifferenceTest):
    """|mean paired difference| below the seed-to-seed standard deviation of a variant (equivalence
    against the spread's lower confidence bound)."""

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


class Skip(ExpectationBase):
    """No expectation at this profile; the verdict is SKIPPED with this reason."""

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


EXPECTATION_KEYS = ("between", "approx", "equals", "below", "above", "not_above", "not_below", "order",
                    "equivalent_within", "within_spread_of", "skip")

Expectation = Annotated[
    Annotated[Between, Tag("between")]
    | Annotated[Approx, Tag("approx")]
    | Annotated[Equals, Tag("equals")]
    | Annotated[Below, Tag("below")]
    | Annotated[Above, Tag("above")]
    | Annotated[NotAbove, Tag("not_above")]
    | Annotated[NotBelow, Tag("not_below")]
    | Annotated[Order, Tag("order")]
    | Annotated[Equivalent, Tag("equivalent_within")]
    | Annotated[WithinSpread, Tag("within_spread_of")]
    | Annotated[Skip, Tag("skip")],
    Discriminator(_first_key(EXPECTATION_KEYS), custom_error_type="expectation_kind",
                  custom_error_message="an expectation needs exactly one of the keys "
                                       + ", ".join(EXPECTATION_KEYS)),
]


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


Whose = Literal["the paper", "the implementation", "the scale"]


class Attribution(StrictModel):
    """Whose a FAIL at a profile is, with the evidence: the paper's (its own numbers or text disagree
    with the sentence), the implementation's (a departure from the paper, named), or the scale's
    (a study or a measurement at this scale shows the limit)."""

    whose: Whose
    evidence: Annotated[str, Field(min_length=20)]

    def text(self) -> str:
        return f"{self.whose}, because {self.evidence}"


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

    def alpha_at(self, profile: str) -> float:
        """The significance level of its test at `profile` (the default 0.05 where it states no test there)."""
        expectation = self.expect.get(profile)
        return 0.05 if expectation is None or isinstance(expectation, Skip) else expectation.alpha

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
