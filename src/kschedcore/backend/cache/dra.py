"""DRAState: Dynamic Resource Allocation's objects as the scheduler's informers and
dra_manager hold them (DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates),
the devices in use, and the resourceclaim controller's part (claims made from templates for
pending pods, released when their pods go)."""
from __future__ import annotations

from typing import Any

from ...errors import ValidationError
from ...objects import resource as R

_PARSERS: dict[str, Any] = {"DeviceClass": R.parse_device_class, "ResourceSlice": R.parse_resource_slice,
            "ResourceClaim": R.parse_resource_claim, "ResourceClaimTemplate": R.parse_resource_claim_template}


class DRAState:
    def __init__(self):
        self.classes: dict[str, R.DeviceClass] = {}
        self.slices: dict[str, R.ResourceSlice] = {}
        self.claims: dict[str, R.ResourceClaim] = {}
        self.templates: dict[str, R.ResourceClaimTemplate] = {}
        #: bumped by every change of a class or slice (an allocator made for them is stale)
        self.version = 0
        self._allocated = None          # the devices in use, made again after a claim changes
        #: pod key -> {pod claim name: claim name}: the controller's status.resourceClaimStatuses
        #: of the pods it made claims for here (pods that arrive with them keep their own)
        self.generated: dict[str, dict] = {}
        #: (old claim or None, new claim) of every claim added or changed, when a loop hears them
        self.log: list | None = None

    def snapshot(self) -> tuple:
        """What a fork's revert restores (the objects themselves are replaced, never changed)."""
        return (dict(self.classes), dict(self.slices), dict(self.claims), dict(self.templates), self.version,
                {k: dict(v) for k, v in self.generated.items()})

    def restore(self, saved: tuple) -> None:
        classes, slices, claims, templates, version, generated = saved
        self.classes, self.slices, self.claims, self.templates = dict(classes), dict(slices), dict(claims), dict(templates)
        self.version, self.generated, self._allocated = version + 1, dict(generated), None

    # ---- objects ---------------------------------------------------------------------------------
    def add(self, raw, index_hint: str = "") -> Any:
        """Adds (or replaces) a resource.k8s.io object; returns the parsed object."""
        kind = raw.get("kind") if isinstance(raw, dict) else None
        parse = _PARSERS.get(kind or "")
        if parse is None:
            raise ValidationError(f"object {index_hint}".strip(), "kind", f"expected one of {', '.join(_PARSERS)}")
        obj = parse(raw)
        if kind == "DeviceClass":
            self.classes[obj.name] = obj
        elif kind == "ResourceSlice":
            self.slices[obj.name] = obj
        elif kind == "ResourceClaim":
            old, self.claims[obj.key] = self.claims.get(obj.key), obj
            self._allocated = None
            if self.log is not None:
                self.log.append((old, obj))
        else:
            self.templates[obj.key] = obj
        self.version += kind in ("DeviceClass", "ResourceSlice")
        return obj

    def remove(self, kind: str, namespace: str, name: str) -> bool:
        """Removes an object by kind and name; False if there is none."""
        stores: dict[str, dict[str, Any]] = {"DeviceClass": self.classes, "ResourceSlice": self.slices,
                                             "ResourceClaim": self.claims, "ResourceClaimTemplate": self.templates}
        store = stores.get(kind)
        key = f"{namespace}/{name}" if kind in ("ResourceClaim", "ResourceClaimTemplate") else name
        if store is None or store.pop(key, None) is None:
            return False
        self.version += kind in ("DeviceClass", "ResourceSlice")
        self._allocated = None
        return True

    def class_dicts(self) -> dict:
        return {name: c.v1 for name, c in self.classes.items()}

    def slice_dicts(self) -> list:
        return [s.v1 for s in self.slices.values()]

    def local_slice_nodes(self) -> set | None:
        """The nodes with node-local slices, or None when some slice may reach other nodes
        (nodeSelector, allNodes)."""
        if any(not s.node_name for s in self.slices.values()):
            return None
        return {s.node_name for s in self.slices.values()}

    # ---- devices in use ----------------------------------------------------------------------------
    def allocated_devices(self) -> set:
        """(driver, pool, device) of every allocated claim's results, admin-access ones
        excepted (ListAllAllocatedDevices: they do not make a device busy)."""
        if self._allocated is None:
            used = set()
            for c in self.claims.values():
                alloc = c.allocation
                for r in ((alloc or {}).get("devices") or {}).get("results") or ():
                    if not r.get("adminAccess"):
                        used.add((r["driver"], r["pool"], r["device"]))
            self._allocated = used
        return self._allocated

    # ---- the claims of a pod -----------------------------------------------------------------------
    def pod_claims(self, pod) -> list:
        """foreachPodResourceClaim: the pod's claims in spec order; raises ClaimLookupError
        with upstream's words when one is missing, being deleted or not the pod's."""
        raw = pod.raw
        statuses = {s.get("name"): s for s in ((raw.get("status") or {}).get("resourceClaimStatuses") or ())}
        for entry, name in self.generated.get(pod.key, {}).items():
            statuses.setdefault(entry, {"name": entry, "resourceClaimName": name})
        out = []
        for entry in pod.resource_claims:
            name, must_own = entry.get("resourceClaimName"), False
            if not name:
                if not entry.get("resourceClaimTemplateName"):
                    raise ClaimLookupError(f'pod "{pod.key}", spec.resourceClaim "{entry.get("name")}": '
                                           f"none of the supported fields are set")
                status = statuses.get(entry.get("name"))
                if status is None:
                    raise ClaimLookupError(f'pod "{pod.key}": ResourceClaim not created yet')
                name, must_own = status.get("resourceClaimName"), True
                if not name:
                    continue            # the controller decided the pod needs no claim
            claim = self.claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if (claim.v1.get("metadata") or {}).get("deletionTimestamp"):
                raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
            if must_own and not _owned_by(claim, pod):
                raise ClaimLookupError(f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                                       f"(pod is not owner)")
            out.append(claim)
        return out

    # ---- the resourceclaim controller -----------------------------------------------------------------
    def create_template_claims(self, pod) -> list:
        """A pending pod's claims from templates: created (``<pod name>-<claim name>``) and
        recorded in its status.resourceClaimStatuses. Returns the claims created; a missing
        template creates nothing (the pod waits in PreEnqueue)."""
        entries = [e for e in pod.resource_claims if e.get("resourceClaimTemplateName")]
        if not entries or (pod.raw.get("status") or {}).get("resourceClaimStatuses") or pod.key in self.generated:
            return []
        made, names = [], {}
        meta = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid}
        for e in entries:
            template = self.templates.get(f"{pod.namespace}/{e['resourceClaimTemplateName']}")
            if template is None:
                break
            names[e["name"]] = f"{pod.name}-{e['name']}"
            if f"{pod.namespace}/{names[e['name']]}" not in self.claims:
                made.append(self.add(R.claim_from_template({"metadata": meta}, e["name"], template)))
        else:
            self.generated[pod.key] = names
        return made

    def release(self, pod) -> list:
        """The pod is gone: its template claims are deleted, its reservation of the others
        removed (an allocated claim reserved by nobody is deallocated, as the resourceclaim
        controller does). Returns the claims changed."""
        changed = []
        self.generated.pop(pod.key, None)
        for key, claim in list(self.claims.items()):
            if claim.namespace != pod.namespace:
                continue
            if _owned_by(claim, pod):
                del self.claims[key]
                changed.append(claim)
            elif any(uid == pod.uid for _, _, uid in claim.reserved_for):
                changed.append(self._unreserve(claim, pod.uid))
        if changed:
            self._allocated = None
        return changed

    def unreserve(self, pod) -> list:
        """The pod's reservations dropped from every claim (its binding failed)."""
        changed = [self._unreserve(c, pod.uid) for c in list(self.claims.values())
                   if c.namespace == pod.namespace and any(uid == pod.uid for _, _, uid in c.reserved_for)]
        if changed:
            self._allocated = None
        return changed

    def _unreserve(self, claim, uid: str):
        status = dict(claim.v1.get("status") or {})
        rest = [r for r in status.get("reservedFor") or () if r.get("uid") != uid]
        status["reservedFor"] = rest
        if not rest:
            status.pop("reservedFor")
            status.pop("allocation", None)
            status.pop("devices", None)
        return self.add({**claim.v1, "status": status})

    def bind(self, pod, claim, allocation: dict | None):
        """PreBind's write: the allocation (if new) and the pod in status.reservedFor."""
        status = dict(claim.v1.get("status") or {})
        if allocation is not None:
            status["allocation"] = allocation
        reserved = list(status.get("reservedFor") or ())
        if not any(r.get("uid") == pod.uid for r in reserved):
            reserved.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
        status["reservedFor"] = reserved
        meta = dict(claim.v1.get("metadata") or {})
        if R.DELETE_PROTECTION_FINALIZER not in (meta.get("finalizers") or ()):
            meta["finalizers"] = [*(meta.get("finalizers") or ()), R.DELETE_PROTECTION_FINALIZER]
        return self.add({**claim.v1, "metadata": meta, "status": status})

    def deallocate(self, claim):
        """PostFilter's deallocation: allocation and reservations cleared."""
        status = {k: v for k, v in (claim.v1.get("status") or {}).items()
                  if k not in ("allocation", "reservedFor", "devices")}
        return self.add({**claim.v1, "status": status})


def claim_allocations(dra: DRAState, pod) -> dict:
    """The pod's claims' allocations by claim name, as records show them."""
    try:
        claims = dra.pod_claims(pod)
    except ClaimLookupError:
        return {}
    out = {}
    for c in claims:
        alloc = c.allocation or {}
        devices = [{"request": r["request"], "driver": r["driver"], "pool": r["pool"], "device": r["device"],
                    **({"adminAccess": True} if r.get("adminAccess") else {})}
                   for r in (alloc.get("devices") or {}).get("results") or ()]
        out[c.name] = {"devices": devices, "nodeSelector": alloc.get("nodeSelector")}
    return out


class ClaimLookupError(Exception):
    """A pod's claim cannot be used yet (upstream's error text)."""


def _owned_by(claim, pod) -> bool:
    refs = (claim.v1.get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("controller") and r.get("uid") == pod.uid and r.get("kind") == "Pod" for r in refs)
