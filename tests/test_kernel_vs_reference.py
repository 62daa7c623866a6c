"""Differential tests: the compiled Scheduler against the plain-Python reference.

Random but valid Nodes and Pods (tests/strategies.py) go through both
``Scheduler(...).queue(...).explain_pending()`` and ``kschedcore.reference.explain_workload``;
every explain record must be the same (``parity.diff``), and so must the skipped plugins.
"""
import copy
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kschedcore import Scheduler
from kschedcore.reference import explain_workload

import strategies as S
from parity import diff

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SKIPPED = ("skippedFilterPlugins", "skippedScorePlugins")


def run_both(nodes, bound, pending, *, strategy=None, percentage=100):
    """(kernel records, reference records) for one workload (inputs are not shared)."""
    plugin_args = {"NodeResourcesFit": {"scoringStrategy": copy.deepcopy(strategy)}} if strategy else None
    sched = Scheduler(copy.deepcopy(nodes), copy.deepcopy(bound), percentage_of_nodes_to_score=percentage,
                      tie_break="first", plugin_args=plugin_args)
    for pod in copy.deepcopy(pending):
        sched.queue(pod)
    got = sched.explain_pending()
    want = explain_workload(copy.deepcopy(nodes), copy.deepcopy(bound), copy.deepcopy(pending),
                            percentage_of_nodes_to_score=percentage, tie_break="first",
                            scoring_strategy=copy.deepcopy(strategy))
    return got, want


#: kube-scheduler's PreFilterResult keeps every name of the pod's matchFields, also names of
#: nodes that do not exist (parity data: node_affinity pod-x03, pod-x04); the Scheduler drops
#: those (reported; pinned by test_prefilter_node_names_keep_unknown_nodes).  Until that is
#: fixed, the properties compare the names of existing nodes only.  Set to True once fixed.
PREFILTER_NAMES_EXACT = False


def record_diff(got, want, node_names=None):
    """'' if the records agree: the parity fields, plus the skipped plugins wherever the
    reference reports them (kube-scheduler reports skippedScorePlugins only when it scored),
    preFilterNodeNames, preBound and whether the cycle failed with an error."""
    out = diff(got, want)
    for key in SKIPPED:
        if key in want and got.get(key) != want[key]:
            out += f"\n{key}: got {got.get(key)} want {want[key]}"
    want_names = want.get("preFilterNodeNames")
    if want_names is not None and not PREFILTER_NAMES_EXACT and node_names is not None:
        want_names = [n for n in want_names if n in node_names]
    if want_names != got.get("preFilterNodeNames"):
        out += f"\npreFilterNodeNames: got {got.get('preFilterNodeNames')} want {want_names}"
    if bool(want.get("preBound")) != bool(got.get("preBound")):
        out += f"\npreBound: got {got.get('preBound')} want {want.get('preBound')}"
    if bool(want.get("error")) != bool(got.get("error")):
        out += f"\nerror: got {got.get('error')!r} want {want.get('error')!r}"
    return out.strip()


def assert_same(nodes, bound, pending, **kw):
    got, want = run_both(nodes, bound, pending, **kw)
    assert [r["pod"] for r in got] == [r["pod"] for r in want]
    names = {n["metadata"]["name"] for n in nodes}
    for i, (g, w) in enumerate(zip(got, want)):
        d = record_diff(g, w, names)
        if d:
            pytest.fail(f"record {i} ({w['pod']}) differs:\n{d}\n\npod: {json.dumps(pending[i])}", pytrace=False)
    return got, want


# ---- hand-picked corner cases ------------------------------------------------------------------
def _node(name, cpu="2", memory="4Gi", pods="110", labels=None, taints=None, images=None, **alloc):
    status = {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods, **alloc}}
    if images:
        status["images"] = images
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints} if taints else {}, "status": status}


def _pod(name, requests=None, node=None, **spec):
    c = {"name": "c", "image": "nginx:1.25"}
    if requests is not None:
        c["resources"] = {"requests": requests}
    spec = {"containers": [c], **spec}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _affinity(*terms, preferred=None):
    na = {}
    if terms:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": list(terms)}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"nodeAffinity": na}


