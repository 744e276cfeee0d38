"""Seeds added until a claim is decided (`verify --until-decided`): the stopping rule's error
rates, the schedule, and the driver on a tiny synthetic project."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from scipy import stats as scipy_stats

import harness.statistics.values as values_module
from harness.cli import main
from harness.extensions import ALLOW_CODE_PATHS_VARIABLE
from harness.report.sequential import render, sequential_section
from harness.running.bundle import RecordBundle
from harness.running.planning import PendingDependency, request_for
from harness.schema.claim import Claim
from harness.schema.expectations.between import Between
from harness.schema.expectations.bounds import Above
from harness.schema.observations.metric import MetricObservation
from harness.sequential import recorded, results, schedule
from harness.sequential.driver import AT_LIMIT, BUDGET, DECIDED, NOT_EXTENDED, until_decided
from harness.settings import Settings
from harness.statistics import sequential_boundary as boundary
from harness.statistics import sequential_rule as rule
from harness.statistics.sequential_rule import Looks, planned_looks
from harness.statistics.series import Observed, Series
from harness.verdicts.verify import FAIL, PASS, evaluate

ALPHA = 0.05


# --- the rule: error rates under peeking -----------------------------------------------------

def _first_decision(expectation, values: np.ndarray, first: int, levels) -> str:
    """Peek after every seed from `first` on, the look on n seeds at levels[n - first]; the first
    decided verdict, through the verifier."""
    observation = MetricObservation.model_validate({"metric": "value", "of": "a"})
    for n, level in zip(range(first, len(values) + 1), levels):
        at_level = expectation.model_copy(update={"alpha": level})
        status = evaluate(at_level, observation, Observed([Series("a", dict(enumerate(values[:n])))])).status
        if status in (PASS, FAIL):
            return status
    return "INCONCLUSIVE"


def _beyond(statistic: np.ndarray, width: np.ndarray, df: int, level: float) -> np.ndarray:
    """A side of a range fails: its p (statistic in standard errors inside the edge) with the far side's term
    is at most the level."""
    return scipy_stats.t.sf(-statistic, df) + scipy_stats.t.sf(width - statistic, df) <= level


def _t_decisions(bounds: tuple[float, float | None], x: np.ndarray, first: int, levels) -> np.ndarray:
    """The same looks as one-sided t-tests, vectorized over the rows of x: 1 PASS, -1 FAIL, 0 neither.
    `bounds` is (low, None) for `above: low`, (low, high) for `between: [low, high]` (its interval
    inside the range: PASS; beyond an edge by the critical value that counts the far side's chance,
    `stats.range_fail_critical`: FAIL, read here as the side's p with the far side's term at most the level)."""
    low, high = bounds
    total, squares = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    status = np.zeros(len(x), dtype=int)
    for n, level in zip(range(first, x.shape[1] + 1), levels):
        mean = total[:, n - 1] / n
        se = np.sqrt((squares[:, n - 1] - n * mean * mean) / (n - 1) / n)
        critical = scipy_stats.t.isf(level, n - 1)
        t_low = (mean - low) / se
        if high is None:
            passed, failed = t_low > critical, t_low < -critical
        else:
            t_high = (mean - high) / se
            width = (high - low) / se
            passed = (t_low > critical) & (t_high < -critical)

            failed = _beyond(t_low, width, n - 1, level) | _beyond(-t_high, width, n - 1, level)
        undecided = status == 0
        status[undecided & passed], status[undecided & failed] = 1, -1
    return status


def _rates(status: np.ndarray) -> dict[str, float]:
    return {PASS: float(np.mean(status == 1)), FAIL: float(np.mean(status == -1))}


@pytest.mark.parametrize("expectation, bounds", [
    (Above.model_validate({"above": 0.0}), (0.0, None)),                  # a one-sided test
    (Between.model_validate({"between": [0.0, 2.0]}), (0.0, 2.0)),       # a range
], ids=["above", "between"])
def test_peeking_after_every_seed_keeps_false_verdicts_at_alpha_under_the_rule(monkeypatch, expectation,
                                                                                 bounds) -> None:
    """With the true mean exactly on a (lower) bound, both a PASS and a FAIL are false verdicts (each
    side's null holds). Peeking after every seed from 3 to 10 under the boundary (8 looks at their
    levels α_j) keeps each rate at α; re-testing at α at every look does not. The verifier's
    decisions equal those of the one-sided t-tests on the same seeds, trial by trial, and those
    t-tests, on many more paths (drawn apart from the calibration's), keep each rate at or below α
    up to their Monte-Carlo error. A range's looks are at the lower of the one- and two-sided calibration's
    levels (its FAIL region has two sides), so it spends a little less: 0.041 here."""
    monkeypatch.setattr(values_module, "t_power", lambda *args, **kwargs: None)  # not part of any status
    monkeypatch.setattr(values_module, "inclusion_power", lambda *args, **kwargs: None)
    first, last, trials, paths = 3, 10, 400, 200_000
    two_sided = bounds[1] is not None
    looks = Looks.plan(ALPHA, first, planned_looks([last - first]), two_sided)
    assert looks.planned == 8 and looks.seeds == tuple(range(3, 11))
    naive = [ALPHA] * looks.planned
    x = np.random.default_rng(20240615 + 1).standard_normal((trials, last))
    codes = {PASS: 1, FAIL: -1, "INCONCLUSIVE": 0}
    for levels in (looks.levels, naive):
        through_verifier = [codes[_first_decision(expectation, row, first, levels)] for row in x]
        assert through_verifier == list(_t_decisions(bounds, x, first, levels))
    many = np.random.default_rng(7).standard_normal((paths, last))
    sequential = _rates(_t_decisions(bounds, many, first, looks.levels))
    tolerance = 3 * (ALPHA * (1 - ALPHA) / paths) ** 0.5
    assert sequential[PASS] <= ALPHA + tolerance and sequential[FAIL] <= ALPHA + tolerance, sequential
    spends = ALPHA - (0.01 if two_sided else 4 * tolerance)
    assert sequential[PASS] >= spends, sequential  # and it spends α (nearly, for a range), unlike a Bonferroni split
    peeking = _rates(_t_decisions(bounds, many, first, naive))
    assert peeking[PASS] > 2 * ALPHA and peeking[FAIL] > 2 * ALPHA, peeking  # peeking at α inflates both


def test_the_boundary_spends_alpha_as_its_spending_function_says_by_every_look() -> None:
    """On paths drawn apart from the calibration's, the chance of crossing by look j (mean on the
    bound) is α(look j): 0.7 α at the profile's seeds, α by the last look."""
    first, last, paths = 5, 10, 200_000
    looks = Looks.plan(ALPHA, first, 1 + last - first)
    assert looks.levels[0] == 0.035 == boundary.profile_level(ALPHA)
    assert max(looks.levels[1:]) < ALPHA and looks.spent[0] == looks.levels[0]
    assert looks.spent[-1] == ALPHA and looks.level_at(6) == looks.levels[-1] and looks.spent_at(1) == looks.spent[0]
    x = np.random.default_rng(11).standard_normal((paths, last))
    tolerance = 3 * (ALPHA / paths) ** 0.5
    for j in range(1, looks.planned + 1):
        crossed = _rates(_t_decisions((0.0, None), x[:, :first + j - 1], first, looks.levels[:j]))[PASS]
        assert crossed == pytest.approx(looks.spent_at(j), abs=tolerance), j
    assert Looks.plan(ALPHA, 3, 1).levels == (0.035,)  # one look: the profile's, at its share of α
    assert Looks.plan(ALPHA, 1, 2).levels[0] == 0.035  # no t on 1 seed: its share given outright
    assert planned_looks([3, 2, 0]) == 6 and planned_looks([-2]) == 1  # a limit below the profile adds no look
    with pytest.raises(ValueError):
        Looks.plan(0.05, 3, 0)
    with pytest.raises(ValueError):
        looks.level_at(7)


