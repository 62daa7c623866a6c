"""The loop's runs of copies: after a pod's cycle placed it and its binding ended at once, the
pods the next pops would return, while they are identical copies of it, are decided in one
kernel call and then popped, assumed and bound one by one -- what their own cycles would have
done, minus the cycles. Node-local copies go through ScheduleOne.schedule_copies (also copies
whose PreFilterResult pins them to one node, as a daemon set's pods: a pass over that row); copies whose
cycle reads other pods only through the cache's counters (spreading, inter-pod affinity)
through schedule_cross_copies, which counts each copy as it places it -- schedule_pending's
two kinds of runs. After a node-local pod with no pod nominated, the node-local pods of other
templates at the head go through ScheduleOne.schedule_batch (_mixed_after: schedule_pending's
mixed runs). After a failed cycle, the pods the next pops take from backoffQ -- activeQ empty,
the retries a departure sets off in a full cluster -- go through schedule_batch too, their
failures included where every PostFilter's answer follows from the FitError counts, and are
then popped one by one, each failed or bound (failures_after).

Exact only where nothing can happen between two pops, so a run is tried only when:
- the driver adds no event between pops (`Simulation.copies_at_once` > 0: run_until_idle, a
  Replay's loop between two events; perf, whose churn and collectors tick between cycles, a
  run counting as one -- shorter runs there);
- no pod is in flight and no pod waiting in the unschedulable pool was rejected by a plugin
  that registers AssignedPodAdd (or by none): a binding's event moves or is heard by nobody
  (`SchedulingQueue.hears`); no preemption is landing, no extender is configured;
- while pods are nominated: node-local copies only, none of them nominated, and none of the
  rows the nominated pods are counted on is feasible for the template (`_beside_nominated`);
- each copy binds at once (no binding plugin, binder or latency: `Simulation.process`);
- the run stops before the first pod that fits nowhere (its own cycle makes its FitError).
tests/test_loop_runs.py compares loops with and without runs, tests/test_replay.py replays.
"""
import itertools
from contextlib import contextmanager

import numpy as np

from .._native import H_PLUGIN, N_FILTERS
from ..framework.cluster_events import EventAssignedPodAdd
from ..framework.cycle import rejectors
from .dra_events import claim_events
from .run_pops import pop_decided
from . import batches, claim_runs
from .batches import copy_of

#: the most copies one kernel call decides in the loop (a driver's ticks wait for a run)
COPIES_AT_ONCE = 512
#: ... where a driver's events come on the wall clock between cycles (perf's churn): a run
#: delays them by its length (about 5 us a copy: 1.3 ms against churn every 200 ms or more)
COPIES_UNDER_CHURN = 256


@contextmanager
def copies(sim, most: int = COPIES_AT_ONCE):
    """Runs of up to `most` copies while the block lasts (0: none)."""
    saved, sim.copies_at_once = sim.copies_at_once, most
    try:
        yield
    finally:
        sim.copies_at_once = saved