TWO_ZONES = [_node(f"n{i}", labels={S.ZONE: f"z{i % 2}", S.GEN: str(i)}) for i in range(4)]

CORNER_CASES = [
    # two feasible nodes, equal scores: the first in node-list order wins
    (TWO_ZONES, [], [_pod("tie", {"cpu": "100m"})]),
    # nodeSelector {} (not nil): NodeAffinity's PreFilter runs but matches everything
    (TWO_ZONES, [], [_pod("empty-selector", {"cpu": "1"}, nodeSelector={})]),
    # empty nodeSelectorTerms: nothing matches
    (TWO_ZONES, [], [_pod("no-terms", affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}})]),
    # matchFields metadata.name In on two terms: PreFilter narrows to {n1, n3}
    (TWO_ZONES, [], [_pod("fields", affinity=_affinity(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]}))]),
    # matchFields conflicting inside one term: pod affinity terms conflict
    (TWO_ZONES, [], [_pod("conflict", affinity=_affinity(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                         {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}))]),
    # Gt over integer labels, and a preferred term with weight
    (TWO_ZONES, [], [_pod("gt", affinity=_affinity(
        {"matchExpressions": [{"key": S.GEN, "operator": "Gt", "values": ["0"]}]},
        preferred=[{"weight": 7, "preference": {"matchExpressions": [
            {"key": S.ZONE, "operator": "In", "values": ["z1"]}]}}]))]),
    # an empty preferred list (not nil): NodeAffinity scores 0 everywhere, but is not skipped
    (TWO_ZONES, [], [_pod("empty-preferred", {"cpu": "1"}, affinity=_affinity(preferred=[]))]),
    # pod-level requests replace the container aggregate; sidecar + init container max
    (TWO_ZONES, [], [_pod("pod-level", {"cpu": "3"}, resources={"requests": {"cpu": "500m"}},
                          initContainers=[{"name": "s", "image": "busybox", "restartPolicy": "Always",
                                           "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                                          {"name": "i", "image": "busybox",
                                           "resources": {"requests": {"memory": "3Gi"}}}])]),
    # a pre-bound pod on a node it does not fit, then one that fits
    (TWO_ZONES, [], [_pod("pre-bad", {"cpu": "5"}, node="n1"), _pod("pre-ok", {"cpu": "1"}, node="n2"),
                     _pod("after", {"cpu": "1500m"})]),
    # untolerated NoExecute, tolerated NoSchedule via empty key + Exists, PreferNoSchedule scoring
    ([_node("t0", taints=[{"key": "a", "value": "x", "effect": "NoExecute"}]),
      _node("t1", taints=[{"key": "b", "effect": "NoSchedule"}, {"key": "c", "effect": "PreferNoSchedule"}]),
      _node("t2", taints=[{"key": "c", "effect": "PreferNoSchedule"}, {"key": "d", "effect": "PreferNoSchedule"}])],
     [], [_pod("tol", tolerations=[{"operator": "Exists", "effect": "NoSchedule"}]),
          _pod("tol-all", tolerations=[{"operator": "Exists"}])]),
    # host ports: a specific IP conflicts with 0.0.0.0 on the node, other IPs do not
    ([_node("h0"), _node("h1")],
     [_pod("b0", node="h0", containers=[{"name": "c", "image": "x", "ports": [
         {"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.1"}]}])],
     [_pod("p0", containers=[{"name": "c", "image": "x", "ports": [
         {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]}]),
      _pod("p1", containers=[{"name": "c", "image": "x", "ports": [
          {"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.2"}]}])]),
    # extended resource and hugepages: Insufficient + UU when more than allocatable
    ([_node("e0", **{S.FPGA: "1"}), _node("e1", **{S.FPGA: "2", S.HUGEPAGES: "4Mi"}), _node("e2")],
     [], [_pod("fpga", {S.FPGA: "2", S.HUGEPAGES: "2Mi"}), _pod("fpga2", {S.FPGA: "1"})]),
    # images: ImageLocality with a shared, large image
    ([_node("i0", images=[{"names": ["nginx:1.25"], "sizeBytes": 500 * 2**20}]),
      _node("i1", images=[{"names": ["nginx:1.25", "redis:latest"], "sizeBytes": 900 * 2**20}]),
      _node("i2")], [], [_pod("img", {"cpu": "100m"})]),
    # no allocatable pods: Too many pods everywhere
    ([_node("z0", pods="0"), _node("z1", pods="1")], [_pod("b", node="z1")], [_pod("full")]),
]


