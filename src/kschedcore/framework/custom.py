"""Custom (out-of-tree) Filter and Score plugins, two ways.

**Python** (:class:`CustomFilter`, :class:`CustomScore`): one call per pod, returning one value
per node row, typically computed with NumPy over the node columns (:class:`NodeColumns`).

**Native** (:class:`NativeFilter`, :class:`NativeScore`): a function of one node, compiled with
Numba into a C function that the kernel calls inside its per-node pass -- no Python per node,
nothing copied. It is written as::

    def fn(row, node, pod_requests, params) -> int

- ``row``: the node's row; ``node``: a named tuple of arrays over all rows -- ``alloc`` and
  ``requested`` ([row, resource column], int64, cpu in millicores), ``labels`` ([row, label
  column], interned value ids, -1 when the node lacks the label), ``pod_count``,
  ``allowed_pods``;
- ``pod_requests``: the incoming pod's requests by resource column;
- ``params``: int64 array: the columns of the ``resources``, then of the ``labels``, then the
  ids of the label ``values`` the plugin declared (in that order), then its ``constants``.

A Filter returns 0 (pass), 1 (Unschedulable) or 2 (UnschedulableAndUnresolvable); a Score
returns its raw score. Custom plugins run after the in-tree ones of each extension point, in the
order given; a Score with ``normalize=True`` gets kube-scheduler's DefaultNormalizeScore
(raw * 100 / max), otherwise its raw score is weighted as is.

Every extension point of a Python plugin takes the cycle's
:class:`~kschedcore.framework.interface.CycleState` first, as kube-scheduler's do. Optional
methods (absent = the plugin does not implement that point):

- Filter plugins: ``pre_filter(state, pod, nodes)`` -> None, SKIP (the Filter is not called
  for this pod), a PreFilterResult (only these nodes) or a Status (Unschedulable,
  UnschedulableAndUnresolvable or Error); ``add_pod(state, pod, pod_to_add, node_name)`` and
  ``remove_pod(state, pod, pod_to_remove, node_name)`` (PreFilterExtensions: called on a clone
  of the state when preemption evaluates a node without some of its pods, or with them back);
- Score plugins (Python): ``pre_score(state, pod, nodes, rows)`` -> None, SKIP or an Error
  Status; ``normalize_score(state, pod, rows, scores)`` -> the normalised scores;
- :class:`CustomPostFilter`: ``post_filter(state, pod, statuses)``.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._native import F_CUSTOM_0, N_CUSTOM, S_CUSTOM_0
from ..errors import ValidationError

if TYPE_CHECKING:
    from ..objects.pod import Pod
    from .._native.pod import CompiledPod
    from .interface import CycleState, PostFilterResult, PreFilterResult, Status

NodeArrays = namedtuple("NodeArrays", "alloc requested labels pod_count allowed_pods")
DEFAULT_REASON = "node(s) didn't pass the custom filter"


class NodeColumns:
    """The node table as a Python custom plugin sees it: arrays over node rows (rows of removed
    nodes are not `alive`) and the interners that map names to columns and values to ids."""

    def __init__(self, table: Any) -> None:     # the NodeTable
        self._t = table

    table = property(lambda self: self._t)

    alloc = property(lambda self: self._t.alloc)
    requested = property(lambda self: self._t.requested)
    pod_count = property(lambda self: self._t.pod_count)
    allowed_pods = property(lambda self: self._t.allowed_pods)
    labels = property(lambda self: self._t.labels)

    @property
    def alive(self) -> np.ndarray:
        alive = np.zeros(self._t.labels.shape[0], bool)
        alive[list(self._t.row_of.values())] = True
        return alive

    def resource_col(self, name: str) -> int:
        return self._t.resource_col(name)

    def label_col(self, key: str) -> int:
        return self._t.label_key_col(key)

    def value_id(self, value: str) -> int:
        """The id of a label value (-1 if no node has ever had it)."""
        return self._t.label_values.get(value)

    def label(self, key: str) -> np.ndarray:
        """Per row: the id of the node's value for `key`, -1 if it lacks the label."""
        col = self._t.label_keys.get(key)
        return self._t.labels[:, col] if col >= 0 else np.full(self._t.labels.shape[0], -1, np.int32)

    def row(self, node_name: str) -> int:
        return self._t.row_of[node_name]

    def names(self, rows: Iterable[int] | np.ndarray) -> list[str]:
        """The names of the nodes in `rows` (rows of live nodes)."""
        nodes = self._t.nodes
        return [nodes[r].name for r in np.asarray(rows).tolist()]


