"""Node selectors and node affinity matching (semantics §3.4, §4.5).

Written from k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go and
k8s.io/apimachinery/pkg/labels/selector.go (NewRequirement, Requirement.Matches).

A term is parsed once; a term with any parse error never matches (the error is ignored by
the Filter, "for backwards compatibility").
"""
from __future__ import annotations

from dataclasses import dataclass

from .goarith import go_parse_int64
from .names import is_qualified_name, is_valid_label_value

METADATA_NAME = "metadata.name"

_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass
class LabelRequirement:
    key: str
    op: str
    values: list[str]

    def matches(self, labels: dict[str, str]) -> bool:
        """labels.Requirement.Matches."""
        if self.op == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.op == "Exists":
            return self.key in labels
        if self.op == "DoesNotExist":
            return self.key not in labels
        if self.op in ("Gt", "Lt"):
            if self.key not in labels:
                return False
            node_value = go_parse_int64(labels[self.key])
            if node_value is None:
                return False
            if len(self.values) != 1:
                return False
            wanted = go_parse_int64(self.values[0])
            if wanted is None:
                return False
            if self.op == "Gt":
                return node_value > wanted
            return node_value < wanted
        return False


def parse_label_requirement(expr: dict) -> LabelRequirement | None:
    """labels.NewRequirement for a NodeSelectorRequirement; None on any validation error."""
    key = expr.get("key") or ""
    op = expr.get("operator") or ""
    values = list(expr.get("values") or [])
    ok = True
    if op not in _LABEL_OPS:
        return None
    if not is_qualified_name(key):
        ok = False
    if op in ("In", "NotIn"):
        if len(values) == 0:
            ok = False
    elif op in ("Exists", "DoesNotExist"):
        if len(values) != 0:
            ok = False
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            ok = False
        for v in values:
            if go_parse_int64(v) is None:
                ok = False
    for v in values:
        if not is_valid_label_value(v):
            ok = False
    if not ok:
        return None
    return LabelRequirement(key=key, op=op, values=values)


@dataclass
class FieldRequirement:
    """fields.OneTermEqualSelector / OneTermNotEqualSelector."""
    key: str
    equal: bool
    value: str

    def matches(self, node_fields: dict[str, str]) -> bool:
        got = node_fields.get(self.key, "")  # fields.Set.Get: "" when absent
        return (got == self.value) if self.equal else (got != self.value)


@dataclass
class NodeSelectorTerm:
    """A parsed v1.NodeSelectorTerm (nodeSelectorTerm in nodeaffinity.go)."""
    label_reqs: list[LabelRequirement] | None = None   # None: no matchExpressions
    field_reqs: list[FieldRequirement] | None = None   # None: no matchFields
    parse_error: bool = False

    def matches(self, node: dict) -> bool:
        if self.parse_error:
            return False
        labels = node_labels(node)
        if self.label_reqs is not None:
            for req in self.label_reqs:
                if not req.matches(labels):
                    return False
        fields = node_fields(node)
        if self.field_reqs is not None and len(fields) > 0:
            for field_req in self.field_reqs:
                if not field_req.matches(fields):
                    return False
        return True


def is_empty_term(term: dict) -> bool:
    return not (term.get("matchExpressions") or []) and not (term.get("matchFields") or [])


def parse_term(term: dict) -> NodeSelectorTerm:
    parsed = NodeSelectorTerm()
    exprs = term.get("matchExpressions") or []
    if exprs:
        reqs = []
        for expr in exprs:
            req = parse_label_requirement(expr)
            if req is None:
                parsed.parse_error = True
            else:
                reqs.append(req)
        parsed.label_reqs = reqs
    fexprs = term.get("matchFields") or []
    if fexprs:
        freqs = []
        for expr in fexprs:
            op = expr.get("operator")
            values = list(expr.get("values") or [])
            if op in ("In", "NotIn") and len(values) == 1:
                freqs.append(FieldRequirement(key=expr.get("key") or "", equal=(op == "In"), value=values[0]))
            else:
                parsed.parse_error = True
        parsed.field_reqs = freqs
    return parsed


def node_labels(node: dict) -> dict[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def node_fields(node: dict) -> dict[str, str]:
    """extractNodeFields: only metadata.name, when non-empty."""
    name = (node.get("metadata") or {}).get("name") or ""
    return {METADATA_NAME: name} if name else {}


# --- pod accessors ---------------------------------------------------------------------------

def pod_node_affinity(pod: dict) -> dict | None:
    affinity = (pod.get("spec") or {}).get("affinity")
    if affinity is None:
        return None
    return affinity.get("nodeAffinity")


def pod_required_node_selector(pod: dict) -> dict | None:
    """spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution (None = nil)."""
    na = pod_node_affinity(pod)
    if na is None:
        return None
    return na.get("requiredDuringSchedulingIgnoredDuringExecution")


def pod_preferred_terms(pod: dict) -> list | None:
    """...preferredDuringSchedulingIgnoredDuringExecution (None = nil; [] is not nil)."""
    na = pod_node_affinity(pod)
    if na is None:
        return None
    return na.get("preferredDuringSchedulingIgnoredDuringExecution")


# --- matching (§3.4) -------------------------------------------------------------------------

def node_selector_matches(node_selector: dict, node: dict) -> bool:
    """A v1.NodeSelector: non-empty terms ORed; no usable term matches nothing."""
    for term in node_selector.get("nodeSelectorTerms") or []:
        if is_empty_term(term):
            continue
        if parse_term(term).matches(node):
            return True
    return False


def required_node_affinity_matches(pod: dict, node: dict) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required node affinity."""
    node_selector = (pod.get("spec") or {}).get("nodeSelector")
    if node_selector:  # len > 0
        labels = node_labels(node)
        for key, val in node_selector.items():
            if key not in labels or labels[key] != val:
                return False
    required = pod_required_node_selector(pod)
    if required is not None:
        return node_selector_matches(required, node)
    return True


def preferred_node_affinity_score(preferred: list, node: dict) -> int:
    """PreferredSchedulingTerms.Score: sum of weights of matching terms (weight 0 and empty
    terms dropped)."""
    score = 0
    for term in preferred:
        weight = int(term.get("weight") or 0)
        pref = term.get("preference") or {}
        if weight == 0 or is_empty_term(pref):
            continue
        if parse_term(pref).matches(node):
            score += weight
    return score


def preferred_terms_parse_error(preferred: list) -> bool:
    """NewPreferredSchedulingTerms returns an error if any kept term fails to parse (then the
    NodeAffinity PreScore fails and the cycle aborts)."""
    for term in preferred:
        weight = int(term.get("weight") or 0)
        pref = term.get("preference") or {}
        if weight == 0 or is_empty_term(pref):
            continue
        if parse_term(pref).parse_error:
            return True
    return False
