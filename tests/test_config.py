"""KubeSchedulerConfiguration: profiles, plugin sets, weights, args, validation."""
import json

import pytest

from kschedcore import Scheduler, UnsupportedError, ValidationError, parse_config
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


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "v1", "kind": "KubeSchedulerConfiguration"}, 'apiVersion: expected apiVersion'),
    (cfg(percentageOfNodesToScore=101), "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    (cfg({"schedulerName": "a"}, {"schedulerName": "a"}), 'profiles[1].schedulerName: Duplicate value: "a"'),
    (cfg({"plugins": {"score": {"enabled": [{"name": "Spread"}]}}}),
     'profiles[0].plugins.score.enabled[0].name: plugin "Spread" does not exist'),
    (cfg({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}),
     'profiles[0].plugins.filter: plugin "ImageLocality" does not extend the extension point'),
    (cfg({"plugins": {"scoring": {}}}), "profiles[0].plugins.scoring: unknown extension point"),
    (cfg({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Best"}}}]}),
     'NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: "Best"'),
    (cfg({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]}),
     "InterPodAffinityArgs: hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
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


def test_unimplemented_plugin_args_are_refused():
    doc = cfg({"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}}]})
    with pytest.raises(UnsupportedError, match="defaultConstraints"):
        Scheduler(config=parse_config(doc))


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
