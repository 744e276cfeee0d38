"""Planning runs from the real catalog, executing them into a store, and reusing records."""
from __future__ import annotations

import io
import os
from dataclasses import asdict, replace
from itertools import islice
from pathlib import Path

import pytest
from rich.console import Console

from harness import provenance
from harness.errors import RunFailure
from harness.pipeline import verify
from harness.running import planning
from harness.running.execution import _settings_dict, execute, run_request
from harness.running.store import ResultStore
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]
PATTERN = "hasfl.alloc.*"
PROFILES = ["smoke"]
EXPECTED_RUNS = {("hasfl-allocation-rule", v) for v in ("tier-1.0", "tier-0.75", "tier-0.5", "tier-0.25")} | {
    ("hasfl-allocation-example", v) for v in ("guarantee-on", "guarantee-off")}


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


def _plan(catalog, settings, store=None):
    requests, waiting = planning.plan(catalog, catalog.select(pattern=PATTERN), PROFILES, settings,
                                      store or ResultStore(settings.store_dir))
    assert waiting == 0  # no config of these experiments refers to another run
    return requests


def _run(requests, settings, store=None):
    store = store or ResultStore(settings.store_dir)
    return execute(requests, store, settings, _quiet()), store


def test_plan_has_unique_keys_and_only_needed_runs(catalog, settings) -> None:
    claims = catalog.select(pattern=PATTERN)
    assert len(claims) == 11 and all(c.id.startswith("hasfl.alloc.") for c in claims)
    requests = _plan(catalog, settings)
    keys = [r.key for r in requests]
    assert len(keys) == len(set(keys)) == len(EXPECTED_RUNS)
    assert {(r.experiment, r.variant) for r in requests} == EXPECTED_RUNS
    assert all(r.seed == 0 and r.profile == "smoke" for r in requests)
    # Deterministic: planning again gives the same keys in the same order.
    assert [r.key for r in _plan(catalog, settings)] == keys
    # Resolved configs carry the variant's setting over the base config.
    tier = next(r for r in requests if r.variant == "tier-0.75")
    assert tier.config["p_max"] == 0.75 and tier.config["p_min"] == 0.4


def test_execute_then_reuse_then_recompute_missing_and_corrupt(catalog, settings) -> None:
    requests = _plan(catalog, settings)
    summary, store = _run(requests, settings)
    assert (summary.ran, summary.reused, summary.failed) == (len(requests), 0, 0)
    for request in requests:
        record = store.get(request.key)
        assert record["status"] == "ok" and record["variant"] == request.variant
        assert record["provenance"]["code"] == request.code

    again, _ = _run(requests, settings)
    assert (again.ran, again.reused, again.failed) == (0, len(requests), 0)
    assert again.events == []

    deleted = requests[2]
    store.path(deleted.key).unlink()
    third, _ = _run(requests, settings)
    assert (third.ran, third.reused) == (1, len(requests) - 1)
    assert store.path(deleted.key).exists()

    corrupted = requests[4]
    path = store.path(corrupted.key)
    path.write_text(path.read_text()[:-20])  # truncated
    fourth, _ = _run(requests, settings)
    assert (fourth.ran, fourth.reused) == (1, len(requests) - 1)
    assert len(fourth.events) == 1 and corrupted.key in fourth.events[0] and "corrupt" in fourth.events[0]
    assert len(list(path.parent.glob(f"{corrupted.key}.json.corrupt-*"))) == 1
    assert store.reusable(corrupted.key) is not None

    outcome = verify(settings, pattern=PATTERN, profiles=PROFILES, console=_quiet())
    assert outcome.execution.ran == 0 and outcome.execution.reused == len(requests)
    assert {v.claim: v.status for v in outcome.verdicts} == {c.id: "PASS" for c in catalog.select(pattern=PATTERN)}


