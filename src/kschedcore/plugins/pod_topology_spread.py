"""PodTopologySpread (plugins/podtopologyspread): DoNotSchedule filter, ScheduleAnyway score.

Semantics §3.9 and §4.7. Matching pods per node row come from the cache's counters (kept
current as pods are placed and removed); a cycle sums them per topology domain over the
nodes the constraint counts (keys present, inclusion policies) with NumPy, and hands the
kernel a per-node status. The score needs the feasible set, so it runs after the kernel's
pass, over the feasible nodes only. Pods without constraints of their own get the default
constraints (args `defaultingType` System, or List with `defaultConstraints`), each with the
selector of the pod's Services and controller.
"""
import numpy as np

from .._kernels import F_POD_TOPOLOGY_SPREAD, MAX_SPREAD_SCORE_TERMS, S_POD_TOPOLOGY_SPREAD
from ..errors import ValidationError
from ..framework.gomath import go_log
from ..objects.pod_affinity import LabelSelector
from ..objects.resources import is_qualified_name
from .base import Plugin

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
        raise ValidationError(obj, "defaultingType",
                              f'Unsupported value: "{kind}": supported values: {", ".join(DEFAULTING_TYPES)}')
    if not isinstance(raw, list):
        raise ValidationError(obj, "defaultConstraints", f"expected a list, got {type(raw).__name__}")
    if kind == "System" and raw:
        raise ValidationError(obj, "defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty')
    if kind == "System":
        return SYSTEM_DEFAULTS, True
    out, seen = [], set()
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
        fail(".whenUnsatisfiable", f'Unsupported value: "{action}": supported values: {", ".join(ACTIONS)}')
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


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    filter_id = F_POD_TOPOLOGY_SPREAD
    score_id = S_POD_TOPOLOGY_SPREAD
    default_weight = 2
    scored_in_kernel = False

    def __init__(self, args=None):
        super().__init__(args)
        self.defaults, self.system_defaulted = validated_defaults(self.args)
        self.filter_defaults = any(d.action == "DoNotSchedule" for d in self.defaults)
        self.last = None        # (pod key, PreFilter skipped, PreScore skipped)

    def prefilter_runs(self, pod, objects) -> bool:
        """Whether PreFilter can find DoNotSchedule constraints: the pod's own, or defaults
        (their selector needs a Service or controller)."""
        return bool(pod.topology_spread) or (self.filter_defaults and bool(objects))

    def prefilter_skips(self, pod):
        return self.last is None or self.last[0] != pod.key or self.last[1]

    def prescore_skips(self, pod):
        return self.last is None or self.last[0] != pod.key or self.last[2]

    def reasons(self, detail, table):
        return [REASON_MISSING if detail == MISSING_LABEL else REASON_SKEW]

    # ---- PreFilter + Filter ------------------------------------------------------------------
    def prefilter(self, pod, ctx):
        """(per-row status, None) or (None, domain-count terms) for the kernel; (None, None):
        Skip, no DoNotSchedule constraint."""
        if pod.topology_spread:
            constraints = pod_constraints(pod, "DoNotSchedule")
        else:
            constraints = self._defaults(pod, ctx, "DoNotSchedule")
        self.last = (pod.key, not constraints, True)
        if not constraints:
            return None, None
        if len({c.key for c in constraints}) == 1 and not any(ctx.policy_restricts(pod, c) for c in constraints):
            return None, self._domain_terms(pod, ctx, constraints)
        return self._status(pod, ctx, constraints), None

    def _domain_terms(self, pod, ctx, constraints):
        """The usual case -- one topology key, no inclusion policy narrowing the nodes: every
        node with the key counts, so the cache's per-domain counters are the counts."""
        limits, cols, doms = [], [], []
        for c in constraints:
            col, dom = ctx.counters.incoming_row(("spread", (pod.namespace, c.selector)), c.key)
            domains = ctx.domain_values(col)
            counts = ctx.table.domains[dom]
            min_match = 0 if len(domains) < c.min_domains else int(counts[domains].min())
            self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
            cols.append(col)
            doms.append(dom)
            limits.append(c.max_skew - self_match + min_match)
        return (np.asarray(cols, np.int32), np.asarray(doms, np.int32), np.asarray(limits, np.int64))

    def _status(self, pod, ctx, constraints):
        """Per-row status, summing row counters over the nodes each constraint counts."""
        t = ctx.table
        n = t.labels.shape[0]
        cols = [t.label_key_col(c.key) for c in constraints]
        labels = t.labels
        has_all = np.ones(n, bool)
        for col in cols:
            has_all &= labels[:, col] >= 0
        status = np.zeros(n, np.int8)
        for c, col in zip(constraints, cols):
            vals = labels[:, col]
            eligible = has_all & ctx.alive & ctx.policy_mask(pod, c)
            counts = ctx.row_counts(pod.namespace, c.selector)
            by_value = np.bincount(vals[eligible], weights=counts[eligible], minlength=len(t.label_values))
            domains = np.unique(vals[eligible])
            if len(domains) < c.min_domains:
                min_match = 0
            else:
                min_match = int(by_value[domains].min())
            self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
            has = vals >= 0
            over = has & (by_value[np.where(has, vals, 0)] + self_match - min_match > c.max_skew)
            status[(status == 0) & ~has] = MISSING_LABEL
            status[(status == 0) & over] = SKEW
        return status

    # ---- PreScore + Score + NormalizeScore, over the feasible nodes ---------------------------
    def _score_constraints(self, pod, ctx):
        """The ScheduleAnyway constraints and whether a node must have every key to score."""
        if pod.topology_spread:
            return pod_constraints(pod, "ScheduleAnyway"), True
        return self._defaults(pod, ctx, "ScheduleAnyway"), not self.system_defaulted

    def score_terms(self, pod, ctx):
        """PreScore for the kernel: (terms, require_all) as NodeKernel.set_spread_score takes
        them; None when the NumPy path must score (or PreScore skips). The kernel scores the
        usual cases: hostname constraints (counted per node) and constraints whose counted
        nodes are exactly the nodes with the key, so the cache's domain counters hold the
        counts."""
        constraints, require_all = self._score_constraints(pod, ctx)
        if not constraints or len(constraints) > MAX_SPREAD_SCORE_TERMS:
            return None
        t = ctx.table
        cols = [t.label_key_col(c.key) for c in constraints]
        if require_all and len(set(cols)) > 1 and not ctx.all_have(cols):
            return None
        terms = []
        for c, col in zip(constraints, cols):
            if c.key == HOSTNAME:
                terms.append((col, -1, c.max_skew, ctx.row_counts(pod.namespace, c.selector)))
            elif ctx.policy_restricts(pod, c):
                return None
            else:
                _, dom = ctx.counters.incoming_row(("spread", (pod.namespace, c.selector)), c.key)
                terms.append((col, dom, c.max_skew, None))
        return terms, require_all

    def scored(self, pod):
        """The kernel scored the pod (its PreScore ran)."""
        self.last = (pod.key, self._filter_skipped(pod), False)

    def score(self, pod, ctx, feasible):
        """(raw, normalized) int64 arrays aligned with `feasible` rows, or None (Skip)."""
        constraints, require_all = self._score_constraints(pod, ctx)
        if not constraints:
            self.last = (pod.key, self._filter_skipped(pod), True)
            return None
        t = ctx.table
        labels = t.labels
        empty_value = t.label_value_id("")            # a missing label reads as "" in Go
        cols = [t.label_key_col(c.key) for c in constraints]
        fcols = {col: labels[feasible, col] for col in cols}
        ignored = np.zeros(len(feasible), bool)
        if require_all:
            for col in cols:
                ignored |= fcols[col] < 0
        alive = ctx.alive
        all_keys = None
        raw_f = np.zeros(len(feasible), np.float64)
        for c, col in zip(constraints, cols):
            counts = ctx.row_counts(pod.namespace, c.selector)
            has = fcols[col] >= 0
            if c.key == HOSTNAME:
                size = len(feasible) - int(ignored.sum())
                cnt = counts[feasible]
            else:
                fvals = np.where(has, fcols[col], empty_value)
                domains = np.unique(fvals[~ignored])
                size = len(domains)
                if all_keys is None:
                    all_keys = np.ones(labels.shape[0], bool)
                    for key_col in cols if require_all else ():
                        all_keys &= labels[:, key_col] >= 0
                vals = np.where(labels[:, col] >= 0, labels[:, col], empty_value)
                counted = alive & all_keys & ctx.policy_mask(pod, c)
                by_value = np.bincount(vals[counted], weights=counts[counted], minlength=len(t.label_values))
                in_domains = np.zeros(len(by_value), bool)
                in_domains[domains] = True
                by_value = np.where(in_domains, by_value, 0)
                cnt = by_value[fvals]
            weight = go_log(size + 2)
            raw_f += np.where(has, cnt.astype(np.float64) * weight + float(c.max_skew - 1), 0.0)
        raw = np.where(ignored, 0, _go_round(raw_f)).astype(np.int64)
        kept = raw[~ignored]
        lo = int(kept.min()) if len(kept) else 0
        hi = max(int(kept.max()), 0) if len(kept) else 0
        if hi == 0:
            norm = np.full(len(feasible), 100, np.int64)
        else:
            norm = (100 * (hi + lo - raw)) // hi
        norm[ignored] = 0
        self.last = (pod.key, self._filter_skipped(pod), False)
        return raw, norm

    def _filter_skipped(self, pod):
        return self.last is None or self.last[0] != pod.key or self.last[1]

    def _defaults(self, pod, ctx, action):
        """buildDefaultConstraints: the defaults for `action`, all with the selector of the
        pod's Services and controller; none when that selector is empty."""
        chosen = [d for d in self.defaults if d.action == action]
        if not chosen:
            return []
        selector = ctx.default_selector(pod)
        if not selector.requirements:
            return []
        return [Constraint(d.key, d.max_skew, selector, d.min_domains, d.honor_affinity, d.honor_taints)
                for d in chosen]


def _go_round(x):
    """math.Round: half away from zero, exactly (floor(x + 0.5) is off for 0.49999999999999994)."""
    a = np.abs(x)
    r = np.floor(a)
    r += (a - r) >= 0.5
    return np.copysign(r, x)


class SpreadContext:
    """What PodTopologySpread reads of the cluster: node table, counters, Services and
    controllers (for the system default constraints' selector)."""

    def __init__(self, table, counters, objects):
        self.table, self.counters, self.objects = table, counters, objects
        self._alive_key, self._alive = None, None
        self._masks = {}
        self._domains = {}
        self._all_have = {}
        self._log = None

    def begin(self, pod):
        self._masks = {}
        t = self.table
        key = (t.layout, t.node_version)
        if key != self._alive_key:
            alive = np.zeros(t.labels.shape[0], bool)
            alive[list(t.row_of.values())] = True
            self._alive_key, self._alive = key, alive

    @property
    def alive(self):
        return self._alive

    def row_counts(self, namespace, selector):
        """Matching pods per node row (the counters grow with the table's rows)."""
        return self.counters.row_counts(namespace, selector)

    def all_have(self, cols) -> bool:
        """Every node has every one of these label columns (cached until the nodes change)."""
        key = (self.table.node_version, tuple(cols))
        if key not in self._all_have:
            if len(self._all_have) > 64:
                self._all_have.clear()
            self._all_have[key] = bool((self.table.labels[self._alive][:, list(cols)] >= 0).all())
        return self._all_have[key]

    def log_table(self) -> np.ndarray:
        """go_log(size + 2) for every size up to the node table's capacity."""
        n = self.table.labels.shape[0] + 1
        if self._log is None or len(self._log) < n:
            self._log = np.asarray([go_log(i + 2) for i in range(n)], np.float64)
        return self._log

    def policy_restricts(self, pod, c) -> bool:
        """Whether an inclusion policy can leave out nodes that have the topology key."""
        return (c.honor_affinity and (bool(pod.node_selector) or pod.required_terms is not None)) \
            or c.honor_taints

    def domain_values(self, col):
        """Label value ids of `col` on the live nodes (the topology domains), cached until the
        nodes change."""
        key = (self.table.node_version, col)
        cached = self._domains.get(key)
        if cached is None:
            vals = self.table.labels[self._alive, col]
            cached = np.unique(vals[vals >= 0])
            if len(self._domains) > 64:
                self._domains.clear()
            self._domains[key] = cached
        return cached

    def policy_mask(self, pod, c):
        from .node_affinity import required_mask
        from .taint_toleration import tolerated_mask
        mask = np.ones(self.table.labels.shape[0], bool)
        if c.honor_affinity:
            if "affinity" not in self._masks:
                self._masks["affinity"] = required_mask(pod, self.table)
            mask &= self._masks["affinity"]
        if c.honor_taints:
            if "taints" not in self._masks:
                self._masks["taints"] = tolerated_mask(pod, self.table)
            mask &= self._masks["taints"]
        return mask

    def default_selector(self, pod):
        """helper.DefaultSelector: the pod's Services' selectors merged, plus its controlling
        ReplicationController's (merged) or ReplicaSet's / StatefulSet's (requirements added)."""
        label_set = {}
        for svc in self.objects.get("Service", ()):
            meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
            selector = spec.get("selector")
            if (meta.get("namespace") or "default") != pod.namespace or selector is None:
                continue
            if all(pod.labels.get(k) == v for k, v in selector.items()):
                label_set.update(selector)
        reqs = tuple((k, "In", frozenset([v])) for k, v in sorted(label_set.items()))
        owner = next((o for o in (pod.raw.get("metadata") or {}).get("ownerReferences") or ()
                      if isinstance(o, dict) and o.get("controller")), None)
        if owner is not None:
            kind = (owner.get("apiVersion"), owner.get("kind"))
            obj = self._find(kind, pod.namespace, owner.get("name"))
            if obj is not None and kind == ("v1", "ReplicationController"):
                label_set.update((obj.get("spec") or {}).get("selector") or {})
                reqs = tuple((k, "In", frozenset([v])) for k, v in sorted(label_set.items()))
            elif obj is not None:
                from ..objects.fields import FieldReader
                from ..objects.pod_affinity import parse_label_selector
                sel = parse_label_selector(FieldReader(f"{kind[1]} {owner.get('name')}"),
                                           (obj.get("spec") or {}).get("selector"), "spec.selector")
                if sel is not None:
                    reqs = reqs + sel.requirements
        return LabelSelector(reqs)

    def _find(self, kind, namespace, name):
        kinds = {("v1", "ReplicationController"): "ReplicationController",
                 ("apps/v1", "ReplicaSet"): "ReplicaSet", ("apps/v1", "StatefulSet"): "StatefulSet"}
        for obj in self.objects.get(kinds.get(kind, ""), ()):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
                return obj
        return None
