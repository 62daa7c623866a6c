"""InterPodAffinity (plugins/interpodaffinity): required (anti-)affinity filter, preferred score.

Counts of matching pods per topology domain live in the cache (PodCounters), one counter per
term (or term group) ever asked about, updated when a pod is placed on or removed from a node:
never a rescan of all pods per cycle. A cycle picks the counters that apply to the pod
(PreFilter, PreScore) and the kernel looks each node's domain up in them (semantics §3.8, §4.6).
"""
import numpy as np

from ..._native import F_INTER_POD_AFFINITY, S_INTER_POD_AFFINITY
from ...backend.cache.pod_counters import PREFERRED_AFFINITY, REQUIRED_AFFINITY, REQUIRED_ANTI, PodCounters
from ...errors import ValidationError
from ...framework.kernel_plugin import KernelPlugin
from .events import interpod_events

REASONS = {1: "node(s) didn't match pod affinity rules",
           2: "node(s) didn't match pod anti-affinity rules",
           3: "node(s) didn't satisfy existing pods anti-affinity rules"}
AFFINITY_FAIL, ANTI_FAIL, EXISTING_ANTI_FAIL = 1, 2, 3
#: cycle terms remembered (InterPodAffinity._remembered_terms), cleared when full
TERMS_MEMO_ENTRIES = 4096


class InterPodAffinity(KernelPlugin):
    name = "InterPodAffinity"
    static_reasons = True
    cross_pod = True
    filter_id = F_INTER_POD_AFFINITY
    score_id = S_INTER_POD_AFFINITY
    default_weight = 2
    dynamic = True
    cluster_dependent = True

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        weight = self.args.get("hardPodAffinityWeight", 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
            raise ValidationError("InterPodAffinityArgs", "hardPodAffinityWeight",
                                  f"Invalid value: {weight!r}: not in valid range [0, 100]")
        ignore = self.args.get("ignorePreferredTermsOfExistingPods", False)
        if not isinstance(ignore, bool):
            raise ValidationError("InterPodAffinityArgs", "ignorePreferredTermsOfExistingPods",
                                  f"expected a boolean, got {ignore!r}")
        self.hard_weight, self.ignore_existing_preferred = weight, ignore
        self._memo = {}

    def reasons(self, detail, table):
        return [REASONS[detail]]

    def events_to_register(self):
        return interpod_events()

    # ---- one cycle ---------------------------------------------------------------------------
    def applies(self, pod, cache) -> bool:
        """PreFilter and PreScore have work: the pod has affinity terms, or placed pods do."""
        return not pod.pod_affinity.empty or bool(cache.counters.existing)

    sees_other_pods = applies

    def pre_filter(self, cycle):
        """PreFilter and PreScore at once, from the cache's counters, into the kernel."""
        kernel = cycle.framework.kernel
        if not self.applies(cycle.pod, cycle.cache):        # only the kernel's old terms to clear
            kernel.set_inter_pod_affinity(None, False, None)
            self.armed = False
            return
        filter_terms, self_affine, score_terms = self._remembered_terms(cycle.pod, cycle.cache)
        kernel.set_inter_pod_affinity(filter_terms, self_affine, score_terms)
        self.armed = True
        cycle.acted(self.name, filter_terms is not None, score_terms is not None)
        cycle.framework.rebind()      # registering a counter may have grown the domains array

    def _remembered_terms(self, pod, cache):
        """cycle_terms, remembered per (pod affinity, namespace, labels) while the counters'
        version and the Namespaces stand: the terms are made of which counters exist, which
        of them count any pod, and the Namespaces' labels -- the counts the kernel reads."""
        counters = cache.counters
        key = (id(pod.pod_affinity), pod.namespace, tuple(pod.labels.items()), counters.version,
               cache.namespace_version)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is pod.pod_affinity:
            return hit[1]
        terms = self.cycle_terms(pod, counters, cache.namespaces)
        if len(self._memo) >= TERMS_MEMO_ENTRIES:
            self._memo.clear()
        # under the version after: making the terms may have registered counters (the
        # affinity object kept alive, so that its id is not reused)
        self._memo[(*key[:3], counters.version, cache.namespace_version)] = (pod.pod_affinity, terms)
        return terms

    def cycle_terms(self, pod, counters: PodCounters, namespaces: dict):
        """PreFilter and PreScore from the counters: (filter terms or None if PreFilter skips,
        self-affine flag, score terms or None if PreScore skips), as the kernel takes them."""
        ns_labels = namespaces.get(pod.namespace)
        filter_terms, self_affine = self._prefilter(pod, counters, namespaces, ns_labels)
        score_terms = self._prescore(pod, counters, namespaces, ns_labels)
        return filter_terms, self_affine, score_terms

    def _prefilter(self, pod, counters, namespaces, ns_labels):
        a = pod.pod_affinity
        req_aff = tuple(x.resolved(namespaces) for x in a.required_affinity)
        req_anti = tuple(x.resolved(namespaces) for x in a.required_anti)
        terms, any_count = [], False
        for term in req_aff:       # counted: pods matching *all* the affinity terms
            col, dom = counters.incoming_row(("all", req_aff), term.topology_key)
            terms.append((AFFINITY_FAIL, col, dom))
            any_count = any_count or counters.totals[dom] > 0
        for term in req_anti:
            col, dom = counters.incoming_row(("one", term), term.topology_key)
            terms.append((ANTI_FAIL, col, dom))
        existing = [(EXISTING_ANTI_FAIL, col, dom) for (kind, term, _), (col, dom) in counters.existing.items()
                    if kind == REQUIRED_ANTI and counters.totals[dom] > 0
                    and term.matches(pod.labels, pod.namespace, ns_labels)]
        if not existing and not req_aff and not req_anti:
            return None, False                             # PreFilter: Skip
        terms += existing
        self_affine = bool(req_aff) and not any_count and \
            all(x.matches(pod.labels, pod.namespace, None) for x in req_aff)
        return _arrays(terms, np.int8, np.int32, np.int32), self_affine

    def _prescore(self, pod, counters, namespaces, ns_labels):
        a = pod.pod_affinity
        if self.ignore_existing_preferred and not a.has_preferred:
            return None
        contributions = []
        if a.has_preferred:        # every placed pod against the pod's preferred terms
            for sign, preferred in ((1, a.preferred_affinity), (-1, a.preferred_anti)):
                for w, term in preferred:
                    term = term.resolved(namespaces)
                    col, dom = counters.incoming_row(("one", term), term.topology_key)
                    if counters.totals[dom] > 0:
                        contributions.append((col, dom, sign * w))
        for (kind, term, w), (col, dom) in counters.existing.items():   # placed pods' terms
            if kind == REQUIRED_ANTI or counters.totals[dom] <= 0:
                continue
            if kind == REQUIRED_AFFINITY:
                if self.hard_weight <= 0:
                    continue
                weight = self.hard_weight
            elif self.ignore_existing_preferred:
                continue
            else:
                weight = w if kind == PREFERRED_AFFINITY else -w
            if term.matches(pod.labels, pod.namespace, ns_labels):
                contributions.append((col, dom, weight))
        if not contributions:
            return None                                    # PreScore: Skip (nothing recorded)
        return _arrays(contributions, np.int32, np.int32, np.int64)


def _arrays(rows, *dtypes):
    return tuple(np.asarray([r[i] for r in rows], dt) for i, dt in enumerate(dtypes))
