"""How many copies of a pod fit: cluster-capacity's simulation (pkg/framework/simulator.go),
decided by the Scheduler's own cycles.

cluster-capacity starts kube-scheduler on a fake API holding the cluster, creates one copy of the
template, and on each binding creates the next, until a copy's PodScheduled condition turns
Unschedulable or `--max-limit` copies were made. Each copy is thus scheduled and assumed before
the next exists. Nodes and pods reach it in the API's list order (by name; by namespace, then
name), so the node order a cycle scans is that of the sorted names.

Where the cluster has pending pods, the answer differs from cluster-capacity's on purpose: its
binder hook counts every pod bound in the run, the cluster's own pending pods included (and each
of their bindings makes one more copy), so a pod that fits nowhere could be reported to fit
thousands of times. Here they are scheduled first (`pending.py`) and reported on their own; the
answer counts copies of the template only, and `--max-limit` bounds the copies.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import StateError
from ..objects.pod import parse_pod, renamed
from ..objects.validation import check_node_field_selectors
from ..scheduler.claim_runs import claims_plugin
from ..util.collector import gc_frozen
from .pending import Bound, ClusterPending, schedule_cluster_pending
from .podspec import DEFAULT_SCHEDULER, Template

if TYPE_CHECKING:
    from ..objects.pod import Pod
    from ..scheduler import ScheduleResult, Scheduler

UNSCHEDULABLE = "Unschedulable"
"""A stop reason: the next copy fit nowhere (its FitError follows in the reason)."""
LIMIT_REACHED = "LimitReached"
"""A stop reason: `max_limit` copies were placed."""


@dataclass
class Estimate:
    """A run's outcome: the copies bound, in order, and why it stopped (cluster-capacity's
    Status.StopReason is f"{stop_type}: {stop_message}"); `cluster`: where the cluster's own
    pending pods went, scheduled before the first copy."""
    templates: list
    bound: list = field(default_factory=list)
    stop_type: str = ""
    stop_message: str = ""
    cluster: ClusterPending = field(default_factory=ClusterPending)

    @property
    def stop_reason(self) -> str:
        return f"{self.stop_type}: {self.stop_message}"

    def instances(self, template: int | None = None) -> int:
        """Copies bound (of template `template`, or of all)."""
        return sum(1 for b in self.bound if template is None or b.template == template)


class CopyMaker:
    """Copies of a template as parsed Pods: the template is parsed (and validated) once; each
    copy shares its parsed fields, hence its compiled form, and differs in name only."""

    def __init__(self, sched: Scheduler, template: Template, scheduler_name: str = DEFAULT_SCHEDULER) -> None:
        self.template, self.counter, self.sched = template, 0, sched
        raw = template.copy(0, scheduler_name)
        obj = f"template {template.namespace}/{template.name}"
        self.parsed = sched.parse_pod(parse_pod(raw, obj))
        check_node_field_selectors(obj, raw)     # cluster-capacity validates it (ValidatePodCreate)

    def take(self, count: int, compiled: bool) -> list[Pod]:
        """The next `count` copies, compiled as `compiled` (a copy's cycle made it)."""
        base, self.counter = self.counter, self.counter + count
        name, ns, parsed = self.template.name, self.template.namespace, self.parsed
        parsed.compiled = compiled
        return [renamed(parsed, f"{name}-{i}", f"{ns}/{name}-{i}") for i in range(base, base + count)]

    def peek(self) -> Pod:
        """The copy next() makes next, not taken."""
        name = f"{self.template.name}-{self.counter}"
        return renamed(self.parsed, name, f"{self.template.namespace}/{name}")

    def next(self) -> Pod:
        """The next copy; its claims from templates are made (the resourceclaim controller's
        part), so each copy allocates devices of its own."""
        i, self.counter = self.counter, self.counter + 1
        name = f"{self.template.name}-{i}"
        pod = renamed(self.parsed, name, f"{self.template.namespace}/{name}")
        self.sched.make_claims(pod)
        return pod


def run(sched: Scheduler, templates: list[Template], max_limit: int = 0) -> Estimate:
    """cluster-capacity's Run(): copies of the templates, in turn, each scheduled and assumed
    before the next, until one is unschedulable or `max_limit` (> 0) copies were made. The
    scheduler's pending pods (of its default profile) go first, in PrioritySort order, and are
    reported in `Estimate.cluster`, not counted."""
    makers = [CopyMaker(sched, t) for t in templates]
    est = Estimate(templates, cluster=schedule_cluster_pending(sched))
    with gc_frozen():       # (copies with claims make a dozen containers each: no walks of the cache)
        _run(sched, makers, est, max_limit)
    return est


def _run(sched: Scheduler, makers: list, est: Estimate, max_limit: int) -> None:
    cycles = sched.cycles
    limit = max_limit if max_limit > 0 else 1 << 62
    batched = len(makers) == 1
    while len(est.bound) < limit:
        i = len(est.bound)
        pod = makers[i % len(makers)].next()
        result = cycles.schedule_pod(pod)
        if result.node is None:
            cycles.post_filter(pod, result)
            est.stop_type, est.stop_message = UNSCHEDULABLE, result.message or ""
            return
        sched.assume_scheduled(pod, result)
        est.bound.append(Bound(pod.key, result.node, i % len(makers)))
        if batched:
            batched = _copies(sched, makers[0], pod, result, min(limit - len(est.bound), COPY_BATCH), est)
    est.stop_type, est.stop_message = LIMIT_REACHED, f"Maximum number of pods simulated: {max_limit}"


#: copies scheduled per NodeKernel.run_copies call
COPY_BATCH = 1 << 16


def _copies(sched: Scheduler, maker: CopyMaker, pod: Pod, result: ScheduleResult, count: int, est: Estimate) -> bool:
    """Identical copies of `pod` by the kernel's cached verdicts (ScheduleOne.schedule_copies)
    or, after a cross-pod cycle (spreading, pod affinity), with the kernel counting them
    (schedule_cross_copies), recorded in the cache; False when neither can take its copies."""
    if count <= 0:
        return True
    cycles, counted = sched.cycles, False
    if pod.resource_claims:
        return _claim_copies(sched, maker, pod, count, est)
    rows = cycles.schedule_copies(pod, count)
    if rows is None:
        if result.cycle is None or not result.cycle.cross_pod:
            return False
        ready = cycles.cross_copies_ready(maker.peek())
        if ready is None:
            return True         # (it backs off by itself; a later cycle may start a run)
        rows, counted = cycles.schedule_cross_copies(ready, count, np.zeros((count, 2), np.int64)), True
    nodes = sched.cache.table.nodes
    names = [nodes[row].name for row in rows]
    copies = maker.take(len(names), pod.compiled)
    sched.cache.place_written(copies, names, True, counted)
    est.bound.extend(map(Bound, [c.key for c in copies], names, [0] * len(names)))
    return True


def _claim_copies(sched: Scheduler, maker: CopyMaker, pod: Pod, count: int, est: Estimate) -> bool:
    """Copies of a pod whose claims all come from templates (scheduler/claim_runs.py's runs):
    decided by the kernel with each row's budget of copies, then each made -- its claims
    created from the templates --, allocated on its row and recorded, in order. False where
    counting does not decide the claims' Filter on every row (each copy then has its cycle)."""
    fw = sched.profiles.get(pod.scheduler_name)
    plugin = claims_plugin(fw) if fw is not None else None
    if fw is None or plugin is None or not all(e.get("resourceClaimTemplateName") for e in pod.resource_claims):
        return False
    cache = sched.cache
    plan = plugin.copies_plan(cache.dra.pod_claims(pod), cache, fw.kernel)   # (the specs: every copy's)
    found = None if plan is None else sched.cycles.schedule_copies(pod, count, None, (plugin, plan))
    if found is None:
        return False
    rows, nodes, compiled, copies = found.tolist(), cache.table.nodes, pod.compiled, []
    for row in rows:
        copy = maker.next()
        copy.compiled = compiled
        claims = plugin.copy_claims(copy, cache.dra, plan)
        if claims is None:
            raise StateError(f"pod {copy.key}", "spec.resourceClaims", "a copy's claims were not made from its templates")
        plugin.reserve_copy(copy, claims, row, cache, plan)
        copies.append(copy)
    names = [nodes[row].name for row in rows]
    cache.place_written(copies, names, True)        # (the kernel wrote their rows; nothing above reads the pods)
    est.bound.extend(map(Bound, [c.key for c in copies], names, [0] * len(names)))
    return True
