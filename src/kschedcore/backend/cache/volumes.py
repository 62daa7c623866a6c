"""The cache's volume facts: the storage objects, and what pods on each node use of them.

kube-scheduler's volume Filters look at every pod on the node (VolumeRestrictions,
NodeVolumeLimits) or at the PVC/PV listers. Here the per-node facts are counters kept up to
date as pods are placed and removed, so a pod's PreFilter turns them into per-row statuses with
NumPy, never a walk over pods or nodes in Python.
"""
from collections import Counter

import numpy as np

from ...errors import UnsupportedError
from ...objects.storage import (BIND_COMPLETED_ANNOTATION, IN_TREE_PROVISIONERS, MIGRATED_PLUGINS_ANNOTATION,
                               PORTWORX_PLUGIN, SELECTED_NODE_ANNOTATION, StorageObjects, owner_uid,
                               parse_storage_object)


class VolumeState:
    def __init__(self, table):
        self.table = table
        self.objects = StorageObjects()
        #: claim key -> number of placed pods with a persistentVolumeClaim volume naming it
        #: (NodeInfo.PVCRefCounts summed over nodes: the snapshot's IsPVCUsedByPods)
        self.claim_users: Counter = Counter()
        #: claim key (PVC or ephemeral) -> {row: count}: placed pods using it per node
        self.claim_rows = {}
        #: claim key -> (driver, volume handle) its rows are counted under (None: not attachable)
        self.credited = {}
        #: (driver, volume handle) -> {row: count}: placed claims and inline volumes that are it
        self.volume_rows = {}
        #: driver -> int32 per row: distinct attachable volumes of placed pods (NodeVolumeLimits)
        self.attached = {}
        #: ephemeral claim key -> Counter((row, pod uid, pod key)) of the placed pods using it
        self.ephemeral_users = {}
        self._foreign = None        # foreign_ephemeral(), until a claim or such a pod changes
        #: VolumeRestrictions identity -> Counter((row, readOnly)); rbd: (pool, image) ->
        #: Counter((row, monitors, readOnly))
        self.disks = {}
        #: PV names by class with no claimRef, and by the claim their claimRef names: the
        #: only PVs FindMatchingVolume can return for a claim
        self.unclaimed = {}
        self.claimed_by = {}
        #: PV name -> keys of the claims whose volumeName names it (a PV's change recredits them)
        self.claims_of_volume: dict = {}
        self.version = 0            # bumped when any storage object changes
        self.placements = 0         # bumped when a pod with volumes is placed or removed
        self.csi_version = 0        # bumped when a CSINode changes
        #: priority -> placed pods with volumes (can preemption's victims hold any?)
        self.priorities: Counter = Counter()
        self._migrated: dict = {}   # plugin -> (key, bool per row: its CSINode lists the plugin)
        self.portworx_pvs: set = set()      # PVs with an in-tree Portworx source
        self.portworx_placed = 0            # placed pods with an inline Portworx volume

    # ---- objects ---------------------------------------------------------------------------
    def add_object(self, raw, index_hint=""):
        """Adds or replaces a storage object (PVC, PV, StorageClass, CSINode, CSIDriver,
        CSIStorageCapacity)."""
        obj = parse_storage_object(raw, index_hint)
        o = self.objects
        kind = raw["kind"]
        if kind == "PersistentVolumeClaim":
            self._name_volume(o.claims.get(obj.key), None)
            o.claims[obj.key] = obj
            self._name_volume(obj, obj.volume_name)
            self._foreign = None
            self._recredit([obj.key])
        elif kind == "PersistentVolume":
            portworx = (raw.get("spec") or {}).get("portworxVolume") is not None
            if portworx:
                self._portworx_check(f"persistentvolume {obj.name}", "spec.portworxVolume")
            (self.portworx_pvs.add if portworx else self.portworx_pvs.discard)(obj.name)
            old = o.volumes.get(obj.name)
            if old is not None:
                self._index_volume(old, -1)
            o.volumes[obj.name] = obj
            self._index_volume(obj, 1)
            self._recredit(list(self.claims_of_volume.get(obj.name, ())))
        elif kind == "StorageClass":
            o.classes[obj.name] = obj
            self._recredit(list(self.claim_rows))
        elif kind == "CSINode":
            if PORTWORX_PLUGIN in obj.migrated:
                self._portworx_check(f"csinode {obj.name}", f"metadata.annotations[{MIGRATED_PLUGINS_ANNOTATION}]",
                                     listed=True)
            o.csi_nodes[obj.name] = obj
            self.csi_version += 1
        elif kind == "CSIDriver":
            o.csi_drivers[obj.name] = obj
        else:
            o.capacities = [c for c in o.capacities if (c.namespace, c.name) != (obj.namespace, obj.name)]
            o.capacities.append(obj)
        self.version += 1
        return obj

    def migrated_rows(self, plugin):
        """Per node row: its CSINode lists `plugin` as migrated (None: no row does)."""
        t = self.table
        key = (self.csi_version, t.node_version, t.labels.shape[0])
        cached = self._migrated.get(plugin)
        if cached is None or cached[0] != key:
            rows = [t.row_of[name] for name, c in self.objects.csi_nodes.items()
                    if plugin in c.migrated and name in t.row_of]
            mask = None
            if rows:
                mask = np.zeros(t.labels.shape[0], bool)
                mask[rows] = True
            cached = self._migrated[plugin] = (key, mask)
        return cached[1]

    def check_portworx_pod(self, pod):
        name = next(v.name for v in pod.volumes if v.portworx)
        self._portworx_check(f"pod {pod.key}", f'spec.volumes (volume "{name}").portworxVolume')

    def _portworx_check(self, obj, path, listed=False):
        """In-tree Portworx volumes count under their CSI driver on nodes whose CSINode lists
        the plugin as migrated; that is not implemented: refused where both meet."""
        o = self.objects
        if listed:
            has = bool(self.portworx_pvs) or self.portworx_placed > 0
        else:
            has = any(PORTWORX_PLUGIN in c.migrated for c in o.csi_nodes.values())
        if has:
            raise UnsupportedError(obj, path, "in-tree Portworx volumes where a CSINode lists "
                                   f"{PORTWORX_PLUGIN} as migrated (counted under CSI driver pxd.portworx.com): "
                                   "not implemented yet")

    def _index_volume(self, pv, sign):
        if pv.claim_ref is None:
            names = self.unclaimed.setdefault(pv.storage_class, set())
        else:
            names = self.claimed_by.setdefault(pv.claim_ref[:2], set())
        (names.add if sign > 0 else names.discard)(pv.name)

    def _name_volume(self, claim, name):
        """Indexes `claim` under PV `name` (None: only drops its current entry)."""
        if claim is None:
            return
        if claim.volume_name:
            self.claims_of_volume.get(claim.volume_name, set()).discard(claim.key)
        if name:
            self.claims_of_volume.setdefault(name, set()).add(claim.key)

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
        self._name_volume(claim, volume.name)
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
        self.placements += 1
        for v in pod.volumes:
            if v.portworx:
                if sign > 0:
                    self.check_portworx_pod(pod)
                self.portworx_placed += sign
                break
        self.priorities[pod.priority] += sign
        users = self.claim_users
        for v in pod.volumes:
            if v.claim:
                key = f"{pod.namespace}/{v.claim}"
                if not v.ephemeral:
                    n = users.get(key, 0) + sign
                    if n > 0:
                        users[key] = n
                    else:
                        users.pop(key, None)
                else:
                    _count(self.ephemeral_users, key, (row, owner_uid(pod), pod.key), sign)
                    self._foreign = None
                self._claim_row(key, row, sign)
            elif v.csi_id is not None:
                self._volume_row(v.csi_id, row, sign)
            if v.restriction is not None:
                self._disk(v.restriction, row, sign)

    def place_run(self, pods, node_names):
        """place(pod, its row, 1) for the pods of a kernel run that have volumes."""
        row_of = self.table.row_of
        for pod, node in zip(pods, node_names):
            if pod.volumes:
                self.place(pod, row_of[node], 1)

    def held_below(self, priority) -> bool:
        """Whether a placed pod of lower priority has volumes (one preemption could evict)."""
        return any(n > 0 and p < priority for p, n in self.priorities.items())

    def _claim_row(self, key, row, sign):
        rows = self.claim_rows.get(key)
        if rows is None:
            rows = self.claim_rows[key] = {}
        before = rows.get(row, 0)
        after = rows[row] = before + sign
        if before == 0 or after == 0:           # the claim appears on / leaves the node
            if key not in self.credited:
                self.credited[key] = self.volume_id(key)
            vid = self.credited[key]
            if vid is not None:
                self._volume_row(vid, row, 1 if before == 0 else -1)
        if after == 0:
            del rows[row]
            if not rows:
                del self.claim_rows[key]
                self.credited.pop(key, None)

    def _volume_row(self, vid, row, sign):
        """One more (or fewer) user of volume `vid` on a row; the driver's count follows when
        the volume appears on or leaves the node."""
        rows = self.volume_rows.get(vid)
        if rows is None:
            rows = self.volume_rows[vid] = {}
        before = rows.get(row, 0)
        after = rows[row] = before + sign
        if before == 0 or after == 0:
            self.counts(vid[0])[row] += 1 if before == 0 else -1
        if after == 0:
            del rows[row]
            if not rows:
                del self.volume_rows[vid]

    def foreign_ephemeral(self):
        """(rows, error text): nodes with a placed pod whose ephemeral claim exists but is
        controlled by someone else (ephemeral.VolumeIsForPod fails)."""
        if self._foreign is not None:
            return self._foreign
        rows, text = [], ""
        for key, users in self.ephemeral_users.items():
            claim = self.objects.claims.get(key)
            if claim is None:
                continue
            for row, uid, pod_key in users:
                if claim.controller_uid != uid:
                    rows.append(row)
                    text = text or f"PVC {key} was not created for pod {pod_key} (pod is not owner)"
        self._foreign = (rows, text)
        return self._foreign

    def _disk(self, r, row, sign):
        key: tuple
        entry: tuple
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
            old, new = self.credited.get(key), self.volume_id(key)
            if old == new:
                continue
            for row in self.claim_rows[key]:
                if old is not None:
                    self._volume_row(old, row, -1)
                if new is not None:
                    self._volume_row(new, row, 1)
            self.credited[key] = new

    def volume_id(self, key):
        """NodeVolumeLimits' getCSIDriverInfo: (driver, volume handle) of a claim -- its bound
        PV's (CSI, or in-tree translated), else its StorageClass provisioner's with a handle of
        its own; None when the volume is not attachable."""
        o = self.objects
        claim = o.claims.get(key)
        if claim is None:
            return None
        if claim.volume_name:
            pv = o.volumes.get(claim.volume_name)
            if pv is not None:
                return pv.csi
        cls = o.classes.get(claim.storage_class) if claim.storage_class else None
        if cls is None or not cls.provisioner:
            return None
        driver = IN_TREE_PROVISIONERS.get(cls.provisioner, cls.provisioner)
        return (driver, "\x00claim:" + key) if driver else None


def _count(counters, key, item, sign):
    c = counters.setdefault(key, Counter())
    c[item] += sign
    if c[item] <= 0:
        del c[item]
        if not c:
            del counters[key]

