"""InterPodAffinity (plugins/interpodaffinity): required (anti-)affinity filter, preferred score.

Counts of matching pods live in the cache as per-node-row counters, one per term (or term
group) ever asked about, updated when a pod is placed on or removed from a node -- never a
rescan of all pods per cycle. A cycle turns the row counters into per-topology-domain counts
with one NumPy bincount per term over the node table's label column, and hands the kernel a
per-node status and raw score (semantics §3.8, §4.6).
"""
import numpy as np

from .._kernels import F_INTER_POD_AFFINITY, S_INTER_POD_AFFINITY
from .base import Plugin

REASONS = {1: "node(s) didn't match pod affinity rules",
           2: "node(s) didn't match pod anti-affinity rules",
           3: "node(s) didn't satisfy existing pods anti-affinity rules"}
AFFINITY_FAIL, ANTI_FAIL, EXISTING_ANTI_FAIL = 1, 2, 3
CODES = {1: 3, 2: 2, 3: 2}       # detail -> status code (UU for affinity, U otherwise)
# kinds of an existing pod's terms kept in the cache
REQUIRED_ANTI, REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI = range(4)


class PodCounters:
    """Per-node-row counts of placed pods, per term signature; kept current incrementally."""

    def __init__(self, table):
        self.table = table
        self.placed = {}          # pod key -> (pod, row)
        self.incoming = {}        # signature -> int64[rows]: pods matching it, per row
        self.existing = {}        # (kind, term, weight) -> int64[rows]: pods having it, per row

    def _rows(self, counts):
        cap = self.table.alloc.shape[0]
        if len(counts) < cap:
            counts = np.concatenate([counts, np.zeros(cap - len(counts), np.int64)])
        return counts

    def place(self, pod, row, sign):
        if sign > 0:
            self.placed[pod.key] = (pod, row)
        else:
            self.placed.pop(pod.key, None)
        for sig, counts in self.incoming.items():
            if _matches(sig, pod):
                counts = self.incoming[sig] = self._rows(counts)
                counts[row] += sign
        for key in _existing_terms(pod):
            counts = self.existing.get(key)
            counts = self.existing[key] = self._rows(counts if counts is not None else np.zeros(0, np.int64))
            counts[row] += sign

    def incoming_counts(self, sig):
        """Row counts of placed pods matching `sig`; built once by a scan, then incremental."""
        counts = self.incoming.get(sig)
        if counts is None:
            counts = np.zeros(self.table.alloc.shape[0], np.int64)
            for pod, row in self.placed.values():
                if _matches(sig, pod):
                    counts[row] += 1
            self.incoming[sig] = counts
        return self._rows(counts)


def _matches(sig, pod) -> bool:
    """("all", terms): the pod matches every term; ("one", term): it matches that term."""
    kind, terms = sig
    if kind == "one":
        return terms.matches(pod.labels, pod.namespace, None)
    return bool(terms) and all(t.matches(pod.labels, pod.namespace, None) for t in terms)


