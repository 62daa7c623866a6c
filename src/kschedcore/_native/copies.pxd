# A run of identical copies of a node-local pod (NodeKernel.run_copies): the rows' verdicts
# taken once into per-scan-position arrays, each copy's cycle over those arrays. cdef inline:
# compiled into the pass (_kernels.pyx).
from libc.stdint cimport INT64_MIN, int8_t, int32_t, int64_t, uint64_t

from .arith cimport div_small, uniform_below
from .cycle cimport Config, Cycle
from .equivalence cimport EqRow
from .ids cimport C_SUCCESS, MAX_NODE_SCORE, S_NODE_AFFINITY, S_TAINT_TOLERATION
from .pod cimport PodView
from .filters cimport cross_pod_filters
from .scan cimport Buffers, entry_current
from .table cimport Table


# A run of identical copies (NodeKernel.run_copies): the rows' verdicts and raw scores taken
# into per-scan-position arrays (the Buffers: st_code 1 = feasible, totals, raw), positions
# start0 .. start0 + validated (wrapping) taken so far; totals of infeasible positions are
# INT64_MIN. n_ok: the feasible positions taken in; seen_*: the largest raw TaintToleration
# and NodeAffinity scores taken in (a row's raw ones do not change with the pods placed on it).
# yl: the cycle the slot's entries hold -- y itself, or y less its cross-pod Filters, which then
# run from y.filters[cross_first] on (-1: none; cross_copies.pyx): taken in with the row where
# no copy changes their verdicts (cross_static), else on each copy's counts as its walk
# reaches a position (select_copy_cross).
cdef struct Copies:
    Table* t
    PodView* p
    Config* c
    Cycle* y
    Cycle* yl
    Py_ssize_t cross_first
    bint cross_static
    Buffers* b
    EqRow* entries
    const int32_t* scan
    Py_ssize_t n, start0, validated
    bint taint_raw, use_affinity
    Py_ssize_t n_ok
    int64_t seen_taint, seen_affinity
    Py_ssize_t nf, processed, best_pos      # the last copy's


cdef inline void copy_position(Copies* r, Py_ssize_t row, Py_ssize_t q, bint again) noexcept nogil:
    """Row `row` (at scan position q) through the template's slot -- filtered and scored unless
    its entry is current -- into the per-position arrays (again: it was taken in before)."""
    cdef EqRow* e = r.entries + row
    cdef Buffers* b = r.b
    cdef int8_t ok
    cdef int64_t detail
    cdef int plugin = 0
    entry_current(r.t, r.p, r.c, r.yl, e, row)
    ok = e.code == C_SUCCESS
    if ok and r.cross_first >= 0 and r.cross_static:
        ok = cross_pod_filters(r.t, r.p, r.y, r.cross_first, row, &detail, &plugin) == C_SUCCESS
    if again:
        r.n_ok -= b.st_code[q]
    b.st_code[q] = ok
    r.n_ok += ok
    b.totals[q] = e.total if ok else INT64_MIN
    if not ok:
        return
    if r.taint_raw:
        b.raw[S_TAINT_TOLERATION * b.cap + q] = e.raw[S_TAINT_TOLERATION]
        if e.raw[S_TAINT_TOLERATION] > r.seen_taint:
            r.seen_taint = e.raw[S_TAINT_TOLERATION]
    if r.use_affinity:
        b.raw[S_NODE_AFFINITY * b.cap + q] = e.raw[S_NODE_AFFINITY]
        if e.raw[S_NODE_AFFINITY] > r.seen_affinity:
            r.seen_affinity = e.raw[S_NODE_AFFINITY]


