"""A sweep's grid as tasks, and one task run into one result row.

A task is one combination of the axes, in grid order: workloads × configurations ×
percentageOfNodesToScore × seeds × modes (the last varying fastest). Each workload is loaded
once, by the driver, into the forms its modes read (`Inputs`), and shipped to the workers
pickled; a task unpickles its own copy, so no task sees what another changed.
"""
import hashlib
import itertools
import pickle
import time
from dataclasses import dataclass, field
from typing import Any

from .. import capacity
from ..errors import KSchedCoreError, WorkloadError
from ..framework.config import load_config
from ..replay import default_arrival, is_stream, read_inputs, summarize
from ..replay.engine import Replay
from ..replay.events import workload_events
from ..scheduler import Scheduler
from ..scheduler.loop import Simulation
from ..sources.alibaba import is_alibaba_csv
from ..sources.files import load_workload
from ..sources.generator import generate
from .spec import Mode, Sweep, WorkloadSpec

COLUMNS = ("task", "workload", "configuration", "percentageOfNodesToScore", "seed", "mode", "arrival", "podspec",
           "nodes", "pods", "scheduled", "unschedulable", "instances", "cpuUtilization", "memoryUtilization",
           "digest", "wallSeconds", "podsPerSecond")
"""A row's columns, in order (see the formats page, "Sweep input and output")."""
TIMING_COLUMNS = ("wallSeconds", "podsPerSecond")
"""The columns that depend on the machine, not on the decisions."""


@dataclass(frozen=True)
class Task:
    """One combination of the grid: workload, configuration, percentage, seed and mode."""
    index: int
    workload: str
    configuration: str
    percentage: int | None
    seed: int
    mode: Mode
    tie_break: str
    config: object = None       # the SchedulerConfig (capacity: with profile 0 serving default-scheduler)
    template: Any = None        # capacity: the pod Template


@dataclass
class Inputs:
    """What a workload ships: the Workload (schedule, queue, capacity), the replay's events
    (cluster, timeline) as `kschedcore replay` reads the same files."""
    workload: Any = None
    events: Any = None        # (cluster, timeline) for replay

    def pods(self) -> int:
        """How many pods its tasks decide, about (the runners' cost estimate)."""
        if self.workload is not None:
            return len(self.workload.pending) + len(self.workload.pods)
        return len(self.events[1]) if self.events is not None else 0


@dataclass
class Plan:
    """A sweep made ready to run: its tasks in grid order and each workload loaded once."""
    sweep: Sweep
    tasks: list
    payloads: dict              # workload name -> pickled Inputs
    sizes: dict = field(default_factory=dict)   # workload name -> its pods (the runners' cost estimate)


@dataclass
class Decided:
    """What a task's run found, before it becomes a row."""
    pods: int
    scheduled: int
    nodes: int
    utilization: dict
    assignment: dict            # pod key -> node name (None: not placed)
    instances: int | None = None
    arrival: str | None = None


# ---- the grid ----------------------------------------------------------------------------------
def plan(sweep: Sweep) -> Plan:
    """Every task of the grid, and each workload loaded once (an error names its file)."""
    kinds = {m.kind for m in sweep.modes}
    payloads, sizes = {}, {}
    for w in sweep.workloads:
        inputs = load_inputs(w, kinds)
        payloads[w.name], sizes[w.name] = pickle.dumps(inputs, pickle.HIGHEST_PROTOCOL), inputs.pods()
    configs = {name: (load_config(path) if path else None) for name, path in sweep.configurations.items()}
    capacity_configs = {name: capacity.capacity_config(path) for name, path in sweep.configurations.items()} \
        if "capacity" in kinds else {}
    templates = {m.podspec_path: capacity.read_template(str(m.podspec_path)) for m in sweep.modes if m.kind == "capacity"}
    tasks = []
    for i, (w, c, pct, seed, mode) in enumerate(itertools.product(
            sweep.workloads, sweep.configurations, sweep.percentages, sweep.seeds, sweep.modes)):
        is_capacity = mode.kind == "capacity"
        tasks.append(Task(i, w.name, c, pct, seed, mode, sweep.tie_break,
                          capacity_configs[c] if is_capacity else configs[c],
                          templates[mode.podspec_path] if is_capacity else None))
    return Plan(sweep, tasks, payloads, sizes)


def load_inputs(spec: WorkloadSpec, kinds: set) -> Inputs:
    """A workload in the forms the sweep's modes read."""
    if spec.generate is not None:
        w = generate(**spec.generate)
        return Inputs(w if kinds - {"replay"} else None,
                      workload_events(w, f"workload {spec.name}") if "replay" in kinds else None)
    events_only = [p for p in spec.files if is_stream(p) or is_alibaba_csv(p)]
    others = sorted(kinds - {"replay"})
    if events_only and others:
        raise WorkloadError(f"workload {spec.name}", str(events_only[0]),
                            f"an event stream or trace serves replay modes only, not {others[0]}")
    return Inputs(load_workload(*spec.files) if others else None,
                  read_inputs(spec.files) if "replay" in kinds else None)


#: a task's cost per pod, relative to schedule (measured: examples/sweep/sweep.yaml, 500 nodes)
MODE_WEIGHT = {"schedule": 1.0, "queue": 4.0, "replay": 2.0, "capacity": 0.5}


