"""PriorityClass (scheduling.k8s.io/v1) and what the Priority admission plugin does with it:
a pod names a class in spec.priorityClassName and gets its value as spec.priority and its
preemptionPolicy; a pod naming none gets the globalDefault class's, else priority 0 (one that carries a priority
already keeps it)."""
from dataclasses import dataclass
from typing import Any

from ..errors import ObjectError
from . import validation as apival
from .fields import FieldReader, metadata_name

POLICIES = ("PreemptLowerPriority", "Never")
#: the built-in classes every API server has (pkg/apis/scheduling)
SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str


def parse_priority_class(raw: Any, index_hint: str = "") -> PriorityClass:
    _, name = metadata_name("priorityclass", raw, index_hint)
    r = FieldReader(f"priorityclass {name}")
    apival.check_meta(r.obj, None, name, raw["metadata"])
    if "value" not in raw:
        r.fail("value", "missing")
    value = r.integer(raw, "value", "value")
    apival.check_int32(r.obj, "value", value, "PriorityClass.value")
    global_default = r.boolean(raw, "globalDefault", "globalDefault")
    # ValidatePriorityClass
    if name.startswith("system-"):
        problem = _system_class_problem(name, value, global_default)
        if problem:
            r.fail("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for "
                   f"system use only. error: {problem}")
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.fail("value", f"Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}")
    policy = r.string(raw, "preemptionPolicy", "preemptionPolicy") or "PreemptLowerPriority"
    if policy not in POLICIES:
        r.fail("preemptionPolicy", f'Unsupported value: "{policy}": supported values: "PreemptLowerPriority", "Never"')
    return PriorityClass(name, value, global_default, policy)


def _system_class_problem(name: str, value: int, global_default: bool) -> str:
    """scheduling.IsKnownSystemPriorityClass's error, '' for a known one."""
    if name not in SYSTEM_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def admit(raw: dict, classes: dict) -> dict:
    """The pod as the Priority admission plugin leaves it: spec.priority and
    spec.preemptionPolicy from its class. Returns `raw` itself when nothing changes (an
    API-defaulted pod already carries both), else a copy. classes: name -> PriorityClass."""
    spec = raw.get("spec") if isinstance(raw, dict) else None
    if not isinstance(spec, dict):
        return raw                      # parse_pod reports it
    name = spec.get("priorityClassName") or ""
    if name:
        cls = classes.get(name)
        if cls is None and name in SYSTEM_CLASSES:
            cls = PriorityClass(name, SYSTEM_CLASSES[name], False, "PreemptLowerPriority")
        if cls is None:
            raise ObjectError(_pod_name(raw), "spec.priorityClassName", f'no PriorityClass named "{name}"')
    else:
        # getDefaultPriorityClass: of several defaults (a race can make two), the lowest value
        cls = min((c for c in classes.values() if c.global_default), key=lambda c: c.value, default=None)
    if not name and spec.get("priority") is not None:
        return raw                      # admitted already (or given by hand): kept as it is
    value = cls.value if cls is not None else 0
    policy = cls.preemption_policy if cls is not None else "PreemptLowerPriority"
    if spec.get("priority") is not None and spec["priority"] != value:
        raise ObjectError(_pod_name(raw), "spec.priority",
                          f"{spec['priority']!r} differs from the {value} of its PriorityClass "
                          f'"{cls.name if cls else ""}" (the Priority admission plugin would reject it)')
    if spec.get("priority") is not None and spec.get("preemptionPolicy") is not None:
        return raw
    spec = {**spec, "priority": value}
    spec.setdefault("preemptionPolicy", policy)
    return {**raw, "spec": spec}


def _pod_name(raw: dict) -> str:
    meta = raw.get("metadata") or {}
    return f"pod {meta.get('namespace') or 'default'}/{meta.get('name')}"
