"""The observation: the node table's columns (one row per node, in the workload's node order)
and the pod being decided.

Node arrays are the table's own columns: read-only views (`views=True`; each step changes
them in place) or copies of them (the default: gymnasium expects observations that later calls
do not change). While the table's rows are not the node axis (loop mode, a node not in the
cluster yet or one removed), they are gathered by node index: copies, zeros for absent nodes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

if TYPE_CHECKING:
    from .nodes import NodeIndex

INT64 = np.iinfo(np.int64)
INT32 = np.iinfo(np.int32)
#: observation key -> the node table column it shows
NODE_COLUMNS = {"allocatable": "alloc", "requested": "requested", "pod_count": "pod_count",
                "allowed_pods": "allowed_pods", "unschedulable": "unschedulable"}


def observation_space(n_nodes: int, n_resources: int) -> spaces.Dict:
    nr = (n_nodes, n_resources)
    return spaces.Dict({
        "allocatable": spaces.Box(0, INT64.max, nr, np.int64),
        "requested": spaces.Box(0, INT64.max, nr, np.int64),
        "pod_count": spaces.Box(0, INT64.max, (n_nodes,), np.int64),
        "allowed_pods": spaces.Box(0, INT64.max, (n_nodes,), np.int64),
        "unschedulable": spaces.Box(0, 1, (n_nodes,), np.uint8),
        "pod_requests": spaces.Box(0, INT64.max, (n_resources,), np.int64),
        "pod_priority": spaces.Box(INT32.min, INT32.max, (1,), np.int64),
    })


#: node arrays that change with each placement, row by row (the others only with a node, when the
#: table's node_version moves)
USAGE_KEYS = ("requested", "pod_count")


class Observer:
    """Makes observations from a node table's rows (by `nodes`) and its first `n_resources`
    resource columns.

    Copies (the default; gymnasium asks for new arrays at every call, constant ones included):
    each is copied from a contiguous mirror of its column (a strided copy costs ten times more
    than a contiguous one). The node-spec mirrors are made again when a node changes; the
    usage mirrors are brought up to date by the rows the table logged as changed."""

    def __init__(self, table: Any, nodes: NodeIndex, n_resources: int, views: bool) -> None:
        self.table, self.nodes, self.n_resources, self.views = table, nodes, n_resources, views
        self.n_nodes = len(nodes.names)
        self.made_for: tuple = ()       # the table's (layout, node_version) the arrays are of
        self.columns: dict[str, np.ndarray] = {}
        self.mirrors: dict[str, np.ndarray] = {}
        self.usage: list[tuple[np.ndarray, np.ndarray]] = []     # (mirror, column) of USAGE_KEYS
        self.seen = 0           # the table's change_seq the mirrors are current at
        self._pod_arrays: dict[int, tuple[Any, np.ndarray, np.ndarray]] = {}
        self.target: dict[str, np.ndarray] | None = None      # the arrays write() fills (into())

    def into(self, arrays: dict[str, np.ndarray]) -> None:
        """Mirror into these arrays -- one sub-environment's rows of a vector environment's
        batch, every observation key -- instead of arrays of its own: write() then brings them
        up to date in place, row by row as the table logs its changes."""
        self.target, self.views, self.made_for = arrays, False, ()

    def refresh(self) -> None:
        """Views of the columns, snapshots and mirrors of them, made again (when a node changes;
        each episode: a fork's revert moves the change log back)."""
        t, n, k = self.table, self.n_nodes, self.n_resources
        self.made_for = (t.layout, t.node_version)
        self.columns = {}
        if not self.nodes.current().identity:
            return
        for key, name in NODE_COLUMNS.items():
            col = getattr(t, name)
            view = col[:n, :k] if col.ndim == 2 else col[:n]
            view.flags.writeable = False
            self.columns[key] = view
        if not self.views:
            if self.target is not None:
                for key, v in self.columns.items():
                    self.target[key][...] = v
                self.mirrors = {key: self.target[key] for key in self.columns}
            else:
                self.mirrors = {key: v.copy() for key, v in self.columns.items()}   # C order
            self.usage = [(self.mirrors[key], self.columns[key]) for key in USAGE_KEYS]
            self.seen = int(t.change_seq[0])

    def _node_arrays(self, copy: bool = True) -> dict[str, np.ndarray]:
        """The node arrays now: views, copies of the mirrors (copy False: the mirrors
        themselves), or, while the rows are not the node axis, arrays gathered anew."""
        t = self.table
        if self.made_for != (t.layout, t.node_version):
            self.refresh()
        if not self.columns:        # the rows are not the node axis
            k = self.n_resources
            return {key: self.nodes.gather(getattr(t, name)[:, :k] if name in ("alloc", "requested")
                                           else getattr(t, name)) for key, name in NODE_COLUMNS.items()}
        if self.views:
            return dict(self.columns)
        seq, log = int(t.change_seq[0]), t.change_log
        if seq - self.seen > len(log) or seq < self.seen:
            self.refresh()
        elif seq != self.seen:
            mask, n = len(log) - 1, self.n_nodes
            for i in range(self.seen, seq):
                r = int(log[i & mask])
                if r < n:
                    for mirror, column in self.usage:
                        mirror[r] = column[r]
            self.seen = seq
        return {key: m.copy() for key, m in self.mirrors.items()} if copy else self.mirrors

    def _pod(self, pod: Any, copy: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The pod's requests and priority (made once per compiled spec; copies of them)."""
        usage = pod.compiled[1].usage
        hit = self._pod_arrays.get(id(usage))
        if hit is not None and hit[0] is usage and hit[2][0] == pod.priority:
            return (hit[1].copy(), hit[2].copy()) if copy else (hit[1], hit[2])
        cols, vals, _ = usage       # what placing it adds to `requested`
        requests = np.zeros(self.n_resources, np.int64)
        keep = cols < self.n_resources
        requests[cols[keep]] = vals[keep]
        priority = np.array([pod.priority], np.int64)
        if len(self._pod_arrays) > 4096:
            self._pod_arrays.clear()
        self._pod_arrays[id(usage)] = (usage, requests, priority)
        return requests.copy(), priority.copy()

    def write(self, pod: Any) -> None:
        """The observation for deciding `pod` (None: no decision left), into the arrays given
        to into(): the rows changed since the last one, and the pod's."""
        target = self.target
        assert target is not None, "into() first"
        arrays = self._node_arrays(copy=False)
        if arrays is not self.mirrors:          # gathered: the rows are not the node axis
            for key, a in arrays.items():
                target[key][...] = a
        if pod is None:
            target["pod_requests"][...] = 0
            target["pod_priority"][...] = 0
        else:
            target["pod_requests"][...], target["pod_priority"][...] = self._pod(pod, copy=False)

    def observe(self, pod: Any) -> dict[str, np.ndarray]:
        obs = self._node_arrays()
        if pod is None:
            obs["pod_requests"] = np.zeros(self.n_resources, np.int64)
            obs["pod_priority"] = np.zeros(1, np.int64)
        else:
            obs["pod_requests"], obs["pod_priority"] = self._pod(pod)
        return obs