def order(plan: Plan) -> list:
    """The tasks longest first by their estimated cost (pods x the mode's weight), ties in grid
    order: with a task's length known roughly, the longest-processing-time rule keeps the pool's
    last seconds from waiting on one long task."""
    def cost(task: Task) -> float:
        return plan.sizes.get(task.workload, 0) * MODE_WEIGHT.get(task.mode.kind, 1.0)
    return sorted(plan.tasks, key=lambda t: (-cost(t), t.index))


# ---- one task ----------------------------------------------------------------------------------
def attempt(task: Task, payload: bytes) -> dict:
    """The task's row, or {"task", "error"} when its input is refused (the driver reports it)."""
    try:
        return run_task(task, payload)
    except KSchedCoreError as e:
        return {"task": task.index, "error": str(e)}


def run_task(task: Task, payload: bytes) -> dict:
    start = time.perf_counter()
    decided = RUNS[task.mode.kind](task, pickle.loads(payload))
    wall = time.perf_counter() - start
    mode = task.mode
    return {"task": task.index, "workload": task.workload, "configuration": task.configuration,
            "percentageOfNodesToScore": task.percentage, "seed": task.seed, "mode": mode.kind,
            "arrival": decided.arrival, "podspec": mode.podspec, "nodes": decided.nodes, "pods": decided.pods,
            "scheduled": decided.scheduled, "unschedulable": decided.pods - decided.scheduled,
            "instances": decided.instances, "cpuUtilization": decided.utilization.get("cpu", 0.0),
            "memoryUtilization": decided.utilization.get("memory", 0.0),
            "digest": decisions_digest(decided.assignment), "wallSeconds": round(wall, 4),
            "podsPerSecond": round(decided.pods / wall, 1) if wall > 0 else None}


def decisions_digest(assignment: dict) -> str:
    """sha256 of the decisions: a line `pod<TAB>node` per pod, sorted by pod (an empty node: not
    placed), so runs anywhere can be compared exactly."""
    h = hashlib.sha256()
    for pod in sorted(assignment):
        h.update(f"{pod}\t{assignment[pod] or ''}\n".encode())
    return h.hexdigest()


def scheduler_options(task: Task) -> dict:
    return {"percentage_of_nodes_to_score": task.percentage, "tie_break": task.tie_break, "seed": task.seed,
            "config": task.config}


def _decided(sched: Scheduler, pods: int, assignment: dict, **more: Any) -> Decided:
    placed = sum(1 for node in assignment.values() if node)
    return Decided(pods, placed, len(sched.node_names), sched.utilization(), assignment, **more)


def run_schedule(task: Task, inputs: Inputs) -> Decided:
    """Scheduler.schedule_pending: every pending pod in order, each assumed before the next."""
    sched = Scheduler.from_workload(inputs.workload, **scheduler_options(task))
    results = sched.schedule_pending(records=False)
    return _decided(sched, len(results), {r.pod: r.node for r in results})


def run_queue(task: Task, inputs: Inputs) -> Decided:
    """kube-scheduler's loop (Simulation.run_until_idle) up to the mode's virtual horizon."""
    sched = Scheduler.from_workload(inputs.workload, **scheduler_options(task))
    outcomes = Simulation(sched).run_until_idle(task.mode.until)  # type: ignore[arg-type]  # a queue mode has its horizon
    return _decided(sched, len(outcomes), {o.pod: o.node for o in outcomes})


def run_replay(task: Task, inputs: Inputs) -> Decided:
    """A Replay of the workload's events; each pod's node is the last it was bound to."""
    cluster, timeline = inputs.events
    mode = task.mode
    arrival = mode.arrival or default_arrival(timeline)
    sched = Scheduler(**scheduler_options(task))
    replay = Replay(sched, cluster, timeline, arrival=arrival, until=mode.until, bind_latency=mode.bind_latency)
    replay.run()
    pods = summarize(replay)["pods"]
    assignment = {r.pod: r.node for r in replay.recorder.records.values()}
    return Decided(pods["arrived"], pods["bound"], len(sched.node_names), sched.utilization(), assignment,
                   arrival=arrival)


def run_capacity(task: Task, inputs: Inputs) -> Decided:
    """cluster-capacity's question (as `kschedcore capacity`): copies of the template until one
    does not fit; the cluster's own pending pods go first and are decided, not counted."""
    opts = scheduler_options(task)
    sched = capacity.build_cluster(capacity.as_listed(inputs.workload), opts.pop("config"), opts.pop("seed"), **opts)
    est = capacity.run(sched, [task.template], task.mode.max_limit)
    cluster = est.cluster
    tried = cluster.total + len(est.bound) + (est.stop_type == capacity.UNSCHEDULABLE)
    assignment = {b.pod: b.node for b in cluster.placed}
    assignment.update(dict.fromkeys(cluster.unplaced))
    assignment.update((b.pod, b.node) for b in est.bound)
    return _decided(sched, tried, assignment, instances=est.instances())


RUNS = {"schedule": run_schedule, "queue": run_queue, "replay": run_replay, "capacity": run_capacity}
