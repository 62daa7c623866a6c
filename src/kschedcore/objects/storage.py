"""Storage objects the volume plugins read: PersistentVolumeClaim, PersistentVolume,
StorageClass, CSINode, CSIDriver and CSIStorageCapacity, validated once when read.

Field meanings follow k8s.io/api core/v1 and storage/v1, with the API server's defaulting
(StorageClass volumeBindingMode Immediate, volumeMode Filesystem) and the helpers of
k8s.io/component-helpers/storage/volume (GetPersistentVolume[Claim]Class: the beta annotation
wins over spec.storageClassName).
"""
import urllib.parse
from dataclasses import dataclass, field, replace

from ..errors import ObjectError, UnsupportedError
from . import validation as apival
from .fields import FieldReader, metadata_name
from .node_selector import Requirement, SelectorReader, SelectorTerm, requirement_parses
from .pod_affinity import parse_label_selector
from .quantity import parse_quantity

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED_ANNOTATION = "pv.kubernetes.io/bind-completed"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")

STORAGE_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity")


@dataclass(slots=True, eq=False)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str
    storage_class: str            # "" = no class requested
    volume_name: str
    annotations: dict
    access_modes: tuple
    request_nanos: int            # spec.resources.requests.storage in nano-units (0 if unset)
    has_request: bool
    request_bytes: int            # Quantity.Value() of the request
    selector: object              # LabelSelector or None
    volume_mode: str
    attributes_class: str
    phase: str
    terminating: bool
    controller_uid: str           # uid of the controlling ownerReference ("" if none)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def fully_bound(self) -> bool:
        """isPVCFullyBound: a volume name and the PV controller's bind-completed annotation."""
        return bool(self.volume_name) and BIND_COMPLETED_ANNOTATION in self.annotations


@dataclass(slots=True, eq=False)
class PersistentVolume:
    name: str
    labels: dict
    storage_class: str
    capacity_nanos: int           # spec.capacity.storage in nano-units (0 if unset)
    access_modes: tuple
    volume_mode: str
    attributes_class: str
    claim_ref: tuple | None       # (namespace, name, uid)
    phase: str
    terminating: bool
    node_affinity: tuple | None   # required NodeSelectorTerms (SelectorTerm, ...), None: no constraint
    #: (driver, volumeHandle) as NodeVolumeLimits sees it: spec.csi, else an in-tree source
    #: translated to CSI (csi-translation-lib); None: not attachable
    csi: tuple | None
    #: the in-tree plugin of its source whose migration VolumeBinding honours per node (a CSINode
    #: listing it as migrated), and its required terms once translated to CSI topology
    #: (translateTopologyFromInTreeToCSI): None no constraint, a str the translation's error
    in_tree: str = ""
    csi_affinity: object = None
    fits: object = field(default=None, repr=False)   # VolumeBinding's cached node-affinity mask

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """IsVolumeBoundToClaim: the claimRef names the claim (and its uid, when set)."""
        ref = self.claim_ref
        return (ref is not None and ref[0] == claim.namespace and ref[1] == claim.name
                and (not ref[2] or ref[2] == claim.uid))


@dataclass(slots=True, eq=False)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str
    #: allowedTopologies: ((key, frozenset(values)), ...) per term; () = every node
    allowed_topologies: tuple


@dataclass(slots=True, eq=False)
class CSINode:
    name: str
    limits: dict                  # driver -> allocatable.count
    #: in-tree plugins the kubelet lists as migrated (storage.alpha.kubernetes.io/migrated-plugins)
    migrated: frozenset = frozenset()


@dataclass(slots=True, eq=False)
class CSIDriver:
    name: str
    storage_capacity: bool


@dataclass(slots=True, eq=False)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str
    limit_bytes: int | None       # maximumVolumeSize, else capacity (Value()); None: neither
    node_topology: object         # LabelSelector or None (None: no node has access)