def _earlier_rule_levels(first: int, last: int) -> tuple[float, ...]:
    """The rule issue 41 replaced: the profile's verdict at α, then, for the claims it left undecided,
    O'Brien-Fleming spending of a second α over every look."""
    alone = boundary.calibrated(first, boundary.boundary_alone(first, last, ALPHA))
    return (ALPHA,) + alone[1:]


@pytest.mark.parametrize("first, last", [(3, 6), (5, 10)])
@pytest.mark.parametrize("bounds", [(0.0, None), (0.0, 2.0)], ids=["above", "between"])
def test_the_profile_then_seeds_added_until_decided_keep_one_alpha(first: int, last: int, bounds) -> None:
    """As a reader meets it: the verdict on the profile's seeds (look 1), then a look after every seed
    added up to twice the profile's. With the truth on the (lower) bound a PASS and a FAIL are both
    false; each rate stays within α up to the simulation's 99% margin. Under the earlier rule (the
    profile at α, then a second α over the added seeds) the same paths were falsely decided 0.07 of
    the time. The plan's power at a 0.5-SD effect is what the report prints, and below a fixed test
    at α on all the seeds."""
    paths = 200_000
    looks = Looks.plan(ALPHA, first, planned_looks([last - first]), two_sided=bounds[1] is not None)
    x = np.random.default_rng(first * 100 + last).standard_normal((paths, last))
    margin = 2.576 * (ALPHA * (1 - ALPHA) / paths) ** 0.5
    now = _rates(_t_decisions(bounds, x, first, looks.levels))
    assert now[PASS] <= ALPHA + margin and now[FAIL] <= ALPHA + margin, now
    earlier = _rates(_t_decisions(bounds, x, first, _earlier_rule_levels(first, last)))
    assert earlier[PASS] > ALPHA + 0.01 and earlier[FAIL] > ALPHA + 0.01, earlier
    one_sided = Looks.plan(ALPHA, first, planned_looks([last - first]))
    power = one_sided.power()
    passed = _rates(_t_decisions((0.0, None), x + 0.5, first, one_sided.levels))[PASS]
    assert passed == pytest.approx(power[-1], abs=0.01)
    fixed_all = _rates(_t_decisions((0.0, None), x + 0.5, last, [ALPHA]))[PASS]
    assert power[0] < power[-1] < fixed_all and power[-1] < one_sided.boundary_alone_power()


