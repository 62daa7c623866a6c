"""KubeSchedulerConfiguration: profiles, plugin sets, weights, args, validation."""
import json

import pytest

from kschedcore import Scheduler, ValidationError, parse_config
from kschedcore.cli import main
from kschedcore.framework.config import DEFAULT_MULTI_POINT
from kschedcore.reference import explain_workload

from parity import diff


def cfg(*profiles, **top):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            **({"profiles": list(profiles)} if profiles else {}), **top}


def node(name, cpu="4", memory="8Gi", taints=(), labels=None):
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": list(taints)},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def pod(name, cpu="1", memory="1Gi", scheduler=None, node_name=None):
    spec = {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_default_configuration_is_the_default_profile():
    profile = parse_config(cfg()).profiles[0]
    assert profile.scheduler_name == "default-scheduler"
    assert profile.filters == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                               "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                               "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
    assert profile.score_weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                     "VolumeBinding": 1, "PodTopologySpread": 2, "InterPodAffinity": 2,
                                     "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}


def test_weights_from_score_point_win_over_multi_point():
    profile = parse_config(cfg({"plugins": {
        "multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 7}]}}})).profiles[0]
    assert profile.score_weights["NodeResourcesFit"] == 7
    profile = parse_config(cfg({"plugins": {
        "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 4}]}}})).profiles[0]
    assert profile.score_weights["ImageLocality"] == 4


def test_explicitly_enabled_filter_runs_first():
    """expandMultiPointPlugins: a plugin enabled at the Filter point itself precedes MultiPoint's."""
    profile = parse_config(cfg({"plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"}]}}})).profiles[0]
    assert profile.filters[0] == "NodeResourcesFit"
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    sched = Scheduler([node("tainted", cpu="1", taints=[taint]), node("ok")], config=parse_config(cfg(
        {"plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"}]}}})), tie_break="first")
    sched.queue(pod("big", cpu="2"))
    rec = sched.explain_pending()[0]
    assert rec["filter"]["tainted"]["plugin"] == "NodeResourcesFit"
    assert rec["filter"]["tainted"]["reasons"] == ["Insufficient cpu"]
    default = Scheduler([node("tainted", cpu="1", taints=[taint]), node("ok")], tie_break="first")
    default.queue(pod("big", cpu="2"))
    assert default.explain_pending()[0]["filter"]["tainted"]["plugin"] == "TaintToleration"


def test_disabled_filter_and_score_plugins():
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    config = parse_config(cfg({"plugins": {
        "filter": {"disabled": [{"name": "TaintToleration"}]},
        "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}}}))
    sched = Scheduler([node("tainted", cpu="8", taints=[taint]), node("small", cpu="2")], config=config,
                      tie_break="first")
    sched.queue(pod("p", cpu="1"))
    rec = sched.explain_pending()[0]
    assert rec["node"] == "tainted"                       # the taint no longer filters
    # only NodeResourcesFit scores: (8000-1000)*100/8000 = 87 and (8Gi-1Gi)... averaged with memory
    assert set(rec["scores"]["tainted"]) == {"NodeResourcesFit", "raw:NodeResourcesFit", "total"}
    assert rec["scores"]["tainted"]["NodeResourcesFit"] == (87 + 87) // 2
    assert rec["scores"]["small"]["NodeResourcesFit"] == (50 + 87) // 2


def test_profiles_by_scheduler_name():
    """A bin-packing profile (MostAllocated) beside the default one (LeastAllocated)."""
    config = parse_config(cfg(
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated"}}}],
         "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}}}))
    nodes = [node("busy", cpu="4"), node("idle", cpu="4")]
    sched = Scheduler(nodes, [pod("existing", cpu="3", node_name="busy")], config=config, tie_break="first")
    spread, packed, stray = (pod("spread"), pod("packed", scheduler="packer"), pod("stray", scheduler="nobody"))
    for p in (spread, packed, stray):
        sched.queue(p)
    results = {r.pod: r for r in sched.schedule_pending()}
    assert results["default/spread"].node == "idle"
    assert results["default/packed"].node == "busy"
    assert results["default/stray"].node is None
    assert results["default/stray"].error == 'no profile for schedulerName "nobody"'


@pytest.mark.parametrize("strategy", [
    {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
    {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
        {"utilization": 0, "score": 0}, {"utilization": 60, "score": 10}, {"utilization": 100, "score": 2}]}},
])
def test_plugin_config_matches_reference(strategy):
    nodes = [node(f"n{i}", cpu=str(2 + i), memory=f"{4 + 2 * i}Gi") for i in range(6)]
    bound = [pod(f"b{i}", cpu=f"{300 * i}m", memory=f"{i}Gi", node_name=f"n{i}") for i in range(6)]
    pending = [pod(f"p{i}", cpu=f"{100 + 150 * i}m", memory=f"{256 * (i + 1)}Mi") for i in range(8)]
    config = parse_config(cfg({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}]}))
    sched = Scheduler(nodes, bound, config=config, percentage_of_nodes_to_score=100, tie_break="first")
    for p in pending:
        sched.queue(p)
    got = sched.explain_pending()
    want = explain_workload(nodes, bound, pending, scoring_strategy=strategy)
    assert [diff(g, w) for g, w in zip(got, want)] == [""] * len(want)


def test_percentage_per_profile_overrides_global():
    config = parse_config(cfg({"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 20},
                              percentageOfNodesToScore=60))
    sched = Scheduler(config=config)
    assert sched.num_feasible_nodes_to_find(1000, "a") == 600
    assert sched.num_feasible_nodes_to_find(1000, "b") == 200


def _spread_args(args):
    return cfg({"pluginConfig": [{"name": "PodTopologySpread", "args": args}]})


def _zone_default(**over):
    return {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", **over}


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "v1", "kind": "KubeSchedulerConfiguration"}, 'apiVersion: expected apiVersion'),
    (cfg(percentageOfNodesToScore=101), "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    (cfg({"schedulerName": "a"}, {"schedulerName": "a"}), 'profiles[1].schedulerName: Duplicate value: "a"'),
    (cfg({"plugins": {"score": {"enabled": [{"name": "Spread"}]}}}),
     'profiles[0].plugins.score.enabled[0].name: plugin "Spread" does not exist'),
    (cfg({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}),
     'profiles[0].plugins.filter: plugin "ImageLocality" does not extend the extension point'),
    (cfg({"plugins": {"scoring": {}}}), 'strict decoding error: unknown field "profiles[0].plugins.scoring"'),
    (cfg({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Best"}}}]}),
     'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Best"'),
    (cfg({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]}),
     "InterPodAffinityArgs: hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    (_spread_args({"defaultingType": "Zones"}),
     'PodTopologySpreadArgs: defaultingType: Unsupported value: "Zones": supported values: "System", "List"'),
    (_spread_args({"defaultConstraints": [_zone_default()]}),      # defaultingType defaults to System
     'PodTopologySpreadArgs: defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    (_spread_args({"defaultingType": "List", "defaultConstraints": [_zone_default(maxSkew=0)]}),
     "PodTopologySpreadArgs: defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"),
    (_spread_args({"defaultingType": "List", "defaultConstraints": [_zone_default(topologyKey="")]}),
     "PodTopologySpreadArgs: defaultConstraints[0].topologyKey: Required value: can not be empty"),
    (_spread_args({"defaultingType": "List", "defaultConstraints": [_zone_default(whenUnsatisfiable="Never")]}),
     'PodTopologySpreadArgs: defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never"'),
    (_spread_args({"defaultingType": "List", "defaultConstraints": [_zone_default(labelSelector={})]}),
     "PodTopologySpreadArgs: defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector"),
    (_spread_args({"defaultingType": "List", "defaultConstraints": [
        _zone_default(), _zone_default(whenUnsatisfiable="ScheduleAnyway"), _zone_default(maxSkew=2)]}),
     'PodTopologySpreadArgs: defaultConstraints[2]: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"'),
])
def test_invalid_configurations(doc, message):
    with pytest.raises(ValidationError) as info:
        Scheduler(config=parse_config(doc))
    assert message in str(info.value)


ADDED = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]}}]}