@dataclass(slots=True, eq=False)
class StorageObjects:
    """The storage objects of a cluster, by key."""
    claims: dict = field(default_factory=dict)       # "ns/name" -> PersistentVolumeClaim
    volumes: dict = field(default_factory=dict)      # name -> PersistentVolume
    classes: dict = field(default_factory=dict)      # name -> StorageClass
    csi_nodes: dict = field(default_factory=dict)    # node name -> CSINode
    csi_drivers: dict = field(default_factory=dict)  # name -> CSIDriver
    capacities: list = field(default_factory=list)   # [CSIStorageCapacity]


def _meta(kind, raw, index_hint, namespaced):
    ns, name = metadata_name(kind, raw, index_hint)
    if namespaced:
        ns = ns or "default"
    r = FieldReader(f"{kind} {ns + '/' if namespaced else ''}{name}")
    meta = raw["metadata"]
    apival.check_meta(r.obj, ns if namespaced else None, name, meta)
    return r, ns, name, meta


def _access_modes(r, spec, path):
    modes = tuple(r.string_list(spec, "accessModes", path))
    for i, m in enumerate(modes):
        if m not in ACCESS_MODES:
            r.fail(f"{path}[{i}]", f'unsupported access mode "{m}"')
    return modes


def _volume_mode(r, spec, path):
    mode = r.string(spec, "volumeMode", path) or "Filesystem"
    if mode not in VOLUME_MODES:
        r.fail(path, f'unsupported volume mode "{mode}"')
    return mode


def _storage(r, d, key, path):
    """(nanos, Value(), present) of a ResourceList's `storage` entry."""
    q = r.quantities(d, key, path).get("storage")
    if q is None:
        return 0, 0, False
    return q.nanos, q.value(), True


def _controller_uid(r, meta):
    for i, ref in enumerate(r.seq(meta, "ownerReferences", "metadata.ownerReferences")):
        ref = r.item(ref, f"metadata.ownerReferences[{i}]")
        if r.boolean(ref, "controller", f"metadata.ownerReferences[{i}].controller"):
            return r.string(ref, "uid", f"metadata.ownerReferences[{i}].uid")
    return ""


def parse_claim(raw, index_hint: str = "") -> PersistentVolumeClaim:
    r, ns, name, meta = _meta("persistentvolumeclaim", raw, index_hint, True)
    spec = r.mapping(raw, "spec", "spec")
    annotations = r.string_map(meta, "annotations", "metadata.annotations")
    cls = annotations.get(BETA_CLASS_ANNOTATION)
    if cls is None:
        cls = r.string(spec, "storageClassName", "spec.storageClassName")
    nanos, value, present = _storage(r, r.mapping(spec, "resources", "spec.resources"), "requests",
                                     "spec.resources.requests")
    return PersistentVolumeClaim(
        ns, name, r.string(meta, "uid", "metadata.uid"), cls, r.string(spec, "volumeName", "spec.volumeName"),
        annotations, _access_modes(r, spec, "spec.accessModes"), nanos, present, value,
        parse_label_selector(r, spec.get("selector"), "spec.selector"),
        _volume_mode(r, spec, "spec.volumeMode"),
        r.string(spec, "volumeAttributesClassName", "spec.volumeAttributesClassName"),
        r.string(r.mapping(raw, "status", "status"), "phase", "status.phase") or "Pending",
        meta.get("deletionTimestamp") is not None, _controller_uid(r, meta))


