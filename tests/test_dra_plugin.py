"""DynamicResources: the parity case dra_a end to end as its check runs it (replay, settle
arrival, real API server), and each message and rule of the plugin on small clusters."""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kschedcore import Scheduler
from kschedcore.errors import ValidationError
from kschedcore.sources.files import Workload

DATA = Path(__file__).parent / "data" / "parity"


def _claims_key(claims):
    """Per claim: the set of devices and the node selector (values as sets), as the check compares."""
    def selector(s):
        if s is None:
            return None
        return [[(f, r["key"], r["operator"], frozenset(r.get("values") or ())) for f in ("matchFields", "matchExpressions")
                 for r in t.get(f) or ()] for t in s["nodeSelectorTerms"]]
    return {name: (frozenset(tuple(sorted(d.items())) for d in c["devices"]), repr(selector(c["nodeSelector"])))
            for name, c in (claims or {}).items()}


def test_dra_a_replay_matches_kube_scheduler(tmp_path):
    """Every pod's node, last message and claims' allocations as kube-scheduler v1.34.1's."""
    workload = json.loads((DATA / "dra_a.json").read_text())
    pending = workload.pop("pending")
    (tmp_path / "cluster.json").write_text(json.dumps(workload))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps({"type": "ADDED", "object": p}) + "\n" for p in pending))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}   # the kschedcore under test
    out = subprocess.run([sys.executable, "-m", "kschedcore", "replay", str(tmp_path / "cluster.json"),
                          str(tmp_path / "events.jsonl"), "--arrival", "settle", "--api-server", "real", "-o", "jsonl"],
                         capture_output=True, text=True, env=env, check=True).stdout
    ours = {r["pod"]: r for r in map(json.loads, out.splitlines())}
    truth = [json.loads(line) for line in (DATA / "dra_a.trace.jsonl").read_text().splitlines()]
    assert len(truth) == 38
    for t in truth:
        o = ours[t["pod"]]
        assert o["node"] == t["node"], t["pod"]
        assert (o["messages"][-1] if o["messages"] else None) == t.get("message"), t["pod"]
        if t["node"] is not None and "claims" in t:
            assert _claims_key(o.get("claims")) == _claims_key(t["claims"]), t["pod"]
        elif t["node"] is not None:
            assert "claims" not in o, t["pod"]


