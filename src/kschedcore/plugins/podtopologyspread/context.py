"""What PodTopologySpread reads of the cluster for one cycle: the node table, the cache's
counters, Services and controllers (the default constraints' selector), with per-cycle and
per-node-version caches."""
import numpy as np

from ...objects.fields import FieldReader
from ...objects.pod_affinity import LabelSelector, parse_label_selector
from ...util.gomath import go_log
from ..helper.node_masks import required_mask, tolerated_mask

_LOG = np.zeros(0, np.float64)


def log_table(n: int) -> np.ndarray:
    """go_log(i + 2) for i < at least n, one table for every scheduler (it only grows)."""
    global _LOG
    if len(_LOG) < n:
        more = [go_log(i + 2) for i in range(len(_LOG), max(n, 2 * len(_LOG)))]
        _LOG = np.concatenate([_LOG, np.asarray(more, np.float64)])
    return _LOG


def node_restricted(pod) -> bool:
    """The pod's nodeSelector or required node affinity may leave nodes out
    (nodeAffinityPolicy Honor counts only the nodes they admit)."""
    return bool(pod.node_selector) or pod.required_terms is not None


class SpreadContext:
    """What PodTopologySpread reads of the cluster: node table, counters, Services and
    controllers (for the system default constraints' selector)."""

    def __init__(self, table, counters, objects):
        self.table, self.counters, self.objects = table, counters, objects
        self._alive_key, self._alive = None, None
        self._masks = {}
        self._domains = {}
        self._all_have = {}

    def begin(self, pod):
        self._masks = {}
        t = self.table
        key = (t.layout, t.node_version)
        if key != self._alive_key:
            alive = np.zeros(t.labels.shape[0], bool)
            alive[list(t.row_of.values())] = True
            self._alive_key, self._alive = key, alive

    @property
    def alive(self):
        return self._alive

    def row_counts(self, namespace, selector):
        """Matching pods per node row (the counters grow with the table's rows)."""
        return self.counters.row_counts(namespace, selector)

    def all_have(self, cols) -> bool:
        """Every node has every one of these label columns (cached until the nodes change)."""
        key = (self.table.node_version, tuple(cols))
        if key not in self._all_have:
            if len(self._all_have) > 64:
                self._all_have.clear()
            self._all_have[key] = bool((self.table.labels[self._alive][:, list(cols)] >= 0).all())
        return self._all_have[key]

    def log_table(self) -> np.ndarray:
        """go_log(size + 2) for every size up to the node table's capacity."""
        return log_table(self.table.labels.shape[0] + 1)

    def policy_restricts(self, pod, c) -> bool:
        """Whether an inclusion policy can leave out nodes that have the topology key."""
        return (c.honor_affinity and node_restricted(pod)) or c.honor_taints

    def domain_values(self, col):
        """Label value ids of `col` on the live nodes (the topology domains), cached until the
        nodes change."""
        key = (self.table.node_version, col)
        cached = self._domains.get(key)
        if cached is None:
            vals = self.table.labels[self._alive, col]
            cached = np.unique(vals[vals >= 0])
            if len(self._domains) > 64:
                self._domains.clear()
            self._domains[key] = cached
        return cached

    def policy_mask(self, pod, c):
        mask = np.ones(self.table.labels.shape[0], bool)
        if c.honor_affinity:
            if "affinity" not in self._masks:
                self._masks["affinity"] = required_mask(pod, self.table)
            mask &= self._masks["affinity"]
        if c.honor_taints:
            if "taints" not in self._masks:
                self._masks["taints"] = tolerated_mask(pod, self.table)
            mask &= self._masks["taints"]
        return mask

    def default_selector(self, pod):
        """helper.DefaultSelector: the pod's Services' selectors merged, plus its controlling
        ReplicationController's (merged) or ReplicaSet's / StatefulSet's (requirements added)."""
        label_set = {}
        for svc in self.objects.get("Service", ()):
            meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
            selector = spec.get("selector")
            if (meta.get("namespace") or "default") != pod.namespace or selector is None:
                continue
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                label_set.update(selector)
        reqs = tuple((k, "In", frozenset([v])) for k, v in sorted(label_set.items()))
        owner = pod.controller
        if owner is not None:
            kind = (owner.get("apiVersion"), owner.get("kind"))
            obj = self._find(kind, pod.namespace, owner.get("name"))
            if obj is not None and kind == ("v1", "ReplicationController"):
                label_set.update((obj.get("spec") or {}).get("selector") or {})
                reqs = tuple((k, "In", frozenset([v])) for k, v in sorted(label_set.items()))
            elif obj is not None:
                sel = parse_label_selector(FieldReader(f"{kind[1]} {owner.get('name')}"),
                                           (obj.get("spec") or {}).get("selector"), "spec.selector")
                if sel is not None:
                    reqs = reqs + sel.requirements
        return LabelSelector(reqs)

    def _find(self, kind, namespace, name):
        kinds = {("v1", "ReplicationController"): "ReplicationController",
                 ("apps/v1", "ReplicaSet"): "ReplicaSet", ("apps/v1", "StatefulSet"): "StatefulSet"}
        for obj in self.objects.get(kinds.get(kind, ""), ()):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
                return obj
        return None
