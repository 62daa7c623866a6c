"""Hypothesis strategies for the volume plugins: small clusters with StorageClasses, PVs, PVCs,
CSINodes, CSIDrivers, CSIStorageCapacities, bound pods and pending pods using them.

Small vocabularies on purpose (three zones, a handful of PV sizes, disks, drivers), so that
claims, volumes, zones and disks collide often and every plugin has something to decide.
Everything is a plain JSON-like dict, as the API server would hand it over (defaulted fields
sometimes left out).
"""
from hypothesis import strategies as st

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"

#: {locale}-{region}-{zone}, as GCE PD translation wants them (regional PDs span one region)
ZONES = ["us-east1-a", "us-east1-b", "us-west1-a"]
REGIONS = {"us-east1-a": "us-east1", "us-east1-b": "us-east1", "us-west1-a": "us-west1"}
NAMESPACES = ["default"] * 5 + ["team-a"]
CSI_DRIVERS = ["csi.a.example.com", "csi.b.example.com"]
#: drivers in-tree GCE PD, AWS EBS and Cinder volumes translate to (NodeVolumeLimits)
MIGRATED_DRIVERS = ["pd.csi.storage.gke.io", "ebs.csi.aws.com", "cinder.csi.openstack.org"]
#: in-tree provisioners: GCE PD and AWS EBS claims count under their CSI driver, Azure File never
PROVISIONERS = CSI_DRIVERS * 2 + ["kubernetes.io/no-provisioner", "kubernetes.io/gce-pd", "kubernetes.io/aws-ebs",
                                  "kubernetes.io/azure-file"]
SIZES = ["500Mi", "1Gi", "1Gi", "2Gi", "5Gi", "10Gi", "1500Mi"]
REQUESTS = ["500Mi", "1Gi", "1Gi", "2Gi", "3Gi", "1073741824"]
ACCESS_MODES = [["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadWriteOncePod"], ["ReadOnlyMany"],
                ["ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteMany"]]
PV_ACCESS_MODES = [["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteOncePod"],
                   ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"], ["ReadOnlyMany"]]
TIERS = ["gold", "silver"]
PDS = ["pd-1", "pd-2", "pd-3"]
EBS_IDS = ["vol-1", "vol-2", "aws://us-east-1a/vol-1"]
IQNS = ["iqn.2001-04.com.example:a", "iqn.2001-04.com.example:b"]
MONITORS = ["10.0.0.1:6789", "10.0.0.2:6789", "10.0.0.3:6789"]
RBD_POOLS = [None, "rbd", "other"]
RBD_IMAGES = ["img-1", "img-2"]
VACS = [None, None, None, "gold-iops"]
TIMESTAMP = "2025-01-01T00:00:00Z"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
#: what a kubelet of v1.31 on writes there (VolumeBinding then checks bound in-tree PVs translated)
KUBELET_MIGRATED = ("kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,"
                    "kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume")

#: switches for inputs that once exposed Scheduler bugs, so a bisecting developer can leave one out
#: CSINode limits for the drivers in-tree GCE PD / AWS EBS / Cinder volumes translate to
#: (NodeVolumeLimits counts those on any node with a CSINode object, annotation or not)
GENERATE_MIGRATED_DRIVER_LIMITS = True
#: distinct PVs with the same CSI volume handle (and claims on one PV): one attached volume
GENERATE_SHARED_HANDLES = True
#: a bound pod whose ephemeral claim is not controlled by it: NodeVolumeLimits' Filter errors
GENERATE_FOREIGN_EPHEMERAL_CLAIMS_ON_NODES = True


def _drop_none(d):
    return {k: v for k, v in d.items() if v is not None}


# ---- nodes -------------------------------------------------------------------------------------

@st.composite
def node(draw, name):
    labels = {HOSTNAME: name}
    zone = draw(st.sampled_from(ZONES))
    style = draw(st.sampled_from(["ga", "ga", "ga", "beta", "both", "none"]))
    if style in ("ga", "both"):
        labels[ZONE] = zone
        if draw(st.booleans()):
            labels[REGION] = REGIONS[zone]
    if style in ("beta", "both"):
        labels[BETA_ZONE] = zone
        if draw(st.booleans()):
            labels[BETA_REGION] = REGIONS[zone]
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


# ---- storage objects ---------------------------------------------------------------------------

@st.composite
def allowed_topologies(draw, node_names):
    kind = draw(st.sampled_from([None, None, "zone", "host", "two"]))
    if kind is None:
        return None
    zone_term = {"matchLabelExpressions": [{"key": ZONE, "values": draw(st.lists(st.sampled_from(ZONES), min_size=1,
                                                                                   max_size=2, unique=True))}]}
    host_term = {"matchLabelExpressions": [{"key": HOSTNAME, "values": draw(st.lists(
        st.sampled_from(node_names), min_size=1, max_size=3, unique=True))}]}
    return {"zone": [zone_term], "host": [host_term], "two": [zone_term, host_term]}[kind]


@st.composite
def storage_class(draw, name, node_names):
    return _drop_none({
        "kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": name},
        "provisioner": draw(st.sampled_from(PROVISIONERS)),
        "volumeBindingMode": draw(st.sampled_from(["WaitForFirstConsumer"] * 5 + ["Immediate", None])),
        "allowedTopologies": draw(allowed_topologies(node_names)),
    })


