"""CustomPlugins: one profile's custom and out-of-tree plugins by extension point, and the Run*
steps over them (PreFilter, Filter slots, Score after the pass). They run after the in-tree
plugins of each point, in the order given.
"""
import numpy as np

from .._native import F_CUSTOM_0, S_CUSTOM_0
from ..errors import ValidationError
from .custom import NodeColumns, assign_slots
from .fit_error import absent_reason
from .interface import SKIP, PluginError, PreFilterRejection, PreFilterResult, Status
from .status import Code

BINDING_METHODS = ("reserve", "unreserve", "permit", "pre_bind", "bind", "post_bind")
#: the points a binding-cycle plugin (loop side) is enabled at
_NOT_BINDING = {"filter", "score", "queueSort", "preEnqueue", "preFilter", "postFilter", "preScore"}


class CustomPlugins:
    def __init__(self, profile, registry, given):
        self.made = {n: registry.create(n, profile.plugin_args.get(n)) for n in profile.out_of_tree}
        configured, self.binding = self._enabled(profile)
        plugins = list(dict.fromkeys([*given, *configured]))
        self.filters, self.scores, _ = assign_slots(plugins)
        # a plugin given to the Scheduler takes part in every other point it implements too
        self.binding += [p for p in given if p not in self.binding and any(hasattr(p, m) for m in BINDING_METHODS)]
        self.pre_enqueue = [p for p in given if hasattr(p, "pre_enqueue")]
        self.queue_sort = self.made.get(profile.queue_sort) or next((p for p in given if hasattr(p, "less")), None)
        self.post_filters = [p for p in given if getattr(p, "post_filter", None) is not None]
        self.pre_filters = [p for p in plugins if p.pre_filter is not None]
        self.prefilter_extensions = [p for p in self.pre_filters if p.add_pod is not None or p.remove_pod is not None]
        self.python_filters = [p for _, p in self.filters if not p.native]
        self.native_filters = [(fid, p) for fid, p in self.filters if p.native]
        self.python_scores = [p for _, p in self.scores if not p.native]
        self.native_scores = [p for _, p in self.scores if p.native]
        self.filters_off = set()       # slots a PreFilter's SKIP turned off for the last cycle
        self.any = bool(plugins or self.binding)
        for fid, p in self.filters:
            p.filter_id = fid
        for sid, p in self.scores:
            p.score_id = sid
        self.native_params = {}
        self._columns = None

    def _enabled(self, profile) -> tuple:
        """The profile's out-of-tree plugins: (Filter/Score/PreFilter ones, weighted as
        configured; binding-cycle ones)."""
        made, oot = self.made, profile.out_of_tree
        custom = [made[n] for n in profile.filters if "filter" in oot.get(n, ())]
        for n, w in profile.score_weights.items():
            if "score" in oot.get(n, ()):
                made[n].weight = w
                custom.append(made[n])
        custom += [made[n] for n, points in oot.items() if "preFilter" in points and made[n] not in custom]
        binding = [made[n] for n, points in oot.items() if points - _NOT_BINDING]
        return custom, binding

    def configure(self, kernel, table):
        """The native functions into the kernel's custom slots."""
        self.native_params = {fid: p.params(table) for fid, p in self.native_filters}
        for fid, p in self.native_filters:
            kernel.set_custom_filter(fid - F_CUSTOM_0, p.address(), self.native_params[fid])
        for sid, p in self.scores:
            if p.native:
                kernel.set_custom_score(sid - S_CUSTOM_0, p.address(), p.params(table), normalize=p.normalize)

    def node_columns(self, table) -> NodeColumns:
        if self._columns is None or self._columns.table is not table:
            self._columns = NodeColumns(table)
        return self._columns

    # ---- PreFilter ------------------------------------------------------------------------------
    def run_pre_filter(self, cycle, nodes):
        """RunPreFilterPlugins over the custom plugins: their PreFilterResults merged with the
        in-tree ones into cycle.names (no node left: an UnschedulableAndUnresolvable rejection,
        worded as kube-scheduler's). A rejection raises PreFilterRejection, an Error PluginError."""
        names: frozenset | set | None = None
        with_nodes: list[str] = []
        unschedulable = None
        state, pod = cycle.state, cycle.pod
        for p in self.pre_filters:
            r = p.pre_filter(state, pod, nodes)
            if r is SKIP:
                state.skip_filter_plugins.add(p.name)
            elif isinstance(r, Status):
                if r.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    raise PreFilterRejection(p.name, r.message)
                if r.code != Code.UNSCHEDULABLE:
                    raise PluginError(f'running PreFilter plugin "{p.name}": {r.message}')
                unschedulable = (p.name, r.message)      # the other PreFilters still run
            elif isinstance(r, PreFilterResult):
                with_nodes.append(p.name)
                names = r.node_names if names is None else names & r.node_names
            elif r is not None:
                raise PluginError(f'running PreFilter plugin "{p.name}": returned {r!r}, not None, SKIP, '
                                  f'a PreFilterResult or a Status')
        if unschedulable is not None:
            raise PreFilterRejection(*unschedulable, code=Code.UNSCHEDULABLE)
        if names is None:
            return
        narrowed = tuple(sorted({*cycle.narrowed, *with_nodes}))
        names = names if cycle.names is None else set(cycle.names) & names
        if not names:
            msg = (f"node(s) didn't satisfy plugin {narrowed[0]}" if len(narrowed) == 1 else
                   f"{absent_reason(narrowed)} simultaneously")
            raise PreFilterRejection("", msg, plugins=narrowed)
        cycle.names, cycle.narrowed = names, narrowed

    # ---- Filter -----------------------------------------------------------------------------------
    def run_filter(self, state, pod, nodes, kernel):
        """The custom Filters' slots for this cycle: Python plugins' per-row statuses, native
        functions on, and off those whose PreFilter said SKIP."""
        skip = state.skip_filter_plugins
        off = {p.filter_id for _, p in self.native_filters if p.name in skip}
        for fid, p in self.native_filters:
            if (fid in off) != (fid in self.filters_off):
                kernel.set_custom_filter(fid - F_CUSTOM_0, *(() if fid in off else (p.address(), self.native_params[fid])))
        self.filters_off = off
        n = nodes.labels.shape[0]
        for p in self.python_filters:
            if p.name in skip:
                kernel.set_custom_filter(p.filter_id - F_CUSTOM_0)
                continue
            status = np.asarray(p.filter(state, pod, nodes))
            status = np.where(status, 0, 1).astype(np.int8) if status.dtype == bool else status.astype(np.int8)
            status = _one_each(status, n, p.name, "must return one value per node row")
            kernel.set_custom_filter(p.filter_id - F_CUSTOM_0, status=np.ascontiguousarray(status))

    def needs_filter_run(self, state) -> bool:
        return bool(self.python_filters or self.filters_off or state.skip_filter_plugins)

    # ---- PreScore, Score, NormalizeScore ------------------------------------------------------------
    def run_score(self, state, pod, nodes, k, weights, nf: int) -> str:
        """PreScore, Score and NormalizeScore of the Python Score plugins over the kernel's
        feasible nodes, added to the kernel's totals with their weights; the range check of
        every custom score. '' or the cycle's error message."""
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
            np.asarray(k.totals)[:nf] += weights[s] * norm
        for p in self.python_scores + self.native_scores:
            if k.score_ran[p.score_id]:
                scores = np.asarray(k.scores)[p.score_id, :nf]
                bad = np.flatnonzero((scores < 0) | (scores > 100))
                if bad.size:
                    return (f'applying score defaultWeights on Score plugins: plugin "{p.name}" returns an invalid '
                            f'score {int(scores[bad[0]])}, it should in the range of [0, 100] after normalizing')
        return ""

    # ---- preemption's what-if evaluations ------------------------------------------------------------
    def what_if(self, pod, state, node_name: str, removed=(), added=(), clone=True):
        """The cycle's state for an evaluation with `removed` pods off the node and `added`
        back: a clone (unless clone=False) after the custom PreFilter plugins' RemovePod and
        AddPod (RunPreFilterExtensionRemovePod/AddPod; not those whose PreFilter skipped).
        None without a state (no custom plugin reads one). A failure raises PluginError."""
        if state is None:
            return None
        if clone:
            state = state.clone()
        for plugin in self.prefilter_extensions:
            if plugin.name in state.skip_filter_plugins:
                continue
            for what, pods, method in (("RemovePod", removed, plugin.remove_pod), ("AddPod", added, plugin.add_pod)):
                for other in pods if method is not None else ():
                    status = method(state, pod, other, node_name)
                    if isinstance(status, Status):
                        raise PluginError(f'running {what} on PreFilter plugin "{plugin.name}": {status.message}')
        return state


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
