"""Objects the API server refuses are refused with its words.

tests/data/api_validation/pods_nodes.json holds Pods and Nodes with the first error the API
server's own validation gave for each: k8s.io/kubernetes v1.34.1 pkg/apis/core/validation
(ValidatePodCreate, ValidateNode) run on them after v1 defaulting and conversion, from the
vendored tree of cluster-capacity (the harness is not part of this project).
PriorityClass and PodDisruptionBudget messages follow pkg/apis/scheduling/validation and
pkg/apis/policy/validation, which that tree does not vendor. One change: the API server names
a node's taints "metadata.taints[i]" (an upstream slip); they are said at spec.taints[i] here.
"""
import json
from pathlib import Path

import pytest
import yaml

from kschedcore.errors import ObjectError
from kschedcore.objects.disruption import parse_pdb
from kschedcore.objects.namespace import parse_namespace
from kschedcore.objects.node import parse_node
from kschedcore.objects.pod import parse_pod
from kschedcore.objects.priority_class import parse_priority_class
from kschedcore.objects import validation as apival

from test_strict_input import NODE, error_of, pod, write

CASES = json.loads((Path(__file__).parent / "data/api_validation/pods_nodes.json").read_text())


def _refusal(parse, obj) -> str:
    with pytest.raises(ObjectError) as err:
        parse(obj)
    return f"{err.value.field}: {err.value.message}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["apiserver"][:60])
def test_refused_with_the_api_servers_words(case):
    obj = case["object"]
    parse = parse_node if obj["kind"] == "Node" else parse_pod
    # the API server reports every error, in map order for maps; kschedcore the first it finds
    assert _refusal(parse, obj) in case.get("apiserver_all", [case["apiserver"]])


def test_the_valid_forms_are_accepted():
    for labels in ({"app": "web"}, {"example.com/MyName": "my_value"}, {"k": ""}, {"a" * 63: "b" * 63}):
        parse_pod(pod(**{"nodeSelector": labels}))
        parse_node({**NODE, "metadata": {"name": "n.example.com", "labels": labels}})
    parse_pod({**pod(), "metadata": {"name": "web-1", "namespace": "team-a"}})
    parse_pod(pod(tolerations=[{"operator": "Exists"}, {"key": "k", "operator": "Exists", "effect": "NoExecute",
                                                        "tolerationSeconds": 5}]))


def test_an_underscore_in_a_pod_name_is_let_through_as_kube_scheduler_does():
    """The API server refuses it; kube-scheduler schedules such pods (the parity workloads have
    them), and this project reproduces kube-scheduler."""
    parse_pod({**pod(), "metadata": {"name": "p-001-preempt_big", "namespace": "default"}})
    assert "subdomain" in _refusal(parse_pod, {**pod(), "metadata": {"name": "P_1", "namespace": "default"}})


def test_messages_are_apimachinerys():
    assert apival.qualified_name_errors("a" * 64) == ("name part must be no more than 63 characters",)
    assert apival.dns1123_label_errors("a.b") == ("must not contain dots",)
    assert apival.label_value_errors("-x")[0].startswith("a valid label must be an empty string")
    assert apival.qualified_name_errors("example.com/x") == ()


PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


@pytest.mark.parametrize("change, message", [
    ({"value": 1000000001}, "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    ({"value": 2 ** 31}, "value: cannot unmarshal number 2147483648 into Go struct field PriorityClass.value of type int32"),
    ({"metadata": {"name": "system-mine"}},
     "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
     "error: system-mine is not a known system priority class"),
    ({"metadata": {"name": "system-node-critical"}},
     "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
     "error: value of system-node-critical PriorityClass must be 2000001000"),
    ({"preemptionPolicy": "Sometimes"},
     'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'),
    ({"metadata": {"name": "High"}}, 'metadata.name: Invalid value: "High": a lowercase RFC 1123 subdomain'),
])
def test_priority_classes_are_validated(change, message):
    assert _refusal(parse_priority_class, {**PC, **change}).startswith(message)


def test_the_system_classes_themselves_are_valid():
    parse_priority_class({**PC, "metadata": {"name": "system-cluster-critical"}, "value": 2000000000})


def test_of_two_default_classes_the_lower_value_wins(tmp_path):
    from kschedcore import Scheduler
    sched = Scheduler()
    for name, value in (("b", 50), ("a", 10), ("c", 30)):
        sched.add_object({**PC, "metadata": {"name": name}, "value": value, "globalDefault": True})
    assert sched.parse_pod(pod()).priority == 10


PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
       "spec": {"selector": {"matchLabels": {"app": "web"}}}}


@pytest.mark.parametrize("spec, message", [
    ({"minAvailable": 1, "maxUnavailable": 1}, "spec: Invalid value: minAvailable and maxUnavailable cannot be both set"),
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ({"maxUnavailable": "150%"}, 'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%'),
    ({"maxUnavailable": "half"}, "spec.maxUnavailable: Invalid value: \"half\": must be an integer or percentage (e.g '5%')"),
    ({"selector": {"matchLabels": {"app": "a b"}}}, 'spec.selector.matchLabels: Invalid value: "a b": a valid label'),
    ({"unhealthyPodEvictionPolicy": "Never"},
     'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'),
])
def test_budgets_are_validated(spec, message):
    assert _refusal(parse_pdb, {**PDB, "spec": {**PDB["spec"], **spec}}).startswith(message)