def _existing_terms(pod):
    a = pod.pod_affinity
    out = [(REQUIRED_ANTI, t, 0) for t in a.required_anti]
    out += [(REQUIRED_AFFINITY, t, 0) for t in a.required_affinity]
    out += [(PREFERRED_AFFINITY, t, w) for w, t in a.preferred_affinity]
    out += [(PREFERRED_ANTI, t, w) for w, t in a.preferred_anti]
    return out


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
    filter_id = F_INTER_POD_AFFINITY
    score_id = S_INTER_POD_AFFINITY
    default_weight = 2

    def __init__(self, args=None):
        super().__init__(args)
        self.hard_weight = int(self.args.get("hardPodAffinityWeight", 1))
        self.ignore_existing_preferred = bool(self.args.get("ignorePreferredTermsOfExistingPods", False))
        self.last = None      # (pod key, PreFilter skipped, PreScore skipped) of the last cycle

    def prefilter_skips(self, pod):
        return self.last is None or self.last[0] != pod.key or self.last[1]

    def prescore_skips(self, pod):
        return self.last is None or self.last[0] != pod.key or self.last[2]

    def reasons(self, detail, table):
        return [REASONS[detail]]

    # ---- one cycle ---------------------------------------------------------------------------
    def cycle(self, pod, counters: PodCounters, namespaces: dict):
        """(per-row status detail int8 or None if PreFilter skips, per-row raw score or None if
        PreScore skips)."""
        t = counters.table
        ns_labels = namespaces.get(pod.namespace)
        a = pod.pod_affinity
        req_aff = tuple(x.resolved(namespaces) for x in a.required_affinity)
        req_anti = tuple(x.resolved(namespaces) for x in a.required_anti)
        labels = t.labels
        status = self._filter(pod, counters, ns_labels, req_aff, req_anti, labels, t)
        raw = self._score(pod, counters, namespaces, ns_labels, labels, t)
        self.last = (pod.key, status is None, raw is None)
        return status, raw

    def _domain(self, t, counts, key, labels, weight=1):
        """Counts per value id of label `key` over the rows (None: no node has the key)."""
        col = t.label_keys.get(key)
        if col < 0:
            return None, -1
        vals = labels[:len(counts), col]
        ok = (vals >= 0) & (counts != 0)
        return np.bincount(vals[ok], weights=counts[ok] * weight, minlength=len(t.label_values)), col

    def _filter(self, pod, counters, ns_labels, req_aff, req_anti, labels, t):
        # existing pods' required anti-affinity terms that match the incoming pod
        forbidden = []
        for (kind, term, _), counts in counters.existing.items():
            if kind == REQUIRED_ANTI and counts.any() and term.matches(pod.labels, pod.namespace, ns_labels):
                dom, col = self._domain(t, counts, term.topology_key, labels)
                if dom is not None and dom.any():
                    forbidden.append((col, dom))
        if not forbidden and not req_aff and not req_anti:
            return None                                  # PreFilter: Skip
        n = labels.shape[0]
        status = np.zeros(n, np.int8)
        if req_aff:
            counts = counters.incoming_counts(("all", req_aff))
            doms, any_count = {}, False
            for term in req_aff:
                dom, col = self._domain(t, counts, term.topology_key, labels)
                if dom is not None:
                    doms[col] = doms.get(col, 0) + dom
                    any_count = any_count or bool(dom.any())
            self_affine = not any_count and all(x.matches(pod.labels, pod.namespace, None) for x in req_aff)
            ok = np.ones(n, bool)
            for term in req_aff:
                col = t.label_keys.get(term.topology_key)
                if col < 0:
                    ok[:] = False
                    break
                vals = labels[:, col]
                has = vals >= 0
                dom = doms.get(col)
                exists = np.zeros(n, bool) if dom is None else (has & (dom[np.where(has, vals, 0)] > 0))
                ok &= has & (exists | self_affine)
            status[~ok] = AFFINITY_FAIL
        if req_anti:
            counts_by_col = {}
            for term in req_anti:
                dom, col = self._domain(t, counters.incoming_counts(("one", term)), term.topology_key, labels)
                if dom is not None:
                    counts_by_col[col] = counts_by_col.get(col, 0) + dom
            for term in req_anti:
                col = t.label_keys.get(term.topology_key)
                if col < 0 or col not in counts_by_col:
                    continue
                vals = labels[:, col]
                has = vals >= 0
                bad = has & (counts_by_col[col][np.where(has, vals, 0)] > 0)
                status[(status == 0) & bad] = ANTI_FAIL
        for col, dom in forbidden:
            vals = labels[:, col]
            has = vals >= 0
            bad = has & (dom[np.where(has, vals, 0)] > 0)
            status[(status == 0) & bad] = EXISTING_ANTI_FAIL
        return status

    def _score(self, pod, counters, namespaces, ns_labels, labels, t):
        a = pod.pod_affinity
        if self.ignore_existing_preferred and not a.has_preferred:
            return None
        doms, recorded = {}, False

        def add(counts, key, weight):
            nonlocal recorded
            dom, col = self._domain(t, counts, key, labels, weight)
            if dom is None:
                return
            has = labels[:len(counts), col] >= 0
            if (counts[has] != 0).any():
                recorded = True
                doms[col] = doms.get(col, 0) + dom

        if a.has_preferred:
            for w, term in a.preferred_affinity:
                term = term.resolved(namespaces)
                add(counters.incoming_counts(("one", term)), term.topology_key, w)
            for w, term in a.preferred_anti:
                term = term.resolved(namespaces)
                add(counters.incoming_counts(("one", term)), term.topology_key, -w)
        for (kind, term, w), counts in counters.existing.items():
            if kind == REQUIRED_ANTI or not counts.any():
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
                add(counts, term.topology_key, weight)
        if not recorded:
            return None                                  # PreScore: Skip
        raw = np.zeros(labels.shape[0], np.int64)
        for col, dom in doms.items():
            vals = labels[:, col]
            has = vals >= 0
            raw += np.where(has, np.asarray(dom, np.int64)[np.where(has, vals, 0)], 0)
        return raw
