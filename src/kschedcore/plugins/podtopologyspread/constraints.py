"""PodTopologySpread's constraints: the pod's own (with matchLabelKeys) and the default ones
(PodTopologySpreadArgs, validated as ValidatePodTopologySpreadArgs does)."""
from ...errors import ValidationError
from ...objects.pod_affinity import LabelSelector
from ...objects.resources import is_qualified_name

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REASON_MISSING = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL, SKEW = 1, 2
ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
DEFAULTING_TYPES = ("System", "List")


class Constraint:
    __slots__ = ("key", "max_skew", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(self, key, max_skew, selector, min_domains=1, honor_affinity=True, honor_taints=False):
        self.key, self.max_skew, self.selector = key, max_skew, selector
        self.min_domains, self.honor_affinity, self.honor_taints = min_domains, honor_affinity, honor_taints


class DefaultConstraint:
    """One entry of the defaults; its selector is deduced for each pod."""
    __slots__ = ("key", "max_skew", "action", "min_domains", "honor_affinity", "honor_taints")

    def __init__(self, key, max_skew, action, min_domains=1, honor_affinity=True, honor_taints=False):
        self.key, self.max_skew, self.action = key, max_skew, action
        self.min_domains, self.honor_affinity, self.honor_taints = min_domains, honor_affinity, honor_taints


#: defaultingType System (§3.9): ScheduleAnyway only, so they act on Score alone
SYSTEM_DEFAULTS = (DefaultConstraint(HOSTNAME, 3, "ScheduleAnyway"), DefaultConstraint(ZONE, 5, "ScheduleAnyway"))


def validated_defaults(args):
    """(default constraints, system defaulted) from PodTopologySpreadArgs, validated as
    ValidatePodTopologySpreadArgs does (defaultingType defaults to System)."""
    obj = "PodTopologySpreadArgs"
    kind = args.get("defaultingType") or "System"
    raw = args.get("defaultConstraints") or []
    if kind not in DEFAULTING_TYPES:
        supported = ", ".join(f'"{k}"' for k in DEFAULTING_TYPES)
        raise ValidationError(obj, "defaultingType", f'Unsupported value: "{kind}": supported values: {supported}')
    if not isinstance(raw, list):
        raise ValidationError(obj, "defaultConstraints", f"expected a list, got {type(raw).__name__}")
    if kind == "System" and raw:
        raise ValidationError(obj, "defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty')
    if kind == "System":
        return SYSTEM_DEFAULTS, True
    out: list = []
    seen: set = set()
    for i, c in enumerate(raw):
        out.append(_default_constraint(c, f"defaultConstraints[{i}]", seen, obj))
    return tuple(out), False


def _default_constraint(c, path, seen, obj):
    def fail(field, msg):
        raise ValidationError(obj, path + field, msg)

    if not isinstance(c, dict):
        fail("", f"expected an object, got {type(c).__name__}")
    skew, key, action = c.get("maxSkew", 0), c.get("topologyKey") or "", c.get("whenUnsatisfiable") or ""
    min_domains = 1 if c.get("minDomains") is None else c["minDomains"]
    for field, v, typ in (("maxSkew", skew, int), ("minDomains", min_domains, int), ("topologyKey", key, str),
                          ("whenUnsatisfiable", action, str)):
        if isinstance(v, bool) or not isinstance(v, typ):
            expected = "an integer" if typ is int else "a string"
            fail("." + field, f"expected {expected}, got {type(v).__name__} {v!r}")
    if skew <= 0:
        fail(".maxSkew", f"Invalid value: {skew}: not in valid range (0, inf)")
    if not key:
        fail(".topologyKey", "Required value: can not be empty")
    if not is_qualified_name(key):
        fail(".topologyKey", f'Invalid value: "{key}": must be a qualified name ([prefix/]name)')
    if not action:
        fail(".whenUnsatisfiable", "Required value: can not be empty")
    if action not in ACTIONS:
        supported = ", ".join(f'"{k}"' for k in ACTIONS)
        fail(".whenUnsatisfiable", f'Unsupported value: "{action}": supported values: {supported}')
    if c.get("labelSelector") is not None:
        fail(".labelSelector", "Forbidden: constraint must not define a selector, as they deduced for each pod")
    if (key, action) in seen:
        fail("", f'Duplicate value: "{{{key}, {action}}}"')
    seen.add((key, action))
    # Unvalidated upstream: a policy other than "Honor" acts as Ignore; minDomains < 1 filters
    # as 1 does (no domains: Go's minimum is MaxInt32, else the real minimum, either way no skew).
    return DefaultConstraint(key, skew, action, max(min_domains, 1),
                             (c.get("nodeAffinityPolicy") or "Honor") == "Honor",
                             c.get("nodeTaintsPolicy") == "Honor")


def pod_constraints(pod, action):
    """filterTopologySpreadConstraints: the pod's constraints for `action`, selectors merged
    with matchLabelKeys (a nil selector stays nil)."""
    out = []
    for c in pod.topology_spread:
        if c["whenUnsatisfiable"] != action:
            continue
        selector = c["selector"]
        match = {k: pod.labels[k] for k in c["matchLabelKeys"] if k in pod.labels}
        if match and selector is not None:
            selector = LabelSelector(tuple((k, "In", frozenset([v])) for k, v in match.items())
                                     + selector.requirements)
        out.append(Constraint(c["topologyKey"], c["maxSkew"], selector, c["minDomains"],
                              c["nodeAffinityPolicy"] != "Ignore", c["nodeTaintsPolicy"] == "Honor"))
    return out
