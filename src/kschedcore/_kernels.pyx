"""The per-pod pass over the node table, compiled.

One call of :meth:`NodeKernel.run` is one scheduling cycle's Filter + Score + NormalizeScore
+ selectHost for the node-local default plugins (semantics §3.1-3.6, §4.1-4.5, §5.2, §5.4).
Arithmetic follows Go: int64 with truncating division, float64 steps in the order
kube-scheduler writes them, no fast-math and no FP contraction (see setup.py).

The loops read raw pointers (the Table / PodView / Config structs) taken once per cycle, so
the C compiler keeps them in registers; no Python object is touched per node. The Filter and
Score functions are ``cdef inline`` in filters.pxd / scores.pxd, so they compile into this
module's pass: no cross-module call per node.
"""
from libc.stdint cimport INT64_MAX, INT64_MIN
from libc.string cimport memcpy, memset

import numpy as np

from ._native.arith cimport div_small, uniform_below
from ._native.cycle cimport begin_cycle
from ._native.equivalence cimport Columns, EquivalenceCache
from ._native.copies cimport Copies, copy_position, select_copy
from ._native.dense cimport Dense, dense_begin, dense_select, dense_walk, slot_cycle
from ._native.fit_error cimport hist_of_statuses
from ._native.scan cimport Buffers, Round, compact_feasible, eval_chunk, eval_range, fill_from_entries, local_cycle
from ._native.ids cimport (DRA_STATUS_SLOT, H_CODE, H_DETAIL, H_FIT, H_PLUGIN, H_TAINT, MAX_NODE_SCORE, N_CUSTOM, N_FILTERS, N_SCORES,
                   N_VOLUME_FILTERS, S_CUSTOM_0, S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_POD_TOPOLOGY_SPREAD,
                   S_TAINT_TOLERATION)
from ._native.pod cimport load_pod
from ._native.select cimport CHUNKS_PER_THREAD, SELECT_CHUNK, SELECT_SLOTS, Select, ks_pool_run, ks_pool_start, ks_pool_stop, select_host
from ._native.table cimport add_row_usage, bind_table, refresh_images
from ._native.views cimport i8_ptr, i32_ptr, i64_ptr, u8_ptr

# A scan round shorter than this runs on one thread: below it, sharing costs about what it saves.
cdef Py_ssize_t PARALLEL_MIN_NODES = 256
# Nodes per chunk of a shared scan round, at least.
cdef Py_ssize_t CHUNK_NODES = 128

_EMPTY_I64 = np.zeros(0, np.int64)
_EMPTY_I32 = np.zeros(0, np.int32)


