"""schedule_pending's runs: after a node-local pod's own cycle, the pods that follow it and
are node-local too go to the kernel in one call -- identical copies through
ScheduleOne.schedule_copies, pods of other templates through schedule_batch -- each scheduled
exactly as its own cycle would be (tests/test_equivalence.py compares both ways). What is left
in Python per pod: its compile lookup and its result."""
import numpy as np

from .result import ScheduleResult

#: the most pods one kernel call schedules
COPIES_AT_ONCE = 4096
#: the first run of pods of mixed templates (doubled while all are placed)
FIRST_RUN = 8


def run_after(sched, pod, pending, i, results, callback) -> int:
    """The pods from pending[i] on that the kernel schedules at once after `pod` (placed, a
    node-local cycle); returns how many were placed."""
    fw = sched.profiles.get(pod.scheduler_name)
    cp = pod.compiled[1] if pod.compiled is not None else None
    if cp is None:
        return 0
    # identical copies first (another template ends that run at once)
    run, _ = _node_local_run(fw, pod, pending, i, COPIES_AT_ONCE, cp)
    if len(run) < sched.cycles.min_copies:
        return _mixed_after(sched, fw, pod, pending, i, results, callback)
    counts = np.zeros((len(run), 2), np.int64)
    return _record(sched, run, sched.cycles.schedule_copies(pod, len(run), counts), counts, results, callback,
                   copies=True)


def _mixed_after(sched, fw, pod, pending, i, results, callback) -> int:
    """The node-local pods of any templates from pending[i] on (ScheduleOne.schedule_batch),
    in runs of 8, 16, .. COPIES_AT_ONCE while every pod of a run is placed: where pods fail
    often, a run ends at the first that fits nowhere, and no further pod was looked at."""
    total, size = 0, FIRST_RUN
    while True:
        run, cps = _node_local_run(fw, pod, pending, i + total, size)
        if len(run) < (2 if total == 0 else 1):
            return total
        counts = np.zeros((len(run), 2), np.int64)
        placed = _record(sched, run, sched.cycles.schedule_batch(fw, cps, counts), counts, results, callback)
        total += placed
        if placed < size:
            return total
        size = min(2 * size, COPIES_AT_ONCE)


def _node_local_run(fw, pod, pending, start, most, only=None):
    """Up to `most` pods from pending[start] on, while each is node-local in `pod`'s profile
    (and compiles to `only`, if given), with their CompiledPods."""
    run, cps = [], []
    for j in range(start, min(len(pending), start + most)):     # (islice would walk from 0)
        q = pending[j]
        if q.node_name or q.gated or q.scheduler_name != pod.scheduler_name:
            break
        cp = fw.compile(q)
        if (only is not None and cp is not only) or not fw.node_local(q, cp):
            break
        run.append(q)
        cps.append(cp)
    return run, cps


def _record(sched, run, rows, counts, results, callback, copies=False) -> int:
    """The pods of a run the kernel placed (on `rows`) recorded in the cache, with results."""
    if rows is None or not len(rows):
        return 0
    nodes = sched.cache.table.nodes
    names = [nodes[row].name for row in rows.tolist()]
    placed = run[:len(names)]
    sched.cache.place_written(placed, names, copies)
    for q, name, (nf, processed) in zip(placed, names, counts[:len(names)].tolist()):
        result = ScheduleResult(q.key, name, nf, processed)
        results.append(result)
        if callback is not None:
            callback(result)
    return len(placed)
