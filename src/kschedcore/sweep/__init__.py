"""Sweeps: a grid of workloads × configurations × percentageOfNodesToScore × seeds × modes
(schedule, queue, replay by arrival, capacity questions), one result row per combination,
run by a local process pool or on a Ray cluster with the same rows.

    from kschedcore import sweep

    plan = sweep.plan(sweep.load_sweep("sweep.yaml"))
    result = sweep.run(plan, jobs=2)            # or ray=True, ray_address="10.0.0.1:6379"
    sweep.write_table(result.rows, "results.csv")
"""
import os
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from ..errors import ValidationError
from .extras import MissingExtra, require
from .local import run_local
from .ray_runner import run_ray
from .results import print_table, summary_line, table_format, write_json, write_plot, write_table
from .spec import Mode, Sweep, WorkloadSpec, load_sweep
from .tasks import COLUMNS, TIMING_COLUMNS, Plan, Task, decisions_digest, plan

__all__ = ["COLUMNS", "MissingExtra", "Mode", "Plan", "Result", "Sweep", "TIMING_COLUMNS", "Task", "WorkloadSpec",
           "decisions_digest", "describe", "load_sweep", "plan", "print_table", "require", "run", "summary_line",
           "table_format", "write_json", "write_plot", "write_table"]


@dataclass
class Result:
    """A sweep's outcome: one row per task in grid order (`COLUMNS`), and the run's summary
    (runner, tasks, wall seconds, the tasks' own seconds summed, tasks/s, pods/s)."""
    rows: list          # one per task, in grid order
    summary: dict       # the runner and the sweep's throughput


def describe(task: Task) -> str:
    """A task in words, for an error about it."""
    pct = "" if task.percentage is None else f", percentageOfNodesToScore {task.percentage}"
    return (f"task {task.index} (workload {task.workload}, configuration {task.configuration}{pct}, "
            f"seed {task.seed}, mode {task.mode.kind})")


def run(plan: Plan, *, jobs: int | None = None, ray: bool = False, ray_address: str | None = None,
        on_row: Callable[[dict], Any] | None = None) -> Result:
    """Runs the plan's tasks (locally on `jobs` processes, default os.cpu_count(); or on Ray);
    on_row(row) as each task ends. A task whose input is refused stops the sweep with a
    ValidationError naming the task."""
    rows: list[Any] = [None] * len(plan.tasks)

    def on_result(result: dict) -> None:
        if "error" in result:
            raise ValidationError(str(plan.sweep.path), describe(plan.tasks[result["task"]]), result["error"])
        rows[result["task"]] = result
        if on_row is not None:
            on_row(result)

    start = time.perf_counter()
    if ray:
        runner = {"runner": "ray", **run_ray(plan, ray_address, on_result)}
    else:
        jobs = jobs or os.cpu_count() or 1
        run_local(plan, jobs, on_result)
        runner = {"runner": "local", "jobs": min(jobs, len(plan.tasks))}
    wall = time.perf_counter() - start
    pods = sum(r["pods"] for r in rows)
    return Result(rows, {"sweep": str(plan.sweep.path), **runner, "tasks": len(rows), "pods": pods,
                         "wallSeconds": round(wall, 4), "taskSeconds": round(sum(r["wallSeconds"] for r in rows), 4),
                         "tasksPerSecond": round(len(rows) / wall, 3), "podsPerSecond": round(pods / wall, 1)})
