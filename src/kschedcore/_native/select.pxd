# NormalizeScore, the weighted totals and selectHost over a cycle's feasible list, in chunks
# the kernel's pool may share: a first pass takes each chunk's maxima, a second its totals and
# its best (the first best in input order, or how many tie), then one walk over the chunks
# picks the node -- the node the sequential loops pick, whatever the number of chunks.
from libc.stdint cimport INT64_MAX, INT64_MIN, int32_t, int64_t, uint64_t

from .arith cimport div_small, uniform_below
from .ids cimport MAX_NODE_SCORE, N_CUSTOM

cdef extern from "pool.h" nogil:
    ctypedef void (*ks_chunk_fn)(void* ctx, int64_t chunk) noexcept nogil
    ctypedef struct ks_pool:
        pass
    int ks_pool_start(ks_pool* p, int n_helpers)
    void ks_pool_stop(ks_pool* p)
    void ks_pool_run(ks_pool* p, ks_chunk_fn fn, void* ctx, int64_t n_chunks)

# Feasible nodes per chunk of a shared selection, at least; below two chunks it runs on one thread.
cdef enum:
    CHUNKS_PER_THREAD = 4   # a shared round's chunks per thread: each claim is an atomic on a shared line
    SELECT_CHUNK = 4096
    SELECT_SLOTS = 4        # per chunk: pass 1 max taint, max affinity, ipa min, ipa max;
                            #            pass 2 best total, ties, first best position


cdef struct Select:
    Py_ssize_t nf, chunk
    int pass_
    const int64_t* raw_taint
    const int64_t* raw_affinity
    const int64_t* raw_ipa
    int64_t* norm_taint
    int64_t* norm_affinity
    int64_t* norm_ipa
    const int64_t* norm_spread
    const int64_t* norm_custom[N_CUSTOM]
    int64_t* totals
    const int32_t* feasible
    const int64_t* order_key
    bint use_taint, use_affinity, use_ipa, taint_raw, spread, tie_first
    bint use_custom[N_CUSTOM]
    int64_t w_taint, w_affinity, w_ipa, w_spread
    int64_t w_custom[N_CUSTOM]
    int64_t max_taint, max_affinity, ipa_min, ipa_max
    int64_t* out            # SELECT_SLOTS per chunk


cdef inline void _maxima(Select* s, Py_ssize_t lo, Py_ssize_t hi, int64_t* out) noexcept nogil:
    cdef Py_ssize_t j
    cdef int64_t v, max_taint = 0, max_affinity = 0, ipa_min = INT64_MAX, ipa_max = INT64_MIN
    cdef const int64_t* raw
    if s.taint_raw:
        raw = s.raw_taint
        for j in range(lo, hi):
            if raw[j] > max_taint:
                max_taint = raw[j]
    if s.use_affinity:
        raw = s.raw_affinity
        for j in range(lo, hi):
            if raw[j] > max_affinity:
                max_affinity = raw[j]
    if s.use_ipa:
        raw = s.raw_ipa
        for j in range(lo, hi):
            v = raw[j]
            if v < ipa_min:
                ipa_min = v
            if v > ipa_max:
                ipa_max = v
    out[0], out[1], out[2], out[3] = max_taint, max_affinity, ipa_min, ipa_max


cdef inline void _totals(Select* s, Py_ssize_t lo, Py_ssize_t hi, int64_t* out) noexcept nogil:
    """Normalised scores and totals of positions [lo, hi); out: the best total, how many
    positions have it (random tie-break), the first of them in input order (tie_first). The
    loop reads locals only: with no strict aliasing (CPython's flags), every store would
    otherwise reload the flags and pointers it reads."""
    cdef Py_ssize_t j, k, first = -1
    cdef int64_t total, v, key, best_total = INT64_MIN, ties = 0, best_key = 0
    cdef int64_t max_taint = s.max_taint, max_affinity = s.max_affinity
    cdef int64_t ipa_min = s.ipa_min, ipa_max = s.ipa_max
    cdef int64_t w_taint = s.w_taint, w_affinity = s.w_affinity, w_ipa = s.w_ipa, w_spread = s.w_spread
    cdef bint use_taint = s.use_taint, use_affinity = s.use_affinity, use_ipa = s.use_ipa
    cdef bint spread = s.spread, extra = s.spread
    cdef const int64_t* raw_taint = s.raw_taint
    cdef const int64_t* raw_affinity = s.raw_affinity
    cdef const int64_t* raw_ipa = s.raw_ipa
    cdef int64_t* norm_taint = s.norm_taint
    cdef int64_t* norm_affinity = s.norm_affinity
    cdef int64_t* norm_ipa = s.norm_ipa
    cdef const int64_t* norm_spread = s.norm_spread
    cdef int64_t* totals = s.totals
    cdef const int32_t* feasible = s.feasible
    cdef const int64_t* order_key = s.order_key
    for k in range(N_CUSTOM):
        extra = extra or s.use_custom[k]
    for j in range(lo, hi):
        total = totals[j]
        if use_taint:
            v = MAX_NODE_SCORE     # all raw scores 0 (max_taint 0): every node gets 100
            if max_taint > 0:
                v = MAX_NODE_SCORE - div_small(MAX_NODE_SCORE * raw_taint[j], max_taint)
            norm_taint[j] = v
            total += w_taint * v
        if use_affinity:
            v = raw_affinity[j]
            if max_affinity > 0:
                v = div_small(MAX_NODE_SCORE * v, max_affinity)
            norm_affinity[j] = v
            total += w_affinity * v
        if use_ipa:
            # min-max normalisation (scores may be negative), float64 as upstream
            v = 0
            if ipa_max - ipa_min > 0:
                v = <int64_t>(<double>MAX_NODE_SCORE * (<double>(raw_ipa[j] - ipa_min)
                                                    / <double>(ipa_max - ipa_min)))
            norm_ipa[j] = v
            total += w_ipa * v
        if extra:
            if spread:
                total += w_spread * norm_spread[j]
            for k in range(N_CUSTOM):
                if s.use_custom[k]:
                    total += s.w_custom[k] * s.norm_custom[k][j]
        totals[j] = total
        if total > best_total:      # (rare once the best is seen: ties are counted below)
            best_total = total
    if s.tie_first:
        for j in range(lo, hi):
            if totals[j] == best_total:
                key = order_key[feasible[j]]
                if first < 0 or key < best_key:
                    first, best_key = j, key
    else:
        for j in range(lo, hi):
            ties += totals[j] == best_total
    out[0], out[1], out[2] = best_total, ties, first


