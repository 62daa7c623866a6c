"""Volume plugins against hand-worked expectations (semantics §3.7 and the upstream plugins).

The workload tests/data/workloads/volumes.yaml has five identical nodes; scores never decide
except between empty nodes, where tie-break "first" takes the first in input order.
"""
import json
from pathlib import Path

import pytest

import kschedcore
from kschedcore import Scheduler
from kschedcore.cli import main
from kschedcore.errors import UnsupportedError, ValidationError

WORKLOAD = Path(__file__).parent / "data" / "workloads" / "volumes.yaml"
LIMIT = "node(s) exceed max volume count"
ZONE = "node(s) had no available volume zone"
DISK = "node(s) had no available disk"
RWOP = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
        "in-use by another pod")
BIND = "node(s) didn't find available persistent volumes to bind"
AFFINITY = "node(s) didn't match PersistentVolume's node affinity"
SPACE = "node(s) did not have enough free storage"
U, UU = "Unschedulable", "UnschedulableAndUnresolvable"

# pod -> (chosen node, {node: (code, plugin, reason)}, FitError)
EXPECTED = {
    # data-a's PV is in zone a: n3/n4 fail VolumeZone, n5 has no zone label and passes. Its CSI
    # volume would be n1's second ebs.csi.aws.com volume (ebs-user holds the one slot).
    "p-zone": ("n2", {"n1": (U, "NodeVolumeLimits", LIMIT), "n3": (UU, "VolumeZone", ZONE),
                      "n4": (UU, "VolumeZone", ZONE)}, None),
    # gce-user has disk-1 read-write on n3; empty n4 and n5 tie, n4 comes first
    "p-gce": ("n4", {"n3": (U, "VolumeRestrictions", DISK)}, None),
    # by size: scratch-2 (1Gi) then scratch-1 (2Gi). n3 has one local PV (5Gi) for two claims;
    # n4 has 1Gi and 8Gi: scratch-2 takes the smallest fit, scratch-1 the 8Gi. The class
    # cannot provision, so every other node fails.
    "p-local": ("n4", {n: (UU, "VolumeBinding", BIND) for n in ("n1", "n2", "n3", "n5")}, None),
    # rwop is in use by rwop-user: every node fails
    "p-rwop": (None, {n: (U, "VolumeRestrictions", RWOP) for n in ("n1", "n2", "n3", "n4", "n5")},
               f"0/5 nodes are available: 5 {RWOP}."),
    "p-imm": (None, {n: (UU, "VolumeBinding", "pod has unbound immediate PersistentVolumeClaims")
                     for n in ("n1", "n2", "n3", "n4", "n5")},
              "0/5 nodes are available: pod has unbound immediate PersistentVolumeClaims."),
    "p-missing": (None, {n: (UU, "VolumeRestrictions", 'persistentvolumeclaim "nope" not found')
                         for n in ("n1", "n2", "n3", "n4", "n5")},
                  '0/5 nodes are available: persistentvolumeclaim "nope" not found.'),
    # VolumeBinding's PreFilter accepts a bound claim; VolumeZone's cannot find its PV
    "p-ghost": (None, {n: (UU, "VolumeZone", 'persistentvolume "pv-missing" not found')
                       for n in ("n1", "n2", "n3", "n4", "n5")},
                '0/5 nodes are available: persistentvolume "pv-missing" not found.'),
    # ebs-1 is provisioned where the class allows (zone a); n1 has no CSI slot left
    "p-ebs": ("n2", {"n1": (U, "NodeVolumeLimits", LIMIT), "n3": (UU, "VolumeBinding", BIND),
                     "n4": (UU, "VolumeBinding", BIND), "n5": (UU, "VolumeBinding", BIND)}, None),
    # ebs-1 now carries selected-node n2
    "p-ebs-again": ("n2", {"n1": (U, "NodeVolumeLimits", LIMIT), "n3": (UU, "VolumeBinding", BIND),
                           "n4": (UU, "VolumeBinding", BIND), "n5": (UU, "VolumeBinding", BIND)}, None),
    "p-logs": ("n2", {n: (UU, "VolumeBinding", AFFINITY) for n in ("n1", "n3", "n4", "n5")}, None),
}


