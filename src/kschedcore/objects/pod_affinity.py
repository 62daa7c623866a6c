"""Pod (anti-)affinity terms: label selectors over pods and namespaces (semantics §3.8).

Mirrors AffinityTerm in pkg/scheduler/framework/types.go: a term matches pod P iff (P's
namespace is in the term's namespaces OR the namespace selector matches P's namespace labels)
AND the label selector matches P's labels. A nil selector matches nothing, `{}` everything.
"""
from dataclasses import dataclass
from typing import Any

from . import validation as apival
from .fields import FieldReader

SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """metav1.LabelSelector as requirements; `requirements == ()` is Everything."""
    requirements: tuple          # ((key, op, frozenset(values)), ...)

    def matches(self, labels: dict) -> bool:
        for key, op, values in self.requirements:
            present = key in labels
            if op == "In":
                if not present or labels[key] not in values:
                    return False
            elif op == "NotIn":
                if present and labels[key] in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif present:   # DoesNotExist
                return False
        return True

    @property
    def everything(self) -> bool:
        return not self.requirements


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    topology_key: str
    selector: LabelSelector | None        # None: labels.Nothing()
    namespaces: frozenset
    namespace_selector: LabelSelector | None   # None: Nothing

    def matches(self, labels: dict, namespace: str, namespace_labels: dict | None) -> bool:
        if namespace not in self.namespaces and not (
                self.namespace_selector is not None and self.namespace_selector.matches(namespace_labels or {})):
            return False
        return self.selector is not None and self.selector.matches(labels)

    def resolved(self, namespaces: dict) -> "AffinityTerm":
        """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespace selector becomes the
        names of the namespaces it selects now (Namespace objects: name -> labels)."""
        sel = self.namespace_selector
        if sel is None or sel.everything:
            return self
        names = frozenset(n for n, labels in namespaces.items() if sel.matches(labels))
        return AffinityTerm(self.topology_key, self.selector, self.namespaces | names, None)


@dataclass(frozen=True, slots=True)
class PodAffinity:
    required_affinity: tuple = ()          # (AffinityTerm, ...)
    required_anti: tuple = ()
    preferred_affinity: tuple = ()         # ((weight, AffinityTerm), ...)
    preferred_anti: tuple = ()
    #: the pod spec has non-empty preferred (anti-)affinity lists (PreScore then looks at every pod)
    has_preferred: bool = False
    #: no term at all (precomputed: asked once per cycle)
    empty: bool = True


def parse_label_selector(reader: FieldReader, d: Any, path: str) -> LabelSelector | None:
    """LabelSelectorAsSelector; None for a missing (nil) selector."""
    if d is None:
        return None
    d = reader.item(d, path)
    match_labels = reader.string_map(d, "matchLabels", path + ".matchLabels")
    apival.check_labels(reader.obj, match_labels, path + ".matchLabels")
    reqs = [(k, "In", frozenset([v])) for k, v in match_labels.items()]
    for i, e in enumerate(reader.seq(d, "matchExpressions", path + ".matchExpressions")):
        epath = f"{path}.matchExpressions[{i}]"
        e = reader.item(e, epath)
        key = reader.string(e, "key", epath + ".key")
        op = reader.string(e, "operator", epath + ".operator")
        values = reader.string_list(e, "values", epath + ".values")
        if op not in SELECTOR_OPS:
            reader.fail(epath + ".operator", f'"{op}" is not a valid label selector operator')
        if op in ("In", "NotIn") and not values:
            reader.fail(epath + ".values", "must be specified when `operator` is 'In' or 'NotIn'")
        if op in ("Exists", "DoesNotExist") and values:
            reader.fail(epath + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        apival.check(reader.obj, epath + ".key", key, apival.qualified_name_errors(key))
        for j, value in enumerate(values):
            apival.check(reader.obj, f"{epath}.values[{j}]", value, apival.label_value_errors(value))
        reqs.append((key, op, frozenset(values)))
    return LabelSelector(tuple(reqs))


def _term(reader: FieldReader, t: Any, path: str, namespace: str) -> AffinityTerm:
    t = reader.item(t, path)
    key = reader.string(t, "topologyKey", path + ".topologyKey")
    if not key:
        reader.fail(path + ".topologyKey", "can not be empty")
    apival.check(reader.obj, path + ".topologyKey", key, apival.qualified_name_errors(key))
    selector = parse_label_selector(reader, t.get("labelSelector"), path + ".labelSelector")
    ns_selector = parse_label_selector(reader, t.get("namespaceSelector"), path + ".namespaceSelector")
    namespaces = frozenset(reader.string_list(t, "namespaces", path + ".namespaces"))
    for name in sorted(namespaces):
        apival.check(reader.obj, path + ".namespace", name, apival.dns1123_label_errors(name))
    if not namespaces and ns_selector is None:
        namespaces = frozenset([namespace])   # getNamespacesFromPodAffinityTerm
    return AffinityTerm(key, selector, namespaces, ns_selector)


def parse_pod_affinity(reader: FieldReader, spec: dict, namespace: str) -> PodAffinity:
    affinity = reader.mapping(spec, "affinity", "spec.affinity")
    out: dict[str, tuple] = {}
    has_preferred = False
    for kind, prefix in (("podAffinity", "affinity"), ("podAntiAffinity", "anti")):
        path = f"spec.affinity.{kind}"
        block = reader.mapping(affinity, kind, path)
        rpath = path + ".requiredDuringSchedulingIgnoredDuringExecution"
        out[f"required_{prefix}"] = tuple(
            _term(reader, t, f"{rpath}[{i}]", namespace)
            for i, t in enumerate(reader.seq(block, "requiredDuringSchedulingIgnoredDuringExecution", rpath)))
        ppath = path + ".preferredDuringSchedulingIgnoredDuringExecution"
        preferred = []
        for i, p in enumerate(reader.seq(block, "preferredDuringSchedulingIgnoredDuringExecution", ppath)):
            p = reader.item(p, f"{ppath}[{i}]")
            weight = reader.integer(p, "weight", f"{ppath}[{i}].weight")
            if not 1 <= weight <= 100:
                apival.invalid(reader.obj, f"{ppath}[{i}].weight", weight, "must be in the range 1-100")
            preferred.append((weight, _term(reader, p.get("podAffinityTerm") or {}, f"{ppath}[{i}].podAffinityTerm",
                                            namespace)))
        out[f"preferred_{prefix}"] = tuple(preferred)
        has_preferred = has_preferred or bool(preferred)
    empty = not any(out.values())
    return PodAffinity(has_preferred=has_preferred, empty=empty, **out)