cdef class NodeKernel:
    """Raw views of the node table plus the reused per-cycle buffers.

    The plugins' cycle state lives in `spread`, `inter_pod`, `volumes` and `custom`; the
    set_* methods below forward to them, checking array lengths against the bound table.
    """

    def bind(self, table):
        """(Re)binds the table's columns; called whenever the table reallocates."""
        # keep the arrays alive as long as the raw pointers are used
        self._arrays = bind_table(&self.t, table)
        cap = self.t.n_rows
        if self.fill_slot >= 0 and self.cap == cap:
            self._fill_statuses()       # the last cycle's, before the entries go
        self.fill_slot = -1
        if self.cap != cap:
            self.cap = cap
            self._st_code = np.zeros(cap, np.int8)
            self._st_plugin = np.zeros(cap, np.int8)
            self._st_detail = np.zeros(cap, np.int64)
            self._feasible = np.zeros(cap, np.int32)
            self._raw_scores = np.zeros((N_SCORES, cap), np.int64)
            self._scores = np.zeros((N_SCORES, cap), np.int64)
            self._totals = np.zeros(cap, np.int64)
            self.feas_pos = np.zeros(cap, np.int32)
            self.chunk_counts = np.zeros(cap // CHUNK_NODES + 2, np.intp)
            self._select_out = np.zeros((cap // SELECT_CHUNK + 2) * SELECT_SLOTS, np.int64)
            self.equivalence.resize(cap)
        else:
            self.equivalence.clear()         # the table's arrays were reallocated
        b = &self.b
        b.cap = cap
        b.st_code, b.st_plugin, b.st_detail = &self._st_code[0], &self._st_plugin[0], &self._st_detail[0]
        b.feasible, b.feas_pos, b.totals = &self._feasible[0], &self.feas_pos[0], &self._totals[0]
        b.raw = &self._raw_scores[0, 0]
        # the FitError counts: views into one array (fit_error.pxd), as a slot keeps them
        n_taints = table.taint_effect.shape[0]
        hist = np.zeros(H_TAINT + n_taints, np.int64)
        self.hist, self.hist_code, self.hist_plugin = hist, hist[H_CODE:H_CODE + 8], hist[H_PLUGIN:H_DETAIL]
        self.hist_detail = hist[H_DETAIL:H_FIT].reshape(N_FILTERS, 16)
        self.hist_fit, self.hist_taint = hist[H_FIT:H_TAINT], hist[H_TAINT:]
        self.equivalence.count_taints(n_taints)
        self._score_ran = np.zeros(N_SCORES, np.uint8)
        self._score_zero = np.zeros(N_SCORES, np.uint8)

    def __cinit__(self):
        self.fill_slot = -1
        self.spread = SpreadState()
        self.inter_pod = InterPodState()
        self.volumes = VolumeStatus()
        self.custom = CustomSlots()
        self.equivalence = EquivalenceCache()
        self.filter_order = _EMPTY_I32
        self.score_enabled = np.zeros(N_SCORES, np.uint8)
        self.weights = np.zeros(N_SCORES, np.int64)
        self.strategy_cols = self.balanced_cols = _EMPTY_I32
        self.strategy_weights = _EMPTY_I64
        self.shape_util = self.shape_score = np.zeros(1, np.int64)
        # 1/w for the weight sums of NodeResourcesFit's average (index 0 unused)
        self.recip = 1.0 / np.arange(1, 1025, dtype=np.float64)
        self.recip = np.concatenate(([0.0], np.asarray(self.recip)))

    def __dealloc__(self):
        ks_pool_stop(&self.pool)

    # ---- the last cycle's per-node statuses and raw scores (filled on first read) ----
    @property
    def st_code(self):
        """Per row: the last cycle's Filter code (rows it examined)."""
        self._fill_statuses()
        return self._st_code

    @property
    def st_plugin(self):
        self._fill_statuses()
        return self._st_plugin

    @property
    def st_detail(self):
        self._fill_statuses()
        return self._st_detail

    @property
    def feasible(self):
        """The last cycle's feasible rows, in scan order."""
        self._fill_statuses()
        return self._feasible

    @property
    def totals(self):
        self._fill_statuses()
        return self._totals

    @property
    def scores(self):
        """[score, j]: normalised scores of the j-th feasible node (normalised plugins only)."""
        self._fill_statuses()
        return self._scores

    @property
    def score_ran(self):
        self._fill_statuses()
        return self._score_ran

    @property
    def score_zero(self):
        self._fill_statuses()
        return self._score_zero

    @property
    def raw_scores(self):
        """[score, j]: the raw scores of the last cycle's j-th feasible node."""
        self._fill_statuses()
        return self._raw_scores

    cdef int _fill_statuses(self) except -1:
        """A cycle through the equivalence cache's columns wrote no per-node status, feasible
        list or scores: they are made from its slot's entries, once, when read -- as the pass
        over the rows would have left them (NormalizeScore and the totals by _select, its draw
        undone)."""
        if self.fill_slot < 0:
            return 0
        if self.equivalence.version != self.fill_version:
            raise RuntimeError("the kernel's statuses were read after another cycle took its cache slot")
        cdef const int32_t[::1] scan = self.fill_scan
        cdef uint64_t rng = self.rng_state
        cdef Py_ssize_t slot = self.fill_slot, f
        self.fill_slot = -1
        f = fill_from_entries(self.equivalence.view(slot), &scan[0], scan.shape[0], self.fill_start,
                              self.fill_processed, &self.fill_cycle, &self.b)
        if f > 1:
            self._select(&self.fill_config, &self.fill_cycle, f, False)
            self.rng_state = rng
        return 0

    cdef bint _start_pool(self) noexcept:
        """Starts the threads - 1 helper threads once; False if none can run (then scans stay
        sequential)."""
        if not self.pool_state:
            self.pool_state = 1 if ks_pool_start(&self.pool, self.threads - 1) > 0 else -1
        return self.pool_state == 1

    def seed(self, seed):
        self.rng_state = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)

    # ---- the plugins' cycle state: thin forwards, kept so that no Python caller changes ----
    def set_topology_spread(self, status, terms=None):
        """Forwards to ``self.spread.set_filter``: PodTopologySpread's PreFilter result for the
        next cycle(s), a per-row status (int8) or terms (label column int32[], domain row
        int32[], count limit int64[]); both None: PreFilter skips."""
        self.spread.set_filter(status, terms)

    def set_spread_score(self, terms, bint require_all=True, int32_t empty_value=-1, Py_ssize_t n_values=0,
                         log_table=None):
        """Forwards to ``self.spread.set_score``: PodTopologySpread's PreScore result for the
        kernel to score, or None (skipped or scored in Python); see SpreadState.set_score."""
        self.spread.set_score(terms, require_all, empty_value, n_values, log_table, self.cap)

    def set_inter_pod_affinity(self, filter_terms, self_affine, score_terms):
        """Forwards to ``self.inter_pod.set``: InterPodAffinity's PreFilter / PreScore results
        for the next cycle(s).

        filter_terms: (kind int8[], label column int32[], domain row int32[]) or None (Skip);
        score_terms: (label column int32[], domain row int32[], weight int64[]) or None (Skip).
        """
        self.inter_pod.set(filter_terms, self_affine, score_terms)

    def set_volume_status(self, int fid, status):
        """Forwards to ``self.volumes.set``: a volume plugin's PreFilter result for the next
        cycle(s), per-row int8 status (0 passes, else reason bits | VOLUME_UU), or None: the
        plugin skips."""
        self.volumes.set(fid, status, self.cap)

    def set_custom_filter(self, int k, Py_ssize_t address=0, params=None, status=None):
        """Forwards to ``self.custom.set_filter``: custom Filter slot k, a native function's
        address (with its int64 params), or a per-row int8 status (0 passes, 1 Unschedulable,
        2 UnschedulableAndUnresolvable); neither: the slot is off."""
        self.custom.set_filter(k, address, params, status, self.cap)

    def set_custom_score(self, int k, Py_ssize_t address=0, params=None, bint normalize=False):
        """Forwards to ``self.custom.set_score``: custom Score slot k, a native function's
        address (0: the slot is off)."""
        self.custom.set_score(k, address, params, normalize)

    def place(self, CompiledPod cp, Py_ssize_t row):
        """Assume: adds a compiled pod's requests to a node row and bumps its generation.

        Returns whether the row lists images (its ImageLocality NumNodes copy goes stale).
        """
        cdef Table* t = &self.t
        cdef Py_ssize_t n = cp.usage_cols.shape[0]
        add_row_usage(t, row, &cp.usage_cols[0] if n else NULL, &cp.usage_vals[0] if n else NULL, n,
                      cp.usage_nz_cpu, cp.usage_nz_mem, 1)
        return t.n_images[row] > 0

    cdef void _load_config(self, Config* c) noexcept:
        c.strategy = self.strategy
        c.n_strategy = self.strategy_cols.shape[0]
        c.n_balanced = self.balanced_cols.shape[0]
        c.n_shape = self.shape_util.shape[0]
        c.strategy_cols, c.strategy_weights = i32_ptr(self.strategy_cols), i64_ptr(self.strategy_weights)
        c.shape_util, c.shape_score = i64_ptr(self.shape_util), i64_ptr(self.shape_score)
        c.balanced_cols, c.weights = i32_ptr(self.balanced_cols), i64_ptr(self.weights)
        c.filter_order, c.n_filter_order = i32_ptr(self.filter_order), self.filter_order.shape[0]
        c.score_enabled = u8_ptr(self.score_enabled)
        c.recip, c.n_recip = &self.recip[0], self.recip.shape[0]

    cdef int _load_state(self, PodView* p) except -1:
        """Copies the plugins' cycle state (pointers into the state objects) into the PodView."""
        cdef SpreadState sp = self.spread
        cdef InterPodState ipa = self.inter_pod
        cdef Py_ssize_t v
        p.spread_status = &sp.status[0] if sp.has_status else NULL
        p.n_spread = sp.n_terms
        p.custom = &self.custom.c
        self.volumes.check(self.cap)
        for v in range(N_VOLUME_FILTERS):
            p.volume_status[v] = self.volumes.ptr[v]
        p.spread_col, p.spread_dom, p.spread_limit = i32_ptr(sp.col), i32_ptr(sp.dom), i64_ptr(sp.limit)
        p.n_ipa_filter, p.n_ipa_score = ipa.n_filter, ipa.n_score
        p.ipa_self_affine = ipa.self_affine
        p.ipa_kind, p.ipa_col, p.ipa_dom = i8_ptr(ipa.kind), i32_ptr(ipa.col), i32_ptr(ipa.dom)
        p.ipa_score_col, p.ipa_score_dom = i32_ptr(ipa.score_col), i32_ptr(ipa.score_dom)
        p.ipa_score_weight = i64_ptr(ipa.score_weight)
        return 0

    def run(self, CompiledPod cp, const int32_t[::1] scan, Py_ssize_t start, Py_ssize_t num_to_find,
            Py_ssize_t node_name_row, int64_t n_all_nodes, bint tie_first, Py_ssize_t eq_slot=-1):
        """Filters nodes scan[(start + i) % len(scan)] until num_to_find pass, then scores them.

        Returns (chosen row or -1, number feasible, number processed). With `threads` > 1 the
        scan runs in rounds split between threads; results are merged in scan order, so they
        are identical to the sequential scan's. eq_slot >= 0: a node-local cycle, through that
        slot of the equivalence cache (EquivalenceCache.slot), on one thread.
        """
        cdef PodView p
        cdef Config c
        cdef Cycle y, yl
        load_pod(cp, &p)
        if self.custom.arrays:
            self.custom.load_pod_requests(cp.usage_cols, cp.usage_vals, self.t.n_res)
        self._load_state(&p)
        self._load_config(&c)
        begin_cycle(&self.t, &p, &c, &y, node_name_row, n_all_nodes)
        cdef Py_ssize_t n = scan.shape[0], nf = 0, processed = 0, best = -1, pos
        cdef Round r
        cdef bint parallel = self.threads > 1 and self._start_pool()
        self.fill_slot = -1             # the buffers are this cycle's from here
        if n == 0:
            memset(&self.hist[0], 0, self.hist.shape[0] * sizeof(int64_t))
            return -1, 0, 0
        r.entries, r.yl = NULL, &yl
        if eq_slot >= 0 and local_cycle(&y, &yl):
            if n == n_all_nodes and yl.n_filters == y.n_filters and slot_cycle(&y, self.spread.n_score >= 0):
                return self._run_dense(&p, &c, &y, scan, start % n, num_to_find, tie_first, eq_slot)
            r.entries = self.equivalence.view(eq_slot)     # the cross-pod parts run per row here
        pos = start % n
        r.t, r.p, r.c, r.y, r.b = &self.t, &p, &c, &y, &self.b
        r.scan, r.n, r.chunk, r.counts = &scan[0], n, CHUNK_NODES, &self.chunk_counts[0]
        with nogil:
            nf = self._pass(&r, pos, num_to_find, parallel, &processed)
            if nf == 0:
                hist_of_statuses(&self.hist[0], self.hist.shape[0], r.scan, n, pos, processed,
                                 &self._st_code[0], &self._st_plugin[0], &self._st_detail[0])
            elif nf == 1:
                best = self._feasible[0]
            else:
                best = self._select(&c, &y, nf, tie_first)
        return best, nf, processed

    cdef tuple _run_dense(self, PodView* p, Config* c, Cycle* y, const int32_t[::1] scan, Py_ssize_t pos,
                          Py_ssize_t num_to_find, bint tie_first, Py_ssize_t slot):
        """run() for a node-local cycle, through its slot's columns (_native/dense.pxd). The
        per-node statuses and the feasible list are made from the slot's entries if read."""
        cdef Dense d
        cdef Py_ssize_t n = scan.shape[0], best = -1
        dense_begin(&d, &self.t, p, c, y, &scan[0], n, self._columns(slot, scan))
        with nogil:
            dense_walk(&d, pos, num_to_find)
            if d.nf > 0:
                best = dense_select(&d, pos, tie_first, &self.rng_state)
        self.fill_slot, self.fill_version = slot, self.equivalence.version
        self.fill_scan, self.fill_start, self.fill_processed, self.fill_nf = scan, pos, d.processed, d.nf
        self.fill_config, self.fill_cycle = c[0], y[0]
        if d.nf == 0:       # every position was walked: the slot's counts are the cycle's
            memcpy(&self.hist[0], d.k.hist, self.hist.shape[0] * sizeof(int64_t))
        return best, d.nf, d.processed

    def run_copies(self, CompiledPod cp, const int32_t[::1] scan, Py_ssize_t start, Py_ssize_t num_to_find,
                   int64_t n_all_nodes, bint tie_first, int32_t[::1] chosen, Py_ssize_t eq_slot,
                   int64_t[:, ::1] counts=None, int32_t[::1] budget=None, int8_t budget_fail=0):
        """Identical copies of a pod whose Filters and Scores read its candidate node's row only
        (no pod affinity, spreading, ports, volumes or custom plugins): each is scheduled as
        run() would, then placed (place()) before the next.

        Between two copies only the row the first landed on changes, so the call takes each
        row's verdict and raw scores once (through the template's slot) into per-scan-position
        arrays (the kernel's cycle buffers: no cycle record survives the call), as the copies'
        scans first reach it; a copy reads them in scan order (normalisation and selectHost over
        its own feasible nodes, as _select); only the row it lands on is evaluated again.

        `scan` is the whole table's, or one row (copies a PreFilterResult pins to one node: each
        copy's walk starts at its own start modulo 1, the next start moves over all nodes).
        Up to len(chosen) copies; chosen, counts (if given) and the result as run_batch's: it
        stops at a copy that fits nowhere (its cycle is run()'s).

        budget (copies of pods with resource claims): per row, how many more copies its free
        devices take; a copy landing on a row counts one off, and at 0 DynamicResources'
        status of the row (set_volume_status, written here) becomes `budget_fail` before the
        row is evaluated again. The slot must then be one that holds no verdict from another
        status (EquivalenceCache.slot(fresh=True))."""
        cdef PodView p
        cdef Config c
        cdef Cycle y
        cdef Table* t = &self.t
        cdef Py_ssize_t n = scan.shape[0]
        cdef Py_ssize_t k, i, nf, best = -1, m = chosen.shape[0], placed = 0
        self.fill_slot = -1             # the call reuses the cycle buffers
        if n == 0 or (n != n_all_nodes and n != 1):     # (one row: a PreFilterResult's single node)
            return 0, start, -1
        load_pod(cp, &p)
        self._load_state(&p)
        self._load_config(&c)
        begin_cycle(&self.t, &p, &c, &y, -1, n_all_nodes)
        if not slot_cycle(&y, self.spread.n_score >= 0):
            return 0, start, -1     # not a node-local pod: no copies
        cdef Copies r
        r.t, r.p, r.c, r.y, r.yl, r.b, r.cross_first, r.cross_static = t, &p, &c, &y, &y, &self.b, -1, True
        r.entries = self.equivalence.view(eq_slot)
        r.scan, r.n, r.start0, r.validated = &scan[0], n, start % n, 0
        r.n_ok, r.seen_taint, r.seen_affinity = 0, 0, 0
        r.taint_raw = y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]
        r.use_affinity = y.use[S_NODE_AFFINITY]
        cdef const int64_t[::1] ucols = cp.usage_cols
        cdef const int64_t[::1] uvals = cp.usage_vals
        cdef Py_ssize_t n_usage = ucols.shape[0]
        cdef int64_t nz_cpu = cp.usage_nz_cpu, nz_mem = cp.usage_nz_mem
        cdef const int64_t* pcols = &ucols[0] if n_usage else NULL
        cdef const int64_t* pvals = &uvals[0] if n_usage else NULL
        cdef int64_t* counted = NULL
        if counts is not None and counts.shape[0] >= m and counts.shape[1] == 2:
            counted = &counts[0, 0]
        cdef int32_t* left = NULL
        cdef int8_t* dra = p.volume_status[DRA_STATUS_SLOT]
        if budget is not None:
            if dra == NULL or budget.shape[0] < n_all_nodes or budget.shape[0] < t.n_rows:
                raise ValueError("a copies' budget needs DynamicResources' status and one entry per row")
            left = &budget[0]
        with nogil:
            for k in range(m):
                if k > 0:       # the last copy's row: the snapshot's image counts, then its verdict
                    refresh_images(t, best)
                    copy_position(&r, best, r.best_pos, True)      # the one row that changed
                best = select_copy(&r, start % n, num_to_find, tie_first, &self.rng_state)
                nf = r.nf
                if nf == 0:
                    break
                chosen[k] = <int32_t>best
                if counted != NULL:
                    counted[2 * k], counted[2 * k + 1] = nf, r.processed
                placed += 1
                start = (start + r.processed) % n_all_nodes
                add_row_usage(t, best, pcols, pvals, n_usage, nz_cpu, nz_mem, 1)
                if left != NULL:
                    left[best] -= 1
                    if left[best] <= 0:
                        dra[best] = budget_fail
        return placed, start, (best if placed == m and m > 0 else -1)

    def run_batch(self, list cps, const int32_t[::1] slots, const int32_t[::1] scan, Py_ssize_t start,
                  Py_ssize_t num_to_find, int64_t n_all_nodes, bint tie_first, int32_t[::1] chosen,
                  int64_t[:, ::1] counts, const uint8_t[::1] may_fail=None, int64_t[:, ::1] failed=None,
                  const int64_t[:, ::1] removals=None, const int64_t[::1] removed_cols=None,
                  const int64_t[::1] removed_vals=None):
        """Node-local pods (cps[k] through slot slots[k]) each scheduled as run() would, then placed
        as add_row_usage() does; stops before one not node-local or fitting nowhere -- unless
        may_fail[k] and a row of `failed` is left: chosen[k] = -1, its FitError counts (self.hist's
        layout) in that row. chosen[k], counts[k]: pod k's row, feasible and processed counts.
        removals: pods leaving between them (a replay's departures), a row each: (before pod,
        row, non-zero cpu, non-zero memory, offset, length) of their usage in removed_cols /
        removed_vals, in order; each taken off its row (add_row_usage's -1, the row's image
        counts as the next cycle's snapshot copies them) before the pod it names -- those
        before the pods done, and after the last if all were.
        Returns (pods done, the next start, the last row placed if stale, else -1)."""
        cdef PodView p
        cdef Config c
        cdef Cycle y
        cdef Dense d
        cdef CompiledPod cp
        cdef const int64_t[::1] ucols, uvals
        cdef Py_ssize_t k, n = scan.shape[0], done = 0, best = -1, stale = -1, n_failed = 0
        self.fill_slot = -1
        if n == 0 or n != n_all_nodes:
            return 0, start, -1
        if failed is not None and failed.shape[1] != self.hist.shape[0]:
            raise ValueError(f"failed: rows of {self.hist.shape[0]} counts expected")
        self._load_config(&c)
        cdef Py_ssize_t m = min(len(cps), slots.shape[0], chosen.shape[0], counts.shape[0])
        cdef Py_ssize_t room = 0 if may_fail is None or failed is None or may_fail.shape[0] < m else failed.shape[0]
        cdef Py_ssize_t j = 0
        for k in range(m):
            if stale >= 0:      # the last pod's row: the snapshot's image counts (UpdateSnapshot)
                refresh_images(&self.t, stale)
                stale = -1
            if removals is not None:
                j = self._take_off(removals, removed_cols, removed_vals, j, k)
            cp = cps[k]
            load_pod(cp, &p)
            self._load_state(&p)
            begin_cycle(&self.t, &p, &c, &y, -1, n_all_nodes)
            if not slot_cycle(&y, self.spread.n_score >= 0):
                break
            dense_begin(&d, &self.t, &p, &c, &y, &scan[0], n, self._columns(slots[k], scan))
            with nogil:
                dense_walk(&d, start % n, num_to_find)
                if d.nf > 0:
                    best = dense_select(&d, start % n, tie_first, &self.rng_state)
            counts[k, 0], counts[k, 1] = d.nf, d.processed
            start = (start + d.processed) % n_all_nodes
            done += 1
            if d.nf == 0:       # every position walked: the slot's counts are the cycle's
                if n_failed >= room or not may_fail[k]:
                    return done - 1, start, -1
                memcpy(&failed[n_failed, 0], d.k.hist, failed.shape[1] * sizeof(int64_t))
                n_failed += 1
                chosen[k] = -1
                continue
            chosen[k] = <int32_t>best
            ucols, uvals = cp.usage_cols, cp.usage_vals
            add_row_usage(&self.t, best, &ucols[0] if ucols.shape[0] else NULL, &uvals[0] if uvals.shape[0] else NULL,
                          ucols.shape[0], cp.usage_nz_cpu, cp.usage_nz_mem, 1)
            stale = best
        if removals is not None:
            self._take_off(removals, removed_cols, removed_vals, j, done)
        return done, start, stale

    cdef Py_ssize_t _take_off(self, const int64_t[:, ::1] removals, const int64_t[::1] cols,
                              const int64_t[::1] vals, Py_ssize_t j, Py_ssize_t before):
        """run_batch's removals from the j-th on while they come before pod `before`: the next j."""
        cdef Py_ssize_t row, off, n
        while j < removals.shape[0] and removals[j, 0] <= before:
            row, off, n = removals[j, 1], removals[j, 4], removals[j, 5]
            add_row_usage(&self.t, row, &cols[off] if n else NULL, &vals[off] if n else NULL, n,
                          removals[j, 2], removals[j, 3], -1)
            refresh_images(&self.t, row)
            j += 1
        return j

    cdef Columns _columns(self, Py_ssize_t slot, const int32_t[::1] scan):
        """The slot's columns, brought up to the table's changes (EquivalenceCache.columns)."""
        return self.equivalence.columns(slot, &scan[0], scan.shape[0], self.t.change_log, self.t.change_seq[0],
                                        self.t.log_mask)

    cdef Py_ssize_t _select(self, Config* c, Cycle* y, Py_ssize_t nf, bint tie_first) noexcept nogil:
        """NormalizeScore (TaintToleration reversed, NodeAffinity, InterPodAffinity), the
        kernel-scored PodTopologySpread and native custom Scores, weights and selectHost
        (_native/select.pxd: shared with the pool's threads when it runs).

        Only the normalised plugins get a `scores` row; the others' scores are their raw ones.
        """
        cdef Py_ssize_t s, cap = self.cap
        cdef int64_t* raw = &self._raw_scores[0, 0]
        cdef int64_t* norm = &self._scores[0, 0]
        cdef Select sel
        cdef bint spread = self.spread.n_score >= 0
        for s in range(N_SCORES):
            self._score_ran[s] = y.use[s]
            self._score_zero[s] = y.use[s] and y.zero[s]
        if spread:
            self.spread.score(&self.t, &self._feasible[0], raw + S_POD_TOPOLOGY_SPREAD * cap,
                              norm + S_POD_TOPOLOGY_SPREAD * cap, nf)
            self._score_ran[S_POD_TOPOLOGY_SPREAD] = True
        for s in range(N_CUSTOM):
            sel.use_custom[s] = y.use[S_CUSTOM_0 + s]
            sel.w_custom[s] = c.weights[S_CUSTOM_0 + s]
            sel.norm_custom[s] = norm + (S_CUSTOM_0 + s) * cap
            if sel.use_custom[s]:
                self.custom.score(s, &self.t, &self._feasible[0], raw + (S_CUSTOM_0 + s) * cap,
                                  norm + (S_CUSTOM_0 + s) * cap, nf)
        sel.nf, sel.spread, sel.tie_first = nf, spread, tie_first
        sel.use_taint, sel.use_affinity = y.use[S_TAINT_TOLERATION], y.use[S_NODE_AFFINITY]
        sel.use_ipa = y.use[S_INTER_POD_AFFINITY]
        sel.taint_raw = sel.use_taint and not y.zero[S_TAINT_TOLERATION]
        sel.w_taint, sel.w_affinity = c.weights[S_TAINT_TOLERATION], c.weights[S_NODE_AFFINITY]
        sel.w_ipa, sel.w_spread = c.weights[S_INTER_POD_AFFINITY], c.weights[S_POD_TOPOLOGY_SPREAD]
        sel.raw_taint, sel.norm_taint = raw + S_TAINT_TOLERATION * cap, norm + S_TAINT_TOLERATION * cap
        sel.raw_affinity, sel.norm_affinity = raw + S_NODE_AFFINITY * cap, norm + S_NODE_AFFINITY * cap
        sel.raw_ipa, sel.norm_ipa = raw + S_INTER_POD_AFFINITY * cap, norm + S_INTER_POD_AFFINITY * cap
        sel.norm_spread = norm + S_POD_TOPOLOGY_SPREAD * cap
        sel.totals, sel.feasible, sel.order_key = &self._totals[0], &self._feasible[0], self.t.order_key
        sel.out = &self._select_out[0]
        return select_host(&sel, &self.pool, self.threads if self.pool_state == 1 else 1, &self.rng_state)

    cdef Py_ssize_t _pass(self, Round* r, Py_ssize_t pos, Py_ssize_t num_to_find, bint parallel,
                          Py_ssize_t* out_processed) noexcept nogil:
        """Filters r's scan from position pos into the feasible buffers until num_to_find pass:
        how many did (the positions seen: out_processed); parallel: rounds split between threads."""
        cdef Py_ssize_t n = r.n, nf = 0, processed = 0, size, need, got, take, k, n_chunks
        while processed < n and nf < num_to_find:
            need = num_to_find - nf
            # a round: what is still needed (x2 once nodes have been rejected), >= 256
            size = need if processed == 0 else 2 * need
            if size < 256:
                size = 256
            if size > n - processed:
                size = n - processed
            if not parallel or size < PARALLEL_MIN_NODES:
                got = eval_range(r.t, r.p, r.c, r.y, r.b, r.scan, n, (pos + processed) % n, size,
                                  processed, nf, need, r.entries, r.yl)
            else:
                # chunks in parallel, each writing from its own offset; then merged in
                # scan order and cut at the need-th feasible node
                r.pos, r.size, r.offset, r.out, r.limit = (pos + processed) % n, size, processed, nf, need
                r.chunk = size // (self.threads * CHUNKS_PER_THREAD)
                r.chunk = CHUNK_NODES if r.chunk < CHUNK_NODES else (r.chunk + 63) & ~63
                n_chunks = (size + r.chunk - 1) // r.chunk
                ks_pool_run(&self.pool, eval_chunk, r, n_chunks)
                got = 0
                for k in range(n_chunks):
                    take = r.counts[k] if r.counts[k] < need - got else need - got
                    compact_feasible(r.b, nf + k * r.chunk, nf + got, take)
                    got += take
                    if got >= need:
                        break
            nf += got
            if nf >= num_to_find:
                processed = r.b.feas_pos[nf - 1] + 1
            else:
                processed += size
        out_processed[0] = processed
        return nf
