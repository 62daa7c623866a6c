"""Predicates on Pod and Node objects (not the node table), as kube-scheduler's queueing hints
and the kubelet's admission evaluate them: required node affinity (component-helpers
nodeaffinity), untolerated taints (v1helper.FindMatchingUntoleratedTaint)."""
from ...objects.fields import parse_go_int64

METADATA_NAME = "metadata.name"


def untolerated(taints, tolerations) -> bool:
    """FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc found one."""
    return any(t.effect in ("NoSchedule", "NoExecute")
               and not any(tol.tolerates(t.key, t.value, t.effect) for tol in tolerations)
               for t in taints)


class ParseError(Exception):
    """A node selector term kube-scheduler cannot parse: its hint answers Queue."""


def _label_requirement_matches(req, labels) -> bool:
    present = req.key in labels
    if req.operator == "In":
        return present and labels[req.key] in req.values
    if req.operator == "NotIn":
        return not present or labels[req.key] not in req.values
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    have = parse_go_int64(labels[req.key]) if present else None
    want = parse_go_int64(req.values[0]) if len(req.values) == 1 else None
    if have is None or want is None:
        return False
    return have > want if req.operator == "Gt" else have < want


def _term_matches(term, node) -> bool:
    if not term.parses:
        raise ParseError
    if not all(_label_requirement_matches(r, node.labels) for r in term.expressions):
        return False
    if not term.fields or not node.name:
        return True
    got = {METADATA_NAME: node.name}
    return all((got.get(r.key, "") == r.values[0]) == (r.operator == "In") for r in term.fields)


def terms_match(terms, node) -> bool:
    """LazyErrorNodeSelector.Match: empty terms are dropped; a parse error counts only if no
    other term matches."""
    failed = False
    for term in terms:
        if term.empty:
            continue
        try:
            if _term_matches(term, node):
                return True
        except ParseError:
            failed = True
    if failed:
        raise ParseError
    return False


def required_node_affinity_matches(pod, node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node); raises ParseError like Match's error."""
    if pod.node_selector and any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return pod.required_terms is None or terms_match(pod.required_terms, node)
