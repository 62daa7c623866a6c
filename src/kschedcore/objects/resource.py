"""Dynamic Resource Allocation's objects (resource.k8s.io): DeviceClass, ResourceSlice,
ResourceClaim and ResourceClaimTemplate, validated once when read.

Each object keeps its resource.k8s.io/v1 dict (``v1``): the structured allocator works on the
API structs, so it is handed the validated, API-defaulted JSON as is. v1beta2 has the same
schema for these four kinds (the same fields and JSON names) and is read as v1; other versions
are refused by name. Validation follows pkg/apis/resource/validation with the API server's
wording (field.Required / field.Invalid / field.NotSupported / field.Duplicate).

``claim_from_template`` plays the resourceclaim controller's part for a pod whose claim comes
from a ResourceClaimTemplate.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ObjectError, UnsupportedError
from . import validation as apival
from .fields import FieldReader, metadata_name
from .quantity import parse_quantity

GROUP = "resource.k8s.io"
API_VERSION = f"{GROUP}/v1"
#: versions read as v1 (same schema for these kinds)
READ_AS_V1 = (API_VERSION, f"{GROUP}/v1beta2")
RESOURCE_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"

ALLOCATION_MODES = ("ExactCount", "All")
#: limits of resource.k8s.io/v1 (types.go)
DEVICE_REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
SELECTORS_MAX = 32
RESOURCE_SLICE_DEVICES_MAX = 128
RESERVED_FOR_MAX = 256
ATTRIBUTE_TYPES = ("int", "bool", "string", "version")


@dataclass(slots=True, eq=False)
class DeviceClass:
    name: str
    v1: dict


@dataclass(slots=True, eq=False)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str            # "" unless node-local
    all_nodes: bool
    has_node_selector: bool
    v1: dict


@dataclass(slots=True, eq=False)
class ResourceClaim:
    """A claim as read or as last written; never changed in place (a change is a new object,
    so what is derived from `v1` is derived once)."""
    namespace: str
    name: str
    uid: str
    v1: dict
    reserved_for: tuple = field(default=())   # (resource, name, uid) of each consumer
    key: str = field(init=False)              # namespace/name
    allocation: dict | None = field(init=False)   # status.allocation
    #: (driver, pool, device) of each allocated device the claim makes busy (admin access
    #: excepted: ListAllAllocatedDevices leaves those out)
    devices: tuple = field(init=False)
    #: uids of the pods that own it as controller (ownerReferences)
    owners: tuple = field(init=False)
    deleting: bool = field(init=False)        # metadata.deletionTimestamp is set

    def __post_init__(self) -> None:
        v1 = self.v1
        meta = v1.get("metadata") or {}
        self.key = f"{self.namespace}/{self.name}"
        self.deleting = bool(meta.get("deletionTimestamp"))
        alloc = self.allocation = (v1.get("status") or {}).get("allocation")
        results = (alloc.get("devices") or {}).get("results") if alloc else None
        self.devices = tuple([(r["driver"], r["pool"], r["device"]) for r in results
                              if not r.get("adminAccess")]) if results else ()
        refs = meta.get("ownerReferences")
        self.owners = tuple([ref["uid"] for ref in refs
                             if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("uid")]) if refs else ()


@dataclass(slots=True, eq=False)
class ResourceClaimTemplate:
    namespace: str
    name: str
    v1: dict

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def as_v1(kind: str, raw) -> tuple[str, str, dict]:
    """(namespace, name, the object as resource.k8s.io/v1); refuses other versions by name."""
    ns, name = metadata_name(kind, raw)
    obj = f"{kind} {ns + '/' if ns else ''}{name}"
    version = raw.get("apiVersion")
    if version not in READ_AS_V1:
        raise UnsupportedError(obj, "apiVersion", f'{version!r} is not supported (read: {", ".join(READ_AS_V1)})')
    if raw.get("kind", kind) != kind:
        raise ObjectError(obj, "kind", f"expected {kind}, got {raw.get('kind')!r}")
    v1 = raw if version == API_VERSION else {**raw, "apiVersion": API_VERSION}
    return ns, name, v1


def parse_device_class(raw) -> DeviceClass:
    """A DeviceClass (cluster-scoped)."""
    _, name, v1 = as_v1("DeviceClass", raw)
    obj = f"DeviceClass {name}"
    apival.check_meta(obj, None, name, v1["metadata"])
    r = FieldReader(obj)
    spec = r.mapping(v1, "spec", "spec")
    _selectors(r, spec, "spec.selectors")
    return DeviceClass(name, v1)


def parse_resource_slice(raw) -> ResourceSlice:
    """A ResourceSlice: its pool, generation, slice count and where its devices are."""
    _, name, v1 = as_v1("ResourceSlice", raw)
    obj = f"ResourceSlice {name}"
    apival.check_meta(obj, None, name, v1["metadata"])
    r = FieldReader(obj)
    spec = r.mapping(v1, "spec", "spec")
    driver = r.string(spec, "driver", "spec.driver")
    if not driver:
        raise ObjectError(obj, "spec.driver", "Required value")
    pool = r.mapping(spec, "pool", "spec.pool")
    pool_name = r.string(pool, "name", "spec.pool.name")
    if not pool_name:
        raise ObjectError(obj, "spec.pool.name", "Required value")
    generation = r.integer(pool, "generation", "spec.pool.generation")
    if generation < 0:
        apival.invalid(obj, "spec.pool.generation", generation, "must be greater than or equal to 0")
    count = r.integer(pool, "resourceSliceCount", "spec.pool.resourceSliceCount")
    if count <= 0:
        apival.invalid(obj, "spec.pool.resourceSliceCount", count, "must be greater than zero")
    node_name = r.string(spec, "nodeName", "spec.nodeName")
    all_nodes = r.boolean(spec, "allNodes", "spec.allNodes")
    has_selector = spec.get("nodeSelector") is not None
    per_device = r.boolean(spec, "perDeviceNodeSelection", "spec.perDeviceNodeSelection")
    set_ = sum(map(bool, (node_name, has_selector, all_nodes, per_device)))
    if set_ == 0:
        raise ObjectError(obj, "spec", "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                       "`perDeviceNodeSelection` is required")
    if set_ > 1:
        raise ObjectError(obj, "spec", "Invalid value: {`nodeName`, `nodeSelector`, `allNodes`, "
                                       "`perDeviceNodeSelection`}: exactly one of `nodeName`, `nodeSelector`, "
                                       "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set")
    if per_device:
        raise UnsupportedError(obj, "spec.perDeviceNodeSelection",
                               "the DRAPartitionableDevices feature gate is not implemented")
    _devices(r, spec)
    return ResourceSlice(name, driver, pool_name, generation, count, node_name, all_nodes, has_selector, v1)



def _unique_name(r: FieldReader, item: dict, path: str, seen: set) -> str:
    """An item's `name`: required, a DNS label, unique among `seen` (which it joins)."""
    name = r.string(item, "name", f"{path}.name")
    if not name:
        raise ObjectError(r.obj, f"{path}.name", "Required value")
    apival.check(r.obj, f"{path}.name", name, apival.dns1123_label_errors(name))
    if name in seen:
        raise ObjectError(r.obj, f"{path}.name", f"Duplicate value: {apival.go_quote(name)}")
    seen.add(name)
    return name

