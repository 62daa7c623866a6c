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
