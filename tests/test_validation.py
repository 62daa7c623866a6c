"""Bad input gives one kschedcore.ValidationError naming the object and the field path; the
CLI turns it into one line on stderr and exit code 2.  Good YAML/JSON input is read as the
module docstring of kschedcore.sources.files promises."""
import json

import pytest

import kschedcore
from kschedcore import (ObjectError, QuantityError, Scheduler, UnsupportedError, ValidationError,
                        WorkloadError, load_workload)
from kschedcore.cli import main


def node(name="n1", alloc=None, **extra):
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
         "status": {"allocatable": alloc if alloc is not None else {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
    n.update(extra)
    return n


def pod(name="web-1", namespace="default", **spec):
    full = {"containers": [{"name": "c", "image": "nginx"}]}
    full.update(spec)
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": full}


def requests(**reqs):
    return [{"name": "c", "image": "nginx", "resources": {"requests": reqs}}]


REQUIRED = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
PREFERRED = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def _required(*exprs):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}}}


# (pod, exception class, exact message)
BAD_PODS = {
    "invalid quantity": (
        pod(containers=requests(cpu="1.2.3")), QuantityError,
        'pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"'),
    "empty quantity": (
        pod(containers=requests(memory="")), QuantityError,
        'pod default/web-1: spec.containers[0].resources.requests.memory: invalid quantity ""'),
    "invalid quantity in init container": (
        pod(initContainers=requests(memory="1Xi")), QuantityError,
        'pod default/web-1: spec.initContainers[0].resources.requests.memory: invalid quantity "1Xi"'),
    "invalid overhead": (
        pod(overhead={"cpu": "lots"}), QuantityError,
        'pod default/web-1: spec.overhead.cpu: invalid quantity "lots"'),
    "invalid pod-level request": (
        pod(resources={"requests": {"memory": "1..5Gi"}}), QuantityError,
        'pod default/web-1: spec.resources.requests.memory: invalid quantity "1..5Gi"'),
    "negative request": (
        pod(containers=requests(memory="-1Gi")), ObjectError,
        'pod default/web-1: spec.containers[0].resources.requests.memory: Invalid value: "-1Gi": must be greater than or equal to 0'),
    "unknown toleration operator": (
        pod(tolerations=[{"key": "a", "operator": "Bogus"}]), ObjectError,
        'pod default/web-1: spec.tolerations[0].operator: unsupported operator "Bogus"'),
    "unknown toleration effect": (
        pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "Sometimes"}]), ObjectError,
        'pod default/web-1: spec.tolerations[0].effect: unsupported effect "Sometimes"'),
    "Exists toleration with a value": (
        pod(tolerations=[{"operator": "Equal", "key": "k"}, {"key": "a", "operator": "Exists", "value": "x"}]),
        ObjectError, "pod default/web-1: spec.tolerations[1].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists'"),
    "unknown node selector operator": (
        pod(affinity=_required({"key": "zone", "operator": "Like", "values": ["x"]})), ObjectError,
        f'pod default/web-1: {REQUIRED}.matchExpressions[0].operator: unknown operator "Like"'),
    "matchFields with Exists": (
        pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]}}}), ObjectError,
        f'pod default/web-1: {REQUIRED}.matchFields[0].operator: unknown operator "Exists"'),
    "preferred weight out of range": (
        pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "preference": {}}]}}), ObjectError,
        f"pod default/web-1: {PREFERRED}[0].weight: must be in the range 0-100, got 101"),
    "missing metadata.name": (
        {"kind": "Pod", "metadata": {"namespace": "default"}, "spec": {"containers": [{"name": "c"}]}},
        ObjectError, "pod: metadata.name: missing or empty"),
    "missing metadata": (
        {"kind": "Pod", "spec": {"containers": [{"name": "c"}]}}, ObjectError,
        "pod: metadata: missing or not an object"),
    "labels not a map": (
        dict(pod(), metadata={"name": "web-1", "labels": ["app"]}), ObjectError,
        "pod default/web-1: metadata.labels: expected an object, got list ['app']"),
    "label value not a string": (
        dict(pod(), metadata={"name": "web-1", "labels": {"tier": 1}}), ObjectError,
        "pod default/web-1: metadata.labels[tier]: expected a string value, got int 1"),
    "containers not a list": (
        pod(containers={"name": "c"}), ObjectError,
        "pod default/web-1: spec.containers: expected a list, got dict {'name': 'c'}"),
    "no containers": (
        pod(containers=[]), ObjectError, "pod default/web-1: spec.containers: must have at least one container"),
    "container not an object": (
        pod(containers=["nginx"]), ObjectError,
        "pod default/web-1: spec.containers[0]: expected an object, got str 'nginx'"),
    "hostPort a string": (
        pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": "8080"}]}]), ObjectError,
        "pod default/web-1: spec.containers[0].ports[0].hostPort: expected an integer, got str '8080'"),
    "hostPort out of range": (
        pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 70000}]}]), ObjectError,
        "pod default/web-1: spec.containers[0].ports[0].hostPort: must be between 0 and 65535, got 70000"),
    "unknown protocol": (
        pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80, "protocol": "HTTP"}]}]),
        ObjectError, 'pod default/web-1: spec.containers[0].ports[0].protocol: unsupported protocol "HTTP"'),
    "nodeSelector value not a string": (
        pod(nodeSelector={"zone": 1}), ObjectError,
        "pod default/web-1: spec.nodeSelector[zone]: expected a string value, got int 1"),
    "nodeName not a string": (
        pod(nodeName=5), ObjectError, "pod default/web-1: spec.nodeName: expected a string, got int 5"),
    "spec not an object": (
        dict(pod(), spec=[]), ObjectError, "pod default/web-1: spec: expected an object, got list []"),
    "values not a list": (
        pod(affinity=_required({"key": "zone", "operator": "In", "values": "z1"})), ObjectError,
        f"pod default/web-1: {REQUIRED}.matchExpressions[0].values: expected a list, got str 'z1'"),
    "namespace not a string": (
        dict(pod(), metadata={"name": "web-1", "namespace": 3}), ObjectError,
        "pod web-1: metadata.namespace: expected a string"),
    "podAntiAffinity without topologyKey": (
        pod(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {}}]}}), ObjectError,
        "pod default/web-1: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".topologyKey: can not be empty"),
    "podAffinity selector operator": (
        pod(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchExpressions": [
                {"key": "app", "operator": "Gt", "values": ["1"]}]}}}]}}), ObjectError,
        "pod default/web-1: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
        ".podAffinityTerm.labelSelector.matchExpressions[0].operator: \"Gt\" is not a valid label selector operator"),
    "topologySpreadConstraints maxSkew": (
        pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
        ObjectError,
        "pod default/web-1: spec.topologySpreadConstraints[0].maxSkew: must be greater than zero, got 0"),
    "persistentVolumeClaim without claimName": (
        pod(volumes=[{"name": "cfg", "configMap": {"name": "x"}},
                     {"name": "data", "persistentVolumeClaim": {}}]), ObjectError,
        "pod default/web-1: spec.volumes[1].persistentVolumeClaim.claimName: required value"),
    "resourceClaims without a source": (
        pod(resourceClaims=[{"name": "gpu"}]), ObjectError,
        'pod default/web-1: spec.resourceClaims[0]: Invalid value: "gpu": must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`"),
}


