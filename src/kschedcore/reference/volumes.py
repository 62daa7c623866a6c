"""The volume plugins: VolumeRestrictions, NodeVolumeLimits (CSI), VolumeBinding, VolumeZone
(semantics §3.7), over raw PVC/PV/StorageClass/CSINode/CSIDriver/CSIStorageCapacity dicts.

Written from kube-scheduler v1.34.1 plugins/volumerestrictions, plugins/nodevolumelimits
(csi.go, utils.go), plugins/volumebinding (volume_binding.go, binder.go), plugins/volumezone,
k8s.io/component-helpers/storage/volume (helpers.go, pv_helpers.go), storage/ephemeral,
k8s.io/cloud-provider/volume/helpers (LabelZonesToSet) and k8s.io/csi-translation-lib (GCE PD,
AWS EBS and Cinder; Azure Disk only as a StorageClass provisioner).  Plain loops, recomputed
for every pod and node.

Modelling choices shared with the compiled path (they are not upstream behaviour):

* after a cycle places a pod, VolumeBinding's bindings are committed as the API holds them
  after PreBind: a static binding sets the PV's claimRef and the PVC's volumeName and
  ``pv.kubernetes.io/bind-completed``; a dynamic provision sets the PVC's
  ``volume.kubernetes.io/selected-node`` (``reserve``);
* FindMatchingVolume walks a class's PVs in name order (upstream: Go map order), so equal
  capacities go to the first name;
* a PV without status.phase is Available without a claimRef, else Bound;
* no CSINode carries ``storage.alpha.kubernetes.io/migrated-plugins`` (the compiled path
  refuses it), so VolumeBinding never translates a PV to CSI.  (NodeVolumeLimits translates
  in-tree GCE PD, AWS EBS, Azure Disk and Cinder volumes on every node with a CSINode object
  all the same: its isCSIMigrationOn asks the annotation for Portworx only.  That is upstream.)
* VolumeBinding's Score is off (StorageCapacityScoring), so its PreScore always skips;
* a StorageClass without volumeBindingMode is Immediate (API defaulting), an RBD volume
  without pool uses ``rbd`` (API defaulting).
"""
from __future__ import annotations

import copy
import math
import urllib.parse
from dataclasses import dataclass, field

from . import affinity
from .exactqty import exact_quantity
from .interpod import SelectorError, parse_label_selector, pod_namespace, selector_matches
from .names import is_qualified_name, is_valid_label_value
from .plugins import ERROR, U, UU, PreFilterOutcome, Status

STORAGE_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity")

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                        "already in-use by another pod")
REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
REASON_ZONE_CONFLICT = "node(s) had no available volume zone"

#: CSILimits.randomVolumeIDPrefix: random per plugin instance, only ever compared for equality
RANDOM_VOLUME_ID_PREFIX = "reference0volume0id0prefix000000"


# --- object accessors ---------------------------------------------------------------------------

def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def _name(obj: dict) -> str:
    return _meta(obj).get("name") or ""


def _annotations(obj: dict) -> dict:
    return _meta(obj).get("annotations") or {}


def _labels(obj: dict) -> dict:
    return _meta(obj).get("labels") or {}


def _storage_quantity(resources: dict | None):
    """resources[storage] as an exact value; a missing entry is the zero Quantity."""
    text = (resources or {}).get("storage")
    return exact_quantity(text) if text is not None else 0


def claim_request(pvc: dict):
    return _storage_quantity((_spec(pvc).get("resources") or {}).get("requests"))


def pv_capacity(pv: dict):
    return _storage_quantity(_spec(pv).get("capacity"))