def _added_affinity_scheduler():
    config = parse_config(cfg({"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": ADDED}}]}))
    nodes = [node("a1", labels={"pool": "a", "zone": "z1"}), node("a2", labels={"pool": "a", "zone": "z2"}),
             node("b1", labels={"pool": "b", "zone": "z2"})]
    return Scheduler(nodes, config=config, tie_break="first", percentage_of_nodes_to_score=100)


def test_added_affinity_filters_first_and_scores():
    sched = _added_affinity_scheduler()
    sched.queue(pod("plain"))
    rec = sched.explain_pending()[0]
    assert rec["filter"] == {"b1": {"ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "NodeAffinity",
                                    "reasons": ["node(s) didn't match scheduler-enforced node affinity"]}}
    # the added preferred term scores a pod without preferred terms of its own (no PreScore skip)
    assert rec["scores"]["a2"]["raw:NodeAffinity"] == 10 and rec["scores"]["a2"]["NodeAffinity"] == 200
    assert rec["scores"]["a1"]["NodeAffinity"] == 0 and rec["node"] == "a2"
    assert "NodeAffinity" not in rec["skippedScorePlugins"] + rec["skippedFilterPlugins"]


def test_added_affinity_before_the_pods_own():
    sched = _added_affinity_scheduler()
    p = pod("wants-b")
    p["spec"]["nodeSelector"] = {"pool": "b"}
    sched.queue(p)
    rec = sched.explain_pending()[0]
    assert rec["fitError"] == ("0/3 nodes are available: 1 node(s) didn't match scheduler-enforced node affinity, "
                               "2 node(s) didn't match Pod's node affinity/selector.")