class _Custom:
    name = ""
    filter_id = 0
    score_id = -1
    native = False
    # optional extension points: a subclass defines them as methods
    pre_filter: Callable[..., Any] | None = None
    add_pod: Callable[..., Any] | None = None
    remove_pod: Callable[..., Any] | None = None
    pre_score: Callable[..., Any] | None = None

    def prefilter_skips(self, pod: Pod) -> bool:
        return False

    def prescore_skips(self, pod: Pod) -> bool:
        return False

    def compile(self, pod: Pod, cp: CompiledPod, table: Any) -> None:
        pass


class CustomFilter(_Custom):
    """A Filter plugin in Python: subclass it and implement `filter`."""
    reason = DEFAULT_REASON

    def filter(self, state: CycleState, pod: Pod, nodes: NodeColumns) -> np.ndarray:
        """Per node row: 0 passes, 1 Unschedulable, 2 UnschedulableAndUnresolvable (a bool
        array is read as True = passes). Called once per cycle, before the kernel's pass (and
        once per node a preemption dry run evaluates, on a clone of the state)."""
        raise NotImplementedError

    def reasons(self, detail: int, table: Any) -> list[str]:
        return [self.reason]


class CustomScore(_Custom):
    """A Score plugin in Python: subclass it and implement `score`. It runs after the kernel's
    pass, on the feasible nodes (when there are two or more, as kube-scheduler scores)."""
    weight = 1
    normalize = False
    scored_in_kernel = False

    def score(self, state: CycleState, pod: Pod, nodes: NodeColumns, rows: np.ndarray) -> np.ndarray:
        """The raw score (int64) of each node row in `rows` (the feasible nodes)."""
        raise NotImplementedError

    def normalize_score(self, state: CycleState, pod: Pod, rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """NormalizeScore: DefaultNormalizeScore (raw * 100 / max) when `normalize`, else the
        raw scores. The result must lie in [0, 100], or the cycle ends in an error."""
        return default_normalize(scores) if self.normalize else scores


class CustomPreFilter(_Custom):
    """A PreFilter plugin without a Filter (it takes no kernel slot): subclass it and
    implement `pre_filter` (and, if it keeps state, `add_pod` / `remove_pod`)."""

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeColumns) -> PreFilterResult | Status | object:
        raise NotImplementedError


class CustomPostFilter(_Custom):
    """A PostFilter plugin in Python, run after the in-tree ones (DefaultPreemption) when
    they did not succeed. `statuses` is {node name: (code, plugin name)} of the nodes the
    failed cycle rejected."""

    def post_filter(self, state: CycleState, pod: Pod, statuses: dict) -> PostFilterResult | Status:
        """A PostFilterResult (nominate the pod, evict its victims), or an Unschedulable /
        UnschedulableAndUnresolvable Status whose message joins the FitError's."""
        raise NotImplementedError


def default_normalize(scores: np.ndarray) -> np.ndarray:
    """helper.DefaultNormalizeScore(MaxNodeScore, false, scores): 100 * score / max, Go's
    truncating division; unchanged when no score is positive."""
    scores = np.asarray(scores, np.int64)
    hi = int(scores.max()) if scores.size else 0
    if hi <= 0:
        return scores.copy()
    q = np.abs(100 * scores) // hi
    return np.where(scores < 0, -q, q)


class _Native(_Custom):
    native = True

    def __init__(self, name: str, fn: Callable[..., Any], *, resources: Iterable[str] = (), labels: Iterable[str] = (),
                 values: Iterable[str] = (), constants: Iterable[int] = ()) -> None:
        if not name or not callable(fn):
            raise ValidationError(f"plugin {name!r}", "", "a native plugin needs a name and a function")
        self.name, self.fn = name, fn
        self.resources, self.labels, self.values = tuple(resources), tuple(labels), tuple(values)
        self.constants = tuple(constants)
        self._cfunc: Any = None     # numba's CFunc, once compiled

    def params(self, table: Any) -> np.ndarray:
        cols = [table.resource_col(r) for r in self.resources] + [table.label_key_col(k) for k in self.labels]
        cols += [table.label_value_id(v) for v in self.values]
        return np.asarray(cols + [int(c) for c in self.constants], np.int64)

    batch = False     # Score plugins are called once per cycle with the feasible rows

    def address(self) -> int:
        """Compiles the function (once) and returns its C entry point."""
        if self._cfunc is None:
            self._cfunc = compile_native(self.fn, self.name, batch=self.batch)
        return self._cfunc.address


class NativeFilter(_Native):
    """A Filter plugin whose per-node function `fn(row, node, pod, params)` is compiled with Numba
    and called inside the kernel's pass: 0 passes, 1 Unschedulable, 2 UnschedulableAndUnresolvable
    (`reason` is the message). `params` holds the columns of the declared `resources`, then of the
    `labels`, the ids of the `values`, then `constants`."""

    def __init__(self, name: str, fn: Callable[..., Any], *, reason: str = DEFAULT_REASON, **kw: Any) -> None:
        super().__init__(name, fn, **kw)
        self.reason = reason

    def reasons(self, detail: int, table: Any) -> list[str]:
        return [self.reason]