@st.composite
def pv_node_affinity(draw, node_names):
    kind = draw(st.sampled_from([None, None, "host", "zone", "zone-notin", "fields"]))
    if kind is None:
        return None
    if kind == "host":
        expr = {"key": HOSTNAME, "operator": "In",
                "values": draw(st.lists(st.sampled_from(node_names), min_size=1, max_size=2, unique=True))}
    elif kind == "zone":
        expr = {"key": ZONE, "operator": "In", "values": [draw(st.sampled_from(ZONES))]}
    elif kind == "zone-notin":
        expr = {"key": ZONE, "operator": "NotIn", "values": [draw(st.sampled_from(ZONES))]}
    else:   # CheckNodeAffinity sees a node without a name: matchFields are not checked
        return {"required": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [draw(st.sampled_from(node_names))]}]}]}}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}


@st.composite
def pv_zone_labels(draw):
    labels = {}
    kind = draw(st.sampled_from([None, "ga", "ga", "beta", "multi", "region", "bad"]))
    if kind == "ga":
        labels[ZONE] = draw(st.sampled_from(ZONES))
    elif kind == "beta":
        labels[BETA_ZONE] = draw(st.sampled_from(ZONES))
    elif kind == "multi":
        labels[draw(st.sampled_from([ZONE, BETA_ZONE]))] = "__".join(
            draw(st.lists(st.sampled_from(ZONES), min_size=2, max_size=3, unique=True)))
    elif kind == "region":
        labels[draw(st.sampled_from([REGION, BETA_REGION]))] = draw(st.sampled_from(["us-east1", "us-west1"]))
    elif kind == "bad":     # an empty element: LabelZonesToSet fails, VolumeZone ignores the label
        # (a valid label value: the API server refuses one that ends in "__")
        labels[ZONE] = "____".join(draw(st.lists(st.sampled_from(ZONES), min_size=2, max_size=2)))
    return labels


@st.composite
def pv_source(draw, name):
    kind = draw(st.sampled_from(["csi", "csi", "csi", "gce", "aws", "cinder", "hostPath"]))
    if kind == "csi":
        return {"csi": {"driver": draw(st.sampled_from(CSI_DRIVERS)),
                        "volumeHandle": draw(st.sampled_from([f"h-{name}", f"h-{name}"]
                                                             + (["h-shared"] if GENERATE_SHARED_HANDLES else [])))}}
    if kind == "gce":
        return {"gcePersistentDisk": {"pdName": draw(st.sampled_from(PDS))}}
    if kind == "aws":
        return {"awsElasticBlockStore": {"volumeID": draw(st.sampled_from(EBS_IDS))}}
    if kind == "cinder":
        return {"cinder": {"volumeID": draw(st.sampled_from(["c-1", "c-2"]))}}
    return {"hostPath": {"path": f"/data/{name}"}}


