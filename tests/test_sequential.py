"""Seeds added until a claim is decided (`verify --until-decided`): the stopping rule's error
rates, the schedule, and the driver on a tiny synthetic project."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import harness.verify as verify_module
from harness.cli import main
from harness.kinds import KINDS
from harness.observe import Observed, Series
from harness.planning import PendingDependency, request_for
from harness.report.sequential import render, sequential_section
from harness.schema import claim as schema
from harness.sequential import results, schedule
from harness.sequential.driver import AT_LIMIT, BUDGET, DECIDED, NOT_EXTENDED, until_decided
from harness.sequential.rule import Looks, planned_looks
from harness.settings import Settings
from harness.store import ResultStore
from harness.verify import FAIL, PASS, evaluate
from tests.synthetic_kind import SYNTHETIC

ALPHA = 0.05


# --- the rule: error rates under peeking -----------------------------------------------------

def _first_decision(expectation, values: np.ndarray, first: int, level: float) -> str:
    """Peek after every seed from `first` on, each test at `level`; the first decided verdict."""
    observation = schema.MetricObservation.model_validate({"metric": "value", "of": "a"})
    at_level = expectation.model_copy(update={"alpha": level})
    for n in range(first, len(values) + 1):
        status = evaluate(at_level, observation, Observed([Series("a", dict(enumerate(values[:n])))])).status
        if status in (PASS, FAIL):
            return status
    return "INCONCLUSIVE"


def _rates(expectation, true_mean: float, first: int, last: int, level: float, trials: int) -> dict[str, float]:
    rng = np.random.default_rng(20240615)
    outcomes = [_first_decision(expectation, true_mean + rng.standard_normal(last), first, level) for _ in range(trials)]
    return {status: outcomes.count(status) / trials for status in (PASS, FAIL)}


@pytest.mark.parametrize("expectation, true_mean", [
    (schema.Above.model_validate({"above": 0.0}), 0.0),                  # a one-sided test, mean on its bound
    (schema.Between.model_validate({"between": [0.0, 2.0]}), 0.0),       # a range, mean on its lower bound
], ids=["above", "between"])
def test_peeking_after_every_seed_keeps_false_verdicts_at_alpha_under_the_rule(monkeypatch, expectation,
                                                                                 true_mean) -> None:
    """With the true mean exactly on a bound, both a PASS and a FAIL are false verdicts (each side's
    null holds). Peeking after every seed from 3 to 10 under the rule (8 looks at α / 8 each) keeps
    each rate at or below α; re-testing at α at every look does not."""
    monkeypatch.setattr(verify_module, "t_power", lambda *args, **kwargs: None)  # not part of any status
    monkeypatch.setattr(verify_module, "inclusion_power", lambda *args, **kwargs: None)
    first, last, trials = 3, 10, 800
    looks = Looks(ALPHA, planned_looks([last - first]))
    assert looks.planned == 8
    sequential = _rates(expectation, true_mean, first, last, looks.level, trials)
    naive = _rates(expectation, true_mean, first, last, ALPHA, trials)
    assert sequential[PASS] <= ALPHA and sequential[FAIL] <= ALPHA, sequential
    assert naive[PASS] > 1.5 * ALPHA and naive[FAIL] > 1.5 * ALPHA, naive  # peeking at α inflates both


def test_levels_of_the_planned_looks_add_up_to_alpha() -> None:
    looks = Looks(0.05, planned_looks([5]))
    assert looks.planned == 6 and looks.level * looks.planned == pytest.approx(0.05)
    assert planned_looks([3, 2, 0]) == 6 and planned_looks([-2]) == 1  # a limit below the profile adds no look
    with pytest.raises(ValueError):
        Looks(0.05, 0)


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


# --- the driver on a synthetic project -------------------------------------------------------

SPEC = """\
experiment: noise
paper: synthetic
title: One listed value per seed
kind: synthetic
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
    monkeypatch.setitem(KINDS, SYNTHETIC.name, SYNTHETIC)
    (tmp_path / "claims").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "noise.yaml").write_text(SPEC)
    (tmp_path / "claims" / "synthetic.yaml").write_text(CLAIMS)
    return tmp_path


