"""PodTopologySpread: Filter and Score (semantics §3.9, §4.7), over the raw pod/node dicts.

Written from kube-scheduler v1.34.1 plugins/podtopologyspread (common.go, filtering.go,
scoring.go, plugin.go) and plugins/helper/spread.go (DefaultSelector, GetPodServices).
Plain loops, recomputed from scratch for every pod.  The default constraints come from the
plugin args (``spread_args``): ``defaultingType: System`` or ``List`` with
``defaultConstraints`` (assumed valid).

Selectors use the representation of ``interpod``: ``NOTHING`` (nil), ``EVERYTHING`` ({}:
``Selector.Empty()``), or a list of ``(key, op, values)`` requirements.  The empty
requirement list is the same as EVERYTHING (an empty internalSelector).
"""
from __future__ import annotations

from dataclasses import dataclass

from kschedcore.util.gomath import go_log

from .affinity import required_node_affinity_matches
from .goarith import go_round
from .interpod import (EVERYTHING, NOTHING, SelectorError, node_labels, parse_label_selector,
                       pod_labels, pod_namespace, selector_matches)
from .plugins import U, UU, PreFilterOutcome, Status, node_taints, pod_tolerations, tolerations_tolerate

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_NOT_MATCH = "node(s) didn't match pod topology spread constraints"

MAX_INT32 = 2**31 - 1

#: defaultingType: System
SYSTEM_DEFAULTS = [
    {"topologyKey": HOSTNAME, "maxSkew": 3, "whenUnsatisfiable": "ScheduleAnyway"},
    {"topologyKey": ZONE, "maxSkew": 5, "whenUnsatisfiable": "ScheduleAnyway"},
]


@dataclass
class SpreadArgs:
    """What New keeps of PodTopologySpreadArgs."""
    default_constraints: list
    system_defaulted: bool


def spread_args(args: dict | None) -> SpreadArgs:
    args = args or {}
    if (args.get("defaultingType") or "System") == "System":
        return SpreadArgs(SYSTEM_DEFAULTS, True)
    return SpreadArgs(list(args.get("defaultConstraints") or []), False)


SYSTEM_ARGS = spread_args(None)


@dataclass
class Constraint:
    max_skew: int
    key: str
    selector: object
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


# --- selectors ---------------------------------------------------------------------------------

def is_empty(selector) -> bool:
    """labels.Selector.Empty(): true for Everything / no requirements; false for Nothing."""
    if selector == NOTHING:
        return False
    return selector == EVERYTHING or len(selector) == 0


def requirements(selector) -> list | None:
    """Selector.Requirements(): None for Nothing (ok == false)."""
    if selector == NOTHING:
        return None
    if selector == EVERYTHING:
        return []
    return list(selector)


def set_selector(label_set: dict) -> list:
    """labels.Set.AsSelector() / SelectorFromSet."""
    return [(k, "In", [v]) for k, v in label_set.items()]


def merge_label_set(label_set: dict, selector):
    """mergeLabelSetWithSelector."""
    reqs = requirements(selector)
    if reqs is None:
        return selector
    return set_selector(label_set) + reqs


def matches(selector, labels: dict) -> bool:
    if selector != NOTHING and selector != EVERYTHING and len(selector) == 0:
        return True
    return selector_matches(selector, labels)


# --- constraints -------------------------------------------------------------------------------

def filter_constraints(raw_constraints: list[dict], pod_lbls: dict, action: str) -> list[Constraint]:
    """filterTopologySpreadConstraints (raises SelectorError)."""
    result = []
    for c in raw_constraints:
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = parse_label_selector(c.get("labelSelector"))
        keys = c.get("matchLabelKeys") or []
        if len(keys) > 0:
            match_labels = {}
            for k in keys:
                if k in pod_lbls:
                    match_labels[k] = pod_lbls[k]
            if len(match_labels) > 0:
                selector = merge_label_set(match_labels, selector)
        min_domains = c.get("minDomains")
        result.append(Constraint(
            max_skew=int(c.get("maxSkew") or 0),
            key=c.get("topologyKey") or "",
            selector=selector,
            min_domains=1 if min_domains is None else int(min_domains),
            honor_affinity=(c.get("nodeAffinityPolicy") or "Honor") == "Honor",
            honor_taints=(c.get("nodeTaintsPolicy") or "Ignore") == "Honor",
        ))
    return result


def _controller_ref(pod: dict) -> dict | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") is True:
            return ref
    return None


