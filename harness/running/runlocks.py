"""Per-run locks, so that invocations sharing a results store run each missing run once.

Before it runs a missing run, an invocation takes the run's lock without waiting. If it gets
it, it reads the store again (another invocation may have just finished the run) and runs it,
holding the lock until the record is stored. If another invocation holds it, the run is
deferred; once its own runs are done, the invocation waits for each deferred lock and reads the
store again: a record there was run by the other invocation (reused), else the holder failed or
died and the run is claimed again here. A waiting invocation holds no lock, so two never wait for
each other.

A lock is an flock on <store>/locks/<key[:2]>/<key>.lock (filelock), which the kernel releases
when its holder exits, even when killed with SIGKILL, so a dead holder blocks nobody. Lock files
stay on disk after release: the flock, not the file, is the lock, and removing a file another
process may be waiting on would let two processes hold "the same" lock.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from filelock import FileLock, Timeout

from harness.running.store import ResultStore


class Run(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def label(self) -> str: ...


RunT = TypeVar("RunT", bound=Run)


def holder_pid(path: Path) -> int | None:
    """The process holding the flock on path, as Linux's /proc/locks says; None where it cannot tell."""
    try:
        status = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    inode = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for fields in map(str.split, lines):
        if "FLOCK" in fields and "->" not in fields and inode in fields:  # "->" marks a waiter, not a holder
            return int(fields[fields.index(inode) - 1])
    return None


def lock_room(wanted: int) -> int:
    """How many run locks (one open file each) this process may hold at once, up to `wanted`: at
    most half its limit of open files, raised first toward the hard limit where it is too low."""
    try:
        import resource
    except ImportError:  # not Unix: no such limit to mind
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 2 * wanted:
        raised = 2 * wanted if hard == resource.RLIM_INFINITY else min(2 * wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return wanted if soft == resource.RLIM_INFINITY else max(1, min(wanted, soft // 2))


class RunClaims(Generic[RunT]):
    """The runs of one invocation whose locks it holds, and those it found held by another."""

    def __init__(self, store: ResultStore, stored_elsewhere: Callable[[RunT], None]) -> None:
        self.store = store
        self.stored_elsewhere = stored_elsewhere
        self.held: dict[str, FileLock] = {}
        self.deferred: list[RunT] = []

    def _lock(self, key: str) -> FileLock:
        path = self.store.lock_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(path)

    def claimed(self, runs: Iterable[RunT]) -> Iterator[RunT]:
        """The runs to compute here, each claimed as it is drawn: pull one only when it can start,
        so the locks held (one file descriptor each) are no more than the runs in flight."""
        for run in runs:
            try:
                lock = self._lock(run.key)
                lock.acquire(blocking=False)
            except Timeout:
                self.deferred.append(run)
                continue
            except PermissionError as error:
                where = error.filename or self.store.lock_path(run.key)
                raise ValueError(f"cannot take the lock of run {run.key} at {where}: "
                                 "permission denied; make the store's locks/ folder writable, or pass a store you "
                                 "can write with --store") from None
            if self.store.reusable(run.key) is not None:
                lock.release()
                self.stored_elsewhere(run)
                continue
            self.held[run.key] = lock
            yield run

    def release(self, key: str) -> None:
        """Let others have the run (call once its record is stored)."""
        lock = self.held.pop(key, None)
        if lock is not None:
            lock.release()

    def release_all(self) -> None:
        for key in list(self.held):
            self.release(key)

    def await_deferred(self, status: Callable[[str], None]) -> list[RunT]:
        """Wait for every deferred run's holder to let go; return the runs still without a usable
        record (their holder failed or died), to be claimed again."""
        waiting, self.deferred = self.deferred, []
        again = []
        for index, run in enumerate(waiting):
            lock = self._lock(run.key)
            pid = holder_pid(Path(lock.lock_file))
            holder = f"another invocation (process {pid})" if pid else "another invocation"
            status(f"waiting for {len(waiting) - index} of {len(waiting)} runs {holder} on this store is running: "
                   f"{run.label}")
            with lock:
                record = self.store.reusable(run.key)
            if record is None:
                again.append(run)
            else:
                self.stored_elsewhere(run)
        return again