def _devices(r: FieldReader, spec: dict):
    devices = r.seq(spec, "devices", "spec.devices")
    if len(devices) > RESOURCE_SLICE_DEVICES_MAX:
        raise ObjectError(r.obj, "spec.devices", f"Too many: {len(devices)}: must have at most "
                                                 f"{RESOURCE_SLICE_DEVICES_MAX} items")
    seen: set[str] = set()
    for i, d in enumerate(devices):
        path = f"spec.devices[{i}]"
        d = r.item(d, path)
        name = _unique_name(r, d, path, seen)
        for key, attr in r.mapping(d, "attributes", f"{path}.attributes").items():
            apath = f"{path}.attributes[{apival.go_quote(key)}]"
            attr = r.item(attr, apath)
            kinds = [k for k in ATTRIBUTE_TYPES if attr.get(k) is not None]
            if len(kinds) != 1:
                raise ObjectError(r.obj, apath, "Invalid value: exactly one value must be specified")
        for key, cap in r.mapping(d, "capacity", f"{path}.capacity").items():
            cpath = f"{path}.capacity[{apival.go_quote(key)}]"
            value = r.item(cap, cpath).get("value")
            if value is None:
                raise ObjectError(r.obj, f"{cpath}.value", "Required value")
            parse_quantity(str(value), r.obj, f"{cpath}.value")
        for unsupported, gate in (("consumesCounters", "DRAPartitionableDevices"),
                                  ("taints", "DRADeviceTaints"), ("bindingConditions", "DRADeviceBindingConditions")):
            if d.get(unsupported):
                raise UnsupportedError(r.obj, f"{path}.{unsupported}", f"the {gate} feature gate is not implemented")


