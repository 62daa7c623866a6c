"""Whole-process figures: import + first decision, and peak memory of `kschedcore simulate`."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).parent / "data"

FIRST_DECISION = """
import time
t0 = time.perf_counter()
import kschedcore
node = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
pod = {"kind": "Pod", "metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c", "image": "nginx",
       "resources": {"requests": {"cpu": "100m"}}}]}}
result = kschedcore.Scheduler([node]).schedule(pod)
assert result.node == "n1"
print(time.perf_counter() - t0)
"""


def test_import_and_first_decision(benchmark):
    """A fresh interpreter: import kschedcore and make one decision (no JIT on this path)."""
    def run():
        out = subprocess.run([sys.executable, "-c", FIRST_DECISION], check=True, capture_output=True, text=True)
        return float(out.stdout)

    inner = benchmark.pedantic(run, rounds=5, iterations=1)
    benchmark.extra_info["inProcessSeconds"] = round(inner, 3)


def test_simulate_peak_memory(benchmark):
    """Peak RSS of `kschedcore simulate` on bench_basic_5000 (5,000 nodes, 10,000 pods)."""
    def run():
        # wait4 gives this child's own peak (RUSAGE_CHILDREN would be the largest child so far)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "kschedcore", "simulate", str(DATA / "bench_basic_5000.json.gz"),
                                 "-o", "json"], stdout=subprocess.PIPE, text=True)
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        assert os.waitstatus_to_exitcode(status) == 0
        proc.returncode = 0
        return json.loads(stdout), wall, usage.ru_maxrss

    report, wall, peak_kib = benchmark.pedantic(run, rounds=3, iterations=1)
    assert report["scheduled"] == 10000
    benchmark.extra_info["peakRssMiB"] = round(peak_kib / 1024, 1)
    benchmark.extra_info["simulatePodsPerSecond"] = report["podsPerSecond"]
