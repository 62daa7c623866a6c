"""What the volume plugins share (semantics §3.7): the listers (``Storage``) over raw
PVC/PV/StorageClass/CSINode/CSIDriver/CSIStorageCapacity dicts, object accessors and a pod's
PVC and generic ephemeral volumes.  The plugins are in ``volumebinding`` and ``volumes``.

Written from kube-scheduler v1.34.1 k8s.io/component-helpers/storage/volume (helpers.go,
pv_helpers.go) and storage/ephemeral.

Modelling choices shared with the compiled path (they are not upstream behaviour):

* ``Storage.list_pvs`` walks a class's PVs in name order (upstream: Go map order);
* a PV without status.phase is Available without a claimRef, else Bound;
* a StorageClass without volumeBindingMode is Immediate (API defaulting).
"""
from __future__ import annotations

from .exactqty import exact_quantity
from .interpod import pod_namespace

STORAGE_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity")

ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


# --- object accessors ---------------------------------------------------------------------------

def meta_of(obj: dict) -> dict:
    return obj.get("metadata") or {}


def spec_of(obj: dict) -> dict:
    return obj.get("spec") or {}


def name_of(obj: dict) -> str:
    return meta_of(obj).get("name") or ""


def annotations_of(obj: dict) -> dict:
    return meta_of(obj).get("annotations") or {}


def labels_of(obj: dict) -> dict:
    return meta_of(obj).get("labels") or {}


def _storage_quantity(resources: dict | None):
    """resources[storage] as an exact value; a missing entry is the zero Quantity."""
    text = (resources or {}).get("storage")
    return exact_quantity(text) if text is not None else 0


def claim_request(pvc: dict):
    return _storage_quantity((spec_of(pvc).get("resources") or {}).get("requests"))


def pv_capacity(pv: dict):
    return _storage_quantity(spec_of(pv).get("capacity"))


def claim_class(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first."""
    ann = annotations_of(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return spec_of(pvc).get("storageClassName") or ""


def pv_class(pv: dict) -> str:
    """GetPersistentVolumeClass: the beta annotation first."""
    ann = annotations_of(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return spec_of(pv).get("storageClassName") or ""


def class_binding_mode(sc: dict) -> str:
    return sc.get("volumeBindingMode") or "Immediate"   # the API's default


def pv_phase(pv: dict) -> str:
    phase = (pv.get("status") or {}).get("phase")
    if phase:
        return phase
    return "Bound" if spec_of(pv).get("claimRef") is not None else "Available"


def node_name_of(node: dict) -> str:
    return name_of(node)


# --- the listers --------------------------------------------------------------------------------

class Storage:
    """What the listers (and VolumeBinding's assume caches) hold; one object per name (per
    namespace for the namespaced kinds), a later one replacing an earlier one."""

    def __init__(self):
        self.pvcs: dict[str, dict] = {}          # "ns/name"
        self.pvs: dict[str, dict] = {}
        self.classes: dict[str, dict] = {}
        self.csi_nodes: dict[str, dict] = {}
        self.csi_drivers: dict[str, dict] = {}
        self.capacities: dict[str, dict] = {}    # "ns/name"

    def add(self, obj: dict) -> None:
        kind = obj.get("kind")
        name = name_of(obj)
        namespaced = f"{meta_of(obj).get('namespace') or 'default'}/{name}"
        if kind == "PersistentVolumeClaim":
            self.pvcs[namespaced] = obj
        elif kind == "PersistentVolume":
            self.pvs[name] = obj
        elif kind == "StorageClass":
            self.classes[name] = obj
        elif kind == "CSINode":
            self.csi_nodes[name] = obj
        elif kind == "CSIDriver":
            self.csi_drivers[name] = obj
        elif kind == "CSIStorageCapacity":
            self.capacities[namespaced] = obj
        else:
            raise ValueError(f"not a storage object: {kind!r}")

    def get_pvc(self, namespace: str, name: str) -> tuple[dict | None, str]:
        """(claim, the lister's not-found error text)."""
        pvc = self.pvcs.get(f"{namespace}/{name}")
        return pvc, ("" if pvc is not None else f'persistentvolumeclaim "{name}" not found')

    def list_pvs(self, class_name: str) -> list[dict]:
        """PVAssumeCache.ListPVs through the storage-class index, in name order (modelling
        choice: upstream order is random)."""
        return [self.pvs[n] for n in sorted(self.pvs) if pv_class(self.pvs[n]) == class_name]


# --- pod volumes ----------------------------------------------------------------------------------

def pod_volumes(pod: dict) -> list[dict]:
    return list(spec_of(pod).get("volumes") or [])


def _pod_name(pod: dict) -> str:
    return name_of(pod)


def ephemeral_claim_name(pod: dict, vol: dict) -> str:
    """ephemeral.VolumeClaimName."""
    return f"{_pod_name(pod)}-{vol.get('name') or ''}"


def volume_claim(pod: dict, vol: dict) -> tuple[str, bool] | None:
    """(claim name, is ephemeral) for a PVC or generic ephemeral volume; None otherwise."""
    if vol.get("persistentVolumeClaim") is not None:
        return vol["persistentVolumeClaim"].get("claimName") or "", False
    if vol.get("ephemeral") is not None:
        return ephemeral_claim_name(pod, vol), True
    return None


def volume_is_for_pod(pod: dict, pvc: dict) -> str | None:
    """ephemeral.VolumeIsForPod: the error text, or None."""
    controller = next((ref for ref in meta_of(pvc).get("ownerReferences") or [] if ref.get("controller")), None)
    pvc_ns = meta_of(pvc).get("namespace") or "default"
    owned = controller is not None and (controller.get("uid") or "") == (meta_of(pod).get("uid") or "")
    if pvc_ns != pod_namespace(pod) or not owned:
        return (f"PVC {pvc_ns}/{name_of(pvc)} was not created for pod "
                f"{pod_namespace(pod)}/{_pod_name(pod)} (pod is not owner)")
    return None
