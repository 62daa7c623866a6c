"""The scheduler cache (pkg/scheduler/backend/cache): the cluster as the scheduling cycles see
it -- nodes in the node table, pods placed on them (bound or assumed), the counters and volume
facts kept current as pods come and go, and the other objects plugins read.

No snapshot copies: kube-scheduler clones changed NodeInfos into a snapshot every cycle because
its informers and binding goroutines change the cache concurrently. Here one owner serialises
every change, so a cycle reads the node table in place; per-row generations tell what changed.
"""
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ...errors import DuplicateError, NotFoundError, StateError, UnsupportedError, ValidationError
from ...objects import resources as res
from ...objects.disruption import parse_pdb
from ...objects.namespace import parse_namespace
from ...objects.node import Node
from ...objects.pod import Pod
from ...objects.priority_class import parse_priority_class
from ...objects.resource import RESOURCE_KINDS
from ...objects.storage import STORAGE_KINDS
from ..._native.table import add_usage as table_add_usage
from .dra import DRAState
from .fork import CacheJournal
from .node_table import NodeTable, pack_port
from .pod_counters import PodCounters
from .pods_by_priority import PodsByPriority
from .volumes import VolumeState

#: kinds whose selectors give the system default topology spread constraints
SELECTOR_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
#: the start of a placed pod without status.startTime: kube-scheduler's GetPodStartTime gives
#: it "now", later than any recorded start; among such pods, placement order stands for it
NO_START_TIME = 2 ** 62


@dataclass(slots=True)
class Placement:
    """A pod counted on a node (bound or assumed) and what it added to the node's row."""
    pod: Pod
    node: str
    cols: np.ndarray
    vals: np.ndarray
    ports: list


