# NodeKernel: one pass per pod over the node table (filter, score, normalise, select).
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t, uint64_t

from ._native.custom cimport CustomSlots
from ._native.equivalence cimport Columns, EquivalenceCache, EqRow
from ._native.scan cimport Buffers, Round
from ._native.cycle cimport Config, Cycle
from ._native.inter_pod cimport InterPodState
from ._native.pod cimport CompiledPod, PodView
from ._native.select cimport ks_pool
from ._native.spread cimport SpreadState
from ._native.table cimport Table
from ._native.volumes cimport VolumeStatus


cdef class NodeKernel:
    cdef Table t
    # the arrays behind `t` (kept alive here)
    cdef object _arrays
    # per-cycle outputs
    cdef int8_t[::1] _st_code, _st_plugin           # (properties st_code, ...: filled on read)
    cdef int64_t[::1] _st_detail
    cdef int32_t[::1] _feasible     # (feasible, totals, scores, score_ran/zero, raw_scores: properties)
    cdef int64_t[:, ::1] _raw_scores
    cdef int64_t[:, ::1] _scores
    cdef int64_t[::1] _totals
    cdef readonly int64_t[::1] hist              # the FitError counts (ids.pxd's H_* layout)
    cdef public int64_t[::1] hist_code, hist_plugin, hist_taint, hist_fit   # views into it
    cdef public int64_t[:, ::1] hist_detail      # [plugin, detail 0-15] for the other plugins
    cdef uint8_t[::1] _score_ran, _score_zero
    # the plugins' cycle state, set from PreFilter / PreScore (the PodView points into it)
    cdef readonly SpreadState spread
    cdef readonly InterPodState inter_pod
    cdef readonly VolumeStatus volumes
    cdef readonly CustomSlots custom
    # per template, rows' verdicts and raw scores of node-local cycles (equivalence.pyx)
    cdef readonly EquivalenceCache equivalence
    cdef Py_ssize_t cap
    # configuration
    cdef public int64_t[::1] weights
    cdef public int32_t[::1] filter_order     # Filter plugin ids in profile order
    cdef public uint8_t[::1] score_enabled
    cdef public int strategy
    cdef public int32_t[::1] strategy_cols, balanced_cols
    cdef public int64_t[::1] strategy_weights, shape_util, shape_score
    cdef public uint64_t rng_state
    cdef double[::1] recip

    cdef public int threads
    cdef int32_t[::1] feas_pos
    cdef Py_ssize_t[::1] chunk_counts
    cdef int64_t[::1] _select_out     # per chunk of a selection (_native/select.pxd)
    cdef Buffers b
    cdef ks_pool pool
    cdef int pool_state      # 0 not started, 1 running, -1 failed to start

    # a cycle through the equivalence cache: its statuses, copied from its slot when read
    # (fill_slot -1: none to copy; readonly: Cycle.feasible_into reads the slot's entries)
    cdef readonly Py_ssize_t fill_slot, fill_start, fill_processed
    cdef Py_ssize_t fill_nf
    cdef readonly int64_t fill_version
    cdef readonly object fill_scan
    cdef Config fill_config
    cdef Cycle fill_cycle

    cdef int _fill_statuses(self) except -1
    cdef tuple _run_dense(self, PodView* p, Config* c, Cycle* y, const int32_t[::1] scan, Py_ssize_t pos,
                          Py_ssize_t num_to_find, bint tie_first, Py_ssize_t slot)
    cdef Columns _columns(self, Py_ssize_t slot, const int32_t[::1] scan)
    cdef Py_ssize_t _take_off(self, const int64_t[:, ::1] removals, const int64_t[::1] cols,
                              const int64_t[::1] vals, Py_ssize_t j, Py_ssize_t before)
    cdef bint _start_pool(self) noexcept
    cdef void _load_config(self, Config* c) noexcept
    cdef int _load_state(self, PodView* p) except -1
    cdef Py_ssize_t _pass(self, Round* r, Py_ssize_t pos, Py_ssize_t num_to_find, bint parallel,
                          Py_ssize_t* out_processed) noexcept nogil
    cdef Py_ssize_t _select(self, Config* c, Cycle* y, Py_ssize_t nf, bint tie_first) noexcept nogil
