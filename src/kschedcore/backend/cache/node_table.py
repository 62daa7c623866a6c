"""The node table: one row per node, one NumPy column per fact (struct of arrays).

Rows are reused after a node is deleted. Every change bumps the row's generation; the
kernels read the columns directly, so a change touches only the affected row. Growing a
dimension (more rows, resources, label keys, taints per node, ...) reallocates the arrays and
bumps :attr:`NodeTable.layout`, telling bound kernels to rebind.
"""
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from ..._native.table import TableRows, refresh_image_counts
from ..._native.table import add_usage as table_add_usage  # (the module's add_usage is NumPy's)
from ...errors import DuplicateError, UnsupportedError
from ...objects import resources as res
from ...objects.fields import parse_go_int64
from .interning import Interner

if TYPE_CHECKING:
    from .fork import TableJournal

EFFECTS = {"NoSchedule": 0, "PreferNoSchedule": 1, "NoExecute": 2}
PROTOCOL_IDS = {"TCP": 0, "UDP": 1, "SCTP": 2}
NAME_KEY = "metadata.name"   # pseudo label column 0: the node's name, for matchFields
#: rows changed that the equivalence cache can replay from the log (a slot further behind
#: forgets which rows it may skip, nothing else)
CHANGE_LOG_LENGTH = 1 << 16
IMAGE_MEMO_ENTRIES = 4096
MAX_RESOURCES = 63           # bit 63 of a NodeResourcesFit status is "Too many pods"


def add_usage(requested, nonzero, pod_count, row, cols, vals, non_zero, sign):
    """A pod's requests added (sign 1) to or taken (-1) from a row of (requested, non-zero
    requested, pod count) arrays: the table's own, or sums shaped like them."""
    requested[row, cols] += sign * vals      # a pod's resource columns are distinct
    nonzero[row, 0] += sign * non_zero[0]
    nonzero[row, 1] += sign * non_zero[1]
    pod_count[row] += sign


def pack_port(ip_id: int, protocol: str, port: int) -> int:
    return (ip_id << 18) | (PROTOCOL_IDS[protocol] << 16) | port


def zone_key(labels: dict) -> str:
    """node_tree.go GetZoneKey: the beta failure-domain labels win over topology.kubernetes.io."""
    zone = labels.get("failure-domain.beta.kubernetes.io/zone", labels.get("topology.kubernetes.io/zone", ""))
    region = labels.get("failure-domain.beta.kubernetes.io/region", labels.get("topology.kubernetes.io/region", ""))
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """kube-scheduler's node tree: zones in first-seen order, nodes in insertion order."""

    def __init__(self):
        self.zones = {}      # zone key -> [row, ...]; dict order = zone order

    def add(self, zone: str, row: int):
        self.zones.setdefault(zone, []).append(row)

    def remove(self, zone: str, row: int):
        rows = self.zones[zone]
        rows.remove(row)
        if not rows:
            del self.zones[zone]

    def order(self) -> np.ndarray:
        """The node list: the first node of each zone, then the second of each, ..."""
        lists = list(self.zones.values())
        if len(lists) == 1:
            return np.asarray(lists[0], dtype=np.int32)
        out = []
        depth = max((len(rows) for rows in lists), default=0)
        for i in range(depth):
            for rows in lists:
                if i < len(rows):
                    out.append(rows[i])
        return np.asarray(out, dtype=np.int32)


