"""PodDisruptionBudget (policy/v1): what DefaultPreemption reads of it (semantics §9.3)."""
from dataclasses import dataclass

from .fields import FieldReader, metadata_name
from .pod_affinity import parse_label_selector


@dataclass(slots=True, eq=False)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: object               # LabelSelector, or None (matches nothing)
    disruptions_allowed: int       # status.disruptionsAllowed
    disrupted_pods: frozenset      # status.disruptedPods: names already being disrupted

    def matches(self, pod) -> bool:
        """The budget covers the pod: same namespace, a non-empty selector matching its
        (non-empty) labels, and not already in disruptedPods."""
        return (pod.namespace == self.namespace and bool(pod.labels) and self.selector is not None
                and not self.selector.everything and self.selector.matches(pod.labels)
                and pod.name not in self.disrupted_pods)


def parse_pdb(raw, index_hint: str = "") -> PodDisruptionBudget:
    ns, name = metadata_name("poddisruptionbudget", raw, index_hint)
    ns = ns or "default"
    r = FieldReader(f"poddisruptionbudget {ns}/{name}")
    spec, status = r.mapping(raw, "spec", "spec"), r.mapping(raw, "status", "status")
    return PodDisruptionBudget(ns, name, parse_label_selector(r, spec.get("selector"), "spec.selector"),
                               r.integer(status, "disruptionsAllowed", "status.disruptionsAllowed"),
                               frozenset(r.mapping(status, "disruptedPods", "status.disruptedPods")))


def split_by_violation(pods, pdbs) -> tuple:
    """filterPodsWithPDBViolation: (pods whose eviction would break a budget, the others),
    counting down each budget's allowed disruptions in order."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating, other = [], []
    for pod in pods:
        broken = False
        for i, b in enumerate(pdbs):
            if b.matches(pod):
                allowed[i] -= 1
                broken = broken or allowed[i] < 0
        (violating if broken else other).append(pod)
    return violating, other
