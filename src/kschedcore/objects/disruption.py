"""PodDisruptionBudget (policy/v1): what DefaultPreemption reads of it (semantics §9.3)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import re

from . import validation as apival
from .fields import FieldReader, metadata_name
from .pod_affinity import LabelSelector, parse_label_selector

if TYPE_CHECKING:
    from .pod import Pod


@dataclass(slots=True, eq=False)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None  # None matches nothing
    disruptions_allowed: int       # status.disruptionsAllowed
    disrupted_pods: frozenset      # status.disruptedPods: names already being disrupted

    def matches(self, pod: Pod) -> bool:
        """The budget covers the pod: same namespace, a non-empty selector matching its
        (non-empty) labels, and not already in disruptedPods."""
        return (pod.namespace == self.namespace and bool(pod.labels) and self.selector is not None
                and not self.selector.everything and self.selector.matches(pod.labels)
                and pod.name not in self.disrupted_pods)


def parse_pdb(raw: Any, index_hint: str = "") -> PodDisruptionBudget:
    ns, name = metadata_name("poddisruptionbudget", raw, index_hint)
    ns = ns or "default"
    r = FieldReader(f"poddisruptionbudget {ns}/{name}")
    apival.check_meta(r.obj, ns, name, raw["metadata"])
    spec, status = r.mapping(raw, "spec", "spec"), r.mapping(raw, "status", "status")
    _check_spec(r, spec)
    allowed = r.integer(status, "disruptionsAllowed", "status.disruptionsAllowed")
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        n = r.integer(status, key, "status." + key)
        apival.check_int32(r.obj, "status." + key, n, "PodDisruptionBudgetStatus.status." + key)
        if n < 0:
            apival.invalid(r.obj, "status." + key, n, "must be greater than or equal to 0")
    return PodDisruptionBudget(ns, name, parse_label_selector(r, spec.get("selector"), "spec.selector"),
                               allowed, frozenset(r.mapping(status, "disruptedPods", "status.disruptedPods")))


_PERCENT = re.compile(r"[0-9]+%\Z")
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def _check_spec(r: FieldReader, spec: dict) -> None:
    """ValidatePodDisruptionBudgetSpec: minAvailable or maxUnavailable (not both), each a
    non-negative integer or a percentage of at most 100%; a known unhealthyPodEvictionPolicy."""
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        r.fail("spec", "Invalid value: minAvailable and maxUnavailable cannot be both set")
    for key in ("minAvailable", "maxUnavailable"):
        value, path = spec.get(key), "spec." + key
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            r.fail(path, f"expected an integer or a percentage, got {type(value).__name__} {value!r}")
        if isinstance(value, int):
            apival.check_int32(r.obj, path, value, "PodDisruptionBudgetSpec.spec." + key)
            if value < 0:
                apival.invalid(r.obj, path, value, "must be greater than or equal to 0")
        elif not _PERCENT.match(value):
            apival.invalid(r.obj, path, value, "must be an integer or percentage (e.g '5%')")
        elif int(value[:-1]) > 100:
            apival.invalid(r.obj, path, value, "must not be greater than 100%")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        r.fail("spec.unhealthyPodEvictionPolicy", f"Unsupported value: {apival.go_quote(policy)}: supported "
               'values: "AlwaysAllow", "IfHealthyBudget"')


def split_by_violation(pods: Iterable[Pod], pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], list[Pod]]:
    """filterPodsWithPDBViolation: (pods whose eviction would break a budget, the others),
    counting down each budget's allowed disruptions in order."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list = []
    other: list = []
    for pod in pods:
        broken = False
        for i, b in enumerate(pdbs):
            if b.matches(pod):
                allowed[i] -= 1
                broken = broken or allowed[i] < 0
        (violating if broken else other).append(pod)
    return violating, other
