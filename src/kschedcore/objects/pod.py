"""Pod: the scheduling-relevant view of a v1 Pod, validated once when read."""
import marshal
from dataclasses import dataclass, field
from typing import Any

from . import resources as res
from ..errors import ObjectError
from .fields import FieldReader, metadata_name
from .node_selector import PreferredTerm, Requirement, SelectorReader, SelectorTerm  # noqa: F401 (re-exported)
from .pod_affinity import PodAffinity, parse_label_selector, parse_pod_affinity
from .storage import parse_pod_volumes
from . import validation as apival

TOLERATION_OPERATORS = ("", "Equal", "Exists")
TAINT_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")
PROTOCOLS = ("TCP", "UDP", "SCTP")


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str      # "Equal" (also for empty) or "Exists"
    value: str
    effect: str        # "" means every effect

    def tolerates(self, key: str, value: str, effect: str) -> bool:
        """v1.Toleration.ToleratesTaint (semantics §3.1)."""
        if self.effect and self.effect != effect:
            return False
        if self.key and self.key != key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("", "Equal") and self.value == value


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


@dataclass(slots=True, eq=False)
class Pod:
    """A validated v1 Pod as the scheduler reads it: its effective requests (init containers,
    sidecars, overhead, pod-level resources), non-zero requests, tolerations, node and pod
    affinity, spread constraints, host ports, images, volumes, priority and scheduling gates."""
    namespace: str
    name: str
    uid: str
    labels: dict
    node_name: str
    scheduler_name: str
    priority: int
    #: resource name -> integer amount (cpu in millicores), pod-level honoured, overhead added.
    requests: dict
    #: requests as NodeResourcesFit scoring sees the incoming pod: without pod-level requests.
    fit_score_requests: dict
    #: (cpu, memory) non-zero requests as NodeInfo.NonZeroRequested counts them (pod-level honoured).
    non_zero: tuple
    #: (cpu, memory) non-zero requests of the incoming pod for NodeResourcesFit scoring:
    #: kube-scheduler v1.34 ignores pod-level requests there (semantics §1.4 quirk).
    fit_score_non_zero: tuple
    tolerations: tuple
    node_selector: dict | None
    required_terms: tuple | None      # None: no required node affinity
    preferred_terms: tuple | None     # None: no preferred node affinity
    host_ports: tuple
    images: tuple                     # normalized image names of init + app containers
    pod_affinity: PodAffinity         # spec.affinity.podAffinity / podAntiAffinity
    topology_spread: tuple            # spec.topologySpreadConstraints, parsed (dicts)
    terminating: bool                 # metadata.deletionTimestamp is set
    phase: str                        # status.phase; Succeeded/Failed pods never reach a scheduler
    nominated_node_name: str          # status.nominatedNodeName
    raw: dict = field(repr=False)
    #: (scheduler token, CompiledPod) set by the scheduler that compiled it
    compiled: Any = field(default=None, repr=False, compare=False)
    volumes: tuple = ()               # spec.volumes as the volume plugins see them (PodVolume)
    gated: bool = False               # spec.schedulingGates is not empty (PreEnqueue holds it)
    #: spec.resourceClaims (dicts: name, resourceClaimName or resourceClaimTemplateName)
    resource_claims: tuple = ()
    #: status.startTime in ns since the epoch, None if unset (MoreImportantPod ranks by it)
    start_time: int | None = None
    #: metadata.creationTimestamp / deletionTimestamp in ns since the epoch, None if unset
    created: int | None = None
    deleted: int | None = None
    #: the Scheduler checked it is supported input (objects/features.py), once
    checked: bool = field(default=False, repr=False, compare=False)
    #: the parsed spec fields this pod shares with every pod of its spec (parse_pod's memo), or
    #: None: a Framework compiles a spec once (Framework.compile)
    spec_fields: dict | None = field(default=None, repr=False, compare=False)
    #: "namespace/name", the pod's key in the cache and the queue (read on every cycle)
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.key = f"{self.namespace}/{self.name}"

    @property
    def controller(self) -> dict | None:
        """metadata.ownerReferences' controlling reference (the default spreading's selector
        reads its ReplicaSet / StatefulSet / ReplicationController), or None."""
        refs = (self.raw.get("metadata") or {}).get("ownerReferences") or ()
        return next((o for o in refs if isinstance(o, dict) and o.get("controller")), None)

    @property
    def terminal(self) -> bool:
        """Succeeded or Failed: kube-scheduler's informers drop such pods (semantics §7.1)."""
        return self.phase in ("Succeeded", "Failed")

    @property
    def preferred_parse_error(self) -> bool:
        """A weighted, non-empty preferred term fails to parse: NodeAffinity's PreScore errors."""
        return any(p.weight and not p.term.empty and not p.term.parses for p in self.preferred_terms or ())


