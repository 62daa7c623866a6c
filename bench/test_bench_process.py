"""Whole-process figures: import + first decision, and peak memory of `kschedcore simulate`."""
import json
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


#: runs `kschedcore simulate` and reports its own peak RSS (VmHWM: the process's high-water mark,
#: unlike ru_maxrss, which on Linux carries over the forking parent's peak -- here pytest's)
SIMULATE_WITH_PEAK = """
import runpy, sys
sys.argv = ["kschedcore"] + sys.argv[1:]
try:
    runpy.run_module("kschedcore", run_name="__main__")
except SystemExit:
    pass
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
print("VmHWM", hwm, file=sys.stderr)
"""


def test_simulate_peak_memory(benchmark):
    """Peak RSS of `kschedcore simulate` on bench_basic_5000 (5,000 nodes, 10,000 pods)."""
    def run():
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", SIMULATE_WITH_PEAK, "simulate",
                              str(DATA / "bench_basic_5000.json.gz"), "-o", "json"],
                             check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        peak_kib = int(out.stderr.split("VmHWM")[-1].split()[0])
        return json.loads(out.stdout), wall, peak_kib

    report, wall, peak_kib = benchmark.pedantic(run, rounds=3, iterations=1)
    assert report["scheduled"] == 10000
    benchmark.extra_info["peakRssMiB"] = round(peak_kib / 1024, 1)
    benchmark.extra_info["simulatePodsPerSecond"] = report["podsPerSecond"]


def test_capacity_alibaba_whole_process(benchmark, tmp_path):
    """`kschedcore capacity` end to end (start, load, simulate, print) on the Alibaba GPU cluster
    (1,523 nodes as a kind: List), CPU pod: 124,768 instances. cluster-capacity's Run() alone
    took 268.8 s for it on this machine (tests/data/capacity/README.md)."""
    from kschedcore.sources.alibaba import load_alibaba
    nodes = load_alibaba(DATA / "openb_node_list_all_node.csv.gz").nodes
    (tmp_path / "nodes.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    (tmp_path / "pod.json").write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}))

    def run():
        out = subprocess.run([sys.executable, "-m", "kschedcore", "capacity", str(tmp_path / "nodes.json"),
                              "--podspec", str(tmp_path / "pod.json")], check=True, capture_output=True, text=True)
        assert out.stdout == "124768\n"

    benchmark.pedantic(run, rounds=3, iterations=1)
