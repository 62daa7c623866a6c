"""`kschedcore perf`: scheduler_perf's configuration format run on kschedcore (small configs
written here in that format; the upstream files are in ../shared/scheduler_perf)."""
import io
import json
from collections import Counter
from contextlib import redirect_stdout

import pytest
import yaml

from kschedcore.cli import main
from kschedcore.errors import KSchedCoreError
from kschedcore.perf import Runner, load_perf_config, run_perf, selected
from kschedcore.perf.template import render
from kschedcore.perf.throughput import ThroughputCollector

NODE = """apiVersion: v1
kind: Node
metadata:
  generateName: perf-node-
  labels: {pool: a}
status:
  capacity: {pods: "110", cpu: "4", memory: 32Gi}
"""
ANTI = """apiVersion: v1
kind: Pod
metadata:
  generateName: anti-
  labels: {color: green}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {color: green}}
        topologyKey: kubernetes.io/hostname
        namespaces: [sched-0, sched-1]
  containers:
  - name: pause
    image: pause
    resources: {requests: {cpu: 100m, memory: 500Mi}}
"""
GANG = """apiVersion: v1
kind: Pod
metadata:
  generateName: gang-
  labels: {group: "g{{DivideInt .Index .perGroup}}"}
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}1000{{end}}
  containers:
  - name: pause
    image: pause
    resources: {requests: {cpu: {{if .cpu}}{{.cpu}}{{else}}50m{{end}}}}
"""


def config(tmp_path, cases):
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates/node.yaml").write_text(NODE)
    (tmp_path / "templates/anti.yaml").write_text(ANTI)
    (tmp_path / "templates/gang.yaml").write_text(GANG)
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump(cases, sort_keys=False))
    return path


ANTI_CASE = {
    "name": "AntiAffinity",
    "defaultPodTemplatePath": "templates/anti.yaml",
    "workloadTemplate": [
        {"opcode": "createNodes", "countParam": "$nodes", "nodeTemplatePath": "templates/node.yaml",
         "labelNodePrepareStrategy": {"labelKey": "topology.kubernetes.io/zone", "labelValues": ["z1", "z2"]}},
        {"opcode": "createNamespaces", "prefix": "sched", "count": 2},
        {"opcode": "createPods", "countParam": "$init", "namespace": "sched-0"},
        {"opcode": "createPods", "countParam": "$measure", "namespace": "sched-1", "collectMetrics": True}],
    "workloads": [{"name": "20Nodes", "labels": ["performance"], "threshold": 10,
                   "params": {"nodes": 20, "init": 5, "measure": 15}},
                  {"name": "small", "labels": ["integration-test", "short"],
                   "params": {"nodes": 3, "init": 1, "measure": 2}}]}


