"""Run planned requests through an executor, reusing finished records from the store.

Executors: `local` (in this process, one run after another), `processes` (a pool of
worker processes, each with its own thread budget), `ray` (tasks on a Ray cluster, if
installed: `harness.running.ray_executor`); each calls `harness.running.worker.run_request` wherever the run
executes. Records are written by this process only, as each run
finishes, so an interrupted set of runs resumes where it stopped. This process holds each
run's lock (`harness.running.runlocks`) while the run executes, wherever it executes, so invocations
sharing a store run each missing run once. A run that raises becomes an ERROR record and the
others go on; a run whose data set is unavailable becomes an `unavailable` record. A worker
whose code or libraries differ from the ones the run's key was computed from makes an ERROR
record instead of a record under a key that misdescribes it.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from itertools import islice
from multiprocessing import get_context
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.kinds import kind as experiment_kind
from harness.provenance import library_versions
from harness.running.planning import RunRequest
from harness.running.runlocks import RunClaims, lock_room
from harness.running.store import ResultStore
from harness.running.worker import run_request
from harness.settings import Settings

EXECUTORS = ("local", "processes", "ray")


@dataclass
class ExecutionSummary:
    """What happened to the distinct runs of one invocation, over all its dependency waves."""

    reused: int = 0
    run_elsewhere: int = 0
    """Of the reused, those another invocation on the same store ran while this one waited."""
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
        elsewhere = f"; {self.run_elsewhere} of the reused run by another invocation" if self.run_elsewhere else ""
        return (f"{self.total} runs: {self.reused} reused, {self.ran} run, {self.failed} failed, "
                f"{self.unavailable} without data; {self.seconds:.1f} s{elsewhere}")


def _settings_dict(settings: Settings) -> dict[str, Any]:
    return {"data_dir": str(settings.data_dir) if settings.data_dir else None, "cache_dir": str(settings.cache_dir),
            "download": settings.download, "device": settings.device, "threads": settings.threads,
            "libraries": library_versions()}


def execute(requests: Iterable[RunRequest], store: ResultStore, settings: Settings,
            console: Console | None = None, summary: ExecutionSummary | None = None) -> ExecutionSummary:
    """Make sure every request has a record in the store; return what was done.

    Passing the summary of an earlier wave adds this wave to it; a run it already counted
    is not counted again. A run another invocation on the same store is running is waited
    for, not repeated.
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
        if store.read_only():
            raise ValueError(f"results store {store.root} is read-only and lacks {len(todo)} of the runs the selection "
                             f"needs (first: {todo[0].label}); pass a store you can write with --store")
        store.check()
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=False, disable=not console.is_terminal) as progress:
            RunBatch(todo, store, settings, console, summary, progress).run()
    summary.seconds += time.time() - started
    summary.events = list(store.events)
    return summary


