"""Strict input: configuration decoded strictly with kube-scheduler's
wording, unknown kinds refused, what is left out counted by reason, resource names validated as
the API server validates them, the CLI's own flags checked. The expected messages are
kube-scheduler v1.34.1's own, taken from runs of it."""
import io
import json
from contextlib import redirect_stdout

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kschedcore import __version__
from kschedcore.cli import main
from kschedcore.errors import ValidationError
from kschedcore.objects.pod import parse_pod

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def pod(name="p", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


def run(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def write(tmp_path, name, *docs):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


def error_of(capsys, *argv) -> str:
    code, _ = run(*argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("kschedcore: error: ") and err.count("\n") == 1, err
    return err[len("kschedcore: error: "):].rstrip("\n")


CFG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize("config, message", [
    ({**CFG, "percentageOfNodesToScor": 50, "profiles": [{"schedulerNam": "foo"}]},
     'strict decoding error: unknown field "percentageOfNodesToScor", unknown field "profiles[0].schedulerNam"'),
    ({**CFG, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrateg": {}}}]}]},
     "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args for "
     'plugin NodeResourcesFit: strict decoding error: unknown field "scoringStrateg"'),
    ({**CFG, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                             "args": {"scoringStrategy": {"type": "MostAlocated"}}}]}]},
     'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
     '"NodeResourcesFit": scoringStrategy.type: Unsupported value: "MostAlocated": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
])
def test_configuration_is_decoded_strictly_with_kube_schedulers_words(tmp_path, capsys, config, message):
    cfg = write(tmp_path, "cfg.yaml", config)
    cluster = write(tmp_path, "c.yaml", NODE, pod())
    assert error_of(capsys, "simulate", cluster, "--config", cfg) == f"{cfg}: {message}"


def test_a_misspelt_disabled_plugin_is_accepted_as_kube_scheduler_accepts_it(tmp_path):
    cfg = write(tmp_path, "cfg.yaml", {**CFG, "profiles": [{"plugins": {"score": {"disabled": [{"name": "Nope"}]}}}]})
    code, _ = run("simulate", write(tmp_path, "c.yaml", NODE, pod()), "--config", cfg)
    assert code == 0


def test_left_out_objects_are_counted_by_reason(tmp_path):
    cluster = write(tmp_path, "c.yaml",
                    {"apiVersion": "v1", "kind": "NodeList", "items": [{k: v for k, v in NODE.items() if k != "kind"}]},
                    {"apiVersion": "v1", "kind": "PodList", "items": [
                        {k: v for k, v in pod("done", nodeName="a").items() if k != "kind"} | {"status": {"phase": "Succeeded"}},
                        {k: v for k, v in pod("lost", nodeName="zz").items() if k != "kind"},
                        {k: v for k, v in pod("other", schedulerName="other-scheduler").items() if k != "kind"},
                        {k: v for k, v in pod("mine").items() if k != "kind"}]},
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
                    {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    code, out = run("simulate", cluster, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["scheduled"] == 1
    assert doc["ignored"] == {"Succeeded": 1, "bound to a node not in the cluster": 1, "kind ConfigMap": 1,
                              "kind Widget": 1, "schedulerName other-scheduler": 1}


@pytest.mark.parametrize("doc, message", [
    ({"apiVersion": "v1", "kind": "Pdo", "metadata": {"name": "x"}}, 'kind: unknown kind "Pdo" for apiVersion "v1"'),
    (pod(**{"containers": [{"name": "c", "image": "x", "resources": {"requests": {"memroy": "1Gi"}}}]}),
     'pod default/p: spec.containers[0].resources.requests[memroy]: Invalid value: "memroy": must be a standard '
     'resource for containers'),
    (pod(**{"containers": [{"name": "c", "image": "x", "resources": {"limits": {"example.com/": "1"}}}]}),
     "spec.containers[0].resources.limits[example.com/]: Invalid value"),
    # a number the API server's decoder refuses (int64), not an overflow deep in the node table
    (dict(NODE, metadata={"name": "big"}, status=dict(NODE["status"], images=[{"names": ["x"], "sizeBytes": 1 << 63}])),
     "node big: status.images[0].sizeBytes: number 9223372036854775808 overflows int64"),
])
def test_bad_objects_are_refused_naming_the_field(tmp_path, capsys, doc, message):
    assert message in error_of(capsys, "simulate", write(tmp_path, "bad.yaml", NODE, doc))


def test_an_empty_file_is_an_error(tmp_path, capsys):
    (tmp_path / "empty.yaml").write_text("")
    assert "empty input" in error_of(capsys, "simulate", tmp_path / "empty.yaml")


@pytest.mark.parametrize("argv, message", [
    (["--nodes", "-5"], "--nodes: must be positive, got -5"),
    (["--pods", "-1"], "--pods: must be non-negative, got -1"),
])
def test_generated_cluster_sizes_are_checked(capsys, argv, message):
    assert error_of(capsys, "simulate", *argv) == message


def test_sizes_with_files_are_refused(tmp_path, capsys):
    assert "not with workload files" in error_of(capsys, "simulate", write(tmp_path, "c.yaml", NODE), "--nodes", "10")


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith(f"kschedcore {__version__}")


def test_the_same_pod_twice_is_refused(tmp_path, capsys):
    cluster = write(tmp_path, "c.yaml", NODE, pod("web-1"), pod("web-1"))
    assert error_of(capsys, "simulate", cluster) == 'pod default/web-1: metadata.name: the same pod twice in the input'


def test_the_loops_horizon_is_a_flag_and_reported(tmp_path):
    full = dict(NODE, status={"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}})
    big = pod("big", containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}])
    code, out = run("simulate", write(tmp_path, "c.yaml", full, big), "--queue", "--until", "30", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["unschedulable"] == 1 and doc["horizonReached"] is True
    assert doc["virtualSeconds"] <= 30


def test_updating_a_pod_the_simulation_does_not_have_names_it():
    from kschedcore import NotFoundError, Scheduler
    from kschedcore.scheduler.loop import Simulation
    sim = Simulation(Scheduler([NODE]))
    with pytest.raises(NotFoundError, match="^pod default/p: no such pod in this simulation$"):
        sim.update_pod(pod())


def test_explain_chosen_pods_only_and_streams(tmp_path, capsys):
    pods = [pod(f"p{i}", containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}])
            for i in range(6)]
    cluster = write(tmp_path, "c.yaml", NODE, *pods)
    code, out = run("explain", cluster, "--pod", "default/p4", "--pod", "p5", "-o", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    # p0-p3 take the node's four cpus first, as in the full run: p4 and p5 find no room
    assert code == 0 and [r["pod"] for r in records] == ["default/p4", "default/p5"]
    assert all(r["node"] is None and r["fitError"].startswith("0/1 nodes are available") for r in records)
    assert "no pending pod" in error_of(capsys, "explain", cluster, "--pod", "nope")


def test_explain_pod_leaves_out_every_other_pod_gated_ones_too(tmp_path):
    gated = pod("held", schedulingGates=[{"name": "example.com/wait"}])
    code, out = run("explain", write(tmp_path, "c.yaml", NODE, gated, pod("p1")), "--pod", "p1", "-o", "jsonl")
    assert code == 0 and [json.loads(line)["pod"] for line in out.splitlines()] == ["default/p1"]


def test_explain_pods_by_label_selector(tmp_path, capsys):
    pods = []
    for i, (app, tier) in enumerate([("web", "front"), ("web", "back"), ("db", "back"), ("web", None)]):
        p = pod(f"p{i}")
        p["metadata"]["labels"] = {"app": app, **({"tier": tier} if tier else {})}
        pods.append(p)
    cluster = write(tmp_path, "c.yaml", NODE, *pods)

    def chosen(*argv):
        code, out = run("explain", cluster, "-o", "jsonl", *argv)
        assert code == 0
        return [json.loads(line)["pod"] for line in out.splitlines()]
    assert chosen("--pods", "app=web,tier!=front") == ["default/p1", "default/p3"]
    assert chosen("--pods", "tier in (front,back),app notin (db)") == ["default/p0", "default/p1"]
    assert chosen("--pods", "!tier") == ["default/p3"]
    assert chosen("--pods", "app==db", "--pod", "p0") == ["default/p0", "default/p2"]
    assert error_of(capsys, "explain", cluster, "--pods", "app=nope") == '--pods: no pending pod matches "app=nope"'
    assert error_of(capsys, "explain", cluster, "--pods", "app in web").startswith(
        '--pods: invalid selector "app in web": expected "(" after in')
    assert 'invalid selector "bad key"' in error_of(capsys, "explain", cluster, "--pods", "bad key")


def _fields(pod):
    from kschedcore.objects.pod import Pod
    return {f: getattr(pod, f) for f in Pod.__slots__ if f not in ("compiled", "raw")}


def test_pods_of_one_spec_are_read_as_each_alone():
    """parse_pod reads a spec once per (namespace, spec, status) and shares the fields: every
    pod of the parity workloads and of a generated cluster parses to the same fields as with
    nothing remembered, names, labels and namespaces its own."""
    import copy
    from parity import PARITY_WORKLOADS, load
    from kschedcore.objects import pod as pod_module
    from kschedcore.sources.generator import generate
    raws = [p for name in PARITY_WORKLOADS for key in ("pods", "pending") for p in load(name)[0].get(key, [])]
    raws += generate(10, 500, seed=3).pending
    # the same spec under other names and namespaces (pod affinity terms default to the pod's)
    for i, raw in enumerate(list(raws[:200])):
        twin = copy.deepcopy(raw)
        twin["metadata"]["name"] = f"twin-{i}"
        twin["metadata"]["namespace"] = "other"
        raws.append(twin)
    shared = [_fields(pod_module.parse_pod(r)) for r in raws]
    alone = []
    for r in raws:
        pod_module._SPEC_MEMO.clear()
        alone.append(_fields(pod_module.parse_pod(r)))
    assert shared == alone
    assert len(raws) > 700


def test_nodes_of_one_shape_are_read_as_each_alone():
    """parse_node reads a node's taints, allocatable and images once per shape: every node of
    the parity workloads and of a generated cluster parses as with nothing remembered; an
    invalid shape is named after each node."""
    import dataclasses
    from parity import PARITY_WORKLOADS, load
    from kschedcore.objects import node as node_module
    from kschedcore.sources.generator import generate
    raws = [n for name in PARITY_WORKLOADS for n in load(name)[0].get("nodes", [])] + generate(300, 0, seed=3).nodes
    def fields(n):
        return [(f.name, getattr(n, f.name)) for f in dataclasses.fields(n)]
    node_module._FACTS_MEMO.clear()
    shared = [fields(node_module.parse_node(r)) for r in raws]
    node_module._FACTS_MEMO.clear()
    for r in raws[-300:]:
        node_module.parse_node(r)
    shapes = len(node_module._FACTS_MEMO)        # of the generated nodes: the memo is used
    alone = []
    for r in raws:
        node_module._FACTS_MEMO.clear()
        alone.append(fields(node_module.parse_node(r)))
    assert shared == alone and len(raws) > 300
    assert shapes < 40, shapes
    for name in ("n1", "n2"):
        with pytest.raises(ValidationError, match=f"node {name}: status.allocatable.cpu"):
            node_module.parse_node({"metadata": {"name": name}, "status": {"allocatable": {"cpu": "1.2.3"}}})


def test_an_invalid_spec_is_named_after_each_pod():
    """An invalid spec is never remembered: each pod with it gets its own error."""
    bad = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1.2.3"}}}]}
    for name in ("web-1", "web-2"):
        with pytest.raises(ValidationError, match=f"pod default/{name}: spec.containers\\[0\\].resources.requests.cpu"):
            parse_pod({"metadata": {"name": name, "namespace": "default"}, "spec": bad})


def test_a_spec_marshal_cannot_write_is_remembered_by_its_text():
    """The memo's key is the spec's marshal bytes, or its repr where marshal cannot write a
    value (YAML reads an unquoted timestamp as a datetime): such pods parse as any other."""
    import datetime
    spec = {"containers": [{"name": "c", "image": "x", "env": [{"name": "T", "value": datetime.datetime(2025, 1, 1)}],
                            "resources": {"requests": {"cpu": "1"}}}]}
    a, b = (parse_pod({"metadata": {"name": n, "namespace": "default"}, "spec": spec}) for n in ("a", "b"))
    assert a.requests == b.requests and a.requests["cpu"] == 1000 and a.spec_fields is b.spec_fields


def test_a_pod_whose_fields_were_replaced_compiles_on_its_own():
    """Framework.compile remembers a parsed spec's CompiledPod, only while the pod's template
    fields are still that spec's own."""
    import dataclasses
    from kschedcore import Scheduler
    sched = Scheduler([NODE])
    fw = sched.profiles["default-scheduler"]
    raw = {"metadata": {"name": "a", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    a = parse_pod(raw)
    b = parse_pod(dict(raw, metadata={"name": "b", "namespace": "default"}))
    assert fw.compile(a) is fw.compile(b)
    bigger = dataclasses.replace(b, requests={**b.requests, "cpu": 3000}, compiled=None)
    assert bigger.spec_fields is a.spec_fields
    cp = fw.compile(bigger)
    assert cp is not fw.compile(a)
    assert 3000 in list(cp.usage_vals) and 3000 not in list(fw.compile(a).usage_vals)


def _running(name, ip, started, container_id, resources=None, resize=None, phase="Running"):
    cs = {"name": "c", "containerID": f"containerd://{container_id}", "ready": True, "restartCount": 0,
          "state": {"running": {"startedAt": started}}}
    if resources:
        cs["resources"] = {"requests": resources}
        cs["allocatedResources"] = resources
    conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": started}]
    if resize:
        conditions.append({"type": "PodResizePending", "status": "True", "reason": resize})
    return {"metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "web:1",
                                                       "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
            "status": {"phase": phase, "podIP": ip, "hostIP": "10.0.0.1", "startTime": started,
                       "conditions": conditions, "containerStatuses": [cs]}}


def test_running_pods_of_one_spec_share_a_template_whatever_their_own_status():
    """A dump's running pods each have their own status (IPs, container IDs, times): the memo
    keys only what decides their requests, phase and nomination, so a ReplicaSet's pods share a
    template, each keeping its own start time -- and each parses as it does alone."""
    from kschedcore.objects import pod as pod_module
    raws = [_running(f"web-{i}", f"10.1.0.{i}", f"2026-01-0{1 + i % 3}T10:00:0{i}Z", f"abc{i}") for i in range(6)]
    for i, r in enumerate(raws):         # each on a node of its own, one with a StatefulSet's names
        r["spec"]["nodeName"] = f"n{i}"
    raws[5]["spec"].update(hostname="web-5", subdomain="web")
    raws += [_running("resized", "10.1.1.1", "2026-01-01T10:00:00Z", "r1", resources={"cpu": "2"}),
             _running("resized-2", "10.1.1.2", "2026-01-02T10:00:00Z", "r2", resources={"cpu": "2"}),
             _running("infeasible", "10.1.1.3", "2026-01-01T10:00:00Z", "r3", resources={"cpu": "250m"},
                      resize="Infeasible"),
             _running("done", "10.1.1.4", "2026-01-01T10:00:00Z", "d1", phase="Succeeded"),
             _running("pending-resize", "10.1.1.5", "2026-01-01T10:00:00Z", "r4", resources={"cpu": "250m"})]
    pod_module._SPEC_MEMO.clear()
    shared = [pod_module.parse_pod(r) for r in raws]
    alone = []
    for r in raws:
        pod_module._SPEC_MEMO.clear()
        alone.append(pod_module.parse_pod(r))
    assert [_fields(p) for p in shared] == [_fields(p) for p in alone]
    web = shared[:6]
    assert all(p.spec_fields is web[0].spec_fields for p in web)
    assert len({p.start_time for p in web}) == 6          # each its own
    assert [p.node_name for p in web] == [f"n{i}" for i in range(6)]
    # what the status decides is still read: a resize's requests (the larger of spec and status),
    # an infeasible resize (the status alone), the phase
    assert shared[6].requests["cpu"] == 2000 and shared[6].spec_fields is shared[7].spec_fields
    assert shared[8].requests["cpu"] == 250 and shared[0].requests["cpu"] == 500
    assert shared[9].terminal and not shared[0].terminal
    assert shared[10].requests["cpu"] == 500            # the same status resources, not infeasible


_junk = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "Running", "x", "1", "2Gi"]),
                  st.lists(st.integers(0, 1), max_size=2), st.dictionaries(st.sampled_from(["a", "cpu"]), st.text(max_size=2),
                                                                           max_size=2))
_container_status = st.one_of(_junk, st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.just("c"), _junk), "containerID": st.text(max_size=4),
    "resources": st.one_of(_junk, st.just({"requests": {"cpu": "2"}})),
    "allocatedResources": st.one_of(_junk, st.just({"cpu": "250m"}))}))
