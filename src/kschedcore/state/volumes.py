"""The cache's volume facts: the storage objects, and what pods on each node use of them.

kube-scheduler's volume Filters look at every pod on the node (VolumeRestrictions,
NodeVolumeLimits) or at the PVC/PV listers. Here the per-node facts are counters kept up to
date as pods are placed and removed, so a pod's PreFilter turns them into per-row statuses with
NumPy, never a walk over pods or nodes in Python.
"""
from collections import Counter

import numpy as np

from ..objects.storage import (BIND_COMPLETED_ANNOTATION, SELECTED_NODE_ANNOTATION, StorageObjects,
                               parse_storage_object)


class VolumeState:
    def __init__(self, table):
        self.table = table
        self.objects = StorageObjects()
        #: claim key -> number of placed pods with a persistentVolumeClaim volume naming it
        #: (NodeInfo.PVCRefCounts summed over nodes: the snapshot's IsPVCUsedByPods)
        self.claim_users = Counter()
        #: claim key (PVC or ephemeral) -> Counter(row): placed pods using it per node
        self.claim_rows = {}
        #: claim key -> CSI driver its rows are counted under (None: not attachable)
        self.credited = {}
        #: driver -> int32 per row: distinct attachable claims of placed pods (NodeVolumeLimits)
        self.attached = {}
        #: VolumeRestrictions identity -> Counter((row, readOnly)); rbd: (pool, image) ->
        #: Counter((row, monitors, readOnly))
        self.disks = {}
        #: PV names by class with no claimRef, and by the claim their claimRef names: the
        #: only PVs FindMatchingVolume can return for a claim
        self.unclaimed = {}
        self.claimed_by = {}
        self.version = 0            # bumped when any storage object changes
        self.csi_version = 0        # bumped when a CSINode changes

    # ---- objects ---------------------------------------------------------------------------
    def add_object(self, raw, index_hint=""):
        """Adds or replaces a storage object (PVC, PV, StorageClass, CSINode, CSIDriver,
        CSIStorageCapacity)."""
        obj = parse_storage_object(raw, index_hint)
        o = self.objects
        kind = raw["kind"]
        if kind == "PersistentVolumeClaim":
            o.claims[obj.key] = obj
            self._recredit([obj.key])
        elif kind == "PersistentVolume":
            old = o.volumes.get(obj.name)
            if old is not None:
                self._index_volume(old, -1)
            o.volumes[obj.name] = obj
            self._index_volume(obj, 1)
            self._recredit(list(self.claim_rows))
        elif kind == "StorageClass":
            o.classes[obj.name] = obj
            self._recredit(list(self.claim_rows))
        elif kind == "CSINode":
            o.csi_nodes[obj.name] = obj
            self.csi_version += 1
        elif kind == "CSIDriver":
            o.csi_drivers[obj.name] = obj
        else:
            o.capacities = [c for c in o.capacities if (c.namespace, c.name) != (obj.namespace, obj.name)]
            o.capacities.append(obj)
        self.version += 1
        return obj

    def _index_volume(self, pv, sign):
        if pv.claim_ref is None:
            names = self.unclaimed.setdefault(pv.storage_class, set())
        else:
            names = self.claimed_by.setdefault(pv.claim_ref[:2], set())
        (names.add if sign > 0 else names.discard)(pv.name)

    def candidate_volumes(self, claim) -> list:
        """The PVs of the claim's class that are unclaimed or pre-bound to it, by name."""
        names = self.unclaimed.get(claim.storage_class, set()) | self.claimed_by.get((claim.namespace, claim.name), set())
        vols = (self.objects.volumes[n] for n in sorted(names))
        return [pv for pv in vols if pv.storage_class == claim.storage_class]

    def claim(self, namespace, name):
        return self.objects.claims.get(f"{namespace}/{name}")

    # ---- binding (VolumeBinding's Reserve + PreBind, committed) -----------------------------
    def bind_claim(self, claim, volume):
        """A static binding made for a pod: the PV's claimRef and the PVC's volumeName are set,
        as the API holds them once PreBind has finished."""
        self._index_volume(volume, -1)
        volume.claim_ref = (claim.namespace, claim.name, claim.uid)
        self._index_volume(volume, 1)
        volume.phase = "Bound"
        claim.volume_name = volume.name
        claim.annotations = {**claim.annotations, BIND_COMPLETED_ANNOTATION: "yes"}
        claim.phase = "Bound"
        self._recredit([claim.key])
        self.version += 1

    def select_node(self, claim, node_name):
        """A dynamic provisioning decision: the claim is annotated with the chosen node."""
        claim.annotations = {**claim.annotations, SELECTED_NODE_ANNOTATION: node_name}
        self.version += 1

    # ---- placed pods -----------------------------------------------------------------------
    def place(self, pod, row, sign):
        """Counts (sign 1) or uncounts (-1) a placed pod's volumes on its node row."""
        for v in pod.volumes:
            if v.claim:
                key = f"{pod.namespace}/{v.claim}"
                if not v.ephemeral:
                    self.claim_users[key] += sign
                    if self.claim_users[key] <= 0:
                        del self.claim_users[key]
                self._claim_row(key, row, sign)
            if v.restriction is not None:
                self._disk(v.restriction, row, sign)

    def _claim_row(self, key, row, sign):
        rows = self.claim_rows.setdefault(key, Counter())
        before = rows[row]
        rows[row] += sign
        if before == 0 or rows[row] == 0:           # the claim appears on / leaves the node
            if key not in self.credited:
                self.credited[key] = self.driver_of(key)
            driver = self.credited[key]
            if driver is not None:
                self.counts(driver)[row] += 1 if before == 0 else -1
        if rows[row] == 0:
            del rows[row]
            if not rows:
                del self.claim_rows[key]
                self.credited.pop(key, None)

    def _disk(self, r, row, sign):
        if r[0] == "rbd":
            key, entry = ("rbd", r[2], r[3]), (row, r[1], r[4])
        else:
            key, entry = r[:2], (row, r[2] if len(r) > 2 else False)
        c = self.disks.setdefault(key, Counter())
        c[entry] += sign
        if c[entry] <= 0:
            del c[entry]
            if not c:
                del self.disks[key]

    def counts(self, driver) -> np.ndarray:
        """Distinct attachable claims per node row for a CSI driver (grows with the table)."""
        n = self.table.labels.shape[0]
        a = self.attached.get(driver)
        if a is None or a.shape[0] < n:
            grown = np.zeros(n, np.int32)
            if a is not None:
                grown[:a.shape[0]] = a
            a = self.attached[driver] = grown
        return a

    def _recredit(self, keys):
        """A claim's CSI driver can change when its PVC, PV or StorageClass changes: move its
        rows to the new driver's counts."""
        for key in keys:
            if key not in self.claim_rows:
                continue
            old, new = self.credited.get(key), self.driver_of(key)
            if old == new:
                continue
            rows = np.fromiter(self.claim_rows[key], np.int64)
            if old is not None:
                self.counts(old)[rows] -= 1
            if new is not None:
                self.counts(new)[rows] += 1
            self.credited[key] = new

    def driver_of(self, key):
        """NodeVolumeLimits' getCSIDriverInfo, driver only: the bound PV's CSI driver, else the
        claim's StorageClass provisioner; None when the volume is not attachable. (Without CSI
        migration, which CSINode objects declaring it are refused for, in-tree PVs count
        nowhere.)"""
        o = self.objects
        claim = o.claims.get(key)
        if claim is None:
            return None
        if claim.volume_name:
            pv = o.volumes.get(claim.volume_name)
            if pv is not None:
                return pv.csi[0] or None if pv.csi is not None and pv.csi[1] else None
        cls = o.classes.get(claim.storage_class) if claim.storage_class else None
        return cls.provisioner or None if cls is not None else None