def _check(records):
    assert [r["pod"] for r in records] == [f"default/{p}" for p in EXPECTED]
    for rec in records:
        node, failures, fit_error = EXPECTED[rec["pod"].split("/")[1]]
        got = {n: (s["code"], s["plugin"], *s["reasons"]) for n, s in rec["filter"].items()}
        assert (rec["node"], got, rec["fitError"]) == (node, failures, fit_error), rec["pod"]


def test_volume_workload_through_the_api():
    w = kschedcore.load_workload(WORKLOAD)
    sched = Scheduler.from_workload(w, percentage_of_nodes_to_score=100, tie_break="first")
    _check(sched.explain_pending())
    claims = sched.cache.volumes.objects.claims
    # Reserve/PreBind committed the static bindings chosen on n4 and the provisioning node
    assert claims["default/scratch-1"].volume_name == "pv-local-n4-big"
    assert claims["default/scratch-2"].volume_name == "pv-local-n4-small"
    assert claims["default/scratch-1"].fully_bound
    assert sched.cache.volumes.objects.volumes["pv-local-n4-big"].claim_ref[:2] == ("default", "scratch-1")
    assert claims["default/ebs-1"].annotations["volume.kubernetes.io/selected-node"] == "n2"
    assert not claims["default/ebs-1"].volume_name


def test_volume_workload_through_the_cli(capsys):
    assert main(["explain", str(WORKLOAD), "--percentage-of-nodes-to-score", "100", "--tie-break", "first",
                 "-o", "jsonl"]) == 0
    _check([json.loads(line) for line in capsys.readouterr().out.splitlines()])


def test_skipped_filter_plugins_follow_prefilter():
    w = kschedcore.load_workload(WORKLOAD)
    sched = Scheduler.from_workload(w, percentage_of_nodes_to_score=100, tie_break="first")
    records = {r["pod"]: r for r in sched.explain_pending()}
    volume_plugins = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}
    # an inline GCE PD: VolumeRestrictions checks it, NodeVolumeLimits looks (migratable), no claims
    assert volume_plugins & set(records["default/p-gce"]["skippedFilterPlugins"]) == {"VolumeBinding", "VolumeZone"}
    # a WaitForFirstConsumer claim: no PV yet, so VolumeZone skips; no disk or RWOP claim
    assert volume_plugins & set(records["default/p-local"]["skippedFilterPlugins"]) == {"VolumeRestrictions",
                                                                                       "VolumeZone"}
    assert "VolumeBinding" in records["default/p-zone"]["skippedScorePlugins"]
    plain = sched.explain({"metadata": {"name": "plain"}, "spec": {"containers": [{"name": "c"}]}})
    assert volume_plugins <= set(plain["skippedFilterPlugins"])


# ---- smaller cases through the Python API ----------------------------------------------------
def node(name, **labels):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name, *volumes, node_name=None, uid=None):
    p = {"metadata": {"name": name, "namespace": "default"},
         "spec": {"containers": [{"name": "c"}], "volumes": list(volumes)}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    if uid:
        p["metadata"]["uid"] = uid
    return p


def failures(sched, p):
    rec = sched.explain(p)
    return {n: s["reasons"][0] for n, s in rec["filter"].items()}


@pytest.mark.parametrize("existing,incoming,conflict", [
    ({"gcePersistentDisk": {"pdName": "d", "readOnly": True}}, {"gcePersistentDisk": {"pdName": "d", "readOnly": True}}, False),
    ({"gcePersistentDisk": {"pdName": "d", "readOnly": True}}, {"gcePersistentDisk": {"pdName": "d"}}, True),
    ({"gcePersistentDisk": {"pdName": "d"}}, {"gcePersistentDisk": {"pdName": "e"}}, False),
    ({"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}}, True),     # EBS: any sharing
    ({"iscsi": {"iqn": "q", "targetPortal": "p", "lun": 0, "readOnly": True}},
     {"iscsi": {"iqn": "q", "targetPortal": "p", "lun": 1, "readOnly": True}}, False),
    ({"iscsi": {"iqn": "q", "targetPortal": "p", "lun": 0}}, {"iscsi": {"iqn": "q", "targetPortal": "p", "lun": 1}}, True),
    # RBD: overlapping monitors, same pool (defaulted "rbd") and image
    ({"rbd": {"monitors": ["m1", "m2"], "image": "i"}}, {"rbd": {"monitors": ["m2"], "image": "i", "pool": "rbd"}}, True),
    ({"rbd": {"monitors": ["m1"], "image": "i"}}, {"rbd": {"monitors": ["m2"], "image": "i"}}, False),
    ({"rbd": {"monitors": ["m1"], "image": "i", "pool": "p"}}, {"rbd": {"monitors": ["m1"], "image": "i"}}, False),
])
def test_disk_conflicts(existing, incoming, conflict):
    sched = Scheduler([node("a"), node("b")], [pod("old", {"name": "v", **existing}, node_name="a")],
                      percentage_of_nodes_to_score=100)
    assert failures(sched, pod("new", {"name": "v", **incoming})) == ({"a": DISK} if conflict else {})
    sched.remove_pod("default/old")          # the disk is free again
    assert failures(sched, pod("new", {"name": "v", **incoming})) == {}


def storage(sched, *objs):
    for o in objs:
        sched.add_object(o)


def claim(name, cls, size="1Gi", **spec):
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}, **spec}}