cdef inline Py_ssize_t select_copy(Copies* r, Py_ssize_t s, Py_ssize_t need, bint tie_first,
                                   uint64_t* rng) noexcept nogil:
    """One copy's cycle over the per-position arrays from scan position s: the walk until
    `need` feasible nodes (rows first reached are taken in), then NormalizeScore and
    selectHost in scan order exactly as NodeKernel._select over the same nodes. Sets r.nf,
    r.processed, r.best_pos; returns the chosen row (-1: none feasible)."""
    if r.cross_first >= 0 and not r.cross_static:
        return select_copy_cross(r, s, need, tie_first, rng)
    cdef Buffers* b = r.b
    cdef Py_ssize_t n = r.n, q = s, i = 0, nf = 0, rel, cap = b.cap
    cdef const int8_t* ok = b.st_code
    cdef const int64_t* raw_taint = b.raw + S_TAINT_TOLERATION * cap
    cdef const int64_t* raw_affinity = b.raw + S_NODE_AFFINITY * cap
    cdef bint taint_raw = r.taint_raw, use_affinity = r.use_affinity
    cdef int64_t max_taint = 0, max_affinity = 0
    cdef Py_ssize_t validated = r.validated, start0 = r.start0
    # the walk: until `need` feasible; rows first reached taken in on the way
    while i < n and nf < need and validated < n:
        rel = q - start0
        if rel < 0:
            rel += n
        if rel == validated:
            copy_position(r, r.scan[q], q, False)
            validated += 1
        if ok[q]:
            nf += 1
            if taint_raw and raw_taint[q] > max_taint:
                max_taint = raw_taint[q]
            if use_affinity and raw_affinity[q] > max_affinity:
                max_affinity = raw_affinity[q]
        i += 1
        q += 1
        if q == n:
            q = 0
    r.validated = validated
    # the maxima are 0 while every raw score taken in is 0
    cdef bint maxima = (taint_raw and r.seen_taint > 0) or (use_affinity and r.seen_affinity > 0)
    if i == 0 and validated == n and need >= n and not maxima:
        nf, i = r.n_ok, n       # the whole table, every row taken in: nothing to walk
    elif maxima:
        while i < n and nf < need:
            if ok[q]:
                nf += 1
                if taint_raw and raw_taint[q] > max_taint:
                    max_taint = raw_taint[q]
                if use_affinity and raw_affinity[q] > max_affinity:
                    max_affinity = raw_affinity[q]
            i += 1
            q += 1
            if q == n:
                q = 0
    else:
        while i < n and nf < need:
            nf += ok[q]
            i += 1
            q += 1
            if q == n:
                q = 0
    r.nf, r.processed = nf, i
    return choose_copy(r, s, max_taint, max_affinity, tie_first, rng)


cdef inline Py_ssize_t choose_copy(Copies* r, Py_ssize_t s, int64_t max_taint, int64_t max_affinity,
                                   bint tie_first, uint64_t* rng) noexcept nogil:
    """NormalizeScore and selectHost over a walk's r.nf feasible positions from s (r.processed
    of them): the chosen row, r.best_pos its position (-1: none feasible)."""
    r.best_pos = -1
    if r.nf == 0:
        return -1
    if max_taint == 0 and max_affinity == 0:
        # every raw taint and affinity score 0 (both are >= 0): the normalised ones are the
        # same on every node, so the order of totals is that of the partial ones
        return best_of_totals(r, s, tie_first, rng)
    return best_normalised(r, s, max_taint, max_affinity, tie_first, rng)


cdef inline bint cross_position(Copies* r, Py_ssize_t q) noexcept nogil:
    """Position q (taken in when the walk reaches it first) passes its node-local verdict and
    the cross-pod Filters on this copy's counts."""
    cdef Py_ssize_t rel = q - r.start0, row = r.scan[q]
    cdef int64_t detail
    cdef int plugin = 0
    if rel < 0:
        rel += r.n
    if rel == r.validated:
        copy_position(r, row, q, False)
        r.validated += 1
    return r.b.st_code[q] and cross_pod_filters(r.t, r.p, r.y, r.cross_first, row, &detail, &plugin) == C_SUCCESS

cdef inline Py_ssize_t select_copy_cross(Copies* r, Py_ssize_t s, Py_ssize_t need, bint tie_first,
                                         uint64_t* rng) noexcept nogil:
    """select_copy where the cross-pod Filters change between copies (on the counts the copies
    add): a position the walk reaches passes its node-local verdict (taken in once) and then
    the cross-pod Filters on this copy's counts; this copy's verdicts and totals go to the
    spare buffers (st_plugin, st_detail), which NormalizeScore and selectHost then read."""
    cdef Buffers* b = r.b
    cdef Buffers mine = b[0]
    cdef Copies rc
    cdef Py_ssize_t n = r.n, q = s, i = 0, nf = 0, cap = b.cap, row
    cdef int8_t* ok = b.st_plugin
    cdef int64_t* totals = b.st_detail
    cdef const int64_t* raw_taint = b.raw + S_TAINT_TOLERATION * cap
    cdef const int64_t* raw_affinity = b.raw + S_NODE_AFFINITY * cap
    cdef int64_t max_taint = 0, max_affinity = 0
    cdef int8_t v
    while i < n and nf < need:
        v = cross_position(r, q)
        ok[q] = v
        totals[q] = b.totals[q] if v else INT64_MIN
        if v:
            nf += 1
            if r.taint_raw and raw_taint[q] > max_taint:
                max_taint = raw_taint[q]
            if r.use_affinity and raw_affinity[q] > max_affinity:
                max_affinity = raw_affinity[q]
        i += 1
        q += 1
        if q == n:
            q = 0
    r.nf, r.processed = nf, i
    mine.st_code, mine.totals = ok, totals
    rc = r[0]
    rc.b = &mine
    row = choose_copy(&rc, s, max_taint, max_affinity, tie_first, rng)
    r.best_pos = rc.best_pos
    return row


