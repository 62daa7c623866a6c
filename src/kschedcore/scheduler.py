"""Scheduler: the public object. Nodes and pods in, kube-scheduler's decisions out.

A scheduling cycle runs PreFilter in Python (once per pod), then one compiled pass over the
node table (Filter, Score, NormalizeScore, selectHost), then builds the result. Pods placed
on nodes (bound or assumed) update only their node's row.
"""
import gc
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ._kernels import CompiledPod, NodeKernel, N_SCORES, S_NODE_AFFINITY, S_TAINT_TOLERATION
from .errors import DuplicateError, UnsupportedError, ValidationError
from .framework.fit_error import FitError
from .framework.status import Code
from .objects import resources as res
from .objects.features import check_supported
from .objects.node import Node, parse_node
from .objects.pod import Pod, parse_pod
from .plugins import REGISTRY, SKIPPING_FILTER_PLUGINS, SKIPPING_SCORE_PLUGINS
from .plugins.node_ports import packed_ports
from .state.node_table import NodeTable

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
TIE_BREAKS = ("random", "first")
PRESCORE_PARSE_ERROR = 'running PreScore plugin "NodeAffinity": invalid preferred node affinity terms'
#: score plugins with a NormalizeScore step; the others' scores are their raw scores
NORMALIZED_SCORES = (S_TAINT_TOLERATION, S_NODE_AFFINITY)


@contextmanager
def _gc_paused():
    """Pauses the cyclic garbage collector: a batch of cycles allocates many small acyclic
    objects, and collections triggered by them cost ~15% of the batch."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _template_key(pod: Pod) -> tuple:
    """Everything a CompiledPod depends on: pods equal here compile to the same arrays."""
    selector = None if pod.node_selector is None else tuple(sorted(pod.node_selector.items()))
    return (tuple(sorted(pod.requests.items())), pod.non_zero, pod.fit_score_non_zero, pod.tolerations,
            selector, pod.required_terms, pod.preferred_terms, pod.host_ports, pod.images)


def _name_of(obj) -> str:
    meta = obj.get("metadata") or {} if isinstance(obj, dict) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '?')}"


@dataclass(slots=True)
class ScheduleResult:
    """One scheduling cycle: the chosen node, or the FitError."""
    pod: str
    node: str | None
    feasible_nodes: int
    evaluated_nodes: int
    fit_error: FitError | None = None
    #: a failed cycle that is not a FitError (kube-scheduler: SchedulerError), e.g. a PreScore error
    error: str | None = None

    @property
    def scheduled(self) -> bool:
        return self.node is not None


@dataclass(slots=True)
class _Placement:
    """A pod counted on a node (bound or assumed) and what it added to the node's row."""
    pod: Pod
    node: str
    cols: np.ndarray
    vals: np.ndarray
    ports: list