def bound_claim(name, pv):
    c = claim(name, "manual", volumeName=pv)
    c["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return c


def pv(name, labels=None, **spec):
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"storageClassName": "manual", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **spec}}


def test_volume_zone_multi_zone_and_beta_labels():
    sched = Scheduler([node("a", **{"topology.kubernetes.io/zone": "z1"}),
                       node("b", **{"failure-domain.beta.kubernetes.io/zone": "z2"}),
                       node("c", **{"topology.kubernetes.io/zone": "z3"}),
                       node("d", **{"topology.kubernetes.io/region": "r"})], percentage_of_nodes_to_score=100)
    # a beta zone label on the PV reads the node's GA label when the beta one is absent
    storage(sched, pv("v", {"failure-domain.beta.kubernetes.io/zone": "z1__z2"}), bound_claim("c", "v"))
    # d has a topology label, but not the zone: it fails; c is in another zone
    assert failures(sched, pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "c"}})) == {
        "c": ZONE, "d": ZONE}


def test_volume_zone_ignores_malformed_zone_label():
    sched = Scheduler([node("a", **{"topology.kubernetes.io/zone": "z1"})], percentage_of_nodes_to_score=100)
    storage(sched, pv("v", {"topology.kubernetes.io/zone": "z9____z8"}), bound_claim("c", "v"))
    rec = sched.explain(pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "c"}}))
    assert rec["node"] == "a" and "VolumeZone" in rec["skippedFilterPlugins"]


def test_csi_storage_capacity():
    sched = Scheduler([node("a", zone="1"), node("b", zone="2"), node("c", zone="3")], percentage_of_nodes_to_score=100)
    storage(sched,
            {"kind": "StorageClass", "metadata": {"name": "csi"}, "provisioner": "drv",
             "volumeBindingMode": "WaitForFirstConsumer"},
            {"kind": "CSIDriver", "metadata": {"name": "drv"}, "spec": {"storageCapacity": True}},
            {"kind": "CSIStorageCapacity", "metadata": {"name": "cap-1", "namespace": "kube-system"},
             "storageClassName": "csi", "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "1"}}},
            # maximumVolumeSize wins over capacity
            {"kind": "CSIStorageCapacity", "metadata": {"name": "cap-2", "namespace": "kube-system"},
             "storageClassName": "csi", "capacity": "100Gi", "maximumVolumeSize": "1Gi",
             "nodeTopology": {"matchLabels": {"zone": "2"}}},
            claim("small", "csi", "1Gi"), claim("big", "csi", "5Gi"))
    assert failures(sched, pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "small"}})) == {"c": SPACE}
    assert failures(sched, pod("q", {"name": "v", "persistentVolumeClaim": {"claimName": "big"}})) == {
        "b": SPACE, "c": SPACE}