cdef inline Py_ssize_t _chunk_end(Select* s, Py_ssize_t k) noexcept nogil:
    return (k + 1) * s.chunk if (k + 1) * s.chunk < s.nf else s.nf


cdef inline void select_chunk(void* ctx, int64_t k) noexcept nogil:
    """Chunk k of the current pass (run on any thread of the pool)."""
    cdef Select* s = <Select*>ctx
    cdef Py_ssize_t lo = k * s.chunk, hi = _chunk_end(s, k)
    if s.pass_ == 0:
        _maxima(s, lo, hi, s.out + k * SELECT_SLOTS)
    else:
        _totals(s, lo, hi, s.out + k * SELECT_SLOTS)


cdef inline void _run_pass(Select* s, ks_pool* pool, int pass_, Py_ssize_t n_chunks) noexcept nogil:
    """Pass `pass_` over every chunk: on this thread alone for one chunk, else shared."""
    s.pass_ = pass_
    if n_chunks == 1:
        select_chunk(s, 0)
    else:
        ks_pool_run(pool, select_chunk, s, n_chunks)


cdef inline Py_ssize_t select_host(Select* s, ks_pool* pool, int threads, uint64_t* rng) noexcept nogil:
    """The chosen position's feasible node: the best total; of several, the first in input
    order (tie_first) or the u-th in scan order, u drawn once per cycle (kube-scheduler's
    reservoir sampling draws per tie, with the same distribution)."""
    cdef Py_ssize_t k, j, n_chunks, best = -1
    cdef int64_t* o
    cdef int64_t best_total = INT64_MIN, best_key = 0, ties = 0
    cdef uint64_t u
    if s.nf <= 0:
        return -1
    if threads <= 1 or s.nf < 2 * SELECT_CHUNK:
        s.chunk, n_chunks = s.nf, 1
    else:
        s.chunk = s.nf // (CHUNKS_PER_THREAD * threads)
        s.chunk = SELECT_CHUNK if s.chunk < SELECT_CHUNK else s.chunk
        n_chunks = (s.nf + s.chunk - 1) // s.chunk
    s.max_taint, s.max_affinity, s.ipa_min, s.ipa_max = 0, 0, INT64_MAX, INT64_MIN
    if s.taint_raw or s.use_affinity or s.use_ipa:
        _run_pass(s, pool, 0, n_chunks)
        for k in range(n_chunks):
            o = s.out + k * SELECT_SLOTS
            if o[0] > s.max_taint:
                s.max_taint = o[0]
            if o[1] > s.max_affinity:
                s.max_affinity = o[1]
            if o[2] < s.ipa_min:
                s.ipa_min = o[2]
            if o[3] > s.ipa_max:
                s.ipa_max = o[3]
    _run_pass(s, pool, 1, n_chunks)
    for k in range(n_chunks):
        if s.out[k * SELECT_SLOTS] > best_total:
            best_total = s.out[k * SELECT_SLOTS]
    if s.tie_first:
        for k in range(n_chunks):
            o = s.out + k * SELECT_SLOTS
            if o[0] == best_total and (best < 0 or s.order_key[s.feasible[o[2]]] < best_key):
                best, best_key = s.feasible[o[2]], s.order_key[s.feasible[o[2]]]
        return best
    for k in range(n_chunks):
        if s.out[k * SELECT_SLOTS] == best_total:
            ties += s.out[k * SELECT_SLOTS + 1]
    u = uniform_below(rng, <uint64_t>ties) if ties > 1 else 0
    for k in range(n_chunks):
        o = s.out + k * SELECT_SLOTS
        if o[0] != best_total:
            continue
        if u >= <uint64_t>o[1]:
            u -= <uint64_t>o[1]
            continue
        for j in range(k * s.chunk, _chunk_end(s, k)):
            if s.totals[j] == best_total:
                if u == 0:
                    return s.feasible[j]
                u -= 1
    return best
