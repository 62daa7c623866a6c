"""PodTopologySpread remembers a template's plan (plugins/podtopologyspread/plan.py): a
scheduler whose nodes and pods changed under remembered plans decides as one made from the
state it has reached (a new zone, a relabelled node, a removed node, minDomains reached)."""
import copy

from kschedcore import Scheduler

from parity import explained_alike


def _node(name, zone):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "30"}}}


def _pod(name, app="web", min_domains=None):
    zone = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}}}
    if min_domains is not None:
        zone["minDomains"] = min_domains
    host = {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app}}}
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": app}},
            "spec": {"topologySpreadConstraints": [zone, host],
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}


def _bound(pod, node):
    p = copy.deepcopy(pod)
    p["spec"]["nodeName"] = node
    return p


def _fresh(nodes, placed):
    sched = Scheduler(list(nodes.values()), percentage_of_nodes_to_score=100, tie_break="first")
    for p, n in placed.values():
        sched.add_pod(_bound(p, n))
    return sched


def test_remembered_plans_follow_the_nodes():
    nodes = {f"n{i}": _node(f"n{i}", f"z{i % 2}") for i in range(4)}
    live = _fresh(nodes, {})
    placed, checked = {}, 0
    phases = [
        [_pod(f"a{i}", min_domains=3) for i in range(4)],       # 2 zones < minDomains 3: min 0
        "add z2",                                               # a third zone, empty
        [_pod(f"b{i}", min_domains=3) for i in range(3)],       # now the minimum counts: z2 first
        [_pod(f"c{i}") for i in range(3)],
        "relabel n0",                                           # n0 moves to z2
        [_pod(f"d{i}") for i in range(3)],
        "remove n1",
        [_pod(f"e{i}") for i in range(4)],
    ]
    for phase in phases:
        if phase == "add z2":
            nodes["n4"] = _node("n4", "z2")
            live.add_node(nodes["n4"])
            continue
        if phase == "relabel n0":
            nodes["n0"] = _node("n0", "z2")
            live.update_node(nodes["n0"])
            continue
        if phase == "remove n1":
            del nodes["n1"]
            for key in [k for k, (_, n) in placed.items() if n == "n1"]:
                assert live.remove_pod(key)
                del placed[key]
            live.remove_node("n1")
            continue
        checked += explained_alike(live, _fresh(nodes, placed), phase, placed)
    assert checked == 17
    zones = {n: nodes[n]["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes}
    assert zones[placed["default/b0"][1]] == "z2", placed["default/b0"]
    plugin = next(p for fw in live.profiles.values() for p in fw.plugins if p.name == "PodTopologySpread")
    assert plugin.plans._plans, "the template's plan was not remembered"
