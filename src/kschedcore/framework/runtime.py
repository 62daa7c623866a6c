"""ProfileRuntime: one scheduling profile's plugins, kernel configuration and compiled pods.

The node table is shared by every profile (it is the cluster); what a profile owns is which
plugins run, in which order, with which weights and arguments, and the pods compiled for them.
"""
import numpy as np

from .._kernels import F_CUSTOM_0, N_SCORES, S_CUSTOM_0, CompiledPod, NodeKernel
from ..custom import assign_slots
from ..errors import ValidationError
from ..plugins import REGISTRY
from ..plugins.base import PreFilterRejection, VolumePlugin
from ..plugins.default_preemption import validate_args as validate_preemption_args
from .config import FILTER_PLUGINS, SCORE_PLUGINS, Profile
from .interface import (SKIP, UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE, PluginError, PreFilterResult,
                        Status)
from .status import Code

BINDING_METHODS = ("reserve", "unreserve", "permit", "pre_bind", "bind", "post_bind")
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class ProfileRuntime:
    def __init__(self, profile: Profile, table, *, percentage_of_nodes_to_score=None, seed=0, threads=1,
                 custom=(), registry=None):
        self.name = profile.scheduler_name
        self.preemption_args = profile.plugin_args.get("DefaultPreemption") or {}
        if "DefaultPreemption" in profile.post_filters:
            validate_preemption_args(self.preemption_args)
        wanted = set(profile.filters) | set(profile.score_weights)
        self.plugins = [cls(profile.plugin_args.get(name)) for name, cls in REGISTRY.items() if name in wanted]
        self.by_name = {p.name: p for p in self.plugins}
        #: implemented Filter plugins, by kernel filter id, in profile order
        self.filters = {self.by_name[n].filter_id: self.by_name[n] for n in profile.filters
                        if n in self.by_name and self.by_name[n].filter_id}
        self.scorers = [self.by_name[n] for n in profile.score_weights
                        if n in self.by_name and self.by_name[n].score_id >= 0]
        #: plugins of the profile kschedcore refuses input for (they Skip for every accepted pod)
        self.skipping_filters = sorted(n for n in profile.filters if n in FILTER_PLUGINS and n not in REGISTRY)
        self.skipping_scores = sorted(n for n in profile.score_weights if n in SCORE_PLUGINS
                                      and (n not in REGISTRY or REGISTRY[n].score_id < 0))
        #: the volume plugins' Filters, in profile order (their PreFilter feeds the kernel)
        self.volume_filters = [p for p in self.filters.values() if isinstance(p, VolumePlugin)]
        self.volume_set = False        # the kernel holds a volume status from an earlier cycle
        configured, self.binding_plugins, made = _out_of_tree(profile, registry)
        #: PostFilter plugins in order: in-tree ones by name, then custom ones
        self.post_filters = [made.get(n, n) for n in profile.post_filters]
        #: the queue's plugins of this profile: QueueSort (None: PrioritySort) and PreEnqueue
        self.queue_sort = made.get(profile.queue_sort)
        self.pre_enqueue = [made[n] if n in made else n for n in profile.pre_enqueue]
        given = list(dict.fromkeys([*custom, *configured]))
        custom_filters, custom_scores, others = assign_slots(given)
        # a plugin given to the Scheduler takes part in every other point it implements too
        self.binding_plugins += [p for p in custom if p not in self.binding_plugins
                                 and any(hasattr(p, m) for m in BINDING_METHODS)]
        self.pre_enqueue += [p for p in custom if hasattr(p, "pre_enqueue")]
        if self.queue_sort is None:
            self.queue_sort = next((p for p in custom if hasattr(p, "less")), None)
        self.post_filters += [p for p in custom if getattr(p, "post_filter", None) is not None
                              and p not in self.post_filters]
        #: the custom plugins' Python side, by extension point, in the order given
        self.custom_pre_filters = [p for p in given if p.pre_filter is not None]
        self.prefilter_extensions = [p for p in self.custom_pre_filters
                                     if p.add_pod is not None or p.remove_pod is not None]
        self.python_filters = [p for _, p in custom_filters if not p.native]
        self.native_filters = [(fid, p) for fid, p in custom_filters if p.native]
        self.python_scores = [p for _, p in custom_scores if not p.native]
        self.native_scores = [p for _, p in custom_scores if p.native]
        self.custom_filters_off = set()    # slots a PreFilter's SKIP turned off for the last cycle
        #: cycles make a CycleState (only plugins of the Python API read one)
        self.needs_state = bool(given or self.binding_plugins)
        for fid, p in custom_filters:          # after the in-tree plugins, in the order given
            p.filter_id = fid
            self.filters[fid] = p
        self.weights = np.zeros(N_SCORES, np.int64)
        for p in self.scorers:
            self.weights[p.score_id] = profile.score_weights[p.name]
        for sid, p in custom_scores:
            p.score_id = sid
            self.scorers.append(p)
            self.weights[sid] = p.weight
        pct = profile.percentage_of_nodes_to_score
        self.percentage_of_nodes_to_score = (pct if pct is not None else percentage_of_nodes_to_score) or 0
        self.kernel = k = NodeKernel()
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
        self.native_params = {fid: p.params(table) for fid, p in self.native_filters}
        for fid, p in self.native_filters:
            k.set_custom_filter(fid - F_CUSTOM_0, p.address(), self.native_params[fid])
        for sid, p in custom_scores:
            if p.native:
                k.set_custom_score(sid - S_CUSTOM_0, p.address(), p.params(table), normalize=p.normalize)
        self.inter_pod_affinity = self.by_name.get("InterPodAffinity")
        self.spread = self.by_name.get("PodTopologySpread")
        self.spread_scores = any(p.name == "PodTopologySpread" for p in self.scorers)
        self.spread_set = False        # the kernel holds a PodTopologySpread status array
        self.spread_kernel = False     # the kernel scores PodTopologySpread this cycle
        self.external_set = False      # the kernel holds InterPodAffinity arrays for this cycle
        self.bound_layout = -1
        self.token = object()
        self.templates = {}            # template key -> CompiledPod
        self._num_to_find = (-1, 0)

    def bind(self, table):
        if self.bound_layout != table.layout:
            self.kernel.bind(table)
            self.bound_layout = table.layout

    def compile(self, pod, table, usage) -> CompiledPod:
        """The pod in integer form, cached on the pod and shared by pods of one template.

        Valid while no new taint appears (the tolerated-taint arrays are per taint id).
        """
        cached = pod.compiled
        if cached is not None and cached[0] is self.token and cached[1].taint_version == table.taint_version:
            return cached[1]
        key = template_key(pod)
        cp = self.templates.get(key)
        if cp is None or cp.taint_version != table.taint_version:
            cp = CompiledPod()
            cp.taint_version = table.taint_version
            for p in self.plugins:
                p.compile(pod, cp, table)
            affinity = self.by_name.get("NodeAffinity")
            cp.prefilter_node_names = affinity.prefilter_node_names(pod) if affinity else None
            cp.preferred_parse_error = affinity is not None and pod.preferred_parse_error
            cp.usage = usage(pod)
            cp.usage_cols, cp.usage_vals = cp.usage[0], cp.usage[1]
            cp.usage_nz_cpu, cp.usage_nz_mem = pod.non_zero
            self.templates[key] = cp
        pod.compiled = (self.token, cp)
        return cp

    def custom_pre_filter(self, state, pod, nodes):
        """RunPreFilterPlugins over the custom plugins (after the in-tree ones): (their merged
        PreFilterResult names or None, the plugins that gave names). A rejection raises
        PreFilterRejection, an Error PluginError."""
        names, with_nodes, unschedulable = None, [], None
        for p in self.custom_pre_filters:
            r = p.pre_filter(state, pod, nodes)
            if r is SKIP:
                state.skip_filter_plugins.add(p.name)
            elif isinstance(r, Status):
                if r.code == UNSCHEDULABLE_AND_UNRESOLVABLE:
                    raise PreFilterRejection(p.name, r.message)
                if r.code != UNSCHEDULABLE:
                    raise PluginError(f'running PreFilter plugin "{p.name}": {r.message}')
                unschedulable = (p.name, r.message)      # the other PreFilters still run
            elif isinstance(r, PreFilterResult):
                with_nodes.append(p.name)
                names = r.node_names if names is None else names & r.node_names
            elif r is not None:
                raise PluginError(f'running PreFilter plugin "{p.name}": returned {r!r}, not None, SKIP, '
                                  f'a PreFilterResult or a Status')
        if unschedulable is not None:
            raise PreFilterRejection(*unschedulable, code="Unschedulable")
        return names, with_nodes

    def custom_filter(self, state, pod, nodes):
        """The custom Filters' slots for this cycle: Python plugins' per-row statuses, native
        functions on, and off those whose PreFilter said SKIP."""
        k, skip = self.kernel, state.skip_filter_plugins
        off = {p.filter_id for _, p in self.native_filters if p.name in skip}
        for fid, p in self.native_filters:
            if (fid in off) != (fid in self.custom_filters_off):
                k.set_custom_filter(fid - F_CUSTOM_0, *(() if fid in off else (p.address(), self.native_params[fid])))
        self.custom_filters_off = off
        n = nodes.labels.shape[0]
        for p in self.python_filters:
            if p.name in skip:
                k.set_custom_filter(p.filter_id - F_CUSTOM_0)
                continue
            status = np.asarray(p.filter(state, pod, nodes))
            status = np.where(status, 0, 1).astype(np.int8) if status.dtype == bool else status.astype(np.int8)
            status = _one_each(status, n, p.name, "must return one value per node row")
            k.set_custom_filter(p.filter_id - F_CUSTOM_0, status=np.ascontiguousarray(status))

    def custom_score(self, state, pod, nodes, nf: int) -> str:
        """PreScore, Score and NormalizeScore of the Python Score plugins over the kernel's
        feasible nodes, added to the kernel's totals with their weights; the range check of
        every custom score. '' or the cycle's error message."""
        k = self.kernel
        rows = np.asarray(k.feasible)[:nf]
        for p in self.python_scores:
            if p.pre_score is not None:
                r = p.pre_score(state, pod, nodes, rows)
                if r is SKIP:
                    state.skip_score_plugins.add(p.name)
                elif isinstance(r, Status):
                    return f'running PreScore plugin "{p.name}": {r.message}'
        for p in self.python_scores:
            s = p.score_id
            if p.name in state.skip_score_plugins:
                k.score_ran[s] = False
                continue
            raw = _scores(p.score(state, pod, nodes, rows), nf, p.name, "Score")
            if isinstance(raw, Status):
                return f'running Score plugins: plugin "{p.name}" failed with: {raw.message}'
            norm = _scores(p.normalize_score(state, pod, rows, raw.copy()), nf, p.name, "NormalizeScore")
            if isinstance(norm, Status):
                return f'running Normalize on Score plugins: plugin "{p.name}" failed with: {norm.message}'
            np.asarray(k.raw_scores)[s, :nf] = raw
            np.asarray(k.scores)[s, :nf] = norm
            k.score_ran[s] = True
            np.asarray(k.totals)[:nf] += self.weights[s] * norm
        for p in self.python_scores + self.native_scores:
            if k.score_ran[p.score_id]:
                scores = np.asarray(k.scores)[p.score_id, :nf]
                bad = np.flatnonzero((scores < 0) | (scores > 100))
                if bad.size:
                    return (f'applying score defaultWeights on Score plugins: plugin "{p.name}" returns an invalid '
                            f'score {int(scores[bad[0]])}, it should in the range of [0, 100] after normalizing')
        return ""

    def filter_error(self, scan, start, processed) -> str:
        """The message of a Filter plugin's Error status met by the last pass ('' if none)."""
        k = self.kernel
        for p in self.volume_filters:
            if getattr(p, "filter_error", ""):
                rows = scanned_rows(scan, start, processed)
                # rows that passed keep an earlier pass's plugin and detail
                hit = ((np.asarray(k.st_plugin)[rows] == p.filter_id) & (np.asarray(k.st_code)[rows] != Code.SUCCESS)
                       & (np.asarray(k.st_detail)[rows] == p.ERROR_DETAIL))
                if hit.any():
                    return p.filter_error
        return ""

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

    def histogram(self, table, absent: int, narrowed=("NodeAffinity",)) -> dict:
        """The FitError reason histogram from the kernel's per-plugin counters."""
        k = self.kernel
        hist = {}

        def add(reason, count):
            if count:
                hist[reason] = hist.get(reason, 0) + count

        for fid, plugin in self.filters.items():
            if plugin.name == "TaintToleration":
                for tid in np.flatnonzero(np.asarray(k.hist_taint)):
                    add(plugin.reasons(int(tid), table)[0], int(k.hist_taint[tid]))
            elif plugin.name == "NodeResourcesFit":
                for bit in np.flatnonzero(np.asarray(k.hist_fit)):
                    add(plugin.reasons(1 << int(bit), table)[0], int(k.hist_fit[bit]))
            else:   # counted per status detail
                for detail in range(16):
                    count = int(k.hist_detail[fid, detail])
                    for reason in plugin.reasons(detail, table) if count else ():
                        add(reason, count)
        if absent:
            add(absent_reason(narrowed), absent)
        return hist


