"""The volume plugins (semantics §3.7), over raw PVC/PV/StorageClass/CSINode/CSIDriver/
CSIStorageCapacity dicts: VolumeRestrictions, NodeVolumeLimits (CSI) and VolumeZone here;
VolumeBinding in ``volumebinding``, the listers and accessors they share in ``storage``.  The
entry points of all four plugins, ``Storage`` and ``STORAGE_KINDS`` are importable from here.

Written from kube-scheduler v1.34.1 plugins/volumerestrictions, plugins/nodevolumelimits
(csi.go, utils.go), plugins/volumezone, k8s.io/cloud-provider/volume/helpers (LabelZonesToSet)
and k8s.io/csi-translation-lib (GCE PD, AWS EBS and Cinder; Azure Disk only as a StorageClass
provisioner).  Plain loops, recomputed for every pod and node.

NodeVolumeLimits translates in-tree GCE PD, AWS EBS, Azure Disk and Cinder volumes on every
node with a CSINode object: its isCSIMigrationOn asks the
``storage.alpha.kubernetes.io/migrated-plugins`` annotation for Portworx only (upstream).  An
RBD volume without pool uses ``rbd`` (API defaulting).
"""
from __future__ import annotations

import urllib.parse

from .interpod import pod_namespace
from .plugins import ERROR, U, UU, PreFilterOutcome, Status
from .storage import (
    STORAGE_KINDS, WAIT_FOR_FIRST_CONSUMER, Storage, annotations_of, claim_class, class_binding_mode, labels_of,
    meta_of, name_of, pod_volumes, spec_of, volume_claim, volume_is_for_pod)
from .volumebinding import binding_filter, binding_pre_filter, reserve

__all__ = [
    "STORAGE_KINDS", "Storage", "binding_filter", "binding_pre_filter", "limits_filter", "limits_pre_filter",
    "reserve", "restrictions_filter", "restrictions_pre_filter", "zone_filter", "zone_pre_filter"]

ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                        "already in-use by another pod")
REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
REASON_ZONE_CONFLICT = "node(s) had no available volume zone"

#: CSILimits.randomVolumeIDPrefix: random per plugin instance, only ever compared for equality
RANDOM_VOLUME_ID_PREFIX = "reference0volume0id0prefix000000"


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
        if READ_WRITE_ONCE_POD in (spec_of(pvc).get("accessModes") or []):
            rwop.add(name_of(pvc))
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
    migrated = annotations_of(csi_node).get(ANN_MIGRATED_PLUGINS) or ""
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
    spec = spec_of(pv)
    src = in_tree_source(spec)
    if src == "awsElasticBlockStore":
        handle = ebs_volume_id(spec[src].get("volumeID") or "")
        return (AWS_EBS_DRIVER, handle) if handle is not None else None
    if src == "cinder":
        return IN_TREE_PLUGINS[src][1], spec[src].get("volumeID") or ""
    if src != "gcePersistentDisk":
        raise NotImplementedError(f"CSI translation of {src} PersistentVolumes")
    pd_name = spec[src].get("pdName") or ""
    zones_label = labels_of(pv).get(BETA_ZONE) or labels_of(pv).get(ZONE) or ""
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
    limits: dict = {}
    if csi_node is None:
        return limits
    for driver in spec_of(csi_node).get("drivers") or []:
        count = (driver.get("allocatable") or {}).get("count")
        if count is not None:
            limits[driver.get("name") or ""] = int(count)
    return limits


def csi_driver_info_from_class(csi_node: dict | None, pvc: dict, storage: Storage) -> tuple[str, str]:
    """getCSIDriverInfoFromSC."""
    sc = storage.classes.get(claim_class(pvc)) if claim_class(pvc) else None
    if sc is None:
        return "", ""
    handle = f"{RANDOM_VOLUME_ID_PREFIX}-{meta_of(pvc).get('namespace') or 'default'}/{name_of(pvc)}"
    provisioner = sc.get("provisioner") or ""
    if provisioner in CSI_NAME_OF_PLUGIN:
        if not is_csi_migration_on(csi_node, provisioner):
            return "", ""
        return CSI_NAME_OF_PLUGIN[provisioner], handle
    return provisioner, handle


def csi_driver_info(csi_node: dict | None, pvc: dict, storage: Storage) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, volume handle) of a claim; ("", "") = not counted."""
    pv = storage.pvs.get(spec_of(pvc).get("volumeName") or "")
    if pv is None:
        return csi_driver_info_from_class(csi_node, pvc, storage)
    csi = spec_of(pv).get("csi")
    if csi is not None:
        return csi.get("driver") or "", csi.get("volumeHandle") or ""
    src = in_tree_source(spec_of(pv))
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
        err: str | None
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
        if key in labels_of(pv):
            zones = label_zones_to_set(labels_of(pv)[key])
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
        err: str | None
        pvc, err = storage.get_pvc(pod_namespace(pod), name)
        if pvc is None:
            return PreFilterOutcome(status=Status(UU, [err]))
        pv_name = spec_of(pvc).get("volumeName") or ""
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
    labels = labels_of(ni.node)
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return None     # a node without zone labels: a single-zone cluster
    for key, zones in state["volume_zone"]:
        value = labels.get(key)
        if value is None:
            value = labels.get(_to_ga_label(key))
        if value is None or value not in zones:
            return Status(UU, [REASON_ZONE_CONFLICT])
    return None