def parse_volume(raw, index_hint: str = "") -> PersistentVolume:
    r, _, name, meta = _meta("persistentvolume", raw, index_hint, False)
    r = SelectorReader(r.obj)
    spec = r.mapping(raw, "spec", "spec")
    annotations = r.string_map(meta, "annotations", "metadata.annotations")
    cls = annotations.get(BETA_CLASS_ANNOTATION)
    if cls is None:
        cls = r.string(spec, "storageClassName", "spec.storageClassName")
    nanos, _, _ = _storage(r, spec, "capacity", "spec.capacity")
    ref = None
    if spec.get("claimRef") is not None:
        c = r.mapping(spec, "claimRef", "spec.claimRef")
        ref = (r.string(c, "namespace", "spec.claimRef.namespace"), r.string(c, "name", "spec.claimRef.name"),
               r.string(c, "uid", "spec.claimRef.uid"))
    affinity = None
    na = r.mapping(spec, "nodeAffinity", "spec.nodeAffinity")
    req = na.get("required")
    if req is not None:
        path = "spec.nodeAffinity.required"
        req = r.item(req, path)
        affinity = tuple(r.term(t, f"{path}.nodeSelectorTerms[{i}]")
                         for i, t in enumerate(r.seq(req, "nodeSelectorTerms", path + ".nodeSelectorTerms")))
    labels = r.string_map(meta, "labels", "metadata.labels")
    csi = None
    if spec.get("csi") is not None:
        c = r.mapping(spec, "csi", "spec.csi")
        csi = (r.string(c, "driver", "spec.csi.driver"), r.string(c, "volumeHandle", "spec.csi.volumeHandle"))
        csi = csi if csi[0] and csi[1] else None
    else:
        csi = translated_pv(r, spec, labels)
    plugin = next((p for key, p in TOPOLOGY_PLUGINS.items() if spec.get(key) is not None), "")
    # The PV controller marks an unclaimed volume Available as soon as it sees it.
    phase = r.string(r.mapping(raw, "status", "status"), "phase", "status.phase") or (
        "Available" if ref is None else "Bound")
    return PersistentVolume(
        name, labels, cls, nanos,
        _access_modes(r, spec, "spec.accessModes"), _volume_mode(r, spec, "spec.volumeMode"),
        r.string(spec, "volumeAttributesClassName", "spec.volumeAttributesClassName"), ref, phase,
        meta.get("deletionTimestamp") is not None, affinity, csi, plugin,
        _csi_affinity(plugin, csi, affinity, labels) if plugin else None)


def parse_storage_class(raw, index_hint: str = "") -> StorageClass:
    r, _, name, _ = _meta("storageclass", raw, index_hint, False)
    mode = r.string(raw, "volumeBindingMode", "volumeBindingMode") or "Immediate"
    if mode not in BINDING_MODES:
        r.fail("volumeBindingMode", f'unsupported binding mode "{mode}"')
    terms = []
    for i, t in enumerate(r.seq(raw, "allowedTopologies", "allowedTopologies")):
        path = f"allowedTopologies[{i}].matchLabelExpressions"
        exprs = []
        for j, e in enumerate(r.seq(r.item(t, f"allowedTopologies[{i}]"), "matchLabelExpressions", path)):
            e = r.item(e, f"{path}[{j}]")
            exprs.append((r.string(e, "key", f"{path}[{j}].key"),
                          frozenset(r.string_list(e, "values", f"{path}[{j}].values"))))
        terms.append(tuple(exprs))
    return StorageClass(name, r.string(raw, "provisioner", "provisioner"), mode, tuple(terms))


def parse_csi_node(raw, index_hint: str = "") -> CSINode:
    r, _, name, meta = _meta("csinode", raw, index_hint, False)
    listed = r.string_map(meta, "annotations", "metadata.annotations").get(MIGRATED_PLUGINS_ANNOTATION)
    migrated = frozenset(listed.split(",")) if listed else frozenset()
    limits = {}
    drivers = r.seq(r.mapping(raw, "spec", "spec"), "drivers", "spec.drivers")
    for i, d in enumerate(drivers):
        path = f"spec.drivers[{i}]"
        d = r.item(d, path)
        driver = r.string(d, "name", path + ".name")
        alloc = r.mapping(d, "allocatable", path + ".allocatable")
        if alloc.get("count") is not None:
            limits[driver] = r.integer(alloc, "count", path + ".allocatable.count")
    return CSINode(name, limits, migrated)


def parse_csi_driver(raw, index_hint: str = "") -> CSIDriver:
    r, _, name, _ = _meta("csidriver", raw, index_hint, False)
    spec = r.mapping(raw, "spec", "spec")
    return CSIDriver(name, r.boolean(spec, "storageCapacity", "spec.storageCapacity"))


