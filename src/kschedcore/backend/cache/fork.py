"""Forks of the cache: what-if changes made in place and undone on revert, at a cost that
follows what changed, not the cluster's size (cluster-autoscaler's ClusterSnapshot.Fork).

A fork keeps, from its start: each node-table row as it was before its first change
(`TableJournal.save_row`); the whole table before its first structural change -- a node added
or removed, a zone changed, a column grown -- which is the one O(nodes) step; the interners'
lengths (ids are only appended, so revert cuts them back, and pods compiled since go stale);
each pod
key's placement and start time, each node's pod list and orphans, before their first change;
and the pod placements made or undone, whose pod counters and volumes are counted back. Revert
writes all of it back; commit hands it to the enclosing fork (or drops it). Rows and keys first
saved by an inner fork were unchanged in the outer one until then, so a commit merges the two
by keeping the outer fork's saves where both have one.
"""
from collections import Counter

import numpy as np

from .interning import Interner

MISSING = object()
#: the node table's row-indexed columns
ROW_ARRAYS = ("alloc", "inv_alloc", "requested", "nonzero", "pod_count", "allowed_pods", "order_key", "generation",
              "unschedulable", "labels", "taints", "n_taints", "ports", "n_ports", "images", "image_nn", "n_images")
#: the table's interners: ids are only appended, so a fork keeps their lengths and cuts them back
INTERNERS = ("resources", "label_keys", "label_values", "taint_ids", "ip_ids", "image_ids")
#: the table's own counters of change, moved forward (never back) on revert: caches key on them
VERSIONS = ("layout", "taint_version", "node_version")
#: table attributes a fork does not restore: the pod counters' array (counted back instead),
#: the C row writer (bound again by the layout, which the revert moves forward)
NOT_SAVED = ("journal", "domains", "_rows")


def _copy(value):
    if isinstance(value, np.ndarray):
        return value, value.copy()
    if isinstance(value, Interner):
        c = Interner()
        c.ids, c.items = dict(value.ids), list(value.items)
        return c
    if isinstance(value, list):
        return [Counter(v) if isinstance(v, Counter) else v for v in value]
    if isinstance(value, (dict, set)):
        return type(value)(value)
    if hasattr(value, "zones"):          # NodeTree
        tree = type(value)()
        tree.zones = {z: list(rows) for z, rows in value.zones.items()}
        return tree
    return value


class TableJournal:
    """The node table's state at a fork's start, saved as it changes."""

    def __init__(self, table):
        self.rows = {}             # row -> (column values, node, zone, port counts)
        self.whole = None          # attribute -> saved value, before the first structural change
        self.stale = set(table.stale_images)
        self.image_count = None
        self.versions = {v: getattr(table, v) for v in VERSIONS}
        self.interned = {name: len(getattr(table, name)) for name in INTERNERS}

    def save_row(self, t, row: int) -> None:
        if self.whole is not None or row in self.rows or row >= len(t.nodes):
            return
        self.rows[row] = ([getattr(t, n)[row].copy() for n in ROW_ARRAYS], t.nodes[row], t.zone_of[row],
                          Counter(t.port_counts[row]))

    def save_image_count(self, t) -> None:
        if self.whole is None and self.image_count is None:
            self.image_count = t.image_count.copy()

    def save_whole(self, t) -> None:
        if self.whole is None:
            self.whole = {k: _copy(v) for k, v in vars(t).items() if k not in NOT_SAVED}

    def restore(self, t) -> None:
        peak = {v: getattr(t, v) for v in VERSIONS}     # the latest values the fork used
        # ids interned in the fork go (here, or with the interners saved whole before them)
        cut = any(len(getattr(t, name)) > n for name, n in self.interned.items())
        if self.whole is not None:
            for name, saved in self.whole.items():
                if isinstance(saved, tuple) and len(saved) == 2 and isinstance(saved[0], np.ndarray):
                    orig, values = saved
                    orig[...] = values
                    setattr(t, name, orig)
                else:
                    setattr(t, name, saved)    # the journal ends with the revert: no copy needed
        elif self.image_count is not None:
            t.image_count[:len(self.image_count)] = self.image_count
        for name, n in self.interned.items():
            interner = getattr(t, name)
            if len(interner) > n:
                for item in interner.items[n:]:
                    del interner.ids[item]
                del interner.items[n:]
        t.images_memo = {}           # its image ids may be cut ones
        if cut:
            t.taint_version += 1     # compiled pods are keyed by it: those with the cut ids recompile
        for row, (values, node, zone, ports) in self.rows.items():
            for name, v in zip(ROW_ARRAYS, values):
                getattr(t, name)[row] = v
            t.nodes[row], t.zone_of[row], t.port_counts[row] = node, zone, ports
        t.stale_images = set(self.stale)
        t.epoch += 1                     # generations went back with their rows
        for v in VERSIONS:
            if getattr(t, v) != self.versions[v] or peak[v] != self.versions[v]:
                setattr(t, v, max(peak[v], getattr(t, v)) + 1)     # forward, past every value used

    def merge_into(self, outer: "TableJournal") -> None:
        for row, saved in self.rows.items():
            outer.rows.setdefault(row, saved)
        if outer.whole is None and self.whole is not None:
            outer.whole = self.whole
        if outer.image_count is None and self.image_count is not None:
            outer.image_count = self.image_count


