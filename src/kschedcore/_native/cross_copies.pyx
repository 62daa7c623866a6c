"""Runs of identical copies of a pod whose cycle reads other pods (PodTopologySpread,
InterPodAffinity through the cache's counters), each scheduled as NodeKernel.run would and
then placed before the next: its usage on the row, and on the counters exactly what
PodCounters.place adds for it (the row counters it matches, the domain rows it counts in).

What a Python cycle would make again between two copies is what changes with the counts:
PodTopologySpread's DoNotSchedule limits (maxSkew - selfMatch + the smallest domain count),
recomputed here from the plan's domains; the rest of the cycle state (the plugins' terms, the
counters that exist, which of them count any pod) the caller checks cannot change in the run
(batches.py). The Scores read the counts themselves.

Where the cycle scores nothing across pods (no PodTopologySpread, InterPodAffinity or custom
Score), a run is decided as a node-local one (copies.pxd: each row's node-local verdict and
scores taken in once), the cross-pod Filters on top: on each copy's counts as its walk reaches a
position, or taken in with the row where no copy can change them -- InterPodAffinity's alone,
on domain rows the copies do not count in (a pod with no affinity terms of its own, refused by
placed pods' anti-affinity), or where every such Filter reads a label no two nodes share
(hostname spreading or anti-affinity: a copy moves the counts of its own row alone) -- taken in
again on the row a copy lands on, and everywhere when a spread limit moves. Where
PodTopologySpread scores too (and no other Score needs normalising), the walk is the same and
hands its feasible rows to NodeKernel._select, which scores them on the copy's counts as after
a pass.
"""
cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from .copies cimport Copies, copy_position, cross_position, select_copy
from .cycle cimport Config, Cycle, begin_cycle
from .ids cimport F_INTER_POD_AFFINITY, S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_TAINT_TOLERATION
from .._kernels cimport NodeKernel
from .pod cimport CompiledPod, PodView, load_pod
from .scan cimport Buffers, Round, local_cycle
from .spread cimport SpreadState, fill_limits
from .table cimport Table, add_row_usage, refresh_images


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _count(Table* t, Py_ssize_t row, int64_t** rows, Py_ssize_t n_rows, const int32_t* dom,
                 const int32_t* col, Py_ssize_t n_dom) noexcept nogil:
    """PodCounters.place(pod, row, +1) on the arrays."""
    cdef Py_ssize_t i
    cdef int32_t v
    for i in range(n_rows):
        rows[i][row] += 1
    for i in range(n_dom):
        v = t.labels[row * t.n_keys + col[i]]
        if v >= 0:
            t.domains[dom[i] * t.dom_stride + v] += 1


cdef enum:
    BY_PASS = 0         # each copy a pass (its Scores read the counts)
    BY_COPIES = 1       # node-local copies, the cross-pod Filters on each copy's counts
    BY_STATIC = 2       # node-local copies, the cross-pod Filters' verdicts taken in with the row
    BY_SCORED = 3       # BY_COPIES's walk, PodTopologySpread's Score by _select on its rows
    BY_OWN_ROW = 4      # BY_STATIC, each verdict taken in again when the spread limits move


cdef int _how(Cycle* y, Cycle* yl, PodView* p, SpreadState sp, const int32_t* dom, Py_ssize_t n_dom) noexcept nogil:
    """How the run is decided (the module's docstring)."""
    cdef Py_ssize_t i, j
    if y.use[S_INTER_POD_AFFINITY] or y.any_custom_score:
        return BY_PASS
    if sp.n_score >= 0:     # (the walk keeps no raw TaintToleration / NodeAffinity score for _select)
        if (y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]) or y.use[S_NODE_AFFINITY]:
            return BY_PASS
        return BY_SCORED
    if sp.n_terms > 0:
        return BY_COPIES
    for i in range(yl.n_filters, y.n_filters):
        if y.filters[i] != F_INTER_POD_AFFINITY:
            return BY_COPIES
    for i in range(p.n_ipa_filter):
        for j in range(n_dom):
            if p.ipa_dom[i] == dom[j]:
                return BY_COPIES
    return BY_STATIC


