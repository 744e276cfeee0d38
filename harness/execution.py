"""Run planned requests through an executor, reusing finished records from the store.

Executors: `local` (in this process, one run after another), `processes` (a pool of
worker processes, each with its own thread budget), `ray` (a Ray cluster, if installed).
Records are written by this process only, as each run finishes, so an interrupted
set of runs resumes where it stopped. A run that raises becomes an ERROR record and
the others go on; a run whose data set is unavailable becomes an `unavailable` record.
"""
from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.kinds import KINDS
from harness.planning import RunRequest
from harness.provenance import library_versions, machine
from harness.runners.context import RunContext
from harness.settings import Settings
from harness.store import ResultStore

EXECUTORS = ("local", "processes", "ray")


@dataclass
class ExecutionSummary:
    """What happened to the distinct runs of one invocation, over all its dependency waves."""

    reused: int = 0
    ran: int = 0
    failed: int = 0
    unavailable: int = 0
    seconds: float = 0.0
    events: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set, repr=False)

    @property
    def total(self) -> int:
        return self.reused + self.ran + self.failed + self.unavailable

    def text(self) -> str:
        return (f"{self.total} runs: {self.reused} reused, {self.ran} run, {self.failed} failed, "
                f"{self.unavailable} without data; {self.seconds:.1f} s")


def _context(settings: dict[str, Any], progress: Callable[[float, str], None] | None = None) -> RunContext:
    from pathlib import Path
    data_dir = settings["data_dir"]
    return RunContext(data_dir=Path(data_dir) if data_dir else None, cache_dir=Path(settings["cache_dir"]) / "data",
                      download=settings["download"], device=settings["device"],
                      **({"progress": progress} if progress else {}))


def run_request(request: dict[str, Any], settings: dict[str, Any],
                progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
    """Execute one run and return its record (never raises for a failing run)."""
    import torch
    from threadpoolctl import threadpool_limits
    torch.set_num_threads(settings["threads"])
    with threadpool_limits(limits=settings["threads"]):
        return _run_request(request, settings, progress)


def _run_request(request: dict[str, Any], settings: dict[str, Any],
                 progress: Callable[[float, str], None] | None) -> dict[str, Any]:
    import torch
    kind = KINDS[request["kind"]]
    started = time.time()
    record: dict[str, Any] = {k: request[k] for k in ("key", "experiment", "variant", "seed", "profile", "kind", "config")}
    try:
        module = importlib.import_module(kind.runner)
        config = module.Config.model_validate(request["config"])
        result = module.run(config, request["seed"], _context(settings, progress))
        record.update(status="ok", result=result, error=None)
    except Exception as error:  # noqa: BLE001 - every failure of a run is recorded, not raised
        from harness.datasets.errors import DatasetUnavailable
        status = "unavailable" if isinstance(error, DatasetUnavailable) else "error"
        record.update(status=status, result=None,
                      error={"type": type(error).__name__, "message": str(error),
                             "traceback": traceback.format_exc(limit=20)})
    record["provenance"] = {
        "code": request["code"], "datasets": request["datasets"], "libraries": library_versions(),
        "machine": machine(), "device": settings["device"], "threads": torch.get_num_threads(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "wall_seconds": round(time.time() - started, 3),
    }
    return record


def _settings_dict(settings: Settings) -> dict[str, Any]:
    return {"data_dir": str(settings.data_dir) if settings.data_dir else None, "cache_dir": str(settings.cache_dir),
            "download": settings.download, "device": settings.device, "threads": settings.threads}


def execute(requests: Iterable[RunRequest], store: ResultStore, settings: Settings,
            console: Console | None = None, summary: ExecutionSummary | None = None) -> ExecutionSummary:
    """Make sure every request has a record in the store; return what was done.

    Passing the summary of an earlier wave adds this wave to it; a run it already counted
    is not counted again.
    """
    console = console or Console(stderr=True)
    summary = summary if summary is not None else ExecutionSummary()
    started = time.time()
    todo = []
    for request in requests:
        if request.key in summary.seen:
            continue
        summary.seen.add(request.key)
        if store.reusable(request.key) is not None:
            summary.reused += 1
        else:
            todo.append(request)
    if todo:
        if settings.executor not in EXECUTORS:
            raise ValueError(f"unknown executor {settings.executor!r}; valid: {', '.join(EXECUTORS)}")
        runner = {"local": _execute_local, "processes": _execute_pool, "ray": _execute_ray}[settings.executor]
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=False) as progress:
            task = progress.add_task(f"running {len(todo)} runs ({summary.reused} reused)", total=len(todo))

            def finished(request: RunRequest, record: dict[str, Any]) -> None:
                store.put(record)
                status = record["status"]
                if status == "ok":
                    summary.ran += 1
                elif status == "unavailable":
                    summary.unavailable += 1
                else:
                    summary.failed += 1
                    console.print(f"[red]ERROR[/red] {request.label}: {record['error']['message']}")
                progress.advance(task)

            try:
                runner(todo, settings, progress, task, finished)
            except KeyboardInterrupt:
                done = summary.ran + summary.failed + summary.unavailable
                console.print(f"[yellow]interrupted[/yellow]: {done} of {len(todo)} runs finished and stored; "
                              "run the same command again to resume")
                raise
    summary.seconds += time.time() - started
    summary.events = list(store.events)
    return summary


def _execute_local(todo, settings, progress, task, finished) -> None:
    options = _settings_dict(settings)
    for request in todo:
        progress.update(task, description=request.label)

        def report(fraction: float, text: str, label=request.label) -> None:
            progress.update(task, description=f"{label}: {text}")

        finished(request, run_request(asdict(request), options, report))


def _execute_pool(todo, settings, progress, task, finished) -> None:
    options = _settings_dict(settings)
    pool = ProcessPoolExecutor(max_workers=max(1, settings.workers), mp_context=get_context("spawn"))
    pending: dict[Future, RunRequest] = {}
    try:
        for request in todo:
            pending[pool.submit(run_request, asdict(request), options)] = request
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                request = pending.pop(future)
                finished(request, future.result())
                running = [r.label for r in pending.values()][: max(1, settings.workers)]
                progress.update(task, description=", ".join(running) or "done")
    except BaseException:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _execute_ray(todo, settings, progress, task, finished) -> None:
    try:
        ray = importlib.import_module("ray")
    except ImportError as error:
        raise RuntimeError("the ray executor needs Ray: pip install 'fedclaims[ray]'") from error
    if not ray.is_initialized():
        ray.init()
    options = _settings_dict(settings)
    remote = ray.remote(num_cpus=options["threads"])(run_request)
    pending = {remote.remote(asdict(request), options): request for request in todo}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            finished(pending.pop(ref), ray.get(ref))