class NativeScore(_Native):
    """A Score plugin whose per-node function `fn(row, node, pod, params)` is compiled with Numba and
    called once per cycle over the feasible rows; `normalize=True` applies DefaultNormalizeScore
    (raw x 100 / max), then `weight`. `params` as for NativeFilter."""
    batch = True

    def __init__(self, name: str, fn: Callable[..., Any], *, weight: int = 1, normalize: bool = False,
                 **kw: Any) -> None:
        super().__init__(name, fn, **kw)
        self.weight, self.normalize = weight, normalize


def compile_native(fn: Callable[..., Any], name: str = "plugin", batch: bool = False) -> Any:
    """`fn(row, node, pod_requests, params)` as a Numba C callback with the kernel's signature:
    per node (Filter), or over an array of rows writing an array of scores (Score)."""
    import numba
    from numba import carray, types

    i64, i64p, i32p = types.int64, types.CPointer(types.int64), types.CPointer(types.int32)
    node_args = (i64, i64, i64, i64p, i64p, i32p, i64p, i64p, i64p, i64, i64p)
    try:
        inner = numba.njit(fn, nogil=True)

        @numba.njit(nogil=True, inline="always")
        def view(n_rows, n_res, n_keys, alloc, requested, labels, pod_count, allowed):
            return NodeArrays(carray(alloc, (n_rows, n_res)), carray(requested, (n_rows, n_res)),
                              carray(labels, (n_rows, n_keys)), carray(pod_count, (n_rows,)),
                              carray(allowed, (n_rows,)))

        if batch:
            def wrapper(n, rows, out, n_rows, n_res, n_keys, alloc, requested, labels, pod_count, allowed,
                        pod_req, n_params, params):
                node = view(n_rows, n_res, n_keys, alloc, requested, labels, pod_count, allowed)
                pod, par = carray(pod_req, (n_res,)), carray(params, (n_params,))
                rows_a, out_a = carray(rows, (n,)), carray(out, (n,))
                for j in range(n):
                    out_a[j] = inner(rows_a[j], node, pod, par)

            sig = types.void(i64, i32p, i64p, *node_args)
        else:
            def wrapper(row, n_rows, n_res, n_keys, alloc, requested, labels, pod_count, allowed, pod_req,  # type: ignore[misc]  # the batch entry point takes more arguments
                        n_params, params):
                node = view(n_rows, n_res, n_keys, alloc, requested, labels, pod_count, allowed)
                return inner(row, node, carray(pod_req, (n_res,)), carray(params, (n_params,)))

            sig = i64(i64, *node_args)
        return numba.cfunc(sig, nopython=True, nogil=True)(wrapper)
    except numba.core.errors.NumbaError as e:
        raise ValidationError(f"plugin {name}", "fn", f"cannot be compiled with Numba: {e}") from None


def assign_slots(plugins: Sequence[Any]) -> tuple[list, list, list]:
    """(filters, scores, others): the custom Filter and Score plugins with their kernel filter
    / score ids, and the PreFilter-only and PostFilter plugins (no kernel slot)."""
    filters = [p for p in plugins if isinstance(p, (CustomFilter, NativeFilter))]
    scores = [p for p in plugins if isinstance(p, (CustomScore, NativeScore))]
    other = [p for p in plugins if p not in filters and p not in scores]
    wrong = [p for p in other if not isinstance(p, (CustomPreFilter, CustomPostFilter))]
    if wrong:
        raise ValidationError(f"plugin {getattr(wrong[0], 'name', wrong[0])!r}", "", "not a CustomFilter, "
                              "CustomScore, CustomPreFilter, CustomPostFilter, NativeFilter or NativeScore")
    for p in scores:
        if p.native and p.pre_score is not None:
            raise ValidationError(f"plugin {p.name}", "pre_score", "a native Score plugin scores inside the "
                                  "kernel's pass, before a PreScore could see the feasible nodes: use a CustomScore")
    for kind, group in (("Filter", filters), ("Score", scores)):
        if len(group) > N_CUSTOM:
            raise ValidationError("plugins", "", f"at most {N_CUSTOM} custom {kind} plugins, got {len(group)}")
    names = [p.name for p in plugins]
    if len(set(names)) != len(names) or not all(names):
        raise ValidationError("plugins", "name", "custom plugins need distinct, non-empty names")
    return ([(F_CUSTOM_0 + k, p) for k, p in enumerate(filters)],
            [(S_CUSTOM_0 + k, p) for k, p in enumerate(scores)], other)