@pytest.mark.parametrize("first, last", [(3, 6), (4, 8), (5, 10)])
def test_a_narrow_range_fails_a_true_value_on_its_edge_at_most_alpha_on_the_sequential_path(
        monkeypatch, first: int, last: int) -> None:
    """A range's FAIL region has two sides: with the truth on the lower edge of a range a twentieth of the
    first look's standard error wide, the far side fails it about as often as the near one. Levels
    calibrated on one side (each look's FAIL then two-sided at α_j) falsely FAILed it 0.053 of the time at
    α = 0.05; the plan of a range (`Looks.plan(..., two_sided=True)`: each look at the lower of the one- and
    two-sided calibration's levels) keeps it within α, and so at wider ranges, where the far side adds
    less. The verifier decides as the t-tests do, trial by trial."""
    monkeypatch.setattr(values_module, "inclusion_power", lambda *args, **kwargs: None)
    paths = 200_000
    margin = 2.576 * (ALPHA * (1 - ALPHA) / paths) ** 0.5
    looks = Looks.plan(ALPHA, first, planned_looks([last - first]), two_sided=True)
    per_side = Looks.plan(ALPHA, first, planned_looks([last - first]))
    assert looks.levels[0] == per_side.levels[0] == 0.035 and looks.spent == per_side.spent
    assert all(a <= b for a, b in zip(looks.levels, per_side.levels))
    x = np.random.default_rng(first * 100 + last + 55).standard_normal((paths, last))
    narrow = (0.0, 0.05 / first ** 0.5)
    assert _rates(_t_decisions(narrow, x, first, per_side.levels))[FAIL] > ALPHA + margin
    for width_se in (0.05, 1.0, 2.0):
        bounds = (0.0, width_se / first ** 0.5)
        now = _rates(_t_decisions(bounds, x, first, looks.levels))
        assert now[PASS] <= ALPHA + margin and now[FAIL] <= ALPHA + margin, (width_se, now)
    expectation = Between.model_validate({"between": list(narrow)})
    rows = x[:100]
    codes = {PASS: 1, FAIL: -1, "INCONCLUSIVE": 0}
    assert [codes[_first_decision(expectation, row, first, looks.levels)] for row in rows] == list(
        _t_decisions(narrow, rows, first, looks.levels))


def test_a_claim_plans_two_sided_levels_where_it_fails_on_either_side_of_a_range() -> None:
    """The driver plans a claim's looks two-sided where its expectation at the profile admits a range."""
    claim = Claim.model_validate({
        "id": "syn.sides", "statement": "A claim read three ways.", "source": "Table 1", "experiment": "e",
        "observe": {"metric": "value", "of": "a"},
        "expect": {"range": {"between": [0.0, 1.0]}, "equivalence": {"equivalent_within": 0.5},
                   "bound": {"above": 0.0}, "none": {"skip": "not at this scale"}}})
    assert [claim.fails_on_two_sides_at(p) for p in ("range", "equivalence", "bound", "none", "other")] == [
        True, True, False, False, False]


def test_the_rule_text_states_the_levels_and_power_the_plan_has() -> None:
    looks = Looks.plan(ALPHA, 5, 6)
    levels = ", ".join(f"{level:.3g}" for level in looks.levels)
    assert f"α_j runs {levels}:" in rule.TEXT
    range_levels = ", ".join(f"{level:.3g}" for level in Looks.plan(ALPHA, 5, 6, two_sided=True).levels)
    assert f"(α_j = {range_levels} over 5 → 10 seeds)" in rule.TEXT
    assert (f"{looks.power()[0]:.2f} on the profile's seeds, {looks.power()[-1]:.2f} by 10" in rule.TEXT
            and f"would reach {looks.boundary_alone_power():.2f}" in rule.TEXT)


# --- the schedule ------------------------------------------------------------------------

def _candidate(claim: str, experiment: str, needed: int, have: int, seconds: float) -> schedule.Candidate:
    return schedule.Candidate(claim, experiment, needed, have, seconds)


