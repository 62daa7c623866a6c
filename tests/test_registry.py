"""Out-of-tree plugins by name: a Registry, KubeSchedulerConfiguration profiles enabling them
at extension points with weights and pluginConfig args."""
import pytest

import kschedcore
from kschedcore import Scheduler
from kschedcore.custom import NativeScore
from kschedcore.errors import ValidationError
from kschedcore.scheduler.loop import Simulation
from kschedcore.plugins.coscheduling import Coscheduling
from kschedcore.framework.registry import Registry


def free_of(row, node, pod, params):
    col = params[0]
    return node.alloc[row, col] - node.requested[row, col] - pod[col]


def registry():
    reg = Registry()
    reg.register("FreeOf", lambda args: NativeScore("FreeOf", free_of, resources=[args.get("resource", "cpu")]),
                 points=("score",))
    reg.register("Coscheduling", lambda args: Coscheduling(args.get("podGroups", ())), points=("permit",))
    return reg


CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [
    {"schedulerName": "default-scheduler"},
    {"schedulerName": "gpu-packer",
     "plugins": {"score": {"enabled": [{"name": "FreeOf", "weight": 4}]},
                 "permit": {"enabled": [{"name": "Coscheduling"}]}},
     "pluginConfig": [{"name": "FreeOf", "args": {"resource": "example.com/gpu"}},
                      {"name": "Coscheduling", "args": {"podGroups": [
                          {"metadata": {"name": "g"}, "spec": {"minMember": 2, "scheduleTimeoutSeconds": 5}}]}}]}]}


def node(name, gpus):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10",
                                                                   "example.com/gpu": str(gpus)}}}


def pod(name, scheduler="gpu-packer", group=None):
    p = {"metadata": {"name": name, "labels": {}}, "spec": {"schedulerName": scheduler, "containers": [
        {"name": "c", "resources": {"requests": {"cpu": "1", "example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}]}}
    if group:
        p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group
    return p


def test_profile_enables_a_registered_score_with_its_weight_and_args():
    config = kschedcore.parse_config(CONFIG, registry=registry())
    sched = Scheduler([node("a", 2), node("b", 6)], config=config, percentage_of_nodes_to_score=100)
    rec = sched.explain(pod("p"))
    assert {n: (s["raw:FreeOf"], s["FreeOf"]) for n, s in rec["scores"].items()} == {"a": (1, 4), "b": (5, 20)}
    assert "FreeOf" not in sched.explain(pod("q", scheduler="default-scheduler"))["scores"]["a"]


def test_profile_enables_a_registered_permit_plugin_in_the_loop():
    config = kschedcore.parse_config(CONFIG, registry=registry())
    sim = Simulation(Scheduler([node("a", 4)], config=config))
    sim.add_pod(pod("g0", group="g"))
    sim.add_pod(pod("solo", scheduler="default-scheduler", group="g"))   # its profile has no gang
    assert sim.schedule_one() and sim.waiting == {"default/g0": sim.waiting["default/g0"]}
    assert sim.schedule_one() and sim.bound == {"default/solo": "a"}
    sim.add_pod(pod("g1", group="g"))
    sim.run_until_idle()
    assert sim.bound.keys() == {"default/solo", "default/g0", "default/g1"}


def test_unregistered_names_and_points_are_rejected():
    with pytest.raises(ValidationError, match='plugin "FreeOf" does not exist'):
        kschedcore.parse_config(CONFIG)
    reg = registry()
    with pytest.raises(ValidationError, match="already registered"):
        reg.register("FreeOf", lambda args: None, points=("score",))
    with pytest.raises(ValidationError, match="unknown"):
        reg.register("X", lambda args: None, points=("preBindPreFlight",))
    bad = {**CONFIG, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "FreeOf"}]}}}]}
    with pytest.raises(ValidationError, match='plugin "FreeOf" does not extend the extension point'):
        kschedcore.parse_config(bad, registry=reg)


class HoldUntilApproved:
    """A PreEnqueue plugin: pods wait until annotated approved=yes."""
    name = "HoldUntilApproved"

    def pre_enqueue(self, pod):
        ok = ((pod.raw.get("metadata") or {}).get("annotations") or {}).get("approved") == "yes"
        return None if ok else "waiting for approval"


class Fifo:
    """A QueueSort plugin: arrival order, whatever the priority."""
    name = "Fifo"

    def less(self, a, b):
        return a.timestamp < b.timestamp


def test_queue_sort_and_pre_enqueue_from_the_registry():
    reg = Registry()
    reg.register("HoldUntilApproved", lambda args: HoldUntilApproved(), points=("preEnqueue",))
    reg.register("Fifo", lambda args: Fifo(), points=("queueSort",))
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "Fifo"}], "disabled": [{"name": "*"}]},
                                     "preEnqueue": {"enabled": [{"name": "HoldUntilApproved"}]}}}]}
    sim = Simulation(Scheduler([node("a", 0)], config=kschedcore.parse_config(doc, registry=reg)))
    low, high = pod("low", "default-scheduler"), pod("high", "default-scheduler")
    for p in (low, high):
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
        p["metadata"]["annotations"] = {"approved": "yes"}
    high["spec"]["priority"] = 100
    held = pod("held", "default-scheduler")
    held["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    for p in (low, high, held):
        sim.add_pod(p)
    order = []
    while sim.schedule_one():
        order.append(sim.cycles)
    # FIFO: low (first in) before high despite its priority; `held` never left the pool
    assert list(sim.bound) == ["default/low", "default/high"]
    assert sim.queue.where("default/held") == "unschedulablePods"
    with pytest.raises(ValidationError, match="queueSort must be the same for all profiles"):
        kschedcore.parse_config({**doc, "profiles": [*doc["profiles"], {"schedulerName": "other"}]}, registry=reg)
