"""Bytes kschedcore keeps per node, per pending pod and per placed pod (tracemalloc, in a fresh
interpreter; the input dicts are the caller's and not counted): what a million pods cost.

Run: `python -m pytest bench/test_bench_memory.py --benchmark-only -s` (the figures print and go
to extra_info)."""
import json
import subprocess
import sys

FOOTPRINT = """
import gc, json, sys, tracemalloc
from kschedcore import Scheduler
from kschedcore._native.equivalence import COLUMN_BYTES, ROW_BYTES
from kschedcore.objects.node import parse_node
from kschedcore.sources.generator import generate
nodes, pods = int(sys.argv[1]), int(sys.argv[2])
w = generate(nodes, pods, seed=1)
gc.collect()
tracemalloc.start()
def now():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]
sched = Scheduler()
base = now()
for i, node in enumerate(w.nodes):
    sched.add_node(parse_node(node, f"nodes[{i}]"))
after_nodes = now()
for i, pod in enumerate(w.pending):
    sched.queue(sched.parse_pod(pod, f"pending[{i}]"))
after_pending = now()
results = sched.schedule_pending(records=False)
after_results = now()
placed = sum(r.node is not None for r in results)
eq = next(iter(sched.profiles.values())).kernel.equivalence      # anonymous memory: not traced
del results
after_schedule = now()
print(json.dumps({
    "bytesPerNode": (after_nodes - base) / nodes,
    "bytesPerPendingPod": (after_pending - after_nodes) / pods,
    "bytesPerPlacedPod": (after_schedule - after_nodes) / placed,
    "bytesPerResult": (after_results - after_schedule) / pods,
    "placed": placed,
    "equivalenceSlots": eq.n_slots,
    "equivalenceBytesPerNodePerSlot": ROW_BYTES + COLUMN_BYTES,
}))
"""


def test_footprint_per_node_and_pod(benchmark):
    """10,000 nodes of the generated default cluster, 100,000 pods: bytes per node (Node, table
    row, the cache's per-node structures), per pending pod (Pod and its queue entry), per placed
    pod (what stays once it is assumed: Pod, Placement, counters) and per ScheduleResult. The
    equivalence cache's slots are anonymous memory (up to 64 slots of 90 bytes per node, within
    512 MiB): reported, not traced."""
    def run():
        out = subprocess.run([sys.executable, "-c", FOOTPRINT, "10000", "100000"], check=True,
                             capture_output=True, text=True)
        return json.loads(out.stdout)

    figures = benchmark.pedantic(run, rounds=1, iterations=1)
    assert figures["placed"] > 50_000
    for name, value in figures.items():
        benchmark.extra_info[name] = round(value, 1)
    print(figures)
