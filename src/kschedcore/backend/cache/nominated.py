"""The nominated pods' requests in a cycle's Filter (§5.3; kube-scheduler's addGENominatedPods).

A cycle of a pod of priority P counts, on each node, the pods nominated there with priority
P or more, itself excepted. After a wave of preemptions thousands of pods can be nominated at
once, so placing each of them around every cycle would make preemption quadratic. Here their
requests are kept summed per priority as arrays shaped like the node table's, and a cycle adds
the sums of the priorities it counts to the table (and takes them off after) in a few array
operations. A few of them (`row_by_row`) are instead added on their own rows, each change logged
as a placement's is: the rows' cached verdicts are evaluated again, the others' kept. Pods those sums cannot stand for -- host ports, volumes or pod affinity terms of
their own, or any pod while the cache keeps inter-pod counters (which need each pod) -- are
placed one by one for the cycle instead.

The nominations themselves are the scheduling queue's Nominator (backend/queue/nominator.py);
this index follows it (it is the Nominator's listener), so the two cannot drift apart.
Counted this way, nominated pods are in the table's requests and pod counts but not among the
placed pods: they are never preemption victims, as kube-scheduler's are not (it adds them to a
clone of the NodeInfo).
"""
from contextlib import contextmanager

import numpy as np

from ..._native.table import add_rows_usage
from .node_table import add_usage


