"""The plain-Python reference (kschedcore.reference) against kube-scheduler v1.34.1.

The parity data (tests/data/parity) is what the real
kube-scheduler decided: one explain record per pending pod, with percentageOfNodesToScore
100 and ties broken by the first node in node-list order.

* ``test_exact``: every parity workload, run end to end with ``explain_workload``; every record
  must match field by field.
* the other tests: hand-checked cases for paths the parity data does not reach.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kschedcore.reference import explain_workload

DATA = Path(__file__).parent / "data" / "parity"

EXACT_WORKLOADS = ["resources", "taints", "node_affinity", "host_ports", "interpod_affinity", "topology_spread",
                   "images_default_spread", "mixed_small", "mixed_medium"]

COMPARED_FIELDS = ["node", "numFeasible", "filter", "scores", "fitError", "preFilterStatus",
                   "skippedFilterPlugins", "skippedScorePlugins", "preFilterNodeNames", "preBound"]


def load_workload(name: str) -> dict:
    plain = DATA / f"{name}.json"
    if plain.exists():
        with open(plain) as f:
            return json.load(f)
    with gzip.open(DATA / f"{name}.json.gz", "rt") as f:
        return json.load(f)


def workload_objects(data: dict) -> dict:
    """The workload's Services / controllers, as the reference's ``objects=`` keyword."""
    return {"Service": data.get("services", []),
            "ReplicationController": data.get("replicationControllers", []),
            "ReplicaSet": data.get("replicaSets", []),
            "StatefulSet": data.get("statefulSets", [])}


def load_explain(name: str) -> list[dict]:
    with gzip.open(DATA / f"{name}.explain.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def describe_diff(got, want) -> str:
    """A short description of where two JSON values differ."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=str):
            if key not in got:
                return f"[{key!r}] missing, want {json.dumps(want[key], sort_keys=True)[:300]}"
            if key not in want:
                return f"[{key!r}] unexpected: {json.dumps(got[key], sort_keys=True)[:300]}"
            if got[key] != want[key]:
                return f"[{key!r}]" + describe_diff(got[key], want[key])
        return ""
    return f": got {json.dumps(got, sort_keys=True)[:300]}, want {json.dumps(want, sort_keys=True)[:300]}"


def assert_field(workload: str, pod: str, field: str, got, want) -> None:
    if got != want:
        pytest.fail(f"{workload}: pod {pod}: field {field!r} differs{describe_diff(got, want)}", pytrace=False)


@pytest.mark.parametrize("workload", EXACT_WORKLOADS)
def test_exact(workload):
    data = load_workload(workload)
    expected = load_explain(workload)
    got = explain_workload(data["nodes"], data["pods"], data["pending"],
                           percentage_of_nodes_to_score=100, tie_break="first",
                           namespaces=data.get("namespaces", []), objects=workload_objects(data))
    assert len(got) == len(expected), f"{workload}: {len(got)} records, want {len(expected)}"
    for mine, want in zip(got, expected):
        assert_field(workload, want["pod"], "pod", mine["pod"], want["pod"])
        for field in COMPARED_FIELDS:
            assert_field(workload, want["pod"], field, mine.get(field), want.get(field))


