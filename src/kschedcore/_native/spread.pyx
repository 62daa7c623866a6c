"""PodTopologySpread's cycle state in a NodeKernel (``kernel.spread``): the Filter's terms or
per-row status, and the Score the kernel computes itself over the feasible nodes."""
cimport cython
from libc.stdint cimport INT64_MIN, INT64_MAX

import numpy as np

from .arith cimport div_small, go_round
from .ids cimport MAX_NODE_SCORE


@cython.final
cdef class SpreadState:
    def __cinit__(self):
        self.n_score = -1
        self.log = np.zeros(1, np.float64)
        self.mark = np.zeros(1, np.int64)
        self.memo = np.zeros(1, np.int64)
        self.n_terms = -1
        self.col = self.dom = np.zeros(0, np.int32)
        self.limit = np.zeros(0, np.int64)

    cpdef set_filter(self, status, terms=None):
        """PreFilter's result for the next cycle(s): a per-row status (int8), or terms (label
        column int32[], domain row int32[], count limit int64[]); both None: PreFilter skips."""
        self.has_status = status is not None
        if status is not None:
            self.status = status
        self.n_terms = -1
        if terms is not None:
            self.col, self.dom, self.limit = terms
            self.n_terms = self.col.shape[0]

    cpdef set_score(self, terms, bint require_all=True, int32_t empty_value=-1, Py_ssize_t n_values=0,
                  log_table=None, Py_ssize_t n_rows=0):
        """PreScore's result for the kernel to score, or None (the Score is skipped or done in
        Python). terms: [(label column, domain row or -1, maxSkew, row counts int64[] for a
        hostname constraint else None)]; n_values: label values interned; log_table[i] =
        go_log(i + 2) for every size a cycle can see; n_rows: the node table's rows."""
        cdef Py_ssize_t i
        cdef int64_t[::1] rc
        if terms is None:
            self.n_score = -1
            self.score_arrays = None
            return
        if len(terms) > MAX_SPREAD_SCORE_TERMS:
            raise ValueError("too many spread score constraints for the kernel")
        keep = []
        for i, (col, dom, skew, rows) in enumerate(terms):
            self.score_col[i], self.score_dom[i], self.score_skew[i] = col, dom, <double>(skew - 1)
            self.score_rows[i] = NULL
            if rows is not None:
                if rows.shape[0] < n_rows:
                    raise ValueError("spread row counts are shorter than the node table")
                rc = rows
                self.score_rows[i] = &rc[0]
                keep.append(rows)
        self.score_arrays = keep
        self.n_score = len(terms)
        self.require_all, self.empty = require_all, empty_value
        if log_table is not None:
            self.log = log_table
        if self.log.shape[0] <= n_rows:
            raise ValueError("the spread log table is shorter than the node table")
        if self.mark.shape[0] < n_values or self.mark.shape[0] <= empty_value:
            self.mark = np.zeros(max(n_values, empty_value + 1, 2 * self.mark.shape[0]), np.int64)
            self.memo = np.zeros(self.mark.shape[0], np.int64)
            self.epoch = 0

    cdef void score(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                    Py_ssize_t nf) noexcept nogil:
        """PreScore + Score + NormalizeScore over the nf feasible rows, into raw and norm."""
        cdef Py_ssize_t j
        cdef int64_t lo = INT64_MAX, hi = INT64_MIN
        if self.n_score == 1 and self.score_dom[0] >= 0:
            self._score_one_domain(t, feasible, raw, norm, nf, &lo, &hi)
        else:
            self._score_terms(t, feasible, raw, norm, nf, &lo, &hi)
        if hi < 0:
            hi = 0
        for j in range(nf):
            if norm[j] < 0:
                norm[j] = 0
            elif hi == 0:
                norm[j] = MAX_NODE_SCORE
            else:
                norm[j] = div_small(MAX_NODE_SCORE * (hi + lo - raw[j]), hi)   # (hi + lo - raw: 0 .. hi)

    cdef void _score_terms(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                           Py_ssize_t nf, int64_t* lo, int64_t* hi) noexcept nogil:
        """score()'s raw scores and norm markers (-1: an ignored node) for any constraints."""
        cdef Py_ssize_t j, i, row, n_ok = 0
        cdef int32_t v
        cdef int64_t size, cnt, r
        cdef double x
        cdef double w[MAX_SPREAD_SCORE_TERMS]
        cdef bint ignored
        # a node lacking a constraint's key is ignored (raw 0, outside min/max) -- marked by -1
        for j in range(nf):
            row = feasible[j]
            ignored = False
            if self.require_all:
                for i in range(self.n_score):
                    if t.labels[row * t.n_keys + self.score_col[i]] < 0:
                        ignored = True
            raw[j] = -1 if ignored else 0
            n_ok += not ignored
        # the topology normalizing weight: log(number of domains among the scored nodes + 2)
        for i in range(self.n_score):
            if self.score_dom[i] < 0:
                size = n_ok
            else:
                self.epoch += 1
                size = 0
                for j in range(nf):
                    if raw[j] < 0:
                        continue
                    v = t.labels[feasible[j] * t.n_keys + self.score_col[i]]
                    if v < 0:
                        v = self.empty
                    if self.mark[v] != self.epoch:
                        self.mark[v] = self.epoch
                        size += 1
            w[i] = self.log[size]
        for j in range(nf):
            if raw[j] < 0:
                raw[j] = 0
                norm[j] = -1
                continue
            row = feasible[j]
            x = 0.0
            for i in range(self.n_score):
                v = t.labels[row * t.n_keys + self.score_col[i]]
                if v < 0:
                    continue
                if self.score_dom[i] < 0:
                    cnt = self.score_rows[i][row]
                else:
                    cnt = t.domains[self.score_dom[i] * t.dom_stride + v]
                x = x + (<double>cnt * w[i] + self.score_skew[i])
            r = go_round(x)
            raw[j] = r
            norm[j] = 0
            if r < lo[0]:
                lo[0] = r
            if r > hi[0]:
                hi[0] = r

    cdef void _score_one_domain(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                                Py_ssize_t nf, int64_t* lo, int64_t* hi) noexcept nogil:
        """score()'s raw scores and norm markers for one constraint on domain counts, in two
        passes: each node's label value and the domains among the scored nodes first (raw
        holds the value; norm -1 an ignored node, -2 one without the key that is scored), then
        one raw score per domain, made once (a node without the key scores 0, as in score())."""
        cdef Py_ssize_t j, size = 0, col = self.score_col[0]
        cdef int32_t v
        cdef int64_t r
        cdef const int64_t* counts = t.domains + self.score_dom[0] * t.dom_stride
        cdef double w, skew = self.score_skew[0]
        self.epoch += 1
        for j in range(nf):
            v = t.labels[feasible[j] * t.n_keys + col]
            norm[j] = 0
            if v < 0:
                raw[j] = 0
                norm[j] = -1 if self.require_all else -2
                if self.require_all:
                    continue
                v = self.empty
            else:
                raw[j] = v
            if self.mark[v] != self.epoch:
                self.mark[v] = self.epoch
                size += 1
        w = self.log[size]
        self.epoch += 1         # mark[v] == epoch now: memo[v] is domain v's raw score
        for j in range(nf):
            if norm[j] == -1:
                continue
            if norm[j] == -2:
                r = go_round(0.0)
                norm[j] = 0
            else:
                v = <int32_t>raw[j]
                if self.mark[v] == self.epoch:
                    r = self.memo[v]
                else:
                    r = go_round(<double>counts[v] * w + skew)
                    self.mark[v], self.memo[v] = self.epoch, r
            raw[j] = r
            if r < lo[0]:
                lo[0] = r
            if r > hi[0]:
                hi[0] = r