class NominatedUsage:
    """The nominated pods (key -> (pod, node)) and the per-priority sums of the plain ones."""

    #: count plain pods through the sums (False: place every counted pod, for comparison)
    sums = True
    #: up to this many plain nominated pods are counted on their own rows; more, through the
    #: per-priority sums (whole-table array operations, which every cached row verdict misses)
    row_by_row = 32

    def __init__(self, cache):
        self._cache = cache
        self._nominated = {}   # key -> (pod, node name)
        self._plain = {}       # key -> (pod, usage columns, amounts): the pods the sums count
        self._others = {}      # key -> None: the pods placed one by one
        self._levels = {}      # priority -> [requested, nonzero, pod_count, number of pods]
        self._built_for = None  # (node version, table shape) the sums' rows and columns are of
        self._changes = 0       # bumped by every nomination and its end (what _few's plan keys on)
        self._few_key = self._few_plan = None

    def __len__(self):
        return len(self._nominated)

    # ---- the Nominator's listener --------------------------------------------------------------
    def nominated(self, pod, node: str) -> None:
        key = pod.key
        if key in self._nominated:
            self.unnominated(pod)
        self._changes += 1
        self._nominated[key] = (pod, node)
        cols, vals, ports = self._cache.usage(pod)
        if not len(ports) and not pod.volumes and pod.pod_affinity.empty:
            self._plain[key] = (pod, cols, vals)
            self._add(key, node, 1)
        else:
            self._others[key] = None

    def unnominated(self, pod) -> None:
        entry = self._nominated.pop(pod.key, None)
        if entry is None:
            return
        self._changes += 1
        if pod.key in self._plain:
            self._add(pod.key, entry[1], -1)
            del self._plain[pod.key]
        self._others.pop(pod.key, None)

    # ---- the sums ------------------------------------------------------------------------------
    def _current(self) -> bool:
        t = self._cache.table
        return self._built_for == (t.node_version, t.requested.shape)

    def _add(self, key, node, sign):
        if not self._current():
            self._built_for = None            # rebuilt before the next cycle counts them
            return
        t = self._cache.table
        row = t.row_of.get(node)
        if row is None:
            return
        pod, cols, vals = self._plain[key]
        level = self._levels.get(pod.priority)
        if level is None:
            level = self._levels[pod.priority] = [np.zeros_like(t.requested), np.zeros_like(t.nonzero),
                                                  np.zeros_like(t.pod_count), 0]
        add_usage(level[0], level[1], level[2], row, cols, vals, pod.non_zero, sign)
        level[3] += sign
        if not level[3]:
            del self._levels[pod.priority]

    def _rebuild(self):
        t = self._cache.table
        self._levels = {}
        self._built_for = (t.node_version, t.requested.shape)
        for key in self._plain:
            self._add(key, self._nominated[key][1], 1)

    def _delta(self, pod):
        """(requested, nonzero, pod_count) the plain nominated pods add for `pod`'s cycle, or None."""
        if not self._current():
            self._rebuild()
        t = self._cache.table
        levels = [lv for prio, lv in self._levels.items() if prio >= pod.priority]
        own = pod.key in self._plain and t.row_of.get(self._nominated[pod.key][1]) is not None
        if not levels or (own and len(levels) == 1 and levels[0][3] == 1):
            return None
        if len(levels) == 1 and not own:      # copies: the cycle may nominate (change the sums)
            return [a.copy() for a in levels[0][:3]]
        req, nz, count = (sum(lv[i] for lv in levels) for i in range(3))
        if own:
            _, cols, vals = self._plain[pod.key]
            add_usage(req, nz, count, t.row_of[self._nominated[pod.key][1]], cols, vals, pod.non_zero, -1)
        return req, nz, count

    # ---- a cycle -------------------------------------------------------------------------------
    @contextmanager
    def counted(self, pod):
        """The nominated pods `pod`'s Filter counts, in the table for the block. Yields the rows
        they changed (empty: none counted), or None where some were placed in the cache, whose
        counters reach beyond their rows."""
        cache = self._cache
        t, c = cache.table, cache.counters
        # the sums stand for each pod only while no inter-pod counter could want them
        batch = (self.sums and not (c.rows or c.incoming or c.existing) and pod.pod_affinity.empty
                 and not pod.topology_spread and not cache.objects)
        added = []
        for key in self._others if batch else list(self._nominated):
            other, node = self._nominated[key]
            if key != pod.key and other.priority >= pod.priority and node in t.row_of and key not in cache:
                cache.assume(other, node)
                added.append(key)
        few = delta = None
        if batch and self._plain:
            if len(self._plain) <= self.row_by_row:
                few = self._few(pod)
                if few is not None:
                    self._add_rows(few, 1)
            else:
                delta = self._delta(pod)
        if delta is not None:
            t.epoch += 1                 # rows change without their generations, until the end
            shape = t.requested.shape
            t.requested += delta[0]
            t.nonzero += delta[1]
            t.pod_count += delta[2]
        try:
            if added:
                yield None
            elif delta is not None:
                yield np.flatnonzero(delta[2])
            else:
                yield few[0] if few is not None else []
        finally:
            for key in added:
                cache.remove_pod(key)
            if few is not None:
                self._add_rows(few, -1)
            if delta is not None:
                r, k = shape
                t.requested[:r, :k] -= delta[0]
                t.nonzero[:r] -= delta[1]
                t.pod_count[:r] -= delta[2]
                t.epoch += 1

    def _few(self, pod):
        """(rows, requests, non-zero requests, pod counts) the plain nominated pods `pod`
        counts add, one entry per row; kept while the nominations and the table stand."""
        t = self._cache.table
        key = (self._changes, pod.priority, pod.key if pod.key in self._plain else None, t.node_version,
               t.requested.shape)
        if key == self._few_key:
            return self._few_plan
        counted = []
        for k, (other, cols, vals) in self._plain.items():
            row = t.row_of.get(self._nominated[k][1])
            if k != pod.key and other.priority >= pod.priority and row is not None:
                counted.append((row, other, cols, vals))
        at: dict = {}                               # row -> its entry
        for row, *_ in counted:
            at.setdefault(row, len(at))
        plan = None
        if at:
            n = len(at)
            req, nz, count = np.zeros((n, t.requested.shape[1]), np.int64), np.zeros((n, 2), np.int64), np.zeros(n, np.int64)
            for row, other, cols, vals in counted:
                add_usage(req, nz, count, at[row], cols, vals, other.non_zero, 1)
            plan = (np.fromiter(at, np.int64, n), req, nz, count)
        self._few_key, self._few_plan = key, plan
        return plan

    def _add_rows(self, plan, sign) -> None:
        """Adds (1) or takes off (-1) a _few plan's usage on its rows, each change logged: the
        equivalence cache evaluates those rows again, and only those."""
        t = self._cache.table
        rows, req, nz, count = plan
        if t.journal is not None:
            for row in rows.tolist():
                t.journal.save_row(t, row)      # a fork's revert brings back the row without them
        add_rows_usage(t, rows, req, nz, count, sign)
