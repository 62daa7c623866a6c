"""The Python plugin API's extension points around the kernel: PreFilter (SKIP,
PreFilterResult, statuses, AddPod/RemovePod), Filter, PreScore, Score, NormalizeScore, PostFilter,
and the CycleState they and the binding cycle share -- with kube-scheduler's messages."""
import numpy as np
import pytest

import kschedcore
from kschedcore import Scheduler
from kschedcore.custom import CustomFilter, CustomPostFilter, CustomPreFilter, CustomScore
from kschedcore.framework.interface import (SKIP, CycleState, Error, PostFilterResult, PreFilterResult,
                                            Unschedulable, UnschedulableAndUnresolvable)
from kschedcore.scheduler.loop import Simulation
from kschedcore.framework.registry import Registry


def node(name, cpu="4", zone="a"):
    return {"metadata": {"name": name, "labels": {"zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name, cpu="1", priority=0, node_name=None, labels=None, **spec):
    p = {"metadata": {"name": name, "labels": labels or {}},
         "spec": {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                  **spec}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


NODES = [node("n0"), node("n1"), node("n2", zone="b"), node("n3", zone="b")]


def sched(plugins, nodes=NODES, pods=(), **kw):
    return Scheduler(nodes, pods, percentage_of_nodes_to_score=100, tie_break="first", plugins=plugins, **kw)


# ---- PreFilter -----------------------------------------------------------------------------------
class ZoneOnly(CustomFilter):
    """PreFilter narrows to the pod's `zone` label's nodes (PreFilterResult) or skips."""
    name = "ZoneOnly"
    calls = 0

    def pre_filter(self, state, pod, nodes):
        zone = pod.labels.get("zone")
        if zone is None:
            return SKIP
        state.write("zone", zone)
        rows = np.flatnonzero((nodes.label("zone") == nodes.value_id(zone)) & nodes.alive)
        return PreFilterResult(nodes.names(rows))

    def filter(self, state, pod, nodes):
        type(self).calls += 1
        assert state.read("zone") == pod.labels["zone"]
        return np.ones(nodes.labels.shape[0], bool)


def test_prefilter_skip_means_no_filter_call():
    ZoneOnly.calls = 0
    rec = sched([ZoneOnly()]).explain(pod("p"))
    assert ZoneOnly.calls == 0 and "ZoneOnly" in rec["skippedFilterPlugins"]
    assert rec["node"] == "n0"


def test_prefilter_result_narrows_and_reports_absent_nodes():
    ZoneOnly.calls = 0
    rec = sched([ZoneOnly()]).explain(pod("p", labels={"zone": "b"}))
    assert ZoneOnly.calls == 1
    assert rec["preFilterNodeNames"] == ["n2", "n3"] and rec["node"] == "n2"
    for n in ("n0", "n1"):
        assert rec["filter"][n] == {"ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "ZoneOnly",
                                    "reasons": ["node(s) didn't satisfy plugin(s) [ZoneOnly]"]}
    # too big for n2 and n3: the left-out nodes are counted with kube-scheduler's wording
    err = sched([ZoneOnly()]).schedule(pod("big", cpu="5", labels={"zone": "b"})).fit_error
    assert str(err) == ("0/4 nodes are available: 2 Insufficient cpu, "
                        "2 node(s) didn't satisfy plugin(s) [ZoneOnly].")


def _by_name(names):
    """Required node affinity to these nodes by name (one term each: matchFields' In takes a
    single value)."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]}}


def test_prefilter_results_intersect_with_node_affinity():
    s = sched([ZoneOnly()])
    p = pod("p", labels={"zone": "b"}, affinity={"nodeAffinity": _by_name(["n1", "n3"])})
    rec = s.explain(p)
    assert rec["node"] == "n3" and rec["preFilterNodeNames"] == ["n3"]
    assert rec["filter"]["n0"]["reasons"] == ["node(s) didn't satisfy plugin(s) [NodeAffinity ZoneOnly]"]
    p = pod("q", labels={"zone": "b"}, affinity={"nodeAffinity": _by_name(["n0", "n1"])})
    err = s.schedule(p).fit_error
    assert str(err) == ("0/4 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity ZoneOnly] "
                        "simultaneously.")


class Gate(CustomPreFilter):
    name = "Gate"

    def __init__(self, answer):
        self.answer = answer

    def pre_filter(self, state, pod, nodes):
        return self.answer


def test_prefilter_statuses():
    s = sched([Gate(UnschedulableAndUnresolvable("group incomplete"))])
    result = s.schedule(pod("p"))
    assert str(result.fit_error) == "0/4 nodes are available: group incomplete."
    rec = s.explain(pod("q"))
    assert rec["filter"]["n2"] == {"ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "Gate",
                                   "reasons": ["group incomplete"]}
    # Unschedulable: PostFilter (preemption) still runs over every node
    err = sched([Gate(Unschedulable("not yet"))]).schedule(pod("p", priority=5)).fit_error
    assert err.full_message == ("0/4 nodes are available: not yet. no new claims to deallocate, preemption: "
                                "0/4 nodes are available: 4 No preemption victims found for incoming pod.")
    assert sched([Gate(Error("boom"))]).schedule(pod("p")).error == 'running PreFilter plugin "Gate": boom'


# ---- Score ---------------------------------------------------------------------------------------
class LowRowFirst(CustomScore):
    """Scores the feasible rows (checks it is given exactly those) by their inverse order."""
    name = "LowRowFirst"
    weight = 2
    seen = None

    def pre_score(self, state, pod, nodes, rows):
        if pod.labels.get("noscore"):
            return SKIP
        state.write("rows", set(rows.tolist()))

    def score(self, state, pod, nodes, rows):
        type(self).seen = set(rows.tolist())
        assert state.read("rows") == type(self).seen
        return 10 * (4 - rows)

    def normalize_score(self, state, pod, rows, scores):
        return scores // 2


def test_score_runs_on_feasible_nodes_with_prescore_and_normalize():
    s = sched([LowRowFirst()], pods=[pod("fill", cpu="4", node_name="n1")])
    rec = s.explain(pod("p"))
    assert LowRowFirst.seen == {0, 2, 3}                 # n1 is full: not scored
    assert {n: v["raw:LowRowFirst"] for n, v in rec["scores"].items()} == {"n0": 40, "n2": 20, "n3": 10}
    assert {n: v["LowRowFirst"] for n, v in rec["scores"].items()} == {"n0": 40, "n2": 20, "n3": 10}
    without = sched([], pods=[pod("fill", cpu="4", node_name="n1")]).explain(pod("p"))
    for n, v in rec["scores"].items():
        assert v["total"] == without["scores"][n]["total"] + v["LowRowFirst"]
    rec = s.explain(pod("q", labels={"noscore": "1"}))
    assert "LowRowFirst" in rec["skippedScorePlugins"] and "LowRowFirst" not in rec["scores"]["n0"]


def test_the_custom_score_decides_the_node():
    class Last(CustomScore):
        name = "Last"
        weight = 100

        def score(self, state, pod, nodes, rows):
            return np.where(rows == 3, 100, 0)

    assert sched([Last()]).schedule(pod("p")).node == "n3"
    assert sched([]).schedule(pod("p")).node == "n0"


def test_score_range_and_errors():
    class Big(CustomScore):
        name = "Big"

        def score(self, state, pod, nodes, rows):
            return np.full(len(rows), 250)

    assert sched([Big()]).schedule(pod("p")).error == (
        'applying score defaultWeights on Score plugins: plugin "Big" returns an invalid score 250, it should in '
        'the range of [0, 100] after normalizing')
    big = Big()
    big.normalize = True                               # DefaultNormalizeScore brings it to 100
    assert sched([big]).schedule(pod("p")).node == "n0"

    class Failing(CustomScore):
        name = "Failing"

        def score(self, state, pod, nodes, rows):
            return Error("no data")

    assert sched([Failing()]).schedule(pod("p")).error == 'running Score plugins: plugin "Failing" failed with: no data'


# ---- PreFilter extensions and the preemption dry run -----------------------------------------------
class Counts:
    def __init__(self, per_node):
        self.per_node = per_node

    def clone(self):
        return Counts(dict(self.per_node))


class OnePodPerNode(CustomFilter):
    """Counts pods per node in PreFilter and filters from that count alone, so the dry run
    only sees victims leave through RemovePod."""
    name = "OnePodPerNode"
    reason = "node(s) already run a pod"

    def __init__(self, extensions=True):
        if not extensions:
            self.remove_pod = self.add_pod = None

    def pre_filter(self, state, pod, nodes):
        t = nodes._t
        state.write("counts", Counts({t.nodes[r].name: int(nodes.pod_count[r]) for r in t.row_of.values()}))

    def filter(self, state, pod, nodes):
        counts, t = state.read("counts").per_node, nodes._t
        out = np.zeros(nodes.labels.shape[0], np.int8)
        for name, c in counts.items():
            out[t.row_of[name]] = 1 if c >= 1 else 0
        return out

    def add_pod(self, state, pod, pod_to_add, node_name):
        state.read("counts").per_node[node_name] += 1

    def remove_pod(self, state, pod, pod_to_remove, node_name):
        state.read("counts").per_node[node_name] -= 1


def _preemption_sim(plugin):
    nodes = [node("a"), node("b")]
    low = [pod("low-a", priority=1, node_name="a"), pod("low-b", priority=2, node_name="b")]
    return Simulation(Scheduler(nodes, low, tie_break="first", plugins=[plugin]))


def test_remove_pod_lets_preemption_see_the_victims_leave():
    sim = _preemption_sim(OnePodPerNode())
    sim.add_pod(pod("high", priority=10))
    out = {o.pod: o for o in sim.run_until_idle()}
    # both nodes are candidates; the lower victim priority wins: a (priority 1)
    assert sim.preemptions == [("default/high", "a", ["default/low-a"])]
    assert out["default/high"].node == "a"


def test_without_remove_pod_the_plugin_never_sees_a_node_freed():
    sim = _preemption_sim(OnePodPerNode(extensions=False))
    sim.add_pod(pod("high", priority=10))
    out = sim.run_until_idle()
    assert sim.preemptions == [] and out[0].node is None
    assert out[0].message == ("0/2 nodes are available: 2 node(s) already run a pod. no new claims to deallocate, "
                              "preemption: 0/2 nodes are available: 2 node(s) already run a pod.")


# ---- PostFilter ------------------------------------------------------------------------------------
class EvictTheSmallest(CustomPostFilter):
    """Nominates the pod to the node of the lowest-priority pod and evicts that pod."""
    name = "EvictTheSmallest"

    def __init__(self, sched_ref):
        self.sched_ref = sched_ref

    def post_filter(self, state, pod, statuses):
        placed = [pl for pl in self.sched_ref[0].cache.placements() if pl.pod.priority < pod.priority]
        if not placed:
            return Unschedulable("nothing to evict")
        victim = min(placed, key=lambda pl: pl.pod.priority)
        return PostFilterResult(victim.node, victims=[victim.pod.key])


def test_custom_post_filter_message_and_nomination():
    ref = []
    s = Scheduler([node("a", cpu="1")], [pod("x", priority=3, node_name="a")], plugins=[EvictTheSmallest(ref)])
    ref.append(s)
    err = s.schedule(pod("p", priority=1)).fit_error
    assert err.full_message == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
                                "pod., nothing to evict")
    # DefaultPreemption succeeds first when it can: the custom PostFilter does not run
    sim = Simulation(s)
    sim.add_pod(pod("p", priority=9))
    out = sim.run_until_idle()
    assert out[0].node == "a" and sim.preemptions[0][2] == ["default/x"]

    # without DefaultPreemption the custom one acts, through the same eviction path
    config = kschedcore.parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                      "kind": "KubeSchedulerConfiguration", "profiles": [
                                          {"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]})
    ref.clear()
    s = Scheduler([node("a", cpu="1")], [pod("x", priority=3, node_name="a")], plugins=[EvictTheSmallest(ref)],
                  config=config)
    ref.append(s)
    sim = Simulation(s)
    sim.add_pod(pod("p", priority=9))
    out = sim.run_until_idle()
    assert out[0].node == "a" and sim.preemptions == [("default/p", "a", ["default/x"])]


# ---- CycleState through the binding cycle, and the registry ---------------------------------------
class Stamp(CustomPreFilter):
    """Writes the pod's name at PreFilter; its Reserve/Permit/PreBind/PostBind read it back."""
    name = "Stamp"

    def __init__(self):
        self.seen = []

    def pre_filter(self, state, pod, nodes):
        state.write("stamp", pod.name)

    def reserve(self, state, pod, node_name, handle):
        self.seen.append(("reserve", state.read("stamp")))

    def pre_bind(self, state, pod, node_name, handle):
        self.seen.append(("pre_bind", state.read("stamp")))

    def post_bind(self, state, pod, node_name, handle):
        self.seen.append(("post_bind", state.read("stamp")))


def test_registry_plugin_shares_the_cycle_state_with_its_binding_cycle():
    stamp = Stamp()
    reg = Registry()
    reg.register("Stamp", lambda args: stamp, points=("preFilter", "reserve", "preBind", "postBind"))
    config = kschedcore.parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                      "kind": "KubeSchedulerConfiguration", "profiles": [
                                          {"plugins": {"multiPoint": {"enabled": [{"name": "Stamp"}]}}}]},
                                     registry=reg)
    sim = Simulation(Scheduler(NODES, config=config))
    sim.add_pod(pod("p1"))
    sim.add_pod(pod("p2"))
    assert all(o.node for o in sim.run_until_idle())
    assert stamp.seen == [("reserve", "p1"), ("pre_bind", "p1"), ("post_bind", "p1"),
                          ("reserve", "p2"), ("pre_bind", "p2"), ("post_bind", "p2")]
    assert sim.bindings.states_alive() == set()                       # every binding cycle's state is released


def test_cycle_state_clone_copies_cloneable_values():
    s = CycleState()
    s.write("counts", Counts({"a": 1}))
    s.write("plain", [1])
    c = s.clone()
    c.read("counts").per_node["a"] = 5
    assert s.read("counts").per_node["a"] == 1 and c.read("plain") is s.read("plain")
    with pytest.raises(KeyError, match="not found"):
        s.read("missing")


def reject_zone_a(row, node, pod, params):
    return 2 if node.labels[row, params[0]] == params[1] else 0


def test_native_filter_prefilter_skip_turns_its_slot_off_for_one_cycle():
    from kschedcore.custom import NativeFilter

    class NotZoneA(NativeFilter):
        def pre_filter(self, state, pod, nodes):
            return SKIP if pod.labels.get("anywhere") else None

    s = sched([NotZoneA("NotZoneA", reject_zone_a, labels=["zone"], values=["a"])])
    assert s.schedule(pod("p0")).node == "n2"
    rec = s.explain(pod("p1", labels={"anywhere": "1"}))
    assert rec["node"] == "n0" and "NotZoneA" in rec["skippedFilterPlugins"]
    assert s.schedule(pod("p2")).node == "n2"            # on again for the next pod