def _find(objects: dict, kinds: tuple[str, ...], namespace: str, name: str) -> dict | None:
    for kind in kinds:
        for obj in objects.get(kind) or []:
            meta = obj.get("metadata") or {}
            if (meta.get("namespace") or "default") == namespace and meta.get("name") == name:
                return obj
    return None


def _all(objects: dict, kinds: tuple[str, ...]) -> list[dict]:
    out: list = []
    for kind in kinds:
        out.extend(objects.get(kind) or [])
    return out


SERVICE_KINDS = ("Service", "Services", "services", "service")
RC_KINDS = ("ReplicationController", "ReplicationControllers", "replicationcontrollers", "replicationcontroller")
RS_KINDS = ("ReplicaSet", "ReplicaSets", "replicasets", "replicaset")
SS_KINDS = ("StatefulSet", "StatefulSets", "statefulsets", "statefulset")


def default_selector(pod: dict, objects: dict):
    """helper.DefaultSelector."""
    ns = pod_namespace(pod)
    lbls = pod_labels(pod)
    label_set: dict = {}
    for svc in _all(objects, SERVICE_KINDS):
        if ((svc.get("metadata") or {}).get("namespace") or "default") != ns:
            continue
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            continue
        if all(k in lbls and lbls[k] == v for k, v in sel.items()):
            label_set.update(sel)
    selector = set_selector(label_set)

    owner = _controller_ref(pod)
    if owner is None:
        return selector
    api_version = owner.get("apiVersion") or ""
    kind = owner.get("kind") or ""
    name = owner.get("name") or ""
    if api_version == "v1" and kind == "ReplicationController":
        rc = _find(objects, RC_KINDS, ns, name)
        if rc is not None:
            label_set.update((rc.get("spec") or {}).get("selector") or {})
            selector = set_selector(label_set)
    elif api_version == "apps/v1" and kind in ("ReplicaSet", "StatefulSet"):
        obj = _find(objects, RS_KINDS if kind == "ReplicaSet" else SS_KINDS, ns, name)
        if obj is not None:
            try:
                other = parse_label_selector((obj.get("spec") or {}).get("selector"))
            except SelectorError:
                other = None
            if other is not None:
                reqs = requirements(other)
                if reqs is not None:
                    selector = selector + reqs
    return selector


def build_default_constraints(pod: dict, action: str, objects: dict, args: SpreadArgs) -> list[Constraint]:
    constraints = filter_constraints(args.default_constraints, pod_labels(pod), action)
    if len(constraints) == 0:
        return []
    selector = default_selector(pod, objects)
    if is_empty(selector):
        return []
    for c in constraints:
        c.selector = selector
    return constraints


def get_constraints(pod: dict, action: str, objects: dict, args: SpreadArgs) -> list[Constraint]:
    raw = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
    if len(raw) > 0:
        return filter_constraints(raw, pod_labels(pod), action)
    return build_default_constraints(pod, action, objects, args)


# --- helpers -----------------------------------------------------------------------------------

def node_has_keys(node: dict, constraints: list[Constraint]) -> bool:
    labels = node_labels(node)
    for c in constraints:
        if c.key not in labels:
            return False
    return True


def passes_policies(c: Constraint, pod: dict, node: dict) -> bool:
    """matchNodeInclusionPolicies."""
    if c.honor_affinity and not required_node_affinity_matches(pod, node):
        return False
    if c.honor_taints:
        tolerations = pod_tolerations(pod)
        for taint in node_taints(node):
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerations_tolerate(tolerations, taint):
                return False
    return True


def count_matching(pods: list[dict], selector, namespace: str) -> int:
    """countPodsMatchSelector."""
    if is_empty(selector):
        return 0
    count = 0
    for p in pods:
        if (p.get("metadata") or {}).get("deletionTimestamp") is not None:
            continue
        if pod_namespace(p) != namespace:
            continue
        if matches(selector, pod_labels(p)):
            count += 1
    return count


# --- PreFilter / Filter (§3.9) -----------------------------------------------------------------