def parse_capacity(raw, index_hint: str = "") -> CSIStorageCapacity:
    r, ns, name, _ = _meta("csistoragecapacity", raw, index_hint, True)
    limit = None
    for key in ("maximumVolumeSize", "capacity"):       # volumeLimit: the maximum size wins
        if raw.get(key) is not None:
            limit = parse_quantity(r.string(raw, key, key), r.obj, key).value()
            break
    return CSIStorageCapacity(ns, name, r.string(raw, "storageClassName", "storageClassName"), limit,
                              parse_label_selector(r, raw.get("nodeTopology"), "nodeTopology"))


PARSERS = {"PersistentVolumeClaim": parse_claim, "PersistentVolume": parse_volume,
           "StorageClass": parse_storage_class, "CSINode": parse_csi_node, "CSIDriver": parse_csi_driver,
           "CSIStorageCapacity": parse_capacity}


def parse_storage_object(raw, index_hint: str = ""):
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if kind not in PARSERS:
        raise ObjectError(f"object {index_hint}".strip(), "kind", f"expected one of {', '.join(STORAGE_KINDS)}")
    return PARSERS[kind](raw, index_hint)


# ---- CSI translation (csi-translation-lib), as NodeVolumeLimits uses it -------------------------
# NodeVolumeLimits' isCSIMigrationOn is true for GCE PD, AWS EBS, Azure Disk and Cinder whenever
# the node has a CSINode object (the migrated-plugins annotation is only asked for Portworx), and
# a node without one has no limits: so these volumes always count under their CSI driver.
GCE_PD_DRIVER, AWS_EBS_DRIVER, CINDER_DRIVER = "pd.csi.storage.gke.io", "ebs.csi.aws.com", "cinder.csi.openstack.org"
#: in-tree provisioner -> CSI driver counted for its claims (GetCSINameFromInTreeName); None:
#: a migratable plugin whose migration is off (isCSIMigrationOn), so its claims never count
IN_TREE_PROVISIONERS = {
    "kubernetes.io/gce-pd": GCE_PD_DRIVER, "kubernetes.io/aws-ebs": AWS_EBS_DRIVER,
    "kubernetes.io/cinder": CINDER_DRIVER, "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": None, "kubernetes.io/vsphere-volume": None, "kubernetes.io/portworx-volume": None,
}
UNSPECIFIED = "UNSPECIFIED"


def ebs_volume_id(kubernetes_id: str) -> str | None:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<vol-id> or a bare ID; None if invalid."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urllib.parse.urlparse(kubernetes_id).path.strip("/")
    return aws_id if aws_id.startswith("vol-") and "/" not in aws_id else None


def _gce_pv_handle(pd_name: str, labels: dict) -> str | None:
    """The GCE PD volume ID from the PV's zone label: zonal, regional (one region), unspecified."""
    zones = (labels.get("failure-domain.beta.kubernetes.io/zone") or labels.get("topology.kubernetes.io/zone")
             or "").split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        regions = set()
        for zone in zones:
            parts = zone.split("-")
            if len(parts) != 3:
                return None
            regions.add("-".join(parts[:2]))
        return f"projects/{UNSPECIFIED}/regions/{regions.pop()}/disks/{pd_name}" if len(regions) == 1 else None
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def translated_pv(r, spec, labels) -> tuple | None:
    """(driver, volume handle) of an in-tree PV source (TranslateInTreePVToCSI); None when it
    does not count (not migratable, migration off, or a translation error)."""
    if spec.get("gcePersistentDisk") is not None:
        pd = r.string(r.mapping(spec, "gcePersistentDisk", "spec.gcePersistentDisk"), "pdName",
                      "spec.gcePersistentDisk.pdName")
        handle = _gce_pv_handle(pd, labels)
        return (GCE_PD_DRIVER, handle) if handle else None
    if spec.get("awsElasticBlockStore") is not None:
        handle = ebs_volume_id(r.string(r.mapping(spec, "awsElasticBlockStore", "spec.awsElasticBlockStore"),
                                        "volumeID", "spec.awsElasticBlockStore.volumeID"))
        return (AWS_EBS_DRIVER, handle) if handle else None
    if spec.get("cinder") is not None:
        handle = r.string(r.mapping(spec, "cinder", "spec.cinder"), "volumeID", "spec.cinder.volumeID")
        return (CINDER_DRIVER, handle) if handle else None
    if spec.get("azureDisk") is not None:
        raise UnsupportedError(r.obj, "spec.azureDisk", "CSI translation of Azure Disk volumes (NodeVolumeLimits) "
                                                        "is not implemented yet")
    return None


