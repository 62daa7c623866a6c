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
        #: the devices in use, (driver, pool, device) -> allocated claims holding it; kept up to
        #: date claim by claim once made (None: made again from the claims when asked)
        self._in_use: dict | None = None
        #: devices whose use began or ended, for a reader that keeps its own view (DeviceIndex)
        self.in_use_log: list | None = None
        #: pod uid -> keys of the claims it owns (ownerReferences) or reserves (reservedFor)
        self._owned: dict[str, set] = {}
        self._reserving: dict[str, set] = {}
        self._added: dict[str, int] = {}    # claim key -> when it was added: self.claims' order
        self._adds = 0
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
        self.classes, self.slices, self.templates = dict(classes), dict(slices), dict(templates)
        self.version, self.generated = version + 1, dict(generated)
        self.claims, self._owned, self._reserving, self._in_use, self._added = {}, {}, {}, None, {}
        for claim in claims.values():
            self._put_claim(claim)

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
            self.put(obj)
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
        if store is None or key not in store:
            return False
        if kind == "ResourceClaim":
            self._drop_claim(key)
        else:
            del store[key]
        self.version += kind in ("DeviceClass", "ResourceSlice")
        return True

    # ---- claims, with what is kept of them --------------------------------------------------------
    def _put_claim(self, claim):
        """Adds or replaces a claim (in its place); returns the one it replaced."""
        old = self.claims.get(claim.key)
        if old is not None:
            self._index(old, -1, claim)
        else:
            self._added[claim.key] = self._adds = self._adds + 1
        self.claims[claim.key] = claim
        self._index(claim, 1, old)
        return old

    def _drop_claim(self, key: str):
        claim = self.claims.pop(key, None)
        if claim is not None:
            self._index(claim, -1)
            del self._added[key]
        return claim

    def _index(self, claim, sign: int, other=None) -> None:
        """The claim's devices in use, its owner and its consumers, counted in (+1) or out (-1);
        what it shares with `other` (the claim replacing it or replaced) is left as it is."""
        key = claim.key
        if other is None or claim.owners != other.owners:
            for uid in claim.owners:
                _count(self._owned, uid, key, sign)
        if other is None or claim.reserved_for != other.reserved_for:
            for _, _, uid in claim.reserved_for:
                _count(self._reserving, uid, key, sign)
        in_use = self._in_use
        if in_use is None or not claim.devices or (other is not None and claim.allocation is other.allocation):
            return
        log = self.in_use_log
        for did in claim.devices:
            n = in_use.get(did, 0) + sign
            if n > 0:
                in_use[did] = n
            else:
                del in_use[did]
            if log is not None and n == (1 if sign > 0 else 0):
                log.append(did)

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
    def allocated_devices(self):
        """(driver, pool, device) of every allocated claim's results, admin-access ones
        excepted (ListAllAllocatedDevices: they do not make a device busy), as the keys of a
        live set view, kept up to date as claims change."""
        if self._in_use is None:
            self._in_use = {}
            log, self.in_use_log = self.in_use_log, None
            for c in self.claims.values():
                self._index_devices_only(c)
            self.in_use_log = log
        return self._in_use.keys()

    def _index_devices_only(self, claim) -> None:
        in_use = self._in_use
        assert in_use is not None
        for did in claim.devices:
            in_use[did] = in_use.get(did, 0) + 1

    # ---- the claims of a pod -----------------------------------------------------------------------
    def pod_claims(self, pod) -> list:
        """foreachPodResourceClaim: the pod's claims in spec order; raises ClaimLookupError
        with upstream's words when one is missing, being deleted or not the pod's."""
        status = pod.raw.get("status")
        listed = status.get("resourceClaimStatuses") if status else None
        statuses = {s.get("name"): s.get("resourceClaimName") for s in listed} if listed else None
        generated = self.generated.get(pod.key)
        claims, prefix, owned = self.claims, pod.namespace + "/", None
        out = []
        for entry in pod.resource_claims:
            name = entry.get("resourceClaimName")
            if not name:
                if not entry.get("resourceClaimTemplateName"):
                    raise ClaimLookupError(f'pod "{pod.key}", spec.resourceClaim "{entry.get("name")}": '
                                           f"none of the supported fields are set")
                key = entry.get("name")
                if statuses is not None and key in statuses:
                    name = statuses[key]
                elif generated is not None and key in generated:
                    name = generated[key]
                else:
                    raise ClaimLookupError(f'pod "{pod.key}": ResourceClaim not created yet')
                if not name:
                    continue            # the controller decided the pod needs no claim
                if owned is None:
                    owned = self._owned.get(pod.uid, ())
                claim = claims.get(prefix + name)
                if claim is not None and not claim.deleting and claim.key not in owned:
                    raise ClaimLookupError(f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                                           f"(pod is not owner)")
            else:
                claim = claims.get(prefix + name)
            if claim is None:
                raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.deleting:
                raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
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
                made.append(self.put(R.parse_template_claim(R.claim_from_template({"metadata": meta}, e["name"],
                                                                                   template))))
        else:
            self.generated[pod.key] = names
        return made

    def release(self, pod) -> list:
        """The pod is gone: its template claims are deleted, its reservation of the others
        removed (an allocated claim reserved by nobody is deallocated, as the resourceclaim
        controller does). Returns the claims changed."""
        changed: list = []
        self.generated.pop(pod.key, None)
        owned, reserving = self._owned.get(pod.uid), self._reserving.get(pod.uid)
        if owned is None and reserving is None:
            return changed
        keys = (owned or set()) | (reserving or set())
        for key in sorted(keys, key=self._added.__getitem__):
            claim = self.claims[key]
            if claim.namespace != pod.namespace:
                continue
            if owned is not None and key in owned:
                self._drop_claim(key)
                changed.append(claim)
            elif any(uid == pod.uid for _, _, uid in claim.reserved_for):
                changed.append(self._unreserve(claim, pod.uid))
        return changed

    def unreserve(self, pod) -> list:
        """The pod's reservations dropped from every claim (its binding failed)."""
        keys = sorted(self._reserving.get(pod.uid, ()), key=self._added.__getitem__)
        return [self._unreserve(self.claims[k], pod.uid) for k in keys if self.claims[k].namespace == pod.namespace]

    def _unreserve(self, claim, uid: str):
        status = dict(claim.v1.get("status") or {})
        rest = [r for r in status.get("reservedFor") or () if r.get("uid") != uid]
        status["reservedFor"] = rest
        if not rest:
            status.pop("reservedFor")
            status.pop("allocation", None)
            status.pop("devices", None)
        return self.put(R.with_status(claim, status))

    def bind(self, pod, claim, allocation: dict | None):
        """PreBind's write: the allocation (if new) and the pod in status.reservedFor."""
        status = dict(claim.v1.get("status") or {})
        if allocation is not None:
            status["allocation"] = allocation
        reserved = list(status.get("reservedFor") or ())
        if not any(r.get("uid") == pod.uid for r in reserved):
            reserved.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
        status["reservedFor"] = reserved
        meta = claim.v1.get("metadata") or {}
        if R.DELETE_PROTECTION_FINALIZER not in (meta.get("finalizers") or ()):
            meta = {**meta, "finalizers": [*(meta.get("finalizers") or ()), R.DELETE_PROTECTION_FINALIZER]}
        return self.put(R.with_status(claim, status, meta))

    def deallocate(self, claim):
        """PostFilter's deallocation: allocation and reservations cleared."""
        status = {k: v for k, v in (claim.v1.get("status") or {}).items()
                  if k not in ("allocation", "reservedFor", "devices")}
        return self.put(R.with_status(claim, status))

    def put(self, claim):
        """Adds or replaces a claim already read (a change the scheduler or the resourceclaim
        controller made); returns it."""
        old = self._put_claim(claim)
        if self.log is not None:
            self.log.append((old, claim))
        return claim


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


def _count(index: dict, uid: str, key: str, sign: int) -> None:
    keys = index.setdefault(uid, set())
    if sign > 0:
        keys.add(key)
    else:
        keys.discard(key)
        if not keys:
            del index[uid]
