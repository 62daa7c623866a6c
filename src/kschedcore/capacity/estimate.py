"""How many copies of a pod fit: cluster-capacity's simulation (pkg/framework/simulator.go),
decided by the Scheduler's own cycles.

cluster-capacity starts kube-scheduler on a fake API holding the cluster, creates one copy of the
template, and on each binding creates the next, until a copy's PodScheduled condition turns
Unschedulable or `--max-limit` copies were made. Each copy is thus scheduled and assumed before
the next exists; the answer is every pod bound in the run, in order -- the cluster's own pending
pods of the default scheduler included (its binder hook counts them too, and each of their
bindings creates one more copy). Nodes and pods reach it in the API's list order (by name; by
namespace, then name), so the node order a cycle scans is that of the sorted names.
"""
import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..objects.pod import parse_pod, renamed
from .podspec import DEFAULT_SCHEDULER, Template

UNSCHEDULABLE = "Unschedulable"
LIMIT_REACHED = "LimitReached"


class Bound(NamedTuple):
    """One pod bound in the run: `template` is its template's index, None for a cluster pod."""
    pod: str
    node: str
    template: int | None


@dataclass
class Estimate:
    """A run's outcome: the pods bound in order, and why it stopped (cluster-capacity's
    Status.StopReason is f"{stop_type}: {stop_message}")."""
    templates: list
    bound: list = field(default_factory=list)
    stop_type: str = ""
    stop_message: str = ""
    #: pods of the cluster that were pending and stayed so: key -> unschedulable message
    unplaced_cluster_pods: dict = field(default_factory=dict)

    @property
    def stop_reason(self) -> str:
        return f"{self.stop_type}: {self.stop_message}"

    def instances(self, template: int | None = None) -> int:
        return sum(1 for b in self.bound if template is None or b.template == template)


class CopyMaker:
    """Copies of a template as parsed Pods: the template is parsed (and validated) once; each
    copy shares its parsed fields, hence its compiled form, and differs in name only."""

    def __init__(self, sched, template: Template, scheduler_name: str = DEFAULT_SCHEDULER):
        self.template, self.counter, self.sched = template, 0, sched
        raw = template.copy(0, scheduler_name)
        self.parsed = sched.parse_pod(parse_pod(raw, f"template {template.namespace}/{template.name}"))

    def take(self, count: int, compiled) -> list:
        """The next `count` copies, compiled as `compiled` (a copy's cycle made it)."""
        base, self.counter = self.counter, self.counter + count
        name, ns, parsed = self.template.name, self.template.namespace, self.parsed
        parsed.compiled = compiled
        return [renamed(parsed, f"{name}-{i}", f"{ns}/{name}-{i}") for i in range(base, base + count)]

    def peek(self):
        """The copy next() makes next, not taken."""
        name = f"{self.template.name}-{self.counter}"
        return renamed(self.parsed, name, f"{self.template.namespace}/{name}")

    def next(self):
        """The next copy; its claims from templates are made (the resourceclaim controller's
        part), so each copy allocates devices of its own."""
        i, self.counter = self.counter, self.counter + 1
        name = f"{self.template.name}-{i}"
        pod = renamed(self.parsed, name, f"{self.template.namespace}/{name}")
        self.sched.make_claims(pod)
        return pod


def run(sched, templates: list, max_limit: int = 0) -> Estimate:
    """cluster-capacity's Run(): copies of the templates, in turn, each scheduled and assumed
    before the next, until one is unschedulable or `max_limit` (> 0) copies were made. The
    scheduler's pending pods (of its default profile) go first, in queue order."""
    makers = [CopyMaker(sched, t) for t in templates]
    est = Estimate(templates)
    cycles = sched.cycles
    pending = [p for p in sched.pending if p.scheduler_name == DEFAULT_SCHEDULER and not p.gated]
    if pending:
        return _run_with_pending(sched, makers, max_limit, est, pending)
    limit = max_limit if max_limit > 0 else 1 << 62
    batched = len(makers) == 1
    while len(est.bound) < limit:
        i = len(est.bound)
        pod = makers[i % len(makers)].next()
        result = cycles.schedule_pod(pod)
        if result.node is None:
            cycles.post_filter(pod, result)
            est.stop_type, est.stop_message = UNSCHEDULABLE, result.message or ""
            return est
        sched.assume_scheduled(pod, result)
        est.bound.append(Bound(pod.key, result.node, i % len(makers)))
        if batched:
            batched = _copies(sched, makers[0], pod, result, min(limit - len(est.bound), COPY_BATCH), est)
    est.stop_type, est.stop_message = LIMIT_REACHED, f"Maximum number of pods simulated: {max_limit}"
    return est


#: copies scheduled per NodeKernel.run_copies call
COPY_BATCH = 1 << 16


def _copies(sched, maker, pod, result, count: int, est) -> bool:
    """Identical copies of `pod` by the kernel's cached verdicts (ScheduleOne.schedule_copies)
    or, after a cross-pod cycle (spreading, pod affinity), with the kernel counting them
    (schedule_cross_copies), recorded in the cache; False when neither can take its copies."""
    if count <= 0:
        return True
    cycles, counted = sched.cycles, False
    rows = cycles.schedule_copies(pod, count)
    if rows is None:
        if result.cycle is None or not result.cycle.cross_pod:
            return False
        ready = cycles.cross_copies_ready(maker.peek())
        if ready is None:
            return True         # (it backs off by itself; a later cycle may start a run)
        rows, counted = cycles.schedule_cross_copies(ready, count, np.zeros((count, 2), np.int64)), True
    nodes = sched.cache.table.nodes
    names = [nodes[row].name for row in rows.tolist()]
    copies = maker.take(len(names), pod.compiled)
    sched.cache.place_written(copies, names, True, counted)
    est.bound.extend(map(Bound, [c.key for c in copies], names, [0] * len(names)))
    return True


def _run_with_pending(sched, makers, max_limit, est, pending) -> Estimate:
    """The run when the cluster has pending pods: one queue in PrioritySort order (priority,
    then arrival), the cluster's pods first; every binding makes the next copy, and the first
    copy arrives once each of the cluster's pods had its cycle (cluster-capacity creates it
    100 ms after the scheduler starts)."""
    cycles = sched.cycles
    heap, seq, made = [], 0, 0
    template_of = {}

    def push(pod):
        nonlocal seq
        heapq.heappush(heap, (-pod.priority, seq, pod))
        seq += 1

    def make():
        nonlocal made
        maker = made % len(makers)
        pod = makers[maker].next()
        template_of[pod.key] = maker
        made += 1
        push(pod)

    for pod in pending:
        push(pod)
    taken = {id(p) for p in pending}
    sched.pending = [p for p in sched.pending if id(p) not in taken]
    cluster_left, first_made = len(pending), False
    while True:
        if cluster_left == 0 and not first_made:
            first_made = True
            make()
        if not heap:
            break
        _, _, pod = heapq.heappop(heap)
        mine = pod.key in template_of
        cluster_left -= not mine
        result = cycles.schedule_pod(pod)
        if result.node is None:
            cycles.post_filter(pod, result)
            if mine:
                est.stop_type, est.stop_message = UNSCHEDULABLE, result.message or ""
                break
            est.unplaced_cluster_pods[pod.key] = result.message or ""
            sched.pending.append(pod)
            continue
        sched.assume_scheduled(pod, result)
        est.bound.append(Bound(pod.key, result.node, template_of.get(pod.key)))
        if max_limit > 0 and made >= max_limit:
            est.stop_type, est.stop_message = LIMIT_REACHED, f"Maximum number of pods simulated: {max_limit}"
            break
        make()
    return est
