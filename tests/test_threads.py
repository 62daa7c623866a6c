"""Sharing scans with helper threads never changes a decision, whatever their number."""
import pytest

from kschedcore import Scheduler
from kschedcore.errors import ValidationError
from kschedcore.sources.generator import generate


@pytest.fixture(scope="module")
def workload():
    # mixed shapes: taints, selectors, affinity, ports, GPUs; enough nodes for shared rounds
    return generate(nodes=600, pods=4000, seed=3)


def _run(workload, threads, pct, tie_break):
    sched = Scheduler.from_workload(workload, percentage_of_nodes_to_score=pct, threads=threads,
                                    tie_break=tie_break, seed=11)
    return [(r.pod, r.node, r.feasible_nodes, r.evaluated_nodes, str(r.fit_error))
            for r in sched.schedule_pending()], sched


@pytest.mark.parametrize("pct", [0, 30, 100])
@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_threads_decide_as_one(workload, pct, tie_break):
    one, _ = _run(workload, 1, pct, tie_break)
    for threads in (2, 5):          # 5: more threads than this machine may have cores
        assert _run(workload, threads, pct, tie_break)[0] == one, threads
    assert any(r[1] is None for r in one) and any(r[1] for r in one)   # both outcomes exercised


def test_threads_explain_as_one(workload):
    records = []
    for threads in (1, 3):
        sched = Scheduler.from_workload(workload, percentage_of_nodes_to_score=100, threads=threads,
                                        tie_break="first")
        sched.pending = sched.pending[:40]
        records.append(sched.explain_pending())
    assert records[0] == records[1]


@pytest.mark.parametrize("threads", [0, 65, 2.0, True])
def test_threads_out_of_range_refused(threads):
    with pytest.raises(ValidationError, match="threads: must be an integer 1-64"):
        Scheduler(threads=threads)


def test_many_threads_start_and_stop(workload):
    # 64 threads: the most the pool takes; every helper joins when the scheduler goes
    one, _ = _run(workload, 1, 100, "first")
    many, sched = _run(workload, 64, 100, "first")
    assert many == one
    del sched


def _wide_cluster(n=9000):
    """n alike nodes (so totals tie across the selection's chunks), a third of them with a
    PreferNoSchedule taint, zone and tier labels; bound pods of two colours in zone a."""
    nodes, bound = [], []
    for i in range(n):
        meta = {"name": f"n{i:05d}", "labels": {"kubernetes.io/hostname": f"n{i:05d}",
                                                 "topology.kubernetes.io/zone": "abc"[i % 3], "tier": str(i % 5)}}
        spec = {"taints": [{"key": "spot", "value": "1", "effect": "PreferNoSchedule"}]} if i % 3 == 1 else {}
        nodes.append({"kind": "Node", "metadata": meta, "spec": spec,
                      "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
    for i in range(0, 60, 3):
        bound.append({"kind": "Pod", "metadata": {"name": f"b{i}", "namespace": "default",
                                                  "labels": {"color": "red" if i % 2 else "blue"}},
                      "spec": {"nodeName": f"n{i:05d}", "containers": [{"name": "c", "image": "x"}]}})
    return nodes, bound


def _wide_pod(i):
    term = {"weight": 1 + i % 3, "podAffinityTerm": {"labelSelector": {"matchLabels": {"color": "red"}},
                                                     "topologyKey": "topology.kubernetes.io/zone"}}
    anti = {"weight": 2, "podAffinityTerm": {"labelSelector": {"matchLabels": {"color": "blue"}},
                                             "topologyKey": "kubernetes.io/hostname"}}
    prefer = [{"weight": 5, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["1", "2"]}]}}]
    return {"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"color": "red" if i % 2 else "blue", "i": str(i)}},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                     "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]},
                                  "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [anti]},
                                  "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefer}}}}


@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_shared_selection_picks_as_one_thread(tie_break):
    """9,000 feasible nodes: NormalizeScore, the totals and selectHost run in chunks shared by
    the threads; the scores of every node and the choice (ties across chunks) are one thread's."""
    nodes, bound = _wide_cluster()
    runs = []
    for threads in (1, 3):
        sched = Scheduler(nodes, bound, percentage_of_nodes_to_score=100, threads=threads, tie_break=tie_break, seed=5)
        records = [sched.explain(_wide_pod(i)) for i in range(3)]
        results = []
        for i in range(40):
            pod = sched.parse_pod(_wide_pod(i))
            results.append(sched.schedule(pod))
            sched.assume_scheduled(pod, results[-1])
        runs.append(([(r.node, r.feasible_nodes) for r in results], records))
    assert runs[0] == runs[1]
    decided = runs[0][0]
    assert all(feasible == 9000 for _, feasible in decided) and len({node for node, _ in decided}) > 1