def _raises_one(fn, cls, message):
    with pytest.raises(ValidationError) as info:
        fn()
    assert type(info.value) is cls, f"{type(info.value).__name__}: {info.value}"
    assert str(info.value) == message
    assert isinstance(info.value, kschedcore.KSchedCoreError) and isinstance(info.value, ValueError)
    return info.value


@pytest.mark.parametrize("case", list(BAD_PODS))
def test_bad_pending_pod(case):
    raw, cls, message = BAD_PODS[case]
    _raises_one(lambda: Scheduler([node()]).queue(raw), cls, message)


@pytest.mark.parametrize("case", ["invalid quantity", "negative request", "labels not a map", "hostPort a string",
                                  "persistentVolumeClaim without claimName", "missing metadata.name"])
def test_bad_bound_pod(case):
    raw, cls, message = BAD_PODS[case]
    raw = json.loads(json.dumps(raw))
    raw["spec"]["nodeName"] = "n1"
    _raises_one(lambda: Scheduler([node()], [raw]), cls, message)


def test_error_fields_name_the_object_and_path():
    err = _raises_one(lambda: Scheduler([node()]).queue(BAD_PODS["invalid quantity"][0]), QuantityError,
                      BAD_PODS["invalid quantity"][2])
    assert (err.obj, err.field, err.text) == ("pod default/web-1", "spec.containers[0].resources.requests.cpu", "1.2.3")
    err = _raises_one(lambda: Scheduler([node()]).queue(BAD_PODS["resourceClaims without a source"][0]),
                      ObjectError, BAD_PODS["resourceClaims without a source"][2])
    assert err.field == "spec.resourceClaims[0]"