# ---- small clusters -------------------------------------------------------------------------------
def node(name, cpu="8"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def gpu_slice(node_name, n=2, driver="gpu.example.com"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"driver": driver, "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node_name, "devices": [{"name": f"gpu-{i}"} for i in range(n)]}}


CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def template(name="gpu-1", count=1, cls="gpu", expression=None):
    exactly = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if expression:
        exactly["selectors"] = [{"cel": {"expression": expression}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def pod(name, cpu="1", **source):
    source = source or {"resourceClaimTemplateName": "gpu-1"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                     "resourceClaims": [{"name": "gpu", **source}]}}


def scheduler(nodes=("n1", "n2"), slices=("n1",), templates=(template(),), claims=(), classes=(CLASS,)):
    objects = {"DeviceClass": list(classes), "ResourceSlice": [gpu_slice(n) for n in slices],
               "ResourceClaimTemplate": list(templates), "ResourceClaim": list(claims)}
    return Scheduler.from_workload(Workload(nodes=[node(n) for n in nodes], objects=objects))


def schedule(s, raw):
    p = s.queue(raw)
    s.pending.remove(p)
    return s.schedule_one(p)


def test_claims_from_templates_are_allocated_and_devices_count_as_used():
    s = scheduler()
    results = [schedule(s, pod(f"p{i}")) for i in range(3)]
    assert [r.node for r in results[:2]] == ["n1", "n1"]
    assert results[2].fit_error.full_message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    allocs = s.claim_allocations("default/p1")
    assert allocs == {"p1-gpu": {"devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                              "device": "gpu-1"}],
                                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                     {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    claim = s.cache.dra.claims["default/p0-gpu"]
    assert claim.reserved_for == (("pods", "p0", "uid-p0"),)
    assert claim.v1["metadata"]["ownerReferences"][0]["uid"] == "uid-p0"


def test_dra_rejects_only_nodes_that_pass_the_other_filters():
    """DynamicResources is the last Filter: a node without cpu is counted as Insufficient cpu."""
    s = Scheduler.from_workload(Workload(nodes=[node("n1", cpu="1"), node("n2")], objects={
        "DeviceClass": [CLASS], "ResourceSlice": [gpu_slice("n1")], "ResourceClaimTemplate": [template()]}))
    r = schedule(s, pod("p", cpu="2"))
    assert r.fit_error.full_message.startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all claims. still not schedulable")


def test_missing_device_class_rejects_in_prefilter():
    s = scheduler(templates=(template(cls="nope"),))
    r = schedule(s, pod("p"))
    assert r.fit_error.full_message.startswith(
        "0/2 nodes are available: request gpu: device class nope does not exist. no new claims to deallocate")


def claim_allocated_on_n1() -> dict:
    """The claim "shared" allocated on n1's gpu-0 and reserved by nobody."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "default", "uid": "c1"},
            "spec": template()["spec"]["spec"],
            "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                               "pool": "n1", "device": "gpu-0"}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}


def test_allocated_claim_elsewhere_is_deallocated_by_postfilter():
    """A claim allocated on n1 and reserved by nobody: n2 says the claim is not available, and
    PostFilter deallocates it (the pod's next attempt may allocate it anew)."""
    claim = claim_allocated_on_n1()
    s = scheduler(nodes=("n1", "n2"), claims=(claim,))
    s.cordon("n1")
    r = schedule(s, pod("p", resourceClaimName="shared"))
    assert "1 resourceclaim not available on the node" in r.fit_error.full_message
    assert "deallocation of ResourceClaim completed" in r.fit_error.full_message
    assert s.cache.dra.claims["default/shared"].allocation is None


def test_allocator_error_is_a_scheduler_error():
    s = scheduler(templates=(template(expression='device.attributes["gpu.example.com"].model == "A100"'),))
    r = schedule(s, pod("p"))
    assert r.node is None and r.error.startswith('running "DynamicResources" filter plugin: ')
    assert "no such key: model" in r.error


def test_filter_reports_the_allocation_before_an_allocated_claims_node():
    """A pod with a claim allocated on n1 and one to allocate: where the second cannot be
    allocated (n1: its device is the first claim's; n2: no slice) Filter says so, and only n3,
    where it can, says the first claim is not available there (upstream's order)."""
    claim = claim_allocated_on_n1()
    s = scheduler(nodes=("n1", "n2", "n3"), slices=(), claims=(claim,))
    for n, devices in (("n1", 1), ("n3", 1)):
        s.add_object(gpu_slice(n, devices))
    raw = pod("p", resourceClaimName="shared")
    raw["spec"]["resourceClaims"].append({"name": "more", "resourceClaimTemplateName": "gpu-1"})
    r = schedule(s, raw)
    assert r.fit_error.full_message.startswith(
        "0/3 nodes are available: 1 resourceclaim not available on the node, 2 cannot allocate all claims. "
        "deallocation of ResourceClaim completed")


def test_pod_whose_claim_is_missing_waits_in_preenqueue():
    s = scheduler()
    fw = next(iter(s.profiles.values()))
    dra = fw.by_name["DynamicResources"]
    p = s.parse_pod(pod("p", resourceClaimName="absent"))
    assert dra.pre_enqueue(p) == 'resourceclaim.resource.k8s.io "absent" not found'
    p = s.parse_pod(pod("q"))
    assert dra.pre_enqueue(p) == 'pod "default/q": ResourceClaim not created yet'


def _claim(name, owner_uid=None, deleting=False):
    meta = {"name": name, "namespace": "default", "uid": f"c-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": owner_uid,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": template()["spec"]["spec"]}


@pytest.mark.parametrize("claim, source, status, message", [
    (_claim("p-gpu", owner_uid="someone-else"), {"resourceClaimTemplateName": "gpu-1"}, "p-gpu",
     "ResourceClaim default/p-gpu was not created for pod default/p (pod is not owner)"),
    (_claim("p-gpu", owner_uid="uid-p", deleting=True), {"resourceClaimTemplateName": "gpu-1"}, "p-gpu",
     'resourceclaim "p-gpu" is being deleted'),
    (_claim("p-gpu", owner_uid="someone-else", deleting=True), {"resourceClaimTemplateName": "gpu-1"}, "p-gpu",
     'resourceclaim "p-gpu" is being deleted'),
    (_claim("shared", deleting=True), {"resourceClaimName": "shared"}, None,
     'resourceclaim "shared" is being deleted'),
    (_claim("p-gpu", owner_uid="uid-p"), {"resourceClaimTemplateName": "gpu-1"}, "p-other",
     'resourceclaim.resource.k8s.io "p-other" not found'),
    (_claim("p-gpu", owner_uid="uid-p"), {"resourceClaimTemplateName": "gpu-1"}, "", None),
])
def test_a_pods_claims_are_looked_up_as_upstream_words_it(claim, source, status, message):
    """foreachPodResourceClaim's errors, in its order: the claim missing, being deleted, then not
    the pod's own (for a template's); a template entry the controller gave no claim is skipped."""
    s = scheduler(claims=(claim,))
    fw = next(iter(s.profiles.values()))
    raw = pod("p", **source)
    if status is not None:
        raw["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": status}]}
    p = s.parse_pod(raw)
    assert fw.by_name["DynamicResources"].pre_enqueue(p) == message
    if message is None:
        assert s.cache.dra.pod_claims(p) == []


def test_template_claims_are_deleted_with_their_pod():
    s = scheduler()
    r = schedule(s, pod("p0"))
    assert r.node == "n1" and "default/p0-gpu" in s.cache.dra.claims
    s.remove_pod("default/p0")
    assert "default/p0-gpu" not in s.cache.dra.claims
    assert s.cache.dra.allocated_devices() == set()


def test_bad_claim_in_a_workload_is_one_error_naming_it():
    bad = copy.deepcopy(template())
    bad["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0
    with pytest.raises(ValidationError, match=r"^ResourceClaimTemplate default/gpu-1: spec.spec.devices.requests\[0\]"
                                              r".exactly.count: Invalid value: 0: must be greater than zero$"):
        scheduler(templates=(bad,))


def test_drain_frees_the_devices_and_a_fork_reverts_the_claims():
    s = scheduler(nodes=("n1", "n2"), slices=("n1", "n2"))
    nodes = [schedule(s, pod(f"p{i}")).node for i in range(4)]
    assert sorted(nodes) == ["n1", "n1", "n2", "n2"]
    before = {k: c.allocation for k, c in s.cache.dra.claims.items()}
    with s.fork():
        s.drain(nodes[0])
        assert len(s.cache.dra.allocated_devices()) == 2
        assert s.cache.dra.claims["default/p0-gpu"].allocation is None
    assert {k: c.allocation for k, c in s.cache.dra.claims.items()} == before
    assert len(s.cache.dra.allocated_devices()) == 4


def test_loop_retries_a_pod_after_postfilter_deallocates_its_claim():
    """The claim is allocated on a cordoned node and reserved by nobody: the first attempt's
    PostFilter deallocates it, the claim's update requeues the pod (isSchedulableAfterClaimChange)
    and the next attempt allocates it on the other node."""
    from kschedcore.scheduler.loop import Simulation
    claim = claim_allocated_on_n1()
    s = scheduler(nodes=("n1", "n2"), slices=("n1", "n2"), claims=(claim,))
    s.cordon("n1")
    sim = Simulation(s)
    sim.add_pod(pod("p", resourceClaimName="shared"))
    outcomes = {o.pod: o for o in sim.run_until_idle(60)}
    assert (outcomes["default/p"].node, outcomes["default/p"].attempts) == ("n2", 2)
    assert s.claim_allocations("default/p")["shared"]["devices"][0]["pool"] == "n2"


def test_a_slice_for_all_nodes_reaches_nodes_without_slices_of_their_own():
    """Nodes without node-local slices are rejected without the allocator only while no slice
    reaches other nodes: here n2 allocates from an allNodes pool."""
    shared = gpu_slice("net", n=1)
    del shared["spec"]["nodeName"]
    shared["spec"]["allNodes"] = True
    s = scheduler(nodes=("n1", "n2"), slices=("n1",))
    s.add_object(shared)
    s.cordon("n1")
    r = schedule(s, pod("p"))
    assert r.node == "n2"
    assert s.claim_allocations("default/p")["p-gpu"]["devices"][0]["pool"] == "net"


def test_replay_stream_of_slices_and_claims(tmp_path):
    """A pod without devices waits; a ResourceSlice ADDED for n2 requeues it and it binds there;
    a slice DELETED takes its devices away from the next pod."""
    cluster = {"nodes": [node("n1"), node("n2")], "deviceClasses": [CLASS], "resourceClaimTemplates": [template()]}
    events = [{"type": "ADDED", "object": pod("p0")}, {"type": "ADDED", "object": gpu_slice("n2", n=1)},
              {"type": "DELETED", "object": gpu_slice("n2", n=1)}, {"type": "ADDED", "object": pod("p1")}]
    (tmp_path / "c.json").write_text(json.dumps(cluster))
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}   # the kschedcore under test
    out = subprocess.run([sys.executable, "-m", "kschedcore", "replay", str(tmp_path / "c.json"), str(tmp_path / "e.jsonl"),
                          "--arrival", "settle", "-o", "jsonl"], capture_output=True, text=True, env=env, check=True).stdout
    recs = {r["pod"]: r for r in map(json.loads, out.splitlines())}
    assert (recs["default/p0"]["node"], recs["default/p0"]["attempts"]) == ("n2", 2)
    assert recs["default/p0"]["claims"]["p0-gpu"]["devices"][0]["pool"] == "n2"
    assert recs["default/p1"]["node"] is None
    assert recs["default/p1"]["messages"][-1].startswith("0/2 nodes are available: 2 cannot allocate all claims.")


def test_assume_after_schedule_commits_the_allocation():
    s = scheduler()
    p = s.queue(pod("p0"))
    s.pending.remove(p)
    r = s.schedule(p)
    assert s.cache.dra.allocated_devices() == set()       # a cycle alone allocates nothing
    s.assume(p, r.node)
    assert s.cache.dra.allocated_devices() == {("gpu.example.com", "n1", "gpu-0")}


def test_a_shared_claim_is_allocated_once_and_reserved_for_each_pod():
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "shared", "namespace": "default", "uid": "c1"}, "spec": template()["spec"]["spec"]}
    s = scheduler(nodes=("n1", "n2"), slices=("n1",), claims=(claim,))
    assert [schedule(s, pod(f"p{i}", resourceClaimName="shared")).node for i in range(2)] == ["n1", "n1"]
    c = s.cache.dra.claims["default/shared"]
    assert [r[1] for r in c.reserved_for] == ["p0", "p1"]
    assert s.claim_allocations("default/p1") == s.claim_allocations("default/p0")
    assert s.cache.dra.allocated_devices() == {("gpu.example.com", "n1", "gpu-0")}
    s.remove_pod("default/p0")
    assert s.cache.dra.claims["default/shared"].allocation is not None      # p1 still holds it
    s.remove_pod("default/p1")
    assert s.cache.dra.claims["default/shared"].allocation is None          # reserved by nobody


def test_a_binding_rejected_by_permit_gives_the_devices_back():
    from kschedcore.framework.interface import Unschedulable
    from kschedcore.scheduler.loop import Simulation

    class Reject:
        name = "Reject"

        def permit(self, state, pod, node, sim):
            return Unschedulable("rejected at permit")

    s = scheduler()
    sim = Simulation(s, permit_plugins=[Reject()])
    sim.add_pod(pod("p0"))
    outcomes = {o.pod: o for o in sim.run_until_idle(5)}
    assert outcomes["default/p0"].node is None and outcomes["default/p0"].attempts >= 1
    assert s.cache.dra.allocated_devices() == set()
    assert s.cache.dra.claims["default/p0-gpu"].reserved_for == ()


def test_preemption_nominates_only_a_node_where_the_claims_fit():
    """Ten full nodes, each with a low-priority pod; only n0 has devices: the preemptor's
    victims are on n0 (DynamicResources' verdict holds in the dry runs)."""
    names = [f"n{i}" for i in range(10)]
    s = Scheduler.from_workload(Workload(nodes=[node(n, cpu="2") for n in names], objects={
        "DeviceClass": [CLASS], "ResourceSlice": [gpu_slice("n0")], "ResourceClaimTemplate": [template()]}))
    for n in names:
        low = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"low-{n}", "namespace": "default"},
               "spec": {"nodeName": n, "priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}
        s.add_pod(low)
    high = pod("high", cpu="2")
    high["spec"]["priority"] = 100
    s.run_by_loop()
    p = s.queue(high)
    s.pending.remove(p)
    r = s.schedule(p)
    assert r.node is None
    assert "9 cannot allocate all claims" not in r.fit_error.full_message     # cpu rejects first
    assert r.nomination is not None and r.nomination.nominated_node_name == "n0"
