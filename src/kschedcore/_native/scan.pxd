# The pass over scan positions (sequential or per chunk) and the evaluation of one row into its
# equivalence-cache entry (for dense.pxd and copies.pxd), inlined into _kernels.pyx: cdef inline,
# so that the hot loop makes no cross-module call.
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t

from .cycle cimport Config, Cycle
from .equivalence cimport N_ROW_SCORES, EqRow
from .filters cimport cross_pod_filters, filter_node
from .ids cimport (C_SUCCESS, F_INTER_POD_AFFINITY, F_POD_TOPOLOGY_SPREAD, N_SCORES, S_BALANCED_ALLOCATION, S_IMAGE_LOCALITY, S_INTER_POD_AFFINITY,
                   S_NODE_AFFINITY, S_NODE_RESOURCES_FIT, S_TAINT_TOLERATION)
from .pod cimport PodView
from .scores cimport (balanced_score, fit_score, image_score, inter_pod_score, node_affinity_score,
                      taint_score)
from .table cimport Table


# The per-cycle output buffers, as raw pointers (taken at bind).
cdef struct Buffers:
    Py_ssize_t cap
    int8_t* st_code
    int8_t* st_plugin
    int64_t* st_detail
    int32_t* feasible
    int32_t* feas_pos
    int64_t* totals
    int64_t* raw


# One round of a scan shared between threads: chunk k covers positions [k*chunk, (k+1)*chunk).
cdef struct Round:
    Table* t
    PodView* p
    Config* c
    Cycle* y
    Buffers* b
    const int32_t* scan
    Py_ssize_t n, pos, size, offset, out, limit, chunk
    EqRow* entries      # a cycle through its template's slot entries (scan.pxd eval_range)
    Cycle* yl
    Py_ssize_t* counts


cdef inline void compact_feasible(Buffers* b, Py_ssize_t src, Py_ssize_t dst, Py_ssize_t count) noexcept nogil:
    """Moves `count` feasible entries (row, position, raw scores, partial total) down to dst."""
    cdef Py_ssize_t i, s
    if src == dst:
        return
    for i in range(count):
        b.feasible[dst + i] = b.feasible[src + i]
        b.feas_pos[dst + i] = b.feas_pos[src + i]
        b.totals[dst + i] = b.totals[src + i]
        for s in range(N_SCORES):
            b.raw[s * b.cap + dst + i] = b.raw[s * b.cap + src + i]


cdef inline Py_ssize_t eval_range(Table* t, PodView* p, Config* c, Cycle* y, Buffers* b,
                                   const int32_t* scan, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t count,
                                   Py_ssize_t offset, Py_ssize_t out, Py_ssize_t limit,
                                   EqRow* entries, Cycle* yl) noexcept nogil:
    """Filters `count` scan positions from `pos` (wrapping), stopping after `limit` feasible.

    A feasible node goes to index `out` + k of the feasible buffers with its position
    (`offset` + i, relative to the cycle's start), its raw scores and the weighted sum of
    the plugins that need no normalisation. Returns the number of feasible nodes.
    entries: the template's slot, for a cycle whose node-local part yl (local_cycle) the rows'
    entries hold and whose cross-pod Filters and Score run here (NULL: every plugin here).
    """
    cdef Py_ssize_t i, row, j, f = 0, cap = b.cap
    cdef int code, plugin = 0
    cdef int64_t detail
    cdef int64_t* raw = b.raw
    cdef EqRow* e
    for i in range(count):
        if f >= limit:
            break
        row = scan[pos]
        pos += 1
        if pos == n:
            pos = 0
        if entries == NULL:
            code = filter_node(t, p, y, row, &detail, &plugin)
        else:
            e = entries + row
            entry_current(t, p, c, yl, e, row)
            code, plugin, detail = e.code, e.plugin, e.total
            if code == C_SUCCESS:
                code = cross_pod_filters(t, p, y, yl.n_filters, row, &detail, &plugin)
        b.st_code[row] = code
        if code != C_SUCCESS:
            b.st_plugin[row] = plugin
            b.st_detail[row] = detail
            continue
        j = out + f
        f += 1
        b.feasible[j] = row
        b.feas_pos[j] = offset + i
        if entries == NULL:
            b.totals[j] = score_row(t, p, c, y, row, raw + j, cap)
        else:
            b.totals[j] = entry_scores(t, p, y, yl, e, row, raw + j, cap)
    return f


cdef inline void eval_chunk(void* ctx, int64_t k) noexcept nogil:
    """Chunk k of a scan round (run on either thread of the kernel's pool)."""
    cdef Round* r = <Round*>ctx
    cdef Py_ssize_t lo = k * r.chunk
    cdef Py_ssize_t count = r.size - lo if r.size - lo < r.chunk else r.chunk
    r.counts[k] = eval_range(r.t, r.p, r.c, r.y, r.b, r.scan, r.n, (r.pos + lo) % r.n, count,
                              r.offset + lo, r.out + lo, r.limit, r.entries, r.yl)