def run_cli(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def test_a_workload_runs_as_upstream_lays_it_out(tmp_path):
    path = config(tmp_path, [ANTI_CASE])
    [case] = load_perf_config(path)
    runner = Runner(case, case.workloads[0], sample_interval=0.0001)
    result = runner.run()
    sim = runner.sim
    nodes = sim.sched.cache.node_names
    assert len(nodes) == 20 and nodes[0] == "perf-node-00000"
    zones = [sim.sched.cache.node(n).labels["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["z1", "z2"] * 10                       # labelNodePrepareStrategy, in turn
    assert all(sim.sched.cache.node(n).labels["kubernetes.io/hostname"] == n for n in nodes)
    bound = sim.bound
    assert len(bound) == 20 and len(set(bound.values())) == 20   # anti-affinity: one green pod per node
    assert {k.split("/")[0] for k in bound} == {"sched-0", "sched-1"}
    [m] = result.measurements
    assert m.name == "AntiAffinity/20Nodes/sched-1" and m.pods == 15


def test_json_is_upstreams_shape(tmp_path):
    code, out = run_cli("perf", config(tmp_path, [ANTI_CASE]), "-o", "json", "--sample-interval", "0.0001")
    doc = json.loads(out)
    assert code == 0 and doc["version"] == "v1"
    [item] = doc["dataItems"]
    assert item["unit"] == "pods/s" and item["labels"] == {"Metric": "SchedulingThroughput",
                                                           "Name": "AntiAffinity/20Nodes/sched-1"}
    assert item["data"]["AverageThreshold"] == 10 and item["pods"] == 15
    if "Average" in item["data"]:
        assert item["data"]["Perc50"] <= item["data"]["Perc99"]


def test_label_filter_picks_workloads(tmp_path):
    path = config(tmp_path, [ANTI_CASE])
    names = lambda f: [r.workload for r in run_perf(path, label_filter=f)]   # noqa: E731
    assert names("performance") == ["20Nodes"]
    assert names("integration-test,+short") == ["small"]
    assert names("-performance") == ["small"]
    assert selected(["a", "b"], "a,-c") and not selected(["a"], "a,b")
    with pytest.raises(KSchedCoreError, match="no workload selected"):
        run_perf(path, label_filter="nothing")


def test_templates_render_as_go_text_template(tmp_path):
    assert render(GANG, {"Index": 7, "perGroup": 3, "priority": 5}, "t").count('group: "g2"') == 1
    text = render(GANG, {"Index": 0, "perGroup": 3}, "t")
    assert "priority: 1000" in text and "cpu: 50m" in text
    assert "cpu: 300m" in render(GANG, {"Index": 0, "perGroup": 1, "cpu": "300m"}, "t")
    for bad, message in (("{{range .x}}{{end}}", "not supported"), ("{{if .x}}", "without {{end}}"),
                         ("{{Nope 1}}", 'function "Nope" not defined'), ("{{end}}", "unexpected")):
        with pytest.raises(KSchedCoreError, match=message):
            render(bad, {}, "t")


def test_template_params_and_count_multiplier(tmp_path):
    case = {"name": "Gangs", "workloadTemplate": [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "countParam": "$groups", "countMultiplierParam": "$perGroup",
         "podTemplatePath": "templates/gang.yaml", "namespace": "g",
         "templateParams": {"perGroup": "$perGroup", "priority": 7, "cpu": "$cpu"}, "collectMetrics": True}],
        "workloads": [{"name": "w", "params": {"groups": 2, "perGroup": 3, "cpu": "200m"}}]}
    [c] = load_perf_config(config(tmp_path, [case]))
    runner = Runner(c, c.workloads[0])
    runner.run()
    pods = list(runner.sim.pods.values())
    assert len(pods) == 6 and {p.priority for p in pods} == {7} and {p.requests["cpu"] for p in pods} == {200}
    assert sorted(p.labels["group"] for p in pods) == ["g0"] * 3 + ["g1"] * 3


@pytest.mark.parametrize("change, message", [
    ({"workloadTemplate": [{"opcode": "createNodes", "count": 1, "nodeCount": 3}]},
     "workloadTemplate[0].nodeCount: unknown field of createNodes"),
    ({"workloadTemplate": [{"opcode": "createPodGroups", "count": 1}]},
     'workloadTemplate[0].opcode: the op "createPodGroups" is not supported by kschedcore perf'),
    ({"workloadTemplate": [{"opcode": "creatPods", "count": 1}]}, 'unknown opcode "creatPods"'),
    ({"workloadTemplate": [{"opcode": "createPods", "count": 1, "steadyState": True}]},
     "workloadTemplate[0].steadyState: needs duration or durationParam"),
    ({"workloadz": []}, "workloadz: unknown field"),
    ({"workloads": [{"name": "w", "params": {"nodes": 1, "extra": 2}}],
      "workloadTemplate": [{"opcode": "createNodes", "countParam": "$nodes"}]}, 'unused param "extra"'),
    ({"workloads": [{"name": "w", "params": {}}],
      "workloadTemplate": [{"opcode": "createNodes", "countParam": "$nodes"}]}, "the workload has no such param"),
])
def test_configs_are_decoded_strictly(tmp_path, capsys, change, message):
    case = {"name": "Bad", "workloadTemplate": [{"opcode": "createNodes", "count": 1}],
            "workloads": [{"name": "w", "params": {}}], **change}
    code, _ = run_cli("perf", config(tmp_path, [case]), "--label-filter", "")
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_pods_that_never_fit_are_an_error_and_skip_wait_leaves_them(tmp_path, capsys):
    big = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "big-"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "64"}}}]}}
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(big))
    case = {"name": "Unschedulable", "workloadTemplate": [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "createPods", "count": 3, "podTemplatePath": "big.yaml", "skipWaitToCompletion": True},
        {"opcode": "createPods", "count": 4, "collectMetrics": True}],
        "workloads": [{"name": "w", "params": {}}]}
    [c] = load_perf_config(config(tmp_path, [case]))
    runner = Runner(c, c.workloads[0])
    runner.run()
    assert len(runner.sim.bound) == 4 and len(runner.sim.pods) == 7
    case["workloadTemplate"][1].pop("skipWaitToCompletion")
    code, _ = run_cli("perf", config(tmp_path, [case]), "--label-filter", "")
    assert code == 2 and "3 of 3 pods in namespace-1 cannot be scheduled" in capsys.readouterr().err


