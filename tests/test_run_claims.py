"""Runs are claimed, not repeated: invocations sharing a results store run each missing run once,
and a holder that dies (even by SIGKILL) leaves its runs to the others at once."""
from __future__ import annotations

import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from filelock import FileLock
from rich.console import Console

from harness.running import execution
from harness.running.execution import _settings_dict, execute, run_request
from harness.running.planning import plan
from harness.running.runlocks import RunClaims, holder_pid
from harness.running.store import ResultStore
from harness.settings import Settings

REPO = Path(__file__).resolve().parents[1]
PATTERN = "hasfl.alloc.*"  # six analytic runs of well under a second each
CONCURRENT_PATTERN = "random-slower-than-rolling$"  # ten analytic runs, five of them about a second
ENVIRONMENT = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               "COLUMNS": "240", "FEDCLAIMS_RECORDS": "0"}

HOLDER = """
import json, sys
from filelock import FileLock
from harness.running.store import ResultStore
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
line = sys.stdin.readline()
if line.strip():
    ResultStore(sys.argv[2]).put(json.loads(line))
"""
"""Another invocation, reduced to its part in the protocol: it holds a run's lock until told to
let go, first storing the record it is given (if any)."""


def _requests(catalog, settings: Settings, pattern: str = PATTERN):
    requests, waiting = plan(catalog, catalog.select(pattern=pattern), ["smoke"], settings,
                             ResultStore(settings.store_dir))
    assert waiting == 0
    return requests


def _hold(store: ResultStore, key: str) -> subprocess.Popen:
    store.lock_path(key).parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.lock_path(key)), str(store.root)],
                              cwd=REPO, env=ENVIRONMENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _let_go(holder: subprocess.Popen, record: dict | None) -> None:
    holder.stdin.write((json.dumps(record) if record else "") + "\n")
    holder.stdin.flush()
    assert holder.wait(timeout=30) == 0


