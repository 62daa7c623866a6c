"""NodeVolumeLimits (plugins/nodevolumelimits/csi.go): unique CSI volumes per driver on a node
against its CSINode's allocatable count (semantics §3.7).

A volume is its (driver, volume handle), so two claims bound to one PV, or to PVs with the
same handle, are one volume. In-tree GCE PD, AWS EBS, Azure Disk and Cinder volumes count under
their CSI driver (see objects.storage: isCSIMigrationOn holds on every node with a CSINode)."""
import numpy as np

from ..._native import F_NODE_VOLUME_LIMITS, VOLUME_UU
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ...objects.storage import owner_uid
from ..helper.volume import VolumePlugin


REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
EXCEEDED, LOOKUP_FAILED, FILTER_ERROR = 1, 2, 3


class NodeVolumeLimits(VolumePlugin):
    name = "NodeVolumeLimits"
    filter_id = F_NODE_VOLUME_LIMITS
    reads_placed_pods = True
    ERROR_DETAIL = FILTER_ERROR    # the rows where Filter returns `filter_error`

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.lookup_error = ""
        self.filter_error = ""     # the last cycle's Filter returned an Error status
        self._limits = {}          # driver (None: any) -> (cache key, int64 limit per row, -1: none)
        self._least_room: tuple = (None, 0)     # _room's (driver, placements, limits) and answer

    def events_to_register(self):
        return [with_hint(R.CSINode, A.Add), with_hint(R.CSINode, A.Update), with_hint(R.Pod, A.Delete),
                with_hint(R.PersistentVolumeClaim, A.Add), with_hint(R.VolumeAttachment, A.Delete)]

    def reasons(self, detail, table):
        return [REASON_MAX_VOLUME_COUNT] if detail == EXCEEDED else [self.lookup_error]

    def passes_everywhere(self, pod, cache, run=None) -> bool:
        """Every node has room for the pod's volumes under its limits, with the volumes of the
        run's earlier copies placed on any node: per driver, the least room over the nodes
        (limit - attached) covers them all. No placed pod's ephemeral claim can make Filter an
        Error."""
        volumes, table = cache.volumes, cache.table
        if volumes.ephemeral_users:
            return False
        mine: dict = {}             # driver -> (its limits, the pod's distinct volumes on it), if any
        for v in pod.volumes:
            if v.portworx or v.ephemeral:
                return False
            vid = v.csi_id
            if v.claim:
                key = f"{pod.namespace}/{v.claim}"
                if key not in volumes.objects.claims:
                    return False
                vid = volumes.volume_id(key)
            capped = None if vid is None else self._limit(vid[0], volumes, table)[1]
            if capped is not None:
                mine.setdefault(vid[0], (capped, set()))[1].add(vid)
        if not mine:
            return True
        taken = {} if run is None else run.setdefault(self.name, {})   # driver -> volumes the run placed
        for driver, (capped, vids) in mine.items():
            n = taken.get(driver, 0) + len(vids)
            if n > self._room(driver, capped, volumes, table):
                return False
            taken[driver] = n
        return True

    def _room(self, driver, capped, volumes, table) -> int:
        """The least of limit - attached volumes over the nodes, for `driver` (cached until a
        pod with volumes is placed or removed, or the limits change)."""
        key = (driver, volumes.placements, volumes.version, volumes.csi_version, table.node_version, len(capped))
        if self._least_room[0] != key:
            self._least_room = (key, int((capped - volumes.counts(driver)[:len(capped)]).min()))
        return self._least_room[1]

    def prefilter(self, pod, volumes, table):
        self.filter_error = ""
        self.skipped = not any(v.claim or v.migratable for v in pod.volumes)
        if self.skipped:
            return None
        n = table.labels.shape[0]
        if any(v.portworx for v in pod.volumes):
            volumes.check_portworx_pod(pod)
        new = set()                # the pod's attachable volumes: (driver, volume handle)
        for v in pod.volumes:
            vid = v.csi_id
            if v.claim:
                key = f"{pod.namespace}/{v.claim}"
                claim = volumes.objects.claims.get(key)
                if claim is None:
                    self.lookup_error = (f"looking up PVC {key}: persistentvolumeclaim \"{v.claim}\" not found")
                    return np.full(n, LOOKUP_FAILED | VOLUME_UU, np.int8)
                if v.ephemeral and claim.controller_uid != owner_uid(pod):
                    # an Error status from Filter: it ends the cycle if any node gets this far
                    self.filter_error = (f'running "{self.name}" filter plugin: '
                                         f"PVC {key} was not created for pod {pod.key} (pod is not owner)")
                    return np.full(n, FILTER_ERROR | VOLUME_UU, np.int8)
                vid = volumes.volume_id(key)
            if vid is not None:
                new.add(vid)
        if not new:
            return None
        status = None
        for driver in {d for d, _ in new}:
            limit, capped = self._limit(driver, volumes, table)
            if capped is None:
                continue
            mine = [vid for vid in new if vid[0] == driver]
            attached = volumes.counts(driver)[:n]
            rows = np.flatnonzero(attached + len(mine) > capped)    # the only rows that can exceed
            if not len(rows):
                continue
            added = np.full(len(rows), len(mine), np.int64)
            for vid in mine:           # a volume already on the node adds none there
                on = volumes.volume_rows.get(vid)
                if on:
                    added -= np.isin(rows, np.fromiter(on, np.int64))
            over = rows[(added > 0) & (attached[rows] + added > limit[rows])]
            if len(over):
                if status is None:
                    status = np.zeros(n, np.int8)
                status[over] = EXCEEDED
        if volumes.ephemeral_users:
            if status is None:
                status = np.zeros(n, np.int8)
            self._foreign_claims(volumes, table, status)
        return status if status is not None and status.any() else None

    def _foreign_claims(self, volumes, table, status):
        """Past the pod's own checks, Filter reads the claims of the node's pods: on a node
        with limits, an ephemeral claim its pod does not control is an Error."""
        rows, text = volumes.foreign_ephemeral()
        if not rows:
            return
        errors = np.zeros(status.shape[0], bool)
        errors[rows] = True
        errors &= self._limit(None, volumes, table)[0] >= 0
        if errors.any():
            status[errors] = FILTER_ERROR | VOLUME_UU
            self.filter_error = f'running "{self.name}" filter plugin: {text}'

    def _limit(self, driver, volumes, table) -> tuple:
        """CSINode allocatable count of `driver` per node row (-1: no limit; driver None: 0 on
        rows with any limit) and the same with no limit as int64's maximum (None: no row has
        one), cached."""
        cache_key = (table.node_version, volumes.csi_version, table.labels.shape[0])
        cached = self._limits.get(driver)
        if cached is not None and cached[0] == cache_key:
            return cached[1]
        limit = np.full(table.labels.shape[0], -1, np.int64)
        for name, csi_node in volumes.objects.csi_nodes.items():
            row = table.row_of.get(name)
            if row is None:
                continue
            if driver is None and csi_node.limits:
                limit[row] = 0
            elif driver in csi_node.limits:
                limit[row] = csi_node.limits[driver]
        capped = np.where(limit >= 0, limit, np.iinfo(np.int64).max - (1 << 20)) if (limit >= 0).any() else None
        self._limits[driver] = (cache_key, (limit, capped))
        return self._limits[driver][1]