cdef bint _own_rows(Table* t, PodView* p, Cycle* y, Cycle* yl, const int32_t[::1] scan):
    """Every cross-pod Filter term reads a label no two nodes share (kubernetes.io/hostname):
    a copy changes the counts those Filters read on its own row alone, so their verdicts move
    only there -- or everywhere when the spread limits (a domain minimum) move."""
    cdef Py_ssize_t i, k, n = scan.shape[0]
    cdef int32_t v, top, c
    cdef uint8_t[::1] seen
    cols = set()
    for k in range(yl.n_filters, y.n_filters):
        if y.filters[k] == F_INTER_POD_AFFINITY:
            cols.update(p.ipa_col[i] for i in range(p.n_ipa_filter))
        elif p.n_spread >= 0:
            cols.update(p.spread_col[i] for i in range(p.n_spread))
    for col in cols:
        c, top = col, -1
        for i in range(n):
            v = t.labels[scan[i] * t.n_keys + c]
            if v > top:
                top = v
        seen = np.zeros(top + 1, np.uint8)
        for i in range(n):
            v = t.labels[scan[i] * t.n_keys + c]
            if v >= 0:
                if seen[v]:
                    return False
                seen[v] = 1
    return True


cdef Py_ssize_t _walk(Copies* r, Py_ssize_t s, Py_ssize_t need, Buffers* out) noexcept nogil:
    """A BY_SCORED copy's walk from scan position s until `need` positions pass their node-local
    verdict (taken in once) and the cross-pod Filters on this copy's counts: their rows,
    positions and partial totals into out's feasible buffers, as NodeKernel._pass leaves them
    for _select. Sets r.nf and r.processed; returns nf."""
    cdef Buffers* b = r.b
    cdef Py_ssize_t n = r.n, q = s, i = 0, nf = 0
    while i < n and nf < need:
        if cross_position(r, q):
            out.feasible[nf] = r.scan[q]
            out.feas_pos[nf] = <int32_t>q
            out.totals[nf] = b.totals[q]
            nf += 1
        i += 1
        q += 1
        if q == n:
            q = 0
    r.nf, r.processed = nf, i
    return nf


cdef Py_ssize_t _position(const Buffers* out, Py_ssize_t nf, Py_ssize_t row) noexcept nogil:
    """The scan position of `row` among a walk's nf feasible rows."""
    cdef Py_ssize_t j
    for j in range(nf):
        if out.feasible[j] == row:
            return out.feas_pos[j]
    return -1


