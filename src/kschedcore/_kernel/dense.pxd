# A node-local cycle through its template's slot columns (EquivalenceCache.columns): the walk
# counts feasible positions 64 at a time, evaluating only positions whose verdict is not
# current; selectHost reads the columns of the feasible ones. cdef inline: compiled into
# node_kernel's run().
from libc.stdint cimport INT64_MIN, int8_t, int32_t, int64_t, uint64_t

from .arith cimport __builtin_ctzll, div_small, uniform_below
from .cycle cimport Config, Cycle
from .equivalence cimport Columns, EqRow
from .ids cimport C_SUCCESS, MAX_NODE_SCORE, S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_TAINT_TOLERATION
from .pod cimport PodView
from .scan cimport entry_current
from .table cimport Table

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil


cdef struct Dense:
    Table* t
    PodView* p
    Config* c
    Cycle* y
    Columns k
    const int32_t* scan
    Py_ssize_t n
    bint taint_raw, use_affinity
    Py_ssize_t nf, processed      # the walk's


cdef inline bint slot_cycle(Cycle* y, bint spread_scored) noexcept nogil:
    """A cycle whose Filters and Scores the kernel runs on the candidate row alone (no
    InterPodAffinity or PodTopologySpread score, no custom Score): one that the template's slot
    (dense_walk / dense_select) or a run of copies (copies.pxd) can decide."""
    return not (y.use[S_INTER_POD_AFFINITY] or y.any_custom_score or spread_scored)


cdef inline uint64_t span_mask(Py_ssize_t b, Py_ssize_t span) noexcept nogil:
    """Bits b .. b + span - 1 of a word (span >= 1, b + span <= 64)."""
    if span == 64:
        return ~(<uint64_t>0)
    return (((<uint64_t>1) << span) - 1) << b


# The feasible positions of a walk, in scan order: words of `ok` bits, masked to the walk.
cdef struct Window:
    Py_ssize_t q, left, base
    uint64_t bits


cdef inline void window_start(Window* w, Py_ssize_t pos, Py_ssize_t processed) noexcept nogil:
    w.q, w.left, w.base, w.bits = pos, processed, 0, 0


cdef inline bint window_next(const uint64_t* ok, Py_ssize_t n, Window* w, Py_ssize_t* p) noexcept nogil:
    """The next feasible position of the window into p[0]; False when there is none."""
    cdef Py_ssize_t b, span
    while w.bits == 0:
        if w.left <= 0:
            return False
        b = w.q & 63
        span = 64 - b
        if span > n - w.q:
            span = n - w.q
        if span > w.left:
            span = w.left
        w.bits, w.base = ok[w.q >> 6] & span_mask(b, span), w.q - b
        w.left -= span
        w.q += span
        if w.q == n:
            w.q = 0
    p[0] = w.base + __builtin_ctzll(w.bits)
    w.bits &= w.bits - 1
    return True


cdef inline void dense_position(Dense* d, Py_ssize_t q) noexcept nogil:
    """Position q's row into the columns: its entry if current, else filtered and scored (and
    the entry written)."""
    cdef Py_ssize_t row = d.scan[q]
    cdef EqRow* e = d.k.entries + row
    cdef uint64_t bit = (<uint64_t>1) << (q & 63)
    entry_current(d.t, d.p, d.c, d.y, e, row)
    d.k.valid[q >> 6] |= bit
    if e.code != C_SUCCESS:
        d.k.ok[q >> 6] &= ~bit
        return
    d.k.ok[q >> 6] |= bit
    d.k.total[q] = e.total
    if d.taint_raw:
        d.k.raw_taint[q] = e.raw[S_TAINT_TOLERATION]
        if e.raw[S_TAINT_TOLERATION] > 0:
            d.k.seen[0] = 1
    if d.use_affinity:
        d.k.raw_affinity[q] = e.raw[S_NODE_AFFINITY]
        if e.raw[S_NODE_AFFINITY] > 0:
            d.k.seen[1] = 1


cdef inline void dense_walk(Dense* d, Py_ssize_t pos, Py_ssize_t need) noexcept nogil:
    """From scan position pos, the positions up to the need-th feasible one (or all n), as
    findNodesThatPassFilters counts them: sets d.nf and d.processed."""
    cdef Py_ssize_t n = d.n, q = pos, processed = 0, nf = 0, b, span, c, k
    cdef uint64_t mask, todo, okw
    while processed < n and nf < need:
        b = q & 63
        span = 64 - b
        if span > n - q:
            span = n - q
        if span > n - processed:
            span = n - processed
        mask = span_mask(b, span)
        todo = ~d.k.valid[q >> 6] & mask
        while todo:
            dense_position(d, (q - b) + __builtin_ctzll(todo))
            todo &= todo - 1
        okw = d.k.ok[q >> 6] & mask
        c = __builtin_popcountll(okw)
        if nf + c >= need:
            for k in range(need - nf - 1):     # the (need - nf)-th feasible position here
                okw &= okw - 1
            processed += __builtin_ctzll(okw) - b + 1
            nf = need
            break
        nf += c
        processed += span
        q += span
        if q == n:
            q = 0
    d.nf, d.processed = nf, processed


