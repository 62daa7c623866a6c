"""A preemptor whose victims are still terminating in the API server (live mode: the victims are
deleted there, and leave the cache when their informer's delete arrives) is not eligible to
preempt again: PodEligibleToPreemptOthers' "terminating pod on the nominated node"."""
from kschedcore import Scheduler
from kschedcore.plugins.defaultpreemption.default_preemption import TERMINATING
from kschedcore.scheduler.loop import Simulation, SimulationListener


def _node(name, cpu="2"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name, cpu, priority, node=None):
    spec = {"priority": priority, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": spec}


class Messages(SimulationListener):
    """The messages the loop writes into pods' PodScheduled condition, in order."""

    def __init__(self):
        self.written = []

    def failed(self, key, message):
        self.written.append((key, message))
        return False


def test_the_preemptor_waits_while_its_victim_terminates():
    sched = Scheduler(nodes=[_node("n0")], pods=[_pod("low", "1500m", 10, node="n0")])
    listener = Messages()
    sim = Simulation(sched, listener=listener)
    deleted = []
    sim.victim_deleter = deleted.append          # the API server deletes it; the cache keeps it
    sim.add_pod(_pod("high", "1500m", 1000))
    sim.run_until_idle(5)
    assert deleted == ["default/low"] and sim.nominated == {"default/high": "n0"}
    sched.handle.terminating.add("default/low")  # as the informer shows it: deletionTimestamp, DisruptionTarget
    sim.queue.activate([sim.pods["default/high"]])
    sim.run_until_idle(5)
    assert listener.written[-1] == (
        "default/high", "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
                        f"preemption: {TERMINATING}")
    assert deleted == ["default/low"]            # no second preemption
    sim.delete_pod("default/low")                # its informer's delete
    sched.handle.terminating.discard("default/low")
    sim.run_until_idle(30)
    assert sim.bound.get("default/high") == "n0"


def test_without_terminating_victims_the_preemptor_preempts_again():
    sched = Scheduler(nodes=[_node("n0")], pods=[_pod("low", "1500m", 10, node="n0")])
    sim = Simulation(sched)
    deleted = []
    sim.victim_deleter = deleted.append
    sim.add_pod(_pod("high", "1500m", 1000))
    sim.run_until_idle(5)
    sim.queue.activate([sim.pods["default/high"]])
    sim.run_until_idle(5)
    assert deleted.count("default/low") >= 2     # nothing says it is going: chosen again


def test_replay_of_a_live_recording_keeps_its_victims_gone(tmp_path):
    """A recorded stream holds the victim's DisruptionTarget condition and graceful deletion
    after the preemption; the replay deleted the victim at once and does not bring it back."""
    import json

    from kschedcore.replay import load_replay
    low = _pod("low", "1500m", 10, node="n0")
    high = _pod("high", "1500m", 1000)
    marked = json.loads(json.dumps(low))
    marked["status"] = {"conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}
    going = json.loads(json.dumps(marked))
    going["metadata"]["deletionTimestamp"] = "2026-12-05T10:00:00Z"
    lines = [{"type": "ADDED", "object": _node("n0")}, {"type": "ADDED", "object": low},
             {"type": "ADDED", "object": high}, {"type": "MODIFIED", "object": marked},
             {"type": "MODIFIED", "object": going}, {"type": "ADDED", "object": _pod("mid", "400m", 10)},
             {"type": "DELETED", "object": going}]
    stream = tmp_path / "events.jsonl"
    stream.write_text("".join(json.dumps(x) + "\n" for x in lines))
    replay = load_replay([str(stream)], Scheduler(), arrival="settle")
    replay.run()
    recs = replay.recorder.records
    assert recs["default/high"].node == "n0"
    assert recs["default/low"].preempted_by == "default/high"
    assert "default/low" not in replay.sim.pods
    # bound as it arrived: the victim's later events did not count it on n0 again
    assert (recs["default/mid"].node, recs["default/mid"].bound_event) == ("n0", 5)
