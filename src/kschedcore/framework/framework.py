"""Framework: one scheduling profile's plugins per extension point, its kernel and compiled
pods, and the Run* loops over them (pkg/scheduler/framework/runtime/framework.go).

The node table is shared by every profile (it is the cluster); what a profile owns is which
plugins run, in which order, with which weights and arguments, and the pods compiled for them.
In-tree plugins come from the registry it is given (framework.registry.IN_TREE), custom and
out-of-tree ones from the caller; it names no plugin itself.
"""
from functools import partial
from operator import attrgetter
from typing import Any

import numpy as np

from .._kernels import NodeKernel
from .._native import H_PLUGIN, N_SCORES, CompiledPod
from ..errors import ValidationError
from .custom_runtime import CustomPlugins
from .fit_error import absent_reason
from .interface import PostFilterResult, PreFilterRejection, Status
from .kernel_plugin import KernelPlugin, detail_histogram
from .registry import IN_TREE
from .status import Code

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: the tag of a template's own slot for a run of copies with claims (template_slot(fresh=True))
FRESH = "fresh"
#: the extension points whose plugins' EnqueueExtensions make the queueing hint map
ENQUEUE_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")


class Framework:
    def __init__(self, profile, cache, handle, *, percentage_of_nodes_to_score=None, seed=0, threads=1,
                 custom=(), registry=None, in_tree=IN_TREE, source="KubeSchedulerConfiguration"):
        self.name = profile.scheduler_name
        self.profile, self.cache, self.in_tree = profile, cache, in_tree
        table = cache.table
        wanted = {*profile.filters, *profile.score_weights, *profile.post_filters, *profile.pre_enqueue}
        made = {n: _make(in_tree, n, profile, handle, source) for n in in_tree if n in wanted}
        kernel_plugins = [p for p in made.values() if isinstance(p, KernelPlugin)]
        self.plugins, self.by_name = kernel_plugins, made
        #: implemented Filter plugins, by kernel filter id, in profile order
        self.filters = {made[n].filter_id: made[n] for n in profile.filters if n in made
                        and getattr(made[n], "filter_id", 0) != 0}
        self.scorers = [made[n] for n in profile.score_weights if n in made and getattr(made[n], "score_id", -1) >= 0]
        #: plugins of the profile kschedcore refuses input for (they Skip for every accepted pod)
        self.skipping_filters = sorted(n for n in profile.filters if n in in_tree and n not in self.filters_by_name())
        self.skipping_scores = sorted(n for n in profile.score_weights if n in in_tree
                                      and n not in {p.name for p in self.scorers})
        #: the in-tree PreFilter / PreScore work that depends on the cycle, in profile order
        self.dynamic = [p for p in self.filters.values() if p.dynamic]
        self.dynamic += [p for p in kernel_plugins if p.dynamic and p not in self.dynamic]
        #: those whose applying depends on the cluster too (asked each cycle), and those whose
        #: kernel state is set from an earlier cycle
        self.cluster_dynamic = [p for p in self.dynamic if p.cluster_dependent]
        self._armed = ()
        #: (Pod field, plugins that apply when it is not empty) of the others
        fields: dict = {}
        for p in self.dynamic:
            if not p.cluster_dependent:
                fields.setdefault(p.applies_when, []).append(p)
        self.pod_dynamic = [(f, tuple(ps)) for f, ps in fields.items()]
        #: what compile and node_local read of a pod besides its metadata, as one tuple: pods
        #: with equal ones have one compiled template and one node_local answer
        self.local_reads = attrgetter(*TEMPLATE_FIELDS, "pod_affinity", "topology_spread",
                                      *(f for f, _ in self.pod_dynamic))
        self.pre_scorers = [p for p in self.scorers if hasattr(p, "pre_score")]
        self.node_names_plugins = [p for p in kernel_plugins if hasattr(p, "prefilter_node_names")]
        self.prescore_errors = [p for p in kernel_plugins if hasattr(p, "prescore_error")]
        self.reservers = [p for p in kernel_plugins if hasattr(p, "reserve")]
        self.error_filters = [p for p in self.filters.values() if hasattr(p, "ERROR_DETAIL")]
        self.custom = CustomPlugins(profile, registry, custom)
        for fid, p in self.custom.filters:          # after the in-tree plugins, in the order given
            self.filters[fid] = p
        #: PostFilter plugins in order: in-tree ones, then custom ones
        self.post_filters = [made[n] if n in made else self.custom.made[n] for n in profile.post_filters
                             if n in made or n in self.custom.made]
        self.post_filters += [p for p in self.custom.post_filters if p not in self.post_filters]
        #: every PostFilter may answer without its cycle (post_filter_settles)
        self.post_filters_settle = all(hasattr(p, "settles") for p in self.post_filters)
        self.queue_sort = self.custom.queue_sort
        self.pre_enqueue = [made.get(n) or self.custom.made[n] for n in profile.pre_enqueue] + self.custom.pre_enqueue
        self.binding_plugins = self.custom.binding
        #: cycles make a CycleState (only plugins of the Python API read one)
        self.needs_state = self.custom.any
        self.weights = np.zeros(N_SCORES, np.int64)
        for p in self.scorers:
            self.weights[p.score_id] = profile.score_weights[p.name]
        for sid, p in self.custom.scores:
            self.scorers.append(p)
            self.weights[sid] = p.weight
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score = (pct if pct is not None else percentage_of_nodes_to_score) or 0
        self.kernel = self._make_kernel(table, seed, threads)
        self.passes = 0                # kernel passes run (a Cycle's diagnosis checks it)
        self.bound_layout = -1
        self.token = object()
        self.templates = {}            # template key -> CompiledPod
        self.by_spec = {}              # id(parsed spec fields) -> (them, CompiledPod, pod.compiled, template_fields)
        self._last: tuple = ((), None)   # (template_fields, CompiledPod) of the last template_key looked up
        self._num_to_find = (-1, 0)
        #: Filters whose reasons depend on more than the kernel's status detail (their state)
        self._dynamic_reasons = [fid for fid, p in self.filters.items() if not getattr(p, "static_reasons", False)]
        self._reasons_memo: tuple[Any, dict] = (None, {})  # (the table, {(counts, absent, narrowed): histogram})

    def filters_by_name(self) -> set:
        return {p.name for p in self.filters.values()}

    def _make_kernel(self, table, seed, threads) -> NodeKernel:
        k = NodeKernel()
        k.seed(seed)
        k.threads = threads
        k.weights = self.weights
        k.filter_order = np.asarray(list(self.filters), np.int32)
        k.score_enabled = np.zeros(N_SCORES, np.uint8)
        for p in self.scorers:
            k.score_enabled[p.score_id] = getattr(p, "scored_in_kernel", True)
        for p in self.plugins:
            if hasattr(p, "configure"):
                p.configure(k, table)
        self.custom.configure(k, table)
        return k

    # ---- the kernel and compiled pods ----------------------------------------------------------
    def rebind(self):
        """Binds the kernel to the node table again if the table was reallocated."""
        table = self.cache.table
        if self.bound_layout != table.layout:
            self.kernel.bind(table)
            self.bound_layout = table.layout

    def writer(self):
        """The kernel, when it may write a pod it compiled into the table (Cache.assume)."""
        return self.kernel if self.bound_layout == self.cache.table.layout else None

    def compile(self, pod) -> CompiledPod:
        """The pod in integer form, cached on the pod and shared by pods of one template.

        Valid while no new taint appears (the tolerated-taint arrays are per taint id).
        """
        table = self.cache.table
        cached = pod.compiled
        if cached is not None and cached[0] is self.token and cached[1].taint_version == table.taint_version:
            return cached[1]
        spec, mine = pod.spec_fields, template_fields(pod)
        if spec is not None:        # a spec compiled before: no key to build and hash
            hit = self.by_spec.get(id(spec))
            if hit is not None and hit[0] is spec and hit[1].taint_version == table.taint_version \
                    and mine == hit[3]:
                pod.compiled = hit[2]
                return hit[1]
        # pods of one template parsed from specs that differ elsewhere (a StatefulSet's claims)
        # come one after another: equal fields are an equal key
        fields, cp = self._last
        if cp is not None and cp.taint_version == table.taint_version and mine == fields:
            pod.compiled = (self.token, cp)
            return cp
        cp = self._lookup(pod, table)
        self._last = (mine, cp)
        pod.compiled = (self.token, cp)
        if spec is not None:
            if len(self.by_spec) >= BY_SPEC_ENTRIES:
                self.by_spec.clear()
            # (spec kept alive: its id is not reused); the pods of a spec share one `compiled`
            # while their fields are those compiled (an update may replace one)
            self.by_spec[id(spec)] = (spec, cp, pod.compiled, mine)
        return cp

    def _lookup(self, pod, table) -> CompiledPod:
        """The CompiledPod of the pod's template_key, compiled if new or the taints changed."""
        key = template_key(pod)
        cp = self.templates.get(key)
        if cp is None or cp.taint_version != table.taint_version:
            cp = CompiledPod()
            cp.taint_version = table.taint_version
            for p in self.plugins:
                p.compile(pod, cp, table)
            cp.prefilter_node_names = _merged_names((p.name, p.prefilter_node_names(pod))
                                                    for p in self.node_names_plugins)
            cp.preferred_parse_error = any(p.prescore_error(pod) for p in self.prescore_errors)
            cp.usage = self.cache.usage(pod)
            cp.usage_cols, cp.usage_vals = cp.usage[0], cp.usage[1]
            cp.usage_nz_cpu, cp.usage_nz_mem = pod.non_zero
            self.templates[key] = cp
        return cp

    def equivalence_slot(self, cycle, pod, cp) -> int:
        """The kernel's equivalence-cache slot for a cycle whose node-local part it may hold
        (after PreFilter: no dynamic plugin acted but cross-pod ones and volume ones that left
        every node passing, no PreFilterResult, no custom plugin, no nodeName), else -1. Host ports may be: a row's used ports
        change only with its generation (Cache place / unplace), so NodePorts' verdict on a row
        stands as long as the row does. The cross-pod Filters and Score run per row each cycle
        (the kernel's local_cycle)."""
        if ((cycle.dynamic and not cycle.slot_ok) or self.custom.any or cycle.names is not None
                or pod.node_name or cp.preferred_parse_error):
            return -1
        return self.template_slot(cp)

    def template_slot(self, cp, fresh: bool = False) -> int:
        """cp's slot in the kernel's equivalence cache, keyed on the table's layout, node version
        and epoch: what changes rows without bumping their generations changes one of them.
        fresh: a slot of cp's own, emptied (a run of copies with claims: its verdicts hold the
        run's DynamicResources status, which changes without the rows' generations)."""
        t = self.cache.table
        if fresh:
            return self.kernel.equivalence.slot((FRESH, cp), (t.layout, t.node_version, t.epoch), True)
        return self.kernel.equivalence.slot(cp, (t.layout, t.node_version, t.epoch))

    def node_local(self, pod, cp, pinned=False, run=None, skip=None) -> bool:
        """Whether a cycle for `pod` is the kernel pass alone, over Filters and Scores that read
        the candidate node's row only: no PreFilter work (pod affinity, spreading, claims,
        PreFilterResult names -- pinned: but names, a pass over their rows; volumes only where
        every volume plugin passes them on every node, KernelPlugin.passes_everywhere), no
        custom plugin, no host ports. Identical copies of such a pod may then be scheduled by
        NodeKernel.run_copies (run: a dict the copies share, each asked in order). skip: a
        plugin not asked, whose per-row verdict the run of copies carries itself (claims)."""
        if (self.custom.any or (self._armed and self._armed != (skip,))
                or (cp.prefilter_node_names is not None and not pinned)
                or pod.host_ports or pod.node_name or cp.preferred_parse_error):
            return False
        cache = self.cache
        for f, plugins in self.pod_dynamic:   # (loops, not any(): asked once per copy of a batch)
            if getattr(pod, f):
                for p in plugins:
                    if p is not skip and not p.passes_everywhere(pod, cache, run):
                        return False
        for p in self.cluster_dynamic:
            if p.applies(pod, cache):
                return False
        return True

    def plain(self, pod) -> bool:
        """The pod has none of the Pod fields a dynamic plugin applies by (volumes, claims, ..)."""
        for f, _ in self.pod_dynamic:
            if getattr(pod, f):
                return False
        return True

    # ---- PreFilter ------------------------------------------------------------------------------
    def run_pre_filter_plugins(self, cycle) -> None:
        """RunPreFilterPlugins: the in-tree plugins' cycle-dependent PreFilters in profile order
        (each with its PreScore where it scores in this profile: that only prepares the kernel),
        then the custom ones (not again in a what-if evaluation). Sets cycle.names, narrowed,
        score_after; raises PreFilterRejection or PluginError.

        A dynamic plugin runs when it applies to the cycle -- by a Pod field it names, or asked
        each cycle when that depends on the cluster too -- or when the kernel holds its state
        from an earlier cycle (`armed`, to clear it)."""
        pod, cache = cycle.pod, cycle.cache
        todo: tuple = ()
        for p in self.cluster_dynamic:
            if p.applies(pod, cache):
                todo += (p,)
        if self._armed:
            todo += self._armed
        for field, plugins in self.pod_dynamic:
            if getattr(pod, field):
                todo += plugins
        if todo:
            armed = []
            for p in self.dynamic if len(todo) > 1 else todo:
                if p in todo:
                    try:
                        p.pre_filter(cycle)
                    except PreFilterRejection as rej:
                        rej.in_tree = True
                        self._armed = tuple(q for q in self.dynamic if q.armed)
                        raise
                    if p in self.pre_scorers and p.pre_score(cycle):
                        cycle.score_after += (p,)
                    if p.armed:
                        armed.append(p)
            self._armed = tuple(armed)
            for p in todo:
                if not getattr(p, "cross_pod", False):
                    break
            else:
                cycle.cross_pod = True
            cycle.slot_ok = cycle.cross_pod or all(getattr(p, "cross_pod", False) or p.leaves_pass() for p in todo)
        if self.custom.pre_filters and not cycle.what_if:
            self.custom.run_pre_filter(cycle, self.node_columns())
        elif not todo:
            cycle.dynamic = False

    def node_columns(self):
        return self.custom.node_columns(self.cache.table)

    # ---- PreScore, Score after the pass -----------------------------------------------------------
    def run_score_after_pass(self, cycle, nf: int) -> tuple:
        """What runs on two or more feasible nodes after the pass: a PreScore error known from
        the pod, the in-tree scores made in Python, the custom Score plugins. Returns (error
        message or '', whether totals changed so selectHost must run again)."""
        if cycle.cp.preferred_parse_error:
            return next(e for e in (p.prescore_error(cycle.pod) for p in self.prescore_errors) if e), False
        rescored = False
        for p in self.pre_scorers:
            if p in cycle.score_after:
                rescored |= p.score_after_pass(cycle, nf)
            elif p.score_armed:
                p.scored(cycle)
        if self.custom.python_scores or self.custom.native_scores:
            error = self.custom.run_score(cycle.state, cycle.pod, self.node_columns(), self.kernel, self.weights, nf)
            return error, rescored or bool(self.custom.python_scores)
        return "", rescored

    # ---- Filter's Error, PostFilter, Reserve ---------------------------------------------------------
    def filter_error(self, cycle) -> str:
        """The message of a Filter plugin's Error status met by the pass ('' if none)."""
        k = self.kernel
        for p in self.error_filters:
            if p.filter_error:
                rows = cycle.examined_rows()
                # rows that passed keep an earlier pass's plugin and detail
                hit = ((np.asarray(k.st_plugin)[rows] == p.filter_id) & (np.asarray(k.st_code)[rows] != Code.SUCCESS)
                       & (np.asarray(k.st_detail)[rows] == p.ERROR_DETAIL))
                if hit.any():
                    return p.filter_error
        return ""

    def run_post_filter_plugins(self, state, pod, cycle):
        """RunPostFilterPlugins: until one succeeds (a PostFilterResult), errors or says
        UnschedulableAndUnresolvable; Unschedulable messages accumulate. Returns (message,
        PostFilterResult or None)."""
        messages: list[str] = []
        statuses = None
        for p in self.post_filters:
            if getattr(p, "in_tree_post_filter", False):
                r = p.post_filter(state, pod, cycle)
            else:
                if statuses is None:
                    statuses = cycle.diagnosis().node_statuses()
                r = p.post_filter(state, pod, statuses)
            if isinstance(r, PostFilterResult):
                return "", r
            if not isinstance(r, Status) or r.code != Code.UNSCHEDULABLE:
                return (r.message if isinstance(r, Status) else f"PostFilter plugin {p.name} returned {r!r}"), None
            messages.extend(x for x in r.reasons if x)
        return ", ".join(messages), None

    def node_reasons(self, row: int) -> list:
        """The reasons the last pass gave a node it rejected (its plugin's, from the detail)."""
        k = self.kernel
        return self.filters[int(k.st_plugin[row])].reasons(int(k.st_detail[row]), self.cache.table)

    def run_reserve_in_tree(self, cycle, node_name: str, pod=None) -> None:
        """The in-tree plugins' Reserve (+ PreBind) for the pod a cycle placed: those whose
        PreFilter acted in it (VolumeBinding commits the claims it matched). cycle None: every
        one, for `pod` (each commits only what its last cycle found for that pod)."""
        if cycle is not None and not cycle.acted_filters:
            return
        row = self.cache.table.row_of[node_name]
        for p in self.reservers:
            if cycle is None or p.name in cycle.acted_filters:
                p.reserve(cycle.pod if cycle is not None else pod, row, node_name, self.cache)

    # ---- sampling and FitError ------------------------------------------------------------------------
    def num_to_find(self, n: int) -> int:
        cached = self._num_to_find
        if cached[0] != n:
            cached = self._num_to_find = (n, self.num_feasible_nodes_to_find(n))
        return cached[1]

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int:
        """schedule_one.go numFeasibleNodesToFind (semantics §5.2)."""
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        pct = self.percentage_of_nodes_to_score
        if pct == 0:
            pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)

    def histogram(self, absent: int, narrowed=("NodeAffinity",), counts=None) -> dict:
        """The FitError reason histogram from the kernel's FitError counts of the last pass (or
        `counts`, a row in their layout: a failure inside NodeKernel.run_batch), remembered per
        counts while every rejecting plugin's reasons follow from its status details."""
        k = self.kernel
        given = counts is not None
        if not given:
            counts = np.asarray(k.hist)
        memo = self._reasons_memo
        if memo[0] is not self.cache.table or len(memo[1]) >= REASONS_MEMO_ENTRIES:
            memo = self._reasons_memo = (self.cache.table, {})
        key = None
        if not any(counts[H_PLUGIN + fid] for fid in self._dynamic_reasons):
            key = (counts.tobytes(), absent, narrowed)
            hit = memo[1].get(key)
            if hit is not None:
                return dict(hit)
        if given:       # the plugins read the kernel's views of its counts
            np.copyto(np.asarray(k.hist), counts)
        hist: dict = {}
        for fid, plugin in self.filters.items():
            if not counts[H_PLUGIN + fid]:
                continue
            counted = plugin.histogram if hasattr(plugin, "histogram") else partial(detail_histogram, plugin)
            for reason, count in counted(k, self.cache.table):
                hist[reason] = hist.get(reason, 0) + count
        if absent:
            reason = absent_reason(narrowed)
            hist[reason] = hist.get(reason, 0) + absent
        hist = {r: n for r, n in hist.items() if n}
        if key is not None:
            memo[1][key] = hist
        return dict(hist)

    def post_filter_settles(self, pod, below: bool) -> bool:
        """Whether every PostFilter's answer after a failed node-local cycle follows from the pod
        and the FitError counts (`below`: some placed pod has a lower priority), so that
        settled_post_filter gives it: not where preemption may find victims, or a custom
        PostFilter runs."""
        return self.post_filters_settle and all(p.settles(pod, below) for p in self.post_filters)

    def settled_post_filter(self, pod, below: bool, unschedulable: int, n_all: int) -> str:
        """RunPostFilterPlugins' message where post_filter_settles (`unschedulable`: the nodes
        rejected with Unschedulable)."""
        messages: list[str] = []
        for p in self.post_filters:
            messages.extend(x for x in p.settled(pod, below, unschedulable, n_all).reasons if x)
        return ", ".join(messages)

    # ---- the queue's view ------------------------------------------------------------------------------
    def enqueue_registrations(self) -> dict:
        """plugin name -> its EventsToRegister, for the in-tree plugins at the points whose
        rejections the queue retries (buildQueueingHintMap's input), in the default
        multiPoint order. (Custom plugins register none: pods only they rejected wait for
        their own update or the periodic flush.)"""
        points = set(ENQUEUE_POINTS)
        return {n: self.by_name[n].events_to_register() for n in self.in_tree
                if n in self.by_name and self.in_tree.points(n) & points}