def _translated_inline(r, v, path) -> tuple | None:
    """(driver, volume handle) of an inline in-tree volume (TranslateInTreeInlineVolumeToCSI)."""
    if v.get("gcePersistentDisk") is not None:
        pd = r.string(r.mapping(v, "gcePersistentDisk", path + ".gcePersistentDisk"), "pdName",
                      path + ".gcePersistentDisk.pdName")
        return GCE_PD_DRIVER, f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd}"
    if v.get("awsElasticBlockStore") is not None:
        p = path + ".awsElasticBlockStore.volumeID"
        volume_id = r.string(r.mapping(v, "awsElasticBlockStore", path + ".awsElasticBlockStore"), "volumeID", p)
        handle = ebs_volume_id(volume_id)
        if handle is None:     # NodeVolumeLimits' Filter would fail with an Error
            raise UnsupportedError(r.obj, p, f'AWS volume ID "{volume_id}" that CSI translation cannot parse')
        return AWS_EBS_DRIVER, handle
    if v.get("cinder") is not None:
        return CINDER_DRIVER, r.string(r.mapping(v, "cinder", path + ".cinder"), "volumeID", path + ".cinder.volumeID")
    if v.get("azureDisk") is not None:
        raise UnsupportedError(r.obj, path + ".azureDisk", "CSI translation of Azure Disk volumes (NodeVolumeLimits) "
                                                           "is not implemented yet")
    return None


#: in-tree PV sources whose CSI translation rewrites topology (VolumeBinding's checkBoundClaims
#: translates a bound PV on nodes that list the plugin as migrated): plugin and CSI zone key
TOPOLOGY_PLUGINS = {"gcePersistentDisk": "kubernetes.io/gce-pd", "awsElasticBlockStore": "kubernetes.io/aws-ebs",
                    "cinder": "kubernetes.io/cinder"}
CSI_ZONE_KEYS = {"kubernetes.io/gce-pd": "topology.gke.io/zone",
                 "kubernetes.io/aws-ebs": "topology.ebs.csi.aws.com/zone",
                 "kubernetes.io/cinder": "topology.cinder.csi.openstack.org/zone"}
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"
_GA_ZONE, _GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
_BETA_ZONE, _BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"


def _csi_affinity(plugin, csi, terms, labels):
    """The PV's required terms after TranslateInTreePVToCSI (translateTopologyFromInTreeToCSI):
    the zone key of its affinity becomes the driver's, else its zone label becomes a term; a
    beta region key becomes GA. A str: the error translation returns (VolumeBinding's Filter
    then errors on the nodes that list the plugin)."""
    if csi is None and plugin != "kubernetes.io/cinder":   # EBS volume ID, GCE PD zones' region
        return "the in-tree volume cannot be translated to CSI"
    exprs = [r for t in terms or () for r in t.expressions]
    keys = {r.key for r in exprs}
    if _GA_ZONE in keys:
        zone, region = _GA_ZONE, _GA_REGION
    elif _BETA_ZONE in keys:
        zone, region = _BETA_ZONE, _BETA_REGION
    elif _BETA_ZONE in labels and _GA_ZONE not in labels:
        zone, region = _BETA_ZONE, _BETA_REGION
    else:
        zone, region = _GA_ZONE, _GA_REGION
    renames = {}
    if any(r.key == zone and r.values for r in exprs):
        renames[zone] = CSI_ZONE_KEYS[plugin]
    if region == _BETA_REGION and any(r.key == region and r.values for r in exprs):
        renames[region] = _GA_REGION
    out = tuple(replace(t, expressions=tuple(replace(r, key=renames.get(r.key, r.key)) for r in t.expressions))
                for t in terms) if terms else terms
    if zone not in renames and zone in labels:
        zones = sorted({z.strip() for z in labels[zone].split("__") if z.strip()})
        if zones:        # addTopology: the requirement joins every term (one term if none)
            req = Requirement(CSI_ZONE_KEYS[plugin], "In", tuple(zones))
            ok = requirement_parses(req.key, "In", req.values)
            out = (tuple(replace(t, expressions=t.expressions + (req,), parses=t.parses and ok) for t in out)
                   if out else (SelectorTerm((req,), (), ok),))
    return out


