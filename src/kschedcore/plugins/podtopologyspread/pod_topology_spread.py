"""PodTopologySpread (plugins/podtopologyspread): DoNotSchedule filter, ScheduleAnyway score.

Semantics §3.9 and §4.7. Matching pods per node row come from the cache's counters (kept
current as pods are placed and removed); a cycle sums them per topology domain over the
nodes the constraint counts (keys present, inclusion policies) with NumPy, and hands the
kernel a per-node status or, in the usual case, constraints on domain counts. The kernel
scores the usual cases itself; the others are scored after the pass, over the feasible nodes
only. Pods without constraints of their own get the default constraints (args
`defaultingType` System, or List with `defaultConstraints`), each with the selector of the
pod's Services and controller.
"""
import numpy as np

from ..._native import F_POD_TOPOLOGY_SPREAD, MAX_SPREAD_SCORE_TERMS, S_POD_TOPOLOGY_SPREAD
from ...framework.kernel_plugin import KernelPlugin
from ...util.gomath import go_log
from .constraints import (HOSTNAME, MISSING_LABEL, REASON_MISSING, REASON_SKEW, SKEW, Constraint,
                          pod_constraints, validated_defaults)
from .context import SpreadContext
from .events import spread_events
from .plan import FilterPlan, SpreadPlans, domain_plan