def test_rank_puts_the_cheapest_decision_first() -> None:
    near_but_slow = _candidate("near-but-slow", "training", needed=6, have=5, seconds=600.0)   # 1 × 600
    far_but_fast = _candidate("far-but-fast", "analytic", needed=40, have=5, seconds=2.0)     # 35 × 2
    middle = _candidate("middle", "features", needed=9, have=5, seconds=30.0)                  # 4 × 30
    past_its_figure = _candidate("past-its-figure", "analytic", needed=4, have=5, seconds=2.0)  # still 1 × 2
    ranked = schedule.rank([near_but_slow, far_but_fast, middle, past_its_figure])
    assert [c.claim for c in ranked] == ["past-its-figure", "far-but-fast", "middle", "near-but-slow"]
    assert past_its_figure.remaining == 1 and far_but_fast.cost == 70.0


def test_choose_adds_the_next_seed_that_fits_the_budget_and_stops_when_none_does() -> None:
    cheap = _candidate("cheap", "a", needed=8, have=5, seconds=10.0)         # 30 s to decide
    dear = _candidate("dear", "b", needed=6, have=5, seconds=100.0)          # 100 s to decide
    seconds = {"a": 10.0, "b": 100.0}
    assert schedule.choose([dear, cheap], seconds, spent=0.0, budget=None) == schedule.Choice("a")
    assert schedule.choose([dear, cheap], seconds, spent=0.0, budget=10.0) == schedule.Choice("a")
    # Experiment a's next seed no longer fits; b's neither: the budget stops the schedule.
    assert schedule.choose([dear, cheap], seconds, spent=95.0, budget=100.0) == schedule.Choice(None, schedule.BUDGET)
    # Only the dear one fits what is left.
    only_b = {"a": 50.0, "b": 5.0}
    assert schedule.choose([dear, cheap], only_b, spent=90.0, budget=100.0) == schedule.Choice("b")
    assert schedule.choose([], seconds, spent=0.0, budget=100.0) == schedule.Choice(None, schedule.NOTHING_LEFT)
    # A next seed whose runs are all in the store costs nothing: it fits a budget already spent.
    assert schedule.choose([dear, cheap], seconds, spent=100.0, budget=0.0, stored={"b"}) == schedule.Choice("b")


# --- the driver on a synthetic project -------------------------------------------------------

SPEC = """\
experiment: noise
paper: synthetic
title: One listed value per seed
kind: tests.synthetic_kind:SYNTHETIC
config: {values: [0.0]}
variants:
  clear: {config: {values: [5.0, 5.2, 4.8]}}
  slow: {config: {values: [0.1, 0.5, 0.3, 0.2, 0.4, 0.3, 0.35, 0.25]}}
  never: {config: {values: [0.9, -0.6, 0.5, -0.4, 0.6, -0.3, 0.7, -0.5]}}
  bystander: {config: {values: [1.0, 2.0, 1.5]}}
  marginal: {config: {values: [0.2, 0.6, 0.4]}}
  dependent: {config: {values: [0.9, -0.6, 0.5, -0.4, 0.6, -0.3, 0.7, -0.5], shift: {match: slow, metric: value}}}
profiles:
  smoke: {seeds: [0, 1, 2]}
"""

CLAIMS = """\
paper: synthetic
title: Synthetic claims
reference: none
claims:
  - id: syn.clear-above
    statement: "The clear variant lies above zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: clear}
    expect: {smoke: {above: 0.0}}
  - id: syn.slow-above
    statement: "The slow variant lies above zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: slow}
    expect: {smoke: {above: 0.0}}
  - id: syn.never-above
    statement: "The never variant lies above zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: never}
    expect: {smoke: {above: 0.0}}
  - id: syn.bystander-below
    statement: "The bystander variant lies below ten."
    source: "test"
    experiment: noise
    observe: {metric: value, of: bystander}
    expect: {smoke: {below: 10.0}}
  - id: syn.marginal-above
    statement: "The marginal variant lies above zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: marginal}
    expect: {smoke: {above: 0.0}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """A project outside the repository whose spec names the repository's test kind (allowed code)."""
    monkeypatch.setenv(ALLOW_CODE_PATHS_VARIABLE, str(Path(__file__).resolve().parent))
    (tmp_path / "claims").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "noise.yaml").write_text(SPEC)
    (tmp_path / "claims" / "synthetic.yaml").write_text(CLAIMS)
    return tmp_path


def _settings(project: Path) -> Settings:
    return Settings(root=project, store_dir=project / "store", cache_dir=project / "cache", data_dir=None,
                    download=False, executor="local", committed_records=False)


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=160)


def _stored_seeds(result, variant: str) -> list[int]:
    """The seeds of the variant with a record in the store."""
    store = result.outcome.store
    settings = _settings(Path(store.root).parent)
    stored = []
    for seed in range(12):
        try:
            request = request_for(result.outcome.catalog, "noise", variant, seed, "smoke", settings, store)
        except PendingDependency:
            continue
        if store.reusable(request.key) is not None:
            stored.append(seed)
    return stored