def test_invalid_added_affinity_is_rejected():
    bad = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["x"]}]}]}}
    with pytest.raises(ValidationError, match="NodeAffinityArgs: addedAffinity"):
        Scheduler(config=parse_config(cfg({"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": bad}}]})))


# ---- PodTopologySpread List default constraints -------------------------------------------------

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
WEB_SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}


def _spread_scheduler(defaults, bound=(), unschedulable=()):
    """Nodes a1, a2 (zone a) and b1 (zone b), a Service selecting app=web, List defaults."""
    config = parse_config(cfg({"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultingType": "List", "defaultConstraints": defaults}}]}))
    nodes = [node(n, labels={ZONE: n[0], HOST: n}) for n in ("a1", "a2", "b1")]
    for n in nodes:
        n["spec"]["unschedulable"] = n["metadata"]["name"] in unschedulable
    sched = Scheduler(nodes, config=config, tie_break="first", percentage_of_nodes_to_score=100)
    sched.add_object(WEB_SERVICE)
    for p in bound:
        sched.add_pod(p)
    return sched


def _web(name, node_name=None, app="web", cpu="100m", memory="100Mi"):
    p = pod(name, cpu=cpu, memory=memory, node_name=node_name)
    p["metadata"]["labels"] = {"app": app}
    return p


ZONE_HARD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]


def test_list_default_do_not_schedule_filters_by_zone():
    # zone a holds 1 web pod, zone b 0: min 0, the pod matches its Service's selector (self 1);
    # a1, a2: 1 + 1 - 0 = 2 > maxSkew 1 -> Unschedulable; b1: 0 + 1 - 0 = 1 -> feasible
    sched = _spread_scheduler(ZONE_HARD, bound=[_web("web-0", "a1")])
    sched.queue(_web("web-1"))
    sched.queue(_web("web-2"))          # then a: 1, b: 1, min 1: 1 + 1 - 1 = 1 everywhere
    sched.queue(_web("db", app="db"))   # no Service selects it: empty selector, no defaults
    first, second, db = sched.explain_pending()
    rejected = {"ok": False, "code": "Unschedulable", "plugin": "PodTopologySpread",
                "reasons": ["node(s) didn't match pod topology spread constraints"]}
    assert first["filter"] == {"a1": rejected, "a2": rejected}
    assert first["node"] == "b1" and first["numFeasible"] == 1
    assert second["filter"] == {} and second["numFeasible"] == 3
    assert "PodTopologySpread" not in second["skippedFilterPlugins"]
    assert "PodTopologySpread" in db["skippedFilterPlugins"] and db["numFeasible"] == 3


def test_list_defaults_only_for_pods_without_constraints():
    own = _web("own")
    own["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway",
                                                 "labelSelector": {"matchLabels": {"app": "web"}}}]
    sched = _spread_scheduler(ZONE_HARD, bound=[_web("web-0", "a1")])
    sched.queue(own)
    rec = sched.explain_pending()[0]
    # its own constraints replace the defaults: none is DoNotSchedule, so PreFilter skips
    assert rec["numFeasible"] == 3 and "PodTopologySpread" in rec["skippedFilterPlugins"]


def test_list_default_fit_error_and_missing_label():
    sched = _spread_scheduler(ZONE_HARD, bound=[_web("web-0", "a1")], unschedulable=("b1",))
    sched.add_node(node("bare"))                      # no zone label: UU, missing required label
    sched.queue(_web("web-1"))
    rec = sched.explain_pending()[0]
    assert rec["filter"]["bare"]["code"] == "UnschedulableAndUnresolvable"
    assert rec["fitError"] == (
        "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), "
        "1 node(s) were unschedulable, 2 node(s) didn't match pod topology spread constraints.")


