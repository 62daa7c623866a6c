"""The node-local default plugins, one small function per extension point (semantics §3, §4).

Every Filter returns ``None`` (Success) or a ``Status``; every Score returns the raw int64
score; normalizations work on a ``{node: score}`` dict in place of a NodeScoreList.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import affinity
from .goarith import go_div, go_float_to_int, go_round
from .names import CPU, EPHEMERAL_STORAGE, MEMORY, is_extended_resource_name, is_scalar_resource_name
from .requests import Resource, scorer_pod_request
from .state import Cluster, NodeInfo, host_ports, ports_conflict

SUCCESS = "Success"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"
ERROR = "Error"

MAX_NODE_SCORE = 100


@dataclass
class Status:
    code: str
    reasons: list[str]
    plugin: str | None = None

    def message(self) -> str:
        return ", ".join(self.reasons)

    def as_record(self) -> dict:
        return {"ok": False, "code": self.code, "plugin": self.plugin, "reasons": list(self.reasons)}


@dataclass
class PreFilterOutcome:
    """What a PreFilter returned: Skip, a rejection, or Success with an optional node set."""
    skip: bool = False
    status: Status | None = None          # a rejection (U / UU)
    node_names: set[str] | None = None    # PreFilterResult.NodeNames; None = all nodes


# --- tolerations (§3.1) ----------------------------------------------------------------------

def toleration_tolerates(tol: dict, taint: dict) -> bool:
    """v1.Toleration.ToleratesTaint."""
    effect = tol.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = tol.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = tol.get("operator") or ""
    if op in ("", "Equal"):
        return (tol.get("value") or "") == (taint.get("value") or "")
    if op == "Exists":
        return True
    return False


def tolerations_tolerate(tolerations: list[dict], taint: dict) -> bool:
    return any(toleration_tolerates(t, taint) for t in tolerations)


def pod_tolerations(pod: dict) -> list[dict]:
    return list((pod.get("spec") or {}).get("tolerations") or [])


def node_taints(node: dict) -> list[dict]:
    return list((node.get("spec") or {}).get("taints") or [])


# --- NodeUnschedulable (§3.1-3.2) ------------------------------------------------------------

def node_unschedulable_filter(pod: dict, ni: NodeInfo) -> Status | None:
    if not (ni.node.get("spec") or {}).get("unschedulable"):
        return None
    unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}
    if tolerations_tolerate(pod_tolerations(pod), unschedulable_taint):
        return None
    return Status(UU, ["node(s) were unschedulable"])


# --- NodeName (§3.2) -------------------------------------------------------------------------

def node_name_filter(pod: dict, ni: NodeInfo) -> Status | None:
    wanted = (pod.get("spec") or {}).get("nodeName") or ""
    if wanted == "" or wanted == ni.name:
        return None
    return Status(UU, ["node(s) didn't match the requested node name"])


# --- TaintToleration (§3.3, §4.4) ------------------------------------------------------------

def taint_toleration_filter(pod: dict, ni: NodeInfo) -> Status | None:
    tolerations = pod_tolerations(pod)
    for taint in node_taints(ni.node):
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerations_tolerate(tolerations, taint):
            reason = "node(s) had untolerated taint {%s: %s}" % (taint.get("key") or "", taint.get("value") or "")
            return Status(UU, [reason])
    return None


def taint_toleration_score(pod: dict, ni: NodeInfo) -> int:
    """Count of PreferNoSchedule taints not tolerated by the tolerations whose effect is
    empty or PreferNoSchedule."""
    tolerations = [t for t in pod_tolerations(pod) if (t.get("effect") or "") in ("", "PreferNoSchedule")]
    count = 0
    for taint in node_taints(ni.node):
        if taint.get("effect") != "PreferNoSchedule":
            continue
        if not tolerations_tolerate(tolerations, taint):
            count += 1
    return count


# --- NodeAffinity (§3.4, §4.5) ---------------------------------------------------------------

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def node_affinity_pre_filter(pod: dict) -> PreFilterOutcome:
    required = affinity.pod_required_node_selector(pod)
    node_selector = (pod.get("spec") or {}).get("nodeSelector")
    if required is None and node_selector is None:   # (no addedAffinity in the default profile)
        return PreFilterOutcome(skip=True)
    terms = (required or {}).get("nodeSelectorTerms") or []
    if required is None or len(terms) == 0:
        return PreFilterOutcome()
    node_names: set[str] | None = None
    for term in terms:
        term_names: set[str] | None = None
        for req in term.get("matchFields") or []:
            if req.get("key") == affinity.METADATA_NAME and req.get("operator") == "In":
                values = set(req.get("values") or [])
                term_names = values if term_names is None else (term_names & values)
        if term_names is None:
            # A term without a metadata.name In requirement: every node may match.
            return PreFilterOutcome()
        node_names = set(term_names) if node_names is None else (node_names | term_names)
    if node_names is not None and len(node_names) == 0:
        return PreFilterOutcome(status=Status(UU, [ERR_REASON_CONFLICT]))
    if node_names:
        return PreFilterOutcome(node_names=node_names)
    return PreFilterOutcome()


def node_affinity_filter(pod: dict, ni: NodeInfo) -> Status | None:
    if affinity.required_node_affinity_matches(pod, ni.node):
        return None
    return Status(UU, [ERR_REASON_POD])


def node_affinity_pre_score_skip(pod: dict) -> bool:
    return affinity.pod_preferred_terms(pod) is None


def node_affinity_score(pod: dict, ni: NodeInfo) -> int:
    preferred = affinity.pod_preferred_terms(pod)
    if preferred is None:
        return 0
    return affinity.preferred_node_affinity_score(preferred, ni.node)


# --- NodePorts (§3.5) ------------------------------------------------------------------------

def node_ports_pre_filter(pod: dict) -> PreFilterOutcome:
    return PreFilterOutcome(skip=(len(host_ports(pod)) == 0))


def node_ports_filter(pod: dict, ni: NodeInfo) -> Status | None:
    for ip, proto, port in host_ports(pod):
        if ports_conflict(ni.used_ports, ip, proto, port):
            return Status(U, ["node(s) didn't have free ports for the requested pod ports"])
    return None


# --- NodeResourcesFit filter (§3.6) ----------------------------------------------------------

@dataclass
class FitArgs:
    """NodeResourcesFitArgs (§10): scoring strategy and ignored resources."""
    strategy: str = "LeastAllocated"
    resources: list[tuple[str, int]] = field(default_factory=lambda: [(CPU, 1), (MEMORY, 1)])
    shape: list[tuple[int, int]] = field(default_factory=list)   # (utilization, score 0..10)
    ignored_resources: set[str] = field(default_factory=set)
    ignored_resource_groups: set[str] = field(default_factory=set)


def parse_fit_args(scoring_strategy: dict | None, ignored_resources=None, ignored_resource_groups=None) -> FitArgs:
    """KubeSchedulerConfiguration v1 defaulting of NodeResourcesFitArgs.scoringStrategy."""
    args = FitArgs(ignored_resources=set(ignored_resources or ()),
                   ignored_resource_groups=set(ignored_resource_groups or ()))
    if scoring_strategy is None:
        return args
    args.strategy = scoring_strategy.get("type") or "LeastAllocated"
    resources = scoring_strategy.get("resources") or []
    if resources:
        args.resources = [(r["name"], int(r.get("weight") or 0) or 1) for r in resources]
    rtcr = scoring_strategy.get("requestedToCapacityRatio") or {}
    args.shape = [(int(p.get("utilization") or 0), int(p.get("score") or 0)) for p in rtcr.get("shape") or []]
    if args.strategy not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
        raise ValueError(f"scoring strategy {args.strategy} is not supported")
    if args.strategy == "RequestedToCapacityRatio" and not args.shape:
        raise ValueError("RequestedToCapacityRatio needs a shape")
    return args


def node_resources_fit_filter(pod: dict, ni: NodeInfo, request: Resource, args: FitArgs) -> Status | None:
    """fitsRequest; ``request`` is the PreFilter's computePodResourceRequest."""
    reasons: list[str] = []
    unresolvable = False
    alloc = ni.allocatable
    used = ni.requested

    # 1. Pod count (never unresolvable).
    if len(ni.pods) + 1 > alloc.allowed_pod_number:
        reasons.append("Too many pods")

    # 2. Nothing requested: stop.
    if request.milli_cpu == 0 and request.memory == 0 and request.ephemeral_storage == 0 and len(request.scalar) == 0:
        return Status(U, reasons) if reasons else None

    # 3. cpu, memory, ephemeral-storage.
    if request.milli_cpu > 0 and request.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        reasons.append("Insufficient cpu")
        unresolvable = unresolvable or request.milli_cpu > alloc.milli_cpu
    if request.memory > 0 and request.memory > alloc.memory - used.memory:
        reasons.append("Insufficient memory")
        unresolvable = unresolvable or request.memory > alloc.memory
    if request.ephemeral_storage > 0 and request.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        reasons.append("Insufficient ephemeral-storage")
        unresolvable = unresolvable or request.ephemeral_storage > alloc.ephemeral_storage

    # 4. Scalars.  Upstream walks a Go map (random order); the reference sorts the names.
    for name in sorted(request.scalar):
        quantity = request.scalar[name]
        if quantity == 0:
            continue
        if is_extended_resource_name(name):
            prefix = name.split("/")[0]
            if name in args.ignored_resources or prefix in args.ignored_resource_groups:
                continue
        if quantity > alloc.scalar.get(name, 0) - used.scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or quantity > alloc.scalar.get(name, 0)

    if not reasons:
        return None
    return Status(UU if unresolvable else U, reasons)