@cython.boundscheck(False)
@cython.wraparound(False)
def run_cross_copies(NodeKernel k, CompiledPod cp, const int32_t[::1] scan, Py_ssize_t start,
                     Py_ssize_t num_to_find, int64_t n_all_nodes, bint tie_first, int32_t[::1] chosen,
                     Py_ssize_t eq_slot, int64_t[:, ::1] counts, list row_counters,
                     const int32_t[::1] count_dom, const int32_t[::1] count_col, limits=None):
    """Up to len(chosen) copies of cp, the kernel armed by the first copy's PreFilter (its
    state is the run's): chosen[i] the row of copy i, counts[i] its feasible and processed
    nodes. row_counters (int64 arrays over the node rows), count_dom / count_col (domain row,
    label column): what PodCounters.place adds for the pod. limits: the DoNotSchedule plan
    (maxSkew - selfMatch int64[], domain values int32[], their starts int32[]: FilterPlan)
    when the kernel filters by domain counts. Stops before a copy that fits nowhere (its
    cycle is run()'s). Returns (copies placed, the next start, the last row placed)."""
    cdef PodView p
    cdef Config c
    cdef Cycle y, yl
    cdef Round r
    cdef Table* t = &k.t
    cdef SpreadState sp = k.spread
    cdef Py_ssize_t n = scan.shape[0], m = min(chosen.shape[0], counts.shape[0])
    cdef Py_ssize_t i, nf = 0, processed = 0, best = -1, placed = 0
    cdef Py_ssize_t n_rows = len(row_counters), n_dom = count_dom.shape[0]
    cdef int64_t[::1] rc
    cdef int64_t* rows[64]
    cdef const int64_t[::1] base
    cdef const int32_t[::1] values, starts
    cdef bint refresh = limits is not None and sp.n_terms > 0
    cdef int how
    cdef Copies cr
    cdef bint moved
    cdef Py_ssize_t j
    cdef int64_t[::1] old_limits
    cdef Buffers per_position
    cdef bint parallel = k.threads > 1 and k._start_pool()
    k.fill_slot = -1             # the call reuses the cycle buffers
    if n == 0 or n != n_all_nodes or eq_slot < 0 or n_rows > 64 or count_col.shape[0] != n_dom:
        return 0, start, -1
    keep = []
    for i in range(n_rows):
        rc = row_counters[i]
        if rc.shape[0] < t.n_rows:
            raise ValueError("row counters are shorter than the node table")
        rows[i] = &rc[0]
        keep.append(rc)
    if refresh:
        base, values, starts = limits
        if base.shape[0] != sp.n_terms or starts.shape[0] != sp.n_terms + 1:
            raise ValueError("the spread limits' plan does not match the kernel's terms")
    load_pod(cp, &p)
    k._load_state(&p)
    k._load_config(&c)
    begin_cycle(t, &p, &c, &y, -1, n_all_nodes)
    if not local_cycle(&y, &yl):
        return 0, start, -1
    r.t, r.p, r.c, r.y, r.b, r.yl = t, &p, &c, &y, &k.b, &yl
    r.entries = k.equivalence.view(eq_slot)
    r.scan, r.n, r.chunk, r.counts = &scan[0], n, 128, &k.chunk_counts[0]
    how = _how(&y, &yl, &p, sp, &count_dom[0] if n_dom else NULL, n_dom)
    if how == BY_COPIES and _own_rows(t, &p, &y, &yl, scan):
        how = BY_OWN_ROW
    if refresh:
        old_limits = np.empty(sp.n_terms, np.int64)
    per_position = k.b
    if how == BY_SCORED:    # (the feasible buffers are _select's: positions' totals elsewhere)
        per_position.totals = k.b.st_detail
    if how != BY_PASS:      # the Copies of a node-local run, the cross-pod Filters on top
        cr.t, cr.p, cr.c, cr.y, cr.yl, cr.b = t, &p, &c, &y, &yl, &per_position
        cr.cross_first, cr.cross_static = yl.n_filters, how == BY_STATIC or how == BY_OWN_ROW
        cr.entries, cr.scan, cr.n, cr.start0, cr.validated = r.entries, &scan[0], n, start % n, 0
        cr.n_ok, cr.seen_taint, cr.seen_affinity = 0, 0, 0
        cr.taint_raw = y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]
        cr.use_affinity = y.use[S_NODE_AFFINITY]
    cdef const int64_t* pcols = &cp.usage_cols[0] if cp.usage_cols.shape[0] else NULL
    cdef const int64_t* pvals = &cp.usage_vals[0] if cp.usage_vals.shape[0] else NULL
    with nogil:
        for i in range(m):
            if i > 0:       # the last copy's row: the snapshot's image counts; the limits now
                refresh_images(t, best)
                moved = False
                if refresh:
                    for j in range(sp.n_terms):
                        old_limits[j] = sp.limit[j]
                    fill_limits(t.domains, t.dom_stride, &sp.dom[0], &base[0],
                                &values[0] if values.shape[0] else NULL, &starts[0], sp.n_terms, &sp.limit[0])
                    for j in range(sp.n_terms):
                        moved = moved or old_limits[j] != sp.limit[j]
                if how == BY_OWN_ROW and moved:     # every row's verdict again, as walks reach it
                    cr.validated, cr.n_ok, cr.start0 = 0, 0, start % n
                elif how != BY_PASS:
                    copy_position(&cr, best, cr.best_pos, True)     # the one row that changed
            if how == BY_SCORED:
                nf = _walk(&cr, start % n, num_to_find, &k.b)
                if nf == 0:
                    break
                processed = cr.processed
                best = k._feasible[0] if nf == 1 else k._select(&c, &y, nf, tie_first)
                cr.best_pos = _position(&k.b, nf, best)
            elif how != BY_PASS:
                best = select_copy(&cr, start % n, num_to_find, tie_first, &k.rng_state)
                nf, processed = cr.nf, cr.processed
                if nf == 0:
                    break
            else:
                nf = k._pass(&r, start % n, num_to_find, parallel, &processed)
                if nf == 0:
                    break
                best = k._feasible[0] if nf == 1 else k._select(&c, &y, nf, tie_first)
            chosen[i] = <int32_t>best
            counts[i, 0], counts[i, 1] = nf, processed
            placed += 1
            start = (start + processed) % n_all_nodes
            add_row_usage(t, best, pcols, pvals, cp.usage_cols.shape[0], cp.usage_nz_cpu, cp.usage_nz_mem, 1)
            _count(t, best, rows, n_rows, &count_dom[0] if n_dom else NULL,
                   &count_col[0] if n_dom else NULL, n_dom)
    return placed, start, (best if placed else -1)