def _by_claim(result) -> dict:
    return {track.claim: track for track in result.tracks}


def test_seeds_are_added_only_for_undecided_claims_until_decided_or_max_seeds(project) -> None:
    result = until_decided(_settings(project), "smoke", console=_quiet())
    tracks = _by_claim(result)
    # Decided on the profile's seeds: no seed is added for them.
    for claim in ("syn.clear-above", "syn.bystander-below"):
        assert (tracks[claim].verdict.status, tracks[claim].stopped, tracks[claim].look) == (PASS, DECIDED, 1)
        assert tracks[claim].seeds == [0, 1, 2]
    # Decided at its third look (five seeds, p = 0.0066), at the boundary's α_3 of four looks (default
    # limit: twice the profile's 3 seeds): 0.00821. Not at its second (four seeds, one-sided p = 0.024
    # against α_2 = 0.00826). Look 1, on the profile's seeds, is the profile's own verdict at 0.7 α.
    slow = tracks["syn.slow-above"]
    assert slow.fixed.status == "INCONCLUSIVE" and "α = 0.035" in slow.fixed.expectation
    assert (slow.verdict.status, slow.stopped, slow.seeds, slow.look) == (PASS, DECIDED, [0, 1, 2, 3, 4], 3)
    assert slow.looks == Looks.plan(ALPHA, 3, 4) and slow.looks.levels == (0.035, 0.00826, 0.00821, 0.0201)
    assert slow.level == 0.00821 and slow.spent == pytest.approx(boundary.spent_by_look(3, 6, ALPHA)[2])
    assert "α = 0.00821" in slow.verdict.expectation
    never = tracks["syn.never-above"]
    assert (never.verdict.status, never.stopped, never.seeds, never.look) == ("INCONCLUSIVE", AT_LIMIT,
                                                                              [0, 1, 2, 3, 4, 5], 4)
    # t = 3.5 on 3 seeds (p = 0.037): a PASS at α, not at the profile's 0.035, so it takes seeds and is decided
    # at look 3 (the earlier rule kept a fixed-n PASS at α and spent a second α on the undecided claims).
    marginal = tracks["syn.marginal-above"]
    assert (marginal.fixed.status, marginal.verdict.status, marginal.stopped, marginal.look) == (
        "INCONCLUSIVE", PASS, DECIDED, 3)
    assert all(track.stopped != NOT_EXTENDED for track in result.tracks)  # the profile's verdict is look 1
    # Only the variants of open claims ran for the added seeds.
    assert _stored_seeds(result, "clear") == _stored_seeds(result, "bystander") == [0, 1, 2]
    assert _stored_seeds(result, "marginal") == [0, 1, 2, 3, 4]
    assert _stored_seeds(result, "slow") == [0, 1, 2, 3, 4]
    assert _stored_seeds(result, "never") == [0, 1, 2, 3, 4, 5]
    assert result.execution.ran == 7 and result.compute_seconds > 0
    assert result.seeds == {"noise": [0, 1, 2, 3, 4, 5]}


def test_max_seeds_caps_the_seeds_of_every_experiment(project) -> None:
    result = until_decided(_settings(project), "smoke", max_seeds=4, console=_quiet())
    tracks = _by_claim(result)
    never, slow = tracks["syn.never-above"], tracks["syn.slow-above"]
    assert (never.stopped, never.seeds, never.look) == (AT_LIMIT, [0, 1, 2, 3], 2)
    # Two planned looks, at 0.035 (the profile's, whatever the max seeds) and 0.0307: the slow variant's four
    # seeds (p = 0.024) decide it at the second.
    assert (slow.stopped, slow.seeds, slow.looks.planned, slow.level) == (DECIDED, [0, 1, 2, 3], 2, 0.0307)
    assert slow.looks.levels == (0.035, 0.0307) and slow.spent == ALPHA
    assert result.execution.ran == 3 and result.seeds == {"noise": [0, 1, 2, 3]}


def test_a_spent_budget_adds_no_seed(project) -> None:
    result = until_decided(_settings(project), "smoke", budget_minutes=0.0, console=_quiet())
    tracks = _by_claim(result)
    assert result.stop == schedule.BUDGET and result.execution.ran == 0
    assert tracks["syn.slow-above"].stopped == tracks["syn.never-above"].stopped == BUDGET
    assert tracks["syn.slow-above"].seeds == [0, 1, 2] and tracks["syn.slow-above"].verdict.status == "INCONCLUSIVE"