def test_list_default_schedule_anyway_scores():
    """Both keys required on every node (List defaults); all three nodes feasible.
    zone: domains {a, b}, w = ln(2 + 2) = 1.3862943611198906; counts a = 2, b = 1.
    hostname: size 3, w = ln(3 + 2) = 1.6094379124341003; counts a1 = 2, a2 = 0, b1 = 1.
    raw = round(sum(cnt * w + (maxSkew - 1))):
      a1: 2*1.38629 + 0 + 2*1.60944 + 1 = 6.99146 -> 7
      a2: 2*1.38629 + 0 + 0*1.60944 + 1 = 3.77259 -> 4
      b1: 1*1.38629 + 0 + 1*1.60944 + 1 = 3.99573 -> 4
    normalized 100 * (max + min - raw) / max, max 7, min 4: a1 400/7 = 57, a2 = b1 = 100."""
    soft = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"}]
    bound = [_web("web-0", "a1", cpu="0", memory="0"), _web("web-1", "a1", cpu="0", memory="0"),
             _web("web-2", "b1", cpu="0", memory="0")]
    sched = _spread_scheduler(soft, bound=bound)
    sched.queue(_web("web-3"))
    rec = sched.explain_pending()[0]
    assert {n: s["raw:PodTopologySpread"] for n, s in rec["scores"].items()} == {"a1": 7, "a2": 4, "b1": 4}
    assert {n: s["PodTopologySpread"] for n, s in rec["scores"].items()} == {"a1": 114, "a2": 200, "b1": 200}
    # a2 and b1 tie on every plugin (the bound pods' explicit zero requests stay 0, §1.4: only a
    # missing key gets the non-zero default), so the first in input order wins
    assert rec["scores"]["a2"]["total"] == rec["scores"]["b1"]["total"] and rec["node"] == "a2"


def test_list_default_filters_match_reference():
    defaults = ZONE_HARD + [{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"}]
    nodes = [node(n, labels={ZONE: n[0], HOST: n}) for n in ("a1", "a2", "b1")]
    bound = [_web("web-0", "a1")]
    pending = [_web(f"web-{i}") for i in range(1, 6)]
    args = {"defaultingType": "List", "defaultConstraints": defaults}
    sched = _spread_scheduler(defaults, bound=bound)
    for p in pending:
        sched.queue(p)
    got = sched.explain_pending()
    want = explain_workload(nodes, bound, pending, objects={"Service": [WEB_SERVICE]}, spread_args=args)
    assert [diff(g, w) for g, w in zip(got, want)] == [""] * len(want)
    assert [r["node"] for r in want] == ["b1", "a2", "b1", "a1", "b1"]


def test_cli_config(tmp_path, capsys):
    (tmp_path / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
        "    args: {scoringStrategy: {type: MostAllocated}}\n")
    (tmp_path / "w.json").write_text(json.dumps({"nodes": [node("busy"), node("idle")],
                                                 "pods": [pod("existing", cpu="3", node_name="busy")],
                                                 "pending": [pod("p")]}))
    assert main(["explain", str(tmp_path / "w.json"), "--config", str(tmp_path / "config.yaml"),
                 "--tie-break", "first", "-o", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["node"] == "busy"


def test_default_multi_point_order_is_kube_schedulers():
    assert [n for n, _ in DEFAULT_MULTI_POINT][:8] == [
        "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodePorts", "NodeResourcesFit"]


def test_hard_pod_affinity_weight_scores_existing_required_affinity():
    """An existing pod's required affinity term that the incoming pod matches adds
    hardPodAffinityWeight in its domain (0 disables it, and with it the whole PreScore)."""
    def run(weight):
        config = parse_config(cfg({"pluginConfig": [{"name": "InterPodAffinity",
                                                      "args": {"hardPodAffinityWeight": weight}}]}))
        nodes = [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z2"})]
        anchor = pod("anchor", node_name="a")
        anchor["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
        incoming = pod("web")
        incoming["metadata"]["labels"] = {"app": "web"}
        sched = Scheduler(nodes, [anchor], config=config, tie_break="first", percentage_of_nodes_to_score=100)
        sched.queue(incoming)
        return sched.explain_pending()[0]
    rec = run(7)
    assert rec["scores"]["a"]["raw:InterPodAffinity"] == 7 and rec["scores"]["b"]["raw:InterPodAffinity"] == 0
    assert rec["scores"]["a"]["InterPodAffinity"] == 200 and rec["scores"]["b"]["InterPodAffinity"] == 0
    rec = run(0)
    assert "InterPodAffinity" in rec["skippedScorePlugins"]