def copies_after(sim, pod, result) -> int:
    """After `pod` was bound as it was assumed (`result`: its cycle's): its copies at
    activeQ's head, decided, popped and bound; returns how many. The driver sets how many at
    most (`sim.copies_at_once`: the drivers that add no event between two pops)."""
    cycles, cycle = sim.sched.cycles, result.cycle
    nominated = sim.nominator.count
    if (sim.copies_at_once < 2 or sim.queue.empty() or cycle is None or not _kernel_may_run(sim)
            or (nominated and (cycle.dynamic or not cycle.nominated_apart))
            or sim.queue.hears(EventAssignedPodAdd)):
        return 0
    fw = sim.sched.profiles.get(pod.scheduler_name)
    cached = pod.compiled
    if fw is None or cached is None or cached[0] is not fw.token:
        return 0
    cp = cached[1]
    if sim.last_template is not cp:     # a run of copies is looked for after two pods of one template
        sim.last_template = cp
        local = not nominated and (not cycle.dynamic or (not cycle.cross_pod and fw.node_local(pod, cp)))
        return _mixed_after(sim, fw, pod) if local else 0
    # its cycle read other pods, through the counters only; or it was node-local (its volume
    # PreFilters, if any, pass it everywhere)
    cross = cycle.dynamic and cycle.cross_pod
    if pod.resource_claims:     # copies with claims of their own: claim_runs.py
        plugin = claim_runs.claims_plugin(fw)
        if cross or nominated or plugin is None:
            return 0
        return claim_runs.copies_after(sim, fw, plugin, _CopyTest(sim, fw, pod, cp, False, skip=plugin).copy)
    if not cross and not fw.node_local(pod, cp, pinned=True):
        return 0
    copying = _CopyTest(sim, fw, pod, cp, not cross and fw.plain(pod))
    is_copy = copying.cross_copy if cross else copying.copy_not_nominated if nominated else copying.copy
    # the first copies alone first: most pods are followed by another template
    run = sim.queue.head_run(cycles.min_copies)
    if len(run) < cycles.min_copies or not all(is_copy(q.pod) for q in run):
        return 0 if nominated or cross else _mixed_after(sim, fw, pod)
    ready = cycles.cross_copies_ready(run[0].pod) if cross else None
    if cross and ready is None:
        return 0
    run = sim.queue.head_run(sim.copies_at_once)
    n = cycles.min_copies           # (those were just found copies)
    while n < len(run) and is_copy(run[n].pod):
        n += 1
    counts = np.zeros((n, 2), np.int64)
    if nominated:
        rows = _beside_nominated(sim, pod, n, counts)
    else:
        rows = cycles.schedule_cross_copies(ready, n, counts) if cross else cycles.schedule_copies(pod, n, counts)
    return _bound_at_once(sim, run, rows, True, cross)


def _mixed_after(sim, fw, pod) -> int:
    """After `pod`, node-local, was bound as it was assumed, with no pod nominated: the node-local pods of
    any templates at activeQ's head (in `pod`'s profile) decided by the kernel in runs of 8,
    16, .. `sim.copies_at_once` while it places every pod of a run (ScheduleOne.schedule_batch,
    each pod's cycle schedule_pod's); a run ends before the first pod that fits nowhere, which
    gets its own cycle. Returns how many pods were bound."""
    cycles, total, size = sim.sched.cycles, 0, batches.FIRST_RUN
    head = sim.queue.head_run(1)
    if not head or (head[0].pod.scheduler_name == pod.scheduler_name and fw.compile(head[0].pod) is pod.compiled[1]):
        return 0        # copies next: they go to the kernel as copies after the next pod's own cycle
    while total < sim.copies_at_once:
        free, run, cps = _local_run(sim, fw, pod, sim.queue.head_run(min(size, sim.copies_at_once - total)))
        if len(run) < (2 if total == 0 else 1):
            break
        counts = np.zeros((len(run), 2), np.int64)
        out = cycles.schedule_batch(fw, cps, counts)
        if out is None:
            break
        done = _bound_at_once(sim, free, out[0], False, False)
        total += done
        if done < size:
            break
        size = min(2 * size, COPIES_AT_ONCE)
    return total