class Cache:
    """Nodes, the pods on them, the objects plugins read (one owner serialises every change)."""

    def __init__(self):
        self.table = NodeTable()
        self._placed = {}          # pod key -> Placement
        self.counters = PodCounters(self.table, self._placed_rows)    # matching pods per domain / row
        self.volumes = VolumeState(self.table)     # storage objects; their use per node
        self.dra = DRAState()                      # resource.k8s.io objects, devices in use
        self.namespaces, self.namespace_version = {}, 0     # Namespace name -> labels; its changes
        self.objects = {}                          # kind -> [raw]: Services, controllers
        self.pdbs = {}                             # "ns/name" -> PodDisruptionBudget
        self.priority_classes = {}                 # name -> PriorityClass (admission reads them)
        self._on_node = {}         # node name -> {pod key: None}, in placement order
        self._orphans = {}         # node name -> [Pod] bound to a node not (yet) known
        self._priorities: Counter = Counter()  # priority -> placed pods
        self._by_priority = None        # PodsByPriority, from the first preemption on
        self._start = {}                # pod key -> start time (ns), MoreImportantPod's tie-break
        self._next_unstarted = NO_START_TIME    # the next pod without status.startTime gets this
        self._journal = None            # the open fork's CacheJournal (fork.py)
        self._totals_key: tuple | None = None    # utilization(): the nodes' rows and allocatable sums
        self._totals: tuple = ()

    # ---- nodes -------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        self.table.add_node(node)
        if self._journal is not None:
            self._journal.orphan(self, node.name)
        for pod in self._orphans.pop(node.name, ()):
            self.place(pod, node.name)

    def update_node(self, node: Node) -> Node:
        """Replaces a node's facts; returns the old Node."""
        row = self.table.row_of.get(node.name)
        if row is None:
            raise NotFoundError(f"node {node.name}", "metadata.name", "no such node")
        old = self.table.nodes[row]
        self.table.update_node(node)
        if old.labels != node.labels:       # what the pod counters count by (a cordon keeps them)
            if self._journal is not None:
                self._journal.relabelled = True
            self.counters.relabelled()
        return old

    def remove_node(self, name: str) -> Node:
        """Removes a node; its pods keep their binding and count again if it comes back."""
        row = self.table.row_of.get(name)
        if row is None:
            raise NotFoundError(f"node {name}", "metadata.name", "no such node")
        old = self.table.nodes[row]
        if self._journal is not None:
            self._journal.orphan(self, name)
        for key in list(self._on_node.get(name, ())):
            self._orphans.setdefault(name, []).append(self._unplace(key).pod)
        self.table.remove_node(name)
        return old

    def node(self, name: str) -> Node | None:
        row = self.table.row_of.get(name)
        return None if row is None else self.table.nodes[row]

    @property
    def node_names(self) -> list:
        return [n.name for n in self.table.nodes if n is not None]

    # ---- pods --------------------------------------------------------------------------------
    def add_pod(self, pod: Pod) -> None:
        """A bound pod (spec.nodeName set); one bound to an unknown node waits for it."""
        if pod.key in self._placed or self._orphaned(pod.key):
            raise DuplicateError(f"pod {pod.key}", "metadata.name", "duplicate pod")
        self.place(pod, pod.node_name)

    def assume(self, pod: Pod, node_name: str, kernel=None) -> None:
        """AssumePod: counts a pod a cycle chose on its node from now on. kernel: the
        NodeKernel that compiled the pod, bound to this table (it writes the row in C)."""
        if pod.key in self._placed or self._orphaned(pod.key):
            raise StateError(f"pod {pod.key}", "", "already assumed or bound")
        if node_name not in self.table.row_of:
            raise NotFoundError(f"pod {pod.key}", "spec.nodeName", f'no such node "{node_name}"')
        self.place(pod, node_name, kernel)

    def remove_pod(self, key: str, taken_off: bool = False) -> Placement | None:
        """ForgetPod / RemovePod: the placement taken off its node (None if not placed).
        taken_off: the kernel took its usage off the row already (remove_taken_off)."""
        if self._journal is not None:
            self._journal.pod(self, key)
        self._start.pop(key, None)
        return self._unplace(key, taken_off) if key in self._placed else None

    def start_time(self, key: str) -> int:
        """A placed pod's start (GetPodStartTime) as ns since the epoch: status.startTime, or,
        without one, "now" -- after every recorded start, in placement order."""
        return self._start.get(key, NO_START_TIME)

    def orphan_count(self) -> int:
        """Pods bound to nodes the cluster does not have (they count when the node comes)."""
        return sum(len(pods) for pods in self._orphans.values())

    def _orphaned(self, key: str) -> bool:
        return bool(self._orphans) and any(p.key == key for pods in self._orphans.values() for p in pods)

    def remove_orphan(self, key: str) -> bool:
        for name, pods in self._orphans.items():
            for i, p in enumerate(pods):
                if p.key == key:
                    if self._journal is not None:
                        self._journal.orphan(self, name)
                    del pods[i]
                    return True
        return False

    def placement(self, key: str) -> Placement | None:
        return self._placed.get(key)

    def __contains__(self, key) -> bool:
        return key in self._placed

    def _placed_rows(self):
        """(pod, node row) of every placed pod, in placement order (what the counters count), one
        at a time: a list of 10^5 pairs made the collector walk the heap while it was built."""
        row_of = self.table.row_of
        return ((pl.pod, row_of[pl.node]) for pl in self._placed.values())

    def placements(self):
        """Every placement, in placement order."""
        return self._placed.values()

    def pods_on(self, node_name: str) -> list:
        """The pods placed on the node, in placement order."""
        return [self._placed[k].pod for k in self._on_node.get(node_name, ())]

    def keys_on(self, node_name: str) -> list:
        return list(self._on_node.get(node_name, ()))

    def lower_priority(self, priority: int, node_name: str) -> list:
        """The node's pods below `priority` (preemption's potential victims), placement order."""
        return [p for p in self.pods_on(node_name) if p.priority < priority]

    def any_below(self, priority: int) -> bool:
        """Some placed pod has a lower priority (so preemption may find victims)."""
        return any(p < priority for p, n in self._priorities.items() if n > 0)

    def lowest_priority(self):
        """The lowest priority of a placed pod (None: none placed)."""
        return min((p for p, n in self._priorities.items() if n > 0), default=None)

    def usage(self, pod: Pod):
        """What a pod adds to its node's row: resource columns, amounts, packed host ports."""
        t = self.table
        counted = [(t.resource_col(n, pod), v) for n, v in pod.requests.items() if res.counts(n)]
        cols = np.asarray([c for c, _ in counted], np.int64)
        vals = np.asarray([v for _, v in counted], np.int64)
        return cols, vals, [pack_port(t.ip_ids.intern(p.ip), p.protocol, p.port) for p in pod.host_ports]

    def place(self, pod: Pod, node_name: str, kernel=None, usage=None, written=False):
        """Counts a pod on its node (no checks: add_pod and assume make them). kernel: the
        NodeKernel that compiled the pod, bound to this table (it writes the row in C);
        usage: its placement's (columns, amounts, ports) from before, when it comes back;
        written: the kernel has written the row already (NodeKernel.run_copies)."""
        t = self.table
        row = t.row_of.get(node_name)
        if self._journal is not None:
            self._journal.placement(self, pod, node_name, row, 1)
        if row is None:
            self._orphans.setdefault(node_name, []).append(pod)
            return
        if written:
            cols, vals, ports = pod.compiled[1].usage
        elif kernel is not None:
            cp = pod.compiled[1]
            cols, vals, ports = cp.usage
            if kernel.place(cp, row):       # the fast path of a cycle's assume
                t.stale_images.add(row)
        else:
            cols, vals, ports = self.usage(pod) if usage is None else usage
            table_add_usage(t.requested, t.nonzero, t.pod_count, row, cols, vals, pod.non_zero, 1)
            t.touch(row)
        if ports:
            t.add_ports(row, ports, 1)
        if self.counters.counts(pod):
            self.counters.place(pod, row, 1)
        if pod.volumes:
            self.volumes.place(pod, row, 1)
        self._placed[pod.key] = pl = Placement(pod, node_name, cols, vals, ports)
        if pod.key not in self._start:
            self._start[pod.key] = pod.start_time if pod.start_time is not None else self._unstarted_time()
        self._priorities[pod.priority] += 1
        if self._by_priority is not None:
            self._priority_changed(pl, row)
        self._on_node.setdefault(node_name, {})[pod.key] = None

    def place_written(self, pods: list, node_names: list, copies=False, counted=False) -> None:
        """place(pod, node, written=True) for each pair: compiled pods whose rows the kernel
        wrote (NodeKernel.run_copies, run_batch), recorded in one pass; `copies`: all of one
        compiled pod; `counted`: and the kernel wrote their counters too (cross_copies)."""
        if not pods:
            return
        if counted:     # (a kernel run of copies: never in a fork, whose journal goes pod by pod)
            self.counters.counted(pods[0], [self.table.row_of[n] for n in node_names])
        elif self._journal is not None or self.counters.count_any(pods):
            for pod, node in zip(pods, node_names):
                self.place(pod, node, written=True)
            return
        keys = [p.key for p in pods]
        placed = self._placed
        if any(k in placed for k in keys):
            raise StateError(f"pod {next(k for k in keys if k in placed)}", "", "already assumed or bound")
        self.volumes.place_run(pods, node_names)       # (copies whose volumes pass every node)
        start, on_node, priorities = self._start, self._on_node, self._priorities
        if copies:          # one compiled pod: one usage
            cols, vals, ports = pods[0].compiled[1].usage
            placed.update(zip(keys, (Placement(p, n, cols, vals, ports) for p, n in zip(pods, node_names))))
        else:
            placed.update(zip(keys, map(Placement, pods, node_names, *zip(*(p.compiled[1].usage for p in pods)))))
        if start.keys().isdisjoint(keys) and all(p.start_time is None for p in pods):
            base, self._next_unstarted = self._next_unstarted, self._next_unstarted + len(pods)
            start.update(zip(keys, range(base, base + len(pods))))
        else:
            for pod, key in zip(pods, keys):      # (copies of a template may differ in both)
                if key not in start:
                    start[key] = pod.start_time if pod.start_time is not None else self._unstarted_time()
        priorities.update(p.priority for p in pods)
        for key, node in zip(keys, node_names):
            on_node.setdefault(node, {})[key] = None
        if self._by_priority is not None:
            row_of = self.table.row_of
            for key, node in zip(keys, node_names):
                self._priority_changed(placed[key], row_of[node])

    def remove_taken_off(self, keys: list) -> None:
        """remove_pod of placed pods whose usage the kernel took off their rows already
        (NodeKernel.run_batch's removals), in one call."""
        if (missing := next((k for k in keys if k not in self._placed), None)) is not None:
            raise StateError(f"pod {missing}", "", "not placed")
        for key in keys:
            self.remove_pod(key, True)

    def _unstarted_time(self) -> int:
        self._next_unstarted += 1
        return self._next_unstarted - 1

    def _unplace(self, key: str, taken_off: bool = False) -> Placement:
        if self._journal is not None:
            pl = self._placed[key]
            self._journal.placement(self, pl.pod, pl.node, self.table.row_of[pl.node], -1)
        pl = self._placed.pop(key)
        t = self.table
        del self._on_node[pl.node][key]
        self._priorities[pl.pod.priority] -= 1
        row = t.row_of[pl.node]
        if self._by_priority is not None:
            self._priority_changed(pl, row, removed=True)
        if taken_off:       # (remove_taken_off: the kernel took its usage off the row)
            if t.n_images[row]:
                t.stale_images.add(row)
        else:
            t.remove_usage(row, pl.cols, pl.vals, pl.pod.non_zero)
        if pl.ports:
            t.add_ports(row, pl.ports, -1)
        if self.counters.counts(pl.pod):
            self.counters.place(pl.pod, row, -1)
        if pl.pod.volumes:
            self.volumes.place(pl.pod, row, -1)
        return pl

    @contextmanager
    def without(self, pods, node_name: str):
        """The pods off their node for the block, then back (those the block has not put back
        itself), the node's pods in their placement order again (their start times are kept
        throughout). Yields {key: usage} for put_back."""
        on_node = self._on_node.setdefault(node_name, {})
        was = list(on_node)
        off = {}
        for p in pods:
            pl = self._unplace(p.key)
            off[p.key] = (pl.cols, pl.vals, pl.ports)
        try:
            yield off
        finally:
            for p in pods:
                if p.key not in self._placed:
                    self.place(p, node_name, usage=off[p.key])
            now = list(on_node)
            if now != was:
                order = [k for k in was if k in on_node]
                kept = set(order)
                order += [k for k in now if k not in kept]
                on_node.clear()
                on_node.update(dict.fromkeys(order))

    def put_back(self, pod: Pod, node_name: str, usage) -> None:
        """Inside `without`: one of its pods back on the node, with the usage it had."""
        self.place(pod, node_name, usage=usage)

    def take_off(self, key: str) -> None:
        """Inside `without`: a pod put back taken off again."""
        self._unplace(key)

    # ---- forks (fork.py) -------------------------------------------------------------------------
    @property
    def forked(self) -> bool:
        return self._journal is not None

    def begin_fork(self) -> CacheJournal:
        """From now on every change is journaled, to be reverted or committed."""
        self._journal = CacheJournal(self, self._journal)
        self.table.journal = self._journal.table
        return self._journal

    def end_fork(self, journal: CacheJournal, commit: bool) -> None:
        """Reverts the innermost fork's changes, or hands them to the enclosing fork."""
        if journal is not self._journal:
            raise StateError("fork", "", "only the innermost open fork can be reverted or committed")
        if commit:
            if journal.outer is not None:
                journal.merge_into(journal.outer)
        else:
            self.table.journal = None        # the restore itself is not journaled
            journal.revert(self)
        self._journal = journal.outer
        self.table.journal = None if journal.outer is None else journal.outer.table

    def _no_fork(self, what: str) -> None:
        if self._journal is not None:
            raise UnsupportedError("fork", "", f"cannot {what} while a fork is open (nodes and pods only)")

    # ---- pods by priority (preemption) ---------------------------------------------------------
    def by_priority(self, rows, priority) -> PodsByPriority:
        """The rows' placed pods by priority, current for a preemptor of `priority`. Kept from
        the first call on; built anew when the node table was reallocated."""
        t = self.table
        st = self._by_priority
        if st is None or st.shape != t.alloc.shape:
            st = self._by_priority = PodsByPriority(t.alloc.shape)
        stale, on_node, placed, nodes = rows[st.changed[rows] < priority].tolist(), self._on_node, self._placed, t.nodes
        st.build(stale, [[placed[k] for k in on_node.get(nodes[r].name, ())] if nodes[r] is not None else []
                         for r in stale], self.start_time)
        return st

    def _priority_changed(self, pl: Placement, row: int, removed: bool = False):
        """Pods of lower priority than a pod placed on or taken off a row see its pods change.
        A layout for an older node table goes at once (it is built anew when next needed), and
        a pod taken off leaves its slot: neither may keep deleted pods alive."""
        st = self._by_priority
        if st is None:
            return
        if st.shape != self.table.alloc.shape:
            self._by_priority = None
            return
        if pl.pod.priority < st.changed[row]:
            st.changed[row] = pl.pod.priority
        if removed:
            st.forget(row, pl.pod)

    # ---- other objects -----------------------------------------------------------------------
    def add_object(self, obj, index_hint: str = "") -> None:
        """Adds a cluster object other than a node, pod or namespace: Services and controllers
        (default spread constraints), storage and resource.k8s.io objects (a second object of a
        name replaces the first), PodDisruptionBudgets, PriorityClasses (for later pods)."""
        self._no_fork("add an object")
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if kind in STORAGE_KINDS:
            self.volumes.add_object(obj, index_hint)
        elif kind in RESOURCE_KINDS:
            self.dra.add(obj, index_hint)
        elif kind == "PodDisruptionBudget":
            pdb = parse_pdb(obj, index_hint)
            self.pdbs[f"{pdb.namespace}/{pdb.name}"] = pdb
        elif kind == "PriorityClass":
            pc = parse_priority_class(obj, index_hint)
            self.priority_classes[pc.name] = pc
        elif kind in SELECTOR_KINDS:
            self.objects.setdefault(kind, []).append(obj)
        else:
            raise ValidationError(f"object {index_hint}".strip(), "kind",
                                  f"expected a {', '.join(SELECTOR_KINDS)}, PodDisruptionBudget, PriorityClass, "
                                  + ", ".join((*STORAGE_KINDS, *RESOURCE_KINDS)))

    def remove_object(self, kind: str, namespace: str, name: str) -> bool:
        """Removes a Service or controller added by add_object; False if there is none."""
        self._no_fork("remove an object")
        objs = self.objects.get(kind, [])
        for i, obj in enumerate(objs):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "default") == (namespace or "default"):
                del objs[i]
                return True
        return False

    def add_namespace(self, namespace) -> None:
        """A Namespace object: its labels are what namespaceSelectors of pod affinity see."""
        self._no_fork("add a namespace")
        name, labels = parse_namespace(namespace)
        self.namespaces[name], self.namespace_version = dict(labels), self.namespace_version + 1

    def utilization(self) -> dict:
        """Requested / allocatable over all nodes, per native resource with any allocatable."""
        return _utilization(self)


def _utilization(cache: Cache) -> dict:
    t = cache.table
    key = (t.node_version, t.alloc.shape)
    if cache._totals_key != key:          # the nodes' side changes only with the nodes
        rows = t.rows_in_use()
        cache._totals = rows, t.alloc[rows].sum(axis=0), max(1, int(t.allowed_pods[rows].sum()))
        cache._totals_key = key
    rows, alloc, allowed = cache._totals
    used = np.einsum("ij->j", t.requested[rows])     # (4x sum(axis=0) on a narrow table)
    out = {}
    for name in ("cpu", "memory", "ephemeral-storage", *t.resources.items[3:]):
        col = t.resources.get(name)
        if col < len(alloc) and alloc[col]:
            out[name] = round(int(used[col]) / int(alloc[col]), 4)
    out["pods"] = round(int(t.pod_count[rows].sum()) / allowed, 4)
    return out