def _settings(project: Path) -> Settings:
    return Settings(root=project, store_dir=project / "store", cache_dir=project / "cache", data_dir=None,
                    download=False, executor="local")


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
    # Decided at its third look (five seeds), at α / 4 (default limit: twice the profile's 3 seeds).
    slow = tracks["syn.slow-above"]
    assert slow.fixed.status == "INCONCLUSIVE"
    assert (slow.verdict.status, slow.stopped, slow.seeds, slow.look) == (PASS, DECIDED, [0, 1, 2, 3, 4], 3)
    assert slow.looks.planned == 4 and slow.looks.level == pytest.approx(0.0125)
    assert "α = 0.0125" in slow.verdict.expectation
    never = tracks["syn.never-above"]
    assert (never.verdict.status, never.stopped, never.seeds, never.look) == ("INCONCLUSIVE", AT_LIMIT,
                                                                              [0, 1, 2, 3, 4, 5], 4)
    # A fixed-n PASS (t = 3.5 on 3 seeds) that look 1 cannot decide at α / 4 keeps its fixed-n verdict.
    marginal = tracks["syn.marginal-above"]
    assert (marginal.fixed.status, marginal.verdict.status, marginal.stopped) == (PASS, "INCONCLUSIVE", NOT_EXTENDED)
    # Only the variants of open claims ran for the added seeds.
    assert _stored_seeds(result, "clear") == _stored_seeds(result, "bystander") == [0, 1, 2]
    assert _stored_seeds(result, "marginal") == [0, 1, 2]
    assert _stored_seeds(result, "slow") == [0, 1, 2, 3, 4]
    assert _stored_seeds(result, "never") == [0, 1, 2, 3, 4, 5]
    assert result.execution.ran == 5 and result.compute_seconds > 0
    assert result.seeds == {"noise": [0, 1, 2, 3, 4, 5]}


def test_max_seeds_caps_the_seeds_of_every_experiment(project) -> None:
    result = until_decided(_settings(project), "smoke", max_seeds=4, console=_quiet())
    tracks = _by_claim(result)
    never, slow = tracks["syn.never-above"], tracks["syn.slow-above"]
    assert (never.stopped, never.seeds, never.look) == (AT_LIMIT, [0, 1, 2, 3], 2)
    # Two planned looks: each at α / 2, and the slow variant's four seeds decide it at the second.
    assert (slow.stopped, slow.seeds, slow.looks.planned, slow.looks.level) == (DECIDED, [0, 1, 2, 3], 2, 0.025)
    assert result.execution.ran == 2 and result.seeds == {"noise": [0, 1, 2, 3]}


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
    assert claims["syn.slow-above"]["alpha_per_look"] == pytest.approx(0.0125)
    assert data["rule"]["name"].startswith("Bonferroni") and data["compute_seconds"] > 0
    assert results.summary_text(data) == ("Of the 2 claims INCONCLUSIVE at the profile's seeds (fixed n), the "
                                          "sequential test decided 1: 1 PASS, 0 FAIL; 1 stays INCONCLUSIVE.")
    lines = sequential_section(store, "smoke")
    assert lines == render(data) and lines[0] == "## Seeds added until decided (`smoke`)"
    text = "\n".join(lines)
    assert "Bonferroni alpha spending" in text and "| `syn.slow-above` | INCONCLUSIVE | 5 (+2) | 3 of 4 |" in text
    assert "`syn.clear-above`" not in text and "The other 2 claims" in text
    assert "1 fixed-n verdict is not decided at look 1 at α / L and, since seeds go only to the profile's " \
           "INCONCLUSIVE claims, stands: `syn.marginal-above` (PASS)." in text
    assert sequential_section(store, "standard") == []
    assert main(["--root", str(project), "verify", "--max-seeds", "4", "--store", str(store)]) == 2
