"""The plain-Python reference (kschedcore.reference) against kube-scheduler v1.34.1.

The parity data (tests/data/parity) is what the real
kube-scheduler decided: one explain record per pending pod, with percentageOfNodesToScore
100 and ties broken by the first node in node-list order.

* ``test_exact``: node-local and InterPodAffinity workloads, run end to end with ``explain_workload``; every record
  must match field by field.
* ``test_follow``: workloads that also use the cross-pod plugins (which the reference does not
  implement).  The reference follows the real scheduler's choices (each pod is assumed onto
  the node kube-scheduler chose) and only the node-local parts are compared: the whole Filter
  outcome when kube-scheduler skipped every cross-pod Filter for that pod, the node-local
  plugins' scores always, and totals / choice when every cross-pod Score was skipped too.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest


from kschedcore.reference import ReferenceScheduler, explain_workload

DATA = Path(__file__).parent / "data" / "parity"

EXACT_WORKLOADS = ["resources", "taints", "node_affinity", "host_ports", "interpod_affinity"]
FOLLOW_WORKLOADS = ["images_default_spread", "mixed_small", "topology_spread"]

COMPARED_FIELDS = ["node", "numFeasible", "filter", "scores", "fitError", "preFilterStatus",
                   "skippedFilterPlugins", "skippedScorePlugins", "preFilterNodeNames", "preBound"]

CROSS_POD_FILTER = {"InterPodAffinity", "PodTopologySpread", "VolumeRestrictions", "NodeVolumeLimits",
                    "VolumeBinding", "VolumeZone", "DynamicResources"}
CROSS_POD_SCORE = {"InterPodAffinity", "PodTopologySpread", "VolumeBinding"}
PARITY_WORKLOADS_SCORE = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                    "ImageLocality"]


def load_workload(name: str) -> dict:
    plain = DATA / f"{name}.json"
    if plain.exists():
        with open(plain) as f:
            return json.load(f)
    with gzip.open(DATA / f"{name}.json.gz", "rt") as f:
        return json.load(f)


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
                           namespaces=data.get("namespaces", []))
    assert len(got) == len(expected), f"{workload}: {len(got)} records, want {len(expected)}"
    for mine, want in zip(got, expected):
        assert_field(workload, want["pod"], "pod", mine["pod"], want["pod"])
        for field in COMPARED_FIELDS:
            assert_field(workload, want["pod"], field, mine.get(field), want.get(field))


@pytest.mark.parametrize("workload", FOLLOW_WORKLOADS)
def test_follow(workload):
    data = load_workload(workload)
    expected = load_explain(workload)
    sched = ReferenceScheduler(data["nodes"], data["pods"], percentage_of_nodes_to_score=100, tie_break="first",
                               namespaces=data.get("namespaces", []))
    compared_filter = compared_total = 0
    for pod, want in zip(data["pending"], expected):
        name = want["pod"]
        mine = sched.explain(pod)
        assert_field(workload, name, "pod", mine["pod"], name)

        filter_local = CROSS_POD_FILTER <= set(want.get("skippedFilterPlugins") or ()) or "preFilterStatus" in want
        if filter_local:
            compared_filter += 1
            for field in ("numFeasible", "filter", "fitError", "preFilterStatus", "preFilterNodeNames"):
                assert_field(workload, name, field, mine.get(field), want.get(field))

        if want["scores"] and mine["scores"]:
            # Node-local plugin scores on the nodes both consider feasible.
            for node in sorted(set(want["scores"]) & set(mine["scores"])):
                for plugin in PARITY_WORKLOADS_SCORE:
                    for key in (plugin, "raw:" + plugin):
                        assert_field(workload, name, f"scores[{node}][{key}]",
                                     mine["scores"][node].get(key), want["scores"][node].get(key))
            score_local = CROSS_POD_SCORE <= set(want.get("skippedScorePlugins") or ())
            if filter_local and score_local:
                compared_total += 1
                assert_field(workload, name, "scores", mine["scores"], want["scores"])
                assert_field(workload, name, "node", mine["node"], want["node"])

        # Follow kube-scheduler: each pod joins the node it chose (a pre-bound pod its own node
        # when it passed the filters there, as ReferenceScheduler.schedule does).
        if want["node"] is not None:
            sched.assume(pod, want["node"])
    assert compared_filter > 0 or workload in ("interpod_affinity", "topology_spread")


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