class PodTopologySpread(KernelPlugin):
    name = "PodTopologySpread"
    static_reasons = True
    cross_pod = True
    filter_id = F_POD_TOPOLOGY_SPREAD
    score_id = S_POD_TOPOLOGY_SPREAD
    default_weight = 2
    scored_in_kernel = False
    dynamic = True
    cluster_dependent = True
    filter_armed = False      # the kernel holds PreFilter state from an earlier cycle
    score_armed = False       # the kernel holds PreScore terms from an earlier cycle

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.defaults, self.system_defaulted = validated_defaults(self.args)
        self.filter_defaults = any(d.action == "DoNotSchedule" for d in self.defaults)
        cache = handle.cache if handle is not None else None
        # None only in a plugin made without a handle (its args checked), which runs no cycle
        self.ctx: SpreadContext = SpreadContext(cache.table, cache.counters, cache.objects) if cache is not None else None  # type: ignore[assignment]
        self.plans = SpreadPlans()

    def prefilter_runs(self, pod, objects) -> bool:
        """Whether PreFilter can find DoNotSchedule constraints: the pod's own, or defaults
        (their selector needs a Service or controller)."""
        return bool(pod.topology_spread) or (self.filter_defaults and bool(objects))

    @property
    def armed(self) -> bool:  # type: ignore[override]  # derived from the filter and score states
        return self.filter_armed or self.score_armed

    def applies(self, pod, cache) -> bool:
        """Its PreFilter or PreScore may find constraints: the pod's own, or defaults (their
        selector needs a Service or controller)."""
        return bool(pod.topology_spread or cache.objects)

    def sees_other_pods(self, pod, cache) -> bool:
        return self.prefilter_runs(pod, cache.objects)

    def reasons(self, detail, table):
        return [REASON_MISSING if detail == MISSING_LABEL else REASON_SKEW]

    def events_to_register(self):
        return spread_events()

    # ---- the cycle's hooks ---------------------------------------------------------------------
    def pre_filter(self, cycle):
        """PreFilter: the kernel's per-row status or domain-count terms (both None: Skip)."""
        kernel, pod = cycle.framework.kernel, cycle.pod
        if not self.prefilter_runs(pod, cycle.cache.objects):
            if self.filter_armed:            # only the kernel's old state to clear
                kernel.set_topology_spread(None, None)
                self.filter_armed = False
            return
        self.ctx.begin(pod)
        status, terms = self.prefilter(pod, self.ctx)
        cycle.framework.rebind()             # a new key or counter may have grown the table
        kernel.set_topology_spread(status, terms)
        self.filter_armed = status is not None or terms is not None
        if self.filter_armed:
            cycle.acted(self.name, True, False)

    def pre_score(self, cycle) -> bool:
        """PreScore, before the pass: the kernel scores the usual cases itself; True when the
        NumPy path must score after the pass (or finds that PreScore skips)."""
        pod, kernel, t = cycle.pod, cycle.framework.kernel, cycle.cache.table
        wants = self.applies(pod, cycle.cache)
        terms = None
        if wants:
            self.ctx.begin(pod)
            terms = self.score_terms(pod, self.ctx)
        if terms is None:
            if self.score_armed:
                kernel.set_spread_score(None)
                self.score_armed = False
            # no ScheduleAnyway constraint of its own: PreScore skips, nothing to score after
            return wants and not (pod.topology_spread and self._own_plan(pod, self.ctx)[2])
        empty = t.label_value_id("")
        cycle.framework.rebind()         # a new counter or label value may have grown the table
        kernel.set_spread_score(terms[0], terms[1], empty, len(t.label_values), self.ctx.log_table())
        self.score_armed = True
        return False

    def scored(self, cycle):
        """The kernel scored the pod (its PreScore ran)."""
        cycle.acted(self.name, False, True)

    def score_after_pass(self, cycle, nf) -> bool:
        """PreScore/Score/NormalizeScore over the kernel's feasible nodes with NumPy, added to
        the totals; True when it scored (selectHost must run again)."""
        k, s = cycle.framework.kernel, self.score_id    # the kernel leaves score_ran[s] 0
        self.ctx.begin(cycle.pod)
        feasible = np.asarray(k.feasible)[:nf]
        result = self.score(cycle.pod, self.ctx, feasible)
        k.score_ran[s] = result is not None
        if result is None:
            return False
        cycle.acted(self.name, False, True)
        raw, norm = result
        np.asarray(k.raw_scores)[s, :nf] = raw
        np.asarray(k.scores)[s, :nf] = norm
        np.asarray(k.totals)[:nf] += cycle.framework.weights[s] * norm
        return True

    # ---- PreFilter + Filter ------------------------------------------------------------------
    def prefilter(self, pod, ctx):
        """(per-row status, None) or (None, domain-count terms) for the kernel; (None, None):
        Skip, no DoNotSchedule constraint."""
        if pod.topology_spread:
            plan = self._own_plan(pod, ctx)[0]
        else:
            plan = self._filter_plan(pod, ctx, self._defaults(pod, ctx, "DoNotSchedule"))
        if plan is None:
            return None, None
        if plan.cols is not None:
            return None, plan.terms(ctx.table)
        return self._status(pod, ctx, plan.constraints), None

    def copies_limits(self, pod):
        """For a run of copies (_native/cross_copies), after this cycle's PreFilter: (True, the
        plan of its DoNotSchedule limits or None when it does not filter), or (False, None)
        when its PreFilter is a per-row status, which only a cycle of its own can make."""
        if not self.filter_armed:
            return True, None
        plan = self._own_plan(pod, self.ctx)[0] if pod.topology_spread else None
        if plan is None or plan.cols is None:
            return False, None
        return True, (plan.base, plan.values, plan.start)

    def _own_plan(self, pod, ctx):
        """_make_own_plan's, for a pod with constraints of its own, remembered."""
        return self.plans.get(pod, ctx, self._make_own_plan)

    def _make_own_plan(self, pod, ctx):
        """(filter plan, the kernel's score terms, whether PreScore skips)."""
        constraints, require_all = self._score_constraints(pod, ctx)
        return (self._filter_plan(pod, ctx, pod_constraints(pod, "DoNotSchedule")),
                self._score_terms(pod, ctx, constraints, require_all), not constraints)

    def _filter_plan(self, pod, ctx, constraints):
        if not constraints:
            return None
        if len({c.key for c in constraints}) == 1 and not any(ctx.policy_restricts(pod, c) for c in constraints):
            return domain_plan(pod, ctx, constraints)
        return FilterPlan(constraints)

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
        them; None when the NumPy path must score (or PreScore skips)."""
        if pod.topology_spread:
            return self._own_plan(pod, ctx)[1]
        return self._score_terms(pod, ctx, *self._score_constraints(pod, ctx))

    def _score_terms(self, pod, ctx, constraints, require_all):
        """The kernel scores the usual cases: hostname constraints (counted per node) and
        constraints whose counted nodes are exactly the nodes with the key, so the cache's
        domain counters hold the counts."""
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

    def score(self, pod, ctx, feasible):
        """(raw, normalized) int64 arrays aligned with `feasible` rows, or None (Skip)."""
        constraints, require_all = self._score_constraints(pod, ctx)
        if not constraints:
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
        return raw, norm

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