def test_pv_node_affinity_and_missing_pv():
    sched = Scheduler([node("a"), node("b")], percentage_of_nodes_to_score=100)
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["b"]}]}]}}
    storage(sched, pv("v", nodeAffinity=affinity), bound_claim("c", "v"), bound_claim("lost", "gone"))
    assert failures(sched, pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "c"}})) == {"a": AFFINITY}
    # without VolumeZone (whose PreFilter would reject first) the Filter reports the missing PV
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"multiPoint": {"disabled": [{"name": "VolumeZone"}]}}}]}
    sched2 = Scheduler([node("a")], percentage_of_nodes_to_score=100,
                       config=kschedcore.parse_config(config))
    storage(sched2, bound_claim("lost", "gone"))
    rec = sched2.explain(pod("p", {"name": "v", "persistentVolumeClaim": {"claimName": "lost"}}))
    assert rec["fitError"] == ("0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) "
                               "bound to non-existent pv(s).")


def test_ephemeral_volume_claims():
    sched = Scheduler([node("a")], percentage_of_nodes_to_score=100)
    eph = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    rec = sched.explain(pod("p", eph, uid="u1"))
    assert rec["fitError"] == ('0/1 nodes are available: waiting for ephemeral volume controller to create the '
                               'persistentvolumeclaim "p-scratch".')
    other = claim("p-scratch", "manual")
    other["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "x", "uid": "u0", "controller": True}]
    storage(sched, other)
    rec = sched.explain(pod("p", eph, uid="u1"))
    assert rec["preFilterStatus"]["reasons"] == [
        "PVC default/p-scratch was not created for pod default/p (pod is not owner)"]
    owned = claim("p-scratch", "manual", volumeName="v")
    owned["metadata"].update(ownerReferences=[{"kind": "Pod", "name": "p", "uid": "u1", "controller": True}],
                             annotations={"pv.kubernetes.io/bind-completed": "yes"})
    storage(sched, owned, pv("v"))
    assert sched.explain(pod("p", eph, uid="u1"))["node"] == "a"


def test_node_volume_limits_count_unique_volumes():
    sched = Scheduler([node("a"), node("b")], percentage_of_nodes_to_score=100)
    storage(sched,
            {"kind": "StorageClass", "metadata": {"name": "csi"}, "provisioner": "drv"},
            {"kind": "CSINode", "metadata": {"name": "a"}, "spec": {"drivers": [{"name": "drv", "allocatable": {"count": 2}}]}},
            {"kind": "CSINode", "metadata": {"name": "b"}, "spec": {"drivers": [{"name": "drv", "allocatable": {"count": 1}}]}})
    for i in range(3):
        pv_i = pv(f"v{i}", csi={"driver": "drv", "volumeHandle": f"h{i}"}, claimRef={"namespace": "default", "name": f"c{i}"})
        storage(sched, pv_i, bound_claim(f"c{i}", f"v{i}"))
    vol = lambda i: {"name": f"v{i}", "persistentVolumeClaim": {"claimName": f"c{i}"}}
    sched.add_pod(pod("u0", vol(0), node_name="a"))
    sched.add_pod(pod("u1", vol(0), node_name="b"))
    # c0 is attached on both nodes already: sharing it adds nothing
    assert failures(sched, pod("p", vol(0))) == {}
    # a: 1 attached + 1 new <= 2; b: 1 + 1 > 1
    assert failures(sched, pod("p", vol(1))) == {"b": LIMIT}
    assert failures(sched, pod("p", vol(0), vol(1))) == {"b": LIMIT}
    # a: 1 + 2 > 2
    assert failures(sched, pod("p", vol(1), vol(2))) == {"a": LIMIT, "b": LIMIT}
    sched.remove_pod("default/u0")
    assert failures(sched, pod("p", vol(1), vol(2))) == {"b": LIMIT}


def test_storage_object_errors_name_the_field():
    sched = Scheduler([node("a")])
    with pytest.raises(ValidationError, match=r'persistentvolumeclaim default/c: spec.resources.requests.storage: '
                                              r'invalid quantity "lots"'):
        sched.add_object(claim("c", "x", "lots"))
    with pytest.raises(ValidationError, match='storageclass s: volumeBindingMode: unsupported binding mode "Later"'):
        sched.add_object({"kind": "StorageClass", "metadata": {"name": "s"}, "volumeBindingMode": "Later"})


@pytest.mark.parametrize("args,message", [
    ({"bindTimeoutSeconds": -1}, "VolumeBindingArgs: bindTimeoutSeconds: invalid BindTimeoutSeconds"),
    ({"shape": [{"utilization": 0, "score": 0}]}, "VolumeBindingArgs: shape: unexpected field `shape`"),
])
def test_volume_binding_args(args, message):
    Scheduler(plugin_args={"VolumeBinding": {"bindTimeoutSeconds": 30}})
    with pytest.raises(ValidationError, match=message):
        Scheduler(plugin_args={"VolumeBinding": args})


# the volumes of a pod read from a real cluster: no volume plugin looks at them
PLAIN_VOLUMES = [
    {"name": "kube-api-access-x7k2p", "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}},
    {"name": "config", "configMap": {"name": "app"}}, {"name": "tls", "secret": {"secretName": "app-tls"}},
    {"name": "scratch", "emptyDir": {}}, {"name": "logs", "hostPath": {"path": "/var/log"}}]


def test_volumes_no_plugin_reads_leave_the_pod_node_local():
    """Secrets, configMaps, projected tokens, emptyDirs and hostPaths: every volume PreFilter
    skips such a pod (upstream asks for claims, ephemeral volumes and in-tree disks only), so it
    is decided as a pod without volumes, through the node-local path, its spec read once."""
    nodes = [node(f"n{i}") for i in range(4)]
    sched = Scheduler(nodes, [pod("gce-user", {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}},
                                  node_name="n0")], percentage_of_nodes_to_score=100, tie_break="first")
    plain = [sched.parse_pod(pod(f"p{i}", *PLAIN_VOLUMES)) for i in range(3)]
    assert all(p.volumes == () for p in plain) and plain[1].spec_fields is plain[2].spec_fields
    bare = Scheduler(nodes, [pod("gce-user", {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}},
                                 node_name="n0")], percentage_of_nodes_to_score=100, tie_break="first")
    for p in plain:
        assert not sched.schedule(p).cycle.dynamic          # no PreFilter state: node-local
        rec, ref = sched.explain(p), bare.explain(pod(p.name))
        assert {k: v for k, v in rec.items() if k != "pod"} == {k: v for k, v in ref.items() if k != "pod"}
        sched.assume(p, rec["node"])
        bare.assume(pod(p.name), ref["node"])
    # a disk beside them still counts: the GCE disk in use on n0 rejects it there
    mixed = sched.parse_pod(pod("m", *PLAIN_VOLUMES, {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}))
    assert [v.name for v in mixed.volumes] == ["d"]
    assert sched.explain(mixed)["filter"]["n0"]["plugin"] == "VolumeRestrictions"