def test_pod_without_namespace_is_in_default():
    _raises_one(lambda: Scheduler([node()]).queue(pod(namespace=None, containers=requests(cpu="x"))),
                QuantityError, 'pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "x"')


BAD_NODES = {
    "invalid allocatable": (
        node(alloc={"cpu": "two"}), QuantityError, 'node n1: status.allocatable.cpu: invalid quantity "two"'),
    "negative allocatable": (
        node(alloc={"memory": "-4Gi"}), ObjectError, 'node n1: status.allocatable.memory: Invalid value: "-4Gi": must be greater than or equal to 0'),
    "allocatable not a map": (
        node(alloc=["cpu"]), ObjectError, "node n1: status.allocatable: expected an object, got list ['cpu']"),
    "invalid capacity": (
        {"kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "1.2.3"}}}, QuantityError,
        'node n1: status.capacity.cpu: invalid quantity "1.2.3"'),
    "unknown taint effect": (
        node(spec={"taints": [{"key": "a", "effect": "Never"}]}), ObjectError,
        'node n1: spec.taints[0].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"'),
    "taint without key": (
        node(spec={"taints": [{"key": "a", "effect": "NoSchedule"}, {"effect": "NoSchedule"}]}), ObjectError,
        "node n1: spec.taints[1].key: Invalid value: \"\": name part must be non-empty"),
    "unschedulable not a boolean": (
        node(spec={"unschedulable": "yes"}), ObjectError,
        "node n1: spec.unschedulable: expected a boolean, got str 'yes'"),
    "labels not a map": (
        dict(node(), metadata={"name": "n1", "labels": "zone=a"}), ObjectError,
        "node n1: metadata.labels: expected an object, got str 'zone=a'"),
    "image sizeBytes a string": (
        node(status={"allocatable": {"cpu": "1"}, "images": [{"names": ["nginx"], "sizeBytes": "10"}]}), ObjectError,
        "node n1: status.images[0].sizeBytes: expected an integer, got str '10'"),
    "missing metadata.name": (
        {"kind": "Node", "metadata": {"labels": {}}}, ObjectError, "node: metadata.name: missing or empty"),
}


@pytest.mark.parametrize("case", list(BAD_NODES))
def test_bad_node(case):
    raw, cls, message = BAD_NODES[case]
    _raises_one(lambda: Scheduler([node("ok"), raw]), cls, message)


def test_duplicate_node_name():
    with pytest.raises(ValidationError) as info:
        Scheduler([node("a"), node("b"), node("a")])
    assert str(info.value) == "node a: metadata.name: duplicate node name"
    sched = Scheduler([node("a")])
    with pytest.raises(ValidationError) as info:
        sched.add_node(node("a"))
    assert str(info.value) == "node a: metadata.name: duplicate node name"
    assert sched.node_names == ["a"]


def test_duplicate_bound_pod():
    bound = pod(nodeName="n1")
    with pytest.raises(ValidationError) as info:
        Scheduler([node()], [bound, bound])
    assert str(info.value) == "pod default/web-1: metadata.name: duplicate pod"


def test_unknown_node_in_update_remove_and_assume():
    sched = Scheduler([node("a")])
    with pytest.raises(ValidationError, match=r"^node b: metadata.name: no such node$"):
        sched.update_node(node("b"))
    with pytest.raises(ValidationError, match=r"^node b: metadata.name: no such node$"):
        sched.remove_node("b")
    with pytest.raises(ValidationError, match=r'^pod default/web-1: spec.nodeName: no such node "b"$'):
        sched.assume(pod(), "b")
    with pytest.raises(kschedcore.NotFoundError, match=r"^pod default/nope: no such pod$"):
        sched.remove_pod("default/nope")
    assert sched.remove_pod("default/nope", missing_ok=True) is False   # as an informer delete
    assert sched.remove_node("b", missing_ok=True) is None


def test_the_same_mistake_is_the_same_error_through_every_method():
    """Unknown key or name: NotFoundError (a ValidationError and a KeyError); wrong state:
    StateError -- through the Scheduler, the Simulation, the live loop and forks."""
    from kschedcore import NotFoundError, StateError
    from kschedcore.scheduler.live import LiveScheduler
    from kschedcore.scheduler.loop import Simulation
    sched = Scheduler([node("a")])
    sim = Simulation(Scheduler([node("a")]))
    unknown_node = [lambda: sched.update_node(node("b")), lambda: sched.remove_node("b"),
                    lambda: sched.assume(pod(), "b"), lambda: sched.cordon("b"), lambda: sched.drain("b"),
                    lambda: sim.update_node(node("b")), lambda: sim.remove_node("b")]
    unknown_pod = [lambda: sched.remove_pod("default/x"), lambda: sim.delete_pod("default/x"),
                   lambda: sim.update_pod(pod("x")), lambda: sched.scale("default/x", 1)]
    for call in unknown_node + unknown_pod:
        with pytest.raises(NotFoundError) as err:
            call()
        assert isinstance(err.value, KeyError) and isinstance(err.value, ValidationError)
        assert str(err.value).startswith(("node b: ", "pod default/", "workload default/x")), str(err.value)
    sched.assume(pod(), "a")
    with pytest.raises(StateError, match="already assumed or bound"):
        sched.assume(pod(), "a")
    sim.add_pod({**pod("bound"), "spec": {**pod()["spec"], "nodeName": "a"}})
    with pytest.raises(StateError, match="not pending"):
        sim.update_pod({**pod("bound"), "spec": {**pod()["spec"], "nodeName": "a"}})
    fork = sched.fork()
    fork.revert()
    with pytest.raises(StateError, match="fork: already reverted or committed"):
        fork.revert()
    sim.delete_pod("default/x", missing_ok=True)
    sim.remove_node("b", missing_ok=True)
    live = LiveScheduler(Scheduler([node("a")]))
    with pytest.raises(NotFoundError):
        live.delete_pod("default/x")


@pytest.mark.parametrize("kwargs,message", [
    (dict(percentage_of_nodes_to_score=101),
     "scheduler: percentageOfNodesToScore: must be an integer in the range 0-100, got 101"),
    (dict(percentage_of_nodes_to_score="50"),
     "scheduler: percentageOfNodesToScore: must be an integer in the range 0-100, got '50'"),
    (dict(percentage_of_nodes_to_score=True),
     "scheduler: percentageOfNodesToScore: must be an integer in the range 0-100, got True"),
    (dict(seed="x"), "scheduler: seed: must be an integer, got 'x'"),
    (dict(seed=1.5), "scheduler: seed: must be an integer, got 1.5"),
    (dict(tie_break="last"), 'scheduler: tieBreak: must be "random" or "first", got "last"'),
    (dict(plugin_args={"NodeResourcesFit": {"scoringStrategy": {"type": "Balanced"}}}),
     'KubeSchedulerConfiguration: initializing profiles: creating profile for scheduler name default-scheduler: '
     'initializing plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Balanced": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    (dict(plugin_args={"NodeResourcesFit": {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}}),
     'KubeSchedulerConfiguration: initializing profiles: creating profile for scheduler name default-scheduler: '
     'initializing plugin "NodeResourcesFit": scoringStrategy.requestedToCapacityRatio.shape: Required value: '
     'at least one point must be specified'),
])
def test_bad_scheduler_options(kwargs, message):
    with pytest.raises(ValidationError) as info:
        Scheduler([node()], **kwargs)
    assert str(info.value) == message


# ---- inputs that once gave another exception instead of a ValidationError ------------------------

@pytest.mark.parametrize("make", [
    lambda: Scheduler([node()]).schedule(pod(containers=requests(cpu="1e16"))),       # 10^19 millicores
    lambda: Scheduler([node()]).schedule(pod(containers=requests(memory="1e30"))),
    lambda: Scheduler([node(alloc={"cpu": "2", "pods": "1e30"})]).schedule(pod()),
    lambda: Scheduler([node()], [pod(nodeName="n1", containers=requests(cpu="1e30"))]),
], ids=["pod-cpu", "pod-memory", "node-pods", "bound-pod-cpu"])
def test_out_of_range_quantities(make):
    with pytest.raises(ValidationError):
        make()


@pytest.mark.parametrize("strategy", [
    {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [{"utilization": 50}]}},
    {"type": "LeastAllocated", "resources": [{"weight": 1}]},
    "LeastAllocated",
    {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 11}]}},
    {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}]}},
    {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]},
    {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": "2"}]},
], ids=["shape-without-score", "resource-without-name", "not-an-object", "score-11", "not-increasing",
        "weight-101", "weight-string"])
