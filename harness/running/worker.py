"""One run, in whatever process executes it: check the code, run the runner, make the record.

Every executor (harness.running.execution's local and process pool, harness.running.ray_executor's Ray tasks)
calls `run_request` and hands its record back to the driver, which alone writes the store. A
worker whose code or libraries differ from the ones the run's key was computed from makes an
ERROR record (WorkerMismatch) instead of a record under a key that misdescribes it.
"""
from __future__ import annotations

import importlib
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import WorkerMismatch
from harness.kinds import kind as experiment_kind
from harness.numerics import numerics
from harness.provenance import library_versions, machine
from harness.runners.context import RunContext
from harness.running.allocator import tune_allocator
from harness.running.planning import run_code


def _context(settings: dict[str, Any], progress: Callable[[float, str], None] | None = None) -> RunContext:
    data_dir = settings["data_dir"]
    return RunContext(data_dir=Path(data_dir) if data_dir else None, cache_dir=Path(settings["cache_dir"]) / "data",
                      download=settings["download"], device=settings["device"],
                      **({"progress": progress} if progress else {}))


def run_request(request: dict[str, Any], settings: dict[str, Any],
                progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """Execute one run and return its record (never raises for a failing run)."""
    from threadpoolctl import threadpool_limits
    _configure_process(settings["device"], settings["threads"])
    with threadpool_limits(limits=settings["threads"]):
        return _run_request(request, settings, progress)


def _configure_process(device: str, threads: int) -> None:
    """Thread count, the C allocator (`tune_allocator`), and on CUDA kernels whose results do
    not depend on scheduling."""
    import torch
    tune_allocator()
    torch.set_num_threads(threads)
    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.use_deterministic_algorithms(True, warn_only=True)


def _check_worker(request: dict[str, Any], settings: dict[str, Any]) -> None:
    """Raise WorkerMismatch if this process would not compute what the run's key describes."""
    kind = experiment_kind(request["kind"])
    code = run_code(kind, kind.config_model.model_validate(request["config"]), reread=True)
    if code != request["code"]:
        changed = sorted(name for name in set(code) | set(request["code"])
                         if code.get(name) != request["code"].get(name))
        raise WorkerMismatch(f"this worker's source of {', '.join(changed)} differs from the one the run was "
                             "planned with; run every worker on the driver's code")
    expected = settings.get("libraries")
    if expected is not None and library_versions() != expected:
        changed = sorted(name for name in expected if library_versions().get(name) != expected[name])
        raise WorkerMismatch("this worker's library versions differ from the driver's: " + ", ".join(
            f"{name} {library_versions().get(name)} (driver: {expected[name]})" for name in changed))


def _run_request(request: dict[str, Any], settings: dict[str, Any],
                 progress: Callable[[float, str], None] | None) -> dict[str, Any]:
    import torch
    kind = experiment_kind(request["kind"])
    started = time.time()
    try:
        _check_worker(request, settings)
        module = importlib.import_module(kind.runner)
        config = module.Config.model_validate(request["config"])
        result = module.run(config, request["seed"], _context(settings, progress))
        status, error = "ok", None
    except Exception as exception:  # noqa: BLE001 - every failure of a run is recorded, not raised
        from harness.datasets.errors import DatasetUnavailable
        status = "unavailable" if isinstance(exception, DatasetUnavailable) else "error"
        result, error = None, {"type": type(exception).__name__, "message": str(exception),
                               "traceback": traceback.format_exc(limit=20)}
    return make_record(request, settings, status, result, error, started, torch.get_num_threads())


def make_record(request: dict[str, Any], settings: dict[str, Any], status: str, result: dict[str, Any] | None,
                error: dict[str, str] | None, started: float, threads: int) -> dict[str, Any]:
    """A run's record: the request's identity, the outcome, and where and how it was computed."""
    record: dict[str, Any] = {k: request[k]
                              for k in ("key", "experiment", "variant", "seed", "profile", "kind", "config")}
    record.update(status=status, result=result, error=error)
    record["provenance"] = {
        "behaviour": request["behaviour"], "code": request["code"], "datasets": request["datasets"],
        "libraries": library_versions(), "machine": machine(), "device": settings["device"],
        "threads": settings["threads"], "numerics": numerics(settings["device"], threads),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "wall_seconds": round(time.time() - started, 3),
    }
    return record