def _merged_names(results):
    """The PreFilterResults known from the pod alone, intersected: (node names, the plugins
    that gave them), or None (every node)."""
    names: set | None = None
    plugins: tuple[str, ...] = ()
    for plugin, r in results:
        if r is not None:
            names = set(r) if names is None else names & set(r)
            plugins += (plugin,)
    return None if names is None else (names, plugins)


def _make(in_tree, name, profile, handle, source):
    """An in-tree plugin from its args. NodeResourcesFit's bad args fail as kube-scheduler's
    profile creation fails on them (its config validation looks them up under a wrong name,
    "NodeResourcesFitArgs", so it never checks them)."""
    try:
        return in_tree.factory(name)(profile.plugin_args.get(name), handle)
    except ValidationError as e:
        if name != "NodeResourcesFit":
            raise    # the others' args are checked by kube-scheduler's config validation (its wording)
        where = ": ".join(p for p in (e.field, e.message) if p)
        raise ValidationError(source, "", f"initializing profiles: creating profile for scheduler name "
                                          f'{profile.scheduler_name}: initializing plugin "{name}": {where}') from None


#: the Pod fields a CompiledPod depends on (template_key)
TEMPLATE_FIELDS = ("requests", "fit_score_requests", "non_zero", "fit_score_non_zero", "tolerations",
                   "node_selector", "required_terms", "preferred_terms", "host_ports", "images")
#: a pod's TEMPLATE_FIELDS as a tuple: equal tuples make equal template keys
template_fields = attrgetter(*TEMPLATE_FIELDS)
#: specs remembered per Framework (Framework.by_spec), cleared when full
BY_SPEC_ENTRIES = 8192
#: FitError histograms remembered per Framework (by the kernel's counts), cleared when full
REASONS_MEMO_ENTRIES = 4096


def template_key(pod) -> tuple:
    """Everything a CompiledPod depends on: pods equal here compile to the same arrays."""
    selector = None if pod.node_selector is None else tuple(sorted(pod.node_selector.items()))
    return (tuple(sorted(pod.requests.items())), tuple(sorted(pod.fit_score_requests.items())),
            pod.non_zero, pod.fit_score_non_zero, pod.tolerations, selector, pod.required_terms,
            pod.preferred_terms, pod.host_ports, pod.images)
