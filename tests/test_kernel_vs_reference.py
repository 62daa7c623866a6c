"""Differential tests: the compiled Scheduler against the plain-Python reference.

Random but valid Nodes and Pods (tests/strategies.py) go through both
``Scheduler(...).queue(...).explain_pending()`` and ``kschedcore.reference.explain_workload``;
every explain record must be the same (``parity.diff``), and so must the skipped plugins.

InterPodAffinity has its own property (``S.ipa_workloads``: Namespace objects added with
``add_namespace`` before the bound pods) and two hand-checked cases; PodTopologySpread has
three (``S.pts_workloads``, ``S.pts_focused_workloads``: Services and controllers added with
``add_object``; ``S.pts_list_workloads``: with List default constraints).

The hand-written cases at the end pin disagreements these properties once found (terminal
pods, unparsable terms, PreFilterResult names, pod-level hugepages in Fit scoring).
"""
import copy
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kschedcore import Scheduler, UnsupportedError
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


def record_diff(got, want, node_names=None):
    """'' if the records agree: the parity fields, plus the skipped plugins wherever the
    reference reports them (kube-scheduler reports skippedScorePlugins only when it scored),
    preFilterNodeNames, preBound and whether the cycle failed with an error."""
    out = diff(got, want)
    for key in SKIPPED:
        if key in want and got.get(key) != want[key]:
            out += f"\n{key}: got {got.get(key)} want {want[key]}"
    want_names = want.get("preFilterNodeNames")
    if want_names != got.get("preFilterNodeNames"):
        out += f"\npreFilterNodeNames: got {got.get('preFilterNodeNames')} want {want_names}"
    if bool(want.get("preBound")) != bool(got.get("preBound")):
        out += f"\npreBound: got {got.get('preBound')} want {want.get('preBound')}"
    if bool(want.get("error")) != bool(got.get("error")):
        out += f"\nerror: got {got.get('error')!r} want {want.get('error')!r}"
    return out.strip()


def assert_records_equal(got, want, nodes, pending):
    """Fails with the first differing record, naming the pod and showing it."""
    assert [r["pod"] for r in got] == [r["pod"] for r in want]
    names = {n["metadata"]["name"] for n in nodes}
    for i, (g, w) in enumerate(zip(got, want)):
        d = record_diff(g, w, names)
        if d:
            pytest.fail(f"record {i} ({w['pod']}) differs:\n{d}\n\npod: {json.dumps(pending[i])}", pytrace=False)
    return got, want


def assert_same(nodes, bound, pending, **kw):
    return assert_records_equal(*run_both(nodes, bound, pending, **kw), nodes, pending)


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
        c["resources"] = S.resources(requests)
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
_PINNED_OUTSIDE = _pod("pinned-outside", {"cpu": "100m"}, affinity=_affinity(
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone-node"]}]}))
_PREBOUND_GONE = _pod("prebound-gone", {"cpu": "100m"}, node="gone-node")
_ZERO_REQUESTS = [_pod(f"zero{i}", {"cpu": "0", "memory": "0"},
                       initContainers=[{"name": "s", "image": "redis", "restartPolicy": "Always"}]) for i in range(2)]


@settings(max_examples=250, **SETTINGS)
@given(S.workloads())
# a PreFilterResult naming only a node that does not exist: every node is outside it
@example(workload=(TWO_ZONES, [], [_PINNED_OUTSIDE, _pod("after", {"cpu": "100m"})]))
# a pre-bound pod whose node does not exist: NodeName rejects every node
@example(workload=(TWO_ZONES, [_pod("b", {"cpu": "1"}, node="gone-node")], [_PREBOUND_GONE]))
# explicit zero requests (BalancedAllocation skips) and a sidecar without requests (non-zero defaults)
@example(workload=(TWO_ZONES, [_pod("b", node="n1")], _ZERO_REQUESTS))
def test_default_profile_matches_reference(workload):
    assert_same(*workload)


@settings(max_examples=150, **SETTINGS)
@given(S.workloads(max_pending=6), S.scoring_strategies())
# RequestedToCapacityRatio with a one-point shape, and a decreasing one (negative slopes truncate)
@example(workload=(TWO_ZONES, [_pod("b", {"cpu": "1500m"}, node="n2")], [_pod("p", {"cpu": "250m"})]),
         strategy={"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
             "shape": [{"utilization": 50, "score": 7}]}})
@example(workload=(TWO_ZONES, [_pod("b", {"cpu": "1", "memory": "3Gi"}, node="n2")],
                   [_pod("p", {"cpu": "333m", "memory": "1Gi"})]),
         strategy={"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 3},
                                                                     {"name": "memory", "weight": 1}],
                   "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                          {"utilization": 33, "score": 3},
                                                          {"utilization": 100, "score": 0}]}})