def failures_after(sim, pod) -> int:
    """After `pod`'s cycle failed: the pods the next pops take from the rejection backoffQ
    (activeQ empty: a storm of retries after a pod left), node-local in its profile, decided
    by the kernel in one call (schedule_batch: failures included where every PostFilter's
    answer follows from the FitError counts -- no pod below theirs to preempt), then popped one
    by one, each failed and requeued or bound as its own cycle would have had it. Returns how
    many. Exact where nothing can happen between two pops (the runs of copies' conditions), and
    a binding's AssignedPodAdd is heard by no plugin that can reject a node-local pod, so that
    no failure of the run is moved by a binding after it."""
    cycles = sim.sched.cycles
    if (sim.copies_at_once < 2 or not sim.queue.next_pop_from_backoff() or not _kernel_may_run(sim)
            or sim.nominator.count or not sim.binds_at_once()):
        return 0
    fw = sim.sched.profiles.get(pod.scheduler_name)
    if fw is None or not fw.post_filters_settle:
        return 0
    total, size = 0, batches.FIRST_RUN      # (runs of 8, 16, ..: a storm's runs end at its first unsettled pod)
    while total < sim.copies_at_once:
        free, run, cps = _local_run(sim, fw, pod, sim.queue.backoff_run(min(size, sim.copies_at_once - total)))
        if len(run) < (2 if total == 0 else 1):
            break
        # (asked once a run is at hand: hears() walks the pool)
        if total == 0 and (sim.queue.hears(EventAssignedPodAdd) or _bindings_heard(sim, fw)):
            break
        below = batches.below_each(sim.sched.cache, run)
        counts = np.zeros((len(run), 2), np.int64)
        out = cycles.schedule_batch(fw, cps, counts, batches.settles_each(fw, run, below))
        if out is None or not len(out[0]):
            break
        rows, failed = out
        _decided(sim, fw, free[:len(rows)], rows.tolist(), failed, counts[:len(rows), 1].tolist(), below)
        total += len(rows)
        if len(rows) < size:
            break
        size = min(2 * size, COPIES_AT_ONCE)
    return total


def _kernel_may_run(sim) -> bool:
    """What every run asks of the loop besides: the kernel decides runs (no extender to ask
    per pod), and no preemption is landing."""
    cycles = sim.sched.cycles
    return cycles.batch_copies and not cycles.extenders and not (
        sim._preempted or sim._last_victims or sim._activations or sim._late_bindings)


def _local_run(sim, fw, pod, head) -> tuple:
    """Of `head` (QueuedPodInfos in pop order): the leading ones process() would not pass over,
    and of those the leading node-local Pods in `pod`'s profile with their CompiledPods."""
    free = list(itertools.takewhile(lambda q: _free(sim, q) and not q.pod.terminating, head))
    run, cps = batches.node_local_run(fw, pod, [q.pod for q in free], 0, len(free))
    return free, run, cps


def _bindings_heard(sim, fw) -> bool:
    """Some plugin that can reject a node-local pod (one of the profile's Filters that is no
    dynamic plugin) has a queueing hint for AssignedPodAdd."""
    dynamic = {p.name for p in fw.cluster_dynamic} | {p.name for _, ps in fw.pod_dynamic for p in ps}
    static = {p.name for p in fw.filters.values()} - dynamic
    return not static.isdisjoint(sim.queue.plugins_hearing(EventAssignedPodAdd))


def _decided(sim, fw, took, rows, failed, processed, below) -> None:
    """Simulation.process for each pod of a run of failures, its cycle's result the kernel's:
    popped, then failed (its FitError from its counts) or assumed and bound."""
    cache = sim.sched.cache
    nodes, n_all, n_failed = cache.table.nodes, len(cache.table.row_of), 0
    for k, (pinfo, row) in enumerate(zip(took, rows)):
        outcome = pop_decided(sim, pinfo, "backoffQ")
        pod = pinfo.pod
        if row < 0:
            counts = failed[n_failed]
            n_failed += 1
            result = batches.failure_result(fw, pod, counts, processed[k], below[k], n_all)
            sim.failed_cycle(pod, outcome, result, pinfo, rejectors(fw, counts[H_PLUGIN:H_PLUGIN + N_FILTERS]))
            claim_events(sim)
        else:
            name = nodes[row].name
            cache.place_written([pod], [name])
            claim_events(sim)
            outcome.message = None
            sim.bound_to(pod.key, name, pinfo)