_status = st.fixed_dictionaries({}, optional={
    "phase": _junk, "podIP": st.text(max_size=4), "startTime": st.one_of(_junk, st.just("2026-01-01T00:00:00Z")),
    "nominatedNodeName": _junk,
    "containerStatuses": st.one_of(_junk, st.lists(_container_status, max_size=2)),
    "conditions": st.one_of(_junk, st.lists(st.one_of(_junk, st.fixed_dictionaries(
        {"type": st.sampled_from(["Ready", "PodResizePending"]), "reason": st.sampled_from(["Infeasible", "x"])})),
        max_size=2))})


def _outcome(raw):
    from kschedcore.objects import pod as pod_module
    try:
        return _fields(pod_module.parse_pod(raw))
    except ValidationError as e:
        return str(e)


@settings(max_examples=300, deadline=None)
@given(st.lists(_status, min_size=2, max_size=4), st.sampled_from([None, "n1", 5]))
def test_pods_of_one_spec_with_any_status_parse_as_each_alone(statuses, node):
    """Whatever a status holds (malformed parts included), a pod parses with the memo as it does
    alone: the same fields, or the same error naming it."""
    from kschedcore.objects import pod as pod_module
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]}
    if node is not None:
        spec["nodeName"] = node
    raws = [{"metadata": {"name": f"p{i}", "namespace": "default"}, "spec": spec, "status": s}
            for i, s in enumerate(statuses)]
    shared = [_outcome(r) for r in raws]
    alone = []
    for r in raws:
        pod_module._SPEC_MEMO.clear()
        alone.append(_outcome(r))
    assert shared == alone