def pre_filter(pod: dict, cluster, objects: dict, state: dict, args: SpreadArgs = SYSTEM_ARGS) -> PreFilterOutcome:
    try:
        constraints = get_constraints(pod, "DoNotSchedule", objects, args)
    except SelectorError as err:
        return PreFilterOutcome(status=Status(UU, [f"get constraints from pod: {err}"]))
    if len(constraints) == 0:
        return PreFilterOutcome(skip=True)
    ns = pod_namespace(pod)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for name in cluster.input_order:
        ni = cluster.node_infos[name]
        if not node_has_keys(ni.node, constraints):
            continue
        for i, c in enumerate(constraints):
            if not passes_policies(c, pod, ni.node):
                continue
            value = node_labels(ni.node)[c.key]
            counts[i][value] = counts[i].get(value, 0) + count_matching(ni.pods, c.selector, ns)
    state["pts"] = {"pod": pod, "constraints": constraints, "counts": counts}
    return PreFilterOutcome()


def filter_node(state: dict, ni) -> Status | None:
    s = state["pts"]
    labels = node_labels(ni.node)
    for i, c in enumerate(s["constraints"]):
        if c.key not in labels:
            return Status(UU, [REASON_MISSING_LABEL])
        domain_counts = s["counts"][i]
        if len(domain_counts) < c.min_domains:
            min_match = 0
        else:
            # criticalPaths start at MaxInt32 (reachable with a default minDomains <= 0)
            min_match = min(domain_counts.values(), default=MAX_INT32)
        self_match = 1 if matches(c.selector, pod_labels(s["pod"])) else 0
        count = domain_counts.get(labels[c.key], 0)
        if count + self_match - min_match > c.max_skew:
            return Status(U, [REASON_NOT_MATCH])
    return None


# --- PreScore / Score / NormalizeScore (§4.7) --------------------------------------------------

def pre_score(pod: dict, cluster, objects: dict, feasible: list[str], state: dict,
              args: SpreadArgs = SYSTEM_ARGS) -> tuple[bool, str | None]:
    """(skip, error)."""
    if cluster.num_nodes() == 0:
        return True, None
    own = len((pod.get("spec") or {}).get("topologySpreadConstraints") or []) > 0
    require_all = own or not args.system_defaulted
    try:
        constraints = get_constraints(pod, "ScheduleAnyway", objects, args)
    except SelectorError as err:
        return False, f"running PreScore plugin \"PodTopologySpread\": calculating preScoreState: {err}"
    if len(constraints) == 0:
        return True, None

    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]   # the domains of F, with counts
    for name in feasible:
        node = cluster.node_infos[name].node
        if require_all and not node_has_keys(node, constraints):
            ignored.add(name)
            continue
        labels = node_labels(node)
        for i, c in enumerate(constraints):
            if c.key == HOSTNAME:
                continue
            value = labels.get(c.key, "")
            counts[i].setdefault(value, 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(counts[i])
        if c.key == HOSTNAME:
            size = len(feasible) - len(ignored)
        weights.append(go_log(float(size + 2)))

    ns = pod_namespace(pod)
    for name in cluster.input_order:
        ni = cluster.node_infos[name]
        if require_all and not node_has_keys(ni.node, constraints):
            continue
        labels = node_labels(ni.node)
        for i, c in enumerate(constraints):
            if not passes_policies(c, pod, ni.node):
                continue
            value = labels.get(c.key, "")
            if value not in counts[i]:
                continue
            counts[i][value] += count_matching(ni.pods, c.selector, ns)

    state["pts_score"] = {"constraints": constraints, "ignored": ignored, "counts": counts,
                          "weights": weights, "namespace": ns}
    return False, None


def score(state: dict, ni) -> int:
    s = state["pts_score"]
    if ni.name in s["ignored"]:
        return 0
    labels = node_labels(ni.node)
    total = 0.0
    for i, c in enumerate(s["constraints"]):
        if c.key not in labels:
            continue
        if c.key == HOSTNAME:
            cnt = count_matching(ni.pods, c.selector, s["namespace"])
        else:
            cnt = s["counts"][i][labels[c.key]]
        total += float(cnt) * s["weights"][i] + float(c.max_skew - 1)
    return int(go_round(total))


def normalize(state: dict, raw: dict[str, int]) -> dict[str, int]:
    ignored = state["pts_score"]["ignored"]
    lo = None
    hi = 0
    for name, s in raw.items():
        if name in ignored:
            continue
        if lo is None or s < lo:
            lo = s
        if s > hi:
            hi = s
    out = {}
    for name, s in raw.items():
        if name in ignored:
            out[name] = 0
        elif hi == 0:
            out[name] = 100
        else:
            out[name] = 100 * (hi + (lo or 0) - s) // hi   # lo is set: a name not ignored was seen
    return out