class NodeTable:
    """Struct-of-arrays node state plus the interners that give the kernels integer ids."""

    def __init__(self, capacity: int = 64):
        self.resources = Interner(res.NATIVE)
        self.label_keys = Interner([NAME_KEY])
        self.label_values = Interner()
        self.taint_ids = Interner()             # (key, value, effect)
        self.ip_ids = Interner(["0.0.0.0"])
        self.image_ids = Interner()
        self.layout = 0
        self.taint_version = 0
        self.row_of: dict[str, int] = {}         # node name -> row
        self.nodes: list = []                    # row -> Node or None
        self.free_rows: list[int] = []
        self.port_counts: list[Counter] = []     # row -> Counter of packed host ports in use
        self.zone_of: list = []                  # row -> zone key
        self.tree = NodeTree()
        self._scan_order = np.zeros(0, np.int32)
        self._scan_order_stale = False
        self._scan_pos: np.ndarray | None = None  # row -> its position in scan_order (in_scan_order)
        self.stale_images: set[int] = set()      # rows whose image NumNodes copy must refresh
        self._rows: TableRows | None = None      # row writes in C, bound to one layout (rows())
        self.images_memo: dict = {}              # status.images tuple -> (image ids, sizes)
        self._next_order = 0
        self.node_version = 0                    # bumped by every node add, update and remove
        # every generation bump, in order (a ring): what the equivalence cache replays
        self.change_log = np.zeros(CHANGE_LOG_LENGTH, np.int32)
        self.change_seq = np.zeros(1, np.int64)
        #: bumped by every change to rows that does not bump their generations (nominated pods
        #: counted for a cycle, a fork's revert): caches of rows by generation key on it too
        self.epoch = 0
        self.journal: TableJournal | None = None  # the open fork's TableJournal (backend/cache/fork.py)
        self._alloc_columns(capacity)

    @property
    def scan_order(self) -> np.ndarray:
        """The snapshot's node list (rows): the node tree's order as of the last node add or
        remove; a zone relabel alone does not reorder it (semantics §7.2)."""
        if self._scan_order_stale:
            self._scan_order = self.tree.order()
            self._scan_order_stale = False
            self._scan_pos = None
        return self._scan_order

    def in_scan_order(self, rows) -> np.ndarray:
        """These rows (each in the snapshot) ordered as the snapshot lists them: a
        PreFilterResult's few names cost their own count, not a pass over every node."""
        order = self.scan_order
        if self._scan_pos is None:        # made again with the order (every node add or remove)
            self._scan_pos = np.full(len(self.nodes), -1, np.int32)
            self._scan_pos[order] = np.arange(len(order), dtype=np.int32)
        pos = self._scan_pos[np.asarray(rows, np.int64)]
        pos.sort()
        return order[pos]

    # ---- forks (backend/cache/fork.py) -------------------------------------------------------
    def _save_whole(self) -> None:
        if self.journal is not None:
            self.journal.save_whole(self)

    # ---- storage -------------------------------------------------------------------------
    def _alloc_columns(self, cap, n_res=4, n_keys=16, n_taints=4, n_ports=4, n_images=4, n_ids=64):
        self.alloc = np.zeros((cap, n_res), np.int64)
        self.inv_alloc = np.zeros((cap, n_res), np.float64)   # kernels divide by multiplying
        self.requested = np.zeros((cap, n_res), np.int64)
        self.nonzero = np.zeros((cap, 2), np.int64)
        self.pod_count = np.zeros(cap, np.int64)
        self.allowed_pods = np.zeros(cap, np.int64)
        self.order_key = np.zeros(cap, np.int64)
        self.generation = np.zeros(cap, np.int64)
        self.unschedulable = np.zeros(cap, np.uint8)
        self.labels = np.full((cap, n_keys), -1, np.int32)
        self.taints = np.zeros((cap, n_taints), np.int32)
        self.n_taints = np.zeros(cap, np.int32)
        self.ports = np.zeros((cap, n_ports), np.int64)
        self.n_ports = np.zeros(cap, np.int32)
        self.images = np.zeros((cap, n_images), np.int32)
        self.image_nn = np.zeros((cap, n_images), np.int32)
        self.n_images = np.zeros(cap, np.int32)
        self.taint_effect = np.zeros(n_ids, np.int8)
        self.image_size = np.zeros(n_ids, np.int64)
        self.image_count = np.zeros(n_ids, np.int64)   # image id -> number of nodes having it
        self.value_int = np.zeros(n_ids, np.int64)
        self.value_is_int = np.zeros(n_ids, np.uint8)
        # matching pods per (counter, label value id): InterPodAffinity's domain counts
        self.domains = np.zeros((1, n_ids), np.int64)

    def _grow(self, rows=None, cols=None):
        """Reallocates: rows to at least `rows`; cols maps a column name to a minimum width."""
        self._save_whole()
        self.layout += 1
        cols = cols or {}
        for name in ("alloc", "inv_alloc", "requested", "nonzero", "pod_count", "allowed_pods", "order_key",
                     "generation", "unschedulable", "labels", "taints", "n_taints", "ports",
                     "n_ports", "images", "image_nn", "n_images"):
            old = getattr(self, name)
            shape = list(old.shape)
            if rows is not None and shape[0] < rows:
                shape[0] = max(rows, 2 * shape[0])
            if name in cols and shape[1] < cols[name]:
                shape[1] = max(cols[name], 2 * shape[1])
            if tuple(shape) != old.shape:
                fill = -1 if name == "labels" else 0
                new = np.full(shape, fill, old.dtype)
                new[tuple(slice(0, s) for s in old.shape)] = old
                setattr(self, name, new)

    def _grow_ids(self, name, need):
        old = getattr(self, name)
        if len(old) < need:
            new = np.zeros(max(need, 2 * len(old)), old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)
            self.layout += 1

    # ---- interning -------------------------------------------------------------------------
    def resource_col(self, name: str, owner=None) -> int:
        """The column of a resource name (a new one is added). `owner`, the Node or Pod that
        asks, is named in the refusal past MAX_RESOURCES names."""
        col = self.resources.get(name)
        if col < 0:
            if len(self.resources) >= MAX_RESOURCES:
                obj, field = ((f"pod {owner.key}", f"resources.requests[{name}]") if hasattr(owner, "key") else
                              (f"node {owner.name}", f"status.allocatable[{name}]") if owner is not None else
                              ("", f"[{name}]"))
                raise UnsupportedError(obj, field, f"a resource name beyond the first {MAX_RESOURCES} "
                                       f"distinct ones of the cluster (\"{name}\"): not supported by kschedcore")
            col = self.resources.intern(name)
        if col >= self.alloc.shape[1]:
            self._grow(cols={"alloc": col + 1, "inv_alloc": col + 1, "requested": col + 1})
        return col

    def label_key_col(self, key: str) -> int:
        col = self.label_keys.intern(key)
        if col >= self.labels.shape[1]:
            self._grow(cols={"labels": col + 1})
        return col

    def label_value_id(self, value: str) -> int:
        vid = self.label_values.get(value)
        if vid < 0:
            vid = self.label_values.intern(value)
            self._grow_ids("value_int", vid + 1)
            self._grow_ids("value_is_int", vid + 1)
            parsed = parse_go_int64(value)
            if parsed is not None:
                self.value_int[vid] = parsed
                self.value_is_int[vid] = 1
        return vid

    def taint_id(self, key: str, value: str, effect: str) -> int:
        tid = self.taint_ids.get((key, value, effect))
        if tid < 0:
            tid = self.taint_ids.intern((key, value, effect))
            self._grow_ids("taint_effect", tid + 1)
            self.taint_effect[tid] = EFFECTS[effect]
            self.taint_version += 1
        return tid

    def image_id(self, name: str) -> int:
        iid = self.image_ids.get(name)
        if iid < 0:
            iid = self.image_ids.intern(name)
            self._grow_ids("image_size", iid + 1)
            self._grow_ids("image_count", iid + 1)
        return iid

    # ---- nodes -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.row_of)

    def add_node(self, node) -> int:
        self._save_whole()
        if node.name in self.row_of:
            raise DuplicateError(f"node {node.name}", "metadata.name", "duplicate node name")
        if self.free_rows:
            row = self.free_rows.pop()
        else:
            row = len(self.nodes)
            self.nodes.append(None)
            self.port_counts.append(Counter())
            self.zone_of.append("")
            if row >= self.alloc.shape[0]:
                self._grow(rows=row + 1)
        self.row_of[node.name] = row
        self.order_key[row] = self._next_order
        self._next_order += 1
        self.requested[row] = 0
        self.nonzero[row] = 0
        self.pod_count[row] = 0
        self.port_counts[row].clear()
        self.n_ports[row] = 0
        self._set_node_facts(row, node)
        self.tree.add(self.zone_of[row], row)
        self._scan_order_stale = True
        return row

    def update_node(self, node) -> int:
        """Replaces a node's own facts (labels, taints, allocatable, images); its pods stay."""
        row = self.row_of[node.name]
        if self.journal is not None:
            if zone_key(node.labels) != self.zone_of[row]:
                self._save_whole()           # the node tree changes
            self.journal.save_row(self, row)
            if self.n_images[row] or node.images:
                self.journal.save_image_count(self)
        self._clear_images(row)
        old_zone = self.zone_of[row]
        self._set_node_facts(row, node)
        if self.zone_of[row] != old_zone:
            # the tree moves the node now; the snapshot order only at the next add/remove (§7.2)
            self.tree.remove(old_zone, row)
            self.tree.add(self.zone_of[row], row)
        return row

    def remove_node(self, name: str) -> int:
        self._save_whole()
        row = self.row_of.pop(name)
        self.node_version += 1
        self._clear_images(row)
        self.tree.remove(self.zone_of[row], row)
        self._scan_order_stale = True
        self.nodes[row] = None
        self.free_rows.append(row)
        self.alloc[row] = 0
        self.inv_alloc[row] = 0.0
        self.allowed_pods[row] = 0
        self.n_taints[row] = 0
        self.labels[row] = -1
        self.changed(row)
        return row

    def _set_node_facts(self, row: int, node):
        self.node_version += 1
        self.nodes[row] = node
        self.changed(row)
        self.zone_of[row] = zone_key(node.labels)
        cols = [(self.resource_col(name, node), amount) for name, amount in node.allocatable.items()
                if res.counts(name)]
        label_cols = [(self.label_key_col(k), self.label_value_id(v)) for k, v in node.labels.items()]
        name_vid = self.label_value_id(node.name)
        taints = [self.taint_id(t.key, t.value, t.effect) for t in node.taints]
        if len(taints) > self.taints.shape[1]:
            self._grow(cols={"taints": len(taints)})
        self.alloc[row] = 0
        self.inv_alloc[row] = 0.0
        for col, amount in cols:
            self.alloc[row, col] = amount
            if amount > 0:
                self.inv_alloc[row, col] = 1.0 / amount
        self.allowed_pods[row] = node.allowed_pods
        self.unschedulable[row] = node.unschedulable
        self.labels[row] = -1
        self.labels[row, 0] = name_vid
        for col, vid in label_cols:
            self.labels[row, col] = vid
        self.n_taints[row] = len(taints)
        self.taints[row, :len(taints)] = taints
        self._set_images(row, node)

    # ---- images (ImageLocality, §7.3) ---------------------------------------------------------
    def _set_images(self, row: int, node):
        ids, sizes = self._image_ids(node.images)
        new = self.image_count[ids] == 0
        self.image_size[ids[new]] = sizes[new]      # the first node to report a name sets its size
        self.image_count[ids] += 1                  # (ids are distinct)
        if len(ids) > self.images.shape[1]:
            self._grow(cols={"images": len(ids), "image_nn": len(ids)})
        self.n_images[row] = len(ids)
        self.images[row, :len(ids)] = ids
        self.stale_images.add(row)

    def _image_ids(self, images) -> tuple:
        """The distinct image ids of a node's status.images in first-seen order, and the size
        each was first listed with; remembered per images tuple (nodes of one shape share it).
        A fork's revert, which may cut the interned names, forgets them (images_memo)."""
        memo = self.images_memo.get(images)
        if memo is None:
            ids: dict = {}
            sizes: list = []
            for names, size in images:
                for name in names:
                    iid = self.image_id(name)
                    if iid not in ids:
                        ids[iid] = None
                        sizes.append(size)
            memo = (np.fromiter(ids, np.int64, len(ids)), np.asarray(sizes, np.int64))
            if len(self.images_memo) >= IMAGE_MEMO_ENTRIES:
                self.images_memo.clear()
            self.images_memo[images] = memo
        return memo

    def _clear_images(self, row: int):
        n = self.n_images[row]
        self.image_count[self.images[row, :n]] -= 1
        self.n_images[row] = 0

    def refresh_snapshot(self):
        """UpdateSnapshot's image part: rows changed since the last cycle copy NumNodes now.

        Rows not changed keep a stale NumNodes, as kube-scheduler's snapshot does (§7.3).
        """
        journal = self.journal
        if journal is not None:       # a fork's: each row saved before it changes
            for row in self.stale_images:
                if self.n_images[row]:
                    journal.save_row(self, row)
            refresh_image_counts(self.stale_images, self.n_images, self.images, self.image_count, self.image_nn)
        else:
            self.rows().refresh_images(self.stale_images)
        self.stale_images.clear()

    def rows(self) -> TableRows:
        """Row writes in C on views of the current columns (bound again after a reallocation:
        every one bumps the layout, a fork's revert moves it forward)."""
        rows = self._rows
        if rows is None or rows.layout != self.layout:
            rows = self._rows = TableRows(self)
        return rows

    def rows_in_use(self) -> "np.ndarray | slice":
        """The nodes' rows, to index the columns with: a slice when they are 0..n-1 (the
        columns' views, not copies), else the rows sorted."""
        rows = np.sort(np.fromiter(self.row_of.values(), np.int64, len(self.row_of)))
        return slice(0, len(rows)) if len(rows) == 0 or rows[-1] == len(rows) - 1 else rows

    # ---- pods on nodes ----------------------------------------------------------------------
    def remove_usage(self, row: int, cols, vals, non_zero) -> None:
        """A pod's requests taken off the row and the row touched: in C on the bound views, or,
        with a fork's journal, in NumPy through touch()."""
        if self.journal is not None:
            table_add_usage(self.requested, self.nonzero, self.pod_count, row, cols, vals, non_zero, -1)
            self.touch(row)
        elif self.rows().add_usage(row, cols, vals, non_zero, -1):     # (touched in C)
            self.stale_images.add(row)

    def changed(self, row: int):
        """The row's generation bumped and the change logged (touch_row in _native/table.pxd)."""
        self.generation[row] += 1
        seq = int(self.change_seq[0])
        self.change_log[seq & (CHANGE_LOG_LENGTH - 1)] = row
        self.change_seq[0] = seq + 1

    def touch(self, row: int):
        """A pod was added to or removed from the row."""
        if self.journal is not None:
            self.journal.save_row(self, row)
        self.changed(row)
        if self.n_images[row]:
            self.stale_images.add(row)

    def add_ports(self, row: int, packed, sign: int):
        if self.journal is not None:
            self.journal.save_row(self, row)
        counts = self.port_counts[row]
        for p in packed:
            counts[p] += sign
            if counts[p] <= 0:
                del counts[p]
        used = list(counts)
        if len(used) > self.ports.shape[1]:
            self._grow(cols={"ports": len(used)})
        self.n_ports[row] = len(used)
        self.ports[row, :len(used)] = used