def _in_background(requests, settings: Settings, output: io.StringIO | None = None) -> tuple[threading.Thread, dict]:
    outcome: dict = {}
    console = Console(file=output or io.StringIO(), width=200)

    def target() -> None:
        outcome["summary"] = execute(requests, ResultStore(settings.store_dir), settings, console)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def _wait_until_stored(store: ResultStore, requests, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not all(store.path(r.key).exists() for r in requests):
        assert time.monotonic() < deadline, "the runs this invocation could claim were not stored in time"
        time.sleep(0.05)


def _record_of(request, settings: Settings, status: str = "ok") -> dict:
    record = run_request(asdict(request), _settings_dict(settings))
    if status == "error":
        record.update(status="error", result=None,
                      error={"type": "RunFailure", "message": "failed in the other invocation", "traceback": ""})
    return record


@pytest.mark.parametrize("executor", ["local", "processes"])
def test_a_run_another_invocation_holds_is_waited_for_then_reused(catalog, settings, executor) -> None:
    settings = replace(settings, executor=executor, workers=2)
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    victim, others = requests[1], [r for r in requests if r is not requests[1]]
    record = _record_of(victim, settings)
    holder = _hold(store, victim.key)
    output = io.StringIO()
    thread, outcome = _in_background(requests, settings, output)
    _wait_until_stored(store, others)
    time.sleep(0.5)
    assert thread.is_alive() and not store.path(victim.key).exists()  # waiting, not running it
    assert holder_pid(store.lock_path(victim.key)) == holder.pid
    _let_go(holder, record)
    thread.join(timeout=60)
    assert "1 run is being run by another invocation on this store; waiting for them" in output.getvalue()
    summary = outcome["summary"]
    assert (summary.ran, summary.reused, summary.run_elsewhere, summary.failed) == (len(others), 1, 1, 0)
    assert summary.text().endswith("; 1 of the reused run by another invocation")
    assert store.get(victim.key)["provenance"]["started"] == record["provenance"]["started"]


def test_a_run_whose_holder_stored_an_error_is_run_again_here(catalog, settings) -> None:
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    victim = requests[0]
    holder = _hold(store, victim.key)
    thread, outcome = _in_background(requests, settings)
    _wait_until_stored(store, requests[1:])
    _let_go(holder, _record_of(victim, settings, status="error"))
    thread.join(timeout=60)
    summary = outcome["summary"]
    assert (summary.ran, summary.reused, summary.run_elsewhere) == (len(requests), 0, 0)
    assert store.reusable(victim.key) is not None


def test_a_holder_killed_with_sigkill_leaves_its_run_to_the_waiting_invocation_at_once(catalog, settings) -> None:
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    victim = requests[-1]
    holder = _hold(store, victim.key)
    thread, outcome = _in_background(requests, settings)
    _wait_until_stored(store, requests[:-1])
    time.sleep(0.5)
    assert thread.is_alive()
    killed = time.monotonic()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    thread.join(timeout=30)
    after_kill = time.monotonic() - killed
    assert not thread.is_alive()
    summary = outcome["summary"]
    assert (summary.ran, summary.reused, summary.failed) == (len(requests), 0, 0)
    assert after_kill < 5, f"{after_kill:.2f} s from SIGKILL to the waiting invocation finishing the run"
    print(f"SIGKILL of the holder to its run stored by the waiting invocation: {after_kill:.3f} s")


def test_a_lock_left_by_a_killed_holder_is_taken_without_waiting(catalog, settings) -> None:
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    holders = [_hold(store, r.key) for r in requests[:3]]
    for holder in holders:
        holder.kill()
        holder.wait(timeout=10)
    assert all(store.lock_path(r.key).exists() for r in requests[:3])  # the files stay; the locks are gone
    started = time.monotonic()
    summary = execute(requests, store, settings, Console(file=io.StringIO()))
    assert (summary.ran, summary.reused) == (len(requests), 0)
    assert time.monotonic() - started < 20


class CountingClaims(RunClaims):
    most_held = 0

    def claimed(self, runs):
        for run in super().claimed(runs):
            CountingClaims.most_held = max(CountingClaims.most_held, len(self.held))
            yield run


@pytest.mark.parametrize("executor, workers, bound", [("local", 1, 1), ("processes", 1, 2)])
def test_an_invocation_holds_no_more_locks_than_runs_in_flight(catalog, settings, monkeypatch, executor, workers,
                                                               bound) -> None:
    monkeypatch.setattr(execution, "RunClaims", CountingClaims)
    CountingClaims.most_held = 0
    settings = replace(settings, executor=executor, workers=workers)
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    summary = execute(requests, store, settings, Console(file=io.StringIO()))
    assert summary.ran == len(requests)
    assert 1 <= CountingClaims.most_held <= bound
    for request in requests:  # every lock let go
        lock = FileLock(store.lock_path(request.key))
        lock.acquire(blocking=False)
        lock.release()


def test_a_run_stored_between_planning_and_claiming_is_not_run_again(catalog, settings, monkeypatch) -> None:
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    early = {r.key: _record_of(r, settings) for r in requests[:2]}
    real = RunClaims.claimed

    def other_invocation_finishes_first(self, runs):
        for record in early.values():
            store.put(record)
        return real(self, runs)

    monkeypatch.setattr(RunClaims, "claimed", other_invocation_finishes_first)
    summary = execute(requests, store, settings, Console(file=io.StringIO()))
    assert (summary.ran, summary.reused, summary.run_elsewhere) == (len(requests) - 2, 2, 2)


@pytest.mark.integration
def test_the_ray_driver_holds_the_locks_and_waits_for_a_held_run(catalog, settings) -> None:
    ray = pytest.importorskip("ray")
    from harness.running import ray_executor
    settings = replace(settings, executor="ray", workers=2, threads=1)
    requests = _requests(catalog, settings)
    store = ResultStore(settings.store_dir)
    victim = requests[2]
    record = _record_of(victim, settings)
    holder = _hold(store, victim.key)
    ray_executor.connect(settings)
    try:
        thread, outcome = _in_background(requests, settings)
        _wait_until_stored(store, [r for r in requests if r is not victim], timeout=120)
        assert thread.is_alive()
        _let_go(holder, record)
        thread.join(timeout=60)
    finally:
        ray.shutdown()
    summary = outcome["summary"]
    assert (summary.ran, summary.reused, summary.run_elsewhere) == (len(requests) - 1, 1, 1)


SUMMARY = re.compile(r"(\d+) runs: (\d+) reused, (\d+) run, (\d+) failed, (\d+) without data")


def _verify(store: Path, cache: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness.cli", "--root", str(REPO), "verify",
                             "--claim", CONCURRENT_PATTERN, "--store", str(store), "--workers", "1"],
                            cwd=REPO, env={**ENVIRONMENT, "FEDCLAIMS_CACHE": str(cache)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_verifies_started_together_run_each_missing_run_once(catalog, settings, tmp_path) -> None:
    missing = len(_requests(catalog, settings, CONCURRENT_PATTERN))
    started = time.monotonic()
    invocations = [_verify(tmp_path / "store", tmp_path / "cache") for _ in range(2)]
    outputs = [invocation.communicate(timeout=300) for invocation in invocations]
    wall = time.monotonic() - started
    assert [i.returncode for i in invocations] == [0, 0], [err[-3000:] for _, err in outputs]
    counts = [tuple(map(int, SUMMARY.search(err).groups())) for _, err in outputs]
    assert all(total == missing for total, *_ in counts)
    assert sum(ran for _, _, ran, _, _ in counts) == missing, counts
    assert all(failed == 0 for *_, failed, _ in counts)
    print(f"two verifies on {missing} missing runs: {[c[2] for c in counts]} run, {wall:.1f} s wall")


ROOM = """
import resource, sys
from harness.running.runlocks import lock_room
soft, hard = map(int, sys.argv[1:])
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
print(lock_room(1000), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


@pytest.mark.parametrize("soft, hard, room, raised", [(64, 4096, 1000, 2000), (64, 64, 32, 64),
                                                     (4096, 4096, 1000, 4096)])
def test_lock_room_raises_the_open_file_limit_or_holds_fewer_locks(soft, hard, room, raised) -> None:
    if hard > resource.getrlimit(resource.RLIMIT_NOFILE)[1]:
        pytest.skip("this machine's hard limit of open files is lower")
    done = subprocess.run([sys.executable, "-c", ROOM, str(soft), str(hard)], cwd=REPO, env=ENVIRONMENT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert tuple(map(int, done.stdout.split())) == (room, raised)