def owner_uid(pod) -> str:
    """The pod's metadata.uid as written (IsControlledBy compares it with the claim's owner)."""
    return (pod.raw.get("metadata") or {}).get("uid") or ""


# ---- a pod's volumes ----------------------------------------------------------------------------
#: in-tree sources csi-translation-lib can migrate (IsInlineMigratable)
MIGRATABLE_INLINE = ("awsElasticBlockStore", "gcePersistentDisk", "cinder", "azureDisk", "azureFile",
                     "vsphereVolume", "portworxVolume")


@dataclass(frozen=True, slots=True)
class PodVolume:
    name: str
    claim: str            # PVC name: persistentVolumeClaim.claimName, or <pod>-<volume> (ephemeral)
    ephemeral: bool
    migratable: bool      # an in-tree source NodeVolumeLimits looks at
    csi_id: tuple | None  # (driver, volume handle) it counts as (translated), None: never counted
    #: VolumeRestrictions identity: ("gce", pdName, ro) | ("aws", volumeID) | ("iscsi", iqn, ro)
    #: | ("rbd", frozenset(monitors), pool, image, ro) | None
    restriction: tuple | None
    portworx: bool = False    # an in-tree Portworx source (counted only where migrated)


def parse_pod_volumes(r, spec, pod_name: str) -> tuple:
    out = []
    for i, v in enumerate(r.seq(spec, "volumes", "spec.volumes")):
        path = f"spec.volumes[{i}]"
        v = r.item(v, path)
        name = r.string(v, "name", path + ".name")
        claim, ephemeral = "", False
        if v.get("persistentVolumeClaim") is not None:
            src = r.mapping(v, "persistentVolumeClaim", path + ".persistentVolumeClaim")
            claim = r.string(src, "claimName", path + ".persistentVolumeClaim.claimName")
            if not claim:
                r.fail(path + ".persistentVolumeClaim.claimName", "required value")
        elif v.get("ephemeral") is not None:
            claim, ephemeral = f"{pod_name}-{name}", True
        vol = PodVolume(name, claim, ephemeral, any(v.get(k) is not None for k in MIGRATABLE_INLINE),
                        _translated_inline(r, v, path), _restriction(r, v, path), v.get("portworxVolume") is not None)
        if vol.claim or vol.migratable or vol.csi_id is not None or vol.restriction is not None:
            out.append(vol)
    # secrets, configMaps, projected tokens, emptyDirs...: no volume plugin looks at them (their
    # PreFilters return Skip), so the pod is one without volumes (node-local, its spec memoised)
    return tuple(out)


def _restriction(r, v, path):
    def src(kind):
        return r.mapping(v, kind, f"{path}.{kind}")

    if v.get("gcePersistentDisk") is not None:
        s = src("gcePersistentDisk")
        return ("gce", r.string(s, "pdName", path + ".gcePersistentDisk.pdName"),
                r.boolean(s, "readOnly", path + ".gcePersistentDisk.readOnly"))
    if v.get("awsElasticBlockStore") is not None:
        return ("aws", r.string(src("awsElasticBlockStore"), "volumeID", path + ".awsElasticBlockStore.volumeID"))
    if v.get("iscsi") is not None:
        s = src("iscsi")
        return ("iscsi", r.string(s, "iqn", path + ".iscsi.iqn"), r.boolean(s, "readOnly", path + ".iscsi.readOnly"))
    if v.get("rbd") is not None:
        s = src("rbd")
        p = path + ".rbd"
        return ("rbd", frozenset(r.string_list(s, "monitors", p + ".monitors")),
                r.string(s, "pool", p + ".pool") or "rbd",        # API default
                r.string(s, "image", p + ".image"), r.boolean(s, "readOnly", p + ".readOnly"))
    return None
