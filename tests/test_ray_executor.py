"""The ray executor on a local two-CPU Ray instance: the same records as the processes executor,
one store written by the driver, and what happens when a worker dies."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import main as cli_main
from harness.loading.catalog import load_catalog
from harness.running import ray_executor
from harness.running.execution import execute
from harness.running.planning import plan
from harness.running.store import ResultStore
from harness.settings import Settings

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
PATTERN = "hasfl.alloc.*"  # six analytic runs of well under a second each


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Settings:
    folder = tmp_path_factory.mktemp("ray")
    return Settings(root=REPO, store_dir=folder / "store", cache_dir=folder / "cache", data_dir=None,
                    download=False, workers=2, threads=1, executor="ray", committed_records=False)


@pytest.fixture(scope="module")
def cluster(base):
    """A local Ray instance with two CPUs (two single-thread runs at a time); its address."""
    ray = pytest.importorskip("ray")
    address = ray_executor.connect(base)
    yield address
    ray.shutdown()


@pytest.fixture(scope="module")
def requests(base):
    catalog = load_catalog(REPO / "claims", REPO / "specs", REPO)
    planned, waiting = plan(catalog, catalog.select(pattern=PATTERN), ["smoke"], base)
    assert waiting == 0 and len(planned) == 6
    return planned


def _execute(requests, settings: Settings):
    store = ResultStore(settings.store_dir)
    return execute(requests, store, settings, Console(file=io.StringIO())), store


def _results(store: ResultStore, requests) -> dict[str, object]:
    return {r.key: store.get(r.key)["result"] for r in requests}


def _stored_files(store: ResultStore) -> list[Path]:
    return sorted(p for p in store.root.rglob("*") if p.is_file() and p.relative_to(store.root).parts[0] != "locks")


@pytest.fixture(scope="module")
def processes_results(base, requests, tmp_path_factory):
    """The reference: the same runs on the processes executor (two spawned workers)."""
    settings = replace(base, executor="processes", store_dir=tmp_path_factory.mktemp("processes"))
    summary, store = _execute(requests, settings)
    assert (summary.ran, summary.failed) == (len(requests), 0)
    return _results(store, requests)


def test_ray_records_equal_processes_records(cluster, base, requests, processes_results, tmp_path) -> None:
    settings = replace(base, store_dir=tmp_path / "store")
    summary, store = _execute(requests, settings)
    assert (summary.ran, summary.failed, summary.reused) == (len(requests), 0, 0)
    assert _results(store, requests) == processes_results
    for request in requests:
        record = store.get(request.key)
        assert record["status"] == "ok" and record["provenance"]["code"] == request.code
        assert record["provenance"]["threads"] == 1
    assert len(_stored_files(store)) == len(requests)

    again, _ = _execute(requests, settings)
    assert (again.ran, again.reused) == (0, len(requests))


def _record_attempts(folder: Path, die_on: str, times: int):
    """run_request, logging each attempt, whose worker dies after computing `die_on` on its
    first `times` attempts (before the record reaches the driver)."""
    real = ray_executor.run_request

    def attempt(request, settings, progress=None):
        record = real(request, settings, progress)
        with open(folder / request["key"], "a") as log:
            log.write("attempt\n")
        if request["key"] == die_on and len((folder / die_on).read_text().splitlines()) <= times:
            os._exit(1)
        return record

    return attempt


def _attempts(folder: Path, requests) -> dict[str, int]:
    return {r.key: len((folder / r.key).read_text().splitlines()) for r in requests}


def test_worker_killed_mid_run_retries_only_that_run(cluster, base, requests, processes_results, tmp_path,
                                                     monkeypatch) -> None:
    log = tmp_path / "attempts"
    log.mkdir()
    victim = requests[-1]
    monkeypatch.setattr(ray_executor, "run_request", _record_attempts(log, victim.key, times=1))
    settings = replace(base, store_dir=tmp_path / "store")
    summary, store = _execute(requests, settings)
    assert (summary.ran, summary.failed) == (len(requests), 0)
    assert _attempts(log, requests) == {r.key: 2 if r is victim else 1 for r in requests}
    assert _results(store, requests) == processes_results
    assert len(_stored_files(store)) == len(requests)  # each record exactly once, no partial files


def test_worker_dying_on_every_attempt_gives_an_error_record(cluster, base, requests, processes_results,
                                                              tmp_path, monkeypatch) -> None:
    log = tmp_path / "attempts"
    log.mkdir()
    victim = requests[0]
    monkeypatch.setattr(ray_executor, "RETRIES", 1)
    monkeypatch.setattr(ray_executor, "run_request", _record_attempts(log, victim.key, times=2))
    settings = replace(base, store_dir=tmp_path / "store")
    summary, store = _execute(requests, settings)
    assert (summary.ran, summary.failed) == (len(requests) - 1, 1)
    assert _attempts(log, requests) == {r.key: 2 if r is victim else 1 for r in requests}
    record = store.get(victim.key)
    assert record["status"] == "error" and record["result"] is None
    assert record["error"]["type"] == "WorkerCrashedError"
    assert record["error"]["message"].startswith("the run's Ray task failed 2 times (1 attempt and 1 retry): "
                                                 "WorkerCrashedError")
    assert _results(store, requests[1:]) == {r.key: processes_results[r.key] for r in requests[1:]}


def test_cli_runs_on_an_existing_cluster_by_address(cluster, requests, processes_results, tmp_path) -> None:
    """A second driver joins the running cluster by address, ships its code, stores the records."""
    store = tmp_path / "store"
    environment = {**os.environ, "FEDCLAIMS_CACHE": str(tmp_path / "cache"),
                   "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    environment.pop("FEDCLAIMS_RAY_ADDRESS", None)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "--root", str(REPO), "verify",
                           "--claim", "hasfl.alloc.figure1-*", "--executor", "ray", "--address", cluster,
                           "--store", str(store), "--threads", "1"],
                          env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 runs: 0 reused, 2 run, 0 failed" in done.stderr
    example = [r for r in requests if r.experiment == "hasfl-allocation-example"]
    assert len(example) == 2
    assert _results(ResultStore(store), example) == {r.key: processes_results[r.key] for r in example}


def test_address_setting_selects_ray_and_rejects_other_executors(monkeypatch, capsys) -> None:
    monkeypatch.setenv("FEDCLAIMS_RAY_ADDRESS", "head:6379")
    settings = Settings.from_env(REPO, workers=2)
    assert (settings.executor, settings.ray_address) == ("ray", "head:6379")
    assert Settings.from_env(REPO, executor="processes", workers=2).executor == "processes"
    monkeypatch.delenv("FEDCLAIMS_RAY_ADDRESS")
    assert Settings.from_env(REPO, workers=2, ray_address="other:6379").executor == "ray"
    assert Settings.from_env(REPO, workers=2).executor == "processes"
    assert cli_main(["--root", str(REPO), "plan", "--claim", PATTERN, "--executor", "processes",
                     "--address", "head:6379"]) == 2
    assert "--address" in capsys.readouterr().err


def test_a_run_on_cuda_asks_ray_for_a_gpu() -> None:
    assert ray_executor._resources({"threads": 2, "device": "cpu"}) == {"num_cpus": 2, "num_gpus": 0}
    assert ray_executor._resources({"threads": 1, "device": "cuda:0"}) == {"num_cpus": 1, "num_gpus": 1}
