"""Sweeps on this machine's cores: a 32-task grid (500 generated nodes, 3,000 pods; two
configurations x 8 seeds x schedule and queue) at 1, 2, 4, .. jobs up to the CPU count --
wall seconds, tasks/s, the speedup over one job and the share of the workers' time spent in
tasks (taskSeconds / (jobs x wall)); and what starting a pool of workers costs.

On a machine with many cores this is the scaling figure: `python -m pytest
bench/test_bench_sweep.py --benchmark-only`.
"""
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, wait
from pathlib import Path

import pytest
import yaml

from kschedcore import sweep
from kschedcore.sweep import local

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sweep"
CPUS = os.cpu_count() or 1
JOBS = sorted({1, *(j for j in (2, 4, 8, 16, 32, 64) if j <= CPUS)})
BASELINE: dict = {}


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    (folder / "bin-packing.yaml").write_text((EXAMPLES / "bin-packing.yaml").read_text())
    (folder / "grid.yaml").write_text(yaml.safe_dump({
        "workloads": {"generated-500": {"generate": {"nodes": 500, "pods": 3000, "seed": 1}}},
        "configurations": {"default": "default", "bin-packing": "bin-packing.yaml"},
        "seeds": {"from": 1, "to": 8}, "modes": ["schedule", "queue"]}))
    return sweep.plan(sweep.load_sweep(folder / "grid.yaml"))


@pytest.mark.parametrize("jobs", JOBS)
def test_sweep_by_jobs(benchmark, plan, jobs):
    state = {}

    def run():
        state["result"] = sweep.run(plan, jobs=jobs)

    benchmark.pedantic(run, rounds=3, iterations=1)
    summary, median = state["result"].summary, benchmark.stats.stats.median
    if jobs == 1:
        BASELINE["median"] = median
    benchmark.extra_info.update(tasks=summary["tasks"], tasksPerSecond=round(summary["tasks"] / median, 2),
                                busyShare=round(summary["taskSeconds"] / (summary["jobs"] * summary["wallSeconds"]), 3))
    if "median" in BASELINE:
        benchmark.extra_info["speedup"] = round(BASELINE["median"] / median, 2)


def _ready(context, workers):
    """Seconds from creating a pool to every worker having run a task."""
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=context, initializer=local.attach, initargs=({},)) as pool:
        wait([pool.submit(time.sleep, 0.05) for _ in range(workers)])
        return time.perf_counter() - start


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_pool_start(benchmark, method):
    """Starting max(2, CPU count) workers: forked from the fork server (the sweep's pool) or
    spawned (each imports the package). Each worker's task sleeps 50 ms, so that every worker
    runs one: the figures include it."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    context = local.pool_context() if method == "forkserver" else multiprocessing.get_context("spawn")
    workers = max(2, CPUS)
    benchmark.pedantic(_ready, args=(context, workers), rounds=3, iterations=1)
    benchmark.extra_info["workers"] = workers
