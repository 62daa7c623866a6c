# A node-local cycle through its template's slot columns (EquivalenceCache.columns): the walk
# counts feasible positions 64 at a time, evaluating only positions whose verdict is not
# current; selectHost reads the columns of the feasible ones. cdef inline: compiled into
# _kernels.pyx's run().
from libc.stdint cimport INT64_MIN, int8_t, int32_t, int64_t, uint64_t

from .arith cimport __builtin_ctzll, div_small, uniform_below
from .cycle cimport Config, Cycle
from .equivalence cimport Columns, EqRow, WordSum
from .fit_error cimport hist_count
from .ids cimport C_SUCCESS, MAX_NODE_SCORE, S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_TAINT_TOLERATION
from .pod cimport PodView
from .scan cimport entry_current
from .table cimport Table

cdef extern from *:
    """
    /* the POPCNT instruction where the build targets it; else inline bit arithmetic, not
       libgcc's out-of-line __popcountdi2 (a call per 64 positions of a walk) */
    static inline int ks_popcount64(unsigned long long x) {
    #if defined(__POPCNT__)
        return __builtin_popcountll(x);
    #else
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    """
    int ks_popcount64(unsigned long long x) nogil


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


cdef inline void dense_begin(Dense* d, Table* t, PodView* p, Config* c, Cycle* y, const int32_t* scan,
                             Py_ssize_t n, Columns k) noexcept nogil:
    """A cycle over the whole table's scan (n positions) through a slot's columns k."""
    d.t, d.p, d.c, d.y, d.scan, d.n, d.k = t, p, c, y, scan, n, k
    d.taint_raw = y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]
    d.use_affinity = y.use[S_NODE_AFFINITY]


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


# NormalizeScore's results by raw score, when the cycle's maximum is at most this: one division
# per distinct raw value instead of one per node
cdef enum:
    NORM_TABLE = 1024


cdef struct Norm:
    int64_t max_taint, max_affinity
    int64_t taint_const             # weighted TaintToleration score when every raw one is 0
    int64_t* taint                  # weighted normalised score by raw score (NULL: compute)
    int64_t* affinity


cdef inline int64_t norm_total(Dense* d, int64_t total, int64_t raw_taint, int64_t raw_affinity, Norm* m) noexcept nogil:
    """A feasible row's total from its partial total and raw scores, TaintToleration and
    NodeAffinity normalised as in NodeKernel._select."""
    cdef int64_t v
    if d.y.use[S_TAINT_TOLERATION]:
        if m.max_taint == 0:
            total += m.taint_const
        elif m.taint != NULL:
            total += m.taint[raw_taint]
        else:
            v = MAX_NODE_SCORE - div_small(MAX_NODE_SCORE * raw_taint, m.max_taint)
            total += d.c.weights[S_TAINT_TOLERATION] * v
    if d.use_affinity and m.max_affinity > 0:       # (0: every raw score is 0, so is v)
        if m.affinity != NULL:
            total += m.affinity[raw_affinity]
        else:
            v = div_small(MAX_NODE_SCORE * raw_affinity, m.max_affinity)
            total += d.c.weights[S_NODE_AFFINITY] * v
    return total


cdef inline int64_t dense_total(Dense* d, Py_ssize_t q, Norm* m) noexcept nogil:
    """A feasible position's total (norm_total of its columns)."""
    return norm_total(d, d.k.total[q], d.k.raw_taint[q], d.k.raw_affinity[q], m)


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


cdef inline void summary_update(Dense* d, WordSum* s, Py_ssize_t q, bint was_ok, int64_t old_total,
                                int64_t old_taint, int64_t old_affinity, bint now_ok, int64_t new_total,
                                int64_t new_taint, int64_t new_affinity) noexcept nogil:
    """Position q of word s changed from (was_ok, old ...) to (now_ok, new ...): the summary
    follows, or is marked to be made again (fresh 0: everything; norm_taint -1: the best)
    where one position cannot tell -- a maximum or a best that may have left."""
    cdef Norm m
    cdef int64_t v, key
    if not s.fresh:
        return
    if was_ok and ((old_taint > 0 and old_taint == s.max_taint and (not now_ok or new_taint < old_taint))
                   or (old_affinity > 0 and old_affinity == s.max_affinity and (not now_ok or new_affinity < old_affinity))):
        s.fresh = 0
        return
    if now_ok:
        if new_taint > s.max_taint:
            s.max_taint = new_taint
        if new_affinity > s.max_affinity:
            s.max_affinity = new_affinity
    if s.norm_taint < 0:
        return
    m.max_taint, m.max_affinity = s.norm_taint, s.norm_affinity
    m.taint_const = d.c.weights[S_TAINT_TOLERATION] * MAX_NODE_SCORE
    m.taint = m.affinity = NULL
    if was_ok:
        v = norm_total(d, old_total, old_taint, old_affinity, &m)
        if v > s.best or (v == s.best and (s.ties == 1 or q == s.best_q)):
            s.norm_taint = -1
            return
        if v == s.best:
            s.ties -= 1
    if now_ok:
        v = norm_total(d, new_total, new_taint, new_affinity, &m)
        if v < s.best:
            return
        key = INT64_MIN if s.best_key == INT64_MIN else d.t.order_key[d.scan[q]]
        if v > s.best:
            s.best, s.ties, s.best_key, s.best_q = v, 1, key, <int32_t>q
        else:
            s.ties += 1
            if key < s.best_key:
                s.best_key, s.best_q = key, <int32_t>q