# ---- CSI migration: VolumeBinding translates a bound in-tree PV on nodes that list its plugin ----
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
KUBELET_LIST = ("kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,"
                "kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume")


def csi_node(name, migrated=KUBELET_LIST):
    return {"kind": "CSINode", "metadata": {"name": name, "annotations": {MIGRATED: migrated}},
            "spec": {"drivers": []}}


def _migration_cluster(volume, nodes, listed, migrated="kubernetes.io/aws-ebs"):
    sched = Scheduler(nodes, percentage_of_nodes_to_score=100)
    for name in listed:
        sched.add_object(csi_node(name, migrated))
    sched.add_object(volume)
    sched.add_object(bound_claim("c", volume["metadata"]["name"]))
    return sched


def test_a_kubelets_migrated_plugins_list_is_read():
    sched = Scheduler([node("a")])
    sched.add_object(csi_node("a"))
    assert "kubernetes.io/gce-pd" in sched.cache.volumes.objects.csi_nodes["a"].migrated


def test_a_zone_label_becomes_the_csi_drivers_zone_where_migrated():
    """translateTopologyFromInTreeToCSI: an EBS PV without node affinity but with a zone label
    gets topology.ebs.csi.aws.com/zone In [z1] on nodes whose CSINode lists aws-ebs; elsewhere
    it has no node affinity (VolumeZone alone reads the label)."""
    zone = {"topology.kubernetes.io/zone": "z1"}
    volume = pv("ebs", {"topology.kubernetes.io/zone": "z1__z1"}, awsElasticBlockStore={"volumeID": "vol-1"})
    nodes = [node("a", **zone, **{"topology.ebs.csi.aws.com/zone": "z1"}), node("b", **zone), node("c", **zone),
             node("d", **zone, **{"topology.ebs.csi.aws.com/zone": "z2"})]
    sched = _migration_cluster(volume, nodes, ["a", "b", "d"])
    assert failures(sched, pod("p", vol_claim("c"))) == {"b": AFFINITY, "d": AFFINITY}
    # another plugin listed: the EBS PV is not translated anywhere
    sched = _migration_cluster(volume, nodes, ["a", "b", "d"], migrated="kubernetes.io/gce-pd")
    assert failures(sched, pod("p", vol_claim("c"))) == {}


