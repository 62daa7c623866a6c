"""schedule_pending's runs: after a node-local pod's own cycle, the pods that follow it and
are node-local too go to the kernel in one call -- identical copies through
ScheduleOne.schedule_copies, pods of other templates through schedule_batch -- each scheduled
exactly as its own cycle would be (tests/test_equivalence.py compares both ways). What is left
in Python per pod: its compile lookup and its result. After a cross-pod cycle (spreading,
pod affinity through the counters), its identical copies go to the kernel the same way
(cross_copies_after; the kernel counts each copy as it places it: tests/test_cross_copies.py).
After a cycle of a pod with claims, its copies with claims of their own go the same way where
counting decides the claims' Filter (claim_copies_after: tests/test_claim_runs.py).

Without records (schedule_pending(records=False)), a pod of a mixed run that fits nowhere stays
in the run where its PostFilters' answer follows from the pod and the FitError counts alone
(Framework.settled_post_filter: no preemption victim can exist, or preemptionPolicy Never):
a failed cycle changes nothing, so the pods after it are scheduled as they would be."""
import numpy as np

from .._native import C_UNSCHEDULABLE, H_CODE
from ..framework.fit_error import FitError
from .claim_runs import claims_plugin, run_claims
from .result import ScheduleResult

#: the most pods one kernel call schedules
COPIES_AT_ONCE = 4096
#: the first run of pods of mixed templates (doubled while the kernel takes every pod)
FIRST_RUN = 8


def run_after(sched, pod, pending, i, results, callback, records=True) -> int:
    """The pods from pending[i] on that the kernel schedules at once after `pod` (its cycle
    just ran, node-local); returns how many it took."""
    fw = sched.profiles.get(pod.scheduler_name)
    cp = pod.compiled[1] if pod.compiled is not None else None
    if cp is None:
        return 0
    if results[-1].node is None:      # its copies would fit nowhere either: other templates
        return _mixed_after(sched, fw, pod, pending, i, results, callback, records)
    # identical copies first (another template ends that run at once)
    run, _ = node_local_run(fw, pod, pending, i, COPIES_AT_ONCE, cp)
    if len(run) < sched.cycles.min_copies:
        return _mixed_after(sched, fw, pod, pending, i, results, callback, records)
    counts = np.zeros((len(run), 2), np.int64)
    rows = sched.cycles.schedule_copies(pod, len(run), counts)
    return _record(sched, fw, run, rows, None, counts, results, callback, copies=True)


def cross_copies_after(sched, pod, pending, i, results, callback) -> int:
    """After a cycle of `pod` that placed it and read other pods through the counters only
    (Cycle.cross_pod), its identical copies from pending[i] on in one kernel call
    (ScheduleOne.schedule_cross_copies); returns how many it took."""
    q = pending[i] if i < len(pending) else None
    if q is None or q.pod_affinity is not pod.pod_affinity or q.namespace != pod.namespace:
        return 0                # (the usual answer for interleaved templates, asked first)
    fw = sched.profiles.get(pod.scheduler_name)
    cp = pod.compiled[1] if pod.compiled is not None else None
    if cp is None:
        return 0
    owner = pod.controller
    end = min(len(pending), i + COPIES_AT_ONCE)
    j = i
    while j < end and j - i < sched.cycles.min_copies and copy_of(fw, pod, cp, owner, pending[j]):
        j += 1
    if j - i < sched.cycles.min_copies:
        return 0
    ready = sched.cycles.cross_copies_ready(pending[i])
    if ready is None:
        return 0
    while j < end and copy_of(fw, pod, cp, owner, pending[j]):
        j += 1
    run = pending[i:j]
    counts = np.zeros((len(run), 2), np.int64)
    rows = sched.cycles.schedule_cross_copies(ready, len(run), counts)
    return _record(sched, fw, run, rows, None, counts, results, callback, copies=True, counted=True)


def claim_copies_after(sched, pod, pending, i, results, callback) -> int:
    """After a cycle of `pod`, a pod with claims, placed it: its copies from pending[i] on --
    its compiled template, claims of their own of the same specs -- in one kernel call with each
    row's budget of devices (claim_runs.py's runs), each copy's claims then allocated on its
    row in order; returns how many it took."""
    fw = sched.profiles.get(pod.scheduler_name)
    plugin = claims_plugin(fw) if fw is not None else None
    cp = pod.compiled[1] if pod.compiled is not None else None
    if plugin is None or cp is None or i >= len(pending):
        return 0
    dra = sched.cache.dra
    head, _ = node_local_run(fw, pod, pending, i, 1, cp, skip=plugin)      # (the next pod alone first)
    first = plugin.copy_claims(head[0], dra) if head else None
    if first is None:
        return 0
    plan = plugin.copies_plan(first, sched.cache, fw.kernel)
    if plan is None:
        return 0
    run, _ = node_local_run(fw, pod, pending, i, COPIES_AT_ONCE, cp, skip=plugin)
    claims = run_claims(plugin, dra, plan, first, run[1:])
    counts = np.zeros((len(claims), 2), np.int64)
    rows = sched.cycles.schedule_copies(pod, len(claims), counts, (plugin, plan))
    if rows is None:
        return 0
    for q, mine, row in zip(run, claims, rows.tolist()):
        plugin.reserve_copy(q, mine, row, sched.cache, plan)
    return _record(sched, fw, run, rows, None, counts, results, callback, copies=True)


