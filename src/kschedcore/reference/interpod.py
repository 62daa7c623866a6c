"""InterPodAffinity: Filter and Score (semantics §3.8, §4.6), over the raw pod/node dicts.

Written from kube-scheduler v1.34.1 plugins/interpodaffinity (filtering.go, scoring.go,
plugin.go), framework/types.go (newAffinityTerm, GetAffinityTerms, AffinityTerm.Matches) and
apimachinery meta/v1 LabelSelectorAsSelector.  Plain loops, recomputed from scratch for every
pod: the scheduler's counters are just sums over every pod on every node.

A label selector is represented as:

* ``NOTHING`` (a nil selector, or a namespaceSelector merged into the names): matches nothing;
* ``EVERYTHING`` (``{}``): matches every label set;
* a list of ``(key, op, values)`` requirements, ANDed.
"""
from __future__ import annotations

from dataclasses import dataclass

from .names import is_qualified_name, is_valid_label_value
from .plugins import U, UU, PreFilterOutcome, Status

NOTHING = "nothing"
EVERYTHING = "everything"

HARD_POD_AFFINITY_WEIGHT = 1   # InterPodAffinityArgs default

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


class SelectorError(ValueError):
    pass


# --- label selectors -------------------------------------------------------------------------

def parse_label_selector(sel: dict | None):
    """metav1.LabelSelectorAsSelector (raises SelectorError where it returns an error)."""
    if sel is None:
        return NOTHING
    match_labels = sel.get("matchLabels") or {}
    match_exprs = sel.get("matchExpressions") or []
    if len(match_labels) + len(match_exprs) == 0:
        return EVERYTHING
    reqs = []
    for key, value in match_labels.items():
        if not is_qualified_name(key) or not is_valid_label_value(value):
            raise SelectorError(f"invalid matchLabels entry {key!r}: {value!r}")
        reqs.append((key, "In", [value]))   # selection.Equals: same as In with one value
    for expr in match_exprs:
        key = expr.get("key") or ""
        op = expr.get("operator") or ""
        values = list(expr.get("values") or [])
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise SelectorError(f"{op!r} is not a valid label selector operator")
        if not is_qualified_name(key):
            raise SelectorError(f"invalid key {key!r}")
        if op in ("In", "NotIn") and len(values) == 0:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and len(values) != 0:
            raise SelectorError("values set must be empty for exists and does not exist")
        for v in values:
            if not is_valid_label_value(v):
                raise SelectorError(f"invalid value {v!r}")
        reqs.append((key, op, values))
    return reqs


def selector_matches(selector, labels: dict | None) -> bool:
    labels = labels or {}
    if selector == NOTHING:
        return False
    if selector == EVERYTHING:
        return True
    for key, op, values in selector:
        if op == "In":
            ok = key in labels and labels[key] in values
        elif op == "NotIn":
            ok = key not in labels or labels[key] not in values
        elif op == "Exists":
            ok = key in labels
        else:  # DoesNotExist
            ok = key not in labels
        if not ok:
            return False
    return True


# --- affinity terms --------------------------------------------------------------------------

@dataclass
class Term:
    """framework.AffinityTerm (+ weight for the preferred ones)."""
    namespaces: set[str]
    selector: object
    topology_key: str
    ns_selector: object
    weight: int = 0

    def matches(self, pod: dict, ns_labels: dict | None) -> bool:
        """AffinityTerm.Matches(pod, nsLabels)."""
        if pod_namespace(pod) in self.namespaces or selector_matches(self.ns_selector, ns_labels):
            return selector_matches(self.selector, pod_labels(pod))
        return False


def pod_namespace(pod: dict) -> str:
    return (pod.get("metadata") or {}).get("namespace") or "default"


def pod_labels(pod: dict) -> dict:
    return (pod.get("metadata") or {}).get("labels") or {}


def node_labels(node: dict) -> dict:
    return (node.get("metadata") or {}).get("labels") or {}


