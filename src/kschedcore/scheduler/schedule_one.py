"""The scheduling cycle (pkg/scheduler/schedule_one.go): schedulePod -- PreFilter, the compiled
Filter + Score pass over the node table, what scores after it, selectHost -- then, after a
FitError, PostFilter; and the nominated pods' part (a nominated pod tries its node first, pods
nominated elsewhere count in Filter).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._native.cross_copies import run_cross_copies
from ..framework.cycle import Cycle
from ..framework.fit_error import FitError
from ..framework.interface import CycleState, PluginError, PreFilterRejection
from . import extending
from .result import NO_PROFILE_ERROR, ScheduleResult

if TYPE_CHECKING:
    from ..extender import Extender

CONFLICT_MESSAGE = "pod affinity terms conflict"
#: the most failed pods one NodeKernel.run_batch call takes (their FitError counts, a row each)
FAILED_AT_ONCE = 64
#: the most cycles a template whose copies could not run in the kernel waits to be asked again
CROSS_RETRY_MOST = 256


def _copies_limits(fw, cycle, pod):
    """The limits a run of copies recomputes (KernelPlugin.copies_limits), or False where the
    cycle was not the kernel's alone: a non-cross-pod PreFilter acted, or a Score runs after
    the pass."""
    if not cycle.cross_pod or cycle.score_after or cycle.names is not None:
        return False
    limits = None
    for p in fw.dynamic:
        if getattr(p, "copies_limits", None) is not None:
            ok, got = p.copies_limits(pod)
            if not ok:
                return False
            limits = got if got is not None else limits
    return limits


class ScheduleOne:
    """Runs cycles of the profiles' Frameworks over one Cache (next_start_node_index rotates
    across them, as kube-scheduler's does)."""

    def __init__(self, cache, frameworks: dict, tie_first: bool, rng):
        self.cache, self.frameworks, self.tie_first, self.rng = cache, frameworks, tie_first, rng
        self.next_start_node_index = 0
        #: node-local cycles reuse rows' verdicts per template (NodeKernel's EquivalenceCache)
        self.equivalence = True
        #: schedule_pending schedules runs of identical node-local pods (at least min_copies) in
        #: one kernel call
        self.batch_copies = True
        self.min_copies = 2
        self._failed: np.ndarray | None = None
        self._cross_refused: dict = {}  # id(cp) -> (cp, gap, retry at fw.passes): cross_copies_ready
        #: framework.Extenders, in buildExtenders' order (ignorable ones last)
        self.extenders: list[Extender] = []
        #: id(Framework) -> (its FitArgs, memo): empty-NodeInfo scores after Node-object answers
        self.empty_scores: dict = {}

    def extended(self, pod) -> bool:
        """Some extender is interested in the pod: its cycles go through the extenders, never
        through a kernel run that schedules several pods at once."""
        return any(e.is_interested(pod) for e in self.extenders)

    def schedule_pod(self, pod, only_rows=None, state: CycleState | None = None, single=False,
                     extend: bool | None = None) -> ScheduleResult:
        """One cycle: findNodesThatFitPod, prioritizeNodes and selectHost. only_rows: Filter (and
        score) those node rows alone, every one of them, leaving the rotation index alone --
        preemption's dry run, a nominated node, the pass without nominated pods (single: one
        node, whose status is read from the cycle: no FitError histogram). state: a what-if
        evaluation's CycleState (a clone the preemption dry run has told which pods are off):
        the custom PreFilters do not run again. extend: the extenders filter and score after
        the pass (default: unless a what-if evaluation, whose Filters are the plugins' alone)."""
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return ScheduleResult(pod.key, None, 0, 0, error=f'{NO_PROFILE_ERROR} "{pod.scheduler_name}"')
        cache, t = self.cache, self.cache.table
        what_if = state is not None
        extend = not what_if if extend is None else extend
        if state is None and fw.needs_state:
            state = CycleState()
        cp = fw.compile(pod)
        cycle = Cycle(fw, cache, pod, cp, state, what_if)
        n_all = len(t.row_of)
        if n_all == 0:      # ErrNoNodesAvailable: no pass ran, so no statuses and no PostFilter
            return ScheduleResult(pod.key, None, 0, 0, FitError(pod.key, 0))
        if fw.bound_layout != t.layout:      # the table was reallocated: the kernel binds again
            fw.rebind()
        if t.stale_images:
            t.refresh_snapshot()
        if cp.prefilter_node_names is not None:
            cycle.names, cycle.narrowed = cp.prefilter_node_names
            if not cycle.names:
                return self._rejected(cycle, PreFilterRejection(cycle.narrowed[0], CONFLICT_MESSAGE), n_all)
        try:
            fw.run_pre_filter_plugins(cycle)     # and the in-tree PreScores made before the pass
        except PreFilterRejection as rej:
            return self._rejected(cycle, rej, n_all)
        except PluginError as e:
            return ScheduleResult(pod.key, None, 0, 0, error=str(e), cycle_state=state, cycle=cycle)
        scan = t.scan_order
        if cycle.names is not None:
            # PreFilterResult: its (few) names to rows, kept in snapshot order -- no per-node Python
            scan = t.in_scan_order([t.row_of[name] for name in cycle.names if name in t.row_of])
        if state is not None and fw.custom.needs_filter_run(state):
            fw.rebind()
            fw.custom.run_filter(state, pod, fw.node_columns(), fw.kernel)
        start = self.next_start_node_index
        if only_rows is not None:
            # one node (dry runs, a nominated node): it is in the scan unless a PreFilterResult left it out
            one = len(only_rows) == 1 and cycle.names is None
            scan, start = (only_rows if one else scan[np.isin(scan, only_rows)]), 0
            to_find = len(scan)
        else:
            to_find = fw.num_to_find(len(scan))
        node_name_row = -1 if not pod.node_name else t.row_of.get(pod.node_name, -2)
        eq = fw.equivalence_slot(cycle, pod, cp) if only_rows is None and self.equivalence else -1
        best, nf, processed = fw.kernel.run(cp, scan, start, to_find, node_name_row, n_all, self.tie_first, eq)
        fw.passes += 1
        cycle.ran = (scan, start, processed, nf, fw.passes)
        if only_rows is None:
            self.next_start_node_index = (start + processed) % n_all
        if pod.volumes or pod.resource_claims:
            error = fw.filter_error(cycle)
            if error:        # a Filter's Error: findNodesThatFitPod returns no feasible node
                return ScheduleResult(pod.key, None, 0, processed, error=error, cycle_state=state, cycle=cycle)
        if nf and extend and self.extenders and self.extended(pod):
            return self._through_extenders(pod, cycle, nf, processed, n_all)
        if nf > 1:
            error, rescored = fw.run_score_after_pass(cycle, nf)
            if error:
                return ScheduleResult(pod.key, None, nf, processed, error=error, cycle_state=state, cycle=cycle)
            if rescored:
                best = self._select_host(fw, nf)
        if best >= 0:
            return ScheduleResult(pod.key, t.nodes[best].name, nf, processed, None, None, state, cycle)
        reasons = {} if single else fw.histogram(n_all - len(scan), cycle.narrowed)
        return ScheduleResult(pod.key, None, 0, processed, FitError(pod.key, n_all, reasons=reasons), None, state, cycle)

    def _through_extenders(self, pod, cycle, nf: int, processed: int, n_all: int) -> ScheduleResult:
        """The extenders' filters on the pass's feasible nodes, then (two or more left) the
        Score plugins over the survivors alone, the extenders' scores and selectHost."""
        fw, t, state = cycle.framework, self.cache.table, cycle.state
        outcome, ended = extending.run_filters(self, pod, cycle, nf, processed)
        if ended is not None:
            return ended
        left = len(outcome.nodes)
        if left == 0:
            return extending.failed(pod, cycle, outcome, processed, n_all)
        if left == 1:       # "When only one node after predicate, just use it."
            return ScheduleResult(pod.key, outcome.nodes[0].name, 1, processed, None, None, state, cycle)
        if left != nf:      # NormalizeScore and PreScore see the survivors alone: a pass over them
            rows = np.asarray(sorted(t.row_of[n.name] for n in outcome.nodes), np.int32)
            again = self.schedule_pod(pod, only_rows=rows, extend=False)
            if again.error or again.feasible_nodes != left:     # (a PreScore error; nothing else changes)
                error = again.error or (f"the Score plugins' pass over the extenders' {left} nodes found "
                                        f"{again.feasible_nodes} feasible")
                return ScheduleResult(pod.key, None, 0, processed, error=error, cycle_state=state, cycle=cycle)
        else:
            error, _ = fw.run_score_after_pass(cycle, nf)
            if error:
                return ScheduleResult(pod.key, None, nf, processed, error=error, cycle_state=state, cycle=cycle)
        rows, totals, added = extending.score(self, pod, fw, outcome)
        result = ScheduleResult(pod.key, t.nodes[extending.select(self, rows, totals)].name, left, processed,
                                None, None, state, cycle)
        result.extender_scores = added
        return result

    def schedule_copies(self, pod, count: int, counts=None, claims=None):
        """The node rows of up to `count` identical copies of `pod`, a pod whose cycle just ran,
        each scheduled as schedule_pod would and written into the table before the next (the
        caller records them: Cache.place(written=True)). Fewer than `count` when a copy fits
        nowhere: its cycle is schedule_pod's, for the FitError. None when the pod's cycles do
        more than the node-local kernel pass over the table, or over the one node a
        PreFilterResult names (Framework.node_local): each copy needs its cycle.
        counts: an int64 array (count, 2), filled with each copy's feasible and processed nodes.
        claims: copies with resource claims (claim_runs.py): (DynamicResources, whose status
        the kernel holds for the run, and its CopiesPlan: the rows' budgets)."""
        fw = self.frameworks.get(pod.scheduler_name)
        cached = pod.compiled
        skip, budget, fail = (claims[0], claims[1].budget, claims[0].FAILS_STATUS) if claims else (None, None, 0)
        if (self.extenders or fw is None or cached is None or cached[0] is not fw.token
                or not fw.node_local(pod, cached[1], pinned=True, skip=skip)):
            return None
        scan = self._written_scan(fw)
        if scan is None:
            return None
        t = self.cache.table
        if cached[1].prefilter_node_names is not None:     # the copies' PreFilterResult: one node's row
            names = cached[1].prefilter_node_names[0]
            rows = [t.row_of[name] for name in names if name in t.row_of] if len(names) == 1 else ()
            if len(rows) != 1:
                return None
            scan = np.asarray(rows, np.int32)
        chosen = np.empty(count, np.int32)
        slot = fw.template_slot(cached[1], fresh=budget is not None)
        placed, self.next_start_node_index, stale = fw.kernel.run_copies(
            cached[1], scan, self.next_start_node_index, fw.num_to_find(len(scan)), len(t.row_of),
            self.tie_first, chosen, slot, counts, budget, fail)
        fw.passes += 1           # the call reused the kernel's buffers
        self._left_stale(stale)
        return chosen[:placed]

    def cross_copies_ready(self, pod):
        """For schedule_cross_copies (batches.cross_copies_after): the first copy's PreFilter
        runs here and its kernel state serves the run, which the kernel counts as it places.
        Returns that run's arguments, or None where a copy's cycle could be more than that --
        then later copies of the template are not asked for a while (doubling, up to
        CROSS_RETRY_MOST cycles), as the pod's own cycle runs its PreFilter again."""
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None or self.extenders:
            return None
        cp = fw.compile(pod)
        refused = self._cross_refused.get(id(cp))
        if refused is not None and refused[0] is cp and fw.passes < refused[2]:
            return None
        ready = self._cross_ready(fw, pod, cp)
        if ready is None:
            gap = min(2 * refused[1], CROSS_RETRY_MOST) if refused is not None and refused[0] is cp else 1
            if len(self._cross_refused) >= CROSS_RETRY_MOST:
                self._cross_refused.clear()
            self._cross_refused[id(cp)] = (cp, gap, fw.passes + gap)
        elif refused is not None:
            del self._cross_refused[id(cp)]
        return ready

    def _cross_ready(self, fw, pod, cp):
        scan = self._written_scan(fw)
        # (host ports: the kernel's copies do not write the ports they take)
        if scan is None or cp.prefilter_node_names is not None or fw.needs_state or pod.host_ports:
            return None
        cycle = Cycle(fw, self.cache, pod, cp, None)
        try:
            fw.run_pre_filter_plugins(cycle)
        except (PreFilterRejection, PluginError):
            return None         # its own cycle runs it again, for the result
        limits = _copies_limits(fw, cycle, pod)
        plan = self.cache.counters.kernel_plan(pod)
        if limits is False or plan is None or fw.bound_layout != self.cache.table.layout:
            return None
        eq = fw.equivalence_slot(cycle, pod, cp)
        return None if eq < 0 else (fw, cp, scan, eq, plan, limits)

    def schedule_cross_copies(self, ready, count: int, counts):
        """The node rows of up to `count` identical copies of a pod (cross_copies_ready's
        `ready` for the first), each scheduled as schedule_pod would and placed in the table
        and the counters before the next; fewer where one fits nowhere (its cycle is
        schedule_pod's). counts: as schedule_copies'."""
        fw, cp, scan, eq, plan, limits = ready
        chosen = np.empty(count, np.int32)
        placed, self.next_start_node_index, last = run_cross_copies(  # type: ignore[call-arg]  # plan: 3 arrays
            fw.kernel, cp, scan, self.next_start_node_index, fw.num_to_find(len(scan)),
            len(self.cache.table.row_of), self.tie_first, chosen, eq, counts, *plan, limits)
        fw.passes += 1
        self._left_stale(last)
        return chosen[:placed]

    def schedule_batch(self, fw, cps: list, counts, may_fail=None, removals=None):
        """Node-local pods of any templates (compiled to cps by fw), each scheduled as
        schedule_pod would and, if placed, written into the table before the next
        (NodeKernel.run_batch; the caller records them): (their rows, -1 for a pod that fit
        nowhere; the FitError counts of those, a row each). Fewer than asked where one fits
        nowhere and may_fail[k] is 0 (its cycle is schedule_pod's), the failures' rows run out or
        the cache slots do. None when the kernel cannot write rows (a fork). removals: usage
        taken off rows between the pods (run_batch's removals, removed_cols, removed_vals),
        those before the pods done (the caller tells the cache: Cache.remove_taken_off)."""
        scan = self._written_scan(fw)
        if scan is None or self.extenders:
            return None
        t = self.cache.table
        # each template's slot; the batch ends before a template more than the cache has slots:
        # the LRU would hand it a slot of this batch, which the kernel then fills with the
        # other template's entries (and the new owner would read them as its own)
        slots: list = []
        seen: set = set()
        most = fw.kernel.equivalence.n_slots
        for cp in cps:
            if cp not in seen:
                if len(seen) == most:
                    break
                seen.add(cp)
            slots.append(fw.template_slot(cp))
        chosen = np.empty(len(slots), np.int32)
        failed = self._failed_rows(fw, may_fail)
        done, self.next_start_node_index, stale = fw.kernel.run_batch(
            cps, np.asarray(slots, np.int32), scan, self.next_start_node_index, fw.num_to_find(len(scan)),
            len(t.row_of), self.tie_first, chosen, counts, may_fail, failed, *(removals or ()))
        fw.passes += done
        self._left_stale(stale)
        return chosen[:done], failed

    def _failed_rows(self, fw, may_fail):
        """The reused rows run_batch writes its failures' FitError counts into."""
        if may_fail is None:
            return None
        size = len(fw.kernel.hist)
        if self._failed is None or self._failed.shape[1] != size:
            self._failed = np.empty((FAILED_AT_ONCE, size), np.int64)
        return self._failed

    def _left_stale(self, row: int) -> None:
        """The row the kernel's last placement left with stale image counts, for the next
        cycle's snapshot (as after Cache.place)."""
        t = self.cache.table
        if row >= 0 and t.n_images[row]:
            t.stale_images.add(row)

    def _written_scan(self, fw):
        """The whole table's scan for a kernel call that writes rows itself (the kernel bound,
        the snapshot's image counts current), or None: in a fork (which could not save the rows
        first) or while the scan misses rows."""
        if self.cache.forked:
            return None
        t = self.cache.table
        if fw.bound_layout != t.layout:
            fw.rebind()
        if t.stale_images:
            t.refresh_snapshot()
        scan = t.scan_order
        return scan if len(scan) == len(t.row_of) else None

    def _rejected(self, cycle, rej, n_all) -> ScheduleResult:
        """A PreFilter ended the cycle: every node gets its status."""
        if not hasattr(rej, "in_tree"):
            rej.in_tree = rej.plugin in cycle.framework.in_tree
        cycle.rejection = rej
        err = FitError(cycle.pod.key, n_all, pre_filter_message=rej.message)
        return ScheduleResult(cycle.pod.key, None, 0, 0, err, cycle_state=cycle.state, cycle=cycle)

    def _select_host(self, fw, nf: int) -> int:
        """selectHost again over the kernel's totals, once scores were added after its pass."""
        k = fw.kernel
        return extending.select(self, np.asarray(k.feasible)[:nf], np.asarray(k.totals)[:nf])

    # ---- PostFilter -------------------------------------------------------------------------------
    def post_filter(self, pod, result: ScheduleResult, keep: bool = True) -> None:
        """RunPostFilterPlugins after a FitError: the message kube-scheduler appends (§5.5), the
        preemption candidates, and a nomination when a PostFilter succeeded with one. keep:
        the cycle's statuses are decoded first, for its record (the dry runs reuse the
        kernel); without it, only where a PostFilter reads them (the in-tree ones decode them
        before their dry runs, the others get them before any runs)."""
        cycle = result.cycle
        if cycle is None or result.fit_error is None or not cycle.framework.post_filters:
            return
        if keep or not all(getattr(p, "in_tree_post_filter", False) for p in cycle.framework.post_filters):
            cycle.diagnosis()
        message, outcome = cycle.framework.run_post_filter_plugins(result.cycle_state, pod, cycle)
        result.fit_error.post_filter_message = message
        if outcome is not None:
            result.preemption_candidates = outcome.candidates
            if outcome.nominated_node_name:
                result.nomination = outcome

    # ---- an attempt, with nominated pods ------------------------------------------------------
    def attempt(self, pod, nominator=None, counted=None, keep: bool = True) -> ScheduleResult:
        """schedulePod and, after a FitError, PostFilter. With nominated pods (§5.1 step 4, §5.3):
        a nominated pod tries its node first; the pods nominated to a node with at least the
        pod's priority count there in Filter (PostFilter's dry runs included), and the nodes
        that pass with them are filtered again, and scored, without them. counted(pod): a
        context manager placing them for the block (yields the rows they changed, or None where
        they may reach beyond their rows). keep: a failed cycle's statuses are decoded for its
        record (post_filter's keep; a loop reads the rejector plugins from its counts)."""
        fw = self.frameworks.get(pod.scheduler_name)
        if not nominator or fw is None:
            result = self.schedule_pod(pod)
            if result.node is None:
                self.post_filter(pod, result, keep)
            return result
        with counted(pod) as rows:
            added = rows is None or len(rows) > 0
            rng = fw.kernel.rng_state
            # the extenders see the nodes that pass with and without the nominated pods
            result = self._nominated_first(pod, nominator, extend=not added)
            if result.node is None:
                return self._with_post_filter(pod, result, keep)
            feasible = None
            if added and not self._untouched(rows, result.cycle):
                feasible = result.cycle.feasible_rows()  # type: ignore[union-attr]  # a cycle's own result
            elif rows is not None and result.cycle is not None:
                result.cycle.nominated_apart = True
        if feasible is None:
            return result
        fw.kernel.rng_state = rng   # selectHost draws once a cycle: in the pass without them
        return self._with_post_filter(pod, self.schedule_pod(pod, only_rows=feasible), keep)

    def _untouched(self, rows, cycle) -> bool:
        """Whether the nominated pods changed nothing the cycle's feasible nodes read: only
        `rows` changed, none of them is feasible, and no extender or custom plugin (which may
        read any row) takes part -- the pass without them would filter and score those nodes
        alike."""
        if rows is None or self.extenders or cycle.framework.custom.any:
            return False
        feasible = np.zeros(self.cache.table.alloc.shape[0], np.int8)
        cycle.feasible_into(feasible)
        return not feasible[rows].any()

    def _with_post_filter(self, pod, result, keep: bool = True):
        if result.node is None:
            self.post_filter(pod, result, keep)
        return result

    def _nominated_first(self, pod, nominator, extend: bool = True) -> ScheduleResult:
        node = nominator.node_of(pod)
        row = self.cache.table.row_of.get(node) if node else None
        if row is not None:
            result = self.evaluate_node(pod, row, extend=extend)
            if result.node is not None:
                return result
        return self.schedule_pod(pod, extend=extend)

    def evaluate_node(self, pod, row: int, state=None, extend: bool | None = None) -> ScheduleResult:
        """One cycle on one node row (preemption's what-if evaluations, a nominated node): its
        status is read from the cycle, no FitError histogram is built."""
        return self.schedule_pod(pod, np.asarray([row], np.int32), state, True, extend)