def test_a_family_is_tested_together_so_its_decided_members_variants_keep_running(project) -> None:
    claims = CLAIMS.replace('    observe: {metric: value, of: clear}\n',
                            '    observe: {metric: value, of: clear}\n    family: positive\n')
    claims = claims.replace('    observe: {metric: value, of: never}\n',
                            '    observe: {metric: value, of: never}\n    family: positive\n')
    (project / "claims" / "synthetic.yaml").write_text(claims)
    result = until_decided(_settings(project), "smoke", console=_quiet())
    tracks = _by_claim(result)
    assert tracks["syn.clear-above"].stopped == DECIDED and tracks["syn.clear-above"].seeds == [0, 1, 2]
    assert tracks["syn.never-above"].seeds == [0, 1, 2, 3, 4, 5]
    assert _stored_seeds(result, "clear") == [0, 1, 2, 3, 4, 5]  # read by the family's test at every look
    assert _stored_seeds(result, "bystander") == [0, 1, 2]
    assert "family `positive`" in tracks["syn.never-above"].verdict.reason


def test_a_seed_of_a_variant_that_refers_to_another_runs_that_one_first(project) -> None:
    (project / "claims" / "synthetic.yaml").write_text(CLAIMS.split("  - id:")[0] + """\
  - id: syn.dependent-above
    statement: "The dependent variant lies above zero."
    source: "test"
    experiment: noise
    observe: {metric: value, of: dependent}
    expect: {smoke: {above: 0.0}}
""")
    result = until_decided(_settings(project), "smoke", console=_quiet())
    track = _by_claim(result)["syn.dependent-above"]
    assert (track.stopped, track.seeds) == (AT_LIMIT, [0, 1, 2, 3, 4, 5])
    assert _stored_seeds(result, "dependent") == _stored_seeds(result, "slow") == [0, 1, 2, 3, 4, 5]
    assert _stored_seeds(result, "never") == []
    assert result.execution.ran == 6  # each added seed: slow, then the variant that reads its value


def test_cli_until_decided_writes_the_sequential_verdicts_and_the_report_section(project, monkeypatch) -> None:
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(project / "cache"))
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    monkeypatch.setenv("FEDCLAIMS_DOWNLOAD", "0")
    monkeypatch.delenv("FEDCLAIMS_STORE", raising=False)
    store = project / "store"
    code = main(["--root", str(project), "verify", "--profile", "smoke", "--until-decided", "--store", str(store)])
    assert code == 0
    data = json.loads((store / "sequential" / "smoke.json").read_text())
    assert data == results.load(store, "smoke")
    claims = {c["claim"]: c for c in data["claims"]}
    assert claims["syn.slow-above"]["seeds"] == [0, 1, 2, 3, 4] and claims["syn.slow-above"]["status"] == PASS
    slow = claims["syn.slow-above"]
    assert (slow["looks"], slow["planned_looks"], slow["alpha_at_look"]) == (3, 4, 0.00821)
    assert slow["alpha_spent"] == pytest.approx(boundary.spent_by_look(3, 6, ALPHA)[2])
    assert [(look["look"], look["seeds"], look["level"]) for look in slow["plan"]["looks"]] == [
        (1, 3, 0.035), (2, 4, 0.00826), (3, 5, 0.00821), (4, 6, 0.0201)]
    assert slow["plan"]["looks"][-1]["spent"] == ALPHA and slow["plan"]["alpha"] == ALPHA
    assert slow["fixed_n"]["alpha"] == 0.035
    power = Looks.plan(ALPHA, 3, 4).power()
    assert [look["power"] for look in slow["plan"]["looks"]] == list(power) and power[0] < power[-1]
    assert slow["plan"]["boundary_alone_power"] == Looks.plan(ALPHA, 3, 4).boundary_alone_power() > power[-1]
    assert data["rule"]["name"] == rule.NAME and data["compute_seconds"] > 0 and data["invocations"] == 1
    assert results.summary_text(data) == ("Of the 3 claims INCONCLUSIVE at the profile's seeds (fixed n), the "
                                          "sequential test decided 2: 2 PASS, 0 FAIL; 1 stays INCONCLUSIVE.")
    lines = sequential_section([store], "smoke")
    assert lines == render(data) and lines[:2] == ['<a id="seeds-added-until-decided-smoke"></a>',
                                                   "## Seeds added until decided (`smoke`)"]
    text = "\n".join(lines)
    assert rule.NAME in text
    assert "| `syn.slow-above` | INCONCLUSIVE | 5 (+2) | 3 of 4 | 0.00821 (0.0379) |" in text
    assert ("Levels α_j over the planned looks: 3 → 6 seeds at α = 0.05: 0.035, 0.00826, 0.00821, 0.0201 (P(PASS) "
            f"at a 0.5-SD effect: {power[0]:.3g} on the profile's seeds, {power[-1]:.3g} by the last look; ") in text
    assert "`syn.clear-above`" not in text and "The other 2 claims" in text and "not decided at look 1" not in text
    assert sequential_section([store], "standard") == []
    # The claim's own page says what the added seeds found, under its fixed-n verdict.
    assert main(["--root", str(project), "report", "--store", str(store), "--output", str(project / "R.md")]) == 0
    page = next((project / "report").glob("*.md")).read_text()
    slow_page = page.split('<a id="claim-syn-slow-above"></a>')[1].split("<a id=")[0]
    assert ("Seeds added until decided at `smoke` ([the rule](../R.md#seeds-added-until-decided-smoke)): **PASS** at "
            "5 seeds, look 3 of 4 at α 0.00821 (decided): ") in slow_page
    assert "Seeds added until decided" not in page.split('<a id="claim-syn-clear-above"></a>')[1].split("<a id=")[0]
    committed = project / "committed-records"  # a clone's report: no plan in its own store, the committed one read
    (committed / "sequential").mkdir(parents=True)
    (committed / "sequential" / "smoke.json").write_bytes((store / "sequential" / "smoke.json").read_bytes())
    assert sequential_section([project / "fresh-store", committed], "smoke") == lines
    assert main(["--root", str(project), "records", "add", "--profile", "smoke", "--store", str(store)]) == 0
    bundled = {record["seed"] for record in RecordBundle(project / "records").records() if record["variant"] == "slow"}
    assert bundled == {0, 1, 2, 3, 4}, "the profile's seeds and the seeds added until decided"
    assert results.load(project / "records", "smoke") == data
    assert main(["--root", str(project), "verify", "--max-seeds", "4", "--store", str(store)]) == 2