class Scheduler:
    """kube-scheduler's default profile (node-local plugins) over an in-process node table.

    percentage_of_nodes_to_score: None or 0 = adaptive, else 1-100 (semantics §5.2).
    tie_break: "random" (uniform among the best totals, seeded) or "first" (first in input order).
    plugin_args: {plugin name: args dict}, e.g. NodeResourcesFit's scoringStrategy.
    threads: 1 (default) or 2: split large scans between two threads, for an otherwise idle
        machine with two or more cores.
    """

    def __init__(self, nodes=(), pods=(), *, percentage_of_nodes_to_score=None, tie_break="random",
                 seed=0, plugin_args=None, weights=None, threads=None):
        if percentage_of_nodes_to_score is not None and not 0 <= percentage_of_nodes_to_score <= 100:
            raise ValidationError("scheduler", "percentageOfNodesToScore",
                                  f"must be in the range 0-100, got {percentage_of_nodes_to_score}")
        if tie_break not in TIE_BREAKS:
            raise ValidationError("scheduler", "tieBreak", f'must be "random" or "first", got "{tie_break}"')
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score or 0
        self.tie_first = tie_break == "first"
        self.table = NodeTable()
        self.kernel = NodeKernel()
        self.kernel.seed(seed)
        # threads=2 splits large scans between two threads (results do not depend on it). Not
        # the default: when the other core is busy, the second thread's wake-ups cost more
        # than it saves.
        if threads not in (None, 1, 2):
            raise ValidationError("scheduler", "threads", f"must be 1 or 2, got {threads}")
        self.kernel.threads = threads or 1
        args = plugin_args or {}
        self.plugins = [cls(args.get(name)) for name, cls in REGISTRY.items()]
        self._by_name = {p.name: p for p in self.plugins}
        self._filters = {p.filter_id: p for p in self.plugins if p.filter_id}
        self._scorers = [p for p in self.plugins if p.score_id >= 0]
        weights = dict(weights or {})
        self._weights = np.zeros(N_SCORES, np.int64)
        for p in self._scorers:
            self._weights[p.score_id] = weights.get(p.name) or p.default_weight
        self._configure_kernel()
        self.next_start_node_index = 0
        self._token = object()
        self._templates = {}       # template key -> CompiledPod
        self._num_to_find_cache = (-1, 0)
        self._placed = {}          # pod key -> _Placement
        self._orphans = {}         # node name -> [Pod] bound to a node not (yet) known
        self.pending = []          # pods without spec.nodeName, in arrival order
        for n in nodes:
            self.add_node(n)
        for p in pods:
            self.add_pod(p)

    def _configure_kernel(self):
        k = self.kernel
        k.weights = self._weights
        k.filter_order = np.asarray(sorted(self._filters), np.int32)
        k.score_enabled = np.zeros(N_SCORES, np.uint8)
        for p in self._scorers:
            k.score_enabled[p.score_id] = 1
        self._by_name["NodeResourcesFit"].configure(k, self.table)
        self._by_name["NodeResourcesBalancedAllocation"].configure(k, self.table)
        self._bound_layout = -1

    @classmethod
    def from_workload(cls, workload, **options) -> "Scheduler":
        """A scheduler holding a Workload's nodes and bound pods, its pending pods queued."""
        for kind in ("Service", "ReplicaSet", "StatefulSet", "ReplicationController"):
            if workload.objects.get(kind):
                raise UnsupportedError(f"{kind} {_name_of(workload.objects[kind][0])}", "",
                                       "default topology spreading from Services and controllers "
                                       "is not implemented yet")
        sched = cls(**options)
        for i, node in enumerate(workload.nodes):
            sched.add_node(parse_node(node, f"nodes[{i}]"))
        for i, pod in enumerate(workload.pods):
            sched.add_pod(parse_pod(pod, f"pods[{i}]"))
        for i, pod in enumerate(workload.pending):
            sched.queue(parse_pod(pod, f"pending[{i}]"))
        return sched

    # ---- nodes -------------------------------------------------------------------------------
    def add_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        self.table.add_node(node)
        for pod in self._orphans.pop(node.name, ()):
            self._place(pod, node.name)

    def update_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        if node.name not in self.table.row_of:
            raise ValidationError(f"node {node.name}", "metadata.name", "no such node")
        self.table.update_node(node)

    def remove_node(self, name: str) -> None:
        if name not in self.table.row_of:
            raise ValidationError(f"node {name}", "metadata.name", "no such node")
        # pods keep their binding; they are counted again if the node comes back
        for key in [k for k, pl in self._placed.items() if pl.node == name]:
            self._orphans.setdefault(name, []).append(self._unplace(key).pod)
        self.table.remove_node(name)

    @property
    def node_names(self) -> list:
        return [n.name for n in self.table.nodes if n is not None]

    # ---- pods --------------------------------------------------------------------------------
    def parse_pod(self, pod) -> Pod:
        pod = pod if isinstance(pod, Pod) else parse_pod(pod)
        check_supported(pod)
        return pod

    def add_pod(self, pod) -> Pod | None:
        """A pod with spec.nodeName is counted on its node; others join `pending`.

        Succeeded and Failed pods are ignored (None), as kube-scheduler's informers drop them.
        """
        pod = self.parse_pod(pod)
        if pod.terminal:
            return None
        if pod.key in self._placed:
            raise DuplicateError(f"pod {pod.key}", "metadata.name", "duplicate pod")
        if pod.node_name:
            self._place(pod, pod.node_name)
        else:
            self.pending.append(pod)
        return pod

    def queue(self, pod) -> Pod | None:
        """Appends a pod to `pending`, even one that names its node already (pre-bound: it
        joins that node when its turn comes, without a scheduling cycle)."""
        pod = self.parse_pod(pod)
        if pod.terminal:
            return None
        self.pending.append(pod)
        return pod

    def remove_pod(self, key: str) -> bool:
        """Removes a pod ("namespace/name") wherever it is; False if it is not known (as for
        kube-scheduler, deleting an unknown or terminal pod changes nothing)."""
        if key in self._placed:
            self._unplace(key)
            return True
        for lst in [self.pending, *self._orphans.values()]:
            for i, p in enumerate(lst):
                if p.key == key:
                    del lst[i]
                    return True
        return False

    def assume(self, pod, node_name: str) -> None:
        """Counts `pod` on `node_name` for every later cycle (kube-scheduler's assume)."""
        pod = self.parse_pod(pod)
        if pod.key in self._placed:
            raise ValidationError(f"pod {pod.key}", "", "already assumed or bound")
        if node_name not in self.table.row_of:
            raise ValidationError(f"pod {pod.key}", "spec.nodeName", f'no such node "{node_name}"')
        self._place(pod, node_name)

    def _usage(self, pod: Pod):
        """What a pod adds to its node's row: resource columns, amounts, packed host ports."""
        t = self.table
        counted = [(t.resource_col(n), v) for n, v in pod.requests.items() if res.counts(n)]
        cols = np.asarray([c for c, _ in counted], np.int64)
        vals = np.asarray([v for _, v in counted], np.int64)
        return cols, vals, packed_ports(pod, t)

    def _place(self, pod: Pod, node_name: str, cp: CompiledPod | None = None):
        """Counts a pod on its node (bound or assumed); `cp`, if given, is its compiled form."""
        t = self.table
        row = t.row_of.get(node_name)
        if row is None:
            self._orphans.setdefault(node_name, []).append(pod)
            return
        if cp is not None and self._bound_layout == t.layout:
            cols, vals, ports = cp.usage
            if self.kernel.place(cp, row):          # the fast path of a cycle's assume
                t.stale_images.add(row)
        else:
            cols, vals, ports = self._usage(pod)
            self._add_usage_numpy(row, cols, vals, pod, 1)
            t.touch(row)
        if ports:
            t.add_ports(row, ports, 1)
        self._placed[pod.key] = _Placement(pod, node_name, cols, vals, ports)

    def _add_usage_numpy(self, row, cols, vals, pod, sign):
        t = self.table
        np.add.at(t.requested[row], cols, sign * vals)
        t.nonzero[row, 0] += sign * pod.non_zero[0]
        t.nonzero[row, 1] += sign * pod.non_zero[1]
        t.pod_count[row] += sign

    def _unplace(self, key: str) -> _Placement:
        pl = self._placed.pop(key)
        row = self.table.row_of[pl.node]
        self._add_usage_numpy(row, pl.cols, pl.vals, pl.pod, -1)
        if pl.ports:
            self.table.add_ports(row, pl.ports, -1)
        self.table.touch(row)
        return pl

    # ---- the scheduling cycle ------------------------------------------------------------------
    def _compile(self, pod: Pod) -> CompiledPod:
        """The pod in integer form, cached on the pod and shared by pods of one template.

        Valid while no new taint appears (the tolerated-taint arrays are per taint id).
        """
        cached = pod.compiled
        if cached is not None and cached[0] is self._token and cached[1].taint_version == self.table.taint_version:
            return cached[1]
        key = _template_key(pod)
        cp = self._templates.get(key)
        if cp is None or cp.taint_version != self.table.taint_version:
            cp = CompiledPod()
            for p in self.plugins:
                p.compile(pod, cp, self.table)
            cp.prefilter_node_names = self._by_name["NodeAffinity"].prefilter_node_names(pod)
            cp.preferred_parse_error = pod.preferred_parse_error
            cp.usage = self._usage(pod)
            cp.usage_cols, cp.usage_vals = cp.usage[0], cp.usage[1]
            cp.usage_nz_cpu, cp.usage_nz_mem = pod.non_zero
            self._templates[key] = cp
        pod.compiled = (self._token, cp)
        return cp

    def _num_to_find(self, n: int) -> int:
        cached = self._num_to_find_cache
        if cached[0] != n:
            cached = self._num_to_find_cache = (n, self.num_feasible_nodes_to_find(n))
        return cached[1]

    def num_feasible_nodes_to_find(self, num_all_nodes: int) -> int:
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        pct = self.percentage_of_nodes_to_score
        if pct == 0:
            pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)

    def _run_cycle(self, pod: Pod):
        """Returns (result, context for explain)."""
        t = self.table
        n_all = len(t)
        if n_all == 0:
            return ScheduleResult(pod.key, None, 0, 0, FitError(pod.key, 0)), None
        cp = self._compile(pod)
        if self._bound_layout != t.layout:
            self.kernel.bind(t)
            self._bound_layout = t.layout
        if t.stale_images:
            t.refresh_snapshot()
        names = cp.prefilter_node_names
        scan = t.scan_order
        if names is not None:
            if not names:
                err = FitError(pod.key, n_all, pre_filter_message="pod affinity terms conflict")
                return ScheduleResult(pod.key, None, 0, 0, err), "prefilter_rejected"
            scan = np.asarray([r for r in t.scan_order if t.nodes[r].name in names], np.int32)
        start = self.next_start_node_index
        node_name_row = -1 if not pod.node_name else t.row_of.get(pod.node_name, -2)
        best, nf, processed = self.kernel.run(
            cp, scan, start, self._num_to_find(len(scan)), node_name_row, n_all, self.tie_first)
        self.next_start_node_index = (start + processed) % n_all
        ctx = (scan, start, processed, names is not None)
        if nf > 1 and cp.preferred_parse_error:
            # NodeAffinity's PreScore fails to parse the preferred terms: the cycle errors out
            return ScheduleResult(pod.key, None, nf, processed, error=PRESCORE_PARSE_ERROR), ctx
        if best >= 0:
            return ScheduleResult(pod.key, t.nodes[best].name, nf, processed), ctx
        err = FitError(pod.key, n_all, reasons=self._histogram(processed, n_all - len(scan)))
        return ScheduleResult(pod.key, None, 0, processed, err), ctx

    def _histogram(self, explicit: int, absent: int) -> dict:
        """The FitError reason histogram from the kernel's per-plugin counters."""
        k, t = self.kernel, self.table
        hist = {}

        def add(reason, count):
            if count:
                hist[reason] = hist.get(reason, 0) + count

        for fid, plugin in self._filters.items():
            if fid == self._by_name["TaintToleration"].filter_id:
                for tid in np.flatnonzero(np.asarray(k.hist_taint)):
                    add(plugin.reasons(int(tid), t)[0], int(k.hist_taint[tid]))
            elif fid == self._by_name["NodeResourcesFit"].filter_id:
                for bit in np.flatnonzero(np.asarray(k.hist_fit)):
                    add(plugin.reasons(1 << int(bit), t)[0], int(k.hist_fit[bit]))
            else:
                for reason in plugin.reasons(0, t):
                    add(reason, int(k.hist_plugin[fid]))
        if absent:
            add("node(s) didn't satisfy plugin(s) [NodeAffinity]", absent)
        return hist

    def prepare(self, pod) -> None:
        """Compiles a queued pod ahead of its cycle (optional: cycles compile on demand)."""
        self._compile(pod if isinstance(pod, Pod) else self.parse_pod(pod))

    def utilization(self) -> dict:
        """Requested / allocatable over all nodes, per native resource with any allocatable."""
        t = self.table
        rows = np.fromiter(t.row_of.values(), np.int64, len(t.row_of))
        out = {}
        for name in ("cpu", "memory", "ephemeral-storage", *t.resources.items[3:]):
            col = t.resources.get(name)
            alloc = int(t.alloc[rows, col].sum()) if len(rows) else 0
            if alloc:
                out[name] = round(int(t.requested[rows, col].sum()) / alloc, 4)
        out["pods"] = round(int(t.pod_count[rows].sum()) / max(1, int(t.allowed_pods[rows].sum())), 4)
        return out

    # ---- public scheduling API -----------------------------------------------------------------
    def schedule(self, pod) -> ScheduleResult:
        """One scheduling cycle for `pod`; the pod is not assumed."""
        return self._run_cycle(self.parse_pod(pod))[0]

    def schedule_one(self, pod) -> ScheduleResult:
        """Schedules `pod` and, if a node was chosen, assumes it there."""
        pod = self.parse_pod(pod)
        result = self._run_cycle(pod)[0]
        if result.node is not None:
            self._place(pod, result.node, pod.compiled[1])
        return result

    def schedule_pending(self, callback=None) -> list:
        """Schedules every pending pod in order, each assumed before the next."""
        with _gc_paused():
            return self._schedule_pending(callback)

    def _schedule_pending(self, callback):
        results = []
        pending, self.pending = self.pending, []
        for pod in pending:
            if pod.node_name:   # pre-bound: kube-scheduler never schedules it
                self._place(pod, pod.node_name)
                result = ScheduleResult(pod.key, pod.node_name, 0, 0)
            else:
                result = self._run_cycle(pod)[0]
                if result.node is not None:
                    self._place(pod, result.node, pod.compiled[1])
                else:
                    self.pending.append(pod)
            results.append(result)
            if callback is not None:
                callback(result)
        return results

    def explain(self, pod) -> dict:
        """One scheduling cycle for `pod` with per-node filter results and per-plugin scores.

        The record has the fields of the parity explain format (pod, node, numFeasible, filter,
        scores, skippedFilterPlugins, skippedScorePlugins, fitError, ...). Not assumed.
        """
        pod = self.parse_pod(pod)
        result, ctx = self._run_cycle(pod)
        return self._record(pod, result, ctx)

    def explain_pending(self, callback=None) -> list:
        """explain() every pending pod in order; each chosen pod is assumed before the next.

        A pending pod that already names its node (pre-bound) is explained like any other (only
        that node can pass NodeName) and joins it only if it passed the filters there.
        """
        with _gc_paused():
            return self._explain_pending(callback)

    def _explain_pending(self, callback):
        records = []
        pending, self.pending = self.pending, []
        for pod in pending:
            result, ctx = self._run_cycle(pod)
            rec = self._record(pod, result, ctx)
            # The oracle assumes a pre-bound pod only where its cycle chose it (parity data,
            # mixed_small team-b/pod-0007); the real scheduler binds it as is (schedule_pending).
            if result.node:
                self._place(pod, result.node)
            else:
                self.pending.append(pod)
            records.append(rec)
            if callback is not None:
                callback(rec)
        return records

    def _record(self, pod: Pod, result: ScheduleResult, ctx) -> dict:
        t, k = self.table, self.kernel
        rec = {"pod": pod.key, "node": result.node, "numFeasible": result.feasible_nodes,
               "filter": {}, "scores": {}}
        skipped_filter = [p.name for p in self.plugins if p.prefilter_skips(pod)]
        rec["skippedFilterPlugins"] = sorted(skipped_filter + list(SKIPPING_FILTER_PLUGINS))
        if ctx == "prefilter_rejected":
            status = {"ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "NodeAffinity",
                      "reasons": [result.fit_error.pre_filter_message]}
            rec["filter"] = {name: dict(status) for name in self.node_names}
            rec["preFilterStatus"] = status
        elif ctx:
            scan, start, processed, narrowed = ctx
            n = len(scan)
            for i in range(processed):
                row = int(scan[(start + i) % n])
                code = Code(int(k.st_code[row]))
                if code == Code.SUCCESS:
                    continue
                plugin = self._filters[int(k.st_plugin[row])]
                rec["filter"][t.nodes[row].name] = {
                    "ok": False, "code": code.go_name, "plugin": plugin.name,
                    "reasons": plugin.reasons(int(k.st_detail[row]), t)}
            if narrowed:
                inside = {t.nodes[r].name for r in scan}
                rec["preFilterNodeNames"] = sorted(pod.compiled[1].prefilter_node_names)
                for name in self.node_names:
                    if name not in inside:
                        rec["filter"][name] = {
                            "ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "NodeAffinity",
                            "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]}
            if result.error:
                rec["error"] = result.error
            elif result.feasible_nodes > 1:
                rec["scores"] = self._scores(result.feasible_nodes)
        rec["skippedScorePlugins"] = sorted(
            [p.name for p in self._scorers if p.prescore_skips(pod)] + list(SKIPPING_SCORE_PLUGINS))
        if pod.node_name:
            rec["preBound"] = True
        rec["fitError"] = str(result.fit_error) if result.fit_error else None
        return rec

    def _scores(self, nf: int) -> dict:
        k, t = self.kernel, self.table
        ran = [p for p in self._scorers if k.score_ran[p.score_id]]
        out = {}
        for j in range(nf):
            entry = {}
            for p in ran:
                raw = 0 if k.score_zero[p.score_id] else int(k.raw_scores[p.score_id, j])
                score = int(k.scores[p.score_id, j]) if p.score_id in NORMALIZED_SCORES else raw
                entry[p.name] = int(self._weights[p.score_id]) * score
                entry["raw:" + p.name] = raw
            entry["total"] = int(k.totals[j])
            out[t.nodes[int(k.feasible[j])].name] = entry
        return out