@st.composite
def persistent_volume(draw, name, classes, node_names):
    labels = draw(pv_zone_labels())
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(TIERS))
    meta = {"name": name, "labels": labels}
    cls = draw(st.sampled_from(classes + ["", "sc-missing"]))
    spec = {"capacity": {"storage": draw(st.sampled_from(SIZES))},
            "accessModes": draw(st.sampled_from(PV_ACCESS_MODES)), **draw(pv_source(name))}
    if draw(st.integers(0, 9)) == 9:     # rare values last: shrinking goes toward 0
        meta["annotations"] = {BETA_CLASS: cls}
    else:
        spec["storageClassName"] = cls
    spec.update(_drop_none({
        "volumeMode": draw(st.sampled_from([None, None, "Filesystem", "Block"])),
        "nodeAffinity": draw(pv_node_affinity(node_names)),
        "volumeAttributesClassName": draw(st.sampled_from(VACS)),
    }))
    if draw(st.integers(0, 19)) == 19:
        meta["deletionTimestamp"] = TIMESTAMP
    pv = {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": meta, "spec": spec}
    phase = draw(st.sampled_from([None, None, None, "Available", "Bound", "Released"]))
    if phase:
        pv["status"] = {"phase": phase}
    return pv


@st.composite
def claim_selector(draw):
    kind = draw(st.sampled_from([None, None, None, None, "labels", "exprs", "empty"]))
    if kind == "labels":
        return {"matchLabels": {"tier": draw(st.sampled_from(TIERS))}}
    if kind == "exprs":
        return {"matchExpressions": [{"key": "tier", "operator": draw(st.sampled_from(["In", "NotIn"])),
                                      "values": [draw(st.sampled_from(TIERS))]}]}
    return {} if kind == "empty" else None


@st.composite
def claim_spec(draw, classes):
    spec = {"accessModes": draw(st.sampled_from(ACCESS_MODES))}
    request = draw(st.sampled_from(REQUESTS + [None]))
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    spec.update(_drop_none({
        "storageClassName": draw(st.sampled_from(["", None, "sc-missing"]) if draw(st.integers(0, 9)) == 9
                                 else st.sampled_from(classes)),
        "volumeMode": draw(st.sampled_from([None, None, "Filesystem", "Block"])),
        "selector": draw(claim_selector()),
        "volumeAttributesClassName": draw(st.sampled_from(VACS)),
    }))
    return spec


@st.composite
def persistent_volume_claim(draw, name, namespace, classes, pvs, node_names):
    meta = {"name": name, "namespace": namespace}
    if draw(st.booleans()):
        meta["uid"] = f"uid-pvc-{namespace}-{name}"
    spec = claim_spec(classes)
    spec = draw(spec)
    annotations = {}
    state = draw(st.sampled_from(["unbound"] * 6 + ["bound"] * 5 + ["selected"] * 3 + ["prebound", "bound-missing"]))
    if state in ("bound", "prebound") and pvs:
        pv = draw(st.sampled_from(pvs))
        spec["volumeName"] = pv["metadata"]["name"]
        if state == "bound":
            annotations[BIND_COMPLETED] = "yes"
        if draw(st.integers(0, 3)):     # the PV names it back, mostly
            pv["spec"]["claimRef"] = _drop_none({"kind": "PersistentVolumeClaim", "namespace": namespace,
                                                 "name": name, "uid": meta.get("uid")})
    elif state == "bound-missing":
        spec["volumeName"] = "pv-gone"
        annotations[BIND_COMPLETED] = "yes"
    elif state == "selected":
        annotations[SELECTED_NODE] = draw(st.sampled_from(node_names + ["gone-node"]))
    if draw(st.integers(0, 14)) == 14 and spec.get("storageClassName"):
        annotations[BETA_CLASS] = spec.pop("storageClassName")
    if annotations:
        meta["annotations"] = annotations
    pvc = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": meta, "spec": spec}
    rare = draw(st.integers(0, 29))
    if rare == 29:
        pvc["status"] = {"phase": "Lost"}
    elif rare == 28:
        meta["deletionTimestamp"] = TIMESTAMP
    return pvc


@st.composite
def prebind_volumes(draw, pvs, claims):
    """Some PVs pre-bound (claimRef only) to a claim, with or without its uid."""
    for pv in pvs:
        if "claimRef" in pv["spec"] or not claims or draw(st.integers(0, 5)):
            continue
        pvc = draw(st.sampled_from(claims))
        ref = {"kind": "PersistentVolumeClaim", "namespace": pvc["metadata"]["namespace"],
               "name": pvc["metadata"]["name"]}
        uid = draw(st.sampled_from([None, pvc["metadata"].get("uid"), "uid-other"]))
        if uid:
            ref["uid"] = uid
        pv["spec"]["claimRef"] = ref


@st.composite
def csi_node(draw, name):
    drivers = []
    drivers_known = CSI_DRIVERS + (MIGRATED_DRIVERS if GENERATE_MIGRATED_DRIVER_LIMITS else [])
    for driver in draw(st.lists(st.sampled_from(drivers_known), min_size=1, max_size=3, unique=True)):
        d = {"name": driver, "nodeID": f"{name}-{driver}"}
        count = draw(st.sampled_from([None, 0, 1, 1, 2, 3]))
        if count is not None:
            d["allocatable"] = {"count": count}
        drivers.append(d)
    meta = {"name": name}
    migrated = draw(st.sampled_from([None, None, KUBELET_MIGRATED, "kubernetes.io/aws-ebs",
                                     "kubernetes.io/gce-pd,kubernetes.io/cinder", ""]))
    if migrated is not None:
        meta["annotations"] = {MIGRATED_PLUGINS: migrated}
    return {"kind": "CSINode", "apiVersion": "storage.k8s.io/v1", "metadata": meta, "spec": {"drivers": drivers}}


@st.composite
def csi_driver(draw, name):
    spec = _drop_none({"storageCapacity": draw(st.sampled_from([True, True, True, False, None]))})
    return {"kind": "CSIDriver", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": name}, "spec": spec}


@st.composite
def node_topology(draw, node_names):
    kind = draw(st.sampled_from(["zone", "zone", "host", "all", None, "exprs"]))
    if kind == "zone":
        return {"matchLabels": {ZONE: draw(st.sampled_from(ZONES))}}
    if kind == "host":
        return {"matchLabels": {HOSTNAME: draw(st.sampled_from(node_names))}}
    if kind == "exprs":
        return {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": [draw(st.sampled_from(ZONES))]}]}
    return {} if kind == "all" else None


@st.composite
def storage_capacity(draw, name, classes, node_names):
    return _drop_none({
        "kind": "CSIStorageCapacity", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": draw(st.sampled_from(classes)),
        "capacity": draw(st.sampled_from([None, "1Gi", "2Gi", "10Gi", "100Gi"])),
        "maximumVolumeSize": draw(st.sampled_from([None, None, "1Gi", "2Gi"])),
        "nodeTopology": draw(node_topology(node_names)),
    })


# ---- pods --------------------------------------------------------------------------------------

@st.composite
def inline_volume(draw, vname):
    kind = draw(st.sampled_from(["gce", "aws", "iscsi", "rbd", "cinder", "emptyDir"]))
    if kind == "gce":
        src = {"gcePersistentDisk": _drop_none({"pdName": draw(st.sampled_from(PDS)),
                                                "readOnly": draw(st.sampled_from([None, True, False]))})}
    elif kind == "aws":
        src = {"awsElasticBlockStore": {"volumeID": draw(st.sampled_from(EBS_IDS))}}
    elif kind == "iscsi":
        src = {"iscsi": _drop_none({"targetPortal": "10.0.1.1:3260", "iqn": draw(st.sampled_from(IQNS)), "lun": 0,
                                    "readOnly": draw(st.sampled_from([None, True, False]))})}
    elif kind == "rbd":
        src = {"rbd": _drop_none({
            "monitors": draw(st.lists(st.sampled_from(MONITORS), min_size=1, max_size=2, unique=True)),
            "pool": draw(st.sampled_from(RBD_POOLS)), "image": draw(st.sampled_from(RBD_IMAGES)),
            "readOnly": draw(st.sampled_from([None, True, False]))})}
    elif kind == "cinder":
        src = {"cinder": {"volumeID": draw(st.sampled_from(["c-1", "c-2"]))}}
    else:
        src = {"emptyDir": {}}
    return {"name": vname, **src}


@st.composite
def pod(draw, name, namespace, claim_names, classes, pv_names, node_name=None):
    """A pod with 0-3 volumes, and the ephemeral claims made for it (owned, or not)."""
    uid = f"uid-{namespace}-{name}"
    volumes, made = [], []
    used = set()
    for i in range(draw(st.integers(0, 3))):
        vname = f"v{i}"
        kind = draw(st.sampled_from(["claim", "claim", "claim", "inline", "ephemeral"]))
        if kind == "claim" and not claim_names and draw(st.integers(0, 3)):
            kind = "ephemeral"      # no claim in the namespace: a missing one only now and then
        if kind == "claim":
            claim = draw(st.sampled_from(claim_names * 15 + ["pvc-missing"]))
            if claim in used:
                continue        # one volume per claim within a pod
            used.add(claim)
            volumes.append({"name": vname, "persistentVolumeClaim": {"claimName": claim}})
        elif kind == "inline":
            volumes.append(draw(inline_volume(vname)))
        else:   # generic ephemeral
            spec = draw(claim_spec(classes))
            volumes.append({"name": vname, "ephemeral": {"volumeClaimTemplate": {"spec": spec}}})
            owners = ["pod"] * 8 + ["none"]
            if GENERATE_FOREIGN_EPHEMERAL_CLAIMS_ON_NODES or not node_name:
                owners.append("other")
            owner = draw(st.sampled_from(owners))
            if owner != "none":
                refs = [{"apiVersion": "v1", "kind": "Pod", "name": name, "controller": True,
                         "uid": uid if owner == "pod" else "uid-someone-else"}]
                claim = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                         "metadata": {"name": f"{name}-{vname}", "namespace": namespace, "ownerReferences": refs},
                         "spec": dict(spec)}
                bound_to = draw(st.sampled_from([None] * 6 + pv_names[:2] + ["pv-gone"]))
                if bound_to:    # VolumeZone does not look at ephemeral claims: VolumeBinding does
                    claim["spec"]["volumeName"] = bound_to
                    claim["metadata"]["annotations"] = {BIND_COMPLETED: "yes"}
                made.append(claim)
    spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}]}
    if volumes:
        spec["volumes"] = volumes
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "spec": spec}, made


