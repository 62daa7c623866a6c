"""Matching pods per topology domain and per node row, kept current as pods are placed and
removed (the cache's counters: InterPodAffinity and PodTopologySpread read them, never a rescan
of all pods per cycle; semantics §3.8, §3.9)."""
import itertools

import numpy as np

#: the counters' versions: one sequence for every PodCounters, so that a number never stands
#: for two states (a fork counts back; a rebuilt set of counters starts again)
_VERSIONS = itertools.count(1)

#: remembered plans of what counts a pod (PodCounters._plan), cleared when full
PLANS_ENTRIES = 4096

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
        self._plans = {}          # Pod match identity -> what counts the pod (_plan)
        #: `version` changes with what a cycle's terms are made of: a counter registered or
        #: rebuilt, a domain row's total becoming or ceasing to be 0 (InterPodAffinity
        #: remembers its cycle terms by it; the kernel reads the counts themselves);
        #: `registered` with the counters alone (registered, rebuilt or grown: _plan)
        self.version = self.registered = next(_VERSIONS)

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
        self.version = self.registered = next(_VERSIONS)
        return self.n_rows - 1

    def _count(self, dom, row, col, sign):
        v = self.table.labels[row, col]
        if v >= 0:
            if v >= self.table.domains.shape[1]:
                self._fit()
            self.table.domains[dom, v] += sign
            total = self.totals[dom] = self.totals[dom] + sign
            if total == 0 or total == sign:
                self.version = next(_VERSIONS)

    # ---- pods ----------------------------------------------------------------------------------
    def counts(self, pod) -> bool:
        """Some counter could count this pod (else place() has nothing to do)."""
        return bool(self.rows or self.incoming) or not pod.pod_affinity.empty

    def count_any(self, pods) -> bool:
        """counts(pod) for some of the pods (asked once for a batch)."""
        return bool(self.rows or self.incoming) or any(not p.pod_affinity.empty for p in pods)

    def place(self, pod, row, sign):
        plan = self._plan(pod)
        if any(len(counts) <= row for counts in plan[1]):     # the table grew: every row counter grows
            self._grow_all_rows()
            plan = self._plan(pod)
        for counts in plan[1]:
            counts[row] += sign
        for dom, col in plan[2]:
            self._count(dom, row, col, sign)

    def kernel_plan(self, pod):
        """What place(pod, row, 1) adds, for a kernel that counts copies of the pod itself
        (_native/cross_copies): (row counter arrays, domain rows int32[], label columns
        int32[]), or None where a copy could change more than the counts -- a counted domain
        row's total becoming nonzero moves `version` -- or the arrays are short of the table."""
        t = self.table
        _, rows, doms = self._plan(pod)
        if any(self.totals[dom] <= 0 for dom, _ in doms) or any(len(counts) < t.alloc.shape[0] for counts in rows):
            return None
        cols = sorted({col for _, col in doms})
        if cols and int(t.labels[:, cols].max()) >= t.domains.shape[1]:     # _count would grow it
            return None
        return (list(rows), np.asarray([d for d, _ in doms], np.int32),
                np.asarray([c for _, c in doms], np.int32))

    def counted(self, pod, rows) -> None:
        """The kernel counted copies of `pod` on node `rows` (kernel_plan): the totals follow."""
        labels = self.table.labels
        for dom, col in self._plan(pod)[2]:
            n = int((labels[rows, col] >= 0).sum())
            if n:
                was = self.totals[dom]
                self.totals[dom] = was + n
                if was == 0:
                    self.version = next(_VERSIONS)

    def _plan(self, pod):
        """What counts `pod`: (its affinity, the row counters it adds to, the (domain row,
        label column) pairs it counts in), remembered per (affinity, namespace, labels,
        terminating) while no counter is registered, rebuilt or grown. Registers the counters
        of its own terms (existing pods' terms)."""
        a = pod.pod_affinity
        key = (id(a), pod.namespace, tuple(pod.labels.items()), pod.terminating, self.registered)
        plan = self._plans.get(key)
        if plan is not None and plan[0] is a:
            return plan
        own = () if a.empty else _existing_terms(pod)
        for term in own:
            if term not in self.existing:
                self.existing[term] = (self.table.label_key_col(term[1].topology_key), self._new_row())
        rows = [counts for (ns, selector), counts in self.rows.items() if _spread_counts(ns, selector, pod)]
        doms = [(dom, col) for sig, cols in self.incoming.items() if _matches(sig, pod) for col, dom in cols.items()]
        doms += [(self.existing[term][1], self.existing[term][0]) for term in own]
        if len(self._plans) >= PLANS_ENTRIES:
            self._plans.clear()
        plan = self._plans[(*key[:4], self.registered)] = (a, rows, doms)   # (a kept alive: its id)
        return plan

    def _grow_all_rows(self):
        for key, counts in self.rows.items():
            if len(counts) < self.table.alloc.shape[0]:
                self.rows[key] = self._grow_rows(counts)
        self.registered = next(_VERSIONS)

    def incoming_row(self, sig, key: str):
        """(label column, domain row) counting placed pods that match `sig` by `key`'s values."""
        col = self.table.label_key_col(key)
        cols = self.incoming.setdefault(sig, {})
        dom = cols.get(col)
        if dom is None:
            dom = cols[col] = self._new_row()
            vals = self.table.labels[self._matching_rows(lambda pod: _matches(sig, pod)), col]
            vals = vals[vals >= 0]
            if len(vals):           # (_count, for all of them at once)
                if int(vals.max()) >= self.table.domains.shape[1]:
                    self._fit()
                np.add.at(self.table.domains[dom], vals, 1)
                self.totals[dom] += len(vals)
                self.version = next(_VERSIONS)
        return col, dom

    def _matching_rows(self, match) -> np.ndarray:
        """The node rows of the placed pods `match` accepts, one per pod; pods alike in
        namespace, labels and terminating state are asked once (what every match reads)."""
        asked: dict = {}
        rows: list = []
        for pod, row in self.placed():
            key = (pod.namespace, tuple(pod.labels.items()), pod.terminating)
            hit = asked.get(key)
            if hit is None:
                hit = asked[key] = match(pod)
            if hit:
                rows.append(row)
        return np.asarray(rows, np.int64)

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
            np.add.at(counts, self._matching_rows(lambda pod: _spread_counts(namespace, selector, pod)), 1)
            self.rows[key] = counts
            self.version = self.registered = next(_VERSIONS)
        elif len(counts) < self.table.alloc.shape[0]:
            counts = self.rows[key] = self._grow_rows(counts)
            self.registered = next(_VERSIONS)        # the plans hold the arrays
        return counts

    def relabelled(self):
        """A node's labels changed: every count keyed by label values is rebuilt."""
        placed = list(self.placed())
        self.incoming, self.existing, self.totals, self.n_rows = {}, {}, [], 0
        self.rows = {}
        self.version = self.registered = next(_VERSIONS)
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