def test_import_closures_separate_allocation_from_extraction() -> None:
    rule = provenance.import_closure("harness.runners.allocation_rule")
    coverage = provenance.import_closure("harness.runners.mask_coverage")
    assert "methods.allocation" in rule and "methods.extraction" not in rule
    assert "methods.extraction" in coverage and "methods.allocation" not in coverage
    assert "harness.runners.allocation_rule" in rule and "harness.runners.context" in rule
    # Harness modules that do not compute results stay out of the key.
    for module in ("harness.loading.catalog", "harness.verdicts.verify", "harness.running.store",
                   "harness.running.execution"):
        assert module not in rule and module not in coverage
    fingerprint = provenance.code_fingerprint("harness.runners.allocation_rule")
    assert set(fingerprint) == set(rule) and all(len(d) == 64 for d in fingerprint.values())


def test_editing_methods_allocation_rekeys_nothing_but_bumping_the_runners_version_rekeys_its_runs(
        catalog, settings, monkeypatch) -> None:
    allocation = planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 0, "smoke", settings)
    example = planning.request_for(catalog, "hasfl-allocation-example", "guarantee-on", 0, "smoke", settings)
    coverage = planning.request_for(catalog, "fedrolex-coverage", "rolling-i64-m1", 0, "smoke", settings)
    real_code, real_behaviour = planning._code, planning._behaviour

    def edited(runner: str):
        return tuple((name, "0" * 64 if name == "methods.allocation" else digest) for name, digest in real_code(runner))

    monkeypatch.setattr(planning, "_code", edited)
    edited_only = planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 0, "smoke", settings)
    assert edited_only.key == allocation.key and edited_only.code["methods.allocation"] == "0" * 64

    def bumped(runner: str):
        return tuple((name, "version 2" if name == "harness.runners.allocation_rule" else version)
                     for name, version in real_behaviour(runner))

    monkeypatch.setattr(planning, "_behaviour", bumped)
    after = [planning.request_for(catalog, e, v, 0, "smoke", settings) for e, v in
             (("hasfl-allocation-rule", "tier-1.0"), ("hasfl-allocation-example", "guarantee-on"),
              ("fedrolex-coverage", "rolling-i64-m1"))]
    assert after[0].key != allocation.key and after[0].behaviour["harness.runners.allocation_rule"] == "version 2"
    assert after[1].key == example.key
    assert after[2].key == coverage.key
    # Config, seed and device enter the key too.
    assert planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 1, "smoke", settings).key != after[0].key
    assert planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 0, "smoke",
                                replace(settings, device="cuda")).key != after[0].key


def test_failing_runner_becomes_error_record_and_others_complete(catalog, settings, monkeypatch) -> None:
    import harness.runners.allocation_rule as module
    real = module.run

    def flaky(config, seed, context):
        if config.p_max == 0.5:
            raise RunFailure("synthetic failure for tier 0.5")
        return real(config, seed, context)

    monkeypatch.setattr(module, "run", flaky)
    requests = _plan(catalog, settings)
    summary, store = _run(requests, settings)
    assert (summary.ran, summary.failed) == (len(requests) - 1, 1)
    failed = next(r for r in requests if r.variant == "tier-0.5")
    record = store.get(failed.key)
    assert record["status"] == "error" and record["result"] is None
    assert record["error"]["type"] == "RunFailure"
    assert record["error"]["message"] == "synthetic failure for tier 0.5"
    assert "synthetic failure" in record["error"]["traceback"]
    for request in requests:
        if request is not failed:
            assert store.reusable(request.key)["status"] == "ok"

    outcome = verify(settings, pattern=PATTERN, profiles=PROFILES, run=False)
    statuses = {v.claim: (v.status, v.reason) for v in outcome.verdicts}
    readers = {c.id for c in catalog.select(pattern=PATTERN) if "tier-0.5" in planning.variants_needed(c, "smoke")}
    assert "hasfl.alloc.cap-at-0.4-for-tier-0.5" in readers and len(readers) < len(statuses)
    for claim in readers:
        status, reason = statuses.pop(claim)
        assert status == "ERROR" and "RunFailure: synthetic failure for tier 0.5" in reason, claim
    assert {s for s, _ in statuses.values()} == {"PASS"}

    monkeypatch.setattr(module, "run", real)
    retry, _ = _run(requests, settings)  # an error record is never reused
    assert (retry.ran, retry.reused, retry.failed) == (1, len(requests) - 1, 0)
    assert store.reusable(failed.key)["status"] == "ok"