def test_a_negative_disruptions_allowed_is_refused():
    bad = {**PDB, "status": {"disruptionsAllowed": -1}}
    assert _refusal(parse_pdb, bad) == "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"
    assert parse_pdb({**PDB, "spec": {**PDB["spec"], "maxUnavailable": "50%"}}).name == "b"


def test_namespaces_are_dns_labels():
    assert parse_namespace({"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"x": "y"}}}) == \
        ("team-a", {"x": "y"})
    assert _refusal(parse_namespace, {"kind": "Namespace", "metadata": {"name": "team.a"}}) == \
        'metadata.name: Invalid value: "team.a": must not contain dots'


def test_the_cli_refuses_them_in_one_line(tmp_path, capsys):
    bad = pod(nodeSelector={"disk": "ssd x"})
    msg = error_of(capsys, "simulate", write(tmp_path, "w.yaml", NODE, bad))
    assert msg.startswith('pod default/p: spec.nodeSelector: Invalid value: "ssd x": a valid label must be')
    node = {**NODE, "metadata": {"name": "a", "labels": {"bad key": "v"}}}
    msg = error_of(capsys, "simulate", write(tmp_path, "n.yaml", node, pod()))
    assert msg.startswith('node a: metadata.labels: Invalid value: "bad key": name part must consist')


def test_a_realistic_dump_passes_whole(tmp_path):
    """A `kubectl get -o yaml` Pod with the fields the API server adds (managedFields, status,
    ownerReferences, annotations with prefixes) is read."""
    dump = yaml.safe_load("""
apiVersion: v1
kind: Pod
metadata:
  name: web-7d4b9c-x2x9z
  namespace: prod
  generateName: web-7d4b9c-
  labels: {app: web, pod-template-hash: 7d4b9c, app.kubernetes.io/name: web}
  annotations: {kubectl.kubernetes.io/restartedAt: "2025-01-01T00:00:00Z", prometheus.io/scrape: "true"}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: u1, controller: true}]
  managedFields: [{manager: kube-controller-manager, operation: Update, apiVersion: v1}]
spec:
  containers: [{name: web, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  priority: 0
  schedulerName: default-scheduler
  preemptionPolicy: PreemptLowerPriority
status: {phase: Pending, qosClass: Burstable}
""")
    assert parse_pod(dump).key == "prod/web-7d4b9c-x2x9z"



REQUIRED_TERM = ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                 "nodeSelectorTerms[0].matchFields[0].values")
FIELD_VALUES = "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"


def _field_affinity(op: str, values: list, preferred: bool = False) -> dict:
    term = {"matchFields": [{"key": "metadata.name", "operator": op, "values": values}]}
    if preferred:
        return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term}]}}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def _refused_node_field_selector(obj) -> str:
    with pytest.raises(ObjectError) as err:
        apival.check_node_field_selectors("pod default/p", obj)
    return f"{err.value.field}: {err.value.message}"


@pytest.mark.parametrize("op", ["In", "NotIn"])
@pytest.mark.parametrize("values", [["a", "b"], []])
def test_node_field_selector_takes_exactly_one_value(op, values):
    """validation.go ValidateNodeFieldSelectorRequirement: field.Required at `values`."""
    assert _refused_node_field_selector(pod(affinity=_field_affinity(op, values))) == f"{REQUIRED_TERM}: {FIELD_VALUES}"
    preferred = ("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                 ".preference.matchFields[0].values")
    assert _refused_node_field_selector(pod(affinity=_field_affinity(op, values, True))) == f"{preferred}: {FIELD_VALUES}"
    apival.check_node_field_selectors("pod default/p", pod(affinity=_field_affinity(op, ["a"])))   # one: admitted


def test_capacity_podspec_with_several_field_values_is_refused_as_cluster_capacity_refuses_it(tmp_path, capsys):
    """cluster-capacity runs ValidatePodCreate on --podspec: the API server's words, one line."""
    spec = write(tmp_path, "pod.yaml", pod(affinity=_field_affinity("In", ["a", "b"])))
    err = error_of(capsys, "capacity", write(tmp_path, "c.yaml", NODE), "--podspec", spec)
    assert err == f"template default/p: {REQUIRED_TERM}: {FIELD_VALUES}"


def test_a_pod_with_several_field_values_is_scheduled_as_kube_scheduler_schedules_it(tmp_path):
    """kube-scheduler, handed such a pod (the parity workload node_affinity has 31), does not
    refuse it: the term parses to nothing, so no node matches it; kschedcore does the same."""
    parsed = parse_pod(pod(affinity=_field_affinity("In", ["a", "b"])))
    [term] = parsed.required_terms
    assert not term.parses