# --- a later invocation continues the recorded plan ------------------------------------------

def _stop_after_one_added_seed(monkeypatch) -> None:
    """The schedule of one invocation adds one seed, then stops as if its budget were spent."""
    choose, calls = schedule.choose, []

    def once(*args, **kwargs):
        calls.append(1)
        return choose(*args, **kwargs) if len(calls) == 1 else schedule.Choice(None, schedule.BUDGET)

    monkeypatch.setattr(schedule, "choose", once)


def test_a_later_invocation_continues_the_recorded_plan(project, monkeypatch) -> None:
    settings = _settings(project)
    with monkeypatch.context() as patch:
        _stop_after_one_added_seed(patch)
        first = until_decided(settings, "smoke", console=_quiet())
    tracks = _by_claim(first)
    assert first.stop == schedule.BUDGET and first.seeds == {"noise": [0, 1, 2, 3]}
    assert (tracks["syn.slow-above"].stopped, tracks["syn.slow-above"].look) == (BUDGET, 2)
    path = results.write(first, settings.store_dir)
    planned = {t.claim: t.looks for t in first.tracks}
    decided_numbers = _by_claim(first)["syn.clear-above"].verdict.numbers
    assert decided_numbers and recorded.read(settings.store_dir, "smoke").claims["syn.clear-above"].numbers == \
        json.loads(json.dumps(decided_numbers))
    # A plan recorded before the looks' statistics were: the decided claim's come again from its records.
    data = json.loads(path.read_text())
    for entry in data["claims"]:
        entry.pop("numbers")
    path.write_text(json.dumps(data))
    # The second invocation reads the plan: it computes no level (the boundary is not consulted).
    monkeypatch.setattr(rule, "nominal_levels", lambda *args: pytest.fail("the plan was computed again"))
    console = _quiet()
    second = until_decided(settings, "smoke", console=console)
    assert f"continuing the sequential plan recorded in {path}" in console.file.getvalue()
    tracks = _by_claim(second)
    assert {t.claim: t.looks for t in second.tracks} == planned  # levels unchanged
    slow, never = tracks["syn.slow-above"], tracks["syn.never-above"]
    # The looks go on from look 2: looks 3 and 4, not again from look 1.
    assert (slow.verdict.status, slow.stopped, slow.seeds, slow.look, slow.level) == (
        PASS, DECIDED, [0, 1, 2, 3, 4], 3, 0.00821)
    assert (never.stopped, never.seeds, never.look) == (AT_LIMIT, [0, 1, 2, 3, 4, 5], 4)
    assert (tracks["syn.clear-above"].verdict.status, tracks["syn.clear-above"].stopped) == (PASS, DECIDED)
    # A decided claim's numbers are read back with its verdict, not lost when the file is written again.
    assert tracks["syn.clear-above"].verdict.numbers == decided_numbers
    assert (tracks["syn.marginal-above"].stopped, tracks["syn.marginal-above"].look) == (DECIDED, 3)
    # Seed 3 of slow, never and marginal is reused from the store; seeds 4 (slow, never, marginal) and 5 (never) run.
    assert (second.execution.reused, second.execution.ran) == (3, 4)
    data = results.to_dict(second)
    assert (data["invocations"], data["runs"]["ran"]) == (2, first.execution.ran + 4)
    assert data["compute_seconds"] == pytest.approx(first.compute_seconds + second.compute_seconds)