def test_tie_break_first_is_input_order():
    """Two identical nodes: the first in the *input* list wins, whatever the node-tree order."""
    def node(name, zone):
        return {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
                "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    nodes = [node("b", "z1"), node("c", "z1"), node("a", "z2")]
    pod = {"metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    (rec,) = explain_workload(nodes, [], [pod])
    assert rec["numFeasible"] == 3
    assert rec["node"] == "b"


def test_go_arithmetic():
    from kschedcore.reference.goarith import go_div, go_parse_int64, go_round
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert go_round(2.5) == 3.0 and go_round(-2.5) == -3.0 and go_round(0.49999999999999994) == 0.0
    assert go_parse_int64("+12") == 12 and go_parse_int64("-3") == -3
    assert go_parse_int64("1_0") is None and go_parse_int64(" 1") is None and go_parse_int64("9223372036854775808") is None


# --- small hand-checked cases for paths the parity workloads do not reach --------------------

def _node(name, cpu="4", memory="8Gi", zone=None):
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {"metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def _pod(name, containers, init_containers=(), **spec):
    return {"metadata": {"name": name, "namespace": "default", "uid": "uid-" + name},
            "spec": {"containers": list(containers), "initContainers": list(init_containers), **spec}}


def _c(name, restart_policy=None, **requests):
    c = {"name": name, "image": "img", "resources": {"requests": dict(requests)}}
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def test_requests_sidecars_init_overhead():
    from kschedcore.reference.requests import fit_filter_request, pod_resource_on_node
    pod = _pod("p", [_c("app", cpu="300m")],
               [_c("init1", cpu="500m"), _c("side1", "Always", cpu="200m"), _c("init2", cpu="1"),
                _c("side2", "Always", cpu="100m")],
               overhead={"cpu": "50m"})
    # base = 300 + 200 + 100 = 600; init candidates 500, 200, 1000 + 200, 300 -> 1200; + 50.
    assert fit_filter_request(pod).milli_cpu == 1250
    pr = pod_resource_on_node(pod)
    assert pr.non0_cpu == 1250
    # Every container lacks memory: +200Mi each; base = 3 x 200Mi, init candidates <= 2 x 200Mi.
    assert pr.non0_mem == 3 * 200 * 1024 * 1024
    assert pr.resource.memory == 0


def test_pod_level_requests_and_fit_scoring_quirk():
    from kschedcore.reference.plugins import balanced_pod_requests, fit_pod_requests, parse_fit_args
    from kschedcore.reference.requests import fit_filter_request, pod_resource_on_node
    pod = _pod("p", [_c("app", memory="1Gi")], resources={"requests": {"cpu": "2"}})
    req = fit_filter_request(pod)
    assert (req.milli_cpu, req.memory) == (2000, 1 << 30)
    # §1.4 quirk: NodeResourcesFit scoring ignores pod-level requests (default 100m instead).
    assert fit_pod_requests(pod, parse_fit_args(None)) == [100, 1 << 30]
    assert balanced_pod_requests(pod) == [2000, 1 << 30]
    pr = pod_resource_on_node(pod)
    assert (pr.non0_cpu, pr.non0_mem) == (2000, 1 << 30)


@pytest.mark.parametrize("strategy,expected", [
    (None, 75),
    ({"type": "MostAllocated"}, 25),
    ({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}, 25),
    ({"type": "RequestedToCapacityRatio",
      "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}, 25),
])
def test_scoring_strategies(strategy, expected):
    nodes = [_node("n1"), _node("n2")]
    pod = _pod("p", [_c("app", cpu="1", memory="2Gi")])
    (rec,) = explain_workload(nodes, [], [pod], scoring_strategy=strategy)
    assert rec["scores"]["n1"]["raw:NodeResourcesFit"] == expected


def test_scoring_strategy_rounding():
    # cpu 25% -> f = 75, memory 50% -> f = 50; (75 + 50) / 2 = 62.5 rounds half away to 63;
    # MostAllocated with cpu weight 3: (3 x 25 + 50) / 4 = 31.25 truncates to 31.
    nodes = [_node("n1"), _node("n2")]
    pod = _pod("p", [_c("app", cpu="1", memory="4Gi")])
    rtcr = {"type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}}
    (rec,) = explain_workload(nodes, [], [pod], scoring_strategy=rtcr)
    assert rec["scores"]["n1"]["raw:NodeResourcesFit"] == 63
    most = {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}]}
    (rec,) = explain_workload(nodes, [], [pod], scoring_strategy=most)
    assert rec["scores"]["n1"]["raw:NodeResourcesFit"] == 31


def test_percentage_and_rotation():
    nodes = [_node(f"n{i:03d}", cpu="64", memory="256Gi") for i in range(150)]
    pods = [_pod(f"p{i}", [_c("app", cpu="10m", memory="1Mi")]) for i in range(2)]
    first, second = explain_workload(nodes, [], pods, percentage_of_nodes_to_score=50)
    # n = 150 >= 100: k = max(150 * 50 / 100, 100) = 100; the scan then resumes at index 100.
    assert first["numFeasible"] == 100 and set(first["scores"]) == {f"n{i:03d}" for i in range(100)}
    assert set(second["scores"]) == {f"n{i:03d}" for i in list(range(100, 150)) + list(range(50))}


def test_tie_break_random_picks_a_best_node():
    nodes = [_node(f"n{i}") for i in range(5)]
    pod = _pod("p", [_c("app", cpu="1")])
    (rec,) = explain_workload(nodes, [], [pod], tie_break="random", seed=7)
    best = max(s["total"] for s in rec["scores"].values())
    assert rec["scores"][rec["node"]]["total"] == best


def test_status_resources_for_bound_pods():
    from kschedcore.reference.requests import fit_filter_request, pod_resource_on_node
    pod = _pod("p", [_c("app", cpu="1")], nodeName="n1")
    pod["status"] = {"containerStatuses": [{"name": "app", "resources": {"requests": {"cpu": "2"}},
                                            "allocatedResources": {"cpu": "1500m"}}]}
    assert pod_resource_on_node(pod).resource.milli_cpu == 2000   # max(spec, status, allocated)
    assert fit_filter_request(pod).milli_cpu == 1000             # the incoming pod: spec only
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    pod["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    assert pod_resource_on_node(pod).resource.milli_cpu == 2000   # spec left out when Infeasible


def test_default_topology_spread_hand_checked():
    # n1 (z1) holds one app=web pod.  System defaults, selector app=web (the Service):
    # hostname w = zone w = ln(2 + 2); n1: 1*ln4 + 2 + 1*ln4 + 4 = 8.77 -> 9, n2: 2 + 4 = 6;
    # normalized 100 * (9 + 6 - s) / 9: n1 66, n2 100; weight 2.
    nodes = [_node("n1", zone="z1"), _node("n2", zone="z2")]
    web = {"app": "web"}
    bound = [dict(_pod("b", [_c("app", cpu="100m")], nodeName="n1"))]
    bound[0]["metadata"]["labels"] = web
    pod = _pod("p", [_c("app", cpu="100m")])
    pod["metadata"]["labels"] = web
    svc = {"kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": web}}
    nil_svc = {"kind": "Service", "metadata": {"name": "nil", "namespace": "default"}, "spec": {}}
    (rec,) = explain_workload(nodes, bound, [pod], objects={"Service": [svc, nil_svc]})
    assert (rec["scores"]["n1"]["raw:PodTopologySpread"], rec["scores"]["n2"]["raw:PodTopologySpread"]) == (9, 6)
    assert (rec["scores"]["n1"]["PodTopologySpread"], rec["scores"]["n2"]["PodTopologySpread"]) == (132, 200)
    # No Service: an empty default selector, so no constraints and PreScore skips.
    (rec,) = explain_workload(nodes, bound, [pod], objects={"Service": [nil_svc]})
    assert "PodTopologySpread" in rec["skippedScorePlugins"]
    # A controlling ReplicaSet's selector (requirements added) works the same way.
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                           "controller": True}]
    rs = {"kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
          "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}}}
    (rec,) = explain_workload(nodes, bound, [pod], objects={"ReplicaSet": [rs]})
    assert rec["scores"]["n1"]["raw:PodTopologySpread"] == 9
