"""Each expectation class says what it admits, how it reads, which observations it fits, which
variants it reads and how it is decided; code outside `harness/schema/` asks it and never tests
its type."""
from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from harness.schema.claim import Claim
from harness.schema.expectations.approx import Approx
from harness.schema.expectations.base import ExpectationBase
from harness.schema.expectations.between import Between
from harness.schema.expectations.bounds import Above, Below, NotAbove, NotBelow
from harness.schema.expectations.equals import Equals
from harness.schema.expectations.equivalent import Equivalent
from harness.schema.expectations.order import Order
from harness.schema.expectations.skip import Skip
from harness.schema.expectations.within_spread import WithinSpread
from harness.schema.observations.compare import CompareObservation
from harness.schema.observations.correlation import CorrelationObservation
from harness.schema.observations.difference import DifferenceObservation
from harness.schema.observations.metric import MetricObservation
from harness.schema.observations.spread import SpreadObservation
from harness.statistics.bands import Admitted
from harness.statistics.outcome import most_needed
from harness.statistics.power import Power
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import FAIL, PASS, SKIPPED, evaluate

HARNESS = Path(__file__).resolve().parents[1] / "harness"
METRIC = MetricObservation(metric="m", of="a")
TWO = MetricObservation(metric="m", of=["a", "b"])
DIFF = DifferenceObservation(difference="m", of=("a", "b"))
COMPARE = CompareObservation(compare="m", of=["a", "b"])
SPREAD = SpreadObservation(spread="m", of=("a", "b"))
CORRELATION = CorrelationObservation(correlation=("x", "y"), of="a")


def _expectation_classes() -> set[type]:
    found, todo = set(), [ExpectationBase]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


# --- no type test on an expectation outside the schema ---------------------------------------

EXPECTATION_NAMES = {cls.__name__ for cls in _expectation_classes()}
OBSERVATION_FIELDS = {name for cls in (MetricObservation, DifferenceObservation, CorrelationObservation,
                                       CompareObservation, SpreadObservation) for name in cls.model_fields}
PROBED = ({name for cls in _expectation_classes() for name in cls.model_fields}
          | {"side", "negated", "relation", "bound_field", "bound", "half_width"}) - OBSERVATION_FIELDS
"""Attributes only an expectation has: reading one with getattr/hasattr and a fallback probes its type, as
does any such read of something named an expectation."""