def _selectors(r: FieldReader, owner: dict, path: str):
    selectors = r.seq(owner, "selectors", path)
    if len(selectors) > SELECTORS_MAX:
        raise ObjectError(r.obj, path, f"Too many: {len(selectors)}: must have at most {SELECTORS_MAX} items")
    for i, s in enumerate(selectors):
        s = r.item(s, f"{path}[{i}]")
        cel = r.mapping(s, "cel", f"{path}[{i}].cel")
        if not r.string(cel, "expression", f"{path}[{i}].cel.expression"):
            raise ObjectError(r.obj, f"{path}[{i}].cel.expression", "Required value")


def _device_class_name(r: FieldReader, req: dict, path: str):
    name = r.string(req, "deviceClassName", f"{path}.deviceClassName")
    if not name:
        raise ObjectError(r.obj, f"{path}.deviceClassName", "Required value")
    apival.check(r.obj, f"{path}.deviceClassName", name, apival.subdomain_errors(name))


def _count(r: FieldReader, req: dict, path: str):
    mode = r.string(req, "allocationMode", f"{path}.allocationMode") or "ExactCount"
    if mode not in ALLOCATION_MODES:
        raise ObjectError(r.obj, f"{path}.allocationMode",
                          f'Unsupported value: {apival.go_quote(mode)}: supported values: "All", "ExactCount"')
    count = r.integer(req, "count", f"{path}.count", 1 if mode == "ExactCount" else 0)
    if mode == "ExactCount" and count <= 0:
        apival.invalid(r.obj, f"{path}.count", count, "must be greater than zero")
    if mode == "All" and req.get("count"):
        apival.invalid(r.obj, f"{path}.count", count, 'must not be specified when allocationMode is "All"')


def _claim_spec(r: FieldReader, spec: dict, path: str):
    devices = r.mapping(spec, "devices", f"{path}.devices")
    requests = r.seq(devices, "requests", f"{path}.devices.requests")
    if len(requests) > DEVICE_REQUESTS_MAX:
        raise ObjectError(r.obj, f"{path}.devices.requests",
                          f"Too many: {len(requests)}: must have at most {DEVICE_REQUESTS_MAX} items")
    names: set[str] = set()
    for i, req in enumerate(requests):
        rpath = f"{path}.devices.requests[{i}]"
        req = r.item(req, rpath)
        name = _unique_name(r, req, rpath, names)
        exactly, first = req.get("exactly"), req.get("firstAvailable")
        if (exactly is None) == (not first):
            raise ObjectError(r.obj, rpath, "Required value: exactly one of `exactly` or `firstAvailable` is required")
        if exactly is not None:
            exactly = r.mapping(req, "exactly", f"{rpath}.exactly")
            _subrequest(r, exactly, f"{rpath}.exactly")
            continue
        subs = r.seq(req, "firstAvailable", f"{rpath}.firstAvailable")
        if len(subs) > FIRST_AVAILABLE_MAX:
            raise ObjectError(r.obj, f"{rpath}.firstAvailable",
                              f"Too many: {len(subs)}: must have at most {FIRST_AVAILABLE_MAX} items")
        sub_names = set()
        for j, sub in enumerate(subs):
            spath = f"{rpath}.firstAvailable[{j}]"
            sub = r.item(sub, spath)
            sname = r.string(sub, "name", f"{spath}.name")
            if not sname:
                raise ObjectError(r.obj, f"{spath}.name", "Required value")
            if sname in sub_names:
                raise ObjectError(r.obj, f"{spath}.name", f"Duplicate value: {apival.go_quote(sname)}")
            sub_names.add(sname)
            _subrequest(r, sub, spath)


def _subrequest(r: FieldReader, req: dict, path: str):
    _device_class_name(r, req, path)
    _selectors(r, req, f"{path}.selectors")
    _count(r, req, path)


def _reserved_for(r: FieldReader, status: dict) -> tuple:
    entries = r.seq(status, "reservedFor", "status.reservedFor")
    if len(entries) > RESERVED_FOR_MAX:
        raise ObjectError(r.obj, "status.reservedFor",
                          f"Too many: {len(entries)}: must have at most {RESERVED_FOR_MAX} items")
    out = []
    for i, e in enumerate(entries):
        e = r.item(e, f"status.reservedFor[{i}]")
        resource = r.string(e, "resource", f"status.reservedFor[{i}].resource")
        name = r.string(e, "name", f"status.reservedFor[{i}].name")
        uid = r.string(e, "uid", f"status.reservedFor[{i}].uid")
        for f, v in (("resource", resource), ("name", name), ("uid", uid)):
            if not v:
                raise ObjectError(r.obj, f"status.reservedFor[{i}].{f}", "Required value")
        out.append((resource, name, uid))
    if out and not status.get("allocation"):
        raise ObjectError(r.obj, "status.reservedFor",
                          "Forbidden: may not be specified when `allocated` is not set")
    return tuple(out)