cdef inline Py_ssize_t best_of_totals(Copies* r, Py_ssize_t s, bint tie_first, uint64_t* rng) noexcept nogil:
    """selectHost over the walk's nodes by their partial totals, as NodeKernel._select
    (infeasible positions hold INT64_MIN, below every total). The walk's positions are at
    most two runs of the arrays (it may wrap), each taken in a loop with no wrap test."""
    cdef Py_ssize_t n = r.n, q = s, best_pos = -1, end, k
    cdef const int64_t* totals = r.b.totals
    cdef const int64_t* order_key = r.t.order_key
    cdef const int32_t* scan = r.scan
    cdef int64_t v, best_total = INT64_MIN + 1, key, best_key = 0, ties = 0
    cdef uint64_t u
    cdef Py_ssize_t left = r.processed
    while left > 0:
        end = q + left if q + left <= n else n
        left -= end - q
        if tie_first:
            for k in range(q, end):
                v = totals[k]
                if v >= best_total:
                    key = order_key[scan[k]]
                    if v > best_total or key < best_key:
                        best_total, best_pos, best_key = v, k, key
        else:
            for k in range(q, end):
                v = totals[k]
                if v > best_total:      # rare once the best is seen: the count is branch-free
                    best_total, best_pos, ties = v, k, 0
                ties += v == best_total
        q = 0
    if ties > 1:                # one of the best, uniformly: the u-th in scan order
        u = uniform_below(rng, <uint64_t>ties)
        q, end = s, n
        while best_pos >= 0:            # two runs at most: positions s.., then ..s
            for k in range(q, end):
                if totals[k] == best_total:
                    if u == 0:
                        best_pos = -1 - k
                        break
                    u -= 1
            q, end = 0, s
        best_pos = -1 - best_pos
    r.best_pos = best_pos
    return scan[best_pos]


cdef inline int64_t normalised_total(Copies* r, Py_ssize_t q, int64_t max_taint, int64_t max_affinity) noexcept nogil:
    """A feasible position's total with TaintToleration and NodeAffinity normalised as in
    NodeKernel._select."""
    cdef Buffers* b = r.b
    cdef int64_t total = b.totals[q], v
    if r.y.use[S_TAINT_TOLERATION]:
        v = MAX_NODE_SCORE
        if max_taint > 0:
            v = MAX_NODE_SCORE - div_small(MAX_NODE_SCORE * b.raw[S_TAINT_TOLERATION * b.cap + q], max_taint)
        total += r.c.weights[S_TAINT_TOLERATION] * v
    if r.use_affinity:
        v = b.raw[S_NODE_AFFINITY * b.cap + q]
        if max_affinity > 0:
            v = div_small(MAX_NODE_SCORE * v, max_affinity)
        total += r.c.weights[S_NODE_AFFINITY] * v
    return total


cdef inline Py_ssize_t best_normalised(Copies* r, Py_ssize_t s, int64_t max_taint, int64_t max_affinity,
                                       bint tie_first, uint64_t* rng) noexcept nogil:
    """selectHost over the walk's nodes by their normalised totals, as NodeKernel._select."""
    cdef Py_ssize_t n = r.n, q = s, i, best_pos = -1
    cdef const int8_t* ok = r.b.st_code
    cdef const int32_t* scan = r.scan
    cdef const int64_t* order_key = r.t.order_key
    cdef int64_t total, key, best_total = INT64_MIN, best_key = 0, ties = 0
    cdef uint64_t u
    for i in range(r.processed):
        if ok[q]:
            total = normalised_total(r, q, max_taint, max_affinity)
            if total >= best_total:
                if total > best_total:
                    best_total, best_pos, ties = total, q, 1
                    if tie_first:
                        best_key = order_key[scan[q]]
                elif tie_first:
                    key = order_key[scan[q]]
                    if key < best_key:
                        best_pos, best_key = q, key
                else:
                    ties += 1
        q += 1
        if q == n:
            q = 0
    if ties > 1:
        u = uniform_below(rng, <uint64_t>ties)
        q = s
        while True:
            if ok[q] and normalised_total(r, q, max_taint, max_affinity) == best_total:
                if u == 0:
                    break
                u -= 1
            q += 1
            if q == n:
                q = 0
        best_pos = q
    r.best_pos = best_pos
    return scan[best_pos]