def test_same_seed_gives_identical_results(catalog, settings) -> None:
    request = planning.request_for(catalog, "fedrolex-coverage", "random-i64-m1", 0, "smoke", settings)
    small = asdict(request)
    small["config"] = {**small["config"], "trials": 4, "index_groups": 16}
    options = _settings_dict(settings)
    first, second = run_request(small, options), run_request(small, options)
    assert first["status"] == second["status"] == "ok", first["error"]
    assert first["result"] == second["result"]
    other = run_request({**small, "seed": 1}, options)
    assert other["result"]["rounds_to_cover"] != first["result"]["rounds_to_cover"]


def test_thread_count_is_part_of_the_key(catalog, settings) -> None:
    one = planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 0, "smoke", settings)
    two = planning.request_for(catalog, "hasfl-allocation-rule", "tier-1.0", 0, "smoke", replace(settings, threads=2))
    assert one.key != two.key


DEPENDENT_SPEC = """\
experiment: test-budget
paper: hasfl
title: A run whose config refers to another run's record
kind: federated_training
config:
  data: {name: cifar10, partition: {scheme: iid}, max_train_per_client: 8, test_samples: 20, calibration_samples: 16}
  model: {arch: conv, hidden: [4], in_channels: 3, num_classes: 10, image_size: 32}
  federation: {num_clients: 4, clients_per_round: 2, rounds: 2, local_epochs: 1}
variants:
  hasfl: {config: {federation: {policy: {name: hasfl, t_warm: 1, t_adapt: 1}}}}
  random-budget: {config: {federation: {policy: {name: random_budget, budget: {match: hasfl, metric: mean_capacity}}}}}
profiles:
  smoke: {seeds: [0, 1]}
"""
DEPENDENT_CLAIM = """\
paper: hasfl
title: t
reference: r
claims:
  - id: test.budget
    statement: "Random-budget matches HAS-FL's realised capacity."
    source: "§4.4"
    experiment: test-budget
    observe: {difference: mean_capacity, of: [random-budget, hasfl]}
    expect:
      smoke: {approx: 0.0, tolerance: 0.5}
"""


def _dependent_project(tmp_path: Path, claim: str) -> Settings:
    """A project of the spec whose Random-budget refers to HAS-FL's record, and `claim`."""
    (tmp_path / "claims").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "budget.yaml").write_text(DEPENDENT_SPEC)
    (tmp_path / "claims" / "budget.yaml").write_text(claim)
    return Settings.from_env(tmp_path, store_dir=tmp_path / "store", workers=1)


@pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")
def test_runs_over_dependency_waves_are_counted_once(tmp_path: Path) -> None:
    settings = _dependent_project(tmp_path, DEPENDENT_CLAIM)
    first = verify(settings, console=_quiet())
    assert (first.execution.total, first.execution.ran, first.execution.reused) == (4, 4, 0)
    assert first.execution.text().startswith("4 runs: 0 reused, 4 run,")
    assert len(first.requests) == 4
    again = verify(settings, console=_quiet())
    assert (again.execution.total, again.execution.ran, again.execution.reused) == (4, 0, 4)
    assert [v.status for v in again.verdicts] == [v.status for v in first.verdicts] != ["ERROR"]


@pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")
def test_a_run_is_planned_with_the_runs_its_key_was_computed_from(tmp_path: Path) -> None:
    """A claim reading only Random-budget still plans HAS-FL's runs once they are stored: Random-budget's key
    is computed from HAS-FL's records, so a bundle of the claim's records without them could not be read."""
    from harness.loading.catalog import load_catalog

    (tmp_path / "claims").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "budget.yaml").write_text(DEPENDENT_SPEC)
    claim = DEPENDENT_CLAIM.replace("{difference: mean_capacity, of: [random-budget, hasfl]}",
                                    "{metric: mean_capacity, of: random-budget}")
    (tmp_path / "claims" / "budget.yaml").write_text(claim.replace("{approx: 0.0, tolerance: 0.5}",
                                                                   "{between: [0.1, 1.0]}"))
    settings = Settings.from_env(tmp_path, store_dir=tmp_path / "store", workers=1)
    verify(settings, console=_quiet())
    catalog = load_catalog(tmp_path / "claims", tmp_path / "specs", tmp_path)
    store = ResultStore(settings.store_dir)
    requests, waiting = planning.plan(catalog, catalog.select(), ["smoke"], settings, store)
    assert waiting == 0
    assert sorted((r.variant, r.seed) for r in requests) == [("hasfl", 0), ("hasfl", 1),
                                                             ("random-budget", 0), ("random-budget", 1)]
    assert all(store.reusable(r.key) is not None for r in requests)


@pytest.mark.skipif(not os.environ.get("FEDCLAIMS_DATA"), reason="FEDCLAIMS_DATA is not set")
def test_records_add_keys_a_dependent_run_from_the_bundled_record_it_refers_to(tmp_path: Path) -> None:
    """HAS-FL's runs are bundled and Random-budget's only in the store: `records add` keys Random-budget's
    runs from the bundled HAS-FL records and bundles them (it dropped them, reading the store alone)."""
    from harness.cli import main
    from harness.running.bundle import RecordBundle

    settings = _dependent_project(tmp_path, DEPENDENT_CLAIM)
    first = verify(settings, console=_quiet())
    store = ResultStore(settings.store_dir)
    hasfl = [r for r in first.requests if r.variant == "hasfl"]
    RecordBundle(settings.records_dir).add(store.get(r.key) for r in hasfl)
    for request in hasfl:
        store.path(request.key).unlink()
    assert main(["--root", str(tmp_path), "records", "add", "--store", str(settings.store_dir)]) == 0
    bundled = {record["variant"] for record in RecordBundle(settings.records_dir).records()}
    assert bundled == {"hasfl", "random-budget"} and len(list(RecordBundle(settings.records_dir).keys())) == 4


def test_a_worker_rereads_its_source_after_planning_hashed_it(catalog, settings, monkeypatch) -> None:
    """A source edited after planning (in a long sweep, in a worker that already ran) is refused."""
    request = asdict(_plan(catalog, settings)[0])  # planning has hashed (and cached) the runner's source
    real = planning.code_fingerprint
    monkeypatch.setattr(planning, "code_fingerprint", lambda module: {**real(module), "harness.edited": "0" * 64})
    record = run_request(request, _settings_dict(settings))
    assert record["status"] == "error" and record["error"]["type"] == "WorkerMismatch"
    assert "harness.edited" in record["error"]["message"]


