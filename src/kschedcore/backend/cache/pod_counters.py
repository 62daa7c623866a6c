"""Matching pods per topology domain and per node row, kept current as pods are placed and
removed (the cache's counters: InterPodAffinity and PodTopologySpread read them, never a rescan
of all pods per cycle; semantics §3.8, §3.9)."""
import numpy as np

# kinds of an existing pod's terms kept in the cache
REQUIRED_ANTI, REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI = range(4)


class PodCounters:
    """Matching pods per topology domain, kept current as pods are placed and removed.

    A counter is a row of the node table's `domains` array: for a (term signature, topology key)
    it holds, per label value id of that key, the number of placed pods matching the signature
    on nodes with that value. Counters are registered on first use (one scan of the placed
    pods) and updated incrementally after that.
    """

    def __init__(self, table, placed):
        self.table = table
        self.placed = placed      # () -> iterable of (pod, row): the cache's placed pods
        self.incoming = {}        # signature -> {label column: domain row}
        self.existing = {}        # (kind, term, weight) -> (label column, domain row)
        self.rows = {}            # (namespace, selector) -> int64[node rows]: PodTopologySpread
        self.totals = []          # domain row -> pods counted in it
        self.n_rows = 0

    # ---- the domains array ---------------------------------------------------------------------
    def _fit(self, rows=0):
        t = self.table
        shape = t.domains.shape
        need = (max(rows, shape[0]), max(len(t.label_values), shape[1]))
        if need != shape:
            grown = np.zeros((max(need[0], 2 * shape[0] if rows > shape[0] else shape[0]),
                              max(need[1], 2 * shape[1] if need[1] > shape[1] else shape[1])), np.int64)
            grown[:shape[0], :shape[1]] = t.domains
            t.domains = grown
            t.layout += 1

    def _new_row(self) -> int:
        self._fit(self.n_rows + 1)
        self.table.domains[self.n_rows] = 0
        self.totals.append(0)
        self.n_rows += 1
        return self.n_rows - 1

    def _count(self, dom, row, col, sign):
        v = self.table.labels[row, col]
        if v >= 0:
            if v >= self.table.domains.shape[1]:
                self._fit()
            self.table.domains[dom, v] += sign
            self.totals[dom] += sign

    # ---- pods ----------------------------------------------------------------------------------
    def counts(self, pod) -> bool:
        """Some counter could count this pod (else place() has nothing to do)."""
        return bool(self.rows or self.incoming) or not pod.pod_affinity.empty

    def place(self, pod, row, sign):
        for (ns, selector), counts in self.rows.items():
            if _spread_counts(ns, selector, pod):
                if len(counts) <= row:
                    counts = self.rows[(ns, selector)] = self._grow_rows(counts)
                counts[row] += sign
        if not self.incoming and pod.pod_affinity.empty:
            return
        for sig, cols in self.incoming.items():
            if _matches(sig, pod):
                for col, dom in cols.items():
                    self._count(dom, row, col, sign)
        for key in () if pod.pod_affinity.empty else _existing_terms(pod):
            entry = self.existing.get(key)
            if entry is None:
                entry = self.existing[key] = (self.table.label_key_col(key[1].topology_key), self._new_row())
            self._count(entry[1], row, entry[0], sign)

    def incoming_row(self, sig, key: str):
        """(label column, domain row) counting placed pods that match `sig` by `key`'s values."""
        col = self.table.label_key_col(key)
        cols = self.incoming.setdefault(sig, {})
        dom = cols.get(col)
        if dom is None:
            dom = cols[col] = self._new_row()
            for pod, row in self.placed():
                if _matches(sig, pod):
                    self._count(dom, row, col, 1)
        return col, dom

    def _grow_rows(self, counts):
        grown = np.zeros(self.table.alloc.shape[0], np.int64)
        grown[:len(counts)] = counts
        return grown

    def row_counts(self, namespace, selector):
        """Per node row: placed pods of `namespace`, not terminating, matching `selector`
        (countPodsMatchSelector; an empty selector counts none). Registered on first use."""
        key = (namespace, selector)
        counts = self.rows.get(key)
        if counts is None:
            counts = np.zeros(self.table.alloc.shape[0], np.int64)
            for pod, row in self.placed():
                if _spread_counts(namespace, selector, pod):
                    counts[row] += 1
            self.rows[key] = counts
        elif len(counts) < self.table.alloc.shape[0]:
            counts = self.rows[key] = self._grow_rows(counts)
        return counts

    def relabelled(self):
        """A node's labels changed: every count keyed by label values is rebuilt."""
        placed = list(self.placed())
        self.incoming, self.existing, self.totals, self.n_rows = {}, {}, [], 0
        self.rows = {}
        for pod, row in placed:
            self.place(pod, row, 1)


def _spread_counts(namespace, selector, pod) -> bool:
    return (pod.namespace == namespace and not pod.terminating and selector is not None
            and bool(selector.requirements) and selector.matches(pod.labels))


def _matches(sig, pod) -> bool:
    """("all", terms): the pod matches every term; ("one", term): it matches that term."""
    kind, terms = sig
    if kind == "spread":
        return _spread_counts(terms[0], terms[1], pod)
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