def _type_tests(source: str) -> list[tuple[int, str]]:
    """Where the code names an expectation class other than to construct one or in a type annotation
    (an isinstance or issubclass test, a match pattern, a dispatch table keyed by class), and where it
    probes an attribute only an expectation has (getattr with a default, hasattr)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    annotations = [node.annotation for node in ast.walk(tree) if isinstance(node, (ast.arg, ast.AnnAssign))
                   and node.annotation is not None]
    annotations += [node.returns for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.returns is not None]
    in_annotations = {id(node) for annotation in annotations for node in ast.walk(annotation)}
    found = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in EXPECTATION_NAMES and id(node) not in in_annotations:
            parent = parents.get(node)
            if not (isinstance(parent, ast.Call) and parent.func is node):
                found.append((node.lineno, f"names {name}"))
        if (isinstance(node, ast.MatchClass) and isinstance(node.cls, (ast.Name, ast.Attribute))
                and (getattr(node.cls, "id", None) or getattr(node.cls, "attr", None)) in EXPECTATION_NAMES):
            found.append((node.lineno, "matches an expectation class"))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and (node.func.id == "hasattr" or len(node.args) == 3)
                and (node.args[1].value in PROBED or "expect" in ast.unparse(node.args[0]))):
            found.append((node.lineno, f"{node.func.id}(…, {node.args[1].value!r})"))
    return found


def test_no_code_outside_the_schema_tests_an_expectations_type() -> None:
    problems = [f"{path.relative_to(HARNESS.parent)}:{line}: {what}"
                for path in sorted(HARNESS.rglob("*.py")) if "schema" not in path.relative_to(HARNESS).parts[:1]
                for line, what in _type_tests(path.read_text(encoding="utf-8"))]
    assert problems == [], "ask the expectation (harness.schema.claim.ExpectationBase) instead:\n" + "\n".join(problems)


@pytest.mark.parametrize("source", [
    "isinstance(e, Between)",
    "isinstance(e, (claim.Equivalent, claim.WithinSpread))",
    "match e:\n    case Skip():\n        pass",
    "{Below: 1}[type(e)]",
    "getattr(expectation, 'negated', False)",
    "hasattr(expectation, 'alpha')",
    "getattr(claim.expect.get(profile), 'of', 'mean')",
    "getattr(e, 'within_spread_of', None)",
    "x = Inequality",
])
def test_the_scan_finds_each_kind_of_type_test(source) -> None:
    assert _type_tests(source)


def test_the_scan_lets_code_construct_an_expectation_annotate_one_and_read_an_observation() -> None:
    assert _type_tests("e = Between(between=(0, 1))\nv = getattr(obs, 'metric', '')\n"
                       "isinstance(obs, DifferenceObservation)\n"
                       "def f(e: ExpectationBase | None) -> Between: pass") == []


# --- what each expectation admits ------------------------------------------------------------

@pytest.mark.parametrize("expectation, admitted", [
    (Between(between=(-0.6, 0.1)), Admitted(-0.6, 0.1)),
    (Approx(approx=10.0, tolerance=0.5), Admitted(9.5, 10.5)),
    (Approx(approx=-4.0, relative_tolerance=0.25), Admitted(-5.0, -3.0)),
    (Equals(equals=3.0), Admitted(3.0, 3.0)),
    (Equals(equals=3.0, tolerance=0.5), Admitted(2.5, 3.5)),
    (Equivalent(equivalent_within=0.2), Admitted(-0.2, 0.2)),
    (Below(below=0.1), Admitted(-math.inf, 0.1, "less", False)),
    (Above(above=0.1), Admitted(0.1, math.inf, "greater", False)),
    (NotAbove(not_above=0.1), Admitted(-math.inf, 0.1, "greater", True)),
    (NotBelow(not_below=2.0), Admitted(2.0, math.inf, "less", True)),
    (Order(order=["a", "b"]), None),
    (WithinSpread(within_spread_of="a"), None),
    (Skip(skip="not at this scale"), None),
], ids=lambda value: type(value).__name__)
def test_each_expectation_admits_its_band(expectation, admitted) -> None:
    assert expectation.admitted() == admitted


def test_a_bound_admits_its_side_and_a_negated_bound_the_bound_itself() -> None:
    below, not_above = Below(below=1.0).admitted(), NotAbove(not_above=1.0).admitted()
    assert below.one_sided and below.bound == 1.0 and not below.exact
    assert below.holds(0.5) and not below.holds(1.0) and not below.holds(1.5)
    assert not_above.holds(0.5) and not_above.holds(1.0) and not not_above.holds(1.5)
    above, not_below = Above(above=1.0).admitted(), NotBelow(not_below=1.0).admitted()
    assert above.holds(1.5) and not above.holds(1.0) and not above.holds(0.5)
    assert not_below.holds(1.5) and not_below.holds(1.0) and not not_below.holds(0.5)
    assert above.bound == not_below.bound == 1.0


def test_a_range_admits_its_ends_and_an_exact_value_only_itself() -> None:
    between = Between(between=(0.0, 1.0)).admitted()
    assert between.holds(0.0) and between.holds(1.0) and not between.holds(1.0 + 1e-12) and not between.one_sided
    exact = Equals(equals=0.25).admitted()
    assert exact.exact and exact.holds(0.25) and not exact.holds(0.25 + 1e-15)
    assert between.covers(0.2, 0.8) and not between.covers(-0.1, 0.5)
    assert Below(below=1.0).admitted().covers(-1.0, 1.0) and not Below(below=0.9).admitted().covers(-1.0, 1.0)


def test_the_centre_of_a_range_and_none_of_a_bound() -> None:
    assert Between(between=(70.0, 80.0)).centre() == 75.0
    assert Approx(approx=74.5, relative_tolerance=0.1).centre() == 74.5
    assert Equals(equals=2.0, tolerance=1.0).centre() == 2.0
    assert Above(above=1.0).centre() is None and Order(order=["a", "b"]).centre() is None


# --- how it reads ----------------------------------------------------------------------------

@pytest.mark.parametrize("expectation, obs, text", [
    (Between(between=(0.1, 0.3)), METRIC, "in [0.1, 0.3] (mean's 90% t-interval inside it)"),
    (Between(between=(0.1, 0.3), of="every_seed"), METRIC, "in [0.1, 0.3] on every seed"),
    (Approx(approx=2.0, relative_tolerance=0.1), METRIC, "≈ 2 ± 10% (mean's 90% t-interval inside it)"),
    (Equals(equals=5.0), METRIC, "= 5 exactly"),
    (Equals(equals=5.0, tolerance=0.01, of="every_seed"), METRIC, "= 5 (tolerance 0.01) on every seed"),
    (Above(above=0.0), DIFF, "> 0 (one-sided t-test of the mean, α = 0.05)"),
    (NotAbove(not_above=0.0, alpha=0.01), DIFF, "not significantly above 0 (one-sided t-test of the mean, α = 0.01)"),
    (Below(below=0.0), CORRELATION, "< 0 (random-effects pool of Fisher z over seeds, one-sided at α = 0.05)"),
    (Between(between=(-0.8, -0.5), of="every_seed"), CORRELATION,
     "in [-0.8, -0.5] on every seed (Fisher z per seed, 90% interval)"),
    (Order(order=["a", "b"]), COMPARE, "a > b (paired one-sided t-tests of adjacent pairs, α = 0.05)"),
    (Order(order=["a", "b"], of="every_seed"), COMPARE, "a > b on every seed"),
    (Equivalent(equivalent_within=0.5), DIFF, "within ±0.5 (TOST, α = 0.05)"),
    (WithinSpread(within_spread_of="a"), DIFF,
     "|mean paired difference| < seed-to-seed std of a (TOST against the spread's 95% lower bound, α = 0.05)"),
    (Skip(skip="no data"), METRIC, "none at this profile (no data)"),
])
def test_each_expectation_describes_itself_and_its_test(expectation, obs, text) -> None:
    assert expectation.describe(obs) == text


@pytest.mark.parametrize("expectation, text", [
    (Between(between=(0.63, 0.77)), "in [0.63, 0.77]"),
    (Approx(approx=10.0, relative_tolerance=0.1, of="every_seed"), "≈ 10 ± 1 on every seed"),
    (Equals(equals=1.0), "= 1"),
    (NotBelow(not_below=0.5), "not < 0.5"),
    (Order(order=["a", "b"]), "A > b"),
    (WithinSpread(within_spread_of="a"), "within the seed spread of A"),
    (Skip(skip="no data"), "not tested"),
])
def test_each_expectation_has_a_brief_form(expectation, text) -> None:
    assert expectation.brief({"a": "A"}) == text


def test_an_expectation_as_written() -> None:
    assert Between(between=(0.1, 0.3)).as_written() == "between: (0.1, 0.3)"
    assert Order(order=["a", "b"]).as_written() == "order: ['a', 'b']"


# --- what it fits and reads ------------------------------------------------------------------

@pytest.mark.parametrize("expectation, obs, problem", [
    (Order(order=["a", "b"]), METRIC, "'order' needs a 'compare' observation"),
    (Order(order=["a", "c"]), COMPARE, "order names ['c'] which the observation does not compare"),
    (Above(above=0.0), COMPARE, "a 'compare' observation needs an 'order' expectation, not above"),
    (Equivalent(equivalent_within=0.1), METRIC, "equivalent tests a paired 'difference' observation"),
    (WithinSpread(within_spread_of="z"), DIFF, "unknown variant 'z'"),
    (Below(below=2.0, of="every_seed"), SPREAD, "takes a bound or a range, of the mean"),
    (Between(between=(0.0, 2.0)), SPREAD, "a ratio of standard deviations is positive; bound [0.0, 2.0]"),
    (Above(above=1.5), CORRELATION, "a correlation lies in [-1, 1]; bound [1.5]"),
    (NotBelow(not_below=-1.0), CORRELATION, "not_below: -1.0 holds for every correlation in [-1, 1]"),
])
def test_an_expectation_names_the_observations_it_cannot_test(expectation, obs, problem) -> None:
    problems = expectation.fit_problems(obs, {"a": None, "b": None})
    assert len(problems) == 1 and problem in problems[0]


@pytest.mark.parametrize("expectation, obs", [
    (Order(order=["b", "a"]), COMPARE), (Above(above=0.0), DIFF), (Between(between=(0.5, 2.0)), SPREAD),
    (Below(below=0.0), CORRELATION), (WithinSpread(within_spread_of="a"), DIFF), (Skip(skip="none"), COMPARE),
])
def test_an_expectation_fits_its_observations(expectation, obs) -> None:
    assert expectation.fit_problems(obs, {"a": None, "b": None}) == []


def test_a_within_spread_reads_its_reference_variant() -> None:
    assert WithinSpread(within_spread_of="c").variants_read(DIFF) == ["a", "b", "c"]
    assert WithinSpread(within_spread_of="a").variants_read(DIFF) == ["a", "b"]
    assert Above(above=0.0).variants_read(DIFF) == ["a", "b"] and Above(above=0.0).spread_reference is None
    assert Skip(skip="none").skips and not Above(above=0.0).skips


def test_which_expectations_claim_a_strict_difference() -> None:
    one, several = Observed([Series("a", {0: 1.0})]), Observed([Series("a", {0: 1.0}), Series("b", {0: 1.0})])
    assert Order(order=["a", "b"]).claims_a_difference(COMPARE, several)
    assert Above(above=0.0).claims_a_difference(DIFF, one)
    assert Above(above=0.0).claims_a_difference(TWO, several)
    assert not Above(above=0.0).claims_a_difference(METRIC, one)
    assert not NotAbove(not_above=0.0).claims_a_difference(DIFF, one)
    assert not Below(below=0.0).claims_a_difference(CORRELATION, several)
    assert not Between(between=(0.0, 1.0)).claims_a_difference(DIFF, one)


def test_the_effect_a_bound_or_an_order_rests_on() -> None:
    means = {"A (m)": 1.0, "B (m)": 0.25}

    def label(variant: str) -> str:
        return f"{variant.upper()} (m)"

    assert Above(above=0.2).effect(means, label) == pytest.approx(0.05)
    assert Order(order=["a", "b"]).effect(means, label) == 0.75
    assert Order(order=["a", "c"]).effect(means, label) is None
    assert NotAbove(not_above=0.2).effect(means, label) is None
    assert Between(between=(0.0, 2.0)).effect(means, label) is None


def test_the_level_a_claim_tests_at_each_profile() -> None:
    claim = Claim(id="c", statement="a statement of ten", source="§1", experiment="e", observe=METRIC,
                    expect={"smoke": Skip(skip="none"), "standard": Above(above=0.0, alpha=0.01)})
    assert claim.alpha_at("standard") == 0.01
    assert claim.alpha_at("smoke") == 0.05 and claim.alpha_at("paper") == 0.05


# --- how it is decided -----------------------------------------------------------------------

def test_each_expectation_decides_by_its_own_test() -> None:
    spread = Observed([Series("a − b (m)", {0: 0.1, 1: -0.1, 2: 0.05})], Series("a (m)", {0: 1.0, 1: 3.0, 2: 5.0}))
    assert WithinSpread(within_spread_of="a").decide(DIFF, spread).status == PASS
    assert Equivalent(equivalent_within=0.01).decide(DIFF, spread).status != PASS
    order = Observed([Series("a", {0: 2.0, 1: 3.0}), Series("b", {0: 1.0, 1: 0.5})])
    assert "a − b" in Order(order=["a", "b"]).decide(COMPARE, order).reason
    assert Order(order=["b", "a"], of="every_seed").decide(COMPARE, order).status == FAIL
    skip = Skip(skip="not at this scale").decide(METRIC, None)
    assert (skip.status, skip.reason) == (SKIPPED, "not at this scale")


def test_evaluate_screens_before_the_expectations_own_test() -> None:
    nan = Observed([Series("a", {0: 1.0, 1: math.nan})])
    assert "not a number" in evaluate(Above(above=0.0), METRIC, nan).reason
    constant = Observed([Series("a − b (m)", {0: 0.0, 1: 0.0})])
    assert evaluate(Above(above=0.0), DIFF, constant).status == SKIPPED
    assert evaluate(Equivalent(equivalent_within=0.1), DIFF, constant).status == PASS


def test_the_power_figure_needing_the_most_units_is_kept() -> None:
    small, large, none = (Power("seeds", 3, None, 4, ""), Power("seeds", 3, None, 9, ""),
                          Power("seeds", 3, None, None, "cannot"))
    assert most_needed([small, none, large]) is large
    assert most_needed([none]) is none and most_needed([]) is None