def _namespaced(kind: str, raw) -> tuple[str, str, dict, FieldReader]:
    """A namespaced object read as v1, its metadata checked: (namespace, name, v1, reader)."""
    ns, name, v1 = as_v1(kind, raw)
    obj = f"{kind} {ns}/{name}"
    if not ns:
        raise ObjectError(obj, "metadata.namespace", "Required value")
    apival.check_meta(obj, ns, name, v1["metadata"])
    return ns, name, v1, FieldReader(obj)


def parse_resource_claim(raw) -> ResourceClaim:
    """A ResourceClaim: spec and status (allocation, reservedFor)."""
    ns, name, v1, r = _namespaced("ResourceClaim", raw)
    _claim_spec(r, r.mapping(v1, "spec", "spec"), "spec")
    status = r.mapping(v1, "status", "status")
    reserved = _reserved_for(r, status)
    _allocation_results(r, status)
    uid = r.string(v1["metadata"], "uid", "metadata.uid")
    return ResourceClaim(ns, name, uid, v1, reserved)


def _allocation_results(r: FieldReader, status: dict) -> None:
    """status.allocation's device results: the fields the scheduler reads of each."""
    alloc = r.mapping(status, "allocation", "status.allocation")
    devices = r.mapping(alloc, "devices", "status.allocation.devices")
    for i, e in enumerate(r.seq(devices, "results", "status.allocation.devices.results")):
        path = f"status.allocation.devices.results[{i}]"
        e = r.item(e, path)
        for f in ("request", "driver", "pool", "device"):
            if not r.string(e, f, f"{path}.{f}"):
                raise ObjectError(r.obj, f"{path}.{f}", "Required value")
        r.boolean(e, "adminAccess", f"{path}.adminAccess")


def with_status(claim: ResourceClaim, status: dict, metadata: dict | None = None) -> ResourceClaim:
    """The claim with a status the scheduler or the resourceclaim controller wrote (well formed
    by construction, so not read again)."""
    reserved = tuple((e["resource"], e["name"], e["uid"]) for e in status.get("reservedFor") or ())
    v1 = {**claim.v1, "status": status}
    if metadata is not None:
        v1["metadata"] = metadata
    return ResourceClaim(claim.namespace, claim.name, claim.uid, v1, reserved)


def parse_template_claim(raw: dict) -> ResourceClaim:
    """A claim claim_from_template made for a pod already read: its spec is the template's,
    read with the template; its name, the pod's and the pod claim's joined by "-", is a valid
    name when short enough; labels from the template are checked."""
    md = raw["metadata"]
    if len(md["name"]) > 253 or md.get("labels"):
        ns, name, v1, r = _namespaced("ResourceClaim", raw)
        return ResourceClaim(ns, name, "", v1, ())
    return ResourceClaim(md["namespace"], md["name"], "", raw, ())


def parse_resource_claim_template(raw) -> ResourceClaimTemplate:
    """A ResourceClaimTemplate: spec.spec is a ResourceClaimSpec."""
    ns, name, v1, r = _namespaced("ResourceClaimTemplate", raw)
    outer = r.mapping(v1, "spec", "spec")
    r.mapping(outer, "metadata", "spec.metadata")
    _claim_spec(r, r.mapping(outer, "spec", "spec.spec"), "spec.spec")
    return ResourceClaimTemplate(ns, name, v1)


def claim_from_template(pod: dict, entry: str, template: ResourceClaimTemplate) -> dict:
    """The ResourceClaim the resourceclaim controller creates for the pod's claim `entry` from
    `template`: named `<pod name>-<entry>` (kube-controller-manager adds a generated suffix;
    the deterministic name keeps runs reproducible), owned by the pod, annotated with the pod's
    claim name."""
    meta = pod.get("metadata") or {}
    tmeta = (template.v1.get("spec") or {}).get("metadata") or {}
    annotations = {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: entry}
    md = {"name": f"{meta.get('name', '')}-{entry}", "namespace": meta.get("namespace") or "default",
          "annotations": annotations,
          "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta.get("name", ""),
                               "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}]}
    if tmeta.get("labels"):
        md["labels"] = dict(tmeta["labels"])
    return {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": md,
            "spec": (template.v1.get("spec") or {}).get("spec") or {}}


def claim_statuses(pod: dict) -> list[dict]:
    """The pod's ``status.resourceClaimStatuses`` once the controller made its template claims:
    one entry per ``spec.resourceClaims`` entry that names a template."""
    return [{"name": e["name"], "resourceClaimName": f"{pod['metadata']['name']}-{e['name']}"}
            for e in (pod.get("spec") or {}).get("resourceClaims") or []
            if e.get("resourceClaimTemplateName")]