class CacheJournal:
    """The Cache's state at a fork's start, saved as it changes (module docstring)."""

    def __init__(self, cache, outer=None):
        self.outer = outer
        self.table = TableJournal(cache.table)
        self.keys = {}             # pod key -> (Placement or MISSING, start time or MISSING)
        self.on_node = {}          # node name -> {key: None} copy or MISSING
        self.orphans = {}          # node name -> [Pod] copy or MISSING
        #: (pod, row, sign) of every placement made or undone: the pod counters and volumes are
        #: counted back, each pod by whether the counters count it at revert (a counter made
        #: during the fork counted the pods placed before it)
        self.placements = []
        self.priorities = Counter(cache._priorities)
        self.next_unstarted = cache._next_unstarted
        self.relabelled = False    # a node was updated: the pod counters were rebuilt in the fork
        self.dra = cache.dra.snapshot()     # claims allocated, reserved, made or released in the fork

    def pod(self, cache, key: str) -> None:
        if key not in self.keys:
            self.keys[key] = (cache._placed.get(key, MISSING), cache._start.get(key, MISSING))

    def node(self, cache, name: str) -> None:
        if name not in self.on_node:
            d = cache._on_node.get(name)
            self.on_node[name] = MISSING if d is None else dict(d)

    def placement(self, cache, pod, node_name: str, row, sign: int) -> None:
        """A pod placed on (sign 1) or taken off (-1) a node (row None: one the cluster lacks)."""
        self.pod(cache, pod.key)
        if row is None:
            self.orphan(cache, node_name)
            return
        self.node(cache, node_name)
        self.table.save_row(cache.table, row)
        self.placements.append((pod, row, sign))

    def orphan(self, cache, name: str) -> None:
        if name not in self.orphans:
            pods = cache._orphans.get(name)
            self.orphans[name] = MISSING if pods is None else list(pods)

    def revert(self, cache) -> None:
        t = cache.table
        structural = self.table.whole is not None
        self.table.restore(t)
        for store, saved in ((cache._on_node, self.on_node), (cache._orphans, self.orphans)):
            for name, value in saved.items():
                if value is MISSING:
                    store.pop(name, None)
                else:
                    store[name] = value
        for key, (pl, start) in self.keys.items():
            for store, value in ((cache._placed, pl), (cache._start, start)):
                if value is MISSING:
                    store.pop(key, None)
                else:
                    store[key] = value
        cache._priorities = Counter(self.priorities)
        cache.dra.restore(self.dra)
        cache._next_unstarted = self.next_unstarted
        rebuild = structural or self.relabelled
        for pod, row, sign in reversed(self.placements):
            if not rebuild and cache.counters.counts(pod):
                cache.counters.place(pod, row, -sign)
            if pod.volumes:
                cache.volumes.place(pod, row, -sign)
        if rebuild:
            cache.counters.relabelled()     # label columns and values as they were: counted anew
        if structural:
            cache._by_priority = None
        elif cache._by_priority is not None and self.table.rows:
            rows = np.fromiter(self.table.rows, np.int64)
            cache._by_priority.changed[rows[rows < len(cache._by_priority.changed)]] = np.iinfo(np.int64).min
        cache._totals_key = None

    def merge_into(self, outer: "CacheJournal") -> None:
        self.table.merge_into(outer.table)
        for mine, theirs in ((self.keys, outer.keys), (self.on_node, outer.on_node), (self.orphans, outer.orphans)):
            for k, v in mine.items():
                theirs.setdefault(k, v)
        outer.placements += self.placements
        outer.relabelled = outer.relabelled or self.relabelled