def _bound_at_once(sim, run, rows, copies: bool, counted: bool) -> int:
    """The pods of `run` (QueuedPodInfos at activeQ's head) the kernel placed on `rows`, in
    order: assumed (the kernel wrote their rows; Cache.place_written's copies / counted),
    popped, and bound at once; returns how many."""
    if rows is None or not len(rows):
        return 0
    took, nodes = run[:len(rows)], sim.sched.cache.table.nodes
    names = [nodes[row].name for row in rows.tolist()]
    sim.sched.cache.place_written([p.pod for p in took], names, copies, counted)
    sim.queue.pop_run(took)
    outcomes, bound, listener = sim.outcomes, sim.bound, sim.listener
    for pinfo, name in zip(took, names):
        key = pinfo.key
        outcome = outcomes[key]
        outcome.attempts, outcome.message = pinfo.attempts, None
        listener.attempted(key)
        # Simulation.bound_to where nothing hears a binding (no pod nominated, in flight or
        # unschedulable): the pod bound, its outcome, the listener told
        bound[key] = outcome.node = name
        outcome.result = None
        listener.bound(key, name)
    sim.cycles += len(took)
    return len(took)


def _beside_nominated(sim, pod, n, counts):
    """Node-local copies while pods are nominated: each copy's cycle counts them on their rows
    (NominatedUsage.counted). Where none of those rows is feasible for the template, the pass
    filters and scores as without them, and stays so while copies only fill other rows -- so
    the copies are decided in one kernel call with the rows counted. None where a row is."""
    cycles = sim.sched.cycles
    with sim.usage.counted(pod) as changed:
        if changed is None:
            return None
        if len(changed):
            fw = cycles.frameworks[pod.scheduler_name]
            rng = fw.kernel.rng_state
            probe = cycles.schedule_pod(pod, only_rows=np.sort(np.asarray(changed, np.int32)))
            fw.kernel.rng_state = rng      # (its selectHost is no cycle's)
            if probe.feasible_nodes or probe.error:
                return None
        return cycles.schedule_copies(pod, n, counts)


class _CopyTest:
    """Whether a pod at activeQ's head is a copy of `pod` for the run: its cycle would be
    pod's, and nothing makes process() pass it over or its binding move other pods (a
    nominatedNodeName written for it)."""

    def __init__(self, sim, fw, pod, cp, plain: bool, skip=None):
        self.sim, self.fw, self.pod, self.cp = sim, fw, pod, cp
        self.skip = skip            # the plugin a run carries the verdict of (node_local's skip)
        self.shared: dict = {}      # what the copies found so far take (passes_everywhere's run)
        self.owner = pod.controller
        # a pod that reads as pod does (Framework.local_reads) is a copy without compiling it or
        # asking node_local -- where pod has nothing whose room the copies share (plain: no
        # volume, no claim, which node_local counts copy by copy)
        self.reads = fw.local_reads(pod) if plain else None

    def copy(self, q) -> bool:
        """A node-local copy: the same profile and compiled template, node-local with the
        copies before it placed."""
        pod = self.pod
        if not (q.scheduler_name == pod.scheduler_name and not (q.node_name or q.gated or q.terminating)
                and _free(self.sim, q)):
            return False
        if self.reads is not None and self.fw.local_reads(q) == self.reads:
            q.compiled = pod.compiled
            return True
        fw, cp = self.fw, self.cp
        return fw.compile(q) is cp and fw.node_local(q, cp, pinned=True, run=self.shared, skip=self.skip)

    def copy_not_nominated(self, q) -> bool:
        """copy(), and q has no nomination of its own (its cycle would try that node first)."""
        return self.copy(q) and self.sim.nominator.node_of(q) is None

    def cross_copy(self, q) -> bool:
        """q's cycle would be `pod`'s cross-pod one (batches' copy test)."""
        return _free(self.sim, q) and copy_of(self.fw, self.pod, self.cp, self.owner, q)


def _free(sim, q) -> bool:
    """Nothing makes process() pass q over (assumed or bound already) or its binding move
    other pods (a nominatedNodeName written for it)."""
    return q.key not in sim.bound and q.key not in sim.binding and q.key not in sim._written_nnn