# ---- a workload --------------------------------------------------------------------------------

@st.composite
def volume_workloads(draw, min_nodes=3, max_nodes=12, max_pending=6):
    """(nodes, storage objects, bound pods, pending pods)."""
    n = draw(st.integers(min_nodes, max_nodes))
    node_names = [f"n{i}" for i in range(n)]
    nodes = [draw(node(name)) for name in node_names]
    classes = [f"sc-{i}" for i in range(draw(st.integers(1, 4)))]
    objects = [draw(storage_class(c, node_names)) for c in classes]
    pvs = [draw(persistent_volume(f"pv-{i:02d}", classes, node_names)) for i in range(draw(st.integers(0, 10)))]
    namespace = "default"
    claims = [draw(persistent_volume_claim(f"pvc-{i}", draw(st.sampled_from(NAMESPACES)), classes, pvs, node_names))
              for i in range(draw(st.integers(0, 8)))]
    draw(prebind_volumes(pvs, claims))
    objects += pvs + claims
    for name in draw(st.lists(st.sampled_from(node_names), max_size=n, unique=True)):
        objects.append(draw(csi_node(name)))
    for name in CSI_DRIVERS:
        if draw(st.integers(0, 3)):     # mostly present
            objects.append(draw(csi_driver(name)))
    objects += [draw(storage_capacity(f"cap-{i}", classes, node_names)) for i in range(draw(st.integers(0, 4)))]
    pv_names = [pv["metadata"]["name"] for pv in pvs]
    claim_names = {ns: [c["metadata"]["name"] for c in claims if c["metadata"]["namespace"] == ns] for ns in NAMESPACES}
    bound, pending = [], []
    for i in range(draw(st.integers(0, 8))):
        namespace = draw(st.sampled_from(NAMESPACES))
        p, made = draw(pod(f"b{i}", namespace, claim_names[namespace], classes, pv_names,
                           draw(st.sampled_from(node_names))))
        bound.append(p)
        objects += made
    for i in range(draw(st.integers(1, max_pending))):
        namespace = draw(st.sampled_from(NAMESPACES))
        pre_bound = draw(st.sampled_from(node_names)) if draw(st.integers(0, 9)) == 9 else None
        p, made = draw(pod(f"p{i}", namespace, claim_names[namespace], classes, pv_names, pre_bound))
        pending.append(p)
        objects += made
    return nodes, objects, bound, pending
