"""What PodTopologySpread's PreFilter and PreScore make of a pod's own constraints, remembered
per template: everything but the domain minimum, which changes with every placed pod.

A plan is made of the constraints (the pod's spec, labels and namespace), which counters exist
(PodCounters.registered: a registered, rebuilt or grown counter is a new plan), the nodes' label
values (NodeTable.node_version) and the table's layout; the kernel reads the counts themselves.
"""
from typing import Any

import numpy as np

from ..._native.spread import domain_limits
from .context import node_restricted

#: remembered plans (SpreadPlans), cleared when full
PLANS_ENTRIES = 4096


class FilterPlan:
    """PreFilter's result less the cycle's counts: `constraints` for a per-row status, or the
    domain-count terms (label columns, domain rows, maxSkew - selfMatch, each constraint's
    domains as values[start[i]:start[i + 1]], empty where minDomains is not reached)."""
    __slots__ = ("constraints", "cols", "doms", "base", "values", "start")
    cols: Any       # the arrays above (None where the plan holds constraints)
    doms: Any
    base: Any
    values: Any
    start: Any

    def __init__(self, constraints, terms=None):
        self.constraints = constraints
        self.cols = self.doms = self.base = self.values = self.start = None
        if terms is not None:
            self.cols, self.doms, self.base, self.values, self.start = terms

    def terms(self, table):
        """(label column, domain row, count limit) arrays for the kernel, this cycle."""
        return self.cols, self.doms, domain_limits(table.domains, self.doms, self.base, self.values, self.start)


def domain_plan(pod, ctx, constraints) -> FilterPlan:
    """The usual case -- one topology key, no inclusion policy narrowing the nodes: every node
    with the key counts, so the cache's per-domain counters are the counts."""
    cols: list = []
    doms: list = []
    base: list = []
    values: list = []
    start = [0]
    for c in constraints:
        col, dom = ctx.counters.incoming_row(("spread", (pod.namespace, c.selector)), c.key)
        domains = ctx.domain_values(col)
        self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
        if len(domains) >= c.min_domains:
            values.extend(int(v) for v in domains)
        cols.append(col)
        doms.append(dom)
        base.append(c.max_skew - self_match)
        start.append(len(values))
    return FilterPlan(constraints, (np.asarray(cols, np.int32), np.asarray(doms, np.int32),
                                    np.asarray(base, np.int64), np.asarray(values, np.int32),
                                    np.asarray(start, np.int32)))


class SpreadPlans:
    """Plans by pod template, for pods with constraints of their own (the defaults' selector
    comes from Services and controllers: those pods make theirs each cycle)."""

    def __init__(self):
        self._plans = {}

    @staticmethod
    def _key(pod, ctx):
        t = ctx.table
        return (id(pod.topology_spread), pod.namespace, tuple(pod.labels.items()), node_restricted(pod),
                ctx.counters.registered, t.node_version, t.layout)

    def get(self, pod, ctx, make):
        """(filter plan or None, score terms or None) for `pod`; make(pod, ctx) makes them."""
        hit = self._plans.get(self._key(pod, ctx))
        if hit is not None and hit[0] is pod.topology_spread:
            return hit[1]
        plan = make(pod, ctx)
        if len(self._plans) >= PLANS_ENTRIES:
            self._plans.clear()
        # keyed after making: registering a counter moves the key (spec kept alive: its id)
        self._plans[self._key(pod, ctx)] = (pod.topology_spread, plan)
        return plan