def test_a_recorded_claim_whose_profile_verdict_changed_is_planned_anew(project, monkeypatch) -> None:
    """Its recorded looks tested another hypothesis (its expectation changed): the plan does not keep
    their verdict, the claim joins it as if new."""
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    settings = _settings(project)
    results.write(until_decided(settings, "smoke", budget_minutes=0.0, console=_quiet()), settings.store_dir)
    before = {c["claim"]: c for c in results.load(settings.store_dir, "smoke")["claims"]}
    assert (before["syn.clear-above"]["fixed_n"]["status"], before["syn.clear-above"]["status"]) == (PASS, PASS)
    claims = project / "claims" / "synthetic.yaml"
    claims.write_text(claims.read_text().replace(
        "observe: {metric: value, of: clear}\n    expect: {smoke: {above: 0.0}}",
        "observe: {metric: value, of: clear}\n    expect: {smoke: {below: 0.0}}"))
    console = _quiet()
    results.write(until_decided(settings, "smoke", budget_minutes=0.0, console=console), settings.store_dir)
    assert "planned anew, their verdict on the profile's seeds having changed since: syn.clear-above" in \
        " ".join(console.file.getvalue().split())
    after = {c["claim"]: c for c in results.load(settings.store_dir, "smoke")["claims"]}
    assert (after["syn.clear-above"]["fixed_n"]["status"], after["syn.clear-above"]["status"]) == (FAIL, FAIL)
    assert after["syn.bystander-below"] == before["syn.bystander-below"]


def test_a_later_invocation_refuses_another_max_seeds(project, monkeypatch) -> None:
    monkeypatch.setenv("FEDCLAIMS_CACHE", str(project / "cache"))
    monkeypatch.setenv("FEDCLAIMS_WORKERS", "1")
    monkeypatch.setenv("FEDCLAIMS_DOWNLOAD", "0")
    settings = _settings(project)
    path = results.write(until_decided(settings, "smoke", budget_minutes=0.0, console=_quiet()), settings.store_dir)
    with pytest.raises(ValueError) as error:
        until_decided(settings, "smoke", max_seeds=8, console=_quiet())
    assert str(error.value).startswith(f"{path}: max_seeds: --max-seeds 8 differs from the recorded sequential "
                                       "plan, max seeds default (noise 3 → 6 seeds)")
    assert "remove the file" in str(error.value)
    store = str(settings.store_dir)
    assert main(["--root", str(project), "verify", "--profile", "smoke", "--until-decided", "--max-seeds", "8",
                 "--store", store]) == 2
    # The recorded max seeds given again continues the plan.
    result = until_decided(settings, "smoke", max_seeds=6, budget_minutes=0.0, console=_quiet())
    assert result.recorded is not None and result.limits == {"noise": 6}


def test_a_corrupt_or_foreign_sequential_file_names_the_file_and_the_field(project) -> None:
    settings = _settings(project)
    path = results.write(until_decided(settings, "smoke", budget_minutes=0.0, console=_quiet()), settings.store_dir)
    good = json.loads(path.read_text())
    assert recorded.read(settings.store_dir, "smoke").claims["syn.slow-above"].looks == Looks.plan(ALPHA, 3, 4)

    def problem(data) -> str:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
        with pytest.raises(ValueError) as error:
            recorded.read(settings.store_dir, "smoke")
        return str(error.value)

    assert problem("{not json").startswith(f"{path}: <document>: not a sequential file (not JSON")
    level = json.loads(json.dumps(good))
    level["claims"][1]["plan"]["looks"][2]["level"] = "high"
    assert problem(level) == f"{path}: claims[1].plan.looks[2].level: expected a finite number, found 'high'"
    missing = {k: v for k, v in good.items() if k != "experiments"}
    assert problem(missing) == f"{path}: experiments: missing"
    foreign = {**good, "rule": {"name": "Bonferroni alpha spending over the planned looks"}}
    assert problem(foreign).startswith(f"{path}: rule.name: recorded under another rule")
    shorter = json.loads(json.dumps(good))
    del shorter["claims"][0]["plan"]["looks"][-1]
    assert problem(shorter).startswith(f"{path}: claims[0].plan.looks: 3 looks, but experiment 'noise'")
    assert problem({**good, "profile": "standard"}) == (f"{path}: profile: the file records profile 'standard', "
                                                         "not 'smoke'")
    assert problem([1, 2]) == f"{path}: <document>: expected an object, found list"
    # The driver stops at the file before running anything.
    path.write_text(json.dumps(level))
    with pytest.raises(ValueError, match=r"claims\[1\]\.plan\.looks\[2\]\.level"):
        until_decided(settings, "smoke", console=_quiet())