def test_bad_scoring_strategy(strategy):
    with pytest.raises(ValidationError):
        Scheduler([node()], plugin_args={"NodeResourcesFit": {"scoringStrategy": strategy}})


# ---- files -------------------------------------------------------------------------------------
def test_malformed_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Node\nmetadata: {name: a\n")
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert str(info.value) == (f"{path}: line 3, column 1: invalid YAML/JSON: "
                               "expected ',' or '}', but got '<stream end>'")


def test_malformed_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"kind": "Node"}, ')
    with pytest.raises(WorkloadError, match=r"^" + str(path) + r": line 1, column \d+: invalid YAML/JSON: "):
        load_workload(path)


def test_object_without_kind(tmp_path):
    path = tmp_path / "nokind.yaml"
    path.write_text("kind: Node\nmetadata: {name: a}\n---\nmetadata:\n  name: x\n")
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert str(info.value) == f"{path}: document 2: kind: missing: not a Kubernetes object or a workload document"
    assert info.value.field == "kind"


@pytest.mark.parametrize("text,message", [
    ("- 1\n- 2\n", "document 1: expected an object, got list"),
    ("just text\n", "document 1: expected an object, got str"),
    ("kind: List\nitems: {a: 1}\n", "document 1: items: expected a list"),
    ("kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- [1]\n", "document 1: items[1]: expected an object, got list"),
    ('{"nodes": [], "pods": {"a": 1}}', "document 1: pods: expected a list, got dict"),
])
def test_bad_documents(tmp_path, text, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert str(info.value) == f"{path}: {message}"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert str(info.value) == f"{path}: No such file or directory"


# ---- the CLI: one line on stderr, exit code 2, no traceback ------------------------------------
def _cli_error(capsys, argv):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith("kschedcore: error: ")
    return lines[0]


def test_cli_bad_file(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: Node\nmetadata: {name: a\n")
    line = _cli_error(capsys, ["explain", str(path), "-o", "jsonl"])
    assert line == (f"kschedcore: error: {path}: line 3, column 1: invalid YAML/JSON: "
                    "expected ',' or '}', but got '<stream end>'")


def test_cli_missing_file(tmp_path, capsys):
    path = tmp_path / "missing.yaml"
    assert _cli_error(capsys, ["explain", str(path)]) == f"kschedcore: error: {path}: No such file or directory"
    assert _cli_error(capsys, ["simulate", str(path)]) == f"kschedcore: error: {path}: No such file or directory"


NODE_A = "kind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '2', pods: '5'}}\n---\n"


@pytest.mark.parametrize("text,args,message", [
    (NODE_A + "kind: Pod\nmetadata: {name: web-1}\nspec:\n  containers:\n"
     "  - name: c\n    resources: {requests: {cpu: '1.2.3'}}\n", ["explain", "-o", "json"],
     'pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"'),
    (NODE_A + "kind: Pod\nmetadata: {name: p, namespace: x}\nspec: {containers: [{name: c}], "
     "resourceClaims: [{name: gpu}]}\n",
     ["simulate", "-o", "json"],
     'pod x/p: spec.resourceClaims[0]: Invalid value: "gpu": must specify one of: `resourceClaimName`, '
     "`resourceClaimTemplateName`"),
    (NODE_A + "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: '1e16'}}}]}\n",
     ["explain", "-o", "jsonl"],
     "pod default/p: spec.containers[*].resources.requests.cpu: 10000000000000000000 is out of range "
     "(more than 2^63-1)"),
], ids=["invalid-quantity", "claim-without-source", "out-of-range"])
def test_cli_bad_object(tmp_path, capsys, text, args, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    assert _cli_error(capsys, [args[0], str(path), *args[1:]]) == "kschedcore: error: " + message


# ---- good input: YAML / JSON shapes ------------------------------------------------------------
NODES_YAML = """\
apiVersion: v1
kind: Node
metadata: {name: a, labels: {topology.kubernetes.io/zone: z1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {topology.kubernetes.io/zone: z2}}
status: {allocatable: {cpu: 4, memory: 8Gi, pods: "10"}}
"""

PODS_YAML = """\
---
apiVersion: v1
kind: Pod
metadata: {name: first}
spec:
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: 1500m}}}
---
# a bound pod between pending ones
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: prod}
spec:
  nodeName: b
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: "3"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: second}
spec:
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: 500m}}}
...
"""


def _names(objs):
    return [o["metadata"]["name"] for o in objs]


def test_multi_document_yaml(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(NODES_YAML + PODS_YAML + "---\n")       # empty documents are skipped
    w = load_workload(path)
    assert _names(w.nodes) == ["a", "b"]
    assert _names(w.pods) == ["running"]                     # spec.nodeName: bound
    assert _names(w.pending) == ["first", "second"]         # the others, in file order
    records = Scheduler.from_workload(w, percentage_of_nodes_to_score=100, tie_break="first").explain_pending()
    # b has 4 cpus with 3 used: first (1.5) only fits a; then second (0.5) fits both
    assert [(r["pod"], r["node"]) for r in records] == [("default/first", "a"), ("default/second", "b")]
    assert records[0]["filter"]["b"]["reasons"] == ["Insufficient cpu"]


def test_kind_list_and_several_files(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES_YAML)
    lst = tmp_path / "pods.yaml"
    lst.write_text("apiVersion: v1\nkind: List\nitems:\n"
                   "- {kind: Pod, metadata: {name: x}, spec: {containers: [{name: c}]}}\n"
                   "- kind: PodList\n  items:\n"
                   "  - {kind: Pod, metadata: {name: y}, spec: {nodeName: a, containers: [{name: c}]}}\n"
                   "- {kind: Pod, metadata: {name: z}, spec: {containers: [{name: c}]}}\n")
    w = load_workload(nodes, lst)
    assert _names(w.nodes) == ["a", "b"]
    assert _names(w.pods) == ["y"]
    assert _names(w.pending) == ["x", "z"]


def test_json_file(tmp_path):
    import yaml
    docs = list(yaml.safe_load_all(NODES_YAML + PODS_YAML))
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(docs, indent=1))             # a JSON array of objects
    w = load_workload(path)
    assert (_names(w.nodes), _names(w.pods), _names(w.pending)) == (["a", "b"], ["running"], ["first", "second"])
    single = tmp_path / "list.json"
    single.write_text(json.dumps({"kind": "List", "items": docs}))
    w2 = load_workload(single)
    assert (_names(w2.nodes), _names(w2.pods), _names(w2.pending)) == (["a", "b"], ["running"], ["first", "second"])


def test_workload_document(tmp_path):
    import yaml
    docs = list(yaml.safe_load_all(NODES_YAML + PODS_YAML))
    path = tmp_path / "workload.json"
    # the parity workload shape: pending keeps its order even for pre-bound pods
    path.write_text(json.dumps({"nodes": docs[:2], "pods": [docs[3]], "pending": [docs[4], docs[2]]}))
    w = load_workload(path)
    assert (_names(w.nodes), _names(w.pods), _names(w.pending)) == (["a", "b"], ["running"], ["second", "first"])


def test_cli_explain_from_yaml(tmp_path, capsys):
    path = tmp_path / "cluster.yaml"
    path.write_text(NODES_YAML + PODS_YAML)
    rc = main(["explain", str(path), "--percentage-of-nodes-to-score", "100", "--tie-break", "first", "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["pod"], r["node"]) for r in records] == [("default/first", "a"), ("default/second", "b")]


def test_label_sets_passed_once_still_refuse_a_bad_one():
    """check_meta remembers label sets that passed: a bad set is refused every time, and a
    good set with one bad label more is refused too."""
    from kschedcore.objects.pod import parse_pod

    def pod(name, labels):
        return {"metadata": {"name": name, "labels": labels}, "spec": {"containers": [{"name": "c"}]}}

    parse_pod(pod("a", {"app": "web"}))
    parse_pod(pod("b", {"app": "web"}))
    for name in ("c", "d"):
        with pytest.raises(ObjectError, match="metadata.labels"):
            parse_pod(pod(name, {"app": "web", "bad key!": "x"}))


def test_the_64th_resource_name_is_refused_naming_the_object_and_field():
    """The node table keeps a column per resource name and the Fit status a bit per column:
    past 63 names (cpu, memory and ephemeral-storage first) the node or pod that brings the next
    one is refused, never mis-scheduled."""
    node = {"metadata": {"name": "wide"}, "status": {"allocatable": {
        "cpu": "4", "memory": "8Gi", "pods": "110", **{f"example.com/r{i}": "1" for i in range(60)}}}}
    sched = kschedcore.Scheduler([node])
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {"example.com/r0": "1", "example.com/new": "1"},
                                                   "limits": {"example.com/r0": "1", "example.com/new": "1"}}}]}}
    with pytest.raises(UnsupportedError, match=r'^pod default/p: resources.requests\[example.com/new\]: a resource '
                                               r'name beyond the first 63 distinct ones'):
        sched.schedule(pod)
    other = {"metadata": {"name": "other"}, "status": {"allocatable": {"cpu": "4", "example.com/more": "1"}}}
    with pytest.raises(UnsupportedError, match=r"^node other: status.allocatable\[example.com/more\]: "):
        sched.add_node(other)
    assert sched.schedule({**pod, "spec": {"containers": [{"name": "c", "image": "x", "resources": {
        "requests": {"example.com/r0": "1"}, "limits": {"example.com/r0": "1"}}}]}}).node == "wide"
