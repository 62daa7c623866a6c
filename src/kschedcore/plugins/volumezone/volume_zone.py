"""VolumeZone (plugins/volumezone): a bound PV's zone and region labels against the node's
(semantics §3.7)."""
import numpy as np

from ..._native import F_VOLUME_ZONE, VOLUME_UU
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ...framework.interface import PreFilterRejection
from ..helper.volume import VolumePlugin

REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_TOPOLOGY_KEYS = frozenset(TOPOLOGY_LABELS)
GA_LABEL = {BETA_ZONE: ZONE, BETA_REGION: REGION}
MULTI_ZONE_DELIMITER = "__"


class VolumeZone(VolumePlugin):
    name = "VolumeZone"
    filter_id = F_VOLUME_ZONE
    bit_reasons = {1: REASON_CONFLICT}

    def events_to_register(self):
        return [with_hint(R.StorageClass, A.Add), with_hint(R.Node, A.Add | A.UpdateNodeLabel),
                with_hint(R.PersistentVolumeClaim, A.Add | A.Update), with_hint(R.PersistentVolume, A.Add | A.Update)]

    def prefilter(self, pod, volumes, table):
        self.skipped = True
        topologies = self._pv_topologies(pod, volumes)
        if not topologies:
            return None
        self.skipped = False
        has_any = np.zeros(table.labels.shape[0], bool)
        for key in TOPOLOGY_LABELS:
            has_any |= _values(table, key) >= 0
        ok = np.ones_like(has_any)
        for key, zones in topologies:
            v = _values(table, key)
            v = np.where(v >= 0, v, _values(table, GA_LABEL.get(key, key)))
            ids = [i for i in (table.label_values.get(z) for z in zones) if i >= 0]
            ok &= (v >= 0) & np.isin(v, ids)
        status = np.zeros(has_any.shape[0], np.int8)
        status[has_any & ~ok] = 1 | VOLUME_UU
        return status

    def passes_everywhere(self, pod, cache, run=None) -> bool:
        """The PVs of the pod's claims exist and carry no zone or region label."""
        volumes = cache.volumes
        for v in pod.volumes:
            if not v.claim or v.ephemeral:
                continue
            claim = volumes.claim(pod.namespace, v.claim)
            pv = volumes.objects.volumes.get(claim.volume_name) if claim is not None and claim.volume_name else None
            if pv is None or not _TOPOLOGY_KEYS.isdisjoint(pv.labels):
                return False
        return True

    def _pv_topologies(self, pod, volumes) -> list:
        """getPVbyPod: (label key, zones) of the PVs of the pod's bound claims."""
        o = volumes.objects
        out = []
        for _, claim in self.pvc_claims(pod, volumes):
            if not claim.volume_name:
                if not claim.storage_class:
                    raise PreFilterRejection(self.name, "PersistentVolumeClaim had no pv name and storageClass name")
                cls = o.classes.get(claim.storage_class)
                if cls is None:
                    raise PreFilterRejection(self.name,
                                             f'storageclass.storage.k8s.io "{claim.storage_class}" not found')
                if cls.binding_mode == "WaitForFirstConsumer":
                    continue
                raise PreFilterRejection(self.name, "PersistentVolume had no name")
            pv = o.volumes.get(claim.volume_name)
            if pv is None:
                raise PreFilterRejection(self.name, f'persistentvolume "{claim.volume_name}" not found')
            for key in TOPOLOGY_LABELS:
                if key in pv.labels:
                    zones = [z.strip() for z in pv.labels[key].split(MULTI_ZONE_DELIMITER)]
                    if all(zones):          # a label with an empty zone is ignored
                        out.append((key, frozenset(zones)))
        return out


def _values(table, key) -> np.ndarray:
    col = table.label_keys.get(key)
    return table.labels[:, col] if col >= 0 else np.full(table.labels.shape[0], -1, np.int32)