def test_churn_recreates_objects_on_the_wall_clock(tmp_path):
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Service",
                                                       "metadata": {"generateName": "svc-"},
                                                       "spec": {"selector": {"app": "x"}}}))
    case = {"name": "Churn", "workloadTemplate": [
        {"opcode": "createNodes", "count": 2},
        {"opcode": "churn", "mode": "recreate", "number": 1, "intervalMilliseconds": 1,
         "templatePaths": ["templates/node.yaml", "svc.yaml"]},
        {"opcode": "sleep", "duration": "120ms"},      # (room for a slow machine: >= 3 ticks)
        {"opcode": "createPods", "count": 4, "collectMetrics": True}],
        "workloads": [{"name": "w", "params": {}}]}
    [c] = load_perf_config(config(tmp_path, [case]))
    runner = Runner(c, c.workloads[0])
    runner.run()
    churn = runner.churns[0]
    assert churn.ticks >= 3                                  # created, deleted, created, ...
    nodes = runner.sim.sched.cache.node_names
    assert len(nodes) in (2, 3) and len(runner.sim.bound) == 4


def test_throughput_is_sampled_as_upstream_samples_it():
    counts = {"ns": 0}
    c = ThroughputCollector("x", ["ns"], counts, interval=1.0)
    t0 = c.next_tick
    for t, scheduled in ((0, 0), (1, 10), (2, 30), (3, 30), (4, 30), (5, 90)):
        counts["ns"] = scheduled
        c.tick(t0 + t)
    # first non-zero tick (10) dropped; 20 in 1 s; then 60 over 3 s, recorded once per tick
    assert c.samples == [20.0, 20.0, 20.0, 20.0]
    data = c.summary()
    assert data["Average"] == 20.0 and data["Perc99"] == 20.0


def test_a_window_shorter_than_two_ticks_is_sampled_with_finer_ticks():
    counts = {"ns": 0}
    c = ThroughputCollector("x", ["ns"], counts, interval=1.0)
    t0 = c.begin
    for k in range(1, 101):                  # 10 pods a millisecond for 0.1 s, between cycles
        counts["ns"] = 10 * k
        c.tick(t0 + k / 1000)
    assert c.samples == []                   # no tick of 1 s came
    data = c.summary()
    # ticks of a twentieth of the 99 ms from the first bound pod to the end, from that first
    # point (upstream's dropped tick), each taken at the first point after it is due (every 5-6
    # ms): 10,000 pods/s each
    assert c.resampled and c.interval == pytest.approx(0.099 / 20)
    assert 15 <= len(c.samples) <= 19 and data["Average"] == pytest.approx(10_000)
    assert all(x == pytest.approx(10_000) for x in c.samples)