cdef inline bint local_cycle(Cycle* y, Cycle* yl) noexcept nogil:
    """yl: the cycle less its cross-pod parts (the PodTopologySpread and InterPodAffinity
    Filters, InterPodAffinity's Score), which a template's slot entries may hold; its filters
    are y.filters[:yl.n_filters], and the rest of y's are cross-pod. False when a node-local
    Filter runs after a cross-pod one (an entry could not tell the first rejection)."""
    cdef Py_ssize_t k
    cdef int fid
    yl[0] = y[0]
    yl.n_filters = y.n_filters
    for k in range(y.n_filters):
        fid = y.filters[k]
        if fid == F_POD_TOPOLOGY_SPREAD or fid == F_INTER_POD_AFFINITY:
            yl.active[fid] = False
            if yl.n_filters == y.n_filters:
                yl.n_filters = k
        elif yl.n_filters < y.n_filters:
            return False
    yl.use[S_INTER_POD_AFFINITY] = False
    return True


cdef inline void entry_raw_scores(Cycle* y, const EqRow* e, int64_t* out, Py_ssize_t stride) noexcept nogil:
    """The node-local raw scores score_row writes (not those 0 everywhere), from an entry."""
    cdef Py_ssize_t s
    for s in range(N_ROW_SCORES):
        if y.use[s] and not ((s == S_TAINT_TOLERATION or s == S_IMAGE_LOCALITY) and y.zero[s]):
            out[s * stride] = e.raw[s]


cdef inline int64_t entry_scores(Table* t, PodView* p, Cycle* y, Cycle* yl, const EqRow* e, Py_ssize_t row,
                                 int64_t* out, Py_ssize_t stride) noexcept nogil:
    """score_row for a row whose entry is current: its node-local raw scores (as score_row
    writes them) from the entry, InterPodAffinity's from this cycle's counts."""
    entry_raw_scores(yl, e, out, stride)
    if y.use[S_INTER_POD_AFFINITY]:
        out[S_INTER_POD_AFFINITY * stride] = inter_pod_score(t, p, row)
    return e.total


cdef inline void entry_current(Table* t, PodView* p, Config* c, Cycle* y, EqRow* e, Py_ssize_t row) noexcept nogil:
    """A row's entry in its template's slot made current: filtered and scored unless it was
    made at the row's generation."""
    cdef int64_t g = t.generation[row], detail
    cdef int code, plugin = 0
    if e.gen == g:
        return
    code = filter_node(t, p, y, row, &detail, &plugin)
    e.gen = g
    e.code = <int8_t>code
    if code != C_SUCCESS:
        e.plugin = <int8_t>plugin
        e.total = detail
    else:
        e.total = score_row(t, p, c, y, row, &e.raw[0], 1)


cdef inline int64_t score_row(Table* t, PodView* p, Config* c, Cycle* y, Py_ssize_t row,
                               int64_t* out, Py_ssize_t stride) noexcept nogil:
    """A feasible row's raw scores, score s at out[s * stride]; returns the weighted sum of the
    plugins that need no normalisation."""
    cdef int64_t total = 0, v
    cdef int64_t* w = c.weights
    if y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]:
        out[S_TAINT_TOLERATION * stride] = taint_score(t, p, row)
    if y.use[S_NODE_AFFINITY]:
        out[S_NODE_AFFINITY * stride] = node_affinity_score(t, p, row)
    if y.use[S_NODE_RESOURCES_FIT]:
        v = fit_score(t, p, c, row)
        out[S_NODE_RESOURCES_FIT * stride] = v
        total += w[S_NODE_RESOURCES_FIT] * v
    if y.use[S_BALANCED_ALLOCATION]:
        v = balanced_score(t, p, c, row)
        out[S_BALANCED_ALLOCATION * stride] = v
        total += w[S_BALANCED_ALLOCATION] * v
    if y.use[S_INTER_POD_AFFINITY]:
        out[S_INTER_POD_AFFINITY * stride] = inter_pod_score(t, p, row)
    if y.use[S_IMAGE_LOCALITY] and not y.zero[S_IMAGE_LOCALITY]:
        v = image_score(t, p, row, y.n_all_nodes)
        out[S_IMAGE_LOCALITY * stride] = v
        total += w[S_IMAGE_LOCALITY] * v
    return total


cdef inline Py_ssize_t fill_from_entries(const EqRow* entries, const int32_t* scan, Py_ssize_t n, Py_ssize_t pos,
                                         Py_ssize_t processed, Cycle* y, Buffers* b) noexcept nogil:
    """The statuses, feasible list, partial totals and raw scores a pass over `processed`
    positions from pos would have written, made from a slot's entries (a cycle through the
    slot's columns writes none); returns the number of feasible rows."""
    cdef Py_ssize_t i, row, f = 0
    cdef const EqRow* e
    for i in range(processed):
        row = scan[pos]
        pos += 1
        if pos == n:
            pos = 0
        e = entries + row
        b.st_code[row] = e.code
        if e.code != C_SUCCESS:
            b.st_plugin[row] = e.plugin
            b.st_detail[row] = e.total
            continue
        b.feasible[f], b.feas_pos[f], b.totals[f] = <int32_t>row, <int32_t>i, e.total
        entry_raw_scores(y, e, b.raw + f, b.cap)
        f += 1
    return f
