"""InterPodAffinity's counters in the cache stay equal to a recount from scratch."""
import copy

import pytest

from kschedcore import Scheduler
from kschedcore.sources.files import workload_from_documents

from parity import diff, load


def _fresh(nodes, bound, namespaces, pending):
    sched = Scheduler(nodes, percentage_of_nodes_to_score=100, tie_break="first")
    for ns in namespaces:
        sched.add_namespace(ns)
    for p in bound:
        sched.add_pod(p)
    for p in pending:
        sched.queue(p)
    return sched


def _bound(raw_pod, node):
    p = copy.deepcopy(raw_pod)
    p["spec"]["nodeName"] = node
    return p


@pytest.mark.parametrize("relabel", [False, True])
def test_incremental_counters_equal_a_recount(relabel):
    workload, _ = load("interpod_affinity")
    nodes = copy.deepcopy(workload["nodes"])
    live = Scheduler.from_workload(workload_from_documents([workload]), percentage_of_nodes_to_score=100,
                                   tie_break="first")
    pending = list(live.pending)
    live.pending = pending[:120]
    placed = [(pod, rec["node"]) for pod, rec in zip(pending[:120], live.explain_pending()) if rec["node"]]
    for pod, _ in placed[::7]:                         # pods leave: counters count down
        assert live.remove_pod(pod.key)
    gone = {pod.key for pod, _ in placed[::7]}
    if relabel:                                        # a node moves zone: counts by zone move with it
        nodes[3]["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-x"
        live.update_node(copy.deepcopy(nodes[3]))
    bound = workload["pods"] + [_bound(pod.raw, node) for pod, node in placed if pod.key not in gone]
    fresh = _fresh(nodes, bound, workload["namespaces"], [p.raw for p in pending[120:]])
    live.pending = []                                  # drop the first batch's unschedulable pods
    for pod in pending[120:]:
        live.queue(pod.raw)
    got, want = live.explain_pending(), fresh.explain_pending()
    assert [g["pod"] for g in got] == [w["pod"] for w in want]
    mismatches = [f"{w['pod']}: {d}" for g, w in zip(got, want) if (d := diff(g, w))]
    assert not mismatches, mismatches[:2]
    assert any(r["scores"] and "InterPodAffinity" in next(iter(r["scores"].values())) for r in got)