def test_a_window_with_samples_is_not_sampled_again():
    counts = {"ns": 0}
    c = ThroughputCollector("x", ["ns"], counts, interval=0.01)
    t0 = c.begin
    for k in range(1, 101):
        counts["ns"] = 10 * k
        c.tick(t0 + k / 1000)
    assert c.summary()["Average"] == pytest.approx(10_000) and not c.resampled and c.points is None


def test_a_short_workload_reports_samples(tmp_path):
    """40 pods of different templates on 20 nodes take well under a 1 s tick: the window is
    sampled with finer ticks."""
    case = {"name": "Short", "workloadTemplate": [
        {"opcode": "createNodes", "count": 20, "nodeTemplatePath": "templates/node.yaml"},
        {"opcode": "createPods", "count": 40, "podTemplatePath": "templates/gang.yaml", "namespace": "m",
         "templateParams": {"perGroup": 1}, "collectMetrics": True}],
        "workloads": [{"name": "w", "labels": ["performance"], "params": {}}]}
    code, out = run_cli("perf", config(tmp_path, [case]), "-o", "json", "--sample-interval", "1")
    [item] = json.loads(out)["dataItems"]
    assert code == 0 and item["pods"] == 40 and item["seconds"] < 1
    assert item["resampled"] and 0 < item["sampleInterval"] <= item["seconds"] / 20
    assert item["data"]["Average"] > 0 and item["data"]["Perc50"] <= item["data"]["Perc99"]


def test_repeated_runs_report_each_measurement_from_its_median_run():
    from kschedcore.perf import median_runs
    from kschedcore.perf.runner import Measurement, WorkloadResult

    def run(average, pods, seconds):
        data = {"Average": average, "Perc50": average} if average is not None else {}
        return WorkloadResult("Case", "w", 10.0, [Measurement("Case/w/ns", data, pods, seconds),
                                                  Measurement("Case/w/other", {}, pods, seconds)], seconds=1.0)
    merged = median_runs([run(300.0, 10, 0.1), run(100.0, 10, 0.2), run(None, 10, 0.05), run(200.0, 10, 0.4)])
    sampled, unsampled = merged.measurements
    # ranked 0 (no sample), 100, 200, 300: the lower median is 100's run
    assert sampled.data["Average"] == 100.0 and sampled.seconds == 0.2
    assert sampled.runs == [300.0, 100.0, None, 200.0] and merged.seconds == 4.0
    # no run sampled: by the window's rate (100, 50, 200, 25 pods/s): the lower median, 50
    assert unsampled.seconds == 0.2 and unsampled.runs == [None] * 4


def test_repeat_runs_each_workload_again(tmp_path, capsys):
    path = config(tmp_path, [ANTI_CASE])
    code, out = run_cli("perf", path, "-o", "json", "--repeat", "3")
    [item] = json.loads(out)["dataItems"]
    assert code == 0 and len(item["runs"]) == 3 and item["pods"] == 15
    code, _ = run_cli("perf", path, "--repeat", "0")
    assert code == 2 and "--repeat: must be at least 1, got 0" in capsys.readouterr().err


def test_a_test_case_kschedcore_cannot_run_is_skipped_with_a_note(tmp_path, capsys):
    bad = {"name": "Gangs", "workloadTemplate": [{"opcode": "createPodGroups", "count": 1}],
           "workloads": [{"name": "w", "labels": ["performance"], "params": {}}]}
    path = config(tmp_path, [bad, ANTI_CASE])
    code, out = run_cli("perf", path, "-o", "json")
    assert code == 0 and len(json.loads(out)["dataItems"]) == 1
    assert 'skipped test case Gangs: ' in capsys.readouterr().err
    code, _ = run_cli("perf", path, "--test-case", "Gangs")
    assert code == 2 and 'the op "createPodGroups" is not supported' in capsys.readouterr().err


