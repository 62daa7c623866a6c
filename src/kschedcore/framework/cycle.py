"""Cycle: the record of one scheduling cycle -- what it was asked (pod, profile, CycleState),
what the PreFilter plugins did, and where the compiled Filter pass ran -- and its Diagnosis.

The pass writes one status per node it examined into the kernel's buffers, which the next
pass overwrites. `diagnosis()` decodes the examined rows once, copying them out, so that
PostFilter's dry runs (which rerun the pass on single nodes) cannot change what the failed
cycle saw; decoding after another pass without having done so is an error, never a wrong
answer.
"""
from typing import Any

import numpy as np

from .status import Code

#: framework.ExtenderName: the pseudo-plugin of the nodes an extender dropped
EXTENDER_PLUGIN = "Extender"


def rejectors(framework, plugin_counts) -> set:
    """The Filter plugins with a rejected node in FitError counts (`plugin_counts`: their count
    per Filter plugin, the kernel's hist_plugin or the same span of a failure's row)."""
    return {framework.filters[f].name for f in np.flatnonzero(plugin_counts).tolist()}


class Cycle:
    """One cycle of `framework` for `pod`. PreFilter plugins record here whether they acted
    (did not Skip); the pass records the rows it examined (scan[start:] wrapping, `processed`
    of them) and how many were feasible. (What every cycle sets is in slots; the rest are
    class-level defaults, set on the instance when a cycle changes them.)"""
    __slots__ = ("framework", "cache", "pod", "cp", "state", "what_if", "ran", "__dict__")
    names = None                # PreFilterResult node names (None: every node)
    narrowed: tuple[str, ...] = ()               # the plugins whose PreFilterResult narrowed the nodes
    rejection = None            # PreFilterRejection that ended the cycle
    acted_filters: tuple[str, ...] = ()
    acted_scores: tuple[str, ...] = ()
    score_after = ()            # the in-tree plugins that score after the pass, in Python
    dynamic = True              # a cycle-dependent PreFilter ran (or may have): not node-local
    cross_pod = False           # ... and only cross-pod ones did (KernelPlugin.cross_pod)
    slot_ok = False             # ... and only cross-pod ones or ones that left the pass alone
    #: the nominated pods counted on their rows left the pass alone (none of those rows was
    #: feasible): it filtered and scored as without them (ScheduleOne.attempt)
    nominated_apart = False
    extender = None             # the extenders' filters (extender.runtime.FilterOutcome)
    _diagnosis = None

    def __init__(self, framework, cache, pod, cp, state, what_if=False):
        self.framework, self.cache, self.pod, self.cp, self.state = framework, cache, pod, cp, state
        self.what_if = what_if
        #: the Filter pass: (rows it ran over in snapshot order, start position, rows
        #: processed, feasible found, the framework's pass counter then -- a later pass reuses
        #: the kernel's buffers)
        self.ran: Any = None

    scan = property(lambda self: self.ran[0] if self.ran else None)
    start = property(lambda self: self.ran[1] if self.ran else 0)
    processed = property(lambda self: self.ran[2] if self.ran else 0)
    feasible = property(lambda self: self.ran[3] if self.ran else 0)

    def acted(self, plugin: str, pre_filter: bool, pre_score: bool) -> None:
        """A dynamic plugin's PreFilter / PreScore did not Skip this cycle."""
        if pre_filter:
            self.acted_filters = (*self.acted_filters, plugin)
        if pre_score:
            self.acted_scores = (*self.acted_scores, plugin)

    def examined_rows(self) -> np.ndarray:
        """The node rows the pass examined, in the order it examined them."""
        if self.scan is None:
            return np.zeros(0, np.int32)
        if self.processed == len(self.scan):
            return self.scan
        return np.roll(self.scan, -self.start)[:self.processed]

    def feasible_rows(self) -> np.ndarray:
        """The rows the pass found feasible, in scan order (read right after the pass)."""
        self._check_current()
        return np.asarray(self.framework.kernel.feasible)[:max(self.feasible, 1)].copy()

    def feasible_into(self, out: np.ndarray) -> None:
        """Sets out[row] = 1 (an int8 array over the table's rows) for every row the pass found
        feasible (read right after the pass). A cycle through the equivalence cache's columns
        left no feasible list: its slot's entries are read, without making the statuses and
        scores a pass would have written (NodeKernel.feasible)."""
        self._check_current()
        k = self.framework.kernel
        if k.fill_slot >= 0 and k.fill_version == k.equivalence.version:
            k.equivalence.feasible_into(k.fill_slot, k.fill_scan, k.fill_start, k.fill_processed, out)
        elif self.feasible:
            out[np.asarray(k.feasible)[:self.feasible]] = 1

    def count_status(self, code) -> int:
        """Diagnosis.count(code) of a failed pass, from the kernel's FitError counts while they
        are still this pass's (no per-node decoding: 100,000 rows at 100,000 nodes)."""
        if code != Code.SUCCESS and self._counts_current():
            return int(self.framework.kernel.hist_code[code])
        return self.diagnosis().count(code)

    def rejector_plugins(self) -> set:
        """Diagnosis.rejector_plugins of a failed cycle, from the kernel's FitError counts (a
        count per Filter plugin) while they are still this pass's: no per-node decoding."""
        if self._counts_current():
            return rejectors(self.framework, self.framework.kernel.hist_plugin)
        return self.diagnosis().rejector_plugins()

    def _counts_current(self) -> bool:
        """The kernel's FitError counts are this failed pass's, and they are the whole
        diagnosis: no PreFilter rejection, no extender, nothing decoded already."""
        return (self._diagnosis is None and self.rejection is None and self.extender is None and self.ran is not None
                and self.feasible == 0 and self.ran[4] == self.framework.passes)

    def diagnosis(self) -> "Diagnosis":
        if self._diagnosis is None:
            if self.scan is not None:
                self._check_current()
            self._diagnosis = Diagnosis(self)
        return self._diagnosis

    def _check_current(self):
        if self.ran[4] != self.framework.passes:
            raise RuntimeError(f"cycle of {self.pod.key}: the kernel's buffers were reused by a later pass "
                               f"before this cycle's statuses were read")