# NormalizeScore's results by raw score, when the cycle's maximum is at most this: one division
# per distinct raw value instead of one per node
cdef enum:
    NORM_TABLE = 1024


cdef struct Norm:
    int64_t max_taint, max_affinity
    int64_t taint_const             # weighted TaintToleration score when every raw one is 0
    int64_t* taint                  # weighted normalised score by raw score (NULL: compute)
    int64_t* affinity


cdef inline int64_t dense_total(Dense* d, Py_ssize_t q, Norm* m) noexcept nogil:
    """A feasible position's total, TaintToleration and NodeAffinity normalised as in
    NodeKernel._select."""
    cdef int64_t total = d.k.total[q], v
    if d.y.use[S_TAINT_TOLERATION]:
        if m.max_taint == 0:
            total += m.taint_const
        elif m.taint != NULL:
            total += m.taint[d.k.raw_taint[q]]
        else:
            v = MAX_NODE_SCORE - div_small(MAX_NODE_SCORE * d.k.raw_taint[q], m.max_taint)
            total += d.c.weights[S_TAINT_TOLERATION] * v
    if d.use_affinity and m.max_affinity > 0:       # (0: every raw score is 0, so is v)
        if m.affinity != NULL:
            total += m.affinity[d.k.raw_affinity[q]]
        else:
            v = div_small(MAX_NODE_SCORE * d.k.raw_affinity[q], m.max_affinity)
            total += d.c.weights[S_NODE_AFFINITY] * v
    return total


cdef inline void norm_tables(Dense* d, Norm* m, int64_t* taint, int64_t* affinity) noexcept nogil:
    """The weighted normalised scores by raw score (0 .. max), where the maxima are small."""
    cdef int64_t r, w_taint = d.c.weights[S_TAINT_TOLERATION], w_affinity = d.c.weights[S_NODE_AFFINITY]
    m.taint_const = w_taint * MAX_NODE_SCORE
    m.taint = m.affinity = NULL
    if 0 < m.max_taint <= NORM_TABLE:
        for r in range(m.max_taint + 1):
            taint[r] = w_taint * (MAX_NODE_SCORE - div_small(MAX_NODE_SCORE * r, m.max_taint))
        m.taint = taint
    if 0 < m.max_affinity <= NORM_TABLE:
        for r in range(m.max_affinity + 1):
            affinity[r] = w_affinity * div_small(MAX_NODE_SCORE * r, m.max_affinity)
        m.affinity = affinity


cdef inline Py_ssize_t dense_select(Dense* d, Py_ssize_t pos, bint tie_first, uint64_t* rng) noexcept nogil:
    """NormalizeScore and selectHost over the walk's feasible positions, exactly as
    NodeKernel._select over the same nodes in scan order; returns the chosen row."""
    cdef Py_ssize_t n = d.n, p, best_pos = -1
    cdef const uint64_t* ok = d.k.ok
    cdef const int64_t* order_key = d.t.order_key
    cdef int64_t max_taint = 0, max_affinity = 0, total, key, best_total = INT64_MIN, best_key = 0, ties = 0
    cdef uint64_t u
    cdef Window w
    cdef Norm m
    cdef int64_t taint_table[NORM_TABLE + 1]
    cdef int64_t affinity_table[NORM_TABLE + 1]
    cdef bint taint_max = d.taint_raw and d.k.seen[0], affinity_max = d.use_affinity and d.k.seen[1]
    if taint_max or affinity_max:       # (while every raw score taken is 0, so are the maxima)
        window_start(&w, pos, d.processed)
        while window_next(ok, n, &w, &p):
            if taint_max and d.k.raw_taint[p] > max_taint:
                max_taint = d.k.raw_taint[p]
            if affinity_max and d.k.raw_affinity[p] > max_affinity:
                max_affinity = d.k.raw_affinity[p]
    m.max_taint, m.max_affinity = max_taint, max_affinity
    norm_tables(d, &m, taint_table, affinity_table)
    window_start(&w, pos, d.processed)
    while window_next(ok, n, &w, &p):
        total = dense_total(d, p, &m)
        if total < best_total:
            continue
        if total > best_total:
            best_total, best_pos, ties = total, p, 1
            if tie_first:
                best_key = order_key[d.scan[p]]
        elif tie_first:
            key = order_key[d.scan[p]]
            if key < best_key:
                best_pos, best_key = p, key
        else:
            ties += 1
    if ties > 1:        # one of the best uniformly: the u-th in scan order (NodeKernel._select)
        u = uniform_below(rng, <uint64_t>ties)
        window_start(&w, pos, d.processed)
        while window_next(ok, n, &w, &p):
            if dense_total(d, p, &m) == best_total:
                if u == 0:
                    return d.scan[p]
                u -= 1
    return d.scan[best_pos]
