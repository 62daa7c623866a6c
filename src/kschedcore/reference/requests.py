"""Pod resource requests, node allocatable (semantics §1).

Written from k8s.io/component-helpers/resource/helpers.go (PodRequests,
AggregateContainerRequests) and pkg/scheduler/framework/types.go (Resource,
PodInfo.CalculateResource, getNonMissingContainerRequests).

Quantities are summed and compared *exactly* (as ``fractions.Fraction``) and converted to
integers once, at the end, with a ceiling: cpu -> ceil(q * 1000) millicores, everything
else -> ceil(q) (§0, §1.1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from . import names
from .names import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from .exactqty import exact_quantity

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest (§1.4)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

#: The NonMissingContainerRequests list used without pod-level requests (§1.4).
DEFAULT_NON_MISSING = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}


def milli_value(q: Fraction) -> int:
    """resource.Quantity.MilliValue(): ceil(q * 1000)."""
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """resource.Quantity.Value(): ceil(q)."""
    return math.ceil(q)


# --- ResourceList helpers (dict name -> exact Fraction) -------------------------------------

def resource_list(raw: dict | None) -> dict[str, Fraction]:
    """A v1.ResourceList from its JSON form, with exact values."""
    out: dict[str, Fraction] = {}
    for name, text in (raw or {}).items():
        out[name] = exact_quantity(text)
    return out


def add_resource_list(acc: dict[str, Fraction], new: dict[str, Fraction]) -> None:
    """addResourceList: acc[name] += new[name] (a missing name starts from 0)."""
    for name, q in new.items():
        acc[name] = acc.get(name, Fraction(0)) + q


def max_resource_list(acc: dict[str, Fraction], new: dict[str, Fraction]) -> None:
    """maxResourceList: acc[name] = max(acc[name], new[name]); a missing name takes new's."""
    for name, q in new.items():
        if name not in acc or q > acc[name]:
            acc[name] = q


def max_of(first: dict[str, Fraction] | None, *others: dict[str, Fraction] | None) -> dict[str, Fraction]:
    """helpers.max(a, b...): per-name max over several lists (union of names)."""
    result = dict(first or {})
    for other in others:
        max_resource_list(result, other or {})
    return result


def apply_non_missing(reqs: dict[str, Fraction], non_missing: dict[str, Fraction]) -> dict[str, Fraction]:
    """applyNonMissing: a copy of reqs where each name of non_missing *absent* from reqs is
    added with the default; an explicit value (even 0) is kept (§1.4)."""
    out = dict(reqs)
    for name, q in non_missing.items():
        if name not in reqs:
            out[name] = out.get(name, Fraction(0)) + q
    return out


# --- pod ---------------------------------------------------------------------------------

def _spec(pod: dict) -> dict:
    return pod.get("spec") or {}


def is_sidecar(container: dict) -> bool:
    """An init container with restartPolicy Always (SidecarContainers, GA)."""
    return container.get("restartPolicy") == "Always"


def is_pod_level_requests_set(pod: dict) -> bool:
    """IsPodLevelRequestsSet: spec.resources.requests names cpu, memory or hugepages-*."""
    resources = _spec(pod).get("resources")
    if resources is None:
        return False
    requests = resources.get("requests") or {}
    return any(names.is_supported_pod_level_resource(n) for n in requests)


