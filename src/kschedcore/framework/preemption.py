"""PostFilter and preemption on the Scheduler (semantics §5.5, §9): the messages kube-scheduler
appends to a FitError, DefaultPreemption's dry run and SelectVictimsOnNode.

A mixin of :class:`~kschedcore.scheduler.Scheduler`: the methods read its cache (placed pods
per node, the node table) and rerun its cycle on single nodes. The loop
(framework/loop.py) acts on the result: evicts, nominates.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import F_CUSTOM_0
from ..objects.disruption import split_by_violation
from ..plugins.default_preemption import NO_VICTIMS, post_filter
from .interface import PluginError, Status
from .runtime import scanned_rows
from .status import Code

if TYPE_CHECKING:
    from ..objects.pod import Pod
    from ..scheduler import ScheduleResult
    from .runtime import ProfileRuntime


class PreemptionMixin:
    def _post_filter(self, pod: Pod, result: ScheduleResult, profile: ProfileRuntime, ctx):
        """PostFilter after a FitError: the message kube-scheduler appends (§5.5); preemption
        candidates are found by a dry run but not acted on."""
        if profile is None or result.fit_error is None or not profile.post_filters:
            return
        custom = any(not isinstance(p, str) for p in profile.post_filters)
        if not custom and not any(p < pod.priority for p, n in self._priorities.items() if n > 0):
            # no pod anywhere could be a victim: count the Unschedulable nodes, no dry runs
            out = post_filter(profile.post_filters, pod, self._count_unschedulable(profile, ctx),
                              result.fit_error.num_all_nodes, self._in_tree_rejected(ctx), None)
            result.fit_error.post_filter_message = out.message
            return
        statuses = self._node_statuses(profile, result, ctx)
        fits = self._fits_without_lower(pod, profile, statuses)

        def dry_run(name):
            if fits is not None and fits.get(name):
                return None                   # decided on resources alone (see _fits_without_lower)
            return self._dry_run_preemption(pod, name, result.cycle_state)

        args = profile.preemption_args
        if self.pdbs:   # upstream stops once a candidate breaks no budget: look at every node
            args = {**args, "minCandidateNodesPercentage": 100}
        out = post_filter(profile.post_filters, pod, statuses, result.fit_error.num_all_nodes,
                          self._in_tree_rejected(ctx), dry_run, args,
                          lambda plugin: plugin.post_filter(result.cycle_state, pod, statuses))
        result.fit_error.post_filter_message = out.message
        result.preemption_candidates = out.candidates
        result.nomination = out.nomination
        result.preemption_on_resources = fits is not None

    def _in_tree_rejected(self, ctx) -> bool:
        """An in-tree PreFilter ended the cycle (DynamicResources' PostFilter then finds no
        state of its PreFilter)."""
        return self._rejected(ctx) and ctx.in_tree

    def _count_unschedulable(self, profile, ctx) -> int:
        """How many nodes the failed cycle marked Unschedulable (the rest: unresolvable)."""
        if self._rejected(ctx):
            return len(self.table) if ctx.code == "Unschedulable" else 0
        if not ctx:
            return 0
        rows = scanned_rows(*ctx[:3])
        return int(np.count_nonzero(np.asarray(profile.kernel.st_code)[rows] == Code.UNSCHEDULABLE))

    def _node_statuses(self, profile, result, ctx) -> dict:
        """{node name: (code, plugin)} of the nodes a failed cycle gave a status."""
        t, k = self.table, profile.kernel
        if self._rejected(ctx):
            return {name: (ctx.code, ctx.plugin) for name in self.node_names}
        if not ctx:
            return {name: ("UnschedulableAndUnresolvable", []) for name in self.node_names}
        scan, start, processed, narrowed, _ = ctx
        rows = scanned_rows(scan, start, processed)
        codes = np.asarray(k.st_code)[rows]
        failed = codes != Code.SUCCESS
        names = {fid: p.name for fid, p in profile.filters.items()}
        out = {t.nodes[r].name: (Code(c).go_name, names[f]) for r, c, f in
               zip(rows[failed].tolist(), codes[failed].tolist(), np.asarray(k.st_plugin)[rows[failed]].tolist())}
        if narrowed:
            inside = {t.nodes[r].name for r in scan}
            out.update({n: ("UnschedulableAndUnresolvable", None) for n in self.node_names if n not in inside})
        return out

    def _resources_decide(self, pod: Pod, profile: ProfileRuntime, statuses) -> bool:
        """Whether taking lower-priority pods off a node can change nothing but
        NodeResourcesFit's verdict for this pod: every potential node failed on resources, and
        no Filter after it can see the victims (no pod affinity or spreading of the pod's own,
        no existing pods' affinity terms, no host ports, volumes or custom Filters)."""
        if (not pod.pod_affinity.empty or pod.topology_spread or pod.host_ports or pod.volumes
                or self.counters.existing or any(fid >= F_CUSTOM_0 for fid in profile.filters)):
            return False
        if profile.spread is not None and profile.spread.prefilter_runs(pod, self.objects):
            return False
        return all(plugin == "NodeResourcesFit" for code, plugin in statuses.values() if code == "Unschedulable")

    def _fits_without_lower(self, pod: Pod, profile: ProfileRuntime, statuses):
        """{node name: fits} for the Unschedulable nodes with every lower-priority pod taken
        off, computed on resources for all of them at once; None when resources alone do not
        decide (_resources_decide)."""
        potential = [n for n, (code, _) in statuses.items() if code == "Unschedulable"]
        if len(potential) < 8 or not self._resources_decide(pod, profile, statuses):
            return None
        t = self.table
        rows = np.fromiter((t.row_of[n] for n in potential), np.int64, len(potential))
        freed, freed_pods = self._usage_below(pod.priority)
        return dict(zip(potential, _fit_mask(pod.compiled[1], t, rows, freed[rows], freed_pods[rows])))

    def _usage_below(self, priority):
        """(requests [row, resource], pods [row]) of the placed pods of lower priority, from
        per-priority sums kept from the first preemption on."""
        t = self.table
        shape = t.alloc.shape
        if self._by_priority is None or self._by_priority_shape != shape:
            self._by_priority, self._by_priority_shape = {}, shape
            for pl in self._placed.values():
                self._count_priority(pl, t.row_of[pl.node], 1)
        freed = np.zeros(shape, np.int64)
        freed_pods = np.zeros(shape[0], np.int64)
        for prio, (req, pods) in self._by_priority.items():
            if prio < priority:
                freed += req
                freed_pods += pods
        return freed, freed_pods

    def _count_priority(self, pl, row, sign):
        entry = self._by_priority.get(pl.pod.priority)
        if entry is None:
            shape = self._by_priority_shape
            entry = self._by_priority[pl.pod.priority] = (np.zeros(shape, np.int64), np.zeros(shape[0], np.int64))
        np.add.at(entry[0][row], pl.cols, sign * pl.vals)
        entry[1][row] += sign

    def victims_on_resources(self, pod: Pod, node_name: str) -> list | None:
        """select_victims where resources alone decide (ScheduleResult.preemption_on_resources):
        the same reprieve, on the NodeResourcesFit arithmetic of one row, without kernel runs."""
        t, cp = self.table, pod.compiled[1]
        row = t.row_of[node_name]
        order, breaking = self._potential_victims(pod, node_name)
        if not order:
            return None
        keys = [p.key for p in order]
        needs = [(c, v) for c, v in ((0, cp.cpu), (1, cp.memory), (2, cp.ephemeral)) if v > 0]
        needs += list(zip(np.asarray(cp.scalar_cols).tolist(), np.asarray(cp.scalar_vals).tolist()))
        if not (cp.cpu or cp.memory or cp.ephemeral or cp.has_scalar_entry):
            needs = []
        free = {c: int(t.alloc[row, c] - t.requested[row, c]) for c, _ in needs}
        room = int(t.allowed_pods[row] - t.pod_count[row])
        for k in keys:                        # every victim off
            pl = self._placed[k]
            room += 1
            for c, v in zip(pl.cols.tolist(), pl.vals.tolist()):
                if c in free:
                    free[c] += v

        def fits():
            return room >= 1 and all(v <= free[c] for c, v in needs)

        if not fits():
            return None
        victims = []
        for k in keys:                        # put back, most important first, if it still fits
            pl = self._placed[k]
            room -= 1
            back = [(c, v) for c, v in zip(pl.cols.tolist(), pl.vals.tolist()) if c in free]
            for c, v in back:
                free[c] -= v
            if not fits():
                room += 1
                for c, v in back:
                    free[c] += v
                victims.append(pl.pod)
        return self._victims_in_order(victims, breaking)

    def _dry_run_preemption(self, pod: Pod, node_name: str, state=None):
        """SelectVictimsOnNode's first step: with every lower-priority pod off the node, does
        the pod fit? None if it does, else the reasons it still does not."""
        lower = self._lower_priority(pod, node_name)
        if not lower:
            return [NO_VICTIMS]
        with self._taken_off(lower, node_name):
            row = self.table.row_of[node_name]
            try:
                state = self._what_if(pod, state, node_name, removed=lower)
            except PluginError as e:      # kube-scheduler: an Error status on the node
                return [str(e)]
            result, profile, ctx = self._run_cycle(pod, only_row=row, state=state)
            if result.node is not None:
                return None
            if self._rejected(ctx):
                return [result.fit_error.pre_filter_message]
            k = profile.kernel
            plugin = profile.filters[int(k.st_plugin[row])]
            return plugin.reasons(int(k.st_detail[row]), self.table)

    def _lower_priority(self, pod: Pod, node_name: str) -> list:
        """The pods on the node that `pod` may preempt (lower priority), in placement order."""
        return [self._placed[k].pod for k in self._on_node.get(node_name, ())
                if self._placed[k].pod.priority < pod.priority]

    @contextmanager
    def _taken_off(self, pods, node_name: str):
        """The pods off their node for the block, then back (those the block has not put back)."""
        for p in pods:
            self._unplace(p.key)
        try:
            yield
        finally:
            for p in pods:
                if p.key not in self._placed:
                    self._place(p, node_name)

    def _potential_victims(self, pod: Pod, node_name: str):
        """The node's lower-priority pods in reprieve order -- those whose eviction would break
        a PodDisruptionBudget first, each group most important first (MoreImportantPod: higher
        priority, then earlier placed) -- and the set of the budget-breaking ones."""
        pods = sorted(self._lower_priority(pod, node_name), key=lambda p: -p.priority)
        violating, other = split_by_violation(pods, list(self.pdbs.values()))
        return violating + other, {p.key for p in violating}

    def _victims_in_order(self, victims, breaking) -> tuple:
        """(victims, how many break a budget); re-sorted by importance when both kinds are in."""
        n = sum(1 for v in victims if v.key in breaking)
        if 0 < n < len(victims):
            victims.sort(key=lambda p: -p.priority)
        return victims, n

    def select_victims(self, pod: Pod, node_name: str, state=None):
        """DefaultPreemption's SelectVictimsOnNode: (victims, how many of them break a
        PodDisruptionBudget) -- every lower-priority pod is taken off, then each is put back in
        reprieve order if the pod still fits; None when it does not fit even without them. The
        cache is left as it was. state: the failed cycle's CycleState (the custom PreFilter
        plugins' RemovePod / AddPod follow the pods off and back on a clone of it)."""
        order, breaking = self._potential_victims(pod, node_name)
        if not order:
            return None
        victims = []
        with self._taken_off(order, node_name):
            try:
                state = self._what_if(pod, state, node_name, removed=order)
                if not self._fits_on(pod, node_name, state):
                    return None
                for p in order:
                    self._place(p, node_name)
                    self._what_if(pod, state, node_name, added=[p], clone=False)
                    if not self._fits_on(pod, node_name, state):
                        self._unplace(p.key)
                        self._what_if(pod, state, node_name, removed=[p], clone=False)
                        victims.append(p)
            except PluginError:
                return None
            return self._victims_in_order(victims, breaking)

    def _fits_on(self, pod: Pod, node_name: str, state=None) -> bool:
        row = self.table.row_of.get(node_name)
        return row is not None and self._run_cycle(pod, only_row=row, state=state)[0].node is not None

    def _what_if(self, pod: Pod, state, node_name: str, removed=(), added=(), clone=True):
        """The cycle's state for an evaluation with `removed` pods off the node and `added`
        back: a clone (unless clone=False) after the custom PreFilter plugins' RemovePod and
        AddPod (RunPreFilterExtensionRemovePod/AddPod; not those whose PreFilter skipped).
        None without a state (no custom plugin reads one). A failure raises PluginError."""
        if state is None:
            return None
        if clone:
            state = state.clone()
        for plugin in self.profiles[pod.scheduler_name].prefilter_extensions:
            if plugin.name in state.skip_filter_plugins:
                continue
            for what, pods, method in (("RemovePod", removed, plugin.remove_pod), ("AddPod", added, plugin.add_pod)):
                for other in pods if method is not None else ():
                    status = method(state, pod, other, node_name)
                    if isinstance(status, Status):
                        raise PluginError(f'running {what} on PreFilter plugin "{plugin.name}": {status.message}')
        return state



def _fit_mask(cp, t, rows, freed, freed_pods) -> np.ndarray:
    """NodeResourcesFit's Filter (the kernel's _fit_filter) on `rows`, with `freed` resources
    and pods taken off each row."""
    free = t.alloc[rows] - (t.requested[rows] - freed)
    ok = t.pod_count[rows] - freed_pods + 1 <= t.allowed_pods[rows]
    if cp.cpu != 0 or cp.memory != 0 or cp.ephemeral != 0 or cp.has_scalar_entry:
        for col, amount in ((0, cp.cpu), (1, cp.memory), (2, cp.ephemeral)):
            if amount > 0:
                ok &= amount <= free[:, col]
        for col, amount in zip(np.asarray(cp.scalar_cols), np.asarray(cp.scalar_vals)):
            ok &= amount <= free[:, col]
    return ok
