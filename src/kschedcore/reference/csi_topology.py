"""VolumeBinding's tryTranslatePVToCSI (plugins/volumebinding/binder.go) with the topology part
of csi-translation-lib's TranslateInTreePVToCSI (translateTopologyFromInTreeToCSI): on a node
whose CSINode lists a bound PV's in-tree plugin as migrated, the PV's node affinity is checked
as translated. Plain dicts, written from csi-translation-lib v1.34.1 (plugins/in_tree_volume.go,
aws_ebs.go, gce_pd.go, openstack_cinder.go)."""
from __future__ import annotations

import copy
import urllib.parse

from .storage import annotations_of, labels_of, spec_of

ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
#: PV source field -> (plugin, the CSI driver's zone key)
TOPOLOGY_SOURCES = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "topology.gke.io/zone"),
    "cinder": ("kubernetes.io/cinder", "topology.cinder.csi.openstack.org/zone"),
}


class TranslationError(Exception):
    """TranslateInTreePVToCSI failed: VolumeBinding's Filter returns an error on the node."""


def pv_for_node(pv: dict, csi_node: dict | None) -> dict:
    """The PV as checkBoundClaims sees it on the node of `csi_node` (None: no CSINode)."""
    spec = spec_of(pv)
    src = next((s for s in TOPOLOGY_SOURCES if spec.get(s) is not None), None)
    if src is None or csi_node is None:
        return pv      # Portworx translates without topology; the others are not migrated
    plugin, key = TOPOLOGY_SOURCES[src]
    listed = annotations_of(csi_node).get(ANN_MIGRATED_PLUGINS) or ""
    if plugin not in (listed.split(",") if listed else []):
        return pv
    _check_translates(src, spec, labels_of(pv))
    out = copy.deepcopy(pv)
    _translate_topology(out, key)
    return out


def _check_translates(src: str, spec: dict, labels: dict) -> None:
    if src == "awsElasticBlockStore":
        vid = spec[src].get("volumeID") or ""
        if vid.startswith("aws://"):      # KubernetesVolumeIDToEBSVolumeID: ^vol-[^/]*$ of the URL's path
            aws_id = urllib.parse.urlparse(vid).path.strip("/")
            if not aws_id.startswith("vol-") or "/" in aws_id:
                raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {vid}")
    elif src == "gcePersistentDisk":
        zones = (labels.get(BETA_ZONE) or labels.get(GA_ZONE) or "").split("__")
        if len(zones) > 1:
            regions = set()
            for z in zones:
                parts = z.split("-")
                if len(parts) != 3:
                    raise TranslationError(f"zone in unexpected format: {z}")
                regions.add("-".join(parts[:2]))
            if len(regions) != 1:
                raise TranslationError(f"multiple or no regions gotten from zones: {sorted(regions)}")


def _expressions(pv: dict):
    required = (spec_of(pv).get("nodeAffinity") or {}).get("required") or {}
    for term in required.get("nodeSelectorTerms") or []:
        yield from term.get("matchExpressions") or []


def _translate_topology(pv: dict, csi_key: str) -> None:
    labels = labels_of(pv)
    keys = {e.get("key") for e in _expressions(pv)}
    if GA_ZONE in keys or (BETA_ZONE not in keys and (GA_ZONE in labels or BETA_ZONE not in labels)):
        zone, region = GA_ZONE, GA_REGION
    else:
        zone, region = BETA_ZONE, BETA_REGION
    if any(e.get("values") for e in _expressions(pv) if e.get("key") == zone):
        _rename(pv, zone, csi_key)
    elif zone in labels:
        zones = sorted({z.strip() for z in labels[zone].split("__") if z.strip()})
        if zones:       # addTopology: into every term, one term made if there is none
            spec = pv["spec"]
            spec["nodeAffinity"] = affinity = spec.get("nodeAffinity") or {}
            affinity["required"] = required = affinity.get("required") or {}
            required["nodeSelectorTerms"] = terms = required.get("nodeSelectorTerms") or [{}]
            for term in terms:
                term["matchExpressions"] = (term.get("matchExpressions") or []) + [
                    {"key": csi_key, "operator": "In", "values": zones}]
    if region == BETA_REGION and any(e.get("values") for e in _expressions(pv) if e.get("key") == region):
        _rename(pv, region, GA_REGION)


def _rename(pv: dict, old: str, new: str) -> None:
    for e in _expressions(pv):
        if e.get("key") == old:
            e["key"] = new