def is_pod_resize_infeasible(pod: dict) -> bool:
    """IsPodResizeInfeasible: the first PodResizePending condition has reason Infeasible."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodResizePending":
            return cond.get("reason") == "Infeasible"
    return False


def _container_statuses(pod: dict) -> dict[str, dict]:
    status = pod.get("status") or {}
    by_name: dict[str, dict] = {}
    for cs in status.get("containerStatuses") or []:
        by_name[cs.get("name")] = cs
    for cs in status.get("initContainerStatuses") or []:
        by_name[cs.get("name")] = cs
    return by_name


def _container_requests(container: dict) -> dict[str, Fraction]:
    return resource_list((container.get("resources") or {}).get("requests"))


def _status_requests(pod: dict, container: dict, cs: dict) -> dict[str, Fraction]:
    """determineContainerReqs (§1.3): max of spec, status.resources and allocatedResources;
    spec left out when the resize is Infeasible."""
    status_reqs = resource_list((cs.get("resources") or {}).get("requests"))
    allocated = resource_list(cs.get("allocatedResources"))
    if is_pod_resize_infeasible(pod):
        return max_of(status_reqs, allocated)
    return max_of(_container_requests(container), status_reqs, allocated)


def aggregate_container_requests(pod: dict, *, use_status_resources: bool,
                                 non_missing: dict[str, Fraction] | None) -> dict[str, Fraction]:
    """AggregateContainerRequests (§1.1 steps 1-3, §1.3, §1.4)."""
    spec = _spec(pod)
    statuses = _container_statuses(pod) if use_status_resources else {}

    reqs: dict[str, Fraction] = {}
    # Step 1a: every app container.
    for container in spec.get("containers") or []:
        creqs = _container_requests(container)
        if use_status_resources:
            cs = statuses.get(container.get("name"))
            if cs is not None and cs.get("resources") is not None:
                creqs = _status_requests(pod, container, cs)
        if non_missing:
            creqs = apply_non_missing(creqs, non_missing)
        add_resource_list(reqs, creqs)

    # Steps 1b + 2: init containers in order; sidecars add to base and to the running sum.
    sidecar_running: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for container in spec.get("initContainers") or []:
        creqs = _container_requests(container)
        if use_status_resources and is_sidecar(container):
            cs = statuses.get(container.get("name"))
            if cs is not None and cs.get("resources") is not None:
                creqs = _status_requests(pod, container, cs)
        if non_missing:
            creqs = apply_non_missing(creqs, non_missing)
        if is_sidecar(container):
            add_resource_list(reqs, creqs)
            add_resource_list(sidecar_running, creqs)
            candidate = dict(sidecar_running)
        else:
            candidate = {}
            add_resource_list(candidate, creqs)
            add_resource_list(candidate, sidecar_running)
        max_resource_list(init_max, candidate)

    # Step 3.
    max_resource_list(reqs, init_max)
    return reqs


def pod_requests(pod: dict, *, use_status_resources: bool = False, skip_pod_level_resources: bool = False,
                 non_missing: dict[str, Fraction] | None = None,
                 exclude_overhead: bool = False) -> dict[str, Fraction]:
    """PodRequests (§1.1 steps 1-5)."""
    spec = _spec(pod)
    reqs = aggregate_container_requests(pod, use_status_resources=use_status_resources,
                                        non_missing=non_missing)
    # Step 4: pod-level requests replace the aggregate for cpu, memory, hugepages-*.
    if not skip_pod_level_resources and is_pod_level_requests_set(pod):
        for name, text in ((spec.get("resources") or {}).get("requests") or {}).items():
            if names.is_supported_pod_level_resource(name):
                reqs[name] = exact_quantity(text)
    # Step 5: overhead.
    if not exclude_overhead and spec.get("overhead") is not None:
        add_resource_list(reqs, resource_list(spec.get("overhead")))
    return reqs


# --- framework.Resource ---------------------------------------------------------------------

@dataclass
class Resource:
    """framework.Resource: int64 amounts (cpu in millicores) and scalar entries (§1.2)."""
    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    def add(self, rl: dict[str, Fraction]) -> None:
        """Resource.Add: each quantity converted on its own, then added."""
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu += milli_value(q)
            elif name == MEMORY:
                self.memory += value(q)
            elif name == PODS:
                self.allowed_pod_number += value(q)
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += value(q)
            elif names.is_scalar_resource_name(name):
                self.scalar[name] = self.scalar.get(name, 0) + value(q)

    def set_max(self, rl: dict[str, Fraction]) -> None:
        """Resource.SetMaxResource (``pods`` ignored)."""
        for name, q in rl.items():
            if name == MEMORY:
                self.memory = max(self.memory, value(q))
            elif name == CPU:
                self.milli_cpu = max(self.milli_cpu, milli_value(q))
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, value(q))
            elif names.is_scalar_resource_name(name):
                self.scalar[name] = max(self.scalar.get(name, 0), value(q))

    def add_resource(self, other: "Resource", sign: int = 1) -> None:
        """NodeInfo.update's per-field accumulation (allowed pods are not accumulated)."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for name, amount in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * amount


def node_allocatable(node: dict) -> Resource:
    """NewResource(node.status.allocatable) (§1.2); its ``pods`` is the pod-count limit."""
    res = Resource()
    res.add(resource_list((node.get("status") or {}).get("allocatable")))
    return res


def fit_filter_request(pod: dict) -> Resource:
    """NodeResourcesFit PreFilter (computePodResourceRequest, §3.6): pod-level honoured,
    no status resources, SetMaxResource onto an empty Resource."""
    res = Resource()
    res.set_max(pod_requests(pod, use_status_resources=False, skip_pod_level_resources=False))
    return res


@dataclass
class PodResource:
    """fwk.PodResource: what a pod adds to NodeInfo.Requested / NonZeroRequested."""
    resource: Resource
    non0_cpu: int
    non0_mem: int


def non_missing_container_requests(requests: dict[str, Fraction], pod_level_set: bool) -> dict[str, Fraction]:
    """getNonMissingContainerRequests (§1.4)."""
    if not pod_level_set:
        return dict(DEFAULT_NON_MISSING)
    out: dict[str, Fraction] = {}
    if CPU not in requests:
        out[CPU] = DEFAULT_NON_MISSING[CPU]
    if MEMORY not in requests:
        out[MEMORY] = DEFAULT_NON_MISSING[MEMORY]
    return out


def pod_resource_on_node(pod: dict) -> PodResource:
    """PodInfo.CalculateResource for a pod in a NodeInfo (§1.3, §1.4): status resources on,
    pod-level resources on."""
    requests = pod_requests(pod, use_status_resources=True, skip_pod_level_resources=False)
    pod_level_set = is_pod_level_requests_set(pod)
    non_missing = non_missing_container_requests(requests, pod_level_set)
    non0 = requests
    if non_missing:
        non0 = pod_requests(pod, use_status_resources=True, skip_pod_level_resources=False,
                            non_missing=non_missing)
    res = Resource()
    res.add(requests)
    return PodResource(resource=res,
                       non0_cpu=milli_value(non0.get(CPU, Fraction(0))),
                       non0_mem=value(non0.get(MEMORY, Fraction(0))))


def scorer_pod_request(pod: dict, resource_name: str, *, use_requested: bool, use_status_resources: bool,
                       pod_level_resources: bool) -> int:
    """resourceAllocationScorer.calculatePodResourceRequest (§4.1, §4.2).

    NodeResourcesFit's scorer: use_requested False (non-zero defaults for cpu and memory),
    status off and pod-level resources off -- the §1.4 quirk.  BalancedAllocation:
    use_requested True, status on, pod-level on.
    """
    non_missing = None if use_requested else dict(DEFAULT_NON_MISSING)
    reqs = pod_requests(pod, use_status_resources=use_status_resources,
                        skip_pod_level_resources=not pod_level_resources, non_missing=non_missing)
    q = reqs.get(resource_name, Fraction(0))
    if resource_name == CPU:
        return milli_value(q)
    return value(q)