# --- resource scoring (§4.1, §4.2) -----------------------------------------------------------

def allocatable_and_requested(ni: NodeInfo, name: str, pod_request: int, use_requested: bool) -> tuple[int, int]:
    """calculateResourceAllocatableRequest: (alloc, req); (0, 0) = left out."""
    if pod_request == 0 and is_scalar_resource_name(name):
        return 0, 0
    if name == CPU:
        node_req = ni.requested.milli_cpu if use_requested else ni.non0_cpu
        return ni.allocatable.milli_cpu, node_req + pod_request
    if name == MEMORY:
        node_req = ni.requested.memory if use_requested else ni.non0_mem
        return ni.allocatable.memory, node_req + pod_request
    if name == EPHEMERAL_STORAGE:
        return ni.allocatable.ephemeral_storage, ni.requested.ephemeral_storage + pod_request
    if name in ni.allocatable.scalar:
        return ni.allocatable.scalar[name], ni.requested.scalar.get(name, 0) + pod_request
    return 0, 0


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)


def broken_linear(shape: list[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction over (utilization, score x 10) points."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return shape[0][1]
            u0, s0 = shape[i - 1]
            return s0 + go_div((s - s0) * (p - u0), (u - u0))
    return shape[-1][1]


def fit_scorer(args: FitArgs, requested: list[int], allocatable: list[int]) -> int:
    weights = [w for _, w in args.resources]
    if args.strategy in ("LeastAllocated", "MostAllocated"):
        node_score = 0
        weight_sum = 0
        for i in range(len(requested)):
            if allocatable[i] == 0:
                continue
            if args.strategy == "LeastAllocated":
                s = least_requested_score(requested[i], allocatable[i])
            else:
                s = most_requested_score(requested[i], allocatable[i])
            node_score += s * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)
    # RequestedToCapacityRatio
    shape = [(u, s * (MAX_NODE_SCORE // 10)) for u, s in args.shape]
    node_score = 0
    weight_sum = 0
    for i in range(len(requested)):
        if allocatable[i] == 0:
            continue
        if requested[i] > allocatable[i]:
            s = broken_linear(shape, 100)   # maxUtilization
        else:
            s = broken_linear(shape, go_div(requested[i] * 100, allocatable[i]))
        if s > 0:
            node_score += s * weights[i]
            weight_sum += weights[i]
    if weight_sum == 0:
        return 0
    return go_float_to_int(go_round(float(node_score) / float(weight_sum)))


def fit_pod_requests(pod: dict, args: FitArgs) -> list[int]:
    """NodeResourcesFit PreScore: the incoming pod's requests per configured resource, with
    non-zero defaults, without pod-level requests or status (§1.4 quirk)."""
    return [scorer_pod_request(pod, name, use_requested=False, use_status_resources=False,
                               pod_level_resources=False) for name, _ in args.resources]


def node_resources_fit_score(pod_reqs: list[int], ni: NodeInfo, args: FitArgs) -> int:
    requested = [0] * len(args.resources)
    allocatable = [0] * len(args.resources)
    for i, (name, _) in enumerate(args.resources):
        alloc, req = allocatable_and_requested(ni, name, pod_reqs[i], use_requested=False)
        if alloc == 0:
            continue
        allocatable[i] = alloc
        requested[i] = req
    return fit_scorer(args, requested, allocatable)


BALANCED_RESOURCES = [(CPU, 1), (MEMORY, 1)]


def balanced_pod_requests(pod: dict) -> list[int]:
    """BalancedAllocation PreScore: real requests, status and pod-level honoured."""
    return [scorer_pod_request(pod, name, use_requested=True, use_status_resources=True,
                               pod_level_resources=True) for name, _ in BALANCED_RESOURCES]


def balanced_pre_score_skip(pod_reqs: list[int]) -> bool:
    return all(r == 0 for r in pod_reqs)


def balanced_allocation_score(pod_reqs: list[int], ni: NodeInfo) -> int:
    requested = [0] * len(BALANCED_RESOURCES)
    allocatable = [0] * len(BALANCED_RESOURCES)
    for i, (name, _) in enumerate(BALANCED_RESOURCES):
        alloc, req = allocatable_and_requested(ni, name, pod_reqs[i], use_requested=True)
        if alloc == 0:
            continue
        allocatable[i] = alloc
        requested[i] = req
    fractions: list[float] = []
    total = 0.0
    for i in range(len(requested)):
        if allocatable[i] == 0:
            continue
        f = float(requested[i]) / float(allocatable[i])
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return go_float_to_int((1 - std) * float(MAX_NODE_SCORE))


# --- ImageLocality (§4.3) --------------------------------------------------------------------

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def image_locality_score(pod: dict, ni: NodeInfo, cluster: Cluster) -> int:
    spec = pod.get("spec") or {}
    total_nodes = cluster.num_nodes()
    have = set(ni.image_names)
    containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
    total = 0
    for c in containers:
        image = normalized_image_name(c.get("image") or "")
        if image in have:
            spread = float(cluster.image_num_nodes(image)) / float(total_nodes)
            total += go_float_to_int(float(cluster.image_size[image]) * spread)
    max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
    if total < MIN_THRESHOLD:
        total = MIN_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return go_div(MAX_NODE_SCORE * (total - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


# --- normalization (§4) ----------------------------------------------------------------------

def default_normalize(scores: dict[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse)."""
    max_count = 0
    for s in scores.values():
        if s > max_count:
            max_count = s
    if max_count == 0:
        if reverse:
            return {n: MAX_NODE_SCORE for n in scores}
        return dict(scores)
    out = {}
    for n, s in scores.items():
        v = go_div(MAX_NODE_SCORE * s, max_count)
        if reverse:
            v = MAX_NODE_SCORE - v
        out[n] = v
    return out
