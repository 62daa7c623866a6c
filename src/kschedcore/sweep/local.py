"""A sweep on this machine: a process pool (`--jobs N`), or in this process for one job.

Workers are spawned, not forked (a fork of a process with threads -- a progress bar's, a
kernel's helper -- may deadlock), and each gets every workload's payload once, through the
pool's initializer; a task carries only its axes.
"""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from .tasks import Plan, Task, attempt

#: this worker's workloads: name -> pickled Inputs (set once, when the worker starts)
WORKER_PAYLOADS: dict = {}


def keep_payloads(payloads: dict) -> None:
    WORKER_PAYLOADS.update(payloads)


def run_in_worker(task: Task) -> dict:
    return attempt(task, WORKER_PAYLOADS[task.workload])


def run_local(plan: Plan, jobs: int, on_result: Callable[[dict], Any]) -> None:
    """Runs every task; on_result(result) as each one ends (a row, or {"task", "error"})."""
    if jobs == 1 or len(plan.tasks) == 1:
        for task in plan.tasks:
            on_result(attempt(task, plan.payloads[task.workload]))
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(jobs, len(plan.tasks)), mp_context=context, initializer=keep_payloads,
                             initargs=(plan.payloads,)) as pool:
        pending = {pool.submit(run_in_worker, task) for task in plan.tasks}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    on_result(future.result())
        except BaseException:
            for future in pending:      # a refused task or ^C: the queued ones need not run
                future.cancel()
            raise