cdef inline void dense_position(Dense* d, Py_ssize_t q) noexcept nogil:
    """Position q's row into the columns: its entry if current, else filtered and scored (and
    the entry written); its word's summary follows the change (summary_update)."""
    cdef Py_ssize_t row = d.scan[q]
    cdef EqRow* e = d.k.entries + row
    cdef uint64_t bit = (<uint64_t>1) << (q & 63)
    cdef bint was_ok = (d.k.ok[q >> 6] & bit) != 0
    cdef int64_t old_total = d.k.total[q]
    cdef int64_t old_taint = d.k.raw_taint[q] if d.taint_raw else 0
    cdef int64_t old_affinity = d.k.raw_affinity[q] if d.use_affinity else 0
    entry_current(d.t, d.p, d.c, d.y, e, row)
    d.k.valid[q >> 6] |= bit
    if e.code != C_SUCCESS:
        d.k.ok[q >> 6] &= ~bit
        d.k.total[q], d.k.raw_taint[q] = e.total, e.code | (<int64_t>e.plugin << 8)
        hist_count(d.k.hist, e.code, e.plugin, e.total, 1)
        summary_update(d, d.k.words + (q >> 6), q, was_ok, old_total, old_taint, old_affinity, False, 0, 0, 0)
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
    summary_update(d, d.k.words + (q >> 6), q, was_ok, old_total, old_taint, old_affinity, True, e.total,
                   e.raw[S_TAINT_TOLERATION] if d.taint_raw else 0, e.raw[S_NODE_AFFINITY] if d.use_affinity else 0)


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
        c = ks_popcount64(okw)
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


# The window's positions, a word at a time: a chunk is one word's positions within the window
# (span 64: the whole word, whose WordSum serves; otherwise its ok bits, position by position).
cdef struct Chunks:
    Py_ssize_t q, left


cdef inline bint chunk_next(Py_ssize_t n, Chunks* w, Py_ssize_t* q0, Py_ssize_t* span) noexcept nogil:
    cdef Py_ssize_t s
    if w.left <= 0:
        return False
    s = 64 - (w.q & 63)
    if s > n - w.q:
        s = n - w.q
    if s > w.left:
        s = w.left
    q0[0], span[0] = w.q, s
    w.left -= s
    w.q += s
    if w.q == n:
        w.q = 0
    return True


cdef inline uint64_t chunk_bits(Dense* d, Py_ssize_t q0, Py_ssize_t span) noexcept nogil:
    """The feasible positions of a chunk (bits of its word)."""
    return d.k.ok[q0 >> 6] & span_mask(q0 & 63, span)


cdef inline void bits_maxima(Dense* d, Py_ssize_t base, uint64_t bits, int64_t* mt, int64_t* ma) noexcept nogil:
    """The raw TaintToleration / NodeAffinity maxima over positions base + (set bits), into mt / ma."""
    cdef Py_ssize_t p
    while bits:
        p = base + __builtin_ctzll(bits)
        bits &= bits - 1
        if d.k.raw_taint[p] > mt[0]:
            mt[0] = d.k.raw_taint[p]
        if d.k.raw_affinity[p] > ma[0]:
            ma[0] = d.k.raw_affinity[p]


# The running best of a selectHost pass.
cdef struct Best:
    int64_t total, ties, key
    Py_ssize_t q


cdef inline void best_add(Best* b, int64_t total, int64_t ties, int64_t key, Py_ssize_t q, bint tie_first) noexcept nogil:
    """b updated with `ties` positions of `total`, the least order key among them `key` at q."""
    if total < b.total:
        return
    if total > b.total:
        b.total, b.ties, b.key, b.q = total, ties, key, q
    else:
        b.ties += ties
        if tie_first and key < b.key:
            b.key, b.q = key, q


cdef inline void bits_best(Dense* d, Py_ssize_t base, uint64_t bits, Norm* m, Best* b, bint tie_first) noexcept nogil:
    """b updated with the positions base + (set bits), in scan order (order keys read for
    "first" only, and only for totals that reach the best)."""
    cdef Py_ssize_t p
    cdef int64_t total
    while bits:
        p = base + __builtin_ctzll(bits)
        bits &= bits - 1
        total = dense_total(d, p, m)
        if total >= b.total:
            best_add(b, total, 1, d.t.order_key[d.scan[p]] if tie_first else 0, p, tie_first)


