"""InterPodAffinity's counters in the cache stay equal to a recount from scratch."""
import copy

import pytest

from kschedcore import Scheduler
from kschedcore.sources.files import workload_from_documents

from parity import diff, explained_alike, load


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


def _term_pod(name, ns, app, kind):
    sel = lambda v: {"matchLabels": {"app": v}}
    affinity = {
        "db": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel("db"), "topologyKey": "kubernetes.io/hostname"}]}},
        "web": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel("db"), "topologyKey": "topology.kubernetes.io/zone",
             "namespaceSelector": {"matchLabels": {"team": "x"}}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 7, "podAffinityTerm": {"labelSelector": sel("web"), "topologyKey": "kubernetes.io/hostname",
                                                  "namespaceSelector": {}}}]}},
        # affinity to its own kind: the first may go anywhere, the rest only beside it
        "self": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel("self"), "topologyKey": "topology.kubernetes.io/zone"}]}},
        "none": {},
    }[kind]
    return {"metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
            "spec": {"affinity": affinity, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}


def test_remembered_terms_follow_the_counters_and_namespaces():
    """InterPodAffinity remembers a template's cycle terms and the counters a pod's plan of
    what counts it, by the counters' versions and the Namespaces: as the last matching pod
    leaves (a total back to 0) and a Namespace arrives that a namespaceSelector selects, a
    scheduler with that history decides as one made from the state it has reached."""
    nodes = [{"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                      "topology.kubernetes.io/zone": f"z{i % 3}"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}} for i in range(9)]
    namespaces = [{"metadata": {"name": "a", "labels": {"team": "x"}}}]
    live = _fresh(nodes, [], namespaces, [])
    phases = [
        [_term_pod("s0", "a", "self", "self")],                          # to n0 (zone z0): all empty
        "fill z0",                                                       # z0 the least attractive
        [_term_pod("s1", "a", "self", "self")],                          # still beside s0: z0
        "remove self",
        [_term_pod("s2", "a", "self", "self")],                          # none left: anywhere again
        [_term_pod(f"db{i}", "a", "db", "db") for i in range(2)] + [_term_pod(f"w{i}", "a", "web", "web") for i in range(6)],
        "remove db",
        [_term_pod(f"w1{i}", "a", "web", "web") for i in range(3)],      # no db left: affinity fails
        [_term_pod("db9", "b", "db", "db")],                             # ns b not selected yet
        [_term_pod(f"w2{i}", "a", "web", "web") for i in range(3)],
        "add b",
        [_term_pod(f"w3{i}", "a", "web", "web") for i in range(3)],      # now db9 in ns b counts
    ]
    placed, checked = {}, 0
    for phase in phases:
        if isinstance(phase, str) and phase.startswith("remove"):
            for key in [k for k in placed if f"/{phase[7]}" in k]:
                assert live.remove_pod(key)
                del placed[key]
            continue
        if phase == "fill z0":
            for i in range(0, 9, 3):
                filler = _bound(_term_pod(f"f{i}", "a", "filler", "none"), f"n{i}")
                filler["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
                live.add_pod(filler)
                placed[f"a/f{i}"] = (filler, f"n{i}")
            continue
        if phase == "add b":
            ns_b = {"metadata": {"name": "b", "labels": {"team": "x"}}}
            live.add_namespace(ns_b)
            namespaces = namespaces + [ns_b]
            continue
        fresh = _fresh(nodes, [_bound(p, n) for p, n in placed.values()], namespaces, [])
        checked += explained_alike(live, fresh, phase, placed)
    assert "a/s2" in placed and placed["a/s2"][1] not in ("n0", "n3", "n6"), placed
    assert "a/w10" not in placed and "a/w30" in placed, sorted(placed)