# MostAllocated over the extended resource only: pods without it score 0 (resource left out)
@example(workload=([_node("f0", **{S.FPGA: "4"}), _node("f1", **{S.FPGA: "2"})], [],
                   [_pod("p", {S.FPGA: "1"}), _pod("q", {"cpu": "1"})]),
         strategy={"type": "MostAllocated", "resources": [{"name": S.FPGA, "weight": 5}]})
def test_scoring_strategies_match_reference(workload, strategy):
    assert_same(*workload, strategy=strategy)


@st.composite
def cluster_changes(draw):
    """A workload reached incrementally: some nodes added later, some replaced by update_node
    (new labels, taints, allocatable; same zone/region and images), bound pods added and removed.
    Returns (initial nodes, later nodes, updated nodes, initial bound, extra bound, removed keys,
    final nodes, final bound, pending)."""
    nodes, bound, pending = draw(S.workloads())
    names = [n["metadata"]["name"] for n in nodes]
    k = draw(st.integers(1, len(nodes)))
    final, updates = [], []
    for n in nodes:
        if draw(st.integers(0, 2)):
            final.append(n)
            continue
        new = draw(S.nodes_dicts(n["metadata"]["name"]))
        labels = new["metadata"]["labels"]
        for key in (S.ZONE, S.REGION, S.BETA_ZONE, S.BETA_REGION):
            labels.pop(key, None)
            if key in n["metadata"]["labels"]:
                labels[key] = n["metadata"]["labels"][key]
        new["status"].pop("images", None)
        if "images" in n["status"]:
            new["status"]["images"] = n["status"]["images"]
        final.append(new)
        updates.append(new)
    extra = [draw(S.pods_dicts(f"x{i}", names, bound=True)) for i in range(draw(st.integers(0, 3)))]
    removed = [p for p in bound if draw(st.booleans())]
    kept = [p for p in bound if p not in removed] + extra
    removed_keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in removed]
    return nodes[:k], nodes[k:], updates, bound, extra, removed_keys, final, kept, pending


@settings(max_examples=60, **SETTINGS)
@given(cluster_changes())
def test_incremental_changes_match_reference_on_final_state(changes):
    """add_node / update_node / add_pod / remove_pod, then the cycles: as the reference on the
    final state.  (Images are kept on update: image summaries depend on history, §7.3.)"""
    initial, later, updates, bound, extra, removed, final, kept, pending = copy.deepcopy(changes)
    sched = Scheduler(initial, bound, percentage_of_nodes_to_score=100, tie_break="first")
    for n in later:
        sched.add_node(n)
    for n in updates:
        sched.update_node(n)
    for p in extra:
        sched.add_pod(p)
    for key in removed:
        sched.remove_pod(key, missing_ok=True)     # as an informer delete (a terminal pod was never added)
    for p in pending:
        sched.queue(p)
    got = sched.explain_pending()
    want = explain_workload(final, kept, copy.deepcopy(changes[-1]), percentage_of_nodes_to_score=100,
                            tie_break="first")
    names = {n["metadata"]["name"] for n in final}
    for g, w in zip(got, want):
        assert record_diff(g, w, names) == "", w["pod"]


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
    return nodes, pending, draw(st.sampled_from([0, 10, 20, 30, 40, 50, 60]) | st.integers(10, 60))


@settings(max_examples=30, **SETTINGS)
@given(big_clusters())
def test_percentage_of_nodes_to_score(cluster):
    nodes, pending, pct = cluster
    got, want = run_both(nodes, [], pending, percentage=pct)
    for g, w in zip(got, want):
        assert (g["pod"], g["node"], g["numFeasible"]) == (w["pod"], w["node"], w["numFeasible"])
        assert g["filter"] == w["filter"], (g["pod"], record_diff(g, w, None))
        assert record_diff(g, w, {n["metadata"]["name"] for n in nodes}) == ""


# ---- disagreements the properties once found ---------------------------------------------------

@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminal_bound_pods_are_not_counted(phase):
    nodes = [_node("n0", cpu="1")]
    done = dict(_pod("done", {"cpu": "1"}, node="n0"), status={"phase": phase})
    got, want = assert_same(nodes, [done], [_pod("p", {"cpu": "1"})])
    assert want[0]["node"] == "n0"