def absent_reason(narrowed) -> str:
    """The status of the nodes PreFilterResults left out (sets.List order: sorted)."""
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowed))}]"


def scanned_rows(scan, start, processed) -> np.ndarray:
    """The node rows a kernel pass examined: `processed` scan positions from `start`, wrapping."""
    if processed == len(scan):
        return scan
    return np.roll(scan, -start)[:processed]


def _out_of_tree(profile: Profile, registry) -> tuple:
    """The profile's out-of-tree plugins, made by the registry with their pluginConfig args:
    (custom Filter/Score plugins, weighted as configured; binding-cycle plugins)."""
    made = {n: registry.create(n, profile.plugin_args.get(n)) for n in profile.out_of_tree}
    custom = [made[n] for n in profile.filters if "filter" in profile.out_of_tree.get(n, ())]
    for n, w in profile.score_weights.items():
        if "score" in profile.out_of_tree.get(n, ()):
            made[n].weight = w
            custom.append(made[n])
    custom += [made[n] for n, points in profile.out_of_tree.items() if "preFilter" in points and made[n] not in custom]
    binding = [made[n] for n, points in profile.out_of_tree.items()
               if points - {"filter", "score", "queueSort", "preEnqueue", "preFilter", "postFilter", "preScore"}]
    return custom, binding, made


def _scores(values, nf, name, point):
    """A Score / NormalizeScore answer as int64 per feasible node, or the Status it returned."""
    if isinstance(values, Status):
        return values
    return _one_each(np.asarray(values), nf, name, f"{point} must return one value per feasible node").astype(np.int64)


def _one_each(values, n, name, what):
    """`values` when it holds one value each for the n rows or nodes `what` says."""
    if values.shape != (n,):
        raise ValidationError(f"plugin {name}", "", f"{what} ({n}), got shape {values.shape}")
    return values


def template_key(pod) -> tuple:
    """Everything a CompiledPod depends on: pods equal here compile to the same arrays."""
    selector = None if pod.node_selector is None else tuple(sorted(pod.node_selector.items()))
    return (tuple(sorted(pod.requests.items())), tuple(sorted(pod.fit_score_requests.items())),
            pod.non_zero, pod.fit_score_non_zero, pod.tolerations, selector, pod.required_terms,
            pod.preferred_terms, pod.host_ports, pod.images)
