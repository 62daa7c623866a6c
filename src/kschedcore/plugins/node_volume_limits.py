"""NodeVolumeLimits (plugins/nodevolumelimits/csi.go): unique CSI volumes per driver on a node
against its CSINode's allocatable count (semantics §3.7)."""
import numpy as np

from .._kernels import F_NODE_VOLUME_LIMITS, VOLUME_UU
from .base import VolumePlugin

REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
EXCEEDED, LOOKUP_FAILED, FILTER_ERROR = 1, 2, 3


class NodeVolumeLimits(VolumePlugin):
    name = "NodeVolumeLimits"
    filter_id = F_NODE_VOLUME_LIMITS

    def __init__(self, args=None):
        super().__init__(args)
        self.lookup_error = ""
        self.filter_error = ""     # the last cycle's Filter returned an Error status
        self._limits = {}          # driver -> (cache key, int64 limit per row, -1: none)

    def reasons(self, detail, table):
        return [REASON_MAX_VOLUME_COUNT] if detail == EXCEEDED else [self.lookup_error]

    def prefilter(self, pod, volumes, table):
        self.filter_error = ""
        self.skipped = not any(v.claim or v.migratable for v in pod.volumes)
        if self.skipped:
            return None
        new = {}                   # the pod's attachable claims: key -> driver
        for v in pod.volumes:
            if not v.claim:        # in-tree inline volumes count only under CSI migration
                continue
            key = f"{pod.namespace}/{v.claim}"
            claim = volumes.objects.claims.get(key)
            if claim is None:
                self.lookup_error = (f"looking up PVC {key}: persistentvolumeclaim \"{v.claim}\" not found")
                return np.full(table.labels.shape[0], LOOKUP_FAILED | VOLUME_UU, np.int8)
            if v.ephemeral and claim.controller_uid != owner_uid(pod):
                # an Error status from Filter: it ends the cycle if any node gets this far
                self.filter_error = (f'running "{self.name}" filter plugin: '
                                     f"PVC {key} was not created for pod {pod.key} (pod is not owner)")
                return np.full(table.labels.shape[0], FILTER_ERROR | VOLUME_UU, np.int8)
            driver = volumes.driver_of(key)
            if driver is not None:
                new[key] = driver
        if not new:
            return None
        exceeded = np.zeros(table.labels.shape[0], bool)
        for driver in set(new.values()):
            limit = self._limit(driver, volumes, table)
            if not (limit >= 0).any():
                continue
            added = np.zeros(limit.shape[0], np.int64)
            for key, d in new.items():
                if d == driver:    # a claim already on the node adds no volume there
                    added += 1
                    added[np.fromiter(volumes.claim_rows.get(key, ()), np.int64)] -= 1
            attached = volumes.counts(driver)[:limit.shape[0]]
            exceeded |= (limit >= 0) & (added > 0) & (attached + added > limit)
        return exceeded.astype(np.int8) * EXCEEDED

    def _limit(self, driver, volumes, table) -> np.ndarray:
        """CSINode allocatable count of `driver` per node row (-1: no limit), cached."""
        cache_key = (table.node_version, volumes.csi_version, table.labels.shape[0])
        cached = self._limits.get(driver)
        if cached is not None and cached[0] == cache_key:
            return cached[1]
        limit = np.full(table.labels.shape[0], -1, np.int64)
        for name, csi_node in volumes.objects.csi_nodes.items():
            row = table.row_of.get(name)
            if row is not None and driver in csi_node.limits:
                limit[row] = csi_node.limits[driver]
        self._limits[driver] = (cache_key, limit)
        return limit


def owner_uid(pod) -> str:
    """The pod's metadata.uid as written (IsControlledBy compares it with the claim's owner)."""
    return (pod.raw.get("metadata") or {}).get("uid") or ""
