"""What every expectation shares, and the tests of a value (a range or a bound on a metric or difference)."""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from harness.design.readings import Reading, value_design
from harness.design.spreads import SeriesNumbers
from harness.schema.base import StrictModel
from harness.schema.observations.base import Shape, ranked, shape_of
from harness.statistics import spreads, values
from harness.statistics.bands import Admitted
from harness.statistics.outcome import Decision
from harness.statistics.sequential_boundary import profile_level

Aggregate = Literal["mean", "every_seed"]
Alpha = Annotated[float, Field(gt=0.0, lt=0.5)]


def number_text(value: float) -> str:
    return f"{value:.4g}"


class ExpectationBase(StrictModel):
    """What an expectation admits, how it reads, which observations it fits, which variants it
    reads, and how it is decided. The statistical tests themselves are `harness.statistics`; each
    expectation names the ones that decide it."""

    key: ClassVar[str]
    """The key that names it in a claim file."""
    doc: ClassVar[str]
    """Its line in docs/claims.md."""

    readings: ClassVar[frozenset[str]] = frozenset()
    """Fields that add a reading beside the verdict and leave its test as it is (`hypothesis` leaves them out)."""

    @property
    def skips(self) -> bool:
        """No test at this profile (`skip`): the verdict is SKIPPED with its reason."""
        return False

    def hypothesis(self) -> dict:
        """What its test decides, as plain values: every field but its `readings` (a confirmatory plan registers
        it, and a later expectation with another hypothesis is a new claim)."""
        return self.model_dump(mode="json", exclude=set(self.readings))

    def at_level(self, level: float | None = None) -> ExpectationBase:
        """This expectation with its test at `level`; by default at the level of a verdict on a profile's
        seeds, the share of its α the first look of its sequential plan spends (`sequential_rule`), so that
        the profile's verdict and seeds added until decided together keep α. One without a test level
        (`alpha`) is returned as it is."""
        if "alpha" not in type(self).model_fields:
            return self
        alpha = float(self.model_dump(include={"alpha"})["alpha"])
        return self.model_copy(update={"alpha": profile_level(alpha) if level is None else level})

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

    def claimed_excess(self, value: float) -> float | None:
        """How far `value` lies beyond its bound on the side it claims, where it claims a mean beyond a bound
        (`above`, `below`): what a power calculation of its t-test reads per seed; None for any other claim."""
        return None

    @property
    def fails_on_two_sides(self) -> bool:
        """It admits a range (`between`, `approx`, `equals`, `equivalent_within`): a value beyond either end
        contradicts it, so its sequential looks are calibrated for a two-sided FAIL region too
        (`sequential_boundary.nominal_levels`)."""
        admitted = self.admitted()
        return admitted is not None and not admitted.one_sided

    @property
    def exact_equality_of_the_mean(self) -> bool:
        """An `equals` without a tolerance, tested on the mean over seeds."""
        return False

    def paper_span(self) -> tuple[float, float, int] | None:
        """(low, high, k) where it admits the span of the paper's own k runs (`between` with `span_of_runs`),
        read beside its verdict as such a span predicts (`harness.statistics.spans`); else None."""
        return None

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
        return f"{self.key}: {getattr(self, self.key)}"

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
        if ranked(obs):
            return [f"a '{obs.key}' observation needs an 'order' expectation, not {type(self).__name__.lower()}"]
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


class ValueTest(ExpectationBase):
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
        if shape_of(obs) is Shape.CORRELATION:
            test = self._correlation_test_text()
            return (f" on every seed (Fisher z per seed, {test})" if self.every_seed
                    else f" (random-effects pool of Fisher z over seeds, {test})")
        return self._every_text()

    def _correlation_test_text(self) -> str:
        return f"{1 - 2 * self.alpha:.0%} interval"

    def _mean_test_text(self) -> str:
        return f" (mean's {1 - 2 * self.alpha:.0%} t-interval inside it)"

    def _fit_problems(self, obs, variants: Collection[str]) -> list[str]:
        if shape_of(obs) is Shape.SPREAD:
            if self.of != "mean":
                return ["a 'spread' observation (one ratio per profile) takes a bound or a range, of the mean"]
            if any(b <= 0 for b in self._stated()):
                return [f"a ratio of standard deviations is positive; bound {self._stated()} cannot be met or "
                        "missed meaningfully"]
        if shape_of(obs) is Shape.CORRELATION:
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
