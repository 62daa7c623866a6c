"""PostFilter and preemption on the Scheduler (semantics §5.5, §9): the messages kube-scheduler
appends to a FitError, DefaultPreemption's dry run and SelectVictimsOnNode.

A mixin of :class:`~kschedcore.scheduler.Scheduler`: the methods read its cache (placed pods
per node, the node table) and rerun its cycle on single nodes. The loop
(framework/loop.py) acts on the result: evicts, nominates.

Where resources alone decide (_screen), the dry run and the victims of every candidate are
NodeResourcesFit's arithmetic over all nodes at once, on `_PodsByPriority` (each row's placed
pods from the most important down, as arrays); the Filters then confirm the chosen node's
victims (_confirm). Elsewhere each node is dry-run, and its victims chosen, by the kernel.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from .._kernels import F_CUSTOM_0, TOO_MANY_PODS_BIT
from ..objects.disruption import split_by_violation
from ..plugins.default_preemption import NO_VICTIMS, Screened, post_filter
from .interface import PluginError, Status
from .runtime import scanned_rows
from .status import Code

if TYPE_CHECKING:
    from ..objects.pod import Pod
    from ..scheduler import ScheduleResult
    from .runtime import ProfileRuntime

_EMPTY = np.iinfo(np.int64).max       # an empty slot's priority: below no preemptor's
_STALE = np.iinfo(np.int64).min       # a row never built: stale for every preemptor


class _PodsByPriority:
    """Per node row, its placed pods from the most important down -- higher priority first,
    then earlier placed: the order SelectVictimsOnNode reprieves them in when no budget is
    broken -- with their priorities and requests as arrays, laid out so that a column over
    many rows is one contiguous take: prio[slot, row], use[resource, row, slot], and
    after[resource, row, slot] = the requests of the row's slots from `slot` on.

    Rebuilt lazily, row by row: `changed[row]` is the lowest priority of a pod placed on or
    taken off the row since it was built, so a preemptor of priority P only needs rows where
    it is below P rebuilt (the pods below P, and their order, are otherwise as built).
    Nominated pods counted for a cycle come and go without making any row stale for the
    pods of lower priority that count them."""

    def __init__(self, shape, slots=4):
        n, r = shape
        self.prio = np.full((slots, n), _EMPTY, np.int64)
        self.use = np.zeros((r, n, slots), np.int64)
        self.after = np.zeros((r, n, slots + 1), np.int64)
        self.count = np.zeros(n, np.int64)
        self.pods = [[] for _ in range(n)]
        self.changed = np.full(n, _STALE, np.int64)

    @property
    def slots(self) -> int:
        return self.prio.shape[0]

    def widen(self, slots):
        s = self.slots
        prio, use, after = self.prio, self.use, self.after
        self.prio = np.full((slots, prio.shape[1]), _EMPTY, np.int64)
        self.use = np.zeros(use.shape[:2] + (slots,), np.int64)
        self.after = np.zeros(use.shape[:2] + (slots + 1,), np.int64)
        self.prio[:s], self.use[:, :, :s], self.after[:, :, :s + 1] = prio, use, after

    def build(self, row, placements):
        """The row from its placements (in placement order)."""
        pls = sorted(placements, key=lambda pl: -pl.pod.priority)
        n = len(pls)
        if n > self.slots:
            self.widen(max(n, 2 * self.slots))
        self.prio[:n, row] = [pl.pod.priority for pl in pls]
        self.prio[n:, row] = _EMPTY
        use = np.zeros((self.use.shape[0], self.slots), np.int64)
        for s, pl in enumerate(pls):
            np.add.at(use[:, s], pl.cols, pl.vals)
        self.use[:, row] = use
        self.after[:, row] = 0
        if n:
            self.after[:, row, :n] = np.cumsum(use[:, n - 1::-1], axis=1)[:, ::-1]
        self.count[row] = n
        self.pods[row] = [pl.pod for pl in pls]
        self.changed[row] = _EMPTY

    def lower(self, rows, priority):
        """Per row, the first slot of the pods below `priority` and how many there are."""
        n_low = (self.prio.take(rows, axis=1) < priority).sum(axis=0)
        return self.count.take(rows) - n_low, n_low

    def freed(self, col, rows, first):
        """Per row, resource `col` requested by its slots from `first` on."""
        after = self.after[col]
        return after.reshape(-1).take(rows * after.shape[1] + first)

    def prio_at(self, rows, slots):
        """The priorities in `slots` (rows x slots) of `rows`."""
        return self.prio.reshape(-1).take(slots * self.prio.shape[1] + rows[:, None])

    def use_at(self, col, rows, slots):
        """Resource `col` requested in `slots` (rows x slots) of `rows`."""
        use = self.use[col]
        return use.reshape(-1).take(rows[:, None] * use.shape[1] + slots)


class PreemptionMixin:
    def _post_filter(self, pod: Pod, result: ScheduleResult, profile: ProfileRuntime, ctx):
        """PostFilter after a FitError: the message kube-scheduler appends (§5.5) and the
        preemption candidates (the loop acts on them)."""
        if profile is None or result.fit_error is None or not profile.post_filters:
            return
        custom = any(not isinstance(p, str) for p in profile.post_filters)
        if not custom and not any(p < pod.priority for p, n in self._priorities.items() if n > 0):
            # no pod anywhere could be a victim: count the Unschedulable nodes, no dry runs
            out = post_filter(profile.post_filters, pod, self._count_unschedulable(profile, ctx),
                              result.fit_error.num_all_nodes, self._in_tree_rejected(ctx), None)
            result.fit_error.post_filter_message = out.message
            return
        screened = self._screen(pod, profile, ctx)
        statuses = screened if screened is not None else self._node_statuses(profile, result, ctx)
        args = profile.preemption_args
        if self.pdbs:   # upstream stops once a candidate breaks no budget: look at every node
            args = {**args, "minCandidateNodesPercentage": 100}
        out = post_filter(profile.post_filters, pod, statuses, result.fit_error.num_all_nodes,
                          self._in_tree_rejected(ctx),
                          lambda name: self._dry_run_preemption(pod, name, result.cycle_state), args,
                          lambda plugin: plugin.post_filter(result.cycle_state, pod, statuses if screened is None
                                                            else self._node_statuses(profile, result, ctx)))
        result.fit_error.post_filter_message = out.message
        result.preemption_candidates = out.candidates
        result.nomination = out.nomination
        result.preemption_on_resources = screened is not None

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

    def _resources_decide(self, pod: Pod, profile: ProfileRuntime) -> bool:
        """Whether taking lower-priority pods off a node can change nothing but
        NodeResourcesFit's verdict for this pod: no Filter after it can see the victims (no
        pod affinity or spreading of the pod's own, no existing pods' affinity terms, no host
        ports, volumes or custom Filters). _screen also wants every potential node to have
        failed on NodeResourcesFit."""
        if (not pod.pod_affinity.empty or pod.topology_spread or pod.host_ports or pod.volumes
                or self.counters.existing or any(fid >= F_CUSTOM_0 for fid in profile.filters)
                or profile.prefilter_extensions):
            return False
        return profile.spread is None or not profile.spread.prefilter_runs(pod, self.objects)

    def _screen(self, pod: Pod, profile: ProfileRuntime, ctx) -> Screened | None:
        """DefaultPreemption's dry run of every potential node at once, where resources alone
        decide (_resources_decide, and every node the cycle marked Unschedulable failed on
        NodeResourcesFit): NodeResourcesFit's Filter with the node's lower-priority pods
        off. None elsewhere (each node is dry-run by the kernel)."""
        if self._rejected(ctx) or not ctx:
            return None
        k = profile.kernel
        rows = scanned_rows(*ctx[:3])
        potential = rows[np.asarray(k.st_code)[rows] == Code.UNSCHEDULABLE]
        if len(potential) < 8 or not self._resources_decide(pod, profile):
            return None
        fit = next((fid for fid, p in profile.filters.items() if p.name == "NodeResourcesFit"), None)
        if fit is None or not (np.asarray(k.st_plugin)[potential] == fit).all():
            return None
        potential = potential.astype(np.int64)
        st = self._pods_by_priority(potential, pod.priority)
        cut, n_low = st.lower(potential, pod.priority)
        t, needs = self.table, _needs(pod.compiled[1])
        room = t.allowed_pods.take(potential) - t.pod_count.take(potential) + n_low
        fits = room >= 1
        free = {}
        for col, amount in needs:
            free[col] = t.alloc[potential, col] - t.requested[potential, col] + st.freed(col, potential, cut)
            fits &= amount <= free[col]

        def names(positions):
            rows = potential[positions]
            out = tuple(t.nodes[r].name for r in rows.tolist())
            self._screened_rows = out, rows, t.node_version    # for victims_on_resources
            return out

        def reasons():
            # the others' dry runs: no victims, or NodeResourcesFit's reasons with them off
            plugin, dry = profile.filters[fit], ~fits & (n_low > 0)
            out = {NO_VICTIMS: int(np.count_nonzero(~fits & (n_low == 0)))}
            for bit, failed in [(TOO_MANY_PODS_BIT, room < 1)] + [(c, a > free[c]) for c, a in needs]:
                n = int(np.count_nonzero(failed & dry))
                if n:
                    for reason in plugin.reasons(1 << bit, t):
                        out[reason] = out.get(reason, 0) + n
            return {r: n for r, n in out.items() if n}

        return Screened(len(potential), np.flatnonzero(fits), names, reasons)

    def _pods_by_priority(self, rows, priority) -> _PodsByPriority:
        """The rows' placed pods by priority (_PodsByPriority), current for a preemptor of
        `priority`. Kept from the first preemption on (place and unplace call
        _count_priority); built anew when the node table was reallocated."""
        t = self.table
        st = self._by_priority
        if st is None or self._by_priority_shape != t.alloc.shape:
            st, self._by_priority_shape = _PodsByPriority(t.alloc.shape), t.alloc.shape
            self._by_priority = st
        for row in rows[st.changed[rows] < priority].tolist():
            node = t.nodes[row]
            keys = self._on_node.get(node.name, ()) if node is not None else ()
            st.build(row, [self._placed[key] for key in keys])
        return st

    def _count_priority(self, pl, row, sign):
        """A pod placed on or taken off `row` (Scheduler._place, _unplace): pods of lower
        priority than it see the row's pods change (_PodsByPriority.changed)."""
        changed = self._by_priority.changed
        if pl.pod.priority < changed[row]:
            changed[row] = pl.pod.priority

    def victims_on_resources(self, pod: Pod, node_names, started) -> tuple | None:
        """SelectVictimsOnNode on every candidate node at once and pickOneNodeForPreemption,
        where resources alone decide (ScheduleResult.preemption_on_resources): (node,
        victims) or None. The reprieve is NodeResourcesFit's arithmetic, all candidates a
        step at a time; the chosen node's victims are then confirmed by the Filters
        (_confirm). started: pod key -> start order (MoreImportantPod's start time)."""
        t, cp = self.table, pod.compiled[1]
        known = getattr(self, "_screened_rows", None)
        if known is not None and known[0] is node_names and known[2] == t.node_version:
            rows = known[1]
        else:
            rows = np.fromiter((t.row_of[n] for n in node_names), np.int64, len(node_names))
        st = self._pods_by_priority(rows, pod.priority)
        cut, n_low = st.lower(rows, pod.priority)
        width = int(n_low.max(initial=0))
        if width == 0:
            return None
        # the lower-priority slots in reprieve order: those whose eviction breaks a budget
        # first (each group most important first), else most important first
        step = np.arange(width)
        seq = cut[:, None] + step
        live = step < n_low[:, None]
        breaking = np.zeros(live.shape, bool)
        if self.pdbs:
            pdbs = list(self.pdbs.values())
            for i, (row, c, n) in enumerate(zip(rows.tolist(), cut.tolist(), n_low.tolist())):
                low = st.pods[row][c:c + n]
                violating, _ = split_by_violation(low, pdbs)
                if violating:
                    bad = {id(p) for p in violating}
                    order = sorted(range(n), key=lambda j: id(low[j]) not in bad)
                    seq[i, :n] = [c + j for j in order]
                    breaking[i, :len(violating)] = True
        seq = np.where(live, seq, 0)
        needs = _needs(cp)
        amounts = np.asarray([a for _, a in needs], np.int64)
        free = np.empty((len(rows), len(needs)), np.int64)       # with every lower-priority pod off
        use = np.empty(seq.shape + (len(needs),), np.int64)
        for j, (c, _) in enumerate(needs):
            free[:, j] = t.alloc[rows, c] - t.requested[rows, c] + st.freed(c, rows, cut)
            use[:, :, j] = st.use_at(c, rows, seq)
        room = t.allowed_pods.take(rows) - t.pod_count.take(rows) + n_low

        def fits(free, room):
            return (room >= 1) & (amounts <= free).all(axis=1)

        ok = fits(free, room)                 # every lower-priority pod off
        victim = np.zeros(live.shape, bool)
        for i in range(width):               # put back in order, if the pod still fits
            tried = live[:, i] & ok
            back_free, back_room = free - use[:, i], room - 1
            still = fits(back_free, back_room)
            keep = tried & still
            free = np.where(keep[:, None], back_free, free)
            room = np.where(keep, back_room, room)
            victim[:, i] = tried & ~still
        # pickOneNodeForPreemption: fewest budget violations, lowest top victim priority,
        # lowest sum of (priority + 2^31), fewest victims; then the latest start of the most
        # important victims; then the first
        prio = st.prio_at(rows, seq)
        n_victims = victim.sum(axis=1)
        top = np.where(victim, prio, _STALE).max(axis=1)
        best = n_victims > 0
        if not best.any():
            return None
        for key in ((victim & breaking).sum(axis=1), top, np.where(victim, prio + 2 ** 31, 0).sum(axis=1), n_victims):
            best &= key == key[best].min()
        tied = np.flatnonzero(best)
        pick = tied[0]
        if len(tied) > 1:
            at, slot = np.nonzero(victim[tied] & (prio[tied] == top[tied, None]))
            slot = seq[tied[at], slot]
            pods = st.pods
            when = np.fromiter(map(started.get, [pods[r][s].key for r, s in zip(rows[tied[at]].tolist(), slot.tolist())],
                                   itertools.repeat(0)), np.int64, len(slot))
            first = np.full(len(tied), _EMPTY, np.int64)
            np.minimum.at(first, at, when)
            pick = tied[np.argmax(first)]
        row, pods = int(rows[pick]), st.pods[int(rows[pick])]
        order = [pods[s] for s in seq[pick][live[pick]].tolist()]
        victims = [pods[s] for s in seq[pick][victim[pick]].tolist()]
        node = t.nodes[row].name
        out = self._victims_in_order(victims, {pods[s].key for s in seq[pick][breaking[pick]].tolist()})
        if not self._confirm(pod, node, order, victims):
            raise AssertionError(f"preemption of {pod.key} on {node}: resource arithmetic chose "
                                 f"{[v.key for v in victims]}, the Filters {self.select_victims(pod, node)}")
        return node, out[0]

    def _confirm(self, pod: Pod, node_name: str, order, victims) -> bool:
        """The Filters agree with the reprieve that made `victims` of the node's `order`
        (its lower-priority pods in reprieve order): with the other pods back, the pod fits,
        and each victim, put back after the pods reprieved before it, made it fail. (A pod
        reprieved before fitted with fewer pods than the pod fits with at the end.)"""
        out = set(id(v) for v in victims)
        with self._taken_off(order, node_name):
            for p in order:
                self._place(p, node_name)
                if id(p) in out:
                    fits = self._fits_on(pod, node_name)
                    self._unplace(p.key)
                    if fits:
                        return False
            return self._fits_on(pod, node_name)

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
        """The pods off their node for the block, then back (those the block has not put back),
        the node's pods in their placement order again: it stands for their start times
        (MoreImportantPod), which a dry run does not change."""
        on_node = self._on_node.setdefault(node_name, {})
        was = list(on_node)
        off = {}                      # key -> what its placement added (it comes back the same)
        for p in pods:
            pl = self._unplace(p.key)
            off[p.key] = (pl.cols, pl.vals, pl.ports)
        try:
            yield off
        finally:
            for p in pods:
                if p.key not in self._placed:
                    self._place(p, node_name, usage=off[p.key])
            now = list(on_node)
            if now != was:
                order = [k for k in was if k in on_node]
                kept = set(order)
                order += [k for k in now if k not in kept]
                on_node.clear()
                on_node.update(dict.fromkeys(order))

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

    def select_victims(self, pod: Pod, node_name: str, state=None, fits_without: bool = False):
        """DefaultPreemption's SelectVictimsOnNode: (victims, how many of them break a
        PodDisruptionBudget) -- every lower-priority pod is taken off, then each is put back in
        reprieve order if the pod still fits; None when it does not fit even without them. The
        cache is left as it was. state: the failed cycle's CycleState (the custom PreFilter
        plugins' RemovePod / AddPod follow the pods off and back on a clone of it).
        fits_without: the dry run of this cache found that the pod fits without them (that run
        is not repeated)."""
        order, breaking = self._potential_victims(pod, node_name)
        if not order:
            return None
        victims = []
        with self._taken_off(order, node_name) as off:
            try:
                state = self._what_if(pod, state, node_name, removed=order)
                if not fits_without and not self._fits_on(pod, node_name, state):
                    return None
                for p in order:
                    self._place(p, node_name, usage=off[p.key])
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


def _needs(cp) -> list:
    """[(resource column, amount)] NodeResourcesFit's Filter checks for a compiled pod (the
    kernel's _fit_filter): cpu, memory, ephemeral storage when requested, every scalar."""
    if not (cp.cpu != 0 or cp.memory != 0 or cp.ephemeral != 0 or cp.has_scalar_entry):
        return []
    needs = [(c, v) for c, v in ((0, cp.cpu), (1, cp.memory), (2, cp.ephemeral)) if v > 0]
    return needs + list(zip(np.asarray(cp.scalar_cols).tolist(), np.asarray(cp.scalar_vals).tolist()))