@pytest.mark.parametrize("nodes,bound,pending", CORNER_CASES, ids=[c[2][0]["metadata"]["name"] for c in CORNER_CASES])
def test_corner_cases(nodes, bound, pending):
    assert_same(nodes, bound, pending)


# ---- the properties ----------------------------------------------------------------------------
@settings(max_examples=150, **SETTINGS)
@given(S.workloads())
def test_default_profile_matches_reference(workload):
    assert_same(*workload)


#: NodeResourcesFit scoring must ignore the incoming pod's pod-level requests for *every*
#: resource (semantics §1.4 quirk; the scorer is built without enablePodLevelResources), but the
#: Scheduler honours a pod-level hugepages-* request there (reported; pinned by
#: test_fit_scoring_ignores_pod_level_hugepages).  Until fixed, the strategies property leaves
#: pod-level hugepages out when the strategy scores hugepages.  Set to True once fixed.
POD_LEVEL_HUGEPAGES_SCORED_RIGHT = False


def without_known_gaps(workload, strategy):
    nodes, bound, pending = workload
    scored = {r["name"] for r in (strategy or {}).get("resources") or ()}
    if not POD_LEVEL_HUGEPAGES_SCORED_RIGHT and any(n.startswith("hugepages-") for n in scored):
        for pod in pending:
            reqs = (pod["spec"].get("resources") or {}).get("requests") or {}
            for name in [n for n in reqs if n.startswith("hugepages-")]:
                del reqs[name]
    return nodes, bound, pending


@settings(max_examples=100, **SETTINGS)
@given(S.workloads(max_pending=6), S.scoring_strategies())
def test_scoring_strategies_match_reference(workload, strategy):
    assert_same(*without_known_gaps(workload, strategy), strategy=strategy)


@st.composite
def big_clusters(draw):
    """100-150 near-identical nodes in 2-3 zones, a few pods, percentageOfNodesToScore < 100."""
    n = draw(st.integers(100, 150))
    zones = draw(st.integers(2, 3))
    nodes = []
    for i in range(n):
        cpu = draw(st.sampled_from(["2", "2", "2", "500m", "4"]))
        taints = [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}] if draw(st.integers(0, 9)) == 0 else []
        node = _node(f"n{i:03d}", cpu=cpu, labels={S.ZONE: f"z{draw(st.integers(0, zones - 1))}",
                                                    S.POOL: draw(st.sampled_from(S.POOLS))}, taints=taints)
        nodes.append(node)
    names = [x["metadata"]["name"] for x in nodes]
    pending = [draw(S.pods_dicts(f"p{i}", names, extended=False)) for i in range(draw(st.integers(1, 5)))]
    return nodes, pending, draw(st.integers(10, 60))


@settings(max_examples=25, **SETTINGS)
@given(big_clusters())
def test_percentage_of_nodes_to_score(cluster):
    nodes, pending, pct = cluster
    got, want = run_both(nodes, [], pending, percentage=pct)
    for g, w in zip(got, want):
        assert (g["pod"], g["node"], g["numFeasible"]) == (w["pod"], w["node"], w["numFeasible"])
        assert g["filter"] == w["filter"], (g["pod"], record_diff(g, w, None))
        assert record_diff(g, w, {n["metadata"]["name"] for n in nodes}) == ""