PV_CSI = {"apiVersion": "v1", "kind": "PersistentVolume",
          "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                   "csi": {"driver": "ebs.csi.aws.com"}, "persistentVolumeReclaimPolicy": "Retain"}}
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
       "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}}


def volumes_case(pods, migrated=()):
    strategy = {"nodeAllocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "2"},
                "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 2}}}
    if migrated:
        strategy["migratedPlugins"] = list(migrated)
    return {"name": "CSIPVs" if not migrated else "MigratedPVs", "workloadTemplate": [
        {"opcode": "createNodes", "count": 3, "nodeTemplatePath": "templates/node.yaml",
         "nodeAllocatableStrategy": strategy},
        {"opcode": "createPods", "countParam": "$pods", "collectMetrics": True,
         "persistentVolumeTemplatePath": "pv.yaml", "persistentVolumeClaimTemplatePath": "pvc.yaml"}],
        "workloads": [{"name": "w", "labels": ["performance"], "params": {"pods": pods}}]}


def test_pods_get_bound_claims_and_nodes_their_csi_limits(tmp_path, capsys):
    (tmp_path / "pv.yaml").write_text(yaml.safe_dump(PV_CSI))
    (tmp_path / "pvc.yaml").write_text(yaml.safe_dump(PVC))
    [c] = load_perf_config(config(tmp_path, [volumes_case(6)]))
    runner = Runner(c, c.workloads[0])
    runner.run()
    sim, vols = runner.sim, runner.sched.cache.volumes.objects
    assert len(sim.bound) == 6
    # as CreatePodWithPersistentVolume: claim pvc-i bound to PV <ns>-vol-i, whose handle is vol-i
    pod = sim.pods["namespace-1/pod-00000"]
    assert [v.claim for v in pod.volumes] == ["pvc-0"]
    claim = vols.claims["namespace-1/pvc-0"]
    assert claim.volume_name == "namespace-1-vol-0" and claim.fully_bound
    volume = vols.volumes["namespace-1-vol-0"]
    assert volume.csi == ("ebs.csi.aws.com", "vol-0") and volume.bound_to(claim)
    assert vols.csi_nodes["perf-node-00000"].limits == {"ebs.csi.aws.com": 2}
    # each node's CSINode allows two ebs.csi.aws.com volumes (the allocatable strategy): six fit
    assert sorted(Counter(sim.bound.values()).values()) == [2, 2, 2]
    # the seventh cannot
    code, _ = run_cli("perf", config(tmp_path, [volumes_case(7)]))
    assert code == 2 and "1 of 7 pods in namespace-1 cannot be scheduled" in capsys.readouterr().err


PV_PORTWORX = {"apiVersion": "v1", "kind": "PersistentVolume",
               "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                        "portworxVolume": {"volumeID": "<volume-id>"}, "persistentVolumeReclaimPolicy": "Retain"}}


def test_a_workload_meeting_refused_input_is_skipped_with_a_note(tmp_path, capsys):
    (tmp_path / "pv.yaml").write_text(yaml.safe_dump(PV_PORTWORX))
    (tmp_path / "pvc.yaml").write_text(yaml.safe_dump(PVC))
    path = config(tmp_path, [volumes_case(3, migrated=["kubernetes.io/portworx-volume"]), ANTI_CASE])
    code, out = run_cli("perf", path, "-o", "json")
    assert code == 0 and len(json.loads(out)["dataItems"]) == 1
    err = capsys.readouterr().err
    assert "skipped workload MigratedPVs/w: persistentvolume namespace-1-vol-0: spec.portworxVolume: " \
           "in-tree Portworx volumes" in err, err
    code, _ = run_cli("perf", path, "--test-case", "MigratedPVs")
    assert code == 2 and "in-tree Portworx volumes" in capsys.readouterr().err


def test_migrated_in_tree_pvs_are_scheduled(tmp_path, capsys):
    """CSINodes listing aws-ebs as migrated (SchedulingMigratedInTreePVs): the EBS PVs count
    under ebs.csi.aws.com, two a node."""
    (tmp_path / "pv.yaml").write_text(yaml.safe_dump(
        {**PV_CSI, "spec": {**{k: v for k, v in PV_CSI["spec"].items() if k != "csi"},
                            "awsElasticBlockStore": {"volumeID": "<volume-id>"}}}))
    (tmp_path / "pvc.yaml").write_text(yaml.safe_dump(PVC))
    code, out = run_cli("perf", config(tmp_path, [volumes_case(6, migrated=["kubernetes.io/aws-ebs"])]), "-o", "json")
    assert code == 0 and len(json.loads(out)["dataItems"]) == 1
    code, _ = run_cli("perf", config(tmp_path, [volumes_case(7, migrated=["kubernetes.io/aws-ebs"])]))
    assert code == 2 and "1 of 7 pods in namespace-1 cannot be scheduled" in capsys.readouterr().err


def test_more_resource_names_than_the_table_holds_are_refused_naming_the_node(tmp_path, capsys):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates/node-ext.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {generateName: ext-}\n"
        "status:\n  capacity: {pods: '110', cpu: '4', memory: 32Gi, 'foo.com/bar-{{.Index}}': 1}\n")
    (tmp_path / "templates/pod-ext.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: 'ext-{{.Index}}'}\nspec:\n  containers:\n  - name: c\n"
        "    image: pause\n    resources: {requests: {'foo.com/bar-{{.Index}}': 1}, limits: {'foo.com/bar-{{.Index}}': 1}}\n")
    case = {"name": "ExtendedResource", "workloadTemplate": [
        {"opcode": "createNodes", "countParam": "$nodes", "nodeTemplatePath": "templates/node-ext.yaml"},
        {"opcode": "createPods", "countParam": "$nodes", "namespace": "test",
         "podTemplatePath": "templates/pod-ext.yaml", "collectMetrics": True}],
        "workloads": [{"name": "small", "labels": ["performance"], "params": {"nodes": 10}},
                      {"name": "wide", "labels": ["performance"], "params": {"nodes": 80}}]}
    code, out = run_cli("perf", config(tmp_path, [case]), "-o", "json")
    assert code == 0
    [item] = json.loads(out)["dataItems"]
    assert item["labels"]["Name"] == "ExtendedResource/small/test"
    err = capsys.readouterr().err
    # cpu, memory, ephemeral-storage have the first columns: foo.com/bar-60 is the 64th name
    assert "skipped workload ExtendedResource/wide: node ext-00060: status.allocatable[foo.com/bar-60]: " \
           "a resource name beyond the first 63" in err, err


def test_preemptors_bound_late_are_sampled_as_their_bindings_land(tmp_path):
    """Preemptors nominated and bound once the queue drains: on the wall clock their bindings
    land by each tick (kube-scheduler's binding goroutines would be done by then), so the
    collector samples them instead of seeing them all in one last tick."""
    case = {"name": "Preemption", "workloadTemplate": [
        {"opcode": "createNodes", "countParam": "$nodes", "nodeTemplatePath": "templates/node.yaml"},
        {"opcode": "createPods", "countParam": "$init", "podTemplatePath": "templates/gang.yaml", "namespace": "low",
         "templateParams": {"perGroup": 1, "priority": 1, "cpu": "1"}},
        {"opcode": "createPods", "countParam": "$measure", "podTemplatePath": "templates/gang.yaml",
         "namespace": "high", "templateParams": {"perGroup": 1, "priority": 100, "cpu": "1"},
         "collectMetrics": True}],
        "workloads": [{"name": "w", "params": {"nodes": 30, "init": 120, "measure": 30}}]}
    [case] = load_perf_config(config(tmp_path, [case]))
    runner = Runner(case, case.workloads[0], sample_interval=1e-9)
    [m] = runner.run().measurements
    sim = runner.sim
    assert len(sim.preemptions) == 30 and m.pods == 30
    assert all(k in sim.bound for k in runner.created["high"]) and len(runner.created["high"]) == 30
    assert m.data["Average"] > 0 and len(runner.collectors) == 0