def test_an_interrupted_wave_counts_only_its_own_runs(catalog, settings, monkeypatch) -> None:
    import harness.running.execution as execution
    requests = _plan(catalog, settings)
    console = Console(file=io.StringIO(), width=200)
    summary = execute(requests[:3], ResultStore(settings.store_dir), settings, console)
    real = execution._execute_local

    def one_then_interrupt(todo, settings, progress, task, finished):
        real(islice(todo, 1), settings, progress, task, finished)
        raise KeyboardInterrupt

    monkeypatch.setattr(execution, "_execute_local", one_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        execute(requests[3:], ResultStore(settings.store_dir), settings, console, summary)
    assert summary.ran == 4
    assert f"interrupted: 1 of {len(requests) - 3} runs finished and stored" in console.file.getvalue()


def test_a_log_gets_a_line_per_finished_run(catalog, settings) -> None:
    requests = _plan(catalog, settings)
    log = io.StringIO()
    execute(requests, ResultStore(settings.store_dir), settings, Console(file=log, width=200))
    lines = [line for line in log.getvalue().splitlines() if " runs finished (" in line]
    assert [line.split(" runs finished")[0] for line in lines] == [f"{i}/{len(requests)}" for i in
                                                                  range(1, len(requests) + 1)]
    assert {line.rsplit(": ", 1)[1] for line in lines} == {"ok"}


def test_runs_that_time_themselves_run_alone_after_the_others(catalog, settings, monkeypatch) -> None:
    """FedHENet's runs record their own seconds, which a cost claim compares with FedAvg's: measured beside
    another run on a 2-core machine, FedHENet's smoke pipeline read 20% slower than FedAvg's where alone it
    reads faster (its CPU seconds were half its wall seconds). The pool gets the other runs; the timed ones run
    one at a time, each in a fresh process, once it is done."""
    import harness.running.execution as execution
    from harness.kinds import kind as experiment_kind
    assert experiment_kind("fedhenet").timed and not experiment_kind("federated_training").timed
    shared = _plan(catalog, settings)[:2]
    timed = [replace(request, kind="fedhenet", key=request.key[::-1]) for request in shared]
    calls = []

    def recorder(name):
        def run(todo, settings, progress, task, finished):
            calls.append((name, [request.key for request in todo]))
        return run

    monkeypatch.setattr(execution, "_execute_pool", recorder("pool"))
    monkeypatch.setattr(execution, "_execute_alone", recorder("alone"))
    execute([timed[0], *shared, timed[1]], ResultStore(settings.store_dir),
            replace(settings, executor="processes", workers=2), _quiet())
    assert calls == [("pool", [r.key for r in shared]), ("alone", [r.key for r in timed])]
    calls.clear()
    monkeypatch.setattr(execution, "_execute_local", recorder("local"))
    execute([timed[0], *shared, timed[1]], ResultStore(settings.store_dir), replace(settings, executor="local",
                                                                                     workers=1), _quiet())
    assert calls == [("local", [r.key for r in shared]), ("local", [r.key for r in timed])]  # in this process


def test_a_timed_run_gets_a_process_of_its_own(monkeypatch, settings) -> None:
    """The first run of a process pays its start (FedAvg's first smoke pipeline: 4.8 s against 4.0-4.2 s for
    the next three in one process), so timed runs each get a fresh one, one at a time."""
    import harness.running.execution as execution
    made = []

    class Pool:
        def __init__(self, **options):
            made.append(options)

        def shutdown(self, **options):
            pass

    monkeypatch.setattr(execution, "ProcessPoolExecutor", Pool)
    execution._execute_alone(iter(()), replace(settings, workers=4), None, None, None)
    assert made[0]["max_workers"] == 1 and made[0]["max_tasks_per_child"] == 1


def test_the_record_lookup_reads_the_plans_keys_and_plans_only_a_run_it_lacks(catalog, settings, monkeypatch) -> None:
    """After execution the verifier's look-up takes a planned run's key from the plan's map (re-planning every
    run a claim reads cost a closure hash per look-up); a run the plan does not list is planned at its look-up,
    under the key the plan gives it."""
    from harness import pipeline
    store = ResultStore(settings.store_dir)
    requests = _plan(catalog, settings, store)
    planned_again = []
    real = pipeline.request_for
    monkeypatch.setattr(pipeline, "request_for", lambda *args, **kwargs: planned_again.append(args[1:5])
                        or real(*args, **kwargs))
    lookup = pipeline.record_lookup(catalog, settings, store, {}, requests)
    assert [lookup(r.experiment, r.variant, r.seed, r.profile) for r in requests] == [(r.key, None) for r in requests]
    assert planned_again == []
    first, rest = requests[0], requests[1:]
    partial = pipeline.record_lookup(catalog, settings, store, {}, rest)
    assert partial(first.experiment, first.variant, first.seed, first.profile) == (first.key, None)
    assert planned_again == [(first.experiment, first.variant, first.seed, first.profile)]