cdef void fill_limits(const int64_t* domains, Py_ssize_t stride, const int32_t* dom, const int64_t* base,
                      const int32_t* values, const int32_t* start, Py_ssize_t n, int64_t* out) noexcept nogil:
    """out[i] = base[i] (maxSkew - selfMatch) plus the smallest count of constraint i's domains,
    values[start[i]:start[i + 1]] of domain row dom[i] (an empty range: fewer domains than
    minDomains, the minimum taken as 0)."""
    cdef Py_ssize_t i, j
    cdef int64_t m, v
    for i in range(n):
        m = 0
        if start[i + 1] > start[i]:
            m = INT64_MAX
            for j in range(start[i], start[i + 1]):
                v = domains[dom[i] * stride + values[j]]
                if v < m:
                    m = v
        out[i] = base[i] + m


def domain_limits(const int64_t[:, ::1] domains, const int32_t[::1] dom, const int64_t[::1] base,
                  const int32_t[::1] values, const int32_t[::1] start):
    """The DoNotSchedule terms' count limits for one cycle (fill_limits)."""
    cdef Py_ssize_t n = dom.shape[0]
    out = np.empty(n, np.int64)
    cdef int64_t[::1] o = out
    if n:
        fill_limits(&domains[0, 0], domains.shape[1], &dom[0], &base[0],
                    &values[0] if values.shape[0] else NULL, &start[0], n, &o[0])
    return out
