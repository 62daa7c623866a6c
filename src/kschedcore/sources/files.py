"""Reading Kubernetes objects from YAML / JSON files.

Accepted shapes: a single object, multi-document YAML, ``kind: List`` (or any ``*List``), and
the parity workload document ``{"nodes": [...], "pods": [...], "pending": [...], ...}``.
``.gz`` files are decompressed. From plain manifests, pods with ``spec.nodeName`` are bound
and the others pending, in file order.
"""
import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from ..errors import WorkloadError
from ..util import collector

#: libyaml's parser when PyYAML was built with it (the wheels are): about 10x the pure-Python one
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
try:        # built where libyaml is there to link (setup.py)
    from .._native import yaml_events
except ImportError:
    yaml_events = None  # type: ignore[assignment]  # the module is optional

#: workload-document keys holding objects that later plugins read, by their kind
EXTRA_KEYS = {"services": "Service", "replicaSets": "ReplicaSet", "statefulSets": "StatefulSet",
              "replicationControllers": "ReplicationController", "namespaces": "Namespace",
              "persistentVolumeClaims": "PersistentVolumeClaim", "persistentVolumes": "PersistentVolume",
              "storageClasses": "StorageClass", "csiNodes": "CSINode", "csiDrivers": "CSIDriver",
              "csiStorageCapacities": "CSIStorageCapacity", "podDisruptionBudgets": "PodDisruptionBudget",
              "priorityClasses": "PriorityClass", "deviceClasses": "DeviceClass", "resourceSlices": "ResourceSlice",
              "resourceClaims": "ResourceClaim", "resourceClaimTemplates": "ResourceClaimTemplate"}
#: the kinds besides Node and Pod that kschedcore reads
READ_KINDS = frozenset((*EXTRA_KEYS.values(), "VolumeAttachment"))
#: workload-document keys that describe it and are not read
DESCRIPTIVE_KEYS = ("name", "seed", "description", "features")


#: the built-in API groups (kinds of these that kschedcore does not know are refused as typos)
BUILTIN_GROUPS = ("", "apps", "batch", "policy", "autoscaling", "extensions")
#: Kubernetes kinds kschedcore reads none of: counted in `ignored`, as kube-scheduler never sees them
OTHER_KINDS = frozenset("""
    Binding ComponentStatus ConfigMap Endpoints Event LimitRange PodTemplate ResourceQuota Secret
    ServiceAccount ControllerRevision DaemonSet Deployment CronJob Job HorizontalPodAutoscaler Eviction
    ClusterRole ClusterRoleBinding Role RoleBinding VolumeAttributesClass Ingress IngressClass NetworkPolicy
    IPAddress ServiceCIDR EndpointSlice Lease RuntimeClass CertificateSigningRequest ClusterTrustBundle
    MutatingWebhookConfiguration ValidatingWebhookConfiguration ValidatingAdmissionPolicy
    ValidatingAdmissionPolicyBinding MutatingAdmissionPolicy MutatingAdmissionPolicyBinding
    CustomResourceDefinition APIService FlowSchema PriorityLevelConfiguration PodMetrics NodeMetrics StorageVersion
    StorageVersionMigration LeaseCandidate ServiceAccountToken TokenReview SubjectAccessReview
    SelfSubjectReview SelfSubjectAccessReview SelfSubjectRulesReview LocalSubjectAccessReview
""".split())


@dataclass
class Workload:
    """What input files hold: nodes, bound pods (`spec.nodeName` set), pending pods in file order,
    the other objects by kind (storage, budgets, Services, controllers, ...), and what was left
    out, by reason."""
    nodes: list = field(default_factory=list)
    pods: list = field(default_factory=list)        # bound (spec.nodeName set)
    pending: list = field(default_factory=list)     # to schedule, in order
    objects: dict = field(default_factory=dict)     # kind -> [raw object]; Service, ReplicaSet, ...
    #: what the reader left out, by reason ("kind ConfigMap": 3)
    ignored: dict = field(default_factory=dict)

    def extend(self, other: "Workload") -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.pending += other.pending
        for kind, objs in other.objects.items():
            self.objects.setdefault(kind, []).extend(objs)
        for reason, n in other.ignored.items():
            self.ignored[reason] = self.ignored.get(reason, 0) + n