@pytest.mark.parametrize("requirement", [
    {"key": S.GEN, "operator": "Gt", "values": ["x"]},          # not an integer
    {"key": S.GEN, "operator": "In", "values": ["-1"]},         # not a label value
])
def test_unparsable_preferred_terms_fail_the_cycle(requirement):
    pod = _pod("bad-pref", {"cpu": "100m"},
               affinity=_affinity(preferred=[{"weight": 5, "preference": {"matchExpressions": [requirement]}}]))
    got, want = assert_same(TWO_ZONES, [], [pod, _pod("next", {"cpu": "100m"})])
    assert want[0]["node"] is None and want[0]["error"]


@pytest.mark.parametrize("requirement", [
    {"key": S.GEN, "operator": "Gt", "values": ["-1"]},
    {"key": S.GEN, "operator": "Lt", "values": ["+9"]},
    {"key": S.POOL, "operator": "NotIn", "values": ["a b"]},
])
def test_requirement_values_must_be_label_values(requirement):
    pod = _pod("bad-value", affinity=_affinity({"matchExpressions": [requirement]}))
    got, want = assert_same(TWO_ZONES, [], [pod])
    assert want[0]["node"] is None


def test_prefilter_node_names_keep_unknown_nodes():
    pod = _pod("pinned", affinity=_affinity(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-999"]}]}))
    sched = Scheduler(TWO_ZONES, percentage_of_nodes_to_score=100, tie_break="first")
    sched.queue(pod)
    assert sched.explain_pending()[0]["preFilterNodeNames"] == ["n1", "node-999"]


def test_fit_scoring_ignores_pod_level_hugepages():
    nodes = [_node("n0", **{S.HUGEPAGES: "8Mi"}), _node("n1", **{S.HUGEPAGES: "4Mi"})]
    pod = _pod("hp", {S.HUGEPAGES: "2Mi"}, resources={"requests": {S.HUGEPAGES: "4Mi"}})
    strategy = {"type": "LeastAllocated", "resources": [{"name": S.HUGEPAGES, "weight": 1}]}
    got, want = assert_same(nodes, [], [pod], strategy=strategy)
    assert want[0]["scores"]["n0"]["raw:NodeResourcesFit"] == 75      # (8 - 2) * 100 / 8


def test_nominated_pods_are_refused_until_implemented():
    """kube-scheduler tries a pod's nominated node first (§5.1 step 4) and counts nominated pods
    in Filter (§5.3); until kschedcore has a nominator it refuses such pods instead of
    answering differently."""
    pod = dict(_pod("nominated", {"cpu": "1"}), status={"nominatedNodeName": "n3"})
    with pytest.raises(UnsupportedError, match="status.nominatedNodeName"):
        Scheduler(TWO_ZONES).queue(pod)


# ---- InterPodAffinity --------------------------------------------------------------------------

def run_both_cluster(nodes, bound, pending, namespaces=(), objects=(), spread_args=None):
    """(kernel records, reference records) for a workload with Namespace objects, Services and
    controllers: both sides get the same objects (and PodTopologySpreadArgs)."""
    plugin_args = {"PodTopologySpread": copy.deepcopy(spread_args)} if spread_args else None
    sched = Scheduler(copy.deepcopy(nodes), percentage_of_nodes_to_score=100, tie_break="first",
                      plugin_args=plugin_args)
    for ns in copy.deepcopy(namespaces):
        sched.add_namespace(ns)
    for obj in copy.deepcopy(objects):
        sched.add_object(obj)
    for pod in copy.deepcopy(bound):
        sched.add_pod(pod)
    for pod in copy.deepcopy(pending):
        sched.queue(pod)
    got = sched.explain_pending()
    want = explain_workload(copy.deepcopy(nodes), copy.deepcopy(bound), copy.deepcopy(pending),
                            percentage_of_nodes_to_score=100, tie_break="first",
                            namespaces=copy.deepcopy(list(namespaces)),
                            objects=_by_kind(copy.deepcopy(list(objects))), spread_args=copy.deepcopy(spread_args))
    return got, want


def assert_same_ipa(namespaces, nodes, bound, pending):
    return assert_records_equal(*run_both_cluster(nodes, bound, pending, namespaces=namespaces),
                                nodes, pending)


@settings(max_examples=150, **SETTINGS)
@given(S.ipa_workloads())
def test_interpod_affinity_matches_reference(workload):
    assert_same_ipa(*workload)


def _ipa_pod(name, ns="default", labels=None, node=None, **affinity):
    pod = _pod(name, {"cpu": "100m"}, node=node)
    pod["metadata"].update(namespace=ns, uid=f"uid-{ns}-{name}", labels=labels or {})
    if affinity:
        pod["spec"]["affinity"] = affinity
    return pod


def _ipa_term(selector, key=S.ZONE, **extra):
    term = {"topologyKey": key, **extra}
    if selector is not None:
        term["labelSelector"] = selector
    return term


_IPA_NODES = [_node(f"n{i}", labels={S.HOSTNAME: f"n{i}", S.ZONE: f"z{i % 2}"}) for i in range(4)]
_IPA_NS = [{"metadata": {"name": "default", "labels": {"env": "prod"}}},
           {"metadata": {"name": "team-a", "labels": {"env": "dev"}}}]
_WEB = {"matchLabels": {"app": "web"}}


def test_interpod_affinity_self_affine_group_and_existing_anti_affinity():
    # the first web pod is affine to web pods: no web pod yet, it matches its own term, so
    # every node passes; the second one must then follow it into the same zone
    self_affine = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_ipa_term(_WEB)]}}
    # a bound pod in team-a repels (by hostname) pods of namespaces labelled env=prod: the
    # namespaceSelector of an existing pod is matched against the incoming pod's namespace labels
    repel = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _ipa_term({}, S.HOSTNAME, namespaceSelector={"matchLabels": {"env": "prod"}})]}}
    bound = [_ipa_pod("guard", "team-a", {"app": "guard"}, node="n0", **repel)]
    pending = [_ipa_pod("w1", labels={"app": "web"}, **self_affine),
               _ipa_pod("w2", labels={"app": "web"}, **self_affine),
               _ipa_pod("other", "team-a", labels={"app": "web"})]
    got, want = assert_same_ipa(_IPA_NS, _IPA_NODES, bound, pending)
    w1, w2, other = want
    assert w1["filter"]["n0"]["reasons"] == ["node(s) didn't satisfy existing pods anti-affinity rules"]
    assert w1["node"] == "n1" and w2["node"] == "n3"        # n1 and n3 are zone z1
    assert w2["filter"]["n2"]["reasons"] == ["node(s) didn't match pod affinity rules"]
    assert other["numFeasible"] == 4                        # team-a is env=dev: not repelled


