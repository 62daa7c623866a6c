"""What the structured allocator reads of claims and writes for them
(``allocator_experimental.go``): each request's data (``validateDeviceRequest``), a claim's
constraints, the AllocationResult (devices, configuration, node selector)."""
from __future__ import annotations

from collections.abc import Mapping

from ..errors import KSchedCoreError
from .constraints import DistinctAttribute, MatchAttribute
from .pools import allocation_node_selector, node_name

#: resourceapi.AllocationResultsMaxSize: the most devices one claim's allocation may hold
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocatorError(KSchedCoreError):
    """A fatal allocation problem (upstream's error text): the plugin reports it as an Error
    status, so the pod's attempt ends with a SchedulerError."""


class AllocationTimedOut(KSchedCoreError):
    """The allocation ran past its deadline (upstream: the Filter's context, with
    DRASchedulerFilterTimeout); the plugin reports ``timed out trying to allocate devices``."""

    def __init__(self) -> None:
        super().__init__("filter operation aborted: context deadline exceeded")


def kobj(claim: Mapping) -> str:
    md = claim.get("metadata") or {}
    return f"{md['namespace']}/{md['name']}" if md.get("namespace") else md.get("name", "")


class Request:
    """A request or subrequest (upstream's requestAccessor) and what allocation needs of it."""
    __slots__ = ("name", "parent", "spec", "class_", "num_devices", "all_devices", "selected", "admin")

    def __init__(self, name: str, spec: Mapping, parent: str = ""):
        self.name = name
        self.parent = parent
        self.spec = spec
        self.class_: dict | None = None
        self.num_devices = 0
        self.all_devices: list = []
        self.selected = 0
        self.admin = bool(spec.get("adminAccess")) if not parent else False


def validate_request(search, req: Request, parent: Mapping | None, key: tuple, claim: Mapping) -> None:
    """``validateDeviceRequest``: selectors, admin access, the class; for All, the devices."""
    spec = req.spec
    for i, sel in enumerate(spec.get("selectors") or []):
        if not (sel.get("cel") or {}).get("expression"):
            raise AllocatorError(f"claim {kobj(claim)}, request {req.name}, selector #{i}: "
                                 "CEL expression empty (unsupported selector type?)")
    if not search.alloc.features.admin_access and spec.get("adminAccess") is not None and not req.parent:
        raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: admin access is requested, "
                             "but the feature is disabled")
    class_name = spec.get("deviceClassName") or ""
    if not class_name:
        raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: missing device class name "
                             "(unsupported request type?)")
    cls = search.alloc.classes.get(class_name)
    if cls is None:
        raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: could not retrieve device class "
                             f'{class_name}: deviceclass.resource.k8s.io "{class_name}" not found')
    req.class_ = cls
    mode = spec.get("allocationMode", "ExactCount")
    if mode == "ExactCount":
        req.num_devices = int(spec.get("count", 1))
    elif mode == "All":
        for pool in search.pools:
            if pool.incomplete:
                raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                                     f"resource pool {pool.pool_id} is currently being updated")
            if pool.invalid:
                raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                                     f"resource pool {pool.pool_id} is currently invalid")
            for s in pool.slices:
                for di, dev in enumerate(s["spec"].get("devices") or []):
                    if search.selectable(key, req, s, di):
                        req.all_devices.append((pool, s, di))
        req.num_devices = len(req.all_devices)
    else:
        raise AllocatorError(f"claim {kobj(claim)}, request {req.name}: unsupported count mode {mode}")


def make_constraints(claim: Mapping) -> list:
    """The claim's constraints; an unknown kind is upstream's error."""
    out: list = []
    for i, c in enumerate((claim["spec"].get("devices") or {}).get("constraints") or []):
        if c.get("matchAttribute") is not None:
            out.append(MatchAttribute(c.get("requests"), c["matchAttribute"]))
        elif c.get("distinctAttribute") is not None:
            out.append(DistinctAttribute(c.get("requests"), c["distinctAttribute"]))
        else:
            raise AllocatorError(f"claim {kobj(claim)}, constraint #{i}: empty constraint "
                                 "(unsupported constraint type?)")
    return out


def allocation_result(search, ci: int, claim: Mapping) -> dict:
    """The claim's AllocationResult: devices, configuration (the classes' then the claim's),
    node selector."""
    picked = search.results[ci]
    results = []
    for r in picked:
        out = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
        if r.admin:
            out["adminAccess"] = True
        results.append(out)
    config = allocation_config(search.requests, ci, claim)
    selector = claim_node_selector(claim, [r.slice for r in picked], [r.spec for r in picked], node_name(search.node))
    return {"devices": {"results": results, "config": config}, "nodeSelector": selector}


def claim_node_selector(claim: Mapping, slices: list, devices: list, target: str) -> dict | None:
    """The AllocationResult's node selector for the devices picked (in their slices)."""
    try:
        return allocation_node_selector(slices, devices, target)
    except ValueError as err:
        raise AllocatorError(f"create NodeSelector for claim {claim['metadata']['name']}: {err}") from None


def allocation_config(search_requests: dict, ci: int, claim: Mapping) -> list:
    """The AllocationResult's configuration: the classes' (of the requests, or of the
    subrequests chosen), then the claim's for the requests it names."""
    config = []
    requests = (claim["spec"].get("devices") or {}).get("requests") or []
    for ri in range(len(requests)):
        req = search_requests[(ci, ri, 0)]
        if req.parent:
            req = search_requests[(ci, ri, req.selected)]
        for c in (req.class_.get("spec") or {}).get("config") or []:
            config.append({"source": "FromClass", **{k: v for k, v in c.items() if k != "requests"}})
    for c in (claim["spec"].get("devices") or {}).get("config") or []:
        body = {k: v for k, v in c.items() if k != "requests"}
        names = c.get("requests") or []
        if not names:
            config.append({"source": "FromClaim", **body})
            continue
        for ri, request in enumerate(requests):
            entry = {"source": "FromClaim", "requests": list(names), **body}
            if request["name"] in names:
                config.append(entry)
                continue
            first = search_requests[(ci, ri, 0)]
            if first.parent:
                sub = request["firstAvailable"][first.selected]["name"]
                if f"{request['name']}/{sub}" in names:
                    config.append(entry)
    return config
