"""A sweep on this machine: a process pool (`--jobs N`), or in this process for one job.

Workers come from a fork server that has imported the package once (where the platform has
one; else they are spawned): a worker starts in milliseconds, not the half second an import
takes, and never inherits a thread of the driver (a fork of a process with threads -- a
progress bar's, a kernel's helper -- may deadlock). Each workload's payload is written once to a
file in shared memory that every worker maps: nothing is copied to a worker, however many there
are. Tasks are submitted longest first (`order`), so a long task does not start last and leave
the other workers idle; rows still come back in grid order.
"""
from __future__ import annotations

import mmap
import multiprocessing
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from .tasks import Plan, Task, attempt, order

#: this worker's workloads: name -> the mapped payload (set once, when the worker starts)
WORKER_PAYLOADS: dict = {}


def attach(paths: dict) -> None:
    """The worker's initializer: maps each workload's payload file (read-only, shared)."""
    for name, path in paths.items():
        with open(path, "rb") as f:
            WORKER_PAYLOADS[name] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def run_in_worker(task: Task) -> dict:
    return attempt(task, WORKER_PAYLOADS[task.workload])


def pool_context() -> Any:
    """The fork server preloaded with the sweep's code where available, else spawn."""
    if sys.platform != "win32" and "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


@contextmanager
def shared_payloads(payloads: dict) -> Iterator[dict]:
    """Each payload written once to a file in shared memory (/dev/shm where there is one);
    yields name -> path; the files are removed on the way out."""
    folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    paths: dict = {}
    try:
        for name, payload in payloads.items():
            fd, path = tempfile.mkstemp(prefix="kschedcore-sweep-", suffix=".pickle", dir=folder)
            paths[name] = path
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
        yield paths
    finally:
        for path in paths.values():
            try:
                os.unlink(path)
            except OSError:
                pass


def run_local(plan: Plan, jobs: int, on_result: Callable[[dict], Any]) -> None:
    """Runs every task; on_result(result) as each one ends (a row, or {"task", "error"})."""
    if jobs == 1 or len(plan.tasks) == 1:
        for task in plan.tasks:
            on_result(attempt(task, plan.payloads[task.workload]))
        return
    with shared_payloads(plan.payloads) as paths, \
            ProcessPoolExecutor(min(jobs, len(plan.tasks)), mp_context=pool_context(), initializer=attach,
                                initargs=(paths,)) as pool:
        pending = {pool.submit(run_in_worker, task) for task in order(plan)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    on_result(future.result())
        except BaseException:
            for future in pending:      # a refused task or ^C: the queued ones need not run
                future.cancel()
            raise