cdef inline WordSum* word_maxima(Dense* d, Py_ssize_t w) noexcept nogil:
    """Word w's summary, its maxima made from the columns if they are not."""
    cdef WordSum* s = d.k.words + w
    if not s.fresh:
        s.max_taint = s.max_affinity = 0
        bits_maxima(d, w << 6, d.k.ok[w], &s.max_taint, &s.max_affinity)
        s.norm_taint = s.norm_affinity = -1
        s.fresh = 1
    return s


cdef inline WordSum* word_best(Dense* d, Py_ssize_t w, Norm* m, bint tie_first) noexcept nogil:
    """Word w's summary, its best total under m's maxima made if it is not (with the least
    order key among the best for "first"; best_key INT64_MIN: made without keys)."""
    cdef WordSum* s = word_maxima(d, w)
    cdef Best b
    if s.norm_taint != m.max_taint or s.norm_affinity != m.max_affinity or (tie_first and s.best_key == INT64_MIN):
        b.total, b.ties, b.key, b.q = INT64_MIN, 0, 0, -1
        bits_best(d, w << 6, d.k.ok[w], m, &b, tie_first)
        s.best, s.ties, s.best_q = b.total, b.ties, <int32_t>b.q
        s.best_key = b.key if tie_first else INT64_MIN
        s.norm_taint, s.norm_affinity = m.max_taint, m.max_affinity
    return s


cdef inline Py_ssize_t bits_nth(Dense* d, Py_ssize_t base, uint64_t bits, Norm* m, int64_t best, uint64_t* u) noexcept nogil:
    """The u-th position (0-based, scan order) of total `best` among base + (set bits), or -1
    with u reduced by how many there were."""
    cdef Py_ssize_t p
    while bits:
        p = base + __builtin_ctzll(bits)
        bits &= bits - 1
        if dense_total(d, p, m) == best:
            if u[0] == 0:
                return p
            u[0] -= 1
    return -1


cdef inline Py_ssize_t dense_select(Dense* d, Py_ssize_t pos, bint tie_first, uint64_t* rng) noexcept nogil:
    """NormalizeScore and selectHost over the walk's feasible positions, exactly as
    NodeKernel._select over the same nodes in scan order; returns the chosen row. Words the
    window covers whole are read through their summaries (WordSum), the window's ends position
    by position."""
    cdef Py_ssize_t n = d.n, q0, span, p
    cdef int64_t max_taint = 0, max_affinity = 0
    cdef uint64_t u
    cdef Chunks w
    cdef Norm m
    cdef Best b
    cdef WordSum* s
    cdef int64_t taint_table[NORM_TABLE + 1]
    cdef int64_t affinity_table[NORM_TABLE + 1]
    cdef bint taint_max = d.taint_raw and d.k.seen[0], affinity_max = d.use_affinity and d.k.seen[1]
    if taint_max or affinity_max:       # (while every raw score taken is 0, so are the maxima)
        w.q, w.left = pos, d.processed
        while chunk_next(n, &w, &q0, &span):
            if span == 64:
                s = word_maxima(d, q0 >> 6)
                if s.max_taint > max_taint:
                    max_taint = s.max_taint
                if s.max_affinity > max_affinity:
                    max_affinity = s.max_affinity
            else:
                bits_maxima(d, q0 & ~63, chunk_bits(d, q0, span), &max_taint, &max_affinity)
        if not taint_max:
            max_taint = 0
        if not affinity_max:
            max_affinity = 0
    m.max_taint, m.max_affinity = max_taint, max_affinity
    norm_tables(d, &m, taint_table, affinity_table)
    b.total, b.ties, b.key, b.q = INT64_MIN, 0, 0, -1
    w.q, w.left = pos, d.processed
    while chunk_next(n, &w, &q0, &span):
        if span == 64:
            s = word_best(d, q0 >> 6, &m, tie_first)
            if s.ties:
                best_add(&b, s.best, s.ties, s.best_key, s.best_q, tie_first)
        else:
            bits_best(d, q0 & ~63, chunk_bits(d, q0, span), &m, &b, tie_first)
    if tie_first or b.ties == 1:
        return d.scan[b.q]
    # one of the best uniformly: the u-th in scan order (NodeKernel._select)
    u = uniform_below(rng, <uint64_t>b.ties)
    w.q, w.left = pos, d.processed
    while chunk_next(n, &w, &q0, &span):
        if span == 64:
            s = d.k.words + (q0 >> 6)
            if s.ties == 0 or s.best != b.total:
                continue
            if u >= <uint64_t>s.ties:
                u -= <uint64_t>s.ties
                continue
        p = bits_nth(d, q0 & ~63, chunk_bits(d, q0, span), &m, b.total, &u)
        if p >= 0:
            return d.scan[p]
    return d.scan[b.q]      # (not reached: b.ties positions have the best total)