def copy_of(fw, pod, cp, owner, q) -> bool:
    """q is a copy of `pod` for a cross-pod cycle: its compiled template, and what the cycle
    reads of a pod besides -- namespace, labels, its spreading and affinity specs, its
    controller (the default spreading's selector)."""
    return (q.namespace == pod.namespace and q.pod_affinity is pod.pod_affinity
            and q.topology_spread is pod.topology_spread and q.terminating == pod.terminating
            and not (q.node_name or q.gated) and q.scheduler_name == pod.scheduler_name
            and q.labels == pod.labels and fw.compile(q) is cp and q.controller == owner)


def _mixed_after(sched, fw, pod, pending, i, results, callback, records) -> int:
    """The node-local pods of any templates from pending[i] on (ScheduleOne.schedule_batch),
    in runs of 8, 16, .. COPIES_AT_ONCE while the kernel takes every pod of a run: a run ends
    at the first pod it leaves (one that fits nowhere, unless settled), and no further pod was
    looked at."""
    total, size = 0, FIRST_RUN
    while True:
        run, cps = node_local_run(fw, pod, pending, i + total, size)
        if len(run) < (2 if total == 0 else 1):
            return total
        counts = np.zeros((len(run), 2), np.int64)
        below = None if records else below_each(sched.cache, run)
        may_fail = None if below is None else settles_each(fw, run, below)
        out = sched.cycles.schedule_batch(fw, cps, counts, may_fail)
        if out is None:
            return total
        done = _record(sched, fw, run, out[0], out[1], counts, results, callback, below=below)
        total += done
        if done < size:
            return total
        size = min(2 * size, COPIES_AT_ONCE)


def below_each(cache, run) -> list:
    """Per pod of a run: whether some placed pod has a lower priority, were every pod before it
    placed (exact where its PostFilter settles: a failure places nothing, and DefaultPreemption
    settles only where no pod is below, or for preemptionPolicy Never, where nothing is asked)."""
    lowest, out = cache.lowest_priority(), []
    for q in run:
        out.append(lowest is not None and lowest < q.priority)
        if lowest is None or q.priority < lowest:
            lowest = q.priority
    return out


def settles_each(fw, run, below):
    """run_batch's may_fail: the pods whose PostFilters settle without their cycle, or None."""
    if not fw.post_filters_settle:
        return None
    return np.fromiter((fw.post_filter_settles(q, b) for q, b in zip(run, below)), np.uint8, len(run))


def node_local_run(fw, pod, pending, start, most, only=None, skip=None):
    """Up to `most` pods from pending[start] on, while each is node-local in `pod`'s profile
    (and compiles to `only`, if given; skip: Framework.node_local's), with their CompiledPods."""
    run, cps = [], []
    shared: dict = {}           # what the pods found so far take (passes_everywhere's run)
    for j in range(start, min(len(pending), start + most)):     # (islice would walk from 0)
        q = pending[j]
        if q.node_name or q.gated or q.scheduler_name != pod.scheduler_name:
            break
        cp = fw.compile(q)
        if (only is not None and cp is not only) or not fw.node_local(q, cp, run=shared, skip=skip):
            break
        run.append(q)
        cps.append(cp)
    return run, cps


def _record(sched, fw, run, rows, failed, counts, results, callback, copies=False, below=None,
            counted=False) -> int:
    """The pods of a run the kernel took: those it placed (on `rows`) recorded in the cache, and
    those that fit nowhere (row -1; their FitError counts in `failed`, a row each) back to the
    pending pods, with results."""
    if rows is None or not len(rows):
        return 0
    nodes, rows, counts = sched.cache.table.nodes, rows.tolist(), counts[:len(rows)].tolist()
    took = run[:len(rows)]
    if failed is None or min(rows) >= 0:      # all placed (copies, or a run without failures)
        names = [nodes[row].name for row in rows]
        sched.cache.place_written(took, names, copies, counted)
        out = [ScheduleResult(q.key, name, nf, processed) for q, name, (nf, processed) in zip(took, names, counts)]
    else:
        placed = [(q, nodes[row].name) for q, row in zip(took, rows) if row >= 0]
        sched.cache.place_written([q for q, _ in placed], [name for _, name in placed])
        out, n_all, n_failed = [], len(sched.cache.table.row_of), 0
        for k, (q, row, (nf, processed)) in enumerate(zip(took, rows, counts)):
            if row >= 0:
                out.append(ScheduleResult(q.key, nodes[row].name, nf, processed))
                continue
            out.append(failure_result(fw, q, failed[n_failed], processed, below[k], n_all))
            n_failed += 1
            sched.pending.append(q)
    results += out
    if callback is not None:
        for result in out:
            callback(result)
    return len(rows)


def failure_result(fw, pod, counts, processed, below, n_all) -> ScheduleResult:
    """A failed cycle's result from its FitError counts, as schedule_pod and post_filter make it."""
    err = FitError(pod.key, n_all, reasons=fw.histogram(0, counts=counts))
    err.post_filter_message = fw.settled_post_filter(pod, below, int(counts[H_CODE + C_UNSCHEDULABLE]), n_all)
    return ScheduleResult(pod.key, None, 0, processed, err)