def _copier(params: tuple):
    """A function f(p, *params): a new Pod with p's fields but `params` (its key made again).
    Generated as dataclasses generates __init__: a plain attribute copy is about 4x faster than
    copy.copy of a slotted object, and faster than the keyword __init__ of 30 fields."""
    body = "".join(f"    c.{f} = p.{f}\n" for f in Pod.__slots__ if f not in params and f != "key")
    body += "".join(f"    c.{f} = {f}\n" for f in params)
    if "key" not in params:
        body += "    c.key = c.namespace + '/' + c.name\n"
    src = f"def copy(p, {', '.join(params)}):\n    c = _new(Pod)\n{body}    return c\n"
    scope = {"Pod": Pod, "_new": object.__new__}
    exec(src, scope)
    return scope["copy"]


#: renamed(pod, name, uid): a copy of a Pod under another name, every other field shared
#: (capacity runs make one per copy of a template)
renamed = _copier(("name", "uid"))
#: a pod of a remembered spec: the spec's template Pod with the pod's own metadata
_from_template = _copier(("namespace", "name", "key", "uid", "labels", "terminating", "raw", "created", "deleted",
                          "start_time", "node_name"))


def _resource_claims(r, spec) -> tuple:
    """spec.resourceClaims, as the API server validates them (names unique DNS labels, one
    source each)."""
    out, seen = [], set()
    for i, e in enumerate(r.seq(spec, "resourceClaims", "spec.resourceClaims")):
        path = f"spec.resourceClaims[{i}]"
        e = r.item(e, path)
        name = r.string(e, "name", f"{path}.name")
        if not name:
            r.fail(f"{path}.name", "Required value")
        if name in seen:
            r.fail(f"{path}.name", f'Duplicate value: "{name}"')
        seen.add(name)
        sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if r.string(e, k, f"{path}.{k}")]
        if len(sources) != 1:
            r.fail(path, f'Invalid value: "{name}": must specify one of: `resourceClaimName`, '
                         f'`resourceClaimTemplateName`')
        out.append(e)
    return tuple(out)