def claim_class(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first."""
    ann = _annotations(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return _spec(pvc).get("storageClassName") or ""


def pv_class(pv: dict) -> str:
    """GetPersistentVolumeClass: the beta annotation first."""
    ann = _annotations(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return _spec(pv).get("storageClassName") or ""


def class_binding_mode(sc: dict) -> str:
    return sc.get("volumeBindingMode") or "Immediate"   # the API's default


def pv_phase(pv: dict) -> str:
    phase = (pv.get("status") or {}).get("phase")
    if phase:
        return phase
    return "Bound" if _spec(pv).get("claimRef") is not None else "Available"


def node_name_of(node: dict) -> str:
    return _name(node)


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
        name = _name(obj)
        namespaced = f"{_meta(obj).get('namespace') or 'default'}/{name}"
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
    return list(_spec(pod).get("volumes") or [])


def _pod_name(pod: dict) -> str:
    return _name(pod)


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
    controller = next((ref for ref in _meta(pvc).get("ownerReferences") or [] if ref.get("controller")), None)
    pvc_ns = _meta(pvc).get("namespace") or "default"
    owned = controller is not None and (controller.get("uid") or "") == (_meta(pod).get("uid") or "")
    if pvc_ns != pod_namespace(pod) or not owned:
        return (f"PVC {pvc_ns}/{_name(pvc)} was not created for pod "
                f"{pod_namespace(pod)}/{_pod_name(pod)} (pod is not owner)")
    return None


# --- VolumeRestrictions ---------------------------------------------------------------------------

_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def needs_restrictions_check(vol: dict) -> bool:
    return any(vol.get(src) is not None for src in _RESTRICTED_SOURCES)


def _rbd_pool(src: dict) -> str:
    return src.get("pool") or "rbd"     # SetDefaults_RBDVolumeSource


def is_volume_conflict(vol: dict, existing_pod: dict) -> bool:
    """isVolumeConflict: vol against every volume of a pod on the node."""
    for ev in pod_volumes(existing_pod):
        disk, edisk = vol.get("gcePersistentDisk"), ev.get("gcePersistentDisk")
        if disk is not None and edisk is not None:
            if disk.get("pdName") == edisk.get("pdName") and not (disk.get("readOnly") and edisk.get("readOnly")):
                return True
        ebs, eebs = vol.get("awsElasticBlockStore"), ev.get("awsElasticBlockStore")
        if ebs is not None and eebs is not None and ebs.get("volumeID") == eebs.get("volumeID"):
            return True
        iscsi, eiscsi = vol.get("iscsi"), ev.get("iscsi")
        if iscsi is not None and eiscsi is not None:
            if iscsi.get("iqn") == eiscsi.get("iqn") and not (iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        rbd, erbd = vol.get("rbd"), ev.get("rbd")
        if rbd is not None and erbd is not None:
            overlap = set(rbd.get("monitors") or []) & set(erbd.get("monitors") or [])
            if (overlap and _rbd_pool(rbd) == _rbd_pool(erbd) and rbd.get("image") == erbd.get("image")
                    and not (rbd.get("readOnly") and erbd.get("readOnly"))):
                return True
    return False


def used_pvc_set(cluster) -> set[str]:
    """Snapshot.usedPVCSet: "ns/claim" of every PVC volume of every pod on a node."""
    used = set()
    for ni in cluster.node_infos.values():
        for pod in ni.pods:
            for vol in pod_volumes(pod):
                if vol.get("persistentVolumeClaim") is not None:
                    used.add(f"{pod_namespace(pod)}/{vol['persistentVolumeClaim'].get('claimName') or ''}")
    return used


def restrictions_pre_filter(pod: dict, storage: Storage, cluster, state: dict) -> PreFilterOutcome:
    needs_check = any(needs_restrictions_check(v) for v in pod_volumes(pod))
    rwop: set[str] = set()
    for vol in pod_volumes(pod):
        if vol.get("persistentVolumeClaim") is None:
            continue
        pvc, err = storage.get_pvc(pod_namespace(pod), vol["persistentVolumeClaim"].get("claimName") or "")
        if pvc is None:
            return PreFilterOutcome(status=Status(UU, [err]))
        if READ_WRITE_ONCE_POD in (_spec(pvc).get("accessModes") or []):
            rwop.add(_name(pvc))
    used = used_pvc_set(cluster)
    conflicts = sum(1 for name in rwop if f"{pod_namespace(pod)}/{name}" in used)
    if not needs_check and conflicts == 0:
        return PreFilterOutcome(skip=True)
    state["volume_restrictions_conflicts"] = conflicts
    return PreFilterOutcome()


def restrictions_filter(pod: dict, ni, state: dict) -> Status | None:
    for vol in pod_volumes(pod):
        if not needs_restrictions_check(vol):
            continue
        if any(is_volume_conflict(vol, existing) for existing in ni.pods):
            return Status(U, [REASON_DISK_CONFLICT])
    if state["volume_restrictions_conflicts"] > 0:
        return Status(U, [REASON_RWOP_CONFLICT])
    return None


# --- CSI translation (csi-translation-lib), as NodeVolumeLimits uses it ---------------------------

GCE_PD_PLUGIN, GCE_PD_DRIVER = "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"
AWS_EBS_PLUGIN, AWS_EBS_DRIVER = "kubernetes.io/aws-ebs", "ebs.csi.aws.com"
#: in-tree plugins csi-translation-lib knows: volume source field -> (plugin name, CSI driver)
IN_TREE_PLUGINS = {
    "gcePersistentDisk": (GCE_PD_PLUGIN, GCE_PD_DRIVER),
    "awsElasticBlockStore": (AWS_EBS_PLUGIN, AWS_EBS_DRIVER),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
CSI_NAME_OF_PLUGIN = dict(IN_TREE_PLUGINS.values())
#: isCSIMigrationOn: these are on whenever the node has a CSINode (Portworx asks the annotation)
MIGRATION_ALWAYS_ON = {GCE_PD_PLUGIN, AWS_EBS_PLUGIN, "kubernetes.io/azure-disk", "kubernetes.io/cinder"}
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"


def in_tree_source(spec_or_vol: dict) -> str | None:
    """The in-tree source field csi-translation-lib can migrate (CanSupport/CanSupportInline)."""
    return next((src for src in IN_TREE_PLUGINS if spec_or_vol.get(src) is not None), None)


def is_csi_migration_on(csi_node: dict | None, plugin: str) -> bool:
    """nodevolumelimits isCSIMigrationOn (CSIMigrationPortworx is GA)."""
    if csi_node is None or not plugin:
        return False
    if plugin in MIGRATION_ALWAYS_ON:
        return True
    if plugin != PORTWORX_PLUGIN:
        return False
    migrated = _annotations(csi_node).get(ANN_MIGRATED_PLUGINS) or ""
    return plugin in (migrated.split(",") if migrated else [])


def ebs_volume_id(kubernetes_id: str) -> str | None:
    """KubernetesVolumeIDToEBSVolumeID; None on error."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    url = urllib.parse.urlparse(kubernetes_id)
    aws_id = url.path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        return None
    return aws_id


def gce_region_from_zones(zones: list[str]) -> str | None:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            return None
        regions.add("-".join(parts[:2]))
    return regions.pop() if len(regions) == 1 else None


def translate_inline(vol: dict) -> tuple[str, str] | None:
    """TranslateInTreeInlineVolumeToCSI -> (driver, volume handle); None on error."""
    src = in_tree_source(vol)
    if src == "gcePersistentDisk":
        return GCE_PD_DRIVER, f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{vol[src].get('pdName') or ''}"
    if src == "awsElasticBlockStore":
        handle = ebs_volume_id(vol[src].get("volumeID") or "")
        return (AWS_EBS_DRIVER, handle) if handle is not None else None
    if src == "cinder":
        return IN_TREE_PLUGINS[src][1], vol[src].get("volumeID") or ""
    raise NotImplementedError(f"CSI translation of inline {src} volumes")


def translate_pv(pv: dict) -> tuple[str, str] | None:
    """TranslateInTreePVToCSI -> (driver, volume handle); None on error."""
    spec = _spec(pv)
    src = in_tree_source(spec)
    if src == "awsElasticBlockStore":
        handle = ebs_volume_id(spec[src].get("volumeID") or "")
        return (AWS_EBS_DRIVER, handle) if handle is not None else None
    if src == "cinder":
        return IN_TREE_PLUGINS[src][1], spec[src].get("volumeID") or ""
    if src != "gcePersistentDisk":
        raise NotImplementedError(f"CSI translation of {src} PersistentVolumes")
    pd_name = spec[src].get("pdName") or ""
    zones_label = _labels(pv).get(BETA_ZONE) or _labels(pv).get(ZONE) or ""
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return GCE_PD_DRIVER, f"projects/UNSPECIFIED/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        region = gce_region_from_zones(zones)
        if region is None:
            return None
        return GCE_PD_DRIVER, f"projects/UNSPECIFIED/regions/{region}/disks/{pd_name}"
    return GCE_PD_DRIVER, f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{pd_name}"


# --- NodeVolumeLimits (CSI) -----------------------------------------------------------------------

def limits_pre_filter(pod: dict) -> PreFilterOutcome:
    for vol in pod_volumes(pod):
        if volume_claim(pod, vol) is not None or in_tree_source(vol) is not None:
            return PreFilterOutcome()
    return PreFilterOutcome(skip=True)


def volume_limits(csi_node: dict | None) -> dict[str, int]:
    """getVolumeLimits: driver -> allocatable count."""
    limits = {}
    if csi_node is None:
        return limits
    for driver in _spec(csi_node).get("drivers") or []:
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            limits[driver.get("name") or ""] = int(count)
    return limits


def csi_driver_info_from_class(csi_node: dict | None, pvc: dict, storage: Storage) -> tuple[str, str]:
    """getCSIDriverInfoFromSC."""
    sc = storage.classes.get(claim_class(pvc)) if claim_class(pvc) else None
    if sc is None:
        return "", ""
    handle = f"{RANDOM_VOLUME_ID_PREFIX}-{_meta(pvc).get('namespace') or 'default'}/{_name(pvc)}"
    provisioner = sc.get("provisioner") or ""
    if provisioner in CSI_NAME_OF_PLUGIN:
        if not is_csi_migration_on(csi_node, provisioner):
            return "", ""
        return CSI_NAME_OF_PLUGIN[provisioner], handle
    return provisioner, handle


def csi_driver_info(csi_node: dict | None, pvc: dict, storage: Storage) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, volume handle) of a claim; ("", "") = not counted."""
    pv = storage.pvs.get(_spec(pvc).get("volumeName") or "")
    if pv is None:
        return csi_driver_info_from_class(csi_node, pvc, storage)
    csi = _spec(pv).get("csi")
    if csi is not None:
        return csi.get("driver") or "", csi.get("volumeHandle") or ""
    src = in_tree_source(_spec(pv))
    if src is None or not is_csi_migration_on(csi_node, IN_TREE_PLUGINS[src][0]):
        return "", ""
    return translate_pv(pv) or ("", "")


def attachable_volumes(pod: dict, csi_node: dict | None, storage: Storage, new_pod: bool,
                       result: dict[str, str]) -> Status | None:
    """filterAttachableVolumes: unique volume name -> driver into ``result``; an error status."""
    for vol in pod_volumes(pod):
        claim = volume_claim(pod, vol)
        if claim is None:
            src = in_tree_source(vol)
            if src is None or not is_csi_migration_on(csi_node, IN_TREE_PLUGINS[src][0]):
                continue
            translated = translate_inline(vol)
            if translated is None:
                return Status(ERROR, [f"converting volume({vol.get('name')}) from inline to csi"])
            result[f"{translated[0]}/{translated[1]}"] = translated[0]
            continue
        name, ephemeral = claim
        if not name:
            return Status(ERROR, ["PersistentVolumeClaim had no name"])
        pvc, err = storage.get_pvc(pod_namespace(pod), name)
        if pvc is None:
            if new_pod:
                return Status(UU, [f"looking up PVC {pod_namespace(pod)}/{name}: {err}"])
            continue
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err:
                return Status(ERROR, [err])
        driver, handle = csi_driver_info(csi_node, pvc, storage)
        if driver and handle:
            result[f"{driver}/{handle}"] = driver
    return None


def limits_filter(pod: dict, ni, storage: Storage) -> Status | None:
    if not pod_volumes(pod):
        return None
    csi_node = storage.csi_nodes.get(ni.name)
    new_volumes: dict[str, str] = {}
    st = attachable_volumes(pod, csi_node, storage, True, new_volumes)
    if st is not None:
        return st
    if not new_volumes:
        return None
    limits = volume_limits(csi_node)
    if not limits:
        return None
    attached: dict[str, str] = {}
    for existing in ni.pods:
        st = attachable_volumes(existing, csi_node, storage, False, attached)
        if st is not None:
            return Status(ERROR, st.reasons)
    attached_count: dict[str, int] = {}
    for unique, driver in attached.items():
        new_volumes.pop(unique, None)
        attached_count[driver] = attached_count.get(driver, 0) + 1
    new_count: dict[str, int] = {}
    for driver in new_volumes.values():
        new_count[driver] = new_count.get(driver, 0) + 1
    for driver, count in new_count.items():
        if driver in limits and attached_count.get(driver, 0) + count > limits[driver]:
            return Status(U, [REASON_MAX_VOLUME_COUNT])
    return None


# --- VolumeBinding ---------------------------------------------------------------------------------

@dataclass
class PodVolumeClaims:
    bound: list[dict] = field(default_factory=list)
    delay: list[dict] = field(default_factory=list)          # unboundClaimsDelayBinding
    immediate: list[dict] = field(default_factory=list)      # unboundClaimsImmediate
    unbound_pvs: dict[str, list[dict]] = field(default_factory=dict)   # class -> PVs


@dataclass
class PodVolumes:
    static: list[tuple[dict, dict]]     # (PV, PVC)
    dynamic: list[dict]                 # PVCs to provision


@dataclass
class BindingState:
    claims: PodVolumeClaims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)


def pod_has_pvcs(pod: dict, storage: Storage) -> tuple[bool, str | None]:
    """VolumeBinding.podHasPVCs: (has a claim, error text)."""
    has = False
    for vol in pod_volumes(pod):
        claim = volume_claim(pod, vol)
        if claim is None:
            continue
        name, ephemeral = claim
        has = True
        pvc, err = storage.get_pvc(pod_namespace(pod), name)
        if pvc is None:
            if ephemeral:
                err = f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            return has, err
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return has, (f'persistentvolumeclaim "{_name(pvc)}" bound to non-existent persistentvolume '
                         f'"{_spec(pvc).get("volumeName") or ""}"')
        if _meta(pvc).get("deletionTimestamp") is not None:
            return has, f'persistentvolumeclaim "{_name(pvc)}" is being deleted'
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err:
                return has, err
    return has, None


def is_pvc_fully_bound(pvc: dict) -> bool:
    return bool(_spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in _annotations(pvc)


def is_volume_bound(pod: dict, vol: dict, storage: Storage) -> tuple[bool, dict | None, str | None]:
    """volumeBinder.isVolumeBound: (bound, claim, error); a non-claim volume is bound."""
    claim = volume_claim(pod, vol)
    if claim is None:
        return True, None, None
    name, ephemeral = claim
    pvc, _ = storage.get_pvc(pod_namespace(pod), name)
    if pvc is None:
        return False, None, f'error getting PVC "{pod_namespace(pod)}/{name}"'
    if ephemeral:
        err = volume_is_for_pod(pod, pvc)
        if err:
            return False, None, err
    return is_pvc_fully_bound(pvc), pvc, None


def is_delay_binding_mode(pvc: dict, storage: Storage) -> bool:
    name = claim_class(pvc)
    sc = storage.classes.get(name) if name else None
    return sc is not None and class_binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER


def get_pod_volume_claims(pod: dict, storage: Storage) -> tuple[PodVolumeClaims | None, str | None]:
    claims = PodVolumeClaims()
    for vol in pod_volumes(pod):
        bound, pvc, err = is_volume_bound(pod, vol, storage)
        if err:
            return None, err
        if pvc is None:
            continue
        if bound:
            claims.bound.append(pvc)
        elif is_delay_binding_mode(pvc, storage) and not _spec(pvc).get("volumeName"):
            claims.delay.append(pvc)
        else:
            claims.immediate.append(pvc)     # pre-bound claims are immediate too
    for pvc in claims.delay:
        claims.unbound_pvs[claim_class(pvc)] = storage.list_pvs(claim_class(pvc))
    return claims, None


def binding_pre_filter(pod: dict, storage: Storage, state: dict) -> PreFilterOutcome:
    has, err = pod_has_pvcs(pod, storage)
    if err:
        return PreFilterOutcome(status=Status(UU, [err]))
    if not has:
        return PreFilterOutcome(skip=True)
    claims, err = get_pod_volume_claims(pod, storage)
    if err:
        return PreFilterOutcome(status=Status(ERROR, [err]))
    if claims.immediate:
        return PreFilterOutcome(status=Status(UU, [REASON_UNBOUND_IMMEDIATE]))
    state["volume_binding"] = BindingState(claims)
    return PreFilterOutcome()


def check_node_affinity(pv: dict, node_labels: dict) -> bool:
    """volume.CheckNodeAffinity against a node made of the labels only (no name: matchFields
    are not checked)."""
    required = (_spec(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    bare = {"metadata": {"labels": node_labels}}
    terms = [affinity.parse_term(t) for t in required.get("nodeSelectorTerms") or [] if not affinity.is_empty_term(t)]
    return any(t.matches(bare) for t in terms)


def check_bound_claims(claims: list[dict], node: dict, storage: Storage) -> tuple[bool, bool]:
    """(bound volumes satisfied, bound PVs found); the first failure stops."""
    labels = _labels(node)
    for pvc in claims:
        pv = storage.pvs.get(_spec(pvc).get("volumeName") or "")
        if pv is None:
            return True, False
        if not check_node_affinity(pv, labels):
            return False, True
    return True, True


def is_volume_bound_to_claim(pv: dict, pvc: dict) -> bool:
    ref = _spec(pv).get("claimRef")
    if ref is None:
        return False
    if (ref.get("name") or "", ref.get("namespace") or "") != (_name(pvc), _meta(pvc).get("namespace") or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == (_meta(pvc).get("uid") or "")


def check_access_modes(pvc: dict, pv: dict) -> bool:
    pv_modes = set(_spec(pv).get("accessModes") or [])
    return all(mode in pv_modes for mode in _spec(pvc).get("accessModes") or [])


def find_matching_volume(pvc: dict, pvs: list[dict], node: dict, excluded: set[str]) -> tuple[dict | None, str | None]:
    """volume.FindMatchingVolume on the scheduler path (delayBinding, VolumeAttributesClass on)."""
    requested = claim_request(pvc)
    requested_class = claim_class(pvc)
    selector = None
    if _spec(pvc).get("selector") is not None:
        try:
            selector = parse_label_selector(_spec(pvc)["selector"])
        except SelectorError as e:
            return None, f"error creating internal label selector for claim: {e}"
    claim_mode = _spec(pvc).get("volumeMode") or "Filesystem"
    claim_vac = _spec(pvc).get("volumeAttributesClassName") or ""
    smallest, smallest_qty = None, None
    for pv in pvs:
        spec = _spec(pv)
        if _name(pv) in excluded:
            continue
        if spec.get("claimRef") is not None and not is_volume_bound_to_claim(pv, pvc):
            continue
        qty = pv_capacity(pv)
        if qty < requested:
            continue
        if (spec.get("volumeMode") or "Filesystem") != claim_mode:
            continue
        if (spec.get("volumeAttributesClassName") or "") != claim_vac:
            continue
        if _meta(pv).get("deletionTimestamp") is not None:
            continue
        affinity_ok = check_node_affinity(pv, _labels(node))
        if is_volume_bound_to_claim(pv, pvc):
            return (pv if affinity_ok else None), None
        if pv_phase(pv) != "Available":
            continue
        if selector is not None and not selector_matches(selector, _labels(pv)):
            continue
        if pv_class(pv) != requested_class or not affinity_ok or not check_access_modes(pvc, pv):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest, None


def find_matching_volumes(claims: list[dict], unbound_pvs: dict[str, list[dict]], node: dict):
    """(found matches, static bindings, claims left unbound, error); smallest request first."""
    found = True
    chosen: set[str] = set()
    bindings, unbound = [], []
    for pvc in sorted(claims, key=claim_request):     # stable, as Go's insertion sort for few claims
        pv, err = find_matching_volume(pvc, unbound_pvs.get(claim_class(pvc), []), node, chosen)
        if err:
            return False, [], [], err
        if pv is None:
            unbound.append(pvc)
            found = False
            continue
        chosen.add(_name(pv))
        bindings.append((pv, pvc))
    return found, bindings, unbound, None


def match_topology_selector_terms(terms: list[dict], labels: dict) -> bool:
    """v1helper.MatchTopologySelectorTerms: ORed terms of In requirements; an empty list
    matches everything, an empty or invalid term nothing."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs:
            continue
        valid = all(is_qualified_name(e.get("key") or "") and (e.get("values") or [])
                    and all(is_valid_label_value(v) for v in e.get("values") or []) for e in exprs)
        if valid and all((e.get("key") or "") in labels and labels[e.get("key") or ""] in e["values"] for e in exprs):
            return True
    return False