def test_interpod_affinity_incoming_namespace_selector_and_preferred_scores():
    # the incoming pod's namespaceSelector is resolved into the Namespace names it matches
    # (team-a), then matches nothing else: the pod in team-b (no Namespace object) is not seen
    bound = [_ipa_pod("a", "team-a", {"app": "web"}, node="n0"),
             _ipa_pod("b", "team-b", {"app": "web"}, node="n3")]
    near_a = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": _ipa_term(_WEB, S.HOSTNAME, namespaceSelector={"matchLabels": {"env": "dev"}})}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": _ipa_term(_WEB, S.ZONE, namespaces=["team-b"])}]}}
    got, want = assert_same_ipa(_IPA_NS, _IPA_NODES, bound, [_ipa_pod("p", **near_a)])
    raw = {n: s["raw:InterPodAffinity"] for n, s in want[0]["scores"].items()}
    assert raw == {"n0": 10, "n1": -5, "n2": 0, "n3": -5}
    assert {n: s["InterPodAffinity"] for n, s in want[0]["scores"].items()} == {"n0": 200, "n1": 0, "n2": 66, "n3": 0}


# ---- PodTopologySpread -------------------------------------------------------------------------

def _by_kind(objects):
    out = {}
    for obj in objects:
        out.setdefault(obj["kind"], []).append(obj)
    return out


def assert_same_pts(objects, nodes, bound, pending, spread_args=None):
    namespaces = [{"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}
                  for ns in S.IPA_NAMESPACES]
    return assert_records_equal(*run_both_cluster(nodes, bound, pending, namespaces, objects, spread_args),
                                nodes, pending)


@settings(max_examples=200, **SETTINGS)
@given(S.pts_workloads())
def test_topology_spread_matches_reference(workload):
    assert_same_pts(*workload)


@settings(max_examples=200, **SETTINGS)
@given(S.pts_focused_workloads())
def test_topology_spread_skew_matches_reference(workload):
    assert_same_pts(*workload)


@settings(max_examples=200, **SETTINGS)
@given(S.pts_list_workloads())
def test_topology_spread_list_defaults_match_reference(workload):
    args, *rest = workload
    assert_same_pts(*rest, spread_args=args)