def new_term(owner: dict, raw: dict, weight: int = 0) -> Term:
    """newAffinityTerm: namespaces = term.namespaces, or the owner's namespace when that list
    is empty and namespaceSelector is nil."""
    selector = parse_label_selector(raw.get("labelSelector"))
    listed = list(raw.get("namespaces") or [])
    if len(listed) == 0 and raw.get("namespaceSelector") is None:
        namespaces = {pod_namespace(owner)}
    else:
        namespaces = set(listed)
    ns_selector = parse_label_selector(raw.get("namespaceSelector"))
    return Term(namespaces, selector, raw.get("topologyKey") or "", ns_selector, weight)


@dataclass
class PodTerms:
    required_affinity: list[Term]
    required_anti: list[Term]
    preferred_affinity: list[Term]
    preferred_anti: list[Term]


def _term_lists(pod: dict) -> list[tuple[list[dict], bool]]:
    """The four raw term lists, in PodTerms order: (terms, weighted)."""
    aff = (pod.get("spec") or {}).get("affinity") or {}
    pa = aff.get("podAffinity") or {}
    paa = aff.get("podAntiAffinity") or {}
    return [(pa.get("requiredDuringSchedulingIgnoredDuringExecution") or [], False),
            (paa.get("requiredDuringSchedulingIgnoredDuringExecution") or [], False),
            (pa.get("preferredDuringSchedulingIgnoredDuringExecution") or [], True),
            (paa.get("preferredDuringSchedulingIgnoredDuringExecution") or [], True)]


def _parse_list(pod: dict, raw_terms: list[dict], weighted: bool) -> list[Term]:
    if weighted:
        return [new_term(pod, t.get("podAffinityTerm") or {}, int(t.get("weight") or 0)) for t in raw_terms]
    return [new_term(pod, t) for t in raw_terms]


def pod_terms(pod: dict) -> PodTerms:
    """PodInfo.Update for the incoming pod: the four parsed term lists (raises SelectorError
    if any term fails to parse: NewPodInfo's error)."""
    return PodTerms(*[_parse_list(pod, raw, weighted) for raw, weighted in _term_lists(pod)])


def existing_pod_terms(pod: dict) -> PodTerms:
    """An existing pod's terms, as NodeInfo.AddPod keeps them (NewPodInfo's error ignored):
    a list with a term that fails to parse is empty, the other lists are kept."""
    lists = []
    for raw, weighted in _term_lists(pod):
        try:
            lists.append(_parse_list(pod, raw, weighted))
        except SelectorError:
            lists.append([])
    return PodTerms(*lists)


def resolve_incoming(term: Term, namespaces: dict[str, dict]) -> Term:
    """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector of the incoming
    pod is turned into the names of the Namespaces it matches, and then matches nothing."""
    if term.ns_selector in (NOTHING, EVERYTHING):
        return term
    names = set(term.namespaces)
    for name, labels in namespaces.items():
        if selector_matches(term.ns_selector, labels):
            names.add(name)
    return Term(names, term.selector, term.topology_key, NOTHING, term.weight)


def matches_all(terms: list[Term], pod: dict) -> bool:
    """podMatchesAllAffinityTerms (incoming terms: namespace labels not looked up)."""
    if len(terms) == 0:
        return False
    for t in terms:
        if not t.matches(pod, None):
            return False
    return True


def add_count(counts: dict, node: dict, key: str, value: int) -> None:
    labels = node_labels(node)
    if key in labels:
        pair = (key, labels[key])
        counts[pair] = counts.get(pair, 0) + value


# --- PreFilter / Filter (§3.8) ---------------------------------------------------------------

def pre_filter(pod: dict, cluster, namespaces: dict[str, dict], state: dict) -> PreFilterOutcome:
    try:
        terms = pod_terms(pod)
    except SelectorError as err:
        return PreFilterOutcome(status=Status(UU, [f"parsing pod: {err}"]))
    req_aff = [resolve_incoming(t, namespaces) for t in terms.required_affinity]
    req_anti = [resolve_incoming(t, namespaces) for t in terms.required_anti]
    ns_labels = namespaces.get(pod_namespace(pod))

    existing_anti: dict = {}
    aff: dict = {}
    anti: dict = {}
    for name in cluster.input_order:
        ni = cluster.node_infos[name]
        for existing in ni.pods:
            # existing pods' required anti-affinity against the incoming pod
            for t in existing_pod_terms(existing).required_anti:
                if t.matches(pod, ns_labels):
                    add_count(existing_anti, ni.node, t.topology_key, 1)
            # the incoming pod's required affinity: existing pods matching all terms
            if matches_all(req_aff, existing):
                for t in req_aff:
                    add_count(aff, ni.node, t.topology_key, 1)
            # the incoming pod's required anti-affinity
            for t in req_anti:
                if t.matches(existing, None):
                    add_count(anti, ni.node, t.topology_key, 1)

    if len(existing_anti) == 0 and len(req_aff) == 0 and len(req_anti) == 0:
        return PreFilterOutcome(skip=True)
    state["ipa"] = {"pod": pod, "req_aff": req_aff, "req_anti": req_anti,
                    "existing_anti": existing_anti, "aff": aff, "anti": anti}
    return PreFilterOutcome()


