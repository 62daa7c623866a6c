"""A pending pod being deleted (metadata.deletionTimestamp, no spec.nodeName) is never scheduled:
kube-scheduler's informer queues it and ScheduleOne skips it when popped (skipPodSchedule,
"skip schedule deleting pod"), without putting it back. Such pods are counted in the
Scheduler's `ignored`; in the loop, a pending pod updated to terminating is skipped when popped."""
import json

from kschedcore import Scheduler
from kschedcore.replay import Replay
from kschedcore.replay.events import WatchEvent
from kschedcore.replay.summary import summarize
from kschedcore.scheduler.loop import Simulation, SimulationListener
from kschedcore.scheduler.result import DELETING_REASON

from test_strict_input import run, write

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
        "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "10"}}}
BIG_NODE = {**NODE, "metadata": {"name": "big"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}


def pod(name, cpu="1", deleting=False, node_name=None):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def test_a_pending_pod_being_deleted_is_ignored_and_a_bound_one_still_counts():
    sched = Scheduler([NODE])
    assert sched.add_pod(pod("going", deleting=True)) is None
    assert sched.queue(pod("going-too", deleting=True)) is None
    bound = sched.add_pod(pod("bound-going", cpu="1", deleting=True, node_name="a"))
    sched.add_pod(pod("p", cpu="1500m"))
    assert [p.key for p in sched.pending] == ["default/p"]
    assert sched.ignored[DELETING_REASON] == 2
    assert bound is not None and "default/bound-going" in sched.cache
    [r] = sched.schedule_pending()       # 2 cpu, 1 held by the terminating bound pod
    assert r.pod == "default/p" and r.node is None and "Insufficient cpu" in r.message


def test_simulate_reports_it_with_what_was_left_out(tmp_path):
    cluster = write(tmp_path, "c.yaml", NODE, pod("going", deleting=True), pod("p"))
    code, out = run("simulate", cluster, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["pods"] == 1 and doc["scheduled"] == 1
    assert doc["ignored"] == {DELETING_REASON: 1}


class Told(SimulationListener):
    """Records the pods the loop passed over."""

    def __init__(self):
        self.keys = []

    def skipped(self, key):
        self.keys.append(key)


def test_loop_skips_a_pending_pod_updated_to_terminating_when_it_pops():
    """The pod waits unschedulable; it becomes terminating; a node that fits it arrives and
    requeues it: popped, it is passed over -- no cycle, never queued again."""
    told = Told()
    sim = Simulation(Scheduler([NODE]), listener=told)
    sim.add_pod(pod("big", cpu="3"))
    [out] = sim.run_until_idle(max_seconds=60)
    assert out.node is None and sim.queue.where("default/big") == "unschedulablePods"
    sim.update_pod(pod("big", cpu="3", deleting=True))
    sim.add_node(BIG_NODE)
    assert sim.run_until_idle(max_seconds=60) == []
    assert "default/big" not in sim.bound and sim.queue.where("default/big") is None
    assert sim.sched.ignored[DELETING_REASON] == 1 and told.keys == ["default/big"]
    sim.add_node({**BIG_NODE, "metadata": {"name": "big-2"}})      # no later event brings it back
    sim.run_until_idle(max_seconds=60)
    assert "default/big" not in sim.bound and sim.sched.ignored[DELETING_REASON] == 1


def test_loop_queues_a_terminating_pod_and_skips_it():
    sim = Simulation(Scheduler([NODE]))
    sim.add_pod(pod("going", deleting=True))
    sim.add_pod(pod("p"))
    outcomes = sim.run_until_idle(max_seconds=60)
    assert [(o.pod, o.node) for o in outcomes] == [("default/p", "a")]
    assert sim.sched.ignored[DELETING_REASON] == 1


def ev(typ, obj, time):
    e = WatchEvent(typ, obj["kind"], obj, f"test: {obj['metadata']['name']}")
    e.time, e.relative = int(time * 1e9), True
    return e


def test_replay_skips_a_pending_pod_whose_update_marks_it_deleted():
    events = [ev("ADDED", pod("big", cpu="3"), 0), ev("MODIFIED", pod("big", cpu="3", deleting=True), 1),
              ev("ADDED", BIG_NODE, 2), ev("DELETED", pod("big", cpu="3", deleting=True), 3)]
    replay = Replay(Scheduler(tie_break="first"), [ev("ADDED", NODE, 0)], events, arrival="timestamps")
    replay.run()
    rec = replay.recorder.records["default/big"]
    assert rec.node is None and rec.skipped and rec.attempts == 1
    assert replay.recorder.pending == 0
    pods = summarize(replay)["pods"]
    assert pods["skippedBeingDeleted"] == 1 and pods["pendingAtEnd"] == 0 and pods["bound"] == 0


def test_replay_arrival_with_a_deletion_timestamp_is_still_its_departure_time():
    """An arriving object's deletionTimestamp says when it leaves (the replay's convention): it
    is scheduled, not skipped."""
    events = [ev("ADDED", pod("p", deleting=True), 0)]
    replay = Replay(Scheduler(tie_break="first"), [ev("ADDED", NODE, 0)], events, arrival="all")
    replay.run()
    rec = replay.recorder.records["default/p"]
    assert rec.node == "a" and not rec.skipped
