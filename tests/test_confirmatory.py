"""Pre-registered confirmatory tests (`fedclaims confirm`): a plan is sealed, its hypothesis is the claim's
expectation as it stands, its sample size is the stated power calculation's, its verdict reads only its own seeds,
and git history shows it committed before its runs and unchanged after the first of them."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from statsmodels.stats.power import TTestPower

from harness.loading.catalog import load_catalog
from harness.sequential import confirmatory_history
from harness.sequential.confirmatory import (
    PlanError,
    body_digest,
    check_hypothesis,
    confirmatory_verdict,
    paired_differences,
    plan_paths,
    read_plan,
)
from harness.statistics.confirmatory_power import paired_t_power, paired_t_seeds
from harness.verdicts.verdict import Verdict

REPO = Path(__file__).resolve().parents[1]
PLANS = plan_paths(REPO / "records")


@pytest.mark.parametrize("effect", [0.2, 0.35, 0.5, 0.8, 1.2])
@pytest.mark.parametrize("alpha", [0.05, 0.035])
def test_the_sample_size_is_statsmodels_power_solution_rounded_up(effect: float, alpha: float) -> None:
    solved = TTestPower().solve_power(effect_size=effect, alpha=alpha, power=0.8, alternative="larger")
    seeds = paired_t_seeds(effect, alpha, 0.8)
    assert seeds is not None and seeds - 1 < solved <= seeds
    assert paired_t_power(effect, seeds, alpha) >= 0.8 > paired_t_power(effect, seeds - 1, alpha)


def test_no_sample_size_for_an_effect_on_the_wrong_side_or_beyond_any_practical_number() -> None:
    assert paired_t_seeds(-0.3, 0.05, 0.8) is None
    assert paired_t_seeds(0.0, 0.05, 0.8) is None
    assert paired_t_seeds(0.02, 0.05, 0.8) is None


def test_the_committed_plans_are_undecided_central_claims_each_decidable_only_within_its_budget() -> None:
    plans = {read_plan(path).claim: read_plan(path) for path in PLANS}
    assert {"hasfl.abstract.shakespeare.random-budget-surpasses-hasfl", "hasfl.table6.shakespeare.hasfl-weakest",
            "hasfl.table4.cifar10.estimate-tracks-capacity",
            "hasfl.table4.cifar10.no-data-signal-given-capacity",
            "fedrolex.as-run.large-server.rolling-above-static"} <= set(plans)
    for plan in plans.values():
        needed = plan.power.seeds_needed
        assert plan.decidable == (needed is not None and needed <= plan.budget.affordable_seeds)
        assert len(plan.seeds) == (needed if plan.decidable else 0)
        assert min(plan.seeds, default=100) >= 10, "confirmatory seeds are fresh: none of the profile's 0-9"
        assert plan.budget.affordable_seeds == int(plan.budget.thread_hours * 3600 // plan.budget.seconds_per_seed)
        if plan.power.test.startswith("paired"):
            assert plan.power.seeds_needed == paired_t_seeds(plan.power.effect / plan.power.sd, plan.alpha, 0.8)
        if not plan.decidable:
            stated = f"{needed} seeds needed" if needed is not None else "more than 200 seeds needed"
            assert stated in plan.undecidable and f"{plan.budget.affordable_seeds} affordable" in plan.undecidable


@pytest.mark.parametrize("field,value", [("alpha", 0.1), ("seeds", [100, 101]), ("hypothesis", "hasfl > fjord")])
def test_a_plan_edited_after_it_was_written_is_refused_by_name(tmp_path: Path, field: str, value) -> None:
    data = json.loads(PLANS[0].read_text())
    data[field] = value
    edited = tmp_path / PLANS[0].name
    edited.write_text(json.dumps(data))
    with pytest.raises(PlanError, match=rf"{edited.name}.*edited after it was written"):
        read_plan(edited)


def test_a_plan_resealed_with_an_unknown_field_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = json.loads(PLANS[0].read_text())
    body = {k: v for k, v in data.items() if k != "digest"} | {"sedes": [1]}
    (tmp_path / "p.json").write_text(json.dumps({**body, "digest": body_digest(body)}))
    with pytest.raises(PlanError, match=r"p\.json: unknown field 'sedes'; did you mean 'seeds'"):
        read_plan(tmp_path / "p.json")


def test_a_changed_expectation_is_a_new_claim_the_plan_does_not_test(tmp_path: Path) -> None:
    path = next(path for path in PLANS if "order" in read_plan(path).expectation)
    plan = read_plan(path)
    for folder in ("claims", "specs"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    catalog = load_catalog(tmp_path / "claims", tmp_path / "specs", REPO)
    check_hypothesis(plan, path, catalog.claim(plan.claim))
    claims = tmp_path / "claims" / f"{plan.claim.split('.')[0]}.yaml"
    expectation = f"      {plan.profile}: {{order: [{', '.join(plan.expectation['order'])}]}}"
    text = claims.read_text()
    assert expectation in text
    claims.write_text(text.replace(expectation, expectation.replace("}", ", alpha: 0.1}"), 1))
    changed = load_catalog(tmp_path / "claims", tmp_path / "specs", REPO)
    with pytest.raises(PlanError, match=r"changed after the plan was written \(.*yaml:\d+\)"):
        check_hypothesis(plan, path, changed.claim(plan.claim))


def _verdict(status: str) -> Verdict:
    return Verdict("c", "p", "learning", "e", "s", "st", "x", status, "why")


def test_the_verdict_reads_the_plan_s_seeds_only_at_its_alpha_and_waits_for_all_of_them() -> None:
    plan = next(read_plan(p) for p in PLANS if read_plan(p).decidable)
    asked: list[tuple[list[int], float]] = []

    def verify(seeds: list[int], alpha: float) -> Verdict:
        asked.append((seeds, alpha))
        return _verdict("PASS")

    status, reason, _ = confirmatory_verdict(plan, None, verify, lambda seed: seed != plan.seeds[-1])
    assert (status, asked) == ("PENDING", []) and f"{len(plan.seeds) - 1} of {len(plan.seeds)}" in reason
    status, _, verdict = confirmatory_verdict(plan, None, verify, lambda seed: True)
    assert status == "PASS" and asked == [(plan.seeds, plan.alpha)]
    assert confirmatory_verdict(plan, None, lambda s, a: _verdict("ERROR"), lambda seed: True)[0] == "ERROR"


def test_an_undecidable_plan_is_never_run_and_says_why() -> None:
    plan = next(read_plan(p) for p in PLANS if not read_plan(p).decidable)
    status, reason, verdict = confirmatory_verdict(plan, None, lambda s, a: pytest.fail("ran"), lambda s: True)
    assert status == "UNDECIDABLE" and reason.startswith("undecidable at this budget") and verdict is None


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "records" / "confirmatory").mkdir(parents=True)
    (tmp_path / "records" / "ab").mkdir()
    return tmp_path


def _commit(root: Path, path: Path, text: str) -> None:
    path.write_text(text)
    _git(root, "add", str(path))
    _git(root, "commit", "-qm", path.name)


def test_history_accepts_a_plan_committed_before_its_records(repository: Path) -> None:
    plan, record = repository / "records/confirmatory/c.json", repository / "records/ab/ab1.json.gz"
    _commit(repository, plan, "plan")
    confirmatory_history.require_committed(repository, plan)
    _commit(repository, record, "record")
    assert confirmatory_history.problems(repository, plan, [record]) == []


def test_history_refuses_a_record_committed_before_the_plan_and_a_plan_changed_after_its_first_run(
        repository: Path) -> None:
    plan, early, late = (repository / "records/confirmatory/c.json", repository / "records/ab/ab1.json.gz",
                         repository / "records/ab/ab2.json.gz")
    _commit(repository, early, "record")
    _commit(repository, plan, "plan")
    _commit(repository, late, "record")
    assert [p for p in confirmatory_history.problems(repository, plan, [early, late]) if "ab1" in p] != []
    _commit(repository, plan, "plan, changed")
    found = confirmatory_history.problems(repository, plan, [late])
    assert any("changed in" in p and "after its first run" in p for p in found)


def test_a_plan_not_committed_as_it_stands_is_not_run(repository: Path) -> None:
    plan = repository / "records/confirmatory/c.json"
    plan.write_text("plan")
    with pytest.raises(ValueError, match="commit the plan before its first run"):
        confirmatory_history.require_committed(repository, plan)
    _commit(repository, plan, "plan")
    plan.write_text("plan, edited")
    with pytest.raises(ValueError, match="commit the plan before its first run"):
        confirmatory_history.require_committed(repository, plan)


def test_the_report_shows_each_plan_on_its_own_line_apart_from_the_looks_and_the_refused_by_name() -> None:
    from harness.report import confirmatory as shown
    from harness.sequential.confirmatory_runs import Reading
    readings = [Reading(p, read_plan(p), "UNDECIDABLE" if not read_plan(p).decidable else "PENDING",
                        read_plan(p).undecidable or "3 of 26 seeds run") for p in PLANS]
    lines = shown.digest_lines(readings, ["records/confirmatory/x.json: its digest does not match"])
    for reading in readings:
        line = next(line for line in lines if f"`{reading.plan.claim}`" in line)
        affordable = f"{reading.plan.budget.affordable_seeds} affordable"
        assert ("not run" in line and affordable in line) if not reading.plan.decidable else \
            ("pending (3 of 26 seeds run)" in line and f"{len(reading.plan.seeds)} fresh seeds" in line)
        assert len(line) <= 300, "a first-screen line of prose"
    assert lines[-2] == "- refused: records/confirmatory/x.json: its digest does not match"
    section = "\n".join(shown.section(readings, []))
    assert all(r.plan.power.source in section and r.plan.analysis in section for r in readings)
    assert all(r.plan.undecidable in section for r in readings if not r.plan.decidable)
    assert "hours of one thread" in section
    assert shown.digest_lines([], []) == [] and shown.section([], []) == []


def test_a_confirmatory_verdict_counts_as_decided_only_where_its_own_seeds_models_learn() -> None:
    from harness.report import confirmatory as shown
    from harness.sequential.confirmatory_runs import Reading
    from harness.verdicts.levels import Level
    path = next(p for p in PLANS if read_plan(p).decidable)
    learned, weak = Level("learned", 0.62, "learning level 0.62"), Level("weak", 0.31, "learning level 0.31")
    readings = [Reading(path, read_plan(path), "PASS", "p = 0.01", _verdict("PASS"), level=learned),
                Reading(path, read_plan(path), "FAIL", "p = 0.01", _verdict("FAIL"), level=weak),
                Reading(path, read_plan(path), "INCONCLUSIVE", "p = 0.2", _verdict("INCONCLUSIVE"), level=learned)]
    assert [r.decided_where_learning for r in readings] == [True, False, False]
    assert shown.decided(readings[1:]) == {} and shown.decided(readings[:1]) == {
        readings[0].plan.claim: ("PASS", readings[0].plan.profile)}
    lines = shown.digest_lines(readings, [])
    assert "**PASS** (where the models learn, level 0.62)" in lines[2]
    assert "**FAIL** (weak, level 0.31)" in lines[3]
    assert "- evidence level: learning level 0.62" in shown.section(readings[:1], [])
    whose = {readings[1].plan.claim: "the scale, because the models reach 0.31 of the paper's gain"}
    assert "**FAIL** (weak, level 0.31); whose FAIL: the scale;" in shown.digest_lines(readings[1:2], [], whose)[2]
    assert "whose FAIL: the scale, because" in "\n".join(shown.section(readings[1:2], [], whose))
    assert "whose FAIL" not in "\n".join(shown.section(readings[:1], [], whose)), "a PASS has no whose"


@pytest.mark.parametrize(("needed", "said"), [(57, "(undecidable at this budget)"), (30, "(decidable at this budget)"),
                                              (None, "no number of seeds decides a new test")])
def test_an_inconclusive_plan_says_what_a_new_test_would_need_against_its_budget(needed: int | None,
                                                                                 said: str) -> None:
    from harness.report import confirmatory as shown
    from harness.sequential.confirmatory_runs import Reading
    path = REPO / "records" / "confirmatory" / "hasfl.table4.cifar10.estimate-tracks-capacity.json"
    plan = read_plan(path)
    assert plan.budget.affordable_seeds == 37
    inconclusive = _verdict("INCONCLUSIVE")
    inconclusive.power = {"unit": "seeds", "have": 22, "detectable": 0.13, "needed": needed, "note": ""}
    passed = _verdict("PASS")
    passed.power = dict(inconclusive.power)
    readings = [Reading(path, plan, "INCONCLUSIVE", "p", inconclusive), Reading(path, plan, "PASS", "p", passed)]
    digest, text = shown.digest_lines(readings, []), "\n".join(shown.section(readings, []))
    assert said in text and text.count("a new test") == 1, "the one look of a PASS is not spent"
    if needed is not None:
        assert f"**INCONCLUSIVE**; a new test: about {needed} seeds needed, 37 affordable; in [" in digest[2]
    assert "a new test" not in digest[3] and all(len(line) <= 300 for line in digest)

def test_records_verify_names_an_edited_plan(tmp_path: Path) -> None:
    from harness.sequential.committed import _confirmatory_problems
    from harness.settings import Settings
    for folder in ("claims", "specs"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / "records" / "confirmatory").mkdir(parents=True)
    data = json.loads(PLANS[-1].read_text()) | {"alpha": 0.2}
    (tmp_path / "records" / "confirmatory" / PLANS[-1].name).write_text(json.dumps(data))
    settings = Settings(root=tmp_path, store_dir=tmp_path / "store", cache_dir=tmp_path / "cache", data_dir=None,
                        download=False, executor="local", committed_records=True)
    catalog = load_catalog(tmp_path / "claims", tmp_path / "specs", tmp_path)
    problems = _confirmatory_problems(catalog, settings, SimpleNamespace(confirmatory=0))
    assert len(problems) == 1 and PLANS[-1].name in problems[0] and "edited after it was written" in problems[0]


def test_a_correlation_plan_s_size_is_the_fewest_seeds_its_simulated_test_passes_80_percent_of_the_time() -> None:
    from harness.sequential.confirmatory_correlation import decided_chance
    plan = read_plan(REPO / "records" / "confirmatory" / "hasfl.table4.cifar10.estimate-tracks-capacity.json")
    loaded = load_catalog(REPO / "claims", REPO / "specs", REPO).claim(plan.claim)
    expectation, obs = loaded.claim.expect[plan.profile], loaded.claim.observe
    needed = plan.power.seeds_needed
    assert needed == len(plan.seeds)

    def chance(seeds: int) -> float:
        return decided_chance(expectation, obs, plan.power.effect, plan.power.sd, 20, 0, seeds)

    assert chance(needed) >= 0.8 > chance(needed - 1)
    on_the_edge = decided_chance(expectation, obs, -0.845, plan.power.sd, 20, 0, needed)
    assert on_the_edge < 0.5, "a truth on the range's edge passes no more often than a coin"


def test_a_reading_added_beside_the_verdict_keeps_the_hypothesis_a_changed_range_does_not() -> None:
    from harness.schema.expectations.between import Between
    registered = Between(between=(-0.845, -0.715)).hypothesis()
    assert Between(between=(-0.845, -0.715), span_of_runs=6).hypothesis() == registered
    assert Between(between=(-0.845, -0.70)).hypothesis() != registered
    assert Between(between=(-0.845, -0.715), of="every_seed").hypothesis() != registered


def test_a_per_seed_difference_tested_against_a_bound_is_powered_on_its_distance_from_the_bound() -> None:
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    above = catalog.claim("fedrolex.as-run.large-server.rolling-above-static")
    numbers = {"FedRolex − HeteroFL": {"values": {"0": 1.5, "1": -0.5, "2": 2.0}}}
    verdict = Verdict(above.id, "fedrolex", "learning", "e", "s", "st", "x", "INCONCLUSIVE", "why", numbers=numbers)
    assert paired_differences(above, "learning", verdict) == [1.5, -0.5, 2.0]
    order = {"a": {"values": {"0": 3.0, "1": 1.0}}, "b": {"values": {"0": 1.0, "1": 2.0}}}
    assert paired_differences(above, "learning", Verdict(above.id, "fedrolex", "learning", "e", "s", "st", "x",
                                                         "INCONCLUSIVE", "why", numbers=order)) == [2.0, -1.0]
    # "not significantly above" claims no difference: there is no effect on its side to power a test for
    negated = catalog.claim("fedrolex.weighting.size-not-better")
    with pytest.raises(PlanError, match=r"claims/fedrolex\.yaml:\d+: claim fedrolex\.weighting\.size-not-better"):
        paired_differences(negated, "standard", verdict)


@pytest.mark.parametrize(("workers", "variants", "at_once"), [(1, 1, 1), (2, 1, 2), (2, 2, 1), (4, 2, 2), (2, 3, 1)])
def test_a_plan_runs_as_many_seeds_side_by_side_as_give_each_worker_a_run(workers: int, variants: int,
                                                                          at_once: int) -> None:
    from harness.sequential.confirmatory_runs import seeds_at_once
    assert seeds_at_once(workers, variants) == at_once


def test_confirm_run_runs_the_missing_seeds_in_batches_and_adds_each_finished_seed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers and a one-variant plan: the missing seeds run two at a time, each batch in one execution;
    a finished seed's records are added even where its batch partner failed, which is then named."""
    from harness.sequential import confirmatory_runs as runs
    source = REPO / "records" / "confirmatory" / "hasfl.table4.cifar10.estimate-tracks-capacity.json"
    (tmp_path / "records" / "confirmatory").mkdir(parents=True)
    shutil.copy(source, tmp_path / "records" / "confirmatory" / source.name)
    plan = read_plan(source)
    done_before, failing = set(plan.seeds[:-5]), plan.seeds[-2]
    executed, added, said = [], [], []

    class Context:
        def __init__(self, settings, loaded, profile, catalog, fetch, console):
            self.settings, self.loaded, self.variants = settings, loaded, ["hasfl"]
            self.catalog = self.experiment = self.profile = self.fingerprints = None
            self.store = SimpleNamespace(reusable=lambda key: None if key == failing else {"key": key})

        def has_seed(self, seed: int) -> bool:
            return seed in done_before

    def plan_variants(catalog, experiment, variants, profile, settings, store, data, seeds):
        return [SimpleNamespace(seed=s, key=s) for s in seeds], 0

    monkeypatch.setattr(runs, "select", lambda settings: (SimpleNamespace(claim=lambda c: SimpleNamespace(id=c)), {}))
    monkeypatch.setattr(runs.confirmatory_history, "require_committed", lambda root, path: None)
    monkeypatch.setattr(runs, "check_hypothesis", lambda plan, path, loaded: None)
    monkeypatch.setattr(runs, "_Context", Context)
    monkeypatch.setattr(runs, "plan_variants", plan_variants)
    monkeypatch.setattr(runs, "execute", lambda requests, *rest: executed.append([r.seed for r in requests]))
    monkeypatch.setattr(runs, "RecordBundle", lambda folder: SimpleNamespace(
        add=lambda records: added.append([r["key"] for r in records])))
    settings = SimpleNamespace(root=tmp_path, records_dir=tmp_path / "records", workers=2)
    missing = plan.seeds[-5:]
    with pytest.raises(runs.PlanError, match=rf"seed\(s\) \[{failing}\] did not finish"):
        runs.run(settings, None, None, lambda claim, seed: said.append(seed))
    assert executed == [missing[0:2], missing[2:4]], "two seeds a batch, stopped at the batch that failed"
    assert added == [[missing[0]], [missing[1]], [missing[2]]] and said == missing[:3]
