"""VolumeRestrictions (plugins/volumerestrictions): disks a node's pods already use, and
ReadWriteOncePod claims in use anywhere (semantics §3.7)."""
import numpy as np

from ..._native import F_VOLUME_RESTRICTIONS
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ..helper.volume import VolumePlugin

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
                        "mode already in-use by another pod")
DISK_CONFLICT, RWOP_CONFLICT = 1, 2


class VolumeRestrictions(VolumePlugin):
    name = "VolumeRestrictions"
    filter_id = F_VOLUME_RESTRICTIONS
    reads_placed_pods = True
    bit_reasons = {DISK_CONFLICT: REASON_DISK_CONFLICT, RWOP_CONFLICT: REASON_RWOP_CONFLICT}

    def events_to_register(self):
        return [with_hint(R.Pod, A.Delete), with_hint(R.Node, A.Add), with_hint(R.PersistentVolumeClaim, A.Add)]

    def passes_everywhere(self, pod, cache, run=None) -> bool:
        """No disk of the pod can conflict, and no claim of it is ReadWriteOncePod (a copy of
        the pod placed would put it in use)."""
        volumes = cache.volumes
        for v in pod.volumes:
            if v.restriction is not None:
                return False
            if v.claim and not v.ephemeral:
                claim = volumes.claim(pod.namespace, v.claim)
                if claim is None or "ReadWriteOncePod" in claim.access_modes:
                    return False
        return True

    def prefilter(self, pod, volumes, table):
        self.skipped = True
        rwop = set()
        for _, claim in self.pvc_claims(pod, volumes):
            if "ReadWriteOncePod" in claim.access_modes:
                rwop.add(claim.key)
        in_use = sum(1 for key in rwop if volumes.claim_users[key] > 0)
        disks = [v.restriction for v in pod.volumes if v.restriction is not None]
        if not disks and not in_use:
            return None
        self.skipped = False
        status = np.zeros(table.labels.shape[0], np.int8)
        if in_use:     # the claim is used by some pod, so no node can take this one
            status[:] = RWOP_CONFLICT
        for d in disks:   # a disk conflict is found first (Filter checks it before the claims)
            status[_conflicting_rows(d, volumes.disks)] = DISK_CONFLICT
        return status


def _conflicting_rows(d, disks) -> list:
    """Rows where a pod already uses disk `d` in a conflicting way (isVolumeConflict)."""
    if d[0] == "rbd":
        _, monitors, pool, image, ro = d
        return [row for (row, mons, ro_e) in disks.get(("rbd", pool, image), ())
                if monitors & mons and not (ro and ro_e)]
    users = disks.get(d[:2], ())
    if d[0] == "aws":
        return [row for row, _ in users]
    ro = d[2]
    return [row for row, ro_e in users if not (ro and ro_e)]