def filter_node(state: dict, ni) -> Status | None:
    s = state["ipa"]
    labels = node_labels(ni.node)

    # (1) the incoming pod's affinity
    pods_exist = True
    for t in s["req_aff"]:
        if t.topology_key not in labels:
            return Status(UU, [REASON_AFFINITY])
        if s["aff"].get((t.topology_key, labels[t.topology_key]), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # the first pod of a group with affinity to itself
        if not (len(s["aff"]) == 0 and matches_all(s["req_aff"], s["pod"])):
            return Status(UU, [REASON_AFFINITY])

    # (2) the incoming pod's anti-affinity
    for t in s["req_anti"]:
        if t.topology_key in labels and s["anti"].get((t.topology_key, labels[t.topology_key]), 0) > 0:
            return Status(U, [REASON_ANTI_AFFINITY])

    # (3) existing pods' anti-affinity
    for key, value in labels.items():
        if s["existing_anti"].get((key, value), 0) > 0:
            return Status(U, [REASON_EXISTING_ANTI_AFFINITY])
    return None


# --- PreScore / Score / NormalizeScore (§4.6) ------------------------------------------------

def pre_score(pod: dict, cluster, namespaces: dict[str, dict], state: dict) -> tuple[bool, str | None]:
    """(skip, error)."""
    try:
        terms = pod_terms(pod)
    except SelectorError as err:
        return False, f"running PreScore plugin \"InterPodAffinity\": failed to parse pod: {err}"
    pref_aff = [resolve_incoming(t, namespaces) for t in terms.preferred_affinity]
    pref_anti = [resolve_incoming(t, namespaces) for t in terms.preferred_anti]
    ns_labels = namespaces.get(pod_namespace(pod))

    topology_score: dict[str, dict[str, int]] = {}

    def record(term: Term, weight: int, target: dict, target_ns_labels, node: dict) -> None:
        if term.matches(target, target_ns_labels):
            labels = node_labels(node)
            if term.topology_key in labels:
                values = topology_score.setdefault(term.topology_key, {})
                value = labels[term.topology_key]
                values[value] = values.get(value, 0) + weight

    for name in cluster.input_order:
        ni = cluster.node_infos[name]
        for existing in ni.pods:
            et = existing_pod_terms(existing)
            for t in pref_aff:
                record(t, t.weight, existing, None, ni.node)
            for t in pref_anti:
                record(t, -t.weight, existing, None, ni.node)
            for t in et.required_affinity:
                record(t, HARD_POD_AFFINITY_WEIGHT, pod, ns_labels, ni.node)
            for t in et.preferred_affinity:
                record(t, t.weight, pod, ns_labels, ni.node)
            for t in et.preferred_anti:
                record(t, -t.weight, pod, ns_labels, ni.node)

    if len(topology_score) == 0:
        return True, None
    state["ipa_score"] = topology_score
    return False, None


def score(state: dict, ni) -> int:
    total = 0
    labels = node_labels(ni.node)
    for key, values in state["ipa_score"].items():
        if key in labels:
            total += values.get(labels[key], 0)
    return total


def normalize(raw: dict[str, int]) -> dict[str, int]:
    if not raw:
        return {}
    lo = min(raw.values())
    hi = max(raw.values())
    out = {}
    for name, s in raw.items():
        f = 0.0
        if hi - lo > 0:
            f = 100.0 * (float(s - lo) / float(hi - lo))
        out[name] = int(f)
    return out
