"""Capacity (kschedcore.capacity): cluster-capacity's question -- how many copies of a pod fit --
on 5,000 nodes (50,000 instances), on the Alibaba GPU cluster 2023 (1,523 nodes, every
instance that fits) and on 5,000 nodes whose GPUs are DRA devices. The cluster is loaded in setup; the timing is the simulation (`run`), as
cluster-capacity's `Run()` is. cluster-capacity's own Run() on the Alibaba cluster, measured on
this machine (tests/data/capacity/README.md): 21.7 s for the GPU pod (6,210 instances), 268.8 s
for the CPU pod (124,768 instances).
"""
from pathlib import Path

from kschedcore import capacity
from kschedcore.scheduler import Scheduler
from kschedcore.sources.alibaba import load_alibaba
from kschedcore.sources.files import load_workload

from workloads import dra_gpus

DATA = Path(__file__).parent / "data"


def _template(name, requests, limits=None):
    res = {"requests": requests, **({"limits": limits} if limits else {})}
    return capacity.Template(capacity.podspec.default_pod(
        {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}}), name)


def _bench(benchmark, nodes, template, max_limit, make=None):
    state = {}

    def setup():
        state["sched"] = make() if make is not None else Scheduler(nodes)
        return (), {}

    def run():
        state["est"] = capacity.run(state["sched"], [template], max_limit)

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    n = state["est"].instances()
    benchmark.extra_info["instances"] = n
    benchmark.extra_info["podsPerSecond"] = round(n / benchmark.stats.stats.median)
    return n


def test_capacity_5000_nodes_50000_instances(benchmark):
    nodes = load_workload(DATA / "bench_basic_5000.json.gz").nodes
    n = _bench(benchmark, nodes, _template("web", {"cpu": "100m", "memory": "128Mi"}), 50000)
    assert n == 50000


def test_capacity_alibaba_gpu_pod(benchmark):
    nodes = sorted(load_alibaba(DATA / "openb_node_list_all_node.csv.gz").nodes, key=lambda n: n["metadata"]["name"])
    n = _bench(benchmark, nodes, _template("train", {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
                                           {"nvidia.com/gpu": "1"}), 0)
    assert n == 6210          # cluster-capacity's answer


def test_capacity_alibaba_cpu_pod(benchmark):
    nodes = sorted(load_alibaba(DATA / "openb_node_list_all_node.csv.gz").nodes, key=lambda n: n["metadata"]["name"])
    n = _bench(benchmark, nodes, _template("web", {"cpu": "1", "memory": "2Gi"}), 0)
    assert n == 124768        # cluster-capacity's answer


def test_capacity_dra_gpus_5000_nodes(benchmark):
    """5,000 nodes with 8 devices each in a ResourceSlice (DRA), copies of a pod whose claim
    from a template asks one: every device taken, 40,000 instances."""
    workload = dra_gpus(5000, 8)
    pod = {"metadata": {"name": "train"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
    template = capacity.Template(capacity.podspec.default_pod(pod), "train")
    n = _bench(benchmark, None, template, 0, lambda: Scheduler.from_workload(workload))
    assert n == 40000
