"""Runs as Ray tasks, on a local Ray instance or an existing cluster.

Each run is one task; its record comes back to the driver, which alone writes the store,
as each run finishes, and which holds the run's lock (`harness.running.runlocks`) while its task
runs. A task whose worker dies (killed, out of memory, node lost) is resubmitted by Ray up
to RETRIES more times; if every attempt dies, the run gets an ERROR record naming the
failure (never reused, so the next invocation tries it again). Runs that finished are
already stored and the others go on.
"""
from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from itertools import islice
from pathlib import Path
from typing import Any

from harness.provenance import PROJECT_PACKAGES
from harness.running.planning import RunRequest
from harness.running.runlocks import lock_room
from harness.running.worker import make_record, run_request
from harness.settings import Settings, code_environment

RETRIES = 2
"""Further attempts of a run whose worker died, before its record says ERROR."""


def _ray():
    try:
        return importlib.import_module("ray")
    except ImportError as error:
        raise RuntimeError("the ray executor needs Ray: pip install 'fedclaims[ray]'") from error


def _package_folder(name: str) -> Path:
    file = importlib.import_module(name).__file__
    if file is None:
        raise RuntimeError(f"package {name} is not imported from a folder; Ray cannot ship it to the workers")
    return Path(file).parent


def connect(settings: Settings) -> str:
    """Join the cluster at settings.ray_address (else $RAY_ADDRESS), or start a local instance
    of workers x threads CPUs; return the cluster's address.

    Workers import the driver's `harness` and `methods` (shipped with the job), so the code a
    run executes is the code its key was computed from. Does nothing if Ray is already
    initialised in this process (then a worker on other code makes ERROR records).
    """
    ray = _ray()
    if not ray.is_initialized():
        address = settings.ray_address or os.environ.get("RAY_ADDRESS")
        packages = [str(_package_folder(name)) for name in PROJECT_PACKAGES]
        environment = code_environment(settings.root, settings.allowed_code_paths)  # a spec's extension files
        options: dict[str, Any] = {"runtime_env": {"py_modules": packages, "env_vars": environment},
                                   "logging_level": "warning"}
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(address="local", num_cpus=settings.workers * settings.threads, include_dashboard=False,
                     **options)
    return ray.get_runtime_context().gcs_address


def _resources(settings: dict[str, Any]) -> dict[str, Any]:
    return {"num_cpus": settings["threads"], "num_gpus": 1 if settings["device"].startswith("cuda") else 0}


def _lost(request: RunRequest, settings: dict[str, Any], error: Exception, started: float,
          raised: bool) -> dict[str, Any]:
    """The ERROR record of a run whose task raised, or whose worker died on every attempt."""
    lines = str(error).strip().splitlines()
    retries = f"{RETRIES} retr{'y' if RETRIES == 1 else 'ies'}"
    what = "raised" if raised else f"failed {RETRIES + 1} times (1 attempt and {retries})"
    message = f"the run's Ray task {what}: {type(error).__name__}: {lines[0] if lines else ''}"
    return make_record(asdict(request), settings, "error", None,
                       {"type": type(error).__name__, "message": message, "traceback": str(error)},
                       started, settings["threads"])


def _slots(ray, options: dict[str, Any]) -> int:
    """How many runs the cluster can execute at once, as its resources stand now."""
    need, have = _resources(options), ray.cluster_resources()
    resource, each = ("GPU", need["num_gpus"]) if need["num_gpus"] else ("CPU", need["num_cpus"])
    return max(1, int(have.get(resource, 0) // max(each, 1)))


def execute_on_ray(todo: Iterable[RunRequest], settings: Settings, options: dict[str, Any],
                   finished: Callable[[RunRequest, dict[str, Any]], None],
                   status: Callable[[str], None]) -> None:
    """Submit each run as a task and hand each record to `finished` as it arrives.

    A run is drawn from `todo` (and so claimed by this driver) only when the cluster can start it
    soon: at most twice as many tasks in flight as the cluster has room for (and no more than
    the driver can hold locks for)."""
    ray = _ray()
    connect(settings)
    task = ray.remote(run_request).options(max_retries=RETRIES, retry_exceptions=False, **_resources(options))
    started = time.time()
    window = lock_room(2 * _slots(ray, options))
    queue = iter(todo)
    pending: dict[Any, RunRequest] = {}

    def submit_more() -> None:
        for request in islice(queue, window - len(pending)):
            pending[task.remote(asdict(request), options)] = request

    try:
        submit_more()
        while pending:
            status(f"{len(pending)} runs on Ray")
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                request = pending.pop(ref)
                try:
                    record = ray.get(ref)
                except ray.exceptions.RayError as error:
                    record = _lost(request, options, error, started,
                                   raised=isinstance(error, ray.exceptions.RayTaskError))
                finished(request, record)
            submit_more()
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