class RunBatch:
    """The missing runs of one wave as they execute: each claimed (`RunClaims`) before it runs, stored and
    counted in the summary as it finishes, the progress bar advanced; then those other invocations held and
    left unrun."""

    def __init__(self, todo: list[RunRequest], store: ResultStore, settings: Settings, console: Console,
                 summary: ExecutionSummary, progress: Progress) -> None:
        self.todo, self.store, self.settings, self.console = todo, store, settings, console
        self.summary, self.progress = summary, progress
        self.task = progress.add_task(f"running {len(todo)} runs ({summary.reused} reused)", total=len(todo))
        self.claims = RunClaims(store, self.stored_elsewhere)
        self.finished_before = self._finished()  # by earlier waves
        self.started = time.monotonic()

    def run(self) -> None:
        runner = {"local": _execute_local, "processes": _execute_pool, "ray": _execute_ray}[self.settings.executor]
        # `local` runs everything one at a time in this process (where a test's patches reach); the others
        # give each timed run a process of its own
        alone_runner = _execute_local if self.settings.executor == "local" else _execute_alone
        pending = self.todo
        try:
            while pending:
                shared, alone = _timed_apart(pending)
                runner(self.claims.claimed(shared), self.settings, self.progress, self.task, self.finished)
                alone_runner(self.claims.claimed(alone), self.settings, self.progress, self.task, self.finished)
                if self.claims.deferred:
                    count = len(self.claims.deferred)
                    self.console.print(f"{count} run{' is' if count == 1 else 's are'} being run by another "
                                       "invocation on this store; waiting for them")
                pending = self.claims.await_deferred(lambda text: self.progress.update(self.task, description=text))
        except KeyboardInterrupt:
            self.console.print(f"[yellow]interrupted[/yellow]: {self._finished() - self.finished_before} of "
                               f"{len(self.todo)} runs finished and stored; run the same command again to resume")
            raise
        finally:
            self.claims.release_all()

    def stored_elsewhere(self, request: RunRequest) -> None:
        self.summary.reused += 1
        self.summary.run_elsewhere += 1
        self.progress.advance(self.task)

    def finished(self, request: RunRequest, record: dict[str, Any]) -> None:
        self.store.put(record)
        self.claims.release(request.key)
        status = record["status"]
        if status == "ok":
            self.summary.ran += 1
        elif status == "unavailable":
            self.summary.unavailable += 1
        else:
            self.summary.failed += 1
            self.console.print(f"[red]ERROR[/red] {request.label}: {record['error']['message']}")
        self.progress.advance(self.task)
        if not self.console.is_terminal:  # a log or a pipe has no bar: a line per run, unwrapped
            self.console.print(f"{self._finished() - self.finished_before}/{len(self.todo)} runs finished "
                               f"({time.monotonic() - self.started:.0f} s): {request.label}: {status}",
                               highlight=False, soft_wrap=True)

    def _finished(self) -> int:
        return self.summary.ran + self.summary.failed + self.summary.unavailable


def _timed_apart(todo: list[RunRequest]) -> tuple[list[RunRequest], list[RunRequest]]:
    """(runs the executor may run side by side, runs that time themselves): the latter run one at a time once
    the others are done, since a run's seconds measured beside another run are not its method's seconds."""
    shared: list[RunRequest] = []
    timed: list[RunRequest] = []
    for request in todo:
        (timed if experiment_kind(request.kind).timed else shared).append(request)
    return shared, timed


def _execute_local(todo, settings, progress, task, finished) -> None:
    options = _settings_dict(settings)
    for request in todo:
        progress.update(task, description=request.label)

        def report(fraction: float, text: str, label=request.label) -> None:
            progress.update(task, description=f"{label}: {text}")

        finished(request, run_request(asdict(request), options, report))


def _execute_alone(todo, settings, progress, task, finished) -> None:
    """Runs that time themselves: one at a time, each in a process of its own, so that none shares the CPU
    with another run of this invocation and each pays a process's first-run costs alike."""
    _execute_pool(todo, replace(settings, workers=1), progress, task, finished, fresh_process=True)


def _execute_pool(todo, settings, progress, task, finished, fresh_process: bool = False) -> None:
    """Runs in a pool of worker processes; a run is drawn from `todo` (and so claimed) only when
    the pool can start it soon: at most twice as many runs in flight as workers."""
    options = _settings_dict(settings)
    workers = max(1, settings.workers)
    window = lock_room(2 * workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                               max_tasks_per_child=1 if fresh_process else None)
    pending: dict[Future, RunRequest] = {}
    queue = iter(todo)

    def submit_more() -> None:
        for request in islice(queue, window - len(pending)):
            pending[pool.submit(run_request, asdict(request), options)] = request

    try:
        submit_more()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                request = pending.pop(future)
                finished(request, future.result())
            submit_more()
            running = [r.label for r in pending.values()][:workers]
            progress.update(task, description=", ".join(running) or "done")
    except BaseException:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _execute_ray(todo, settings, progress, task, finished) -> None:
    from harness.running.ray_executor import execute_on_ray

    def status(text: str) -> None:
        progress.update(task, description=text)

    execute_on_ray(todo, settings, _settings_dict(settings), finished, status)
