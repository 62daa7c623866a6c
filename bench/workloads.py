"""Benchmark workloads: kube-scheduler's SchedulingBasic shape at several cluster sizes.

500 and 5,000 nodes are the parity files kube-scheduler v1.34.1 was measured on
(data/bench_results.json); 15,000 nodes is generated in the same shape.
"""
import copy
import gzip
import json
from functools import lru_cache
from pathlib import Path

from kschedcore.sources.files import Workload, workload_from_documents

DATA = Path(__file__).parent / "data"


@lru_cache(maxsize=None)
def parity_bench(name: str) -> Workload:
    """A benchmark workload kube-scheduler v1.34.1 was measured on (data/bench_results.json)."""
    with gzip.open(DATA / f"{name}.json.gz", "rt") as f:
        return workload_from_documents([json.load(f)], name)


@lru_cache(maxsize=None)
def basic(nodes: int) -> Workload:
    if nodes in (500, 5000):
        return parity_bench(f"bench_basic_{nodes}")
    # same node and pod shapes as bench_basic_5000, scaled: 2 pending pods per node
    template = basic(5000)
    node, pod = template.nodes[0], template.pending[0]
    w = Workload()
    for i in range(nodes):
        n = copy.deepcopy(node)
        n["metadata"]["name"] = n["metadata"]["labels"]["kubernetes.io/hostname"] = f"node-{i:05d}"
        w.nodes.append(n)
    for i in range(2 * nodes):
        p = copy.deepcopy(pod)
        p["metadata"]["name"] = f"pod-{i:05d}"
        p["metadata"]["uid"] = f"uid-pod-{i:05d}"
        w.pending.append(p)
    return w


def kube_scheduler_pods_per_second():
    """kube-scheduler v1.34.1's measured medians on this kind of machine, by (workload, pct)."""
    results = json.loads((DATA / "bench_results.json").read_text())
    return {(b["workload"], b["percentageOfNodesToScore"]): b["median"] for b in results["bench"]
            if b.get("parallelism") == 2}