def _quantity_value(text) -> int:
    """resource.Quantity.Value(): rounded up to an integer."""
    return math.ceil(exact_quantity(text))


def capacity_sufficient(capacity: dict, size: int) -> bool:
    limit = capacity.get("maximumVolumeSize")
    if limit is None:
        limit = capacity.get("capacity")
    return limit is not None and _quantity_value(limit) >= size


def node_has_access(node: dict, capacity: dict) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        selector = parse_label_selector(topology)
    except SelectorError:
        return False
    return selector_matches(selector, _labels(node))


def has_enough_capacity(provisioner: str, pvc: dict, sc: dict, node: dict, storage: Storage) -> bool:
    requests = (_spec(pvc).get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        return True
    driver = storage.csi_drivers.get(provisioner)
    if driver is None or not _spec(driver).get("storageCapacity"):
        return True
    size = _quantity_value(requests["storage"])
    return any(cap.get("storageClassName") == _name(sc) and capacity_sufficient(cap, size)
               and node_has_access(node, cap) for cap in storage.capacities.values())


def check_volume_provisions(claims: list[dict], node: dict, storage: Storage):
    """(provision satisfied, sufficient storage, claims to provision, error); the first failing
    claim stops."""
    dynamic = []
    for pvc in claims:
        class_name = claim_class(pvc)
        if not class_name:
            return False, False, [], f'no class for claim "{_meta(pvc).get("namespace")}/{_name(pvc)}"'
        sc = storage.classes.get(class_name)
        if sc is None:
            return False, False, [], f'failed to find storage class "{class_name}"'
        provisioner = sc.get("provisioner") or ""
        if provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return False, True, [], None
        if not match_topology_selector_terms(sc.get("allowedTopologies") or [], _labels(node)):
            return False, True, [], None
        if not has_enough_capacity(provisioner, pvc, sc, node, storage):
            return True, False, [], None
        dynamic.append(pvc)
    return True, True, dynamic, None


def find_pod_volumes(claims: PodVolumeClaims, node: dict, storage: Storage):
    """volumeBinder.FindPodVolumes: (PodVolumes, conflict reasons, error)."""
    unbound_ok = bound_ok = sufficient = pvs_found = True
    static: list = []
    dynamic: list = []

    def done():
        reasons = [reason for ok, reason in ((bound_ok, REASON_NODE_CONFLICT), (unbound_ok, REASON_BIND_CONFLICT),
                                             (sufficient, REASON_NOT_ENOUGH_SPACE), (pvs_found, REASON_PV_NOT_EXIST))
                   if not ok]
        return PodVolumes(static, dynamic), reasons, None

    if claims.bound:
        bound_ok, pvs_found = check_bound_claims(claims.bound, node, storage)
    if claims.delay:
        to_match, to_provision = [], []
        for pvc in claims.delay:
            selected = _annotations(pvc).get(ANN_SELECTED_NODE)
            if selected is None:
                to_match.append(pvc)
            elif selected != node_name_of(node):
                unbound_ok = False          # fast path: provisioning was started for another node
                return done()
            else:
                to_provision.append(pvc)
        if to_match:
            unbound_ok, static, unbound, err = find_matching_volumes(to_match, claims.unbound_pvs, node)
            if err:
                return None, [], err
            to_provision += unbound
        if to_provision:
            unbound_ok, sufficient, dynamic, err = check_volume_provisions(to_provision, node, storage)
            if err:
                return None, [], err
    return done()


def binding_filter(pod: dict, ni, storage: Storage, state: dict) -> Status | None:
    bs: BindingState = state["volume_binding"]
    pod_vols, reasons, err = find_pod_volumes(bs.claims, ni.node, storage)
    if err:
        return Status(ERROR, [err])
    if reasons:
        return Status(UU, reasons)
    bs.by_node[ni.name] = pod_vols
    return None


def are_pod_volumes_bound(pod: dict, storage: Storage) -> bool:
    return all(is_volume_bound(pod, vol, storage)[0] for vol in pod_volumes(pod))


def reserve(pod: dict, node_name: str, state: dict, storage: Storage) -> None:
    """Reserve (AssumePodVolumes) and PreBind, committed as the API holds them afterwards."""
    bs: BindingState | None = state.get("volume_binding")
    pod_vols = bs.by_node.get(node_name) if bs is not None else None
    if pod_vols is None or are_pod_volumes_bound(pod, storage):
        return
    for pv, pvc in pod_vols.static:
        bind_volume(storage, _name(pv), pvc)
    for pvc in pod_vols.dynamic:
        updated = copy.deepcopy(storage.pvcs[_claim_key(pvc)])
        updated["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
        storage.pvcs[_claim_key(pvc)] = updated


def _claim_key(pvc: dict) -> str:
    return f"{_meta(pvc).get('namespace') or 'default'}/{_name(pvc)}"


def bind_volume(storage: Storage, pv_name: str, pvc: dict) -> None:
    """GetBindVolumeToClaim on the PV; the PV controller's binding on the claim."""
    pv = copy.deepcopy(storage.pvs[pv_name])
    claim = copy.deepcopy(storage.pvcs[_claim_key(pvc)])
    if not is_volume_bound_to_claim(pv, claim):
        pv["metadata"].setdefault("annotations", {}).setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    pv.setdefault("spec", {})["claimRef"] = {
        "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": _meta(claim).get("namespace") or "default",
        "name": _name(claim), "uid": _meta(claim).get("uid") or ""}
    claim.setdefault("spec", {})["volumeName"] = pv_name
    claim["metadata"].setdefault("annotations", {})[ANN_BIND_COMPLETED] = "yes"
    storage.pvs[pv_name] = pv
    storage.pvcs[_claim_key(claim)] = claim


# --- VolumeZone ------------------------------------------------------------------------------------

TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)


def label_zones_to_set(value: str) -> set[str] | None:
    """LabelZonesToSet: "__"-separated, trimmed; an empty element is an error (None)."""
    zones = set()
    for zone in value.split("__"):
        zone = zone.strip()
        if not zone:
            return None
        zones.add(zone)
    return zones


def pv_topologies(pv: dict) -> list[tuple[str, set[str]]]:
    out = []
    for key in TOPOLOGY_LABELS:
        if key in _labels(pv):
            zones = label_zones_to_set(_labels(pv)[key])
            if zones is not None:      # unparsable: the label is ignored
                out.append((key, zones))
    return out


def zone_pre_filter(pod: dict, storage: Storage, state: dict) -> PreFilterOutcome:
    topologies = []
    for vol in pod_volumes(pod):
        if vol.get("persistentVolumeClaim") is None:
            continue
        name = vol["persistentVolumeClaim"].get("claimName") or ""
        if not name:
            return PreFilterOutcome(status=Status(UU, ["PersistentVolumeClaim had no name"]))
        pvc, err = storage.get_pvc(pod_namespace(pod), name)
        if pvc is None:
            return PreFilterOutcome(status=Status(UU, [err]))
        pv_name = _spec(pvc).get("volumeName") or ""
        if not pv_name:
            class_name = claim_class(pvc)
            if not class_name:
                return PreFilterOutcome(status=Status(
                    UU, ["PersistentVolumeClaim had no pv name and storageClass name"]))
            sc = storage.classes.get(class_name)
            if sc is None:
                return PreFilterOutcome(status=Status(UU, [f'storageclass.storage.k8s.io "{class_name}" not found']))
            if class_binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER:
                continue
            return PreFilterOutcome(status=Status(UU, ["PersistentVolume had no name"]))
        pv = storage.pvs.get(pv_name)
        if pv is None:
            return PreFilterOutcome(status=Status(UU, [f'persistentvolume "{pv_name}" not found']))
        topologies += pv_topologies(pv)
    if not topologies:
        return PreFilterOutcome(skip=True)
    state["volume_zone"] = topologies
    return PreFilterOutcome()


def _to_ga_label(key: str) -> str:
    return {BETA_REGION: REGION, BETA_ZONE: ZONE}.get(key, key)


def zone_filter(pod: dict, ni, state: dict) -> Status | None:
    if not pod_volumes(pod):
        return None
    labels = _labels(ni.node)
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return None     # a node without zone labels: a single-zone cluster
    for key, zones in state["volume_zone"]:
        value = labels.get(key)
        if value is None:
            value = labels.get(_to_ga_label(key))
        if value is None or value not in zones:
            return Status(UU, [REASON_ZONE_CONFLICT])
    return None