class Diagnosis:
    """The failed (or explained) cycle's node statuses, decoded once: per examined row its
    Code, Filter plugin and status detail; the nodes a PreFilterResult left out; or the
    PreFilter rejection every node shares."""
    __slots__ = ("cycle", "rows", "codes", "fids", "details", "_failed")

    def __init__(self, cycle: Cycle):
        self.cycle = cycle
        k = cycle.framework.kernel
        self.rows = cycle.examined_rows()
        # indexing by a row array copies: these outlive the kernel's buffers
        self.codes = np.asarray(k.st_code)[self.rows]
        self.fids = np.asarray(k.st_plugin)[self.rows]
        self.details = np.asarray(k.st_detail)[self.rows]
        self._failed: tuple | None = None

    @property
    def rejection(self):
        return self.cycle.rejection

    def failed(self):
        """(rows, codes, filter ids, details) of the examined rows that did not pass."""
        if self._failed is None:
            bad = self.codes != Code.SUCCESS
            self._failed = self.rows[bad], self.codes[bad], self.fids[bad], self.details[bad]
        return self._failed

    def rows_with(self, code: Code) -> np.ndarray:
        rows = self.rows[self.codes == code]
        extra = self._extender_rows(code)
        return np.concatenate([rows, np.asarray(extra, rows.dtype)]) if extra else rows

    def count(self, code: Code) -> int:
        """Nodes with this status (a PreFilter rejection gives every node its code)."""
        c = self.cycle
        if c.rejection is not None:
            return len(c.cache.table) if c.rejection.code == code else 0
        return int(np.count_nonzero(self.codes == code)) + len(self._extender_rows(code))

    def rejector_plugins(self) -> set:
        """The plugins that rejected some node (the pod's unschedulable plugins; "Extender"
        where an extender dropped a node)."""
        c = self.cycle
        if c.rejection is not None:
            return set(c.rejection.plugins)
        fids = np.unique(self.fids[self.codes != Code.SUCCESS])
        out = {c.framework.filters[f].name for f in fids.tolist()}
        if c.extender is not None and c.extender.dropped:
            out.add(EXTENDER_PLUGIN)
        return out

    def extender_statuses(self) -> dict:
        """{node name: (Code, message)} of the nodes an extender failed."""
        ext = self.cycle.extender
        if ext is None:
            return {}
        return {name: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, msg)
                for name, (unresolvable, msg) in ext.statuses.items()}

    def _extender_rows(self, code: Code) -> list:
        row_of = self.cycle.cache.table.row_of
        return [row_of[n] for n, (c, _) in self.extender_statuses().items() if c == code and n in row_of]

    def left_out(self) -> list:
        """The nodes a PreFilterResult left out of the pass."""
        c = self.cycle
        if not c.narrowed:
            return []
        inside = {c.cache.table.nodes[r].name for r in c.scan.tolist()}
        return [n for n in c.cache.node_names if n not in inside]

    def node_statuses(self) -> dict:
        """{node name: (Code, plugin name or None)} of every node the cycle rejected."""
        c = self.cycle
        nodes = c.cache.table.nodes
        if c.rejection is not None:
            return {name: (c.rejection.code, c.rejection.plugin) for name in c.cache.node_names}
        if c.scan is None:
            return {name: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, None) for name in c.cache.node_names}
        rows, codes, fids, _ = self.failed()
        names = {fid: p.name for fid, p in c.framework.filters.items()}
        out = {nodes[r].name: (Code(code), names[f]) for r, code, f in zip(rows.tolist(), codes.tolist(), fids.tolist())}
        out.update({n: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, None) for n in self.left_out()})
        out.update({n: (code, None) for n, (code, _) in self.extender_statuses().items()})
        return out

    def node_reasons(self) -> dict:
        """{node name: (Code, plugin name, [reasons])} of the examined nodes that failed."""
        c = self.cycle
        t, filters = c.cache.table, c.framework.filters
        rows, codes, fids, details = self.failed()
        out = {t.nodes[r].name: (Code(code), filters[f].name, filters[f].reasons(d, t))
               for r, code, f, d in zip(rows.tolist(), codes.tolist(), fids.tolist(), details.tolist())}
        out.update({n: (code, None, [msg]) for n, (code, msg) in self.extender_statuses().items()})
        return out