def normalize_image(name: str) -> str:
    """ImageLocality's normalizedImageName: append ':latest' when no tag is given."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _add(total: dict, reqs: dict) -> None:
    for k, v in reqs.items():
        total[k] = total.get(k, 0) + v


def _max_into(total: dict, reqs: dict) -> None:
    for k, v in reqs.items():
        if k not in total or v > total[k]:
            total[k] = v


def aggregate_requests(containers: list[dict], init_containers: list[tuple[dict, bool]], pod_level: dict,
                       overhead: dict, non_missing: dict | None = None) -> dict:
    """component-helpers PodRequests (semantics §1.1), on exact amounts (integer nano-units).

    containers / init_containers: lists of (requests dict, is_sidecar) with nano-unit values.
    non_missing: defaults added to a container lacking that key (the non-zero rule, §1.4).
    """
    def with_defaults(reqs):
        if not non_missing:
            return reqs
        out = dict(reqs)
        for k, v in non_missing.items():
            if k not in reqs:
                out[k] = out.get(k, 0) + v
        return out

    total: dict[str, int] = {}
    for reqs in containers:
        _add(total, with_defaults(reqs))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for reqs, is_sidecar in init_containers:
        reqs = with_defaults(reqs)
        if is_sidecar:
            _add(total, reqs)
            _add(sidecars, reqs)
            candidate = sidecars
        else:
            candidate = dict(reqs)
            _add(candidate, sidecars)
        _max_into(init_max, candidate)
    _max_into(total, init_max)
    for k, v in pod_level.items():
        total[k] = v
    _add(total, overhead)
    return total


NANO = 10 ** 9


def _nanos(quantities: dict) -> dict:
    """Exact amounts in 10^-9 units: Kubernetes keeps at most nano precision."""
    return {k: q.nanos for k, q in quantities.items()}


def _to_int(name: str, nanos: int) -> int:
    """Quantity.MilliValue() for cpu, Value() otherwise: both round up."""
    return -((-nanos) // (NANO // 1000 if name == res.CPU else NANO))


def to_ints(requests: dict) -> dict:
    return {k: _to_int(k, v) for k, v in requests.items() if res.counts(k)}


class PodReader(SelectorReader):
    def toleration(self, t, path):
        op = self.string(t, "operator", path + ".operator")
        if op not in TOLERATION_OPERATORS:
            self.fail(path + ".operator", f'unsupported operator "{op}"')
        effect = self.string(t, "effect", path + ".effect")
        if effect not in TAINT_EFFECTS:
            self.fail(path + ".effect", f'unsupported effect "{effect}"')
        key = self.string(t, "key", path + ".key")
        value = self.string(t, "value", path + ".value")
        # ValidateTolerations, in its order and wording
        if key:
            apival.check(self.obj, path + ".key", key, apival.qualified_name_errors(key))
        if not key and op != "Exists":
            apival.invalid(self.obj, path + ".operator", op, "operator must be Exists when `key` is empty, "
                      'which means "match all values and all keys"')
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            apival.invalid(self.obj, path + ".effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if op == "Exists" and value:
            apival.invalid(self.obj, path + ".operator", value, "value must be empty when `operator` is 'Exists'")
        if op != "Exists":
            apival.check(self.obj, path + ".operator", value, apival.label_value_errors(value))
        return Toleration(key, op or "Equal", value, effect)

    def node_affinity(self, spec):
        path = "spec.affinity.nodeAffinity"
        na = self.mapping(self.mapping(spec, "affinity", "spec.affinity"), "nodeAffinity", path)
        return self.node_affinity_of(na, path)

    def container_ports(self, c, path, host_network=False):
        out = []
        for i, p in enumerate(self.seq(c, "ports", path + ".ports")):
            ppath = f"{path}.ports[{i}]"
            p = self.item(p, ppath)
            port = self.integer(p, "hostPort", ppath + ".hostPort")
            container_port = self.integer(p, "containerPort", ppath + ".containerPort")
            if host_network and port == 0:
                port = container_port   # API defaulting for hostNetwork pods
            proto = self.string(p, "protocol", ppath + ".protocol") or "TCP"
            if proto not in PROTOCOLS:
                self.fail(ppath + ".protocol", f'unsupported protocol "{proto}"')
            if not 0 <= port <= 65535:
                self.fail(ppath + ".hostPort", f"must be between 0 and 65535, got {port}")
            if port > 0:
                out.append(HostPort(self.string(p, "hostIP", ppath + ".hostIP") or "0.0.0.0", proto, port))
        return out


def check_requirements(obj: str, requests: dict, limits: dict, path: str) -> None:
    """validateResourceRequirements' quantity rules: extended resources in whole units; a request
    at most its limit, equal to it for resources that cannot be overcommitted (extended
    resources, hugepages), which need a limit (after defaulting: a limit alone is its request)."""
    for part, amounts in (("limits", limits), ("requests", requests)):
        for name, q in amounts.items():
            if res.is_extended(name) and q.nanos % NANO:
                apival.invalid(obj, f"{path}.{part}[{name}]", str(q), "must be an integer")
    for name, q in requests.items():
        overcommit = res.is_native(name) and not res.is_hugepages(name)
        limit = limits.get(name)
        if limit is None:
            if not overcommit:
                raise ObjectError(obj, path + ".limits", "Required value: Limit must be set for non overcommitable "
                                  "resources")
        elif q.nanos != limit.nanos and not overcommit:
            apival.invalid(obj, path + ".requests", str(q), f"must be equal to {name} limit of {limit}")
        elif q.nanos > limit.nanos:
            apival.invalid(obj, path + ".requests", str(q), f"must be less than or equal to {name} limit of {limit}")


def parse_spread_constraints(r: FieldReader, spec: dict) -> tuple:
    out: list = []
    seen: dict = {}
    for i, c in enumerate(r.seq(spec, "topologySpreadConstraints", "spec.topologySpreadConstraints")):
        path = f"spec.topologySpreadConstraints[{i}]"
        c = r.item(c, path)
        key = r.string(c, "topologyKey", path + ".topologyKey")
        if not key:
            r.fail(path + ".topologyKey", "Required value")
        skew = r.integer(c, "maxSkew", path + ".maxSkew")
        apival.check_int32(r.obj, path + ".maxSkew", skew, "TopologySpreadConstraint.maxSkew")
        if skew < 1:
            r.fail(path + ".maxSkew", f"must be greater than zero, got {skew}")
        when = r.string(c, "whenUnsatisfiable", path + ".whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            r.fail(path + ".whenUnsatisfiable", f'Unsupported value: "{when}"')
        min_domains = c.get("minDomains")
        if min_domains is None:
            min_domains = 1
        elif isinstance(min_domains, bool) or not isinstance(min_domains, int) or min_domains < 1:
            r.fail(path + ".minDomains", f"must be greater than zero, got {min_domains!r}")
        elif min_domains > apival.INT32_MAX:
            apival.check_int32(r.obj, path + ".minDomains", min_domains, "TopologySpreadConstraint.minDomains")
        elif when != "DoNotSchedule":
            apival.invalid(r.obj, path + ".minDomains", min_domains,
                           f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}")
        if (key, when) in seen:   # reported at the first of the two, as ValidateSpreadConstraintNotRepeat does
            r.fail(seen[key, when] + ".{topologyKey, whenUnsatisfiable}", f'Duplicate value: "{{{key}, {when}}}"')
        seen[key, when] = path
        policies = {}
        for name, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            v = r.string(c, name, f"{path}.{name}") or default
            if v not in ("Honor", "Ignore"):
                r.fail(f"{path}.{name}", f'Unsupported value: "{v}"')
            policies[name] = v
        out.append({"topologyKey": key, "maxSkew": skew, "whenUnsatisfiable": when,
                    "selector": parse_label_selector(r, c.get("labelSelector"), path + ".labelSelector"),
                    "matchLabelKeys": tuple(r.string_list(c, "matchLabelKeys", path + ".matchLabelKeys")),
                    "minDomains": min_domains, **policies})
    return tuple(out)


#: a template Pod (the parsed spec fields) by (namespace, spec, status) as written: pods of one
#: template (a ReplicaSet's, a generated workload's) are read once -- the fields are immutable
#: or never written after parsing. Cleared when full.
_SPEC_MEMO: dict = {}
SPEC_MEMO_ENTRIES = 4096


def _memo_key(ns: str, spec: dict, status: dict) -> tuple:
    """The spec (but nodeName) and the status fields _spec_fields reads, as written: marshal's
    bytes (version 2: no back-references, so equal values give equal bytes; 3x faster than
    repr), or repr where marshal cannot write a value (a YAML timestamp). A running pod's node
    and status are its own (IPs, container IDs, times): only what decides its requests, phase and
    nomination is keyed, so the pods of one ReplicaSet in a dump share a template."""
    read = _status_read(status) if status else None
    if not _OWN_SPEC_KEYS.isdisjoint(spec):     # a bound pod's node (read per pod), a
        spec = {k: v for k, v in spec.items() if k not in _OWN_SPEC_KEYS}   # StatefulSet pod's names
    try:
        return ns, marshal.dumps(spec, 2), marshal.dumps(read, 2) if read else b""
    except ValueError:
        return ns, repr(spec), repr(read)


#: spec fields of a pod's own that no plugin reads from the template (nodeName is read per pod)
_OWN_SPEC_KEYS = frozenset(("nodeName", "hostname", "subdomain"))


def _status_read(status: dict) -> dict:
    """The status as _spec_fields reads it (startTime is read per pod); malformed parts as
    written, so that a key that once failed fails again."""
    out = {k: status[k] for k in ("phase", "nominatedNodeName") if k in status}
    for key in ("containerStatuses", "initContainerStatuses"):
        items = status.get(key)
        if items is not None:
            out[key] = [{f: cs[f] for f in ("name", "resources", "allocatedResources") if f in cs}
                        if isinstance(cs, dict) else cs for cs in items] if isinstance(items, list) else items
    conditions = status.get("conditions")
    if conditions is not None:
        out["conditions"] = [c for c in conditions if not isinstance(c, dict) or c.get("type") == "PodResizePending"] \
            if isinstance(conditions, list) else conditions
    return out


def parse_pod(raw: Any, index_hint: str = "") -> Pod:
    """Reads and validates a v1 Pod (API-defaulted or plain manifest)."""
    ns, name = metadata_name("pod", raw, index_hint)
    ns = ns or "default"
    r = PodReader(f"pod {ns}/{name}")
    meta = raw["metadata"]
    apival.check_meta(r.obj, ns, name, meta, apival.pod_name_errors)
    spec = r.mapping(raw, "spec", "spec")
    status = r.mapping(raw, "status", "status")
    labels = r.string_map(meta, "labels", "metadata.labels")
    # a pod's ephemeral volumes' claims are named after it: those specs are read each time
    memo = None if _has_ephemeral(spec.get("volumes")) else _memo_key(ns, spec, status)
    template = _SPEC_MEMO.get(memo) if memo is not None else None
    fields = _spec_fields(r, spec, status, ns, name) if template is None else None
    key = f"{ns}/{name}"
    uid = r.string(meta, "uid", "metadata.uid") or key      # (one string for both: 10^6 pods)
    created = r.timestamp(meta, "creationTimestamp", "metadata.creationTimestamp")
    deleted = r.timestamp(meta, "deletionTimestamp", "metadata.deletionTimestamp")
    started = r.timestamp(status, "startTime", "status.startTime")
    node_name = r.string(spec, "nodeName", "spec.nodeName")
    if node_name:
        apival.check(r.obj, "spec.nodeName", node_name, apival.dns1123_subdomain_errors(node_name))
    terminating = meta.get("deletionTimestamp") is not None
    if template is not None:
        return _from_template(template, ns, name, key, uid, labels, terminating, raw, created, deleted, started,
                              node_name)
    assert fields is not None       # made above for a pod without a template
    pod = Pod(namespace=ns, name=name, uid=uid, labels=labels, terminating=terminating, raw=raw, created=created,
              deleted=deleted, start_time=started, node_name=node_name,
              spec_fields=fields if memo is not None else None, **fields)
    if memo is not None:
        if len(_SPEC_MEMO) >= SPEC_MEMO_ENTRIES:
            _SPEC_MEMO.clear()
        # the spec's template: the pod's fields, never its mutable ones (compiled, checked)
        _SPEC_MEMO[memo] = _from_template(pod, ns, "", "/", "", {}, False, None, None, None, None, "")
    return pod


def _has_ephemeral(volumes) -> bool:
    """Whether spec.volumes (as written, unchecked) may hold an ephemeral volume."""
    return bool(volumes) and (not isinstance(volumes, list)
                              or any(not isinstance(v, dict) or "ephemeral" in v for v in volumes))


def _spec_fields(r, spec, status, ns, name) -> dict:
    """The Pod fields read from its spec and status (validated; errors name the pod)."""
    statuses = {}
    if True:  # InPlacePodVerticalScaling (beta, on): status resources count for app containers and sidecars
        for key in ("containerStatuses", "initContainerStatuses"):
            for i, cs in enumerate(r.seq(status, key, f"status.{key}")):
                cs = r.item(cs, f"status.{key}[{i}]")
                statuses[r.string(cs, "name", f"status.{key}[{i}].name")] = (cs, f"status.{key}[{i}]")
    resize_infeasible = any(isinstance(c, dict) and c.get("type") == "PodResizePending"
                            and c.get("reason") == "Infeasible" for c in r.seq(status, "conditions", "status.conditions"))

    def container_requests(c, path, use_status):
        resources = r.mapping(c, "resources", path + ".resources")
        for part in ("requests", "limits"):
            for name in (resources.get(part) or {}) if isinstance(resources.get(part), dict) else ():
                error = res.container_resource_error(str(name))
                if error:
                    raise ObjectError(r.obj, f"{path}.resources.{part}[{name}]", error)
        requests = r.quantities(resources, "requests", path + ".resources.requests")
        limits = r.quantities(resources, "limits", path + ".resources.limits")
        check_requirements(r.obj, requests, limits, path + ".resources")
        reqs = _nanos(requests)
        # API defaulting: a resource with a limit and no request requests its limit
        for k, v in _nanos(limits).items():
            reqs.setdefault(k, v)
        cname = r.string(c, "name", path + ".name")
        if use_status and cname in statuses:
            cs, spath = statuses[cname]
            if cs.get("resources") is not None:
                st = _nanos(r.quantities(r.mapping(cs, "resources", spath + ".resources"), "requests",
                                             spath + ".resources.requests"))
                alloc = _nanos(r.quantities(cs, "allocatedResources", spath + ".allocatedResources"))
                merged = {} if resize_infeasible else dict(reqs)
                _max_into(merged, st)
                _max_into(merged, alloc)
                reqs = merged
        return reqs

    host_network = r.boolean(spec, "hostNetwork", "spec.hostNetwork")
    containers, inits, host_ports, images = [], [], [], []
    app = r.seq(spec, "containers", "spec.containers")
    if not app:
        r.fail("spec.containers", "must have at least one container")
    for i, c in enumerate(r.seq(spec, "initContainers", "spec.initContainers")):
        path = f"spec.initContainers[{i}]"
        c = r.item(c, path)
        sidecar = r.string(c, "restartPolicy", path + ".restartPolicy") == "Always"
        inits.append((container_requests(c, path, sidecar), sidecar))
        if sidecar:
            host_ports += r.container_ports(c, path, host_network)
        images.append(normalize_image(r.string(c, "image", path + ".image")))
    for i, c in enumerate(app):
        path = f"spec.containers[{i}]"
        c = r.item(c, path)
        containers.append(container_requests(c, path, True))
        host_ports += r.container_ports(c, path, host_network)
        images.append(normalize_image(r.string(c, "image", path + ".image")))

    pod_resources = r.mapping(spec, "resources", "spec.resources")
    pod_level_raw = r.quantities(pod_resources, "requests", "spec.resources.requests")
    for k, v in r.quantities(pod_resources, "limits", "spec.resources.limits").items():
        if res.is_pod_level_supported(k):
            pod_level_raw.setdefault(k, v)   # API defaulting, as for containers
    pod_level = {k: v for k, v in _nanos(pod_level_raw).items() if res.is_pod_level_supported(k)}
    pod_level_set = bool(pod_level_raw) and bool(pod_level)
    overhead = _nanos(r.quantities(spec, "overhead", "spec.overhead"))

    requests = aggregate_requests(containers, inits, pod_level, overhead)
    # NodeInfo.NonZeroRequested (semantics §1.4): defaults for containers lacking cpu/memory;
    # with pod-level requests only for a resource absent from the whole pod.
    defaults = {res.CPU: res.DEFAULT_MILLI_CPU_REQUEST * (NANO // 1000), res.MEMORY: res.DEFAULT_MEMORY_REQUEST * NANO}
    if pod_level_set:
        missing = {k: v for k, v in defaults.items() if k not in requests}
        nz = aggregate_requests(containers, inits, pod_level, overhead, missing) if missing else requests
    else:
        nz = aggregate_requests(containers, inits, pod_level, overhead, defaults)
    fit_nz = aggregate_requests(containers, inits, {}, overhead, defaults)
    fit_requests = aggregate_requests(containers, inits, {}, overhead)

    selector = spec.get("nodeSelector")
    if selector is not None:
        selector = r.string_map(spec, "nodeSelector", "spec.nodeSelector")
        apival.check_labels(r.obj, selector, "spec.nodeSelector")
    required, preferred = r.node_affinity(spec)
    priority = r.integer(spec, "priority", "spec.priority")
    apival.check_int32(r.obj, "spec.priority", priority, "PodSpec.spec.priority")
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        r.fail("spec.preemptionPolicy", f"Unsupported value: {apival.go_quote(policy)}: supported values: "
               '"PreemptLowerPriority", "Never"')
    text = r.string(spec, "priorityClassName", "spec.priorityClassName")
    if text:
        apival.check(r.obj, "spec.priorityClassName", text, apival.dns1123_subdomain_errors(text))
    tolerations = tuple(r.toleration(r.item(t, f"spec.tolerations[{i}]"), f"spec.tolerations[{i}]")
                        for i, t in enumerate(r.seq(spec, "tolerations", "spec.tolerations")))
    return dict(
        scheduler_name=r.string(spec, "schedulerName", "spec.schedulerName") or "default-scheduler",
        priority=priority,
        requests=r.int64s(to_ints(requests), "spec.containers[*].resources.requests"),
        fit_score_requests=to_ints(fit_requests),
        non_zero=(_to_int(res.CPU, nz.get(res.CPU, 0)), _to_int(res.MEMORY, nz.get(res.MEMORY, 0))),
        fit_score_non_zero=(_to_int(res.CPU, fit_nz.get(res.CPU, 0)), _to_int(res.MEMORY, fit_nz.get(res.MEMORY, 0))),
        tolerations=tolerations, node_selector=selector, required_terms=required,
        preferred_terms=preferred, host_ports=tuple(host_ports), images=tuple(images),
        pod_affinity=parse_pod_affinity(r, spec, ns),
        topology_spread=parse_spread_constraints(r, spec),
        phase=r.string(status, "phase", "status.phase"),
        nominated_node_name=r.string(status, "nominatedNodeName", "status.nominatedNodeName"),
        volumes=parse_pod_volumes(r, spec, name),
        gated=bool(r.seq(spec, "schedulingGates", "spec.schedulingGates")),
        resource_claims=_resource_claims(r, spec),
    )