def read_bytes(path: Path) -> bytes:
    """A file's bytes (a .gz file's decompressed)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise WorkloadError(str(path), "", e.strerror or str(e)) from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise WorkloadError(str(path), "", f"not a gzip file: {e}") from None
    return data


def read_text(path: Path) -> str:
    return _decoded(path, read_bytes(path))


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorkloadError(str(path), "", f"not UTF-8 text: {e}") from None


def documents(path: Path, text: str | bytes) -> list:
    """The documents of a JSON or YAML text, str or UTF-8 bytes (a JSON list: its items).
    Bytes go to the JSON decoder or libyaml as they are (a 1 GB dump is not decoded and encoded
    again on the way)."""
    # a dump decodes into millions of dicts, none in a cycle: the collector's passes over the
    # growing heap cost 3x the decoding (100,000 nodes as JSON: 2.0 -> 0.5 s)
    with collector.paused():
        return _documents(path, text)


_LEADING_SPACE = re.compile(rb"\s*")


def _documents(path: Path, text: Any) -> list:
    raw = text if isinstance(text, bytes) else None
    if raw is not None:
        start = _LEADING_SPACE.match(raw).end()  # type: ignore[union-attr]  # \s* matches any input
        first = raw[start:start + 1]
    else:
        first = text.lstrip()[:1]
    if first in ("{", "[", b"{", b"["):
        if raw is not None:       # decoded as read_text decodes (its error for a non-UTF-8 file)
            text, raw = _decoded(path, raw), None
        try:
            doc = json.loads(text)
            return doc if isinstance(doc, list) else [doc]
        except json.JSONDecodeError:
            pass  # JSON is YAML too; let the YAML parser report the position
    if yaml_events is not None:
        try:     # straight from libyaml's events: SafeLoader's objects, or no answer
            return [d for d in yaml_events.load_all(raw if raw is not None else text.encode("utf-8"))
                    if d is not None]
        except yaml_events.Unsupported:
            pass
    if raw is not None:
        text = _decoded(path, raw)
    try:
        return [d for d in yaml.load_all(text, Loader=SAFE_LOADER) if d is not None]
    except yaml.YAMLError:
        pass      # parsed again by the pure-Python loader, whose messages say more
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise WorkloadError(str(path), "", f"{where}invalid YAML/JSON: {getattr(e, 'problem', e)}") from None


def workload_from_documents(docs: Iterable[Any], source: str = "<input>") -> Workload:
    """Sorts raw documents into a Workload."""
    w = Workload()
    for i, doc in enumerate(docs):
        _add_document(w, doc, f"{source}: document {i + 1}")
    return w


def _add_document(w: Workload, doc: Any, where: str, item_kind: str = "") -> None:
    if not isinstance(doc, dict):
        raise WorkloadError(where, "", f"expected an object, got {type(doc).__name__}")
    kind = doc.get("kind") or item_kind or None       # a NodeList's items carry no kind
    if kind is None and any(k in doc for k in ("nodes", "pods", "pending")):
        _add_workload_document(w, doc, where)
    elif isinstance(kind, str) and kind.endswith("List"):
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise WorkloadError(where, "items", "expected a list")
        for j, item in enumerate(items):
            _add_document(w, item, f"{where}: items[{j}]", kind[:-len("List")])
    elif kind == "Node":
        w.nodes.append(doc)
    elif kind == "Pod":
        spec = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
        (w.pods if spec.get("nodeName") else w.pending).append(doc)
    elif isinstance(kind, str) and kind:
        group = str(doc.get("apiVersion") or "").rpartition("/")[0]
        if kind not in READ_KINDS and kind not in OTHER_KINDS and (group in BUILTIN_GROUPS or group.endswith(".k8s.io")):
            raise WorkloadError(where, "kind", f'unknown kind "{kind}" for apiVersion "{doc.get("apiVersion")}"')
        if kind in READ_KINDS:
            w.objects.setdefault(kind, []).append(doc)
        else:
            w.ignored[f"kind {kind}"] = w.ignored.get(f"kind {kind}", 0) + 1
    else:
        raise WorkloadError(where, "kind", "missing: not a Kubernetes object or a workload document")


def _add_workload_document(w: Workload, doc: dict, where: str) -> None:
    unknown = [k for k in doc if k not in ("nodes", "pods", "pending", *EXTRA_KEYS, *DESCRIPTIVE_KEYS)]
    if unknown:
        raise WorkloadError(where, unknown[0], "unknown workload-document key (known: "
                            + ", ".join(["nodes", "pods", "pending", *EXTRA_KEYS, *DESCRIPTIVE_KEYS]) + ")")
    for key in ("nodes", "pods", "pending", *EXTRA_KEYS):
        items = doc.get(key)
        if items is not None and not isinstance(items, list):
            raise WorkloadError(where, key, f"expected a list, got {type(items).__name__}")
    w.nodes += doc.get("nodes") or []
    w.pods += doc.get("pods") or []
    w.pending += doc.get("pending") or []
    for key, kind in EXTRA_KEYS.items():
        if doc.get(key):
            w.objects.setdefault(kind, []).extend(doc[key])


def load_workload(*paths: "str | PathLike[str] | Workload") -> Workload:
    """Reads one or more files into one Workload, in the order given (a Workload given, such as
    a live cluster's snapshot, is taken as it is)."""
    w = Workload()
    for p in paths:
        if isinstance(p, Workload):
            w.extend(p)
            continue
        path = Path(p)
        docs = documents(path, read_bytes(path))
        if not docs:
            raise WorkloadError(str(path), "", "no Kubernetes object in the file (empty input)")
        w.extend(workload_from_documents(docs, str(path)))
    return w