def test_affinity_zone_and_beta_region_keys_are_rewritten_where_migrated():
    """A beta zone key in the PV's affinity becomes the CSI driver's key (Exists too), a beta
    region key the GA one."""
    terms = [{"matchExpressions": [
        {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["z1"]},
        {"key": "failure-domain.beta.kubernetes.io/region", "operator": "In", "values": ["r1"]}]}]
    volume = pv("pd", None, gcePersistentDisk={"pdName": "d1"},
                nodeAffinity={"required": {"nodeSelectorTerms": terms}})
    beta = {"failure-domain.beta.kubernetes.io/zone": "z1", "failure-domain.beta.kubernetes.io/region": "r1"}
    csi = {"topology.gke.io/zone": "z1", "topology.kubernetes.io/region": "r1"}
    nodes = [node("beta-listed", **beta), node("csi-listed", **csi), node("beta", **beta), node("csi", **csi)]
    sched = _migration_cluster(volume, nodes, ["beta-listed", "csi-listed"], "kubernetes.io/gce-pd")
    assert failures(sched, pod("p", vol_claim("c"))) == {"beta-listed": AFFINITY, "csi": AFFINITY}


def test_a_pv_whose_translation_fails_is_refused_only_where_migrated():
    """A GCE PD whose zones span two regions cannot be translated: VolumeBinding's Filter
    errors on listed nodes, which kschedcore refuses by name; unlisted nodes never translate."""
    volume = pv("pd", {"topology.kubernetes.io/zone": "us-east1-b__us-west1-a"}, gcePersistentDisk={"pdName": "d"})
    assert failures(_migration_cluster(volume, [node("a"), node("b")], []), pod("p", vol_claim("c"))) == {}
    sched = _migration_cluster(volume, [node("a"), node("b")], ["b"], "kubernetes.io/gce-pd")
    with pytest.raises(UnsupportedError, match="persistentvolume pd: spec: .*cannot be translated to CSI"):
        sched.explain(pod("p", vol_claim("c")))


def test_in_tree_portworx_volumes_where_portworx_is_listed_are_refused():
    portworx = pv("px", portworxVolume={"volumeID": "v1"})
    sched = Scheduler([node("a")])
    sched.add_object(portworx)
    sched.add_object(csi_node("a", "kubernetes.io/aws-ebs"))
    with pytest.raises(UnsupportedError, match="csinode a: metadata.annotations.*in-tree Portworx volumes"):
        sched.add_object(csi_node("a"))
    assert sched.cache.volumes.objects.csi_nodes["a"].migrated == {"kubernetes.io/aws-ebs"}   # refused: kept
    sched = Scheduler([node("a")])
    sched.add_object(csi_node("a"))
    with pytest.raises(UnsupportedError, match="persistentvolume px: spec.portworxVolume: in-tree Portworx"):
        sched.add_object(portworx)
    inline = pod("p", {"name": "data", "portworxVolume": {"volumeID": "v2"}})
    with pytest.raises(UnsupportedError, match='pod default/p: spec.volumes \\(volume "data"\\).portworxVolume'):
        sched.explain(inline)
    sched.add_object(csi_node("a", "kubernetes.io/aws-ebs"))     # portworx no longer listed
    assert sched.explain(inline)["node"] == "a"


def vol_claim(name):
    return {"name": "v", "persistentVolumeClaim": {"claimName": name}}
